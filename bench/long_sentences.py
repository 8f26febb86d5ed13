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
from chart_text import PAGES, VIEWPORT, page_url, settle  # noqa: E402

SHORT = "The cat sat on the mat near the door."
CLAUSE = ("the students in the back row read the long sentence on the wall while the teacher explains how "
          "attention moves words ")
SENTENCES = {"9": SHORT,
             "40": "Today " + CLAUSE + "and then " + CLAUSE.strip() + " to the class.",
             "max": "Today " + " and ".join([CLAUSE.strip()] * 12) + "."}   # cut at the default 128 tokens

# every category axis of every chart on view (not in a folded expander or another tab) that labels each
# category (not one that labels chosen ones, tickvals): how many labels it has and how many plotly drew
TICKS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd.offsetParent).flatMap(gd => {
  const full = gd._fullLayout || {};
  return Object.keys(full).filter(k => /^[xy]axis\\d*$/.test(k) && full[k].type === 'category' && full[k].visible
                                      && full[k].showticklabels && full[k].tickmode !== 'array')
    .map(k => { const ax = full[k];
                const cats = (ax._categories || []).length;
                const drawn = gd.querySelectorAll('.' + ax._id + 'tick text').length;
                return {axis: ax._id, categories: cats, drawn: drawn}; });
})"""
HEIGHT_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"


def measure(page, url: str, shot: str | None = None) -> dict:
    page.goto(url)
    settle(page)
    axes = page.evaluate(TICKS_JS)
    dropped = sum(max(0, a["categories"] - a["drawn"]) for a in axes)
    if shot:
        page.screenshot(path=shot, full_page=False)
    return {"height": page.evaluate(HEIGHT_JS), "dropped": dropped, "axes": axes}


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
