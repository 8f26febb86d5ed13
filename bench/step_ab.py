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

import time

from common import Check, Section, SentenceMaker, median, report
from deck_ab import (Trees, VIEW, ab_parser, faster, first_screen_table, in_browser, no_runs, open_sentences,
                     page_url, small_body, step_drawn_js, step_table, time_picks)
from edit_ab import TIMEOUT_MS

from long_text import SENTENCES

BASE = "f84fae2"          # main of 2026-11-29, before the step-through page's steps were drawn in the browser
# A step on screen (deck_ab.step_drawn_js); A: the step's subheader names it ("Step 3 of 9")
STEP_DRAWN_JS = step_drawn_js(
    "[...document.querySelectorAll('h3')].some(h => h.textContent.startsWith('Step ' + (step + 1) + ' of 9'))")
BUTTONS = {"next": (f"{VIEW} .vz-next", ".st-key-step-next button"),
           "previous": (f"{VIEW} .vz-previous", ".st-key-step-prev button")}


def url(base: str, text: str, present: bool) -> str:
    return page_url(base, "step", text=text, **({"present": 1} if present else {}))


def walk(n: int) -> list[tuple[str, int]]:
    """n picks from step 0: Next to the last step, Previous back to the first, again: (button, the step it shows)."""
    picks, step, by = [], 0, 1
    while len(picks) < n:
        if not 0 <= step + by <= 8:
            by = -by
        step += by
        picks.append(("next" if by > 0 else "previous", step))
    return picks


def step_shown(page, step: int = 0) -> None:
    page.wait_for_function(STEP_DRAWN_JS, arg=step, timeout=TIMEOUT_MS, polling=50)


def time_steps(pages: dict, frames: dict, n: int) -> dict:
    def click(name: str, page, pick: tuple[str, int]) -> str:
        button, step = pick
        page.click(BUTTONS[button][0 if in_browser(page) else 1])
        page.wait_for_function(STEP_DRAWN_JS, arg=step, timeout=TIMEOUT_MS, polling="raf")
        return "step"

    return time_picks(pages, frames, walk(n), click, lambda i, pick: f"pick {i + 1} ({pick[0]} to step {pick[1]})")


def main(argv=None) -> Section:
    parser = ab_parser(__doc__, BASE)
    parser.add_argument("--alone", action="store_true", help="this tree only, no tree A")
    parser.add_argument("--picks", type=int, default=40)
    parser.add_argument("--words", default="9", choices=["9", "40"], help="the steps' sentence")
    parser.add_argument("--normal", action="store_true", help="normal mode, not presenter mode")
    args = parser.parse_args(argv)
    present = not args.normal
    maker = SentenceMaker(seed=45)
    with Trees(args.base, args.against, args.alone, prefix="step-ab-") as trees:
        pages, frames = trees.open_pages(lambda server: url(server, SENTENCES[args.words], present),
                                         lambda name, page: step_shown(page))
        time.sleep(1)
        picks = time_steps(pages, frames, args.picks)
        opens = open_sentences(trees, args.sizes, maker.sentence, lambda server, text: url(server, text, present),
                               step_shown)
    label, load_start, load_end = trees.label, trees.load_start, trees.load_end
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
        step_table(picks, label),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen is drawn and the page "
        "idle (step 1's picture and every chart of the page), B's until the nine steps are in the browser (the second "
        "run that sends them), and B's view body as the view received it (the nine steps' figures and words, "
        "gzipped).", "",
        first_screen_table(opens, args.sizes, label),
        "", "A new tab is B's dearest case: its session is sent the view's plotly.js (1.5 MB, once a session, "
        "viz/elements/browser_view.py) before the first picture, and the view asks for the other eight steps at once "
        "(a second run, ~0.1 s on the server), which the page's idle state waits for; the page's own first run is "
        "no slower (AppTest, en-es, a 9-word sentence: 0.19-0.20 s against A's 0.21-0.22 s).",
    ])
    b = picks["B"]
    checks = [Check("a step's picture on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted_step']) * 1000:.0f} ms", median(b["painted_step"]) <= 0.05),
              no_runs(b, "step")]
    if not args.alone:
        firsts = {name: [opens[name][n][0] for n in args.sizes] for name in trees.roots}
        checks += [faster(b, picks["A"], ("step",), args.base, "step"),
                   Check(f"a new tab's first screen ≤ 1.1× {args.base}'s (sum over sizes, B/A)",
                         f"{sum(firsts['B']) / sum(firsts['A']):.2f}", sum(firsts["B"]) <= 1.1 * sum(firsts["A"]))]
    checks += small_body(opens, args.sizes, "step view body")
    return report(Section("step_picks", "Steps in the browser: the step-through page's nine steps (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
