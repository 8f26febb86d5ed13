"""User text shown safely: never as HTML, and with Markdown syntax neutralised where Markdown renders."""
from __future__ import annotations

import re

from model.capture import schema

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


_WORD_JOINER = "\u2060"   # invisible; keeps ':' from opening an emoji or icon shortcode


def plain(text: str, limit: int = 300) -> str:
    """Escape Markdown (links, images, HTML tags) so st.markdown/st.warning show the characters as typed.
    Streamlit also turns `:thumbsdown:`-like and `:material/...:` shortcodes into pictures even when the
    colons are escaped, so an invisible word joiner follows every colon."""
    text = text if len(text) <= limit else text[:limit] + "…"
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace(":", ":" + _WORD_JOINER)


def position_labels(tokens: list[str]) -> list[str]:
    """'3 ▁house': position-prefixed so repeated tokens stay distinct on a categorical axis."""
    return [f"{i} {t}" for i, t in enumerate(tokens)]


_MARKER = re.compile(r"</?[a-z]+>")     # <s>, </s>, <pad>, a style's <modern> (model/io/tokenizer.py)


def first_word(tokens: list[str]) -> int:
    """The position of the first token that is a piece of the sentence, not a marker the model reads (a style
    token such as <modern>, <s>, </s>): where a lesson's selected query starts. 0 when there is none."""
    return next((i for i, token in enumerate(tokens) if not _MARKER.fullmatch(token)), 0)


def attention_labels(meta: dict, kind: str) -> tuple[list[str], list[str]]:
    """(row, column) labels of one attention kind's maps: decoder rows name the token each position
    predicts, columns what the queries can see (model/capture/schema.py says why)."""
    return position_labels(schema.query_tokens(meta, kind)), position_labels(schema.key_tokens(meta, kind))
