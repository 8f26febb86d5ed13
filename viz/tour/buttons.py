"""Previous/Next in presenting order: the big buttons under every page in presenter mode and the tour's own
(their CSS is a FIXED string: no user text goes into it). The order is the tour's (viz/tour/steps.presenter_order).
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from viz import ROOT, view
from viz.i18n import t
from viz.nav import Page
from viz.tour.steps import presenter_order

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


def style_nav_buttons() -> None:
    st.html(NAV_CSS)


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


def nav_buttons(page, pages: list[Page]) -> None:
    """Previous/Next page in tour order, at the bottom of the page. Links, not buttons: a link navigates
    like the sidebar menu (the sidebar's sentence stays), where st.switch_page from a button resets it.
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
