"""Layer picks on the LayerNorm page, two trees side by side (issue 44): a past main (A, whose layer select box reran
the page's script for every pick) and this tree (B, whose picks the browser answers: viz/figures/browser_view.js, a
deck of every layer's pictures for the stack, norm and token the server's pickers chose), each served by its own
`streamlit run app.py`, in Chromium at 1280x720, the same picks on each in turn.

    python bench/layernorm_ab.py [--base 412f14f | --against DIR] [--picks 24] [--tokens 32] [--sizes 9 40 128]
                                 [--write]

For each pick: from the choice (Playwright's select) until the statistics' picture shows it (A: the script has
finished, nothing is stale and the picture's title names the layer; B: the view marks the layer drawn), the view's
own clock (B: the pick's event to the frame after its picture), and the websocket messages the browser sent meanwhile
and 0.5 s after (a script run asked for is one). Then, for a new sentence of each of --sizes tokens, opened as a
link: the seconds until its first screen, the seconds until the page is idle (B: and every layer is in the browser),
the bytes the server sent, and B's view body (gzipped, as the view received it). The trees alternate which goes
first; the load average is printed at the start and the end. A is `git archive` of --base, or --against (a worktree
of it). The loops are bench/deck_ab.py's (a layer alone: time_layers).
"""
from __future__ import annotations

import time

from common import Section, SentenceMaker, report
from deck_ab import (SERVER_DRAWN_JS, Trees, ab_parser, faster, no_runs, on_screen, open_sentences, opened_table,
                     page_url, pick_table, small_body, time_layers)
from edit_ab import TIMEOUT_MS

BASE = "412f14f"          # main of 2026-11-29, before the LayerNorm page's layer was drawn in the browser
PICKS = [1, 2, 0, 2, 1, 0]


def where(layer: int) -> str:
    """The start of the statistics' picture's title at the base: the stack and the layer."""
    return f"encoder layer {layer},"


# the page's first chart's title begins as wanted (no wait for its script: B's second run, the whole deck, follows)
FIRST_JS = """(want) => ((document.querySelector('.js-plotly-plot .gtitle') || {}).textContent || '')
  .replace(/\\s/g, '').startsWith(want.replace(/\\s/g, ''))"""


def first_screen(page) -> None:
    """A new tab's first screen: the statistics' picture of layer 0 with its title, the page's first chart (A: the
    server's; B: the deck's, above the page's own residual-stream chart, which may be drawn before it)."""
    page.wait_for_function(FIRST_JS, arg=where(0), timeout=TIMEOUT_MS)


def main(argv=None) -> Section:
    parser = ab_parser(__doc__, BASE)
    parser.add_argument("--picks", type=int, default=24)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=46)
    url = lambda server, text: page_url(server, "layernorm", text=text, stack="encoder", layer=0)  # noqa: E731
    with Trees(args.base, args.against, prefix="layernorm-ab-") as trees:
        text = maker.sentence(args.tokens)
        pages, frames = trees.open_pages(
            lambda server: url(server, text),
            lambda name, page: page.wait_for_function(SERVER_DRAWN_JS, arg=where(0), timeout=TIMEOUT_MS)
            if name == "A" else None)
        time.sleep(1)
        picks = time_layers(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks], where,
                            "ln-layer-encoder")
        opens = open_sentences(trees, args.sizes, maker.sentence, url, first_screen)
    label, base, load_start, load_end = trees.label, trees.base, trees.load_start, trees.load_end
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A, {label['A'][3:]}"
        f"{'' if args.against else ' (`git archive`)'}, and B, this tree (bench/layernorm_ab.py): the LayerNorm page of the en-es "
        f"model (encoder, LayerNorm after self-attention) on a {args.tokens}-token sentence. B draws the norm's "
        "pictures in the browser (viz/elements/browser_view.py, a deck of every layer's five pictures and captions, "
        "sent once for the stack, norm and token the server's pickers chose; the deck picks a layer alone, no kind "
        f"row); A reran the script for each layer. Load average {load_start} at the start, {load_end} at the end "
        "(1/5/15 min; 2 CPUs shared with other work): only the comparison within the run counts.", "",
        f"**Layer picks** ({args.picks} per tree, the trees alternating): median / p90 from the choice until the "
        "statistics' picture shows it (A: script finished, nothing stale, the title names the layer; B: the view "
        "marks it drawn), as Playwright drives it (its own round trips to Chromium included). \"on screen\": the "
        "view's own clock, from the pick's event until the frame after its first picture is drawn has been shown. "
        "\"in the view\": the view's clock, pick to the statistics' picture drawn / to the rest in sight drawn too. "
        "\"sent\": websocket messages from the browser to the server during the pick and 0.5 s after it; \"script "
        "runs\": of them, the whole page's reruns asked for (every page's worker watchdog, a fragment, runs every "
        "5 s: counted as sent, not as script runs).", "",
        pick_table(picks, label, "layer"),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen (the statistics' "
        "picture of layer 0 with its title, the page's first chart); seconds until the page is idle (B: with every layer in the browser, the second run that sends "
        "them) and the bytes the server sent on the websocket (B's include the vendored plotly.js, 1.5 MB once a "
        "session; A's Streamlit charts take theirs from Streamlit's scripts over HTTP, not counted); B's view body "
        "(every layer's pictures and captions, gzipped) as the view received it. A long sentence's pictures show a "
        "window of its tokens (the page's slider).", "",
        opened_table(opens, args.sizes, label),
    ])
    b, a = picks["B"], picks["A"]
    checks = [*on_screen(b, ("layer",)), no_runs(b, "pick"), faster(b, a, ("layer",), base),
              *small_body(opens, args.sizes)]
    return report(Section("layernorm_picks", "Picks in the browser: the layer on the LayerNorm page (issue 44)",
                          body, checks), args.write)


if __name__ == "__main__":
    main()
