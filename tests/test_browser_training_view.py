"""The live training page's snapshots drawn in the browser (issue 44), in Chromium, after one toy training (copy,
small: 2 layers of 4 heads, 20 steps: four snapshots, steps 5 to 20) in one page: a snapshot picked with the mouse (a
step in the row of training steps, Next ▶, ◀ Previous) and with the keyboard (the row's arrow keys), and the maps'
layer and head picked in their selects (chosen, and with the arrow keys), in English and 中文, normal and presenter
mode (the sidebar's switches: the same session, so the same training, the reader's pick kept), each drawn with no
script run and never written to the URL; a head changed redraws the maps, not the snapshot's curve; the curve's and
a map's CSVs (the picked layer's and head's) download; a new training opens at its last snapshot, the last layer's
mean of heads. The server side: tests/test_page_training_view.py."""
from __future__ import annotations

import urllib.parse

import pytest

from browser_utils import PageRuns, check_projector_sizes, view_drew, wait_for_app
from test_browser_explorer_view import DRAWN_MS, LOAD_MS
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
STEPS = (5, 10, 15, 20)             # the snapshots' training steps
FIRST = "3:1:-1"                    # the first pick: the last snapshot, the last layer, the mean of heads


@pytest.fixture(scope="module")
def trained(chromium, app_url):
    """One page, one training: the smallest the page offers."""
    query = urllib.parse.urlencode({"model": "toy-reverse", "task": "copy", "size": "small", "steps": 20,
                                    "example": "a b c"})
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    runs = PageRuns(page)
    page.goto(f"{app_url}/training?{query}")
    wait_for_app(page)
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_selector(f"{VIEW}[data-whole='1'][data-drawn-pick='{FIRST}']", timeout=LOAD_MS)
    wait_for_app(page)
    yield page, runs
    page.close()


def drawn(page, index: int, layer: int = 1, head: int = -1) -> None:
    view_drew(page, VIEW, f"{index}:{layer}:{head}", DRAWN_MS)


def shown_pick(page) -> tuple[int, int, int]:
    return tuple(map(int, page.locator(VIEW).get_attribute("data-drawn-pick").split(":")))


def map_title(page, which: str = "cross") -> str:
    return page.locator(f"{VIEW} .vz-fig-{which} .gtitle").text_content().replace(" ", "")


def head_name(lang: str, layer: int, head: int) -> str:
    """The maps' titles' name of a layer and head (viz/pages/training.head_name), as plotly shows it."""
    said = message(lang, "training.head_name", layer=message(lang, "ui.layer_n", i=layer),
                   head=message(lang, "ui.head_mean") if head == -1 else message(lang, "ui.head_n", h=head))
    return said.replace(" ", "")


CURVE_WATCH_JS = """(s) => {
  // the curve in sight, and its draws from now on (plotly_afterplot: every draw or restyle of it)
  const curve = document.querySelector(s);
  window.vzCurve = curve;
  window.vzCurveDraws = 0;
  curve.on('plotly_afterplot', () => { if (window.vzCurve === curve) window.vzCurveDraws += 1; });
}"""
CURVE_SAME_JS = "(s) => document.querySelector(s) === window.vzCurve ? window.vzCurveDraws : -1"


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
        shown = shown_pick(page)
        switch_to(page, lang, present)
        grid_title_says(page, lang, shown[0])              # the new language's body, the reader's pick kept
        wait_for_app(page)                                 # (the view told the server the pick: one run)
        drawn(page, *shown)
        page.wait_for_timeout(500)
        page.select_option(f"{VIEW} select.vz-layer", "1")  # the pick the steps below keep
        page.select_option(f"{VIEW} select.vz-head", "-1")
        drawn(page, shown[0])
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
        assert not {"step", "layer", "head"} & set(url_query(page))     # a pick is no link's
        check_projector_sizes(page, f"{VIEW} .vz-step-choice", f"{VIEW} .vz-fig-curve .xtick text", present,
                              f"{VIEW} .vz-text-caption", f"{VIEW} select.vz-head")


