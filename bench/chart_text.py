"""The smallest chart text on each page's first screen at a projector's 1280x720, in Chromium against
`streamlit run app.py`, in presenter mode (present=1) and normal mode (presenter >= 20 px, the back row's size;
normal >= 11 px).

    python bench/chart_text.py [--pages home zoo] [--lang zh] [--mode present normal] [--json out.json]

Per page: the computed font-size of the smallest visible SVG text in a plotly chart that lies in the
viewport at scroll 0, the size it is drawn at (plotly shrinks text inside bars by a transform), and
which text it is. Pages open with the app's default model and sentence unless --model/--text say.
"""
from __future__ import annotations

import argparse
import json

from common import Check, Section, log, table

from browser_utils import browser, streamlit_server
from chart_text import PAGES, VIEWPORT, measure, page_url, smallest

FLOOR = {"present": 20, "normal": 11}


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=PAGES)
    parser.add_argument("--mode", nargs="+", default=["present", "normal"], choices=["present", "normal"])
    parser.add_argument("--lang", default="en", choices=["en", "zh"])
    parser.add_argument("--model", default=None)
    parser.add_argument("--text", default=None)
    parser.add_argument("--json", default=None, help="write every page's texts here")
    parser.add_argument("--verbose", action="store_true", help="print the five smallest texts of each page")
    args = parser.parse_args(argv)
    extra = {k: v for k, v in (("model", args.model), ("text", args.text)) if v}
    results: dict[str, dict[str, list[dict]]] = {m: {} for m in args.mode}
    with streamlit_server() as base, browser() as chromium:
        for mode in args.mode:
            ctx = chromium.new_context(viewport=VIEWPORT)   # one session per mode: presenter mode sticks
            page = ctx.new_page()
            for name in args.pages:
                texts = measure(page, page_url(base, name, mode == "present", args.lang, extra))
                results[mode][name] = texts
                low = smallest(texts)
                log(f"chart text {mode} {name}: " + (f"{low['px']:g} px ({low['text']!r}, {low['cls']})"
                                                     if low else "no chart text on the first screen"))
                if args.verbose:
                    for t in sorted(texts, key=lambda t: t["px"])[:5]:
                        log(f"    {t['px']:g}/{t['drawn']:g} px {t['text']!r} {t['cls']} at {t['x']},{t['y']}")
            ctx.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)
    rows, checks = [], []
    for name in args.pages:
        row = [name]
        for mode in args.mode:
            low = smallest(results[mode][name])
            drawn = smallest(results[mode][name], "drawn")
            row.append("—" if low is None else f"{low['px']:g} ({drawn['drawn']:g} drawn) {low['text'][:18]!r}")
        rows.append(row)
    for mode in args.mode:
        lows = [smallest(results[mode][n]) for n in args.pages]
        worst = min((low["px"] for low in lows if low), default=None)
        checks.append(Check(f"{mode}: every page's first-screen chart text >= {FLOOR[mode]} px",
                            "—" if worst is None else f"{worst:g} px", None if worst is None else worst >= FLOOR[mode]))
    body = table(["page"] + [f"smallest, {m}" for m in args.mode], rows)
    print(body)
    for c in checks:
        print(f"{c.target}: {c.measured} ({'met' if c.ok else 'NOT met'})")
    return Section("chart_text", f"Chart text at 1280x720 ({args.lang})", body, checks)


if __name__ == "__main__":
    main()
