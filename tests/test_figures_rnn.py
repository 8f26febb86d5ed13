"""The RNN page's accuracy-by-length figure (viz/figures/rnn.py): pure function, no browser."""
import pytest

from viz.figures.rnn import accuracy_by_length_figure
from viz.figures.style import NORMAL, PRESENTER, Look
from viz.core.i18n import words

EN = words("en")

LENGTHS = [2, 4, 8, 16]
CURVES = {"no attention": [1.0, 0.99, 0.9, 0.0], "additive": [1.0, 1.0, 1.0, 1.0]}


def test_one_line_per_model_in_percent_with_the_trained_band_and_the_input():
    fig = accuracy_by_length_figure(LENGTHS, CURVES, (3, 16), Look(EN), marked=8, emphasis="no attention", title="t")
    assert [d.name for d in fig.data] == list(CURVES)
    assert list(fig.data[0].y) == [100.0, 99.0, 90.0, 0.0] and list(fig.data[0].x) == LENGTHS
    assert fig.data[0].line.width > fig.data[1].line.width             # the bottleneck's line stands out
    band, marker = fig.layout.shapes
    assert (band.x0, band.x1) == (2.5, 16.5) and marker.x0 == marker.x1 == 8
    assert fig.layout.annotations[0].text == EN("rnn.acc.trained") == "trained lengths"
    assert fig.layout.xaxis.title.text == EN("rnn.acc.x")


def test_presenter_sizes_and_the_legend_under_the_title():
    fig = accuracy_by_length_figure(LENGTHS, CURVES, (3, 16), Look(EN, PRESENTER), title="t")
    assert fig.layout.font.size >= PRESENTER.text and fig.layout.xaxis.tickfont.size == PRESENTER.tick
    assert fig.layout.margin.t > accuracy_by_length_figure(LENGTHS, CURVES, (3, 16), Look(EN), title="t").layout.margin.t - 1
    assert fig.layout.legend.orientation == "h"
    normal = accuracy_by_length_figure(LENGTHS, CURVES, (3, 16), Look(EN, NORMAL))
    assert normal.layout.xaxis.tickfont.size == NORMAL.tick


@pytest.mark.parametrize("curves", [{}, {"a": [1.0, 1.0]}, {"a": [1.0, 1.0, 1.2, 0.0]}])
def test_bad_input_is_refused(curves):
    with pytest.raises(ValueError):
        accuracy_by_length_figure(LENGTHS, curves, (3, 16), Look(EN))
