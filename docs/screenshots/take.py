"""Screenshots of app pages for the README and for reviewing what a page looks like on a projector.

    python docs/screenshots/take.py                      # every page, en-es model, into docs/screenshots/
    python docs/screenshots/take.py explorer decoding    # some pages
    python docs/screenshots/take.py --out /tmp/shots --query "kind=cross"

Runs a fresh `streamlit run app.py` and Debian's Chromium (tests/browser_utils.py); each page is
captured full length once the script has finished and every chart is drawn.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_utils import browser, streamlit_server, wait_for_app  # noqa: E402

PAGES = ["home", "explorer", "step", "multihead", "positional", "layernorm", "decoding", "heads", "zoo",
         "compare", "training", "tour", "about"]


def shoot(chromium, url: str, path: Path, width: int = 1400) -> None:
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.goto(url)
    page.wait_for_selector("h1", timeout=240_000)            # the page's script has started drawing
    wait_for_app(page)
    page.wait_for_timeout(1500)        # plotly's last relayout after the script finished
    # Streamlit scrolls inside its main block, not the document: grow the window to the content.
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], "
                           "[data-testid=stMainBlockContainer]')].map(e => e.scrollHeight), 900)")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(1000)        # charts re-fit the new window
    page.screenshot(path=str(path), full_page=True)
    page.close()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", default=PAGES)
    parser.add_argument("--out", default=str(Path(__file__).parent))
    parser.add_argument("--model", default="en-es")
    parser.add_argument("--query", default="", help="extra URL parameters, e.g. 'kind=cross&layer=2'")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with streamlit_server() as base, browser() as chromium:
        for name in args.pages:
            query = "&".join(q for q in (f"model={args.model}", args.query) if q)
            shoot(chromium, f"{base}/{'' if name == 'home' else name}?{query}", out / f"{name}.png")
            print(out / f"{name}.png")


if __name__ == "__main__":
    main()
