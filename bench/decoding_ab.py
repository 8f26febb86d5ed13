"""Steps on the decoding page, two trees side by side (issue 44): a past main (A, whose page reran its script for
every step) and this tree (B, whose steps the browser answers: viz/figures/browser_view.js, a deck of every step),
each served by its own `streamlit run app.py`, in Chromium at 1280x720, the same steps on each in turn.

    python bench/decoding_ab.py [--base 00912cb | --against /tmp/base44d] [--steps 40] [--words 40]
                                [--sizes 9 40 128] [--normal] [--write]

Each step: the step slider focused and ArrowRight pressed (a teacher walking the class through the loop, as
bench/decoding_steps.py does), the trees alternating; from the key until the step is on screen (A: the script has
finished, nothing is stale, every chart drawn and the top-k chart's title names the step; B: the view marks every
picture of the step drawn) and the websocket messages sent meanwhile and 0.5 s after (a script run asked for is one).
Then, for a new sentence of each of --sizes tokens opened as a link: the seconds until its first screen is drawn and
the page idle (step 0's pictures, every chart of the page drawn), (B) until every step is in the browser, and (B)
the view's body as it received it (every step's figures, gzipped). Presenter mode unless --normal (the measure of
issue 46: 0.48 s a step). The trees alternate which goes first; the load average is printed at the start and end.
"""
from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
import urllib.parse
from pathlib import Path

from common import ROOT, Check, Section, SentenceMaker, Server, log, median, percentile, report, table
from edit_ab import SETTLE_S, TIMEOUT_MS, load, own_browser, unpack
from multihead_ab import IDLE_JS, Messages

from browser_utils import wait_for_app
from long_text import SENTENCES
from playwright.sync_api import sync_playwright

BASE = "00912cb"          # main of 2026-11-28, before the decoding page's step was drawn in the browser
VIEW = ".vz-deck"
SERVER_SLIDER = '[data-testid="stSlider"]:has([aria-label="Decoding step"]) input[type=range]'   # A's step slider
# A step on screen: no run going, nothing stale, every chart drawn; A: the top-k chart's title names the step; B:
# the view says it drew every picture of the step
STEP_DRAWN_JS = """(step) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (!plots.length || !plots.every(p => p.querySelector('svg.main-svg'))) return false;
  const deck = document.querySelector('.vz-deck');
  if (deck) return deck.dataset.linesPick === String(step);
  return plots.some(p => [...p.querySelectorAll('.gtitle')].some(t => t.textContent.startsWith('Step ' + step + ':')));
}"""
VIEW_STEP_JS = "(step) => (document.querySelector('.vz-deck') || {dataset: {}}).dataset.linesPick === String(step)"


def page_url(base: str, text: str, present: bool, **params) -> str:
    query = {"model": "en-es", "text": text, "method": "greedy", **({"present": 1} if present else {}), **params}
    return f"{base}/decoding?{urllib.parse.urlencode(query)}"


def in_browser(page) -> bool:
    return page.locator(VIEW).count() > 0


def press_right(page) -> None:
    """The step slider focused (A: Streamlit's thumb; B: the view's range input), its next step by the keyboard."""
    page.locator(f"{VIEW} .vz-step" if in_browser(page) else SERVER_SLIDER).first.focus()
    page.keyboard.press("ArrowRight")


def time_steps(pages: dict, frames: dict, n: int) -> dict:
    result = {name: {"step": [], "sent": [], "runs": [], "view_ms": [], "rest_ms": [], "painted": []} for name in pages}
    for step in range(1, n + 1):
        for name in ("AB" if step % 2 == 0 else "BA"):
            page, mine = pages[name], result[name]
            sent, runs = frames[name].sent, frames[name].runs
            start = time.perf_counter()
            press_right(page)
            page.wait_for_function(STEP_DRAWN_JS, arg=step, timeout=TIMEOUT_MS, polling="raf")
            mine["step"].append(time.perf_counter() - start)
            if in_browser(page):
                box = page.locator(VIEW)
                mine["view_ms"].append(float(box.get_attribute("data-pick-ms")))
                mine["rest_ms"].append(float(box.get_attribute("data-lines-ms")))
                painted = box.get_attribute("data-painted-ms")          # the view's clock, key -> first picture shown
                if painted is not None:
                    mine["painted"].append(float(painted) / 1000)
            time.sleep(SETTLE_S)
            mine["sent"].append(frames[name].sent - sent)
            mine["runs"].append(frames[name].runs - runs)
            log(f"step {step}: {name} {mine['step'][-1] * 1000:.0f} ms, {mine['sent'][-1]} sent, "
                f"{mine['runs'][-1]} script runs")
    return result


