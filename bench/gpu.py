"""The numbers issue 16 ("GPU/CPU for real") asks for, on whatever device this machine has:

    python bench/gpu.py [--device cuda] [--quick]

1. forward pass with capture off / fully on at 64, 256, 512 tokens, and their ratio (on CUDA a capture
   keeps tensors on the GPU and brings them over at the end, in one go: model/capture/trace.py);
2. evaluate: beam-4 BLEU and seconds on the first N test pairs, decoded in batches (batch_translate);
3. greedy decoding latency of one 256-token source (static key/value cache; on CUDA each step is a
   replayed CUDA graph: model/inference/decode.py greedy_static);
4. training throughput (tokens/s) of the en-es architecture on random batches of each --max-tokens,
   bf16 autocast, fused Adam and pinned batches on CUDA, float32 on the CPU.
It prints the device first: compare numbers only between runs on the same one. --write puts the
numbers and issue 16's GPU targets (checked only on CUDA) in docs/performance.md's gpu section.
"""
from __future__ import annotations

import argparse
import time

from common import EN_ES, Check, Section, median, ms, report, table

import torch

from model.capture.hooks import capture
from model.inference.batch_translate import translate_many
from model.inference.decode import greedy
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument, describe_device
from model.training.evaluate import score
from model.training.runtime import Runtime, paper_adam, train_step


def timed(fn, repeats: int) -> float:
    """Median seconds of fn(), the device's queue drained at both ends (CUDA runs asynchronously)."""
    fn()                                                         # warm-up: kernels, allocator
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return median(times)


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def random_ids(model, n: int, rows: int = 1, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, model.cfg.vocab_size, (rows, n), generator=g)
    ids[:, -1] = model.cfg.eos_id
    return ids.to(model.device)                                  # [rows,n]


CAPTURE_LENGTHS = (64, 256, 512)


def forward_passes(model, n: int):
    """One forward pass over n random source and target tokens, capture off and fully on: two callables to time."""
    src, tgt = random_ids(model, n), random_ids(model, n, seed=1)

    def off():
        model(src, tgt)

    def full():
        with capture():
            model(src, tgt)

    return off, full


@torch.no_grad()
def capture_ratios(model, repeats: int) -> list[list]:
    rows = []
    for n in CAPTURE_LENGTHS:
        off, full = (timed(fn, repeats) for fn in forward_passes(model, n))
        rows.append([n, ms(off), ms(full), f"{full / off:.2f}×", full / off])
    return rows


def evaluate(bundle, pairs: int, beam: int = 4) -> list:
    from model.training.corpus import read_tsv

    data = read_tsv(EN_ES / "test.tsv")[:pairs]
    start = time.perf_counter()
    hyps = translate_many(bundle, [s for s, _ in data], beam=beam, style="bible")   # the Bible test, in its style
    seconds = time.perf_counter() - start
    return [len(data), beam, f"{score(hyps, [t for _, t in data])['bleu']:.2f}", f"{seconds:.1f} s", seconds]


def greedy_latency(model, repeats: int) -> list:
    src = random_ids(model, 256)[0].tolist()
    n = len(greedy(model, src, max_len=256).ids)
    t = timed(lambda: greedy(model, src, max_len=256), repeats)
    path = "CUDA graph replays" if model.device.type == "cuda" else "static cache"
    return [256, n, path, ms(t), ms(t / n), t]


