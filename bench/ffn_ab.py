"""Picks on the feed-forward page, two trees side by side (issue 44): a past main (A, whose stack radio and layer
select box reran the page's script for every pick) and this tree (B, whose picks the browser answers:
viz/figures/browser_view.js, a deck of every stack x layer), each served by its own `streamlit run app.py`, in
Chromium at 1280x720, the same picks on each in turn.

    python bench/ffn_ab.py [--base a071c20 | --against DIR] [--picks 36] [--tokens 32] [--sizes 9 40 128] [--write]
    python bench/ffn_ab.py --view dropout --against /tmp/hdrop-a [--picks 24] [--tokens 32] [--sizes 9 40 128]

--view dropout: the dropout view's head instead (A: a main whose head was a server select box, a script run and a
new deck of every kind x layer a head; B: a deck of every kind x layer x head, the head picked in the browser): head
picks of cross-attention's layer 0 timed as below, new sentences opened as below, and the whole body's build in this
process (B's builders, CPU and wall seconds; the zoo's ~5 s CPU a sentence is the budget).

For each pick: from the choice (Playwright's select or click) until the units' picture shows it (A: the script has
finished, nothing is stale and the picture's title names the pick; B: the view marks the pick drawn), the view's own
clock (B: the pick's event to the frame after its picture), and the websocket messages the browser sent meanwhile
and 0.5 s after (a script run asked for is one). Then, for a new sentence of each of --sizes tokens, opened as a
link: the seconds until its picture is drawn (B: and every stack and layer is in the browser), the bytes the server
sent for it, and B's view body (gzipped, as the view received it). The trees alternate which goes first, so a
shared, loaded machine slows both alike; the load average is printed at the start and the end.
"""
from __future__ import annotations

import re
import time
from collections import defaultdict

from common import Check, Section, SentenceMaker, log, median, report, table
from deck_ab import (IDLE_JS, SERVER_DRAWN_JS, VIEW, VIEW_DRAWN_JS, Trees, ab_parser, faster, ms, no_runs, on_screen,
                     open_sentences, opened_cell, order, page_url, sent_cell, small_body, time_kind_layer, titled)
from edit_ab import SETTLE_S, TIMEOUT_MS

from viz.core.catalogue import message

BASE = "a071c20"          # main of 2026-11-29, before the feed-forward view was drawn in the browser
DROP_BASE = "43bbcac"     # main of 2026-11-29, before the dropout view's head was picked in the browser
PICKS = [("layer", 1), ("layer", 2), ("stack", "decoder"), ("layer", 0), ("layer", 1), ("stack", "encoder"),
         ("layer", 2), ("layer", 0), ("stack", "decoder")]


def where(stack: str, layer: int | None = None) -> str:
    """The start of the units' picture's title: the stack, and the layer when given."""
    name = message("en", "ffn.stack." + stack)
    return f"{name} layer {layer}:" if layer is not None else f"{name} layer"


def main(argv=None) -> Section:
    parser = ab_parser(__doc__, None)
    parser.add_argument("--view", choices=("ffn", "dropout"), default="ffn", help="the page's view whose picks")
    parser.add_argument("--picks", type=int, default=36)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    args = parser.parse_args(argv)
    if args.view == "dropout":
        args.base = args.base or DROP_BASE
        return dropout_heads(args)
    args.base = args.base or BASE
    maker = SentenceMaker(seed=45)
    url = lambda server, text: page_url(server, "ffn", text=text, view="ffn", stack="encoder", layer=0)  # noqa: E731
    with Trees(args.base, args.against, prefix="ffn-ab-") as trees:
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


# -- the dropout view's head ---------------------------------------------------------------------------------------
DROP_HEADS = [3, 5, 1, 6, 2, 0, 7, 4]
# a tree whose head is a server select box: the URL names the head, no run going, nothing stale, and the dropout
# picture's title names it (plotly's lines joined: no spaces)
SERVER_DROP_HEAD_JS = """(head) => new URL(location.href).searchParams.get('head') === String(head)
  && !document.querySelector('[data-testid="stStatusWidget"]') && !document.querySelector('[data-stale="true"]')
  && ((document.querySelector('.vz-fig-drop .gtitle') || {}).textContent || '').replace(/\\s/g, '')
       .includes(`head${head}:`)"""


