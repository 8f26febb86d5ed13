"""LayerNorm and the residual stream: statistics before/after, gain and bias, LN vs BN, norms per sublayer.

The statistics (LayerNorm, BatchNorm, the residual stream's norms) are in model/analysis/norms.py,
the one place LayerNorm is computed in numpy. Figure builders take numpy, labels and a look (the reader's words and the type scale).
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from model.analysis.norms import batch_norm_stats, check_activations, layer_norm_stats
from viz.figures.attention import SLANTED_EM, UPRIGHT_EM, labels_that_fit
from viz.figures.style import (LINE_COLORS, NORMAL, Look, TypeScale, axis_suffix, check_matrix, hline,
                               legend_under_title, plotly_text, subplot_axes, subplot_layout, typeset, wrapped)

BEFORE, AFTER = LINE_COLORS[1], LINE_COLORS[0]
TOKEN_TICKS = dict(type="category", tickangle=-45, automargin=True)   # sizes: the figure's type scale (typeset)


# -- figures ----------------------------------------------------------------------------------------
def _vector(v, n: int, name: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.shape != (n,):
        raise ValueError(f"{name} has shape {v.shape}, expected ({n},)")
    return v


def zero_aligned_ranges(panels, pad: float = 0.05) -> list[list[float]]:
    """y ranges for side-by-side bar panels (each a few arrays of values) with 0 at the same height in all:
    the same share of every panel below 0 (the largest any panel needs), each panel's bars inside its range
    with `pad` of its span to spare."""
    extents = []
    for values in panels:
        v = np.concatenate([np.asarray(a, dtype=float).ravel() for a in values])
        v = v[np.isfinite(v)]
        extents.append((max(0.0, -float(v.min())) if v.size else 0.0, max(0.0, float(v.max())) if v.size else 0.0))
    below = max((neg / (neg + pos) for neg, pos in extents if neg + pos > 0), default=0.0)
    ranges = []
    for neg, pos in extents:
        span = max(neg / below if below > 0 else 0.0, pos / (1 - below) if below < 1 else 0.0) * (1 + pad) or 1.0
        ranges.append([-below * span, (1 - below) * span])
    return ranges


STATS_PANEL, LN_PANEL = 0.46, 0.35 * 0.92   # of the plot's width: a statistics panel; ln_vs_bn's LayerNorm panel


def tokens_that_fit(type_scale: TypeScale = NORMAL) -> int:
    """Tokens the page's token charts label legibly: `token_stats_figure`'s two panels (slanted labels) and
    `ln_vs_bn_figure`'s LayerNorm panel (upright where slanted ones would touch). A longer sentence is shown
    through a window of this many."""
    plot_px = type_scale.page_px - 80
    stats, ln = (1.0, 1.0) if type_scale.narrow else (STATS_PANEL, LN_PANEL)     # a phone: the panels stacked
    return min(labels_that_fit(stats * plot_px, type_scale, SLANTED_EM),
               labels_that_fit(ln * plot_px, type_scale, UPRIGHT_EM))


def token_stats_figure(token_labels: list[str], before: tuple, after: tuple, look: Look, title: str = "") -> go.Figure:
    """Per-token mean (left) and std (right): the norm's input against its normalized output. On a phone
    (type_scale.narrow) the std under the mean, both the column's width, the tokens labelled once under both."""
    panel_titles = (look.words("layernorm.stats.mean_panel"), look.words("layernorm.stats.std_panel"))
    before_name, after_name = look.words("layernorm.stats.before_name"), look.words("layernorm.stats.after_name")
    hover_before, hover_after = look.words("layernorm.before"), look.words("layernorm.after")
    n = len(token_labels)
    (mean_b, std_b), (mean_a, std_a) = [[_vector(v, n, "statistic") for v in pair] for pair in (before, after)]
    token_labels = plotly_text(token_labels)
    stacked = look.scale.narrow
    layout = subplot_layout(tuple(panel_titles), **(dict(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.14)
                                                    if stacked else dict(rows=1, cols=2, horizontal_spacing=0.08)))
    bars = []
    for cell, (b, a) in enumerate(((mean_b, mean_a), (std_b, std_a))):
        axes = dict(subplot_axes(cell), showlegend=cell == 0)
        bars += [go.Bar(x=token_labels, y=b, name=before_name, marker_color=BEFORE, legendgroup="b",
                        hovertemplate=f"%{{x}}<br>{hover_before} %{{y:.4f}}<extra></extra>", **axes),
                 go.Bar(x=token_labels, y=a, name=after_name, marker_color=AFTER, legendgroup="a",
                        hovertemplate=f"%{{x}}<br>{hover_after} %{{y:.4f}}<extra></extra>", **axes)]
        layout["xaxis" + axis_suffix(cell)].update(TOKEN_TICKS)
    # one baseline: the panels share their height, and each range puts 0 at the same height (plotly's own ranges
    # put the mean panel's 0 about 13 px above the std panel's, for a normalized mean of -1e-9)
    for cell, rng in enumerate(zero_aligned_ranges([(mean_b, mean_a), (std_b, std_a)])):
        layout["yaxis" + axis_suffix(cell)].update(range=rng, autorange=False)
    layout.update(title=dict(text=title), barmode="group", height=640 if stacked else 440,
                  margin=dict(l=10, r=10, t=60, b=10))
    # The legend under the title and above the panel titles (a legend on the title's line, right-aligned, ran
    # into a long title at 1280x720): the top margin holds title, legend and panel titles; the legend is placed
    # in the figure's px (container), so the tick labels' automargin cannot push it onto the panel titles.
    legend_under_title(layout, [before_name, after_name], look.scale)
    panel_px = int(1.6 * look.scale.text)
    layout["margin"]["t"] += panel_px
    layout["height"] += panel_px
    above_panels = layout["margin"]["t"] - panel_px           # px from the figure's top to the legend's bottom
    layout["legend"].update(yref="container", yanchor="bottom", y=1 - above_panels / layout["height"])
    return go.Figure(bars, layout=typeset(layout, look.scale))


