"""Snapshot of what every page draws, to prove a refactoring changed nothing: each page of viz/elements/nav.PAGES (and
each tour step) run by AppTest in English and 中文, normal and presenter mode, its charts' JSON, its texts and
the URL it wrote back, one file per view under OUT. Two snapshots compare with `diff -r`.

    python bench/chart_json.py /tmp/before            # everything (about 100 runs of the app)
    python bench/chart_json.py /tmp/after --only explorer.py,tour.py --langs en

Not a benchmark (bench/run_all.py does not run it): a tool kept beside them because it drives the app the
same way.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from apptest_utils import run_page  # noqa: E402
from viz.elements.nav import PAGES  # noqa: E402
from viz.tour.steps import TOUR  # noqa: E402

TEXT_KINDS = ("title", "header", "subheader", "markdown", "caption", "text", "latex", "code", "info", "warning",
              "error", "success")


def snapshot(at) -> dict:
    """The charts (their plotly JSON, keys sorted), texts, exceptions and URL parameters of one run."""
    return {
        "charts": [json.loads(c.proto.spec) for c in at.get("plotly_chart")],
        "texts": {kind: [str(e.value) for e in at.get(kind)] for kind in TEXT_KINDS if at.get(kind)},
        "exceptions": [str(e.value) for e in at.exception],
        "query": {k: at.query_params[k] for k in sorted(at.query_params)},
    }


def views(pages: list[str], langs: list[str], tour: bool):
    """(file name, page file, URL parameters) of every view to snapshot."""
    for lang in langs:
        for present in ("0", "1"):
            base = {"lang": lang} if lang != "en" else {}
            if present == "1":
                base["present"] = "1"
            tag = f"{lang}-{'present' if present == '1' else 'normal'}"
            for page in pages:
                if page == "tour.py" and tour:
                    for n in range(1, len(TOUR) + 1):
                        yield f"{tag}-tour-{n:02d}.json", page, {**base, "tour_step": str(n)}
                else:
                    yield f"{tag}-{Path(page).stem}.json", page, base


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", default=None, help="comma-separated page files (explorer.py,...)")
    parser.add_argument("--langs", default="en,zh")
    parser.add_argument("--no-tour-steps", action="store_true", help="the tour at its first step only")
    args = parser.parse_args(argv)
    pages = args.only.split(",") if args.only else [Path(p.file).name for p in PAGES]
    args.out.mkdir(parents=True, exist_ok=True)
    for name, page, params in views(pages, args.langs.split(","), not args.no_tour_steps):
        started = time.time()
        at = run_page(page, **params)
        (args.out / name).write_text(json.dumps(snapshot(at), ensure_ascii=False, sort_keys=True, indent=1) + "\n",
                                     encoding="utf-8")
        print(f"{name}: {time.time() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
