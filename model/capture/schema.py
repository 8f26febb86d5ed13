"""The one place that makes hook names, attention kinds, sublayer names, layer counts and the token
labels of a trace's rows and columns. Pages, figures and analyses ask here instead of writing
f-strings, so they cannot disagree.

Attention kinds:
  "encoder"  encoder self-attention          [head, source, source]
  "decoder"  decoder masked self-attention   [head, target, target] (causal)
  "cross"    decoder -> encoder attention     [head, target, source]

Decoder rows (queries) are labelled with the token each position *predicts* (y_1 .. y_n), on every
page: that is the word a student looks for ("which source words did 'casa' look at?"). Decoder keys
are the decoder's inputs (<s> y_1 .. y_{n-1}), since that is what a query can see.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

KINDS = ("encoder", "decoder", "cross")
STACKS = ("encoder", "decoder")
SUBLAYER = {"encoder": ("encoder", "self_attn"), "decoder": ("decoder", "self_attn"),
            "cross": ("decoder", "cross_attn")}
NORM_OF = {"encoder": "norm_attn", "decoder": "norm_attn", "cross": "norm_cross"}   # the LayerNorm after each
ATTN_HOOKS = ("q", "k", "v", "scores", "pattern", "z", "out")
NORMS = {"encoder": ("norm_attn", "norm_ff"), "decoder": ("norm_attn", "norm_cross", "norm_ff")}
NORM_HOOKS = ("in", "mean", "std", "normalized", "gain", "bias", "out")
RESID_HOOKS = {"encoder": ("resid_pre", "resid_mid", "resid_post"),
               "decoder": ("resid_pre", "resid_mid", "resid_cross", "resid_post")}
FF_HOOKS = ("hidden", "out")
EMBED_HOOKS = ("tokens", "pos", "out")
EMBED_OF = {"encoder": "src_embed", "decoder": "tgt_embed"}
LOGITS = "generator.hook_logits"


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; choose from {', '.join(KINDS)}")
    return kind


def stack_of(kind: str) -> str:
    return SUBLAYER[check_kind(kind)][0]


def n_layers(config, kind_or_stack: str) -> int:
    """Layers of the stack that holds this kind (or stack)."""
    stack = kind_or_stack if kind_or_stack in STACKS else stack_of(kind_or_stack)
    return config.n_encoder_layers if stack == "encoder" else config.n_decoder_layers


def layer_prefix(stack: str, layer: int) -> str:
    return f"{stack}.layers.{int(layer)}"


def attn_prefix(kind: str, layer: int) -> str:
    stack, sub = SUBLAYER[check_kind(kind)]
    return f"{layer_prefix(stack, layer)}.{sub}"


def attn_name(kind: str, layer: int, hook: str) -> str:
    """e.g. attn_name("cross", 2, "pattern") -> "decoder.layers.2.cross_attn.hook_pattern"."""
    return f"{attn_prefix(kind, layer)}.hook_{hook}"


def pattern_name(kind: str, layer: int) -> str:
    return attn_name(kind, layer, "pattern")


def z_name(kind: str, layer: int) -> str:
    return attn_name(kind, layer, "z")


def patterns_glob(kind: str | None = None) -> str:
    """A capture() pattern for every attention map (of one kind)."""
    if kind is None:
        return "*.hook_pattern"
    stack, sub = SUBLAYER[check_kind(kind)]
    return f"{stack}.layers.*.{sub}.hook_pattern"


def norm_prefix(stack: str, layer: int, norm: str) -> str:
    return f"{layer_prefix(stack, layer)}.{norm}"


def norm_name(stack: str, layer: int, norm: str, hook: str) -> str:
    return f"{norm_prefix(stack, layer, norm)}.hook_{hook}"


def resid_name(stack: str, layer: int, hook: str) -> str:
    """hook one of RESID_HOOKS[stack], e.g. resid_name("encoder", 0, "resid_mid")."""
    return f"{layer_prefix(stack, layer)}.hook_{hook}"


def embed_name(stack: str, hook: str) -> str:
    return f"{EMBED_OF[stack]}.hook_{hook}"


def final_norm_name(stack: str, hook: str) -> str:
    """The LayerNorm after a stack's last layer: pre-norm models have one, and so do post-norm models built
    on torch.nn.Transformer (config.has_final_norm); the paper's post-norm has none."""
    return f"{stack}.norm.hook_{hook}"


