"""Pure maths on an RNN encoder-decoder's attention (model/nn/rnn.py), beside the Transformer's: the zoo's
weightings applied to the RNN's own scores, where two alignments agree, how much the context moves from step
to step (not at all without attention: one vector for the whole sentence)."""
from __future__ import annotations

import numpy as np

from model.analysis import zoo


def weightings(scores, half_width: int = 1, centre: str = "argmax") -> dict[str, np.ndarray]:
    """{weighting: [T,S] weights} for each of zoo.WEIGHTINGS on scores [T,S] (-inf where the key is padding):
    soft is the model's own softmax; hard and local re-weigh the same scores, as the Attention zoo does."""
    scores = np.asarray(scores, dtype=float)
    real = np.isfinite(scores)
    finite = np.where(real, scores, 0.0)
    return {w: zoo.weigh(finite, w, real, half_width, centre) for w in zoo.WEIGHTINGS}


def same_focus(a, b) -> tuple[int, int]:
    """(rows where two alignments [T,S] put their largest weight on the same key, rows compared): the first
    min(T_a, T_b) rows, over the keys both have."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rows, keys = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    same = a[:rows, :keys].argmax(1) == b[:rows, :keys].argmax(1)
    return int(same.sum()), rows


def context_change(context) -> float:
    """Largest distance of any step's context c_i [T,D] from the first step's, over the first's length: 0 when
    every step reads one and the same vector."""
    context = np.asarray(context, dtype=float)
    if context.ndim != 2 or context.shape[0] == 0:
        raise ValueError(f"need contexts [steps, dims], got shape {context.shape}")
    first = context[0]
    return float(np.linalg.norm(context - first, axis=1).max() / max(np.linalg.norm(first), 1e-12))
