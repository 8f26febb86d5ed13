"""Word order: swap two words of a sentence, and line up the attention maps of two sentences made
of the same tokens in a different order. Pure numpy.

Permutation convention, used everywhere: perm[k] is the position in A of B's token k
(ids_b[k] == ids_a[perm[k]]).
"""
from __future__ import annotations

import re
from collections import defaultdict, deque
from typing import Sequence

import numpy as np

_WORD = re.compile(r"\w+")


def swap_two_words(text: str) -> str:
    """The sentence with its two longest different words swapped (ties: first with last), punctuation kept.

    "The man went from Beijing to Shanghai." -> "The man went from Shanghai to Beijing."
    Returns the text unchanged when it has fewer than two different words. (A word that occurs twice is not
    swapped with itself: a long sentence's repeated longest word left B the same as A.)
    """
    words = list(_WORD.finditer(text))
    first = max(range(len(words)), key=lambda k: (len(words[k].group()), -k), default=None)
    if first is None:
        return text
    others = [k for k in range(len(words)) if words[k].group() != words[first].group()]
    if not others:
        return text
    second = max(others, key=lambda k: (len(words[k].group()), k))
    a, b = sorted((words[first], words[second]), key=lambda m: m.start())
    return text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():]


def token_permutation(ids_a: Sequence[int], ids_b: Sequence[int]) -> list[int] | None:
    """perm with ids_b[k] == ids_a[perm[k]] (equal tokens matched in order), or None if the two
    sequences are not rearrangements of each other. Without positional encoding the encoder is
    blind to such a rearrangement: B's maps would be A's, rows and columns permuted."""
    if sorted(ids_a) != sorted(ids_b):
        return None
    where: dict[int, deque] = defaultdict(deque)
    for k, t in enumerate(ids_a):
        where[int(t)].append(k)
    return [where[int(t)].popleft() for t in ids_b]


_MARKER = re.compile(r"<[^<>]+>")      # <modern>, </s>: a token the tokenizer adds or a style, not a word


def first_two_words(tokens: Sequence[str]) -> tuple[int, int]:
    """The positions of the first two tokens that are words (letters or digits; not a marker such as the style
    token <modern> or </s>): the word swap's default. (0, 1) when the sentence has fewer than two."""
    words = [i for i, token in enumerate(tokens) if _WORD.search(token) and not _MARKER.fullmatch(token.strip())]
    return (words[0], words[1]) if len(words) >= 2 else (0, 1)


def swap_permutation(n: int, a: int, b: int) -> np.ndarray:
    """perm with perm[a] = b, perm[b] = a: the swapped sentence is ids[perm] (the module's convention)."""
    if not (0 <= a < n and 0 <= b < n):
        raise ValueError(f"positions {a}, {b} must be in 0…{n - 1}")
    perm = np.arange(n)
    perm[[a, b]] = perm[[b, a]]
    return perm


def permuted_pattern(patterns, perm) -> np.ndarray:
    """Attention [..., S, S] of the permuted input IF attention were order-blind: P[perm][:, perm]."""
    patterns = np.asarray(patterns)
    perm = np.asarray(perm)
    if patterns.shape[-1] != len(perm) or patterns.shape[-2] != len(perm):
        raise ValueError(f"pattern shape {patterns.shape} does not match a permutation of {len(perm)}")
    return patterns[..., perm, :][..., :, perm]


def reorder_to(matrix_b, perm) -> np.ndarray:
    """B's [S,S] map moved to A's order (the inverse of permuted_pattern): out[perm[k], perm[l]] = B[k, l]."""
    b = np.asarray(matrix_b)
    if b.ndim != 2:
        raise ValueError(f"expected a square map matching the permutation, got {b.shape}")
    return permuted_pattern(b, np.argsort(np.asarray(perm)))
