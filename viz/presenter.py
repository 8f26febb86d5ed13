"""Presenter mode for a projector: larger type, full-width figures, sidebar collapsed, and big
Previous/Next buttons under every page in tour order; and under every page with a sentence, the button that
downloads its offline lesson. app.py calls `run_page(page, PAGES)` after the sidebar.

The styles are FIXED strings below; no user text ever goes into them.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from viz import ROOT
from viz.i18n import t
from viz.nav import Page
from viz.lesson_ui import lesson_button
from viz.state import current, qp_choice, set_query
from viz.tour_steps import presenter_order
from viz.ui import PageStop

TOGGLE_KEY = "presenter"

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
.stMainBlockContainer [data-baseweb="select"] div, .stMainBlockContainer input { font-size: 1.15rem !important; }
</style>"""


def style_nav_buttons() -> None:
    st.html(NAV_CSS)


def _on_toggle() -> None:
    set_query(present="1" if st.session_state[TOGGLE_KEY] else None)


def presenter_toggle() -> bool:
    """Sidebar toggle, seeded once per session from the URL (present=1) and kept in the URL after."""
    if TOGGLE_KEY not in st.session_state:
        st.session_state[TOGGLE_KEY] = qp_choice("present", ["0", "1"], "0") == "1"
    on = st.sidebar.toggle(t("presenter.toggle"), key=TOGGLE_KEY, on_change=_on_toggle, help=t("presenter.help"))
    set_query(present="1" if on else None)
    return on


def _carried_params() -> dict:
    """Model, sentence and language travel with the presenter's page buttons (the next page's URL says them)."""
    params = {"model": st.session_state.get("model"), "text": (st.session_state.get("text") or "").strip() or None,
              "target": (st.session_state.get("target") or "").strip() or None, "present": "1",
              "lang": st.query_params.get("lang")}
    return {k: v for k, v in params.items() if v}


def _nav_buttons(page, pages: list[Page]) -> None:
    """Previous/Next page in tour order, at the bottom of the page. Links, not buttons: a link navigates
    like the sidebar menu (the sidebar's sentence stays), where st.switch_page from a button reset it."""
    files = [Path(p.file).name for p in pages if (ROOT / p.file).is_file()]
    titles = {Path(p.file).name: t(p.title) for p in pages}
    urls = {p.url: Path(p.file).name for p in pages}
    order = presenter_order(files)
    here = urls.get(page.url_path)
    if here not in order:
        return
    i = order.index(here)
    st.divider()
    style_nav_buttons()
    c_prev, c_next = st.columns(2)
    if i > 0:
        c_prev.container(key="presenter-prev").page_link(
            f"viz/pages/{order[i - 1]}", label=t("presenter.prev", page=titles[order[i - 1]]),
            query_params=_carried_params(), width="stretch")
    if i + 1 < len(order):
        c_next.container(key="presenter-next").page_link(
            f"viz/pages/{order[i + 1]}", label=t("presenter.next", page=titles[order[i + 1]]),
            query_params=_carried_params(), width="stretch")


def _lesson_download() -> None:
    """Under every page whose sentence the model has read (a trace exists): the offline lesson of it."""
    ctx = current()
    if ctx is not None and ctx.trace is not None:
        st.divider()
        lesson_button(ctx)


def run_page(page, pages: list[Page]) -> None:
    """Run the selected page; in presenter mode styled for a projector and followed by page buttons,
    also when the page stops early (ui.stop_page, e.g. for an empty sentence): the sidebar is folded away."""
    presenting = presenter_toggle()
    if presenting:
        st.set_page_config(initial_sidebar_state="collapsed")
        st.html(PRESENTER_CSS)
    try:
        page.run()
    except PageStop:
        pass
    _lesson_download()
    if presenting:
        _nav_buttons(page, pages)
