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
import contextlib
import re
import tempfile
import time
import urllib.parse
from pathlib import Path

from common import Check, ROOT, Section, SentenceMaker, Server, log, median, percentile, report, table
from edit_ab import SETTLE_S, TIMEOUT_MS, load, own_browser, unpack
from multihead_ab import IDLE_JS, Messages, SERVER_DRAWN_JS

from browser_utils import wait_for_app
from playwright.sync_api import sync_playwright
from viz.core.catalogue import message

BASE = "a071c20"          # main of 2026-11-29, before the feed-forward view was drawn in the browser
VIEW = ".vz-deck"
PICKS = [("layer", 1), ("layer", 2), ("stack", "decoder"), ("layer", 0), ("layer", 1), ("stack", "encoder"),
         ("layer", 2), ("layer", 0), ("stack", "decoder")]
VIEW_DRAWN_JS = """([attr, want]) => (document.querySelector('.vz-deck') || {dataset: {}}).dataset[attr] === want"""


def page_url(base: str, text: str, **params) -> str:
    return f"{base}/ffn?{urllib.parse.urlencode({'model': 'en-es', 'text': text, 'view': 'ffn', **params})}"


def where(stack: str, layer: int | None = None) -> str:
    """The start of the units' picture's title: the stack, and the layer when given."""
    name = message("en", "ffn.stack." + stack)
    return f"{name} layer {layer}:" if layer is not None else f"{name} layer"


def in_browser(page) -> bool:
    return page.locator(VIEW).count() > 0


def pick(page, what: str, value, state: dict) -> None:
    """Choose on the page: the base's Streamlit radio or select box, or the browser view's pickers."""
    if in_browser(page):
        if what == "stack":
            page.locator(f"{VIEW} input[value='{value}']").check()
        else:
            page.select_option(f"{VIEW} .vz-layer", str(value))
    elif what == "stack":
        name = message("en", "ffn.stack." + value)
        page.locator(".st-key-ffn-stack label", has_text=re.compile(rf"^{name}$")).first.click()
    else:
        page.locator(f".st-key-ffn-layer-{state['stack']} input[role=combobox]").click()
        page.get_by_role("option", name=f"layer {value}", exact=True).click()
    state[what] = value


def drawn(page, what: str, state: dict) -> None:
    if in_browser(page):
        page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", f"{state['stack']}:{state['layer']}"],
                               timeout=TIMEOUT_MS, polling="raf")
        return
    # the base's stack keeps each stack's own layer select box: a stack picked shows the layer it last showed
    want = where(state["stack"]) if what == "stack" else where(state["stack"], state["layer"])
    page.wait_for_function(SERVER_DRAWN_JS, arg=want, timeout=TIMEOUT_MS, polling=20)
    if what == "stack":
        query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
        state["layer"] = int(query.get("layer", ["0"])[0])


def time_picks(pages: dict, frames: dict, picks: list) -> dict:
    result = {name: {"layer": [], "stack": [], "sent": [], "runs": [], "painted_layer": [], "painted_stack": []}
              for name in pages}
    states = {name: {"stack": "encoder", "layer": 0} for name in pages}
    for i, (what, value) in enumerate(picks):
        for name in ("AB" if i % 2 == 0 else "BA"):
            page, mine = pages[name], result[name]
            sent, runs = frames[name].sent, frames[name].runs
            start = time.perf_counter()
            pick(page, what, value, states[name])
            drawn(page, what, states[name])
            mine[what].append(time.perf_counter() - start)
            if in_browser(page):
                box = page.locator(VIEW)
                page.wait_for_function(VIEW_DRAWN_JS, arg=["linesPick", box.get_attribute("data-drawn-pick")],
                                       timeout=TIMEOUT_MS, polling="raf")
                painted = box.get_attribute("data-painted-ms")        # the view's clock, pick event -> on screen
                if painted is not None:
                    mine[f"painted_{what}"].append(float(painted) / 1000)
            time.sleep(SETTLE_S)
            mine["sent"].append(frames[name].sent - sent)
            mine["runs"].append(frames[name].runs - runs)
            log(f"pick {what} {value}: {name} {mine[what][-1] * 1000:.0f} ms, {mine['sent'][-1]} sent, "
                f"{mine['runs'][-1]} script runs")
    return result


