"""A small sweep, chosen on the dev set: a few trainer settings run side by side for the same minutes
(one GPU holds several of these small models at once; on the CPU run them one at a time), then each
run's latest weights are scored on dev (greedy, batched) and the runs are listed best first.

    python -m model.cli sweep --data data/en-es --out runs/sweep --minutes 6 --parallel 4 --device cuda

Every run trains with --resume, so calling the sweep again goes on with each run for more minutes.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from model.inference.batch_translate import translate_many
from model.io.checkpoint import load_checkpoint
from model.training.corpus import read_tsv
from model.training.evaluate import score

# name -> trainer arguments that differ from model/cli/train.py's defaults (d_model 256, 8 heads, 3+3
# layers, d_ff 1024, dropout 0.1, lr 7e-4, warmup 1000). All stay under 12M parameters: 4+4 layers
# are about 9.4M. The shipped model overfits late on 28,666 Bible verses, hence more dropout.
GRID = {
    "base": {},
    "dropout0.3": {"--dropout": "0.3"},
    "dropout0.3-lr1e-3": {"--dropout": "0.3", "--lr": "1e-3", "--warmup": "2000"},
    "layers4-dropout0.3": {"--layers": "4", "--dropout": "0.3"},
}


@dataclass
class RunScore:
    name: str
    dev_bleu: float
    dev_chrf: float
    dev_loss: float | None       # the last one train_log.csv holds
    epoch: int
    step: int
    parameters: int


def train_command(data: Path, out: Path, minutes: float, device: str | None, settings: dict[str, str],
                  common: list[str]) -> list[str]:
    command = [sys.executable, "-m", "model.cli", "train", "--task", "translate", "--data", str(data),
               "--out", str(out), "--epochs", "10000", "--max-minutes", str(minutes), "--resume"]
    command += ["--device", device] if device else []
    return command + common + [item for pair in settings.items() for item in pair]


def run_all(grid: dict[str, dict[str, str]], data: Path, out: Path, minutes: float, parallel: int,
            device: str | None, common: list[str]) -> None:
    """Train every setting for `minutes`, `parallel` at a time; each run logs to OUT/NAME/stdout.log."""
    names = list(grid)
    for first in range(0, len(names), parallel):
        running = []
        for name in names[first:first + parallel]:
            (out / name).mkdir(parents=True, exist_ok=True)
            with open(out / name / "stdout.log", "a") as log:        # the child keeps its own handle
                running.append((name, subprocess.Popen(train_command(data, out / name, minutes, device, grid[name],
                                                                     common), stdout=log, stderr=subprocess.STDOUT)))
        for name, process in running:
            if process.wait() != 0:
                raise RuntimeError(f"{name}: training failed, see {out / name / 'stdout.log'}")


def score_run(folder: Path, dev: list[tuple[str, str]], device: str | None) -> RunScore:
    bundle = load_checkpoint(folder / "last", device=device)
    metrics = score(translate_many(bundle, [s for s, _ in dev], beam=1), [t for _, t in dev])
    state = json.loads((folder / "last" / "state.json").read_text())
    with open(folder / "train_log.csv", newline="") as f:
        losses = [row["dev_loss"] for row in csv.DictReader(f) if row["dev_loss"]]
    return RunScore(folder.name, metrics["bleu"], metrics["chrf"], float(losses[-1]) if losses else None,
                    state["epoch"], state["step"], bundle.model.num_parameters())


def score_all(names: list[str], data: Path, out: Path, device: str | None, dev_pairs: int | None) -> list[RunScore]:
    """Every run scored on dev, best BLEU first (chrF breaks ties); also written to OUT/sweep.csv."""
    dev = read_tsv(data / "dev.tsv")[:dev_pairs]
    scores = sorted((score_run(out / name, dev, device) for name in names), key=lambda s: (-s.dev_bleu, -s.dev_chrf))
    with open(out / "sweep.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(RunScore.__dataclass_fields__))
        writer.writerows([list(vars(s).values()) for s in scores])
    return scores
