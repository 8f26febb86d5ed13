"""Is a sentence written in English's alphabet? A pure function of the text (no torch, no model), for a notice:
the shipped model reads English, and Chinese or emoji typed into it come out as Spanish nonsense. Nothing is
refused: a class may want to watch exactly that.

not_english(text) names the writing that most of the text's letters are in when at least FOREIGN_SHARE of them
are outside the Latin alphabet: "cjk" (Chinese, Japanese, Korean), "emoji", or "other" (Cyrillic, Arabic,
Greek, …). Latin letters with accents count as Latin: a French or Spanish sentence is not caught (its letters
cannot tell it from English).
"""
from __future__ import annotations

import unicodedata
from collections import Counter

FOREIGN_SHARE = 0.3            # "I love 猫" (1 of 6 letters) passes; "我爱猫" or "🐱🐶" does not
KINDS = ("cjk", "emoji", "other")
IN_ENGLISH = {"cjk": "Chinese, Japanese or Korean characters", "emoji": "emoji",
              "other": "letters of an alphabet other than English's"}     # the command line's words (the app's: viz/locales)
CJK_WORDS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "FULLWIDTH", "IDEOGRAPHIC")


def not_english(text: str) -> str | None:
    """One of KINDS when most of `text`'s letters (and emoji) are not in the Latin alphabet; None otherwise,
    and for text without letters (numbers, punctuation)."""
    signs = [ch for ch in text if ch.isalpha() or _is_emoji(ch)]
    foreign = [kind for kind in map(_kind, signs) if kind is not None]
    if not foreign or len(foreign) < FOREIGN_SHARE * len(signs):
        return None
    return Counter(foreign).most_common(1)[0][0]


def _is_emoji(ch: str) -> bool:
    return unicodedata.category(ch) == "So" and (ord(ch) >= 0x1F000 or 0x2600 <= ord(ch) < 0x2800)


def _kind(ch: str) -> str | None:
    """None for a Latin letter; else which KIND of writing `ch` is."""
    if _is_emoji(ch):
        return "emoji"
    name = unicodedata.name(ch, "")
    if name.startswith("LATIN") or ord(ch) < 0x250:
        return None
    return "cjk" if name.startswith(CJK_WORDS) else "other"


def english_notice(text: str) -> str | None:
    """The command line's note for a model that reads English (Tokenizer.reads_english), or None."""
    kind = not_english(text)
    return None if kind is None else (f"the model reads English; this is mostly {IN_ENGLISH[kind]}, translated anyway "
                                      "(expect nonsense)")
