"""Issue 26: one type scale for every chart (presenter: no text under 16 px, normal: none under 11), grids
that drop numbers their cells cannot hold, masked attention drawn as masked, labels that do not collide.
Pure functions: the figures' JSON, no browser (tests/test_browser_chart_text.py measures the pages)."""
import numpy as np
import pandas as pd
import pytest

from viz.figures import attention as fatt
from viz.figures import attribution as fattr
from viz.figures import decoding as fdec
from viz.figures import heads as fheads
from viz.figures import layernorm as fln
from viz.figures import multihead as fmh
from viz.figures import positional as fpos
from viz.figures import rnn as frnn
from viz.figures import step as fstep
from viz.figures import training as ftrain
from viz.figures import zoo as fzoo
from viz.figures.live_training import training_curves
from model.analysis.attention_math import future_mask
from viz.figures.style import MASKED_COLOR, NORMAL, PRESENTER, TEXT_COLOR, Labels, Look
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

RNG = np.random.default_rng(0)
TOK = [f"{i} ▁w{i}" for i in range(6)]
P = RNG.dirichlet(np.ones(6), size=6)
MASK = future_mask("decoder", 6, 6)       # decoder self-attention's hidden keys


def builders(s):
    """One figure of every builder in viz/figures (model_map and head_view are tested with their pages)."""
    log = pd.DataFrame(dict(step=[1, 2, 3], epoch=[0, 0, 1], train_loss=[3.0, 2.0, 1.5], dev_loss=[3.1, np.nan, 1.7],
                            lr=[1e-4, 2e-4, 3e-4], tokens_per_s=[900, 950, 1000]))
    table = np.sin(np.arange(40 * 16).reshape(40, 16) / 7)
    return {
        "attention_heatmap": fatt.attention_heatmap(P, TOK, TOK, Look(EN, s), title="t", masked=MASK),
        "model_view": fatt.model_view(RNG.random((2, 4, 6, 6)), Look(EN, s), title="t", masked=MASK),
        "translation": fatt.translation_figure(P, TOK, TOK, P[:, 0], TOK, P[:, 1], Look(EN, s), title="t"),
        "logit_lens": fattr.logit_lens_heatmap(P[:3], [TOK] * 3, TOK, Look(EN, s), title="t"),
        "methods": fattr.method_heatmaps([P, P, P], ["a (x)", "b", "c"], TOK, TOK, Look(EN, s), title="t"),
        "agreement": fattr.agreement_heatmap(["a", "b"], np.eye(2), Look(EN, s), title="t"),
        "contrastive": fattr.contrastive_head_bars(["h0", "h1"], [0.5, -0.2], Look(EN, s), title="t"),
        "patching": fattr.patching_heatmap(P[:3], ["l0", "l1", "l2"], TOK, Labels("t", "x", "y", "v"), Look(EN, s)),
        "next_token": fdec.next_token_bars(P[0], TOK, list(range(6)), Look(EN, s), chosen=0, title="t"),
        "cross_multiples": fdec.cross_attention_multiples(P[:4], TOK, Look(EN, s), title="t"),
        "alignment": fdec.alignment_heatmap(P, TOK, TOK, Look(EN, s), step=1, title="t"),
        "confidence": fdec.confidence_bars(P[0], TOK, Look(EN, s), step=1, title="t"),
        "layer_head": fheads.layer_head_heatmap(RNG.random((3, 4)), Look(EN, s), "v", title="t"),
        "importance": fheads.importance_bars(["a", "b"], [0.1, -0.3], Look(EN, s), title="t"),
        "token_stats": fln.token_stats_figure(TOK, (P[0], P[1]), (P[2], P[3]), Look(EN, s), title="t"),
        "gain_bias": fln.gain_bias_figure(P[0], P[1], Look(EN, s), title="t"),
        "per_head": fmh.per_head_outputs(RNG.random((4, 6, 8)), TOK, Look(EN, s), title="t"),
        "concat": fmh.concat_heatmap(RNG.random((6, 32)), TOK, 4, Look(EN, s), title="t"),
        "stage_norms": fmh.stage_norms({"a": P[0], "b": P[1]}, TOK, Look(EN, s), title="t"),
        "head_patterns": fmh.head_patterns(RNG.random((4, 6, 6)), TOK, TOK, Look(EN, s), title="t", masked=MASK),
        "pe_heatmap": fpos.pe_heatmap(table, Look(EN, s), n_sentence=5, title="t"),
        "pe_curves": fpos.pe_curves(table, [0, 1, 8], Look(EN, s), n_sentence=5, title="t"),
        "word_order": fpos.word_order_figure(P, P.T, TOK, Look(EN, s), title="t"),
        "scaling_bars": fstep.scaling_bars(P[0], P[1], TOK, 16, Look(EN, s), title="t"),
        "masked_scores": fstep.masked_scores_figure(np.where(future_mask("decoder", 6, 6), -np.inf, P), TOK, TOK, "t",
                                                    Look(EN, s)),
        "loss_curve": ftrain.loss_curve(log, Look(EN, s), title="t"),
        "complexity": ftrain.complexity_figure(20, 64, Look(EN, s), title="t"),
        "live_curves": training_curves([dict(step=1, loss=2.0, accuracy=0.1), dict(step=2, loss=1.0, accuracy=0.5)],
                                       Look(EN, s), 10, "t"),
        "zoo_step": fzoo.step_heatmap(P, TOK, TOK, Labels("t", "key", "query", "value"), Look(EN, s),
                                      masked=future_mask("decoder", 6, 6)),
        "rnn_accuracy": frnn.accuracy_by_length_figure([2, 3, 4], {"a": [1.0, 0.5, 0.0], "b": [1.0, 1.0, 1.0]},
                                                       (3, 4), Look(EN, s), marked=3, title="t"),
        "gallery": fzoo.gallery([P, P], ["a", "b"], TOK, TOK, Look(EN, s), title="t", masked=MASK),
    }


def text_sizes(fig) -> list[tuple[str, float]]:
    """(where, size) of every text a figure draws: layout fonts, titles, axes (ticks and titles), legend,
    colour bars, annotations, and each trace's text that is shown."""
    out = []
    lay = fig.layout.to_plotly_json()
    out.append(("font", lay["font"]["size"]))
    if lay.get("title", {}).get("text"):
        out.append(("title", lay["title"]["font"]["size"]))
    for name, axis in lay.items():
        if name.startswith(("xaxis", "yaxis")):
            if axis.get("showticklabels", True):
                out.append((f"{name}.tickfont", axis["tickfont"]["size"]))
            if isinstance(axis.get("title"), dict) and axis["title"].get("text"):
                out.append((f"{name}.title", axis["title"]["font"]["size"]))
        if name.startswith("coloraxis") and "colorbar" in axis:
            out.append((f"{name}.colorbar", axis["colorbar"]["tickfont"]["size"]))
    out.append(("legend", lay["legend"]["font"]["size"]))
    for note in lay.get("annotations", []):
        out.append((f"annotation {note.get('text')!r}", note["font"]["size"]))
    for i, trace in enumerate(fig.data):
        js = trace.to_plotly_json()
        if js.get("texttemplate") or (js.get("text") is not None and js.get("type") == "bar"):
            out.append((f"trace {i} text", js["textfont"]["size"]))
        if js.get("type") == "heatmap" and js.get("showscale", True) is not False and "colorbar" in js:
            out.append((f"trace {i} colorbar", js["colorbar"]["tickfont"]["size"]))
    return out


@pytest.mark.parametrize("scale, floor", [(PRESENTER, 20), (NORMAL, 11)], ids=["presenter", "normal"])
def test_every_builder_sizes_every_text_from_the_scale(scale, floor):
    """Presenter mode: no chart text under 20 px, the back row's slide size; normal: none under 11. Before: 16-18
    px in presenter mode; earlier, explicit 12-15 px ticks and cell numbers, legends at Streamlit's 12."""
    for name, fig in builders(scale).items():
        sizes = text_sizes(fig)
        small = [(where, size) for where, size in sizes if size is None or size < floor]
        assert not small, f"{name}: {small}"
        assert all(size in (scale.title, scale.text, scale.tick, scale.cell) for _, size in sizes), (name, sizes)