def test_the_maps_layer_and_head_with_the_mouse_and_the_keyboard_the_curve_left_as_drawn(trained):
    page, runs = trained
    for lang, present in (("en", False), ("zh", True)):
        switch_to(page, lang, present)
        wait_for_app(page)
        page.click(f"{VIEW} .vz-step-choice >> nth=1")
        drawn(page, 1, *shown_pick(page)[1:])
        page.select_option(f"{VIEW} select.vz-layer", "1")
        page.select_option(f"{VIEW} select.vz-head", "-1")
        drawn(page, 1, 1, -1)
        page.wait_for_timeout(500)
        before = runs.count
        # the selects: under the maps, named in the reader's language, the mean of heads first
        assert page.locator(f"{VIEW} .vz-blocks .vz-pickers-title").text_content() == message(lang, "training.maps.pick")
        assert page.locator(f"{VIEW} select.vz-head").get_attribute("aria-label") == message(lang, "ui.head")
        assert page.locator(f"{VIEW} select.vz-head option").all_text_contents() == [
            message(lang, "ui.head_mean"), *(message(lang, "ui.head_n", h=h) for h in range(4))]
        page.evaluate(CURVE_WATCH_JS, f"{VIEW} .vz-fig-curve")
        page.select_option(f"{VIEW} select.vz-head", "2")    # a head chosen in its select
        drawn(page, 1, 1, 2)
        assert head_name(lang, 1, 2) in map_title(page, "cross") and head_name(lang, 1, 2) in map_title(page, "encoder")
        assert page.evaluate(CURVE_SAME_JS, f"{VIEW} .vz-fig-curve") == 0     # the step's curve: not drawn again
        assert grid_title(page) == message(lang, "training.grid.title", step=10).replace(" ", "")
        page.focus(f"{VIEW} select.vz-head")                 # the keyboard: the select's arrow keys
        page.keyboard.press("ArrowDown")
        drawn(page, 1, 1, 3)
        assert head_name(lang, 1, 3) in map_title(page)
        page.focus(f"{VIEW} select.vz-layer")
        page.keyboard.press("ArrowUp")                       # layer 0, the head kept
        drawn(page, 1, 0, 3)
        assert head_name(lang, 0, 3) in map_title(page, "encoder")
        page.select_option(f"{VIEW} select.vz-head", "-1")   # the layer's mean of heads
        drawn(page, 1, 0, -1)
        assert head_name(lang, 0, -1) in map_title(page)
        assert page.evaluate(CURVE_SAME_JS, f"{VIEW} .vz-fig-curve") == 0
        page.click(f"{VIEW} .vz-next")                       # another snapshot keeps the layer and head
        drawn(page, 2, 0, -1)
        assert head_name(lang, 0, -1) in map_title(page)
        assert page.evaluate(CURVE_SAME_JS, f"{VIEW} .vz-fig-curve") != 0     # ...and its own curve (the probe sees it)
        pick_ms = float(page.locator(VIEW).get_attribute("data-pick-ms"))
        assert pick_ms < DRAWN_MS, pick_ms
        page.wait_for_timeout(300)
        assert runs.count == before, (lang, present)        # no script run
        assert not {"step", "layer", "head"} & set(url_query(page))


def test_the_csvs_of_the_picked_head_and_a_new_training(trained):
    page, runs = trained
    switch_to(page, "en", False)
    wait_for_app(page)
    page.click(f"{VIEW} .vz-step-choice >> nth=1")
    page.select_option(f"{VIEW} select.vz-layer", "0")
    page.select_option(f"{VIEW} select.vz-head", "1")
    drawn(page, 1, 0, 1)
    for figure, name, rows in (("curve", "live-copy-small-curve.csv", 4),
                               ("cross", "live-copy-cross-step10-L0-H1.csv", 4)):
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='{figure}']")
        assert download.value.suggested_filename == name
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert len(lines) == 1 + rows, lines
    assert page.locator(f"{VIEW} .vz-csv[data-figure='grid']").count() == 0       # the grid: an image only
    wait_for_app(page)
    assert shown_pick(page) == (1, 0, 1) and not {"step", "layer", "head"} & set(url_query(page))
    # a new training: its own snapshots, the last one first
    sig = page.locator(VIEW).get_attribute("data-sig")
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function("([s, sig]) => { const v = document.querySelector(s);"
                           " return !!v && v.dataset.sig !== sig && v.dataset.whole === '1'; }",
                           arg=[VIEW, sig], timeout=LOAD_MS)
    wait_for_app(page)
    drawn(page, 3)                                          # the last snapshot, the last layer's mean of heads
    assert grid_title(page) == message("en", "training.grid.title", step=20).replace(" ", "")
    assert head_name("en", 1, -1) in map_title(page)
