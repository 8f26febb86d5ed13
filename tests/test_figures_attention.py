"""Attention figures: the all-heads grid (tiles are exactly the patterns, click targets map back) and the start
page's translation figure."""
import numpy as np
import pytest

from viz.figures.attention import attention_heatmap, grid_cell, model_view, translation_figure
from viz.figures.style import Look, subplot_axes, subplot_layout
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

L, H, Q, K = 2, 3, 4, 5                    # gap = 1 cell at this size


def _patterns(seed=0):
    return np.random.default_rng(seed).dirichlet(np.ones(K), size=(L, H, Q))       # [L,H,Q,K], rows sum to 1


def test_every_tile_is_its_heads_pattern_and_gaps_are_blank():
    p = _patterns()
    fig = model_view(p, Look(EN))
    z = np.asarray(fig.data[0].z, dtype=float)
    assert z.shape == (L * (Q + 1) - 1, H * (K + 1) - 1)
    for layer in range(L):
        for head in range(H):
            tile = z[layer * (Q + 1): layer * (Q + 1) + Q, head * (K + 1): head * (K + 1) + K]
            np.testing.assert_allclose(tile, p[layer, head], atol=1e-6)
    assert np.isnan(z).sum() == z.size - p.size                                # everything else is a gap
    assert [a.text for a in fig.layout.annotations] == ["H0", "H1", "H2", "L0", "L1"]



def test_grid_labels_in_the_readers_language():
    """Issue 26, item 6: H0-H7 / L0-L2 stayed English in 中文; the page passes its words."""
    fig = model_view(_patterns(), Look(words("zh")))
    assert [a.text for a in fig.layout.annotations] == ["头0", "头1", "头2", "第0层", "第1层"]
    rows = [a for a in fig.layout.annotations if a.text.startswith("第")]
    assert all(a.x == 0 and a.xanchor == "right" for a in rows)          # left of the rows, clear of the colour bar
    assert fig.layout.margin.l >= 3 * 16                                 # room for three CJK characters at 16 px


def test_model_view_figure_takes_the_catalogues_grid_words():
    from model import load_checkpoint, trace_sentence
    from viz import ROOT
    from viz.figures import model_view_figure
    trace = trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), "a b c")
    texts = [a.text for a in model_view_figure(trace, Look(words("zh")), "decoder").layout.annotations]
    assert "头0" in texts and "第0层" in texts and not any(t in ("H0", "L0") for t in texts)

def test_click_targets_lie_on_their_own_thumbnail():
    fig = model_view(_patterns(), Look(EN))
    targets = fig.data[1]
    assert len(targets.x) == L * H
    for x, y, data in zip(targets.x, targets.y, targets.customdata):
        layer, head = grid_cell({"customdata": data})
        assert head * (K + 1) - 0.5 <= x <= head * (K + 1) + K - 0.5
        assert layer * (Q + 1) - 0.5 <= y <= layer * (Q + 1) + Q - 0.5
    assert {tuple(d) for d in targets.customdata} == {(i, j) for i in range(L) for j in range(H)}


@pytest.mark.parametrize("point", [{}, {"customdata": None}, {"customdata": [1]}, {"customdata": ["a", "b"]}])
def test_grid_cell_ignores_anything_but_a_click_target(point):
    assert grid_cell(point) is None


@pytest.mark.parametrize("selected, box", [((1, 2), (2 * 6, 2 * 6 + K, 1 * 5, 1 * 5 + Q)),
                                           ((0, None), (0, H * 6 - 1, 0, Q))])
def test_selected_box_surrounds_the_head_or_the_whole_layer_and_stays_in_view(selected, box):
    fig = model_view(_patterns(), Look(EN), selected=selected)
    shape = fig.layout.shapes[0]
    assert (shape.x0, shape.x1, shape.y0, shape.y1) == pytest.approx(
        (box[0] - 1, box[1], box[2] - 1, box[3]))                               # ±(0.5 + gap / 2)
    assert fig.layout.xaxis.range[0] <= shape.x0 and shape.x1 <= fig.layout.xaxis.range[1]
    assert fig.layout.yaxis.range[1] <= shape.y0 and shape.y1 <= fig.layout.yaxis.range[0]


def test_model_view_rejects_a_non_grid():
    with pytest.raises(ValueError):
        model_view(np.zeros((3, 4, 4)), Look(EN))


