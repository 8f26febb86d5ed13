"""Memory: trace sizes, the server's RSS with 10 sessions open, and RSS over many different sentences
through the app's cached trace function (bounded cache: RSS must level off).

    python bench/memory.py [--quick] [--write]

RSS is VmRSS from /proc/<pid>/status, children included (psutil is not a dependency).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import (MAPS_DRAWN_JS, ROOT, Check, Section, SentenceMaker, Server, app_models, explorer_url,
                    load_bench_bundle, log, mb, new_labels, report, rss_bytes, table)

SERVER_TARGET = 2**30          # 1 GiB with 10 sessions open
TRACE_TOKENS = (16, 64, 128, 256, 512)
FLAT_TOLERANCE = 1.10          # RSS after all sentences <= 1.1x RSS once the cache is full


def cache_budget() -> int:
    from viz.services.traces import TRACE_CACHE_MB
    return TRACE_CACHE_MB * 2**20


# -- 1. trace size per token count ----------------------------------------------------------------
def trace_sizes(tokens=TRACE_TOKENS) -> list[list]:
    import torch

    from model.capture import schema
    from model.capture.hooks import capture
    bundle, _ = load_bench_bundle()
    model, rows = bundle.model.eval(), []
    for n in tokens:
        src = torch.randint(3, model.cfg.vocab_size, (1, n))
        tgt = torch.randint(3, model.cfg.vocab_size, (1, n))
        with torch.no_grad(), capture() as trace:
            model(src, tgt)
        patterns = sum(a.nbytes for k, a in trace.arrays.items() if k.endswith(("hook_pattern", "hook_scores")))
        rows.append([n, len(trace.arrays), mb(trace.nbytes), mb(patterns),
                     mb(trace.arrays[schema.LOGITS].nbytes), cache_budget() // max(1, trace.nbytes)])
        del trace
    return rows


# -- 2. the server with 10 sessions --------------------------------------------------------------
def server_rss(n_sessions: int) -> tuple[list[list], int]:
    from browser_utils import browser
    maker, rows = SentenceMaker(seed=2), []
    with app_models() as (env, model_id, description), Server(env) as server, browser() as chromium:
        time.sleep(1)
        rows.append(["server started, no session", mb(server.rss())])
        pages = []
        for i in range(n_sessions):
            text = maker.sentence(32)
            context = chromium.new_context(viewport={"width": 1600, "height": 1000})  # a separate session
            page = context.new_page()
            page.goto(explorer_url(server.url, model_id, text))
            page.wait_for_function(MAPS_DRAWN_JS, arg=maker.labels(text), timeout=600_000, polling=200)
            pages.append(page)
            log(f"memory: session {i + 1} open, RSS {mb(server.rss())}")
            if i == 0:
                rows.append(["1 session, model loaded, 32-token sentence", mb(server.rss())])
        peak = server.rss()
        rows.append([f"{n_sessions} sessions open, each a different 32-token sentence", mb(peak)])
        for page in pages:
            page.context.close()
    return rows, peak


# -- 2b. one long-lived session: many submissions, the server's RSS (no post-run gc.collect) -------
def server_reruns(n_sentences: int, every: int) -> list[tuple[int, int]]:
    """(submissions so far, server RSS in bytes) every `every` new sentences in one browser session."""
    from browser_utils import browser
    maker, rows = SentenceMaker(seed=5), []
    with app_models() as (env, model_id, _description), Server(env) as server, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1600, "height": 1000})
        first = maker.sentence(32)
        page.goto(explorer_url(server.url, model_id, first))
        page.wait_for_function(MAPS_DRAWN_JS, arg=maker.labels(first), timeout=600_000, polling=200)
        rows.append((0, server.rss()))
        previous = first
        for i in range(1, n_sentences + 1):
            text = maker.sentence(32)
            box = page.get_by_label("Sentence", exact=True)
            box.fill(text)
            box.press("Control+Enter")
            page.wait_for_function(MAPS_DRAWN_JS, arg=new_labels(maker.labels(text), maker.labels(previous)),
                                   timeout=600_000, polling=100)
            previous = text
            if i % every == 0:
                rows.append((i, server.rss()))
                log(f"memory: {i} submissions in one session, RSS {mb(rows[-1][1])}")
    return rows


# -- 3. many sentences through viz.services.traces.get_trace (child process: a clean RSS) -------------------
def cache_worker(n_sentences: int, n_tokens: int, every: int) -> None:
    """Runs in a child: prints JSON lines {done, rss} while tracing n different sentences."""
    from common import BENCH_MODEL_ID, en_es_available
    from viz.services import models, traces
    model_id = "en-es" if en_es_available() else BENCH_MODEL_ID
    maker = SentenceMaker(seed=3)
    models.load_bundle(model_id)
    print(json.dumps({"done": 0, "rss": rss_bytes(os.getpid(), children=False), "cached": 0}), flush=True)
    for i in range(1, n_sentences + 1):
        traces.get_trace(model_id, maker.sentence(n_tokens), None, 1, 128)
        if i % every == 0 or i == n_sentences:
            print(json.dumps({"done": i, "rss": rss_bytes(os.getpid(), children=False),
                              "cached": traces.trace_cache().nbytes, "entries": len(traces.trace_cache())}), flush=True)


def cache_rss(n_sentences: int, n_tokens: int) -> list[dict]:
    every = max(1, n_sentences // 20)
    with app_models() as (env, _model_id, _description):
        cmd = [sys.executable, __file__, "--cache-worker", str(n_sentences), str(n_tokens), str(every)]
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE, text=True,
                                stderr=subprocess.DEVNULL)
        samples = []
        for line in proc.stdout:
            if line.startswith("{"):
                samples.append(json.loads(line))
                log(f"memory: {samples[-1]['done']} sentences, RSS {mb(samples[-1]['rss'])}")
        if proc.wait() != 0:
            raise RuntimeError(f"cache worker failed with code {proc.returncode}")
    return samples


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 sessions, 150 sentences, traces up to 128 tokens")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    parser.add_argument("--sentences", type=int, default=None, help="sentences through the cache (default 500)")
    args = parser.parse_args(argv)
    n_sessions = 3 if args.quick else 10
    n_sentences = args.sentences or (150 if args.quick else 500)
    cache_tokens = 32

    log("memory: trace sizes")
    size_rows = trace_sizes((16, 64, 128) if args.quick else TRACE_TOKENS)
    log("memory: server with sessions")
    server_rows, peak = server_rss(n_sessions)
    log("memory: one session, many submissions")
    rerun_rows = server_reruns(*((120, 40) if args.quick else (150, 25)))
    log("memory: sentences through the cached trace function")
    samples = cache_rss(n_sentences, cache_tokens)

    # steady state: from half-way (the cache is full after ~70 sentences of 32 tokens) to the end
    settled = n_sentences // 2
    full_at = next(s for s in samples if s["done"] >= settled)
    final = samples[-1]
    flat = final["rss"] <= FLAT_TOLERANCE * full_at["rss"]
    body = "\n".join([
        "**Trace size** (one full capture, every hook point, float32; source and target both *n* tokens). "
        f"The trace cache (`viz/services/trace_cache.py`, one per server) is bounded by bytes "
        f"({cache_budget() / 2**20:.0f} MiB, `TRANSFORMER_VIZ_TRACE_CACHE_MB`) and age (1 h), least recently "
        "used out first; the last column is how many traces of that length it holds.",
        "",
        table(["tokens", "arrays", "trace (Trace.nbytes)", "of which scores + patterns", "of which logits",
               "traces the cache holds"], size_rows),
        "",
        "**Server RSS** (`streamlit run app.py`, /proc VmRSS incl. children), sessions are separate browser "
        "contexts on `/explorer`:",
        "",
        table(["state", "RSS"], server_rows),
        "",
        "**Server RSS over many submissions in one session** (32-token sentences, each new; Streamlit's "
        "per-run `gc.collect()` is off, `.streamlit/config.toml`; the trace cache fills after ~65 sentences):",
        "",
        table(["submissions", "server RSS"], [[n, mb(rss)] for n, rss in rerun_rows]),
        "",
        f"**RSS over {n_sentences} different sentences** ({cache_tokens} tokens each, greedy, default token limit) "
        "through `viz.services.traces.get_trace` itself, called in a separate Python process (Streamlit's cache works "
        "without a server), so the numbers are the cache's and the model's alone:",
        "",
        table(["sentences traced", "RSS", "trace cache"], [[s["done"], mb(s["rss"]), mb(s["cached"])] for s in samples]),
    ])
    rerun_growth = rerun_rows[-1][1] / rerun_rows[len(rerun_rows) // 2][1]
    checks = [
        Check(f"server RSS with {n_sessions} sessions ≤ 1 GiB", mb(peak), peak <= SERVER_TARGET),
        Check(f"server RSS flat over one session's submissions ({rerun_rows[-1][0]} vs "
              f"{rerun_rows[len(rerun_rows) // 2][0]}, ≤ {FLAT_TOLERANCE:.2f}×)", f"{rerun_growth:.2f}×",
              rerun_growth <= FLAT_TOLERANCE),
        Check(f"RSS flat once the cache is full ({final['done']} vs {full_at['done']} sentences, ≤ "
              f"{FLAT_TOLERANCE:.2f}×)", f"{final['rss'] / full_at['rss']:.2f}×", flat),
    ]
    return Section("memory", "Memory", body, checks)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--cache-worker":
        cache_worker(*map(int, sys.argv[2:5]))
    else:
        report(main(sys.argv[1:]), "--write" in sys.argv[1:])
