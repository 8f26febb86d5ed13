"""The model map (home) and the head view (explorer) at 64 tokens, beside each page's other charts.

    python bench/map_headview.py [--tokens 64] [--repeats 7] [--no-browser]

Issue 26: "drawn within 1 s of the page's other charts at 64 tokens". For each figure: the server's part
(build the figure from the trace and serialise it to JSON, as st.plotly_chart does; median of --repeats)
and the browser's part (Plotly.newPlot of that JSON in headless Chromium, median of 3). A 64-token source
sentence from the en-es test split; the target is teacher-forced to 64 tokens so every map is 64 x 64.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from common import ROOT, SentenceMaker

import plotly.io as pio

from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from viz.figures.attention import attention_heatmap, model_view, translation_figure
from viz.core.i18n import words as catalogue_words
from viz.figures.style import PRESENTER, Look
from viz.elements.map_view import head_view_figure, map_figure
from viz.core.text import attention_labels


def spanish_target(bundle, n_tokens: int) -> str:
    words = []
    for line in (ROOT / "pretrained" / "en-es" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        for word in line.split("\t")[1].split():
            words.append(word)
            if len(bundle.tokenizer.encode(" ".join(words))) >= n_tokens - 1:
                return " ".join(words)
    return " ".join(words)


def figures(trace, bundle) -> dict[str, dict]:
    """name -> (page, builder) of every chart the two pages draw, built from the trace."""
    cross = schema.stacked(trace, "cross")
    rows, cols = attention_labels(trace.meta, "cross")
    last = cross[-1].mean(0)
    n = len(rows)
    probs = [0.5] * n
    look, projector = Look(catalogue_words("en")), Look(catalogue_words("en"), PRESENTER)
    return {
        ("home", "translation (cross-attention + confidence)"):
            lambda: translation_figure(last, rows, cols, probs, [""] * n, probs, look),
        ("home", "model map (new)"):
            lambda: map_figure(trace, look, token_strings=bundle.tokenizer.token_strings),
        ("home", "model map, presenter (new)"):
            lambda: map_figure(trace, projector, token_strings=bundle.tokenizer.token_strings),
        ("explorer", "all layers x heads grid"): lambda: model_view(cross, look),
        ("explorer", "one head, large"): lambda: attention_heatmap(cross[2, 3], rows, cols, look),
        ("explorer", "head view, 8 heads (new)"): lambda: head_view_figure(cross[2], rows, cols, "cross", 2, look),
        ("explorer", "head view, presenter (new)"):
            lambda: head_view_figure(cross[2], rows, cols, "cross", 2, projector),
    }


def server_ms(build, repeats: int) -> tuple[float, str]:
    times, spec = [], ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        spec = pio.to_json(build(), validate=False)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times), spec


def browser_ms(specs: dict[str, str]) -> dict[str, float]:
    """Plotly.newPlot of each spec in Chromium (plotly.js inlined), median of 3 draws each."""
    from browser_utils import browser
    plotly_js = (Path(pio.__file__).parents[1] / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    names = list(specs)
    page = ("<html><head><meta charset='utf-8'><script>" + plotly_js + "</script></head><body>"
            "<div id='g' style='width:860px'></div><script>window.SPECS=" +
            json.dumps([json.loads(specs[n]) for n in names]) + ";</script></body></html>")
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as f:
        f.write(page)
    out = {}
    with browser() as b:
        tab = b.new_page(viewport={"width": 1280, "height": 720})
        tab.goto(f"file://{f.name}")
        for i, name in enumerate(names):
            runs = tab.evaluate("""async (i) => { const out = [];
                for (let r = 0; r < 3; r++) { const g = document.getElementById('g'); Plotly.purge(g);
                  const t0 = performance.now(); await Plotly.newPlot(g, SPECS[i].data, SPECS[i].layout);
                  await new Promise(requestAnimationFrame); out.push(performance.now() - t0); }
                return out; }""", i)
            out[name] = statistics.median(runs)
    Path(f.name).unlink()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args(argv)
    bundle = load_checkpoint(ROOT / "pretrained" / "en-es")
    text = SentenceMaker(seed=26).sentence(args.tokens)
    trace = trace_sentence(bundle, text, target=spanish_target(bundle, args.tokens))
    n_src, n_tgt = len(trace.meta["src_tokens"]), len(trace.meta["tgt_out_tokens"])
    print(f"en-es, {n_src} source x {n_tgt} target tokens; server = build + to_json (median of {args.repeats}),"
          f" browser = Plotly.newPlot in Chromium (median of 3)")
    server, specs = {}, {}
    for key, build in figures(trace, bundle).items():
        server[key], specs[key] = server_ms(build, args.repeats)
    drawn = {} if args.no_browser else browser_ms({f"{p}: {n}": s for (p, n), s in specs.items()})
    print(f"{'page':9} {'chart':45} {'server ms':>10} {'browser ms':>11} {'KB':>7}")
    for (page, name), ms in server.items():
        b = drawn.get(f"{page}: {name}")
        print(f"{page:9} {name:45} {ms:10.1f} {('%.1f' % b) if b is not None else '-':>11} "
              f"{len(specs[(page, name)]) / 1024:7.1f}")
    for page in ("home", "explorer"):
        old = [k for k in server if k[0] == page and "(new)" not in k[1]]
        new = [k for k in server if k[0] == page and "(new)" in k[1] and "presenter" not in k[1]]
        total = lambda keys: sum(server[k] + drawn.get(f"{k[0]}: {k[1]}", 0.0) for k in keys)  # noqa: E731
        print(f"{page}: other charts {total(old):.0f} ms, the new chart {total(new):.0f} ms "
              f"(target: the new one within 1000 ms of the others)")


if __name__ == "__main__":
    main()
