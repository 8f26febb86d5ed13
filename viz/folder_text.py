"""Text from a model folder (its README.md model card) shown as Markdown without what Markdown could do to
a viewer: a model folder is not always the authors' own (anyone can drop one into TRANSFORMER_VIZ_MODELS).

- an image (`![i](http://host/beacon.png)`) would make every viewer's browser fetch that address: its
  opening `![` is escaped, so it shows as the characters written and nothing is fetched;
- `<` is written as `&lt;`, so no HTML tag (an <img>, an autolink) reaches the page;
- Streamlit's shortcodes (`:red[...]`, `:material/icon:`, `:smile:`) get an invisible word joiner after
  their colon, so they show as typed instead of drawing colours and pictures.

Headings, tables, lists, emphasis, links (followed only when clicked) and code stay as written; inside code
spans and fenced blocks nothing is changed, since Markdown does not render there.
"""
from __future__ import annotations

import re

WORD_JOINER = "\u2060"
_CODE = re.compile(r"(```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`)", re.S)
_SHORTCODE = re.compile(r":(?=material/|[A-Za-z][\w+\-]*[\[:])")


def card_markdown(text: str) -> str:
    """`text` (Markdown) with images, HTML and shortcodes neutralised outside code."""
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):           # even parts: outside code
        part = parts[i].replace("![", "!\\[").replace("<", "&lt;")
        parts[i] = _SHORTCODE.sub(":" + WORD_JOINER, part)
    return "".join(parts)


def in_code(value) -> str:
    """A value from a folder's file for inside a Markdown code span the template writes: no backtick can close
    the span early (Markdown and shortcodes are not read inside it)."""
    return str(value).replace("`", "'").replace("\n", " ")
