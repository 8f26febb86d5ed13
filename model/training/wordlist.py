"""The word list of sentences a teacher would not project (wordlist.txt beside this file), as a test:
`is_clean(text)`. It filters the training data of both corpora and every sentence the app suggests."""
from __future__ import annotations

import functools
import re
from pathlib import Path

WORDLIST = Path(__file__).with_name("wordlist.txt")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@functools.cache
def _patterns() -> tuple[frozenset[str], tuple[str, ...]]:
    """(whole words, prefixes) from the list: 'fuck*' is a prefix, 'sex' a whole word."""
    entries = [line.strip().lower() for line in WORDLIST.read_text(encoding="utf-8").splitlines()]
    entries = [e for e in entries if e and not e.startswith("#")]
    return (frozenset(e for e in entries if not e.endswith("*")),
            tuple(e[:-1] for e in entries if e.endswith("*")))


def is_clean(text: str) -> bool:
    words, prefixes = _patterns()
    return not any(w in words or w.startswith(prefixes) for w in _WORD.findall(text.lower()))
