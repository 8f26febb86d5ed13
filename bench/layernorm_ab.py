"""Layer picks on the LayerNorm page, two trees side by side (issue 44): a past main (A, whose layer select box reran
the page's script for every pick) and this tree (B, whose picks the browser answers: viz/figures/browser_view.js, a
deck of every layer's pictures for the stack, norm and token the server's pickers chose), each served by its own
`streamlit run app.py`, in Chromium at 1280x720, the same picks on each in turn.

    python bench/layernorm_ab.py [--base 412f14f] [--base-tree DIR] [--picks 24] [--tokens 32] [--sizes 9 40 128]

For each pick: from the choice (Playwright's select) until the statistics' picture shows it (A: the script has
finished, nothing is stale and the picture's title names the layer; B: the view marks the layer drawn), the view's
own clock (B: the pick's event to the frame after its picture), and the script runs the browser asked for meanwhile
and 0.5 s after. Then, for a new sentence of each of --sizes tokens, opened as a link: the seconds until its picture
is drawn (B: and every layer is in the browser), the bytes the server sent, and B's view body (gzipped, as the view
received it). The trees alternate which goes first; the load average is printed at the start and the end. A is
`git archive` of --base, or --base-tree (a worktree of it).
"""
from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
import urllib.parse
from pathlib import Path

from common import Check, ROOT, Section, SentenceMaker, Server, log, median, percentile, report, table
from edit_ab import SETTLE_S, TIMEOUT_MS, load, own_browser, unpack
from multihead_ab import IDLE_JS, Messages, SERVER_DRAWN_JS

from browser_utils import wait_for_app
from playwright.sync_api import sync_playwright

BASE = "412f14f"          # main of 2026-11-29, before the LayerNorm page's layer was drawn in the browser
VIEW = ".vz-deck"
PICKS = [1, 2, 0, 2, 1, 0]
VIEW_DRAWN_JS = """([attr, want]) => (document.querySelector('.vz-deck') || {dataset: {}}).dataset[attr] === want"""


def page_url(base: str, text: str, **params) -> str:
    return f"{base}/layernorm?{urllib.parse.urlencode({'model': 'en-es', 'text': text, 'stack': 'encoder', **params})}"


def in_browser(page) -> bool:
    return page.locator(VIEW).count() > 0


def pick(page, layer: int) -> None:
    """Choose a layer: the browser view's select, or the base's Streamlit select box."""
    if in_browser(page):
        page.select_option(f"{VIEW} .vz-layer", str(layer))
    else:
        page.locator(".st-key-ln-layer-encoder input[role=combobox]").click()
        page.get_by_role("option", name=f"layer {layer}", exact=True).click()


def drawn(page, layer: int) -> None:
    if in_browser(page):
        page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", str(layer)], timeout=TIMEOUT_MS, polling="raf")
    else:
        page.wait_for_function(SERVER_DRAWN_JS, arg=f"encoder layer {layer},", timeout=TIMEOUT_MS, polling=20)


def time_picks(pages: dict, frames: dict, picks: list[int]) -> dict:
    result = {name: {"pick": [], "painted": [], "runs": []} for name in pages}
    for i, layer in enumerate(picks):
        for name in ("AB" if i % 2 == 0 else "BA"):
            page, mine, runs = pages[name], result[name], frames[name].runs
            start = time.perf_counter()
            pick(page, layer)
            drawn(page, layer)
            mine["pick"].append(time.perf_counter() - start)
            if in_browser(page):
                box = page.locator(VIEW)
                page.wait_for_function(VIEW_DRAWN_JS, arg=["linesPick", str(layer)], timeout=TIMEOUT_MS,
                                       polling="raf")
                painted = box.get_attribute("data-painted-ms")        # the view's clock, pick event -> on screen
                if painted is not None:
                    mine["painted"].append(float(painted) / 1000)
            time.sleep(SETTLE_S)
            mine["runs"].append(frames[name].runs - runs)
            log(f"layer {layer}: {name} {mine['pick'][-1] * 1000:.0f} ms, {mine['runs'][-1]} script runs")
    return result


