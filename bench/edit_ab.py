"""Editing the sentence, two trees side by side: a past main (A) and this tree (B), each served by its own
`streamlit run app.py`, the same new 32-token sentence typed into each explorer in turn (Chromium), from
Ctrl+Enter until the new sentence's heatmap is drawn, and the CPU time the server and the browser spent on it.
With --picks N (issue 44): then N picks of a layer or a head on each explorer in turn, from the choice in the
picker until the large map shows it, and how many messages (script runs asked for) the browser sent the server
for it; and the bytes the server sends the browser for a new sentence of each of --sizes tokens.

    python bench/edit_ab.py [--quick] [--rounds 7] [--base 69fc371] [--tokens 32] [--picks 0] [--write]

The rounds alternate which tree goes first, so a shared, loaded machine slows both alike: only the ratio of
one run counts, and CPU time more than wall time. Tree A is `git archive BASE` unpacked in a temporary
folder (nothing of this repository's git state changes). Prints each tree's median and p90 and the ratios B/A.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from common import (ROOT, Check, Section, SentenceMaker, Server, cpu_seconds, explorer_url, log, median, percentile,
                    report, table)

from browser_utils import CHROMIUM, CHROMIUM_ARGS
from playwright.sync_api import sync_playwright
from browser import submit as browser_submit

BASE = "69fc371"          # main of 2026-11-23
TIMEOUT_MS = 300_000
SETTLE_S = 0.5

# The script has finished, nothing is stale, and the large heatmap's x ticks show a token the previous sentence
# lacked. Labels are compared without their position prefix ("3 ▁house"): a tree whose model leads the source
# with a style token numbers the same words one further.
EDIT_DRAWN_JS = """(wanted) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-testid="stException"]')) return true;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (plots.length < 2) return false;
  const words = new Set(plots.flatMap(p => [...p.querySelectorAll('.xtick text')]
    .map(e => e.textContent.replace(/^\\d+ /, ''))));
  return wanted.some(w => words.has(w));
}"""


def unpack(commit: str, into: Path) -> Path:
    """The tree of `commit` as files under `into` (git archive: no worktree, no ref touched)."""
    archive = into / "tree.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), commit], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    archive.unlink()
    return into / "tree"


def fresh_words(maker: SentenceMaker, text: str, previous: str) -> list[str]:
    """Tokens (without positions) of `text` that `previous` lacks: the page shows them only once redrawn."""
    strip = lambda labels: [label.split(" ", 1)[1] for label in labels]  # noqa: E731
    old = set(strip(maker.labels(previous)))
    new = [w for w in strip(maker.labels(text)) if w not in old]
    if not new:
        raise ValueError("the new sentence has no token the old one lacks")
    return new


def submit(page, text: str, wanted: list[str]) -> float:
    return browser_submit(page, text, wanted, EDIT_DRAWN_JS, polling=20)


def open_page(chromium, server: Server, text: str, wanted: list[str], frames: dict | None = None, name: str = ""):
    page = chromium.new_page(viewport={"width": 1600, "height": 1000})
    if frames is not None:
        frames[name] = Frames(page)            # before the page opens its websocket
    page.goto(explorer_url(server.url, "en-es", text))
    page.wait_for_function(EDIT_DRAWN_JS, arg=wanted, timeout=TIMEOUT_MS, polling=100)
    return page


def chromium_roots() -> set[int]:
    """Pids of the Chromium processes whose parent is not one: each browser launched, with its renderers under it."""
    def comm(pid) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return ""

    roots = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and comm(entry.name).startswith("chrom"):
            try:
                parent = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1]
            except OSError:
                continue
            if not comm(parent).startswith("chrom"):
                roots.add(int(entry.name))
    return roots


def own_browser(playwright):
    """A Chromium of its own (each tree's page in its own processes) and the pids to read its CPU time from."""
    before = chromium_roots()
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return chromium, sorted(chromium_roots() - before)


def cpu(pids) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


# -- picks (issue 44) -----------------------------------------------------------------------------------------
# A tree whose explorer is drawn by the browser-side view (viz/figures/browser_view.js) marks what it drew on it.
BROWSER_VIEW = ".vz-explorer"
PICKS = [("head", 1), ("head", 2), ("layer", 1), ("head", 5), ("layer", 2), ("head", 0), ("layer", 0), ("head", -1),
         ("head", 3), ("layer", 1), ("head", 7), ("layer", 2), ("head", 4), ("layer", 0), ("head", 6)]
SERVER_MAP_TITLE_JS = """(want) => !document.querySelector('[data-testid="stStatusWidget"]')
  && !document.querySelector('[data-stale="true"]')
  && (document.querySelector('.st-key-explorer-main .gtitle') || {}).textContent === want"""
VIEW_DRAWN_JS = """([attr, want]) => (document.querySelector('.vz-explorer') || {dataset: {}}).dataset[attr] === want"""


class Frames:
    """The websocket's messages of a page: sent (the browser's: a script run asked for, a widget's value) and the
    bytes received."""
    def __init__(self, page):
        self.sent, self.received = 0, 0
        page.on("websocket", self._watch)

    def _watch(self, ws):
        ws.on("framesent", lambda _frame: self._count_sent())
        ws.on("framereceived", lambda frame: self._count_received(frame))

    def _count_sent(self):
        self.sent += 1

    def _count_received(self, frame):
        self.received += len(frame) if frame else 0


def server_pick(page, what: str, value: int, state: dict) -> str:
    """Choose in the page's own Streamlit select box (the main of the base): the title the large map then shows."""
    key = f"explorer-encoder-{what}"
    page.locator(f'.st-key-{key} input[role=combobox]').click()
    name = ("average of heads" if value == -1 else f"head {value}") if what == "head" else f"layer {value}"
    page.get_by_role("option", name=name, exact=True).click()
    state[what] = value
    head = state["head"]
    return (f"Encoder self-attention: layer {state['layer']}, " +
            ("average of 8 heads" if head == -1 else f"head {head}"))


def browser_pick(page, what: str, value: int, state: dict) -> str:
    page.select_option(f".vz-{what}", str(value))
    state[what] = value
    return f"encoder:{state['layer']}:{state['head']}"


def time_picks(pages: dict, frames: dict, picks: list) -> dict:
    """Each pick on each page in turn (the order alternating): seconds until the large map shows it, messages the
    browser sent meanwhile, and (browser view) its own clock's time to the map and to the lines."""
    result = {name: {"s": [], "sent": [], "view_ms": [], "lines_ms": [], "painted": []} for name in pages}
    states = {name: {"layer": 0, "head": 0} for name in pages}
    for i, (what, value) in enumerate(picks):
        for name in ("AB" if i % 2 == 0 else "BA"):
            page, mine = pages[name], result[name]
            in_browser = page.locator(BROWSER_VIEW).count() > 0
            sent = frames[name].sent
            start = time.perf_counter()
            if in_browser:
                want = browser_pick(page, what, value, states[name])
                page.wait_for_function(VIEW_DRAWN_JS, arg=["drawnPick", want], timeout=TIMEOUT_MS, polling="raf")
                mine["s"].append(time.perf_counter() - start)
                page.wait_for_function(VIEW_DRAWN_JS, arg=["linesPick", want], timeout=TIMEOUT_MS, polling="raf")
                box = page.locator(BROWSER_VIEW)
                mine["view_ms"].append(float(box.get_attribute("data-pick-ms")))
                mine["lines_ms"].append(float(box.get_attribute("data-lines-ms")))
                painted = box.get_attribute("data-painted-ms")          # the view's clock, pick event -> on screen
                if painted is not None:
                    mine["painted"].append(float(painted) / 1000)
            else:
                want = server_pick(page, what, value, states[name])
                page.wait_for_function(SERVER_MAP_TITLE_JS, arg=want, timeout=TIMEOUT_MS, polling=20)
                mine["s"].append(time.perf_counter() - start)
            time.sleep(SETTLE_S)
            mine["sent"].append(frames[name].sent - sent)
            log(f"pick {what} {value}: {name} {mine['s'][-1] * 1000:.0f} ms, {mine['sent'][-1]} sent")
    return result


def sentence_bytes(pages: dict, frames: dict, maker: SentenceMaker, sizes: list[int], previous: str) -> dict:
    """Bytes the server sent each page for a new sentence of each size (every message of the run: the view's data,
    the sidebar, the rest of the page), typed in as an edit is."""
    out = {name: {} for name in pages}
    for n in sizes:
        text = maker.sentence(n)
        wanted = fresh_words(maker, text, previous)
        for name, page in pages.items():
            before = frames[name].received
            submit(page, text, wanted)
            if page.locator(BROWSER_VIEW).count():        # and the rest the view asks for once it has drawn
                page.wait_for_function(VIEW_DRAWN_JS, arg=["whole", "1"], timeout=TIMEOUT_MS)
                page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
            time.sleep(SETTLE_S)
            out[name][n] = frames[name].received - before
            log(f"{n} tokens: {name} received {out[name][n]:,} bytes")
        previous = text
    return out


def pick_section(picks: dict, sizes: dict, base: str, load_start: str, load_end: str, edits: str,
                 edit_checks: list[Check]) -> Section:
    """The picks' section, with the same run's edits (`edits`: their table and ratios) in it: a run with --picks
    writes this section only, not the edits' own (whose numbers another run may hold against another base)."""
    rows = []
    for name, r in picks.items():
        label = f"{name}: {'main at ' + base if name == 'A' else 'this tree'}"
        view = (f"{median(r['view_ms']):.0f} ms / {median(r['lines_ms']):.0f} ms" if r["view_ms"] else "—")
        screen = (f"{median(r['painted']) * 1000:.0f} ms / {percentile(r['painted'], 90) * 1000:.0f} ms"
                  if r["painted"] else "—")
        rows.append([label, len(r["s"]), f"{median(r['s']) * 1000:.0f} ms", f"{percentile(r['s'], 90) * 1000:.0f} ms",
                     screen, view, f"{median(r['sent']):g} (max {max(r['sent'])})"])
    byte_rows = [[f"{n} tokens", *(f"{sizes[name][n]:,}" for name in sizes)] for n in next(iter(sizes.values()))]
    body = "\n".join([
        "Chromium (headless) against two `streamlit run app.py` at once, A the main of " + base + " and B this tree "
        "(bench/edit_ab.py --picks), each explorer on the last edit's "
        "32-token sentence. How the view works: viz/elements/browser_view.py. A new sentence's first run sends the first "
        "screen (one kind, one layer's lines), a second run the rest once it is drawn: the edit's time is the "
        "first, its CPU both (the rest: two more grids and maps, eight more head views, the body gzipped).",
        "", f"**Picks** ({len(next(iter(picks.values()))['s'])} per tree, a layer or a head of encoder self-attention "
        "in turn, the trees alternating; load average " + f"{load_start} at the start, {load_end} at the end): from "
        "the choice in the picker (Playwright's select) until the large map's title names the pick (A: the script "
        "has finished and nothing is stale; B: the view marks the pick drawn), as Playwright drives it (its round "
        "trips to Chromium included). \"on screen\": the view's own clock, from the pick's event until the frame "
        "after the map is drawn has been shown (what a reader waits for). \"in the view\": B's own clock, pick "
        "to grid and map drawn / to the layer's lines drawn too. \"sent\": websocket messages from the browser to "
        "the server during the pick and 0.5 s after it (a script run asked for is one).", "",
        table(["tree", "picks", "median", "p90", "on screen: median / p90", "in the view (median)",
               "messages sent per pick (median)"], rows),
        "", "**Bytes the server sends for a new sentence** (every websocket message of the edit, Chromium; B: with "
        "the run that sends the rest of the view's body once the first screen is drawn):", "",
        table(["sentence", *(f"{n}: {'main at ' + base if n == 'A' else 'this tree'}" for n in sizes)], byte_rows),
        "", "**A new 32-token sentence** (the same run, before the picks; from Ctrl+Enter until the large map shows "
        "the new tokens):", "", edits,
    ])
    b = picks.get("B")
    checks = [Check("a pick on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted']) * 1000:.0f} ms (driven by Playwright: {median(b['s']) * 1000:.0f} ms)",
                    median(b["painted"]) <= 0.05),
              Check("no script run for a pick (messages sent, this tree)", f"{max(b['sent'])}", max(b["sent"]) == 0)]
    if 128 in sizes.get("B", {}):
        checks.append(Check("a 128-token sentence sends < 2 MB (this tree)", f"{sizes['B'][128]:,} B",
                            sizes["B"][128] < 2_000_000))
    return Section("browser_picks", "Picks in the browser: layer and head on the explorer (issue 44)", body,
                   checks + edit_checks)


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 timed rounds")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warm", type=int, default=2, help="untimed edits first, on each tree")
    parser.add_argument("--base", default=BASE, help="commit of tree A")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--picks", type=int, default=0, help="then time this many layer/head picks on each tree")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 40, 128],
                        help="with --picks: the bytes sent for a new sentence of these many tokens")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else args.rounds
    maker = SentenceMaker(seed=36)
    load_start = load()
    log(f"load average {load_start} (1/5/15 min) at the start")
    times: dict[str, list[float]] = {"A": [], "B": []}
    server_cpu: dict[str, list[float]] = {"A": [], "B": []}
    browser_cpu: dict[str, list[float]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="edit-ab-") as tmp, contextlib.ExitStack() as stack:
        trees = {"A": unpack(args.base, Path(tmp)), "B": ROOT}
        servers = {name: stack.enter_context(Server(root=root)) for name, root in trees.items()}
        playwright = stack.enter_context(sync_playwright())
        browsers = {name: own_browser(playwright) for name in trees}
        previous = maker.sentence(args.tokens)
        frames: dict = {}
        pages = {name: open_page(browsers[name][0], s, previous, fresh_words(maker, previous, ""), frames, name)
                 for name, s in servers.items()}
        for i in range(args.warm + rounds):
            text = maker.sentence(args.tokens)
            wanted = fresh_words(maker, text, previous)
            for name in ("AB" if i % 2 == 0 else "BA"):
                server_pid, browser_pids = servers[name].proc.pid, browsers[name][1]
                cpu_server, cpu_browser = cpu_seconds(server_pid), cpu(browser_pids)
                seconds = submit(pages[name], text, wanted)
                time.sleep(SETTLE_S)              # the CPU of work that goes on after the map is drawn counts too
                if i >= args.warm:
                    times[name].append(seconds)
                    server_cpu[name].append(cpu_seconds(server_pid) - cpu_server)
                    browser_cpu[name].append(cpu(browser_pids) - cpu_browser)
                log(f"{'warm-up' if i < args.warm else f'round {i - args.warm + 1}'}: {name} {seconds:.3f} s")
            previous = text
        if args.picks:
            for name, page in pages.items():     # the pickers' page: the sentence of the last edit, from layer 0 head 0
                page.goto(explorer_url(servers[name].url, "en-es", previous, kind="encoder", layer=0, head=0))
                page.wait_for_function(EDIT_DRAWN_JS, arg=fresh_words(maker, previous, ""), timeout=TIMEOUT_MS)
                if page.locator(BROWSER_VIEW).count():           # every kind here, the run that brought it over
                    page.wait_for_selector(f"{BROWSER_VIEW}[data-whole='1']", timeout=TIMEOUT_MS)
                    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
            picks = time_picks(pages, frames, (PICKS * (1 + args.picks // len(PICKS)))[:args.picks])
            sizes = sentence_bytes(pages, frames, maker, args.sizes, previous)
    load_end = load()
    log(f"load average {load_end} (1/5/15 min) at the end")
    rows = [[f"{name}: {'main at ' + args.base if name == 'A' else 'this tree'}", len(ts), f"{median(ts):.3f} s",
             f"{percentile(ts, 90):.3f} s", f"{median(server_cpu[name]):.3f} s", f"{median(browser_cpu[name]):.3f} s"]
            for name, ts in times.items()]
    ratio = median(times["B"]) / median(times["A"])
    cpu_ratio = (median(server_cpu["B"]) + median(browser_cpu["B"])) / (median(server_cpu["A"]) + median(browser_cpu["A"]))
    body = "\n".join([
        f"Chromium (headless) against two `streamlit run app.py` at once: A, the main of {args.base} (`git archive`), "
        f"and B, this tree; the explorer, a new {args.tokens}-token sentence typed into each in turn (the order "
        f"alternating), from Ctrl+Enter until the script has finished, nothing is stale and the large map's ticks show "
        f"the new tokens. {args.warm} untimed edits first. Load average {load_start} at the start, {load_end} at the "
        "end (1/5/15 min; 2 CPUs shared with other work): only the ratio of one run counts. Where an edit's time goes: "
        "the section \"One edit of the sentence on the explorer, part by part\" (bench/edit_profile.py) and "
        "[performance-fixes.md](performance-fixes.md#editing-the-sentence-on-the-explorer).",
        "",
        table(["tree", "edits", "median", "p90", "server CPU (median)", "browser CPU (median)"], rows),
        "",
        f"Ratio B/A of the medians: **{ratio:.2f}** in time, **{cpu_ratio:.2f}** in CPU time (server and browser, "
        f"whose sum a busy machine disturbs less than the wall time; each tree has its own Chromium, and the CPU "
        f"is read {SETTLE_S:g} s after the map is drawn).",
    ])
    section = Section("edit_ab", f"Editing the sentence: this tree against the main of {args.base}", body,
                      [Check(f"an edit at {args.tokens} tokens no slower than at {args.base} (B/A ≤ 1, one run)",
                             f"{ratio:.2f}", ratio <= 1.0),
                       Check("CPU per edit (server + browser) no more than at the base (B/A ≤ 1)", f"{cpu_ratio:.2f}",
                             cpu_ratio <= 1.0)])
    if args.picks:
        edits = "\n\n".join(body.split("\n\n")[1:])             # the edits' table and ratios
        report(section, False)
        return report(pick_section(picks, sizes, args.base, load_start, load_end, edits, section.checks), args.write)
    return report(section, args.write)


if __name__ == "__main__":
    main()