def text_colours(fig) -> list[tuple[str, str | None]]:
    """(where, colour) of the texts that are not cell numbers: the body font, the title, axes, legend, colour
    bars and annotations."""
    lay = fig.layout.to_plotly_json()
    out = [("font", lay["font"].get("color")), ("legend", lay["legend"]["font"].get("color"))]
    if lay.get("title", {}).get("text"):
        out.append(("title", lay["title"]["font"].get("color")))
    for name, axis in lay.items():
        if name.startswith(("xaxis", "yaxis")) and axis.get("showticklabels", True):
            out.append((f"{name}.tickfont", axis["tickfont"].get("color")))
    for i, trace in enumerate(fig.data):
        bar = trace.to_plotly_json().get("colorbar")
        if bar and trace.to_plotly_json().get("showscale", True) is not False:
            out.append((f"trace {i} colorbar", bar.get("tickfont", {}).get("color")))
    return out


def test_presenter_chart_text_is_in_the_text_colour_not_the_themes_grey():
    """Streamlit's chart theme draws ticks, legends and titles grey (#808495 at 12-14 px): too faint for a
    projector. In presenter mode every builder's texts carry the page's text colour."""
    for name, fig in builders(PRESENTER).items():
        grey = [(where, c) for where, c in text_colours(fig) if c != TEXT_COLOR]
        assert not grey, f"{name}: {grey}"
    assert text_colours(builders(NORMAL)["attention_heatmap"])[0][1] is None      # normal mode keeps the theme's


def test_numbers_beside_bars_are_not_shrunk_to_the_bar():
    """Plotly shrinks a bar's outside text to the bar's thickness unless told not to: the decoding page's
    probabilities drew at 17 px of a 20 px font in Chromium."""
    for name, fig in builders(PRESENTER).items():
        for trace in fig.data:
            if trace.type == "bar" and trace.textposition == "outside":
                assert trace.constraintext == "none", name


def test_presenter_cell_numbers_keep_their_contrast_colour():
    fig = fatt.attention_heatmap(P, TOK, TOK, Look(EN, PRESENTER))
    assert fig.data[0].textfont.size == PRESENTER.cell and fig.data[0].textfont.color is None


def test_the_scale_is_one_table():
    assert min(PRESENTER.cell, PRESENTER.tick, PRESENTER.text, PRESENTER.title) >= 20
    assert min(NORMAL.cell, NORMAL.tick, NORMAL.text) >= 11
    assert PRESENTER.page_px > NORMAL.page_px        # presenter mode folds the sidebar away


def test_a_grid_too_dense_for_its_numbers_drops_them_and_keeps_them_on_hover():
    n = 30
    labels = [f"{i} ▁t" for i in range(n)]
    weights = RNG.dirichlet(np.ones(n), size=n)
    small = fatt.attention_heatmap(P, TOK, TOK, Look(EN, PRESENTER))
    dense = fatt.attention_heatmap(weights, labels, labels, Look(EN, PRESENTER))
    assert small.data[0].texttemplate and small.data[0].textfont.size == PRESENTER.cell
    assert not dense.data[0].texttemplate and "%{z:.4f}" in dense.data[0].hovertemplate
    # the same map in half the page's width (a column) has no room where the whole page had
    ten = [f"{i}" for i in range(10)]
    w10 = RNG.dirichlet(np.ones(10), size=10)
    assert fatt.attention_heatmap(w10, ten, ten, Look(EN, NORMAL)).data[0].texttemplate
    half = fatt.attention_heatmap(w10, ten, ten, Look(EN, NORMAL), width_px=NORMAL.page_px / 2)
    assert not half.data[0].texttemplate
    assert PRESENTER.numbers_fit(60, 30) and not PRESENTER.numbers_fit(40, 30) and not PRESENTER.numbers_fit(60, 20)


