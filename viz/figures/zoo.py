"""Attention-zoo figures: several weight matrices side by side on one 0-1 scale, local-attention centres."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import (ATTENTION_SCALE, BASE_FONT, check_matrix, plotly_text, subplot_axes, subplot_layout,
                               update_axes)


def gallery(matrices: list[np.ndarray], titles: list[str], query_labels: list[str], key_labels: list[str],
            title: str = "") -> go.Figure:
    """One row of [query, key] weight maps sharing a fixed 0-1 colour scale; labels on the first only."""
    if not matrices or len(matrices) != len(titles):
        raise ValueError(f"need one title per matrix, got {len(matrices)} matrices and {len(titles)} titles")
    matrices = [check_matrix(m, len(query_labels), len(key_labels)) for m in matrices]
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)
    layout = subplot_layout(titles, rows=1, cols=len(matrices), horizontal_spacing=0.02, shared_yaxes=True)
    heatmaps = [go.Heatmap(z=m, x=key_labels, y=query_labels, coloraxis="coloraxis", **subplot_axes(j),
                           hovertemplate=f"{panel_title}<br>query %{{y}}<br>key %{{x}}<br>weight %{{z:.3f}}"
                                         "<extra></extra>")
                for j, (m, panel_title) in enumerate(zip(matrices, titles))]
    update_axes(layout, "x", type="category", tickangle=-45, tickfont=dict(size=12), automargin=True)
    update_axes(layout, "y", type="category", autorange="reversed", tickfont=dict(size=12), automargin=True)
    layout["yaxis"]["title"] = dict(text="query")
    for note in layout.get("annotations", []):   # the panel titles
        note["font"] = dict(size=15)
    side = max(320, min(640, 160 + 22 * len(query_labels)))
    layout.update(title=dict(text=title), height=side, font=BASE_FONT,
                  margin=dict(l=10, r=10, t=90 if title else 50, b=10),
                  coloraxis=dict(colorscale=ATTENTION_SCALE, cmin=0, cmax=1,
                                 colorbar=dict(title=dict(text="weight"), thickness=12)))
    return go.Figure(heatmaps, layout=layout)


def mark_centres(fig: go.Figure, centres, query_labels: list[str], key_labels: list[str]) -> go.Figure:
    """Draw local attention's aligned position p_t as a red ring in each query row."""
    centres = np.asarray(centres, dtype=int)
    if centres.shape != (len(query_labels),) or (centres < 0).any() or (centres >= len(key_labels)).any():
        raise ValueError(f"need one centre in 0..{len(key_labels) - 1} per query, got {centres.tolist()}")
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)  # as the heatmap shows them
    fig.add_trace(go.Scatter(x=[key_labels[c] for c in centres], y=query_labels, mode="markers",
                             marker=dict(symbol="circle-open", size=24, color="#d62728", line=dict(width=3)),
                             name="centre p_t", hovertemplate="p_t for %{y}: %{x}<extra></extra>"))
    fig.layout.showlegend = False   # one property set: update_layout would parse its arguments first
    return fig
