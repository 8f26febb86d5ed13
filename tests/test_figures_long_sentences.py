"""Long sentences in the figures (issue 36, section 1): a chart drops its cell numbers where they cannot fit
(hover keeps them), and the windows the pages show a long sentence through keep every label legible. Pure."""
import numpy as np
import pytest

from viz.figures.attention import (UPRIGHT_EM, attention_heatmap, key_labels_fit, keys_that_fit,
                                   map_window, source_window,
                                   translation_columns, translation_figure, window_around, window_from, window_rows)
from viz.figures.decoding import heads_row_heatmap
from viz.figures.multihead import head_columns, head_patterns, keys_that_fit as head_keys_that_fit, per_head_outputs
from viz.figures.regularize import ffn_units_figure, rows_that_fit
from viz.figures.attribution import (contrast_tokens, lens_tokens, logit_lens_heatmap, method_heatmaps, method_tokens,
                                     patch_tokens, patching_heatmap)
from viz.figures.layernorm import drift_figure, gain_bias_figure, ln_vs_bn_figure, tokens_that_fit
from viz.figures.positional import norm_tokens, norms_figure, order_tokens, word_order_figure
from viz.figures.step import scaling_bars, step_heatmap
from viz.figures.vectors import cosine_map
from viz.figures.style import NORMAL, PRESENTER, Labels, Look
from viz.core.i18n import words

EN = words("en")
SCALES = [NORMAL, PRESENTER]
RNG = np.random.default_rng(0)


def tokens(n):
    return [f"{i} w{i}" for i in range(n)]


def rows_of(n_rows, n_cols):
    m = RNG.random((n_rows, n_cols))
    return m / m.sum(1, keepdims=True)
SCREEN_PX = 720      # a 1280x720 projector's screen: the most a long sentence may add to a picture


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_a_60_token_ffn_grid_drops_its_numbers_but_keeps_hover(scale):
    fig = ffn_units_figure(RNG.random((60, 12)), tokens(60), range(12), Look(EN, scale))
    assert fig.data[0].texttemplate is None                       # 60 rows in 760 px: no room for a number
    assert "%{z:.3f}" in fig.data[0].hovertemplate


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_ffn_window_keeps_numbers_and_one_label_per_row(scale):
    n = rows_that_fit(scale)
    fig = ffn_units_figure(RNG.random((n, 12)), tokens(n), range(12), Look(EN, scale))
    assert fig.data[0].texttemplate
    assert (fig.layout.height - 200) / n >= 1.8 * scale.tick - 0.5  # every row label at the tick size has its row
    assert rows_that_fit(scale) >= 12


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_heads_window_labels_every_key_in_three_columns(scale):
    n = max(14, head_keys_that_fit(4, scale))                      # the multi-head page's window
    width = scale.page_px - 100                                   # head_patterns' default width
    assert head_columns(8, n, width=width, type_scale=scale) == 3  # not eight full-width panels stacked
    fig = head_patterns(RNG.random((8, n, n)), tokens(n), tokens(n), Look(EN, scale))
    assert fig.layout.xaxis6.showticklabels and fig.layout.yaxis.showticklabels   # labels kept, not dropped
    short = head_patterns(RNG.random((8, 12, 12)), tokens(12), tokens(12), Look(EN, scale))  # 9 words
    assert fig.layout.height <= short.layout.height + SCREEN_PX    # at most a screen taller than a short one's (DESIGN.md)


def test_per_head_outputs_name_every_token():
    fig = per_head_outputs(RNG.random((8, 18, 32)), tokens(18), Look(EN, PRESENTER))
    assert list(fig.layout.yaxis.tickvals) == tokens(18) and list(fig.layout.yaxis5.tickvals) == tokens(18)


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_translation_window_labels_every_source_token(scale):
    n_src, n_rows = translation_columns(scale), window_rows(scale)
    fig = translation_figure(rows_of(n_rows, n_src), tokens(n_rows), tokens(n_src),
                             np.full(n_rows, 0.5), ["x"] * n_rows, np.full(n_rows, 0.2), Look(EN, scale))
    assert list(fig.data[0].x) == tokens(n_src)                   # every source label
    assert (0.62 * scale.page_px - 180) / n_src >= UPRIGHT_EM * scale.tick
    assert fig.layout.height < 720 + 300                          # about a screen, not three


def test_the_source_window_follows_where_the_rows_looked():
    weights = np.zeros((60, 100))
    for row in range(60):                                         # a diagonal alignment
        weights[row, int(row * 100 / 60)] = 1.0
    window = source_window(weights, slice(30, 42), 20)
    assert window.stop - window.start == 20
    looked = {int(r * 100 / 60) for r in range(30, 42)}             # columns 50-68
    assert all(window.start <= c < window.stop for c in looked)   # all that those rows looked at is shown
    assert source_window(weights, slice(0, 5), 20).start == 0
    assert source_window(weights, slice(55, 60), 20).stop == 100  # kept inside the sentence
    assert source_window(weights[:, :12], slice(0, 20), 20) == slice(0, 12)
    spread = weights[:, :] * 0.6 + 0.4 / 100                       # diffuse weight everywhere, as heads' means have
    assert source_window(spread, slice(0, 12), 20).start == 0      # still where the rows looked hardest


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_newest_positions_map_at_half_width_numbers_only_where_they_fit(scale):
    half = scale.page_px / 2
    many = heads_row_heatmap(rows_of(8, 40), tokens(40), Look(EN, scale), width_px=half)
    assert many.data[0].texttemplate is None                       # 40 keys in half a page: no numbers
    assert "%{z:.4f}" in many.data[0].hovertemplate
    n = keys_that_fit(half, scale)
    assert key_labels_fit(half, n, scale) and not key_labels_fit(half, n + 1, scale)


