"""Ship a training run: average its last epoch checkpoints, store fp16, copy the training log.

    python -m model.cli export --run runs/en-es --out pretrained/en-es --average 3
"""
from __future__ import annotations

from pathlib import Path

import torch

from model.io.checkpoint import load_checkpoint


def average_checkpoints(folders: list[Path]):
    """Mean of the weights of several checkpoints of one run (a cheap ensemble, as in the paper)."""
    bundles = [load_checkpoint(f, device="cpu") for f in folders]
    model = bundles[0].model
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            tensor.copy_(torch.stack([b.model.state_dict()[name] for b in bundles]).mean(0))
    return bundles[0]
