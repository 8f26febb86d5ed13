"""The feed-forward network, label smoothing and dropout on one sentence. The numbers
come from model/analysis/regularize.py; builders take numpy, labels and a look (the reader's words, the type scale)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import (ATTENTION_SCALE, LINE_COLORS, NORMAL, Look, TypeScale, check_matrix, colorbar,
                               legend_above, legend_under_title, mask_legend, mask_overlay, masked_z, plotly_text,
                               subplot_axes, subplot_layout, token_axes, typeset, update_axes)

TOKEN_TICKS = dict(type="category", tickangle=-45, automargin=True)


MAX_HEIGHT = 760        # a token-by-row chart is never taller than about a screen


def _row_px(type_scale: TypeScale) -> float:
    return max(26, 1.8 * type_scale.tick)


def _rows_height(n_rows: int, type_scale: TypeScale, top: int = 90) -> int:
    """Room for every row's token label at the tick size (a category axis skips labels it cannot fit)."""
    return int(max(300, min(MAX_HEIGHT, top + 110 + _row_px(type_scale) * n_rows)))


def rows_that_fit(type_scale: TypeScale = NORMAL, top: int = 90) -> int:
    """How many token rows a chart of _rows_height labels, every one legible: a long sentence's window."""
    return int((MAX_HEIGHT - top - 110) / _row_px(type_scale))


def ffn_units_figure(hidden, token_labels: list[str], units, look: Look, title: str = "",
                     unit_prefix: str = "#") -> go.Figure:
    """Tokens × chosen hidden units: max(0, x W1 + b1) of each (0 = silent, white). hidden [T, K] holds
    the chosen units' columns; units their numbers. Numbers in the cells only where they fit."""
    units = [int(u) for u in units]
    x_title, y_title, value_name = look.words("ffn.units.x"), look.words("ffn.units.y"), look.words("ffn.units.value")
    m = check_matrix(hidden, len(token_labels), len(units))
    x = [f"{unit_prefix}{u}" for u in units]
    y = plotly_text(token_labels)
    cell_w = (look.scale.page_px - 200) / max(1, len(units))
    height = _rows_height(len(y), look.scale)
    # numbers where a cell holds one at the cell size, across and down (hover keeps every number)
    show = look.scale.numbers_fit(cell_w, (height - 200) / max(1, len(y)), chars=3)
    heat = go.Heatmap(z=m, x=x, y=y, zmin=0, zmax=float(m.max()) or 1.0, colorscale=ATTENTION_SCALE,
                      colorbar=colorbar(value_name, look.scale), texttemplate="%{z:.1f}" if show else None,
                      textfont=look.scale.font("cell"),
                      hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.3f}}<extra></extra>")
    layout = dict(token_axes(x_title, y_title, look.scale), title=dict(text=title),
                  height=height, margin=dict(l=10, r=10, t=60, b=10))
    layout["xaxis"].update(tickmode="array", tickvals=x, tickangle=-90)   # every unit named (plotly skipped half)
    return go.Figure(heat, layout=typeset(layout, look.scale))


def ffn_add_figure(token_labels: list[str], resid_norm, out_norm, cosine, look: Look, title: str = "") -> go.Figure:
    """Per token: the residual stream's length before the add beside the length of what the FFN adds,
    with their cosine on hover (does the FFN push along the stream, across it, or against it)."""
    resid_name, out_name = look.words("ffn.add.resid"), look.words("ffn.add.out")
    y_title, cosine_name = look.words("ffn.add.y"), look.words("ffn.add.cosine")
    n = len(token_labels)
    vals = [np.asarray(v, dtype=float).reshape(-1) for v in (resid_norm, out_norm, cosine)]
    if any(v.size != n for v in vals):
        raise ValueError(f"each series needs one value per token ({n})")
    labels = plotly_text(token_labels)
    hover = f"%{{x}}<br>%{{y:.2f}}<br>{cosine_name} %{{customdata:.2f}}<extra>%{{fullData.name}}</extra>"
    bars = [go.Bar(x=labels, y=vals[0], name=resid_name, marker_color=LINE_COLORS[7], customdata=vals[2],
                   hovertemplate=hover),
            go.Bar(x=labels, y=vals[1], name=out_name, marker_color=LINE_COLORS[1], customdata=vals[2],
                   hovertemplate=hover)]
    layout = dict(title=dict(text=title), barmode="group", height=380, xaxis=dict(TOKEN_TICKS),
                  yaxis=dict(title=dict(text=y_title), rangemode="tozero"), margin=dict(l=10, r=10, t=90, b=10))
    # the legend under the title, not across from it: a title drawn centred (the page's browser-side view draws
    # it with plotly's own template) ran over a legend at the top right
    return go.Figure(bars, layout=typeset(legend_under_title(layout, [resid_name, out_name], look.scale), look.scale))