def tick_standoff(type_scale: TypeScale) -> int:
    """Pixels the x tick labels stand below their axis so that none meets the y tick label centred on the axis's
    line (a count's "0"): half the height of a tick label's box (1.15 em), rounded up; plotly's own 2 px between
    the axis and its labels keeps the two rows that far apart."""
    return math.ceil(type_scale.tick * 1.15 / 2)


def feature_histogram(series: dict[str, np.ndarray], look: Look, title: str = "", bins: int = 40,
                      width_px: float | None = None) -> go.Figure:
    """Overlaid histograms of one token's features at several stages (input, normalized, output), for a figure
    width_px wide (default: half the scale's page, where the legend's lines are planned)."""
    x_title, y_title = look.words("layernorm.token.x"), look.words("layernorm.token.y")
    value, features = look.words("layernorm.value"), look.words("layernorm.features")
    if not series:
        raise ValueError("give at least one vector")
    values = {name: np.asarray(v, dtype=float).ravel() for name, v in series.items()}
    lo = min(float(v.min()) for v in values.values())
    hi = max(float(v.max()) for v in values.values())
    size = (hi - lo) / bins or 1.0
    bars = [go.Histogram(x=v, name=name, opacity=0.55, marker_color=LINE_COLORS[n % len(LINE_COLORS)],
                         xbins=dict(start=lo, end=hi + size, size=size),
                         hovertemplate=f"{name}<br>{value} %{{x}}<br>%{{y}} {features}<extra></extra>")
            for n, (name, v) in enumerate(values.items())]
    # the counts start at 0 on the x axis's line: the y tick "0" is centred on it, its lower half in the row of the
    # x tick labels, and the x range is the bins' (the data's ends), so a value tick near the low end (en-es
    # layers 1 and 2: −6 a few px in) was drawn over the "0". The x tick labels stand off by half a tick line.
    layout = dict(xaxis=dict(title=dict(text=x_title), ticklabelstandoff=tick_standoff(look.scale)),
                  yaxis=dict(title=dict(text=y_title)),
                  title=dict(text=title), barmode="overlay", height=420, margin=dict(l=10, r=10, t=60, b=10))
    legend_under_title(layout, list(values), look.scale, width_px or look.scale.page_px / 2)
    return go.Figure(bars, layout=typeset(layout, look.scale))


