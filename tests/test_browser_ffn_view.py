"""The feed-forward page's stack x layer drawn in the browser (issue 44), in Chromium: a stack and a layer picked with
the mouse and with the keyboard, in English (normal) and 中文 (presenter mode); the pick is drawn with no message to
the server (no script run) and written to the URL as `stack` and `layer`; a picture's CSV downloads; a deep link and
a reload show their pick; the page's other views (server-side) and back. The server side: tests/test_page_ffn.py."""
from __future__ import annotations

import csv
import os
import urllib.parse

import pytest

from browser_utils import check_projector_sizes, open_browser_view, view_drew, wait_for_app
from test_browser_explorer_view import DRAWN_MS, LOAD_MS, SENTENCE
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
SHOTS = os.environ.get("VIZ_SHOTS")          # a folder: each case's screen saved there (to look at)


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/ffn?{query}", VIEW, LOAD_MS)


def drawn(page, pick: str) -> None:
    view_drew(page, VIEW, pick, DRAWN_MS)


def units_title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-units .gtitle").text_content()


def url_pick(page) -> dict[str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return {name: query[name][0] for name in ("stack", "layer", "kind") if name in query}


def title_start(lang: str, stack: str, layer: int) -> str:
    """The units picture's title up to the number of units shown (what names the pick)."""
    words = message(lang, "ffn.units.title", stack=message(lang, f"ffn.stack.{stack}"), layer=layer, shown="{n}",
                    d_ff=1024)
    return words.split("{n}")[0].split("1024")[0]


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", True)])
def test_pick_a_stack_and_a_layer_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    params = {"lang": lang, **({"present": 1} if present else {})}
    page, sent = open_view(chromium, app_url, **params)
    try:
        shot = f"{SHOTS}/ffn-{lang}-{'presenter' if present else 'normal'}" if SHOTS else None
        if shot:
            page.screenshot(path=f"{shot}.png")
        assert [label.text_content() for label in page.locator(f"{VIEW} .vz-kind").all()] == [
            message(lang, "ffn.stack.encoder"), message(lang, "ffn.stack.decoder")]     # the page's stacks
        before = sent.count
        page.locator(f"{VIEW} .vz-kind", has_text=message(lang, "ffn.stack.decoder")).click()   # the mouse
        drawn(page, "decoder:0")
        assert units_title(page).replace(" ", "").startswith(title_start(lang, "decoder", 0).replace(" ", ""))
        assert url_pick(page) == {"stack": "decoder", "layer": "0"}
        page.focus(f"{VIEW} .vz-layer")                                 # the keyboard: the layer picker
        page.keyboard.press("ArrowDown")
        drawn(page, "decoder:1")
        assert url_pick(page) == {"stack": "decoder", "layer": "1"}
        page.focus(f"{VIEW} .vz-kinds input:checked")                   # the stack's radio buttons
        page.keyboard.press("ArrowLeft")
        drawn(page, "encoder:1")
        assert url_pick(page) == {"stack": "encoder", "layer": "1"}
        assert units_title(page).replace(" ", "").startswith(title_start(lang, "encoder", 1).replace(" ", ""))
        caption = page.locator(f"{VIEW} .vz-text-units-caption").text_content()
        assert message(lang, "ffn.units.caption").split("{")[0][:12] in caption     # the pick's words under it
        page.wait_for_timeout(300)
        assert sent.count == before                                     # no script run
        check_projector_sizes(page, f"{VIEW} .vz-layer", f"{VIEW} .vz-fig-units .ytick text", present)
        if shot:
            page.screenshot(path=f"{shot}-encoder-1.png", full_page=True)
    finally:
        page.close()


def test_a_deep_link_a_csv_a_reload_and_the_pages_other_views(chromium, app_url):
    page, sent = open_view(chromium, app_url, view="ffn", stack="decoder", layer=2)
    try:
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='decoder:2']", timeout=DRAWN_MS)
        assert page.locator(f"{VIEW} .vz-kind input[value='decoder']").is_checked()
        assert page.locator(f"{VIEW} .vz-layer").input_value() == "2"
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='adds']")
        assert download.value.suggested_filename.endswith("-decoder-L2-ffn-adds.csv")
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert lines[0].endswith(message("en", "ffn.add.out") + ',"' + message("en", "ffn.add.cosine") + '"')
        assert lines[1].startswith("0 ") and lines[1].count(",") == 3      # every token: its three numbers
        page.select_option(f"{VIEW} .vz-layer", "0")
        page.locator(f"{VIEW} .vz-kind input[value='encoder']").check()
        drawn(page, "encoder:0")
        page.goto(page.url)                                              # a reload keeps the pick
        wait_for_app(page)
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='encoder:0']", timeout=LOAD_MS)
        # the page's server-side views, and back: the view is drawn again
        page.locator("label", has_text=message("en", "ffn.view.smoothing")).first.click()
        page.wait_for_function("() => !document.querySelector('.vz-deck') && !!document.querySelector('.js-plotly-plot')",
                               timeout=LOAD_MS)
        assert "stack" not in url_pick(page)
        page.locator("label", has_text=message("en", "ffn.view.ffn")).first.click()
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='encoder:0'] .vz-fig-units .main-svg", timeout=LOAD_MS)
        page.locator(f"{VIEW} .vz-kind input[value='decoder']").check()
        drawn(page, "decoder:0")
        assert url_pick(page) == {"stack": "decoder", "layer": "0"}
    finally:
        page.close()


def test_the_dropout_views_kind_and_layer_are_picked_in_the_browser(chromium, app_url):
    """The dropout view's kind and layer are its deck's picks (issue 44): a deep link's pick drawn, another kind and
    layer drawn with no script run and written to the URL as `kind` and `layer` (the head stays the link's: a
    server picker), the pick's caption under it, its CSV downloaded (the server's, on request)."""
    page, sent = open_view(chromium, app_url, view="dropout", kind="cross", layer=1, head=2)
    try:
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='cross:1']", timeout=DRAWN_MS)
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/ffn-dropout-en-normal.png")
        assert page.locator(f"{VIEW} .vz-kind input[value='cross']").is_checked()
        before = sent.count
        page.locator(f"{VIEW} .vz-kind input[value='decoder']").check()                 # the mouse
        drawn(page, "decoder:1")
        page.select_option(f"{VIEW} .vz-layer", "0")
        drawn(page, "decoder:0")
        pick_ms = float(page.locator(VIEW).get_attribute("data-pick-ms"))
        query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
        assert {name: query[name][0] for name in ("view", "kind", "layer", "head")} == {
            "view": "dropout", "kind": "decoder", "layer": "0", "head": "2"}
        title = page.locator(f"{VIEW} .vz-fig-drop .gtitle").text_content()
        assert title.startswith(message("en", "ffn.drop.title", kind=message("en", "fig.kind.decoder"), layer=0,
                                        head=2, p="{p}").split("{p}")[0])
        caption = page.locator(f"{VIEW} .vz-text-drop-caption").text_content()
        assert caption.startswith("Dropout p = ") and "% of the non-zero weights" in caption
        page.wait_for_timeout(300)
        assert sent.count == before                                     # no script run
        print(f"dropout view: a pick drawn in {pick_ms:.0f} ms, load average {os.getloadavg()[0]:.2f}")
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='drop']")
        assert download.value.suggested_filename.endswith("-decoder-L0-H2-dropout.csv")
        with open(download.value.path(), encoding="utf-8", newline="") as file:
            rows = list(csv.reader(file))
        assert rows[1][0].startswith("0 ") and len(rows) == len(rows[0])      # decoder self: every query, every key
    finally:
        page.close()
