"""The head view (viz/figures/head_view.py) from a real trace of the shipped en-es model: one colour per
head, a line per (query, key) whose opacity is the attention weight, a head isolated by the legend."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from model import load_checkpoint, trace_sentence
from model.capture import schema
from viz.figures.head_view import MIN_WEIGHT, OPACITY_LEVELS, head_color, head_view, head_view_data
from viz.figures.style import NORMAL, PRESENTER, Look, plotly_text
from viz.elements.map_view import head_view_figure
from viz.core.text import attention_labels
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def trace():
    return trace_sentence(load_checkpoint(ROOT / "pretrained" / "en-es"), "The man went to the house.")


def _drawn_opacity(fig) -> dict[tuple[int, int, int], float]:
    """(head, query, key) -> the alpha of the line drawn between them, read back from the figure."""
    drawn = {}
    for tr in fig.data:
        if tr.legendgroup is None or tr.showlegend is not False:
            continue
        head = int(tr.legendgroup[1:])
        colour = tr.line.color
        alpha = float(re.match(r"rgba\(\d+,\d+,\d+,([\d.]+)\)", colour).group(1))
        assert colour.startswith(_rgb_prefix(head_color(head)))
        xs, ys = list(tr.x), list(tr.y)
        for i in range(0, len(xs), 3):
            assert (xs[i], xs[i + 1], xs[i + 2]) == (0.0, 1.0, None)
            drawn[(head, int(ys[i]), int(ys[i + 1]))] = alpha
    return drawn


def _rgb_prefix(hex_color: str) -> str:
    return "rgba({},{},{},".format(*(int(hex_color[i:i + 2], 16) for i in (1, 3, 5)))


@pytest.mark.parametrize("kind", schema.KINDS)
def test_line_opacity_is_the_attention_weight_per_head(trace, kind):
    patterns = schema.stacked(trace, kind)[1]                                # [H, Q, K] of layer 1
    rows, cols = attention_labels(trace.meta, kind)
    fig = head_view(patterns, rows, cols, Look(EN))
    drawn = _drawn_opacity(fig)
    n_heads = patterns.shape[0]
    legend = [tr for tr in fig.data if tr.showlegend is not False and tr.legendgroup]
    assert [tr.name for tr in legend] == [f"head {h}" for h in range(n_heads)]     # one entry, one colour per head
    assert len({tr.line.color for tr in legend}) == n_heads
    for (h, q, k), weight in np.ndenumerate(patterns):
        if weight >= MIN_WEIGHT:
            assert abs(drawn[(h, q, k)] - weight) <= 0.5 / OPACITY_LEVELS + 1e-9, (h, q, k)
        else:
            assert (h, q, k) not in drawn
    if kind == "decoder":                        # causal: nothing drawn to a future position
        assert all(k <= q for (_, q, k) in drawn)
    assert list(fig.data[-2].text) == plotly_text(rows) and list(fig.data[-1].text) == plotly_text(cols)


def test_a_picked_head_is_shown_alone_and_the_legend_isolates(trace):
    patterns = schema.stacked(trace, "cross")[2]
    rows, cols = attention_labels(trace.meta, "cross")
    fig = head_view(patterns, rows, cols, Look(EN), selected_head=3)
    for tr in fig.data:
        if tr.legendgroup:
            assert tr.visible == (True if tr.legendgroup == "h3" else "legendonly")
    assert fig.layout.legend.itemclick == "toggleothers"
    with pytest.raises(ValueError):
        head_view(patterns, rows, cols, Look(EN), selected_head=8)
    with pytest.raises(ValueError):
        head_view(patterns, rows[:-1], cols, Look(EN))


def test_hover_names_where_each_head_looks(trace):
    patterns = schema.stacked(trace, "cross")[2]
    rows, cols = attention_labels(trace.meta, "cross")
    fig = head_view(patterns, rows, cols, Look(EN))
    left = fig.data[-2].hovertext[0]
    h0_top = cols[int(patterns[0, 0].argmax())]
    assert f"head 0: {h0_top.replace('<', '&lt;').replace('>', '&gt;')} {patterns[0, 0].max():.2f}" in left


def test_head_view_data_groups_by_head_and_level():
    patterns = np.array([[[0.7, 0.3, 0.0], [0.02, 0.48, 0.5], [1 / 3, 1 / 3, 1 / 3]]])
    groups = head_view_data(patterns)
    got = {(g.level, q, k) for g in groups for q, k in zip(g.query, g.key)}
    assert (14, 0, 0) in got and (6, 0, 1) in got and (10, 1, 2) in got and (7, 2, 0) in got
    assert not any(q == 0 and k == 2 for _, q, k in got) and not any(q == 1 and k == 0 for _, q, k in got)
    with pytest.raises(ValueError):
        head_view_data(np.zeros((3, 3)))


def test_words_and_presenter_sizes(trace):
    patterns = schema.stacked(trace, "encoder")[0]
    rows, cols = attention_labels(trace.meta, "encoder")
    fig = head_view_figure(patterns, rows, cols, "encoder", 0, Look(words("zh"), PRESENTER))
    assert fig.data[0].name == "头 0" and "编码器自注意力" in fig.layout.title.text
    assert fig.layout.legend.font.size >= 16 and fig.data[-1].textfont.size >= 16
    assert all(a.font.size >= 16 for a in fig.layout.annotations)


@pytest.mark.parametrize("type_scale", [NORMAL, PRESENTER])
def test_unchecked_build_is_a_valid_figure(trace, type_scale):
    """The head view skips plotly's checks when it is built (its ~100 line traces cost ~110 ms to validate on every
    new sentence): checked the long way, it is a valid figure with the same JSON."""
    import json

    import plotly.graph_objects as go

    patterns = schema.stacked(trace, "cross")[2]
    rows, cols = attention_labels(trace.meta, "cross")
    fig = head_view(patterns, rows, cols, Look(EN, type_scale), title="t", selected_head=1)
    checked = go.Figure(fig.to_dict())                       # raises on any property plotly does not know
    assert json.loads(checked.to_json()) == json.loads(fig.to_json())