def gain_bias_figure(gain, bias, look: Look, title: str = "") -> go.Figure:
    """The learned per-feature gain γ (top, 1 = unchanged) and bias β (bottom, 0 = unchanged)."""
    panel_titles = (look.words("layernorm.gain.panel"), look.words("layernorm.bias.panel"))
    x_title, gain_name, bias_name = look.words("layernorm.dimension"), look.words("layernorm.gain"), look.words("layernorm.bias")
    gain = np.asarray(gain, dtype=float).ravel()
    bias = _vector(bias, gain.size, "bias")
    dims = np.arange(gain.size)
    layout = subplot_layout(tuple(panel_titles), rows=2, cols=1,
                            shared_xaxes=True, vertical_spacing=0.1)
    bars = [go.Bar(x=dims, y=gain, marker_color=LINE_COLORS[2], name=gain_name, xaxis="x", yaxis="y",
                   hovertemplate=f"{x_title} %{{x}}<br>{gain_name} %{{y:.4f}}<extra></extra>"),
            go.Bar(x=dims, y=bias, marker_color=LINE_COLORS[4], name=bias_name, xaxis="x2", yaxis="y2",
                   hovertemplate=f"{x_title} %{{x}}<br>{bias_name} %{{y:.4f}}<extra></extra>")]
    layout["xaxis2"]["title"] = dict(text=x_title)
    # drawn in half the page: its lines broken to that width (plotly cuts a line at the figure's edge)
    title = "<br>".join(line for part in title.split("<br>")
                        for line in wrapped(part, look.scale, look.scale.page_px / 2 - 100, "title"))
    # the title's lines at the top, the upper panel's title under them (a two-line title at presenter sizes ran
    # into the panel title with a fixed 90 px margin)
    top = int(12 + (title.count("<br>") + 1) * 1.3 * look.scale.title + 1.6 * look.scale.text) if title else 60
    layout.update(shapes=[hline(1, dict(color="#444", dash="dot"))],   # gain = 1
                  title=dict(text=title, yref="container", y=1, yanchor="top", pad=dict(t=8)), showlegend=False,
                  height=430 + top, margin=dict(l=10, r=10, t=top, b=10))
    return go.Figure(bars, layout=typeset(layout, look.scale))


def ln_vs_bn_figure(x, token_labels: list[str], look: Look, title: str = "", shown: slice = slice(None)) -> go.Figure:
    """The same activations [T,D], two ways: LN statistics per token (rows), BN per feature (columns).
    shown: the tokens whose LN bars are drawn (a long sentence's window); BN's statistics are over every token."""
    ln_title, bn_title = look.words("layernorm.bn.ln_panel"), look.words("layernorm.bn.bn_panel")
    mean_name, std_name, x_title = look.words("layernorm.mean"), look.words("layernorm.std"), look.words("layernorm.dimension")
    x = check_activations(x)
    if x.shape[0] != len(token_labels):
        raise ValueError(f"{x.shape[0]} rows but {len(token_labels)} token labels")
    token_labels = plotly_text(token_labels)[shown]
    ln_mean, ln_std = layer_norm_stats(x[shown])
    bn_mean, bn_std = batch_norm_stats(x)
    dims = np.arange(x.shape[1])
    counts = dict(tokens=x.shape[0], features=x.shape[1])
    stacked = look.scale.narrow       # a phone: BN's panel under LN's, each the column's width
    layout = subplot_layout((ln_title.format(**counts), bn_title.format(**counts)),
                            **(dict(rows=2, cols=1, vertical_spacing=0.3) if stacked else
                               dict(rows=1, cols=2, column_widths=(0.35, 0.65), horizontal_spacing=0.08)))
    bars = [go.Bar(x=token_labels, y=ln_mean, name=mean_name, marker_color=LINE_COLORS[0], legendgroup="m",
                   xaxis="x", yaxis="y", hovertemplate=f"%{{x}}<br>{mean_name} %{{y:.4f}}<extra></extra>"),
            go.Bar(x=token_labels, y=ln_std, name=std_name, marker_color=LINE_COLORS[1], legendgroup="s",
                   xaxis="x", yaxis="y", hovertemplate=f"%{{x}}<br>{std_name} %{{y:.4f}}<extra></extra>"),
            go.Bar(x=dims, y=bn_mean, name=mean_name, marker_color=LINE_COLORS[0], legendgroup="m", showlegend=False,
                   xaxis="x2", yaxis="y2", hovertemplate=f"{x_title} %{{x}}<br>{mean_name} %{{y:.4f}}<extra></extra>"),
            go.Bar(x=dims, y=bn_std, name=std_name, marker_color=LINE_COLORS[1], legendgroup="s", showlegend=False,
                   xaxis="x2", yaxis="y2", hovertemplate=f"{x_title} %{{x}}<br>{std_name} %{{y:.4f}}<extra></extra>")]
    slanted = labels_that_fit((1.0 if stacked else LN_PANEL) * (look.scale.page_px - 80), look.scale,
                              SLANTED_EM) >= len(token_labels)
    layout["xaxis"].update(TOKEN_TICKS, tickangle=-45 if slanted else -90)
    layout["xaxis2"]["title"] = dict(text=x_title)
    layout.update(title=dict(text=title), barmode="group", height=720 if stacked else 460,
                  margin=dict(l=10, r=10, t=100, b=10),
                  legend=dict(orientation="h", yanchor="bottom", y=1.12, xanchor="right", x=1))
    return go.Figure(bars, layout=typeset(layout, look.scale))


