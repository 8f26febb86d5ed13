"""Forward latency of our Transformer with capture off and fully on, against torch.nn.Transformer of
the same size carrying OUR weights (so both compute the same function: the max |difference| of the
logits is printed and asserted).

    python bench/forward.py [--quick] [--write]

Targets: capture off <= 1.1x torch.nn.Transformer; full capture <= 1.5x capture off.
"""
from __future__ import annotations

import argparse
import math
import time

from common import Check, Section, load_bench_bundle, log, median, ms, report, secs, table

import torch
from torch import nn

from model.capture.hooks import capture

TOKENS = (16, 64, 256, 512)
TOLERANCE = 1e-3  # float32, different kernels and summation order


class TorchReference(nn.Module):
    """torch.nn.Transformer (eval fast path) plus the same embeddings, PE and generator as ours."""

    def __init__(self, ours):
        super().__init__()
        cfg = ours.cfg
        self.cfg = cfg
        self.core = nn.Transformer(d_model=cfg.d_model, nhead=cfg.n_heads, num_encoder_layers=cfg.n_encoder_layers,
                                   num_decoder_layers=cfg.n_decoder_layers, dim_feedforward=cfg.d_ff, dropout=0.0,
                                   layer_norm_eps=cfg.ln_eps, batch_first=True, norm_first=cfg.norm_first)
        if not cfg.has_final_norm:  # the paper's post-norm: our stacks have no final LayerNorm
            self.core.encoder.norm = None
            self.core.decoder.norm = None
        self.src_tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.tgt_tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.generator = nn.Linear(cfg.d_model, cfg.vocab_size)
        self.register_buffer("src_pe", ours.src_embed.pos.table.detach().clone())
        self.register_buffer("tgt_pe", ours.tgt_embed.pos.table.detach().clone())
        self.scale = math.sqrt(cfg.d_model)
        copy_weights(ours, self)

    def forward(self, src, tgt):                                          # [B,S], [B,T] -> [B,T,V]
        x = self.src_tok(src) * self.scale + self.src_pe[: src.size(1)]
        y = self.tgt_tok(tgt) * self.scale + self.tgt_pe[: tgt.size(1)]
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1), dtype=x.dtype)
        memory = self.core.encoder(x)
        out = self.core.decoder(y, memory, tgt_mask=causal, tgt_is_causal=True)
        return self.generator(out)


@torch.no_grad()
def copy_weights(ours, ref: TorchReference) -> None:
    ref.src_tok.weight.copy_(ours.src_embed.token.weight)
    ref.tgt_tok.weight.copy_(ours.tgt_embed.token.weight)
    ref.generator.weight.copy_(ours.generator.proj.weight)
    ref.generator.bias.copy_(ours.generator.proj.bias)
    for mine, theirs in zip(ours.encoder.layers, ref.core.encoder.layers):
        _attention(mine.self_attn, theirs.self_attn)
        _feed_forward(mine.ff, theirs)
        _norm(mine.norm_attn, theirs.norm1)
        _norm(mine.norm_ff, theirs.norm2)
    for mine, theirs in zip(ours.decoder.layers, ref.core.decoder.layers):
        _attention(mine.self_attn, theirs.self_attn)
        _attention(mine.cross_attn, theirs.multihead_attn)
        _feed_forward(mine.ff, theirs)
        _norm(mine.norm_attn, theirs.norm1)
        _norm(mine.norm_cross, theirs.norm2)
        _norm(mine.norm_ff, theirs.norm3)
    if ours.cfg.has_final_norm:
        _norm(ours.encoder.norm, ref.core.encoder.norm)
        _norm(ours.decoder.norm, ref.core.decoder.norm)


def _attention(mine, theirs: nn.MultiheadAttention) -> None:
    theirs.in_proj_weight.copy_(torch.cat([mine.w_q.weight, mine.w_k.weight, mine.w_v.weight]))  # [3D,D]
    theirs.in_proj_bias.copy_(torch.cat([mine.w_q.bias, mine.w_k.bias, mine.w_v.bias]))
    theirs.out_proj.weight.copy_(mine.w_o.weight)
    theirs.out_proj.bias.copy_(mine.w_o.bias)


def _feed_forward(mine, theirs) -> None:
    theirs.linear1.weight.copy_(mine.w_1.weight)
    theirs.linear1.bias.copy_(mine.w_1.bias)
    theirs.linear2.weight.copy_(mine.w_2.weight)
    theirs.linear2.bias.copy_(mine.w_2.bias)


def _norm(mine, theirs) -> None:
    theirs.weight.copy_(mine.weight)
    theirs.bias.copy_(mine.bias)


