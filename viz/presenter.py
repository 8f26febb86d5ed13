"""Presenter mode for a projector: larger type, full-width figures, sidebar collapsed, and big
Previous/Next buttons under every page in tour order (on the tour, its own Previous/Next instead). app.py calls
`run_page(page, PAGES)` after the sidebar; it puts the lesson's download (viz/lesson_ui.py) above every page.

The styles are FIXED strings below; no user text ever goes into them.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from viz import ROOT
from viz.i18n import t
from viz.text import plain
from viz.nav import Page, page_blocks
from viz.lesson_ui import lesson_download_at_top
from viz.map_chart import model_map_chart
from viz import view
from viz.state import current
from viz.tour_steps import presenter_order
from viz.ui import PageStop
from viz.classroom import panel as classroom

TOUR_URL = "tour"

# Big buttons (tour and presenter navigation), in every mode. Keyed elements carry the class st-key-<key>.
NAV_CSS = """<style>
.st-key-tour-prev button, .st-key-tour-next button { min-height: 3.6rem; font-weight: 600; }
.st-key-tour-prev button p, .st-key-tour-next button p { font-size: 1.35rem; }
.st-key-presenter-prev a, .st-key-presenter-next a {
  min-height: 3.6rem; justify-content: center; border: 1px solid #9bbbd9; border-radius: 0.5rem;
}
.st-key-presenter-next a { background: #e8f1fb; }
.st-key-presenter-prev a p, .st-key-presenter-next a p { font-size: 1.35rem; font-weight: 600; }
.st-key-tour-links [data-testid="stPageLink"] p { font-size: 1.3rem; font-weight: 600; }
</style>"""

# Projector: larger body text, headings and widget labels; the page uses the full width.
PRESENTER_CSS = """<style>
.block-container { max-width: 100% !important; padding: 4.2rem 1.5rem 3rem 1.5rem !important; }  /* below the menu bar */
.stMainBlockContainer p, .stMainBlockContainer li, .stMainBlockContainer label p,
.stMainBlockContainer .stMarkdown { font-size: 1.32rem !important; line-height: 1.5 !important; }
.stMainBlockContainer [data-testid="stCaptionContainer"] p { font-size: 1.12rem !important; }
.stMainBlockContainer h1 { font-size: 3rem !important; }
.stMainBlockContainer h2 { font-size: 2.2rem !important; }
.stMainBlockContainer h3 { font-size: 1.8rem !important; }
.stMainBlockContainer .katex { font-size: 1.55em !important; }
.stMainBlockContainer [data-testid="stText"] { font-size: 1.2rem !important; }
.stMainBlockContainer [data-testid="stCode"] code { font-size: 1.2rem !important; }   /* the decoding step's lines */
.stMainBlockContainer table td, .stMainBlockContainer table th { font-size: 1.3rem !important; }  /* st.table, Markdown: 20 px and up */
.stMainBlockContainer [data-baseweb="select"] div, .stMainBlockContainer input { font-size: 1.15rem !important; }
.st-key-presenter-line { gap: 0.3rem; border-bottom: 1px solid #e6e6ea; }   /* the sentence line on top */
.st-key-presenter-line p { font-size: 1.2rem !important; margin: 0; }
[data-testid="stPopoverBody"] textarea, [data-testid="stPopoverBody"] label p { font-size: 1.2rem !important; }
</style>"""


def style_nav_buttons() -> None:
    st.html(NAV_CSS)


def _on_toggle() -> None:
    view.write_url(present="1" if view.get(view.PRESENT) else None)


def presenter_toggle() -> bool:
    """Sidebar toggle, seeded once per session from the URL (present=1) and kept in the URL after."""
    on = st.sidebar.toggle(t("presenter.toggle"), key=view.bind(view.PRESENT), on_change=_on_toggle,
                           help=t("presenter.help"))
    view.keep(view.PRESENT, on)
    view.write_url(present="1" if on else None)
    return on


def neighbours(url_path: str, pages: list[Page]) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """The pages before and after this one in presenting order, each as (file under viz/pages, title);
    None at either end or for a page outside the order."""
    files = [Path(p.file).name for p in pages if (ROOT / p.file).is_file()]
    titles = {Path(p.file).name: t(p.title) for p in pages}
    urls = {p.url: Path(p.file).name for p in pages}
    order = presenter_order(files)
    here = urls.get(url_path or pages[0].url)        # the start page is served at / (url path "")
    if here not in order:
        return None, None
    i = order.index(here)
    prev = (order[i - 1], titles[order[i - 1]]) if i > 0 else None
    nxt = (order[i + 1], titles[order[i + 1]]) if i + 1 < len(order) else None
    return prev, nxt


def page_button(where, key: str, page: tuple[str, str], label: str, **kwargs) -> None:
    """A big link to a page of the presenting order (key: presenter-prev or presenter-next)."""
    where.container(key=key).page_link(f"viz/pages/{page[0]}", label=label, query_params=view.link_params(),
                                       width="stretch", **kwargs)


def _nav_buttons(page, pages: list[Page]) -> None:
    """Previous/Next page in tour order, at the bottom of the page. Links, not buttons: a link navigates
    like the sidebar menu (the sidebar's sentence stays), where st.switch_page from a button reset it.
    Not on the tour: there its own Previous/Next are the one way on, and lead to the pages around it from
    its first and last steps (viz/pages/tour.py)."""
    if page.url_path == TOUR_URL:
        return
    prev, nxt = neighbours(page.url_path, pages)
    if prev is None and nxt is None:
        return
    st.divider()
    style_nav_buttons()
    c_prev, c_next = st.columns(2)
    if prev:
        page_button(c_prev, "presenter-prev", prev, t("presenter.prev", page=prev[1]))
    if nxt:
        page_button(c_next, "presenter-next", nxt, t("presenter.next", page=nxt[1]))


def _you_are_here(page) -> None:
    """Presenter mode, under a page about one part of the model: the whole model live on the sentence, this
    page's blocks framed in red (those of the view it shows), every block a link to its page (overview to detail,
    as the tour's map)."""
    ctx = current()
    blocks = page_blocks(page.url_path, dict(view.current_view().values))
    if not blocks or ctx is None or ctx.trace is None:
        return
    st.divider()
    st.markdown(t("presenter.map"))
    model_map_chart(ctx, "presenter-map", highlight=blocks)   # full rows: ~100 x 90 px thumbnails, not 100 x 60


def _sentence_changed() -> None:
    view.put(view.TEXT, view.get(view.SENTENCE_EDIT))


def sentence_line() -> None:
    """Presenter mode, over every page: the sentence and the model's translation in one line (the sidebar that
    shows them is folded away on a projector), and a small box to change the sentence without unfolding it."""
    ctx = current()
    if ctx is None:
        return
    translation = ctx.trace.meta["translation"] if ctx.trace is not None else ""
    row = st.container(key="presenter-line", horizontal=True, vertical_alignment="center")   # the box follows the words (the lesson button sits at the right end)
    row.markdown(t("presenter.sentence", sentence=plain(ctx.text.strip(), limit=200),
                   translation=plain(translation or "…", limit=200)), width="content")
    view.put(view.SENTENCE_EDIT, ctx.text)
    with row.popover(t("presenter.sentence.edit"), icon=":material/edit:"):
        st.text_area(t("presenter.sentence.label"), key=view.key(view.SENTENCE_EDIT), on_change=_sentence_changed,
                     max_chars=view.MAX_TEXT_CHARS, height=120)


def run_page(page, pages: list[Page]) -> None:
    """Run the selected page; in presenter mode styled for a projector and followed by page buttons,
    also when the page stops early (ui.stop_page, e.g. for an empty sentence): the sidebar is folded away."""
    presenting = presenter_toggle()
    if presenting:
        st.set_page_config(initial_sidebar_state="collapsed")
        st.html(PRESENTER_CSS)
    lesson_download_at_top()
    if presenting:
        sentence_line()
    drawn = classroom.before_page(page)     # a live class: its bar over the page (viz/classroom)
    try:
        if drawn:
            page.run()
    except PageStop:
        pass
    classroom.after_page()          # a teacher's view goes to the class
    if presenting:
        _you_are_here(page)
        _nav_buttons(page, pages)
