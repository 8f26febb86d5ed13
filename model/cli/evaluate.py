"""Score a translation checkpoint with sacrebleu: python -m model.cli evaluate --model pretrained/en-es --test pretrained/en-es/test.tsv."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from tqdm import tqdm

from model.inference.pipeline import translate
from model.io.checkpoint import load_checkpoint
from model.training.evaluate import score


def main(argv=None) -> dict:
    from model.training.corpus import read_tsv

    parser = argparse.ArgumentParser(description="Evaluate a translation checkpoint with sacrebleu.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--test", required=True, help="TSV with en and es columns")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    parser.add_argument("--also-greedy", action="store_true", help="also score greedy decoding as a baseline")
    parser.add_argument("--out", default=None, help="metrics file (default: MODEL/metrics.json)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    bundle = load_checkpoint(args.model)
    pairs = read_tsv(args.test)[: args.limit]
    sources, references = [s for s, _ in pairs], [t for _, t in pairs]
    metrics = {"test_file": Path(args.test).name, "pairs": len(pairs)}
    for beam in ([1] if args.also_greedy else []) + [args.beam]:
        start = time.perf_counter()
        hyps = [translate(bundle, s, beam=beam) for s in tqdm(sources, desc=f"beam {beam}")]
        result = score(hyps, references)
        result["seconds"] = round(time.perf_counter() - start, 1)
        metrics["greedy" if beam == 1 else f"beam{beam}"] = result
        print(f"beam {beam}: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  ({result['seconds']} s)")
    out = Path(args.out) if args.out else Path(args.model) / "metrics.json"
    previous = json.loads(out.read_text()) if out.is_file() else {}
    previous.update(metrics)
    out.write_text(json.dumps(previous, indent=2, ensure_ascii=False) + "\n")
    return metrics


if __name__ == "__main__":
    main()