def training_throughput(bundle, max_tokens: int, steps: int) -> list:
    """Tokens/s of train_step (fused Adam and pinned batches on CUDA: model/training/runtime.py) at one batch size."""
    from model.nn.transformer import Transformer

    rt = Runtime(bundle.model.device)
    model = Transformer(bundle.config).to(rt.device).train()
    opt = paper_adam(model, 1e-4)
    rows, width = max_tokens // 64, 32                           # 32-token sources and targets
    src, tgt = random_ids(model, width, rows).cpu(), random_ids(model, width + 1, rows, seed=1).cpu()
    n_targets = tgt[:, 1:].numel()

    def step():
        train_step(model, opt, src, tgt[:, :-1], tgt[:, 1:], n_targets, rt, smoothing=0.1, clip=1.0)

    for _ in range(2):
        step()                                                   # warm-up
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    seconds = time.perf_counter() - start
    tokens = steps * (src.numel() + n_targets)
    return [max_tokens, rows, f"{steps}", "bf16 autocast" if rt.device.type == "cuda" else "float32",
            f"{tokens / seconds:,.0f}", tokens / seconds]


# issue 16's targets, for a GPU (on the CPU the numbers are informational: no target is stated there)
GPU_TARGETS = {"capture": 2.0, "evaluate_s": 10.0, "greedy_s": 0.2, "train_tokens_s": 200_000}


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description="Capture, decoding and training speed on this machine's device.")
    add_device_argument(parser)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 50 evaluation pairs, 5 training steps")
    parser.add_argument("--pairs", type=int, default=1000, help="evaluation pairs (first N of the en-es test set)")
    parser.add_argument("--max-tokens", type=int, nargs="+", default=[4096, 32768],
                        help="training: tokens per batch, one row each (the shipped run used 4096)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads on the CPU")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md (its gpu section)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    bundle = load_checkpoint(EN_ES, device=args.device)
    model = bundle.model
    repeats, pairs, steps = (3, 50, 5) if args.quick else (10, args.pairs, 20)
    device = describe_device(model.device)
    print(f"device: {device}; torch {torch.__version__}\n")
    capture_rows = capture_ratios(model, repeats)
    evaluation = evaluate(bundle, pairs)
    greedy_row = greedy_latency(model, repeats)
    training = [training_throughput(bundle, n, steps) for n in args.max_tokens]
    body = "\n\n".join([
        f"Device: **{device}**, torch {torch.__version__}. Compare numbers only between runs on the same device.",
        table(["tokens", "capture off", "full capture", "ratio"], [row[:4] for row in capture_rows]),
        table(["pairs", "beam", "BLEU", "batched seconds"], [evaluation[:4]]),
        table(["source tokens", "generated", "decoding", "greedy latency", "per token"], [greedy_row[:5]]),
        table(["tokens a batch", "rows", "steps", "precision", "training tokens/s"], [row[:5] for row in training])])
    on_gpu = model.device.type == "cuda"

    def check(target: str, measured: str, ok: bool | None) -> Check:
        return Check(target + ("" if on_gpu else " (a GPU target; measured here on the CPU)"), measured,
                     ok if on_gpu else None)

    worst = max(capture_rows, key=lambda row: row[4])
    fastest = max(training, key=lambda row: row[5])
    checks = [check(f"full capture ≤ {GPU_TARGETS['capture']:g}× capture off, 64–512 tokens", worst[3],
                    worst[4] <= GPU_TARGETS["capture"]),
              check(f"beam-4 evaluation, all 1,000 test pairs ≤ {GPU_TARGETS['evaluate_s']:g} s",
                    f"{evaluation[3]} ({evaluation[0]} pairs)",
                    evaluation[4] <= GPU_TARGETS["evaluate_s"] if evaluation[0] >= 1000 else None),
              check(f"greedy, 256-token source ≤ {GPU_TARGETS['greedy_s']:g} s", greedy_row[3],
                    greedy_row[5] <= GPU_TARGETS["greedy_s"]),
              check(f"training ≥ {GPU_TARGETS['train_tokens_s']:,} tokens/s", f"{fastest[4]} ({fastest[0]:,} tokens a batch)",
                    fastest[5] >= GPU_TARGETS["train_tokens_s"])]
    return report(Section("gpu", "GPU/CPU: capture, batched decoding, greedy latency, training", body, checks),
                  args.write)


if __name__ == "__main__":
    main()
