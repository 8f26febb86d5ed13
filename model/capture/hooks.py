"""Capture intermediate values of a forward pass without touching the shared model.

`HookPoint` is an identity module placed at every point of interest; its name is its path in the
module tree (model/capture/schema.py makes every such name). While a `Trace` is active in this
thread's context (`with capture() as trace:`), each HookPoint hands its value to the trace, which may
store it (names filter) or replace it (edits, used for ablation and patching). With no trace active a
HookPoint costs one ContextVar lookup. Nothing is stored on modules and no torch hooks are registered,
so one cached model can serve many threads at once.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterable, Iterator

import torch
from torch import nn

from model.capture.trace import Edit, Trace

_ACTIVE: ContextVar["Trace | None"] = ContextVar("active_trace", default=None)


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
