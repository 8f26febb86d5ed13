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


DROP_PANEL_JS = f"() => JSON.stringify(document.querySelector('{VIEW} .vz-fig-drop')._fullData[0].z)"   # "off"


def drop_url(page) -> dict[str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return {name: query[name][0] for name in ("view", "kind", "layer", "head") if name in query}


def drop_title_start(lang: str, kind: str, layer: int, head: int) -> str:
    """The dropout picture's title up to its rate p (what names the pick), without spaces (plotly's lines)."""
    words = message(lang, "ffn.drop.title", kind=message(lang, f"fig.kind.{kind}"), layer=layer, head=head, p="{p}")
    return words.split("{p}")[0].replace(" ", "")


def drop_title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-drop .gtitle").text_content().replace(" ", "")


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", False), ("en", True), ("zh", True)])
def test_the_dropout_views_head_is_picked_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    """The dropout view's head is its deck's pick (issue 44; it was a server select box, a script run a head): the
    view's head select, each head of the model and no mean, beside the kind and layer; another head drawn with no
    script run and written to the URL's head, the kind and layer kept."""
    params = {"lang": lang, "view": "dropout", **({"present": 1} if present else {})}
    page, sent = open_view(chromium, app_url, **params)
    try:
        shot = f"{SHOTS}/ffn-dropout-{lang}-{'presenter' if present else 'normal'}" if SHOTS else None
        drawn(page, "cross:0:0")                                        # cross-attention's head 0 unless linked
        assert page.locator(f"{VIEW} .vz-head option").all_text_contents() == [
            message(lang, "ui.head_n", h=h) for h in range(8)]          # no mean: dropout acts per head
        assert page.locator(f"{VIEW} .vz-head").get_attribute("aria-label") == message(lang, "ui.head")
        before, shown = sent.count, page.evaluate(DROP_PANEL_JS)
        page.select_option(f"{VIEW} .vz-head", "5")                     # the mouse
        drawn(page, "cross:0:5")
        assert drop_url(page) == {"view": "dropout", "kind": "cross", "layer": "0", "head": "5"}
        assert page.evaluate(DROP_PANEL_JS) != shown                    # another head's weights
        assert drop_title(page).startswith(drop_title_start(lang, "cross", 0, 5))
        page.focus(f"{VIEW} .vz-head")                                  # the keyboard
        page.keyboard.press("ArrowDown")
        drawn(page, "cross:0:6")
        assert drop_url(page)["head"] == "6"
        head_ms = float(page.locator(VIEW).get_attribute("data-pick-ms"))     # the view's clock: event to drawn
        page.locator(f"{VIEW} .vz-kind input[value='decoder']").check()  # a kind: the head kept
        drawn(page, "decoder:0:6")
        assert drop_url(page) == {"view": "dropout", "kind": "decoder", "layer": "0", "head": "6"}
        assert drop_title(page).startswith(drop_title_start(lang, "decoder", 0, 6))
        caption = page.locator(f"{VIEW} .vz-text-drop-caption").text_content()
        assert caption.startswith(message(lang, "ffn.drop.caption").split("{")[0].strip())
        page.wait_for_timeout(300)
        assert sent.count == before                                     # no script run
        print(f"dropout view ({lang}, {'presenter' if present else 'normal'}): a head drawn in {head_ms:.0f} ms, "
              f"load average {os.getloadavg()[0]:.2f}")
        check_projector_sizes(page, f"{VIEW} .vz-head", f"{VIEW} .vz-fig-drop .ytick text", present, f"{VIEW} .vz-layer")
        if shot:
            page.screenshot(path=f"{shot}-head-6.png", full_page=True)
    finally:
        page.close()


def test_the_dropout_views_deep_link_its_kind_and_layer_and_a_heads_csv(chromium, app_url):
    """A deep link's kind, layer and head drawn; another kind and layer drawn with no script run and written to the
    URL (the head kept), the pick's caption under it; a head's CSV downloaded (the server's, on request: that
    head's first sample); a reload keeps the pick."""
    page, sent = open_view(chromium, app_url, view="dropout", kind="cross", layer=1, head=2)
    try:
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='cross:1:2']", timeout=DRAWN_MS)
        assert page.locator(f"{VIEW} .vz-kind input[value='cross']").is_checked()
        assert page.locator(f"{VIEW} .vz-head").input_value() == "2"
        before = sent.count
        page.locator(f"{VIEW} .vz-kind input[value='decoder']").check()                 # the mouse
        drawn(page, "decoder:1:2")
        page.select_option(f"{VIEW} .vz-layer", "0")
        drawn(page, "decoder:0:2")
        assert drop_url(page) == {"view": "dropout", "kind": "decoder", "layer": "0", "head": "2"}
        assert drop_title(page).startswith(drop_title_start("en", "decoder", 0, 2))
        caption = page.locator(f"{VIEW} .vz-text-drop-caption").text_content()
        assert caption.startswith("Dropout p = ") and "% of the non-zero weights" in caption
        page.wait_for_timeout(300)
        assert sent.count == before                                     # no script run
        page.select_option(f"{VIEW} .vz-head", "4")
        drawn(page, "decoder:0:4")
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='drop']")
        assert download.value.suggested_filename.endswith("-decoder-L0-H4-dropout.csv")
        with open(download.value.path(), encoding="utf-8", newline="") as file:
            rows = list(csv.reader(file))
        assert rows[1][0].startswith("0 ") and len(rows) == len(rows[0])      # decoder self: every query, every key
        wait_for_app(page)
        page.goto(page.url)                                              # a reload keeps the pick
        wait_for_app(page)
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='decoder:0:4']", timeout=LOAD_MS)
        assert page.locator(f"{VIEW} .vz-head").input_value() == "4"
    finally:
        page.close()
