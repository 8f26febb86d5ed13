"""Head view: a line from each query token (left) to each token it attends to (right), one colour per head,
the line's opacity the attention weight (BertViz's head view, drawn with plotly so it works offline in the
lesson and reads on a projector). Click a head in the legend to show it alone; click it again for all.

`head_view_data(patterns, ...)` turns [head, query, key] weights into line segments grouped by head and
opacity level (pure numpy); `head_view(patterns, ...)` draws them. Plotly draws one colour per line trace,
so each head's lines are binned into OPACITY_LEVELS levels of opacity (a weight w is drawn at w rounded to
the nearest 1/OPACITY_LEVELS) and lines under MIN_WEIGHT are left out (they would be invisible anyway).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import LINE_COLORS, Look, plotly_text, trusted_figure

OPACITY_LEVELS = 20
MIN_WEIGHT = 0.5 / OPACITY_LEVELS      # rounds to opacity 0: not drawn
LEFT, RIGHT = 0.0, 1.0                 # x of the query and key columns


def head_color(head: int) -> str:
    return LINE_COLORS[head % len(LINE_COLORS)]


def rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.2f})"


@dataclass(frozen=True)
class HeadLines:
    """One head's lines at one opacity: segments (query i, key j) drawn at alpha = level / OPACITY_LEVELS."""
    head: int
    level: int
    query: np.ndarray      # [n] row of each line
    key: np.ndarray        # [n] column of each line

    @property
    def alpha(self) -> float:
        return self.level / OPACITY_LEVELS


def head_view_data(patterns: np.ndarray) -> list[HeadLines]:
    """[H, Q, K] attention weights -> every head's lines, grouped by opacity level (weights under MIN_WEIGHT
    dropped). Pure numpy: a test reads the drawn opacity of each (head, query, key) from it."""
    patterns = np.asarray(patterns, dtype=float)
    if patterns.ndim != 3:
        raise ValueError(f"head_view expects [head, query, key], got shape {patterns.shape}")
    levels = np.rint(np.nan_to_num(patterns) * OPACITY_LEVELS).astype(int).clip(0, OPACITY_LEVELS)
    groups = []
    for head in range(patterns.shape[0]):
        q, k = np.nonzero(levels[head])
        lv = levels[head][q, k]
        order = np.argsort(lv, kind="stable")
        q, k, lv = q[order], k[order], lv[order]
        for level in np.unique(lv):
            pick = lv == level
            groups.append(HeadLines(head, int(level), q[pick], k[pick]))
    return groups


def _segments(query: np.ndarray, key: np.ndarray) -> tuple[list, list]:
    """x and y of line segments query -> key, separated by None (one trace draws them all)."""
    n = len(query)
    x = np.empty(3 * n, dtype=object)
    y = np.empty(3 * n, dtype=object)
    x[0::3], x[1::3], x[2::3] = LEFT, RIGHT, None
    y[0::3], y[1::3], y[2::3] = query.astype(float), key.astype(float), None
    return x.tolist(), y.tolist()


def head_view(patterns: np.ndarray, query_labels: list[str], key_labels: list[str], look: Look, title: str = "",
              selected_head: int | None = None, line_width: float = 2.5,
              max_height: int = 2400) -> go.Figure:
    """Every head of one layer as lines between two token columns, in the reader's words (headview.*).
    patterns: [H, Q, K] rows summing to 1. selected_head: that head shown, the others in the legend (one click
    shows them). look: the reader's words, tokens at its scale's tick size, headers and legend at its text size
    (PRESENTER in presenter mode)."""
    return trusted_figure(head_view_spec(patterns, query_labels, key_labels, look, title, selected_head, line_width,
                                         max_height))   # tests check it the long way


def head_view_spec(patterns: np.ndarray, query_labels: list[str], key_labels: list[str], look: Look, title: str = "",
                   selected_head: int | None = None, line_width: float = 2.5, max_height: int = 2400) -> dict:
    """head_view's figure as plain data ({data, layout}), which the browser view sends as it is: made into a
    plotly.py figure, its ~100-200 line traces are copied (~30 ms at 32 tokens, for nothing the view needs)."""
    patterns = np.asarray(patterns, dtype=float)
    groups = head_view_data(patterns)
    _check_shapes(patterns, query_labels, key_labels, selected_head)
    head_names = [look.words("headview.head", h=h) for h in range(patterns.shape[0])]
    # plotly draws the traces in order: the tokens' points last, over the lines' ends
    traces = (_legend_entries(head_names, selected_head) + _head_lines(groups, selected_head, line_width)
              + _token_columns(patterns, query_labels, key_labels, head_names, look))
    layout = _head_view_layout(patterns.shape, query_labels + key_labels, look, title, max_height)
    return {"data": traces, "layout": layout}


def _check_shapes(patterns: np.ndarray, query_labels: list[str], key_labels: list[str],
                  selected_head: int | None) -> None:
    """A label for every query and key, and a selected head that exists."""
    n_heads, n_q, n_k = patterns.shape
    if (n_q, n_k) != (len(query_labels), len(key_labels)):
        raise ValueError(f"patterns of {n_q} x {n_k} do not match {len(query_labels)} query and "
                         f"{len(key_labels)} key labels")
    if selected_head is not None and not 0 <= selected_head < n_heads:
        raise ValueError(f"head {selected_head} does not exist: heads 0–{n_heads - 1}")


