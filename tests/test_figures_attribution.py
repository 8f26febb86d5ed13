"""Attribution figures as pure functions: shapes, labels, colour scales, validation."""
import numpy as np
import pytest

from viz.figures import attribution as fa
from viz.figures.style import Labels, Look
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

OUT = ["0 ▁casa", "1 </s>"]
SRC = ["0 ▁house", "1 .", "2 </s>"]


def test_logit_lens_heatmap_shows_top_tokens_and_final_probability():
    p = np.array([[0.1, 0.2], [0.9, 0.95]])
    fig = fa.logit_lens_heatmap(p, [["el", "<s>"], ["casa", "</s>"]], OUT, Look(EN), title="lens",
                                final_rank=[[3, 1], [0, 0]])
    heat = fig.data[0]
    assert list(heat.y) == ["layer 0", "layer 1"]
    assert list(heat.x) == ["0 ▁casa", "1 &lt;/s&gt;"]                 # escaped, not markup
    assert heat.text[0][1] == "&lt;s&gt;" and heat.text[1][0] == "casa"
    assert (heat.zmin, heat.zmax) == (0, 1)
    assert "layer" in fig.layout.yaxis.title.text and "output token" in fig.layout.xaxis.title.text
    assert fig.layout.font.size >= 16


def test_logit_lens_heatmap_validates_shapes():
    with pytest.raises(ValueError):
        fa.logit_lens_heatmap(np.ones((2, 3)), [["a", "b"], ["a", "b"]], OUT, Look(EN))
    with pytest.raises(ValueError, match="top_tokens"):
        fa.logit_lens_heatmap(np.ones((2, 2)), [["a"], ["a", "b"]], OUT, Look(EN))


def test_method_heatmaps_share_one_colour_scale():
    a, b = np.full((2, 3), 0.2), np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    fig = fa.method_heatmaps([a, b], ["gradient", "rollout"], OUT, SRC, Look(EN), title="methods")
    assert len(fig.data) == 2
    assert {h.zmax for h in fig.data} == {0.8} and {h.zmin for h in fig.data} == {0}
    assert [h.showscale for h in fig.data] == [True, False]
    assert [a.text for a in fig.layout.annotations] == ["gradient", "rollout"]
    assert fig.data[1].xaxis == "x2" and fig.data[1].yaxis == "y2"
    assert fig.layout.xaxis.title.text == "source token"


def test_method_heatmaps_validate():
    with pytest.raises(ValueError, match="titles"):
        fa.method_heatmaps([np.ones((2, 3))], ["a", "b"], OUT, SRC, Look(EN))
    with pytest.raises(ValueError):
        fa.method_heatmaps([np.ones((3, 3))], ["a"], OUT, SRC, Look(EN))


def test_agreement_heatmap_is_labelled_on_minus_one_to_one():
    fig = fa.agreement_heatmap(["a", "b"], [[1.0, 0.3], [0.3, np.nan]], Look(EN))
    heat = fig.data[0]
    assert (heat.zmin, heat.zmax) == (-1, 1)
    assert heat.text[0][1] == "0.30" and heat.text[1][1] == "n/a"
    with pytest.raises(ValueError):
        fa.agreement_heatmap(["a"], np.eye(2), Look(EN))


def test_contrastive_bars_order_and_colour():
    fig = fa.contrastive_head_bars(["h0", "h1", "h2"], [0.1, -2.0, 0.5], Look(EN), top=2)
    bar = fig.data[0]
    assert list(bar.y) == ["h1", "h2"] and list(bar.x) == [-2.0, 0.5]
    assert list(bar.marker.color) == [fa.PULL_COLOR, fa.PUSH_COLOR]
    src = fa.contrastive_source_bars(SRC, [0.5, -0.1, 0.0], Look(EN)).data[0]
    assert list(src.x) == ["0 ▁house", "1 .", "2 &lt;/s&gt;"]                # sentence order kept
    assert src.marker.color[1] == fa.PULL_COLOR
    with pytest.raises(ValueError):
        fa.contrastive_head_bars(["h0"], [1.0, 2.0], Look(EN))
    with pytest.raises(ValueError):
        fa.contrastive_source_bars(SRC, [], Look(EN))


def test_patching_heatmap_is_symmetric_about_zero_and_labelled():
    labels = Labels("patch", "source position", "encoder layer", "restored share")
    fig = fa.patching_heatmap([[0.0, 1.0, np.nan], [-1.5, 0.2, -0.001]], ["layer 0", "layer 1"], SRC, labels, Look(EN))
    heat = fig.data[0]
    assert heat.zmin == -1.5 and heat.zmax == 1.5 and heat.zmid == 0
    assert heat.text[0][2] == "n/a" and heat.text[1][0] == "-1.50"
    assert heat.text[1][2] == "0.00"                          # no "-0.00": it read as a measured negative
    assert heat.colorbar.title.text == "restored share"
    assert fig.layout.xaxis.title.text == "source position" and fig.layout.yaxis.title.text == "encoder layer"
    small = fa.patching_heatmap([[0.1]], ["layer 0"], ["head 0"], labels, Look(EN)).data[0]
    assert (small.zmin, small.zmax) == (-1.0, 1.0)                               # at least -1..1
    with pytest.raises(ValueError):
        fa.patching_heatmap(np.ones((2, 2)), ["layer 0"], ["a", "b"], labels, Look(EN))


