"""Figures for the step-through of one attention head: matrices with the query row marked, the mask,
and the softmax of one query with and without the 1/sqrt(d_k) scaling. numpy in, plotly out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import (LINE_COLORS, NORMAL, Labels, Look, TypeScale, Words, check_matrix, frame_row,
                               legend_above, mask_legend, mask_overlay, plotly_text, signed_heatmap_spec, subplot_axes,
                               subplot_layout, symmetric_range, trusted_figure, typeset, update_axes)
from model.analysis.attention_math import entropy_bits
from viz.figures.attention import SLANTED_EM, labels_that_fit, slanted_labels_fit

MIN_EM_PER_LEVEL_LABEL = 3.0    # "d128" with room on both sides, in ems of the tick size
LABEL_ROOM = 200                # px of a figure's width left of and right of its plot: labels, colour bar


def upright_when_crowded(layout: dict, n_keys: int, width_px: float, type_scale: TypeScale = NORMAL) -> dict:
    """Key labels upright where slanted ones would touch in a map width_px wide (19 keys in the step-through's
    presenter column ran into each other at 45°)."""
    if not slanted_labels_fit(width_px, n_keys, type_scale):
        layout["xaxis"]["tickangle"] = -90
    return layout


def level_ticks(labels: list[str], plot_px: float, min_px: float | None = None,
                type_scale: TypeScale = NORMAL) -> dict:
    """x-axis entries for many columns (d0 … d255): every k-th label, level, k a power of two chosen so
    that each label has min_px (default: 3 ems of the tick size) of the plot's width. Slanted labels every
    few pixels ran into each other."""
    min_px = min_px or MIN_EM_PER_LEVEL_LABEL * type_scale.tick
    step = 1
    while step < len(labels) and plot_px / max(len(labels), 1) * step < min_px:
        step *= 2
    shown = list(labels[::step])
    return dict(tickmode="array", tickvals=shown, ticktext=shown, tickangle=0)


def step_heatmap(m: np.ndarray, row_labels: list[str], col_labels: list[str], labels: Labels, look: Look,
                 highlight: int | None = None, show_values: bool | None = None, plot_px: float | None = None,
                 width_px: float | None = None) -> go.Figure:
    """A signed matrix (X, Q, K, V, scores, outputs) on the diverging scale, titled by `labels` (the look's words
    are not read: the caller composed them; its scale sizes the text), one row framed.
    plot_px: about how wide the plot will be drawn; given for dimension axes, whose labels are thinned.
    Numbers show in the cells when they fit at the scale's cell size (show_values=None) in a figure about
    width_px wide (default: three fifths of the scale's page, the step-through's picture column)."""
    return trusted_figure(step_spec(m, row_labels, col_labels, labels, look, highlight, show_values, plot_px, width_px))


def step_spec(m: np.ndarray, row_labels: list[str], col_labels: list[str], labels: Labels, look: Look,
              highlight: int | None = None, show_values: bool | None = None, plot_px: float | None = None,
              width_px: float | None = None) -> dict:
    """step_heatmap's figure as a spec (plain dicts: built once, unchecked, by its caller)."""
    spec = signed_heatmap_spec(m, row_labels, col_labels, labels, type_scale=look.scale)
    heatmap, layout = spec["data"][0], spec["layout"]
    if show_values is None:
        plot_w = plot_px or (width_px or 0.6 * look.scale.page_px) - LABEL_ROOM
        row_h = (layout["height"] - 200) / max(len(row_labels), 1)
        show_values = look.scale.numbers_fit(plot_w / max(len(col_labels), 1), row_h, chars=5)
    if show_values:
        heatmap["texttemplate"] = "%{z:.2f}"
    if plot_px:
        layout["xaxis"].update(level_ticks(plotly_text(col_labels), plot_px, type_scale=look.scale))
    else:
        upright_when_crowded(layout, len(col_labels), width_px or 0.6 * look.scale.page_px, look.scale)
    frame_row(layout, highlight, len(row_labels))
    return spec


def masked_scores_figure(masked: np.ndarray, row_labels: list[str], col_labels: list[str], title: str,
                         look: Look, highlight: int | None = None,
                         width_px: float | None = None) -> go.Figure:
    """masked_scores_spec's figure."""
    return trusted_figure(masked_scores_spec(masked, row_labels, col_labels, title, look, highlight, width_px))


def masked_scores_spec(masked: np.ndarray, row_labels: list[str], col_labels: list[str], title: str,
                       look: Look, highlight: int | None = None, width_px: float | None = None) -> dict:
    """Scaled scores after the mask: -inf cells grey (the masked look of every page, named in the legend),
    marked "−∞" where the cells hold a number; the rest diverging, with numbers when they fit. A figure's spec."""
    masked = check_matrix(masked, len(row_labels), len(col_labels))
    hidden = np.isneginf(masked)
    shown = np.where(hidden, np.nan, masked)
    if np.all(hidden):
        raise ValueError("every score is masked")
    labels = Labels(title, look.words("step.axis.key"), look.words("step.axis.query"), look.words("step.axis.score"))
    spec = step_spec(shown, row_labels, col_labels, labels, look, highlight=highlight, width_px=width_px)
    heatmap, layout = spec["data"][0], spec["layout"]
    heatmap.update(zmin=-symmetric_range(shown[~hidden]), zmax=symmetric_range(shown[~hidden]), hoverongaps=False)
    if hidden.any():
        numbers = "texttemplate" in heatmap
        spec["data"] += [mask_overlay(hidden, heatmap["x"], heatmap["y"], text=np.where(hidden, "−∞", ""),
                                      texttemplate="%{text}" if numbers else None, textfont=look.scale.font("cell")),
                         mask_legend(look.words("fig.masked"))]
        legend_above(layout)
        layout["legend"].update(yref="paper", y=1.0, yanchor="bottom")   # under the (long) title
        layout["margin"]["t"] = int(60 + 1.6 * look.scale.text)
        layout["height"] += int(1.6 * look.scale.text)
    return spec       # unchecked, as step_heatmap's (tests/test_figures_step.py checks it the long way)


