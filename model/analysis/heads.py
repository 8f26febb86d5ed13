"""Per-head statistics of attention patterns: entropy (in bits), distance, and where a head looks
(itself, the previous or next token, </s>, <s>, punctuation); one tidy table per sentence or corpus. And what
sets each head of a layer apart from the others (head_summary, head_traits: the multi-head page).

Pure numpy/pandas: no torch, no Streamlit. Heads are named (kind, layer, head), kinds as in
model/capture/schema.py.
"""
from __future__ import annotations

import unicodedata
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from model.analysis.attention_math import entropy_bits
from model.capture import schema
from model.capture.schema import KINDS

EOS, BOS = "</s>", "<s>"

# Statistic columns, in table order, with a short readable name.
STATS = {
    "entropy": "entropy (bits)",
    "entropy_norm": "entropy / log2(#keys)",
    "distance": "mean distance |i−j|",
    "self": "share on itself",
    "prev": "share on previous token",
    "next": "share on next token",
    "eos": "share on </s>",
    "bos": "share on <s>",
    "punct": "share on punctuation",
    "max_weight": "mean row maximum",
}
ID_COLUMNS = ["kind", "layer", "head"]
Head = tuple[str, int, int]


# -- statistics of one attention kind, one layer -------------------------------------------------
def is_punctuation(label: str) -> bool:
    """A token label made only of punctuation (after the '▁' word-start marker), e.g. '.', '▁,', '?!'."""
    core = label.replace("▁", "")
    return bool(core) and all(unicodedata.category(ch).startswith("P") for ch in core)


def _check_patterns(patterns, key_labels: Sequence[str], kind: str) -> np.ndarray:
    a = np.asarray(patterns, dtype=np.float64)
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; choose from {', '.join(KINDS)}")
    if a.ndim != 3 or 0 in a.shape:
        raise ValueError(f"expected patterns [head, query, key], got shape {a.shape}")
    if a.shape[2] != len(key_labels):
        raise ValueError(f"{a.shape[2]} keys but {len(key_labels)} key labels")
    if kind != "cross" and a.shape[1] != a.shape[2]:
        raise ValueError(f"{kind} self-attention must be square, got {a.shape[1]} queries x {a.shape[2]} keys")
    if not np.isfinite(a).all() or (a < 0).any():
        raise ValueError("attention weights must be finite and non-negative")
    return a


def _diagonal_share(a: np.ndarray, offset: int) -> np.ndarray:
    """[H]: mean over queries i (where key i+offset exists) of a[h, i, i+offset]; NaN if none."""
    diag = np.diagonal(a, offset=offset, axis1=1, axis2=2)          # [H, n]
    return diag.mean(-1) if diag.shape[-1] else np.full(a.shape[0], np.nan)


def head_statistics(patterns, key_labels: Sequence[str], kind: str, layer: int = 0) -> list[dict]:
    """One record per head of one layer. patterns [H,Q,K] (rows sum to 1); labels name the keys.

    Entropy (bits) is averaged over queries; the normalised entropy divides each row by log2(#keys that
    row may see) (i+1 for causal decoder rows, rows with one key skipped), so 1 = uniform.
    Distance is sum_j a_ij |i - j| in tokens; for cross-attention the query position is first
    scaled onto the source length (i * (S-1)/(T-1)), so it measures distance from a straight
    diagonal alignment. Self/previous/next shares are NaN where they cannot exist (cross-attention;
    "next" under the causal mask).
    """
    a = _check_patterns(patterns, key_labels, kind)                  # [H,Q,K]
    n_heads, n_q, n_k = a.shape
    rows = np.arange(n_q)
    allowed = np.minimum(rows + 1, n_k) if kind == "decoder" else np.full(n_q, n_k)   # [Q]
    row_entropy = entropy_bits(a)                                      # [H,Q]
    wide = allowed > 1
    entropy_norm = ((row_entropy[:, wide] / np.log2(allowed[wide])).mean(-1) if wide.any()
                    else np.full(n_heads, np.nan))
    query_pos = rows * ((n_k - 1) / (n_q - 1)) if (kind == "cross" and n_q > 1) else rows.astype(float)
    distance = (a * np.abs(query_pos[:, None] - np.arange(n_k)[None, :])).sum(-1).mean(-1)   # [H]
    nan = np.full(n_heads, np.nan)
    positional = kind != "cross"
    key_share = lambda mask: a[:, :, np.asarray(mask, dtype=bool)].sum(-1).mean(-1)  # noqa: E731 [H]
    stats = {
        "entropy": row_entropy.mean(-1),
        "entropy_norm": entropy_norm,
        "distance": distance,
        "self": _diagonal_share(a, 0) if positional else nan,
        "prev": _diagonal_share(a, -1) if positional else nan,
        "next": _diagonal_share(a, 1) if kind == "encoder" else nan,
        "eos": key_share([lab == EOS for lab in key_labels]),
        "bos": key_share([lab == BOS for lab in key_labels]),
        "punct": key_share([is_punctuation(lab) for lab in key_labels]),
        "max_weight": a.max(-1).mean(-1),
    }
    return [{"kind": kind, "layer": int(layer), "head": h, **{k: float(v[h]) for k, v in stats.items()}}
            for h in range(n_heads)]


def stats_frame(records: Iterable[dict]) -> pd.DataFrame:
    """Tidy table: kind, layer, head, then one column per statistic (STATS order)."""
    frame = pd.DataFrame(list(records), columns=ID_COLUMNS + list(STATS))
    return frame.astype({"layer": int, "head": int})


# -- from traces -------------------------------------------------------------------------------
def trace_head_stats(trace, kinds: Sequence[str] = KINDS) -> pd.DataFrame:
    """Statistics of every head of every layer of the given kinds, from one sentence's trace."""
    records = []
    for kind in kinds:
        labels = schema.key_tokens(trace.meta, kind)
        for layer, patterns in enumerate(schema.stacked(trace, kind)):
            records += head_statistics(patterns, labels, kind, layer)
    return stats_frame(records)


def aggregate_stats(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Mean of each statistic over sentences (NaNs skipped), one row per head, plus n_sentences."""
    frames = [f for f in frames if len(f)]
    if not frames:
        raise ValueError("no statistics to aggregate")
    data = pd.concat(frames, ignore_index=True)
    grouped = data.groupby(ID_COLUMNS, sort=False)
    out = grouped[list(STATS)].mean()
    out["n_sentences"] = grouped.size()
    out = out.reset_index()
    out["kind"] = pd.Categorical(out["kind"], categories=list(KINDS), ordered=True)
    out = out.sort_values(ID_COLUMNS).reset_index(drop=True)
    out["kind"] = out["kind"].astype(str)
    return out


def stat_matrix(frame: pd.DataFrame, kind: str, stat: str, n_layers: int, n_heads: int) -> np.ndarray:
    """[layer, head] values of one statistic for one kind (NaN where the table has no row)."""
    if stat not in STATS:
        raise ValueError(f"unknown statistic {stat!r}; choose from {', '.join(STATS)}")
    m = np.full((n_layers, n_heads), np.nan)
    rows = frame[frame["kind"] == kind]
    m[rows["layer"].to_numpy(int), rows["head"].to_numpy(int)] = rows[stat].to_numpy(float)
    return m


def head_summary(patterns: np.ndarray) -> dict[str, np.ndarray]:
    """Per head, from [H,Q,K] weights: mean entropy (bits) and max weight over queries; the key with
    the most attention on average (favourite) and that average; the most frequent offset key - query
    of each query's strongest key (0 = itself, -1 = the previous token) and the share of queries with it."""
    patterns = np.asarray(patterns, dtype=np.float64)
    if patterns.ndim != 3 or 0 in patterns.shape:
        raise ValueError(f"expected non-empty [head, query, key], got shape {patterns.shape}")
    strongest = patterns.argmax(-1)                                  # [H,Q]
    offsets = strongest - np.arange(patterns.shape[1])[None]         # [H,Q]
    modes = []
    for row in offsets:
        values, counts = np.unique(row, return_counts=True)
        modes.append(int(values[np.argmax(counts)]))                 # ties: the smallest offset
    column_mean = patterns.mean(1)                                   # [H,K]
    return {
        "entropy": entropy_bits(patterns).mean(-1),
        "max_weight": patterns.max(-1).mean(-1),
        "favourite": column_mean.argmax(-1),
        "favourite_weight": column_mean.max(-1),
        "offset": np.array(modes),
        "offset_share": np.array([np.mean(row == m) for row, m in zip(offsets, modes)]),
    }


TRAITS = ("self", "previous", "next", "far", "key", "sharp", "broad", "order")


def head_traits(patterns: np.ndarray, positional: bool) -> list[tuple[str, dict]]:
    """What sets each head of one layer apart from the others, measured: per head a few statistics of its
    [H,Q,K] weights, and for each head the one in which it stands furthest above the layer's mean (in
    standard deviations over the heads), with its value. Statistics: "key" (mean weight of its favourite key:
    share, index), "sharp" (mean max weight: share), "broad" (mean entropy: bits, and n = 2^bits keys);
    positional (queries and keys from one sequence): "self", "previous", "next" (mean weight on the key at
    offset 0, -1, +1: share), "far" (mean |key - query| under the weights: distance); otherwise "order"
    (correlation of the query's position with its mean key position: r, cross-attention following the
    source). Each statistic names at most one head (the one furthest above the mean in it) while a head has
    another statistic above the mean left. A statistic equal for every head (e.g. "next" under the causal
    mask) tells none apart and is skipped; with one head, or all alike, a head is described by its favourite
    key."""
    a = np.asarray(patterns, dtype=np.float64)
    if a.ndim != 3 or 0 in a.shape:
        raise ValueError(f"expected non-empty [head, query, key], got shape {a.shape}")
    n_heads, n_q, n_k = a.shape
    column_mean = a.mean(1)                                                       # [H,K]
    p = np.clip(a, 1e-12, 1.0)
    bits = -(a * np.log2(p)).sum(-1).mean(-1)                                     # [H]
    stats = {"key": column_mean.max(-1), "sharp": a.max(-1).mean(-1), "broad": bits}
    values = {h: {"key": {"share": float(column_mean[h].max()), "index": int(column_mean[h].argmax())},
                  "sharp": {"share": float(stats["sharp"][h])},
                  "broad": {"bits": float(bits[h]), "n": float(2 ** bits[h])}} for h in range(n_heads)}
    q_pos, k_pos = np.arange(n_q)[:, None], np.arange(n_k)[None, :]
    if positional and n_q == n_k:
        for name, offset in (("self", 0), ("previous", -1), ("next", 1)):
            diag = np.diagonal(a, offset=offset, axis1=1, axis2=2)                # [H, Q-|offset|]
            stats[name] = diag.mean(-1) if diag.shape[-1] else np.zeros(n_heads)
            for h in range(n_heads):
                values[h][name] = {"share": float(stats[name][h])}
        stats["far"] = (a * np.abs(k_pos - q_pos)[None]).sum(-1).mean(-1)
        for h in range(n_heads):
            values[h]["far"] = {"distance": float(stats["far"][h])}
    elif not positional and n_q >= 3:
        expected = (a * k_pos[None]).sum(-1)                                       # [H,Q] mean key position
        r = np.zeros(n_heads)
        for h in range(n_heads):
            if expected[h].std() > 1e-9:
                r[h] = np.corrcoef(np.arange(n_q), expected[h])[0, 1]
            values[h]["order"] = {"r": float(r[h])}
        stats["order"] = r
    z = {}
    for name, x in stats.items():
        spread = x.std()
        if spread > 1e-9:
            z[name] = (x - x.mean()) / spread
    # Greedy, largest standing first: each statistic names the head that stands out most in it; a head left
    # over (more heads than statistics where it is above the mean) takes its own best one again.
    chosen: dict[int, str] = {}
    for score, h, name in sorted(((z[n][h], h, n) for n in z for h in range(n_heads)), reverse=True):
        if score > 0 and h not in chosen and name not in chosen.values():
            chosen[h] = name
    traits = []
    for h in range(n_heads):
        name = chosen.get(h) or (max(z, key=lambda n: z[n][h]) if z else "key")
        traits.append((name, values[h][name]))
    return traits
