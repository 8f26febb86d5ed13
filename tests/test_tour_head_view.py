"""The guided tour's multi-head step shows the head view (issue 26, item 10): the heads' grid, then the same
layer's heads as lines (viz/figures/head_view.py) with its reading beside it, drawn from the page's trace, in
English and 中文, at presenter sizes in presenter mode. The tour page and the offline lesson take a step's
pictures from one place (viz/tour/pictures.step_pictures)."""
import json

import numpy as np
import pytest

from apptest_utils import no_exceptions, run_page, texts
from model.capture import schema
from test_lesson import trace_of
from viz.figures.head_view import head_color, head_view_data, rgba
from viz.figures.style import PRESENTER, Look
from viz.core.i18n import catalogue
from viz.tour.pictures import (MORE_READINGS, STEP_FIGURES, TOUR_HEAD, Picture, head_lines_figure, heads_figure,
                              step_pictures)
from viz.tour.steps import TOUR
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

MULTI_HEAD = next(n for n, step in enumerate(TOUR, start=1) if step.key == "multi_head")
SENTENCE = "a b c d"


@pytest.fixture(scope="module")
def trace():
    return trace_of("toy-reverse", SENTENCE)


def test_every_step_gives_its_pictures_each_with_a_reading(trace):
    """The contract the tour page and the lesson share: one picture per step, two for multi-head (the grid,
    then its head view, drawn narrow); every reading is in both catalogues."""
    for step in TOUR:
        pictures = step_pictures(step, trace, None, Look(EN))
        assert all(isinstance(p, Picture) for p in pictures)
        assert [p.reading for p in pictures] == ([step.message_key("reading"), *MORE_READINGS.get(step.key, ())]
                                                 if pictures else [])
        assert all(p.reading in catalogue("en") and p.reading in catalogue("zh") for p in pictures)
        assert [p.narrow for p in pictures] == [i > 0 for i in range(len(pictures))]
    grid, lines = step_pictures(TOUR[MULTI_HEAD - 1], trace, None, Look(EN))
    assert grid.figure == heads_figure(trace, Look(EN), "encoder", layer=0)
    assert lines.figure == head_lines_figure(trace, None, Look(EN))
    assert lines.figure.layout.legend.itemclick == "toggleothers"


def test_a_step_with_more_pictures_than_readings_is_refused(trace, monkeypatch):
    step = TOUR[0]
    monkeypatch.setitem(STEP_FIGURES, step.key, lambda *a, **k: (heads_figure(trace, Look(EN)), heads_figure(trace, Look(EN))))
    with pytest.raises(ValueError, match="2 pictures for 1 reading"):
        step_pictures(step, trace, None, Look(EN))


def chart_specs(at) -> dict[str, dict]:
    """The page's charts by the key they were shown with (the part of the element id after the last '-tour')."""
    return {chart.proto.id.split("-tour-picture-", 1)[-1]: json.loads(chart.proto.spec)
            for chart in at.get("plotly_chart") if "tour-picture-" in chart.proto.id}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tour_shows_the_head_view_on_the_multi_head_step(trace, lang):
    at = run_page("tour.py", model="toy-reverse", text=SENTENCE, tour_step=MULTI_HEAD, lang=lang)
    no_exceptions(at)
    specs = chart_specs(at)
    assert sorted(specs) == [str(MULTI_HEAD), f"{MULTI_HEAD}-1"]              # the grid, then the head view
    view = specs[f"{MULTI_HEAD}-1"]
    assert view["layout"]["legend"]["itemclick"] == "toggleothers"
    patterns = schema.stacked(trace, "encoder")[0]
    name = {"en": "head {h}", "zh": "头 {h}"}[lang]
    legend = [t for t in view["data"] if t.get("legendgroup") and t.get("showlegend") is not False]
    assert [t["name"] for t in legend] == [name.format(h=h) for h in range(len(patterns))]
    assert [t.get("visible", True) for t in legend] == [True if h == TOUR_HEAD else "legendonly"
                                                        for h in range(len(patterns))]
    lines = [t for t in view["data"] if t.get("legendgroup") and t.get("showlegend") is False]
    assert [(t["legendgroup"], t["line"]["color"]) for t in lines] == \
        [(f"h{g.head}", rgba(head_color(g.head), g.alpha)) for g in head_view_data(patterns)]
    tokens = next(t for t in view["data"] if t.get("name") == "queries")["text"]
    assert [tok.split(" ", 1)[1] for tok in tokens] == SENTENCE.split() + ["&lt;/s&gt;"]   # plotly shows it as text
    shown = texts(at)
    assert catalogue(lang)["tour.multi_head.reading_lines"] in shown
    assert catalogue(lang)["tour.multi_head.reading"] in shown


def test_the_head_view_at_presenter_sizes():
    at = run_page("tour.py", model="toy-reverse", text=SENTENCE, tour_step=MULTI_HEAD, present=1)
    no_exceptions(at)
    view = chart_specs(at)[f"{MULTI_HEAD}-1"]
    layout = view["layout"]
    assert layout["legend"]["font"]["size"] >= 16 and layout["title"]["font"]["size"] == PRESENTER.title
    token_sizes = [t["textfont"]["size"] for t in view["data"] if t.get("name") in ("queries", "keys")]
    assert token_sizes == [PRESENTER.tick] * 2 and min(token_sizes) >= 16
    assert all(note["font"]["size"] >= 16 for note in layout["annotations"])          # the column headers


def test_the_head_view_title_sits_above_its_legend(trace):
    """Titled (as in the tour and the lesson), the title is on the figure's top line and the legend under it
    (plotly centred the title in the top margin, over the legend's title)."""
    for scale in (None, PRESENTER):
        fig = head_lines_figure(trace, None, Look(EN, scale)) if scale else head_lines_figure(trace, None, Look(EN))
        layout = fig.layout
        title_line = layout.title.pad.t + 1.3 * layout.title.font.size
        legend_top = (1 - layout.legend.y) * layout.height
        assert (layout.title.yref, layout.title.y, layout.title.yanchor) == ("container", 1, "top")
        assert title_line + 4 <= legend_top < layout.margin.t
        assert np.isclose(legend_top, int(1.4 * layout.title.font.size + 16))