def bar_width_px(n_groups: int, type_scale: TypeScale = NORMAL, bars: int = 2) -> float:
    """About how wide one bar of a group of `bars` is, n_groups groups across the scale's page (plotly's
    default gap: a fifth of each group's room)."""
    return (type_scale.page_px - 120) / max(n_groups, 1) * 0.8 / bars


def smoothing_figure(candidate_labels: list[str], model_p, target_q, look: Look,
                     rest: tuple[float, float] | None = None, rest_label: str = "", title: str = "") -> go.Figure:
    """For one output position: the model's probability of the gold token and its strongest rivals beside
    the smoothed target's; rest = (p, q) summed over every other token of the vocabulary (a last bar, named
    rest_label)."""
    model_name, target_name, y_title = look.words("ffn.smooth.model"), look.words("ffn.smooth.target"), look.words("ffn.smooth.y")
    labels = plotly_text(candidate_labels)
    p, q = (np.asarray(v, dtype=float).reshape(-1) for v in (model_p, target_q))
    if p.size != len(labels) or q.size != len(labels):
        raise ValueError(f"model_p and target_q need one value per candidate ({len(labels)})")
    if rest is not None:
        labels, p, q = labels + [rest_label], np.append(p, rest[0]), np.append(q, rest[1])
    # each bar's value above it, never shrunk below the scale's cell size; upright where the two bars of a
    # candidate are narrower than their numbers ('0.00243' and '0.0000125' run into one another)
    numbers = [[np.format_float_positional(v, precision=3, unique=False, fractional=False, trim="-") for v in vals]
               for vals in (p, q)]
    widest = max(look.scale.text_px(n, "cell") for vals in numbers for n in vals) + 4
    upright = widest > bar_width_px(len(labels), look.scale)
    text = dict(texttemplate="%{text}", textposition="outside", textfont=look.scale.font("cell"), cliponaxis=False,
                constraintext="none", textangle=-90 if upright else 0)
    bars = [go.Bar(x=labels, y=p, name=model_name, marker_color=LINE_COLORS[0], text=numbers[0], **text,
                   hovertemplate="%{x}<br>%{y:.5f}<extra>%{fullData.name}</extra>"),
            go.Bar(x=labels, y=q, name=target_name, marker_color=LINE_COLORS[1], text=numbers[1], **text,
                   hovertemplate="%{x}<br>%{y:.5f}<extra>%{fullData.name}</extra>")]
    layout = dict(title=dict(text=title), barmode="group", height=420,   # a few candidates: level labels
                  xaxis=dict(type="category", tickangle=0, automargin=True),
                  yaxis=dict(title=dict(text=y_title), tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1]),  # no p > 1
                  margin=dict(l=10, r=10, t=90, b=10))
    # the title at the top and the legend under it with room for its lines (the legend at the figure's top right
    # sits above the title, with a gap under the title: tour step 12, the Feed-forward page's smoothing view)
    layout = legend_under_title(layout, [model_name, target_name], look.scale)
    # room above every bar for its number, and no more (a fixed headroom left an empty band under the legend)
    plot_h = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"] - 1.5 * look.scale.tick
    layout["yaxis"]["range"] = [0, number_headroom(np.concatenate([p, q]), sum(numbers, []), upright, plot_h,
                                                   look.scale)]
    return go.Figure(bars, layout=typeset(layout, look.scale))


def number_headroom(values, numbers: list[str], upright: bool, plot_h: float, type_scale: TypeScale = NORMAL,
                    least: float = 1.05) -> float:
    """The top of a probability axis (at least `least`, so its 1 shows) with room above each bar for its number
    (`numbers`, upright or level) in a plot plot_h px high: a bar of v under a number n px tall needs v / (1 - n/h)."""
    def tall(number: str) -> float:
        return (type_scale.text_px(number, "cell") if upright else 1.3 * type_scale.cell) + 8
    return max([least] + [float(v) / (1 - min(0.8, tall(n) / plot_h)) for v, n in zip(values, numbers)])


