"""A class's answers to one question, counted live: one bar per choice, the model's answer marked once revealed."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import LINE_COLORS, Look, plotly_text, typeset

ANSWER_COLOR = "#2ca02c"
OTHER_COLOR = "#9bbbd9"


def tally_figure(choices: list[str], counts, look: Look, answer: int | None = None) -> go.Figure:
    """Horizontal bars, one per choice in the question's order (top to bottom), each with its count; `answer`
    (the model's, once revealed) in green and named in the legend's place under the title."""
    counts = np.asarray(counts, dtype=int).reshape(-1)
    if counts.size != len(choices) or (counts < 0).any():
        raise ValueError(f"need one count >= 0 per choice ({len(choices)}), got {counts.tolist()}")
    if answer is not None and not 0 <= answer < len(choices):
        raise ValueError(f"answer {answer} is not one of the {len(choices)} choices")
    labels = plotly_text(choices)
    colors = [ANSWER_COLOR if i == answer else (OTHER_COLOR if answer is not None else LINE_COLORS[0])
              for i in range(len(choices))]
    total = int(counts.sum())
    title = look.words("class.tally.title", n=total)
    if answer is not None:
        title += "<br>" + look.words("class.tally.answer", answer=labels[answer])
    bar = go.Bar(x=counts, y=labels, orientation="h", marker_color=colors, text=[str(c) for c in counts],
                 textposition="outside", textfont=look.scale.font("cell"), cliponaxis=False, constraintext="none",
                 hovertemplate="%{y}: %{x}<extra></extra>")
    row_px = 2.2 * look.scale.tick
    layout = dict(title=dict(text=title), height=int(120 + row_px * len(choices) + (30 if answer is not None else 0)),
                  xaxis=dict(title=dict(text=look.words("class.tally.x")), range=[0, max(1, counts.max()) * 1.2],
                             rangemode="tozero", dtick=max(1, int(np.ceil(max(1, counts.max()) / 5)))),
                  yaxis=dict(type="category", autorange="reversed", automargin=True),
                  margin=dict(l=10, r=30, t=90 if answer is not None else 60, b=10), showlegend=False)
    return go.Figure([bar], layout=typeset(layout, look.scale))