DRIFT_TICKS = 20   # batch sizes numbered one by one up to this many


def drift_figure(drift, look: Look, first_token: int = 0, title: str = "") -> go.Figure:
    """batch_norm_drift against batch size, with LayerNorm's flat 0 for comparison."""
    x_title, y_title = look.words("layernorm.drift.x"), look.words("layernorm.drift.y")
    bn_name, ln_name = look.words("layernorm.drift.bn"), look.words("layernorm.drift.ln")
    batch, change = look.words("layernorm.drift.batch"), look.words("layernorm.drift.change")
    drift = np.asarray(drift, dtype=float)
    if drift.ndim != 1 or drift.size == 0:
        raise ValueError("expected a non-empty vector")
    sizes = np.arange(first_token + 1, first_token + 1 + drift.size)
    lines = [
        go.Scatter(x=sizes, y=drift, mode="lines+markers", name=bn_name, line=dict(color=LINE_COLORS[3], width=3),
                   hovertemplate=f"{batch}<br>{change} %{{y:.3f}}<extra></extra>"),
        go.Scatter(x=sizes, y=np.zeros_like(drift), mode="lines+markers", name=ln_name,
                   line=dict(color=LINE_COLORS[0], width=3, dash="dash"),
                   hovertemplate=f"{batch}<br>{change} 0<extra></extra>"),
    ]
    # every batch size numbered while the numbers fit (dtick 1 over 200 sizes ran them together), else plotly's
    layout = dict(xaxis=dict(title=dict(text=x_title), dtick=1 if drift.size <= DRIFT_TICKS else None),
                  yaxis=dict(title=dict(text=y_title), rangemode="tozero"),
                  title=dict(text=title), height=380, margin=dict(l=10, r=10, t=60, b=10))
    legend_under_title(layout, [bn_name, ln_name], look.scale)
    return go.Figure(lines, layout=typeset(layout, look.scale))


def residual_norm_figure(parts: list[tuple[str, list[str], np.ndarray, list[str]]], look: Look,
                         title: str = "") -> go.Figure:
    """Residual-stream norms along the sublayers: a thin line per token, the mean bold.

    parts: one (name, stage labels, norms [stage, token], token labels) per stack, drawn left to right.
    """
    x_title, y_title = look.words("layernorm.resid.x"), look.words("layernorm.resid.y")
    mean_name, mean = look.words("layernorm.resid.mean_name"), look.words("layernorm.mean")
    if not parts:
        raise ValueError("give at least one stack")
    lines = []
    for n, (name, stages, norms, tokens) in enumerate(parts):
        norms = check_matrix(norms, len(stages), len(tokens))
        color = LINE_COLORS[n % len(LINE_COLORS)]
        # every token's line in one trace, broken between tokens: a trace a token was 1,000 traces at 512 tokens
        n_stages = len(stages)
        gap = list(stages[-1:])                   # a point without a value (NaN) after each token's line ends it
        lines.append(go.Scatter(x=(list(stages) + gap) * len(tokens),
                                y=np.vstack([norms, np.full((1, len(tokens)), np.nan)]).T.ravel(),
                                text=np.repeat(plotly_text(tokens), n_stages + 1), mode="lines",
                                line=dict(color=color, width=1), opacity=0.35, showlegend=False, name=name,
                                hovertemplate="%{text}<br>%{x}<br>‖x‖ %{y:.2f}<extra></extra>"))
        lines.append(go.Scatter(x=stages, y=norms.mean(axis=1), mode="lines+markers", marker=dict(size=9),
                                line=dict(color=color, width=4), name=mean_name.format(name=name, n=len(tokens)),
                                hovertemplate=f"%{{x}}<br>{mean} ‖x‖ %{{y:.2f}}<extra></extra>"))
    layout = dict(xaxis=dict(TOKEN_TICKS, title=dict(text=x_title)),
                  yaxis=dict(title=dict(text=y_title), rangemode="tozero"),
                  title=dict(text=title), height=480, margin=dict(l=10, r=10, t=60, b=10))
    legend_under_title(layout, [line.name for line in lines if line.showlegend is not False], look.scale)
    return go.Figure(lines, layout=typeset(layout, look.scale))
