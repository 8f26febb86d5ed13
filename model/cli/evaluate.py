"""Score a translation checkpoint with sacrebleu: python -m model.cli evaluate --model pretrained/en-es --test pretrained/en-es/test.tsv.

Sentences are decoded in length-sorted batches (model/inference/batch_translate.py); --one-by-one
decodes them singly, as before, to compare.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from tqdm import tqdm

from model.inference.batch_translate import DEFAULT_BATCH_TOKENS, translate_many
from model.inference.pipeline import translate
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument, describe_device
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
    parser.add_argument("--batch-tokens", type=int, default=DEFAULT_BATCH_TOKENS,
                        help="padded source tokens per batch, each beam row counted")
    parser.add_argument("--one-by-one", action="store_true", help="decode sentence by sentence (no batches)")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    bundle = load_checkpoint(args.model, device=args.device)
    print(f"device: {describe_device(bundle.model.device)}")
    pairs = read_tsv(args.test)[: args.limit]
    sources, references = [s for s, _ in pairs], [t for _, t in pairs]
    metrics = {"test_file": Path(args.test).name, "pairs": len(pairs)}
    for beam in ([1] if args.also_greedy else []) + [args.beam]:
        start = time.perf_counter()
        hyps = decode_all(bundle, sources, beam, args.batch_tokens, args.one_by_one)
        result = score(hyps, references)
        result["seconds"] = round(time.perf_counter() - start, 1)
        metrics["greedy" if beam == 1 else f"beam{beam}"] = result
        print(f"beam {beam}: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  ({result['seconds']} s)")
    out = Path(args.out) if args.out else Path(args.model) / "metrics.json"
    previous = json.loads(out.read_text()) if out.is_file() else {}
    previous.update(metrics)
    out.write_text(json.dumps(previous, indent=2, ensure_ascii=False) + "\n")
    return metrics


def decode_all(bundle, sources: list[str], beam: int, batch_tokens: int, one_by_one: bool) -> list[str]:
    with tqdm(total=len(sources), desc=f"beam {beam}") as bar:
        if not one_by_one:
            return translate_many(bundle, sources, beam, batch_tokens, on_batch=bar.update)
        hyps = []
        for s in sources:
            hyps.append(translate(bundle, s, beam=beam))
            bar.update(1)
        return hyps


if __name__ == "__main__":
    main()
