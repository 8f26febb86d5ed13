"""Presenter mode for a projector: larger type, full-width figures, sidebar collapsed, the sentence on top, the
model map under a page, and Previous/Next under it (viz/tour/buttons.py). app.py calls `run_page(page, PAGES)`
after the sidebar; it puts the lesson's download (viz/tour/download.py) above every page.

The styles are FIXED strings below; no user text ever goes into them.
"""
from __future__ import annotations

import streamlit as st

from viz.core.i18n import t
from viz.core.text import plain
from viz.elements.nav import Page, page_blocks
from viz.tour.download import lesson_button, lesson_download_at_top
from viz.elements.map_chart import model_map_chart
from viz.core import view
from viz.core.context import current
from viz.tour.buttons import nav_buttons
from viz.elements.ui import PageStop, on_phone
from viz.elements import browser_view
from viz.classroom import panel as classroom

# Projector: larger body text, headings and widget labels; the page uses the full width.
PRESENTER_CSS = """<style>
.block-container { max-width: 100% !important; padding: 4.2rem 1.5rem 3rem 1.5rem !important; }  /* below the menu bar */
@media (max-width: 640px) { .block-container { padding-left: 1rem !important; padding-right: 1rem !important; } }  /* a phone: its charts' 350 px */
.stMainBlockContainer p, .stMainBlockContainer li, .stMainBlockContainer label p,
.stMainBlockContainer .stMarkdown { font-size: 1.32rem !important; line-height: 1.5 !important; }
.stMainBlockContainer [data-testid="stCaptionContainer"] p { font-size: 1.25rem !important; color: #31333F !important; }  /* a caption often carries the page's claim: 20 px, the text's colour */
.stMainBlockContainer .vz-caption { opacity: 1 !important; color: #31333F !important; }   /* the browser views' captions alike (0.75 opacity read grey) */
.stMainBlockContainer h1 { font-size: 3rem !important; }
.stMainBlockContainer h2 { font-size: 2.2rem !important; }
.stMainBlockContainer h3 { font-size: 1.8rem !important; }
.stMainBlockContainer .katex { font-size: 1.55em !important; }
.stMainBlockContainer [data-testid="stText"] { font-size: 1.25rem !important; }
.stMainBlockContainer [data-testid="stCode"] code { font-size: 1.25rem !important; }   /* the decoding step's lines */
.stMainBlockContainer table td, .stMainBlockContainer table th { font-size: 1.3rem !important; }  /* st.table, Markdown: 20 px and up */
.st-key-heads-all table tbody td:first-of-type * { white-space: nowrap !important; }  /* each head's kind on one line (编码器 took three) */
.stMainBlockContainer [data-baseweb="select"] div, .stMainBlockContainer input { font-size: 1.15rem !important; }
.st-key-presenter-line { gap: 0.6rem; border-bottom: 1px solid #e6e6ea; flex-wrap: nowrap !important; }   /* the sentence line on top */
.st-key-presenter-line > div { min-width: 0; flex-shrink: 1 !important; }   /* long texts shrink, cut with "…" */
.st-key-presenter-line > div:last-child { flex-shrink: 0 !important; }      /* the box to change it stays whole */
.st-key-presenter-line p { font-size: 1.25rem !important; margin: 0; }
.stMainBlockContainer:has(.st-key-lesson-top) .st-key-presenter-line { padding-right: 21rem !important; }  /* the lesson button, presenter-sized */
@media (max-width: 640px) { .stMainBlockContainer:has(.st-key-lesson-top) .st-key-presenter-line { padding-right: 0 !important; } }
[data-testid="stPopoverBody"] textarea, [data-testid="stPopoverBody"] label p { font-size: 1.2rem !important; }
@media (max-width: 640px) {   /* a phone following the class keeps a phone's sizes, as its charts do (ui.type_scale):
  projector text pushed every page's picture off its first screen */
  .stMainBlockContainer p, .stMainBlockContainer li, .stMainBlockContainer label p,
  .stMainBlockContainer .stMarkdown { font-size: 1rem !important; line-height: 1.6 !important; }
  .stMainBlockContainer [data-testid="stCaptionContainer"] p, .stMainBlockContainer [data-testid="stText"],
  .stMainBlockContainer [data-testid="stCode"] code, .stMainBlockContainer table td,
  .stMainBlockContainer table th { font-size: 0.875rem !important; }
  .stMainBlockContainer h1 { font-size: 2rem !important; }
  .stMainBlockContainer h2 { font-size: 1.5rem !important; }
  .stMainBlockContainer h3 { font-size: 1.25rem !important; }
  .stMainBlockContainer .katex { font-size: 1.21em !important; }
  .stMainBlockContainer [data-baseweb="select"] div, .stMainBlockContainer input { font-size: 1rem !important; }
  .st-key-presenter-line p { font-size: 1rem !important; }
}
</style>"""


