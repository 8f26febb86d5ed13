"""The decoding page's step drawn in the browser (issue 44), in Chromium: the step moved with the mouse (the ▶ and ◀
buttons, a click on the slider) and with the keyboard (the arrow keys on the focused slider), in English and 中文,
normal and presenter mode; each step is drawn with no script run and written to the URL; a link's step= opens that
step; a step's picture's CSV downloads. The server side: tests/test_page_decoding_about.py."""
from __future__ import annotations

import urllib.parse

import pytest

from browser_utils import open_browser_view, view_drew
from test_browser_explorer_view import DRAWN_MS, LOAD_MS, SENTENCE
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/decoding?{query}", VIEW, LOAD_MS)


def drawn(page, step: int) -> None:
    view_drew(page, VIEW, str(step), DRAWN_MS)


def title(page, figure: str) -> str:
    return page.locator(f"{VIEW} .vz-fig-{figure} .gtitle").first.text_content()


def url_step(page) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["step"][0]


def topk_bars(page) -> list:
    return page.evaluate(f"() => document.querySelector('{VIEW} .vz-fig-topk').data.map((t) => Array.from(t.y))")


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", True)])
def test_step_with_the_mouse_and_the_keyboard_draws_each_step_with_no_script_run(chromium, app_url, lang, present):
    page, runs = open_view(chromium, app_url, lang=lang, **({"present": 1} if present else {}))
    try:
        assert url_step(page) == "0"
        assert title(page, "topk") == message(lang, "decoding.topk.title", step=0, k=10)
        bars = topk_bars(page)
        page.eval_on_selector(f"{VIEW} .vz-fig-cross", "(el) => { el.closest('.vz-stack').dataset.kept = '1'; }")
        before = runs.count
        page.click(f"{VIEW} .vz-next")                                   # the mouse: ▶
        drawn(page, 1)
        # the first step after the whole body came keeps the page's layout (no collapse under a scrolled reader): the
        # figure's room is the same element (its plot may be another, drawn ahead for step 1)
        assert page.eval_on_selector(f"{VIEW} .vz-fig-cross", "(el) => el.closest('.vz-stack').dataset.kept") == "1"
        assert title(page, "topk") == message(lang, "decoding.topk.title", step=1, k=10)
        assert topk_bars(page) != bars                                    # the step's own candidates
        assert url_step(page) == "1"
        page.focus(f"{VIEW} .vz-step")                                   # the keyboard: the slider's arrow keys
        page.keyboard.press("ArrowRight")
        drawn(page, 2)
        page.keyboard.press("ArrowRight")
        drawn(page, 3)
        assert url_step(page) == "3"
        assert title(page, "cross").startswith(message(lang, "decoding.cross.title", step=3, layer=2)[:6])
        page.keyboard.press("ArrowLeft")
        drawn(page, 2)
        page.click(f"{VIEW} .vz-previous")                               # ◀
        drawn(page, 1)
        assert page.locator(f"{VIEW} .vz-step-value").text_content().startswith("1 / ")
        assert url_step(page) == "1"
        page.wait_for_timeout(300)
        assert runs.count == before                                       # no script run
        size = page.evaluate("(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)",
                             f"{VIEW} .vz-step-value")
        code = page.evaluate("(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)",
                             f"{VIEW} .vz-code")
        assert (size >= 20 and code >= 20) if present else size < 20, (size, code)
    finally:
        page.close()


def test_a_link_opens_its_step_and_a_step_pictures_csv_downloads(chromium, app_url):
    page, runs = open_view(chromium, app_url, step=4)
    try:
        drawn(page, 4)
        assert title(page, "topk").startswith("Step 4:")
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='cross']")
        assert download.value.suggested_filename.endswith("-decoding-step4-cross-L2.csv")
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert lines[1].startswith(message("en", "decoding.average") + ",")     # the average, then a row a head
    finally:
        page.close()


def test_a_server_side_change_keeps_the_readers_step_without_showing_another(chromium, app_url):
    """Top-k is a Streamlit widget: its run rebuilds the body and comes back with the step the server last knew (0);
    the view keeps the reader's step (told to the server once) and never draws step 0 meanwhile."""
    page, _ = open_view(chromium, app_url)
    try:
        for step in (1, 2, 3):
            page.click(f"{VIEW} .vz-next")
            drawn(page, step)
        page.evaluate(f"""() => {{ window.vzDrawn = [];
          new MutationObserver(() => window.vzDrawn.push(document.querySelector('{VIEW}').dataset.drawnPick))
            .observe(document.querySelector('{VIEW}'), {{attributes: true, attributeFilter: ['data-drawn-pick']}}); }}""")
        page.locator('[data-testid="stSlider"]:has([aria-label="Top-k candidates"]) input[type=range]').first.focus()
        page.keyboard.press("ArrowLeft")                                  # k: 10 -> 9
        page.wait_for_function("(s) => (document.querySelector(s + ' .vz-fig-topk .gtitle') || {}).textContent"
                               " === 'Step 3: next token, top 9'", arg=VIEW, timeout=LOAD_MS)
        assert set(page.evaluate("() => window.vzDrawn")) == {"3"}
        assert url_step(page) == "3"
    finally:
        page.close()
