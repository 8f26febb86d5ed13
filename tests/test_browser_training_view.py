"""The live training page's snapshots drawn in the browser (issue 44), in Chromium, after one toy training (copy, tiny,
20 steps: four snapshots, steps 5 to 20) in one page: a snapshot picked with the mouse (a step in the row of
training steps, Next ▶, ◀ Previous) and with the keyboard (the row's arrow keys), in English and 中文, normal and
presenter mode (the sidebar's switches: the same session, so the same training), each drawn with no script run and
never written to the URL; the curve's and a map's CSVs download; a head picked on the server keeps the reader's
snapshot; a new training opens at its last snapshot. The server side: tests/test_page_training_view.py."""
from __future__ import annotations

import urllib.parse

import pytest

from browser_utils import PageRuns, check_projector_sizes, view_drew, wait_for_app
from test_browser_explorer_view import DRAWN_MS, LOAD_MS
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
STEPS = (5, 10, 15, 20)             # the snapshots' training steps


@pytest.fixture(scope="module")
def trained(chromium, app_url):
    """One page, one training: the smallest the page offers."""
    query = urllib.parse.urlencode({"model": "toy-reverse", "task": "copy", "size": "tiny", "steps": 20,
                                    "example": "a b c"})
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    runs = PageRuns(page)
    page.goto(f"{app_url}/training?{query}")
    wait_for_app(page)
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_selector(f"{VIEW}[data-whole='1'][data-drawn-pick='3']", timeout=LOAD_MS)
    wait_for_app(page)
    yield page, runs
    page.close()


def drawn(page, index: int) -> None:
    view_drew(page, VIEW, str(index), DRAWN_MS)


def grid_title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-grid .gtitle").text_content().replace(" ", "")


def grid_title_says(page, lang: str, index: int) -> None:
    """Wait until the grid's title is the snapshot's, in `lang` (a new body is drawn a moment after its run)."""
    want = message(lang, "training.grid.title", step=STEPS[index]).replace(" ", "")
    page.wait_for_function("([s, w]) => { const t = document.querySelector(s);"
                           " return !!t && t.textContent.replace(/ /g, '') === w; }",
                           arg=[f"{VIEW} .vz-fig-grid .gtitle", want], timeout=LOAD_MS)


def url_query(page) -> dict[str, str]:
    return {name: values[0] for name, values in urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).items()}


def sidebar(page):
    """The sidebar, opened (presenter mode folds it)."""
    expand = page.get_by_test_id("stExpandSidebarButton")
    if expand.count() and expand.is_visible():
        expand.click()
    return page.locator('[data-testid="stSidebar"]')


def switch_to(page, lang: str, present: bool) -> None:
    """The sidebar's language and presenter switches: runs of the same session (the training stays)."""
    if (url_query(page).get("lang", "en") == "zh") != (lang == "zh"):
        sidebar(page).get_by_text("中文" if lang == "zh" else "English", exact=True).click()
        page.wait_for_function(f"() => (new URL(location.href).searchParams.get('lang') || 'en') === '{lang}'",
                               timeout=LOAD_MS)
        wait_for_app(page)
    if (url_query(page).get("present") == "1") != present:
        sidebar(page).get_by_text(message(lang, "presenter.toggle"), exact=True).click()
        page.wait_for_function(f"() => (new URL(location.href).searchParams.get('present') === '1') === {str(present).lower()}",
                               timeout=LOAD_MS)
        wait_for_app(page)