def test_the_window_around_a_step_keeps_it_inside_the_sentence():
    assert window_around(50, 200, 20) == slice(40, 60)
    assert window_around(3, 200, 20) == slice(0, 20)
    assert window_around(199, 200, 20) == slice(180, 200)
    assert window_around(5, 9, 20) == slice(0, 9)


def test_the_window_from_a_slider_keeps_it_inside_a_shorter_kinds_rows():
    """One slider over the longest rows (explorer, multi-head, feed-forward pages): each kind or stack keeps its
    window inside its own rows, all of them when they fit."""
    assert window_from(10, 200, 20) == slice(10, 30)
    assert window_from(0, 200, 20) == slice(0, 20)
    assert window_from(190, 200, 20) == slice(180, 200)      # past the end: the last `size`
    assert window_from(30, 40, 20) == slice(20, 40)          # the slider over longer rows, in a 40-row kind
    assert window_from(30, 9, 20) == slice(0, 9)             # a short kind: all of it
    assert window_from(0, 0, 20) == slice(0, 0)


def test_small_head_panels_name_every_key():
    fig = head_patterns(RNG.random((8, 12, 12)), tokens(12), tokens(12), Look(EN))
    bottom = [a for name, a in fig.layout.to_plotly_json().items() if name.startswith("xaxis") and a.get("showticklabels")]
    assert bottom and all(list(a["tickvals"]) == tokens(12) for a in bottom)   # plotly's spacing dropped every second


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_explorer_window_labels_every_token_on_the_full_width_map(scale):
    n = map_window(scale.page_px, scale)
    assert n >= window_rows(scale)                                 # the full-width map shows a whole window
    fig = attention_heatmap(rows_of(n, n), tokens(n), tokens(n), Look(EN, scale), width_px=scale.page_px)
    assert key_labels_fit(scale.page_px, n, scale)                 # upright keys apart
    assert (fig.layout.height - 160) / n >= 1.9 * scale.tick - 0.5 # each row as tall as its label needs
    assert fig.layout.height <= 900


# -- step-through, positional, LayerNorm, attribution: the windows their pages show --------------------------------
@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_scaling_bars_draw_the_window_and_caption_the_whole_row(scale):
    n, size = 69, map_window(0.6 * scale.page_px, scale)          # the step-through's window
    weights = rows_of(1, n)[0]
    shown = window_around(30, n, size)
    fig = scaling_bars(weights, weights, tokens(n), 32, Look(EN, scale), shown=shown)
    assert list(fig.data[0].x) == tokens(n)[shown]                # the window's keys, every one labelled
    assert fig.data[0].text is None                               # no room for a number over each bar: hover has it
    whole = scaling_bars(weights, weights, tokens(n), 32, Look(EN, scale))
    assert fig.layout.annotations[0].text == whole.layout.annotations[0].text   # entropy and peak of the whole row
    short = scaling_bars(weights[:8] / weights[:8].sum(), weights[:8] / weights[:8].sum(), tokens(8), 32, Look(EN, scale))
    assert short.data[0].text is not None and short.layout.xaxis.tickangle == -45   # a short row keeps its numbers


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_word_swap_maps_give_every_token_of_their_window_a_row(scale):
    n = order_tokens(scale)
    assert n >= 10
    m = rows_of(n, n)
    fig = word_order_figure(m, m, tokens(n), Look(EN, scale))
    assert list(fig.layout.yaxis.tickvals) == tokens(n)
    assert (fig.layout.height - 240) / n >= 1.2 * scale.tick      # rows as tall as their labels (plotly's spacing)
    assert fig.layout.height <= 720


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_norms_window_and_the_layernorm_window(scale):
    n = norm_tokens(scale)
    fig = norms_figure(tokens(n), {"a": np.ones(n), "b": np.ones(n)}, Look(EN, scale))
    assert list(fig.data[0].x) == tokens(n)
    m = tokens_that_fit(scale)
    assert 12 <= m <= n
    x = RNG.normal(size=(69, 16))
    shown = slice(20, 20 + m)
    fig = ln_vs_bn_figure(x, tokens(69), Look(EN, scale), shown=shown)
    assert list(fig.data[0].x) == tokens(69)[shown]               # LayerNorm: the window's tokens
    assert np.allclose(fig.data[0].y, x[shown].mean(1))
    assert np.allclose(fig.data[2].y, x.mean(0))                  # BatchNorm: over every token of the sentence


