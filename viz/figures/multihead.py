"""Figures for multi-head assembly: per-head outputs, their concatenation with head boundaries, the
per-token size of each stage, and every head's attention pattern side by side. numpy in, plotly out."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import (ATTENTION_SCALE, DIVERGING_SCALE, LINE_COLORS, NORMAL, Labels, Look, TypeScale,
                               axis_suffix, legend_above, mask_legend, mask_overlay, masked_z, plotly_text,
                               signed_heatmap, subplot_axes, subplot_layout, symmetric_range, typeset, update_axes)
from model.analysis.attention_math import dim_labels
from viz.figures.step import level_ticks

MAX_TICK_LABELS = 24   # small multiples show token labels only while they stay legible
FIGURE_WIDTH = 720     # px of a chart in the page column at 1280x720 with the sidebar open, less the colour bar
MIN_PX_PER_KEY = 16    # an upright 12 px label needs this much width not to touch its neighbour
MIN_EM_PER_KEY = 1.15  # likewise, in ems of the tick size (16 px at the normal 14, 21 px at the presenter's 18)
ROW_EM = 1.3           # a query row of a head panel, in ems of the tick size: its label's box (1.36 em in
                       # Chromium) overlaps its neighbour's by under 1 px
MIN_PANEL_PX = 120     # a head panel is never shorter than this (a three-token sentence)
WHOLE_SLACK = 2        # a sentence at most this many tokens longer than a window is shown whole (head_window)


def _check_heads(stack: np.ndarray, n_rows: int, n_cols: int | None, what: str) -> np.ndarray:
    stack = np.asarray(stack, dtype=float)
    if stack.ndim != 3:
        raise ValueError(f"{what} must be [head, rows, cols], got shape {stack.shape}")
    if stack.shape[1] != n_rows or (n_cols is not None and stack.shape[2] != n_cols):
        raise ValueError(f"{what} of shape {stack.shape} does not match the labels ({n_rows} x {n_cols})")
    if stack.shape[0] == 0:
        raise ValueError(f"{what} has no heads")
    return stack


def _grid(n_heads: int, n_cols: int) -> tuple[int, int]:
    cols = max(1, min(n_heads, n_cols))
    return math.ceil(n_heads / cols), cols


def per_head_outputs(z: np.ndarray, token_labels: list[str], look: Look, title: str = "", n_cols: int = 4) -> go.Figure:
    """Each head's output z_h [T, d_head] as small heatmaps on one shared diverging scale."""
    head_name, token_name = look.words("multihead.head"), look.words("multihead.axis.token")
    value_name = look.words("multihead.axis.value")
    z = _check_heads(z, len(token_labels), None, "per-head outputs")
    n_heads, _, d_head = z.shape
    rows, cols = _grid(n_heads, n_cols)
    zmax = symmetric_range(z)
    layout = subplot_layout([f"{head_name} {h}: z<sub>{h}</sub> [{len(token_labels)} × {d_head}]"
                             for h in range(n_heads)],
                            rows=rows, cols=cols, horizontal_spacing=0.03, vertical_spacing=0.12 if rows > 1 else 0)
    dims, tokens = dim_labels(d_head), plotly_text(token_labels)
    traces = [go.Heatmap(z=z[h], x=dims, y=tokens, coloraxis="coloraxis", **subplot_axes(h),
                         hovertemplate=f"{head_name} {h}<br>{token_name} %{{y}}<br>%{{x}}: %{{z:.4f}}<extra></extra>")
              for h in range(n_heads)]
    update_axes(layout, "x", type="category", showticklabels=False, ticks="")
    update_axes(layout, "y", type="category", autorange="reversed", showticklabels=False, ticks="")
    for r in range(rows):   # token labels on the left column only, every one named (plotly's spacing drops some)
        layout["yaxis" + axis_suffix(r * cols)].update(showticklabels=len(token_labels) <= MAX_TICK_LABELS,
                                                       automargin=True, tickvals=tokens)
    row_height = max(160, min(420, 1.5 * look.scale.tick * len(token_labels) + 60))
    layout.update(title=dict(text=title), height=int(rows * row_height + 90),
                  coloraxis=dict(colorscale=DIVERGING_SCALE, cmin=-zmax, cmax=zmax,
                                 colorbar=dict(title=dict(text=value_name), thickness=14)),
                  margin=dict(l=10, r=10, t=80, b=10))
    return go.Figure(traces, layout=typeset(layout, look.scale))


def stage_heatmap(m: np.ndarray, token_labels: list[str], look: Look, title: str = "",
                  plot_px: float = FIGURE_WIDTH) -> go.Figure:
    """One stage of the assembly, [T, d], tokens down and dimensions d0.. across, diverging around 0.
    plot_px: about how wide it is drawn (half for a chart in one of two columns): d-labels are thinned to fit."""
    labels = Labels(title, look.words("multihead.axis.dimension"), look.words("multihead.axis.token"),
                    look.words("multihead.axis.value"))
    return _stage(m, token_labels, labels, plot_px, look.scale)


