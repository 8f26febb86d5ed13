"""LayerNorm and BatchNorm redone in numpy, their statistics, and the residual stream's size at every stage:
for the LayerNorm page, the multi-head page's check and the lesson (pure numpy: no torch, no streamlit)."""
from __future__ import annotations

import numpy as np

from model.capture import schema


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * gain + bias over the last axis (biased variance, as the model)."""
    x = np.asarray(x, dtype=np.float64)
    return normalize(x, -1, eps) * np.asarray(gain, dtype=np.float64) + np.asarray(bias, dtype=np.float64)


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