def _on_toggle() -> None:
    view.write_url({view.PRESENT: "1" if view.get(view.PRESENT) else None})


def presenter_toggle() -> bool:
    """Sidebar toggle, seeded once per session from the URL (present=1) and kept in the URL after."""
    on = st.sidebar.toggle(t("presenter.toggle"), key=view.bind(view.PRESENT), on_change=_on_toggle,
                           help=t("presenter.help"))
    view.keep(view.PRESENT, on)
    view.write_url({view.PRESENT: "1" if on else None})
    return on


def _you_are_here(page) -> None:
    """Presenter mode, under a page about one part of the model: the whole model live on the sentence, this
    page's blocks framed in red (those of the view it shows), every block a link to its page (overview to detail,
    as the tour's map)."""
    ctx = current()
    blocks = page_blocks(page.url_path, dict(view.current_view().values))
    if not blocks or ctx is None or ctx.trace is None or on_phone():   # a phone's column: its labels over one another
        return
    st.divider()
    st.markdown(t("presenter.map"))
    model_map_chart(ctx, "presenter-map", highlight=blocks)   # full rows: ~100 x 90 px thumbnails, not 100 x 60


def _sentence_changed() -> None:
    if view.get(view.SENTENCE_EDIT) is not None:
        view.put(view.TEXT, view.get(view.SENTENCE_EDIT))


def sentence_line() -> None:
    """Presenter mode, over every page: the sentence and the model's translation in one line (the sidebar that
    shows them is folded away on a projector), and a small box to change the sentence without unfolding it."""
    ctx = current()
    if ctx is None:
        return
    translation = ctx.trace.meta["translation"] if ctx.trace is not None else ""
    row = st.container(key="presenter-line", horizontal=True, vertical_alignment="center")   # the box follows the words (the lesson button sits at the right end)
    # one line whatever the sentence's length (a pasted 40-word one took four and pushed the picture off the first
    # screen): cut with an ellipsis, the whole on hover (Streamlit's own) and in the box that changes it
    # the sentence and its translation side by side, each cut to its half of the line
    row.markdown(t("presenter.sentence", sentence=plain(ctx.text.strip(), limit=view.MAX_TEXT_CHARS)),
                 width="content", wrap=False)
    row.markdown(t("presenter.translation", translation=plain(translation or "…", limit=view.MAX_TEXT_CHARS)),
                 width="content", wrap=False)
    view.put(view.SENTENCE_EDIT, ctx.text)
    with row.popover(t("presenter.sentence.edit"), icon=":material/edit:"):
        st.text_area(t("presenter.sentence.label"), key=view.key(view.SENTENCE_EDIT), on_change=_sentence_changed,
                     max_chars=view.MAX_TEXT_CHARS, height=120)


def _lesson_in_row(row) -> None:
    """In a class, the lesson's download sits in the class bar's row (at the top right it covered the bar's
    buttons: a click on "Ask the class" downloaded the lesson)."""
    ctx = current()
    if ctx is not None and ctx.trace is not None:
        lesson_button(ctx, row)


def run_page(page, pages: list[Page]) -> None:
    """Run the selected page; in presenter mode styled for a projector and followed by page buttons,
    also when the page stops early (ui.stop_page, e.g. for an empty sentence): the sidebar is folded away."""
    presenting = presenter_toggle()
    if presenting:
        st.set_page_config(initial_sidebar_state="collapsed")
        st.html(PRESENTER_CSS)
    classroom.prepare(page)         # a live class: which one, and as whom (viz/classroom)
    in_class = classroom.active()
    if not in_class:
        lesson_download_at_top()
    if presenting:
        sentence_line()
    classroom.before_page(_lesson_in_row if in_class else None)   # the class bar over the page
    browser_view.page_runs()        # the page draws its browser view again, if this view of it has one
    try:
        page.run()
    except PageStop:
        pass
    classroom.after_page()          # a teacher's view goes to the class
    if presenting:
        _you_are_here(page)
        nav_buttons(page, pages)
