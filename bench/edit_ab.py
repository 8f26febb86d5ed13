"""Editing the sentence, two trees side by side: a past main (A) and this tree (B), each served by its own
`streamlit run app.py`, the same new 32-token sentence typed into each explorer in turn (Chromium), from
Ctrl+Enter until the new sentence's heatmap is drawn, and the CPU time the server and the browser spent on it.

    python bench/edit_ab.py [--quick] [--rounds 7] [--base 69fc371] [--tokens 32] [--write]

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

from browser_utils import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from browser import submit as browser_submit  # noqa: E402

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


def open_page(chromium, server: Server, text: str, wanted: list[str]):
    page = chromium.new_page(viewport={"width": 1600, "height": 1000})
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


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 timed rounds")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warm", type=int, default=2, help="untimed edits first, on each tree")
    parser.add_argument("--base", default=BASE, help="commit of tree A")
    parser.add_argument("--tokens", type=int, default=32)
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
        pages = {name: open_page(browsers[name][0], s, previous, fresh_words(maker, previous, ""))
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
    return report(section, args.write)


if __name__ == "__main__":
    main()
