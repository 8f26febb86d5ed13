"""The app's pages in teaching order, and the navigation menu built from them."""
from __future__ import annotations

import json
from typing import Mapping, NamedTuple

import streamlit as st

from viz import ROOT
from viz.figures.model_map import ATTN_KINDS, NORM_BLOCKS, parse_cell
from viz.core.i18n import DEFAULT_LANG, current_lang, t


class Page(NamedTuple):
    file: str        # under the repository root
    url: str         # its url path (the first page is served at /)
    icon: str
    section: str     # catalogue keys (viz/locales) of its menu section and its title
    title: str
    blocks: tuple[str, ...] = ()   # the model map's blocks it explains (presenter mode's "you are here")


# In the order of the notes (the tour's, viz/tour/steps.py); pages about the whole model (home, the tour, training,
# about) explain no block.
PAGES = [
    Page("viz/pages/home.py", "home", ":material/home:", "nav.section.Start", "nav.page.home"),
    Page("viz/pages/tour.py", "tour", ":material/school:", "nav.section.Start", "nav.page.tour"),
    Page("viz/pages/rnn.py", "rnn", ":material/history:", "nav.section.Attention", "nav.page.rnn"),
    Page("viz/pages/zoo.py", "zoo", ":material/history_edu:", "nav.section.Attention", "nav.page.zoo",
         tuple(ATTN_KINDS)),
    Page("viz/pages/step_through.py", "step", ":material/calculate:", "nav.section.Attention", "nav.page.step",
         ("attn.encoder",)),
    Page("viz/pages/multi_head.py", "multihead", ":material/call_merge:",
         "nav.section.Attention", "nav.page.multihead", ("attn.encoder",)),
    Page("viz/pages/explorer.py", "explorer", ":material/grid_view:", "nav.section.Attention", "nav.page.explorer",
         tuple(ATTN_KINDS)),
    Page("viz/pages/positional.py", "positional", ":material/waves:",
         "nav.section.Inside a layer", "nav.page.positional", ("embed.encoder", "embed.decoder")),
    Page("viz/pages/layernorm.py", "layernorm", ":material/equalizer:",
         "nav.section.Inside a layer", "nav.page.layernorm", tuple(NORM_BLOCKS)),
    Page("viz/pages/ffn.py", "ffn", ":material/hub:", "nav.section.Inside a layer", "nav.page.ffn",
         ("ff.encoder", "ff.decoder")),
    Page("viz/pages/decoding.py", "decoding", ":material/play_arrow:", "nav.section.Output", "nav.page.decoding",
         ("linear", "softmax")),
    Page("viz/pages/heads.py", "heads", ":material/analytics:", "nav.section.What heads do", "nav.page.heads",
         tuple(ATTN_KINDS)),
    Page("viz/pages/compare.py", "compare", ":material/compare:", "nav.section.What heads do", "nav.page.compare",
         ("attn.encoder",)),
    Page("viz/pages/attribution.py", "attribution", ":material/insights:",
         "nav.section.What heads do", "nav.page.attribution", ("linear", "softmax")),
    Page("viz/pages/training.py", "training", ":material/model_training:",
         "nav.section.The model", "nav.page.training"),
    Page("viz/pages/about.py", "about", ":material/info:", "nav.section.The model", "nav.page.about"),
]
PAGE_BLOCKS = {page.url: page.blocks for page in PAGES if page.blocks}
# A page's view (its URL's view=) about another part of the model than the page's first view: its blocks,
# "{kind}" the view's attention kind (kind=). The feed-forward page's label smoothing is the output softmax's
# target, its dropout view the attention weights of one kind: framing the FFN there contradicted the picture.
VIEW_BLOCKS = {"ffn": {"smoothing": ("softmax",), "dropout": ("attn.{kind}",)}}


def page_blocks(url_path: str, params: Mapping[str, str]) -> tuple[str, ...]:
    """The blocks a page explains in the view its URL's parameters name (presenter mode's "you are here")."""
    blocks = VIEW_BLOCKS.get(url_path, {}).get(params.get("view"), PAGE_BLOCKS.get(url_path, ()))
    named = (block.format(kind=params.get("kind", "")) for block in blocks)
    return tuple(block for block in named if not block.startswith("attn.") or block in ATTN_KINDS)


def block_target(cell: str) -> tuple[str, dict[str, str]]:
    """(page file under viz/pages, its own URL values) of the view that explains a block of the model map (layer
    0 when the cell names no layer): explorer kind/layer/head (-1: the mean of the heads), layernorm
    stack/layer/norm, ffn view/stack/layer, decoding method."""
    block, layer = parse_cell(cell)
    layer = 0 if layer is None else layer
    if block in ATTN_KINDS:
        return "explorer.py", {"kind": ATTN_KINDS[block], "layer": str(layer), "head": "-1"}
    if block in NORM_BLOCKS:
        stack, norm = NORM_BLOCKS[block]
        return "layernorm.py", {"stack": stack, "layer": str(layer), "norm": norm}
    if block.startswith("ff."):       # its hidden units and what it adds to the residual stream
        return "ffn.py", {"view": "ffn", "stack": block.split(".")[1], "layer": str(layer)}
    if block.startswith("embed."):
        return "positional.py", {}
    return "decoding.py", {"method": "greedy"}


def navigation():
    """The menu in a bar above the page, grouped by section: every page one click away (a sidebar menu
    hid three of them behind "View more"), and the sidebar keeps the sentence and its translation in view."""
    sections: dict[str, list] = {}
    for page in PAGES:
        if (ROOT / page.file).is_file():
            sections.setdefault(t(page.section), []).append(
                st.Page(page.file, title=t(page.title), url_path=page.url, icon=page.icon, default=page is PAGES[0]))
    return st.navigation(sections, position="top")


# A projector shows 1280x720: Streamlit's default 6rem above the title and its 2.75rem h1 push every
# picture toward the fold. Less of both, on every page.
COMPACT_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 4.2rem; }   /* below the top menu bar */
h1 { font-size: 2.1rem !important; padding-top: 0 !important; }
</style>"""


# Streamlit's file uploader writes "Upload" and "1MB per file • TXT, CSV" in English whatever the page's
# language, and `st.file_uploader` (1.67) has no parameter for either. In another language the two texts are
# drawn at size 0 and the catalogue's words put after them (screen readers read the button's aria-label,
# which is the uploader's own, already translated, label). Both uploaders take .txt and .csv.
UPLOADER_BUTTON = "[data-testid=stFileUploaderDropzone] button [data-testid=stMarkdownContainer] p"
UPLOADER_LIMITS = "[data-testid=stFileUploaderDropzoneInstructions] span"


def uploader_css(button: str, limits: str) -> str:
    """CSS that shows `button` and `limits` in place of the uploader's English (catalogue words, quoted as CSS
    strings: JSON's escaping of quotes and backslashes is CSS's)."""
    quote = lambda text: json.dumps(text, ensure_ascii=False)   # noqa: E731
    return (f"<style>{UPLOADER_BUTTON}, {UPLOADER_LIMITS} {{ font-size: 0 !important; }}\n"
            f"{UPLOADER_BUTTON}::after {{ content: {quote(button)}; font-size: 0.875rem; }}\n"
            f"{UPLOADER_LIMITS}::after {{ content: {quote(limits)}; font-size: 0.875rem; }}</style>")


def compact_layout() -> None:
    st.html(COMPACT_CSS)
    if current_lang() != DEFAULT_LANG:
        mb = st.get_option("server.maxUploadSize")
        st.html(uploader_css(t("upload.button"), t("upload.limits", mb=mb)))
