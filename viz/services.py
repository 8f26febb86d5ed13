"""Every cache of the app: loaded models (engines), traces, step-by-step decodings, ablations, the
positional page's runs, live toy training. The only viz module that touches model io, inference and
training, so a page never loads or runs a model itself.

Shared results are read-only: st.cache_resource hands every session the same object (no copy per
rerun); the trace cache is bounded by bytes across all sessions (viz/trace_cache.py).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
import torch

from model.analysis import ablation, attribution, patching
from model.analysis.attention_math import linear_arrays, softmax
from model.analysis.decoding import Decoding, run_decoding
from model.capture import schema
from model.capture.trace import Trace
from model.inference.pipeline import (DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS, Engine, load_engine, source_ids,
                                      trace_sentence)
from model.io import models
from model.io.checkpoint import CheckpointError
from model.io.tokenizer import DEFAULT_STYLE  # noqa: F401 (for the sidebar)
from model.nn.layers import sinusoidal_table
from model.training.live import (TRAINING_THREADS, LiveRun, make_example, parse_symbols,  # noqa: F401 (for the page)
                                 train_live, trained_lengths_note, training_slot)
from model.training.tasks import TASKS  # noqa: F401 (for the page)
from model.training.toy import TOY_SIZES  # noqa: F401 (for the page)
from viz import ROOT
from viz.i18n import t
from viz.trace_cache import TraceCache

def model_root() -> Path:
    """Models are only ever read from this folder (model/io/models.py): no path from a user."""
    return models.models_folder(ROOT / "pretrained")


# One intra-op thread per script run: decoding is hundreds of small ops, and in Streamlit's worker threads
# a 2-thread OpenMP team is re-formed for every op; concurrent sessions then use both cores instead of
# fighting over them (docs/performance-fixes.md).
TORCH_THREADS = 1

torch.set_num_threads(TORCH_THREADS)


def model_ids() -> list[str]:
    """The models the app offers: the folders under model_root() with a config.json, the default first."""
    return models.model_ids(model_root())


def resolve_model_dir(model_id: str) -> Path:
    """Only names listed by model_ids() map to a folder: no path traversal through the picker."""
    if model_id not in model_ids():
        raise CheckpointError(f"unknown model {model_id!r}")
    return model_root() / model_id


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


def with_spinner(key: str):
    """A cached function's spinner in the page's language (show_spinner's text is fixed at import). It
    is entered on every call, and st.spinner draws only after 0.5 s, so a cache hit shows nothing."""
    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with st.spinner(t(key)):
                return fn(*args, **kwargs)
        return run
    return decorate


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
        message = str(e).replace(f"{model_root()}{os.sep}", "")
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

MODEL_FILE_LIMITS = models.MODEL_FILE_LIMITS


def model_file_text(model_id: str, name: str) -> str | None:
    """presets.txt, README.md or train_log.csv of a model (model/io/models.model_file_text); its errors name the
    file, not where the server keeps it."""
    try:
        return models.model_file_text(model_root() / model_id, name)
    except (ValueError, OSError) as e:
        raise ValueError(str(e).replace(f"{model_root()}{os.sep}", "")) from None


TRACE_CACHE_MB = int(os.environ.get("TRANSFORMER_VIZ_TRACE_CACHE_MB", "400"))
TRACE_TTL_S = 3600


@st.cache_resource
def trace_cache() -> TraceCache:
    """One per server: the byte budget holds across every session (viz/trace_cache.py)."""
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


@st.cache_data(max_entries=8, show_spinner=False)
def preset_groups(model_id: str) -> dict[str, list[str]]:
    """Example sentences shipped with the model (presets.txt: '# group' lines, then one sentence a line;
    written by `python -m model.cli examples`, which measures them). Lines before any group are 'start'."""
    try:
        text = model_file_text(model_id, "presets.txt")
    except ValueError:                                   # too big, or not a file: the default sentence
        text = None
    if text is None:
        return {"start": ["The man went to the house."]}
    groups: dict[str, list[str]] = {}
    group = "start"
    for line in text.splitlines():   # a bad byte costs one line, not the page
        line = line.strip()
        if line.startswith("# "):
            group = line[2:].strip() if len(line[2:].split()) == 1 else group   # a one-word header names a group
        elif line:
            groups.setdefault(group, []).append(line)
    return groups or {"start": ["The man went to the house."]}


TEST_SPLITS = ("test.tsv", "everyday_test.tsv")    # held-out pairs a model folder may ship: 'en<TAB>es' a line


@st.cache_data(max_entries=8, show_spinner=False)
def split_references(model_id: str) -> dict[str, str]:
    """Source sentence -> its reference translation, from the model folder's test splits (TEST_SPLITS; the
    first line is the header). Empty for a model without them; an unreadable file is skipped."""
    references: dict[str, str] = {}
    for name in TEST_SPLITS:
        try:
            text = model_file_text(model_id, name)
        except ValueError:
            continue
        for line in (text or "").splitlines()[1:]:
            source, tab, reference = line.partition("\t")
            if tab and source.strip() and reference.strip():
                references.setdefault(source.strip(), reference.strip())
    return references


def reference_of(model_id: str, sentence: str) -> str | None:
    """The test split's reference translation of this sentence, or None (not a test-split source)."""
    return split_references(model_id).get(sentence.strip())


