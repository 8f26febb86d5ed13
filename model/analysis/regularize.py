"""The feed-forward network, label smoothing and dropout on one sentence, from its trace (pure numpy).

- FFN: which hidden units (after ReLU) fire for which tokens, and what the FFN adds to the residual stream.
- Label smoothing: the target the model was trained toward, q = (1-ε)·one-hot + ε/V, and the loss with and
  without it, as torch's F.cross_entropy(label_smoothing=ε) computes it (model/training/runtime.train_step).
- Dropout on attention weights, as model/nn/layers.attention does in training (inverted dropout, F.dropout):
  each weight is zeroed with probability p and the survivors are scaled by 1/(1-p). Rows are NOT
  renormalised: they sum to 1 only on average over samples (the expectation of each weight is unchanged).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.analysis.attention_math import log_softmax
from model.capture import schema

TRAINING_SMOOTHING = 0.1   # ε of the translation models (model/cli/train.py's default; the en-es model card), as the paper
PAPER_DROPOUT = 0.1        # P_drop of the paper's base model
NEAR_ZERO = 0.3            # |cos| under this: about at right angles (over 72°), "a new direction"


def trained_plainly(config) -> bool:
    """The toy models are trained with neither dropout nor label smoothing (model/training/toy.train_toy:
    dropout 0 in their config, smoothing=0.0); translation models with both (0.1, the paper's)."""
    return float(config.dropout) == 0.0


def shown_dropout(config) -> float:
    """The model's own dropout rate, or the paper's for a model trained without dropout (a toy)."""
    return float(config.dropout) or PAPER_DROPOUT


# -- feed-forward -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FeedForward:
    hidden: np.ndarray      # [T, d_ff] max(0, x W1 + b1): the hidden units
    out: np.ndarray         # [T, D] W2 · hidden + b2: what the FFN adds to the residual stream
    resid_in: np.ndarray    # [T, D] the residual stream it is added to
    summed: np.ndarray      # [T, D] resid_in + out (post-norm: the input of norm_ff; pre-norm: resid_post)

    @property
    def active(self) -> np.ndarray:          # [T] share of hidden units above 0, per token
        return (self.hidden > 0).mean(axis=1)

    @property
    def out_norm(self) -> np.ndarray:        # [T] ‖FFN(x)‖
        return np.linalg.norm(self.out, axis=1)

    @property
    def resid_norm(self) -> np.ndarray:      # [T] ‖x‖ of the residual stream before the add
        return np.linalg.norm(self.resid_in, axis=1)

    @property
    def cosine(self) -> np.ndarray:          # [T] cos(x, FFN(x)): does it push along or against the stream
        return (self.out * self.resid_in).sum(1) / np.maximum(self.out_norm * self.resid_norm, 1e-12)

    @property
    def direction(self) -> str:
        """How the FFN's writes lie to the stream over all tokens: "new" (every |cos| under NEAR_ZERO: new
        directions), "along" (every cos at least NEAR_ZERO: it partly lengthens what is there), "against"
        (every cos at most -NEAR_ZERO: it partly cancels it), else "mixed"."""
        cos = self.cosine
        if np.all(np.abs(cos) < NEAR_ZERO):
            return "new"
        if np.all(cos >= NEAR_ZERO):
            return "along"
        return "against" if np.all(cos <= -NEAR_ZERO) else "mixed"


def feed_forward(arrays, stack: str, layer: int, norm_first: bool = False) -> FeedForward:
    """The FFN of one layer from a trace's arrays (the trace must hold the ff hooks and the residual stream).
    The residual it is added to: resid_mid (encoder) or resid_cross (decoder); in eval mode (no dropout)
    resid_in + out is exactly what the model sums before norm_ff (post-norm) or resid_post (pre-norm; there
    the FFN reads LN(x), and norm_first only says so)."""
    before = "resid_cross" if stack == "decoder" else "resid_mid"
    hidden = np.asarray(arrays[schema.ff_name(stack, layer, "hidden")], dtype=np.float64)
    out = np.asarray(arrays[schema.ff_name(stack, layer, "out")], dtype=np.float64)
    resid_in = np.asarray(arrays[schema.resid_name(stack, layer, before)], dtype=np.float64)
    return FeedForward(hidden, out, resid_in, resid_in + out)


def top_units(hidden: np.ndarray, per_token: int = 3, limit: int = 24) -> np.ndarray:
    """Hidden units worth showing: each token's `per_token` strongest, then the strongest overall, at
    most `limit`, ordered by the first token that fires them most (so the picture reads as a diagonal)."""
    hidden = np.asarray(hidden, dtype=np.float64)
    if hidden.ndim != 2 or hidden.size == 0:
        raise ValueError(f"hidden must be [tokens, units], got shape {hidden.shape}")
    per_token, limit = max(1, int(per_token)), max(1, int(limit))
    picked: list[int] = []
    for rank in range(per_token):
        for row in hidden:
            unit = int(np.argsort(-row, kind="stable")[rank]) if rank < row.size else None
            if unit is not None and unit not in picked and len(picked) < limit:
                picked.append(unit)
    for unit in np.argsort(-hidden.max(0), kind="stable"):
        if len(picked) >= min(limit, hidden.shape[1]):
            break
        if int(unit) not in picked:
            picked.append(int(unit))
    return np.array(sorted(picked, key=lambda u: (int(hidden[:, u].argmax()), -hidden[:, u].max())), dtype=int)


# -- label smoothing ----------------------------------------------------------------------------------
def smoothed_target(gold, vocab_size: int, eps: float = TRAINING_SMOOTHING) -> np.ndarray:
    """[T, V] q = (1-ε)·one-hot(gold) + ε/V: the gold token gets 1-ε+ε/V, every other token ε/V (torch's
    label_smoothing spreads ε over all V tokens, the gold one included). Each row sums to 1."""
    gold = np.asarray(gold, dtype=int).reshape(-1)
    if not 0 <= eps < 1:
        raise ValueError(f"ε must be in [0, 1), got {eps}")
    if gold.size and (gold.min() < 0 or gold.max() >= vocab_size):
        raise ValueError(f"gold ids must be in 0..{vocab_size - 1}")
    q = np.full((gold.size, vocab_size), eps / vocab_size)
    q[np.arange(gold.size), gold] += 1.0 - eps
    return q


@dataclass(frozen=True)
class Smoothing:
    probs: np.ndarray        # [T, V] the model's predicted distribution
    target: np.ndarray       # [T, V] the label-smoothed target q
    nll: np.ndarray          # [T] -log p(gold): the loss without smoothing
    smoothed: np.ndarray     # [T] -Σ_v q_v log p_v: the loss with smoothing
    floor: np.ndarray        # [T] H(q): the smallest the smoothed loss can be (reached at p = q)
    eps: float

    @property
    def gap(self) -> np.ndarray:             # [T] smoothed - floor = KL(q ‖ p) ≥ 0
        return self.smoothed - self.floor


def smoothing_losses(logits, gold, eps: float = TRAINING_SMOOTHING) -> Smoothing:
    """Per output token t: the loss without smoothing, -log p(y_t), and with it,
    -Σ_v q_v log p_v = (1-ε)·(-log p(y_t)) + ε·mean_v(-log p_v)."""
    logp = log_softmax(logits)                                             # [T, V]
    gold = np.asarray(gold, dtype=int).reshape(-1)
    if logp.ndim != 2 or logp.shape[0] != gold.size:
        raise ValueError(f"logits {logp.shape} need one row per gold token ({gold.size})")
    q = smoothed_target(gold, logp.shape[1], eps)
    nll = -logp[np.arange(gold.size), gold]
    smoothed = -(q * logp).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = -(np.where(q > 0, q * np.log(q), 0.0)).sum(1)
    return Smoothing(np.exp(logp), q, nll, smoothed, floor, float(eps))


def candidates(probs_row: np.ndarray, gold: int, k: int = 6) -> np.ndarray:
    """The gold token, then the k-1 tokens the model finds most probable besides it."""
    order = [int(i) for i in np.argsort(-np.asarray(probs_row), kind="stable") if int(i) != int(gold)]
    return np.array([int(gold)] + order[:max(0, k - 1)], dtype=int)


# -- dropout ------------------------------------------------------------------------------------------
def attention_dropout(weights, p: float, samples: int = 3, seed: int = 0) -> np.ndarray:
    """[samples, ...] the weights as dropout changes them in training: each entry kept with probability
    1-p and then divided by 1-p, else 0 (inverted dropout, as F.dropout in model/nn/layers.attention).
    Seeded: the same seed gives the same samples. Rows are not renormalised (they sum to 1 on average)."""
    weights = np.asarray(weights, dtype=np.float64)
    if not 0 <= p < 1:
        raise ValueError(f"dropout p must be in [0, 1), got {p}")
    rng = np.random.default_rng(seed)
    keep = rng.random((max(1, int(samples)),) + weights.shape) >= p
    return np.where(keep, weights / (1.0 - p), 0.0)
