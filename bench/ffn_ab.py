"""Picks on the feed-forward page, two trees side by side (issue 44): a past main (A, whose stack radio and layer
select box reran the page's script for every pick) and this tree (B, whose picks the browser answers:
viz/figures/browser_view.js, a deck of every stack x layer), each served by its own `streamlit run app.py`, in
Chromium at 1280x720, the same picks on each in turn.

    python bench/ffn_ab.py [--base a071c20] [--picks 36] [--tokens 32] [--sizes 9 40 128] [--write]

For each pick: from the choice (Playwright's select or click) until the units' picture shows it (A: the script has
finished, nothing is stale and the picture's title names the pick; B: the view marks the pick drawn), the view's own
clock (B: the pick's event to the frame after its picture), and the websocket messages the browser sent meanwhile
and 0.5 s after (a script run asked for is one). Then, for a new sentence of each of --sizes tokens, opened as a
link: the seconds until its picture is drawn (B: and every stack and layer is in the browser), the bytes the server
sent for it, and B's view body (gzipped, as the view received it). The trees alternate which goes first, so a
shared, loaded machine slows both alike; the load average is printed at the start and the end.
"""
from __future__ import annotations

import argparse
import re
import time

from common import Section, SentenceMaker, report, table
from deck_ab import (SERVER_DRAWN_JS, Trees, faster, ms, no_runs, on_screen, open_sentences, opened_cell, page_url,
                     sent_cell, small_body, time_kind_layer, titled)
from edit_ab import TIMEOUT_MS

from viz.core.catalogue import message

BASE = "a071c20"          # main of 2026-11-29, before the feed-forward view was drawn in the browser
PICKS = [("layer", 1), ("layer", 2), ("stack", "decoder"), ("layer", 0), ("layer", 1), ("stack", "encoder"),
         ("layer", 2), ("layer", 0), ("stack", "decoder")]


def where(stack: str, layer: int | None = None) -> str:
    """The start of the units' picture's title: the stack, and the layer when given."""
    name = message("en", "ffn.stack." + stack)
    return f"{name} layer {layer}:" if layer is not None else f"{name} layer"


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help="commit of tree A")
    parser.add_argument("--picks", type=int, default=36)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=45)
    url = lambda server, text: page_url(server, "ffn", text=text, view="ffn", stack="encoder", layer=0)  # noqa: E731
    with Trees(args.base, prefix="ffn-ab-") as trees:
        text = maker.sentence(args.tokens)
        pages, frames = trees.open_pages(
            lambda server: url(server, text),
            lambda name, page: page.wait_for_function(SERVER_DRAWN_JS, arg=where("encoder", 0), timeout=TIMEOUT_MS)
            if name == "A" else None)
        time.sleep(1)
        picks = time_kind_layer(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks], where,
                                ("ffn-stack", "ffn-layer"),
                                lambda stack: re.compile(rf"^{message('en', 'ffn.stack.' + stack)}$"), first="stack")
        opens = open_sentences(trees, args.sizes, maker.sentence, url, titled)
    label, load_start, load_end = trees.label, trees.load_start, trees.load_end
    rows = [[label[name], len(r["layer"]), ms(r["layer"]), len(r["stack"]), ms(r["stack"]),
             ms(r["painted_layer"]), ms(r["painted_stack"]), sent_cell(r), f"{sum(r['runs'])}"]
            for name, r in picks.items()]
    open_rows = [[f"{n} tokens", *(opened_cell(opens[name][n]) for name in trees.roots), f"{opens['B'][n][3]:,} B"]
                 for n in args.sizes]
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A the main of {args.base} "
        "(`git archive`) and B this tree (bench/ffn_ab.py), the feed-forward page's feed-forward view of the en-es "
        f"model on a {args.tokens}-token sentence. B draws the view in the browser (viz/elements/browser_view.py, a "
        "deck of the builders' two figures and their captions for every stack x layer, sent once a sentence); A "
        f"reran the script for each pick. Load average {load_start} at the start, {load_end} at the end (1/5/15 "
        "min; 2 CPUs shared with other work): only the comparison within the run counts.", "",
        f"**Picks** ({args.picks} per tree: a layer, or a stack, in turn, the trees alternating): median / p90 from the "
        "choice until the units' picture shows it (A: script finished, nothing stale, the title names the pick; B: "
        "the view marks it drawn), as Playwright drives it (its own round trips to Chromium included). \"on "
        "screen\": the view's own clock, from the pick's event until the frame after its first picture is drawn "
        "has been shown. \"sent\": websocket messages from the browser to the server during the pick and 0.5 s after "
        "it; \"script runs\": of them, the whole page's reruns asked for (every page's worker watchdog, a fragment, "
        "runs every 5 s: counted as sent, not as script runs).", "",
        table(["tree", "layer picks", "layer: median / p90", "stack picks", "stack: median / p90",
               "layer on screen: median / p90", "stack on screen: median / p90", "messages sent per pick (median)",
               "script runs (all picks)"], rows),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its picture is drawn and the page idle "
        "(B: with every stack and layer in the browser: the second run that sends them) and the bytes the server sent "
        "for it on the websocket: B's new tab includes the vendored plotly.js (1.5 MB, once a session: "
        "viz/elements/browser_view.py), which A's Streamlit charts take from Streamlit's own scripts (HTTP, cached "
        "by the browser, not counted here); B's view body (every stack x layer's figures and captions, gzipped) as "
        "the view received it. A long sentence's pictures show a window of its tokens (the page's slider).", "",
        table(["sentence", *(f"opened: {label[name]}" for name in trees.roots), "B: the view's body"], open_rows),
    ])
    b, a = picks["B"], picks["A"]
    checks = [*on_screen(b, ("layer", "stack")), no_runs(b, "pick"), faster(b, a, ("layer", "stack"), args.base),
              *small_body(opens, args.sizes)]
    return report(Section("ffn_picks", "Picks in the browser: stack and layer on the FFN page (issue 44)",
                          body, checks), args.write)


if __name__ == "__main__":
    main()
