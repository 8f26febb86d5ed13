"""One look for every figure: projector-sized fonts, shared colour scales, input checks."""
from __future__ import annotations

import copy
import functools
import json

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

BASE_FONT = dict(size=16)
ATTENTION_SCALE = "Blues"          # sequential, 0 = white: an absent link looks absent
DIVERGING_SCALE = "RdBu_r"         # signed values (Q, K, V, scores, activations): 0 = white
LINE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def plotly_text(labels: list[str]) -> list[str]:
    """Plotly reads '<...>' in text as markup ('</s>' would vanish, '<a href>' would become a link):
    escape it so tokens show exactly as typed."""
    return [str(t).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for t in labels]


def check_matrix(m, n_rows: int, n_cols: int) -> np.ndarray:
    m = np.asarray(m, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {m.shape}")
    if m.shape != (n_rows, n_cols):
        raise ValueError(f"matrix shape {m.shape} does not match {n_rows} row and {n_cols} column labels")
    return m


def token_axes(x_title: str, y_title: str) -> dict:
    """Layout entries for token axes: every label shown, rows top-to-bottom in reading order.

    Figures on a hot path are built in one go, `go.Figure(data, layout)`: each `update_*` call parses
    and validates its property paths anew, which made two heatmaps cost ~19 ms of the server's
    single-threaded Python per new sentence instead of ~5 ms."""
    ticks = dict(type="category", automargin=True, tickfont=dict(size=14))
    return dict(xaxis=dict(ticks, title=dict(text=x_title), tickangle=-45),
                yaxis=dict(ticks, title=dict(text=y_title), autorange="reversed"))


def symmetric_range(*arrays) -> float:
    """Half-width for a diverging colour scale centred on zero."""
    peak = max(float(np.nanmax(np.abs(a))) if np.size(a) else 0.0 for a in arrays)
    return peak or 1.0


def signed_heatmap(m: np.ndarray, row_labels: list[str], col_labels: list[str], title: str, x_title: str,
                   y_title: str, value_name: str = "value", zmax: float | None = None) -> go.Figure:
    """A signed matrix on a diverging scale centred at 0 (Q, K, V, activations, scores)."""
    m = check_matrix(m, len(row_labels), len(col_labels))
    row_labels, col_labels = plotly_text(row_labels), plotly_text(col_labels)
    zmax = zmax or symmetric_range(m)
    heatmap = go.Heatmap(z=m, x=col_labels, y=row_labels, zmin=-zmax, zmax=zmax, colorscale=DIVERGING_SCALE,
                         colorbar=dict(title=dict(text=value_name), thickness=14),
                         hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.4f}}"
                                       "<extra></extra>")
    return go.Figure(heatmap, layout=dict(token_axes(x_title, y_title), title=dict(text=title), font=BASE_FONT,
                                          height=max(320, min(800, 140 + 24 * len(row_labels))),
                                          margin=dict(l=10, r=10, t=60, b=10)))


def vline(x, line: dict) -> dict:
    """A vertical line at data x across the plot, as fig.add_vline draws it, for a layout's shapes."""
    return dict(type="line", xref="x", x0=x, x1=x, yref="y domain", y0=0, y1=1, line=line)


def hline(y, line: dict) -> dict:
    """A horizontal line at data y across the plot, as fig.add_hline draws it, for a layout's shapes."""
    return dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y, line=line)

# -- subplot grids, built in one go (see token_axes for why) -----------------------------------------
def subplot_layout(titles=(), **grid) -> dict:
    """The layout `make_subplots(subplot_titles=titles, **grid)` starts from (axis domains and anchors,
    shared axes, subplot-title annotations) as a fresh dict; traces name their axes (`subplot_axes`).
    make_subplots costs 10-30 ms a call, so each grid shape is laid out once with placeholder titles
    and the real titles are filled in. Empty titles get no annotation, as in make_subplots."""
    layout = copy.deepcopy(_grid_layout(tuple(bool(t) for t in titles), json.dumps(grid, sort_keys=True)))
    for note, text in zip(layout.get("annotations", []), [t for t in titles if t]):
        note["text"] = text
    return layout


@functools.lru_cache(maxsize=64)
def _grid_layout(has_title: tuple[bool, ...], grid: str) -> dict:
    fig = make_subplots(subplot_titles=["·" if t else "" for t in has_title], **json.loads(grid))
    return {k: v for k, v in fig.layout.to_plotly_json().items() if k != "template"}  # go.Figure adds it


def axis_suffix(i: int) -> str:
    """Axis number of the i-th panel (from 0, row by row) as make_subplots numbers them: '', '2', '3'..."""
    return str(i + 1) if i else ""


def subplot_axes(i: int) -> dict:
    """The axes of the i-th panel of a subplot grid, for its trace."""
    return dict(xaxis="x" + axis_suffix(i), yaxis="y" + axis_suffix(i))


def update_axes(layout: dict, axis: str, **settings) -> dict:
    """What fig.update_xaxes / update_yaxes (axis "x" / "y") do to every panel, on a layout dict."""
    for name, value in layout.items():
        if name.startswith(f"{axis}axis"):
            value.update(settings)
    return layout
