"""English and 中文: one message catalogue per language (viz/locales/<lang>.json, the same keys in both)
and t(key, **values) to read it in the session's language.

The language is a widget (the sidebar's picker, key "lang") and a URL parameter (`lang=zh`), so a deep
link keeps it. Switching language reruns the page only: models and traces are cached by what they were
made from, never by language. Token labels and the model's translations are never translated.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, NamedTuple

from viz.core.catalogue import (DEFAULT_LANG, LANGS, LOCALES, PLURAL_FORM, catalogue, message,  # noqa: F401
                           placeholders, plural_message)


def catalogue_keys(prefix: str, *options: str) -> Mapping[str, str]:
    """option -> "prefix.option" for each option, in order (read-only): the catalogue keys of one enumeration,
    declared once. Written with literal arguments, so the catalogue test (tests/test_i18n_catalogue.py) finds
    each key from the declaration without a table that spells every key out."""
    return MappingProxyType({option: f"{prefix}.{option}" for option in options})


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
STYLE_KEYS = catalogue_keys("sidebar.style", "modern", "bible")


def current_lang() -> str:
    """The session's language (the view's `lang`). The view, and with it Streamlit, is imported here only, so
    the catalogue can be read without it (the offline lesson, the command line)."""
    from viz.core import view

    lang = view.get(view.LANG, default=DEFAULT_LANG)
    return lang if lang in LANGS else DEFAULT_LANG


def error_text(error: Exception) -> str:
    """An exception's message for the reader: in the session's language when it carries a message key
    (model.errors.InputError, viz.core.upload.UploadError), else its own (English) text."""
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
