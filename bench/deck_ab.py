"""What the deck A/B benches share (issue 44: bench/multihead_ab.py, ffn_ab.py, decoding_ab.py, step_ab.py): two
trees side by side, a past main (A, `git archive` of --base, or a worktree of it) and this tree (B), each served by
its own `streamlit run app.py`, each in a Chromium of its own at 1280x720; picks made on each in turn, timed from the
choice until the page shows it, with the websocket messages the browser sent (a script run asked for is one); a new
sentence opened as a link in a new tab, timed to its first screen and until every pick is in the browser, with the
bytes the server sent and the view's body. A bench says what a pick is on its page and how its page shows one.
"""
from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
import urllib.parse
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

from common import ROOT, Check, Server, log, median, percentile, table
from edit_ab import SETTLE_S, TIMEOUT_MS, Frames, load, own_browser, unpack

from browser_utils import PageRuns, wait_for_app
from playwright.sync_api import sync_playwright

VIEW = ".vz-deck"                  # the browser-side view of a tree whose picks the browser answers
VIEWPORT = {"width": 1280, "height": 720}
# the view marks a pick ("encoder:1", "3") by its dataset: drawnPick (its picture), linesPick (all in sight)
VIEW_DRAWN_JS = """([attr, want]) => (document.querySelector('.vz-deck') || {dataset: {}}).dataset[attr] === want"""
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
# a page without the view: its script has finished, nothing is stale, the first chart's title begins as wanted
SERVER_DRAWN_JS = """(want) => !document.querySelector('[data-testid="stStatusWidget"]')
  && !document.querySelector('[data-stale="true"]')
  && ((document.querySelector('.js-plotly-plot .gtitle') || {}).textContent || '').replace(/\\s/g, '')
       .startsWith(want.replace(/\\s/g, ''))"""


# a tree without the view: the URL names the head, no run going, nothing stale, every chart drawn
SERVER_HEAD_JS = """(head) => new URL(location.href).searchParams.get('head') === String(head)
  && !document.querySelector('[data-testid="stStatusWidget"]') && !document.querySelector('[data-stale="true"]')
  && [...document.querySelectorAll('.js-plotly-plot')].every((p) => p.querySelector('svg.main-svg'))"""


def ab_parser(doc: str, base: str) -> argparse.ArgumentParser:
    """The options every deck A/B bench takes (tree A, the new sentences' sizes, --write); a bench adds its own."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--base", default=base, help="commit of tree A (git archive)")
    parser.add_argument("--against", type=Path, default=None, help="a checkout of --base instead (a worktree)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    return parser


def pick_head(page, head: int, drawn: str, select_key: str) -> str:
    """Choose a head: the view's head picker (drawn when the view marks `drawn`, the pick's key), or (a tree without
    the view) the base's select box `select_key` (drawn when the URL names the head and the page is idle)."""
    if in_browser(page):
        page.select_option(f"{VIEW} .vz-head", str(head))
        page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", drawn], timeout=TIMEOUT_MS, polling="raf")
    else:
        page.locator(f".st-key-{select_key} input[role=combobox]").click()
        page.get_by_role("option", name=f"head {head}", exact=True).click()
        page.wait_for_function(SERVER_HEAD_JS, arg=head, timeout=TIMEOUT_MS, polling=20)
    return "head"


def step_drawn_js(server_shows: str) -> str:
    """A step on screen: no run going, nothing stale, every chart drawn; the view says it drew every picture of the
    step, or (a tree without the view) `server_shows`, a JS expression of `step`, says the page shows it."""
    return """(step) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (!plots.length || !plots.every(p => p.querySelector('svg.main-svg'))) return false;
  const deck = document.querySelector('.vz-deck');
  if (deck) return (deck.dataset.linesPick || '').split(':').pop() === String(step);   // "3", or a head's "0:2:3"
  return %s;
}""" % server_shows


