"""The arithmetic of one attention sublayer, redone in numpy from a trace to check and explain it.

Pure functions (numpy in, numpy out): no torch, no streamlit. The pages recompute each step from
the captured Q, K, V and weights and compare with what the model itself produced.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def dim_labels(n: int, prefix: str = "d") -> list[str]:
    """Column labels for feature axes: d0 .. d{n-1}."""
    return [f"{prefix}{i}" for i in range(n)]


def head_projection(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, head: int,
                    n_heads: int) -> np.ndarray:
    """One head's slice of a linear map (nn.Linear layout, weight [out, in]): x [T,D] -> [T, D/h]."""
    x, weight = np.asarray(x, dtype=np.float64), np.asarray(weight, dtype=np.float64)
    d_out = weight.shape[0]
    if d_out % n_heads:
        raise ValueError(f"output size {d_out} is not divisible by {n_heads} heads")
    if not 0 <= head < n_heads:
        raise ValueError(f"head {head} is not in 0..{n_heads - 1}")
    if x.ndim != 2 or x.shape[1] != weight.shape[1]:
        raise ValueError(f"input of shape {x.shape} does not fit a weight of shape {weight.shape}")
    d_head = d_out // n_heads
    rows = slice(head * d_head, (head + 1) * d_head)
    out = x @ weight[rows].T                                        # [T,Dh]
    return out if bias is None else out + np.asarray(bias, dtype=np.float64)[rows]


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """[Q,K] bool, True where query i may read key j (j <= i): the one causal mask. The model's own
    (model/nn/transformer.causal_mask, torch) means the same; a test holds the two equal."""
    n_keys = n_queries if n_keys is None else n_keys
    return np.tril(np.ones((n_queries, n_keys), dtype=bool))


def future_mask(kind: str, n_queries: int, n_keys: int) -> np.ndarray | None:
    """What a figure greys out: decoder self-attention's hidden keys (every key after the query, the causal
    mask's False cells); None for the encoder and cross-attention, which hide nothing."""
    return ~causal_mask(n_queries, n_keys) if kind == "decoder" else None


def apply_mask(scores: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """Scores with forbidden entries set to -inf (what the model adds before the softmax)."""
    scores = np.asarray(scores, dtype=np.float64)
    if allowed is None:
        return scores.copy()
    allowed = np.asarray(allowed, dtype=bool)
    if allowed.shape != scores.shape:
        raise ValueError(f"mask shape {allowed.shape} does not match scores {scores.shape}")
    return np.where(allowed, scores, -np.inf)


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax along the last axis; -inf entries get exactly 0."""
    scores = np.asarray(scores, dtype=np.float64)
    peak = np.max(scores, axis=-1, keepdims=True)
    if not np.all(np.isfinite(peak)):
        raise ValueError("every row needs at least one finite score")
    e = np.exp(scores - peak)
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log softmax along the last axis, shifted by the row's maximum so that large logits do not overflow."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def entropy_bits(p: np.ndarray) -> np.ndarray:
    """Shannon entropy (bits) of each distribution along the last axis; 0 log 0 = 0."""
    p = np.asarray(p, dtype=np.float64)
    if np.any(p < -1e-9):
        raise ValueError("probabilities must be non-negative")
    logs = np.log2(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=-1)


@dataclass(frozen=True)
class HeadSteps:
    """Every intermediate of softmax(QK^T/sqrt(d_k) + M) V for one head, recomputed in float64."""
    raw: np.ndarray        # [Q,K] q·k
    scaled: np.ndarray     # [Q,K] q·k / sqrt(d_k)
    masked: np.ndarray     # [Q,K] scaled with -inf where masked
    weights: np.ndarray    # [Q,K] softmax rows
    output: np.ndarray     # [Q,Dh] weights @ V
    allowed: np.ndarray    # [Q,K] bool


def head_steps(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> HeadSteps:
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError("q, k and v must be 2-D [positions, d_head]")
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
        raise ValueError(f"shapes do not fit: q {q.shape}, k {k.shape}, v {v.shape}")
    raw = q @ k.T                                                   # [Q,K]
    scaled = raw / np.sqrt(q.shape[1])
    allowed = causal_mask(*raw.shape) if causal else np.ones(raw.shape, dtype=bool)
    masked = apply_mask(scaled, allowed)
    weights = softmax(masked)
    return HeadSteps(raw, scaled, masked, weights, weights @ v, allowed)


@dataclass(frozen=True)
class ScalingComparison:
    """One query's softmax with and without the 1/sqrt(d_k) factor."""
    unscaled: np.ndarray   # [K] softmax(q·k)
    scaled: np.ndarray     # [K] softmax(q·k / sqrt(d_k))
    entropy_unscaled: float
    entropy_scaled: float
    max_unscaled: float
    max_scaled: float
    d_k: int


def scaling_comparison(raw_row: np.ndarray, d_k: int, allowed_row: np.ndarray | None = None) -> ScalingComparison:
    """raw_row: the query's q·k over keys (before scaling)."""
    if d_k <= 0:
        raise ValueError(f"d_k must be positive, got {d_k}")
    raw_row = np.asarray(raw_row, dtype=np.float64)
    if raw_row.ndim != 1:
        raise ValueError(f"expected one row of scores, got shape {raw_row.shape}")
    unscaled = softmax(apply_mask(raw_row, allowed_row))
    scaled = softmax(apply_mask(raw_row / np.sqrt(d_k), allowed_row))
    return ScalingComparison(unscaled, scaled, float(entropy_bits(unscaled)), float(entropy_bits(scaled)),
                             float(unscaled.max()), float(scaled.max()), d_k)


def max_abs_error(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"cannot compare shapes {a.shape} and {b.shape}")
    finite = np.isfinite(a)
    if np.any(finite != np.isfinite(b)):   # a -inf (masked) entry on one side only
        return float("inf")
    return float(np.max(np.abs(a[finite] - b[finite]), initial=0.0))


# -- multi-head assembly ---------------------------------------------------------------------------
def concat_heads(z: np.ndarray) -> np.ndarray:
    """[H,T,Dh] -> [T, H*Dh]: head h fills columns h*Dh .. (h+1)*Dh - 1 (the model's own order)."""
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 3:
        raise ValueError(f"expected per-head outputs [head, position, d_head], got shape {z.shape}")
    n_heads, n_pos, d_head = z.shape
    return z.transpose(1, 0, 2).reshape(n_pos, n_heads * d_head)


def output_projection(concat: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """Concat(head_1..head_h) W^O (+ b), with nn.Linear's weight [out, in]."""
    concat, weight = np.asarray(concat, dtype=np.float64), np.asarray(weight, dtype=np.float64)
    if concat.ndim != 2 or concat.shape[1] != weight.shape[1]:
        raise ValueError(f"concat of shape {concat.shape} does not fit W^O of shape {weight.shape}")
    out = concat @ weight.T
    return out if bias is None else out + np.asarray(bias, dtype=np.float64)