def _visible(head: int, selected_head: int | None) -> bool | str:
    """Every head shown, or the selected one alone: the others wait in the legend."""
    return True if selected_head is None or head == selected_head else "legendonly"


def _legend_entries(head_names: list[str], selected_head: int | None) -> list[dict]:
    """One legend entry per head, its line drawn nowhere: its group holds the head's lines, so a click on it
    shows or hides them all."""
    return [dict(type="scatter", x=[None], y=[None], mode="lines", name=name, legendgroup=f"h{head}",
                 line=dict(color=head_color(head), width=6), visible=_visible(head, selected_head),
                 hoverinfo="skip") for head, name in enumerate(head_names)]


def _head_lines(groups: list[HeadLines], selected_head: int | None, line_width: float) -> list[dict]:
    """A trace per head and opacity level (plotly draws one colour per trace): its lines, query -> key."""
    traces = []
    for group in groups:
        x, y = _segments(group.query, group.key)
        traces.append(dict(type="scatter", x=x, y=y, mode="lines", legendgroup=f"h{group.head}", showlegend=False,
                           line=dict(color=rgba(head_color(group.head), group.alpha), width=line_width),
                           hoverinfo="skip", visible=_visible(group.head, selected_head),
                           name=f"{group.head}:{group.level}"))
    return traces


def _token_columns(patterns: np.ndarray, query_labels: list[str], key_labels: list[str], head_names: list[str],
                   look: Look) -> list[dict]:
    """The queries (left) and keys (right) as labelled points; a hover on one tells, head by head, where that
    query looks most, or which query looks at that key most."""
    queries, keys = plotly_text(query_labels), plotly_text(key_labels)
    safe = np.nan_to_num(patterns)
    top_key, top_query = safe.argmax(2), safe.argmax(1)                               # [H, Q], [H, K]
    left_hover = ["<br>".join([look.words("headview.hover_query", token=queries[i])] +
                              [f"{name}: {keys[top_key[h, i]]} {safe[h, i, top_key[h, i]]:.2f}"
                               for h, name in enumerate(head_names)]) for i in range(len(queries))]
    right_hover = ["<br>".join([f"{keys[j]} · {look.words('headview.hover_key')}"] +
                               [f"{name}: {queries[top_query[h, j]]} {safe[h, top_query[h, j], j]:.2f}"
                                for h, name in enumerate(head_names)]) for j in range(len(keys))]
    return [_token_column(LEFT, queries, left_hover, "left", "queries", look),
            _token_column(RIGHT, keys, right_hover, "right", "keys", look)]


def _token_column(x: float, tokens: list[str], hovers: list[str], side: str, name: str, look: Look) -> dict:
    """One column of tokens at x, a point each, its label on the `side` away from the lines."""
    return dict(type="scatter", x=[x] * len(tokens), y=list(range(len(tokens))), mode="markers+text", text=tokens,
                textposition=f"middle {side}", textfont=dict(size=look.scale.tick, color="#222222"),
                hovertext=hovers, hovertemplate="%{hovertext}<extra></extra>", showlegend=False,
                marker=dict(size=9, color="#444444"), name=name)


def _head_view_layout(shape: tuple[int, int, int], labels: list[str], look: Look, title: str,
                      max_height: int) -> dict:
    """A row per token (the longer column's), room for the labels either side; over the plot the title, the
    legend of heads and the two columns' headers."""
    n_heads, n_q, n_k = shape
    n, font_size = max(n_q, n_k), look.scale.tick
    height = int(min(max_height, max(360, 60 + 7 * look.scale.text + 1.55 * font_size * n)))
    longest = max([len(str(t)) for t in labels] + [1])
    side = min(0.9, 0.055 * longest * font_size / 16)        # room for the token labels, in x units
    bare = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False, fixedrange=True)
    # the title's line at the top of the figure, the legend under it (plotly centres the title in the top
    # margin, where the legend's title sits: the two would overprint), then the column headers
    title_px = int(1.4 * look.scale.title + 16) if title else 4
    headers = [dict(x=x, y=1, xref="x", yref="paper", yanchor="bottom", xanchor="center", text=f"<b>{text}</b>",
                    showarrow=False, font=look.scale.font("text"))
               for x, text in ((LEFT, look.words("fig.attention.y")), (RIGHT, look.words("fig.attention.x")))]
    return dict(xaxis=dict(bare, range=[LEFT - side, RIGHT + side]),
                yaxis=dict(bare, range=[n - 0.5, -0.5]), annotations=headers,
                title=dict(text=title, font=look.scale.font("title"), yref="container", y=1, yanchor="top",
                           pad=dict(t=8)),
                height=height, font=look.scale.font("text"), hoverlabel=dict(font=look.scale.font("text")),
                margin=dict(l=8, r=8, b=8, t=int((title_px if title else 0) + look.scale.text * (
                    1.7 * (1 + -(-n_heads // 4)) + 1.8))),      # legend title, its rows, the column headers
                plot_bgcolor="white", hovermode="closest", dragmode=False,
                legend=dict(orientation="h", x=0, y=1 - title_px / height, yanchor="top", yref="container",
                            title=dict(text=look.words("headview.legend"), side="top", font=look.scale.font("text")),
                            itemclick="toggleothers",
                            itemdoubleclick="toggle", font=look.scale.font("text")))
