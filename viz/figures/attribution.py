"""Attribution figures: logit lens, source attribution side by side, agreement, contrastive bars,
activation patching. numpy + labels in, plotly out (built in one go, see style.token_axes)."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from viz.figures.attention import SLANTED_EM, UPRIGHT_EM, labels_that_fit
from viz.figures.style import (ATTENTION_SCALE, DIVERGING_SCALE, NORMAL, Labels, Look, TypeScale, axis_suffix,
                               cell_numbers, check_matrix, colorbar, plotly_text, subplot_axes, subplot_layout,
                               symmetric_range, typeset, update_axes, wide)

# Toward the chosen token (positive) red, toward the alternative (negative) blue: the app's diverging
# scale (style.DIVERGING_SCALE, RdBu_r) is red for positive and blue for negative everywhere else.
PUSH_COLOR, PULL_COLOR = "#d62728", "#1f77b4"
TICKS = dict(type="category", automargin=True)   # sizes: the figure's type scale (typeset)
PANELS_PER_ROW = 2          # source-attribution panels: at half the page each, 30 upright tokens stay readable
PANEL_MAX_PX, PANEL_ROW_EM = 560, 1.7   # a source-attribution panel's tallest plot; its rows, in ems of the tick size


# How many tokens each picture labels legibly; a longer sentence is shown through a window of this many.
LABELS_AND_BAR_PX = 360   # of a full-width map: its y title and layer labels, its colour bar (28 slanted tokens touched)
LENS_CHARS = 4             # a logit-lens cell holds a token of this many characters (its point: the tokens)


def lens_tokens(type_scale: TypeScale = NORMAL) -> int:
    """Output tokens across `logit_lens_heatmap` (slanted, the page's width less layer labels and colour bar), as
    many as have cells that write a LENS_CHARS-character token (25 at presenter size wrote none but 1-2 letter ones)."""
    cell_px = _text_px("x" * LENS_CHARS, type_scale.cell) + LENS_PAD
    return min(labels_that_fit(type_scale.page_px - LABELS_AND_BAR_PX, type_scale, SLANTED_EM),
               int((type_scale.page_px - LENS_ROOM_PX) / cell_px))


def method_tokens(type_scale: TypeScale = NORMAL) -> tuple[int, int]:
    """(output rows, source columns) of each `method_heatmaps` panel: rows PANEL_ROW_EM ems apart in its tallest
    panel, source tokens upright in half the page."""
    return (int(PANEL_MAX_PX / (PANEL_ROW_EM * type_scale.tick)),
            labels_that_fit(0.45 * (type_scale.page_px - 150), type_scale, UPRIGHT_EM))


def contrast_tokens(type_scale: TypeScale = NORMAL) -> int:
    """Source tokens under `contrastive_source_bars` (slanted, in half the page)."""
    return labels_that_fit(type_scale.page_px / 2 - 80, type_scale, SLANTED_EM)


def patch_tokens(type_scale: TypeScale = NORMAL) -> int:
    """Tokens across `patching_heatmap` (slanted, the page's width less layer labels and colour bar)."""
    return labels_that_fit(type_scale.page_px - LABELS_AND_BAR_PX, type_scale, SLANTED_EM)


def _text_px(text: str, size: float = 16) -> float:
    """About how many pixels a one-line text takes at this font size (CJK characters are twice as wide)."""
    return sum(1.0 if wide(c) else 0.5 for c in text) * size


def _fit_title(title: str, px: float, size: float = 16) -> str:
    """An axis title broken into lines ('<br>') so that none is longer than px: first before its
    parenthesis ("decoder layer<br>(output read by the final layer)", "解码器层<br>（由最终输出层读出）"),
    then at spaces. A y title longer than its plot runs into the chart title above it."""
    if not title or _text_px(title, size) <= px:
        return title
    lines = []
    for part in _two_lines(title).split("<br>"):
        line = ""
        for word in part.split(" "):
            if line and _text_px(f"{line} {word}", size) > px:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "<br>".join(lines)


def logit_lens_heatmap(final_prob, top_tokens: list[list[str]], output_labels: list[str], look: Look,
                       title: str = "", final_rank=None) -> go.Figure:
    """Layers (rows, last on top) x output positions; colour: probability of the token the model finally
    predicts there, read from that layer; text: the layer's own top token, cut with "…" where it is longer
    than its cell at the scale's cell size (17 whole tokens ran into each other; none at all left the caption's
    "the token (text)" without its picture); hover has the whole token."""
    n_layers = len(top_tokens)
    layer_labels = [look.words("ui.layer_n", i=i) for i in range(n_layers)]
    x_title, y_title = look.words("attribution.lens.x"), look.words("attribution.lens.y")
    value_name = look.words("attribution.lens.value")
    hovertemplate = (f"%{{y}}, {look.words('attribution.hover.output')} %{{x}}<br>{look.words('attribution.hover.top')}: "
                     f"%{{customdata[1]}}<br>{value_name} %{{z:.3f}}<br>{look.words('attribution.hover.rank')} "
                     "%{customdata[0]:.0f}<extra></extra>")
    p = check_matrix(final_prob, n_layers, len(output_labels))
    if any(len(row) != len(output_labels) for row in top_tokens):
        raise ValueError(f"top_tokens must be {n_layers} rows of {len(output_labels)} tokens")
    cell_px = _lens_cell_px(len(output_labels), look.scale)
    text = [plotly_text([_cut_to(token, cell_px, look.scale.cell) for token in row]) for row in top_tokens]
    rank = np.zeros_like(p) if final_rank is None else check_matrix(final_rank, n_layers, len(output_labels))
    hover = np.empty(p.shape + (2,), dtype=object)                   # per cell: the final token's rank, the top token
    hover[..., 0] = rank
    hover[..., 1] = [plotly_text(row) for row in top_tokens]
    heatmap = go.Heatmap(
        z=p, x=plotly_text(output_labels), y=layer_labels, zmin=0, zmax=1, colorscale=ATTENTION_SCALE, text=text,
        texttemplate="%{text}", textfont=look.scale.font("cell"), customdata=hover, xgap=1, ygap=1,
        colorbar=colorbar(value_name, look.scale, 14),
        hovertemplate=hovertemplate)
    height = max(440, 200 + 70 * n_layers)
    label_px = max(_text_px(label, look.scale.tick) for label in plotly_text(output_labels)) * 0.71   # at -45°
    plot_px = height - 60 - label_px - 40                      # less the top margin, tick labels, x title
    return go.Figure(heatmap, layout=typeset(dict(
        xaxis=dict(TICKS, title=dict(text=x_title), tickangle=-45),
        yaxis=dict(TICKS, title=dict(text=_fit_title(y_title, plot_px, look.scale.text))),
        title=dict(text=title), height=height, margin=dict(l=10, r=10, t=60, b=10)), look.scale))


LENS_ROOM_PX = 260         # of the logit lens's width: its layer labels and colour bar


def _lens_cell_px(n_cols: int, type_scale: TypeScale) -> float:
    """A logit-lens cell's width: the page's less the layer labels and the colour bar, over the columns."""
    return (type_scale.page_px - LENS_ROOM_PX) / max(n_cols, 1)


LENS_PAD = 10       # px a cell's text keeps clear of its neighbour's (6 let a 40-word window's tokens run together)


def _cut_to(token: str, cell_px: float, size: float) -> str:
    """The token, or as much of it as fits cell_px at this size followed by "…"; "" where not two characters do
    ("▁…" says nothing; hover has the token)."""
    if _text_px(token, size) + LENS_PAD <= cell_px:
        return token
    for n in range(len(token) - 1, 1, -1):
        if _text_px(token[:n] + "…", size) + LENS_PAD <= cell_px:
            return token[:n] + "…"
    return ""


def method_heatmaps(maps: list, titles: list[str], output_labels: list[str], source_labels: list[str], look: Look,
                    title: str = "") -> go.Figure:
    """Each method's [T,S] map on one shared colour scale (0 to the largest share), at most two panels a
    row: four side by side were ~190 px wide each and their slanted source tokens ran into each other.
    Source tokens stand upright under every panel (plotly leaves some out when they would touch), output
    tokens on the left panels only; the y title is broken into lines that fit a panel's height."""
    if not maps or len(maps) != len(titles):
        raise ValueError(f"{len(maps)} maps but {len(titles)} titles")
    x_title, y_title = look.words("attribution.source.x"), look.words("attribution.lens.x")
    value_name, hover_output = look.words("attribution.source.value"), look.words("attribution.hover.output")
    hover_source, hover_share = look.words("attribution.hover.source"), look.words("attribution.hover.share")
    checked = [check_matrix(m, len(output_labels), len(source_labels)) for m in maps]
    zmax = max(float(np.nanmax(m)) for m in checked) or 1.0
    rows, cols = plotly_text(output_labels), plotly_text(source_labels)
    panel_titles = [_two_lines(text) for text in plotly_text(titles)]
    n_cols = min(len(maps), PANELS_PER_ROW)
    n_rows = math.ceil(len(maps) / n_cols)
    panel_px = max(260, min(PANEL_MAX_PX, PANEL_ROW_EM * look.scale.tick * len(rows)))
    label_px = max(_text_px(label, look.scale.tick) for label in cols) + 12  # upright source tokens under a panel
    title_px = int((3.4 if any("<br>" in text for text in panel_titles) else 2.2) * look.scale.text)
    titled_above = any(i + n_cols >= len(maps) for i in range(n_cols))   # e.g. of 3 panels the top right one
    gap_px = label_px + (35 if titled_above else 0) + title_px + 10  # tick labels, x title, next row's titles
    plot_px = n_rows * panel_px + (n_rows - 1) * gap_px
    specs = [[{} if r * n_cols + c < len(maps) else None for c in range(n_cols)] for r in range(n_rows)]
    layout = subplot_layout(panel_titles, rows=n_rows, cols=n_cols, shared_yaxes=True, specs=specs,
                            horizontal_spacing=0.05, vertical_spacing=round(gap_px / plot_px, 3) if n_rows > 1 else 0.1)
    traces = [go.Heatmap(z=m, x=cols, y=rows, zmin=0, zmax=zmax, colorscale=ATTENTION_SCALE, showscale=i == 0,
                         colorbar=colorbar(value_name, look.scale, 14, len=min(1.0, 400 / plot_px)),
                         **subplot_axes(i),
                         hovertemplate=f"{plotly_text([titles[i]])[0]}<br>{hover_output} %{{y}}<br>{hover_source} "
                                       f"%{{x}}<br>{hover_share} %{{z:.3f}}<extra></extra>")
              for i, m in enumerate(checked)]
    update_axes(layout, "x", **TICKS, tickangle=-90)
    update_axes(layout, "y", **TICKS, autorange="reversed")
    for i in range(len(maps)):
        if i + n_cols >= len(maps):                             # no panel below: the axis gets its title
            layout["xaxis" + axis_suffix(i)]["title"] = dict(text=x_title)
        if i % n_cols == 0:
            layout["yaxis" + axis_suffix(i)]["title"] = dict(text=_fit_title(y_title, panel_px - 20, look.scale.text))
    top = 50 + title_px if title else title_px + 10
    layout.update(title=dict(text=title), height=int(top + plot_px + label_px + 50),
                  margin=dict(l=10, r=10, t=top, b=10))
    return go.Figure(traces, layout=typeset(layout, look.scale))


def _two_lines(title: str) -> str:
    """A panel title breaks before its parenthesis ("rollout<br>(all layers)", "注意力展开<br>（所有层）"):
    side by side, four one-line titles run into each other."""
    for opening in (" (", "（"):
        head, found, tail = title.partition(opening)
        if found and head:
            return f"{head}<br>{found.strip()}{tail}"
    return title


def agreement_heatmap(names: list[str], matrix, look: Look, title: str = "") -> go.Figure:
    """Method x method Spearman ρ (mean over output rows) on -1..1, each cell labelled."""
    value_name, versus = look.words("attribution.agree.value"), look.words("attribution.hover.versus")
    m = check_matrix(matrix, len(names), len(names))
    labels = plotly_text(names)
    text = cell_numbers(m, look.words("heads.na"))
    heatmap = go.Heatmap(z=m, x=labels, y=labels, zmin=-1, zmax=1, colorscale=DIVERGING_SCALE, text=text,
                         texttemplate="%{text}", textfont=look.scale.font("cell"), xgap=2, ygap=2,
                         colorbar=colorbar(value_name, look.scale, 14),
                         hovertemplate=f"%{{y}} {versus} %{{x}}<br>ρ %{{text}}<extra></extra>")
    return go.Figure(heatmap, layout=typeset(dict(
        xaxis=dict(TICKS, tickangle=-30), yaxis=dict(TICKS, autorange="reversed"), title=dict(text=title),
        height=max(320, 160 + 60 * len(names)), margin=dict(l=10, r=10, t=60, b=10)), look.scale))


def _signed_bars(labels: list[str], values: np.ndarray, x_title: str, title: str, horizontal: bool,
                 type_scale: TypeScale = NORMAL) -> go.Figure:
    colors = [PUSH_COLOR if v >= 0 else PULL_COLOR for v in values]
    text = [f"{v:+.2f}" for v in values]
    low, high = min(float(np.nanmin(values)), 0.0), max(float(np.nanmax(values)), 0.0)
    pad = 0.3 * ((high - low) or 1.0)                 # room for the value labels outside the bars
    value_axis = dict(title=dict(text=x_title), zeroline=True, zerolinewidth=2, zerolinecolor="#444",
                      range=[low - (pad if low < 0 else 0), high + (pad if high > 0 or low == 0 else 0)])
    label_axis = dict(TICKS, autorange="reversed") if horizontal else dict(TICKS, tickangle=-45)
    bars = go.Bar(x=values if horizontal else labels, y=labels if horizontal else values, text=text,
                  orientation="h" if horizontal else "v", marker_color=colors, textposition="outside",
                  textfont=type_scale.font("cell"), constraintext="none",
                  cliponaxis=False, hovertemplate=("%{y}: %{x:.4f}" if horizontal else "%{x}: %{y:.4f}") +
                  "<extra></extra>")
    layout = dict(xaxis=value_axis if horizontal else label_axis, yaxis=label_axis if horizontal else value_axis,
                  title=dict(text=title), showlegend=False,
                  height=int(max(300, 120 + 1.9 * type_scale.tick * len(labels))) if horizontal else 420,
                  margin=dict(l=10, r=60, t=60, b=10))
    return go.Figure(bars, layout=typeset(layout, type_scale))


def contrastive_head_bars(head_labels: list[str], effects, look: Look, title: str = "",
                          top: int | None = 16) -> go.Figure:
    """Heads whose removal changes logit(chosen) - logit(alternative) most, largest |effect| first.
    Red (positive, as on the app's diverging scale): the head pushes toward the chosen token; blue: toward
    the alternative."""
    e = np.asarray(effects, dtype=float)
    if e.ndim != 1 or len(e) != len(head_labels) or not len(e):
        raise ValueError(f"{len(head_labels)} head labels but effects of shape {e.shape}")
    order = np.argsort(-np.abs(np.nan_to_num(e)), kind="stable")[: top or len(e)]
    return _signed_bars(plotly_text([head_labels[i] for i in order]), e[order],
                        look.words("attribution.contrast.heads_x"), title, horizontal=True, type_scale=look.scale)


def contrastive_source_bars(source_labels: list[str], scores, look: Look, title: str = "") -> go.Figure:
    """Each source token's contribution to logit(chosen) - logit(alternative), in sentence order."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or len(s) != len(source_labels) or not len(s):
        raise ValueError(f"{len(source_labels)} source labels but scores of shape {s.shape}")
    return _signed_bars(plotly_text(source_labels), s, look.words("attribution.contrast.source_y"), title,
                        horizontal=False, type_scale=look.scale)


def patching_heatmap(values, row_labels: list[str], col_labels: list[str], labels: Labels, look: Look) -> go.Figure:
    """Restored share of the logit difference per patched site, diverging and symmetric about 0
    (1 = patching this alone restores the clean answer, 0 = no effect, < 0 = moves further away)."""
    title, x_title, y_title, value_name = labels
    m = check_matrix(values, len(row_labels), len(col_labels))
    zmax = max(1.0, symmetric_range(np.nan_to_num(m)))
    text = cell_numbers(m, look.words("heads.na"))
    heatmap = go.Heatmap(
        z=m, x=plotly_text(col_labels), y=plotly_text(row_labels), zmin=-zmax, zmax=zmax, zmid=0,
        colorscale=DIVERGING_SCALE, text=text,
        texttemplate="%{text}" if look.scale.numbers_fit((look.scale.page_px - 250) / m.shape[1], 46, 5) else None,
        textfont=look.scale.font("cell"), xgap=1, ygap=1, colorbar=colorbar(value_name, look.scale, 14),
        hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{text}}<extra></extra>")
    return go.Figure(heatmap, layout=typeset(dict(
        xaxis=dict(TICKS, title=dict(text=x_title), tickangle=-45),
        yaxis=dict(TICKS, title=dict(text=y_title), autorange="reversed"),
        title=dict(text=title), height=max(280, 170 + 48 * len(row_labels)),
        margin=dict(l=10, r=10, t=60, b=10)), look.scale))