def _bar_caption(weights: np.ndarray, words: Words) -> str:
    return words("step.why.caption", entropy=float(entropy_bits(weights)), top=float(weights.max()))


def scaling_bars(unscaled: np.ndarray, scaled: np.ndarray, key_labels: list[str], d_k: int, look: Look,
                 title: str = "", masked: np.ndarray | None = None,
                 shown: slice = slice(None)) -> go.Figure:
    """scaling_bars_spec's figure."""
    return trusted_figure(scaling_bars_spec(unscaled, scaled, key_labels, d_k, look, title, masked, shown))


def scaling_bars_spec(unscaled: np.ndarray, scaled: np.ndarray, key_labels: list[str], d_k: int, look: Look,
                      title: str = "", masked: np.ndarray | None = None, shown: slice = slice(None)) -> dict:
    """The same query's attention weights, softmax(q·k) beside softmax(q·k/√d_k), on one 0-1 axis.
    masked: optional bool per key, True where the mask hid it (labelled "masked" instead of 0.00).
    shown: the keys drawn (a long sentence's window); the captions' entropy and peak are the whole row's. Key
    labels stand upright where slanted ones would touch in a panel half the scale's page wide. A figure's spec."""
    without, with_, masked_label = look.words("step.why.without"), look.words("step.why.with"), look.words("step.why.masked")
    x_title, y_title = look.words("step.axis.key"), look.words("step.axis.weight")
    unscaled, scaled = np.asarray(unscaled, dtype=float), np.asarray(scaled, dtype=float)
    if unscaled.shape != (len(key_labels),) or scaled.shape != (len(key_labels),):
        raise ValueError(f"weights {unscaled.shape} / {scaled.shape} do not match {len(key_labels)} key labels")
    masked = np.zeros(len(key_labels), dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    if masked.shape != (len(key_labels),):
        raise ValueError(f"mask of shape {masked.shape} does not match {len(key_labels)} key labels")
    for name, w in (("unscaled", unscaled), ("scaled", scaled)):
        if np.any(w < -1e-9) or abs(w.sum() - 1) > 1e-3:
            raise ValueError(f"{name} weights must be a distribution (non-negative, summing to 1)")
    stacked = look.scale.narrow
    layout = subplot_layout([look.words("step.why.panel", name=without, formula="softmax(q·k)")
                             + f"<br>{_bar_caption(unscaled, look.words)}",
                             look.words("step.why.panel", name=with_, formula=f"softmax(q·k / √{d_k})")
                             + f"<br>{_bar_caption(scaled, look.words)}"],
                            **(dict(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12) if stacked else
                               dict(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06)))
    keys = plotly_text(key_labels)[shown]
    unscaled, scaled, masked = unscaled[shown], scaled[shown], masked[shown]
    # a panel's plot: half the figure less the y labels; on a phone the panels one above the other, each the
    # column's width (side by side, 130 px for 12 keys: plotly left out every second key)
    panel_px = look.scale.page_px - 60 if stacked else 0.47 * look.scale.page_px - 30
    upright = labels_that_fit(panel_px, look.scale, SLANTED_EM) < len(keys)
    # a number over each bar while it fits the bar's slot ("0.42": three digits and a thin dot); hover keeps them
    numbered = look.scale.numbers_fit(panel_px / max(len(keys), 1), chars=3)
    bars = [dict(type="bar", x=keys, y=w, marker=dict(color=color), textposition="outside", cliponaxis=False,
                 showlegend=False, **subplot_axes(i), textfont=look.scale.font("cell"), constraintext="none",
                 hovertemplate=f"{x_title} %{{x}}<br>{y_title} %{{y:.4f}}<extra></extra>",
                 **({"text": [masked_label if m else f"{v:.2f}" for v, m in zip(w, masked)]} if numbered else {}))
            for i, (w, color) in enumerate(((unscaled, LINE_COLORS[3]), (scaled, LINE_COLORS[0])))]
    update_axes(layout, "x", type="category", tickangle=-90 if upright else -45, automargin=True)
    for name in ("xaxis2",) if stacked else ("xaxis", "xaxis2"):       # stacked: the keys once, under both
        layout[name]["title"] = dict(text=x_title)
    update_axes(layout, "y", range=[0, 1.12])
    for name in ("yaxis", "yaxis2") if stacked else ("yaxis",):
        layout[name]["title"] = dict(text=y_title)
    # upright labels stand taller than slanted ones (0.71 of their length): the plot keeps its height
    taller = 0.29 * max((look.scale.text_px(k, "tick") for k in key_labels[shown]), default=0) if upright else 0
    layout.update(title=dict(text=title),
                  height=int(460 + 2 * (look.scale.text - 16) + 2 * (look.scale.tick - 14) + taller
                             + (300 if stacked else 0)),
                  margin=dict(l=10, r=10, t=int(110 + 3 * (look.scale.text - 16)), b=10), bargap=0.25)
    return {"data": bars, "layout": typeset(layout, look.scale)}     # unchecked (tests/test_figures_step.py)
