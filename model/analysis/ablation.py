"""Analyses that run the model: head ablation (a head's output z zeroed or averaged through
capture(edits=...), never by changing the shared model) and statistics over many sentences.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from model.analysis.heads import ID_COLUMNS, Head, aggregate_stats, trace_head_stats
from model.capture import schema
from model.capture.hooks import capture
from model.capture.schema import KINDS
from model.capture.trace import Edit
from model.inference.pipeline import DEFAULT_MAX_TOKENS, encode_text, generate, trace_sentence
from model.io.checkpoint import Bundle

Progress = Callable[[int, int], None]
ABLATION_MODES = ("zero", "mean")


def check_heads(config, heads: Iterable[Head]) -> list[Head]:
    out = []
    for kind, layer, head in heads:
        if kind not in KINDS:
            raise ValueError(f"unknown attention kind {kind!r}; choose from {', '.join(KINDS)}")
        if not 0 <= layer < schema.n_layers(config, kind) or not 0 <= head < config.n_heads:
            raise ValueError(f"no {kind} head layer {layer} head {head} in this model")
        out.append((kind, int(layer), int(head)))
    return sorted(set(out))


def _head_edit(heads: list[int], mode: str, causal: bool):
    index = torch.tensor(heads, dtype=torch.long)

    def edit(z: torch.Tensor) -> torch.Tensor:                  # z [B,H,T,Dh]
        z = z.clone()                                           # never write into the model's tensor
        if mode == "zero":
            z[:, index] = 0.0
        elif causal:  # decoder side: position t only averages positions <= t, so no future leaks in
            chosen = z[:, index]                                 # [B,h,T,Dh]
            counts = torch.arange(1, z.size(2) + 1, dtype=z.dtype, device=z.device)[:, None]   # [T,1]
            z[:, index] = chosen.cumsum(2) / counts
        else:
            z[:, index] = z[:, index].mean(2, keepdim=True).expand(-1, -1, z.size(2), -1)
        return z

    return edit


def ablation_edits(heads: Iterable[Head], mode: str = "zero") -> dict:
    """capture() edits that switch the given heads off.

    mode "zero": the head's output z is 0 (it adds nothing to W^O's input).
    mode "mean": z is replaced by its mean over positions (the head still adds its average, but
    no longer says anything position-specific). On the decoder side the mean is cumulative
    (positions <= t), which keeps teacher-forced scores and step-by-step decoding consistent.
    """
    if mode not in ABLATION_MODES:
        raise ValueError(f"unknown ablation mode {mode!r}; choose from {', '.join(ABLATION_MODES)}")
    by_hook: dict[str, list[int]] = defaultdict(list)
    for kind, layer, head in heads:
        by_hook[schema.z_name(kind, layer)].append(int(head))
    return {name: _head_edit(sorted(set(hs)), mode, causal=not name.startswith("encoder"))
            for name, hs in by_hook.items()}


@torch.no_grad()
def ablated_translation(bundle: Bundle, text: str, heads: Iterable[Head] = (), mode: str = "zero", beam: int = 1,
                        max_tokens: int = DEFAULT_MAX_TOKENS) -> str:
    """The translation with `heads` switched off on every decoding step (greedy or beam)."""
    return bundle.tokenizer.decode(_ablated_ids(bundle, encode_text(bundle, text, max_tokens).ids,
                                                check_heads(bundle.config, heads), mode, beam))


def _ablated_ids(bundle: Bundle, src_ids: list[int], heads: list[Head], mode: str, beam: int = 1) -> list[int]:
    # names=[] stores nothing: only the edits run, on every forward the decoder makes.
    with capture(names=[], edits=ablation_edits(heads, mode)):
        return generate(bundle, src_ids, beam)


def _target_ids(bundle: Bundle, src_ids: list[int], target, max_tokens: int) -> list[int]:
    """Reference ids (ending in </s>): given text or ids, else the model's own greedy output."""
    if target is None or (isinstance(target, str) and not target.strip()):
        return generate(bundle, src_ids) or [bundle.config.eos_id]
    if isinstance(target, str):
        return encode_text(bundle, target, max_tokens, target=True).ids
    ids = [int(i) for i in target]
    if not ids:
        raise ValueError("the reference is empty")
    return ids


