"""Export a training run to a shipped checkpoint folder (fp16, optional checkpoint averaging)."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import torch

from model.cli.arguments import positive_int
from model.io.checkpoint import save_checkpoint
from model.training.export import average_checkpoints


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Export a training run to a shipped checkpoint folder.")
    parser.add_argument("--run", required=True, help="the training run folder (train --out)")
    parser.add_argument("--out", required=True, help="the model folder to write")
    parser.add_argument("--average", type=positive_int, default=1, help="average the last N epoch checkpoints")
    parser.add_argument("--use-last", action="store_true", help="export the latest (mid-epoch) state instead")
    args = parser.parse_args(argv)
    run = Path(args.run)
    epochs = sorted(run.glob("epoch[0-9][0-9][0-9]"))
    if args.use_last or not epochs:
        folders = [run / "last"]
    else:
        folders = epochs[-args.average:]
    bundle = average_checkpoints(folders)
    save_checkpoint(bundle.model, bundle.tokenizer, args.out, dtype=torch.float16)
    if (run / "train_log.csv").is_file():
        shutil.copy(run / "train_log.csv", Path(args.out) / "train_log.csv")
    size = (Path(args.out) / "model.safetensors").stat().st_size / 1e6
    print(f"exported {', '.join(f.name for f in folders)} -> {args.out} ({size:.1f} MB, "
          f"{bundle.model.num_parameters():,} parameters)")


if __name__ == "__main__":
    main()
