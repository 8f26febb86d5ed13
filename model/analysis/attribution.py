"""Beyond attention weights: which source tokens and which layers make the model say what it says.

- logit lens: every decoder layer's output read by the final output layer;
- gradient x input and integrated gradients on the source token embeddings;
- attention rollout through the cross-attention, and value-norm weighted attention (Kobayashi 2020);
- agreement between methods (Spearman rank correlation per output row);
- contrastive: why token A rather than B (heads by ablation, source tokens by gradient x input or IG).

Activation patching lives in model/analysis/patching.py.

Values are injected with `capture(edits=...)`: the shared model is never changed, no torch hook is
registered, and gradients go to `torch.autograd.grad` (never into a parameter's `.grad`), so many
threads can run these on one cached model at once.

Conventions: src_ids end in </s>; tgt_ids are the output tokens y_1 .. y_n (ending in </s>), the
decoder reads <s> y_1 .. y_{n-1} (teacher forcing); an attribution map is [T_out, S].
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from model.analysis.flow import attention_rollout, residual_attention
from model.capture import schema
from model.capture.hooks import capture
from model.capture.trace import Edit, Trace

TOKENS_HOOK = schema.embed_name("encoder", "tokens")   # scaled token embeddings [B,S,D], before + PE
MAX_TOKEN_ROWS = 32_768   # path points x output tokens x (source + output tokens) per backward: bounds memory
Head = tuple[str, int, int]


# -- running the model ---------------------------------------------------------------------------------
def model_of(bundle_or_model) -> Any:
    """The Transformer of a Bundle, or the model given. Any, not Transformer: model/analysis may not import
    model/nn (tests/test_architecture.py), and torch.nn.Module would hide every attribute it has."""
    return getattr(bundle_or_model, "model", bundle_or_model)


def decoder_input(config, tgt_ids: Sequence[int]) -> list[int]:
    """<s> y_1 .. y_{n-1}: what the decoder reads to predict y_1 .. y_n."""
    return [config.bos_id] + [int(t) for t in tgt_ids[:-1]]


def as_batch(ids: Sequence[int], model, rows: int = 1) -> torch.Tensor:          # -> [rows, len]
    return torch.tensor([list(map(int, ids))], device=model.device).expand(rows, -1)


def decoder_states(model, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
    """[B,T,D] what the output layer reads (decoder.hook_out), under whatever capture is active."""
    src_mask = model.src_mask(src)
    return model.decode(model.encode(src, src_mask), src_mask, tgt_in)


def token_embeddings(model, src_ids: Sequence[int]) -> torch.Tensor:
    """[1,S,D] the scaled token embeddings the encoder adds the positional encoding to (detached)."""
    with torch.no_grad():
        embed = model.src_embed
        return embed.token(as_batch(src_ids, model)) * embed.scale


SCORES = ("logit", "logprob")


# -- logit lens ---------------------------------------------------------------------------------------------
@dataclass
class LogitLens:
    top_ids: np.ndarray       # [L,T,k] most likely tokens read from each layer's output
    top_probs: np.ndarray     # [L,T,k]
    final_ids: np.ndarray     # [T] the last layer's top token: what the model predicts there
    final_rank: np.ndarray    # [L,T] rank of that token at each layer (0 = top)
    final_prob: np.ndarray    # [L,T] its probability at each layer


def resid_post_names(config) -> list[str]:
    return [schema.resid_name("decoder", i, "resid_post") for i in range(schema.n_layers(config, "decoder"))]


def layer_distributions(model, resid: torch.Tensor) -> torch.Tensor:
    """[L,T,V] softmax(W_out · norm(h_l) + b) for each decoder layer output h_l [L,T,D].

    Post-norm (the paper, the default here): each layer's output is already LayerNorm'd and the output
    layer reads the last one as it is, so no extra norm is applied. Pre-norm: the decoder's final
    LayerNorm is applied to every layer, as the model itself does to the last one.
    """
    with torch.no_grad():
        return model.generator.proj(model.decoder.norm(resid)).softmax(-1)


def decoder_layer_outputs(model, source, tgt_ids=None) -> torch.Tensor:
    """[L,T,D] from a Trace (with decoder resid_post captured) or from src_ids + tgt_ids (one forward)."""
    names = resid_post_names(model.cfg)
    if isinstance(source, Trace):
        missing = [n for n in names if n not in source]
        if missing:
            raise ValueError(f"the trace lacks {missing[0]} (capture '*.hook_resid_post')")
        arrays = [source[n] for n in names]
    else:
        if tgt_ids is None:
            raise ValueError("give tgt_ids with src_ids (or a Trace)")
        with torch.no_grad(), capture(names=names) as trace:
            decoder_states(model, as_batch(source, model), as_batch(decoder_input(model.cfg, tgt_ids), model))
        arrays = [trace[n] for n in names]
    return torch.from_numpy(np.stack(arrays)).to(model.device)                 # [L,T,D]


def logit_lens(bundle_or_model, source, tgt_ids=None, k: int = 5) -> LogitLens:
    """What each decoder layer would predict if it were the last (nostalgebraist 2020).

    source: a Trace, or src_ids (then give tgt_ids). Row t is the prediction of output token t.
    """
    model = model_of(bundle_or_model)
    probs = layer_distributions(model, decoder_layer_outputs(model, source, tgt_ids))   # [L,T,V]
    top_probs, top_ids = probs.topk(min(k, probs.size(-1)), dim=-1)                     # [L,T,k]
    final_ids = top_ids[-1, :, 0]                                                       # [T]
    final_prob = probs.gather(2, final_ids[None, :, None].expand(probs.size(0), -1, 1)).squeeze(2)   # [L,T]
    final_rank = (probs > final_prob[..., None]).sum(-1)                                # [L,T]
    return LogitLens(top_ids.cpu().numpy(), top_probs.cpu().numpy().astype(np.float64),
                     final_ids.cpu().numpy(), final_rank.cpu().numpy(),
                     final_prob.cpu().numpy().astype(np.float64))


# -- gradients ------------------------------------------------------------------------------------------------
@dataclass
class Attribution:
    signed: np.ndarray                       # [T,S] contribution of each source token to the score of y_t
    score: np.ndarray                        # [T] the score (logit or log p of y_t) with the real input
    baseline_score: np.ndarray | None = None  # [T] the score from the baseline (IG only)

    @property
    def map(self) -> np.ndarray:              # [T,S] |.| normalised per row (rows sum to 1)
        return normalise_rows(np.abs(self.signed))


def normalise_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    return m / np.maximum(m.sum(-1, keepdims=True), 1e-30)


def _alpha_chunks(alphas: np.ndarray, n_outputs: int, n_tokens: int) -> list[np.ndarray]:
    """Path points per forward, so that points x output tokens x tokens stays within MAX_TOKEN_ROWS
    (~130 MB per feed-forward activation at d_ff 1024)."""
    per_chunk = max(1, MAX_TOKEN_ROWS // max(n_outputs * n_tokens, 1))
    return np.array_split(np.asarray(alphas, dtype=np.float64), -(-len(alphas) // per_chunk))


def gradient_x_input(bundle_or_model, src_ids, tgt_ids, score: str = "logit") -> Attribution:
    """grad_x score(y_t) · x per source token, x its (scaled) token embedding, summed over features.

    One forward of T rows (row t scores output t), one backward. A first-order estimate: it misses a
    token whose effect is saturated (flat gradient where the model is already sure). That is why the
    default score is the logit, not log p: log p of a confident prediction is ~0 whatever the input.
    """
    return _path_gradients(model_of(bundle_or_model), src_ids, tgt_ids, np.ones(1), score)


def integrated_gradients(bundle_or_model, src_ids, tgt_ids, steps: int = 32, score: str = "logit") -> Attribution:
    """Integrated gradients (Sundararajan et al. 2017) on the source token embeddings.

    Baseline: all token embeddings 0 (positional encodings kept): "no words, only positions". The path
    x(α) = α·x, α at the midpoints (k+½)/steps; attribution = x · mean_α grad score(y_t). Completeness:
    each row sums to score(y_t | x) - score(y_t | baseline), up to the Riemann error (more steps, less
    error). All steps of a chunk of output positions run as one batched forward.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    model = model_of(bundle_or_model)
    result = _path_gradients(model, src_ids, tgt_ids, (np.arange(steps) + 0.5) / steps, score)
    result.baseline_score = _scores_at(model, src_ids, tgt_ids, 0.0, score)
    return result


