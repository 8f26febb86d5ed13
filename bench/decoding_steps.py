"""Stepping through a whole output on the decoding page (issue 46 item 9): Chromium at 1280x720 against
`streamlit run app.py`, presenter mode, the 40-word sentence of tests/long_text.py, greedy; the step slider moved one
step at a time with the keyboard (its thumb focused, ArrowRight), as a teacher walks the class through the loop.

    python bench/decoding_steps.py [--words 40] [--against /tmp/base46] [--rounds 1]

Per step: from the key press until the script has finished, nothing is stale and the top-k chart's title names the
new step with every chart drawn (page_to_page.py's arrival, on the same page); a tree whose step the browser draws
(issue 44): until its view marks every picture of the step drawn. bench/decoding_ab.py times both trees' steps
side by side, with the script runs and a new sentence's first screen. Prints each step's time, their median
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
from deck_ab import VIEW, in_browser
from decoding_ab import SERVER_SLIDER, STEP_DRAWN_JS, press_right
from long_text import SENTENCES

TARGET_S = 3.0


def walk(page, url: str, timeout_ms: int = 240_000) -> list[float]:
    """Open the page at step 0 and step to the last: seconds for each step (a tree whose step the browser draws:
    until the view marks the step's every picture drawn; decoding_ab.STEP_DRAWN_JS)."""
    page.goto(url)
    settle(page, timeout_ms)
    slider = page.locator(f"{VIEW} .vz-step" if in_browser(page) else SERVER_SLIDER).first
    last = int(slider.get_attribute("max"))
    times = []
    for step in range(1, last + 1):
        began = time.perf_counter()
        press_right(page)
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
