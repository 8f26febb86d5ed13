"""The head page's statistics drawn in the browser (issue 44), in Chromium: the kind picked with the mouse and with
the keyboard, in English (normal) and 中文 (presenter mode), in a deck with no layer select (the picture holds every
layer; the source and the statistic are the server's pickers); the pick is drawn with no script run and written to
the URL as `kind`; a kind's CSV downloads. The server side: tests/test_page_heads_compare.py."""
from __future__ import annotations

import urllib.parse

import pytest

from browser_utils import check_projector_sizes, open_browser_view, view_drew, wait_for_app
from test_browser_explorer_view import DRAWN_MS, LOAD_MS, SENTENCE
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, "stat": "prev", **params})
    return open_browser_view(chromium, f"{app_url}/heads?{query}", VIEW, LOAD_MS)


def title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-stat .gtitle").text_content().replace(" ", "")


def title_of(lang: str, kind: str) -> str:
    return message(lang, "heads.stat.title", kind=message(lang, f"fig.kind.{kind}"),
                   stat=message(lang, "heads.stat.prev")).replace(" ", "")


def kind_in_url(page) -> str | None:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get("kind", [None])[0]


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", True)])
def test_pick_a_kind_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    page, sent = open_view(chromium, app_url, lang=lang, **({"present": 1} if present else {}))
    try:
        assert page.locator(f"{VIEW} .vz-layer").count() == 0          # no layer select: the picture holds them all
        assert title(page) == title_of(lang, "encoder")
        before = sent.count
        page.locator(f"{VIEW} .vz-kind input[value='cross']").check()   # the mouse
        view_drew(page, VIEW, "cross", DRAWN_MS)
        assert title(page) == title_of(lang, "cross")
        assert kind_in_url(page) == "cross"
        page.focus(f"{VIEW} .vz-kinds input:checked")                   # the keyboard: the kind's radio buttons
        page.keyboard.press("ArrowLeft")
        view_drew(page, VIEW, "decoder", DRAWN_MS)
        assert title(page) == title_of(lang, "decoder") and kind_in_url(page) == "decoder"
        page.wait_for_timeout(300)
        assert sent.count == before                                     # no script run
        check_projector_sizes(page, f"{VIEW} .vz-kinds", f"{VIEW} .vz-fig-stat .ytick text", present)
    finally:
        page.close()


def test_a_kinds_csv_and_a_statistic_changed_on_the_server(chromium, app_url):
    page, _ = open_view(chromium, app_url, kind="decoder")
    try:
        view_drew(page, VIEW, "decoder", DRAWN_MS)
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='stat']")
        assert download.value.suggested_filename == "en-es-decoder-prev.csv"
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert len(lines) == 1 + 3 and lines[1].count(",") == 8         # a row a layer: its name and 8 heads
        wait_for_app(page)
        page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] [role="combobox"]').first.click()
        page.get_by_role("option", name=message("en", "heads.stat.self")).click()
        page.wait_for_function("(s) => (document.querySelector(s + ' .vz-fig-stat .gtitle') || {}).textContent"
                               " && document.querySelector(s + ' .vz-fig-stat .gtitle').textContent.includes('"
                               + message("en", "heads.stat.self").split()[0] + "')", arg=VIEW, timeout=DRAWN_MS * 4)
        assert kind_in_url(page) == "decoder"                            # the reader's kind stays
    finally:
        page.close()