def _path_gradients(model, src_ids, tgt_ids, alphas, score: str) -> Attribution:
    """x · mean over α of grad score(y_t) at α·x, for every output position t.

    One encoder forward per chunk of path points; the decoder then runs cached, one group of
    consecutive output positions at a time (state t depends only on decoder inputs <= t), so each
    position is computed once, and the backward passes of a group ending at position e reach only the
    first e+1 positions instead of all T (this halves the decoder's share). The backward passes of a
    group (one per output token) run batched (`is_grads_batched`), each starting from d score(y_t) / d h_t,
    which is written out (see score_directions) rather than backpropagated through the vocabulary.
    Attention runs written out (matmul + softmax): the fused kernel's backward has no batching rule
    and would loop over the output tokens.
    """
    x = token_embeddings(model, src_ids)[0]                                     # [S,D]
    tgt_in, targets = decoder_input(model.cfg, tgt_ids), torch.tensor(list(tgt_ids), device=model.device)
    n_out = len(tgt_ids)
    groups = _row_groups(n_out)
    total = torch.zeros(n_out, x.size(0), device=model.device)                 # [T,S]
    written_out = {schema.pattern_name(kind, layer): _unchanged for kind in schema.KINDS
                   for layer in range(schema.n_layers(model.cfg, kind))}
    for chunk in _alpha_chunks(alphas, max((hi - lo for lo, hi in groups), default=1), x.size(0) + n_out):
        path = (torch.tensor(chunk, dtype=x.dtype, device=x.device)[:, None, None] * x).requires_grad_()  # [m,S,D]
        src = as_batch(src_ids, model, len(chunk))
        with torch.enable_grad(), capture(names=[], edits={TOKENS_HOOK: _replaced_by(path), **written_out}):
            src_mask = model.src_mask(src)
            memory = model.encode(src, src_mask)                                # [m,S,D]
            cache = model.new_cache()
            for i, (lo, hi) in enumerate(groups):
                states = model.decode(memory, src_mask, as_batch(tgt_in[lo:hi], model, len(chunk)), cache)  # [m,g,D]
                one_hot = torch.eye(hi - lo, device=model.device)[:, None, :, None]                      # [g,1,g,1]
                cotangents = one_hot * score_directions(model, states.detach(), targets[lo:hi], score)[None]  # [g,m,g,D]
                (grad,) = torch.autograd.grad(states, path, cotangents, is_grads_batched=True,
                                              retain_graph=i < len(groups) - 1)  # [g,m,S,D]; later groups reuse the graph
                total[lo:hi] += (grad.sum(1) * x).sum(-1)                       # [g,S]
    signed = (total / len(alphas)).cpu().numpy().astype(np.float64)
    return Attribution(signed, _scores_at(model, src_ids, tgt_ids, 1.0, score))


