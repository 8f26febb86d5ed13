"""Building blocks of "Attention Is All You Need", each with HookPoints at the values people ask about.

Shapes: B batch, T/S query/key positions, H heads, D d_model, Dh d_head = D / H.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from model.capture.hooks import HookPoint, active_trace


def attention(q, k, v, mask=None, dropout: float = 0.0):
    """Scaled dot-product attention, written out: softmax(QK^T / sqrt(d_k) + mask) V.

    q [B,H,T,Dh], k/v [B,H,S,Dh], mask bool [B,1|H,1|T,S] (True = may attend).
    Returns (output [B,H,T,Dh], scores [B,H,T,S] scaled but unmasked, weights [B,H,T,S]).
    """
    # Scaling q (T x Dh numbers) rather than the scores (T x S) saves a pass over the largest tensor.
    scores = (q * (1.0 / math.sqrt(q.size(-1)))) @ k.transpose(-2, -1)  # [B,H,T,S]
    masked = scores if mask is None or bool(mask.all()) else torch.where(mask, scores, float("-inf"))
    weights = masked.softmax(dim=-1)                                 # rows sum to 1
    dropped = F.dropout(weights, dropout) if dropout > 0 else weights
    return dropped @ v, scores, weights


class KVCache:
    """One attention layer's keys and values from earlier decoding steps, so each step projects only
    its new token. Self-attention appends them; cross-attention (static) projects the encoder memory
    on the first step and reuses it. Used only when no trace is active (model/inference/decode.py)."""

    def __init__(self, static: bool = False):
        self.static = static
        self.k = self.v = None                                       # [B,H,t,Dh]

    def keys_values(self, attn: "MultiHeadAttention", x_kv):
        if self.static and self.k is not None:
            return self.k, self.v
        k, v = attn.keys_values(x_kv)                                # [B,H,T_new,Dh]
        if self.k is not None:
            k, v = torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)  # [B,H,t+T_new,Dh]
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: torch.Tensor):                          # beam search: row b continues row index[b]
        if self.k is not None:
            self.k, self.v = self.k.index_select(0, index), self.v.index_select(0, index)


class StaticKVCache:
    """Self-attention keys and values in buffers of fixed size [B,H,capacity,Dh]: the new token's go to
    slot `pos`, a tensor on the device, so a decoding step has fixed shapes and never asks the host
    anything (what a CUDA graph needs). Slots after pos hold stale values: the mask hides them."""

    def __init__(self, pos: torch.Tensor, batch: int, n_heads: int, capacity: int, d_head: int, dtype):
        self.pos = pos                                               # [1] long, shared by every layer
        self.k = torch.zeros(batch, n_heads, capacity, d_head, dtype=dtype, device=pos.device)
        self.v = torch.zeros_like(self.k)

    def keys_values(self, attn: "MultiHeadAttention", x_kv):
        k, v = attn.keys_values(x_kv)                                # [B,H,1,Dh]
        self.k.index_copy_(2, self.pos, k)
        self.v.index_copy_(2, self.pos, v)
        return self.k, self.v                                        # [B,H,capacity,Dh]


class MultiHeadAttention(nn.Module):
    """h heads in parallel, each attending in a d_model/h subspace; concatenated, then W^O."""

    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads, self.d_head, self.dropout = n_heads, d_model // n_heads, dropout
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.hook_q, self.hook_k, self.hook_v = HookPoint(), HookPoint(), HookPoint()  # [B,H,T,Dh]
        self.hook_scores = HookPoint()   # [B,H,T,S] QK^T/sqrt(d_k), before the mask
        self.hook_pattern = HookPoint()  # [B,H,T,S] softmax, before dropout
        self.hook_z = HookPoint()        # [B,H,T,Dh] each head's output (weights @ V)
        self.hook_out = HookPoint()      # [B,T,D] after W^O

    def split_heads(self, x):            # [B,T,D] -> [B,H,T,Dh]
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def keys_values(self, x_kv):         # [B,S,D] -> k, v [B,H,S,Dh]
        return self.hook_k(self.split_heads(self.w_k(x_kv))), self.hook_v(self.split_heads(self.w_v(x_kv)))

    def forward(self, x_q, x_kv, mask=None, cache: KVCache | StaticKVCache | None = None):
        q = self.hook_q(self.split_heads(self.w_q(x_q)))             # [B,H,T,Dh]
        k, v = self.keys_values(x_kv) if cache is None else cache.keys_values(self, x_kv)  # [B,H,S,Dh]
        p = self.dropout if self.training else 0.0
        if self._explicit():
            z, scores, weights = attention(q, k, v, mask, p)
            self.hook_scores(scores)
            self.hook_pattern(weights)
        else:  # fused kernel; same result, nothing to show
            z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        z = self.hook_z(z)                                           # [B,H,T,Dh]
        B, H, T, Dh = z.shape
        concat = z.transpose(1, 2).reshape(B, T, H * Dh)             # [B,T,D]
        return self.hook_out(self.w_o(concat))

    def _explicit(self) -> bool:
        trace = active_trace()
        return trace is not None and (trace.needs(self.hook_scores.name) or trace.needs(self.hook_pattern.name))


class LayerNorm(nn.Module):
    """Normalises each token's features: (x - mean) / spread * gain + bias; statistics are hookable.

    kind "standard" (torch, the paper's implementations): spread = sqrt(var + eps), var biased (divides by D).
    kind "annotated" (the Annotated Transformer's own LayerNorm): spread = std + eps, std Bessel-corrected
    (divides by D - 1), eps added outside the square root.
    """

    def __init__(self, d_model: int, eps: float = 1e-5, kind: str = "standard"):
        super().__init__()
        self.eps, self.kind = eps, kind
        self.weight = nn.Parameter(torch.ones(d_model))   # gain
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.hook_in = HookPoint()           # [B,T,D] the input
        self.hook_mean = HookPoint()         # [B,T] per-token mean of the input
        self.hook_std = HookPoint()          # [B,T] per-token spread the input is divided by (see kind)
        self.hook_normalized = HookPoint()   # [B,T,D] before gain and bias
        self.hook_gain = HookPoint(copy=True)   # [1,D] the parameter itself
        self.hook_bias = HookPoint(copy=True)   # [1,D]
        self.hook_out = HookPoint()          # [B,T,D]

    def forward(self, x):
        if active_trace() is None:
            if self.kind == "standard":
                return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)
            return torch.addcmul(self.bias, self.statistics(x)[0], self.weight)
        x = self.hook_in(x)
        normalized, mean, spread = self.statistics(x)                     # [B,T,D], [B,T], [B,T]
        self.hook_mean(mean)
        self.hook_std(spread)
        normalized = self.hook_normalized(normalized)
        self.hook_gain(self.weight[None])  # every captured value has a leading batch dim
        self.hook_bias(self.bias[None])
        return self.hook_out(torch.addcmul(self.bias, normalized, self.weight))

    def statistics(self, x):
        """(normalized [B,T,D], mean [B,T], spread [B,T]) of x [B,T,D]."""
        if self.kind == "standard":
            # The fused kernel without gain and bias also returns the statistics it used: ~10x faster
            # than var_mean, subtract and divide written out.
            normalized, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], None, None, self.eps)  # [B,T,1] x2
            return normalized, mean.squeeze(-1), rstd.reciprocal().squeeze(-1)              # sqrt(var + eps)
        mean = x.mean(-1, keepdim=True)                                                      # [B,T,1]
        spread = x.std(-1, keepdim=True) + self.eps                                          # std / (D-1), + eps
        return (x - mean) / spread, mean.squeeze(-1), spread.squeeze(-1)


ACTIVATION: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": F.relu, "gelu": F.gelu}   # config.ACTIVATIONS


class FeedForward(nn.Module):
    """Position-wise: max(0, x W1 + b1) W2 + b2, the same on every token (GELU in place of max(0, .) for a model
    imported with it)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float, activation: str = "relu"):
        super().__init__()
        self.activation = ACTIVATION[activation]
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.hook_hidden = HookPoint()  # [B,T,d_ff] after ReLU (or GELU)
        self.hook_out = HookPoint()     # [B,T,D]

    def forward(self, x):
        hidden = self.hook_hidden(self.activation(self.w_1(x)))
        return self.hook_out(self.w_2(self.dropout(hidden)))


def sinusoidal_table(n_positions: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)). [P, D]"""
    pos = torch.arange(n_positions, dtype=torch.float64).unsqueeze(1)          # [P,1]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)                   # [D/2]
    angle = pos / torch.pow(10000.0, two_i / d_model)                          # [P,D/2]
    table = torch.zeros(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int, kind: str = "sinusoidal"):
        super().__init__()
        self.kind = kind
        if kind == "learned":
            self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        else:  # a buffer, not a parameter: fixed, and rebuilt rather than loaded
            self.register_buffer("table", sinusoidal_table(max_len, d_model), persistent=False)

    def forward(self, n_positions: int, start: int | torch.Tensor = 0):
        """Encodings of positions start .. start+n-1 (start > 0: the new tokens of cached decoding).
        A tensor start [1] (static-cache decoding) is read on the device; its caller keeps it in range."""
        if isinstance(start, torch.Tensor):
            return self.table.index_select(0, start + torch.arange(n_positions, device=start.device))  # [T,D]
        if start + n_positions > self.table.size(0):
            raise ValueError(f"sequence of {start + n_positions} tokens exceeds max_len={self.table.size(0)}")
        return self.table[start:start + n_positions]                         # [T,D]


class Embeddings(nn.Module):
    """Token embedding x sqrt(d_model) (so it is not drowned by the PE), plus positional encoding."""

    def __init__(self, token: nn.Embedding, pos: PositionalEncoding, dropout: float):
        super().__init__()
        self.token = token
        self.pos = pos
        self.scale = math.sqrt(token.embedding_dim)
        self.dropout = nn.Dropout(dropout)
        self.hook_tokens = HookPoint()  # [B,T,D] scaled token embeddings
        self.hook_pos = HookPoint(copy=True)   # [1,T,D] positional encodings (a slice of the table)
        self.hook_out = HookPoint()     # [B,T,D] their sum, before dropout

    def forward(self, ids, start: int | torch.Tensor = 0):                # ids [B,T] at positions start..
        tokens = self.hook_tokens(self.token(ids) * self.scale)           # [B,T,D]
        pos = self.hook_pos(self.pos(ids.size(1), start)[None])           # [1,T,D]
        return self.dropout(self.hook_out(tokens + pos))