def loss_figure(token_labels: list[str], nll, smoothed, eps: float, look: Look, floor=None,
                title: str = "") -> go.Figure:
    """Per output token: cross-entropy against the one-hot target and against the target smoothed by eps (and
    the smoothed loss's floor, the entropy of q, as a line)."""
    plain_name, smooth_name = look.words("ffn.loss.plain"), look.words("ffn.loss.smooth", eps=eps)
    floor_name, y_title = look.words("ffn.loss.floor"), look.words("ffn.loss.y")
    labels = plotly_text(token_labels)
    series = [np.asarray(v, dtype=float).reshape(-1) for v in (nll, smoothed)]
    if any(v.size != len(labels) for v in series):
        raise ValueError(f"each loss needs one value per token ({len(labels)})")
    bars = [go.Bar(x=labels, y=series[0], name=plain_name, marker_color=LINE_COLORS[0],
                   hovertemplate="%{x}<br>%{y:.4f}<extra>%{fullData.name}</extra>"),
            go.Bar(x=labels, y=series[1], name=smooth_name, marker_color=LINE_COLORS[1],
                   hovertemplate="%{x}<br>%{y:.4f}<extra>%{fullData.name}</extra>")]
    if floor is not None:
        bars.append(go.Scatter(x=labels, y=np.asarray(floor, dtype=float).reshape(-1), name=floor_name,
                               mode="lines", line=dict(color=LINE_COLORS[3], dash="dash"),
                               hovertemplate="%{x}<br>%{y:.4f}<extra>%{fullData.name}</extra>"))
    layout = dict(title=dict(text=title), barmode="group", height=400, xaxis=dict(TOKEN_TICKS),
                  yaxis=dict(title=dict(text=y_title), rangemode="tozero"), margin=dict(l=10, r=10, t=60, b=10))
    # the legend under the title (at the title's height, its second line would cover the title)
    layout = legend_under_title(layout, [bar.name for bar in bars], look.scale)
    return go.Figure(bars, layout=typeset(layout, look.scale))


def dropout_figure(panels: list, panel_titles: list[str], row_labels: list[str], col_labels: list[str],
                   look: Look, mask=None, title: str = "") -> go.Figure:
    """Attention weights side by side: dropout off, then samples with dropout on (dropped cells white:
    0). One colour range for all (kept weights are scaled up by 1/(1-p), so it may pass 1). mask [T, S]:
    cells no dropout can touch (future positions), drawn masked in every panel."""
    if not panels or len(panels) != len(panel_titles):
        raise ValueError("give one title per panel, and at least one panel")
    mats = [check_matrix(m, len(row_labels), len(col_labels)) for m in panels]
    x_title, y_title, value_name = look.words("ffn.drop.x"), look.words("ffn.drop.y"), look.words("ffn.drop.value")
    x, y = plotly_text(col_labels), plotly_text(row_labels)
    zmax = float(max(np.nanmax(m) for m in mats)) or 1.0
    layout = subplot_layout(tuple(panel_titles), rows=1, cols=len(mats), horizontal_spacing=0.03, shared_yaxes=True)
    traces = []
    panel_px = (look.scale.page_px - 160) / len(mats)
    show = look.scale.numbers_fit(panel_px / max(1, len(x)), None, chars=3)
    for i, m in enumerate(mats):
        traces.append(go.Heatmap(z=masked_z(m, mask), x=x, y=y, zmin=0, zmax=zmax, colorscale=ATTENTION_SCALE,
                                 showscale=i == len(mats) - 1, colorbar=colorbar(value_name, look.scale),
                                 texttemplate="%{z:.2f}" if show else None, textfont=look.scale.font("cell"),
                                 hoverongaps=False,
                                 hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.3f}}"
                                               "<extra></extra>", **subplot_axes(i)))
        if mask is not None and np.any(mask):
            traces.append(mask_overlay(mask, x=x, y=y, **subplot_axes(i)))
    if mask is not None and np.any(mask):
        traces.append(mask_legend(look.words("fig.masked")))
        legend_above(layout)
    update_axes(layout, "x", type="category", tickangle=-45, automargin=True)
    update_axes(layout, "y", type="category", autorange="reversed", automargin=True)
    layout["xaxis"]["title"] = dict(text=x_title)
    layout["yaxis"]["title"] = dict(text=y_title)
    layout.update(title=dict(text=title), height=_rows_height(len(y), look.scale, top=110),
                  margin=dict(l=10, r=10, t=100, b=10))
    return go.Figure(traces, layout=typeset(layout, look.scale))
