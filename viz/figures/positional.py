"""Positional encoding: the PE table, its curves, its dot products, the rotation property, magnitudes.

Math helpers (frequencies, rotation matrix M_k, permutations) are pure numpy so they can be tested
against the model's own table; figure builders take numpy and labels and return plotly Figures.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import BASE_FONT, DIVERGING_SCALE, LINE_COLORS, plotly_text, symmetric_range, token_axes

SENTENCE_COLOR = "#2ca02c"


# -- math -------------------------------------------------------------------------------------------
def check_table(table) -> np.ndarray:
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 2:
        raise ValueError(f"expected a [position, dimension] table, got shape {table.shape}")
    return table


def frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """ω_i = 1 / base^(2i/d) for each sin/cos pair i (d/2 of them)."""
    if d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be an even number ≥ 2, got {d_model}")
    return 1.0 / base ** (np.arange(0, d_model, 2, dtype=float) / d_model)          # [D/2]


def rotation_matrix(offset: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """M_k with PE(p + k) = M_k PE(p) for every p: one 2x2 rotation by k·ω_i per (sin, cos) pair.

    sin((p+k)ω) =  cos(kω) sin(pω) + sin(kω) cos(pω)
    cos((p+k)ω) = -sin(kω) sin(pω) + cos(kω) cos(pω)
    """
    angles = offset * frequencies(d_model, base)                                       # [D/2]
    m = np.zeros((d_model, d_model))
    c, s = np.cos(angles), np.sin(angles)
    even = np.arange(0, d_model, 2)
    m[even, even], m[even, even + 1] = c, s
    m[even + 1, even], m[even + 1, even + 1] = -s, c
    return m


def rotation_errors(table, offset: int, base: float = 10000.0) -> np.ndarray:
    """‖M_k PE(p) − PE(p+k)‖ for p = 0 … P−1−k, on the table given (e.g. the model's own)."""
    table = check_table(table)
    n = table.shape[0]
    if not 1 <= offset < n:
        raise ValueError(f"offset must be from 1 to {n - 1} for a table of {n} positions, got {offset}")
    m = rotation_matrix(offset, table.shape[1], base)
    predicted = table[:-offset] @ m.T                                                  # [P-k, D]
    return np.linalg.norm(predicted - table[offset:], axis=1)


def pe_similarity(table) -> np.ndarray:
    """PE · PEᵀ: [P, P] dot products between positions."""
    table = check_table(table)
    return table @ table.T


def diagonal_spread(matrix) -> float:
    """Largest (max − min) along any diagonal: 0 when a matrix depends only on i − j."""
    matrix = np.asarray(matrix, dtype=float)
    n = matrix.shape[0]
    spreads = [np.ptp(np.diagonal(matrix, k)) for k in range(-(n - 1), n)]
    return float(max(spreads)) if spreads else 0.0


def parse_index_list(raw: str, lo: int, hi: int, max_items: int = 8) -> list[int]:
    """'0,1,8,9' -> [0, 1, 8, 9]; each in [lo, hi], unique, at most max_items. ValueError otherwise."""
    parts = [p.strip() for p in str(raw).split(",") if p.strip()]
    if not parts:
        raise ValueError("no numbers given")
    if len(parts) > max_items:
        raise ValueError(f"at most {max_items} numbers, got {len(parts)}")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"{raw[:40]!r} is not a comma-separated list of whole numbers") from None
    bad = [v for v in values if not lo <= v <= hi]
    if bad:
        raise ValueError(f"{bad[0]} is outside {lo}…{hi}")
    return list(dict.fromkeys(values))


def swap_permutation(n: int, a: int, b: int) -> np.ndarray:
    """perm with perm[a] = b, perm[b] = a: the swapped sentence is ids[perm]."""
    if not (0 <= a < n and 0 <= b < n):
        raise ValueError(f"positions {a}, {b} must be in 0…{n - 1}")
    perm = np.arange(n)
    perm[[a, b]] = perm[[b, a]]
    return perm