def presets_refused(model_id: str) -> str | None:
    """Why the model folder's presets.txt was not read (a link, a FIFO, a device, too big), naming it; None when
    it was read or is absent. The sidebar says it, so the default sentence is not a silent fallback."""
    try:
        model_file_text(model_id, "presets.txt")
    except ValueError as e:
        return str(e)
    return None


def presets(model_id: str) -> list[str]:
    """Every example sentence, the default (the first) first."""
    return [s for group in preset_groups(model_id).values() for s in group]


def max_tokens_bounds() -> tuple[int, int, int]:
    return 8, DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS


def device_label(model_id: str) -> str:
    """Where the model runs, in the page's language: "CPU (2 threads)", "GPU: NVIDIA H100 80GB HBM3"."""
    device = load_bundle(model_id).model.device
    if device.type == "cuda":
        return t("sidebar.device.cuda", name=torch.cuda.get_device_name(device))
    threads = torch.get_num_threads()
    return t("sidebar.device.cpu_one") if threads == 1 else t("sidebar.device.cpu", threads=threads)


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


# -- live toy training (model/training/live.py: one training per server process) ----------------------------
def trace_toy(run: LiveRun, text: str) -> Trace:
    """The live-trained toy model's cross-attention on `text` (not cached: the model changes while it trains)."""
    return trace_sentence(run.bundle(), text, names=schema.patterns_glob("cross"))


# -- the home page's confidence per output token ---------------------------------------------------------
def token_confidence(model_id: str, trace: Trace) -> pd.DataFrame | None:
    """For each output token t (meta tgt_ids): p of that token under row t of the trace's logits, and the
    most probable other token (the runner-up) with its p. None when the trace has no logits."""
    if schema.LOGITS not in trace:
        return None
    probs = softmax(trace[schema.LOGITS])                                              # [T, V]
    ids = np.asarray(trace.meta["tgt_ids"], dtype=int)
    rows = np.arange(len(ids))
    others = probs.copy()
    others[rows, ids] = -1.0
    other_ids = others.argmax(1)
    return pd.DataFrame({"token": trace.meta["tgt_out_tokens"], "p": probs[rows, ids],
                         "runner_up": load_bundle(model_id).tokenizer.token_strings(other_ids.tolist()),
                         "runner_up_p": probs[rows, other_ids]})


# -- live toy training: the model before its first step (the training page's picture before Train) -------------
@st.cache_resource(max_entries=16, show_spinner=False)
def untrained_snapshot(task: str, size: str, symbols: tuple[str, ...]):
    """Attention on the example in the toy model a training of this size starts from: train_toy's seed-0
    initial weights, before step 1 (a Snapshot at step 0). The global random state is left as it was."""
    from model.nn.transformer import Transformer
    from model.training.live import snapshot
    from model.training.toy import toy_config

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Transformer(toy_config(size)).eval()
    return snapshot(model, make_example(task, list(symbols)), dict(step=0, loss=float("nan"), accuracy=0.0))


# -- attribution (model/analysis/attribution.py, patching.py; the Attribution page) -------------------------
TraceKey = tuple  # (model_id, text, target, beam, max_tokens): what the trace cache is keyed by


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


# -- before the Transformer: GRU encoder-decoders with and without attention (model/nn/rnn.py) ------------------
RNN_FOLDER = "rnn-reverse"      # under model_root(): rnn.json, <attention>.safetensors, metrics.json


def rnn_models(folder: str = RNN_FOLDER):
    """(task, {attention: model}, metrics) of a shipped RNN folder under model_root(), loaded once per server;
    CheckpointError naming the file relative to the models' folder when it is missing or broken."""
    return _rnn_models(str(model_root()), folder)


@st.cache_resource(max_entries=2, show_spinner=False)
def _rnn_models(root: str, folder: str):
    from model.io.rnn_checkpoint import load_rnns
    try:
        return load_rnns(Path(root) / folder)
    except CheckpointError as e:
        raise CheckpointError(str(e).replace(f"{root}{os.sep}", "")) from None


def rnn_reading(folder: str, attention: str, text: str):
    """One input through one shipped RNN, greedily (model/inference/rnn.RNNReading: output, contexts, attention)."""
    return _rnn_reading(str(model_root()), folder, attention, text)


@st.cache_data(max_entries=64, show_spinner=False)
def _rnn_reading(root: str, folder: str, attention: str, text: str):
    from model.inference.rnn import read_input
    from model.training.tasks import toy_tokenizer
    return read_input(_rnn_models(root, folder)[1][attention], toy_tokenizer(), text)


def train_rnns(task: str, attentions: list[str], steps: int, on_progress, on_wait) -> dict:
    """The training page's RNNs, trained live in the process's one training slot (model/training/live.py):
    {"task", "steps", "train_lengths", "tables": {attention: accuracy by length}, "seconds": {attention: s}}."""
    from model.training.live import train_rnns_live
    from model.training.rnn import TRAIN_LENGTHS
    with training_slot(on_wait):
        runs = train_rnns_live(task, attentions, steps, on_progress)
    return dict(task=task, steps=steps, train_lengths=TRAIN_LENGTHS, tables={a: table for a, (_r, table) in runs.items()},
                seconds={a: r.history[-1]["seconds"] for a, (r, _table) in runs.items()})


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
