"""The explorer drawn in the browser (issue 44), in Chromium: a head picked with the mouse (a thumbnail of the grid)
and with the keyboard (the pickers), in English and 中文, normal and presenter mode; the pick is drawn with no
script run of the page and written to the URL; the masked cells of decoder self-attention stay
grey; the CSV of a pick downloads."""
from __future__ import annotations

import urllib.parse

import pytest

from browser_utils import HeldAnswers, check_projector_sizes, open_browser_view, view_drew, wait_for_app
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

SENTENCE = "The cat sat on the mat."
LOAD_MS = 240_000
DRAWN_MS = 30_000
VIEW = ".vz-explorer"


def open_view(chromium, app_url: str, **params):
    """The explorer once the view holds every kind (it asks for them once it has drawn the first screen: a pick
    while that run is under way is told to the server once it is over)."""
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/explorer?{query}", VIEW, LOAD_MS)


def drawn(page, pick: str) -> None:
    view_drew(page, VIEW, pick, DRAWN_MS)


def map_title(page) -> str:
    return page.locator(f"{VIEW} .vz-map .gtitle").text_content()


def url_pick(page) -> tuple[str, str, str]:
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return query["kind"][0], query["layer"][0], query["head"][0]


def click_thumbnail(page, layer: int, head: int) -> None:
    """A click on the grid's thumbnail of (layer, head): where plotly draws its click target."""
    x, y = page.evaluate("""([layer, head]) => {
      const gd = document.querySelector('.vz-grid');
      const trace = gd._fullData.find((t) => t.customdata);
      const i = trace.customdata.findIndex((c) => c[0] === layer && c[1] === head);
      const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
      const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
      return [box.left + xa.d2p(trace.x[i]), box.top + ya.d2p(trace.y[i])]; }""", [layer, head])
    page.mouse.click(x, y)


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", False), ("en", True), ("zh", True)])
def test_pick_a_head_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    params = {"lang": lang, **({"present": 1} if present else {})}
    page, sent = open_view(chromium, app_url, **params)
    try:
        before = sent.count
        click_thumbnail(page, 1, 2)                                  # the mouse: a thumbnail of the grid
        drawn(page, "encoder:1:2")
        kind = message(lang, "fig.kind.encoder")                     # the title in the reader's words
        assert map_title(page) == message(lang, "explorer.one.head", kind=kind, layer=1, head=2)
        assert url_pick(page) == ("encoder", "1", "2")
        page.focus(f"{VIEW} .vz-head")                               # the keyboard: the head picker
        page.keyboard.press("ArrowDown")
        drawn(page, "encoder:1:3")
        assert url_pick(page) == ("encoder", "1", "3")
        page.focus(f"{VIEW} .vz-kinds input:checked")                # the kind's radio buttons
        page.keyboard.press("ArrowRight")
        drawn(page, "decoder:1:3")
        assert url_pick(page) == ("decoder", "1", "3")
        page.wait_for_timeout(300)
        assert sent.count == before                                  # no script run of the page
        check_projector_sizes(page, f"{VIEW} .vz-head", ".vz-map .ytick text", present)
    finally:
        page.close()


def test_masked_cells_stay_masked_and_a_reload_keeps_the_pick(chromium, app_url):
    """Decoder self-attention's future cells are grey (the builder's mask overlay) with no number in every head
    picked; the URL the picks wrote opens the same view."""
    page, _ = open_view(chromium, app_url, kind="decoder", layer=0, head=0)
    try:
        page.select_option(f"{VIEW} .vz-head", "5")
        drawn(page, "decoder:0:5")
        traces = page.evaluate("""() => document.querySelector('.vz-map')._fullData
                                  .map((t) => [t.type, t.hoverinfo, t.z ? t.z.length : 0])""")
        assert len([t for t in traces if t[0] == "heatmap"]) == 2        # the weights and the grey mask over them
        nan_above = page.evaluate("""() => { const z = document.querySelector('.vz-map').data[0].z;
                                     return z.every((row, i) => row.every((v, j) => j <= i || Number.isNaN(v))); }""")
        assert nan_above
        url = page.url
        page.goto(url)
        wait_for_app(page)
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='decoder:0:5']", timeout=LOAD_MS)
        assert "head 5" in map_title(page)
    finally:
        page.close()


def test_the_csv_of_a_pick_downloads(chromium, app_url):
    page, _ = open_view(chromium, app_url, kind="cross", layer=2, head=1)
    try:
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv")
        assert download.value.suggested_filename.endswith("-cross-L2-H1.csv")
        text = open(download.value.path(), encoding="utf-8").read()
        assert text.splitlines()[0].startswith(",0 ")                       # the key labels, then a row a query
    finally:
        page.close()


def tells_the_view_a_pick(message) -> bool:
    """A run the browser asks for to tell the server the explorer view's pick (its setStateValue("pick"))."""
    return message.WhichOneof("type") == "rerun_script" and any(
        w.id.endswith("explorer-view") and w.WhichOneof("value") == "json_value" and '"pick"' in w.json_value
        for w in message.rerun_script.widget_states.widgets)


def test_a_pick_made_while_the_server_answers_an_older_one_stays(chromium, app_url):
    """A head picked here is told to the server by the next run (here: the sidebar's figure format); a head picked
    while the server answers it stays, its CSV included (the answer, the older pick, once took the view back)."""
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    answers = HeldAnswers(page, hold_after=tells_the_view_a_pick)
    try:
        page.goto(f"{app_url}/explorer?" + urllib.parse.urlencode(
            {"model": "en-es", "text": SENTENCE, "kind": "encoder", "layer": 0, "head": 0}))
        page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=LOAD_MS)
        wait_for_app(page)
        page.select_option(f"{VIEW} .vz-head", "2")
        drawn(page, "encoder:0:2")
        page.get_by_text("SVG", exact=True).click()          # a run for the sidebar: its answer tells head 2
        answers.wait_until_holding(page)
        page.select_option(f"{VIEW} .vz-head", "1")          # ...picked while the server answers head 2
        drawn(page, "encoder:0:1")
        answers.let_go()
        wait_for_app(page)
        page.wait_for_function("() => new URL(location.href).searchParams.get('head') === '1'", timeout=DRAWN_MS)
        page.wait_for_timeout(500)
        assert page.evaluate(f"document.querySelector('{VIEW}').dataset.drawnPick") == "encoder:0:1"
        assert url_pick(page) == ("encoder", "0", "1")
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv")
        assert download.value.suggested_filename.endswith("-encoder-L0-H1.csv")
    finally:
        page.close()