def test_long_sentences_get_max_pooled_thumbnails():
    from viz.figures.attention import thumbnail
    p = np.zeros((1, 2, 130, 70), dtype=np.float32)
    p[0, 1, 129, 3] = 0.9                                   # one strong link in the last (partial) block
    small = thumbnail(p, cells=64)                          # f = 3: 130 -> 44 rows, 70 -> 24 columns
    assert small.shape == (1, 2, 44, 24)
    assert small[0, 1, 43, 1] == pytest.approx(0.9) and small.sum() == pytest.approx(0.9)
    assert thumbnail(p[..., :64, :40]) is not None and thumbnail(p[..., :64, :40]).shape == (1, 2, 64, 40)
    fig = model_view(np.random.default_rng(0).dirichlet(np.ones(256), size=(3, 8, 256)), Look(EN))
    assert max(np.asarray(fig.data[0].z).shape) <= 8 * 64 + 7 * 10 and len(fig.to_json()) < 2_000_000


def test_subplot_layouts_are_fresh_copies_with_their_own_titles():
    """Grid layouts are cached per shape: a figure that changes its layout must not change the next one's."""
    assert [n["text"] for n in subplot_layout(["a", "", "c"], rows=1, cols=3)["annotations"]] == ["a", "c"]
    first = subplot_layout(["a", "b", "c"], rows=1, cols=3, horizontal_spacing=0.05)
    first["xaxis"]["title"] = dict(text="changed")
    first["annotations"][0]["font"] = dict(size=99)
    second = subplot_layout(["x", "y", "z"], rows=1, cols=3, horizontal_spacing=0.05)     # the same grid shape
    assert [n["text"] for n in second["annotations"]] == ["x", "y", "z"]
    assert "title" not in second["xaxis"] and second["annotations"][0]["font"] != dict(size=99)
    assert second["xaxis2"]["anchor"] == "y2" and {**subplot_axes(2)} == {"xaxis": "x3", "yaxis": "y3"}


def test_one_go_figures_keep_token_axes():
    """attention_heatmap builds its layout in one dict: category axes in reading order, every title set."""
    fig = attention_heatmap(np.full((2, 3), 1 / 3), ["0 a", "1 b"], ["0 x", "1 y", "2 z"], Look(EN), title="T")
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "category"
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.title.text == "T"
    assert fig.layout.xaxis.title.text == "key (attended to)" and fig.layout.yaxis.title.text == "query (attending)"


def test_translation_figure_puts_attention_and_confidence_on_the_same_rows():
    weights = np.array([[0.7, 0.3], [0.1, 0.9], [0.5, 0.5]])
    rows, cols = ["0 ▁Y", "1 ▁casa", "2 </s>"], ["0 ▁house", "1 </s>"]
    fig = translation_figure(weights, rows, cols, [0.9, 0.5, 0.99], ["▁Entonces", "</s>", "▁la"], [0.05, 0.4, 0.0], Look(EN))
    heat, chosen, runner_up = fig.data
    assert np.allclose(np.asarray(heat.z), weights) and list(heat.x) == ["0 ▁house", "1 &lt;/s&gt;"]
    assert list(heat.y) == list(chosen.y) == list(runner_up.y)                     # one row per output token
    assert (chosen.xaxis, chosen.yaxis) == ("x2", "y2") and fig.layout.yaxis2.matches == "y"
    assert list(chosen.x) == [0.9, 0.5, 0.99] and chosen.text == ("90%", "50%", "99%")
    assert runner_up.text == ("▁Entonces 5%", "&lt;/s&gt; 40%", "▁la 0%")           # tokens escaped, not markup
    assert fig.layout.yaxis.autorange == "reversed"                                  # read top to bottom
    with pytest.raises(ValueError, match="3 output tokens need 3"):
        translation_figure(weights, rows, cols, [0.9, 0.5], ["a", "b", "c"], [0.1, 0.1, 0.1], Look(EN))


def test_key_labels_stand_upright_where_slanted_ones_would_touch():
    """Seen in the explorer at 1280x720 (normal): the one-head map in half the page had ~21 px a key, and its
    45° labels ran into each other ('1 _The2 _man', '7 .8 </s>'). In a narrow map they stand upright; in a
    wide one (a full page) they stay slanted."""
    from viz.figures.attention import key_labels_fit, slanted_labels_fit
    from viz.figures.style import NORMAL, PRESENTER
    keys = ["0 <modern>", "1 ▁The", "2 ▁man", "3 ▁went", "4 ▁to", "5 ▁the", "6 ▁house", "7 .", "8 </s>"]
    p = np.full((9, 9), 1 / 9)
    half = attention_heatmap(p, keys, keys, Look(EN, NORMAL), width_px=NORMAL.page_px / 2)
    assert half.layout.xaxis.tickangle == -90
    full = attention_heatmap(p, keys, keys, Look(EN, NORMAL), width_px=NORMAL.page_px)
    assert full.layout.xaxis.tickangle == -45
    assert attention_heatmap(p, keys, keys, Look(EN, PRESENTER),
                             width_px=PRESENTER.page_px / 2).layout.xaxis.tickangle == -45
    # 9 keys fit upright in half a normal page, 18 do not (the explorer then gives the map the whole width)
    assert key_labels_fit(NORMAL.page_px / 2, 9) and not key_labels_fit(NORMAL.page_px / 2, 18)
    assert not slanted_labels_fit(NORMAL.page_px / 2, 9) and slanted_labels_fit(NORMAL.page_px, 18)


