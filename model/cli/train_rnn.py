"""Train the GRU encoder-decoders with and without attention on a toy task, measure their exact-match accuracy
at every input length, and write them as one folder (model/io/rnn_checkpoint.py; the app's "Before the
Transformer" page reads pretrained/rnn-reverse):

    python -m model.cli train-rnn --task reverse --out pretrained/rnn-reverse [--steps 1500 --seed 0]

CPU, one thread by default: about a minute per model on a quiet machine (the model card has the measured times).
"""
from __future__ import annotations

import argparse
import functools
import os
import time

import torch

from model.cli.arguments import output_folder, positive_int
from model.io.rnn_checkpoint import save_rnns
from model.nn.rnn import ATTENTIONS
from model.training.rnn import DEFAULT_STEPS, EVAL_LENGTHS, TRAIN_LENGTHS, accuracy_by_length, train_rnn
from model.training.tasks import TASKS


def print_eval(attention: str, r: dict, _model) -> None:
    print(f"{attention:9s} step {r['step']:5d}  loss {r['loss']:.4f}  exact {r['accuracy']:.1%}  {r['seconds']:.0f} s",
          flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train GRU encoder-decoders with and without attention on a toy "
                                                 "task; write their weights and accuracy by input length.")
    parser.add_argument("--task", default="reverse", choices=list(TASKS), help="the toy task (default reverse)")
    parser.add_argument("--out", required=True, type=output_folder, help="output folder")
    parser.add_argument("--attention", nargs="+", default=list(ATTENTIONS), choices=list(ATTENTIONS),
                        help="which attention kinds to train (default: all)")
    parser.add_argument("--steps", type=positive_int, default=DEFAULT_STEPS, help=f"training steps (default {DEFAULT_STEPS})")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--threads", type=positive_int, default=1, help="CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    models, runs = {}, {}
    for attention in args.attention:
        result = train_rnn(args.task, attention, steps=args.steps, seed=args.seed,
                           on_eval=functools.partial(print_eval, attention))
        start = time.perf_counter()
        table = accuracy_by_length(result.model, args.task)
        models[attention] = result.model
        runs[attention] = dict(seconds=round(result.history[-1]["seconds"], 1), parameters=result.model.num_parameters(),
                               eval_seconds=round(time.perf_counter() - start, 1), accuracy_by_length=table)
        print(attention, {n: f"{v['exact']:.0%}" for n, v in table.items()}, flush=True)
    metrics = dict(task=args.task, steps=args.steps, seed=args.seed, threads=args.threads,
                   train_lengths=list(TRAIN_LENGTHS), eval_lengths=list(EVAL_LENGTHS), eval_inputs_per_length=200,
                   load_average=[round(x, 2) for x in os.getloadavg()], models=runs)
    save_rnns(models, args.task, args.out, metrics)
    print(f"wrote {args.out}")
    return 0
