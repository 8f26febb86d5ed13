"""Model hyper-parameters: one frozen dataclass, saved as config.json beside the weights.

Every field is checked against its meaning when the dataclass is built, so a config.json with bad
values (dropout 5, eos_id beyond the vocabulary, d_ff 10**14, NaN, a boolean for a size) is refused
with one sentence "field=value: why" instead of a crash deep inside torch. The model's size is worked
out arithmetically from the fields and refused before any tensor is allocated when it would not fit.
"""
from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
from dataclasses import dataclass
from pathlib import Path

MAX_PARAMETERS = 2_000_000_000   # far above any model this app teaches with (en-es has ~10 M)
MAX_LAYERS = 128                  # per stack; each layer is a Python module tree, so also bounds build time
MIN_POSITIONS = 4                 # max_len: a word and </s> to read, <s> and one step to write
RAM_SHARE = 0.5                   # the model's fp32 tensors may take at most this share of physical RAM
BYTES_PER_ELEMENT = 4             # fp32, as load_checkpoint keeps the weights


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int                 # the target vocabulary (the output's size), and the source's unless src_vocab_size
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
    # What models trained elsewhere need (docs/byo-model.md); the defaults are the paper's model above.
    src_vocab_size: int | None = None   # a separate source vocabulary of this size; None: source reads vocab_size
    final_norm: bool | None = None  # a LayerNorm after each stack's last layer; None: exactly when norm_first
    ln_kind: str = "standard"       # "standard": (x-mean)/sqrt(var+eps), var biased, as torch;
                                    # "annotated": (x-mean)/(std+eps), std Bessel-corrected (the Annotated Transformer)
    src_bos: bool = False           # the source reads <s> first as well (<s> x </s>, as both those projects feed it)
    activation: str = "relu"        # the feed-forward's: "relu" (the paper) or "gelu" (nn.Transformer(activation="gelu"))

    def __post_init__(self):
        _check_types(self)
        _check_values(self)
        _check_size(self)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def source_vocab_size(self) -> int:
        return self.vocab_size if self.src_vocab_size is None else self.src_vocab_size

    @property
    def has_final_norm(self) -> bool:
        return self.norm_first if self.final_norm is None else self.final_norm

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        if not isinstance(data, dict):
            raise ValueError(f"must be a JSON object of settings, not {type(data).__name__}")
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown config keys: {unknown} (known keys: {', '.join(known)})")
        if "vocab_size" not in data:
            raise ValueError("vocab_size is missing: it must be given (the tokenizer's vocabulary size)")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")


# -- validation ------------------------------------------------------------------------------------
INT_FIELDS = ("vocab_size", "d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "max_len",
              "pad_id", "bos_id", "eos_id")
FLOAT_FIELDS = ("dropout", "ln_eps")
BOOL_FIELDS = ("norm_first", "share_embeddings", "src_bos")
PE_KINDS = ("sinusoidal", "learned")
LN_KINDS = ("standard", "annotated")
ACTIVATIONS = ("relu", "gelu")


def _bad(name: str, value, why: str) -> ValueError:
    return ValueError(f"{name}={_short(value)}: {why}")


