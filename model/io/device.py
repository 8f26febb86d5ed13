"""Which device the model runs on, decided in one place: CUDA when present, the CPU otherwise;
TRANSFORMER_VIZ_DEVICE or a `--device` flag overrides it."""
from __future__ import annotations

import os
import re

import torch

DEVICE_ENV = "TRANSFORMER_VIZ_DEVICE"
DEVICE_NAME = re.compile(r"cpu|cuda(:\d+)?")


def pick_device(name: str | torch.device | None = None) -> torch.device:
    """An explicit name wins, then TRANSFORMER_VIZ_DEVICE, then CUDA when present, then the CPU.
    A name is cpu, cuda or cuda:N; ValueError says what is wrong with any other, or with a CUDA device
    this machine lacks."""
    name = name or os.environ.get(DEVICE_ENV)
    if not name:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not DEVICE_NAME.fullmatch(str(name)):
        raise ValueError(f"unknown device {str(name)!r}: --device (or ${DEVICE_ENV}) is cpu, cuda or cuda:N")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {str(device)!r} asked for, but torch sees no CUDA device on this machine")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise ValueError(f"device {str(device)!r} asked for, but torch sees only {torch.cuda.device_count()} "
                         f"CUDA device(s), cuda:0 to cuda:{torch.cuda.device_count() - 1}")
    return device


def describe_device(device: str | torch.device | None = None) -> str:
    """One short line for people: "CPU (2 threads)" or "CUDA: NVIDIA H100 80GB HBM3"."""
    device = pick_device(device)
    if device.type == "cuda":
        return f"CUDA: {torch.cuda.get_device_name(device)}"
    if device.type == "cpu":
        return f"CPU ({torch.get_num_threads()} thread{'s' * (torch.get_num_threads() != 1)})"
    return device.type.upper()


def add_device_argument(parser) -> None:
    """The same --device flag on every command-line tool."""
    parser.add_argument("--device", default=None,
                        help=f"cpu, cuda or cuda:N (default: ${DEVICE_ENV}, else cuda when present, else cpu)")
