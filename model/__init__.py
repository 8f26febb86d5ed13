"""Our encoder-decoder Transformer, instrumented: the public API.

    from model import find_model, load_checkpoint, trace_sentence, translate
    bundle = load_checkpoint(find_model("en-es"))          # a name (the shipped models) or a folder
    trace = trace_sentence(bundle, "The man went to the house.")     # modern Spanish; style="bible" for 1909's

Names are imported on first use, so `from model import runtime` (which must run before torch loads)
does not load torch.
"""
from __future__ import annotations

import importlib
import sys
import types

_PUBLIC = {
    "Transformer": "model.nn.transformer",
    "TransformerConfig": "model.nn.config",
    "load_checkpoint": "model.io.checkpoint",
    "find_model": "model.io.models",
    "capture": "model.capture.hooks",
    "Trace": "model.capture.trace",
    "trace_sentence": "model.inference.pipeline",
    "translate": "model.inference.pipeline",
}
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'model' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name]), name)


class _PublicNames(types.ModuleType):
    """`capture` is both a public function and the subpackage model/capture/. Importing the subpackage makes
    Python set this package's attribute `capture` to it, and `from model import capture` then gave the
    subpackage ("'module' object is not callable"). A public name is never replaced by a submodule here: the
    subpackage stays importable as itself (`from model.capture import hooks`, `import model.capture.hooks`)."""

    def __setattr__(self, name: str, value) -> None:
        if name in _PUBLIC and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _PublicNames
