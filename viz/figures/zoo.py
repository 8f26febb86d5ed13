"""Attention-zoo figures: one step of the computation (scores, weights, output) as a heatmap with every
token label shown, several weight maps side by side on one 0-1 scale, local-attention centres.

Sizes are planned for the projector's page: the type scale's page_px of main area at 1280x720 (PAGE_WIDTH
with the sidebar open, normal type).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.attention import SLANTED_EM, UPRIGHT_EM, map_room
from viz.figures.style import (ATTENTION_SCALE, DIVERGING_SCALE, NORMAL, Labels, Look, TypeScale, cell_numbers,
                               check_matrix, colorbar, colorscale, legend_above, mask_legend, mask_overlay, masked_z,
                               plotly_text, subplot_axes, subplot_layout, symmetric_range, trusted_figure, typeset,
                               update_axes)

PAGE_WIDTH = NORMAL.page_px   # px of the main area at 1280x720, sidebar open
TITLE_FONT = NORMAL.text      # panel titles
CHAR_WIDTH = 0.6          # a character's width in em, a little over the average (for planning only)
MAX_CELL = 40             # px: cells of small matrices do not grow past this
LABEL_ROOM = 150          # px a panel loses to its query labels, colour bar and padding


def _wide(ch: str) -> bool:
    return "\u2e80" <= ch <= "\uffef"          # CJK characters and full-width punctuation: about 1 em


def _width(text: str) -> float:
    """Width in average Latin characters."""
    return sum(1 / CHAR_WIDTH if _wide(ch) else 1 for ch in text)


def _words(title: str) -> list[list[str]]:
    """Spaces separate words; Chinese has none, so a line may also break before any of its characters (never
    before closing punctuation) and after one. Each word: its unbreakable pieces."""
    words = []
    for part in title.split(" "):
        pieces: list[str] = []
        for ch in part:
            if pieces and ((_wide(ch) and ch not in "，。、；：）」』》") or _wide(pieces[-1][-1])):
                pieces.append(ch)
            elif pieces:
                pieces[-1] += ch
            else:
                pieces.append(ch)
        words.append(pieces or [""])
    return words


def title_lines(title: str, width_px: float, font_size: int = TITLE_FONT) -> str:
    """Break a title at spaces (plotly's '<br>'), or between Chinese characters, so that no line is wider
    than width_px; a '<br>' already in the title (a catalogue's own break) stays."""
    room = max(8, int(width_px / (CHAR_WIDTH * font_size)))
    return "<br>".join(_line_breaks(line, room) for line in title.split("<br>"))


def _line_breaks(title: str, room: int) -> str:
    lines: list[str] = []
    for pieces in _words(title):
        for i, piece in enumerate(pieces):
            sep = " " if i == 0 else ""
            if lines and _width(lines[-1]) + len(sep) + _width(piece) <= room:
                lines[-1] += sep + piece
            else:
                lines.append(piece)
    return "<br>".join(lines)


def _cell(n_cols: int, width_px: float, type_scale: TypeScale = NORMAL) -> float:
    room = LABEL_ROOM * type_scale.tick / NORMAL.tick
    return max(8.0, min(MAX_CELL * type_scale.cell / NORMAL.cell, (width_px - room) / max(n_cols, 1)))


def _plot_px(width_px: float, row_labels: list[str], y_title: str, value_name: str, bar_tick: str,
             s: TypeScale) -> float:
    """About how wide the cells' area is drawn in a figure width_px wide: less the margins, the query axis's
    title and its widest label (left), the colour bar with its widest tick label and its title (right).
    Estimated from the words themselves (a little generously, so numbers are rather dropped than crammed):
    a fixed room of 150 px is about 80 px short beside '0 <modern>' labels and a two-line colour bar title,
    where signed numbers run together ('-0.01-0.03')."""
    left = 10 + (1.3 * s.text if y_title else 0) + 10 + max((s.text_px(t, "tick") for t in row_labels), default=0)
    bar = 12 + 2 * 10 + s.text_px(bar_tick, "tick")                      # thickness, pads, tick labels
    title = max((s.text_px(line) for line in value_name.split("<br>")), default=0)
    return width_px - left - (10 + max(bar, title))


def step_heatmap(m, row_labels: list[str], col_labels: list[str], labels: Labels, look: Look,
                 zrange: tuple[float, float] | None = None, masked=None, width_px: float | None = None,
                 every_label: bool = True) -> go.Figure:
    """One step of attention for a panel width_px wide (default: half the scale's page), titled by `labels`.
    zrange: the colour range, on the diverging scale when it reaches below 0 and on the weights' scale when not;
    None: symmetric about 0, as far as the data goes (scores). Cells are near square, so the map is never a thin
    strip; every_label: each column keeps its token label (plotly would otherwise drop every second one).
    masked: bool like m, True where the causal mask hid the key: grey, no number, named in the legend. Numbers
    show when they fit at the scale's cell size in the cells' share of width_px (hover always has them); one
    that rounds to zero has no sign."""
    title, x_title, y_title, value_name = labels
    m = check_matrix(m, len(row_labels), len(col_labels))
    rows, cols = plotly_text(row_labels), plotly_text(col_labels)
    s = look.scale
    width_px = width_px or s.page_px / 2
    cell = _cell(len(cols), width_px, s)
    z = masked_z(m, masked)
    text = cell_numbers(z, "")        # -0.001 written 0.00: a sign there reads as a measured negative
    if zrange is None:
        zmax = symmetric_range(m)
        zrange = (-zmax, zmax)
    signed = zrange[0] < 0
    scale = dict(zmin=zrange[0], zmax=zrange[1], colorscale=colorscale(DIVERGING_SCALE if signed else ATTENTION_SCALE))
    # the characters the numbers really take ("-0.01": 5, "0.42": 4) in the width the cells really get
    chars = max((len(v) for row in text for v in row), default=4)
    bar_tick = ("-" if signed else "") + f"{0.9 * scale['zmax']:.2g}"       # about its widest tick label
    cell_w = _plot_px(width_px, row_labels, y_title, value_name, bar_tick, s) / max(len(cols), 1)
    show_values = s.numbers_fit(cell_w, cell, chars=chars) and m.size <= 100
    heatmap = dict(type="heatmap", z=z, x=cols, y=rows, **scale, colorbar=colorbar(value_name, s, 12),
                   textfont=s.font("cell"), hoverongaps=False,
                   hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.4f}}<extra></extra>")
    if show_values:
        heatmap.update(text=text, texttemplate="%{text}")
    traces = [heatmap]
    x_ticks = dict(tickmode="linear", tick0=0, dtick=1) if every_label else {}
    # key labels upright where slanted ones would touch; the plot keeps each row a legible label's height
    # after the key labels and the axis title (150 px in all left 24 px rows at presenter size: plotly drew
    # every second row label of a 14-token window)
    upright = cell_w < SLANTED_EM * s.tick
    longest = max((s.text_px(str(c), "tick") for c in cols), default=0)
    room_px = (30 + 1.25 * s.title) + (longest if upright else 0.71 * (longest + s.tick)) + 12 + 1.5 * s.text + 20
    height = int(max(260, min(720, room_px + max(cell, UPRIGHT_EM * s.tick) * len(rows))))
    title = title_lines(title, width_px - 60, s.title)
    line = 1.25 * s.title
    layout = dict(
        xaxis=dict(type="category", automargin=True, tickangle=-90 if upright else -45, title=dict(text=x_title),
                   **x_ticks),
        yaxis=dict(type="category", automargin=True, autorange="reversed", title=dict(text=y_title)),
        title=dict(text=title, yref="container", y=1, yanchor="top", pad=dict(t=12)),
        height=int(height + line * title.count("<br>")),
        margin=dict(l=10, r=10, t=int(30 + line * (1 + title.count("<br>"))), b=10))
    if masked is not None and np.any(masked):
        traces += [mask_overlay(masked, cols, rows), mask_legend(look.words("fig.masked"))]
        legend_above(layout)                   # under the title: the title may take the whole width
        layout["legend"].update(yref="paper", y=1.0, yanchor="bottom")
        layout["margin"]["t"] += int(1.6 * s.text)
        layout["height"] += int(1.6 * s.text)
    # built unchecked (trusted_figure): the zoo's deck holds 360 of these and the galleries, and plotly's checks were
    # three quarters of its build (tests/test_zoo.py checks them the long way)
    return trusted_figure({"data": traces, "layout": typeset(layout, s)})


def gallery(matrices: list[np.ndarray], titles: list[str], query_labels: list[str], key_labels: list[str],
            look: Look, title: str = "", max_cols: int = 3, width_px: float | None = None, masked=None) -> go.Figure:
    """Attention weight maps on one fixed 0-1 colour scale, at most max_cols a row (each wide enough for its
    title and every key label); query labels on the first panel of each row. masked: bool [query, key], True
    where the causal mask hid the key: grey in every panel, named in the legend. width_px: the figure's
    width (default: the scale's page)."""
    hover_query, hover_key = look.words("fig.attention.query"), look.words("fig.attention.key")
    value_name = look.words("fig.attention.weight")
    s = look.scale
    width_px = width_px or s.page_px
    if not matrices or len(matrices) != len(titles):
        raise ValueError(f"need one title per matrix, got {len(matrices)} matrices and {len(titles)} titles")
    matrices = [check_matrix(m, len(query_labels), len(key_labels)) for m in matrices]
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)
    n = len(matrices)
    n_cols = min(max_cols, n)
    room = map_room(s) if s.narrow else 160                    # the query labels and the colour bar
    if s.narrow:      # a phone's column: as many panels a row as give every key its upright label (often one)
        n_cols = max(1, min(n_cols, int((width_px - room) / (UPRIGHT_EM * s.tick * len(key_labels)))))
    n_rows = -(-n // n_cols)
    panel_px = (width_px - room) / n_cols
    titles = [title_lines(t, panel_px, s.text) for t in titles]
    cell = max(6.0, min(30.0, (panel_px - 12) / len(key_labels)))
    # a row as tall as its query label needs (square 17 px cells at the normal 14 px: plotly drew every second row)
    row_px = max(cell, UPRIGHT_EM * s.tick) * len(query_labels)
    line = 1.25 * s.text
    gap_px = 120 * s.tick / NORMAL.tick + line * max(t.count("<br>") for t in titles)   # rotated key labels, titles
    plot_px = n_rows * row_px + (n_rows - 1) * gap_px
    specs = [[{} if r * n_cols + c < n else None for c in range(n_cols)] for r in range(n_rows)]
    layout = subplot_layout(titles, rows=n_rows, cols=n_cols, specs=specs, shared_yaxes=True,
                            horizontal_spacing=0.03, vertical_spacing=gap_px / plot_px if n_rows > 1 else 0.1)
    heatmaps = [dict(type="heatmap", z=masked_z(m, masked), x=key_labels, y=query_labels, coloraxis="coloraxis",
                     hoverongaps=False, **subplot_axes(j),
                     hovertemplate=f"{panel_title}<br>{hover_query} %{{y}}<br>{hover_key} %{{x}}<br>"
                                   f"{value_name} %{{z:.3f}}<extra></extra>")
                for j, (m, panel_title) in enumerate(zip(matrices, titles))]
    every = dict(tickmode="linear", tick0=0, dtick=1) if cell >= 1.1 * s.tick else {}
    upright = cell < SLANTED_EM * s.tick           # slanted key labels this close run into one another
    update_axes(layout, "x", type="category", tickangle=-90 if upright else -45, automargin=True, **every)
    update_axes(layout, "y", type="category", autorange="reversed", automargin=True)
    layout["yaxis"]["title"] = dict(text=hover_query)
    top = int((40 + 1.5 * s.title if title else 30 + line) + line * max(t.count("<br>") for t in titles))
    if masked is not None and np.any(masked):
        for j in range(n):
            heatmaps.append(mask_overlay(masked, key_labels, query_labels, **subplot_axes(j)))
        heatmaps.append(mask_legend(look.words("fig.masked")))
        legend_above(layout)
        top += int(1.6 * s.text)
    # under the maps: the key labels (upright, as long as the longest; slanted, 0.71 of it) and their ticks (a fixed
    # 90 px left 16 px rows for "0 <modern>" upright, and plotly drew every second query)
    longest = max((s.text_px(str(k), "tick") for k in key_labels), default=0)
    below = max(90 * s.tick / NORMAL.tick, (longest if upright else 0.71 * (longest + s.tick)) + 30)
    layout.update(title=dict(text=title), height=int(max(320, plot_px + top + below)),
                  margin=dict(l=10, r=10, t=top, b=10),
                  coloraxis=dict(colorscale=colorscale(ATTENTION_SCALE), cmin=0, cmax=1,
                                 colorbar=dict(title=dict(text=value_name), thickness=12)))
    return trusted_figure({"data": heatmaps, "layout": typeset(layout, s)})      # unchecked: as step_heatmap


def mark_centres(fig: go.Figure, centres, query_labels: list[str], key_labels: list[str], look: Look) -> go.Figure:
    """Draw local attention's aligned position p_t as a red ring in each query row."""
    centres = np.asarray(centres, dtype=int)
    if centres.shape != (len(query_labels),) or (centres < 0).any() or (centres >= len(key_labels)).any():
        raise ValueError(f"need one centre in 0..{len(key_labels) - 1} per query, got {centres.tolist()}")
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)  # as the heatmap shows them
    fig.add_trace(dict(type="scatter", x=[key_labels[c] for c in centres], y=query_labels, mode="markers",
                       marker=dict(symbol="circle-open", size=24, color="#d62728", line=dict(width=3)),
                       name=look.words("zoo.fig.centre"), showlegend=False,      # the legend, if any, is the mask's
                       hovertemplate=look.words("zoo.fig.centre.hover") + "<extra></extra>"))
    return fig