@torch.no_grad()
def forced_logprobs(bundle: Bundle, src_ids: list[int], tgt_ids: list[int], heads: Iterable[Head] = (),
                    mode: str = "zero") -> np.ndarray:
    """[T] log p(y_t | y_<t, x) of each reference token, teacher-forced, with `heads` off."""
    model, cfg = bundle.model, bundle.config
    src = torch.tensor([src_ids], device=model.device)                              # [1,S]
    tgt_in = torch.tensor([[cfg.bos_id] + list(tgt_ids[:-1])], device=model.device)  # [1,T]
    with capture(names=[], edits=ablation_edits(check_heads(cfg, heads), mode)):
        logits = model(src, tgt_in)                                                   # [1,T,V]
    logprobs = logits.log_softmax(-1)[0, torch.arange(len(tgt_ids)), torch.tensor(tgt_ids)]
    return logprobs.cpu().numpy().astype(np.float64)


def reference_logprob(bundle: Bundle, text: str, target=None, heads: Iterable[Head] = (), mode: str = "zero",
                      max_tokens: int = DEFAULT_MAX_TOKENS) -> float:
    """log P(reference | source) with `heads` off. target: text, ids, or None (the model's own output)."""
    src_ids = encode_text(bundle, text, max_tokens).ids
    return float(forced_logprobs(bundle, src_ids, _target_ids(bundle, src_ids, target, max_tokens),
                                 heads, mode).sum())


def all_heads(config, kinds: Sequence[str] = KINDS) -> list[Head]:
    return [(kind, layer, head) for kind in kinds for layer in range(schema.n_layers(config, kind))
            for head in range(config.n_heads)]


def rank_heads(bundle: Bundle, text: str, target=None, mode: str = "zero", kinds: Sequence[str] = KINDS,
               progress: Progress | None = None, max_tokens: int = DEFAULT_MAX_TOKENS) -> pd.DataFrame:
    """Ablate each head alone; one row per head, the most harmful removal (largest drop) first.

    Columns: kind, layer, head, logprob (with that head off), delta (logprob - unablated logprob).
    target: reference text or ids; None scores the model's own greedy output.
    """
    src_ids = encode_text(bundle, text, max_tokens).ids
    tgt_ids = _target_ids(bundle, src_ids, target, max_tokens)
    base = forced_logprobs(bundle, src_ids, tgt_ids).sum()
    heads = all_heads(bundle.config, kinds)
    rows = []
    for i, head in enumerate(heads):
        logprob = forced_logprobs(bundle, src_ids, tgt_ids, [head], mode).sum()
        rows.append({"kind": head[0], "layer": head[1], "head": head[2], "logprob": float(logprob),
                     "delta": float(logprob - base)})
        if progress is not None:
            progress(i + 1, len(heads))
    frame = pd.DataFrame(rows, columns=ID_COLUMNS + ["logprob", "delta"])
    return frame.sort_values("delta", kind="stable").reset_index(drop=True)


def corpus_head_stats(bundle: Bundle, sentences: Sequence[str], progress: Progress | None = None,
                      max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[pd.DataFrame, list[str]]:
    """Statistics averaged over many sentences (each on the model's own greedy output).

    Returns (aggregate, problems): sentences that could not be read are skipped and named.
    progress(done, total) is called after each sentence.
    """
    frames, problems = [], []
    for i, sentence in enumerate(sentences):
        try:
            trace = trace_sentence(bundle, sentence, names=schema.patterns_glob(), max_tokens=max_tokens)
            frames.append(trace_head_stats(trace))
        except ValueError as e:
            problems.append(f"line {i + 1}: {e}")
        if progress is not None:
            progress(i + 1, len(sentences))
    if not frames:
        raise ValueError("none of the sentences could be read: " + "; ".join(problems[:3]))
    return aggregate_stats(frames), problems


@torch.no_grad()
def encoder_patterns(bundle: Bundle, src_ids: list[int], drop_pe: bool = False) -> np.ndarray:
    """Encoder self-attention [L,H,S,S] of `src_ids`; drop_pe replaces the positional encoding by 0,
    which shows that without it the encoder cannot tell word order."""
    edits: dict[str, Edit] | None = {schema.embed_name("encoder", "pos"): torch.zeros_like} if drop_pe else None
    with capture(schema.patterns_glob("encoder"), edits=edits) as run:
        bundle.model.encode(torch.tensor([list(src_ids)], device=bundle.model.device))
    return schema.stacked(run, "encoder")