def head_in_browser(page) -> bool:
    return page.locator(f"{VIEW} .vz-head").count() > 0


def pick_drop_head(page, head: int) -> None:
    """Choose a head of cross-attention's layer 0 and wait until its picture is on screen: the view's head select
    (drawn when the view marks the pick drawn), or (a tree whose head is a server select box) that box."""
    if head_in_browser(page):
        page.select_option(f"{VIEW} .vz-head", str(head))
        page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", f"cross:0:{head}"], timeout=TIMEOUT_MS, polling="raf")
    else:
        page.locator(".st-key-ffn-head input[role=combobox]").click()
        page.get_by_role("option", name=f"head {head}", exact=True).click()
        page.wait_for_function(SERVER_DROP_HEAD_JS, arg=head, timeout=TIMEOUT_MS, polling=20)


def settled(page) -> None:
    """Every pick in the browser (a new head's whole body, A) and the page idle: before a pick is timed."""
    page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
    page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)


def time_drop_heads(pages: dict, frames: dict, heads: list[int]) -> dict[str, dict[str, list]]:
    """Each head picked on each tree in turn (alternating which goes first), each from a settled page: the seconds
    until its picture is on screen as Playwright drives it; B: the view's clocks (event to picture drawn, to the frame
    after it); the messages sent during the pick and SETTLE_S after, and of them the whole page's script runs (A: the
    head's run, then the new head's whole body's)."""
    result: dict[str, dict[str, list]] = {name: defaultdict(list) for name in pages}
    for i, head in enumerate(heads):
        for name in order(pages, i):
            page, mine = pages[name], result[name]
            settled(page)
            sent, runs = frames[name].sent, frames[name].runs
            start = time.perf_counter()
            pick_drop_head(page, head)
            mine["head"].append(time.perf_counter() - start)
            if head_in_browser(page):
                box = page.locator(VIEW)
                mine["view_ms"].append(float(box.get_attribute("data-pick-ms")))
                mine["painted_head"].append(float(box.get_attribute("data-painted-ms")) / 1000)
            time.sleep(SETTLE_S)
            mine["sent"].append(frames[name].sent - sent)
            mine["runs"].append(frames[name].runs - runs)
            log(f"head {head}: {name} {mine['head'][-1] * 1000:.0f} ms, {mine['sent'][-1]} sent, "
                f"{mine['runs'][-1]} script runs")
    return result


def build_seconds(sentences: dict[int, str]) -> dict[int, tuple[float, float, int]]:
    """This tree's dropout deck built in this process for each new sentence (en-es, in the sidebar's default style,
    the normal look): the whole body's CPU and wall seconds (its first screen's part built before, as the page does)
    and its gzipped bytes."""
    from model.inference.pipeline import trace_sentence
    from model.io.checkpoint import load_checkpoint
    from viz import ROOT
    from viz.core.context import Traced
    from viz.core.i18n import words
    from viz.core.view import STYLE
    from viz.figures.style import NORMAL, Look
    from viz.pages.ffn import built_drop_deck
    bundle, page_look, built = load_checkpoint(ROOT / "pretrained" / "en-es"), Look(words("en"), NORMAL), {}
    for n, text in sentences.items():
        styled = bundle.tokenizer.styled(text, STYLE.default)
        traced = Traced(("en-es", styled), bundle, trace_sentence(bundle, styled))
        built_drop_deck(traced, 0, page_look, True, ("cross", 0, 0))
        cpu, wall = time.process_time(), time.perf_counter()
        body = built_drop_deck(traced, 0, page_look, True, None)
        built[n] = (time.process_time() - cpu, time.perf_counter() - wall, len(body.gzipped))
        log(f"{n} tokens: the whole dropout body built in {built[n][0]:.2f} s CPU, {built[n][1]:.2f} s wall, "
            f"{built[n][2]:,} B gzipped")
    return built


