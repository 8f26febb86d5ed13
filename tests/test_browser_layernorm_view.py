"""The LayerNorm page's layer drawn in the browser (issue 44), in Chromium: a layer picked with the mouse and with the
keyboard, in English (normal) and 中文 (presenter mode), in a deck with no kind row (the stack, the norm and the token
are the server's pickers); the pick is drawn with no script run and written to the URL as `layer`; a layer's
pictures' CSVs download; a deep link and a server-side change keep their layer; the token's histogram draws no tick
label over another. The server side: tests/test_page_layernorm.py."""
from __future__ import annotations

import json
import os
import re
import urllib.parse
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import streamlit  # noqa: F401  (its plotly theme, "streamlit": the one the app's figures are drawn with)

from browser_utils import check_projector_sizes, open_browser_view, view_drew, wait_for_app
from test_browser_explorer_view import DRAWN_MS, LOAD_MS, SENTENCE
from viz.core.catalogue import message
from viz.core.i18n import words
from viz.figures.layernorm import feature_histogram
from viz.figures.style import NORMAL, PRESENTER, Look

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
SHOTS = os.environ.get("VIZ_SHOTS")          # a folder: each case's screen saved there (to look at)


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/layernorm?{query}", VIEW, LOAD_MS)


def drawn(page, layer: int) -> None:
    view_drew(page, VIEW, str(layer), DRAWN_MS)


def stats_title(page) -> str:
    return page.locator(f"{VIEW} .vz-fig-stats .gtitle").text_content().replace(" ", "")


def title_start(lang: str, stack: str, layer: int) -> str:
    """The statistics picture's title up to the norm (what names the layer), without spaces (a wrapped title)."""
    words = message(lang, "layernorm.stats.title", stack=message(lang, f"layernorm.stack.{stack}"), layer=layer,
                    norm="{n}", input="")
    return words.split("{n}")[0].replace(" ", "")


def url_query(page) -> dict[str, str]:
    return {name: values[0] for name, values in urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).items()}


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", True)])
def test_pick_a_layer_with_the_mouse_and_the_keyboard(chromium, app_url, lang, present):
    params = {"lang": lang, **({"present": 1} if present else {})}
    page, sent = open_view(chromium, app_url, **params)
    try:
        shot = f"{SHOTS}/layernorm-{lang}-{'presenter' if present else 'normal'}" if SHOTS else None
        if shot:
            page.screenshot(path=f"{shot}.png")
        assert page.locator(f"{VIEW} .vz-kinds").count() == 0              # no kind row: the stack is the server's
        assert page.locator(f"{VIEW} .vz-layer option").all_text_contents() == [
            message(lang, "ui.layer_n", i=i) for i in range(3)]
        before = sent.count
        page.select_option(f"{VIEW} .vz-layer", "2")                       # the mouse
        drawn(page, 2)
        assert stats_title(page).startswith(title_start(lang, "encoder", 2))
        assert url_query(page)["layer"] == "2" and url_query(page)["stack"] == "encoder"
        page.focus(f"{VIEW} .vz-layer")                                    # the keyboard
        page.keyboard.press("ArrowUp")
        drawn(page, 1)
        assert url_query(page)["layer"] == "1"
        assert stats_title(page).startswith(title_start(lang, "encoder", 1))
        caption = page.locator(f"{VIEW} .vz-text-hist-caption").text_content()
        assert message(lang, "layernorm.token.caption").split("{mean_in}")[0].split("}")[-1] in caption
        page.wait_for_timeout(300)
        assert sent.count == before                                        # no script run
        check_projector_sizes(page, f"{VIEW} .vz-layer", f"{VIEW} .vz-fig-stats .xtick text", present)
        if shot:
            page.screenshot(path=f"{shot}-layer-1.png", full_page=True)
    finally:
        page.close()


