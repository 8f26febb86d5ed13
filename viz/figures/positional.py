"""Positional encoding figures: the PE table, its curves, its dot products, the rotation property,
magnitudes, and the word-swap test. The maths they draw is in model/analysis/positional.py."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.analysis.positional import check_table
from viz.figures.attention import SLANTED_EM, UPRIGHT_EM, labels_that_fit, map_room
from viz.figures.style import (ATTENTION_SCALE, DIVERGING_SCALE, LINE_COLORS, NORMAL, Look, TypeScale, check_matrix,
                               colorbar, hline, legend_under_title, plotly_text, subplot_axes, subplot_layout, symmetric_range,
                               token_axes, typeset, update_axes)

SENTENCE_COLOR = "#2ca02c"


# -- figures ----------------------------------------------------------------------------------------
# Each figure is built in one go, go.Figure(data, layout), not with update_*/add_* calls (see style.token_axes).
def _sentence_rows(n_sentence: int, n_rows: int, label: str, type_scale: TypeScale = NORMAL) -> dict:
    """Layout entries boxing the sentence's rows (positions) across the whole width; none without a sentence."""
    if n_sentence <= 0:
        return {}
    last = min(n_sentence, n_rows) - 0.5
    return dict(shapes=[dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=-0.5, y1=last,
                             line=dict(color=SENTENCE_COLOR, width=3))],
                annotations=[dict(xref="paper", x=1.0, yref="y", y=last, showarrow=False, xanchor="right",
                                  yanchor="top", text=label.format(last=n_sentence - 1),
                                  font=type_scale.font("text", color=SENTENCE_COLOR), bgcolor="rgba(255,255,255,0.8)")])


def pe_heatmap(table, look: Look, n_sentence: int = 0, title: str = "") -> go.Figure:
    """[position, dimension] on a diverging scale; the sentence's positions boxed."""
    x_title, y_title = look.words("positional.table.x"), look.words("positional.position")
    dimension, sentence_label = look.words("positional.dimension"), look.words("positional.sentence_rows")
    table = check_table(table)
    zmax = symmetric_range(table)
    # z as float32, the model's own precision (its PE buffer and weights are float32): every number the same, half
    # the chart's JSON of float64 (216 KB at 64 x 256; hover shows 4 decimals)
    heatmap = go.Heatmap(
        z=table.astype(np.float32), zmin=-zmax, zmax=zmax, colorscale=DIVERGING_SCALE, colorbar=colorbar("PE", look.scale, 14),
        hovertemplate=f"{y_title} %{{y}}<br>{dimension} %{{x}}<br>PE %{{z:.4f}}<extra></extra>")
    layout = dict(xaxis=dict(title=dict(text=x_title)),
                  yaxis=dict(title=dict(text=y_title), autorange="reversed"), title=dict(text=title),
                  height=500, margin=dict(l=10, r=10, t=60, b=10))
    return go.Figure(heatmap, layout=typeset(dict(layout, **_sentence_rows(n_sentence, table.shape[0], sentence_label, look.scale)), look.scale))


