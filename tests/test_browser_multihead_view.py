"""The multi-head page drawn in the browser (issue 44), in Chromium: a kind and a layer picked with the mouse and
with the keyboard, in English and 中文, normal and presenter mode; the pick is drawn with no message to the server
(no script run) and written to the URL; decoder self-attention's future cells stay grey; a picture's CSV
downloads; a reload keeps the pick. The server side: tests/test_page_step_multihead.py."""
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


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/multihead?{query}", VIEW, LOAD_MS)


def drawn(page, pick: str) -> None:
    view_drew(page, VIEW, pick, DRAWN_MS)


def heads_title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-heads .gtitle").text_content()


def url_pick(page) -> tuple[str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return query["kind"][0], query["layer"][0]


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", False), ("en", True), ("zh", True)])
def test_pick_a_kind_and_a_layer_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    params = {"lang": lang, **({"present": 1} if present else {})}
    page, sent = open_view(chromium, app_url, **params)
    try:
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/multihead-{lang}-{'presenter' if present else 'normal'}.png")
        before = sent.count
        page.locator(f"{VIEW} .vz-kind", has_text=message(lang, "fig.kind.decoder")).click()   # the mouse
        drawn(page, "decoder:0")
        where = message(lang, "multihead.where", kind=message(lang, "fig.kind.decoder"), layer=0)
        assert heads_title(page).startswith(where)
        assert url_pick(page) == ("decoder", "0")
        page.focus(f"{VIEW} .vz-layer")                                 # the keyboard: the layer picker
        page.keyboard.press("ArrowDown")
        drawn(page, "decoder:1")
        assert url_pick(page) == ("decoder", "1")
        page.focus(f"{VIEW} .vz-kinds input:checked")                   # the kind's radio buttons
        page.keyboard.press("ArrowRight")
        drawn(page, "cross:1")
        assert url_pick(page) == ("cross", "1")
        where = message(lang, "multihead.where", kind=message(lang, "fig.kind.cross"), layer=1)
        assert heads_title(page).startswith(where)
        # the table and the words under the picture are the pick's: cross-attention has no offset column
        columns = page.eval_on_selector_all(f"{VIEW} .vz-table thead th", "els => els.map(e => e.textContent)")
        assert message(lang, "multihead.table.offset") not in columns
        page.wait_for_timeout(300)
        assert sent.count == before                                     # no script run
        check_projector_sizes(page, f"{VIEW} .vz-layer", f"{VIEW} .vz-fig-heads .ytick text", present,
                              f"{VIEW} .vz-table td")
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/multihead-{lang}-{'presenter' if present else 'normal'}-cross.png")
    finally:
        page.close()


def test_masked_cells_stay_masked_a_folded_picture_draws_when_opened_and_a_reload_keeps_the_pick(chromium, app_url):
    page, sent = open_view(chromium, app_url, kind="encoder", layer=0)
    try:
        page.select_option(f"{VIEW} .vz-layer", "1")
        page.locator(f"{VIEW} .vz-kind input[value='decoder']").check()
        drawn(page, "decoder:1")
        masked = page.evaluate(f"""() => {{
          const gd = document.querySelector('{VIEW} .vz-fig-heads');
          const weights = gd._fullData.filter((t) => t.type === 'heatmap' && t.coloraxis);
          return weights.map((t) => {{ const z = t._z || t.z;
            return z.every((row, i) => Array.from(row).every((v, j) => j <= i || Number.isNaN(v))); }}); }}""")
        assert masked and all(masked)                    # every head's future cells: no number
        before = sent.count
        page.click(f"{VIEW} .vz-details-full summary")   # the folded stages: drawn when opened, still no run
        page.wait_for_function(f"() => !!document.querySelector('{VIEW} .vz-fig-concat .main-svg')", timeout=DRAWN_MS)
        title = page.locator(f"{VIEW} .vz-fig-concat .gtitle").text_content()
        assert title == message("en", "multihead.concat.title")
        assert sent.count == before
        page.goto(page.url)
        wait_for_app(page)
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='decoder:1']", timeout=LOAD_MS)
    finally:
        page.close()


def test_picks_near_the_shown_one_are_drawn_ahead_and_shown_as_their_own(chromium, app_url):
    """The view draws the picks next to the shown one out of sight while the reader looks (browser_view.js
    drawAhead): a kind picked then shows its own picture at once (its title, its rows: decoder self-attention's
    future cells no number), one picture of the figure in sight, at most KEPT_PLOTS kept, still no script run."""
    page, sent = open_view(chromium, app_url, kind="encoder", layer=0)
    try:
        page.wait_for_function(f"""() => document.querySelectorAll('{VIEW} .vz-stack .vz-offstage .main-svg').length
                                   >= 4""", timeout=DRAWN_MS)
        before = sent.count
        page.locator(f"{VIEW} .vz-kind input[value='decoder']").check()
        drawn(page, "decoder:0")
        assert float(page.locator(VIEW).get_attribute("data-pick-ms")) < 1000
        assert page.locator(f"{VIEW} .vz-fig-heads").count() == 1
        where = message("en", "multihead.where", kind=message("en", "fig.kind.decoder"), layer=0)
        assert heads_title(page).startswith(where)
        masked = page.evaluate(f"""() => document.querySelector('{VIEW} .vz-fig-heads')._fullData
          .filter((t) => t.type === 'heatmap' && t.coloraxis)
          .every((t) => (t._z || t.z).every((row, i) => Array.from(row).every((v, j) => j <= i || Number.isNaN(v))))""")
        assert masked
        shown = page.evaluate(f"""() => getComputedStyle(document.querySelector('{VIEW} .vz-fig-heads')).visibility""")
        assert shown == "visible"
        page.wait_for_timeout(1500)                      # the picks next to decoder:0 drawn ahead in their turn
        kept = page.evaluate(f"""() => Math.max(...[...document.querySelectorAll('{VIEW} .vz-stack')]
                                   .map((stack) => stack.querySelectorAll(':scope > .vz-plot').length))""")
        assert 2 <= kept <= 10
        assert sent.count == before                      # no script run
    finally:
        page.close()


def test_the_csv_of_a_picture_downloads(chromium, app_url):
    page, _ = open_view(chromium, app_url, kind="cross", layer=2)
    try:
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='heads']")
        assert download.value.suggested_filename.endswith("-cross-L2-heads.csv")
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert lines[1].startswith("head 0,")                                # a block of rows a head
    finally:
        page.close()
