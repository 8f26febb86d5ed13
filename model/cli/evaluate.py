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

from model.cli.arguments import add_no_repeat_argument, add_style_argument, beam_size, positive_int, styled
from model.inference.batch_translate import DEFAULT_BATCH_TOKENS, translate_many
from model.inference.pipeline import translate
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument, describe_device
from model.training.evaluate import score
from model.training.examples import repeats_a_word


def main(argv=None) -> dict:
    from model.training.corpus import read_tsv

    parser = argparse.ArgumentParser(description="Evaluate a translation checkpoint with sacrebleu.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--test", required=True, help="TSV with en and es columns")
    parser.add_argument("--beam", type=beam_size, default=4)
    add_style_argument(parser)
    add_no_repeat_argument(parser)
    parser.add_argument("--limit", type=positive_int, default=None, help="only the first N pairs")
    parser.add_argument("--also-greedy", action="store_true", help="also score greedy decoding as a baseline")
    parser.add_argument("--out", default=None, help="metrics file to add the scores to, e.g. MODEL/metrics.json "
                        "(default: none; the scores are printed, and a shipped model's files change only when asked)")
    parser.add_argument("--threads", type=positive_int, default=2)
    parser.add_argument("--batch-tokens", type=positive_int, default=DEFAULT_BATCH_TOKENS,
                        help="padded source tokens per batch, each beam row counted")
    parser.add_argument("--one-by-one", action="store_true", help="decode sentence by sentence (no batches)")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    pairs = read_tsv(args.test)[: args.limit]
    out = Path(args.out) if args.out else None
    previous = read_metrics(out) if out else {}   # before the minutes of decoding: a file this run must not overwrite
    torch.set_num_threads(args.threads)
    bundle = load_checkpoint(args.model, device=args.device)
    print(f"device: {describe_device(bundle.model.device)}")
    sources, references = [styled(bundle, s, args.style) for s, _ in pairs], [t for _, t in pairs]
    metrics = {"test_file": Path(args.test).name, "pairs": len(pairs)}
    for beam in ([1] if args.also_greedy else []) + [args.beam]:
        start = time.perf_counter()
        hyps = decode_all(bundle, sources, beam, args.batch_tokens, args.one_by_one, args.no_repeat_ngram)
        result = score(hyps, references)
        result["seconds"] = round(time.perf_counter() - start, 1)
        result["repeats"] = sum(map(repeats_a_word, hyps))
        if args.no_repeat_ngram:
            result["no_repeat_ngram"] = args.no_repeat_ngram
        metrics["greedy" if beam == 1 else f"beam{beam}"] = result
        print(f"beam {beam}: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  "
              f"{result['repeats']} outputs repeating a word 3×  ({result['seconds']} s)")
    if out is not None:
        out.write_text(json.dumps(previous | metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"scores added to {out}")
    return metrics


def read_metrics(path: Path) -> dict:
    """The metrics an earlier run wrote ({} when there are none), which this run adds to. ValueError when the
    file is not a JSON object: it is left as it is, not overwritten."""
    if not path.exists():
        return {}
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:                       # not UTF-8, or not JSON
        metrics = None
    if not isinstance(metrics, dict):
        raise ValueError(f"{path}: not a JSON object of metrics; left as it is (move it away, or give --out)")
    return metrics


def decode_all(bundle, sources: list[str], beam: int, batch_tokens: int, one_by_one: bool,
               no_repeat_ngram: int = 0) -> list[str]:
    with tqdm(total=len(sources), desc=f"beam {beam}") as bar:
        if not one_by_one:
            return translate_many(bundle, sources, beam, batch_tokens, on_batch=bar.update,
                                  no_repeat_ngram=no_repeat_ngram)
        hyps = []
        for s in sources:
            hyps.append(translate(bundle, s, beam=beam, no_repeat_ngram=no_repeat_ngram))
            bar.update(1)
        return hyps


if __name__ == "__main__":
    main()
