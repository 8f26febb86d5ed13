"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017).

Layer outputs are post-norm as in the paper, x = LayerNorm(x + Dropout(Sublayer(x))); pre-norm,
x = x + Dropout(Sublayer(LayerNorm(x))), is an option (config.norm_first), and so are what models trained
elsewhere need (docs/byo-model.md): a LayerNorm after each stack, another LayerNorm formula, separate
source and target vocabularies. Hook names follow the module tree: see model/capture/trace.py and
docs/trace-format.md.
"""
from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from model.nn.config import TransformerConfig
from model.nn.layers import (Embeddings, FeedForward, KVCache, LayerNorm, MultiHeadAttention, PositionalEncoding,
                             StaticKVCache)
from model.capture.hooks import HookPoint, name_hook_points


def _norm(cfg: TransformerConfig) -> LayerNorm:
    return LayerNorm(cfg.d_model, cfg.ln_eps, cfg.ln_kind)


class _Layer(nn.Module):
    """Shared residual wiring: LayerNorm after the residual add (paper) or before the sublayer."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.norm_first = cfg.norm_first
        self.dropout = nn.Dropout(cfg.dropout)

    def residual(self, x, sublayer, norm: LayerNorm):
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))


class EncoderLayer(_Layer):
    def __init__(self, cfg: TransformerConfig):
        super().__init__(cfg)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.norm_attn = _norm(cfg)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, cfg.activation)
        self.norm_ff = _norm(cfg)
        self.hook_resid_pre = HookPoint()   # [B,S,D] layer input
        self.hook_resid_mid = HookPoint()   # [B,S,D] after self-attention, Add & Norm
        self.hook_resid_post = HookPoint()  # [B,S,D] after feed-forward, Add & Norm

    def forward(self, x, src_mask):
        x = self.hook_resid_pre(x)
        x = self.hook_resid_mid(self.residual(x, lambda h: self.self_attn(h, h, src_mask), self.norm_attn))
        return self.hook_resid_post(self.residual(x, self.ff, self.norm_ff))


class DecoderLayer(_Layer):
    def __init__(self, cfg: TransformerConfig):
        super().__init__(cfg)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.norm_attn = _norm(cfg)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.norm_cross = _norm(cfg)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, cfg.activation)
        self.norm_ff = _norm(cfg)
        self.hook_resid_pre = HookPoint()    # [B,T,D]
        self.hook_resid_mid = HookPoint()    # [B,T,D] after masked self-attention, Add & Norm
        self.hook_resid_cross = HookPoint()  # [B,T,D] after cross-attention, Add & Norm
        self.hook_resid_post = HookPoint()   # [B,T,D] after feed-forward, Add & Norm

    def forward(self, y, memory, src_mask, tgt_mask, cache: tuple[KVCache, KVCache] | None = None):
        self_kv, cross_kv = cache or (None, None)
        y = self.hook_resid_pre(y)
        y = self.hook_resid_mid(self.residual(y, lambda h: self.self_attn(h, h, tgt_mask, self_kv), self.norm_attn))
        y = self.hook_resid_cross(self.residual(y, lambda h: self.cross_attn(h, memory, src_mask, cross_kv),
                                                self.norm_cross))
        return self.hook_resid_post(self.residual(y, self.ff, self.norm_ff))


class Encoder(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_encoder_layers))
        self.norm = _norm(cfg) if cfg.has_final_norm else nn.Identity()
        self.hook_out = HookPoint()  # [B,S,D] the memory the decoder attends to

    def forward(self, x, src_mask):
        for layer in self.layers:
            x = layer(x, src_mask)
        return self.hook_out(self.norm(x))


class Decoder(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_decoder_layers))
        self.norm = _norm(cfg) if cfg.has_final_norm else nn.Identity()
        self.hook_out = HookPoint()  # [B,T,D]

    def forward(self, y, memory, src_mask, tgt_mask, cache: DecoderCache | None = None):
        for i, layer in enumerate(self.layers):
            y = layer(y, memory, src_mask, tgt_mask, None if cache is None else cache.layers[i])
        return self.hook_out(self.norm(y))


class Generator(nn.Module):
    """Final linear map to vocabulary logits (softmax is applied by the loss or the decoder)."""

    def __init__(self, d_model: int, vocab_size: int):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab_size)
        self.hook_logits = HookPoint()  # [B,T,V]

    def forward(self, y):
        return self.hook_logits(self.proj(y))


def causal_mask(n: int, device=None, past: int = 0) -> torch.Tensor:
    """[n, past+n] bool: new position i (absolute past+i) may attend to positions <= past+i."""
    return torch.ones(n, past + n, dtype=torch.bool, device=device).tril(past)


def target_mask(keep: torch.Tensor, n_new: int) -> torch.Tensor:
    """Decoder self-attention mask for the last n_new of the target tokens: keep [B,t] (True = not
    padding) AND causal -> [B,1,n_new,t]. Teacher forcing has n_new = t; cached decoding n_new = 1."""
    return keep[:, None, None, :] & causal_mask(n_new, keep.device, keep.size(1) - n_new)