def test_masked_cells_are_grey_without_a_number_and_named_in_the_legend():
    """Decoder self-attention's future positions: not "0.00" cells (explorer, step-through) nor blanks (zoo)."""
    mask = future_mask("decoder", 6, 6)
    weights = np.where(mask, 0.0, P)
    hidden = EN("fig.masked")
    figs = {"explorer": fatt.attention_heatmap(weights, TOK, TOK, Look(EN), masked=mask),
            "zoo": fzoo.step_heatmap(weights, TOK, TOK, Labels("t", "key", "query", "value"), Look(EN), masked=mask,
                                     zrange=(0.0, 1.0)),
            "heads": fmh.head_patterns(RNG.random((2, 6, 6)), TOK, TOK, Look(EN), masked=mask),
            "gallery": fzoo.gallery([weights], ["a"], TOK, TOK, Look(EN), masked=mask)}
    for name, fig in figs.items():
        values = np.array(fig.data[0].z, dtype=float)
        assert np.isnan(values[mask]).all() and not np.isnan(values[~mask]).any(), name      # no colour, no number
        greys = [tr for tr in fig.data if tr.type == "heatmap" and tr.colorscale and
                 tr.colorscale[0][1] == MASKED_COLOR]
        assert greys, name
        np.testing.assert_array_equal(~np.isnan(np.array(greys[0].z, dtype=float)), mask)
        legend = [tr for tr in fig.data if tr.showlegend and tr.name == hidden]
        assert legend and legend[0].marker.color == MASKED_COLOR and fig.layout.showlegend is not False, name
    grid = fatt.model_view(RNG.random((2, 3, 6, 6)), Look(EN), masked=mask)
    assert any(tr.type == "heatmap" and tr.colorscale[0][1] == MASKED_COLOR for tr in grid.data[1:])
    plain = fatt.attention_heatmap(P, TOK, TOK, Look(EN))                                 # nothing masked: no legend
    assert len(plain.data) == 1 and not plain.layout.showlegend


def test_the_mask_reaches_the_tour_and_lesson_figures():
    """viz.figures' trace helpers (the tour's and lesson's pictures) grey decoder self-attention's future."""
    from types import SimpleNamespace

    assert future_mask("encoder", 3, 3) is None and future_mask("cross", 3, 4) is None
    np.testing.assert_array_equal(future_mask("decoder", 3, 3), np.triu(np.ones((3, 3), bool), 1))
    assert SimpleNamespace  # the full trace path is covered by tests/test_lesson_figures.py


def test_long_sentences_keep_their_labels_apart():
    """Item 8: the home page's source tokens are on top of the map (on the first screen however many output
    rows follow); the logit lens writes top tokens cut to their cells (none at all contradicted its caption)."""
    src = [f"{i} ▁palabra" for i in range(14)]
    out = [f"{i} ▁word" for i in range(17)]
    w = RNG.dirichlet(np.ones(14), size=17)
    home = fatt.translation_figure(w, out, src, w[:, 0], ["x"] * 17, w[:, 1], Look(EN, PRESENTER))
    assert home.layout.xaxis.side == "top"
    title_note = home.layout.annotations[0]
    assert title_note.yshift and title_note.yshift > 0.7 * PRESENTER.text_px(src[-1], "tick")   # above the tokens
    tops = [[f"▁token{j}" for j in range(17)] for _ in range(3)]
    lens = fattr.logit_lens_heatmap(RNG.random((3, 17)), tops, out, Look(EN, PRESENTER))
    # the caption says each cell writes its layer's top token: cut with "…" to its cell, whole on hover
    cell_px = (PRESENTER.page_px - 260) / 17
    cut = [text for row in lens.data[0].text for text in row]
    assert all(text.endswith("…") and fattr._text_px(text, PRESENTER.cell) + fattr.LENS_PAD <= cell_px
               for text in cut), cut
    narrow = fattr.logit_lens_heatmap(RNG.random((1, 25)), [["▁alumnado"] * 25], out[:1] * 25, Look(EN, PRESENTER))
    assert all(t == "" or len(t.rstrip("…")) >= 2 for t in narrow.data[0].text[0])   # never a bare "▁…"
    assert lens.data[0].texttemplate == "%{text}" and lens.data[0].customdata[0][0][1] == "▁token0"
    assert "%{customdata[1]}" in lens.data[0].hovertemplate
    few = fattr.logit_lens_heatmap(RNG.random((3, 4)), [t[:4] for t in tops], out[:4], Look(EN, PRESENTER))
    assert few.data[0].text[0][3] == "▁token3"


LONG_NAMES = ["词嵌入 E[token]", "乘以 √d_model（= 16.0）", "位置编码", "和：编码器的输入"]