def _stage(m: np.ndarray, token_labels: list[str], labels: Labels, plot_px: float, type_scale: TypeScale) -> go.Figure:
    m = np.asarray(m, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected [token, dimension], got shape {m.shape}")
    dims = dim_labels(m.shape[1])
    fig = signed_heatmap(m, token_labels, dims, labels, type_scale=type_scale)
    fig.layout.xaxis.update(level_ticks(dims, plot_px, type_scale=type_scale))
    return fig


def concat_heatmap(concat: np.ndarray, token_labels: list[str], n_heads: int, look: Look, title: str = "",
                   plot_px: float = FIGURE_WIDTH) -> go.Figure:
    """Concat(head_1..head_h) [T, d_model] with a line and a label at every head boundary."""
    concat = np.asarray(concat, dtype=float)
    if concat.ndim != 2 or n_heads <= 0 or concat.shape[1] % n_heads:
        raise ValueError(f"cannot split a matrix of shape {concat.shape} into {n_heads} heads")
    d_head = concat.shape[1] // n_heads
    head_name = look.words("multihead.head")
    labels = Labels(title, look.words("multihead.axis.concat"), look.words("multihead.axis.token"), look.words("multihead.axis.value"))
    fig = _stage(concat, token_labels, labels, plot_px, look.scale)
    lines = [dict(type="line", xref="x", yref="paper", x0=h * d_head - 0.5, x1=h * d_head - 0.5, y0=0, y1=1,
                  line=dict(color="black", width=2)) for h in range(1, n_heads)]
    labels = [dict(x=h * d_head + (d_head - 1) / 2, xref="x", y=1.0, yref="paper", yanchor="bottom",
                   text=f"{head_name} {h}" if plot_px / n_heads >= look.scale.text_px(f"{head_name} {h}") + 6 else
                   f"{h}", showarrow=False, font=look.scale.font("text")) for h in range(n_heads)]
    # one update, not an add_shape / add_annotation per head (each parses and validates anew)
    fig.update_layout(shapes=lines, annotations=labels, margin=dict(l=10, r=10, t=int(60 + 1.8 * look.scale.text), b=10))
    return fig


def stage_norms(norms: dict[str, np.ndarray], token_labels: list[str], look: Look, title: str = "") -> go.Figure:
    """Grouped bars: the L2 norm of every token after each stage, so each step's effect on size shows."""
    x_title, y_title = look.words("multihead.axis.token"), look.words("multihead.norms.y")
    if not norms:
        raise ValueError("no stages given")
    bars = []
    for i, (stage, values) in enumerate(norms.items()):
        values = np.asarray(values, dtype=float)
        if values.shape != (len(token_labels),):
            raise ValueError(f"stage {stage!r} has shape {values.shape}, expected ({len(token_labels)},)")
        bars.append(go.Bar(name=stage, x=plotly_text(token_labels), y=values,
                           marker_color=LINE_COLORS[i % len(LINE_COLORS)],
                           hovertemplate=f"{stage}<br>{x_title} %{{x}}<br>‖·‖ %{{y:.3f}}<extra></extra>"))
    layout = dict(xaxis=dict(type="category", tickangle=-45, automargin=True, title=dict(text=x_title)),
                  yaxis=dict(title=dict(text=y_title), rangemode="tozero"),
                  title=dict(text=title), barmode="group", height=460, bargap=0.2,
                  legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
                  margin=dict(l=10, r=10, t=int(110 + 2 * (look.scale.text - 16)), b=10))
    return go.Figure(bars, layout=typeset(layout, look.scale))


def head_columns(n_heads: int, n_keys: int, n_cols: int = 4, width: int = FIGURE_WIDTH,
                 type_scale: TypeScale = NORMAL) -> int:
    """How many panels side by side: at most n_cols, fewer when a panel would give a key label less than
    its minimum width (MIN_EM_PER_KEY of the tick size; the labels of 8 heads x 9 keys in 4 columns ran
    into each other)."""
    cols = max(1, min(n_heads, n_cols))
    while cols > 1 and width / cols / max(n_keys, 1) < min_px_per_key(type_scale):
        cols -= 1
    return cols


def head_patterns(patterns: np.ndarray, query_labels: list[str], key_labels: list[str], look: Look,
                  title: str = "", n_cols: int = 4, masked=None,
                  width: int | None = None) -> go.Figure:
    """Every head's attention weights [H, Q, K] side by side on the fixed 0-1 attention scale.
    masked: bool [Q, K], True where the causal mask hid the key: grey in every panel, named in the legend.
    width: the figure's width in px (default: the scale's page, less the colour bar)

    Key labels stand upright under the bottom row of panels only (every column has the same keys), and
    the grid has fewer columns when the labels would crowd (head_columns); queries label the left column."""
    patterns = _check_heads(patterns, len(query_labels), len(key_labels), "attention patterns")
    n_heads, n_queries, n_keys = patterns.shape
    head_name, value_name = look.words("multihead.head"), look.words("fig.attention.weight")
    hover_query, hover_key = look.words("fig.attention.query"), look.words("fig.attention.key")
    width = width or look.scale.page_px - 100
    rows, cols = _grid(n_heads, head_columns(n_heads, n_keys, n_cols, width, look.scale))
    # Rows as tall as their labels need, not square panels: 8 heads x 9 queries would be 185 px panels (21 px a
    # row at 14 px labels, about 30 px at the presenter's 18), most of a screen. Never taller than a column is wide.
    panel = min(width / cols, max(MIN_PANEL_PX, ROW_EM * look.scale.tick * n_queries))
    title_gap = 1.6 * look.scale.text                                    # room for the next row's "head h"
    plot_h = rows * panel + (rows - 1) * title_gap
    layout = subplot_layout([f"{head_name} {h}" for h in range(n_heads)], rows=rows, cols=cols, horizontal_spacing=0.03,
                            vertical_spacing=title_gap / plot_h if rows > 1 else 0)
    keys, queries = plotly_text(key_labels), plotly_text(query_labels)
    traces = [go.Heatmap(z=masked_z(patterns[h], masked), x=keys, y=queries, coloraxis="coloraxis",
                         hoverongaps=False, **subplot_axes(h),
                         hovertemplate=f"{head_name} {h}<br>{hover_query} %{{y}}<br>{hover_key} %{{x}}<br>"
                                       f"{value_name} %{{z:.3f}}<extra></extra>")
              for h in range(n_heads)]
    legible = (width_per_key(cols, n_keys, width) >= min_px_per_key(look.scale)
               and max(n_queries, n_keys) <= MAX_TICK_LABELS)
    update_axes(layout, "x", type="category", showticklabels=False, ticks="", tickangle=-90)
    update_axes(layout, "y", type="category", autorange="reversed", showticklabels=False, ticks="")
    # every label named (tickvals): plotly's own spacing drew every second key under 3 of 4 columns at 9 tokens
    for h in range(n_heads):
        if h + cols >= n_heads:            # nothing below it: the bottom panel of its column
            layout["xaxis" + axis_suffix(h)].update(showticklabels=legible, automargin=True, tickvals=keys)
    for r in range(rows):
        layout["yaxis" + axis_suffix(r * cols)].update(showticklabels=legible, automargin=True, tickvals=queries)
    labels = max(look.scale.text_px(str(k), "tick") for k in key_labels) + 12 if legible else 20
    top = 70
    if masked is not None and np.any(masked):
        traces += [mask_overlay(masked, keys, queries, **subplot_axes(h)) for h in range(n_heads)]
        traces.append(mask_legend(look.words("fig.masked")))
        legend_above(layout)
        top += int(1.6 * look.scale.text)
    layout.update(title=dict(text=title), height=int(plot_h + labels + top + 10),
                  coloraxis=dict(colorscale=ATTENTION_SCALE, cmin=0, cmax=1,
                                 colorbar=dict(title=dict(text=value_name), thickness=14)),
                  margin=dict(l=10, r=10, t=top, b=10))
    return go.Figure(traces, layout=typeset(layout, look.scale))


def min_px_per_key(type_scale: TypeScale = NORMAL) -> float:
    """The width an upright key label needs not to touch its neighbour, at the scale's tick size."""
    return max(MIN_PX_PER_KEY, MIN_EM_PER_KEY * type_scale.tick)


def keys_that_fit(n_cols: int, type_scale: TypeScale = NORMAL, width: int | None = None) -> int:
    """How many upright key labels one panel holds with n_cols panels side by side (head_patterns' default
    width): the window a long sentence's heads are shown through, every label legible and the grid n_cols wide."""
    width = width or type_scale.page_px - 100
    return max(1, int(width / n_cols / min_px_per_key(type_scale)))


def head_window(n_tokens: int, n_cols: int = 4, least: int = 14, type_scale: TypeScale = NORMAL) -> int:
    """How many of a sentence's n_tokens the heads' grid (and the pictures under it) show at once: as many keys as
    a panel labels legibly with n_cols panels a row (keys_that_fit), at least `least`; all of them while the
    sentence is at most WHOLE_SLACK tokens longer than that (a window of 14 of a 15-token sentence hid its </s>
    behind a slider that moved by one token: showing two more tokens costs less than a slider)."""
    size = max(least, keys_that_fit(n_cols, type_scale))
    return n_tokens if n_tokens <= size + WHOLE_SLACK else size


def width_per_key(cols: int, n_keys: int, width: int = FIGURE_WIDTH) -> float:
    """Pixels of figure width one key label gets in a grid of `cols` panels."""
    return width / cols / max(n_keys, 1)