def test_the_drift_numbers_each_batch_size_only_while_they_fit():
    assert drift_figure(np.ones(12), Look(EN)).layout.xaxis.dtick == 1
    assert drift_figure(np.ones(511), Look(EN)).layout.xaxis.dtick is None   # 511 numbers one by one ran together


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_attribution_windows_fit_their_pictures(scale):
    n = lens_tokens(scale)
    fig = logit_lens_heatmap(np.full((3, n), 0.5), [["x"] * n] * 3, tokens(n), Look(EN, scale))
    assert list(fig.data[0].x) == tokens(n)
    n_rows, n_cols = method_tokens(scale)
    assert n_rows >= 12 and n_cols >= 12
    fig = method_heatmaps([rows_of(n_rows, n_cols)] * 2, ["a", "b"], tokens(n_rows), tokens(n_cols), Look(EN, scale))
    plot_px = fig.layout.height - fig.layout.margin.t
    assert plot_px / n_rows >= 1.2 * scale.tick                    # every output row labelled
    fig = patching_heatmap(RNG.random((3, patch_tokens(scale))), ["L0", "L1", "L2"], tokens(patch_tokens(scale)),
                           Labels("t", "x", "y", "v"), Look(EN, scale))
    assert fig.data[0].texttemplate is None                        # a wide window: numbers on hover only
    assert contrast_tokens(scale) >= 12


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_step_maps_stand_their_keys_upright_where_slanted_ones_touch(scale):
    n = map_window(0.6 * scale.page_px, scale)                    # the step-through's window
    labels = Labels("t", "key", "query", "v")
    fig = step_heatmap(RNG.normal(size=(n, n)), tokens(n), tokens(n), labels, Look(EN, scale))
    assert fig.layout.xaxis.tickangle == -90                      # 19 keys at 45° ran into each other (presenter)
    cos = cosine_map(np.eye(n), tokens(n), labels, Look(EN, scale))
    assert cos.layout.xaxis.tickangle == -90
    few = step_heatmap(RNG.normal(size=(4, 4)), tokens(4), tokens(4), labels, Look(EN, scale))
    assert few.layout.xaxis.tickangle == -45                      # a few keys stay slanted


def test_a_two_line_gain_title_sits_above_its_panel_title():
    fig = gain_bias_figure(np.ones(8), np.zeros(8), Look(EN, PRESENTER), title="Learned gain and bias<br>of the LayerNorm")
    assert fig.layout.margin.t >= 2 * 1.25 * PRESENTER.title + 1.5 * PRESENTER.text   # 90 px overlapped at 26/22 px


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER], ids=lambda s: s.name)
def test_zoo_map_keeps_a_legible_row_for_every_token_of_a_window(scale):
    """The zoo's and compare's half-page map of a 14-token window at presenter size: 150 px for everything but
    the cells left 24 px rows once the title, the slanted key labels and the axis title took theirs, and plotly
    drew every second row label. Keys stand upright where slanted ones would touch."""
    from viz.figures.zoo import step_heatmap as zoo_heatmap
    labels = [f"{i} ▁attent" for i in range(14)]
    fig = zoo_heatmap(RNG.normal(size=(14, 14)), labels, labels, Labels("1. Scores: Scaled dot", "key", "query",
                                                                          "score"), Look(EN, scale))
    longest = scale.text_px(labels[-1], "tick")
    upright = fig.layout.xaxis.tickangle == -90
    under = (longest if upright else 0.71 * longest) + 1.5 * scale.text          # key labels and the axis title
    rows_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b - under
    assert rows_px / 14 >= UPRIGHT_EM * scale.tick, (rows_px, fig.layout.height)
    assert upright                                  # 14 slanted labels touch in half a page


def test_zoo_gallery_stands_crowded_key_labels_upright():
    """The zoo's galleries of a 14-token window at presenter size: three panels a row gave each key 25 px and the
    slanted labels ran into one another ('3 ▁the4 ▁st')."""
    from viz.figures.zoo import gallery
    maps = [np.full((14, 14), 1 / 14)] * 5
    crowded = gallery(maps, list("abcde"), tokens(14), tokens(14), Look(EN, PRESENTER))
    assert {crowded.layout[f"xaxis{i or ''}"].tickangle for i in (0, 2, 3, 4, 5)} == {-90}
    few = gallery([m[:4, :4] for m in maps], list("abcde"), tokens(4), tokens(4), Look(EN, NORMAL))
    assert few.layout.xaxis.tickangle == -45                 # 30 px cells hold 14 px slanted labels apart


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
def test_the_logit_lens_window_writes_four_letter_tokens_whole(scale):
    """A 40-word sentence's lens at presenter size showed 25 cells of 38 px: its 20 px tokens were cut to nothing
    but one or two letters. The window is as wide as cells that write a 4-letter token."""
    n = lens_tokens(scale)
    fig = logit_lens_heatmap(np.full((3, n), 0.5), [["muro"] * n] * 3, tokens(n), Look(EN, scale))
    assert fig.data[0].text[0][0] == "muro"