def _short(value) -> str:
    """The value as written, cut short: a hostile config.json may hold a 400-digit number or a long string."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…{text[-8:]} ({len(text)} characters)"


def _check_types(cfg: TransformerConfig) -> None:
    """bool is a subclass of int in Python, so True would pass as a size of 1: refused explicitly.
    numbers.Integral/Real also admit numpy scalars, which callers may pass from arrays or sliders."""
    ints = INT_FIELDS + (() if cfg.src_vocab_size is None else ("src_vocab_size",))
    bools = BOOL_FIELDS + (() if cfg.final_norm is None else ("final_norm",))
    for name in ints:
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _bad(name, value, f"must be an integer, not {type(value).__name__}")
    for name in FLOAT_FIELDS:
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise _bad(name, value, f"must be a number, not {type(value).__name__}")
        if not math.isfinite(value):
            raise _bad(name, value, "must be a finite number")
    for name in bools:
        value = getattr(cfg, name)
        if not isinstance(value, bool):
            raise _bad(name, value, f"must be true or false, not {type(value).__name__}")
    for name, kinds in (("pe", PE_KINDS), ("ln_kind", LN_KINDS), ("activation", ACTIVATIONS)):
        if not isinstance(getattr(cfg, name), str):
            raise _bad(name, getattr(cfg, name), f"must be one of {kinds}, not {type(getattr(cfg, name)).__name__}")


def _check_values(cfg: TransformerConfig) -> None:
    for name in ("vocab_size", "d_model", "n_heads", "d_ff", "max_len", "n_encoder_layers", "n_decoder_layers",
                 "src_vocab_size"):
        if getattr(cfg, name) is not None and getattr(cfg, name) <= 0:
            raise _bad(name, getattr(cfg, name), "must be a positive integer")
    for name in ("n_encoder_layers", "n_decoder_layers"):
        if getattr(cfg, name) > MAX_LAYERS:
            raise _bad(name, getattr(cfg, name), f"at most {MAX_LAYERS} layers per stack")
    if cfg.max_len < MIN_POSITIONS:
        raise _bad("max_len", cfg.max_len, f"must be at least {MIN_POSITIONS} positions")
    if cfg.d_model % cfg.n_heads:
        raise _bad("d_model", cfg.d_model, f"must be divisible by n_heads={cfg.n_heads} (each head gets d_model/n_heads)")
    if not 0 <= cfg.dropout < 1:
        raise _bad("dropout", cfg.dropout, "must be a probability, 0 <= p < 1")
    if not 0 < cfg.ln_eps < 1:
        raise _bad("ln_eps", cfg.ln_eps, "LayerNorm's epsilon must be small and positive, 0 < eps < 1")
    if cfg.pe not in PE_KINDS:
        raise _bad("pe", cfg.pe, f"must be one of {PE_KINDS}")
    if cfg.ln_kind not in LN_KINDS:
        raise _bad("ln_kind", cfg.ln_kind, f"must be one of {LN_KINDS}")
    if cfg.activation not in ACTIVATIONS:
        raise _bad("activation", cfg.activation, f"must be one of {ACTIVATIONS}")
    if cfg.share_embeddings and cfg.src_vocab_size is not None:
        raise _bad("src_vocab_size", cfg.src_vocab_size, "a separate source vocabulary cannot share the target's "
                   "embedding (set share_embeddings to false)")
    _check_special_ids(cfg)


def _check_special_ids(cfg: TransformerConfig) -> None:
    """Token ids index the embedding, and must differ: padding is masked out, <s> starts decoding and
    </s> ends it, so two of them sharing an id would mask the start token or stop at once."""
    seen: dict[int, str] = {}
    smallest = min(cfg.vocab_size, cfg.source_vocab_size)          # the ids name the same tokens on both sides
    bound = f"vocab_size={cfg.vocab_size}" if smallest == cfg.vocab_size else f"src_vocab_size={smallest}"
    for name in ("pad_id", "bos_id", "eos_id"):
        value = getattr(cfg, name)
        if not 0 <= value < smallest:
            raise _bad(name, value, f"must be a token id, 0 <= id < {bound}")
        if value in seen:
            raise _bad(name, value, f"must differ from {seen[value]}={value}")
        seen[value] = name


def size_terms(cfg: TransformerConfig) -> dict[str, int]:
    """Elements of every tensor the model holds (parameters and the sinusoidal buffers), grouped by
    the field that drives them; plain integer arithmetic, nothing is allocated."""
    d, v, v_src, f = cfg.d_model, cfg.vocab_size, cfg.source_vocab_size, cfg.d_ff
    attention = 4 * (d * d + d)                                    # W_q, W_k, W_v, W_o with biases
    norm = 2 * d                                                   # gain and bias
    feed_forward = d * f + f + f * d + d
    n_enc, n_dec = cfg.n_encoder_layers, cfg.n_decoder_layers
    return {
        "vocab_size": v * d * (1 if cfg.share_embeddings else 2) + v + (0 if cfg.share_embeddings else v_src * d),
                                                                              # embeddings, output layer + bias
        "max_len": 2 * cfg.max_len * d,                                       # source and target position tables
        "d_ff": (n_enc + n_dec) * feed_forward,
        "d_model": n_enc * (attention + 2 * norm) + n_dec * (2 * attention + 3 * norm)
                   + (2 * norm if cfg.has_final_norm else 0),                 # a final norm on each stack
    }


def parameter_count(cfg: TransformerConfig) -> int:
    """Trainable parameters, as Transformer(cfg).num_parameters() would count them (a test checks)."""
    terms = size_terms(cfg)
    positions = terms["max_len"] if cfg.pe == "learned" else 0              # sinusoidal tables are buffers
    return terms["vocab_size"] + terms["d_ff"] + terms["d_model"] + positions


def memory_budget_elements() -> int:
    """fp32 elements allowed: RAM_SHARE of physical memory (unbounded where the OS does not say)."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MAX_PARAMETERS
    return int(ram * RAM_SHARE) // BYTES_PER_ELEMENT


def _approx(n: int) -> str:
    """3 significant digits; Python ints in a config.json can be far beyond a float's range."""
    return f"{n:.3g}" if n < 10**300 else f"~1e{len(str(n)) - 1}"


def _check_size(cfg: TransformerConfig) -> None:
    terms = size_terms(cfg)
    total, params = sum(terms.values()), parameter_count(cfg)
    budget = memory_budget_elements()
    if params <= MAX_PARAMETERS and total <= budget:
        return
    culprit = max(terms, key=lambda name: terms[name])
    raise _bad(culprit, getattr(cfg, culprit),
               f"the model would hold {_approx(total)} numbers ({_approx(params)} parameters, "
               f"{_approx(total * BYTES_PER_ELEMENT // 2**30)} GiB in fp32); the limit is {MAX_PARAMETERS:.0e} "
               f"parameters and {RAM_SHARE:.0%} of this machine's RAM ({budget * BYTES_PER_ELEMENT / 2**30:.3g} GiB)")