def open_page(browser, url: str) -> tuple:
    """The page at `url` in a new tab, once its step 0 is drawn (B: and every step is in the browser)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    frames = Messages(page)
    page.goto(url)
    wait_for_app(page, TIMEOUT_MS)
    page.wait_for_function(STEP_DRAWN_JS, arg=0, timeout=TIMEOUT_MS, polling=50)
    if in_browser(page):
        page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
    page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
    return page, frames


def open_sentence(browser, url: str) -> tuple[float, float, int]:
    """A new sentence opened as a link: seconds until step 0's pictures and the page's every chart are drawn and no
    run is going (its first screen), (B) until every step is in the browser and the page idle, and (B) the view's
    body (every step's figures and words, gzipped) as the view received it."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        start = time.perf_counter()
        page.goto(url)
        wait_for_app(page, TIMEOUT_MS)
        page.wait_for_function(STEP_DRAWN_JS, arg=0, timeout=TIMEOUT_MS, polling=50)
        first = time.perf_counter() - start
        whole, body = first, 0
        if in_browser(page):
            page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
            page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
            whole = time.perf_counter() - start
            body = int(page.locator(VIEW).get_attribute("data-body-bytes"))
        return first, whole, body
    finally:
        page.close()


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help="commit of tree A (git archive)")
    parser.add_argument("--against", type=Path, default=None, help="a checkout of --base instead (a worktree)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--words", default="40", choices=["9", "40"], help="the steps' sentence")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--normal", action="store_true", help="normal mode, not presenter mode")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    present = not args.normal
    maker = SentenceMaker(seed=44)
    load_start = load()
    log(f"load average {load_start} (1/5/15 min) at the start")
    base = f"{args.base} (a worktree at {args.against})" if args.against else args.base
    with tempfile.TemporaryDirectory(prefix="decoding-ab-") as tmp, contextlib.ExitStack() as stack:
        trees = {"A": args.against or unpack(args.base, Path(tmp)), "B": ROOT}
        servers = {name: stack.enter_context(Server(root=root)) for name, root in trees.items()}
        playwright = stack.enter_context(sync_playwright())
        browsers = {name: own_browser(playwright)[0] for name in trees}
        pages, frames = {}, {}
        for name, server in servers.items():
            pages[name], frames[name] = open_page(browsers[name], page_url(server.url, SENTENCES[args.words], present))
        time.sleep(1)
        steps = time_steps(pages, frames, args.steps)
        opens: dict = {name: {} for name in trees}
        for n in args.sizes:
            sentence = maker.sentence(n)
            for name in ("AB" if n % 2 == 0 else "BA"):
                opens[name][n] = open_sentence(browsers[name], page_url(servers[name].url, sentence, present))
                log(f"{n} tokens opened: {name} first screen {opens[name][n][0]:.2f} s, every step "
                    f"{opens[name][n][1]:.2f} s, body {opens[name][n][2]:,} B")
    load_end = load()
    log(f"load average {load_end} (1/5/15 min) at the end")

    def ms(values) -> str:
        return f"{median(values) * 1000:.0f} ms / {percentile(values, 90) * 1000:.0f} ms" if values else "—"

    label = {"A": f"A: main at {base}", "B": "B: this tree"}
    rows = [[label[name], len(r["step"]), ms(r["step"]), ms(r["painted"]),
             f"{median(r['view_ms']):.0f} ms / {median(r['rest_ms']):.0f} ms" if r["view_ms"] else "—",
             f"{median(r['sent']):g} (max {max(r['sent'])})", f"{sum(r['runs'])}"] for name, r in steps.items()]
    open_rows = [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s" for name in trees), f"{opens['B'][n][1]:.2f} s",
                  f"{opens['B'][n][2]:,} B"] for n in args.sizes]
    mode = "presenter mode" if present else "normal mode"
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A {label['A'][3:]} and B this "
        f"tree (bench/decoding_ab.py), the decoding page of the en-es model, greedy, {mode}, on the {args.words}-word "
        "sentence of tests/long_text.py. B draws the step's pictures in the browser (viz/elements/browser_view.py, a "
        "deck of the builders' figures for every step, sent once a decoding); A reran the script for each step. "
        f"Load average {load_start} at the start, {load_end} at the end (1/5/15 min; 2 CPUs shared with other "
        "work): only the comparison within the run counts.", "",
        f"**Steps** ({args.steps} per tree, ArrowRight on the focused step slider, the trees alternating): median / "
        "p90 from the key until the step is on screen (A: script finished, nothing stale, every chart drawn, the "
        "top-k title names the step; B: the view marks every picture of the step drawn), as Playwright drives it. "
        "\"first picture on screen\": the view's own clock, from the key's event until the frame after the step's "
        "first picture (the top-k bars) is drawn has been shown. \"in the view\": B's own "
        "clock, step to its first picture drawn / to every picture drawn. \"sent\": websocket messages from the "
        "browser during the step and 0.5 s after; \"script runs\": of them, the page's reruns asked for.", "",
        table(["tree", "steps", "step: median / p90", "first picture on screen: median / p90", "in the view (median)", "messages sent per step (median)",
               "script runs (all steps)"], rows),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen is drawn and the page "
        "idle (step 0's pictures and every chart of the page), B's until every step is in the browser (the second "
        "run that sends them), and B's view body as the view received it (every step's figures and words, gzipped).",
        "",
        table(["sentence", *(f"first screen: {label[name]}" for name in trees), "B: every step in the browser",
               "B: the view's body"], open_rows),
    ])
    b, a = steps["B"], steps["A"]
    firsts = {name: [opens[name][n][0] for n in args.sizes] for name in trees}
    checks = [Check("a step's first picture on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted']) * 1000:.0f} ms", median(b["painted"]) <= 0.05),
              Check("no script run for a step (this tree)", f"{sum(b['runs'])} in {len(b['runs'])} steps",
                    sum(b["runs"]) == 0),
              Check(f"a step faster than at {base} (p50, B/A)", f"{median(b['step']) / median(a['step']):.2f}",
                    median(b["step"]) < median(a["step"])),
              Check(f"a new sentence's first screen no slower than at {base} (sum over sizes, B/A)",
                    f"{sum(firsts['B']) / sum(firsts['A']):.2f}", sum(firsts["B"]) <= 1.1 * sum(firsts["A"]))]
    if 128 in args.sizes:
        checks.append(Check("a 128-token sentence's view body < 2 MB (this tree)", f"{opens['B'][128][2]:,} B",
                            opens["B"][128][2] < 2_000_000))
    return report(Section("decoding_picks", "Steps in the browser: the decoding page's step (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
