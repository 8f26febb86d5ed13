"""Screenshots of app pages for the README and for reviewing what a page looks like on a projector.

    python docs/screenshots/take.py                      # every page, en-es model, into docs/screenshots/
    python docs/screenshots/take.py explorer decoding    # some pages
    python docs/screenshots/take.py --out /tmp/shots --query "kind=cross"
    python docs/screenshots/take.py --first-screen --out /tmp/shots   # 1280x720 projector view, sidebar open;
                                                                       # prints where the first picture starts
    python docs/screenshots/take.py step --width 1280 --query "present=1&lang=zh&text=..." --suffix -40 \
        --colors 256 --out docs/screenshots/zh/presenter      # presenter mode at 1280 px, a palette PNG
    python docs/screenshots/take.py --presenter --out /tmp/presenter   # every page, presenter mode, 1280 px,
        # en and zh, the 9- and 40-token sentences (tests/long_text.py): OUT/LANG/PAGE-SIZE.png, and per shot
        # the smallest chart text, grey or English chart text, text past the right edge and dropped labels

Runs a fresh `streamlit run app.py` and Debian's Chromium (tests/browser_utils.py); each page is
captured full length once the script has finished and every chart is drawn.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import urllib.parse  # noqa: E402

from browser_utils import browser, streamlit_server, wait_for_app  # noqa: E402
from chart_text import PAGES, TEXTS_JS  # noqa: E402
from long_text import SENTENCES, TICKS_JS  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

PRESENTER_FLOOR_PX = 20
THEME_GREY = "rgb(128, 132, 149)"
LATIN_WORD = re.compile(r"[A-Za-z]{4,}")   # on a zh page: an English word left in a chart (tokens aside)


CHARTS_DRAWN = """() => { const plots = [...document.querySelectorAll('.js-plotly-plot')];
  return plots.length > 0 && plots.every(p => p.querySelector('svg.main-svg text'))
         && !document.querySelector('[data-testid="stStatusWidget"]'); }"""


WHOLE_VIEW_JS = "() => [...document.querySelectorAll('.vz-explorer')].every((view) => view.dataset.whole === '1')"


def whole_view(page) -> None:
    """A page drawn in the browser (viz/figures/browser_view.js) asks for the rest of a new sentence once its first
    screen is up: one more run, which greys the page while it lasts. Wait for it to be over."""
    page.wait_for_function(WHOLE_VIEW_JS, timeout=240_000)
    wait_for_app(page)


def shoot(chromium, url: str, path: Path, width: int = 1400, colors: int = 0) -> dict:
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.goto(url)
    page.wait_for_selector("h1", timeout=240_000)            # the page's script has started drawing
    wait_for_app(page)
    whole_view(page)
    page.wait_for_timeout(1500)        # plotly's last relayout after the script finished
    # Streamlit scrolls inside its main block, not the document: grow the window to the content, once its height
    # holds (a browser-side view may not be in the page yet when whole_view first looks: every view of none is
    # whole; its first screen and then its whole body make the page longer)
    height = 0
    for _ in range(30):
        whole_view(page)
        now = page.evaluate("() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], "
                            "[data-testid=stMainBlockContainer]')].map(e => e.scrollHeight), 900)")
        if now == height:
            break
        height = now
        page.wait_for_timeout(1500)
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(1000)        # charts re-fit the new window
    try:                               # and are drawn again (on a loaded machine a second was not enough: blank charts)
        page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
    except PlaywrightTimeout:
        pass                           # a page without a chart
    page.wait_for_timeout(1000)
    page.screenshot(path=str(path), full_page=True, timeout=120_000)
    # the window is now the whole page: every chart text on view, wherever it lies
    found = {"height": height, "texts": page.evaluate(TEXTS_JS), "axes": page.evaluate(TICKS_JS),
             "errors": [e.inner_text()[:200] for e in page.locator('[data-testid="stException"]').all()],
             "right": page.evaluate(PAST_RIGHT_EDGE_JS)}
    page.close()
    if colors:    # a palette of `colors` (octree: median cut turned the blues teal): a third of the bytes, text as sharp
        from PIL import Image
        Image.open(path).convert("RGB").quantize(colors=colors, method=Image.Quantize.FASTOCTREE).save(path, optimize=True)
    return found


# texts of the main area (formulas and charts aside: they clip their own) whose right edge is past the window's (cut off on a projector)
PAST_RIGHT_EDGE_JS = """() => [...document.querySelectorAll('[data-testid=stMain] *')]
  .filter(e => e.children.length === 0 && !e.closest('math, svg') && (e.textContent || '').trim()
               && e.getBoundingClientRect().right > window.innerWidth + 1 && e.checkVisibility())
  .slice(0, 5).map(e => (e.textContent || e.tagName).trim().slice(0, 30))"""


def presenter_findings(found: dict, lang: str, sentence: str) -> list[str]:
    """What a check can see of the back row's defects in one shot (the eye sees the rest)."""
    texts = found["texts"]
    notes = [f"exception: {e}" for e in found["errors"]]
    small = sorted((t for t in texts if min(t["px"], t["drawn"]) < PRESENTER_FLOOR_PX - 0.05), key=lambda t: t["drawn"])
    if small:
        notes.append(f"{len(small)} chart texts under {PRESENTER_FLOOR_PX} px, e.g. "
                     + ", ".join(f"{t['text']!r} {t['drawn']} px" for t in small[:3]))
    grey = [t["text"] for t in texts if t["fill"] == THEME_GREY]
    if grey:
        notes.append(f"{len(grey)} chart texts in grey, e.g. {grey[:3]}")
    if lang == "zh":
        words = {w.lower() for w in LATIN_WORD.findall(sentence)}
        english = sorted({t["text"] for t in texts if any(w.lower() not in words for w in LATIN_WORD.findall(t["text"]))})
        if english:
            notes.append(f"English in zh charts: {english[:5]}")
    dropped = [a for a in found["axes"] if a["categories"] > a["drawn"]]
    if dropped:
        notes.append(f"labels dropped: {dropped[:3]}")
    if found["right"]:
        notes.append(f"past the right edge: {found['right']}")
    return notes


