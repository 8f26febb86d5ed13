"""The live model map on the home page and the head view beside the explorer's large map (issue 26, items
9 and 10): AppTest on the shipped en-es model, and in Chromium a click on a map block opens its page and a
click on a head in the legend isolates it."""
from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

from apptest_utils import browser_view_sent as sent, browser_view_whole as whole, no_exceptions, run_page
from model import load_checkpoint, trace_sentence
from model.capture import schema

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "The man went to the house."


def _chart(at, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and c.proto.id.endswith(key))
    return json.loads(chart.proto.spec)


def _array(value) -> np.ndarray:
    """A figure array as sent to the browser (numpy arrays go as base64 typed arrays)."""
    if isinstance(value, dict):
        shape = [int(n) for n in str(value["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape).astype(float)
    return np.array(value, dtype=float)


@pytest.fixture(scope="module")
def trace():
    """The sentence as the page traces it: a two-style model reads it as <modern> (the sidebar's default)."""
    bundle = load_checkpoint(ROOT / "pretrained" / "en-es")
    return trace_sentence(bundle, bundle.tokenizer.styled(SENTENCE, "modern"))


def test_home_draws_the_live_map_whose_blocks_can_be_clicked(trace):
    at = run_page("home.py", model="en-es", text=SENTENCE, lang="zh")
    no_exceptions(at)
    fig = _chart(at, "home-map")
    maps = {d["name"]: d for d in fig["data"] if d["type"] == "heatmap"}
    assert len(maps) == 3 * 3 + 1                          # 3 kinds x 3 layers, and the softmax strip
    z = _array(maps["attn.cross#2"]["z"])[::-1]
    assert np.allclose(z, trace[schema.pattern_name("cross", 2)].mean(0), atol=1e-6)
    cells = next(d for d in fig["data"] if d.get("name") == "cells")
    assert "attn.cross#2" in cells["customdata"]                     # clicked: viz/elements/map_chart opens the block
    assert cells["text"] and all("点击打开讲解它的页面" in hint for hint in cells["text"])
    assert "交叉注意力" in " ".join(a["text"] for a in fig["layout"]["annotations"])
    assert any("整个模型" in s.value for s in at.subheader)



def test_the_tour_shows_where_each_step_is_on_the_live_map():
    """Issue 26, item 9: the tour's "you are here" map frames the step's blocks in red (the decoder step: its
    masked self-attention and cross-attention), in the reader's language; the training step has none."""
    at = run_page("tour.py", model="en-es", text=SENTENCE, lang="zh", tour_step=9)
    no_exceptions(at)
    fig = _chart(at, "tour-map-9")
    red = [s for s in fig["layout"]["shapes"] if s.get("line", {}).get("color") == "#d62728"]
    assert len(red) == 2
    assert {d["name"] for d in fig["data"] if d["type"] == "heatmap"} >= {"attn.decoder#0", "attn.cross#2"}
    text = " ".join(a["text"] for a in fig["layout"]["annotations"])
    assert "你在这里" in text and "交叉注意力" in text
    at = run_page("tour.py", model="en-es", text=SENTENCE, tour_step=13)
    no_exceptions(at)
    assert not any(c.proto.id and "tour-map" in c.proto.id for c in at.get("plotly_chart"))

def test_explorer_sends_each_layers_head_view_and_each_heads_map(trace):
    """The explorer's view (drawn in the browser) gets the head view of every layer as head_view draws it, and the
    large map's title of every pick; which head the lines show is the browser's (tests/test_browser_explorer_view)."""
    at = whole(run_page("explorer.py", model="en-es", text=SENTENCE, kind="cross", layer=2, head=3))
    no_exceptions(at)
    part = sent(at)[1]["kinds"]["cross"]
    fig = part["lines"][2]
    legend = [d for d in fig["data"] if d.get("showlegend") is not False and d.get("legendgroup")]
    assert len(legend) == 8
    lines = [d for d in fig["data"] if d.get("legendgroup") and d.get("showlegend") is False]
    weights = trace[schema.pattern_name("cross", 2)][3]
    for d in (d for d in lines if d["legendgroup"] == "h3"):
        alpha = float(d["line"]["color"].rsplit(",", 1)[1].rstrip(")"))
        ys = d["y"]
        for i in range(0, len(ys), 3):
            assert abs(weights[int(ys[i]), int(ys[i + 1])] - alpha) <= 0.025 + 1e-9
    index = part["picks"].index([2, 3])
    assert part["titles"][index].endswith("layer 2, head 3") and part["files"][index].endswith("cross-L2-H3")


def test_a_long_sentence_gives_the_explorer_map_the_page_width():
    """Seen at 1280x720 with an 18-token sentence: in half the page the map had ~10 px a key and plotly showed
    every second key label. Then the map takes the page's width (slanted key labels fit) and the head's lines go
    below it, folded; a short sentence keeps them side by side."""
    long = "The children are playing in the garden while their mother reads a book."
    at = run_page("explorer.py", model="en-es", text=long)
    no_exceptions(at)
    part = sent(at)[1]["kinds"]["encoder"]
    assert part["beside"] is False
    assert part["map"]["layout"]["xaxis"]["tickangle"] == -45                    # room for slanted key labels
    assert "every head as lines" in part["lines_titles"][0]                      # the fold's title
    short = run_page("explorer.py", model="en-es", text=SENTENCE)
    assert sent(short)[1]["kinds"]["encoder"]["beside"] is True


def test_a_rerun_that_changes_nothing_drawn_builds_no_figure_again(monkeypatch):
    """The explorer view's body is kept (for every session of the worker: view.shared_memo) while what it shows is
    the same: a rerun (a teacher's pick, a CSV asked for) reuses it; a new sentence's first run builds the first
    screen's figures (one grid, one map, one layer's lines), the whole body only the rest; a new sentence anew.
    The worker's cache starts empty here: an earlier test drawing the same sentence would have built them."""
    from collections import OrderedDict

    import viz.figures.browser_view as browser_view
    from viz.core import view

    monkeypatch.setattr(view, "_shared", OrderedDict())

    built = []
    for name in ("model_view", "attention_heatmap", "head_view_spec"):
        real = getattr(browser_view, name)
        monkeypatch.setattr(browser_view, name, lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    at = run_page("explorer.py", model="en-es", text=SENTENCE)
    no_exceptions(at)
    assert sorted(built) == ["attention_heatmap", "head_view_spec", "model_view"]
    first = sent(at)[0]["sig"]
    at.run()
    assert len(built) == 3 and sent(at)[0]["sig"] == first
    whole(at)                                    # the rest: the first screen's kind and layer are not built again
    assert built.count("model_view") == 3 and built.count("head_view_spec") == 3 * 3
    n = len(built)
    at.run()
    assert len(built) == n
    at.text_area(key="text").set_value("The woman saw a dog.").run()
    no_exceptions(at)
    assert len(built) == n + 3


# -- in Chromium --------------------------------------------------------------------------------------------
def _open(chromium, url):
    from browser_utils import wait_for_app
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.goto(url)
    wait_for_app(page)
    page.wait_for_selector(".js-plotly-plot", timeout=240_000)
    return page


@pytest.mark.browser
def test_a_map_block_opens_its_page_and_view(chromium, app_url):
    """A click where a reader clicks, on the cross-attention block's layer-0 cell (the map has no hrefs: the cell's
    click opens the page through the view), opens the explorer on cross-attention, layer 0, the same sentence."""
    from test_browser_view import CELL_JS, SCROLL_JS
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE})
    page = _open(chromium, f"{app_url}/?{query}")
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                           ".some(p => (p.data || []).some(t => t.name === 'cells'))", timeout=120_000)
    page.evaluate(SCROLL_JS)
    page.wait_for_timeout(500)
    x, y = page.evaluate(CELL_JS, "attn.cross")
    page.mouse.click(x, y)
    page.wait_for_url("**/explorer?*", timeout=60_000)
    page.wait_for_function("() => [...document.querySelectorAll('.gtitle')]"
                           ".some(e => e.textContent.includes('Cross-attention') && e.textContent.includes('layer 0'))",
                           timeout=120_000)
    assert "kind=cross" in page.url and "The+man" in page.url.replace("%20", "+")
    page.close()


@pytest.mark.browser
def test_a_click_on_a_head_in_the_legend_isolates_it(chromium, app_url):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, "kind": "encoder", "layer": 1, "head": -1})
    page = _open(chromium, f"{app_url}/explorer?{query}")
    page.wait_for_selector(".legend .traces", timeout=120_000)
    visible = """() => { const g = [...document.querySelectorAll('.js-plotly-plot')].find(
        g => g.data.some(d => d.legendgroup === 'h0'));
        return [...new Set(g.data.filter(d => d.legendgroup && d.visible !== 'legendonly').map(d => d.legendgroup))]; }"""
    assert len(page.evaluate(visible)) == 8
    page.locator(".legend .traces", has_text="head 2").first.click()
    page.wait_for_timeout(800)
    assert page.evaluate(visible) == ["h2"]
    page.close()


def test_a_chosen_style_travels_with_the_links():
    """The 1909 Bible style travels with a link to another page (the default, modern, is left out as the URL
    leaves it). The map's blocks are clicked, not hrefs (plotly.js encoded an href's sentence twice): every cell
    has its click target and no annotation is a link."""
    at = run_page("positional.py", model="en-es", text=SENTENCE, style="bible", present="1")
    no_exceptions(at)
    nxt = next(link.proto for link in at.get("page_link") if link.proto.label.startswith("Next"))
    assert "style=bible" in nxt.query_string and "present=1" in nxt.query_string
    at = run_page("home.py", model="en-es", text=SENTENCE, style="bible")
    fig = _chart(at, "home-map")
    assert not any("<a href=" in a["text"] for a in fig["layout"]["annotations"])
    cells = next(trace for trace in fig["data"] if trace.get("name") == "cells")["customdata"]
    assert {"attn.encoder#0", "norm.decoder.norm_cross#1", "linear", "softmax", "embed.encoder"} <= set(cells)
