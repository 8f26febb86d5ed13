"""Model hyper-parameters: one frozen dataclass, saved as config.json beside the weights."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int                 # one joint vocabulary for source and target
    d_model: int = 256
    n_heads: int = 8
    n_encoder_layers: int = 3
    n_decoder_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.1
    max_len: int = 512              # longest sequence the positional encoding covers
    norm_first: bool = False        # False: post-norm as in the paper, LayerNorm(x + Sublayer(x))
    pe: str = "sinusoidal"          # "sinusoidal" (paper) or "learned"
    share_embeddings: bool = True   # one matrix for source embedding, target embedding and output
    ln_eps: float = 1e-5
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.pe not in ("sinusoidal", "learned"):
            raise ValueError(f"pe must be 'sinusoidal' or 'learned', not {self.pe!r}")
        for name in ("vocab_size", "d_model", "n_heads", "d_ff", "max_len"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")
