"""Run a small training sweep and rank it on the dev set (model/training/sweep.py):

    python -m model.cli sweep --data data/en-es --out runs/sweep --minutes 6 --parallel 4 --device cuda
"""
from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from model.cli.arguments import fail, minutes, positive_int
from model.io.device import add_device_argument
from model.training.sweep import GRID, run_all, score_all

GRID_SHAPE = '{"run name": {"--trainer-flag": "value", ...}, ...}'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train a few settings side by side; rank them on dev.")
    parser.add_argument("--data", default="data/en-es", help="corpus folder (default data/en-es)")
    parser.add_argument("--out", default="runs/sweep", help="folder of the runs (default runs/sweep)")
    parser.add_argument("--minutes", type=minutes, required=True, help="training minutes per run (this call)")
    parser.add_argument("--parallel", type=positive_int, default=1, help="runs at once (a GPU holds several)")
    parser.add_argument("--grid", default=None, help=f"JSON {GRID_SHAPE} instead of the built-in grid")
    parser.add_argument("--only", default=None, help="comma-separated names of the grid to run")
    parser.add_argument("--common", default="", help="trainer flags for every run, e.g. \"--max-tokens 8192\"")
    parser.add_argument("--dev-pairs", type=positive_int, default=None, help="score on the first N dev pairs")
    parser.add_argument("--score-only", action="store_true", help="rank the runs already in OUT")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    grid = only(parser, read_grid(parser, args.grid) if args.grid else GRID, args.only)
    common = split_flags(parser, args.common)
    data, out = Path(args.data), Path(args.out)
    if not args.score_only:
        try:
            run_all(grid, data, out, args.minutes, args.parallel, args.device, common)
        except RuntimeError as e:                # a run's trainer stopped: its stdout.log says why
            return fail(e)
    scores = score_all(list(grid), data, out, args.device, args.dev_pairs)
    print(f"{'run':<22} {'dev BLEU':>8} {'chrF':>6} {'dev loss':>8} {'epoch':>5} {'step':>7} {'params':>10}")
    for s in scores:
        loss = f"{s.dev_loss:.3f}" if s.dev_loss is not None else "-"
        print(f"{s.name:<22} {s.dev_bleu:>8.2f} {s.dev_chrf:>6.2f} {loss:>8} {s.epoch:>5} {s.step:>7} {s.parameters:>10,}")
    print(f"best: {scores[0].name} -> {out / scores[0].name}  (table: {out / 'sweep.csv'})")
    return 0


def read_grid(parser: argparse.ArgumentParser, text: str) -> dict[str, dict[str, str]]:
    """--grid: a JSON object of runs, each a folder name with an object of trainer flags and string values."""
    try:
        grid = json.loads(text)
    except ValueError as e:
        parser.error(f"argument --grid: not JSON ({e})")
    if not (isinstance(grid, dict) and grid and all(map(is_run, grid.items()))):
        parser.error(f"argument --grid: expected {GRID_SHAPE}, a folder name per run and every value a string, "
                     f"got {text[:60]!r}")
    return grid


def is_run(item) -> bool:
    name, flags = item
    return (name not in ("", ".", "..") and "/" not in name and isinstance(flags, dict)
            and all(isinstance(k, str) and k.startswith("--") and isinstance(v, str) for k, v in flags.items()))


def only(parser: argparse.ArgumentParser, grid: dict, names: str | None) -> dict:
    """The runs --only names (comma-separated), or the whole grid."""
    if not names:
        return grid
    unknown = [n for n in names.split(",") if n not in grid]
    if unknown:
        parser.error(f"argument --only: no run named {', '.join(map(repr, unknown))}; the grid has {', '.join(grid)}")
    return {n: grid[n] for n in names.split(",")}


def split_flags(parser: argparse.ArgumentParser, text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as e:                      # an open quote
        parser.error(f"argument --common: {e}")


if __name__ == "__main__":
    raise SystemExit(main())
