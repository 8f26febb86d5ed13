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

import time

from common import Check, Section, SentenceMaker, median, report
from deck_ab import (Trees, VIEW, ab_parser, faster, first_screen_table, in_browser, no_runs, open_sentences,
                     page_url, small_body, step_drawn_js, step_table, time_picks)
from edit_ab import TIMEOUT_MS

from long_text import SENTENCES

BASE = "00912cb"          # main of 2026-11-28, before the decoding page's step was drawn in the browser
SERVER_SLIDER = '[data-testid="stSlider"]:has([aria-label="Decoding step"]) input[type=range]'   # A's step slider
# A step on screen (deck_ab.step_drawn_js); A: the top-k chart's title names the step
STEP_DRAWN_JS = step_drawn_js(
    "plots.some(p => [...p.querySelectorAll('.gtitle')].some(t => t.textContent.startsWith('Step ' + step + ':')))")


def url(base: str, text: str, present: bool) -> str:
    return page_url(base, "decoding", text=text, method="greedy", **({"present": 1} if present else {}))


def press_right(page) -> None:
    """The step slider focused (A: Streamlit's thumb; B: the view's range input), its next step by the keyboard."""
    page.locator(f"{VIEW} .vz-step" if in_browser(page) else SERVER_SLIDER).first.focus()
    page.keyboard.press("ArrowRight")


def step_shown(page, step: int = 0) -> None:
    page.wait_for_function(STEP_DRAWN_JS, arg=step, timeout=TIMEOUT_MS, polling=50)


def time_steps(pages: dict, frames: dict, n: int) -> dict:
    def step(name: str, page, to: int) -> str:
        press_right(page)
        page.wait_for_function(STEP_DRAWN_JS, arg=to, timeout=TIMEOUT_MS, polling="raf")
        return "step"

    return time_picks(pages, frames, range(1, n + 1), step, lambda i, to: f"step {to}", turn=1)  # B first at step 1


def main(argv=None) -> Section:
    parser = ab_parser(__doc__, BASE)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--words", default="40", choices=["9", "40"], help="the steps' sentence")
    parser.add_argument("--normal", action="store_true", help="normal mode, not presenter mode")
    args = parser.parse_args(argv)
    present = not args.normal
    maker = SentenceMaker(seed=44)
    with Trees(args.base, args.against, prefix="decoding-ab-") as trees:
        pages, frames = trees.open_pages(lambda server: url(server, SENTENCES[args.words], present),
                                         lambda name, page: step_shown(page))
        time.sleep(1)
        steps = time_steps(pages, frames, args.steps)
        opens = open_sentences(trees, args.sizes, maker.sentence, lambda server, text: url(server, text, present),
                               step_shown)
    label, base, load_start, load_end = trees.label, trees.base, trees.load_start, trees.load_end
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
        step_table(steps, label),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen is drawn and the page "
        "idle (step 0's pictures and every chart of the page), B's until every step is in the browser (the second "
        "run that sends them), and B's view body as the view received it (every step's figures and words, gzipped).",
        "",
        first_screen_table(opens, args.sizes, label),
    ])
    b, a = steps["B"], steps["A"]
    firsts = {name: [opens[name][n][0] for n in args.sizes] for name in trees.roots}
    checks = [Check("a step's first picture on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted_step']) * 1000:.0f} ms", median(b["painted_step"]) <= 0.05),
              no_runs(b, "step"), faster(b, a, ("step",), base, "step"),
              Check(f"a new sentence's first screen no slower than at {base} (sum over sizes, B/A)",
                    f"{sum(firsts['B']) / sum(firsts['A']):.2f}", sum(firsts["B"]) <= 1.1 * sum(firsts["A"])),
              *small_body(opens, args.sizes)]
    return report(Section("decoding_picks", "Steps in the browser: the decoding page's step (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
