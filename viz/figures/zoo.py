"""Attention-zoo figures: one step of the computation (scores, weights, output) as a heatmap with every
token label shown, several weight maps side by side on one 0-1 scale, local-attention centres.

Sizes are planned for the projector's page: PAGE_WIDTH px of main area at 1280x720 with the sidebar open.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import (ATTENTION_SCALE, BASE_FONT, DIVERGING_SCALE, check_matrix, plotly_text,
                               subplot_axes, subplot_layout, symmetric_range, update_axes)

PAGE_WIDTH = 820          # px of the main area at 1280x720, sidebar open
TITLE_FONT = 15           # panel titles
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


def _cell(n_cols: int, width_px: float) -> float:
    return max(8.0, min(MAX_CELL, (width_px - LABEL_ROOM) / max(n_cols, 1)))


def step_heatmap(m, row_labels: list[str], col_labels: list[str], title: str, x_title: str, y_title: str = "query",
                 value_name: str = "value", signed: bool = True, zmax: float | None = None,
                 width_px: float = PAGE_WIDTH / 2, every_label: bool = True,
                 show_values: bool | None = None) -> go.Figure:
    """One step of attention for a panel width_px wide: a signed matrix (scores, outputs) on a diverging scale
    centred at 0, or weights on the fixed 0-1 scale. Cells are near square, so the map is never a thin strip;
    every_label: each column keeps its token label (plotly would otherwise drop every second one)."""
    m = check_matrix(m, len(row_labels), len(col_labels))
    rows, cols = plotly_text(row_labels), plotly_text(col_labels)
    cell = _cell(len(cols), width_px)
    if show_values is None:
        show_values = cell >= 34 and m.size <= 100
    if signed:
        zmax = zmax or symmetric_range(m)
        scale = dict(zmin=-zmax, zmax=zmax, colorscale=DIVERGING_SCALE)
    else:
        scale = dict(zmin=0.0, zmax=1.0 if zmax is None else zmax, colorscale=ATTENTION_SCALE)
    heatmap = go.Heatmap(z=m, x=cols, y=rows, **scale, colorbar=dict(title=dict(text=value_name), thickness=12),
                         texttemplate="%{z:.2f}" if show_values else None, textfont=dict(size=12),
                         hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.4f}}"
                                       "<extra></extra>")
    x_ticks = dict(tickmode="linear", tick0=0, dtick=1) if every_label else {}
    height = int(max(260, min(720, 150 + cell * len(rows))))
    title = title_lines(title, width_px - 60, 16)
    # built in one go, as every figure here (see style.token_axes)
    return go.Figure(heatmap, layout=dict(
        xaxis=dict(type="category", automargin=True, tickfont=dict(size=13), tickangle=-45,
                   title=dict(text=x_title), **x_ticks),
        yaxis=dict(type="category", automargin=True, tickfont=dict(size=13), autorange="reversed",
                   title=dict(text=y_title)),
        title=dict(text=title, font=dict(size=16), yref="container", y=1, yanchor="top", pad=dict(t=12)),
        font=BASE_FONT, height=height + 20 * title.count("<br>"),
        margin=dict(l=10, r=10, t=46 + 20 * title.count("<br>"), b=10)))


def gallery(matrices: list[np.ndarray], titles: list[str], query_labels: list[str], key_labels: list[str],
            title: str = "", max_cols: int = 3, width_px: float = PAGE_WIDTH, y_title: str = "query",
            hover_query: str = "query", hover_key: str = "key", value_name: str = "weight") -> go.Figure:
    """Weight maps on one fixed 0-1 colour scale, at most max_cols a row (each wide enough for its title and
    every key label); query labels on the first panel of each row. y_title, hover_query, hover_key and
    value_name: the words shown, in the page's language."""
    if not matrices or len(matrices) != len(titles):
        raise ValueError(f"need one title per matrix, got {len(matrices)} matrices and {len(titles)} titles")
    matrices = [check_matrix(m, len(query_labels), len(key_labels)) for m in matrices]
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)
    n = len(matrices)
    n_cols = min(max_cols, n)
    n_rows = -(-n // n_cols)
    panel_px = (width_px - 160) / n_cols                       # less the query labels and the colour bar
    titles = [title_lines(t, panel_px) for t in titles]
    cell = max(6.0, min(30.0, (panel_px - 12) / len(key_labels)))
    row_px = cell * len(query_labels)
    gap_px = 120 + 18 * max(t.count("<br>") for t in titles)   # rotated key labels, then the next row's titles
    plot_px = n_rows * row_px + (n_rows - 1) * gap_px
    specs = [[{} if r * n_cols + c < n else None for c in range(n_cols)] for r in range(n_rows)]
    layout = subplot_layout(titles, rows=n_rows, cols=n_cols, specs=specs, shared_yaxes=True,
                            horizontal_spacing=0.03, vertical_spacing=gap_px / plot_px if n_rows > 1 else 0.1)
    heatmaps = [go.Heatmap(z=m, x=key_labels, y=query_labels, coloraxis="coloraxis", **subplot_axes(j),
                           hovertemplate=f"{panel_title}<br>{hover_query} %{{y}}<br>{hover_key} %{{x}}<br>"
                                         f"{value_name} %{{z:.3f}}"
                                         "<extra></extra>")
                for j, (m, panel_title) in enumerate(zip(matrices, titles))]
    every = dict(tickmode="linear", tick0=0, dtick=1) if cell >= 14 else {}
    update_axes(layout, "x", type="category", tickangle=-45, tickfont=dict(size=12), automargin=True, **every)
    update_axes(layout, "y", type="category", autorange="reversed", tickfont=dict(size=12), automargin=True)
    layout["yaxis"]["title"] = dict(text=y_title)
    for note in layout.get("annotations", []):   # the panel titles
        note["font"] = dict(size=TITLE_FONT)
    top = (90 if title else 50) + 18 * max(t.count("<br>") for t in titles)
    layout.update(title=dict(text=title), height=int(max(320, plot_px + top + 90)), font=BASE_FONT,
                  margin=dict(l=10, r=10, t=top, b=10),
                  coloraxis=dict(colorscale=ATTENTION_SCALE, cmin=0, cmax=1,
                                 colorbar=dict(title=dict(text=value_name), thickness=12)))
    return go.Figure(heatmaps, layout=layout)


def mark_centres(fig: go.Figure, centres, query_labels: list[str], key_labels: list[str],
                 name: str = "centre p_t", hover: str = "p_t for %{y}: %{x}") -> go.Figure:
    """Draw local attention's aligned position p_t as a red ring in each query row."""
    centres = np.asarray(centres, dtype=int)
    if centres.shape != (len(query_labels),) or (centres < 0).any() or (centres >= len(key_labels)).any():
        raise ValueError(f"need one centre in 0..{len(key_labels) - 1} per query, got {centres.tolist()}")
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)  # as the heatmap shows them
    fig.add_trace(go.Scatter(x=[key_labels[c] for c in centres], y=query_labels, mode="markers",
                             marker=dict(symbol="circle-open", size=24, color="#d62728", line=dict(width=3)),
                             name=name, hovertemplate=hover + "<extra></extra>"))
    fig.layout.showlegend = False   # one property set: update_layout would parse its arguments first
    return fig
