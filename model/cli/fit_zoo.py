"""Fit the attention zoo's general and additive scores to every head of a model (model/analysis/zoo_fit.py) and
write them beside its weights, as zoo_fit.safetensors (the Attention zoo page and the tour then use them):

    python -m model.cli fit-zoo --model pretrained/en-es --data data/mix [--sentences 300 --steps 1000 --seed 0]

--data is a folder with train.tsv (the sentences fitted on) and dev.tsv (the held-out ones the KL is measured
on), en<TAB>es with a header, as `data` writes them. A two-style corpus (sources starting <modern> or <bible>)
is sampled evenly from both styles. CPU only, --threads 1 by default: a few minutes for en-es.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from model.analysis import zoo_fit
from model.cli.arguments import add_model_argument, learning_rate, positive_int, resolve_models, thread_count
from model.io.checkpoint import load_checkpoint
from model.training.corpus import read_tsv


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Fit the zoo's general and additive scores to every head of a "
                                                 "model; write zoo_fit.safetensors into the model folder.")
    add_model_argument(parser)
    parser.add_argument("--data", required=True, help="folder with train.tsv and dev.tsv (en<TAB>es)")
    parser.add_argument("--sentences", type=positive_int, default=zoo_fit.DEFAULT_SENTENCES,
                        help="training sentences fitted on")
    parser.add_argument("--dev-sentences", type=positive_int, default=zoo_fit.DEFAULT_DEV_SENTENCES,
                        help="held-out sentences the KL is measured on")
    parser.add_argument("--steps", type=positive_int, default=zoo_fit.DEFAULT_STEPS, help="Adam steps per sublayer")
    parser.add_argument("--lr", type=learning_rate, default=zoo_fit.DEFAULT_LR, help=f"Adam learning rate (default {zoo_fit.DEFAULT_LR})")
    parser.add_argument("--batch", type=positive_int, default=zoo_fit.DEFAULT_BATCH, help="sentences per step")
    parser.add_argument("--seed", type=int, default=zoo_fit.DEFAULT_SEED,
                        help="which sentences and their order (the weights start from the zoo's random ones)")
    parser.add_argument("--threads", type=thread_count, default=1, help="CPU threads")
    args = parser.parse_args(argv)
    resolve_models(args)
    torch.set_num_threads(args.threads)
    model_dir, data = Path(args.model), Path(args.data)
    start = time.perf_counter()
    cpu_start = time.process_time()
    bundle = load_checkpoint(model_dir, device="cpu")
    train = zoo_fit.sample_pairs(read_tsv(data / "train.tsv"), args.sentences, args.seed)
    dev = zoo_fit.sample_pairs(read_tsv(data / "dev.tsv"), args.dev_sentences, args.seed)
    fit = zoo_fit.fit_model(bundle, train, dev, steps=args.steps, seed=args.seed, lr=args.lr, batch=args.batch,
                            progress=print)
    fit.extra.update(data=data.name, threads=args.threads, cpu_seconds=round(time.process_time() - cpu_start, 1))
    path = zoo_fit.save_fit(fit, model_dir)
    zoo_fit.load_fit(model_dir, bundle.config)          # what was written reads back
    for kind in (None, "encoder", "decoder", "cross"):
        kl = fit.mean_kl(kind)
        print(f"{kind or 'all heads'}: mean held-out KL per query row: general {kl['general']:.5f} (random "
              f"{kl['random_general']:.3f}), additive {kl['additive']:.4f} (random {kl['random_additive']:.3f}), "
              f"scaled {kl['scaled']:.1e}; general |W - I/sqrt(d)| / |I/sqrt(d)| {fit.mean_w_distance(kind):.3f} "
              f"(random W: {zoo_fit.random_w_distance(fit.dims.d_head):.2f})")
    print(f"{path}: {path.stat().st_size:,} bytes; {time.perf_counter() - start:.0f} s, "
          f"{fit.extra['cpu_seconds']:.0f} CPU s on {args.threads} thread(s)")
    return 0


if __name__ == "__main__":
    main()
