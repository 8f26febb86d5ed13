"""Before the Transformer: exact-match accuracy against the input's length for RNN encoder-decoders with and
without attention (the bottleneck of one vector, made visible). numpy in, plotly out, in the reader's words."""
from __future__ import annotations

import plotly.graph_objects as go

from viz.figures.style import LINE_COLORS, Look, legend_under_title, typeset, vline

DASHES = ("solid", "dash", "dot", "dashdot")
COLORS = (LINE_COLORS[3], LINE_COLORS[0], LINE_COLORS[2], LINE_COLORS[1])   # the first (no attention) red


def accuracy_by_length_figure(lengths: list[int], curves: dict[str, list[float]], trained: tuple[int, int],
                              look: Look, marked: int | None = None, title: str = "",
                              emphasis: str | None = None) -> go.Figure:
    """One line per model (curves: legend name -> accuracy 0-1 at each of `lengths`); the trained lengths
    shaded; `marked` (the input on the page) a dashed vertical line; `emphasis` names the line drawn thickest
    (the model without attention: the one the picture is about)."""
    if not curves:
        raise ValueError("need at least one model's accuracies")
    for name, values in curves.items():
        if len(values) != len(lengths):
            raise ValueError(f"{name}: {len(values)} accuracies for {len(lengths)} lengths")
        if any(not 0.0 <= v <= 1.0 for v in values):
            raise ValueError(f"{name}: accuracies must lie between 0 and 1")
    lo, hi = trained
    hover_length, hover_accuracy = look.words("rnn.acc.hover_length"), look.words("rnn.acc.hover_accuracy")
    lines = [go.Scatter(x=list(lengths), y=[100 * v for v in values], name=name, mode="lines+markers",
                        line=dict(color=COLORS[i % len(COLORS)],
                                  width=5 if name == emphasis else 3, dash=DASHES[i % len(DASHES)]),
                        marker=dict(size=9 if name == emphasis else 7),
                        hovertemplate=f"{name}<br>{hover_length} %{{x}}<br>{hover_accuracy} %{{y:.1f}}%<extra></extra>")
             for i, (name, values) in enumerate(curves.items())]
    shapes = [dict(type="rect", xref="x", yref="paper", x0=lo - 0.5, x1=hi + 0.5, y0=0, y1=1,
                   fillcolor="rgba(120,120,120,0.12)", line=dict(width=0), layer="below")]
    if marked is not None:
        shapes.append(vline(marked, dict(color="#333333", width=2, dash="dash")))
    layout = dict(title=dict(text=title), height=int(380 + 2 * look.scale.text), margin=dict(l=10, r=10, t=60, b=10),
                  xaxis=dict(title=dict(text=look.words("rnn.acc.x")), dtick=2, range=[min(lengths) - 0.5, max(lengths) + 0.5]),
                  yaxis=dict(title=dict(text=look.words("rnn.acc.y")), range=[-3, 103], tickvals=[0, 25, 50, 75, 100]),
                  shapes=shapes,
                  annotations=[dict(x=(lo + hi) / 2, y=0.02, xref="x", yref="paper", text=look.words("rnn.acc.trained"),
                                    showarrow=False, yanchor="bottom", font=look.scale.font("text"))])
    legend_under_title(layout, list(curves), look.scale)
    return go.Figure(lines, layout=typeset(layout, look.scale))
