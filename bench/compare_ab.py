"""Head picks on the compare page's two sentences, two trees side by side (issue 44): a past main (A, whose layer and
head select boxes reran the page's script for every pick) and this tree (B, whose picks the browser answers:
viz/figures/browser_view.js, a deck of every layer x head's maps, and each layer's mean, for the kind, sentence B and
window the server's widgets chose), each served by its own `streamlit run app.py`, in Chromium at 1280x720, the same
picks on each in turn.

    python bench/compare_ab.py [--base e6faf7e | --against DIR] [--picks 24] [--tokens 32] [--sizes 9 40 128]
                               [--write]

For each pick (a head of the encoder's layer 0; sentence B: A with two words swapped, the page's own): from the choice (Playwright's select) until the page shows it (A:
the URL names the head, the script has finished and nothing is stale; B: the view marks the head drawn), the view's
own clock (B: the pick's event to the frame after its picture), and the websocket messages the browser sent meanwhile
and 0.5 s after (a script run asked for is one). Then, for a new sentence of each of --sizes tokens, opened as a link:
the seconds until its first screen, the seconds until the page is idle (B: and every head is in the browser), the
bytes the server sent, and B's view body (gzipped, as the view received it). The trees alternate which goes first;
the load average is printed at the start and the end. A is `git archive` of --base, or --against (a worktree of it).
The loops are bench/deck_ab.py's.
"""
from __future__ import annotations

import time

from common import Section, SentenceMaker, report
from deck_ab import (Trees, ab_parser, faster, no_runs, on_screen, open_sentences, opened_table, page_url, pick_head,
                     pick_table, small_body, time_picks, titled)

BASE = "e6faf7e"          # main of 2026-11-29, before the compare page's layer and head were picked in the browser
PICKS = [3, 5, 1, 6, 2, 0, 7, 4]

def choose_head(name: str, page, head: int) -> str:
    """A head of the encoder's layer 0 (deck_ab.pick_head)."""
    return pick_head(page, head, f"0:{head}", "compare-encoder-head")


def main(argv=None) -> Section:
    parser = ab_parser(__doc__, BASE)
    parser.add_argument("--picks", type=int, default=24)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=48)
    url = lambda server, text: page_url(server, "compare", text=text, kind="encoder", layer=0, head=0)  # noqa: E731
    with Trees(args.base, args.against, prefix="compare-ab-") as trees:
        text = maker.sentence(args.tokens)
        pages, frames = trees.open_pages(lambda server: url(server, text), lambda name, page: titled(page))
        time.sleep(1)
        picks = time_picks(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks], choose_head,
                           lambda i, head: f"pick head {head}")
        opens = open_sentences(trees, args.sizes, maker.sentence, url, titled)
    label, base, load_start, load_end = trees.label, trees.base, trees.load_start, trees.load_end
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A, {label['A'][3:]}"
        f"{'' if args.against else ' (`git archive`)'}, and B, this tree (bench/compare_ab.py): the compare page of the "
        f"en-es model (one head, two sentences; encoder self-attention) on a {args.tokens}-token sentence and its "
        "sentence B (two words swapped), heads of layer 0 picked. B draws the pick's pictures in the browser "
        "(viz/elements/browser_view.py, a deck of every layer x head's two maps and word-order test, each layer's mean "
        "of the heads too, 27 picks, sent once for the kind, sentence B and window the server's widgets chose); A reran "
        "the script for each head. Load average "
        f"{load_start} at the start, {load_end} at the end (1/5/15 min; 2 CPUs shared with other work): only the "
        "comparison within the run counts.", "",
        f"**Head picks** ({args.picks} per tree, the trees alternating): median / p90 from the choice until the "
        "page shows it (A: the URL names the head, script finished, nothing stale; B: the view marks it drawn), as "
        "Playwright drives it (its own round trips to Chromium included). \"on screen\": the view's own clock, from "
        "the pick's event until the frame after its first picture is drawn has been shown. \"in the view\": the "
        "view's clock, pick to the scores' picture drawn / to the rest in sight drawn too. \"sent\": websocket "
        "messages from the browser to the server during the pick and 0.5 s after it; \"script runs\": of them, the "
        "whole page's reruns asked for (every page's worker watchdog, a fragment, runs every 5 s: counted as sent, "
        "not as script runs).", "",
        pick_table(picks, label, "head"),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen (a chart with its "
        "title); seconds until the page is idle (B: with every head in the browser, the second run that sends them) "
        "and the bytes the server sent on the websocket (B's include the vendored plotly.js, 1.5 MB once a session; "
        "A's Streamlit charts take theirs from Streamlit's scripts over HTTP, not counted); B's view body (every "
        "pick's pictures, gzipped) as the view received it. A long sentence's maps show a window of its "
        "tokens (the page's slider).", "",
        opened_table(opens, args.sizes, label),
    ])
    b, a = picks["B"], picks["A"]
    checks = [*on_screen(b, ("head",)), no_runs(b, "pick"), faster(b, a, ("head",), base),
              *small_body(opens, args.sizes)]
    return report(Section("compare_picks", "Picks in the browser: the compare page's layer and head (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
