"""Head-analysis figures: one statistic as a layer x head grid, head importance as bars. numpy in, plotly out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import ATTENTION_SCALE, Look, colorbar, typeset

HARM_COLOR, HELP_COLOR = "#d62728", "#1f77b4"


def layer_head_heatmap(values, look: Look, value_name: str, title: str = "", zmin: float | None = 0.0,
                       zmax: float | None = None, colorscale=ATTENTION_SCALE, decimals: int = 2) -> go.Figure:
    """A [layer, head] grid of one number per head (value_name: what it is), each cell labelled; NaN cells read
    'n/a' (heads.na)."""
    missing = look.words("heads.na")
    m = np.asarray(values, dtype=float)
    if m.ndim != 2 or 0 in m.shape:
        raise ValueError(f"expected a [layer, head] matrix, got shape {m.shape}")
    finite = m[np.isfinite(m)]
    if zmax is None:
        zmax = float(finite.max()) if finite.size and finite.max() > (zmin or 0) else (zmin or 0) + 1.0
    text = [[f"{v:.{decimals}f}" if np.isfinite(v) else missing for v in row] for row in m]
    n_layers, n_heads = m.shape
    heatmap = go.Heatmap(
        z=m, x=[look.words("ui.head_n", h=h) for h in range(n_heads)], y=[look.words("ui.layer_n", i=i) for i in range(n_layers)],
        zmin=zmin, zmax=zmax, colorscale=colorscale, text=text, texttemplate="%{text}",
        textfont=look.scale.font("cell"), xgap=2, ygap=2, colorbar=colorbar(value_name, look.scale, 14),
        hovertemplate="%{y}, %{x}<br>" + value_name + " %{text}<extra></extra>")
    # built in one go, as every figure here (see style.token_axes): update_* calls cost more than the figure
    return go.Figure(heatmap, layout=typeset(dict(
        xaxis=dict(type="category", side="top", tickfont=look.scale.font("tick")),
        yaxis=dict(type="category", autorange="reversed", tickfont=look.scale.font("tick")),
        title=dict(text=title, y=0.98, yanchor="top"), height=max(260, 150 + 56 * n_layers),
        margin=dict(l=10, r=10, t=100, b=10), plot_bgcolor="#eeeeee"), look.scale))


def importance_bars(labels: list[str], deltas, look: Look, title: str = "", top: int | None = 24) -> go.Figure:
    """Change in log-probability when each head alone is off; the biggest drop on top.

    Red bars: the reference became less likely without the head (the head helped).
    """
    d = np.asarray(deltas, dtype=float)
    if d.ndim != 1 or len(d) != len(labels):
        raise ValueError(f"{len(labels)} labels but deltas of shape {d.shape}")
    if not len(d):
        raise ValueError("no heads to show")
    order = np.argsort(d, kind="stable")[: top or len(d)]
    shown, values = [labels[i] for i in order], d[order]
    bars = go.Bar(
        x=values, y=shown, orientation="h", marker_color=[HARM_COLOR if v < 0 else HELP_COLOR for v in values],
        text=[f"{v:+.3f}" for v in values], textposition="outside", constraintext="none", cliponaxis=False, textfont=look.scale.font("cell"),
        hovertemplate="%{y}<br>" + look.words("heads.rank.hover") + " %{x:.4f}<extra></extra>")
    return go.Figure(bars, layout=typeset(dict(
        xaxis=dict(title=dict(text=look.words("heads.rank.x")), zeroline=True,
                   zerolinewidth=2, zerolinecolor="#444"),
        yaxis=dict(type="category", autorange="reversed", tickfont=look.scale.font("tick")),
        title=dict(text=title), height=max(300, 120 + 28 * len(shown)),
        margin=dict(l=10, r=60, t=60, b=10), showlegend=False), look.scale))


def head_label(kind: str, layer: int, head: int, kind_name: str | None = None) -> str:
    """"encoder L0 H1"; kind_name: the kind in the page's language (default: the kind itself)."""
    return f"{kind_name or kind} L{layer} H{head}"