def pe_curves(table, dims: list[int], look: Look, n_sentence: int = 0, title: str = "") -> go.Figure:
    """One line per chosen dimension, x = position (only integer positions exist)."""
    x_title, y_title = look.words("positional.position"), look.words("positional.curves.y")
    curve_name, dim_name = look.words("positional.curves.name"), look.words("positional.dimension")
    sentence_label = look.words("positional.sentence")
    table = check_table(table)
    if not dims:
        raise ValueError("choose at least one dimension")
    bad = [d for d in dims if not 0 <= d < table.shape[1]]
    if bad:
        raise ValueError(f"dimension {bad[0]} is outside 0…{table.shape[1] - 1}")
    positions = np.arange(table.shape[0])
    lines = [go.Scatter(x=positions, y=table[:, d], mode="lines+markers", marker=dict(size=5),
                        name=curve_name.format(d=d, wave="sin" if d % 2 == 0 else "cos", pair=d // 2),
                        line=dict(color=LINE_COLORS[n % len(LINE_COLORS)], width=2.5),
                        hovertemplate=f"{dim_name} {d}<br>{x_title} %{{x}}<br>PE %{{y:.4f}}<extra></extra>")
             for n, d in enumerate(dims)]
    peak = symmetric_range(table[:, dims])
    # The legend sits between the title and the plot: a top margin for the title's line and as many legend lines
    # as the names need at the page's width (a 2-line Chinese legend at 60 px would cover the title).
    legend_px = sum(look.scale.text_px(line.name) + 50 for line in lines)
    legend_lines = max(1, int(np.ceil(legend_px / max(look.scale.page_px - 140, 200))))
    top = int(24 + 1.4 * look.scale.title + legend_lines * 1.5 * look.scale.text)
    layout = dict(xaxis=dict(title=dict(text=x_title)),
                  yaxis=dict(title=dict(text=y_title), range=[-1.1 * peak, 1.35 * peak]),  # headroom for the label
                  title=dict(text=title, yref="container", y=1, yanchor="top", pad=dict(t=6)),
                  height=400 + top, margin=dict(l=10, r=10, t=top, b=10),
                  legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    if n_sentence > 0:   # a shaded band over the sentence's positions, as add_vrect draws it
        last = min(n_sentence, table.shape[0]) - 0.5
        layout["shapes"] = [dict(type="rect", xref="x", x0=-0.5, x1=last, yref="y domain", y0=0, y1=1,
                                 fillcolor=SENTENCE_COLOR, opacity=0.12, line=dict(width=0))]
        layout["annotations"] = [dict(xref="x", x=-0.5, yref="y domain", y=1, xanchor="left", yanchor="top",
                                      text=sentence_label, showarrow=False, font=look.scale.font("text", color=SENTENCE_COLOR))]
    return go.Figure(lines, layout=typeset(layout, look.scale))


def _sentence_block(n_sentence: int, n_rows: int, label: str, type_scale: TypeScale = NORMAL) -> dict:
    """Layout entries boxing the sentence's block (its positions against each other); none without a sentence."""
    if n_sentence <= 0:
        return {}
    last = min(n_sentence, n_rows) - 0.5
    return dict(shapes=[dict(type="rect", xref="x", x0=-0.5, x1=last, yref="y", y0=-0.5, y1=last,
                             line=dict(color=SENTENCE_COLOR, width=3))],
                annotations=[dict(xref="x", x=last, yref="y", y=last, text=label, showarrow=False,
                                  xanchor="left", yanchor="top", font=type_scale.font("text", color=SENTENCE_COLOR),
                                  bgcolor="rgba(255,255,255,0.8)")])


def similarity_heatmap(similarity, look: Look, n_sentence: int = 0, title: str = "") -> go.Figure:
    """PE·PEᵀ [position, position]: constant along each diagonal = depends only on the distance."""
    position, dot_product = look.words("positional.position"), look.words("positional.dot_product")
    sentence_label = look.words("positional.sentence")
    similarity = np.asarray(similarity, dtype=float)
    if similarity.ndim != 2 or similarity.shape[0] != similarity.shape[1]:
        raise ValueError(f"expected a square [position, position] matrix, got shape {similarity.shape}")
    zmax = symmetric_range(similarity)
    heatmap = go.Heatmap(      # float32: the dot products of float32 tables, 7 digits for a hover's 3 decimals
        z=similarity.astype(np.float32), zmin=-zmax, zmax=zmax, colorscale=DIVERGING_SCALE,
        colorbar=colorbar("PE·PE", look.scale, 14),
        hovertemplate=f"{position} %{{y}} · {position} %{{x}}<br>{dot_product} %{{z:.3f}}<extra></extra>")
    layout = dict(xaxis=dict(title=dict(text=position), scaleanchor="y", constrain="domain"),
                  yaxis=dict(title=dict(text=position), autorange="reversed", constrain="domain"),
                  title=dict(text=title), height=560, margin=dict(l=10, r=10, t=60, b=10))
    return go.Figure(heatmap, layout=typeset(dict(layout, **_sentence_block(n_sentence, similarity.shape[0], sentence_label, look.scale)), look.scale))


def similarity_profile_figure(similarity, look: Look, title: str = "") -> go.Figure:
    """PE(0)·PE(k) against the distance k: the first row of PE·PEᵀ."""
    x_title, distance = look.words("positional.similarity.x"), look.words("positional.distance")
    similarity = np.asarray(similarity, dtype=float)
    if similarity.ndim != 2 or similarity.shape[0] != similarity.shape[1] or similarity.shape[0] < 1:
        raise ValueError(f"expected a square [position, position] matrix, got shape {similarity.shape}")
    k = np.arange(similarity.shape[0])
    line = go.Scatter(x=k, y=similarity[0], mode="lines+markers", marker=dict(size=6),
                      line=dict(color=LINE_COLORS[0], width=3),
                      hovertemplate=f"{distance} %{{x}}<br>PE(0)·PE(k) %{{y:.3f}}<extra></extra>")
    return go.Figure(line, layout=typeset(dict(
        xaxis=dict(title=dict(text=x_title)), yaxis=dict(title=dict(text="PE(0) · PE(k)")),
        shapes=[hline(0, dict(color="#888", dash="dot"))], title=dict(text=title), height=560,
        margin=dict(l=10, r=10, t=60, b=10)), look.scale))


def rotation_error_figure(errors, offset: int, look: Look, title: str = "") -> go.Figure:
    """‖M_k PE(p) − PE(p+k)‖ against p: float rounding, not approximation. A line without markers: one marker per p
    (509 of them at max_len 512) was the page's costliest chart to draw; every p's error is still on hover."""
    x_title, error = look.words("positional.rotation.error_x"), look.words("positional.rotation.error")
    errors = np.asarray(errors, dtype=float)
    if errors.ndim != 1 or errors.size == 0:
        raise ValueError("expected a non-empty vector of errors")
    line = go.Scatter(x=np.arange(errors.size), y=errors, mode="lines", line=dict(color=LINE_COLORS[0], width=2),
                      hovertemplate=f"p %{{x}}<br>{error} %{{y:.2e}}<extra></extra>")
    return go.Figure(line, layout=typeset(dict(
        xaxis=dict(title=dict(text=x_title.format(offset=offset))),
        yaxis=dict(title=dict(text="‖M_k·PE(p) − PE(p+k)‖"), exponentformat="e", rangemode="tozero"),
        title=dict(text=title), height=400, margin=dict(l=10, r=10, t=60, b=10)), look.scale))


def rotation_matrix_heatmap(m, look: Look, max_dims: int = 8, title: str = "") -> go.Figure:
    """The top-left max_dims x max_dims corner of M_k: 2x2 rotation blocks on the diagonal, their values
    written in the cells; the zeros around them stay blank (sixteen "0.00" in a row ran into each other)."""
    x_title, y_title = look.words("positional.rotation.m_x"), look.words("positional.rotation.m_y")
    row, column = look.words("positional.row"), look.words("positional.column")
    m = np.asarray(m, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {m.shape}")
    n = min(max_dims, m.shape[0])
    corner = m[:n, :n]
    labels = [f"d{i}" for i in range(n)]
    text = np.where(np.abs(corner) > 5e-3, np.char.mod("%.2f", corner), "")
    heatmap = go.Heatmap(
        z=corner, x=labels, y=labels, zmin=-1, zmax=1, colorscale=DIVERGING_SCALE,
        colorbar=colorbar("M_k", look.scale, 14), text=text, texttemplate="%{text}",
        textfont=look.scale.font("cell"), hovertemplate=f"{row} %{{y}}<br>{column} %{{x}}<br>%{{z:.5f}}<extra></extra>")
    layout = dict(token_axes(x_title, y_title, look.scale), title=dict(text=title),
                  height=520, margin=dict(l=10, r=10, t=60, b=10))
    layout["xaxis"].update(scaleanchor="y", constrain="domain")
    return go.Figure(heatmap, layout=typeset(layout, look.scale))


def norm_tokens(type_scale: TypeScale = NORMAL) -> int:
    """Tokens `norms_figure` labels legibly (slanted, a group of bars each) across the page: a longer sentence's
    bars are shown through a window of this many."""
    return labels_that_fit(type_scale.page_px - 100, type_scale, SLANTED_EM)


def norms_figure(token_labels: list[str], series: dict[str, np.ndarray], look: Look, title: str = "") -> go.Figure:
    """Grouped bars: one group per token, one bar per vector (e.g. token embedding, PE, their sum)."""
    x_title, y_title = look.words("positional.token"), look.words("positional.norms.y")
    if not series:
        raise ValueError("give at least one series of norms")
    for name, values in series.items():
        if np.asarray(values).shape != (len(token_labels),):
            raise ValueError(f"series {name!r} has shape {np.asarray(values).shape}, expected "
                             f"({len(token_labels)},) to match the token labels")
    labels = plotly_text(token_labels)
    bars = [go.Bar(x=labels, y=np.asarray(values, dtype=float), name=name,
                   marker_color=LINE_COLORS[n % len(LINE_COLORS)],
                   hovertemplate=f"{name}<br>%{{x}}<br>{y_title} %{{y:.3f}}<extra></extra>")
            for n, (name, values) in enumerate(series.items())]
    return go.Figure(bars, layout=typeset(legend_under_title(dict(
        xaxis=dict(title=dict(text=x_title), type="category", tickangle=-45, automargin=True),
        yaxis=dict(title=dict(text=y_title)), title=dict(text=title), barmode="group", height=440,
        margin=dict(l=10, r=10, t=60, b=10)), list(series), look.scale), look.scale))


NEGLIGIBLE = 5e-3   # a weight difference under half a percent: rounding, or nothing a class would see


def order_gap_figure(gap_with_pe, gap_without_pe, look: Look, title: str = "") -> go.Figure:
    """Per encoder layer, how far the swapped sentence's attention is from the permuted original, on a linear
    axis from 0 (a log axis drew 3e-7 half as tall as 0.1, and a 0 not at all): bars a class reads as they are,
    a gap under NEGLIGIBLE labelled "≈ 0" (the exact value on hover)."""
    layer, x_title = look.words("positional.layer_n"), look.words("positional.order.gap_x")
    y_title = look.words("positional.order.gap_y")
    with_pe_name, without_pe_name = look.words("positional.order.with_pe"), look.words("positional.order.without_pe")
    difference = look.words("positional.order.difference")
    with_pe, without_pe = np.asarray(gap_with_pe, dtype=float), np.asarray(gap_without_pe, dtype=float)
    if with_pe.shape != without_pe.shape or with_pe.ndim != 1:
        raise ValueError("expected two per-layer vectors of one length")
    layers = [layer.format(i=i) for i in range(with_pe.size)]
    bars = [go.Bar(x=layers, y=gaps, name=name, marker_color=color,
                   text=["≈ 0" if v < NEGLIGIBLE else f"{v:.2f}" for v in gaps], textposition="outside", constraintext="none",
                   hovertemplate=f"%{{x}}<br>{difference} %{{y:.2e}}<extra></extra>")
            for gaps, name, color in [(with_pe, with_pe_name, LINE_COLORS[3]),
                                      (without_pe, without_pe_name, LINE_COLORS[7])]]
    return go.Figure(bars, layout=typeset(legend_under_title(dict(
        yaxis=dict(title=dict(text=y_title), range=[0, max(0.1, float(np.max([with_pe, without_pe]))) * 1.2],
                   rangemode="tozero"),
        xaxis=dict(title=dict(text=x_title)), title=dict(text=title), barmode="group",
        height=440, margin=dict(l=10, r=10, t=60, b=10)), [with_pe_name, without_pe_name], look.scale), look.scale))


ORDER_PANEL = 0.28     # of the plot's width, each of word_order_figure's three maps (spacing 0.08 between them)


def order_tokens(type_scale: TypeScale = NORMAL) -> int:
    """Tokens each of `word_order_figure`'s three maps labels legibly (upright keys, one row each) in a third of
    the page: a longer sentence's maps are shown through a window of this many."""
    if type_scale.narrow:            # a phone: the maps one above the other, each the column's width
        return labels_that_fit(type_scale.page_px - map_room(type_scale), type_scale, UPRIGHT_EM)
    return labels_that_fit(ORDER_PANEL * (type_scale.page_px - 120), type_scale, UPRIGHT_EM)


def word_order_figure(reordered, actual, token_labels: list[str], look: Look, title: str = "") -> go.Figure:
    """Three maps over the swapped sentence [query, key], side by side: the original sentence's attention
    with the swapped rows and columns moved like the tokens, the swapped sentence's own attention (both on
    one weight scale from 0 to the larger of their maxima: head averages of ~0.1 look white on 0-1), and
    their difference (diverging). Each colour bar lies flat above the panels it belongs to (a 'weight' bar
    standing between the second and the third panel reads as the difference's scale). Query labels on
    the left panel only; labels are escaped for plotly here, once."""
    # panel titles a third of the page each, so short (a longer one is cut at that width)
    panel_titles = (look.words("positional.order.panel_original"), look.words("positional.order.panel_swapped"),
                    look.words("positional.order.panel_difference"))
    x_title, y_title = look.words("fig.attention.x"), look.words("fig.attention.y")
    hover_query, hover_key = look.words("fig.attention.query"), look.words("fig.attention.key")
    value_name = look.words("fig.attention.weight")
    n = len(token_labels)
    reordered, actual = check_matrix(reordered, n, n), check_matrix(actual, n, n)
    diff = actual - reordered
    labels = plotly_text(token_labels)
    if look.scale.narrow:
        return _word_order_stacked(reordered, actual, diff, labels, panel_titles, look, title)
    layout = subplot_layout(list(panel_titles), rows=1, cols=3, shared_yaxes=True,
                            horizontal_spacing=(1 - 3 * ORDER_PANEL) / 2)
    hover = f"{hover_query} %{{y}}<br>{hover_key} %{{x}}<br>"
    traces = _order_maps(reordered, actual, diff, labels, hover, value_name)
    ticks = dict(type="category", tickfont=look.scale.font("tick"), automargin=True)
    # Keys upright; plotly leaves every other one out when a third of the page is too narrow for all of them
    # (forced, twenty keys ran into each other). Queries, one per row, all shown.
    update_axes(layout, "x", tickangle=-90, **ticks)
    update_axes(layout, "y", autorange="reversed", tickmode="array", tickvals=labels, ticktext=labels, **ticks)
    for name in ("yaxis2", "yaxis3"):          # the query labels are on the left panel's axis
        layout[name].update(ticks="", showticklabels=False)
    layout["xaxis2"]["title"] = dict(text=x_title)
    layout["yaxis"]["title"] = dict(text=y_title)
    bar_px = int(2.5 * look.scale.tick + 9)     # a flat colour bar and its numbers, between titles and maps
    for note in layout["annotations"]:
        note.update(font=look.scale.font("text"), yshift=bar_px)
    weights = (layout["xaxis"]["domain"][0], layout["xaxis2"]["domain"][1])
    delta = layout["xaxis3"]["domain"]
    wmax = max(float(np.nanmax(reordered)), float(np.nanmax(actual))) or 1.0
    zmax = symmetric_range(diff)
    row_px = max(22, 1.45 * look.scale.tick)    # a row for each query label (22 px rows overlapped 20 px labels)
    layout.update(title=dict(text=title), height=int(max(420, min(900, 240 + row_px * n))),
                  coloraxis=dict(colorscale=ATTENTION_SCALE, cmin=0, cmax=wmax,
                                 colorbar=_flat_colorbar(value_name, weights, 0.7, 5, look.scale)),
                  coloraxis2=dict(colorscale=DIVERGING_SCALE, cmin=-zmax, cmax=zmax,
                                  colorbar=dict(_flat_colorbar(f"Δ {value_name}", delta, 1.0, 3, look.scale),
                                                **_symmetric_ticks(zmax))),
                  margin=dict(l=10, r=10, t=(50 if title else 0) + bar_px + 40, b=10))
    return go.Figure(traces, layout=typeset(layout, look.scale))


def _order_maps(reordered, actual, diff, labels, hover: str, value_name: str) -> list:
    """The three word-order maps (reordered, actual, their difference) as heatmaps of their panels: the weights on
    one colour axis, the difference on a second."""
    return [go.Heatmap(z=m, x=labels, y=labels, coloraxis=axis, **subplot_axes(i),
                       hovertemplate=hover + f"{name} %{{z:.4f}}<extra></extra>")
            for i, (m, axis, name) in enumerate(((reordered, "coloraxis", value_name), (actual, "coloraxis", value_name),
                                                 (diff, "coloraxis2", f"Δ {value_name}")))]


def _word_order_stacked(reordered, actual, diff, labels: list[str], panel_titles, look: Look, title: str) -> go.Figure:
    """word_order_figure in a phone's column: the three maps one above the other, each the column's width and
    labelling its queries, the keys once under the last; the weights' colour bar beside the first two, the
    difference's beside the third (side by side, each map was 95 px wide: a window of 4 of a 9-word sentence's
    12 tokens, and the flat colour bars ran into the panel titles)."""
    hover_query, hover_key = look.words("fig.attention.query"), look.words("fig.attention.key")
    value_name, n = look.words("fig.attention.weight"), len(labels)
    row_px = max(22, 1.45 * look.scale.tick)
    panel_px, title_px = row_px * n, 1.3 * look.scale.text + 10
    plot_px = 3 * panel_px + 2 * title_px
    layout = subplot_layout(list(panel_titles), rows=3, cols=1, shared_xaxes=True,
                            vertical_spacing=title_px / plot_px)
    hover = f"{hover_query} %{{y}}<br>{hover_key} %{{x}}<br>"
    traces = _order_maps(reordered, actual, diff, labels, hover, value_name)
    ticks = dict(type="category", tickfont=look.scale.font("tick"), automargin=True)
    update_axes(layout, "x", tickangle=-90, **ticks)
    update_axes(layout, "y", autorange="reversed", tickmode="array", tickvals=labels, ticktext=labels, **ticks)
    layout["xaxis3"]["title"] = dict(text=look.words("fig.attention.x"))
    weights = (layout["yaxis2"]["domain"][0], layout["yaxis"]["domain"][1])
    delta = layout["yaxis3"]["domain"]
    wmax = max(float(np.nanmax(reordered)), float(np.nanmax(actual))) or 1.0
    zmax = symmetric_range(diff)
    longest = max((look.scale.text_px(label, "tick") for label in labels), default=0)
    top = 30 + 1.3 * look.scale.title if title else 10
    layout.update(title=dict(text=title), height=int(plot_px + top + title_px + longest + 2 * look.scale.text + 20),
                  coloraxis=dict(colorscale=ATTENTION_SCALE, cmin=0, cmax=wmax,
                                 colorbar=colorbar(value_name, look.scale, y=sum(weights) / 2, yanchor="middle",
                                                   len=weights[1] - weights[0], lenmode="fraction")),
                  coloraxis2=dict(colorscale=DIVERGING_SCALE, cmin=-zmax, cmax=zmax,
                                  colorbar=dict(colorbar(f"Δ {value_name}", look.scale, y=sum(delta) / 2,
                                                         yanchor="middle", len=delta[1] - delta[0], lenmode="fraction"),
                                                **_symmetric_ticks(zmax))),
                  margin=dict(l=10, r=10, t=int(top + title_px), b=10))
    return go.Figure(traces, layout=typeset(layout, look.scale))


def _flat_colorbar(name: str, domain, share: float, nticks: int, type_scale: TypeScale = NORMAL) -> dict:
    """A horizontal colour bar just above the panels spanning `domain` (paper x), share of their width,
    at most nticks numbers above it, its name beside it."""
    low, high = domain
    return dict(orientation="h", x=(low + high) / 2, xanchor="center", len=share * (high - low), lenmode="fraction",
                y=1.0, yanchor="bottom", ypad=6, thickness=12, ticklabelposition="outside top", nticks=nticks,
                tickfont=type_scale.font("tick"), title=dict(text=name, side="right", font=type_scale.font("text")))


def _symmetric_ticks(zmax: float) -> dict:
    """−v, 0, +v on a diverging colour bar, v = zmax rounded down to two significant digits (plotly's own
    choice on a bar a third of the page wide was '0' alone)."""
    if not np.isfinite(zmax) or zmax <= 0:
        return {}
    step = 10.0 ** (np.floor(np.log10(zmax)) - 1)
    v = float(np.floor(zmax / step + 1e-9) * step)
    v = float(f"{v:.2g}")
    return dict(tickmode="array", tickvals=[-v, 0, v], ticktext=[f"−{v:g}", "0", f"+{v:g}"])