def test_a_deep_link_the_csvs_and_a_server_side_change(chromium, app_url):
    page, sent = open_view(chromium, app_url, stack="decoder", layer=2, norm="norm_cross", token=3)
    try:
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='2']", timeout=DRAWN_MS)
        assert page.locator(f"{VIEW} .vz-layer").input_value() == "2"
        for figure, stem, columns in (("stats", "stats", 4), ("hist", "token3", 3)):
            with page.expect_download(timeout=DRAWN_MS * 2) as download:
                page.click(f"{VIEW} .vz-csv[data-figure='{figure}']")
            assert download.value.suggested_filename == f"en-es-decoder-L2-norm_cross-{stem}.csv"
            lines = open(download.value.path(), encoding="utf-8").read().splitlines()
            assert lines[1].count(",") == columns                          # every row: its numbers
        page.select_option(f"{VIEW} .vz-layer", "0")
        drawn(page, 0)
        # a server-side picker (the token): a run, a new body; the reader's layer stays
        wait_for_app(page)                                                 # the CSVs' runs are over
        page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] [role="combobox"]').first.click()
        page.keyboard.type(message("en", "layernorm.token.option", token="1 "))    # the options it matches: one
        page.keyboard.press("Enter")
        wait_for_app(page)
        page.wait_for_function("() => new URL(location.href).searchParams.get('token') === '1'", timeout=LOAD_MS)
        page.wait_for_selector(f"{VIEW}[data-whole='1'][data-drawn-pick='0']", timeout=LOAD_MS)
        # the run came back with the layer the server last knew (2): the view tells it the reader's, once
        page.wait_for_function("() => new URL(location.href).searchParams.get('layer') === '0'", timeout=LOAD_MS)
        wait_for_app(page)
        assert page.locator(VIEW).get_attribute("data-drawn-pick") == "0"
        page.goto(page.url)                                                # a reload keeps the pick
        wait_for_app(page)
        page.wait_for_selector(f"{VIEW}[data-drawn-pick='0']", timeout=LOAD_MS)
        assert page.locator(f"{VIEW} .vz-layer").input_value() == "0"
    finally:
        page.close()


PLOTLY = Path(__file__).resolve().parents[1] / "viz" / "vendor" / "plotly-cartesian.min.js"     # the deck's plotly
# the template the deck draws with (browser_view.template_spec: the server's, Streamlit's theme), whatever this
# process's default
THEME = json.loads(go.Figure(layout={"template": "streamlit"}).to_json())["layout"]["template"]
# the figure's tick labels and axis titles whose boxes (as Chromium lays them out) meet another's by more than a hair
CROWDED_TICKS_JS = """() => {
  const boxes = [...document.querySelectorAll('.xtick text, .ytick text, .xtitle, .ytitle')].map(t => [t.textContent,
    t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, r] = boxes[i], [b, q] = boxes[j];
    if (Math.min(r.right, q.right) - Math.max(r.left, q.left) > 0.5
        && Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top) > 0.5) hits.push(a + ' / ' + b);
  }
  return {hits, texts: boxes.length};
}"""

# every tick label and axis title inside the figure (the margins grown for them: automargin, as the deck asks)
LAID_OUT_JS = """() => {
  const svg = document.querySelector('#plot .main-svg').getBoundingClientRect();
  return [...document.querySelectorAll('#plot .xtick text, #plot .ytick text, #plot .xtitle, #plot .ytitle')]
    .map(t => t.getBoundingClientRect()).every(r => r.width === 0 || (r.left >= svg.left - 0.5
      && r.right <= svg.right + 0.5 && r.top >= svg.top - 0.5 && r.bottom <= svg.bottom + 0.5));
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("scale", [NORMAL, PRESENTER], ids=lambda s: s.name)
def test_the_token_histogram_draws_no_tick_label_over_another(chromium, lang, scale):
    """The counts' "0" sits on the x axis's line; en-es encoder layers 1 and 2 put a value tick (−6) a few px from the
    axis's low end, its label under the "0" (the bins span the data exactly). Here the lowest value is just under −6
    too, drawn by the deck's plotly.js in the deck's column (half the page) and a whole page wide."""
    rng = np.random.default_rng(0)
    values = np.concatenate([[-6.04, 5.9], rng.normal(0, 1.5, 254)])            # en-es: 256 features
    series = {message(lang, "layernorm.token.input"): values, message(lang, "layernorm.token.normalized"): values / 2}
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.set_content(f"<html><body style='margin:0'><div id='plot'></div><script>{PLOTLY.read_text()}</script>"
                         "</body></html>")
        for width in (scale.column_px(), scale.page_px):
            figure = json.loads(feature_histogram(series, Look(words(lang), scale), title="x", width_px=width).to_json())
            figure["layout"].update(width=width, template=THEME)
            for name, axis in figure["layout"].items():       # as the deck draws a figure (viz/figures/browser_view.js)
                if re.fullmatch(r"[xy]axis\d*", name):
                    axis.setdefault("automargin", True)
            page.evaluate("f => Plotly.newPlot('plot', f.data, f.layout)", figure)
            page.wait_for_function(LAID_OUT_JS, timeout=10_000)
            found = page.evaluate(CROWDED_TICKS_JS)
            assert found["texts"] >= 8 and not found["hits"], (width, found)
    finally:
        page.close()
