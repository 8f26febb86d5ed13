"""Score a translation checkpoint with sacrebleu: python -m model.cli evaluate --test pretrained/en-es/test.tsv.

A two-style model is scored in the test set's style unless --style says: read from its content
(model/training/evaluate.guess_style: the sources' style tokens, else the references' 1909 Bible words), never
its file's name; the first line says which style and why, and it is kept with the scores. Sentences are decoded in length-sorted batches (model/inference/batch_translate.py);
--one-by-one decodes them singly, as before, to compare.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from tqdm import tqdm

from model.cli.arguments import (add_model_argument, add_no_repeat_argument, add_style_argument, beam_size,
                                 output_file, positive_int, resolve_models, thread_count)
from model.inference.batch_translate import DEFAULT_BATCH_TOKENS, translate_many
from model.inference.pipeline import source_text, translate
from model.io.checkpoint import MAX_METRICS_BYTES, load_checkpoint
from model.io.files import read_bytes_limited, write_replacing
from model.io.device import add_device_argument, describe_device
from model.training.evaluate import guess_style, score
from model.training.examples import repeats_a_word


def main(argv=None) -> dict:
    from model.training.corpus import read_tsv

    parser = argparse.ArgumentParser(description="Evaluate a translation checkpoint with sacrebleu.")
    add_model_argument(parser)
    parser.add_argument("--test", required=True, help="TSV with en and es columns")
    parser.add_argument("--beam", type=beam_size, default=4, help="beam size (default 4; 1 = greedy)")
    add_style_argument(parser)
    add_no_repeat_argument(parser)
    parser.add_argument("--limit", type=positive_int, default=None, help="only the first N pairs")
    parser.add_argument("--also-greedy", action="store_true", help="also score greedy decoding as a baseline")
    parser.add_argument("--out", default=None, help="metrics file to add the scores to, e.g. MODEL/metrics.json "
                        "(default: none; the scores are printed, and a shipped model's files change only when asked)")
    parser.add_argument("--threads", type=thread_count, default=2, help="CPU threads (default 2)")
    parser.add_argument("--batch-tokens", type=positive_int, default=None,
                        help=f"padded source tokens per batch, each beam row counted (default {DEFAULT_BATCH_TOKENS} on "
                             "the CPU, 16 times that on a GPU)")
    parser.add_argument("--one-by-one", action="store_true", help="decode sentence by sentence (no batches)")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    resolve_models(args)
    pairs = read_tsv(args.test)[: args.limit]
    out = output_file(args.out) if args.out is not None else None     # '' , a device, a FIFO: said before any work
    previous = read_metrics(out) if out else {}   # before the minutes of decoding: a file this run must not overwrite
    torch.set_num_threads(args.threads)
    bundle = load_checkpoint(args.model, device=args.device)
    styles = bundle.tokenizer.styles
    style, why = (args.style, "--style") if args.style in styles else guess_style(pairs, styles)
    if style is not None:
        print(f"style: {style} ({why}; --style {'modern' if style == 'bible' else 'bible'} to score the other)")
    print(f"device: {describe_device(bundle.model.device)}")
    sources = [source_text(bundle, s, style) for s, _ in pairs]
    references = [t for _, t in pairs]
    metrics = {"test_file": Path(args.test).name, "pairs": len(pairs), **({"style": style} if style else {})}
    for beam in ([1] if args.also_greedy else []) + [args.beam]:
        start, cpu_start = time.perf_counter(), time.process_time()
        hyps = decode_all(bundle, sources, beam, args.batch_tokens, args.one_by_one, args.no_repeat_ngram)
        result = score(hyps, references)
        result["seconds"] = round(time.perf_counter() - start, 1)
        result["cpu_seconds"] = round(time.process_time() - cpu_start, 1)
        result["repeats"] = sum(map(repeats_a_word, hyps))
        if args.no_repeat_ngram:
            result["no_repeat_ngram"] = args.no_repeat_ngram
        metrics["greedy" if beam == 1 else f"beam{beam}"] = result
        print(f"beam {beam}{f', {style}' if style else ''}: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  "
              f"{result['repeats']} outputs repeating a word 3×  ({result['seconds']} s, {result['cpu_seconds']} CPU s)")
    if out is not None:
        write_replacing(out, json.dumps(previous | metrics, indent=2, ensure_ascii=False) + "\n")
        print(f"scores added to {out}")
    return metrics


def read_metrics(path: Path) -> dict:
    """The metrics an earlier run wrote ({} when there are none), which this run adds to, read within
    MAX_METRICS_BYTES. ValueError when the file is not a JSON object: it is left as it is, not overwritten."""
    if not path.exists():
        return {}
    data = read_bytes_limited(path, MAX_METRICS_BYTES, "scores take a few hundred")   # ValueError naming it
    try:
        metrics = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):     # not UTF-8, or not JSON
        metrics = None
    if not isinstance(metrics, dict):
        raise ValueError(f"{path}: not a JSON object of metrics; left as it is (move it away, or give --out)")
    return metrics


def decode_all(bundle, sources: list[str], beam: int, batch_tokens: int | None, one_by_one: bool,
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
