"""Where a new sentence's time goes on the explorer, server, transfer and browser (issue 44 item 4): `streamlit run
app.py` and Chromium, a new 32-token sentence typed (Ctrl+Enter) a few times, each edit's timeline from the
websocket (when the browser asked for the run, when each message of it came back, with its size) and Chromium's
CPU profile of the edit (V8's sampling profiler over the page: self time by script and function; "(program)" is the
browser's own work outside JavaScript: style, layout, paint).

    python bench/edit_timeline.py [--tokens 32] [--edits 3] [--top 25]

Not timed by bench/run_all.py: a tool to find what an edit pays for (bench/edit_ab.py times it end to end).
"""
from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

from common import SentenceMaker, Server, explorer_url, log, median

from browser_utils import browser
from edit_ab import EDIT_DRAWN_JS, fresh_words

TIMEOUT_MS = 120_000


class Wire:
    """The websocket's frames with their time (seconds since `zero`) and size: sent to the server, received."""

    def __init__(self, page):
        self.frames: list[tuple[float, str, int]] = []
        self.zero = time.perf_counter()
        page.on("websocket", self._socket)

    def _socket(self, socket) -> None:
        socket.on("framesent", lambda frame: self._note("sent", frame))
        socket.on("framereceived", lambda frame: self._note("received", frame))

    def _note(self, way: str, frame) -> None:
        self.frames.append((time.perf_counter() - self.zero, way, len(frame)))

    def since(self, start: float) -> list[tuple[float, str, int]]:
        return [(at - start, way, size) for at, way, size in self.frames if at >= start]


def self_times(profile: dict) -> dict[tuple[str, str], float]:
    """Milliseconds of self time per (script, function) in a V8 CPU profile."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    spent: dict[tuple[str, str], float] = defaultdict(float)
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node_id]["callFrame"]
        script = os.path.basename(frame["url"].split("?")[0]) or "(inline)"
        spent[(script, frame["functionName"] or "(anonymous)")] += delta / 1000
    return spent


def by_script(spent: dict[tuple[str, str], float]) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for (script, _), ms in spent.items():
        totals[script] += ms
    return totals


def edit(page, wire: Wire, cdp, text: str, wanted: list[str]) -> tuple[float, list, dict]:
    box = page.get_by_label("Sentence", exact=True)
    box.fill(text)
    cdp.send("Profiler.start")
    start = time.perf_counter() - wire.zero
    box.press("Control+Enter")
    page.wait_for_function(EDIT_DRAWN_JS, arg=wanted, timeout=TIMEOUT_MS, polling="raf")
    drawn = time.perf_counter() - wire.zero - start
    page.wait_for_timeout(800)                   # the rest of the view's body: asked for after the first screen
    profile = cdp.send("Profiler.stop")["profile"]
    return drawn, wire.since(start), self_times(profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    model_id = "en-es"
    maker = SentenceMaker(seed=44)
    previous = maker.sentence(args.tokens)
    log(f"load average {os.getloadavg()[0]:.2f} at the start")
    with Server() as server, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1600, "height": 1000})
        wire = Wire(page)
        page.goto(explorer_url(server.url, model_id, previous))
        page.wait_for_function(EDIT_DRAWN_JS, arg=fresh_words(maker, previous, ""), timeout=TIMEOUT_MS)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        spent_all: dict[tuple[str, str], float] = defaultdict(float)
        drawn_all = []
        for i in range(args.edits + 1):
            text = maker.sentence(args.tokens)
            drawn, frames, spent = edit(page, wire, cdp, text, fresh_words(maker, text, previous))
            previous = text
            if i == 0:
                continue                          # warm-up
            drawn_all.append(drawn)
            print(f"\nedit {i}: drawn at {drawn * 1000:.0f} ms; websocket frames (ms since Ctrl+Enter):")
            for at, way, size in frames:
                print(f"  {at * 1000:7.0f}  {way:8s} {size:>9,} B")
            for key, ms in spent.items():
                spent_all[key] += ms / args.edits
    print(f"\ndrawn, median of {args.edits}: {median(drawn_all) * 1000:.0f} ms; load average {os.getloadavg()[0]:.2f}")
    print("\nbrowser CPU per edit by script (ms, mean; the profile runs until 0.8 s after the map is drawn):")
    for script, ms in sorted(by_script(spent_all).items(), key=lambda item: -item[1])[:12]:
        print(f"  {ms:7.1f}  {script}")
    print(f"\nthe top {args.top} functions by self time (ms per edit):")
    for (script, name), ms in sorted(spent_all.items(), key=lambda item: -item[1])[:args.top]:
        print(f"  {ms:7.1f}  {script}: {name}")


if __name__ == "__main__":
    main()
