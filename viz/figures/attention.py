"""Attention figures: one head large, or every layer x head small. numpy in, plotly out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.figures.style import ATTENTION_SCALE, BASE_FONT, check_matrix, label_axes, plotly_text

KIND_TITLES = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Cross-attention (decoder → encoder)",
}


def attention_heatmap(weights: np.ndarray, query_labels: list[str], key_labels: list[str], title: str = "",
                      zmin: float = 0.0, zmax: float = 1.0, colorscale=ATTENTION_SCALE,
                      highlight_row: int | None = None, value_name: str = "weight",
                      show_values: bool | None = None) -> go.Figure:
    """A [query, key] matrix with token labels on both axes, fixed colour range, hover values."""
    weights = check_matrix(weights, len(query_labels), len(key_labels))
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)
    if show_values is None:
        show_values = weights.size <= 144
    fig = go.Figure(go.Heatmap(
        z=weights, x=key_labels, y=query_labels, zmin=zmin, zmax=zmax, colorscale=colorscale,
        colorbar=dict(title=dict(text=value_name), thickness=14),
        texttemplate="%{z:.2f}" if show_values else None,
        hovertemplate="query %{y}<br>key %{x}<br>" + value_name + " %{z:.4f}<extra></extra>",
    ))
    label_axes(fig, "key (attended to)", "query (attending)")
    if highlight_row is not None and 0 <= highlight_row < len(query_labels):
        fig.add_shape(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=highlight_row - 0.5,
                      y1=highlight_row + 0.5, line=dict(color="#d62728", width=3))
    side = max(360, min(900, 140 + 26 * max(len(query_labels), len(key_labels))))
    fig.update_layout(title=title, height=side, font=BASE_FONT, margin=dict(l=10, r=10, t=60, b=10))
    return fig


def model_view(patterns: np.ndarray, title: str = "", selected: tuple[int, int] | None = None) -> go.Figure:
    """Every layer (rows) x head (columns) as thumbnails sharing one 0-1 colour scale. [L,H,Q,K] in."""
    patterns = np.asarray(patterns, dtype=float)
    if patterns.ndim != 4:
        raise ValueError(f"model_view expects [layer, head, query, key], got shape {patterns.shape}")
    n_layers, n_heads = patterns.shape[:2]
    fig = make_subplots(rows=n_layers, cols=n_heads, horizontal_spacing=0.012, vertical_spacing=0.03,
                        row_titles=[f"L{i}" for i in range(n_layers)],
                        column_titles=[f"H{j}" for j in range(n_heads)])
    for i in range(n_layers):
        for j in range(n_heads):
            fig.add_trace(go.Heatmap(z=patterns[i, j], zmin=0, zmax=1, coloraxis="coloraxis",
                                     customdata=np.full(patterns[i, j].shape, i * n_heads + j),
                                     hovertemplate=f"layer {i} head {j}<br>query %{{y}} key %{{x}}<br>"
                                                   "weight %{z:.3f}<extra></extra>"), row=i + 1, col=j + 1)
    fig.update_xaxes(showticklabels=False, ticks="")
    fig.update_yaxes(showticklabels=False, ticks="", autorange="reversed")
    if selected is not None:
        i, j = selected
        axis = "" if i * n_heads + j == 0 else str(i * n_heads + j + 1)
        fig.add_shape(type="rect", xref=f"x{axis} domain", yref=f"y{axis} domain", x0=-0.04, x1=1.04, y0=-0.04,
                      y1=1.04, line=dict(color="#d62728", width=3))
    fig.update_layout(title=title, coloraxis=dict(colorscale=ATTENTION_SCALE, cmin=0, cmax=1,
                                                  colorbar=dict(title=dict(text="weight"), thickness=12)),
                      height=max(260, 130 * n_layers + 80), font=BASE_FONT, margin=dict(l=10, r=40, t=70, b=10))
    return fig


def stack_patterns(arrays: dict[str, np.ndarray], stack: str, sublayer: str, n_layers: int) -> np.ndarray:
    """[L,H,Q,K] from trace arrays named {stack}.layers.{i}.{sublayer}.hook_pattern."""
    return np.stack([arrays[f"{stack}.layers.{i}.{sublayer}.hook_pattern"] for i in range(n_layers)])
