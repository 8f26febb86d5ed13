"""What a stack of token vectors ([tokens, d_model]) says, in pictures that read on a projector.

An 8x256 matrix drawn cell by cell is noise at the back of a room. These reduce it to what a class can
see: how alike the tokens' vectors are (cosine similarity, tokens x tokens) and how much each attention head
adds to each token's output (the rows of W^O that belong to the head). Pure numpy: no torch, no streamlit.
"""
from __future__ import annotations

import numpy as np


def _matrix(x: np.ndarray, what: str = "token vectors") -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"expected {what} [tokens, dimensions], got shape {x.shape}")
    return x


def cosine_similarity(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """[T, D] -> [T, T]: cos(x_i, x_j) = x_i·x_j / (|x_i| |x_j|); a zero vector is alike to nothing (0)."""
    x = _matrix(x)
    norms = np.linalg.norm(x, axis=1)
    unit = x / np.where(norms > eps, norms, np.inf)[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)


def head_contributions(z: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """What each head writes into the attention output: Concat(z) W^O = sum_h z_h W^O_h, where W^O_h are
    the d_head input columns of nn.Linear's weight [d_model, H*d_head] that belong to head h.
    z: [H, T, Dh] -> [H, T, d_model]; summed over heads (plus the bias) it is the sublayer's output."""
    z, weight = np.asarray(z, dtype=np.float64), np.asarray(weight, dtype=np.float64)
    if z.ndim != 3:
        raise ValueError(f"expected per-head outputs [head, position, d_head], got shape {z.shape}")
    n_heads, _, d_head = z.shape
    if weight.ndim != 2 or weight.shape[1] != n_heads * d_head:
        raise ValueError(f"W^O of shape {weight.shape} does not take {n_heads} heads of {d_head}")
    w = weight.reshape(weight.shape[0], n_heads, d_head)            # [D, H, Dh]
    return np.einsum("htk,dhk->htd", z, w)


def head_contribution_norms(z: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """[T, H]: the length of what head h adds to token t's output, |z_h[t] W^O_h|."""
    return np.linalg.norm(head_contributions(z, weight), axis=2).T
