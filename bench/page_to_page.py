"""Page-to-page time in presenter mode, as a teacher moves through the lesson: Chromium at 1280x720 against
`streamlit run app.py`, the app's default model and sentence, each page opened by the previous page's Next
button (presenter order), from the click until the new page's script has finished and its charts are drawn.

    python bench/page_to_page.py [--passes 2] [--lang en] [--write]

Pass 1 meets each page for the first time in the session (its caches cold for this sentence); later passes
start again from the start page, as a second lesson with the same sentence would. Prints every step's time and
each pass's median.
"""
from __future__ import annotations

import argparse
import math
import re
import statistics
import time

from common import Check, Section, log, table, write_section

from browser_utils import browser, streamlit_server  # noqa: E402
from chart_text import VIEWPORT, page_url, settle  # noqa: E402
from viz.tour.buttons import TOUR_URL  # noqa: E402
from viz.tour.steps import TOUR  # noqa: E402

TARGET_S = 1.0
NEXT = ".st-key-presenter-next a"

# The new page is there: the address is the target's, its Previous button leads back to the page clicked from
# (a page that has begun to draw but not yet reached its buttons shows none), the script has finished (no status
# widget), none of the old page's elements is still fading out, and every chart has drawn its SVG.
ARRIVED_JS = """([from, path]) => {
  const norm = p => p.replace(/\\/$/, '');
  if (!norm(location.pathname).endsWith('/' + path)) return false;
  const back = document.querySelector('.st-key-presenter-prev a');
  // (a link to the start page carries the current address: from the start page, which has no Previous, any will do)
  if (!back || (norm(from) !== '' && norm(new URL(back.href).pathname) !== norm(from))) return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  return [...document.querySelectorAll('.js-plotly-plot')].every(p => p.querySelector('svg.main-svg'));
}"""


def walk(page, start_url: str, timeout_ms: int = 240_000) -> list[tuple[str, float]]:
    """Open the start page, then Next until the last page: (page path, seconds) for each step. The tour's steps
    are steps of one page, not pages: the walk opens its last step (untimed), whose Next leads to the page after."""
    page.goto(start_url)
    settle(page, timeout_ms)
    steps = []
    while page.locator(NEXT).count() or (steps and steps[-1][0] == TOUR_URL):
        if not page.locator(NEXT).count():
            url = re.sub(r"[?&]tour_step=\d+", "", page.url)
            page.goto(url + ("&" if "?" in url else "?") + f"tour_step={len(TOUR)}")
            settle(page, timeout_ms)
            steps.append(("(tour's last step, untimed)", float("nan")))
            continue
        link = page.locator(NEXT).first
        target = link.get_attribute("href").split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        here = page.evaluate("() => location.pathname")
        began = time.perf_counter()
        link.click()
        page.wait_for_function(ARRIVED_JS, arg=[here, target], timeout=timeout_ms, polling=50)
        steps.append((target, time.perf_counter() - began))
        log(f"page to page: -> {target}: {steps[-1][1]:.2f} s")
    return steps


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--lang", default="en", choices=["en", "zh"])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    passes = []
    with streamlit_server() as base, browser() as chromium:
        context = chromium.new_context(viewport=VIEWPORT)
        page = context.new_page()
        for _ in range(args.passes):
            passes.append(walk(page, page_url(base, "home", True, args.lang)))
        context.close()
    rows = [[name] + [f"{p[i][1]:.2f}" if i < len(p) and not math.isnan(p[i][1]) else "—" for p in passes] for i, (name, _) in enumerate(passes[0])]
    medians = [statistics.median(s for _, s in p if not math.isnan(s)) for p in passes]
    rows.append(["**median**"] + [f"**{m:.2f}**" for m in medians])
    body = table(["page (after Next)"] + [f"pass {i + 1}, s" for i in range(len(passes))], rows)
    checks = [Check(f"page-to-page median (pass {i + 1}) < {TARGET_S:g} s", f"{m:.2f} s", m < TARGET_S)
              for i, m in enumerate(medians)]
    print(body)
    for c in checks:
        print(f"{c.target}: {c.measured} ({'met' if c.ok else 'NOT met'})")
    section = Section("page_to_page", f"Page to page in presenter mode ({args.lang})", body, checks)
    if args.write:
        write_section(section)
    return section


if __name__ == "__main__":
    main()
