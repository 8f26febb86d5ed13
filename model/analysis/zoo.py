"""The attention zoo: score functions and weightings from the history of attention, in plain numpy.

Every function takes queries q [T,d] and keys k [S,d] (and values v [S,dv]) and returns [T,S] scores
or weights, so the same code runs on a toy example and on one head's Q, K, V captured from the model.
The bilinear (general) and additive scores need weight matrices the Transformer never learned. Given
`weights` (a model folder's zoo_fit.safetensors, fitted to one head by model/analysis/zoo_fit.py) they use
those; otherwise they are drawn at random from a fixed seed (`random_weights`). Wherever they are shown, the
words say which.
"""
from __future__ import annotations

import numpy as np

from model.analysis import attention_math

SCORES = ("dot", "scaled", "general", "additive", "cosine")
WEIGHTINGS = ("soft", "hard", "local")
CENTRES = ("argmax", "monotonic")
DEFAULT_SEED = 0


def _check_qk(q, k) -> tuple[np.ndarray, np.ndarray]:
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    if q.ndim != 2 or k.ndim != 2:
        raise ValueError(f"queries and keys must be 2-D [n, d], got {q.shape} and {k.shape}")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"queries have {q.shape[1]} dimensions but keys have {k.shape[1]}")
    if q.shape[0] == 0 or k.shape[0] == 0 or q.shape[1] == 0:
        raise ValueError("need at least one query, one key and one dimension")
    if not (np.isfinite(q).all() and np.isfinite(k).all()):
        raise ValueError("queries and keys must be finite numbers")
    return q, k


def random_weights(d: int, seed: int = DEFAULT_SEED, hidden: int | None = None) -> dict[str, np.ndarray]:
    """Fixed random (NOT learned) parameters for the general and additive scores, variance 1/fan-in.

    W [d,d] for q^T W k; W1, W2 [h,d] and v [h] for v^T tanh(W1 q + W2 k). Same seed, same numbers.
    """
    hidden = hidden or d
    rng = np.random.default_rng(seed)
    return {
        "W": rng.normal(0.0, 1.0 / np.sqrt(d), size=(d, d)),
        "W1": rng.normal(0.0, 1.0 / np.sqrt(d), size=(hidden, d)),
        "W2": rng.normal(0.0, 1.0 / np.sqrt(d), size=(hidden, d)),
        "v": rng.normal(0.0, 1.0 / np.sqrt(hidden), size=hidden),
    }


def _check_weights(kind: str, weights: dict, d: int) -> dict[str, np.ndarray]:
    """The general score's W [d,d] or the additive score's W1, W2 [h,d] and v [h], as float arrays."""
    names = ("W",) if kind == "general" else ("W1", "W2", "v")
    missing = [n for n in names if n not in weights]
    if missing:
        raise ValueError(f"the {kind} score needs weights {', '.join(names)}; missing {', '.join(missing)}")
    p = {n: np.asarray(weights[n], dtype=float) for n in names}
    if kind == "general" and p["W"].shape != (d, d):
        raise ValueError(f"W must be [{d},{d}] for {d}-dimensional queries and keys, got {list(p['W'].shape)}")
    if kind == "additive":
        h = p["v"].shape[0] if p["v"].ndim == 1 else -1
        if h < 1 or p["W1"].shape != (h, d) or p["W2"].shape != (h, d):
            raise ValueError(f"W1, W2 must be [h,{d}] and v [h], got {list(p['W1'].shape)}, {list(p['W2'].shape)}, "
                             f"{list(p['v'].shape)}")
    if not all(np.isfinite(a).all() for a in p.values()):
        raise ValueError(f"the {kind} score's weights must be finite numbers")
    return p


def scores(kind: str, q, k, weights: dict | None = None, seed: int = DEFAULT_SEED) -> np.ndarray:
    """[T,S] compatibility of every query with every key under one of SCORES. The general and additive scores
    use `weights` (W; W1, W2, v: e.g. one head's fitted ones, zoo_fit.ZooFit.head) when given, else
    random_weights(d, seed); the other scores have no weights and ignore both."""
    q, k = _check_qk(q, k)
    d = q.shape[1]
    if kind == "dot":
        return q @ k.T
    if kind == "scaled":
        return q @ k.T / np.sqrt(d)
    if kind in ("general", "additive"):
        p = _check_weights(kind, random_weights(d, seed) if weights is None else weights, d)
        if kind == "general":
            return q @ p["W"] @ k.T
        hidden = np.tanh((q @ p["W1"].T)[:, None, :] + (k @ p["W2"].T)[None, :, :])   # [T,S,h]
        return hidden @ p["v"]
    if kind == "cosine":
        qn = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        kn = k / np.maximum(np.linalg.norm(k, axis=1, keepdims=True), 1e-12)
        return qn @ kn.T
    raise ValueError(f"unknown score {kind!r}; choose from {', '.join(SCORES)}")


