"""Picks on the multi-head page, two trees side by side (issue 44): a past main (A, whose page reran its script for
every kind or layer picked) and this tree (B, whose picks the browser answers: viz/figures/browser_view.js, a deck),
each served by its own `streamlit run app.py`, in Chromium at 1280x720, the same picks on each in turn.

    python bench/multihead_ab.py [--base 11f2cb8] [--picks 36] [--tokens 32] [--sizes 9 40 128] [--write]

For each pick: from the choice (Playwright's select or click) until the heads' picture shows it (A: the script has
finished, nothing is stale and the picture's title names the pick; B: the view marks the pick drawn), and the
websocket messages the browser sent meanwhile and 0.5 s after (a script run asked for is one). Then, for a new
sentence of each of --sizes tokens, opened as a link: the seconds until its picture is drawn (and, B, every kind and
layer is in the browser) and the bytes the server sent for it. The trees alternate which goes first, so a shared,
loaded machine slows both alike; the load average is printed at the start and the end.
"""
from __future__ import annotations

import argparse
import time

from common import Section, SentenceMaker, log, report, table
from deck_ab import (SERVER_DRAWN_JS, VIEW, Trees, faster, in_browser, ms, no_runs, on_screen, open_sentences,
                     opened_cell, page_url, sent_cell, small_body, time_kind_layer, titled, view_cell)
from edit_ab import SETTLE_S, TIMEOUT_MS, Frames

from viz.core.catalogue import message

BASE = "11f2cb8"          # main of 2026-11-28, before the multi-head page was drawn in the browser
KINDS = ("encoder", "decoder", "cross")
PICKS = [("layer", 1), ("layer", 2), ("kind", "decoder"), ("layer", 0), ("layer", 1), ("kind", "cross"),
         ("layer", 2), ("layer", 0), ("kind", "encoder")]


def where(kind: str, layer: int | None = None) -> str:
    """The start of the heads' picture's title: the kind, and the layer when given."""
    name = message("en", "fig.kind." + kind)
    return message("en", "multihead.where", kind=name, layer=layer) if layer is not None else name + ","


EDITED_JS = """([text, sig]) => new URL(location.href).searchParams.get('text') === text
  && !document.querySelector('[data-testid="stStatusWidget"]') && !document.querySelector('[data-stale="true"]')
  && (!document.querySelector('.vz-deck') || (document.querySelector('.vz-deck').dataset.whole === '1'
                                              && document.querySelector('.vz-deck').dataset.sig !== sig))"""


