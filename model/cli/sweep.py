"""Run a small training sweep and rank it on the dev set (model/training/sweep.py):

    python -m model.cli sweep --data data/en-es --out runs/sweep --minutes 6 --parallel 4 --device cuda
"""
from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from model.io.device import add_device_argument
from model.training.sweep import GRID, run_all, score_all


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train a few settings side by side; rank them on dev.")
    parser.add_argument("--data", default="data/en-es")
    parser.add_argument("--out", default="runs/sweep")
    parser.add_argument("--minutes", type=float, required=True, help="training minutes per run (this call)")
    parser.add_argument("--parallel", type=int, default=1, help="runs at once (a GPU holds several)")
    parser.add_argument("--grid", default=None, help="JSON {name: {trainer flag: value}} instead of the built-in grid")
    parser.add_argument("--only", default=None, help="comma-separated names of the grid to run")
    parser.add_argument("--common", default="", help="trainer flags for every run, e.g. \"--max-tokens 8192\"")
    parser.add_argument("--dev-pairs", type=int, default=None, help="score on the first N dev pairs")
    parser.add_argument("--score-only", action="store_true", help="rank the runs already in OUT")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    grid = json.loads(args.grid) if args.grid else GRID
    if args.only:
        grid = {name: grid[name] for name in args.only.split(",")}
    data, out = Path(args.data), Path(args.out)
    if not args.score_only:
        run_all(grid, data, out, args.minutes, args.parallel, args.device, shlex.split(args.common))
    scores = score_all(list(grid), data, out, args.device, args.dev_pairs)
    print(f"{'run':<22} {'dev BLEU':>8} {'chrF':>6} {'dev loss':>8} {'epoch':>5} {'step':>7} {'params':>10}")
    for s in scores:
        loss = f"{s.dev_loss:.3f}" if s.dev_loss is not None else "-"
        print(f"{s.name:<22} {s.dev_bleu:>8.2f} {s.dev_chrf:>6.2f} {loss:>8} {s.epoch:>5} {s.step:>7} {s.parameters:>10,}")
    print(f"best: {scores[0].name} -> {out / scores[0].name}  (table: {out / 'sweep.csv'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