def page_url(base: str, path: str, **params) -> str:
    """A page of the en-es model at `path` (multihead, ffn, decoding, step) with these URL values."""
    return f"{base}/{path}?{urllib.parse.urlencode({'model': 'en-es', **params})}"


def in_browser(page) -> bool:
    return page.locator(VIEW).count() > 0


class Messages(Frames):
    """Frames (the messages the browser sent, the bytes it received) and, of the messages sent, the whole page's
    script runs asked for (tests/browser_utils.PageRuns: a fragment's own run, the worker watchdog's every 5 s on
    every page, viz/classroom/panel.py, is not one)."""
    def __init__(self, page):
        super().__init__(page)
        self._runs = PageRuns(page)

    @property
    def runs(self) -> int:
        return self._runs.count


def order(names: Sequence[str], i: int) -> list[str]:
    """The trees in turn: as given for an even `i`, reversed for an odd one (a loaded machine slows both alike)."""
    return list(names) if i % 2 == 0 else list(names)[::-1]


class Trees:
    """The trees side by side, each served and in a Chromium of its own, as a context: A (`base` unpacked, or the
    worktree `against`; none when `alone`) and B (this tree). The load average is logged at the start and the end."""

    def __init__(self, base: str, against: Path | None = None, alone: bool = False, prefix: str = "deck-ab-"):
        self.base = f"{base} (a worktree at {against})" if against else base      # tree A, in words
        self.label = {"A": f"A: main at {self.base}", "B": "B: this tree"}
        self._base, self._against, self._alone, self._prefix = base, against, alone, prefix
        self.load_start = self.load_end = ""

    def __enter__(self) -> "Trees":
        self.load_start = load()
        log(f"load average {self.load_start} (1/5/15 min) at the start")
        self._stack = stack = contextlib.ExitStack()
        try:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=self._prefix)))
            self.roots = {"B": ROOT} if self._alone else {"A": self._against or unpack(self._base, tmp), "B": ROOT}
            self.servers = {name: stack.enter_context(Server(root=root)) for name, root in self.roots.items()}
            playwright = stack.enter_context(sync_playwright())
            self.browsers = {name: own_browser(playwright)[0] for name in self.roots}
        except BaseException:
            stack.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
        self.load_end = load()
        log(f"load average {self.load_end} (1/5/15 min) at the end")

    def open_pages(self, url: Callable[[str], str], first_drawn: Callable[[str, object], None]) -> tuple[dict, dict]:
        """Each tree's page at url(its server's address), once `first_drawn`(tree, page) and (B) every pick is in
        the browser and the page idle: the pages and their Messages."""
        pages, frames = {}, {}
        for name, server in self.servers.items():
            page = self.browsers[name].new_page(viewport=VIEWPORT)
            frames[name] = Messages(page)              # before the page opens its websocket
            page.goto(url(server.url))
            wait_for_app(page, TIMEOUT_MS)
            first_drawn(name, page)
            if name == "B" or in_browser(page):
                page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
            page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
            pages[name] = page
        return pages, frames


