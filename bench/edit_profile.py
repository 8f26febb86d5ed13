"""Where one edit of the sentence goes on the server: the explorer run by AppTest with a 32-token sentence, then
a new sentence typed, that run profiled (cProfile); prints the cumulative time of the parts each edit runs and
the size of every chart's JSON the browser receives.

    python bench/edit_profile.py [--tokens 32] [--edits 5] [--lines-open] [--top 40] [--write]

Not timed by bench/run_all.py: a tool to find what an edit pays for (bench/edit_ab.py times it end to end).
"""
from __future__ import annotations

import argparse
import cProfile
import logging
import os
import pstats
import time

from common import Section, SentenceMaker, median, report, table  # (also sys.path for model/, viz/, tests/)

from apptest_utils import run_page
from map_headview import browser_ms

# the parts of a run worth naming: (label, function name as cProfile shows it, file ending)
PARTS = [
    ("whole script run", "_run_script", "script_runner.py"),
    ("trace (tokenize, decode, capture)", "get_trace", "traces.py"),
    ("sidebar", "sidebar", "sidebar.py"),
    ("page (presenter.run_page)", "run_page", "presenter.py"),
    ("  grid of all heads (build)", "model_view", "attention.py"),
    ("  large map (build)", "attention_heatmap", "attention.py"),
    ("  head view lines (build)", "head_view_figure", "map_view.py"),
    ("  CSV of the map", "matrix_frame", "ui.py"),
    ("st.plotly_chart (to JSON + send)", "plotly_chart", "plotly_chart.py"),
    ("plotly to_json", "to_json", "_json.py"),
    ("lesson button", "lesson_download_at_top", "download.py"),
    ("presenter map", "model_map_chart", "map_chart.py"),
]


def part_times(stats: pstats.Stats) -> list[tuple[str, float, int]]:
    rows = []
    for label, name, file in PARTS:
        total, calls = 0.0, 0
        for (path, _line, func), (_cc, nc, _tt, ct, _callers) in stats.stats.items():
            if func == name and path.endswith(file):
                total, calls = total + ct, calls + nc
        rows.append((label, total, calls))
    return rows


def profile_script_runs(profile: cProfile.Profile) -> None:
    """AppTest runs the script in a thread of its own, which a profiler enabled here would not see: enable it
    inside each run."""
    from streamlit.runtime.scriptrunner import script_runner
    run_script = script_runner.ScriptRunner._run_script

    def profiled(self, *args, **kwargs):
        if not profiling:
            return run_script(self, *args, **kwargs)
        profile.enable()
        try:
            return run_script(self, *args, **kwargs)
        finally:
            profile.disable()

    script_runner.ScriptRunner._run_script = profiled


profiling = False


def chart_name(element_id: str, i: int) -> str:
    """The chart's key as the page gave it ($$ID-<hash>-<key>), or its place on the page."""
    return element_id.split("-", 2)[-1] if element_id.count("-") >= 2 else f"chart {i}"


def edit(at, maker: SentenceMaker, n_tokens: int) -> float:
    started = time.perf_counter()
    at.text_area(key="text").set_value(maker.sentence(n_tokens)).run()
    assert not at.exception, [e.value for e in at.exception]
    return time.perf_counter() - started


def main(argv=None) -> Section:
    global profiling
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--lines-open", action="store_true", help="with the head view's lines opened below the map")
    parser.add_argument("--no-browser", action="store_true", help="no drawing times (no Chromium)")
    parser.add_argument("--top", type=int, default=0, help="also print cProfile's top N by cumulative time")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=7)
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    load_before = os.getloadavg()[0]
    at = run_page("explorer.py", text=maker.sentence(args.tokens))
    if args.lines_open:
        at.session_state["explorer-lines-open"] = True
    edit(at, maker, args.tokens)                                                         # warm
    walls = [edit(at, maker, args.tokens) for _ in range(args.edits)]       # cProfile slows plotly's Python most
    profile = cProfile.Profile()
    profile_script_runs(profile)
    profiling = True
    for _ in range(args.edits):
        edit(at, maker, args.tokens)
    profiling = False
    stats = pstats.Stats(profile)
    charts = {chart_name(chart.proto.id, i): chart.proto.spec for i, chart in enumerate(at.get("plotly_chart"))}
    drawn = {} if args.no_browser else browser_ms(charts)
    parts = [[label, f"{total / args.edits * 1000:.1f}", f"{calls / args.edits:g}"]
             for label, total, calls in part_times(stats)]
    chart_rows = [[name, f"{len(spec) / 1024:.1f}", f"{drawn[name]:.1f}" if name in drawn else "—"]
                  for name, spec in charts.items()]
    body = "\n".join([
        f"The explorer at {args.tokens} tokens in AppTest (no browser), a new sentence typed {args.edits} times"
        f"{' with the head view opened below the map' if args.lines_open else ''}; load average {load_before:.1f} "
        f"before, {os.getloadavg()[0]:.1f} after (2 CPUs, shared). A script run per edit: median "
        f"{median(walls) * 1000:.0f} ms, fastest {min(walls) * 1000:.0f} ms. The parts, from cProfile over another "
        f"{args.edits} edits (which slows plotly's Python several times more than torch's kernels, so read them "
        "against each other, not as wall time):",
        "",
        table(["part of one edit", "ms (cProfile)", "calls"], parts),
        "",
        "What the browser receives and draws: each chart's JSON and `Plotly.newPlot` of it alone in Chromium "
        "(median of 3; Streamlit 1.67's chart draws each new figure twice, on mounting and after applying its theme):",
        "",
        table(["chart (key)", "JSON KB", "newPlot ms"], chart_rows),
    ])
    section = Section("edit_profile", f"One edit of the sentence on the explorer, part by part ({args.tokens} tokens)",
                      body)
    report(section, args.write)
    if args.top:
        stats.sort_stats("cumulative").print_stats(args.top)
    return section


if __name__ == "__main__":
    main()
