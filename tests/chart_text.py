"""The smallest chart text a page shows on its first screen, measured in a real browser (issue 26).

Every SVG text of a plotly chart (`.js-plotly-plot`: ticks, cell numbers, titles, legends, colour bars,
annotations) that is visible and lies, at least in part, inside the viewport at scroll 0: its computed
font-size, and the size it is drawn at (computed size times the scale of its transform: plotly shrinks
text inside bars by a transform, which the computed size does not show). Used by
tests/test_browser_chart_text.py and by bench/chart_text.py (the before/after table).
"""
from __future__ import annotations

import time

# The pages in teaching order (viz/elements/nav.PAGES url paths; home is served at /).
PAGES = ("home", "rnn", "explorer", "step", "multihead", "positional", "layernorm", "ffn", "decoding", "heads", "zoo", "compare",
         "attribution", "training", "tour", "about")
VIEWPORT = {"width": 1280, "height": 720}

TEXTS_JS = """() => {
  const W = window.innerWidth, H = window.innerHeight, out = [];
  for (const el of document.querySelectorAll('.js-plotly-plot svg text')) {
    const text = (el.textContent || '').trim();
    if (!text || !el.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    const m = el.getScreenCTM();
    const scale = m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1;
    const cls = (el.getAttribute('class') || '') + ' < ' + (el.parentNode.getAttribute('class') || '');
    out.push({text: text.slice(0, 40), px: px, fill: getComputedStyle(el).fill, drawn: Math.round(px * scale * 10) / 10, cls: cls,
              x: Math.round(r.left), y: Math.round(r.top)});
  }
  return out;
}"""

CHARTS_SETTLED_JS = """() => {
  const plots = document.querySelectorAll('.js-plotly-plot');
  return plots.length > 0 && [...plots].every(p => p.querySelector('svg.main-svg'));
}"""


def page_url(base: str, page: str, present: bool, lang: str = "en", extra: dict | None = None) -> str:
    import urllib.parse
    params = dict(extra or {})
    if present:
        params["present"] = "1"
    if lang != "en":
        params["lang"] = lang
    path = "" if page == "home" else page
    return f"{base}/{path}" + ("?" + urllib.parse.urlencode(params) if params else "")


def settle(page, timeout_ms: int = 240_000) -> None:
    """Until the script has run, the page's charts are drawn and nothing moved for a moment."""
    from browser_utils import wait_for_app
    wait_for_app(page, timeout_ms)
    try:
        page.wait_for_function(CHARTS_SETTLED_JS, timeout=min(timeout_ms, 60_000))
    except Exception:  # noqa: BLE001 - a page whose first screen has no chart (or none at all)
        pass
    time.sleep(1.0)            # plotly's autosize pass after the first draw
    wait_for_app(page, timeout_ms)


def chart_texts(page) -> list[dict]:
    """Every visible chart text on the first screen: text, px (computed), drawn (px x transform scale)."""
    page.evaluate("() => window.scrollTo(0, 0)")
    return page.evaluate(TEXTS_JS)


def smallest(texts: list[dict], key: str = "px") -> dict | None:
    return min(texts, key=lambda t: (t[key], t["y"])) if texts else None


def measure(page, url: str) -> list[dict]:
    page.goto(url)
    settle(page)
    return chart_texts(page)