def permuted_pattern(patterns, perm) -> np.ndarray:
    """Attention [..., S, S] of the permuted input IF attention were order-blind: P[perm][:, perm]."""
    patterns = np.asarray(patterns, dtype=float)
    perm = np.asarray(perm)
    if patterns.shape[-1] != len(perm) or patterns.shape[-2] != len(perm):
        raise ValueError(f"pattern shape {patterns.shape} does not match a permutation of {len(perm)}")
    return patterns[..., perm, :][..., :, perm]


def order_gap(original, swapped, perm) -> np.ndarray:
    """Per layer, max |swapped − permuted(original)| over heads, queries and keys. [L,H,S,S] in, [L] out."""
    original, swapped = np.asarray(original, dtype=float), np.asarray(swapped, dtype=float)
    if original.shape != swapped.shape or original.ndim != 4:
        raise ValueError(f"expected two [layer, head, query, key] arrays of one shape, got "
                         f"{original.shape} and {swapped.shape}")
    return np.abs(swapped - permuted_pattern(original, perm)).max(axis=(1, 2, 3))


# -- figures ----------------------------------------------------------------------------------------
def _mark_sentence_rows(fig: go.Figure, n_sentence: int, n_rows: int) -> None:
    if n_sentence <= 0:
        return
    last = min(n_sentence, n_rows) - 0.5
    fig.add_shape(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=-0.5, y1=last,
                  line=dict(color=SENTENCE_COLOR, width=3))
    fig.add_annotation(xref="paper", x=1.0, yref="y", y=last, text=f"your sentence: positions 0–{n_sentence - 1}",
                       showarrow=False, xanchor="right", yanchor="top", font=dict(color=SENTENCE_COLOR, size=15),
                       bgcolor="rgba(255,255,255,0.8)")


def pe_heatmap(table, n_sentence: int = 0, title: str = "") -> go.Figure:
    """[position, dimension] on a diverging scale; the sentence's positions boxed."""
    table = check_table(table)
    zmax = symmetric_range(table)
    fig = go.Figure(go.Heatmap(
        z=table, zmin=-zmax, zmax=zmax, colorscale=DIVERGING_SCALE, colorbar=dict(title=dict(text="PE"), thickness=14),
        hovertemplate="position %{y}<br>dimension %{x}<br>PE %{z:.4f}<extra></extra>"))
    fig.update_xaxes(title="dimension (pairs 2i, 2i+1 share a frequency; slower to the right)")
    fig.update_yaxes(title="position", autorange="reversed")
    _mark_sentence_rows(fig, n_sentence, table.shape[0])
    fig.update_layout(title=title, font=BASE_FONT, height=560, margin=dict(l=10, r=10, t=60, b=10))
    return fig


