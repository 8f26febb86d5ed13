"""Head analysis: per-head statistics, head ablation, attention rollout and attention flow.

Everything here is numpy/torch/pandas (no Streamlit), so pages stay thin and it is tested directly.

Heads are named (kind, layer, head) with kind one of KINDS:
  "encoder"  encoder self-attention       patterns [H,S,S]
  "decoder"  decoder masked self-attention patterns [H,T,T] (causal)
  "cross"    decoder -> encoder attention   patterns [H,T,S]
Ablation edits a head's output `...hook_z` through `capture(edits=...)`: the shared model is never changed.
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict, deque
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from model.io.checkpoint import Bundle
from model.inference.pipeline import DEFAULT_MAX_TOKENS, encode_text, generate, trace_sentence
from model.capture.hooks import capture
from model.capture.trace import Trace

KINDS = ("encoder", "decoder", "cross")
SUBLAYER = {"encoder": ("encoder", "self_attn"), "decoder": ("decoder", "self_attn"),
            "cross": ("decoder", "cross_attn")}
EOS, BOS = "</s>", "<s>"

# Statistic columns, in table order, with a short readable name.
STATS = {
    "entropy": "entropy (nats)",
    "entropy_norm": "entropy / log(#keys)",
    "distance": "mean distance |i−j|",
    "self": "share on itself",
    "prev": "share on previous token",
    "next": "share on next token",
    "eos": "share on </s>",
    "bos": "share on <s>",
    "punct": "share on punctuation",
    "max_weight": "mean row maximum",
}
ID_COLUMNS = ["kind", "layer", "head"]
Head = tuple[str, int, int]
Progress = Callable[[int, int], None]
ABLATION_MODES = ("zero", "mean")
MAX_FLOW_TOKENS = 32


# -- statistics of one attention kind, one layer -------------------------------------------------
def is_punctuation(label: str) -> bool:
    """A token label made only of punctuation (after the '▁' word-start marker), e.g. '.', '▁,', '?!'."""
    core = label.replace("▁", "")
    return bool(core) and all(unicodedata.category(ch).startswith("P") for ch in core)


def _check_patterns(patterns, key_labels: Sequence[str], kind: str) -> np.ndarray:
    a = np.asarray(patterns, dtype=np.float64)
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; choose from {', '.join(KINDS)}")
    if a.ndim != 3 or 0 in a.shape:
        raise ValueError(f"expected patterns [head, query, key], got shape {a.shape}")
    if a.shape[2] != len(key_labels):
        raise ValueError(f"{a.shape[2]} keys but {len(key_labels)} key labels")
    if kind != "cross" and a.shape[1] != a.shape[2]:
        raise ValueError(f"{kind} self-attention must be square, got {a.shape[1]} queries x {a.shape[2]} keys")
    if not np.isfinite(a).all() or (a < 0).any():
        raise ValueError("attention weights must be finite and non-negative")
    return a


def _diagonal_share(a: np.ndarray, offset: int) -> np.ndarray:
    """[H]: mean over queries i (where key i+offset exists) of a[h, i, i+offset]; NaN if none."""
    diag = np.diagonal(a, offset=offset, axis1=1, axis2=2)          # [H, n]
    return diag.mean(-1) if diag.shape[-1] else np.full(a.shape[0], np.nan)


def head_statistics(patterns, key_labels: Sequence[str], kind: str, layer: int = 0) -> list[dict]:
    """One record per head of one layer. patterns [H,Q,K] (rows sum to 1); labels name the keys.

    Entropy is averaged over queries; the normalised entropy divides each row by log(#keys that
    row may see) (i+1 for causal decoder rows, rows with one key skipped), so 1 = uniform.
    Distance is sum_j a_ij |i - j| in tokens; for cross-attention the query position is first
    scaled onto the source length (i * (S-1)/(T-1)), so it measures distance from a straight
    diagonal alignment. Self/previous/next shares are NaN where they cannot exist (cross-attention;
    "next" under the causal mask).
    """
    a = _check_patterns(patterns, key_labels, kind)                  # [H,Q,K]
    n_heads, n_q, n_k = a.shape
    rows = np.arange(n_q)
    allowed = np.minimum(rows + 1, n_k) if kind == "decoder" else np.full(n_q, n_k)   # [Q]
    row_entropy = -np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0).sum(-1)  # [H,Q]
    wide = allowed > 1
    entropy_norm = ((row_entropy[:, wide] / np.log(allowed[wide])).mean(-1) if wide.any()
                    else np.full(n_heads, np.nan))
    query_pos = rows * ((n_k - 1) / (n_q - 1)) if (kind == "cross" and n_q > 1) else rows.astype(float)
    distance = (a * np.abs(query_pos[:, None] - np.arange(n_k)[None, :])).sum(-1).mean(-1)   # [H]
    nan = np.full(n_heads, np.nan)
    positional = kind != "cross"
    key_share = lambda mask: a[:, :, np.asarray(mask, dtype=bool)].sum(-1).mean(-1)  # noqa: E731 [H]
    stats = {
        "entropy": row_entropy.mean(-1),
        "entropy_norm": entropy_norm,
        "distance": distance,
        "self": _diagonal_share(a, 0) if positional else nan,
        "prev": _diagonal_share(a, -1) if positional else nan,
        "next": _diagonal_share(a, 1) if kind == "encoder" else nan,
        "eos": key_share([lab == EOS for lab in key_labels]),
        "bos": key_share([lab == BOS for lab in key_labels]),
        "punct": key_share([is_punctuation(lab) for lab in key_labels]),
        "max_weight": a.max(-1).mean(-1),
    }
    return [{"kind": kind, "layer": int(layer), "head": h, **{k: float(v[h]) for k, v in stats.items()}}
            for h in range(n_heads)]


def stats_frame(records: Iterable[dict]) -> pd.DataFrame:
    """Tidy table: kind, layer, head, then one column per statistic (STATS order)."""
    frame = pd.DataFrame(list(records), columns=ID_COLUMNS + list(STATS))
    return frame.astype({"layer": int, "head": int})


# -- from traces -------------------------------------------------------------------------------
def pattern_name(kind: str, layer: int) -> str:
    stack, sub = SUBLAYER[kind]
    return f"{stack}.layers.{layer}.{sub}.hook_pattern"


def n_layers_of(config, kind: str) -> int:
    return config.n_encoder_layers if kind == "encoder" else config.n_decoder_layers


def key_labels(meta: dict, kind: str) -> list[str]:
    """Keys are source tokens (encoder, cross) or decoder inputs <s> y1 .. y_{n-1} (decoder)."""
    return list(meta["tgt_in_tokens"] if kind == "decoder" else meta["src_tokens"])


def stacked_patterns(trace: Trace, kind: str) -> np.ndarray:
    """[L,H,Q,K] for one attention kind of a trace."""
    n = 0
    while pattern_name(kind, n) in trace:
        n += 1
    if n == 0:
        raise ValueError(f"the trace has no {kind} attention patterns (capture '*.hook_pattern')")
    return np.stack([trace[pattern_name(kind, i)] for i in range(n)])


def trace_head_stats(trace: Trace, kinds: Sequence[str] = KINDS) -> pd.DataFrame:
    """Statistics of every head of every layer of the given kinds, from one sentence's trace."""
    records = []
    for kind in kinds:
        labels = key_labels(trace.meta, kind)
        for layer, patterns in enumerate(stacked_patterns(trace, kind)):
            records += head_statistics(patterns, labels, kind, layer)
    return stats_frame(records)


