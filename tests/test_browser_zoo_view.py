"""The attention zoo's head drawn in the browser (issue 44), in Chromium: a head picked with the mouse and with the
keyboard (and a kind), in English and 中文, normal and presenter mode, in a deck of every kind x layer x head of the
model for the server's score function and weighting; the pick is drawn with no script run and written to the URL
(kind=, layer=, head=); a head's CSV downloads; a reload keeps the pick. The server side: tests/test_page_zoo_deck.py."""
from __future__ import annotations

import os
import urllib.parse

import pytest

from browser_utils import check_projector_sizes, open_browser_view, view_drew, wait_for_app
from test_browser_explorer_view import DRAWN_MS, LOAD_MS, SENTENCE
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
SHOTS = os.environ.get("VIZ_SHOTS")          # a folder: each case's screen saved there (to look at)
# the weights' map in sight: its numbers (plotly's own copy of the z it drew)
WEIGHTS_JS = f"() => JSON.stringify(document.querySelector('{VIEW} .vz-fig-weights')._fullData[0].z)"


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/zoo?{query}", VIEW, LOAD_MS)


def drawn(page, pick: str) -> None:
    view_drew(page, VIEW, pick, DRAWN_MS)


def url_pick(page) -> tuple[str, str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return query["kind"][0], query["layer"][0], query["head"][0]


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", False), ("en", True), ("zh", True)])
def test_pick_a_head_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    params = {"lang": lang, **({"present": 1} if present else {})}
    page, runs = open_view(chromium, app_url, **params)
    try:
        shot = f"{SHOTS}/zoo-{lang}-{'presenter' if present else 'normal'}" if SHOTS else None
        if shot:
            page.screenshot(path=f"{shot}.png")
        assert page.locator(f"{VIEW} .vz-head option").all_text_contents() == [
            message(lang, "ui.head_n", h=h) for h in range(8)]                # no mean: the zoo weighs one head
        assert page.locator(f"{VIEW} .vz-head").get_attribute("aria-label") == message(lang, "ui.head")
        assert page.locator(f"{VIEW} .vz-kind").all_text_contents() == [
            message(lang, f"zoo.kind.{kind}") for kind in ("encoder", "decoder", "cross")]
        before, shown = runs.count, page.evaluate(WEIGHTS_JS)
        page.select_option(f"{VIEW} .vz-head", "5")                           # the mouse
        drawn(page, "encoder:0:5")
        assert url_pick(page) == ("encoder", "0", "5")
        assert page.evaluate(WEIGHTS_JS) != shown                             # another head's weights
        page.focus(f"{VIEW} .vz-head")                                        # the keyboard
        page.keyboard.press("ArrowDown")
        drawn(page, "encoder:0:6")
        assert url_pick(page) == ("encoder", "0", "6")
        page.locator(f"{VIEW} .vz-kind", has_text=message(lang, "zoo.kind.decoder")).click()   # a kind, the head kept
        drawn(page, "decoder:0:6")
        assert url_pick(page) == ("decoder", "0", "6")
        read = page.locator(f"{VIEW} .vz-text-read").text_content()
        assert message(lang, "zoo.read_row.mask").strip() in read              # decoder self-attention's mask
        assert page.locator(f"{VIEW} .vz-text-check").text_content().startswith(
            message(lang, "zoo.check").split("{gap}")[0][:6])
        page.wait_for_timeout(300)
        assert runs.count == before                                           # no script run
        check_projector_sizes(page, f"{VIEW} .vz-head", f"{VIEW} .vz-fig-weights .xtick text", present,
                              f"{VIEW} .vz-layer", f"{VIEW} .vz-text-read")
        if shot:
            page.screenshot(path=f"{shot}-head-6.png", full_page=True)
    finally:
        page.close()


def test_a_deep_link_a_heads_csv_and_a_reload(chromium, app_url):
    page, runs = open_view(chromium, app_url, kind="cross", layer=1, head=2, score="general")
    try:
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='cross:1:2']", timeout=DRAWN_MS)
        assert page.locator(f"{VIEW} .vz-head").input_value() == "2"
        assert page.locator(f"{VIEW} .vz-layer").input_value() == "1"
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='weights']")
        assert download.value.suggested_filename == "zoo-weights-en-es-cross-L1-H2-general-soft.csv"
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        sums = [sum(float(x) for x in line.split(",")[1:]) for line in lines[1:]]
        assert sums and all(abs(s - 1) < 1e-4 for s in sums)                   # every row: its weights, summing to 1
        wait_for_app(page)
        page.select_option(f"{VIEW} .vz-head", "3")
        drawn(page, "cross:1:3")
        before = runs.count
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='scores']")
        assert download.value.suggested_filename == "zoo-scores-en-es-cross-L1-H3-general-soft.csv"
        assert runs.count == before + 1                                        # the CSV's run, the one asked for
        wait_for_app(page)
        page.goto(page.url)                                                    # a reload keeps the pick
        wait_for_app(page)
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='cross:1:3']", timeout=LOAD_MS)
        assert page.locator(f"{VIEW} .vz-head").input_value() == "3"
    finally:
        page.close()