def time_picks(pages: dict, frames: dict, picks: Sequence, pick: Callable[[str, object, object], str],
               said: Callable[[int, object], str], turn: int = 0) -> dict[str, dict[str, list]]:
    """Each of `picks` made on each tree's page in turn: pick(tree, page, the pick) chooses it and waits until the
    page shows it, and returns what it picked ("layer", "kind", "step"). Per tree, by that name: the seconds it
    took; "painted_" + it: the view's own clock, the pick's event until the frame after its picture (B); "view_ms",
    "rest_ms": the view's clock to its picture drawn and to the rest in sight (B); "sent" and "runs": the messages
    the browser sent during the pick and SETTLE_S after, and of them the script runs. Each pick is logged (said).
    The trees take turns going first (order) from the pick's index + `turn`."""
    result: dict[str, dict[str, list]] = {name: defaultdict(list) for name in pages}
    for i, chosen in enumerate(picks):
        for name in order(pages, i + turn):
            page, mine = pages[name], result[name]
            sent, runs = frames[name].sent, frames[name].runs
            start = time.perf_counter()
            what = pick(name, page, chosen)
            mine[what].append(time.perf_counter() - start)
            if in_browser(page):
                box = page.locator(VIEW)
                page.wait_for_function(VIEW_DRAWN_JS, arg=["linesPick", box.get_attribute("data-drawn-pick")],
                                       timeout=TIMEOUT_MS, polling="raf")
                mine["view_ms"].append(float(box.get_attribute("data-pick-ms")))
                mine["rest_ms"].append(float(box.get_attribute("data-lines-ms")))
                painted = box.get_attribute("data-painted-ms")        # the view's clock, pick event -> on screen
                if painted is not None:
                    mine[f"painted_{what}"].append(float(painted) / 1000)
            time.sleep(SETTLE_S)
            mine["sent"].append(frames[name].sent - sent)
            mine["runs"].append(frames[name].runs - runs)
            log(f"{said(i, chosen)}: {name} {mine[what][-1] * 1000:.0f} ms, {mine['sent'][-1]} sent, "
                f"{mine['runs'][-1]} script runs")
    return result


def pick_kind_layer(page, what: str, value, state: dict, keys: tuple[str, str], label: Callable) -> None:
    """Choose a kind (the feed-forward page's: a stack) or a layer on the page: the browser view's pickers, or (a
    tree without the view) the base's Streamlit radio (`keys[0]`, its option by `label`(kind)) and its kind's own
    layer select box (`keys[1]`-kind); `state`, {kind or stack: ..., "layer": ...}, follows."""
    kind = next(v for k, v in state.items() if k != "layer")
    if what == "layer":
        pick_layer(page, value, f"{keys[1]}-{kind}")
    elif in_browser(page):
        page.locator(f"{VIEW} input[value='{value}']").check()
    else:
        page.locator(f".st-key-{keys[0]} label", has_text=label(value)).first.click()
    state[what] = value


def pick_layer(page, layer: int, key: str) -> None:
    """Choose a layer on the page: the browser view's layer picker, or (a tree without the view) the base's
    Streamlit select box of key `key`."""
    if in_browser(page):
        page.select_option(f"{VIEW} .vz-layer", str(layer))
    else:
        page.locator(f".st-key-{key} input[role=combobox]").click()
        page.get_by_role("option", name=f"layer {layer}", exact=True).click()


def drawn_kind_layer(page, what: str, state: dict, where: Callable) -> None:
    """Wait until the page shows the kind and layer of `state`: the view marks it drawn, or (a tree without the view)
    the first chart's title begins with where(kind[, layer]) (a kind picked shows the layer it last showed, which the
    URL then says: `state` takes it)."""
    kind = next(v for k, v in state.items() if k != "layer")
    if in_browser(page):
        page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", f"{kind}:{state['layer']}"],
                               timeout=TIMEOUT_MS, polling="raf")
        return
    want = where(kind, state["layer"]) if what == "layer" else where(kind)
    page.wait_for_function(SERVER_DRAWN_JS, arg=want, timeout=TIMEOUT_MS, polling=20)
    if what != "layer":
        query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
        state["layer"] = int(query.get("layer", ["0"])[0])


def time_kind_layer(pages: dict, frames: dict, picks: Sequence[tuple[str, object]], where: Callable,
                    keys: tuple[str, str], label: Callable, first: str = "kind") -> dict[str, dict[str, list]]:
    """Picks of a kind (the feed-forward page's: a stack, `first`) or a layer, ("layer", 1), on each tree in turn
    (time_picks), each page from the encoder's layer 0 (pick_kind_layer, drawn_kind_layer: `keys`, `label`,
    `where`)."""
    states = {name: {first: "encoder", "layer": 0} for name in pages}

    def choose(name: str, page, chosen) -> str:
        what, value = chosen
        pick_kind_layer(page, what, value, states[name], keys, label)
        drawn_kind_layer(page, what, states[name], where)
        return what

    return time_picks(pages, frames, picks, choose, lambda i, chosen: f"pick {chosen[0]} {chosen[1]}")


