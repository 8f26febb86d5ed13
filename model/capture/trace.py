"""A Trace: named numpy arrays from one forward pass, plus the tokens and config that explain them,
and its export format (one .npz; docs/trace-format.md)."""
from __future__ import annotations

import fnmatch
import io
import json
from typing import Callable, Iterable

import numpy as np
import torch

FORMAT_VERSION = 1

Edit = Callable[[torch.Tensor], torch.Tensor]


class Trace:
    """Named numpy arrays from one forward pass, plus the tokens and config that explain them.

    During capture tensors keep their batch dimension; when capture ends they become float32 numpy
    arrays and a batch dimension of size 1 is dropped, so `trace["...hook_pattern"]` of one
    sentence is [head, query, key].
    """

    def __init__(self, names: Iterable[str] | str | None = None, edits: dict[str, Edit] | None = None):
        if isinstance(names, str):
            names = [names]
        self.patterns = None if names is None else list(names)
        self.edits = dict(edits or {})
        self._tensors: dict[str, torch.Tensor] = {}
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
            if copy or kept.dtype != torch.float32 or kept.device.type != "cpu":
                kept = kept.to("cpu", torch.float32, copy=copy)                  # see HookPoint
            self._tensors[name] = kept
        return x

    def finish(self) -> None:
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
        np.savez_compressed(path, __meta__=np.array(json.dumps(meta, ensure_ascii=False)), **self.arrays)

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