def variants(model, ref):
    def off(src, tgt):
        return model(src, tgt)

    def full(src, tgt):
        with capture():
            return model(src, tgt)

    return {"capture off": off, "full capture": full, "torch.nn.Transformer": ref}


@torch.no_grad()
def measure(model, ref, n: int, repeats: int, warmup: int = 2) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds per variant (rounds interleave the variants) and max |logit difference| vs ours."""
    gen = torch.Generator().manual_seed(n)
    src = torch.randint(3, model.cfg.vocab_size, (1, n), generator=gen)
    tgt = torch.randint(3, model.cfg.vocab_size, (1, n), generator=gen)
    tgt[0, 0] = model.cfg.bos_id
    fns = variants(model, ref)
    reference = model(src, tgt)
    diffs = {name: float((fn(src, tgt) - reference).abs().max()) for name, fn in fns.items()}
    for _ in range(warmup):
        for fn in fns.values():
            fn(src, tgt)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn(src, tgt)
            times[name].append(time.perf_counter() - start)
    return {name: median(t) for name, t in times.items()}, diffs


@torch.no_grad()
def server_work(bundle, n_tokens: int, seed: int = 0) -> dict:
    """Seconds of each step the explorer runs for one new sentence, outside Streamlit."""
    from common import SentenceMaker
    from model.inference.pipeline import encode_text, generate
    from model.capture import schema
    from viz.core.i18n import words
    from viz.figures.attention import attention_heatmap, model_view
    from viz.figures.style import Look
    from viz.core.text import position_labels

    text = SentenceMaker(seed).sentence(n_tokens)
    cfg, model = bundle.config, bundle.model
    t0 = time.perf_counter()
    src = encode_text(bundle, text, max_tokens=512)
    out_ids = generate(bundle, src.ids)
    t1 = time.perf_counter()
    tgt_in = torch.tensor([[cfg.bos_id] + out_ids[:-1]])
    with capture() as trace:                          # what trace_sentence does after decoding
        model(torch.tensor([src.ids]), tgt_in)
    t2 = time.perf_counter()
    labels = position_labels(bundle.tokenizer.token_strings(src.ids))
    patterns = schema.stacked(trace, "encoder")
    look = Look(words("en"))
    figures = [model_view(patterns, look, selected=(0, 0)), attention_heatmap(patterns[0, 0], labels, labels, look)]
    t3 = time.perf_counter()
    payload = sum(len(f.to_json()) for f in figures)
    t4 = time.perf_counter()
    return {"tokens": len(src.ids), "generated": len(out_ids), "greedy": t1 - t0,
            "capture pass": t2 - t1, "figures": t3 - t2, "to_json": t4 - t3,
            "payload": payload}


def shared_decoding(bundle, n_sentences: int = 20, n_tokens: int = 16, seed: int = 5) -> dict:
    """Greedy decoding of n different sentences one by one, then from n threads at once as n sessions do
    (model/batching.py decodes whoever waits in one batch): seconds, batch sizes, ids identical?"""
    import threading

    from common import SentenceMaker
    from model.inference.decode import default_max_len, greedy
    from model.inference.pipeline import encode_text

    maker = SentenceMaker(seed)
    sources = [encode_text(bundle, maker.sentence(n_tokens)).ids for _ in range(n_sentences)]
    t0 = time.perf_counter()
    alone = [greedy(bundle.model, ids).ids for ids in sources]
    t1 = time.perf_counter()
    shared: dict[int, list[int]] = {}
    batcher = bundle.batcher
    batcher.batch_sizes.clear()

    def session(i: int) -> None:
        shared[i] = batcher.greedy(sources[i], default_max_len(bundle.model, len(sources[i])))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(n_sentences)]
    t2 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t3 = time.perf_counter()
    return {"sentences": n_sentences, "tokens": n_tokens, "generated": sum(map(len, alone)),
            "one by one": t1 - t0, "shared": t3 - t2, "batches": list(batcher.batch_sizes),
            "identical": sum(shared[i] == alone[i] for i in range(n_sentences))}


def repeats_for(n: int, quick: bool) -> int:
    if quick:
        return 5
    return {16: 60, 64: 40, 256: 25, 512: 15}.get(n, 10)  # long inputs: more repeats, their medians are noisier


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="16 and 64 tokens, 5 repeats")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    parser.add_argument("--threads", default="1,2", help="torch thread counts to measure, comma-separated")
    args = parser.parse_args(argv)
    bundle, description = load_bench_bundle()
    model = bundle.model.eval()
    ref = TorchReference(model).eval()
    cfg = model.cfg
    tokens = (16, 64) if args.quick else TOKENS
    rows, checks = [], []
    for threads in map(int, args.threads.split(",")):
        torch.set_num_threads(threads)
        for n in (n for n in tokens if n <= cfg.max_len):
            log(f"forward: {n} tokens, {threads} threads")
            t, diffs = measure(model, ref, n, repeats_for(n, args.quick))
            off, full, torch_t = t["capture off"], t["full capture"], t["torch.nn.Transformer"]
            worst = max(diffs.values())
            assert worst < TOLERANCE, f"outputs differ at {n} tokens: {diffs}"
            rows.append([threads, n, ms(torch_t), ms(off), ms(full), f"{off / torch_t:.2f}×", f"{full / off:.2f}×",
                         f"{worst:.1e}"])
            where = f"{n} tokens, {threads} thread{'s' * (threads > 1)}"
            checks.append(Check(f"capture off ≤ 1.1× torch.nn.Transformer, {where}", f"{off / torch_t:.2f}×",
                                off / torch_t <= 1.1))
            checks.append(Check(f"full capture ≤ 1.5× capture off, {where}", f"{full / off:.2f}×", full / off <= 1.5))
    work_rows = []
    torch.set_num_threads(1)                                   # as the app decodes (viz/services/models.py)
    server_work(bundle, 16)               # warm-up: plotly builds its validators on the first figure (~0.1 s)
    for n in ((32,) if args.quick else (32, 128, 256)):
        log(f"forward: server work for a {n}-token sentence")
        w = server_work(bundle, n)
        work_rows.append([w["tokens"], w["generated"], ms(w["greedy"]), ms(w["capture pass"]), ms(w["figures"]),
                          ms(w["to_json"]), f"{w['payload'] / 2**20:.1f} MiB"])
    log("forward: shared decoding, 20 sentences")
    d = shared_decoding(bundle)
    shared_row = [[d["sentences"], d["tokens"], d["generated"], secs(d["one by one"]), secs(d["shared"]),
                   f"{d['one by one'] / d['shared']:.1f}×", " + ".join(map(str, d["batches"])),
                   f"{d['identical']}/{d['sentences']}"]]
    checks.append(Check(f"shared decoding gives each of {d['sentences']} sentences its own ids, as decoded alone",
                        f"{d['identical']}/{d['sentences']} identical", d["identical"] == d["sentences"]))
    body = "\n".join([
        "One forward pass (teacher forcing, batch 1, source and target both *n* tokens, eval mode), median of "
        "interleaved repeats, on 1 torch thread as the app runs its capture pass (`viz/services/models.py`) and on 2, the "
        "default of a script on this machine (`python -m model.cli trace`). Model: "
        f"{description}: "
        f"d_model {cfg.d_model}, {cfg.n_heads} heads, {cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers, "
        f"d_ff {cfg.d_ff}, vocabulary {cfg.vocab_size}, {'pre' if cfg.norm_first else 'post'}-norm. "
        "`torch.nn.Transformer` is built with the same sizes (dropout 0, batch_first, same norm placement), "
        "gets our weights copied in and the same embeddings, positional encoding and output layer; "
        "the last column is the largest |difference| of any logit against ours (capture off), proving "
        "the three compute the same function.",
        "",
        table(["threads", "tokens", "torch.nn.Transformer", "ours, capture off", "ours, full capture",
               "off / torch", "full / off", "max |Δ logit|"], rows),
        "",
        "**Where a new sentence's time goes on the server** (the explorer's work outside Streamlit, one run each): "
        "on 1 torch thread as in the app: greedy decoding (with the key/value cache), the teacher-forced "
        "full-capture pass over the output, the two explorer figures (all-heads grid + one head), and their "
        "JSON, which is what travels to the browser. The sentences are random English words, on which the model "
        "often runs to its length limit (1.5 × source + 10) instead of stopping near the source length.",
        "",
        table(["source tokens", "generated", "greedy decoding", "capture pass", "figures", "figure JSON",
               "JSON size"], work_rows),
        "",
        "**Decoding for many sessions at once** (1 torch thread): greedy decoding of 20 different random "
        "16-token sentences one after another, then called from 20 threads at the same moment, as 20 "
        "sessions do. `model/batching.py` decodes whoever is waiting in one padded batch: a step reads the "
        "weights (~18 MB, from memory rather than cache) once for the whole batch instead of once per "
        "sentence. The first caller finds the model idle and starts alone; the others wait and go together.",
        "",
        table(["sentences", "tokens each", "tokens generated", "one by one", "20 threads, shared batches",
               "speed-up", "batch sizes", "ids identical to alone"], shared_row),
    ])
    return Section("forward", "Forward pass: capture off, full capture, torch.nn.Transformer", body, checks)


if __name__ == "__main__":
    args = __import__("sys").argv[1:]
    report(main(args), "--write" in args)