def time_layers(pages: dict, frames: dict, layers: Sequence[int], where: Callable[[int], str],
                key: str) -> dict[str, dict[str, list]]:
    """Picks of a layer alone (a deck without a kind row: the LayerNorm page's, whose pick is its layer, "1") on
    each tree in turn (time_picks, under "layer"): the view's layer picker, or the base's select box `key`
    (pick_layer); drawn when the view marks the layer drawn, or (a tree without the view) the first chart's title
    begins with where(layer)."""
    def choose(name: str, page, layer) -> str:
        pick_layer(page, layer, key)
        if in_browser(page):
            page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", str(layer)], timeout=TIMEOUT_MS, polling="raf")
        else:
            page.wait_for_function(SERVER_DRAWN_JS, arg=where(layer), timeout=TIMEOUT_MS, polling=20)
        return "layer"

    return time_picks(pages, frames, layers, choose, lambda i, layer: f"pick layer {layer}")


def titled(page) -> None:
    """A new tab's first screen: a chart with its title."""
    page.wait_for_function("() => !!document.querySelector('.js-plotly-plot .gtitle')", timeout=TIMEOUT_MS)


def open_sentence(browser, url: str, first_drawn: Callable[[object], None]) -> tuple[float, float, int, int]:
    """A new sentence opened as a link in a new tab: seconds until `first_drawn`(page) (its first screen), seconds
    until (B) every pick is in the browser, the run that brings them over finished, and the page idle; the bytes the
    server sent (SETTLE_S after); and (B) the view's body (every pick's figures and words, gzipped) as the view
    received it."""
    page = browser.new_page(viewport=VIEWPORT)
    frames = Messages(page)
    try:
        start = time.perf_counter()
        page.goto(url)
        wait_for_app(page, TIMEOUT_MS)
        first_drawn(page)
        first = time.perf_counter() - start
        waited = in_browser(page)
        if waited:
            page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
        page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
        if not waited and in_browser(page):      # the view came after a chart of the page's own (first_drawn's)
            page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
            page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS)
        whole = time.perf_counter() - start
        time.sleep(SETTLE_S)
        body = int(page.locator(VIEW).get_attribute("data-body-bytes")) if in_browser(page) else 0
        return first, whole, frames.received, body
    finally:
        page.close()


def open_sentences(trees: Trees, sizes: Sequence[int], sentence: Callable[[int], str], url: Callable[[str, str], str],
                   first_drawn: Callable[[object], None], also: Callable[[str, int], None] | None = None) -> dict:
    """For each of `sizes`, a new sentence(n) opened on each tree in turn (open_sentence at url(server, sentence)),
    then also(tree, n) if given: {tree: {n: open_sentence's}}, each logged."""
    opens: dict = {name: {} for name in trees.roots}
    for n in sizes:
        text = sentence(n)
        for name in order(trees.roots, n):
            opens[name][n] = opened = open_sentence(trees.browsers[name], url(trees.servers[name].url, text),
                                                    first_drawn)
            log(f"{n} tokens opened: {name} first screen {opened[0]:.2f} s, every pick {opened[1]:.2f} s, "
                f"{opened[2]:,} bytes, view body {opened[3]:,} B")
            if also:
                also(name, n)
    return opens


def ms(values) -> str:
    """Median / p90 in milliseconds, or a dash for none."""
    return f"{median(values) * 1000:.0f} ms / {percentile(values, 90) * 1000:.0f} ms" if values else "—"


def view_cell(r: dict) -> str:
    """The view's own clock, median: to the pick's picture drawn / to the rest in sight drawn too (B)."""
    return f"{median(r['view_ms']):.0f} ms / {median(r['rest_ms']):.0f} ms" if r["view_ms"] else "—"