def test_a_snapshot_with_the_mouse_and_the_keyboard_in_both_languages_and_sizes(trained):
    page, runs = trained
    for lang, present in (("en", False), ("zh", False), ("zh", True), ("en", True)):
        shown = int(page.locator(VIEW).get_attribute("data-drawn-pick"))
        switch_to(page, lang, present)
        grid_title_says(page, lang, shown)                 # the new language's body, the reader's snapshot kept
        wait_for_app(page)                                 # (the view told the server the snapshot: one run)
        page.wait_for_timeout(500)
        assert page.locator(f"{VIEW} .vz-step-choice").all_text_contents() == [str(step) for step in STEPS]
        assert page.locator(f"{VIEW} .vz-next").text_content() == message(lang, "step.next")
        before = runs.count
        page.click(f"{VIEW} .vz-step-choice >> nth=0")      # the mouse: a step in the row
        drawn(page, 0)
        assert grid_title(page) == message(lang, "training.grid.title", step=5).replace(" ", "")
        assert page.locator(f"{VIEW} .vz-previous").is_disabled()
        page.click(f"{VIEW} .vz-next")                      # Next ▶
        drawn(page, 1)
        caption = page.locator(f"{VIEW} .vz-text-caption").text_content()
        assert message(lang, "training.snap.caption", source="a b c", answer="a b c", step=10, accuracy="{a}",
                       loss="{l}").split("{a}")[0] in caption
        page.focus(f"{VIEW} .vz-step-choice input:checked")  # the keyboard: the row's arrow keys
        page.keyboard.press("ArrowRight")
        drawn(page, 2)
        page.keyboard.press("ArrowRight")
        drawn(page, 3)
        assert page.locator(f"{VIEW} .vz-next").is_disabled()
        page.keyboard.press("ArrowLeft")
        drawn(page, 2)
        page.click(f"{VIEW} .vz-previous")                  # ◀ Previous
        drawn(page, 1)
        assert grid_title(page) == message(lang, "training.grid.title", step=10).replace(" ", "")
        cross = page.locator(f"{VIEW} .vz-fig-cross .gtitle").text_content()
        assert message(lang, "training.snap.cross", step=10, name="{n}").split("{n}")[0].replace("<br>", "") in cross
        page.wait_for_timeout(300)
        assert runs.count == before, (lang, present)        # no script run
        assert "step" not in url_query(page)                # a snapshot is no link's
        check_projector_sizes(page, f"{VIEW} .vz-step-choice", f"{VIEW} .vz-fig-curve .xtick text", present,
                              f"{VIEW} .vz-text-caption")


def test_the_csvs_a_head_picked_on_the_server_and_a_new_training(trained):
    page, runs = trained
    switch_to(page, "en", False)
    page.click(f"{VIEW} .vz-step-choice >> nth=1")
    drawn(page, 1)
    for figure, name, rows in (("curve", "live-copy-tiny-curve.csv", 4), ("cross", "live-copy-cross-step10.csv", 4)):
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='{figure}']")
        assert download.value.suggested_filename == name
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert len(lines) == 1 + rows, lines
    assert page.locator(f"{VIEW} .vz-csv[data-figure='grid']").count() == 0       # the grid: an image only
    wait_for_app(page)
    # the head: a server select box, a run, a new body for head 1; the reader's snapshot stays
    sig = page.locator(VIEW).get_attribute("data-sig")
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] [role="combobox"]').nth(1).click()
    page.keyboard.type(message("en", "ui.head_n", h=1))                # the options it matches: one
    page.keyboard.press("Enter")
    page.wait_for_function("([s, sig]) => document.querySelector(s).dataset.sig !== sig", arg=[VIEW, sig],
                           timeout=LOAD_MS)
    page.wait_for_function("(s) => document.querySelector(s).textContent.includes('head 1')",
                           arg=f"{VIEW} .vz-fig-cross .gtitle", timeout=LOAD_MS)
    wait_for_app(page)
    assert page.locator(VIEW).get_attribute("data-drawn-pick") == "1" and "step" not in url_query(page)
    assert grid_title(page) == message("en", "training.grid.title", step=10).replace(" ", "")
    # a new training: its own snapshots, the last one first
    sig = page.locator(VIEW).get_attribute("data-sig")
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function("([s, sig]) => { const v = document.querySelector(s);"
                           " return !!v && v.dataset.sig !== sig && v.dataset.whole === '1'; }",
                           arg=[VIEW, sig], timeout=LOAD_MS)
    wait_for_app(page)
    drawn(page, 3)
    assert grid_title(page) == message("en", "training.grid.title", step=20).replace(" ", "")
