"""Where a full capture's time goes on a GPU, and what bringing the values over costs (issue 48):

    python bench/gpu_capture.py [--device cuda]

For 64, 256 and 512 tokens, one forward pass of the en-es model (medians, the device drained at both ends):
  off        capture off (the model's fused attention);
  on device  a full capture whose values stay on the device (the hooks and the explicit attention only);
  full       a full capture as the app makes it, its values brought over (model/capture/trace.py to_host).
"full" minus "on device" is the transfer. On an H200 (issue 48) this script also timed the to_host of
before, which copied each value out of the pinned buffer into ordinary memory: docs/performance.md.
"""
from __future__ import annotations

import argparse
import importlib

from common import EN_ES, ms, table
from gpu import CAPTURE_LENGTHS, forward_passes, sync, timed

import torch

from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument, describe_device

trace_module = importlib.import_module("model.capture.trace")   # `model.capture` is also the function


def on_device_only(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    sync()
    return {}


@torch.no_grad()
def rows(model, repeats: int) -> list[list]:
    original = trace_module.to_host
    out = []
    for n in CAPTURE_LENGTHS:
        off, full = forward_passes(model, n)
        times = {"off": timed(off, repeats)}
        for name, to_host in (("on device", on_device_only), ("full", original)):
            trace_module.to_host = to_host
            try:
                times[name] = timed(full, repeats)
            finally:
                trace_module.to_host = original
        out.append([n] + [f"{ms(t)} ({t / times['off']:.2f}×)" for t in times.values()])
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="A full capture's cost on this machine's device, split.")
    add_device_argument(parser)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    model = load_checkpoint(EN_ES, device=args.device).model
    print(f"device: {describe_device(model.device)}; torch {torch.__version__}\n")
    print(table(["tokens", "off", "on device", "full"], rows(model, args.repeats)))


if __name__ == "__main__":
    main()