def test_a_long_sentences_source_tokens_stand_upright_on_the_start_page():
    """Seen on the start page with an 18-token sentence (normal, 1280x720): the source tokens slanted along the
    top of 'where each output token looked' ran into each other ('1 _The2 _children3 _are'). Where the columns
    are too narrow for slanted labels they stand upright, with the room above the map their length needs; a
    short sentence keeps them slanted."""
    from viz.figures.style import NORMAL
    src = ["0 <modern>"] + [f"{i} ▁children" for i in range(1, 18)]
    out = [f"{i} ▁niños" for i in range(10)]
    w = np.full((10, 18), 1 / 18)
    p = np.full(10, 0.5)
    long = translation_figure(w, out, src, p, ["▁x"] * 10, p / 2, Look(EN, NORMAL))
    short = translation_figure(w[:, :6], out, src[:6], p, ["▁x"] * 10, p / 2, Look(EN, NORMAL))
    assert long.layout.xaxis.tickangle == -90 and short.layout.xaxis.tickangle == -45
    assert long.layout.margin.t >= NORMAL.text_px("1 ▁children", "tick") + 2.7 * NORMAL.text


def test_a_map_in_half_a_page_labels_every_token_of_a_9_word_sentence():
    """Issue 46: at 1280x720 compare's two maps, each in half the page, showed 9 of a 9-word sentence's 12 tokens (a
    window planned with the presenter's 250 px beside the plot); planned with the normal scale's 200 px, and a slim
    colour bar (thin, named along its length) giving the keys its width, all 12 show."""
    from viz.figures.attention import attention_heatmap, map_window
    from viz.figures.style import NORMAL, PRESENTER
    from viz.core.i18n import words
    half = NORMAL.column_px()
    assert map_window(half, NORMAL) >= 12
    assert map_window(PRESENTER.column_px(), PRESENTER) >= 12
    keys = [f"{i} ▁tok" for i in range(12)]
    fig = attention_heatmap(np.full((12, 12), 1 / 12), keys, keys, Look(words("en")), width_px=half)
    bar = fig.data[0].colorbar
    assert bar.thickness <= 10 and bar.title.side == "right"
    whole = attention_heatmap(np.full((12, 12), 1 / 12), keys, keys, Look(words("en")))
    assert whole.data[0].colorbar.title.side is None                  # a map the page's width keeps its bar


from viz.figures.style import NORMAL, PHONE, PRESENTER  # noqa: E402


@pytest.mark.parametrize("type_scale", [NORMAL, PRESENTER, PHONE])
@pytest.mark.parametrize("kind", ["masked", "highlighted", "half a page", "numbers"])
def test_the_unchecked_map_is_a_valid_figure_with_the_checked_json(type_scale, kind):
    """attention_heatmap skips plotly's checks when it builds (every page's map, every deck pick's): checked the
    long way, it is a valid figure with the same JSON, with the causal mask's grey cells, a highlighted row, in half
    a page (a slim colour bar), and small enough for its numbers; normal, presenter and phone."""
    import json

    import plotly.graph_objects as go

    from model.analysis.attention_math import causal_mask

    n = 4 if kind == "numbers" else 9
    rows, cols = [f"{i} <t{i}>" for i in range(n)], [f"{i} w{i}" for i in range(n)]
    weights = np.random.default_rng(1).dirichlet(np.ones(n), size=n)
    options = {"masked": dict(masked=causal_mask(n)), "highlighted": dict(highlight_row=2),
               "half a page": dict(width_px=0.5 * type_scale.page_px), "numbers": {}}[kind]
    fig = attention_heatmap(weights, rows, cols, Look(words("en"), type_scale), title="a map", **options)
    checked = go.Figure(fig.to_dict())                       # raises on any property plotly does not know
    assert json.loads(checked.to_json()) == json.loads(fig.to_json())
    if kind == "numbers":
        assert fig.data[0].texttemplate == "%{z:.2f}"