def open_sentence(browser, server: Server, text: str) -> tuple[float, int, int]:
    """A new sentence opened as a link: seconds until its picture is drawn (B: and every layer is in the browser),
    the bytes the server sent, and (B) the view's body as it received it."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    frames = Messages(page)
    try:
        start = time.perf_counter()
        page.goto(page_url(server.url, text, layer=0))
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
    parser.add_argument("--base-tree", type=Path, help="tree A as files already (a worktree of --base)")
    parser.add_argument("--picks", type=int, default=24)
    parser.add_argument("--tokens", type=int, default=32, help="the picks' sentence")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=46)
    load_start = load()
    log(f"load average {load_start} (1/5/15 min) at the start")
    with tempfile.TemporaryDirectory(prefix="layernorm-ab-") as tmp, contextlib.ExitStack() as stack:
        trees = {"A": args.base_tree or unpack(args.base, Path(tmp)), "B": ROOT}
        servers = {name: stack.enter_context(Server(root=root)) for name, root in trees.items()}
        playwright = stack.enter_context(sync_playwright())
        browsers = {name: own_browser(playwright)[0] for name in trees}
        text = maker.sentence(args.tokens)
        pages, frames = {}, {}
        for name, server in servers.items():
            page = browsers[name].new_page(viewport={"width": 1280, "height": 720})
            frames[name] = Messages(page)
            page.goto(page_url(server.url, text, layer=0))
            wait_for_app(page, TIMEOUT_MS)
            if name == "A":
                page.wait_for_function(SERVER_DRAWN_JS, arg="encoder layer 0,", timeout=TIMEOUT_MS)
            else:
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
    rows = [[label[name], len(r["pick"]), ms(r["pick"]), ms(r["painted"]), f"{sum(r['runs'])}"]
            for name, r in picks.items()]
    open_rows = [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s, {opens[name][n][1]:,} B" for name in trees),
                  f"{opens['B'][n][2]:,} B"] for n in args.sizes]
    body = "\n".join([
        f"Chromium (headless, 1280x720) against two `streamlit run app.py` at once, A the main of {args.base} and B "
        "this tree (bench/layernorm_ab.py), the LayerNorm page of the en-es model (encoder, LayerNorm after "
        f"self-attention) on a {args.tokens}-token sentence. B draws the norm's pictures in the browser (a deck of "
        "every layer's five pictures and captions, sent once for the stack, norm and token); A reran the script for "
        f"each layer. Load average {load_start} at the start, {load_end} at the end (1/5/15 min; 2 CPUs shared with "
        "other work): only the comparison within the run counts.", "",
        f"**Layer picks** ({args.picks} per tree, the trees alternating): median / p90 from the choice until the "
        "statistics' picture shows it (A: script finished, nothing stale, the title names the layer; B: the view "
        "marks it drawn), as Playwright drives it. \"on screen\": the view's own clock, from the pick's event until "
        "the frame after its first picture has been shown. \"script runs\": the whole page's reruns the browser "
        "asked for during the picks and 0.5 s after each.", "",
        table(["tree", "picks", "pick: median / p90", "on screen: median / p90", "script runs (all picks)"], rows),
        "", "**A new sentence**, opened as a link in a new tab: seconds until its picture is drawn and the page idle "
        "(B: with every layer in the browser) and the bytes the server sent on the websocket (B's include the "
        "vendored plotly.js, once a session); B's view body (every layer's pictures and captions, gzipped).", "",
        table(["sentence", *(f"opened: {label[name]}" for name in trees), "B: the view's body"], open_rows),
    ])
    b, a = picks["B"], picks["A"]
    checks = [Check("a layer pick on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted']) * 1000:.0f} ms (driven by Playwright: {median(b['pick']) * 1000:.0f} ms)",
                    median(b["painted"]) <= 0.05),
              Check("no script run for a pick (this tree)", f"{sum(b['runs'])} in {len(b['runs'])} picks",
                    sum(b["runs"]) == 0),
              Check(f"a pick faster than at {args.base} (p50, B/A)", f"{median(b['pick']) / median(a['pick']):.2f}",
                    median(b["pick"]) < median(a["pick"]))]
    return report(Section("layernorm_picks", "Picks in the browser: the layer on the LayerNorm page (issue 44)",
                          body, checks), args.write)


if __name__ == "__main__":
    main()