def legend_builders(s, names):
    """Every builder whose horizontal legend sits between its title and its plot, with these legend names."""
    log = pd.DataFrame(dict(step=[1, 2, 3], epoch=[0, 0, 1], train_loss=[3.0, 2.0, 1.5], dev_loss=[3.1, np.nan, 1.7],
                            lr=[1e-4, 2e-4, 3e-4], tokens_per_s=[900, 950, 1000]))
    norms = RNG.random((3, 6))
    return {
        "norms": fpos.norms_figure(TOK, {n: P[i] for i, n in enumerate(names)}, Look(EN, s), title="t"),
        "order_gap": fpos.order_gap_figure([0.1, 0.3], [0.0, 0.0], Look(EN, s), title="t"),
        "histogram": fln.feature_histogram({n: P[i] for i, n in enumerate(names[:3])}, Look(EN, s), title="t"),
        "drift": fln.drift_figure(P[0], Look(EN, s), title="t"),
        "residual": fln.residual_norm_figure([(n, ["a", "b", "c"], norms, TOK) for n in names[:3]], Look(EN, s), title="t"),
        "loss": ftrain.loss_curve(log, Look(EN, s), title="t"),
        "lr": ftrain.lr_curve(log, Look(EN, s)),
        "complexity": ftrain.complexity_figure(20, 64, Look(EN, s), title="t"),
    }


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER], ids=["normal", "presenter"])
def test_a_legend_under_the_title_gets_room_for_every_line(scale):
    """Seen at 1280x720: the L2-norm bars' legend (positional, en) and the word-order bars' (zh, presenter), the
    feature histogram's (layernorm, half a page) were drawn over their titles: a fixed 60 px top margin held one
    legend line. The top margin now holds the title's line and every line the legend wraps to, the title at the
    figure's top; the plot keeps its height."""
    from viz.figures.style import legend_lines
    short = legend_builders(scale, ["a", "b", "c", "d"])
    for name, fig in legend_builders(scale, LONG_NAMES).items():
        names = [tr.name for tr in fig.data if tr.showlegend is not False and tr.name]
        width = scale.page_px / 2 if name == "histogram" else None
        lines = legend_lines(names, scale, width)
        assert fig.layout.margin.t >= 1.4 * scale.title + lines * 1.5 * scale.text, name
        assert (fig.layout.title.yref, fig.layout.title.yanchor) == ("container", "top"), name
        assert (fig.layout.legend.orientation, fig.layout.legend.yanchor) == ("h", "bottom"), name
        plot = fig.layout.height - fig.layout.margin.t
        assert plot >= short[name].layout.height - short[name].layout.margin.t, name
    assert legend_lines(LONG_NAMES, NORMAL, NORMAL.page_px / 2) >= 3       # the half-page histogram's case
    assert legend_lines(["a", "b"], NORMAL) == 1


def test_a_phone_wraps_a_long_title_at_spaces_keeping_a_number_with_its_word():
    from viz.figures.style import PHONE, typeset
    title = "Encoder self-attention: all 3 layers × 8 heads (click a thumbnail to open it)<br>layer 0, head 0"
    phone = typeset({"title": {"text": title}, "margin": {"t": 60}, "height": 400}, PHONE)
    lines = phone["title"]["text"].split("<br>")
    assert len(lines) == 3 and lines[-1] == "layer\u00a00, head\u00a00"        # its own break kept, none added there
    assert all(PHONE.text_px(line, "title") <= PHONE.page_px - 24 for line in lines)
    # room for its three lines at the figure's top (title_on_top), the figure as much taller
    assert phone["margin"]["t"] >= 8 + 3 * 1.3 * PHONE.title and phone["height"] - 400 == phone["margin"]["t"] - 60
    assert (phone["title"]["yanchor"], phone["title"]["pad"]["t"]) == ("top", 8 + int(0.7 * PHONE.title))
    normal = typeset({"title": {"text": title}}, NORMAL)
    assert normal["title"]["text"] == title                                     # a projector's page: as written


def test_the_zoo_gallery_holds_its_upright_key_labels_under_rows_their_labels_fit():
    """Issue 46: at 1280x720 the zoo's weightings gallery left 16 px rows for its 14 px query labels (a fixed 90 px
    under the maps for upright "0 <modern>" labels) and plotly drew every second query."""
    from viz.figures.attention import UPRIGHT_EM
    keys = ["0 <modern>"] + [f"{i} ▁w{i}" for i in range(1, 12)]
    p = np.full((12, 12), 1 / 12)
    fig = fzoo.gallery([p, p, p], ["Soft", "Hard", "Local"], keys, keys, Look(EN)).to_plotly_json()["layout"]
    longest = NORMAL.text_px("0 &lt;modern&gt;", "tick")
    plot_px = fig["height"] - fig["margin"]["t"] - fig["margin"]["b"] - longest - 20
    assert plot_px / 12 >= UPRIGHT_EM * NORMAL.tick - 0.5, plot_px
