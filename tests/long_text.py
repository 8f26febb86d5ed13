"""Pages with a short, a 40-word and the longest sentence the sidebar takes at its default token limit: each
page's height and whether its charts draw every token label, in a real browser (issue 36, section 1). Used by
tests/test_browser_long_sentences.py and bench/long_sentences.py (the before/after table)."""
from __future__ import annotations

from chart_text import settle

SHORT = "The cat sat on the mat near the door."
CLAUSE = ("the students in the back row read the long sentence on the wall while the teacher explains how "
          "attention moves words ")
SENTENCES = {"9": SHORT,
             "40": "Today " + CLAUSE + "and then " + CLAUSE.strip() + " to the class.",
             "max": "Today " + " and ".join([CLAUSE.strip()] * 12) + "."}   # cut at the default 128 tokens

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
    page.goto(url)
    settle(page)
    axes = page.evaluate(TICKS_JS)
    dropped = sum(max(0, a["categories"] - a["drawn"]) for a in axes)
    if shot:
        page.screenshot(path=shot, full_page=False)
    return {"height": page.evaluate(HEIGHT_JS), "dropped": dropped, "axes": axes}