def dropout_heads(args) -> Section:
    maker = SentenceMaker(seed=46)
    url = lambda server, text: page_url(server, "ffn", text=text, view="dropout", kind="cross", layer=0,  # noqa: E731
                                        head=0)
    with Trees(args.base, args.against, prefix="drop-ab-") as trees:
        text = maker.sentence(args.tokens)
        pages, frames = trees.open_pages(lambda server: url(server, text), lambda name, page: titled(page))
        time.sleep(1)
        picks = time_drop_heads(pages, frames, (DROP_HEADS * (1 + args.picks // len(DROP_HEADS)))[:args.picks])
        sentences = {n: maker.sentence(n) for n in args.sizes}
        opens = open_sentences(trees, args.sizes, sentences.get, url, titled)
        built = build_seconds(sentences)
    label, base, load_start, load_end = trees.label, trees.base, trees.load_start, trees.load_end
    rows = [[label[name], len(r["head"]), ms(r["head"]), ms(r["painted_head"]),
             f"{median(r['view_ms']):.0f} ms" if r["view_ms"] else "—", sent_cell(r),
             f"{sum(r['runs'])} ({sum(r['runs']) / len(r['runs']):g} a pick)"] for name, r in picks.items()]
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A, {label['A'][3:]}, and B, "
        f"this tree (bench/ffn_ab.py --view dropout): the feed-forward page's dropout view of the en-es model on a "
        f"{args.tokens}-token sentence, heads of cross-attention's layer 0 picked. A's head is a server select box "
        "(a script run and a new deck of every kind x layer of the head, then its whole body's run); B's deck holds "
        f"every kind x layer x head, the head picked in the browser. Load average {load_start} at the start, "
        f"{load_end} at the end (1/5/15 min; 2 CPUs shared with other work): only the comparison within the run "
        "counts.", "",
        f"**Head picks** ({args.picks} per tree, the trees alternating, each from a settled page): median / p90 from "
        "the choice until the head's picture is on screen (A: the URL names it, script finished, nothing stale, the "
        "title names the head; B: the view marks it drawn), as Playwright drives it. \"on screen\" and \"drawn\": "
        "B's own clocks, the pick's event to the frame after its picture / to its picture drawn. \"sent\": websocket "
        "messages from the browser during the pick and 0.5 s after; \"script runs\": of them, the page's reruns.", "",
        table(["tree", "head picks", "head: median / p90", "on screen: median / p90", "drawn (median)",
               "messages sent per pick (median)", "script runs (all picks)"], rows),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its first screen (the dropout picture "
        "with its title); until the page is idle with every pick in the browser (the second run that sends them), "
        "with the bytes the server sent on the websocket (the vendored plotly.js included, 1.5 MB once a session); "
        "the view's body as it received it (gzipped): A's one head's kind x layer, B's every head's.", "",
        table(["sentence", *(f"first screen: {label[name]}" for name in trees.roots),
               *(f"idle: {label[name]}" for name in trees.roots), *(f"body: {name}" for name in trees.roots)],
              [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s" for name in trees.roots),
                *(opened_cell(opens[name][n]) for name in trees.roots),
                *(f"{opens[name][n][3]:,} B" for name in trees.roots)] for n in args.sizes]),
        "", "**The whole body's build** in this process (B's builders, en-es, normal look, the sentences above; "
        "their first screen's part built before, as the page does).", "",
        table(["sentence", "CPU", "wall", "gzipped"],
              [[f"{n} tokens", f"{cpu:.2f} s", f"{wall:.2f} s", f"{size:,} B"] for n, (cpu, wall, size) in built.items()]),
    ])
    b, a = picks["B"], picks["A"]
    checks = [*on_screen(b, ("head",)), no_runs(b, "pick"), faster(b, a, ("head",), base),
              *small_body(opens, args.sizes),
              Check("the whole body's build ≤ 5 s CPU (the zoo's) at every size (this tree)",
                    ", ".join(f"{n}: {cpu:.2f} s" for n, (cpu, _, _) in built.items()),
                    all(cpu <= 5 for cpu, _, _ in built.values()))]
    return report(Section("ffn_dropout_heads", "Picks in the browser: the dropout view's head (issue 44)", body,
                          checks), args.write)


if __name__ == "__main__":
    main()