def _lines(title: str) -> list[str]:
    return title.split("<br>")


def test_method_heatmaps_are_readable_on_a_projector():
    """Four panels side by side were ~190 px wide and their slanted tokens ran into each other: at most two
    panels a row, source tokens upright, the y title broken into lines that fit a panel's height."""
    src = [f"{i} ▁word{i}" for i in range(20)]
    out = [f"{i} ▁palabra{i}" for i in range(10)]
    maps = [np.full((10, 20), 0.05)] * 4
    fig = fa.method_heatmaps(maps, ["cross-attention (last layer)", "value-norm", "rollout (all)", "IG"], out, src, Look(EN))
    layout = fig.to_plotly_json()["layout"]
    xs = [layout["xaxis" + s] for s in ("", "2", "3", "4")]
    assert all(x["tickangle"] == -90 for x in xs)
    assert all(x["domain"][1] - x["domain"][0] >= 0.4 for x in xs)              # half the width, not a quarter
    ys = [layout["yaxis" + s]["domain"] for s in ("", "3")]
    assert ys[1][1] < ys[0][0]                                                   # two rows, not overlapping
    assert layout["yaxis"]["title"]["text"] == layout["yaxis3"]["title"]["text"]
    panel_px = (ys[0][1] - ys[0][0]) * (layout["height"] - layout["margin"]["t"] - layout["margin"]["b"])
    assert max(fa._text_px(line) for line in _lines(layout["yaxis"]["title"]["text"])) <= panel_px
    assert "title" not in layout["xaxis"] and layout["xaxis3"]["title"]["text"] == "source token"   # bottom row
    three = fa.method_heatmaps(maps[:3], ["a", "b", "c"], out, src, Look(EN)).to_plotly_json()["layout"]
    assert "xaxis4" not in three and three["xaxis2"]["title"]["text"] == "source token"   # nothing below it
    one = fa.method_heatmaps(maps[:1], ["a"], out, src, Look(EN)).to_plotly_json()["layout"]
    assert one["xaxis"]["domain"] == [0.0, 1.0]


def test_fit_title_breaks_before_the_parenthesis_then_at_spaces():
    assert fa._fit_title("short", 300) == "short"
    assert fa._fit_title("decoder layer (output read by the final layer)", 280) == \
        "decoder layer<br>(output read by the final layer)"
    assert fa._fit_title("解码器层（由最终输出层读出）", 200) == "解码器层<br>（由最终输出层读出）"
    narrow = fa._fit_title("decoder layer (output read by the final layer)", 120)
    assert all(fa._text_px(line) <= 120 for line in _lines(narrow)) and narrow.replace("<br>", " ") == \
        "decoder layer (output read by the final layer)"


def test_logit_lens_y_title_fits_a_three_layer_plot():
    """"decoder layer (output read by the final layer)" was taller than three rows and ran into the title."""
    labels = [f"{i} ▁tok{i}" for i in range(9)]
    fig = fa.logit_lens_heatmap(np.full((3, 9), 0.5), [["a"] * 9] * 3, labels, Look(EN))
    layout = fig.to_plotly_json()["layout"]
    title = layout["yaxis"]["title"]["text"]
    assert "<br>" in title and title.replace("<br>", " ") == "decoder layer (output read by the final layer)"
    plot_px = layout["height"] - layout["margin"]["t"] - 100                      # less tick labels and x title
    assert max(fa._text_px(line) for line in _lines(title)) <= plot_px


def test_contrastive_bars_are_red_for_positive_like_every_diverging_chart():
    """RdBu_r (style.DIVERGING_SCALE) is red for positive, blue for negative on every other signed chart."""
    from plotly.colors import sample_colorscale, unlabel_rgb
    from viz.figures.style import DIVERGING_SCALE

    def reddish(color):
        r, g, b = unlabel_rgb(color) if color.startswith("rgb") else [int(color[i:i + 2], 16) for i in (1, 3, 5)]
        return r > b

    assert reddish(sample_colorscale(DIVERGING_SCALE, [1.0])[0])                 # the scale's positive end
    heads = fa.contrastive_head_bars(["h0", "h1"], [0.5, -0.5], Look(EN)).data[0]
    assert [reddish(c) for c in heads.marker.color] == [True, False]
    src = fa.contrastive_source_bars(SRC, [0.5, -0.1, 0.0], Look(EN)).data[0]
    assert [reddish(c) for c in src.marker.color] == [True, False, True]
