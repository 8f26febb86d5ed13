"""The compare page's two sentences drawn in the browser (issue 44), in Chromium: a layer and a head (and the layer's
mean of the heads) picked with the mouse and with the keyboard, in English and 中文, normal and presenter mode, in a
deck with no kind row (the kind and sentence B are the server's); the pick is drawn with no script
run and written to the URL (layer=, head=; the mean: head=-1); a map's CSV downloads. The server side:
tests/test_page_compare_deck.py."""
from __future__ import annotations

import os
import urllib.parse

import pytest

from browser_utils import check_projector_sizes, open_browser_view, view_drew
from test_browser_explorer_view import DRAWN_MS, LOAD_MS
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
SENTENCE = "The man went to the house."
SHOTS = os.environ.get("VIZ_SHOTS")          # a folder: each case's screen saved there (to look at)


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/compare?{query}", VIEW, LOAD_MS)


def url_pick(page) -> tuple[str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return query["layer"][0], query["head"][0]


def map_title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-a .gtitle").text_content()


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", True)])
def test_pick_a_layer_and_a_head_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    params = {"lang": lang, **({"present": 1} if present else {})}
    page, runs = open_view(chromium, app_url, **params)
    try:
        shot = f"{SHOTS}/compare-{lang}-{'presenter' if present else 'normal'}" if SHOTS else None
        if shot:
            page.screenshot(path=f"{shot}.png")
        assert page.locator(f"{VIEW} .vz-kinds").count() == 0               # the kind is the server's radio
        assert page.locator(f"{VIEW} .vz-head option").all_text_contents() == [
            message(lang, "ui.head_mean"), *(message(lang, "ui.head_n", h=h) for h in range(8))]
        before = runs.count
        page.select_option(f"{VIEW} .vz-head", "-1")                        # the mouse: the mean of the heads
        view_drew(page, VIEW, "0:-1", DRAWN_MS)
        assert url_pick(page) == ("0", "-1") and message(lang, "ui.head_mean") in map_title(page)
        page.select_option(f"{VIEW} .vz-layer", "2")
        view_drew(page, VIEW, "2:-1", DRAWN_MS)
        page.focus(f"{VIEW} .vz-head")                                      # the keyboard
        page.keyboard.press("ArrowDown")
        view_drew(page, VIEW, "2:0", DRAWN_MS)
        assert url_pick(page) == ("2", "0")
        assert map_title(page).replace(" ", "") == f"A: {message(lang, 'compare.head_name', layer=message(lang, 'ui.layer_n', i=2), head=message(lang, 'ui.head_n', h=0))}".replace(" ", "")
        assert page.locator(f"{VIEW} .vz-fig-order .gtitle").count() == 1    # the word-order test, the pick's
        page.wait_for_timeout(300)
        assert runs.count == before                                          # no script run
        check_projector_sizes(page, f"{VIEW} .vz-head", f"{VIEW} .vz-fig-a .xtick text", present, f"{VIEW} .vz-layer")
        if shot:
            page.screenshot(path=f"{shot}-L2-H0.png")
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='b']")
        assert download.value.suggested_filename == "en-es-B-encoder-L2-H0.csv"
    finally:
        page.close()


def url_b(page) -> tuple[str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return query["layer_b"][0], query["head_b"][0]


@pytest.mark.parametrize("lang, present", [("en", True), ("zh", False)])
def test_two_heads_head_b_picked_with_the_mouse_and_the_keyboard_head_a_kept(chromium, app_url, lang, present):
    """The two-heads mode: head A is the server's (layer 1, head 2 from the link), head B the view's: picked with the
    mouse and the keyboard, drawn with no script run (B's map and B − A; A's map stays the plot it was), written to
    the URL as layer_b= and head_b=; B − A's CSV downloads for the pick."""
    params = {"lang": lang, "mode": "heads", "layer": 1, "head": 2, **({"present": 1} if present else {})}
    page, runs = open_view(chromium, app_url, **params)
    try:
        shot = f"{SHOTS}/compare-heads-{lang}-{'presenter' if present else 'normal'}" if SHOTS else None
        if shot:
            page.screenshot(path=f"{shot}.png")
        assert page.locator(f"{VIEW} .vz-pickers-title").text_content() == message(lang, "compare.head", which="B")
        a_title = page.locator(f"{VIEW} .vz-fig-a .gtitle").text_content()
        page.evaluate("() => { document.querySelector('.vz-deck .vz-fig-a').dataset.probe = '1'; }")
        before = runs.count
        page.select_option(f"{VIEW} .vz-head", "-1")                        # the mouse: the mean of the heads
        view_drew(page, VIEW, "0:-1", DRAWN_MS)
        assert url_b(page) == ("0", "-1")
        assert message(lang, "ui.head_mean") in page.locator(f"{VIEW} .vz-fig-b .gtitle").text_content()
        page.focus(f"{VIEW} .vz-layer")                                     # the keyboard
        page.keyboard.press("ArrowDown")
        view_drew(page, VIEW, "1:-1", DRAWN_MS)
        assert url_b(page) == ("1", "-1")
        page.wait_for_timeout(300)
        assert runs.count == before                                          # no script run
        assert page.locator(f"{VIEW} .vz-fig-a .gtitle").text_content() == a_title
        assert page.locator(f"{VIEW} .vz-fig-a[data-probe='1']").count() == 1     # A's plot, not another drawn
        check_projector_sizes(page, f"{VIEW} .vz-head", f"{VIEW} .vz-fig-b .xtick text", present, f"{VIEW} .vz-layer")
        if shot:
            page.screenshot(path=f"{shot}-L1-avg.png")
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='diff']")
        assert download.value.suggested_filename == "en-es-encoder-L1-avg-minus-encoder-L1-H2.csv"
    finally:
        page.close()
