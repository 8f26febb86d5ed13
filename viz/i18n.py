"""English and 中文: one message catalogue per language (viz/locales/<lang>.json, the same keys in both)
and t(key, **values) to read it in the session's language.

The language is a widget (the sidebar's picker, key "lang") and a URL parameter (`lang=zh`), so a deep
link keeps it. Switching language reruns the page only: models and traces are cached by what they were
made from, never by language. Token labels and the model's translations are never translated.
"""
from __future__ import annotations

from viz.catalogue import (DEFAULT_LANG, LANGS, LOCALES, PLURAL_FORM, catalogue, message,  # noqa: F401
                           placeholders, plural_message)

# The attention kinds' names (model/capture/schema.py KINDS), as every page and figure titles them.
KIND_KEYS = {"encoder": "fig.kind.encoder", "decoder": "fig.kind.decoder", "cross": "fig.kind.cross"}
# A two-style model's styles (model/io/tokenizer.py STYLE_TOKENS) -> their words: the sidebar's and the lesson's
STYLE_KEYS = {"modern": "sidebar.style.modern", "bible": "sidebar.style.bible"}


def current_lang() -> str:
    """The session's language (the view's `lang`). The view, and with it Streamlit, is imported here only, so
    the catalogue can be read without it (the offline lesson, the command line)."""
    from viz import view

    lang = view.get(view.LANG, default=DEFAULT_LANG)
    return lang if lang in LANGS else DEFAULT_LANG


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
    return t(KIND_KEYS[kind])