ROW_GROUP = 6   # output positions per group in _path_gradients (measured: 4 to 6 fastest on en-es)


def _row_groups(n_out: int) -> list[tuple[int, int]]:
    """[lo, hi) ranges of consecutive output positions, about ROW_GROUP each."""
    bounds = np.linspace(0, n_out, max(1, round(n_out / ROW_GROUP)) + 1).round().astype(int)
    return [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


def _unchanged(value: torch.Tensor) -> torch.Tensor:
    return value


def _replaced_by(value: torch.Tensor) -> Edit:
    return lambda _: value


def score_directions(model, states: torch.Tensor, targets: torch.Tensor, score: str) -> torch.Tensor:
    """[m,T,D] d score(y_t) / d h_t: W[y_t] for the logit; W[y_t] - E_p[W] for log p."""
    weight = model.generator.proj.weight                                        # [V,D]
    chosen = weight[targets]                                                    # [T,D]
    if score == "logit":
        return chosen.expand(states.size(0), -1, -1)
    if score == "logprob":
        probs = model.generator.proj(states).softmax(-1)                        # [m,T,V]
        return chosen - probs @ weight
    raise ValueError(f"score must be one of {', '.join(SCORES)}, not {score!r}")


def _scores_at(model, src_ids, tgt_ids, scale: float, score: str) -> np.ndarray:
    """[T] score of each y_t with the token embeddings multiplied by `scale` (1 = real input, 0 = baseline).

    One forward of one row: state t is the prediction of y_t (the decoder is causal)."""
    x = token_embeddings(model, src_ids) * scale                                # [1,S,D]
    targets = torch.tensor(list(tgt_ids), device=model.device)
    with torch.no_grad():
        with capture(names=[], edits={TOKENS_HOOK: lambda _: x}):
            states = decoder_states(model, as_batch(src_ids, model), as_batch(decoder_input(model.cfg, tgt_ids), model))
        logits = model.generator.proj(states[0])                                # [T,V]
        if score == "logprob":
            logits = logits.log_softmax(-1)
        elif score != "logit":
            raise ValueError(f"score must be one of {', '.join(SCORES)}, not {score!r}")
        return logits.gather(1, targets[:, None]).squeeze(1).cpu().numpy().astype(np.float64)


# -- attention-based maps (from a trace) ------------------------------------------------------------------
def cross_rollout(trace, layers: str = "last", residual: float = 0.5) -> np.ndarray:
    """[T,S] attention rollout (Abnar & Zuidema 2020) from output tokens to source tokens.

    The encoder is rolled out first (R_enc [S,S], heads averaged, residual mixed in). "last": the last
    cross-attention layer's head average times R_enc. "all": every decoder layer mixes its state with
    its self-attention (Â = (1-r)A + rI) and then with what its cross-attention reads from the source,
    starting from nothing (the decoder's own tokens carry no source information); rows renormalised.
    """
    if layers not in ("last", "all"):
        raise ValueError(f"layers must be 'last' or 'all', not {layers!r}")
    encoder = attention_rollout(schema.stacked(trace, "encoder"), residual)   # [S,S]
    cross = schema.stacked(trace, "cross").astype(np.float64).mean(1)        # [L,T,S]
    if layers == "last":
        return normalise_rows(cross[-1] @ encoder)
    self_mix = residual_attention(schema.stacked(trace, "decoder"), residual)  # [L,T,T]
    state = np.zeros(cross.shape[1:])                                          # [T,S]
    for self_layer, cross_layer in zip(self_mix, cross):
        state = self_layer @ state
        state = residual * state + (1 - residual) * (cross_layer @ encoder)
    return normalise_rows(state)


def raw_cross_attention(trace) -> np.ndarray:
    """[T,S] the last cross-attention layer, heads averaged: the baseline every method is compared to."""
    return schema.stacked(trace, "cross").astype(np.float64)[-1].mean(0)


def value_norms(bundle_or_model, trace) -> np.ndarray:
    """[L,H,T,S] ||α_hts · f_h(x_s)|| for cross-attention, f_h(x_s) = v_hs W^O_h (Kobayashi et al. 2020).

    α alone says where a head looks; the norm says how much what it fetches weighs. v includes W^V's
    bias; W^O_h is the block of the output projection that reads head h (its bias, shared by all
    tokens, is left out).
    """
    model = model_of(bundle_or_model)
    cfg = model.cfg
    patterns = schema.stacked(trace, "cross").astype(np.float64)            # [L,H,T,S]
    values = schema.stacked(trace, "cross", "v").astype(np.float64)         # [L,H,S,Dh]
    out = np.empty_like(patterns)
    for layer in range(patterns.shape[0]):
        w_o = model.decoder.layers[layer].cross_attn.w_o.weight.detach().cpu().double().numpy()   # [D,D] out x in
        per_head = w_o.T.reshape(cfg.n_heads, cfg.d_head, cfg.d_model)                           # [H,Dh,D]
        norms = np.linalg.norm(np.einsum("hsd,hde->hse", values[layer], per_head), axis=-1)      # [H,S]
        out[layer] = patterns[layer] * norms[:, None, :]                                           # [H,T,S]
    return out


def value_norm_map(norms: np.ndarray, layers: str = "last") -> np.ndarray:
    """[T,S] value-norm attention summed over heads, of the last layer or of all layers; rows sum to 1."""
    chosen = norms[-1:] if layers == "last" else norms
    return normalise_rows(chosen.sum(axis=(0, 1)))


# -- agreement ---------------------------------------------------------------------------------------------
def rank(values) -> np.ndarray:
    """1-based ranks, ties get their average rank (as scipy.stats.rankdata)."""
    _, inverse, counts = np.unique(np.asarray(values, dtype=np.float64), return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse]


def spearman(a, b) -> float:
    """Spearman's ρ: Pearson correlation of the ranks; NaN when either side is constant."""
    ra, rb = rank(np.ravel(a)), rank(np.ravel(b))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denom) if denom > 0 else float("nan")


