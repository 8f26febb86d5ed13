"""Train a toy task model or the en-es translation model: python -m model.cli train --task reverse --out runs/toy-reverse.

--device cuda trains on a GPU (bf16 autocast, float32 weights); under `torchrun --nproc_per_node N -m
model.cli train ...` N processes train one model with DistributedDataParallel (model/training/train.py).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from model.cli.arguments import learning_rate, minutes, positive_int, probability
from model.io.checkpoint import save_checkpoint
from model.io.device import add_device_argument
from model.training.tasks import TASKS
from model.training.train import (TOY_SIZES, sequence_accuracy, start_runtime, stop_runtime, train_toy,
                                  train_translation)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train a toy task model or the translation model.")
    parser.add_argument("--task", required=True, choices=list(TASKS) + ["translate"])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--steps", type=positive_int, default=800, help="toy tasks: training steps")
    parser.add_argument("--size", default="small", choices=list(TOY_SIZES), help="toy tasks: model size")
    parser.add_argument("--seed", type=int, default=0)
    # translation
    parser.add_argument("--data", default="data/en-es")
    parser.add_argument("--resume", action="store_true", help="go on from OUT/last")
    parser.add_argument("--init-from", default=None, metavar="DIR",
                        help="start from a model folder's weights (its config and tokenizer), fresh optimizer")
    parser.add_argument("--epochs", type=positive_int, default=30)
    parser.add_argument("--d-model", type=positive_int, default=256)
    parser.add_argument("--heads", type=positive_int, default=8)
    parser.add_argument("--layers", type=positive_int, default=3)
    parser.add_argument("--d-ff", type=positive_int, default=1024)
    parser.add_argument("--dropout", type=probability, default=0.1)
    parser.add_argument("--smoothing", type=probability, default=0.1)
    parser.add_argument("--lr", type=learning_rate, default=7e-4, help="peak learning rate")
    parser.add_argument("--warmup", type=positive_int, default=1000)
    parser.add_argument("--max-tokens", type=positive_int, default=4096, help="padded tokens per batch")
    parser.add_argument("--max-len", type=positive_int, default=160, help="drop longer training pairs")
    parser.add_argument("--threads", type=positive_int, default=2)
    parser.add_argument("--log-every", type=positive_int, default=50)
    parser.add_argument("--eval-every", type=positive_int, default=500)
    parser.add_argument("--save-minutes", type=minutes, default=5.0)
    parser.add_argument("--max-minutes", type=minutes, default=None,
                        help="stop (and save OUT/last) after this many minutes; --resume goes on")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    if args.task == "translate":                  # a bad --device or --init-from folder: one line (model/cli/__main__.py)
        train_translation(args)
        return 0
    rt = start_runtime(args.device)
    try:
        train_toy_cli(args, rt)
    finally:
        stop_runtime(rt)
    return 0


def train_toy_cli(args, rt) -> None:
    bar = tqdm(total=args.steps, desc=f"train {args.task}", disable=not rt.main)

    def report(record, _model):
        bar.update(record["step"] - bar.n)
        bar.set_postfix(loss=f"{record['loss']:.3f}", acc=f"{record['accuracy']:.3f}")

    result = train_toy(args.task, steps=args.steps, size=args.size, seed=args.seed, on_eval=report, rt=rt)
    bar.close()
    if not rt.main:
        return
    acc = sequence_accuracy(result.model, args.task, 1000)
    save_checkpoint(result.model, result.tokenizer, args.out)
    Path(args.out, "metrics.json").write_text(json.dumps(
        {"task": args.task, "sequence_accuracy": acc, "steps": args.steps,
         "seconds": round(result.history[-1]["seconds"], 1)}, indent=2) + "\n")
    print(f"{args.task}: sequence accuracy {acc:.4f} on 1000 held-out samples -> {args.out}")


if __name__ == "__main__":
    sys.exit(main())