def edit_bytes(page, frames: Frames, text: str) -> tuple[float, int]:
    """A new sentence typed in the sidebar (Ctrl+Enter), in the session that has the page open: seconds until it is
    drawn (B: every kind and layer in the browser) and the page idle, and the bytes the server sent for it."""
    before = frames.received
    sig = page.locator(VIEW).get_attribute("data-sig") if in_browser(page) else ""
    box = page.get_by_label("Sentence", exact=True)
    box.fill(text)
    start = time.perf_counter()
    box.press("Control+Enter")
    page.wait_for_function(EDITED_JS, arg=[text, sig], timeout=TIMEOUT_MS, polling=50)
    seconds = time.perf_counter() - start
    time.sleep(SETTLE_S)
    return seconds, frames.received - before


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help="commit of tree A")
    parser.add_argument("--picks", type=int, default=36)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=44)
    url = lambda server, text: page_url(server, "multihead", text=text, kind="encoder", layer=0)  # noqa: E731
    with Trees(args.base, prefix="multihead-ab-") as trees:
        text = maker.sentence(args.tokens)
        pages, frames = trees.open_pages(
            lambda server: url(server, text),
            lambda name, page: page.wait_for_function(SERVER_DRAWN_JS, arg=where("encoder", 0), timeout=TIMEOUT_MS)
            if name == "A" else None)
        time.sleep(1)
        picks = time_kind_layer(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks], where,
                                ("mh-kind", "mh-layer"), lambda kind: message("en", "fig.kind." + kind))
        edited: dict = {}
        edits: dict = {name: {} for name in trees.roots}

        def sentence(n: int) -> str:
            opened, edited[n] = maker.sentence(n), maker.sentence(n)
            return opened

        def edit(name: str, n: int) -> None:
            edits[name][n] = edit_bytes(pages[name], frames[name], edited[n])
            log(f"{n} tokens typed: {name} {edits[name][n][0]:.2f} s, {edits[name][n][1]:,} bytes")

        opens = open_sentences(trees, args.sizes, sentence, url, titled, also=edit)
    label, load_start, load_end = trees.label, trees.load_start, trees.load_end
    rows = [[label[name], len(r["layer"]), ms(r["layer"]), len(r["kind"]), ms(r["kind"]),
             ms(r["painted_layer"]), ms(r["painted_kind"]), view_cell(r), sent_cell(r), f"{sum(r['runs'])}"]
            for name, r in picks.items()]
    open_rows = [[f"{n} tokens", *(opened_cell(opens[name][n]) for name in trees.roots), f"{opens['B'][n][3]:,} B",
                  *(f"{edits[name][n][0]:.2f} s, {edits[name][n][1]:,} B" for name in trees.roots)]
                 for n in args.sizes]
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A the main of {args.base} "
        "(`git archive`) and B this tree (bench/multihead_ab.py), the multi-head page of the en-es model on a "
        f"{args.tokens}-token sentence. B draws the page in the browser (viz/elements/browser_view.py, a deck of the "
        "builders' figures for every kind x layer, sent once a sentence); A reran the script for each pick. "
        f"Load average {load_start} at the start, {load_end} at the end (1/5/15 min; 2 CPUs shared with other "
        "work): only the comparison within the run counts.", "",
        f"**Picks** ({args.picks} per tree: a layer, or a kind, in turn, the trees alternating): median / p90 from the "
        "choice until the heads' picture shows it (A: script finished, nothing stale, the title names the pick; B: "
        "the view marks it drawn), as Playwright drives it (its own round trips to Chromium included). \"on "
        "screen\": the view's own clock, from the pick's event until the frame after its picture is drawn has been "
        "shown (what a reader waits for; the base's view had no such clock). \"in the view\": the view's clock, pick "
        "to the heads' picture drawn (its words and "
        "table set) / to the rest of what is in sight drawn too (each head's share). \"sent\": websocket messages "
        "from the browser to the server during the pick and 0.5 s after it; \"script runs\": of them, the whole page's "
        "reruns asked for (every page's worker watchdog, a fragment, runs every 5 s: its messages are counted as "
        "sent, not as script runs).", "",
        table(["tree", "layer picks", "layer: median / p90", "kind picks", "kind: median / p90",
               "layer on screen: median / p90", "kind on screen: median / p90", "in the view (median)", "messages sent per pick (median)", "script runs (all picks)"], rows),
        "", "**A new sentence**, opened as a link in a new tab, then another of the same length typed into the "
        "sidebar of the pickers' tab: seconds until its picture is drawn and the page idle (B: with every kind and "
        "layer in the browser: the second run that sends them) and the bytes the server sent for it. A new tab's "
        "bytes in B include the vendored plotly.js (1.5 MB, sent once a session: viz/elements/browser_view.py); a typed "
        "sentence's are the page's and the view's body (every kind x layer's figures, gzipped); the view's body "
        "alone (as the view received it) beside them. A long sentence's pictures show a window of 14 tokens (the "
        "page's sliders): its body is no larger than a 40-token one's.", "",
        table(["sentence", *(f"opened: {label[name]}" for name in trees.roots), "B: the view's body",
               *(f"typed: {label[name]}" for name in trees.roots)], open_rows),
    ])
    b, a = picks["B"], picks["A"]
    checks = [*on_screen(b, ("layer", "kind")), no_runs(b, "pick"), faster(b, a, ("layer", "kind"), args.base),
              *small_body(opens, args.sizes)]
    return report(Section("multihead_picks", "Picks in the browser: kind and layer on the multi-head page (issue 44)",
                          body, checks), args.write)


if __name__ == "__main__":
    main()
