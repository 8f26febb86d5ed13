"""English and 中文: one message catalogue per language (viz/locales/<lang>.json, the same keys in both)
and t(key, **values) to read it in the session's language.

The language is a widget (the sidebar's picker, key "lang") and a URL parameter (`lang=zh`), so a deep
link keeps it. Switching language reruns the page only: models and traces are cached by what they were
made from, never by language. Token labels and the model's translations are never translated.
"""
from __future__ import annotations

import json
import logging
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

LANGS = {"en": "English", "zh": "中文"}
DEFAULT_LANG = "en"
LOCALES = Path(__file__).resolve().parent / "locales"
# Which plural form a count takes (CLDR's rules for these languages): a plural message is two keys in English,
# <key>.one and <key>.other, and one in Chinese, <key>.other (no grammatical number). A third language adds its
# rule here and its file under locales/.
PLURAL_FORM = {"en": lambda n: "one" if n == 1 else "other", "zh": lambda n: "other"}
log = logging.getLogger(__name__)
_said_missing: set[tuple[str, str]] = set()


class KindKeys(NamedTuple):
    """An attention kind's words: its name (titles), its short name (pickers) and one word (compact labels)."""
    title: str
    short: str
    word: str


# The attention kinds (model/capture/schema.py KINDS) and their words: the one table of them.
KIND_KEYS = {"encoder": KindKeys("fig.kind.encoder", "heads.kind.encoder", "attribution.kind.encoder"),
             "decoder": KindKeys("fig.kind.decoder", "heads.kind.decoder", "attribution.kind.decoder"),
             "cross": KindKeys("fig.kind.cross", "heads.kind.cross", "attribution.kind.cross")}
# A two-style model's styles (model/io/tokenizer.py STYLE_TOKENS) -> their words: the sidebar's and the lesson's
STYLE_KEYS = {"modern": "sidebar.style.modern", "bible": "sidebar.style.bible"}


@cache
def catalogue(lang: str) -> dict[str, str]:
    return json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))


def placeholders(message: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(message) if name}


def current_lang() -> str:
    """The session's language. Streamlit is imported here only, so the catalogue can be read without it
    (the offline lesson, the command line)."""
    import streamlit as st

    lang = st.session_state.get("lang", DEFAULT_LANG)
    return lang if lang in LANGS else DEFAULT_LANG


def message(lang: str, key: str, **values) -> str:
    """The message `key` in `lang`, with {placeholders} filled in. A key the language lacks is shown in English
    (a key English lacks too, as itself) and logged once: a page keeps working with a gap in a catalogue."""
    text = catalogue(lang).get(key)
    if text is None:
        text = catalogue(DEFAULT_LANG).get(key, key)
        if (lang, key) not in _said_missing:
            _said_missing.add((lang, key))
            log.warning("message %r is missing from locales/%s.json; shown %s", key, lang,
                        "in English" if text != key else "as its key")
    return text.format(**values) if values else text


def plural_message(lang: str, key: str, n: int, **values) -> str:
    """The plural message `key` for the count n in `lang` ({n} filled in): <key>.one or <key>.other."""
    return message(lang, f"{key}.{PLURAL_FORM[lang](n)}", n=n, **values)


def error_text(error: Exception) -> str:
    """An exception's message for the reader: in the session's language when it carries a message key
    (model.errors.InputError, viz.upload.UploadError), else its own (English) text."""
    key = getattr(error, "key", None)
    if key is None:
        return str(error)
    return t(key if key.startswith("upload.") else f"input.{key}", **getattr(error, "values", {}))


def t(key: str, **values) -> str:
    """The message `key` in the session's language, with {placeholders} filled in."""
    return message(current_lang(), key, **values)


def tn(key: str, n: int, **values) -> str:
    """The plural message `key` for the count n in the session's language: tn("heads.abl.n_off", 1)."""
    return plural_message(current_lang(), key, n, **values)


def kind_title(kind: str) -> str:
    """An attention kind's name in the session's language: "Encoder self-attention", "编码器自注意力"."""
    return t(KIND_KEYS[kind].title)


def kind_short(kind: str) -> str:
    """An attention kind's short name (a picker's option): "encoder self", "编码器自注意力"."""
    return t(KIND_KEYS[kind].short)


def kind_word(kind: str) -> str:
    """An attention kind in one word (a compact label): "encoder", "编码器"."""
    return t(KIND_KEYS[kind].word)


@dataclass(frozen=True)
class CatalogueWords:
    """The catalogue in one language, as the figure builders take their words (viz/figures/style.Words)."""
    lang: str

    def __call__(self, key: str, **values) -> str:
        return message(self.lang, key, **values)

    def kind(self, kind: str) -> str:
        return message(self.lang, KIND_KEYS[kind].title)


def words(lang: str | None = None) -> CatalogueWords:
    """The words a figure builder takes, in `lang` (None: the session's language)."""
    return CatalogueWords(lang or current_lang())
