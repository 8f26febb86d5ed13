"""One page opened by the previous page's Next in presenter mode, again and again, alternating between this tree and
another checkout (the main this branch started from): page_to_page.py's step, for one page, with where its time
went (issue 46 item 9: the positional-encoding page).

    python bench/positional_draw.py [--page positional] [--words 9 40] [--rounds 5] [--against /tmp/base46]

Per step: the click to the page's arrival (page_to_page.py's: its script finished and every plotly chart has its
SVG), when its last chart was drawn, the CPU time of the browser page's main thread (Chromium's TaskDuration, of
it script and layout) and of the server's process in the step: less moved by other jobs on a shared machine than
the wall time. Both servers run for the whole session, one Chromium context each, the trees alternated round by
round (a trend in the load shows in both).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import ROOT, Server, log

from browser_utils import browser
from chart_text import VIEWPORT, page_url, settle
from long_text import SENTENCES
from page_to_page import ARRIVED_JS, NEXT

PREV = ".st-key-presenter-prev a"

# When each plotly chart got its SVG, from the click, read on every DOM change.
RECORD_JS = """() => {
  if (window.__pd_obs) window.__pd_obs.disconnect();
  const t0 = performance.now(), rec = {drawn: [], charts: 0};
  window.__pd = rec;
  const look = () => {
    const t = performance.now() - t0;
    const plots = [...document.querySelectorAll('.js-plotly-plot')];
    rec.charts = plots.length;
    const n = plots.filter(p => p.querySelector('svg.main-svg')).length;
    if (n !== rec.drawn.length) rec.drawn = plots.map((p, i) => i < rec.drawn.length ? rec.drawn[i] : t).slice(0, n);
  };
  window.__pd_obs = new MutationObserver(look);
  window.__pd_obs.observe(document.body, {childList: true, subtree: true});
  look();
}"""


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc: its threads, not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_s(cdp) -> dict:
    """The page's main thread so far (Chromium's Performance metrics): all its tasks, scripts, layout."""
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: metrics[k] for k in ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")}


def step(page, target: str, cdp=None, server_pid: int | None = None, timeout_ms: int = 240_000) -> dict:
    """From `target` (settled), its Previous (settled), then that page's Next, as a teacher would, in one session
    (a reload would load plotly.js again): the step's times."""
    page.locator(PREV).first.click()
    page.wait_for_function("(t) => !location.pathname.replace(/\\/$/, '').endsWith('/' + t)", arg=target,
                           timeout=timeout_ms)
    settle(page, timeout_ms)
    here = page.evaluate("() => location.pathname")
    page.evaluate(RECORD_JS)
    busy0 = busy_s(cdp) if cdp else {}
    cpu0 = cpu_s(server_pid) if server_pid else 0.0
    began = time.perf_counter()
    page.locator(NEXT).first.click()
    page.wait_for_function(ARRIVED_JS, arg=[here, target, {}], timeout=timeout_ms, polling=50)
    total = time.perf_counter() - began
    cpu1 = cpu_s(server_pid) if server_pid else 0.0
    busy1 = busy_s(cdp) if cdp else {}
    rec = page.evaluate("() => window.__pd")
    settle(page, timeout_ms)
    return {"total": total, "charts": rec["charts"],
            "last_chart": max(rec["drawn"], default=0) / 1000,
            "server_cpu": cpu1 - cpu0, **{k: busy1[k] - busy0[k] for k in busy1}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", default="positional", help="the page's URL path")
    parser.add_argument("--words", nargs="+", default=["9", "40"], choices=["9", "40"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lang", default="en", choices=["en", "zh"])
    parser.add_argument("--against", type=Path, default=None, help="another checkout, alternated with this tree")
    args = parser.parse_args(argv)
    trees = [("this branch", ROOT)] + ([("main", args.against)] if args.against else [])
    log(f"load average at the start: {os.getloadavg()}")
    results: dict[tuple[str, str], list[dict]] = {}
    with browser() as chromium:
        servers = [Server(root=root, env={"VIZ_SKIP_CHARTS": os.environ.get("SKIP_HERE", "")} if i == 0 else None).start() for i, (_, root) in enumerate(trees)]
        try:
            for server in servers:
                server.wait_healthy()
            contexts = [chromium.new_context(viewport=VIEWPORT) for _ in trees]
            pages = [c.new_page() for c in contexts]
            cdps = [c.new_cdp_session(p) for c, p in zip(contexts, pages)]
            for cdp in cdps:
                cdp.send("Performance.enable")
            for words in args.words:
                for page, server in zip(pages, servers):
                    page.goto(page_url(server.url, args.page, True, args.lang, {"text": SENTENCES[words]}))
                    settle(page)          # the first visit: caches warm for this sentence, not timed
                for r in range(args.rounds):
                    order = list(zip(trees, pages, servers, cdps))
                    for (label, _), page, server, cdp in (order if r % 2 == 0 else order[::-1]):
                        s = step(page, args.page, cdp, server.proc.pid)
                        results.setdefault((label, words), []).append(s)
                        log(f"{label} {words}w round {r + 1}: {s['total']:.2f} s (last chart {s['last_chart']:.2f} s, {s['charts']} charts; browser main thread {s['TaskDuration']:.2f} s "
                            f"(script {s['ScriptDuration']:.2f}, layout {s['LayoutDuration']:.2f}), server CPU "
                            f"{s['server_cpu']:.2f} s), load {os.getloadavg()[0]:.1f}")
            for c in contexts:
                c.close()
        finally:
            for server in servers:
                server.stop()
    log(f"load average at the end: {os.getloadavg()}")
    print("| tree | words | steps | median, s | fastest, s | slowest, s | browser main thread (median), s | "
          "server CPU (median), s | charts |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (label, words), steps in results.items():
        totals = [s["total"] for s in steps]
        print(f"| {label} | {words} | {len(steps)} | {statistics.median(totals):.2f} | {min(totals):.2f} | "
              f"{max(totals):.2f} | {statistics.median(s['TaskDuration'] for s in steps):.2f} | "
              f"{statistics.median(s['server_cpu'] for s in steps):.2f} | {steps[-1]['charts']} |")


if __name__ == "__main__":
    main()
