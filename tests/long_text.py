"""Pages with a short, a 40-word and the longest sentence the sidebar takes at its default token limit: each
page's height and whether its charts draw every token label, in a real browser (issue 36, section 1). Used by
tests/test_browser_long_sentences.py and bench/long_sentences.py (the before/after table)."""
from __future__ import annotations

import time

from browser_utils import APP_TIMEOUT_MS, wait_for_app
from chart_text import CHARTS_SETTLED_JS, settle

SHORT = "The cat sat on the mat near the door."
CLAUSE = ("the students in the back row read the long sentence on the wall while the teacher explains how "
          "attention moves words ")
SENTENCES = {"9": SHORT,
             "40": "Today " + CLAUSE + "and then " + CLAUSE.strip() + " to the class.",
             "max": "Today " + " and ".join([CLAUSE.strip()] * 12) + "."}   # cut at the default 128 tokens
# The longest sentences the sidebar takes: one of 512+ tokens cut at a raised token limit (the sidebar's
# max_tokens, up to 512)
LONGEST = "Today " + " and ".join([CLAUSE.strip()] * 30) + "."
TOKEN_LIMITS = {"200": 200, "512": 512}


def sentence_params(size: str) -> dict:
    """The URL parameters of a sentence size: SENTENCES' at the default limit, TOKEN_LIMITS' the longest cut."""
    if size in TOKEN_LIMITS:
        return {"text": LONGEST, "max_tokens": TOKEN_LIMITS[size]}
    return {"text": SENTENCES[size]}

# every category axis of every chart on view (not in a folded expander or another tab) that labels each
# category (not one that labels chosen ones, tickvals): how many labels it has and how many plotly drew
TICKS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd.offsetParent).flatMap(gd => {
  const full = gd._fullLayout || {};
  return Object.keys(full).filter(k => /^[xy]axis\\d*$/.test(k) && full[k].type === 'category' && full[k].visible
                                      && full[k].showticklabels && full[k].tickmode !== 'array')
    .map(k => { const ax = full[k];
                const cats = (ax._categories || []).length;
                const drawn = gd.querySelectorAll('.' + ax._id + 'tick text').length;
                return {axis: ax._id, categories: cats, drawn: drawn}; });
})"""
HEIGHT_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"


def measure(page, url: str, shot: str | None = None) -> dict:
    """The page's height and labels once settled; `seconds`: from opening the URL until the script has run and
    its charts are drawn (no settling pause)."""
    started = time.perf_counter()
    page.goto(url)
    wait_for_app(page, APP_TIMEOUT_MS)
    try:
        page.wait_for_function(CHARTS_SETTLED_JS, timeout=60_000)
    except Exception:  # noqa: BLE001 - a page whose first screen has no chart
        pass
    seconds = time.perf_counter() - started
    settle(page)
    axes = page.evaluate(TICKS_JS)
    dropped = sum(max(0, a["categories"] - a["drawn"]) for a in axes)
    if shot:
        page.screenshot(path=shot, full_page=False)
    return {"height": steady_height(page), "dropped": dropped, "axes": axes, "seconds": seconds}


def steady_height(page, tries: int = 10) -> int:
    """The main area's height once two readings half a second apart agree (a page still drawing a long sentence's
    later charts measured 1,039 px, then 2,322)."""
    height = page.evaluate(HEIGHT_JS)
    for _ in range(tries):
        time.sleep(0.5)
        wait_for_app(page, APP_TIMEOUT_MS)
        again = page.evaluate(HEIGHT_JS)
        if again == height:
            break
        height = again
    return height
