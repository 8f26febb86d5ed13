"""English and 中文: one message catalogue per language (viz/locales/<lang>.json, the same keys in both)
and t(key, **values) to read it in the session's language.

The language is a widget (the sidebar's picker, key "lang") and a URL parameter (`lang=zh`), so a deep
link keeps it. Switching language reruns the page only: models and traces are cached by what they were
made from, never by language. Token labels and the model's translations are never translated.
"""
from __future__ import annotations

import json
import string
from functools import cache
from pathlib import Path

LANGS = {"en": "English", "zh": "中文"}
DEFAULT_LANG = "en"
LOCALES = Path(__file__).resolve().parent / "locales"
# The attention kinds' names (model/capture/schema.py KINDS), as every page and figure titles them.
KIND_KEYS = {"encoder": "fig.kind.encoder", "decoder": "fig.kind.decoder", "cross": "fig.kind.cross"}


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
    """The message `key` in `lang`, with {placeholders} filled in."""
    text = catalogue(lang)[key]
    return text.format(**values) if values else text


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


def kind_title(kind: str) -> str:
    """An attention kind's name in the session's language: "Encoder self-attention", "编码器自注意力"."""
    return t(KIND_KEYS[kind])
