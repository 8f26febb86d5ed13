"""The models the app offers and their files: finding them (only under model_folders()), loading each once per
server (an Engine; a failed load remembered until the folder changes), the pages' read-only ModelView, the
folder's small text files, and where the model runs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st
import torch

from model.inference.pipeline import DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS, Engine, load_engine
from model.io import models
from model.io.checkpoint import CheckpointError
from model.io.tokenizer import DEFAULT_STYLE  # noqa: F401 (for the sidebar)
from model.io.weights import linear_arrays
from viz.core.i18n import t

def model_root() -> Path:
    """The models folder (the shipped models, or the operator's): the shipped RNNs are read from it."""
    return models.models_folder()


def model_folders() -> list[Path]:
    """Models are only ever read from these folders (model/io/models.py: the models folder, and a person's own
    beside the shipped ones): no path from a user."""
    return models.models_folders()[0]


# One intra-op thread per script run: decoding is hundreds of small ops, and in Streamlit's worker threads
# a 2-thread OpenMP team is re-formed for every op; concurrent sessions then use both cores instead of
# fighting over them (docs/performance-fixes.md).
TORCH_THREADS = 1

torch.set_num_threads(TORCH_THREADS)


def model_ids() -> list[str]:
    """The models the app offers: the folders under model_folders() with a config.json, the default first."""
    return list(models.listed_models(model_folders()))


def resolve_model_dir(model_id: str) -> Path:
    """Only names listed by model_ids() map to a folder: no path traversal through the picker."""
    listed = models.listed_models(model_folders())
    if model_id not in listed:
        raise CheckpointError(f"unknown model {model_id!r}")
    return listed[model_id]


@dataclass(frozen=True)
class ModelView:
    """A loaded model as the pages see it: its configuration, tokenizer, size and measured scores, and its
    attention weights as arrays. Read-only and without the torch module: pages draw, services runs the model."""
    model_id: str
    config: Any                                  # model.nn.config.TransformerConfig (frozen)
    tokenizer: Any                               # model.io.tokenizer: token strings, styles, the style token
    n_parameters: int
    parameter_sizes: tuple[tuple[str, int], ...]  # (name, number of values) of every parameter, in model order
    metrics: dict | None                         # the folder's metrics.json, as the checkpoint read it

    def attention_weights(self, attention: str, which: str) -> tuple[np.ndarray, np.ndarray | None]:
        """(weight [out, in], bias) of one attention sublayer's W^Q, W^K, W^V or W^O (which: q, k, v, o) as
        float64 arrays; attention: its module name (schema.SublayerNames.attn)."""
        return attention_linear(self.model_id, attention, which)


@st.cache_resource(max_entries=4, show_spinner=False)
def model_view(model_id: str) -> ModelView:
    """The pages' view of a model (load_bundle's CheckpointError when it does not load)."""
    bundle = load_bundle(model_id)
    sizes = tuple((name, p.numel()) for name, p in bundle.model.named_parameters())
    return ModelView(model_id, bundle.config, bundle.tokenizer, sum(n for _, n in sizes), sizes,
                     bundle.extra.get("metrics"))


@st.cache_resource(max_entries=64, show_spinner=False)
def attention_linear(model_id: str, attention: str, which: str) -> tuple[np.ndarray, np.ndarray | None]:
    weight, bias = linear_arrays(getattr(load_bundle(model_id).model.get_submodule(attention), f"w_{which}"))
    for array in (weight, bias):
        if array is not None:
            array.flags.writeable = False        # shared by every session
    return weight, bias


@st.cache_resource(max_entries=4, show_spinner=False)   # the sidebar's first call shows a spinner
def load_bundle(model_id: str) -> Engine:
    """The model, loaded once per server (an Engine: greedy decoding shared by sessions); a CheckpointError names files relative to the model folder, so the page never
    shows where the server keeps its files. A failed load is remembered until the folder's files change
    (st.cache_resource keeps only successes): a broken folder costs one load per server, not one per session."""
    folder = resolve_model_dir(model_id)
    seen = folder_fingerprint(folder)
    failed = failed_loads()
    if model_id in failed and failed[model_id][0] == seen:
        raise CheckpointError(failed[model_id][1])
    try:
        return load_engine(folder)
    except CheckpointError as e:
        message = str(e).replace(f"{folder.parent}{os.sep}", "")
        failed[model_id] = (seen, message)
        raise CheckpointError(message) from None


@st.cache_resource
def failed_loads() -> dict[str, tuple[tuple, str]]:
    """model id -> (folder_fingerprint at the failure, the error): one per server, shared by sessions."""
    return {}


def folder_fingerprint(folder: Path) -> tuple:
    """(name, kind, size, mtime) of each entry of a model folder, without reading any: what a changed file changes."""
    entries = []
    for path in sorted(folder.iterdir()):
        try:
            info = path.stat()
        except OSError:                                       # a broken link
            entries.append((path.name, None))
            continue
        entries.append((path.name, info.st_mode, info.st_size, info.st_mtime_ns))
    return tuple(entries)


def model_file_text(model_id: str, name: str) -> str | None:
    """presets.txt, README.md or train_log.csv of a model (model/io/models.model_file_text); its errors name the
    file, not where the server keeps it."""
    folder = models.listed_models(model_folders()).get(model_id, model_root() / model_id)
    try:
        return models.model_file_text(folder, name)
    except (ValueError, OSError) as e:
        raise ValueError(str(e).replace(f"{folder.parent}{os.sep}", "")) from None


def max_tokens_bounds() -> tuple[int, int, int]:
    return 8, DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS


def device_label(model_id: str) -> str:
    """Where the model runs, in the page's language: "CPU (2 threads)", "GPU: NVIDIA H100 80GB HBM3"."""
    device = load_bundle(model_id).model.device
    if device.type == "cuda":
        return t("sidebar.device.cuda", name=torch.cuda.get_device_name(device))
    threads = torch.get_num_threads()
    return t("sidebar.device.cpu_one") if threads == 1 else t("sidebar.device.cpu", threads=threads)