def pe_curves(table, dims: list[int], n_sentence: int = 0, title: str = "") -> go.Figure:
    """One line per chosen dimension, x = position (only integer positions exist)."""
    table = check_table(table)
    if not dims:
        raise ValueError("choose at least one dimension")
    bad = [d for d in dims if not 0 <= d < table.shape[1]]
    if bad:
        raise ValueError(f"dimension {bad[0]} is outside 0…{table.shape[1] - 1}")
    positions = np.arange(table.shape[0])
    fig = go.Figure()
    for n, d in enumerate(dims):
        kind = "sin" if d % 2 == 0 else "cos"
        fig.add_trace(go.Scatter(x=positions, y=table[:, d], mode="lines+markers", marker=dict(size=5),
                                 name=f"dim {d} ({kind}, pair {d // 2})",
                                 line=dict(color=LINE_COLORS[n % len(LINE_COLORS)], width=2.5),
                                 hovertemplate=f"dim {d}<br>position %{{x}}<br>PE %{{y:.4f}}<extra></extra>"))
    if n_sentence > 0:
        fig.add_vrect(x0=-0.5, x1=min(n_sentence, table.shape[0]) - 0.5, fillcolor=SENTENCE_COLOR, opacity=0.12,
                      line_width=0, annotation_text="your sentence", annotation_position="top left",
                      annotation_font=dict(color=SENTENCE_COLOR, size=15))
    peak = symmetric_range(table[:, dims])
    fig.update_xaxes(title="position")
    fig.update_yaxes(title="PE value", range=[-1.1 * peak, 1.35 * peak])  # headroom for the label
    fig.update_layout(title=title, font=BASE_FONT, height=440, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig


def _mark_sentence_block(fig: go.Figure, n_sentence: int, n_rows: int) -> None:
    if n_sentence <= 0:
        return
    last = min(n_sentence, n_rows) - 0.5
    fig.add_shape(type="rect", xref="x", x0=-0.5, x1=last, yref="y", y0=-0.5, y1=last,
                  line=dict(color=SENTENCE_COLOR, width=3))
    fig.add_annotation(xref="x", x=last, yref="y", y=last, text="your sentence", showarrow=False, xanchor="left",
                       yanchor="top", font=dict(color=SENTENCE_COLOR, size=15), bgcolor="rgba(255,255,255,0.8)")


def similarity_heatmap(similarity, n_sentence: int = 0, title: str = "") -> go.Figure:
    """PE·PEᵀ [position, position]: constant along each diagonal = depends only on the distance."""
    similarity = np.asarray(similarity, dtype=float)
    if similarity.ndim != 2 or similarity.shape[0] != similarity.shape[1]:
        raise ValueError(f"expected a square [position, position] matrix, got shape {similarity.shape}")
    zmax = symmetric_range(similarity)
    fig = go.Figure(go.Heatmap(
        z=similarity, zmin=-zmax, zmax=zmax, colorscale=DIVERGING_SCALE,
        colorbar=dict(title=dict(text="PE·PE"), thickness=14),
        hovertemplate="position %{y} · position %{x}<br>dot product %{z:.3f}<extra></extra>"))
    fig.update_xaxes(title="position", scaleanchor="y", constrain="domain")
    fig.update_yaxes(title="position", autorange="reversed", constrain="domain")
    _mark_sentence_block(fig, n_sentence, similarity.shape[0])
    fig.update_layout(title=title, font=BASE_FONT, height=560, margin=dict(l=10, r=10, t=60, b=10))
    return fig


def similarity_profile_figure(similarity, title: str = "") -> go.Figure:
    """PE(0)·PE(k) against the distance k: the first row of PE·PEᵀ."""
    similarity = np.asarray(similarity, dtype=float)
    if similarity.ndim != 2 or similarity.shape[0] != similarity.shape[1] or similarity.shape[0] < 1:
        raise ValueError(f"expected a square [position, position] matrix, got shape {similarity.shape}")
    k = np.arange(similarity.shape[0])
    fig = go.Figure(go.Scatter(x=k, y=similarity[0], mode="lines+markers", marker=dict(size=6),
                               line=dict(color=LINE_COLORS[0], width=3),
                               hovertemplate="distance %{x}<br>PE(0)·PE(k) %{y:.3f}<extra></extra>"))
    fig.add_hline(y=0, line=dict(color="#888", dash="dot"))
    fig.update_xaxes(title="distance k")
    fig.update_yaxes(title="PE(0) · PE(k)")
    fig.update_layout(title=title, font=BASE_FONT, height=560, margin=dict(l=10, r=10, t=60, b=10))
    return fig


def rotation_error_figure(errors, offset: int, title: str = "") -> go.Figure:
    """‖M_k PE(p) − PE(p+k)‖ against p: float rounding, not approximation."""
    errors = np.asarray(errors, dtype=float)
    if errors.ndim != 1 or errors.size == 0:
        raise ValueError("expected a non-empty vector of errors")
    fig = go.Figure(go.Scatter(x=np.arange(errors.size), y=errors, mode="lines+markers", marker=dict(size=6),
                               line=dict(color=LINE_COLORS[0], width=2),
                               hovertemplate="p %{x}<br>error %{y:.2e}<extra></extra>"))
    fig.update_xaxes(title=f"position p (compared with p + {offset})")
    fig.update_yaxes(title="‖M_k·PE(p) − PE(p+k)‖", exponentformat="e", rangemode="tozero")
    fig.update_layout(title=title, font=BASE_FONT, height=400, margin=dict(l=10, r=10, t=60, b=10))
    return fig


def rotation_matrix_heatmap(m, max_dims: int = 16, title: str = "") -> go.Figure:
    """The top-left max_dims x max_dims corner of M_k with values: 2x2 rotation blocks on the diagonal."""
    m = np.asarray(m, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {m.shape}")
    n = min(max_dims, m.shape[0])
    corner = m[:n, :n]
    labels = [f"d{i}" for i in range(n)]
    heatmap = go.Heatmap(
        z=corner, x=labels, y=labels, zmin=-1, zmax=1, colorscale=DIVERGING_SCALE,
        colorbar=dict(title=dict(text="M_k"), thickness=14), texttemplate="%{z:.2f}", textfont=dict(size=11),
        hovertemplate="row %{y}<br>column %{x}<br>%{z:.5f}<extra></extra>")
    layout = dict(token_axes("input dimension of PE(p)", "output dimension of PE(p+k)"), title=dict(text=title),
                  font=BASE_FONT, height=620, margin=dict(l=10, r=10, t=60, b=10))
    layout["xaxis"].update(scaleanchor="y", constrain="domain")
    return go.Figure(heatmap, layout=layout)


def norms_figure(token_labels: list[str], series: dict[str, np.ndarray], title: str = "") -> go.Figure:
    """Grouped bars: one group per token, one bar per vector (e.g. token embedding, PE, their sum)."""
    if not series:
        raise ValueError("give at least one series of norms")
    for name, values in series.items():
        if np.asarray(values).shape != (len(token_labels),):
            raise ValueError(f"series {name!r} has shape {np.asarray(values).shape}, expected "
                             f"({len(token_labels)},) to match the token labels")
    fig = go.Figure()
    for n, (name, values) in enumerate(series.items()):
        fig.add_trace(go.Bar(x=plotly_text(token_labels), y=np.asarray(values, dtype=float), name=name,
                             marker_color=LINE_COLORS[n % len(LINE_COLORS)],
                             hovertemplate=f"{name}<br>%{{x}}<br>L2 norm %{{y:.3f}}<extra></extra>"))
    fig.update_xaxes(title="token", type="category", tickangle=-45, automargin=True)
    fig.update_yaxes(title="L2 norm")
    fig.update_layout(title=title, barmode="group", font=BASE_FONT, height=440, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig


def order_gap_figure(gap_with_pe, gap_without_pe, title: str = "") -> go.Figure:
    """Per encoder layer, how far the swapped sentence's attention is from the permuted original (log scale)."""
    with_pe, without_pe = np.asarray(gap_with_pe, dtype=float), np.asarray(gap_without_pe, dtype=float)
    if with_pe.shape != without_pe.shape or with_pe.ndim != 1:
        raise ValueError("expected two per-layer vectors of one length")
    layers = [f"layer {i}" for i in range(with_pe.size)]
    floor = 1e-9  # a log axis cannot show exact zeros
    fig = go.Figure([
        go.Bar(x=layers, y=np.maximum(with_pe, floor), name="with positional encoding (the model)",
               marker_color=LINE_COLORS[3], text=[f"{v:.2g}" for v in with_pe], textposition="outside",
               hovertemplate="%{x}<br>max difference %{y:.2e}<extra></extra>"),
        go.Bar(x=layers, y=np.maximum(without_pe, floor), name="positional encoding set to 0",
               marker_color=LINE_COLORS[7], text=[f"{v:.2g}" for v in without_pe], textposition="outside",
               hovertemplate="%{x}<br>max difference %{y:.2e}<extra></extra>"),
    ])
    fig.update_yaxes(type="log", title="max |A_swapped − permuted A|", exponentformat="power", range=[-9, 0.7])
    fig.update_xaxes(title="encoder self-attention")
    fig.update_layout(title=title, barmode="group", font=BASE_FONT, height=440, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig

