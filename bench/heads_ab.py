"""Kind picks on the head page's statistics, two trees side by side (issue 44): a past main (A, whose kind radio
reran the page's script for every pick) and this tree (B, whose picks the browser answers: viz/figures/browser_view.js,
a deck of every kind's layer x head picture for the statistic the server's select box chose), each served by its own
`streamlit run app.py`, in Chromium at 1280x720, the same picks on each in turn.

    python bench/heads_ab.py [--base bb4caee | --against DIR] [--picks 24] [--tokens 32] [--sizes 9 40 128]
                             [--write]

For each pick: from the choice (a click on the kind's radio button) until the statistic's picture shows it (A: the
script has finished, nothing is stale and the picture's title names the kind; B: the view marks the kind drawn),
the view's own clock (B), and the websocket messages the browser sent meanwhile and 0.5 s after (a script run asked
for is one). Then, for a new sentence of each of --sizes tokens, opened as a link: the seconds until its first
screen and until the page is idle, the bytes the server sent, and B's view body. The loops are bench/deck_ab.py's.
"""
from __future__ import annotations

import time

from common import Section, SentenceMaker, report
from deck_ab import (SERVER_DRAWN_JS, Trees, VIEW, VIEW_DRAWN_JS, ab_parser, faster, in_browser, no_runs, on_screen,
                     open_sentences, opened_table, page_url, pick_table, small_body, time_picks, titled)
from edit_ab import TIMEOUT_MS
from viz.core.catalogue import message

BASE = "bb4caee"          # main of 2026-11-29, before the head page's kind was drawn in the browser
PICKS = ["cross", "decoder", "encoder", "decoder", "cross", "encoder"]
STAT = "prev"


def title(kind: str) -> str:
    """The statistic's picture's title: the kind and the statistic (the same in both trees)."""
    return message("en", "heads.stat.title", kind=message("en", f"fig.kind.{kind}"), stat=message("en", f"heads.stat.{STAT}"))


def choose(name: str, page, kind: str) -> str:
    """The kind picked: the view's radio button (B), or the base's Streamlit radio (A); drawn when the view marks it,
    or the first chart's title names it."""
    if in_browser(page):
        page.locator(f"{VIEW} input[value='{kind}']").check()
        page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", kind], timeout=TIMEOUT_MS, polling="raf")
    else:
        page.locator(".st-key-heads-stat-kind label", has_text=message("en", f"heads.kind.{kind}")).first.click()
        page.wait_for_function(SERVER_DRAWN_JS, arg=title(kind), timeout=TIMEOUT_MS, polling=20)
    return "kind"


def main(argv=None) -> Section:
    parser = ab_parser(__doc__, BASE)
    parser.add_argument("--picks", type=int, default=24)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=47)
    url = lambda server, text: page_url(server, "heads", text=text, stat=STAT, kind="encoder")  # noqa: E731
    with Trees(args.base, args.against, prefix="heads-ab-") as trees:
        text = maker.sentence(args.tokens)
        pages, frames = trees.open_pages(
            lambda server: url(server, text),
            lambda name, page: page.wait_for_function(SERVER_DRAWN_JS, arg=title("encoder"), timeout=TIMEOUT_MS)
            if name == "A" else None)
        time.sleep(1)
        picks = time_picks(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks], choose,
                           lambda i, kind: f"pick {kind}")
        opens = open_sentences(trees, args.sizes, maker.sentence, url, titled)
    label, base, load_start, load_end = trees.label, trees.base, trees.load_start, trees.load_end
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A, {label['A'][3:]}"
        f"{'' if args.against else ' (`git archive`)'}, and B, this tree (bench/heads_ab.py): the head page's "
        f"statistics (share on the previous token) of the en-es model on a {args.tokens}-token sentence. B draws the "
        "statistic's picture in the browser (a deck of every kind's layer x head grid, sent at once); A reran the "
        f"script for each kind. Load average {load_start} at the start, {load_end} at the end (1/5/15 min; 2 CPUs "
        "shared with other work): only the comparison within the run counts.", "",
        f"**Kind picks** ({args.picks} per tree, the trees alternating): median / p90 from the click until the "
        "picture shows the kind (A: script finished, nothing stale, the title names it; B: the view marks it drawn), "
        "as Playwright drives it. \"on screen\": the view's own clock, the pick's event until the frame after its "
        "picture is drawn. \"sent\": websocket messages from the browser during the pick and 0.5 s after; \"script "
        "runs\": of them, the page's reruns asked for.", "",
        pick_table(picks, label, "kind"),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen (a chart with its "
        "title), seconds until the page is idle and the bytes the server sent on the websocket (B's include the "
        "vendored plotly.js, 1.5 MB once a session); B's view body (gzipped) as the view received it.", "",
        opened_table(opens, args.sizes, label),
    ])
    b, a = picks["B"], picks["A"]
    checks = [*on_screen(b, ("kind",)), no_runs(b, "pick"), faster(b, a, ("kind",), base),
              *small_body(opens, args.sizes)]
    return report(Section("heads_picks", "Picks in the browser: the kind on the head page's statistics (issue 44)",
                          body, checks), args.write)


if __name__ == "__main__":
    main()