def stack_out_name(stack: str) -> str:
    return f"{stack}.hook_out"


def ff_name(stack: str, layer: int, hook: str) -> str:
    return f"{layer_prefix(stack, layer)}.ff.hook_{hook}"


@dataclass(frozen=True)
class SublayerNames:
    """Trace names around one attention sublayer (post-norm: norm(x + attn(x)); pre-norm: x + attn(norm(x)))."""
    attn: str            # e.g. "decoder.layers.1.cross_attn"
    query_input: str     # what W^Q reads
    kv_input: str        # what W^K and W^V read (the encoder output for cross-attention)
    residual: str        # the residual stream added back to the sublayer output
    norm: str            # the LayerNorm of this sublayer
    after: str           # the residual stream after the sublayer
    norm_first: bool
    causal: bool

    def norm_hook(self, hook: str) -> str:
        return f"{self.norm}.hook_{hook}"


def sublayer_names(kind: str, layer: int, norm_first: bool = False) -> SublayerNames:
    check_kind(kind)
    if layer < 0:
        raise ValueError(f"layer must be >= 0, got {layer}")
    stack = stack_of(kind)
    before, after = ("resid_mid", "resid_cross") if kind == "cross" else ("resid_pre", "resid_mid")
    norm = norm_prefix(stack, layer, NORM_OF[kind])
    residual = resid_name(stack, layer, before)
    query_input = f"{norm}.hook_out" if norm_first else residual
    kv_input = stack_out_name("encoder") if kind == "cross" else query_input
    return SublayerNames(attn_prefix(kind, layer), query_input, kv_input, residual, norm,
                         resid_name(stack, layer, after), norm_first, causal=(kind == "decoder"))


def all_names(config) -> list[str]:
    """Every name this schema can make for a model of this config (a test checks each exists)."""
    names = [embed_name(s, h) for s in STACKS for h in EMBED_HOOKS]
    names += [stack_out_name(s) for s in STACKS] + [LOGITS]
    for kind in KINDS:
        names += [attn_name(kind, i, h) for i in range(n_layers(config, kind)) for h in ATTN_HOOKS]
    for stack in STACKS:
        for i in range(n_layers(config, stack)):
            names += [resid_name(stack, i, h) for h in RESID_HOOKS[stack]]
            names += [ff_name(stack, i, h) for h in FF_HOOKS]
            names += [norm_name(stack, i, n, h) for n in NORMS[stack] for h in NORM_HOOKS]
        if config.has_final_norm:
            names += [final_norm_name(stack, h) for h in NORM_HOOKS]
    return names


# -- token labels of a trace ------------------------------------------------------------------------
def query_tokens(meta: dict, kind: str) -> list[str]:
    """Raw tokens of the rows: source tokens (encoder), or the token each decoder position predicts."""
    return list(meta["src_tokens"] if check_kind(kind) == "encoder" else meta["tgt_out_tokens"])


def key_tokens(meta: dict, kind: str) -> list[str]:
    """Raw tokens of the columns: source tokens (encoder, cross) or decoder inputs <s> y_1 .. (decoder)."""
    return list(meta["tgt_in_tokens"] if check_kind(kind) == "decoder" else meta["src_tokens"])


def stack_tokens(meta: dict, stack: str) -> list[str]:
    """Raw tokens naming a stack's positions (residual stream, LayerNorm rows), as query_tokens does."""
    return list(meta["src_tokens"] if stack == "encoder" else meta["tgt_out_tokens"])


def stacked(trace, kind: str, hook: str = "pattern", layers: Iterable[int] | None = None) -> np.ndarray:
    """[L, ...] of one attention hook over the layers of one kind, e.g. patterns [L,H,Q,K]."""
    arrays = trace.arrays if hasattr(trace, "arrays") else trace
    if layers is None:
        layers, n = [], 0
        while attn_name(kind, n, hook) in arrays:
            layers.append(n)
            n += 1
    layers = list(layers)
    if not layers:
        raise ValueError(f"the trace has no {kind} attention {hook} (capture '*.hook_{hook}')")
    return np.stack([arrays[attn_name(kind, i, hook)] for i in layers])