def aggregate_stats(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Mean of each statistic over sentences (NaNs skipped), one row per head, plus n_sentences."""
    frames = [f for f in frames if len(f)]
    if not frames:
        raise ValueError("no statistics to aggregate")
    data = pd.concat(frames, ignore_index=True)
    grouped = data.groupby(ID_COLUMNS, sort=False)
    out = grouped[list(STATS)].mean()
    out["n_sentences"] = grouped.size()
    out = out.reset_index()
    out["kind"] = pd.Categorical(out["kind"], categories=list(KINDS), ordered=True)
    out = out.sort_values(ID_COLUMNS).reset_index(drop=True)
    out["kind"] = out["kind"].astype(str)
    return out


def corpus_head_stats(bundle: Bundle, sentences: Sequence[str], progress: Progress | None = None,
                      max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[pd.DataFrame, list[str]]:
    """Statistics averaged over many sentences (each on the model's own greedy output).

    Returns (aggregate, problems): sentences that could not be read are skipped and named.
    progress(done, total) is called after each sentence.
    """
    frames, problems = [], []
    for i, sentence in enumerate(sentences):
        try:
            trace = trace_sentence(bundle, sentence, names="*.hook_pattern", max_tokens=max_tokens)
            frames.append(trace_head_stats(trace))
        except ValueError as e:
            problems.append(f"line {i + 1}: {e}")
        if progress is not None:
            progress(i + 1, len(sentences))
    if not frames:
        raise ValueError("none of the sentences could be read: " + "; ".join(problems[:3]))
    return aggregate_stats(frames), problems


def stat_matrix(frame: pd.DataFrame, kind: str, stat: str, n_layers: int, n_heads: int) -> np.ndarray:
    """[layer, head] values of one statistic for one kind (NaN where the table has no row)."""
    if stat not in STATS:
        raise ValueError(f"unknown statistic {stat!r}; choose from {', '.join(STATS)}")
    m = np.full((n_layers, n_heads), np.nan)
    rows = frame[frame["kind"] == kind]
    m[rows["layer"].to_numpy(int), rows["head"].to_numpy(int)] = rows[stat].to_numpy(float)
    return m


# -- ablation --------------------------------------------------------------------------------------
def z_name(kind: str, layer: int) -> str:
    stack, sub = SUBLAYER[kind]
    return f"{stack}.layers.{layer}.{sub}.hook_z"


def check_heads(config, heads: Iterable[Head]) -> list[Head]:
    out = []
    for kind, layer, head in heads:
        if kind not in KINDS:
            raise ValueError(f"unknown attention kind {kind!r}; choose from {', '.join(KINDS)}")
        if not 0 <= layer < n_layers_of(config, kind) or not 0 <= head < config.n_heads:
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
        by_hook[z_name(kind, layer)].append(int(head))
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
        return encode_text(bundle, target, max_tokens).ids
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
    return [(kind, layer, head) for kind in kinds for layer in range(n_layers_of(config, kind))
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


# -- rollout and flow (Abnar & Zuidema, 2020) ---------------------------------------------------------
def residual_attention(patterns, residual: float = 0.5) -> np.ndarray:
    """[L,S,S]: per layer, heads averaged, Â = (1-r)·A + r·I (the residual path), rows renormalised."""
    a = np.asarray(patterns, dtype=np.float64)
    if a.ndim != 4 or a.shape[2] != a.shape[3] or 0 in a.shape:
        raise ValueError(f"expected self-attention patterns [layer, head, S, S], got shape {a.shape}")
    mixed = (1 - residual) * a.mean(1) + residual * np.eye(a.shape[2])[None]      # [L,S,S]
    return mixed / mixed.sum(-1, keepdims=True)


def attention_rollout(patterns, residual: float = 0.5) -> np.ndarray:
    """[S,S]: row i = how much the last layer's position i draws on input token j, R = Â_L ··· Â_1."""
    layers = residual_attention(patterns, residual)
    rollout = layers[0]
    for a in layers[1:]:
        rollout = a @ rollout                                                      # [S,S]
    return rollout


class FlowNetwork:
    """A directed graph with real capacities; max_flow by Dinic's algorithm (BFS levels + DFS)."""

    EPS = 1e-12

    def __init__(self, n_nodes: int):
        self.n = n_nodes
        self.adj: list[list[int]] = [[] for _ in range(n_nodes)]   # edge ids leaving each node
        self.to: list[int] = []
        self.cap: list[float] = []                                 # edge e's reverse is e ^ 1

    def add_edge(self, u: int, v: int, capacity: float) -> None:
        if capacity < 0:
            raise ValueError("capacities must be non-negative")
        for a, b, c in ((u, v, float(capacity)), (v, u, 0.0)):
            self.adj[a].append(len(self.to))
            self.to.append(b)
            self.cap.append(c)

    def max_flow(self, source: int, sink: int) -> float:
        if source == sink:
            raise ValueError("source and sink must differ")
        residual = list(self.cap)
        # No flow can exceed what leaves the source or enters the sink: stop as soon as it is reached.
        bound = min(sum(residual[e] for e in self.adj[source]), sum(self.cap[e ^ 1] for e in self.adj[sink]))
        total = 0.0
        while total < bound * (1 - 1e-12):
            level = self._levels(source, sink, residual)
            if level[sink] < 0:
                break
            cursor = [0] * self.n
            while (pushed := self._augment(source, sink, residual, level, cursor)) > self.EPS:
                total += pushed
        return total

    def _levels(self, source: int, sink: int, residual: list[float]) -> list[int]:
        """BFS distances from the source in the residual graph, cut at the sink's distance."""
        level = [-1] * self.n
        level[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            if level[sink] >= 0 and level[u] >= level[sink] - 1:
                break                            # nothing further can lie on a shortest path
            for e in self.adj[u]:
                v = self.to[e]
                if level[v] < 0 and residual[e] > self.EPS:
                    level[v] = level[u] + 1
                    queue.append(v)
        if level[sink] >= 0:                     # other nodes as far as the sink are dead ends
            far = level[sink]
            level = [lv if lv < far else -1 for lv in level]
            level[sink] = far
        return level

    def _augment(self, source: int, sink: int, residual: list[float], level: list[int], cursor: list[int]) -> float:
        """One augmenting path in the level graph (iterative DFS with current-arc pointers)."""
        path: list[int] = []                    # edge ids from source
        u = source
        while True:
            if u == sink:
                pushed = min(residual[e] for e in path)
                for e in path:
                    residual[e] -= pushed
                    residual[e ^ 1] += pushed
                return pushed
            edges = self.adj[u]
            while cursor[u] < len(edges):
                e = edges[cursor[u]]
                if residual[e] > self.EPS and level[self.to[e]] == level[u] + 1:
                    break
                cursor[u] += 1
            if cursor[u] < len(edges):
                e = edges[cursor[u]]
                path.append(e)
                u = self.to[e]
            else:                               # dead end: retreat and skip the edge that led here
                if not path:
                    return 0.0
                level[u] = -1
                e = path.pop()
                u = self.to[e ^ 1]
                cursor[u] += 1


def attention_flow(patterns, residual: float = 0.5, normalize: bool = True,
                   max_tokens: int = MAX_FLOW_TOKENS, progress: Progress | None = None) -> np.ndarray:
    """[S,S]: max-flow from input token j (layer 0) to position i after the last layer.

    Nodes are (layer, position); an edge from (l-1, j) to (l, i) has capacity Â_l[i, j] (see
    residual_attention). One max-flow problem per (i, j) pair, so inputs are limited to
    `max_tokens`. With normalize, each row is divided by its sum, as Abnar & Zuidema do.
    """
    layers = residual_attention(patterns, residual)                                # [L,S,S]
    n_layers, n, _ = layers.shape
    if n > max_tokens:
        raise ValueError(f"attention flow is limited to {max_tokens} tokens (this input has {n}): it solves "
                         f"one max-flow problem per pair of tokens")
    net = FlowNetwork((n_layers + 1) * n)
    for layer, a in enumerate(layers):
        for i in range(n):
            for j in range(n):
                if a[i, j] > 0:
                    net.add_edge(layer * n + j, (layer + 1) * n + i, a[i, j])
    flow = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            flow[i, j] = net.max_flow(j, n_layers * n + i)
        if progress is not None:
            progress(i + 1, n)
    if normalize:
        flow = flow / np.maximum(flow.sum(-1, keepdims=True), 1e-30)
    return flow


# -- comparing two sentences ------------------------------------------------------------------------
_WORD = re.compile(r"\w+")


def swap_two_words(text: str) -> str:
    """The sentence with its two longest words swapped (ties: first with last), punctuation kept.

    "The man went from Beijing to Shanghai." -> "The man went from Shanghai to Beijing."
    Returns the text unchanged when it has fewer than two different words.
    """
    words = list(_WORD.finditer(text))
    if len(words) < 2:
        return text
    first = max(range(len(words)), key=lambda k: (len(words[k].group()), -k))
    second = max((k for k in range(len(words)) if k != first), key=lambda k: (len(words[k].group()), k))
    a, b = sorted((words[first], words[second]), key=lambda m: m.start())
    return text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():]


def token_permutation(ids_a: Sequence[int], ids_b: Sequence[int]) -> list[int] | None:
    """perm with ids_b[k] == ids_a[perm[k]] (equal tokens matched in order), or None if the two
    sequences are not rearrangements of each other. Without positional encoding the encoder is
    blind to such a rearrangement: B's maps would be A's, rows and columns permuted."""
    if sorted(ids_a) != sorted(ids_b):
        return None
    where: dict[int, deque] = defaultdict(deque)
    for k, t in enumerate(ids_a):
        where[int(t)].append(k)
    return [where[int(t)].popleft() for t in ids_b]


def reorder_to(matrix_b, perm: Sequence[int]) -> np.ndarray:
    """B's [S,S] map with rows and columns moved to A's order: out[perm[k], perm[l]] = B[k, l]."""
    b = np.asarray(matrix_b)
    perm = np.asarray(perm)
    if b.ndim != 2 or b.shape[0] != b.shape[1] or len(perm) != b.shape[0]:
        raise ValueError(f"expected a square map matching the permutation, got {b.shape} and {len(perm)}")
    out = np.empty_like(b)
    out[np.ix_(perm, perm)] = b
    return out