class DecoderCache:
    """What cached decoding keeps between steps: per decoder layer the (self-attention, cross-attention)
    KVCache pair, and which target tokens so far are real (not padding), for the self-attention mask."""

    def __init__(self, n_layers: int):
        self.layers = [(KVCache(), KVCache(static=True)) for _ in range(n_layers)]
        self.keep: torch.Tensor | None = None                   # [B,t] bool

    @property
    def length(self) -> int:                                     # tokens seen = position of the next one
        return 0 if self.keep is None else self.keep.size(1)

    def advance(self, tgt, pad_id: int):         # new tokens [B,T] -> (their first position, mask [B,1,T,t+T])
        start = self.length
        new = tgt != pad_id
        self.keep = new if self.keep is None else torch.cat([self.keep, new], dim=1)
        return start, target_mask(self.keep, tgt.size(1))

    def reorder(self, index: torch.Tensor):   # row b continues row index[b]: beam search, finished rows dropped
        assert self.keep is not None, "reorder() before any advance()"
        self.keep = self.keep.index_select(0, index)
        for self_kv, cross_kv in self.layers:
            self_kv.reorder(index)
            cross_kv.reorder(index)


class StaticDecoderCache:
    """A cache for decoding one token per step in which every shape is fixed and the position is a
    tensor on the device: a step reads nothing from the host, so it can be recorded as a CUDA graph
    and replayed (model/inference/decode.py). Self-attention keeps keys and values in slots
    0..capacity-1; the caller moves `pos` on (pos += 1) after each step and never past capacity - 1.
    No padding is ever fed, so the mask is causal only: slots <= pos."""

    def __init__(self, model: "Transformer", batch: int, capacity: int):
        cfg, dtype, device = model.cfg, model.generator.proj.weight.dtype, model.device
        self.pos = torch.zeros(1, dtype=torch.long, device=device)          # [1]
        self.slots = torch.arange(capacity, device=device)                  # [capacity]
        self.layers = [(StaticKVCache(self.pos, batch, cfg.n_heads, capacity, cfg.d_model // cfg.n_heads, dtype),
                        KVCache(static=True)) for _ in range(cfg.n_decoder_layers)]

    def advance(self, tgt, pad_id: int):         # the new token [B,1] -> (pos [1], mask [1,1,1,capacity])
        return self.pos, (self.slots <= self.pos)[None, None, None, :]


class Transformer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        src_tok = nn.Embedding(cfg.source_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        tgt_tok = src_tok if cfg.share_embeddings else nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.src_embed = Embeddings(src_tok, PositionalEncoding(cfg.d_model, cfg.max_len, cfg.pe), cfg.dropout)
        self.tgt_embed = Embeddings(tgt_tok, PositionalEncoding(cfg.d_model, cfg.max_len, cfg.pe), cfg.dropout)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        self.generator = Generator(cfg.d_model, cfg.vocab_size)
        self._init_weights()
        if cfg.share_embeddings:  # the paper shares all three matrices
            self.generator.proj.weight = src_tok.weight
        self.hook_names = name_hook_points(self)

    def _init_weights(self):
        for name, p in self.named_parameters():
            if p.dim() > 1 and not name.endswith("pos.table"):
                nn.init.xavier_uniform_(p)
        if self.cfg.share_embeddings:  # a shared matrix is scaled by sqrt(d) on input: keep it small
            nn.init.normal_(self.src_embed.token.weight, std=self.cfg.d_model ** -0.5)
        with torch.no_grad():
            self.src_embed.token.weight[self.cfg.pad_id].zero_()
            self.tgt_embed.token.weight[self.cfg.pad_id].zero_()

    @property
    def device(self) -> torch.device:
        return self.generator.proj.weight.device

    def with_vocab(self, vocab_size: int) -> "Transformer":
        """A copy whose vocabulary has grown to `vocab_size` (new tokens such as a style token): the
        old rows are kept, a new embedding row is the mean of the old ones, a new output bias is the
        lowest old one (a new token is never predicted before it is trained)."""
        old = self.cfg.vocab_size
        if vocab_size < old:
            raise ValueError(f"cannot shrink the vocabulary from {old} to {vocab_size}")
        grown = Transformer(replace(self.cfg, vocab_size=vocab_size)).to(self.device)
        state = self.state_dict()
        with torch.no_grad():
            for name, new in grown.state_dict().items():
                if new.shape == state[name].shape:
                    new.copy_(state[name])
                elif name.endswith("proj.bias"):
                    new[:old] = state[name]
                    new[old:] = state[name].min()
                else:                                            # a token matrix [V, D]
                    new[:old] = state[name]
                    new[old:] = state[name][3:].mean(0)         # mean of the real tokens' rows
        return grown

    def src_mask(self, src):                                     # [B,S] -> [B,1,1,S]
        return (src != self.cfg.pad_id)[:, None, None, :]

    def tgt_mask(self, tgt):                                     # [B,T] -> [B,1,T,T] padding AND causal
        return target_mask(tgt != self.cfg.pad_id, tgt.size(1))

    def encode(self, src, src_mask=None):                        # src [B,S] -> memory [B,S,D]
        if src_mask is None:
            src_mask = self.src_mask(src)
        return self.encoder(self.src_embed(src), src_mask)

    def decode(self, memory, src_mask, tgt, cache: DecoderCache | StaticDecoderCache | None = None):   # tgt [B,T] -> [B,T,D]
        """tgt is the whole prefix; with a cache, only the tokens after those it already holds."""
        if cache is None:
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, self.tgt_mask(tgt))
        start, tgt_mask = cache.advance(tgt, self.cfg.pad_id)    # [B,1,T,start+T] (static: [1,1,1,capacity])
        return self.decoder(self.tgt_embed(tgt, start), memory, src_mask, tgt_mask, cache)

    def new_cache(self) -> DecoderCache:
        return DecoderCache(len(self.decoder.layers))

    def forward(self, src, tgt):
        """Teacher forcing: tgt is the target shifted right (starts with <s>). Returns logits [B,T,V]."""
        src_mask = self.src_mask(src)
        memory = self.encode(src, src_mask)
        return self.generator(self.decode(memory, src_mask, tgt))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