def agreement(maps: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
    """(method names, [M,M]) mean over output rows of Spearman's ρ between two methods' rows."""
    names = list(maps)
    arrays = [np.asarray(maps[n], dtype=np.float64) for n in names]
    if len({a.shape for a in arrays}) > 1:
        raise ValueError(f"maps differ in shape: {[a.shape for a in arrays]}")
    out = np.eye(len(names))
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            rows = [spearman(x, y) for x, y in zip(arrays[i], arrays[j])]
            out[i, j] = out[j, i] = np.nanmean(rows) if not np.isnan(rows).all() else np.nan
    return names, out


# -- contrastive ---------------------------------------------------------------------------------------------
@dataclass
class Contrastive:
    base_difference: float        # logit(chosen) - logit(alternative), nothing changed
    heads: list[Head]             # every attention head
    head_effects: np.ndarray      # [N] base - difference with that head zeroed: > 0 pushes toward chosen
    source_scores: np.ndarray     # [S] gradient x input of the difference: > 0 pushes toward chosen


def contrastive(bundle_or_model, src_ids, prefix_ids, chosen: int, alternative: int, steps: int = 1) -> Contrastive:
    """Why `chosen` rather than `alternative` after the output prefix (tokens before this step)?

    Heads: each zeroed alone (one batched forward). Source tokens: gradient x input of the logit
    difference (steps=1), or integrated gradients from the zero-embedding baseline (steps > 1), whose
    scores sum to the difference minus the baseline's difference.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    model = model_of(bundle_or_model)
    tgt_in = [model.cfg.bos_id] + [int(t) for t in prefix_ids]
    heads = every_head(model.cfg)
    differences = _differences_with_heads_off(model, src_ids, tgt_in, heads, chosen, alternative)   # [1+N]
    return Contrastive(float(differences[0]), heads, differences[0] - differences[1:],
                       _source_contrast(model, src_ids, tgt_in, chosen, alternative, steps))


def every_head(config) -> list[Head]:
    return [(kind, layer, head) for kind in schema.KINDS for layer in range(schema.n_layers(config, kind))
            for head in range(config.n_heads)]


def logit_difference(logits: torch.Tensor, chosen: int, alternative: int) -> torch.Tensor:
    return logits[..., chosen] - logits[..., alternative]


def _last_logits(model, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:          # -> [B,V]
    return model.generator.proj(decoder_states(model, src, tgt_in)[:, -1])


def zero_head_edits(heads: Sequence[Head], first_row: int = 1) -> dict:
    """Edits that zero heads[i]'s output z in batch row first_row + i only (one forward, many ablations)."""
    by_hook: dict[str, tuple[list[int], list[int]]] = {}
    for i, (kind, layer, head) in enumerate(heads):
        rows, hs = by_hook.setdefault(schema.z_name(kind, layer), ([], []))
        rows.append(first_row + i)
        hs.append(head)
    return {name: _zero_rows(rows, hs) for name, (rows, hs) in by_hook.items()}


def _zero_rows(rows: list[int], heads: list[int]):
    def edit(z: torch.Tensor) -> torch.Tensor:                                  # z [B,H,T,Dh]
        z = z.clone()                                                           # never write into the model's value
        z[torch.tensor(rows, device=z.device), torch.tensor(heads, device=z.device)] = 0.0
        return z
    return edit


@torch.no_grad()
def _differences_with_heads_off(model, src_ids, tgt_in, heads, chosen, alternative) -> np.ndarray:
    rows = 1 + len(heads)                                                       # row 0: nothing off
    with capture(names=[], edits=zero_head_edits(heads)):
        logits = _last_logits(model, as_batch(src_ids, model, rows), as_batch(tgt_in, model, rows))   # [B,V]
    return logit_difference(logits, chosen, alternative).cpu().numpy().astype(np.float64)


def _source_contrast(model, src_ids, tgt_in, chosen, alternative, steps: int) -> np.ndarray:
    """[S] x · mean over α of grad (logit difference) at α·x (α = 1 alone when steps is 1)."""
    x = token_embeddings(model, src_ids)                                        # [1,S,D]
    alphas = torch.ones(1) if steps == 1 else (torch.arange(steps) + 0.5) / steps
    path = (alphas.to(x.device)[:, None, None] * x).requires_grad_()           # [m,S,D]
    with torch.enable_grad():
        with capture(names=[], edits={TOKENS_HOOK: lambda _: path}):
            logits = _last_logits(model, as_batch(src_ids, model, steps), as_batch(tgt_in, model, steps))   # [m,V]
        (grad,) = torch.autograd.grad(logit_difference(logits, chosen, alternative).sum(), path)
    return (grad.mean(0) * x[0]).sum(-1).detach().cpu().numpy().astype(np.float64)   # [S]
