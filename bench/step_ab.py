"""Steps on the step-through page, two trees side by side (issue 44): a past main (A, whose page reran its script for
every step) and this tree (B, whose nine steps the browser answers: viz/figures/browser_view.js, a deck of every
step), each served by its own `streamlit run app.py`, in Chromium at 1280x720, the same steps on each in turn.

    python bench/step_ab.py [--base f84fae2 | --against /tmp/base | --alone] [--picks 40] [--words 9]
                            [--sizes 9 40 128] [--normal] [--write]

Each pick: Next ▶ clicked (◀ Previous on the way back: 1 → 8, then 7 → 0, and again), a teacher walking the class
through one head's arithmetic, the trees alternating; from the click until the step is on screen (A: the script has
finished, nothing is stale, every chart drawn and the step's subheader names the step; B: the view marks every
picture of the step drawn) and the websocket messages sent meanwhile and 0.5 s after (a script run asked for is one).
Then, for a new sentence of each of --sizes tokens opened as a link: the seconds until its first screen is drawn and
the page idle (step 1's picture, every chart of the page), (B) until all nine steps are in the browser, and (B) the
view's body as it received it (the nine steps' figures and words, gzipped). Presenter mode unless --normal. --alone:
this tree only (no A). The load average is printed at the start and end.
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

BASE = "f84fae2"          # main of 2026-11-29, before the step-through page's steps were drawn in the browser
VIEW = ".vz-deck"
# A step on screen: no run going, nothing stale, every chart drawn; A: the step's subheader names it ("Step 3 of 9");
# B: the view says it drew every picture of the step
STEP_DRAWN_JS = """(step) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (!plots.length || !plots.every(p => p.querySelector('svg.main-svg'))) return false;
  const deck = document.querySelector('.vz-deck');
  if (deck) return deck.dataset.linesPick === String(step);
  return [...document.querySelectorAll('h3')].some(h => h.textContent.startsWith('Step ' + (step + 1) + ' of 9'));
}"""
BUTTONS = {"next": (f"{VIEW} .vz-next", ".st-key-step-next button"),
           "previous": (f"{VIEW} .vz-previous", ".st-key-step-prev button")}


def page_url(base: str, text: str, present: bool, **params) -> str:
    query = {"model": "en-es", "text": text, **({"present": 1} if present else {}), **params}
    return f"{base}/step?{urllib.parse.urlencode(query)}"


def in_browser(page) -> bool:
    return page.locator(VIEW).count() > 0


def walk(n: int) -> list[tuple[str, int]]:
    """n picks from step 0: Next to the last step, Previous back to the first, again: (button, the step it shows)."""
    picks, step, by = [], 0, 1
    while len(picks) < n:
        if not 0 <= step + by <= 8:
            by = -by
        step += by
        picks.append(("next" if by > 0 else "previous", step))
    return picks


def time_picks(pages: dict, frames: dict, n: int) -> dict:
    result = {name: {"step": [], "sent": [], "runs": [], "view_ms": [], "rest_ms": [], "painted": []} for name in pages}
    for i, (button, step) in enumerate(walk(n)):
        for name in (list(pages) if i % 2 == 0 else list(pages)[::-1]):
            page, mine = pages[name], result[name]
            sent, runs = frames[name].sent, frames[name].runs
            start = time.perf_counter()
            page.click(BUTTONS[button][0 if in_browser(page) else 1])
            page.wait_for_function(STEP_DRAWN_JS, arg=step, timeout=TIMEOUT_MS, polling="raf")
            mine["step"].append(time.perf_counter() - start)
            if in_browser(page):
                box = page.locator(VIEW)
                mine["view_ms"].append(float(box.get_attribute("data-pick-ms")))
                mine["rest_ms"].append(float(box.get_attribute("data-lines-ms")))
                painted = box.get_attribute("data-painted-ms")          # the view's clock, click -> picture shown
                if painted is not None:
                    mine["painted"].append(float(painted) / 1000)
            time.sleep(SETTLE_S)
            mine["sent"].append(frames[name].sent - sent)
            mine["runs"].append(frames[name].runs - runs)
            log(f"pick {i + 1} ({button} to step {step}): {name} {mine['step'][-1] * 1000:.0f} ms, "
                f"{mine['sent'][-1]} sent, {mine['runs'][-1]} script runs")
    return result


def open_page(browser, url: str) -> tuple:
    """The page at `url` in a new tab, once its step 1 is drawn (B: and every step is in the browser)."""
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
    """A new sentence opened as a link: seconds until step 1's picture and the page's every chart are drawn and no
    run is going (its first screen), (B) until the nine steps are in the browser and the page idle, and (B) the
    view's body (every step's figures and words, gzipped) as the view received it."""
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
    parser.add_argument("--alone", action="store_true", help="this tree only, no tree A")
    parser.add_argument("--picks", type=int, default=40)
    parser.add_argument("--words", default="9", choices=["9", "40"], help="the steps' sentence")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--normal", action="store_true", help="normal mode, not presenter mode")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    present = not args.normal
    maker = SentenceMaker(seed=45)
    load_start = load()
    log(f"load average {load_start} (1/5/15 min) at the start")
    base = f"{args.base} (a worktree at {args.against})" if args.against else args.base
    with tempfile.TemporaryDirectory(prefix="step-ab-") as tmp, contextlib.ExitStack() as stack:
        trees = {"B": ROOT} if args.alone else {"A": args.against or unpack(args.base, Path(tmp)), "B": ROOT}
        servers = {name: stack.enter_context(Server(root=root)) for name, root in trees.items()}
        playwright = stack.enter_context(sync_playwright())
        browsers = {name: own_browser(playwright)[0] for name in trees}
        pages, frames = {}, {}
        for name, server in servers.items():
            pages[name], frames[name] = open_page(browsers[name], page_url(server.url, SENTENCES[args.words], present))
        time.sleep(1)
        picks = time_picks(pages, frames, args.picks)
        opens: dict = {name: {} for name in trees}
        for n in args.sizes:
            sentence = maker.sentence(n)
            for name in (list(trees) if n % 2 == 0 else list(trees)[::-1]):
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
             f"{median(r['sent']):g} (max {max(r['sent'])})", f"{sum(r['runs'])}"] for name, r in picks.items()]
    open_rows = [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s" for name in trees), f"{opens['B'][n][1]:.2f} s",
                  f"{opens['B'][n][2]:,} B"] for n in args.sizes]
    mode = "presenter mode" if present else "normal mode"
    against = "" if args.alone else f"A {label['A'][3:]} and "
    body = "\n".join([
        f"Chromium (headless, 1280x720) against {'one' if args.alone else 'two'} `streamlit run app.py` at once, "
        f"{against}B this tree (bench/step_ab.py), the step-through page of the en-es model (encoder, layer 0, head "
        f"0, the first word followed), {mode}, on the {args.words}-word sentence of tests/long_text.py. B draws the "
        "nine steps in the browser (viz/elements/browser_view.py, a deck of the builders' figures, the formulas as "
        "MathML, sent once a kind, layer, head and query); A reran the script for each step. "
        f"Load average {load_start} at the start, {load_end} at the end (1/5/15 min; 2 CPUs shared with other "
        "work): only the comparison within the run counts.", "",
        f"**Steps** ({args.picks} per tree, Next ▶ clicked to step 9, ◀ Previous back to step 1, again; the trees "
        "alternating): median / p90 from the click until the step is on screen (A: script finished, nothing stale, "
        "every chart drawn, the step's subheader names it; B: the view marks every picture of the step drawn), as "
        "Playwright drives it. \"first picture on screen\": the view's own clock, from the click's event until the "
        "frame after the step's picture is drawn has been shown. \"in the view\": B's own clock, step to its first "
        "picture drawn / to every picture drawn. \"sent\": websocket messages from the browser during the step and "
        "0.5 s after; \"script runs\": of them, the page's reruns asked for.", "",
        table(["tree", "steps", "step: median / p90", "first picture on screen: median / p90", "in the view (median)",
               "messages sent per step (median)", "script runs (all steps)"], rows),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen is drawn and the page "
        "idle (step 1's picture and every chart of the page), B's until the nine steps are in the browser (the second "
        "run that sends them), and B's view body as the view received it (the nine steps' figures and words, "
        "gzipped).", "",
        table(["sentence", *(f"first screen: {label[name]}" for name in trees), "B: every step in the browser",
               "B: the view's body"], open_rows),
        "", "A new tab is B's dearest case: its session is sent the view's plotly.js (1.5 MB, once a session, "
        "viz/elements/browser_view.py) before the first picture, and the view asks for the other eight steps at once "
        "(a second run, ~0.1 s on the server), which the page's idle state waits for; the page's own first run is "
        "no slower (AppTest, en-es, a 9-word sentence: 0.19-0.20 s against A's 0.21-0.22 s).",
    ])
    b = picks["B"]
    checks = [Check("a step's picture on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted']) * 1000:.0f} ms", median(b["painted"]) <= 0.05),
              Check("no script run for a step (this tree)", f"{sum(b['runs'])} in {len(b['runs'])} steps",
                    sum(b["runs"]) == 0)]
    if not args.alone:
        a = picks["A"]
        firsts = {name: [opens[name][n][0] for n in args.sizes] for name in trees}
        checks += [Check(f"a step faster than at {args.base} (p50, B/A)",
                         f"{median(b['step']) / median(a['step']):.2f}", median(b["step"]) < median(a["step"])),
                   Check(f"a new tab's first screen ≤ 1.1× {args.base}'s (sum over sizes, B/A)",
                         f"{sum(firsts['B']) / sum(firsts['A']):.2f}", sum(firsts["B"]) <= 1.1 * sum(firsts["A"]))]
    if 128 in args.sizes:
        checks.append(Check("a 128-token sentence's step view body < 2 MB (this tree)", f"{opens['B'][128][2]:,} B",
                            opens["B"][128][2] < 2_000_000))
    return report(Section("step_picks", "Steps in the browser: the step-through page's nine steps (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
