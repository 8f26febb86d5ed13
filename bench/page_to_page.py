"""Page-to-page time in presenter mode, as a teacher moves through the lesson: Chromium at 1280x720 against
`streamlit run app.py`, the app's default model and sentence, each page opened by the previous page's Next
button (presenter order), from the click until the new page's script has finished and its charts are drawn.

    python bench/page_to_page.py [--passes 2] [--lang en] [--words 9 40] [--against /path/to/main] [--write]

Pass 1 meets each page for the first time in the session (its caches cold for this sentence); later passes
start again from the start page, as a second lesson with the same sentence would. Prints every step's time and
each pass's median.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import statistics
import time
import urllib.parse
from pathlib import Path

from common import ROOT, Check, Section, Server, log, table, write_section

from browser_utils import browser
from chart_text import VIEWPORT, page_url, settle
from viz.tour.buttons import TOUR_URL
from long_text import SENTENCES
from viz.tour.steps import TOUR

TARGET_S = 1.0
VIEW_KEYS = ("kind", "view")      # what tells two stops on one page apart (viz/tour/steps.lesson_stops)
NEXT = ".st-key-presenter-next a"

# The new page is there: the address is the target's, its Previous button leads back to the page clicked from
# (a page that has begun to draw but not yet reached its buttons shows none), the script has finished (no status
# widget), none of the old page's elements is still fading out, and every chart has drawn its SVG.
ARRIVED_JS = """([from, path, own]) => {
  const norm = p => p.replace(/\\/$/, '');
  if (!norm(location.pathname).endsWith('/' + path)) return false;
  // a view of the same page (the explorer's decoder, then its cross-attention): its own values in the address
  const here = new URLSearchParams(location.search);
  if (Object.entries(own).some(([k, v]) => here.get(k) !== v)) return false;
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
        href = link.get_attribute("href")
        target = href.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
        own = {k: v for k, v in query.items() if k in VIEW_KEYS}
        here = page.evaluate("() => location.pathname")
        began = time.perf_counter()
        link.click()
        page.wait_for_function(ARRIVED_JS, arg=[here, target, own], timeout=timeout_ms, polling=50)
        steps.append((target + "".join(f" {v}" for v in own.values()), time.perf_counter() - began))
        log(f"page to page: -> {target}: {steps[-1][1]:.2f} s")
    return steps


def walk_trees(chromium, trees: list[tuple[str, Path]], passes: int, lang: str,
               words: str) -> dict[str, list[list[tuple[str, float]]]]:
    """`passes` walks of each checkout's app (its own server, one browser session each) with the sentence of
    `words`, the trees taking turns pass by pass (the first tree first in odd passes, last in even ones): the
    machine's load drifts, and a tree walked after the other would meet another load."""
    extra = {"text": SENTENCES[words]}
    walks: dict[str, list] = {label: [] for label, _ in trees}
    with contextlib.ExitStack() as stack:
        servers = {label: stack.enter_context(Server(root=root)) for label, root in trees}
        pages = {label: chromium.new_context(viewport=VIEWPORT).new_page() for label, _ in trees}
        for i in range(passes):
            for label, _ in (trees if i % 2 == 0 else trees[::-1]):
                log(f"page to page: {label}, {words} words, pass {i + 1}")
                walks[label].append(walk(pages[label], page_url(servers[label].url, "home", True, lang, extra)))
        for page in pages.values():
            page.context.close()
    return walks


def timed(walk_: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return [(name, s) for name, s in walk_ if not math.isnan(s)]


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--lang", default="en", choices=["en", "zh"])
    parser.add_argument("--words", nargs="+", default=["9"], choices=list(SENTENCES)[:2],
                        help="the sentence: 9 or 40 words (tests/long_text.py)")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout (the main this branch started from), walked in the same run")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    trees = [("this branch", ROOT)] + ([("main", args.against)] if args.against else [])
    load_before = os.getloadavg()
    results: dict[tuple[str, str], list] = {}
    with browser() as chromium:
        for words in args.words:
            for label, walks in walk_trees(chromium, trees, args.passes, args.lang, words).items():
                results[(label, words)] = walks
    load_after = os.getloadavg()
    rows, checks = [], []
    for (label, words), walks in results.items():
        for i, w in enumerate(walks):
            times = timed(w)
            slowest = sorted(times, key=lambda x: -x[1])[:3]
            med = statistics.median(s for _, s in times)
            rows.append([label, words, i + 1, f"{med:.2f}", f"{max(s for _, s in times):.2f}",
                         ", ".join(f"{n} {s:.2f}" for n, s in slowest)])
            if label == "this branch":
                checks.append(Check(f"page-to-page median < {TARGET_S:g} s ({words} words, pass {i + 1})",
                                    f"{med:.2f} s", med < TARGET_S))
    body = table(["app", "words", "pass", "median, s", "slowest, s", "slowest pages, s"], rows)
    detail = []
    for (label, words), walks in results.items():
        detail.append(f"\n{label}, {words} words, every step (s, pass by pass): "
                      + "; ".join(f"{name} " + "/".join(f"{w[i][1]:.2f}" if i < len(w) else "—" for w in walks)
                                  for i, (name, s) in enumerate(walks[0]) if not math.isnan(s)))
    note = (f"Load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end (2-core shared machine). "
            f"`python bench/page_to_page.py --passes {args.passes} --words {' '.join(args.words)}"
            + (" --against <main checkout>" if args.against else "") + "`.")
    body = note + "\n\n" + body + "\n" + "\n".join(detail)
    print(body)
    for c in checks:
        print(f"{c.target}: {c.measured} ({'met' if c.ok else 'NOT met'})")
    section = Section("page_to_page", f"Page to page in presenter mode ({args.lang})", body, checks)
    if args.write:
        write_section(section)
    return section


if __name__ == "__main__":
    main()
