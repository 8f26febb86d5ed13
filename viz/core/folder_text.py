"""Text from a model folder shown without what Markdown could do to a viewer: a model folder is not always the
authors' own (anyone can drop one into TRANSFORMER_VIZ_MODELS), and neither is its name.

The model card (README.md) is parsed by a CommonMark parser (markdown-it-py), not neutralised by patterns:
- raw HTML is off, so `<img …>` or `<script>` is text; entities are decoded and written back escaped;
- an image is drawn as the characters that make it (`![alt](address)`), never as <img>: no viewer's browser
  fetches anything for a card;
- links (clicked only; javascript:, data:, file: are refused by the parser) open in a new tab.
The HTML goes to st.html, so neither Streamlit's Markdown (its `:red[…]` and `:smile:` shortcodes) nor its
LaTeX reads the card again. Headings, tables, lists, emphasis and code stay what they are.

A folder's name, or a value from one of its files, inside Markdown the app writes goes in a code span
(code_span): its characters show as written, nothing inside one is Markdown.
"""
from __future__ import annotations

import functools
import html
import re

from markdown_it import MarkdownIt

CARD_CLASS = "tv-model-card"
# Streamlit styles its own Markdown only: the card's tables and code get the same look here.
CARD_CSS = (f"<style>.{CARD_CLASS} table {{border-collapse: collapse; margin: 0.5rem 0 1rem}}"
            f".{CARD_CLASS} th, .{CARD_CLASS} td {{border: 1px solid rgba(128, 128, 128, 0.35); "
            "padding: 0.25rem 0.6rem; text-align: left}"
            f".{CARD_CLASS} pre {{padding: 0.75rem; overflow-x: auto; "
            "background: rgba(128, 128, 128, 0.1); border-radius: 0.4rem}</style>")


def _image_as_text(renderer, tokens, idx, options, env) -> str:
    """An image token, drawn as the Markdown that wrote it: its alt text and address, escaped, nothing fetched."""
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    return html.escape(f"![{alt}]({token.attrGet('src') or ''})")


def _link_opens_a_new_tab(renderer, tokens, idx, options, env) -> str:
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return renderer.renderToken(tokens, idx, options, env)


@functools.cache
def _card_parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    parser.add_render_rule("image", _image_as_text)
    parser.add_render_rule("link_open", _link_opens_a_new_tab)
    return parser


def card_html(text: str) -> str:
    """The card (Markdown) as HTML for st.html: no image, no raw HTML (module docstring), wrapped in CARD_CLASS."""
    return f'{CARD_CSS}<div class="{CARD_CLASS}">{_card_parser().render(text)}</div>'


def code_span(value) -> str:
    """`value` as one Markdown code span that shows its characters exactly: the fence is one backtick longer than
    any run of backticks inside, and where the value starts or ends with a backtick or a space, a space pads
    each side (CommonMark strips one from each). A line break becomes a space, as inside any code span."""
    text = str(value).replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if not text.strip():
        return f"{fence}\u00a0{fence}"
    pad = " " if text[:1] in "` " or text[-1:] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"
