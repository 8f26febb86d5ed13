"""Static figures (PDF, SVG, PNG) converted from the app's plotly figures (viz/figures/static.py): the same words
and colours by construction, rendered for real by matplotlib, and every figure of a trace from one command."""

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from test_cli import run_cli
from viz.figures.static import colour, plain_text, save_figure, to_matplotlib


def texts_of(drawn) -> set[str]:
    """Every string the matplotlib figure draws: titles, axis labels, tick labels, texts, legend entries."""
    found = {t.get_text() for t in drawn.findobj(lambda a: hasattr(a, "get_text") and callable(a.get_text))}
    return {t for t in found if t}


def test_a_heatmap_keeps_its_words_colours_and_cell_numbers():
    fig = go.Figure(go.Heatmap(z=[[0.1, 0.9], [np.nan, 0.5]], x=["0 a", "1 &lt;/s&gt;"], y=["0 a", "1 b"],
                               colorscale=[[0, "rgb(247,251,255)"], [1, "rgb(8,48,107)"]], zmin=0, zmax=1,
                               texttemplate="%{z:.2f}", colorbar={"title": {"text": "weight"}}))
    fig.update_layout(title="Encoder self-attention<br>layer 0", xaxis_title="key", yaxis_title="query",
                      yaxis_autorange="reversed")
    drawn = to_matplotlib(fig)
    words = texts_of(drawn)
    assert {"Encoder self-attention\nlayer 0", "key", "query", "0 a", "1 </s>", "1 b", "weight", "0.10", "0.90",
            "0.50"} <= words
    assert "nan" not in words                                          # a masked cell stays empty
    mesh = drawn.axes[0].collections[0]
    assert mesh.cmap(0.0) == pytest.approx(colour("rgb(247,251,255)")) and mesh.get_clim() == (0, 1)
    assert mesh.cmap(1.0) == pytest.approx(colour("rgb(8,48,107)"))
    assert drawn.axes[0].yaxis_inverted()                               # row 0 on top, as the app draws it


def test_subplots_shared_colour_scale_bars_lines_and_annotations():
    fig = make_subplots(rows=1, cols=3, subplot_titles=("head 0", "bars", "lines"))
    fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]], coloraxis="coloraxis"), 1, 1)
    fig.add_trace(go.Bar(x=["a", "b"], y=[0.3, 0.7], marker_color="#d62728", text=["0.30", "0.70"],
                         textposition="outside"), 1, 2)
    fig.add_trace(go.Scatter(x=[0, 1, 2], y=[1, 0, 1], mode="lines", name="sin", line={"color": "rgb(0,128,0)"}),
                  1, 3)
    fig.update_layout(coloraxis={"colorscale": "Viridis", "cmin": 0, "cmax": 4})
    drawn = to_matplotlib(fig)
    assert {"head 0", "bars", "lines", "a", "b", "0.30", "0.70", "sin"} <= texts_of(drawn)
    heat, bars, lines = drawn.axes[:3]
    assert heat.collections[0].get_clim() == (0, 4)
    assert [p.get_facecolor() for p in bars.patches] == [colour("#d62728")] * 2
    assert lines.lines[0].get_color() == colour("rgb(0,128,0)")


def test_plotly_text_becomes_the_characters_a_reader_sees():
    assert plain_text("a<br>b <b>c</b> x<sub>2</sub> &lt;/s&gt;") == "a\nb c x2 </s>"


@pytest.mark.parametrize("kind, magic", [("pdf", b"%PDF"), ("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_each_format_is_written(tmp_path, kind, magic):
    path = save_figure(go.Figure(go.Bar(x=["a"], y=[1])), tmp_path / f"f.{kind}")
    assert path.read_bytes().startswith(magic)


def test_an_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match="pdf, svg, png"):
        save_figure(go.Figure(), tmp_path / "f.jpg")


@pytest.mark.slow          # the command, twice in a new Python: every tour figure as SVG and PNG
def test_figure_command_writes_every_tour_figure_with_the_apps_words(tmp_path):
    """transformer-viz figure: every picture of the tour, no browser; the SVG holds the app's words."""
    from viz.tour.steps import TOUR
    result = run_cli("figure", "--model", "toy-reverse", "--text", "c a f e", "--out", "figs", "--format", "svg,png",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    svgs = sorted((tmp_path / "figs").glob("*.svg"))
    assert len(svgs) >= len(TOUR) - 1 and len(svgs) == len(list((tmp_path / "figs").glob("*.png")))
    (one_head_svg,) = (tmp_path / "figs").glob("*-one_head.svg")         # numbered by its tour step
    one_head = one_head_svg.read_text(encoding="utf-8")
    assert ">Encoder self-attention, layer 0, head 0</text>" in one_head      # text, not outlines
    wrong = run_cli("figure", "--model", "toy-reverse", "--text", "c a", "--out", "x", "--format", "jpg", cwd=tmp_path)
    assert wrong.returncode == 2 and "jpg: choose from pdf, svg, png" in wrong.stderr


def test_chinese_words_have_a_font(tmp_path):
    """A 中文 figure's words are drawn from a CJK font (run_all.sh installs fonts-wqy-microhei), not as boxes."""
    import warnings
    fig = go.Figure(go.Heatmap(z=[[0.2, 0.9]], x=["位置 0", "位置 1"], texttemplate="%{z:.1f}", colorscale="Blues"))
    fig.update_layout(title="注意力权重（编码器）")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # "Glyph ... missing from font(s)" is a warning
        save_figure(fig, tmp_path / "zh.png")
    dark = [t for t in to_matplotlib(fig).axes[0].texts if t.get_text() == "0.9"]
    assert dark and dark[0].get_color() == "white"           # on the darkest cell, as plotly writes it