def presenter_matrix(base: str, chromium, pages, out: Path, model: str, colors: int) -> None:
    """Every page in presenter mode at 1280 px, en and zh, the 9- and 40-token sentences."""
    for lang in ("en", "zh"):
        (out / lang).mkdir(parents=True, exist_ok=True)
        for name in pages:
            for size in ("9", "40"):
                query = urllib.parse.urlencode({"model": model, "present": "1", "lang": lang, "text": SENTENCES[size]})
                path = out / lang / f"{name}-{size}.png"
                found = shoot(chromium, f"{base}/{'' if name == 'home' else name}?{query}", path, 1280, colors)
                notes = presenter_findings(found, lang, SENTENCES[size])
                print(f"{path} ({found['height']} px): " + ("; ".join(notes) or "no finding"), flush=True)


FIRST_PICTURE = """() => {
  const main = document.querySelector('[data-testid=stMain]').getBoundingClientRect();
  const charts = [...document.querySelectorAll('.js-plotly-plot, [data-testid=stImage] img, canvas')]
    .map(e => e.getBoundingClientRect()).filter(r => r.width > 50 && r.height > 50);
  if (!charts.length) return null;
  const top = Math.min(...charts.map(r => r.top));
  return {top: Math.round(top - main.top), visible: Math.round(Math.max(0, window.innerHeight - top))};
}"""


def first_screen(chromium, url: str, path: Path, width: int = 1280, height: int = 720) -> dict | None:
    """The projector's view: one 1280x720 screen, sidebar open. Returns where the first picture starts
    (px from the top of the page area) and how many px of it are on the first screen."""
    page = chromium.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.wait_for_selector("h1", timeout=240_000)
    wait_for_app(page)
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=15_000)
    except PlaywrightTimeout:
        pass                                                    # a page without a chart says so below
    page.wait_for_timeout(1500)
    found = page.evaluate(FIRST_PICTURE)
    page.screenshot(path=str(path))
    page.close()
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", default=PAGES)
    parser.add_argument("--out", default=str(Path(__file__).parent))
    parser.add_argument("--model", default="en-es")
    parser.add_argument("--query", default="", help="extra URL parameters, e.g. 'kind=cross&layer=2'")
    parser.add_argument("--width", type=int, default=1400, help="the window's width in px (a projector: 1280)")
    parser.add_argument("--suffix", default="", help="after the page's name in the file name, e.g. -40")
    parser.add_argument("--colors", type=int, default=0, help="save with a palette of this many colours (0: full)")
    parser.add_argument("--presenter", action="store_true",
                        help="presenter mode, 1280 px, en and zh, 9 and 40 tokens: OUT/LANG/PAGE-SIZE.png")
    parser.add_argument("--first-screen", action="store_true",
                        help="one 1280x720 screen per page (NAME-720.png) and the first picture's position")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with streamlit_server() as base, browser() as chromium:
        if args.presenter:
            return presenter_matrix(base, chromium, args.pages, out, args.model, args.colors)
        for name in args.pages:
            query = "&".join(q for q in (f"model={args.model}", args.query) if q)
            url = f"{base}/{'' if name == 'home' else name}?{query}"
            if args.first_screen:
                found = first_screen(chromium, url, out / f"{name}-720.png")
                where = (f"first picture at {found['top']} px, {found['visible']} px of it on the first screen"
                         if found else "no picture")
                print(f"{out / f'{name}-720.png'}: {where}")
            else:
                shoot(chromium, url, out / f"{name}{args.suffix}.png", args.width, args.colors)
                print(out / f"{name}{args.suffix}.png")


if __name__ == "__main__":
    main()
