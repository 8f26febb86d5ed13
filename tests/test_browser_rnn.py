"""The "Before the Transformer" page in Chromium at a projector's 1280x720: the RNN's alignment and the
Transformer's cross-attention both on the first screen, normal and presenter mode, English and 中文.
RNN_SCREENSHOTS=folder keeps the four screenshots (full page) for a person to look at."""
import os
from pathlib import Path

import pytest

from browser_utils import wait_for_app

SHOTS = os.environ.get("RNN_SCREENSHOTS")


@pytest.mark.parametrize("lang,present", [("en", 0), ("zh", 0), ("en", 1), ("zh", 1)])
def test_both_alignments_on_the_first_screen(chromium, app_url, lang, present):
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{app_url}/rnn?lang={lang}&present={present}&input=a+b+c+d+e+f+g+h")
    wait_for_app(page)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 4", timeout=240_000)
    wait_for_app(page)
    plots = page.locator(".js-plotly-plot")
    first, second = plots.nth(0).bounding_box(), plots.nth(1).bounding_box()
    assert first["y"] < 720 and second["y"] < 720                      # both pictures start on the first screen
    assert abs(first["y"] - second["y"]) < 5 and first["x"] + first["width"] <= second["x"] + 1   # side by side
    titles = page.eval_on_selector_all(".js-plotly-plot .gtitle", "els => els.map(e => e.textContent)")
    assert any("RNN" in title for title in titles) and any("Transformer" in title for title in titles)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=f"{SHOTS}/rnn-{lang}-{'presenter' if present else 'normal'}.png")
        page.screenshot(path=f"{SHOTS}/rnn-{lang}-{'presenter' if present else 'normal'}-full.png", full_page=True)
    page.close()