def sent_cell(r: dict) -> str:
    return f"{median(r['sent']):g} (max {max(r['sent'])})"


def step_table(picks: dict, label: dict) -> str:
    """The steps' table of a page that picks a step (decoding, step-through)."""
    rows = [[label[name], len(r["step"]), ms(r["step"]), ms(r["painted_step"]), view_cell(r), sent_cell(r),
             f"{sum(r['runs'])}"] for name, r in picks.items()]
    return table(["tree", "steps", "step: median / p90", "first picture on screen: median / p90",
                  "in the view (median)", "messages sent per step (median)", "script runs (all steps)"], rows)


def pick_table(picks: dict, label: dict, what: str) -> str:
    """The table of a page that picks one thing (`what`: its layer, head or kind), a row a tree."""
    rows = [[label[name], len(r[what]), ms(r[what]), ms(r[f"painted_{what}"]), view_cell(r), sent_cell(r),
             f"{sum(r['runs'])}"] for name, r in picks.items()]
    return table(["tree", f"{what} picks", f"{what}: median / p90", "on screen: median / p90", "in the view (median)",
                  "messages sent per pick (median)", "script runs (all picks)"], rows)


def opened_table(opens: dict, sizes: Sequence[int], label: dict) -> str:
    """A new tab's table: each tree's first screen and idle page (with the bytes sent), and B's view body."""
    rows = [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s" for name in opens),
             *(opened_cell(opens[name][n]) for name in opens), f"{opens['B'][n][3]:,} B"] for n in sizes]
    return table(["sentence", *(f"first screen: {label[name]}" for name in opens),
                  *(f"idle: {label[name]}" for name in opens), "B: the view's body"], rows)


def first_screen_table(opens: dict, sizes: Sequence[int], label: dict) -> str:
    """A new tab's table of a page that picks a step: each tree's first screen, B's every step and its body."""
    rows = [[f"{n} tokens", *(f"{opens[name][n][0]:.2f} s" for name in opens), f"{opens['B'][n][1]:.2f} s",
             f"{opens['B'][n][3]:,} B"] for n in sizes]
    return table(["sentence", *(f"first screen: {label[name]}" for name in opens), "B: every step in the browser",
                  "B: the view's body"], rows)


def opened_cell(opened: tuple) -> str:
    """A new tab's seconds until every pick is in the browser and the page idle, and the bytes the server sent."""
    return f"{opened[1]:.2f} s, {opened[2]:,} B"


def no_runs(b: dict, what: str) -> Check:
    """No script run for a pick in this tree (B)."""
    return Check(f"no script run for a {what} (this tree)", f"{sum(b['runs'])} in {len(b['runs'])} {what}s",
                 sum(b["runs"]) == 0)


def small_body(opens: dict, sizes: Sequence[int], what: str = "view body") -> list[Check]:
    """A 128-token sentence's view body under 2 MB (B), when one was opened."""
    if 128 not in sizes:
        return []
    return [Check(f"a 128-token sentence's {what} < 2 MB (this tree)", f"{opens['B'][128][3]:,} B",
                  opens["B"][128][3] < 2_000_000)]


def on_screen(b: dict, whats: Sequence[str]) -> list[Check]:
    """Each kind of pick on screen in 50 ms by the view's own clock (B), and as Playwright drove it."""
    return [Check(f"a {what} pick on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                  f"{median(b['painted_' + what]) * 1000:.0f} ms (driven by Playwright: "
                  f"{median(b[what]) * 1000:.0f} ms)", median(b["painted_" + what]) <= 0.05) for what in whats]


def faster(b: dict, a: dict, whats: Sequence[str], base: str, what: str = "pick") -> Check:
    """B's picks (of every kind in `whats`) faster than A's, at the median."""
    mine, theirs = [t for w in whats for t in b[w]], [t for w in whats for t in a[w]]
    return Check(f"a {what} faster than at {base} (p50, B/A)", f"{median(mine) / median(theirs):.2f}",
                 median(mine) < median(theirs))
