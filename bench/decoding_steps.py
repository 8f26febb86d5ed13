"""Stepping through a whole output on the decoding page (issue 46 item 9): Chromium at 1280x720 against
`streamlit run app.py`, presenter mode, the 40-word sentence of tests/long_text.py, greedy; the step slider moved one
step at a time with the keyboard (its thumb focused, ArrowRight), as a teacher walks the class through the loop.

    python bench/decoding_steps.py [--words 40] [--against /tmp/base46] [--rounds 1]

Per step: from the key press until the script has finished, nothing is stale and the top-k chart's title names the
new step with every chart drawn (page_to_page.py's arrival, on the same page). Prints each step's time, their median
and slowest, and the whole walk from step 0 to the last step. The trees are walked one after the other, alternated
round by round.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import ROOT, Server, log

from browser_utils import browser
from chart_text import VIEWPORT, page_url, settle
from long_text import SENTENCES

TARGET_S = 3.0
SLIDER = '[data-testid="stSlider"]:has([aria-label="Decoding step"]) input[type=range]'   # the step slider
# The new step is on screen: the script finished (no status widget), nothing stale, every chart drawn, and the top-k
# chart's title says the step.
STEP_DRAWN_JS = """(step) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (!plots.every(p => p.querySelector('svg.main-svg'))) return false;
  return plots.some(p => [...p.querySelectorAll('.gtitle')].some(t => t.textContent.startsWith('Step ' + step + ':')));
}"""


def walk(page, url: str, timeout_ms: int = 240_000) -> list[float]:
    """Open the page at step 0 and step to the last: seconds for each step."""
    page.goto(url)
    settle(page, timeout_ms)
    thumb = page.locator(SLIDER).first
    last = int(thumb.get_attribute("max"))
    times = []
    for step in range(1, last + 1):
        thumb.focus()
        began = time.perf_counter()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(STEP_DRAWN_JS, arg=step, timeout=timeout_ms, polling=20)
        times.append(time.perf_counter() - began)
    log(f"decoding steps: {len(times)} steps, median {statistics.median(times):.2f} s, "
        f"slowest {max(times):.2f} s, whole walk {sum(times):.1f} s")
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", default="40", choices=["9", "40"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--against", type=Path, default=None, help="another checkout, walked alternately")
    args = parser.parse_args(argv)
    trees = [("this branch", ROOT)] + ([("main", args.against)] if args.against else [])
    log(f"load average at the start: {os.getloadavg()}")
    results: dict[str, list[list[float]]] = {}
    with browser() as chromium:
        for r in range(args.rounds):
            for label, root in (trees if r % 2 == 0 else trees[::-1]):
                with Server(root=root) as server:
                    context = chromium.new_context(viewport=VIEWPORT)
                    url = page_url(server.url, "decoding", True, "en", {"text": SENTENCES[args.words]})
                    results.setdefault(label, []).append(walk(context.new_page(), url))
                    context.close()
                log(f"load average: {os.getloadavg()}")
    log(f"load average at the end: {os.getloadavg()}")
    print("| tree | steps | median step, s | slowest step, s | whole walk, s |")
    print("|---|---|---|---|---|")
    for label, walks in results.items():
        for times in walks:
            print(f"| {label} | {len(times)} | {statistics.median(times):.2f} | {max(times):.2f} | {sum(times):.1f} |")
    for label, walks in results.items():
        slowest = max(max(w) for w in walks)
        print(f"{label}: every step under {TARGET_S:g} s: {'yes' if slowest < TARGET_S else 'NO'} (slowest {slowest:.2f} s)")


if __name__ == "__main__":
    main()
