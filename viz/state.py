"""Shared frame state: cached model and traces, URL query parameters, the current sentence.

Everything a page needs about "what is being looked at" comes from `current()`, which app.py fills
once per run from the sidebar. Pages read it; they never load models themselves.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st
import torch

from model.io.checkpoint import Bundle, CheckpointError
from model.inference.pipeline import load_engine
from model.inference.pipeline import DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS, trace_sentence
from model.capture.trace import Trace
from viz.text import plain
from viz.trace_cache import TraceCache

ROOT = Path(__file__).resolve().parents[1]


def model_root() -> Path:
    """Models are only ever read from this folder (or one named by an operator): no path from a user.
    Read on every call, so the operator's TRANSFORMER_VIZ_MODELS applies without re-importing this module."""
    return Path(os.environ.get("TRANSFORMER_VIZ_MODELS", ROOT / "pretrained")).resolve()


MODEL_ROOT = model_root()  # the folder at start-up (tests read the shipped models from it)
DEFAULT_MODEL = "en-es"
MAX_TEXT_CHARS = 5000
# One intra-op thread per script run. Decoding is hundreds of small ops, and Streamlit runs scripts in
# worker threads, where a 2-thread OpenMP team is re-formed for every op: greedy decoding of a
# 256-token sentence took 1.9 s on 2 threads there and 0.77 s on 1 (2-core server, quiet). The
# full-capture pass loses little (512 tokens: 0.12 s on 2 threads, 0.16 s on 1), and concurrent
# sessions then use both cores instead of fighting over them.
TORCH_THREADS = 1

torch.set_num_threads(TORCH_THREADS)


def model_ids() -> list[str]:
    """Folders under MODEL_ROOT that look like checkpoints; the default model first."""
    root = model_root()
    if not root.is_dir():
        return []
    ids = sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "config.json").is_file())
    return sorted(ids, key=lambda m: (m != DEFAULT_MODEL, not m.startswith("en-"), m))


def resolve_model_dir(model_id: str) -> Path:
    """Only names listed by model_ids() map to a folder: no path traversal through the picker."""
    if model_id not in model_ids():
        raise CheckpointError(f"unknown model {model_id!r}")
    return model_root() / model_id


@st.cache_resource(max_entries=4, show_spinner="Loading the model…")
def load_bundle(model_id: str) -> Bundle:
    """The model's Bundle; a CheckpointError names files relative to the model folder, so the page never
    shows where the server keeps its files."""
    try:
        return load_engine(resolve_model_dir(model_id))
    except CheckpointError as e:
        raise CheckpointError(str(e).replace(f"{model_root()}{os.sep}", "")) from None


TRACE_CACHE_MB = int(os.environ.get("TRANSFORMER_VIZ_TRACE_CACHE_MB", "400"))
TRACE_TTL_S = 3600


@st.cache_resource
def trace_cache() -> TraceCache:
    """One per server: the byte budget holds across every session (viz/trace_cache.py)."""
    return TraceCache(max_bytes=TRACE_CACHE_MB * 2**20, ttl_s=TRACE_TTL_S)


def get_trace(model_id: str, text: str, target: str | None, beam: int, max_tokens: int) -> Trace:
    def compute() -> Trace:
        with st.spinner("Running the model…"):
            return trace_sentence(load_bundle(model_id), text, target=target, beam=beam, max_tokens=max_tokens)

    return trace_cache().get((model_id, text, target, beam, max_tokens), compute)


def presets(model_id: str) -> list[str]:
    """Example sentences shipped with the model (presets.txt), one per line."""
    path = model_root() / model_id / "presets.txt"
    if path.is_file():
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
        return [ln for ln in lines if ln]
    return ["The man went to the house."]


@dataclass
class Context:
    """What the shared sidebar chose for this run."""
    model_id: str
    bundle: Bundle
    text: str
    target: str | None
    beam: int
    max_tokens: int
    trace: Trace | None
    notices: list[str] = field(default_factory=list)

    @property
    def n_layers(self) -> tuple[int, int]:
        return self.bundle.config.n_encoder_layers, self.bundle.config.n_decoder_layers


def set_current(ctx: Context | None) -> None:
    st.session_state["_ctx"] = ctx


def current() -> Context | None:
    return st.session_state.get("_ctx")


# -- URL query parameters -------------------------------------------------------------------------
def qp_str(name: str, default: str | None = None, max_len: int = MAX_TEXT_CHARS) -> str | None:
    value = st.query_params.get(name)
    if value is None:
        return default
    return str(value)[:max_len]


def _notice(message: str, notices: list[str] | None) -> None:
    """Collect for the header (sidebar parameters) or show in place (page parameters)."""
    if notices is None:
        st.warning(plain(message, limit=600))  # quotes the raw parameter: no Markdown links from a URL
    else:
        notices.append(message)


def qp_int(name: str, default: int, lo: int, hi: int, notices: list[str] | None = None) -> int:
    """An integer parameter in [lo, hi]; anything else falls back to the default with a notice."""
    raw = st.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw))
    except ValueError:
        value = None
    if value is None or not lo <= value <= hi:
        _notice(f"URL parameter {name}={str(raw)[:40]!r} is not a whole number from {lo} to {hi}; "
                f"using {default}.", notices)
        return default
    return value


def qp_choice(name: str, choices: list[str], default: str, notices: list[str] | None = None) -> str:
    raw = st.query_params.get(name)
    if raw is None:
        return default
    if raw not in choices:
        _notice(f"URL parameter {name}={str(raw)[:40]!r} is not one of {', '.join(choices)}; "
                f"using {default}.", notices)
        return default
    return raw


def set_query(**params) -> None:
    """Write the current view into the URL (None removes a parameter)."""
    for key, value in params.items():
        if value is None or value == "":
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


def max_tokens_bounds() -> tuple[int, int, int]:
    return 8, DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS
