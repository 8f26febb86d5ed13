"""Capture intermediate values of a forward pass without touching the shared model.

`HookPoint` is an identity module placed at every point of interest; its name is its path in the
module tree (e.g. "encoder.layers.0.self_attn.hook_pattern"). While a `Trace` is active in this
thread's context (`with capture() as trace:`), each HookPoint hands its value to the trace, which may
store it (names filter) or replace it (edits, used for ablation). With no trace active a HookPoint
costs one ContextVar lookup. Nothing is stored on modules and no torch hooks are registered, so one
cached model can serve many threads at once.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import torch
from torch import nn

FORMAT_VERSION = 1
_ACTIVE: ContextVar["Trace | None"] = ContextVar("active_trace", default=None)

Edit = Callable[[torch.Tensor], torch.Tensor]


class HookPoint(nn.Module):
    """Identity; reports its input to the active Trace, if any.

    A trace keeps the tensor it is given, without copying: the model never writes to a value after
    computing it. copy=True is for values that share memory with a parameter or buffer (LayerNorm's
    gain, the positional table), which an optimizer step changes in place.
    """

    def __init__(self, copy: bool = False):
        super().__init__()
        self.name = ""  # set once by name_hook_points()
        self.copy = copy

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        trace = _ACTIVE.get()
        return x if trace is None else trace.visit(self.name, x, self.copy)

    # Skip nn.Module's hook dispatch: no torch hooks are ever registered here, and this runs ~150 times
    # per forward pass.
    __call__ = forward


def name_hook_points(root: nn.Module) -> list[str]:
    names = []
    for name, module in root.named_modules():
        if isinstance(module, HookPoint):
            module.name = name
            names.append(name)
    return names


def active_trace() -> "Trace | None":
    return _ACTIVE.get()


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
        import io
        buffer = io.BytesIO()
        self.save(buffer)
        return buffer.getvalue()


@contextmanager
def capture(names: Iterable[str] | str | None = None, edits: dict[str, Edit] | None = None) -> Iterator[Trace]:
    """`with capture("*.hook_pattern") as trace: model(...)`; names are exact or glob patterns."""
    trace = Trace(names, edits)
    token = _ACTIVE.set(trace)
    try:
        yield trace
    finally:
        _ACTIVE.reset(token)
        trace.finish()


def main(argv=None) -> None:
    from model.checkpoint import load_checkpoint
    from model.pipeline import trace_sentence

    parser = argparse.ArgumentParser(description="Capture a Trace of one sentence to an .npz file.")
    parser.add_argument("--model", required=True, help="checkpoint folder (model.safetensors, ...)")
    parser.add_argument("--text", required=True, help="source sentence")
    parser.add_argument("--target", default=None, help="reference target (teacher forcing)")
    parser.add_argument("--names", default=None, help="comma-separated names or glob patterns")
    parser.add_argument("--out", required=True, help="output .npz path")
    args = parser.parse_args(argv)
    bundle = load_checkpoint(args.model)
    names = args.names.split(",") if args.names else None
    trace = trace_sentence(bundle, args.text, target=args.target, names=names)
    trace.save(args.out)
    print(f"{args.out}: {len(trace.arrays)} arrays, {trace.nbytes / 1e6:.1f} MB uncompressed; "
          f"output: {trace.meta['tgt_text']}")


if __name__ == "__main__":
    main()
