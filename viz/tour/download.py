"""The "Download this lesson as HTML" button at the top right of every page: viz/tour/lesson.py's offline lesson of the
sidebar's sentence, from the trace the pages already show (viz/services/traces.py's cache), built only when clicked."""
from __future__ import annotations

import re
from functools import partial

import streamlit as st

from viz.core import view
from viz.core.i18n import current_lang, t
from viz.tour.lesson import lesson_html
from viz.services.models import resolve_model_dir
from viz.services.traces import cached_trace
from viz.core.context import Context, current

# The lesson download at the top right, beside the page's title: its row takes no height (the button hangs
# into the title's line) and a title that has it beside gives it room; on a phone it takes a line of its own.
LESSON_CSS = """<style>
[data-testid="stLayoutWrapper"]:has(> .st-key-lesson-top) { height: 0 !important; min-height: 0 !important; margin-bottom: -1rem;
  overflow: visible; flex: none;
  position: relative; z-index: 2; }
.stVerticalBlock.st-key-lesson-top { height: 0 !important; min-height: 0 !important; overflow: visible; align-items: flex-end; }
.stMainBlockContainer:has(.st-key-lesson-top) h1,
.stMainBlockContainer:has(.st-key-lesson-top) .st-key-presenter-line { padding-right: 17rem; }
@media (max-width: 640px) {   /* a phone: the button on a line of its own, the title the whole width */
  [data-testid="stLayoutWrapper"]:has(> .st-key-lesson-top), .stVerticalBlock.st-key-lesson-top {
    height: auto !important; margin-bottom: 0; }
  .stMainBlockContainer:has(.st-key-lesson-top) h1,
  .stMainBlockContainer:has(.st-key-lesson-top) .st-key-presenter-line { padding-right: 0; }
}
</style>"""


def file_name(model_id: str, text: str, lang: str = "en", presenter: bool = False) -> str:
    """lesson-en-es-the-man-went-to-the-zh.html: letters, digits and dashes only, ending in the lesson's language
    (the English and the Chinese lesson of one sentence saved under one name, the second over the first), and
    -presenter for the projector's sizes."""
    words = "-".join(re.findall(r"\w+", text.lower(), flags=re.ASCII)[:5])
    return f"lesson-{model_id}{'-' + words if words else ''}-{lang}{'-presenter' if presenter else ''}.html"


def lesson_bytes(model_id: str, text: str, target: str | None, beam: int, max_tokens: int,
                 lang: str = "en", presenter: bool = False) -> bytes:
    """The offline HTML lesson of this view in `lang` (about 1.7 MB, most of it plotly.js), made when clicked, at
    presenter sizes in presenter mode; the trace comes from the cache (not recomputed for another language)."""
    trace = cached_trace(model_id, text, target, beam, max_tokens)
    return lesson_html(trace, resolve_model_dir(model_id), lang, presenter).encode("utf-8")


def lesson_button(ctx: Context, where=st) -> None:
    """Deferred: the ten figures and 1.7 MB of HTML (about a second) are built in the background when the
    button is clicked, not on every run of every page. Streamlit shows no spinner for a deferred download
    (it ignores st calls there): the browser's download starts when the file is ready, and a second click
    on the same sentence is instant. The lesson is in the session's language. `where`: the container it goes in."""
    presenter = bool(view.get(view.PRESENT))
    where.download_button(
        t("lesson.button"), data=partial(lesson_bytes, *ctx.trace_key, lang=current_lang(), presenter=presenter),
        file_name=file_name(ctx.model_id, ctx.text, current_lang(), presenter), mime="text/html", on_click="ignore",
        icon=":material/download:", key="lesson-download",
        help=t("lesson.help"))


def lesson_download_at_top() -> None:
    """At the top right of every page whose sentence the model has read (a trace exists): the offline lesson
    of it, on the first screen. A row of no height, so the page's title and picture stay where they were; the
    title (and presenter mode's sentence line) keeps room for it on its right."""
    ctx = current()
    if ctx is not None and ctx.trace is not None:
        st.html(LESSON_CSS)
        lesson_button(ctx, st.container(key="lesson-top"))
