"""Head-analysis figures as pure functions: shapes, labels, values, validation."""
import numpy as np
import pytest

from viz.figures.heads import HARM_COLOR, HELP_COLOR, head_label, importance_bars, layer_head_heatmap
from viz.figures.style import Look
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English


def test_layer_head_heatmap_labels_every_cell():
    values = np.array([[0.1, 0.25, np.nan], [1.0, 0.5, 0.0]])
    fig = layer_head_heatmap(values, Look(EN), "share", title="self share", zmax=1.0)
    trace = fig.data[0]
    assert list(trace.x) == ["head 0", "head 1", "head 2"] and list(trace.y) == ["layer 0", "layer 1"]
    assert trace.text[0][1] == "0.25" and trace.text[0][2] == "n/a" and trace.text[1][0] == "1.00"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert fig.layout.title.text == "self share"


def test_layer_head_heatmap_scales_to_the_data_when_no_maximum_is_given():
    fig = layer_head_heatmap(np.array([[0.5, 2.5]]), Look(EN), "share", zmax=None)
    assert fig.data[0].zmax == 2.5
    assert layer_head_heatmap(np.full((1, 2), np.nan), Look(EN), "share").data[0].zmax == 1.0


@pytest.mark.parametrize("bad", [np.ones(3), np.ones((0, 2)), np.ones((2, 2, 2))])
def test_layer_head_heatmap_rejects_non_grids(bad):
    with pytest.raises(ValueError):
        layer_head_heatmap(bad, Look(EN), "share")


def test_importance_bars_put_the_biggest_drop_first():
    labels = [head_label("encoder", 0, h) for h in range(3)]
    fig = importance_bars(labels, [-0.1, 0.2, -3.0], Look(EN), top=2)
    bar = fig.data[0]
    assert list(bar.y) == ["encoder L0 H2", "encoder L0 H0"]
    assert list(bar.x) == [-3.0, -0.1]
    assert list(bar.marker.color) == [HARM_COLOR, HARM_COLOR]
    assert importance_bars(labels, [0.1, 0.2, 0.3], Look(EN)).data[0].marker.color[0] == HELP_COLOR


def test_importance_bars_validate_inputs():
    with pytest.raises(ValueError):
        importance_bars(["a"], [1.0, 2.0], Look(EN))
    with pytest.raises(ValueError):
        importance_bars([], [], Look(EN))
