"""The encoder-decoder that attention was invented for: a GRU seq2seq model, with or without attention
(Bahdanau, Cho & Bengio 2015; Luong, Pham & Manning 2015), small enough to learn a toy task in a minute.

The encoder is a bidirectional GRU; the annotation of source position j is h_j = [forward h_j ; backward h_j].
The decoder is a GRU cell fed the previous output token and a context vector c_i:

    attention "none"       c_i = c = [forward h_S ; backward h_1] for every i: the whole input in one vector
    "additive" (Bahdanau)  e_ij = v^T tanh(W s_{i-1} + U h_j)
    "dot"      (Luong)     e_ij = s_{i-1}^T h_j
    "general"  (Luong)     e_ij = s_{i-1}^T W h_j
                           a_ij = softmax_j(e_ij) over the real (non-pad) source positions; c_i = sum_j a_ij h_j

All three scores read the decoder state before the step, s_{i-1}, as Bahdanau's does (Luong's read s_i after
it), so the models differ only in how they make c_i. forward() returns its scores, weights and contexts
instead of keeping them on the module: one loaded model serves many sessions at once.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

ATTENTIONS = ("none", "additive", "dot", "general")
MAX_WIDTH = 1024        # d_embed, d_hidden: far above what a toy task needs; bounds a config.json's memory
MAX_VOCAB = 1_000_000


@dataclass(frozen=True)
class RNNConfig:
    vocab_size: int
    attention: str = "additive"     # one of ATTENTIONS
    d_embed: int = 32
    d_hidden: int = 64              # decoder state and annotation size; each encoder direction has half
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self):
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention={self.attention!r}: choose from {', '.join(ATTENTIONS)}")
        for name, top in (("vocab_size", MAX_VOCAB), ("d_embed", MAX_WIDTH), ("d_hidden", MAX_WIDTH)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= top:
                raise ValueError(f"{name}={value!r}: must be a whole number from 1 to {top}")
        if self.d_hidden % 2:
            raise ValueError(f"d_hidden={self.d_hidden}: must be even (two encoder directions of half each)")
        for name in ("pad_id", "bos_id", "eos_id"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < self.vocab_size:
                raise ValueError(f"{name}={value!r}: must be a token id below vocab_size={self.vocab_size}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RNNConfig":
        if not isinstance(data, dict):
            raise ValueError(f"must be a JSON object of settings, not {type(data).__name__}")
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"unknown settings {unknown}")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")


class Memory(NamedTuple):
    """What the decoder reads from the encoder, for a batch of B sources of S positions."""
    annotations: torch.Tensor   # [B,S,D] h_j
    keys: torch.Tensor          # [B,S,D] U h_j (additive), W h_j (general), h_j (dot): computed once
    real: torch.Tensor          # [B,S] True at real source tokens, False at padding
    summary: torch.Tensor       # [B,D] [forward h_S ; backward h_1]: the no-attention model's only context


class RNNOutput(NamedTuple):
    logits: torch.Tensor            # [B,T,V]
    context: torch.Tensor           # [B,T,D] c_i fed to each step (the same vector at every i without attention)
    scores: torch.Tensor | None     # [B,T,S] e_ij, -inf at padding; None without attention
    weights: torch.Tensor | None    # [B,T,S] a_ij, rows sum to 1; None without attention


class Seq2SeqRNN(nn.Module):
    def __init__(self, cfg: RNNConfig):
        super().__init__()
        self.cfg = cfg
        d, e = cfg.d_hidden, cfg.d_embed
        self.embed = nn.Embedding(cfg.vocab_size, e, padding_idx=cfg.pad_id)
        self.encoder = nn.GRU(e, d // 2, batch_first=True, bidirectional=True)
        self.init_state = nn.Linear(d // 2, d)              # s_0 = tanh(W_s backward h_1), as Bahdanau's
        self.cell = nn.GRUCell(e + d, d)
        if cfg.attention == "additive":
            self.query = nn.Linear(d, d, bias=False)        # W
            self.key = nn.Linear(d, d, bias=False)          # U
            self.v = nn.Linear(d, 1, bias=False)            # v
        elif cfg.attention == "general":
            self.key = nn.Linear(d, d, bias=False)          # W of s^T W h
        self.readout = nn.Linear(2 * d + e, d)
        self.out = nn.Linear(d, cfg.vocab_size)

    @property
    def device(self) -> torch.device:
        return self.out.weight.device

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def encode(self, src: torch.Tensor) -> Memory:
        """src [B,S] right-padded ids -> the decoder's Memory (packed, so padding never reaches a state)."""
        real = src != self.cfg.pad_id
        lengths = real.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(src), lengths, batch_first=True, enforce_sorted=False)
        out, last = self.encoder(packed)
        annotations, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        summary = torch.cat([last[0], last[1]], dim=-1)                 # forward at the end, backward at the start
        if self.cfg.attention in ("additive", "general"):
            keys = self.key(annotations)
        else:
            keys = annotations
        return Memory(annotations, keys, real, summary)

    def start_state(self, memory: Memory) -> torch.Tensor:
        backward_first = memory.summary[:, self.cfg.d_hidden // 2:]
        return torch.tanh(self.init_state(backward_first))

    def attend(self, state: torch.Tensor, memory: Memory):
        """(context [B,D], scores [B,S] or None, weights [B,S] or None) for decoder state s_{i-1} [B,D]."""
        if self.cfg.attention == "none":
            return memory.summary, None, None
        if self.cfg.attention == "additive":
            scores = self.v(torch.tanh(self.query(state)[:, None, :] + memory.keys)).squeeze(-1)
        else:                                                           # dot, general: s^T h, s^T (W h)
            scores = torch.einsum("bd,bsd->bs", state, memory.keys)
        scores = scores.masked_fill(~memory.real, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return torch.einsum("bs,bsd->bd", weights, memory.annotations), scores, weights

    def step(self, prev: torch.Tensor, state: torch.Tensor, memory: Memory):
        """One decoder step: previous tokens [B], s_{i-1} [B,D] -> (logits [B,V], s_i, c_i, scores, weights)."""
        context, scores, weights = self.attend(state, memory)
        emb = self.embed(prev)
        state = self.cell(torch.cat([emb, context], dim=-1), state)
        logits = self.out(torch.tanh(self.readout(torch.cat([state, context, emb], dim=-1))))
        return logits, state, context, scores, weights

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> RNNOutput:
        """Teacher-forced: src [B,S], tgt_in [B,T] (<s> y_1 .. y_{T-1}) -> every step's logits and attention."""
        memory = self.encode(src)
        state = self.start_state(memory)
        steps = []
        for i in range(tgt_in.size(1)):
            logits, state, context, scores, weights = self.step(tgt_in[:, i], state, memory)
            steps.append((logits, context, scores, weights))
        return _stack(steps)

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, max_steps: int) -> tuple[torch.Tensor, RNNOutput]:
        """Greedy decoding: (ids [B,T] with </s> and padding after it, every step's output)."""
        memory = self.encode(src)
        state = self.start_state(memory)
        prev = torch.full((src.size(0),), self.cfg.bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros_like(prev, dtype=torch.bool)
        ids, steps = [], []
        for _ in range(max_steps):
            logits, state, context, scores, weights = self.step(prev, state, memory)
            prev = logits.argmax(-1).masked_fill(done, self.cfg.pad_id)
            ids.append(prev)
            steps.append((logits, context, scores, weights))
            done |= prev == self.cfg.eos_id
            if done.all():
                break
        return torch.stack(ids, 1), _stack(steps)


def _stack(steps: list[tuple]) -> RNNOutput:
    logits, context, scores, weights = zip(*steps)
    stack = lambda xs: None if xs[0] is None else torch.stack(xs, 1)   # noqa: E731  (no attention: no scores)
    return RNNOutput(torch.stack(logits, 1), torch.stack(context, 1), stack(scores), stack(weights))

