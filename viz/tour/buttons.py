"""Previous/Next in presenting order: the big buttons under every page in presenter mode and the tour's own
(their CSS is a FIXED string: no user text goes into it). The order is the tour's (viz/tour/steps.lesson_stops).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, NamedTuple

import streamlit as st

from viz import ROOT
from viz.core import view
from viz.core.i18n import t
from viz.elements.nav import Page
from viz.tour.steps import lesson_stops, stop_at

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
/* a phone's column: "← Previous page: Multi-head assembly" in lines, not cut at the link's edge */
.st-key-presenter-prev a, .st-key-presenter-next a, .st-key-presenter-prev a p, .st-key-presenter-next a p {
  white-space: normal; overflow: visible; text-overflow: clip; height: auto; }
.st-key-tour-links [data-testid="stPageLink"] p { font-size: 1.3rem; font-weight: 600; }
/* a long link ("Open: Before the Transformer: an RNN with attention") in lines, not cut at a phone's edge */
.st-key-tour-links [data-testid="stPageLink"] a, .st-key-tour-links [data-testid="stPageLink"] p {
  white-space: normal; overflow: visible; text-overflow: clip; height: auto; }
</style>"""


def style_nav_buttons() -> None:
    st.html(NAV_CSS)


class Stop(NamedTuple):
    file: str                     # under viz/pages
    title: str
    params: dict[str, str]        # the page's own URL values of this view


def neighbours(url_path: str, pages: list[Page], params: Mapping[str, object] | None = None
               ) -> tuple[Stop | None, Stop | None]:
    """The views before and after this page's view (its URL's `params`) in the order of the notes (the tour's,
    viz/tour/steps.lesson_stops); None at either end or for a page outside the order."""
    files = [Path(p.file).name for p in pages if (ROOT / p.file).is_file()]
    titles = {Path(p.file).name: t(p.title) for p in pages}
    urls = {p.url: Path(p.file).name for p in pages}
    stops = lesson_stops(files)
    here = stop_at(stops, urls.get(url_path or pages[0].url, ""), params or {})   # the start page is served at /
    if here is None:
        return None, None
    stop = lambda i: Stop(stops[i].page, titles[stops[i].page], dict(stops[i].params))   # noqa: E731
    return (stop(here - 1) if here > 0 else None), (stop(here + 1) if here + 1 < len(stops) else None)


def page_button(where, key: str, page: Stop, label: str, **kwargs) -> None:
    """A big link to a view of the presenting order (key: presenter-prev or presenter-next)."""
    where.container(key=key).page_link(f"viz/pages/{page.file}", label=label,
                                       query_params=view.link_params(**page.params), width="stretch", **kwargs)


def nav_buttons(page, pages: list[Page]) -> None:
    """Previous/Next page in tour order, at the bottom of the page. Links, not buttons: a link navigates
    like the sidebar menu (the sidebar's sentence stays), where st.switch_page from a button resets it.
    Not on the tour: there its own Previous/Next are the one way on, and lead to the pages around it from
    its first and last steps (viz/pages/tour.py)."""
    if page.url_path == TOUR_URL:
        return
    prev, nxt = neighbours(page.url_path, pages, dict(view.current_view().values))
    if prev is None and nxt is None:
        return
    st.divider()
    style_nav_buttons()
    c_prev, c_next = st.columns(2)
    if prev:
        page_button(c_prev, "presenter-prev", prev, t("presenter.prev", page=prev.title))
    if nxt:
        page_button(c_next, "presenter-next", nxt, t("presenter.next", page=nxt.title))
