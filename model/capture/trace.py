"""A Trace: named numpy arrays from one forward pass, plus the tokens and config that explain them,
and its export format (one .npz; docs/trace-format.md)."""
from __future__ import annotations

import fnmatch
import io
import json
from typing import Any, Callable, Iterable

import numpy as np
import torch

FORMAT_VERSION = 1

Edit = Callable[[torch.Tensor], torch.Tensor]


class Trace:
    """Named numpy arrays from one forward pass, plus the tokens and config that explain them.

    During capture tensors keep their batch dimension and stay on their device (a GPU is never made to
    wait per hook); when capture ends they become float32 numpy arrays on the CPU, all moved at once
    (to_host), and a batch dimension of size 1 is dropped, so `trace["...hook_pattern"]` of one
    sentence is [head, query, key].
    """

    def __init__(self, names: Iterable[str] | str | None = None, edits: dict[str, Edit] | None = None):
        if isinstance(names, str):
            names = [names]
        self.patterns = None if names is None else list(names)
        self.edits = dict(edits or {})
        self._tensors: dict[str, torch.Tensor] = {}      # float32, on the CPU
        self._on_device: dict[str, torch.Tensor] = {}    # on a GPU, any dtype: moved by finish()
        self.arrays: dict[str, np.ndarray] = {}
        self.meta: dict = {}

    # -- during capture -----------------------------------------------------------------------
    def wants(self, name: str) -> bool:
        if self.patterns is None:
            return True
        return any(name == p or fnmatch.fnmatchcase(name, p) for p in self.patterns)

    def needs(self, name: str) -> bool:
        """True if the value at `name` must be computed explicitly (stored or edited)."""
        return name in self.edits or self.wants(name)

    def visit(self, name: str, x: torch.Tensor, copy: bool = False) -> torch.Tensor:
        edit = self.edits.get(name)
        if edit is not None:
            x = edit(x)
        if self.wants(name):
            kept = x.detach() if x.requires_grad else x
            if kept.device.type != "cpu":       # stays on its device until finish(): no sync per hook
                self._on_device[name] = kept.clone() if copy else kept
                return x
            if copy or kept.dtype != torch.float32:
                kept = kept.to(torch.float32, copy=copy)                          # see HookPoint
            self._tensors[name] = kept
        return x

    def finish(self) -> None:
        """Values become float32 numpy arrays; those still on a device come over in one go."""
        if self._on_device:
            self._tensors.update(to_host(self._on_device))
            self._on_device.clear()
        for name, t in self._tensors.items():
            array = t.numpy()
            self.arrays[name] = array[0] if array.ndim > 0 and array.shape[0] == 1 else array
        self._tensors.clear()

    # -- reading ------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.arrays[name]
        except KeyError:
            raise KeyError(f"{name!r} was not captured; captured: {len(self.arrays)} names") from None

    def __contains__(self, name: str) -> bool:
        return name in self.arrays

    def names(self, pattern: str = "*") -> list[str]:
        return [n for n in self.arrays if fnmatch.fnmatchcase(n, pattern)]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())

    # -- the export format (docs/trace-format.md) ---------------------------------------------
    def save(self, path) -> None:
        """One .npz: arrays under their capture names, plus `__meta__` (a JSON string)."""
        meta = {"format_version": FORMAT_VERSION, **self.meta}
        # Any: numpy's stub lets a **name be allow_pickle (a bool); no capture name is.
        named: dict[str, Any] = {"__meta__": np.array(json.dumps(meta, ensure_ascii=False)), **self.arrays}
        np.savez_compressed(path, **named)

    @classmethod
    def load(cls, path) -> "Trace":
        trace = cls()
        with np.load(path, allow_pickle=False) as data:
            if "__meta__" not in data.files:
                raise ValueError(f"{path}: not a trace file (no __meta__ entry)")
            trace.meta = json.loads(str(data["__meta__"]))
            trace.arrays = {k: data[k] for k in data.files if k != "__meta__"}
        return trace

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        self.save(buffer)
        return buffer.getvalue()


def to_host(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Device tensors -> float32 CPU tensors, waiting for the device once instead of once per tensor.

    On CUDA every value is made float32 on the device and queued (non_blocking) into one pinned buffer;
    after one synchronize the values are views of that buffer. Copying them out again into ordinary memory
    cost more than the transfer: on an H200 a full capture of 512 tokens took 35.3 ms that way and 12.4 ms
    this way (bench/gpu_capture.py, docs/performance.md). The buffer stays pinned while the trace's arrays
    live. Other devices copy one by one.
    """
    out = {n: t.to("cpu", torch.float32) for n, t in tensors.items() if t.device.type != "cuda"}
    on_gpu = {n: t for n, t in tensors.items() if t.device.type == "cuda"}
    if not on_gpu:
        return out
    stage = torch.empty(sum(t.numel() for t in on_gpu.values()), dtype=torch.float32, pin_memory=True)  # [N]
    offset = 0
    for n, t in on_gpu.items():
        view = stage[offset:offset + t.numel()].view(t.shape)
        view.copy_(t.float(), non_blocking=True)
        out[n] = view
        offset += t.numel()
    for device in {t.device for t in on_gpu.values()}:
        torch.cuda.synchronize(device)
    return out
