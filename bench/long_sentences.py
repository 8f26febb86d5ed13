"""Each page's height and its token labels at a short, a 40-word and the longest sentence the sidebar takes at its
default token limit, in Chromium at a projector's 1280x720 against `streamlit run app.py`.

    python bench/long_sentences.py [--pages home multihead] [--present] [--lang zh] [--shots DIR]

Per page and sentence: the main area's scrollHeight in px, and whether every category axis shows all its
labels (plotly thins a crowded category axis silently: "dropped" counts the labels it did not draw).
"""
from __future__ import annotations

import argparse
import json

from common import Section, log, table

from browser_utils import browser, streamlit_server  # noqa: E402
from chart_text import PAGES, VIEWPORT, page_url  # noqa: E402
from long_text import SENTENCES, measure  # noqa: E402


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=PAGES)
    parser.add_argument("--sizes", nargs="+", default=list(SENTENCES), choices=list(SENTENCES))
    parser.add_argument("--present", action="store_true")
    parser.add_argument("--lang", default="en", choices=["en", "zh"])
    parser.add_argument("--shots", default=None, help="save each page's first screen here")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    results: dict[str, dict[str, dict]] = {}
    with streamlit_server() as base, browser() as chromium:
        page = chromium.new_context(viewport=VIEWPORT).new_page()
        for name in args.pages:
            for size in args.sizes:
                url = page_url(base, name, args.present, args.lang, {"text": SENTENCES[size]})
                shot = f"{args.shots}/{name}-{size}-{'p' if args.present else 'n'}-{args.lang}.png" if args.shots else None
                r = results.setdefault(name, {})[size] = measure(page, url, shot)
                log(f"{name} {size}: {r['height']} px, {r['dropped']} labels dropped")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    rows = [[name] + [f"{results[name][s]['height']} px" + (f", {results[name][s]['dropped']} dropped"
                                                            if results[name][s]["dropped"] else "")
                      for s in args.sizes] for name in args.pages]
    body = table(["page"] + [f"{s} words" for s in args.sizes], rows)
    print(body)
    return Section("long_sentences", "Page heights with long sentences (1280x720)", body, [])


if __name__ == "__main__":
    main()
