"""Train a toy task model or the en-es translation model: python -m model.cli train --task reverse --out runs/toy-reverse.

--device cuda trains on a GPU (bf16 autocast, float32 weights); under `torchrun --nproc_per_node N -m
model.cli train ...` N processes train one model with DistributedDataParallel (model/training/runtime.py).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch
from tqdm import tqdm

from model.cli.arguments import (MAX_TOY_STEPS, int_up_to, learning_rate, minutes, output_folder, positive_int,
                                  probability, thread_count)
from model.io.checkpoint import read_tokenizer, save_checkpoint
from model.io.device import add_device_argument
from model.io.files import describe_kind
from model.training.tasks import TASKS
from model.training.runtime import start_runtime, stop_runtime
from model.training.toy import TOY_SIZES, sequence_accuracy, train_toy
from model.training.train import resume_point, train_translation


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train a toy task model or the translation model.")
    parser.add_argument("--task", required=True, choices=list(TASKS) + ["translate"],
                        help="a toy task (reverse, sort, copy) or translate (the en-es corpus)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--steps", type=int_up_to(MAX_TOY_STEPS), default=None,
                        help="toy tasks: training steps (default 800)")
    parser.add_argument("--size", default=None, choices=list(TOY_SIZES), help="toy tasks: model size (default small)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--threads", type=thread_count, default=2, help="CPU threads")
    # translation only (defaults in TRANSLATE_DEFAULTS; a toy task refuses them rather than ignore them)
    parser.add_argument("--data", default=None, help="corpus folder (default data/en-es): train.tsv, dev.tsv, "
                        "tokenizer.json from `python -m model.cli data`")
    parser.add_argument("--resume", action="store_true", help="go on from OUT/last")
    parser.add_argument("--init-from", default=None, metavar="DIR",
                        help="start from a model folder's weights (its config and tokenizer), fresh optimizer")
    parser.add_argument("--epochs", type=positive_int, default=None, help="default 30")
    parser.add_argument("--d-model", type=positive_int, default=None, help="default 256")
    parser.add_argument("--heads", type=positive_int, default=None, help="default 8")
    parser.add_argument("--layers", type=positive_int, default=None, help="default 3")
    parser.add_argument("--d-ff", type=positive_int, default=None, help="default 1024")
    parser.add_argument("--dropout", type=probability, default=None, help="default 0.1")
    parser.add_argument("--smoothing", type=probability, default=None, help="default 0.1")
    parser.add_argument("--lr", type=learning_rate, default=None, help="peak learning rate (default 7e-4)")
    parser.add_argument("--warmup", type=positive_int, default=None, help="default 1000")
    parser.add_argument("--max-tokens", type=positive_int, default=None, help="padded tokens per batch (default 4096)")
    parser.add_argument("--max-len", type=positive_int, default=None, help="drop longer training pairs (default 160)")
    parser.add_argument("--log-every", type=positive_int, default=None, help="default 50")
    parser.add_argument("--eval-every", type=positive_int, default=None, help="default 500")
    parser.add_argument("--save-minutes", type=minutes, default=None, help="default 5")
    parser.add_argument("--max-minutes", type=minutes, default=None,
                        help="stop (and save OUT/last) after this many minutes; --resume goes on")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    check_applies(parser, args)
    if args.task == "translate":
        for name, value in TRANSLATE_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, value)
        resumes = args.resume and resume_point(Path(args.out)) is not None
        check_data(args.data, needs_tokenizer=not (args.init_from or resumes))
    output_folder(args.out)                       # an unwritable --out fails now, not after the training
    if args.task == "translate":                  # a bad --device or --init-from folder: one line (model/cli/__main__.py)
        train_translation(args)
        return 0
    args.steps, args.size = args.steps or TOY_DEFAULTS["steps"], args.size or TOY_DEFAULTS["size"]
    torch.set_num_threads(args.threads)
    rt = start_runtime(args.device)
    try:
        train_toy_cli(args, rt)
    finally:
        stop_runtime(rt)
    return 0


TRANSLATE_DEFAULTS = {"data": "data/en-es", "epochs": 30, "d_model": 256, "heads": 8, "layers": 3, "d_ff": 1024,
                      "dropout": 0.1, "smoothing": 0.1, "lr": 7e-4, "warmup": 1000, "max_tokens": 4096,
                      "max_len": 160, "log_every": 50, "eval_every": 500, "save_minutes": 5.0}
TOY_DEFAULTS = {"steps": 800, "size": "small"}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_applies(parser, args) -> None:
    """A toy task refuses the translation settings (and translation the toy ones) instead of ignoring them:
    `--task reverse --d-model 512` would otherwise train the small toy model without a word."""
    if args.task == "translate":
        given = [flag(n) for n in TOY_DEFAULTS if getattr(args, n) is not None]
        if given:
            parser.error(f"argument {given[0]}: applies to the toy tasks only, not to --task translate")
    else:
        given = [flag(n) for n in (*TRANSLATE_DEFAULTS, "init_from", "max_minutes") if getattr(args, n) is not None]
        given += ["--resume"] if args.resume else []
        if given:
            parser.error(f"argument {given[0]}: applies to --task translate only; a toy task takes --steps, "
                         f"--size ({', '.join(TOY_SIZES)}), --seed, --threads, --device")


def check_data(data: str, needs_tokenizer: bool) -> None:
    """The corpus folder before any model is built: a folder with train.tsv and dev.tsv (read with their
    limits later) and a tokenizer.json that loads. ValueError naming what is missing and how to make it."""
    folder = Path(data)
    make = f"build it with `python -m model.cli data --out {data}`"
    if not folder.is_dir():
        kind = describe_kind(os.stat(folder).st_mode) if folder.exists() else "no such folder"
        raise ValueError(f"--data {data}: {kind}, not a corpus folder; {make}")
    wanted = ["train.tsv", "dev.tsv"] + (["tokenizer.json"] if needs_tokenizer else [])
    missing = [name for name in wanted if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"--data {data}: no {', no '.join(missing)} in it; {make}")
    if (folder / "tokenizer.json").is_file():
        read_tokenizer(folder / "tokenizer.json")      # CheckpointError: too big, or not a tokenizer


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
