"""Steps and heads on the step-through page, two trees side by side (issue 44): a past main (A: 691f1c4 drew the nine
steps in the browser and picked the layer and head on the server; f84fae2 reran its script for every step) and this
tree (B, whose heads and their steps the browser answers: viz/figures/browser_view.js, a deck of every head's steps),
each served by its own `streamlit run app.py`, in Chromium at 1280x720, the same picks on each in turn.

    python bench/step_ab.py [--base 691f1c4 | --against /tmp/base | --alone] [--picks 40] [--heads 24] [--words 9]
                            [--sizes 9 40 128] [--normal] [--write]

Each step pick: Next ▶ clicked (◀ Previous on the way back: 1 → 8, then 7 → 0, and again), a teacher walking the
class through one head's arithmetic, the trees alternating; from the click until the step is on screen (a tree without
the deck: the script has finished, nothing is stale, every chart drawn and the step's subheader names the step; with
it: the view marks every picture of the step drawn) and the websocket messages sent meanwhile and 0.5 s after (a
script run asked for is one). Then --heads picks of a layer or a head on step 8, softmax (A: its server select boxes;
B: the deck's selects), timed the same way. Then, for a new sentence of each of --sizes tokens opened as a link: the
seconds until its first screen is drawn and the page idle (step 1's picture, every chart of the page), (B) until the
whole deck is in the browser, and (B) the view's body as it received it (gzipped). Presenter mode unless --normal.
--alone: this tree only (no A). The load average is printed at the start and end.
"""
from __future__ import annotations

import time

from common import Check, Section, SentenceMaker, median, report
from deck_ab import (VIEW_DRAWN_JS, Trees, VIEW, ab_parser, faster, first_screen_table, in_browser, no_runs,
                     open_sentences, page_url, pick_table, small_body, step_drawn_js, step_table, time_picks)
from edit_ab import TIMEOUT_MS

from long_text import SENTENCES

BASE = "691f1c4"          # main of 2026-11-29 (session 21's end): the steps in the browser, the head on the server
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


HEAD_STEP = 7                       # the heads are picked on step 8, softmax: every head's weights differ
# A (its layer and head the server's select boxes): the URL names the pick, no run going, nothing stale, every chart
# drawn, and the deck is another (a new body, sig) showing the step
SERVER_PICK_JS = """([layer, head, sig, step]) => {
  const url = new URL(location.href).searchParams;
  if (url.get('layer') !== String(layer) || url.get('head') !== String(head)) return false;
  if (document.querySelector('[data-testid="stStatusWidget"]') || document.querySelector('[data-stale="true"]')) return false;
  const deck = document.querySelector('.vz-deck');
  return !!deck && deck.dataset.sig !== sig && deck.dataset.linesPick === String(step)
    && [...document.querySelectorAll('.js-plotly-plot')].every((p) => p.querySelector('svg.main-svg'));
}"""


def head_walk(n: int) -> list[tuple[int, int]]:
    """n picks from layer 0's head 0: every head of a layer in turn, then the next layer (its head kept), the heads
    back down: (layer, head)."""
    picks, layer, head, by = [], 0, 0, 1
    while len(picks) < n:
        if not 0 <= head + by <= 7:
            by, layer = -by, (layer + 1) % 3
        else:
            head += by
        picks.append((layer, head))
    return picks


def time_heads(pages: dict, frames: dict, n: int) -> dict:
    shown = {name: (0, 0) for name in pages}

    def click(name: str, page, pick: tuple[int, int]) -> str:
        layer, head = pick
        what = "layer" if layer != shown[name][0] else "head"
        shown[name] = pick
        if page.locator(f"{VIEW} .vz-head").count():                  # B: the deck's selects
            page.select_option(f"{VIEW} .vz-{what}", str(pick[what == "head"]))
            page.wait_for_function(VIEW_DRAWN_JS, arg=["linesPick", f"{layer}:{head}:{HEAD_STEP}"],
                                   timeout=TIMEOUT_MS, polling="raf")
        else:                                                            # A: the server's select boxes
            sig = page.locator(VIEW).get_attribute("data-sig")
            page.locator(f".st-key-step-encoder-{what} input[role=combobox]").click()
            page.get_by_role("option", name=f"{what} {pick[what == 'head']}", exact=True).click()
            page.wait_for_function(SERVER_PICK_JS, arg=[layer, head, sig, HEAD_STEP], timeout=TIMEOUT_MS, polling=20)
        return "head"                                                    # a layer too: a pick of the head shown

    for page in pages.values():
        page.click(f"{VIEW} .vz-step-choice >> nth={HEAD_STEP}")
        page.wait_for_function(STEP_DRAWN_JS, arg=HEAD_STEP, timeout=TIMEOUT_MS, polling=50)
    time.sleep(1)
    return time_picks(pages, frames, head_walk(n), click, lambda i, pick: f"head {i + 1} (layer {pick[0]}, head {pick[1]})")


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
    parser.add_argument("--heads", type=int, default=24, help="head and layer picks on step 8 (0: none)")
    args = parser.parse_args(argv)
    present = not args.normal
    maker = SentenceMaker(seed=45)
    with Trees(args.base, args.against, args.alone, prefix="step-ab-") as trees:
        pages, frames = trees.open_pages(lambda server: url(server, SENTENCES[args.words], present),
                                         lambda name, page: step_shown(page))
        time.sleep(1)
        picks = time_steps(pages, frames, args.picks)
        heads = time_heads(pages, frames, args.heads) if args.heads else None
        opens = open_sentences(trees, args.sizes, maker.sentence, lambda server, text: url(server, text, present),
                               step_shown)
    label, load_start, load_end = trees.label, trees.load_start, trees.load_end
    mode = "presenter mode" if present else "normal mode"
    against = "" if args.alone else f"A {label['A'][3:]} and "
    body = "\n".join([
        f"Chromium (headless, 1280x720) against {'one' if args.alone else 'two'} `streamlit run app.py` at once, "
        f"{against}B this tree (bench/step_ab.py), the step-through page of the en-es model (encoder, layer 0, head "
        f"0, the first word followed), {mode}, on the {args.words}-word sentence of tests/long_text.py. B draws "
        "every head's nine steps in the browser (viz/elements/browser_view.py, a deck of the builders' figures, the "
        "formulas as MathML, sent once a kind and query); A drew one head's nine steps there, its layer and head "
        "the server's select boxes (a new deck each). "
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
        *(["", f"**Heads** ({args.heads} per tree on step {HEAD_STEP + 1}, softmax: every head of layer 0 in turn, "
            "then layer 1 with the head kept, its heads back down, and so on; the trees alternating): from the choice "
            "until the step of the head is on screen (A: its server select boxes, the script finished and the new "
            "deck drawn; B: the deck's selects, the view marks every picture drawn).", "",
            pick_table(heads, label, "head")] if heads else []),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen is drawn and the page "
        "idle (step 1's picture and every chart of the page), B's until its whole deck is in the browser (the second "
        "run that sends it: every head's nine steps), and B's view body as the view received it (every head's steps' "
        "figures and words, gzipped).", "",
        first_screen_table(opens, args.sizes, label),
        "", "A new tab is B's dearest case: its session is sent the view's plotly.js (1.5 MB, once a session, "
        "viz/elements/browser_view.py) before the first picture, and the view then asks for the whole deck (a second "
        "run: the encoder's 24 heads x 9 steps, ~0.3-0.8 s on the server, built once for every session of the "
        "worker), which the page's idle state waits for. B draws ahead only the shown head's other steps (the deck's "
        "`ahead`), so a step is no slower than A's; another head is drawn when picked.",
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
    if heads:
        checks += [Check("a head's step on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                         f"{median(heads['B']['painted_head']) * 1000:.0f} ms",
                         median(heads["B"]["painted_head"]) <= 0.05), no_runs(heads["B"], "head")]
        if not args.alone:
            checks.append(faster(heads["B"], heads["A"], ("head",), args.base, "head"))
    checks += small_body(opens, args.sizes, "step view body")
    return report(Section("step_picks", "Steps in the browser: the step-through page's nine steps (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
