"""Which device the model runs on: CUDA when present, the CPU otherwise; TRANSFORMER_VIZ_DEVICE or a
`--device` flag overrides it."""
from __future__ import annotations

import os

import torch

DEVICE_ENV = "TRANSFORMER_VIZ_DEVICE"


def pick_device(name: str | None = None) -> torch.device:
    """CUDA when present unless told otherwise."""
    name = name or os.environ.get(DEVICE_ENV)
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
