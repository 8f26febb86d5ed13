"""The analyses the pages show, run on the loaded model and cached: step-by-step decoding, head ablation, the
positional page's runs, attribution (logit lens, gradients, contrastive, patching) and the zoo's fitted weights."""
from __future__ import annotations

import numpy as np
import streamlit as st
import torch

from model.analysis import ablation, attribution, patching
from model.analysis.decoding import Decoding, run_decoding
from model.inference.pipeline import source_ids
from model.nn.layers import sinusoidal_table
from viz.services.models import folder_fingerprint, load_bundle, resolve_model_dir
from viz.services.spinner import with_spinner
from viz.services.traces import TraceKey, cached_trace


# -- step-by-step decoding ------------------------------------------------------------------------------
@with_spinner("spinner.decoding")
@st.cache_resource(max_entries=16, ttl=1800, show_spinner=False)
def get_decoding(model_id: str, text: str, method: str, beam: int, max_tokens: int,
                 no_repeat_ngram: int = 0) -> Decoding:
    with torch.inference_mode():
        return run_decoding(load_bundle(model_id), text, method, beam, max_tokens, no_repeat_ngram)


# -- head ablation --------------------------------------------------------------------------------------
@with_spinner("spinner.ablation")
@st.cache_data(max_entries=64, show_spinner=False)
def ablated_translation(model_id: str, text: str, heads: tuple, mode: str, beam: int, max_tokens: int) -> str:
    return ablation.ablated_translation(load_bundle(model_id), text, heads, mode, beam, max_tokens)


@st.cache_data(max_entries=256, show_spinner=False)
def reference_logprob(model_id: str, text: str, target: tuple, heads: tuple, mode: str, max_tokens: int) -> float:
    return ablation.reference_logprob(load_bundle(model_id), text, list(target), heads, mode, max_tokens)


def rank_heads(model_id: str, text: str, target, mode: str, max_tokens: int, progress):
    return ablation.rank_heads(load_bundle(model_id), text, target, mode, progress=progress, max_tokens=max_tokens)


def corpus_head_stats(model_id: str, sentences: list[str], max_tokens: int, progress):
    return ablation.corpus_head_stats(load_bundle(model_id), sentences, max_tokens=max_tokens, progress=progress)


# -- positional encoding --------------------------------------------------------------------------------
@st.cache_data(max_entries=32, show_spinner=False)
def encoder_patterns(model_id: str, ids: tuple[int, ...], drop_pe: bool) -> np.ndarray:
    """Encoder self-attention [L,H,S,S] of `ids`, optionally with the positional encoding replaced by 0."""
    return ablation.encoder_patterns(load_bundle(model_id), list(ids), drop_pe)


@st.cache_resource(max_entries=4, show_spinner=False)
def positional_table(model_id: str) -> np.ndarray:
    """[max_len, D] the model's own table for source positions: the sinusoidal buffer or learned weights."""
    return load_bundle(model_id).model.src_embed.pos.table.detach().cpu().numpy().astype(np.float64)


@st.cache_resource(max_entries=4, show_spinner=False)
def paper_table(n_positions: int, d_model: int) -> np.ndarray:
    """[P, D] the paper's sinusoidal table, as the model computes it (for models with a learned table)."""
    return sinusoidal_table(n_positions, d_model).double().numpy()


# -- attribution (model/analysis/attribution.py, patching.py; the Attribution page) -------------------------
@st.cache_data(max_entries=64, show_spinner=False)
def logit_lens(key: TraceKey, k: int) -> attribution.LogitLens:
    return attribution.logit_lens(load_bundle(key[0]), cached_trace(*key), k=k)


@with_spinner("spinner.gradients")
@st.cache_data(max_entries=32, show_spinner=False)
def source_maps(key: TraceKey, steps: int, with_ig: bool) -> dict[str, np.ndarray]:
    """Every method's [T,S] map (rows sum to 1) for the sentence of `key`; IG only when `with_ig`."""
    bundle, trace = load_bundle(key[0]), cached_trace(*key)
    src, tgt = trace.meta["src_ids"], trace.meta["tgt_ids"]
    norms = attribution.value_norms(bundle, trace)
    maps = {"attention": attribution.raw_cross_attention(trace), "rollout": attribution.cross_rollout(trace, "last"),
            "rollout_all": attribution.cross_rollout(trace, "all"),
            "value_norm": attribution.value_norm_map(norms, "last"),
            "grad": attribution.gradient_x_input(bundle, src, tgt).map}
    if with_ig:
        maps["ig"] = attribution.integrated_gradients(bundle, src, tgt, steps=steps).map
    return maps


@with_spinner("spinner.contrastive")
@st.cache_data(max_entries=64, show_spinner=False)
def contrastive(model_id: str, src_ids: tuple, prefix: tuple, chosen: int, alternative: int,
                steps: int) -> attribution.Contrastive:
    return attribution.contrastive(load_bundle(model_id), src_ids, prefix, chosen, alternative, steps=steps)


@with_spinner("spinner.patching")
@st.cache_data(max_entries=32, show_spinner=False)
def patch(model_id: str, clean: tuple, corrupted: tuple, prefix: tuple, chosen: int) -> patching.Patching:
    return patching.activation_patching(load_bundle(model_id), clean, corrupted, prefix, chosen)


def encode(model_id: str, text: str) -> list[int]:
    """The sentence's token ids, uncut (patching needs the true length)."""
    return source_ids(load_bundle(model_id), text)


def fitted_zoo(model_id: str):
    """The zoo's general and additive weights fitted to this model's heads (its folder's zoo_fit.safetensors,
    written by `fit-zoo`; model/analysis/zoo_fit.py) as (ZooFit, None); (None, None) when the folder has none
    (toy models, a user's folder: the zoo then shows random weights); (None, one sentence) when the file cannot
    be used (too big, corrupt, another model's), so the page says why and falls back to random weights.
    Read once per server until the folder's files change."""
    return _fitted_zoo(model_id, folder_fingerprint(resolve_model_dir(model_id)))


@st.cache_resource(max_entries=8, show_spinner=False)
def _fitted_zoo(model_id: str, seen: tuple):   # seen: the folder's files (the cache key; unused here)
    from model.analysis import zoo_fit
    try:
        return zoo_fit.load_fit(resolve_model_dir(model_id), load_bundle(model_id).config), None
    except zoo_fit.ZooFitError as e:
        return None, str(e)
