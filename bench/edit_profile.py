"""Where one edit of the sentence goes on the server: the explorer run by AppTest with a 32-token sentence, then
a new sentence typed, that run profiled (cProfile); prints the cumulative time of the parts each edit runs and
the size of every chart's JSON the browser receives.

    python bench/edit_profile.py [--tokens 32] [--edits 3] [--top 40]

Not timed by bench/run_all.py: a tool to find what an edit pays for (bench/edit_ab.py times it end to end).
"""
from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import time

from common import SentenceMaker, median  # noqa: F401  (sys.path for model/, viz/, tests/)

from apptest_utils import run_page  # noqa: E402
from map_headview import browser_ms  # noqa: E402

# the parts of a run worth naming: (label, function name as cProfile shows it, file ending)
PARTS = [
    ("whole script run", "_run_script", "script_runner.py"),
    ("trace (tokenize, decode, capture)", "get_trace", "services.py"),
    ("sidebar", "sidebar", "sidebar.py"),
    ("page (presenter.run_page)", "run_page", "presenter.py"),
    ("  grid of all heads (build)", "model_view", "attention.py"),
    ("  large map (build)", "attention_heatmap", "attention.py"),
    ("  head view lines (build)", "head_view_figure", "map_view.py"),
    ("  CSV of the map", "matrix_frame", "ui.py"),
    ("st.plotly_chart (to JSON + send)", "plotly_chart", "plotly_chart.py"),
    ("plotly to_json", "to_json", "_json.py"),
    ("lesson button", "lesson_download_at_top", "lesson_ui.py"),
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


def main(argv=None) -> None:
    global profiling
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--wall", action="store_true", help="wall time of each edit only, no cProfile (which slows "
                        "Python-heavy parts such as plotly's checks several times more than torch)")
    parser.add_argument("--no-browser", action="store_true", help="no drawing times (no Chromium)")
    parser.add_argument("--top", type=int, default=0, help="also print cProfile's top N by cumulative time")
    args = parser.parse_args(argv)
    maker = SentenceMaker(seed=7)
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    at = run_page("explorer.py", text=maker.sentence(args.tokens))
    at.text_area(key="text").set_value(maker.sentence(args.tokens)).run()   # warm
    walls, profile = [], cProfile.Profile()
    profile_script_runs(profile)
    profiling = not args.wall
    for _ in range(args.edits):
        text = maker.sentence(args.tokens)
        started = time.perf_counter()
        at.text_area(key="text").set_value(text).run()
        walls.append(time.perf_counter() - started)
        assert not at.exception, [e.value for e in at.exception]
    print(f"{args.edits} edits at {args.tokens} tokens, AppTest wall median {median(walls) * 1000:.0f} ms, min "
          f"{min(walls) * 1000:.0f} ms{'' if args.wall else ' (under cProfile)'}")
    if args.wall:
        return
    stats = pstats.Stats(profile)
    print("per edit (cProfile, cumulative):")
    for label, total, calls in part_times(stats):
        print(f"  {label:40} {total / args.edits * 1000:8.1f} ms  ({calls / args.edits:g} calls)")
    charts = {chart_name(chart.proto.id, i): chart.proto.spec for i, chart in enumerate(at.get("plotly_chart"))}
    drawn = {} if args.no_browser else browser_ms(charts)
    print("charts sent: JSON size, Plotly.newPlot in Chromium (median of 3):")
    for name, spec in charts.items():
        print(f"  {name:30} {len(spec) / 1024:8.1f} KB {drawn.get(name, float('nan')):8.1f} ms")
    if args.top:
        stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
