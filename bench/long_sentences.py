"""Long sentences, page by page: each page's height, its token labels and the time it takes, at 9 words, 40 words,
the default 128-token limit and the longest sentence cut at 200 and 512 tokens (the sidebar's max_tokens), in
Chromium at a projector's 1280x720 against `streamlit run app.py`; and the trace alone, in this process.

    python bench/long_sentences.py [--pages step layernorm] [--sizes 9 512] [--present] [--lang zh] [--shots DIR]
                                   [--write]

Per page and sentence: the main area's scrollHeight in px; labels "dropped" (plotly thins a crowded category axis
silently: the labels it did not draw); seconds from opening the page until its script has run and its charts
are drawn (the sentence's trace is made by the first page of each size, untimed, so the others find it cached);
the server's RSS after each size (the peak over the run). --write puts the table into docs/performance.md.
"""
from __future__ import annotations

import argparse
import json
import time

from common import Check, Section, Server, app_models, load_bench_bundle, log, machine_line, mb, report, table

from browser_utils import browser
from chart_text import VIEWPORT, page_url
from long_text import SENTENCES, TOKEN_LIMITS, measure, sentence_params

PAGES = ("home", "explorer", "step", "multihead", "positional", "layernorm", "ffn", "decoding", "attribution")
SIZES = (*SENTENCES, *TOKEN_LIMITS)
SCREEN_PX = VIEWPORT["height"]
# Pages not opened above a size: decoding keeps a whole trace per step, and at 512 tokens the server passed 16 GB
# of RSS on a 24 GB machine before it was stopped (at 200 tokens: 5.9 GB, 21 s).
LARGEST = {"decoding": "200"}


def trace_seconds(sizes) -> dict[str, tuple[int, float]]:
    """Per size: (source tokens, seconds to trace the sentence once, after one untimed run)."""
    from model.inference.pipeline import encode_text, trace_sentence
    bundle, _ = load_bench_bundle()
    out = {}
    for size in sizes:
        params = sentence_params(size)
        limit = params.get("max_tokens", 128)
        n = len(encode_text(bundle, params["text"], limit).ids)
        trace_sentence(bundle, params["text"], max_tokens=limit)
        started = time.perf_counter()
        trace_sentence(bundle, params["text"], max_tokens=limit)
        out[size] = (n, time.perf_counter() - started)
        log(f"trace {size}: {n} tokens, {out[size][1]:.2f} s")
    return out


def pages_in_browser(pages, sizes, present: bool, lang: str, shots: str | None, env: dict):
    results: dict[str, dict[str, dict]] = {}
    rss: dict[str, int] = {}
    with Server(env) as server, browser() as chromium:
        page = chromium.new_context(viewport=VIEWPORT).new_page()
        for size in sizes:
            params = sentence_params(size)
            measure(page, page_url(server.url, pages[0], present, lang, params))      # traces the sentence
            for name in pages:
                if name in LARGEST and SIZES.index(size) > SIZES.index(LARGEST[name]):
                    continue
                shot = f"{shots}/{name}-{size}-{'p' if present else 'n'}-{lang}.png" if shots else None
                r = results.setdefault(name, {})[size] = measure(page, page_url(server.url, name, present, lang, params),
                                                                 shot)
                log(f"{name} {size}: {r['height']} px, {r['dropped']} labels dropped, {r['seconds']:.2f} s")
            rss[size] = server.rss()
            log(f"server RSS after {size}: {mb(rss[size])}")
    return results, rss


def cell(r: dict | None) -> str:
    if r is None:
        return "not opened (memory)"
    return f"{r['height']} px" + (f", **{r['dropped']} dropped**" if r["dropped"] else "") + f", {r['seconds']:.1f} s"


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=PAGES)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--present", action="store_true")
    parser.add_argument("--lang", default="en", choices=["en", "zh"])
    parser.add_argument("--shots", default=None, help="save each page's first screen here")
    parser.add_argument("--json", default=None)
    parser.add_argument("--write", action="store_true", help="replace this section of docs/performance.md")
    args = parser.parse_args(argv)
    load = machine_line("at the start")
    traced = trace_seconds(args.sizes)
    with app_models() as (env, _model_id, description):
        results, rss = pages_in_browser(args.pages, args.sizes, args.present, args.lang, args.shots, env)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pages": results, "rss": rss, "trace": traced}, f, indent=1)
    heads = [f"{s} ({traced[s][0]} tokens)" for s in args.sizes]
    rows = [[name] + [cell(results[name].get(s)) for s in args.sizes] for name in args.pages]
    rows.append(["trace alone (this process)"] + [f"{traced[s][1]:.2f} s" for s in args.sizes])
    rows.append(["server RSS after the size"] + [mb(rss[s]) for s in args.sizes])
    mode = "presenter" if args.present else "normal"
    body = (f"{description}; Chromium 1280x720, {mode} mode, {args.lang}; {load}. Each cell: the page's height, the "
            "token labels plotly left out (none: every label drawn), the seconds from opening the page until its "
            "charts are drawn, the sentence already traced. Decoding is not opened above 200 tokens: it keeps a "
            "whole trace per step, and at 512 tokens the server passed 16 GB before it was stopped.\n\n"
            + table(["page"] + heads, rows))
    short = args.sizes[0]
    shown = [(p, s) for p in args.pages for s in args.sizes if s in results[p]]
    dropped = sum(results[p][s]["dropped"] for p, s in shown)
    too_tall = [f"{p} at {s}" for p, s in shown if results[p][s]["height"] > results[p][short]["height"] + SCREEN_PX]
    checks = [Check("no token label left out, every page and size", str(dropped), dropped == 0),
              Check(f"no page over its {short}-word height + one screen ({SCREEN_PX} px)", ", ".join(too_tall) or "none",
                    not too_tall)]
    return report(Section("long_sentences", "Long sentences (pages at 9 to 512 tokens)", body, checks), args.write)


if __name__ == "__main__":
    main()
