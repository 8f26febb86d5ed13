"""Toy sequence tasks: copy, reverse, sort over a small alphabet.

Small enough to train in a minute on a laptop CPU, and each has a known right attention pattern:
reverse gives an anti-diagonal cross-attention, copy a diagonal, sort a permutation.
"""
from __future__ import annotations

import random


from model.inference.decode import pad_batch
from model.io.tokenizer import Tokenizer

TASKS = ("copy", "reverse", "sort")
SYMBOLS = list("abcdefghij")


def toy_tokenizer() -> Tokenizer:
    return Tokenizer.word_level(SYMBOLS)


def solve(task: str, seq: list[str]) -> list[str]:
    if task == "copy":
        return list(seq)
    if task == "reverse":
        return seq[::-1]
    if task == "sort":
        return sorted(seq)
    raise ValueError(f"unknown task {task!r}; choose from {TASKS}")


def sample(task: str, rng: random.Random, min_len: int = 3, max_len: int = 8) -> tuple[str, str]:
    seq = [rng.choice(SYMBOLS) for _ in range(rng.randint(min_len, max_len))]
    return " ".join(seq), " ".join(solve(task, seq))


def make_batch(task: str, n: int, rng: random.Random, tok: Tokenizer, min_len=3, max_len=8):
    """(src [B,S], tgt_in [B,T], tgt_out [B,T]): decoder input is the target shifted right."""
    pairs = [sample(task, rng, min_len, max_len) for _ in range(n)]
    src = pad_batch([tok.encode(s) for s, _ in pairs])
    tgt = [tok.encode(t) for _, t in pairs]
    tgt_in = pad_batch([[1] + t[:-1] for t in tgt])
    tgt_out = pad_batch(tgt)
    return src, tgt_in, tgt_out
