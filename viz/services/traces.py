"""The view's trace, traced once and shared by every session of the server (bounded by bytes and age), and its
.npz export."""
from __future__ import annotations

import os

import streamlit as st

from model.capture.trace import Trace
from model.inference.pipeline import trace_sentence
from viz.core.i18n import t
from viz.services.models import load_bundle
from viz.services.trace_cache import TraceCache

TraceKey = tuple  # (model_id, text, target, beam, max_tokens): what the trace cache is keyed by

TRACE_CACHE_MB = int(os.environ.get("TRANSFORMER_VIZ_TRACE_CACHE_MB", "400"))
TRACE_TTL_S = 3600


@st.cache_resource
def trace_cache() -> TraceCache:
    """One per server: the byte budget holds across every session (viz/services/trace_cache.py)."""
    return TraceCache(max_bytes=TRACE_CACHE_MB * 2**20, ttl_s=TRACE_TTL_S)


def cached_trace(model_id: str, text: str, target: str | None, beam: int, max_tokens: int,
                 spinner: bool = False) -> Trace:
    """The view's trace from the server's trace cache, traced on a miss (with a spinner on a page run;
    deferred downloads run off the script thread, where a spinner cannot show)."""
    def compute() -> Trace:
        bundle = load_bundle(model_id)
        if not spinner:
            return trace_sentence(bundle, text, target=target, beam=beam, max_tokens=max_tokens)
        with st.spinner(t("spinner.trace")):
            return trace_sentence(bundle, text, target=target, beam=beam, max_tokens=max_tokens)

    return trace_cache().get((model_id, text, target, beam, max_tokens), compute)


def get_trace(model_id: str, text: str, target: str | None, beam: int, max_tokens: int) -> Trace:
    return cached_trace(model_id, text, target, beam, max_tokens, spinner=True)


def trace_npz(model_id: str, text: str, target: str | None, beam: int, max_tokens: int) -> bytes:
    """The trace as the .npz export, made when the download is clicked. Called with the view's keys, not
    the trace, so a pending download holds no arrays (a deferred download keeps what it is given)."""
    return cached_trace(model_id, text, target, beam, max_tokens).to_bytes()
