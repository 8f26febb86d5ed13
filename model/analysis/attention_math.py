"""The arithmetic of one attention sublayer, redone in numpy from a trace to check and explain it.

Pure functions (numpy in, numpy out): no torch, no streamlit. The pages recompute each step from
the captured Q, K, V and weights and compare with what the model itself produced.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.capture import schema


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


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * gain + bias over the last axis (biased variance, as the model)."""
    x = np.asarray(x, dtype=np.float64)
    return normalize(x, -1, eps) * np.asarray(gain, dtype=np.float64) + np.asarray(bias, dtype=np.float64)


# -- LayerNorm and BatchNorm statistics (the LayerNorm page, the multi-head page's check, the lesson) -------
def check_activations(x) -> np.ndarray:
    """x as a float64 [token, feature] matrix, or ValueError."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or 0 in x.shape:
        raise ValueError(f"expected a non-empty [token, feature] matrix, got shape {x.shape}")
    return x


def normalize(x, axis: int, eps: float = 1e-5) -> np.ndarray:
    """(x − mean) / sqrt(var + eps) along one axis, biased variance: the last axis of any array (LayerNorm:
    axis -1, or 1 of a [token, feature] matrix) or axis 0 of a [token, feature] matrix (BatchNorm)."""
    x = np.asarray(x, dtype=np.float64)
    if axis == -1:
        if x.ndim == 0 or x.shape[-1] == 0:
            raise ValueError(f"expected features on the last axis, got shape {x.shape}")
    else:
        x = check_activations(x)
        if axis not in (0, 1):
            raise ValueError("axis must be 1 (per token, LayerNorm) or 0 (per feature, BatchNorm)")
    mean = x.mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axis, keepdims=True) + eps)


def layer_norm_stats(x) -> tuple[np.ndarray, np.ndarray]:
    """LayerNorm statistics: one mean and (biased) std per token, over its features. [T,D] -> [T], [T]."""
    x = check_activations(x)
    return x.mean(axis=1), x.std(axis=1)


def batch_norm_stats(x) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm statistics: one mean and std per feature, over the tokens of the batch. [T,D] -> [D], [D]."""
    x = check_activations(x)
    return x.mean(axis=0), x.std(axis=0)


def batch_norm_drift(x, token: int = 0, eps: float = 1e-5) -> np.ndarray:
    """How one token's BatchNorm output depends on which other tokens share its batch.

    Entry t-1: ‖BN over the first t tokens − BN over all T‖ / ‖BN over all T‖ for `token`, t = token+1 … T.
    LayerNorm's equivalent is 0 for every t: a token's LN output uses only that token.
    """
    x = check_activations(x)
    if not 0 <= token < x.shape[0]:
        raise ValueError(f"token {token} is outside 0…{x.shape[0] - 1}")
    full = normalize(x, 0, eps)[token]
    scale = np.linalg.norm(full) or 1.0
    return np.array([np.linalg.norm(normalize(x[:t], 0, eps)[token] - full) / scale
                     for t in range(token + 1, x.shape[0] + 1)])


def residual_stages(arrays: dict, stack: str, n_layers: int) -> tuple[list[str], np.ndarray]:
    """Per-token L2 norm of the residual stream at every stage of one stack: labels and [stage, token].

    Stages: layer input (resid_pre), after self-attention Add & Norm (resid_mid), after cross-attention
    (decoder: resid_cross), after feed-forward (resid_post).
    """
    if stack not in ("encoder", "decoder"):
        raise ValueError(f"stack must be 'encoder' or 'decoder', not {stack!r}")
    short = "enc" if stack == "encoder" else "dec"
    hooks = [("resid_pre", "embedding"), ("resid_mid", "+attn")]
    if stack == "decoder":
        hooks.append(("resid_cross", "+cross"))
    hooks.append(("resid_post", "+ff"))
    labels, norms = [], []
    for i in range(n_layers):
        for hook, name in hooks:
            if hook == "resid_pre" and i > 0:
                continue  # equals the previous layer's resid_post
            key = schema.resid_name(stack, i, hook)
            if key not in arrays:
                raise KeyError(f"{key} was not captured")
            labels.append(f"{short} embedding" if hook == "resid_pre" else f"{short} L{i} {name}")
            norms.append(np.linalg.norm(np.asarray(arrays[key], dtype=float), axis=-1))
    return labels, np.stack(norms)


def token_norms(x: np.ndarray) -> np.ndarray:
    """L2 norm of each row (one per token)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected [position, feature], got shape {x.shape}")
    return np.linalg.norm(x, axis=1)


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


def head_readings(summary: dict[str, np.ndarray], positional: bool, threshold: float = 0.5) -> list[tuple[str, dict]]:
    """A plain reading of head_summary, one per head: ("position", offset, share) when more than
    `threshold` of the queries share one offset (positional only: queries and keys from one sequence);
    else ("key", index, share) when one favourite key gets more than `threshold` of the attention on
    average; else ("spread", {})."""
    readings = []
    for fav, fav_w, off, share in zip(summary["favourite"], summary["favourite_weight"], summary["offset"],
                                      summary["offset_share"]):
        if positional and share > threshold:
            readings.append(("position", {"offset": int(off), "share": float(share)}))
        elif fav_w > threshold:
            readings.append(("key", {"index": int(fav), "share": float(fav_w)}))
        else:
            readings.append(("spread", {}))
    return readings



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

def linear_arrays(linear) -> tuple[np.ndarray, np.ndarray | None]:
    """(weight [out, in], bias [out] or None) as float64 numpy from anything with .weight/.bias
    (an nn.Linear of the loaded model, or plain arrays): read-only, the model is not touched."""
    def as_numpy(p):
        if p is None:
            return None
        return np.array(p.detach().cpu().numpy() if hasattr(p, "detach") else p, dtype=np.float64)
    return as_numpy(linear.weight), as_numpy(getattr(linear, "bias", None))