def open_sentence(browser, server: Server, text: str) -> tuple[float, int, int]:
    """A new sentence opened as a link: seconds until its picture is drawn (B: and every pick is in the browser, the
    run that brings them over finished), the bytes the server sent, and (B) the view's body as it received it."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    frames = Messages(page)
    try:
        start = time.perf_counter()
        page.goto(page_url(server.url, text, stack="encoder", layer=0))
        wait_for_app(page, TIMEOUT_MS)
        page.wait_for_function("() => !!document.querySelector('.js-plotly-plot .gtitle')", timeout=TIMEOUT_MS)
        if in_browser(page):
            page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
        page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
        seconds = time.perf_counter() - start
        time.sleep(SETTLE_S)
        body = int(page.locator(VIEW).get_attribute("data-body-bytes")) if in_browser(page) else 0
        return seconds, frames.received, body
    finally:
        page.close()


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help="commit of tree A")
    parser.add_argument("--picks", type=int, default=36)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=45)
    load_start = load()
    log(f"load average {load_start} (1/5/15 min) at the start")
    with tempfile.TemporaryDirectory(prefix="ffn-ab-") as tmp, contextlib.ExitStack() as stack:
        trees = {"A": unpack(args.base, Path(tmp)), "B": ROOT}
        servers = {name: stack.enter_context(Server(root=root)) for name, root in trees.items()}
        playwright = stack.enter_context(sync_playwright())
        browsers = {name: own_browser(playwright)[0] for name in trees}
        text = maker.sentence(args.tokens)
        pages, frames = {}, {}
        for name, server in servers.items():
            page = browsers[name].new_page(viewport={"width": 1280, "height": 720})
            frames[name] = Messages(page)
            page.goto(page_url(server.url, text, stack="encoder", layer=0))
            wait_for_app(page, TIMEOUT_MS)
            page.wait_for_function(SERVER_DRAWN_JS, arg=where("encoder", 0), timeout=TIMEOUT_MS) if name == "A" else \
                page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
            page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
            pages[name] = page
        time.sleep(1)
        picks = time_picks(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks])
        opens: dict = {name: {} for name in trees}
        for n in args.sizes:
            sentence = maker.sentence(n)
            for name in ("AB" if n % 2 == 0 else "BA"):
                opens[name][n] = open_sentence(browsers[name], servers[name], sentence)
                log(f"{n} tokens opened: {name} {opens[name][n][0]:.2f} s, {opens[name][n][1]:,} bytes, "
                    f"view body {opens[name][n][2]:,} B")
    load_end = load()
    log(f"load average {load_end} (1/5/15 min) at the end")

    def ms(values) -> str:
        return f"{median(values) * 1000:.0f} ms / {percentile(values, 90) * 1000:.0f} ms" if values else "—"

    label = {"A": f"A: main at {args.base}", "B": "B: this tree"}
    rows = [[label[name], len(r["layer"]), ms(r["layer"]), len(r["stack"]), ms(r["stack"]),
             ms(r["painted_layer"]), ms(r["painted_stack"]),
             f"{median(r['sent']):g} (max {max(r['sent'])})", f"{sum(r['runs'])}"] for name, r in picks.items()]
    open_rows = [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s, {opens[name][n][1]:,} B" for name in trees),
                  f"{opens['B'][n][2]:,} B"] for n in args.sizes]
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
        table(["sentence", *(f"opened: {label[name]}" for name in trees), "B: the view's body"], open_rows),
    ])
    b, a = picks["B"], picks["A"]
    checks = [Check(f"a {what} pick on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted_' + what]) * 1000:.0f} ms (driven by Playwright: "
                    f"{median(b[what]) * 1000:.0f} ms)", median(b["painted_" + what]) <= 0.05)
              for what in ("layer", "stack")]
    checks += [Check("no script run for a pick (this tree)", f"{sum(b['runs'])} in {len(b['runs'])} picks",
                     sum(b["runs"]) == 0),
               Check(f"a pick faster than at {args.base} (p50, B/A)",
                     f"{median(b['layer'] + b['stack']) / median(a['layer'] + a['stack']):.2f}",
                     median(b["layer"] + b["stack"]) < median(a["layer"] + a["stack"]))]
    if 128 in args.sizes:
        checks.append(Check("a 128-token sentence's view body < 2 MB (this tree)", f"{opens['B'][128][2]:,} B",
                            opens["B"][128][2] < 2_000_000))
    return report(Section("ffn_picks", "Picks in the browser: stack and layer on the FFN page (issue 44)",
                          body, checks), args.write)


if __name__ == "__main__":
    main()
