"""Positional encoding maths, pure numpy: the frequencies, the rotation M_k with PE(p+k) = M_k PE(p),
dot products between positions, and the word-swap test of whether attention sees order.
"""
from __future__ import annotations

import numpy as np

from model.analysis.word_order import permuted_pattern


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


def order_gap(original, swapped, perm) -> np.ndarray:
    """Per layer, max |swapped − permuted(original)| over heads, queries and keys. [L,H,S,S] in, [L] out."""
    original, swapped = np.asarray(original, dtype=float), np.asarray(swapped, dtype=float)
    if original.shape != swapped.shape or original.ndim != 4:
        raise ValueError(f"expected two [layer, head, query, key] arrays of one shape, got "
                         f"{original.shape} and {swapped.shape}")
    return np.abs(swapped - permuted_pattern(original, perm)).max(axis=(1, 2, 3))