def _allowed(s: np.ndarray, mask) -> np.ndarray:
    if mask is None:
        return np.ones_like(s, dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != s.shape:
        raise ValueError(f"mask shape {mask.shape} does not match scores {s.shape}")
    if not mask.any(axis=1).all():
        raise ValueError("every query needs at least one key it may attend to")
    return mask


def soft(s, mask=None) -> np.ndarray:
    """Soft attention: each row a probability distribution over the allowed keys."""
    s = np.asarray(s, dtype=float)
    return attention_math.softmax(np.where(_allowed(s, mask), s, -np.inf))


def hard(s, mask=None) -> np.ndarray:
    """Hard attention, shown as its deterministic limit: all weight on the best key (one-hot argmax)."""
    s = np.asarray(s, dtype=float)
    allowed = _allowed(s, mask)
    best = np.argmax(np.where(allowed, s, -np.inf), axis=1)
    out = np.zeros_like(s)
    out[np.arange(s.shape[0]), best] = 1.0
    return out


def local_centres(s, centre: str = "argmax", mask=None) -> np.ndarray:
    """Aligned position p_t per query: the best-scoring key, or monotonic round(t*S/T) (clipped)."""
    s = np.asarray(s, dtype=float)
    n_q, n_k = s.shape
    if centre == "argmax":
        return np.argmax(np.where(_allowed(s, mask), s, -np.inf), axis=1)
    if centre == "monotonic":
        return np.clip(np.rint(np.arange(n_q) * n_k / n_q), 0, n_k - 1).astype(int)
    raise ValueError(f"unknown centre {centre!r}; choose from {', '.join(CENTRES)}")


def local(s, half_width: int, centre: str = "argmax", mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Luong's local attention: softmax inside the window [p_t-D, p_t+D], times a Gaussian
    exp(-(s-p_t)^2 / (2 sigma^2)) with sigma = D/2. Zero outside the window; rows sum to at most 1
    (the Gaussian shrinks them, as in the paper). Returns (weights [T,S], centres [T])."""
    if int(half_width) != half_width or half_width < 0:
        raise ValueError(f"window half-width D must be a whole number >= 0, got {half_width}")
    s = np.asarray(s, dtype=float)
    allowed = _allowed(s, mask)
    centres = local_centres(s, centre, mask)
    positions = np.arange(s.shape[1])[None, :]                                # [1,S]
    offset = positions - centres[:, None]                                     # [T,S]
    window = (np.abs(offset) <= half_width) & allowed
    window[~window.any(axis=1)] = allowed[~window.any(axis=1)]  # a centre only on masked keys: fall back
    inside = soft(s, window)
    sigma = half_width / 2
    gauss = np.exp(-offset ** 2 / (2 * sigma ** 2)) if sigma > 0 else (offset == 0).astype(float)
    return inside * gauss * window, centres


def weigh(s, weighting: str, mask=None, half_width: int = 2, centre: str = "argmax") -> np.ndarray:
    """Scores [T,S] -> weights [T,S] under one of WEIGHTINGS."""
    if weighting == "soft":
        return soft(s, mask)
    if weighting == "hard":
        return hard(s, mask)
    if weighting == "local":
        return local(s, half_width, centre, mask)[0]
    raise ValueError(f"unknown weighting {weighting!r}; choose from {', '.join(WEIGHTINGS)}")


def attend(weights, v) -> np.ndarray:
    """Output per query: the weighted sum of the values, weights [T,S] @ v [S,dv] -> [T,dv]."""
    weights, v = np.asarray(weights, dtype=float), np.asarray(v, dtype=float)
    if v.ndim != 2 or weights.ndim != 2 or weights.shape[1] != v.shape[0]:
        raise ValueError(f"weights {weights.shape} and values {v.shape} do not fit: need [T,S] and [S,dv]")
    return weights @ v
