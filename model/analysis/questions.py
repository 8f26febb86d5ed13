"""Questions a class answers before the model does, made from a real trace: pure functions on its arrays.

Each returns a `Quiz`: which question (a short key the app's catalogue words), its fields, the choices (token
strings or head numbers) and the index of the model's own answer. Choices keep sentence order (or the head
order), so the answer's place says nothing. No torch: the arrays are a Trace's numpy arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from model.analysis.heads import head_statistics

MAX_CHOICES = 8       # a longer sentence offers this many: the answer and the likeliest others
ALL_CHOICES_UP_TO = 12   # a sentence of up to this many tokens offers every one (one left out said "not me")


@dataclass(frozen=True)
class Quiz:
    key: str                          # cross_look, next_token, positional_head
    fields: dict = field(default_factory=dict)
    choices: tuple[str, ...] = ()
    answer: int = 0


def token_choices(tokens: Sequence[str]) -> list[str]:
    """Tokens as a reader picks them: the word piece's marker dropped, a repeated token numbered by position."""
    words = [str(tok).replace("▁", " ").strip() or str(tok) for tok in tokens]
    seen = {w: words.count(w) for w in words}
    return [f"{w} ({i})" if seen[w] > 1 else w for i, w in enumerate(words)]


def _kept(weights: np.ndarray, limit: int) -> list[int]:
    """The positions a question offers, in sentence order: every one of a short sentence (up to ALL_CHOICES_UP_TO),
    else the `limit` heaviest: the answer and the distractors the head itself finds likeliest, so no choice left
    out was more plausible than one kept."""
    if len(weights) <= max(limit, ALL_CHOICES_UP_TO):
        return list(range(len(weights)))
    order = np.argsort(-weights, kind="stable")[:limit]
    return sorted(int(i) for i in order)


def sharpest_row(pattern: np.ndarray) -> int:
    """The query row of an attention map [Q, K] whose strongest weight is largest: its question has a clear
    answer (ties: the first)."""
    return int(np.asarray(pattern).max(-1).argmax())


def cross_look(cross: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str], layer: int, head: int,
               target: int, limit: int = MAX_CHOICES) -> Quiz:
    """Which source token does cross-attention head `head` of `layer` look at most when writing target token
    `target`? cross: the layer's weights [head, target, source]."""
    cross = np.asarray(cross, dtype=np.float64)
    if cross.ndim != 3 or cross.shape[2] != len(src_tokens) or cross.shape[1] != len(tgt_tokens):
        raise ValueError(f"cross-attention weights {cross.shape} do not match {len(tgt_tokens)} target and "
                         f"{len(src_tokens)} source tokens")
    if not (0 <= head < cross.shape[0] and 0 <= target < cross.shape[1]):
        raise ValueError(f"head {head} or target position {target} outside {cross.shape[:2]}")
    weights = cross[head, target]
    kept = _kept(weights, limit)
    labels = token_choices(src_tokens)
    answer = kept.index(int(weights.argmax()))
    return Quiz("cross_look", {"layer": layer, "head": head, "target": token_choices(tgt_tokens)[target],
                               "position": target}, tuple(labels[i] for i in kept), answer)


def next_token(logits_row: np.ndarray, label_of: Callable[[list[int]], list[str]], written: Sequence[str],
               step: int, n_choices: int = 4) -> Quiz:
    """Which token does the decoder write next, after `written`? logits_row [vocab]: its scores at `step`;
    label_of: token ids -> their strings. Choices: its `n_choices` likeliest tokens, in vocabulary order."""
    logits_row = np.asarray(logits_row, dtype=np.float64)
    if logits_row.ndim != 1 or not 1 <= n_choices <= logits_row.shape[0]:
        raise ValueError(f"expected one row of logits with at least {n_choices} entries, got {logits_row.shape}")
    top = np.argsort(-logits_row, kind="stable")[:n_choices]
    kept = sorted(int(i) for i in top)
    so_far = "".join(str(tok).replace("▁", " ") for tok in written).strip()
    return Quiz("next_token", {"written": so_far or "…", "step": step}, tuple(token_choices(label_of(kept))),
                kept.index(int(top[0])))


def previous_scores(patterns: np.ndarray, key_labels: Sequence[str], layer: int) -> np.ndarray:
    """[head]: the mean weight each head of an encoder self-attention layer puts on the previous token."""
    return np.nan_to_num([r["prev"] for r in head_statistics(patterns, key_labels, "encoder", layer)], nan=-1.0)


def positional_head(patterns: np.ndarray, key_labels: Sequence[str], layer: int) -> Quiz:
    """Which head of this encoder self-attention layer is the positional one that reads the previous token (the
    most weight on it, averaged over the queries)? patterns [head, query, key]; choices: the head numbers."""
    scores = previous_scores(patterns, key_labels, layer)
    return Quiz("positional_head", {"layer": layer, "share": float(scores.max())},
                tuple(str(h) for h in range(len(scores))), int(scores.argmax()))
