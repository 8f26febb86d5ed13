"""A Transformer trained elsewhere, as a model folder the app opens (docs/byo-model.md).

Two shapes, recognised by their weights' names:
- "tutorial": PyTorch's translation tutorial, a Seq2SeqTransformer around torch.nn.Transformer (post-norm,
  a final LayerNorm on each stack, separate source and target embeddings x sqrt(d), sinusoidal encoding,
  a `generator` Linear with bias);
- "annotated": the Annotated Transformer's make_model (pre-norm sublayers, its own LayerNorm
  a_2 * (x - mean) / (std + eps) + b_2 with Bessel-corrected std, a Generator whose log-softmax is ours too).

Nothing pickled is run: a .pt is read with torch.load(weights_only=True), which refuses any object that is
not tensors, numbers, strings, lists and dicts. Every check runs before anything is written, and the folder
appears whole or not at all (written beside it, then renamed).

Token ids are renumbered so that <pad>, <s>, </s> are 0, 1, 2 as this project's tokenizers have them (the
embedding rows and the output rows move with their tokens: the model computes the same function), and those
three are renamed to ours (<blank> -> <pad>, <bos> -> <s>, <eos> -> </s>).
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from model.errors import CheckpointError
from model.io.checkpoint import MAX_TOKENIZER_BYTES, load_checkpoint, save_checkpoint
from model.io.files import MiB, check_regular_file, read_bytes_limited
from model.io.tokenizer import BOS, EOS, PAD, SPECIAL_TOKENS, Tokenizer, check_readable
from model.nn.config import MAX_PARAMETERS, TransformerConfig
from model.nn.layers import sinusoidal_table
from model.nn.transformer import Transformer

SHAPES = ("tutorial", "annotated")
MAX_CHECKPOINT_BYTES = 8 * MAX_PARAMETERS            # every parameter in fp64
STATE_DICT_KEYS = ("model_state_dict", "state_dict", "model")   # where training scripts nest the weights
# Their names for our three special tokens, in the order they are looked for.
SPECIAL_NAMES = {PAD: ("<pad>", "<blank>"), BOS: ("<s>", "<bos>", "<sos>"), EOS: ("</s>", "<eos>")}
PE_TOLERANCE = 1e-3                                  # float32 tables of 5,000 positions differ from ours by ~5e-4
WRAPPER_PREFIXES = ("module.", "_orig_mod.")    # DataParallel/DDP's, torch.compile's
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)   # read as float32
SAVE_STATE_DICT = ("save only its weights, torch.save(model.state_dict(), 'model.pt'), and import that "
                   "(docs/byo-model.md)")


@dataclass(frozen=True)
class Shape:
    """How one project names its weights: ours name -> theirs, layer by layer."""
    name: str
    description: str
    marker: str                      # a key only this shape has
    src_embedding: str
    tgt_embedding: str
    positions: str                   # its stored sinusoidal table
    generator: str
    encoder_layer: str               # with {i}
    decoder_layer: str
    final_norms: tuple[str, str]     # encoder's, decoder's (prefixes)
    attention: dict[str, str]        # our sublayer -> theirs
    norms: dict[str, dict[str, str]]  # stack -> our norm -> theirs
    ff: tuple[str, str]
    norm_params: tuple[str, str]     # their gain, bias
    config: dict                     # the settings that make our model compute theirs


TUTORIAL = Shape(
    name="tutorial", description="PyTorch's translation tutorial (Seq2SeqTransformer around torch.nn.Transformer)",
    marker="transformer.encoder.layers.0.self_attn.in_proj_weight",
    src_embedding="src_tok_emb.embedding.weight", tgt_embedding="tgt_tok_emb.embedding.weight",
    positions="positional_encoding.pos_embedding", generator="generator",
    encoder_layer="transformer.encoder.layers.{i}", decoder_layer="transformer.decoder.layers.{i}",
    final_norms=("transformer.encoder.norm", "transformer.decoder.norm"),
    attention={"self_attn": "self_attn", "cross_attn": "multihead_attn"},
    norms={"encoder": {"norm_attn": "norm1", "norm_ff": "norm2"},
           "decoder": {"norm_attn": "norm1", "norm_cross": "norm2", "norm_ff": "norm3"}},
    ff=("linear1", "linear2"), norm_params=("weight", "bias"),
    config=dict(norm_first=False, final_norm=True, ln_kind="standard", ln_eps=1e-5, src_bos=True))

ANNOTATED = Shape(
    name="annotated", description="the Annotated Transformer (make_model)",
    marker="encoder.layers.0.sublayer.0.norm.a_2",
    src_embedding="src_embed.0.lut.weight", tgt_embedding="tgt_embed.0.lut.weight",
    positions="src_embed.1.pe", generator="generator.proj",
    encoder_layer="encoder.layers.{i}", decoder_layer="decoder.layers.{i}",
    final_norms=("encoder.norm", "decoder.norm"),
    attention={"self_attn": "self_attn", "cross_attn": "src_attn"},
    norms={"encoder": {"norm_attn": "sublayer.0.norm", "norm_ff": "sublayer.1.norm"},
           "decoder": {"norm_attn": "sublayer.0.norm", "norm_cross": "sublayer.1.norm", "norm_ff": "sublayer.2.norm"}},
    ff=("feed_forward.w_1", "feed_forward.w_2"), norm_params=("a_2", "b_2"),
    config=dict(norm_first=True, final_norm=True, ln_kind="annotated", ln_eps=1e-6, src_bos=True))

SHAPE_OF = {s.name: s for s in (TUTORIAL, ANNOTATED)}


# -- reading the checkpoint --------------------------------------------------------------------------
def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors by name, read without running pickled code: safetensors, or a .pt/.pth that
    torch.load(weights_only=True) accepts (a state_dict, or a dict holding one under model_state_dict,
    state_dict or model)."""
    path = Path(path)
    try:
        check_regular_file(path, MAX_CHECKPOINT_BYTES, "far more than this app's largest model")
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except ValueError as e:
        raise CheckpointError(str(e)) from None
    if path.suffix == ".safetensors":
        try:
            loaded = load_file(str(path))
        except (SafetensorError, OSError, ValueError, RuntimeError) as e:
            raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({str(e)[:200]})") from None
        return _unwrap(loaded, path)
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(f"{path}: holds Python objects, not only tensors (torch.save(model) pickles the whole "
                              f"model, and unpickling could run any code); {SAVE_STATE_DICT}") from None
    except Exception as e:    # noqa: BLE001 - any file may be given: /etc/passwd raised IndexError inside torch.load
        raise CheckpointError(f"{path}: not a PyTorch checkpoint torch.load can read "
                              f"({type(e).__name__}: {str(e)[:200]})") from None
    return _unwrap(loaded, path)


def _unwrap(loaded, path: Path) -> dict[str, torch.Tensor]:
    if isinstance(loaded, dict) and not _all_tensors(loaded):
        nested = [k for k in STATE_DICT_KEYS if isinstance(loaded.get(k), dict)]
        loaded = loaded[nested[0]] if nested else loaded
    if not isinstance(loaded, dict) or not loaded or not _all_tensors(loaded):
        raise CheckpointError(f"{path}: not a state_dict (a dict of parameter name -> tensor); {SAVE_STATE_DICT}")
    loaded = _without_wrappers(loaded)
    for name, tensor in loaded.items():
        _check_storage(name, tensor)
    return loaded


def _without_wrappers(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The names as the model itself has them: without the `module.` that DataParallel and
    DistributedDataParallel put before every name, nor torch.compile's `_orig_mod.` (either, both, in any order)."""
    while True:
        prefix = next((p for p in WRAPPER_PREFIXES if all(k.startswith(p) for k in state)), None)
        if prefix is None:
            return state
        state = {k[len(prefix):]: v for k, v in state.items()}


def _check_storage(name: str, tensor: torch.Tensor) -> None:
    """Before anything is computed from it: dense numbers of a kind our model holds, and no more numbers than
    the file stores. A 41 KB file held a positional table expanded (stride 0) to 2^23 positions, and comparing it
    with the formula allocated 2.35 GB; 10^12 positions asked for 128 TB."""
    if tensor.layout != torch.strided or tensor.is_quantized:
        raise CheckpointError(f"{name} is a {str(tensor.layout).replace('torch.', '')}"
                              f"{' quantized' if tensor.is_quantized else ''} tensor; save dense weights "
                              "(tensor.to_dense(), or the model before quantizing)")
    if tensor.is_floating_point() and tensor.dtype not in FLOAT_DTYPES:
        raise CheckpointError(f"{name} holds {str(tensor.dtype).replace('torch.', '')} numbers; this app reads "
                              f"{', '.join(str(d).replace('torch.', '') for d in FLOAT_DTYPES)} weights "
                              "(model.float() before saving)")
    if tensor.is_complex():
        raise CheckpointError(f"{name} holds complex numbers, not real weights")
    stored = tensor.untyped_storage().nbytes()
    if tensor.numel() * tensor.element_size() > stored:
        raise CheckpointError(f"{name} has shape {tuple(tensor.shape)} ({tensor.numel():,} numbers) but its file "
                              f"stores {stored // max(tensor.element_size(), 1):,}: an expanded view, not weights; "
                              "save tensor.clone() or the model's own state_dict()")


def _all_tensors(d: dict) -> bool:
    return all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in d.items())


def detect_shape(state: dict[str, torch.Tensor]) -> Shape:
    for shape in SHAPE_OF.values():
        if shape.marker in state:
            return shape
    raise CheckpointError("the checkpoint is neither the PyTorch tutorial's Seq2SeqTransformer (it has no "
                          f"{TUTORIAL.marker}) nor the Annotated Transformer's make_model (no {ANNOTATED.marker})")


def _count_layers(state: dict, pattern: str) -> int:
    prefix = re.escape(pattern.split("{i}")[0])
    found = {int(m.group(1)) for k in state if (m := re.match(prefix + r"(\d+)\.", k))}
    return max(found) + 1 if found else 0


# -- their names -> ours ------------------------------------------------------------------------------
def _take(state: dict, used: set, name: str) -> torch.Tensor:
    if name not in state:
        raise CheckpointError(f"the checkpoint has no {name}: not a whole state_dict of that model")
    used.add(name)
    return state[name]


def _attention(state, used, shape: Shape, theirs: str) -> dict[str, torch.Tensor]:
    if shape is TUTORIAL:                             # nn.MultiheadAttention keeps W_q, W_k, W_v stacked [3D, D]
        w = _take(state, used, f"{theirs}.in_proj_weight")
        b = _take(state, used, f"{theirs}.in_proj_bias")
        if w.dim() != 2 or w.size(0) % 3 or b.shape != (w.size(0),):
            raise CheckpointError(f"{theirs}.in_proj_weight has shape {tuple(w.shape)}, not [3 x d_model, d_model]")
        parts = dict(zip(("w_q", "w_k", "w_v"), zip(w.chunk(3), b.chunk(3))))
        parts["w_o"] = (_take(state, used, f"{theirs}.out_proj.weight"), _take(state, used, f"{theirs}.out_proj.bias"))
    else:                                             # linears.0..3: W_q, W_k, W_v, W_o
        parts = {ours: (_take(state, used, f"{theirs}.linears.{j}.weight"), _take(state, used, f"{theirs}.linears.{j}.bias"))
                 for j, ours in enumerate(("w_q", "w_k", "w_v", "w_o"))}
    return {f"{ours}.{p}": t for ours, (w, b) in parts.items() for p, t in (("weight", w), ("bias", b))}


def _norm(state, used, shape: Shape, theirs: str) -> dict[str, torch.Tensor]:
    gain, bias = shape.norm_params
    return {"weight": _take(state, used, f"{theirs}.{gain}"), "bias": _take(state, used, f"{theirs}.{bias}")}


def _layer(state, used, shape: Shape, stack: str, i: int) -> dict[str, torch.Tensor]:
    theirs = (shape.encoder_layer if stack == "encoder" else shape.decoder_layer).format(i=i)
    ours = f"{stack}.layers.{i}"
    out: dict[str, torch.Tensor] = {}
    for sub, their_sub in shape.attention.items():
        if stack == "decoder" or sub == "self_attn":
            out |= {f"{ours}.{sub}.{k}": v for k, v in _attention(state, used, shape, f"{theirs}.{their_sub}").items()}
    for norm, their_norm in shape.norms[stack].items():
        out |= {f"{ours}.{norm}.{k}": v for k, v in _norm(state, used, shape, f"{theirs}.{their_norm}").items()}
    for mine, their_ff in zip(("w_1", "w_2"), shape.ff):
        for p in ("weight", "bias"):
            out[f"{ours}.ff.{mine}.{p}"] = _take(state, used, f"{theirs}.{their_ff}.{p}")
    return out


def _positions(state, used, shape: Shape, d_model: int) -> int:
    """Their stored sinusoidal table must be the formula's (a learned or altered encoding is not ours);
    returns its length, the model's max_len."""
    if shape.positions not in state:
        raise CheckpointError(f"the checkpoint has no {shape.positions}: the positional encoding's table")
    tables = [k for k in state if k.endswith(".pe") or k.endswith("pos_embedding")]    # the Annotated keeps two
    lengths = {}
    for name in tables:
        used.add(name)
        raw = state[name]                                                   # [P,1,D] or [1,P,D]
        table = raw.reshape(-1, raw.shape[-1]).float() if raw.dim() else raw                   # [P,D]
        if table.dim() != 2 or not table.numel() or table.size(1) != d_model or not torch.isfinite(table).all():
            raise CheckpointError(f"{name} is not a table of positions x d_model={d_model} finite numbers")
        gap = float((table - sinusoidal_table(table.size(0), table.size(1))).abs().max())
        tolerance = max(PE_TOLERANCE, torch.finfo(raw.dtype).eps if raw.is_floating_point() else 0)  # bf16 rounds 2e-3
        if gap > tolerance:
            raise CheckpointError(f"{name} is not the sinusoidal encoding of the paper (it differs by {gap:.3g}, "
                                  f"more than {str(raw.dtype).replace('torch.', '')} rounding, {tolerance:.1g}); "
                                  "only that encoding can be imported")
        lengths[name] = table.size(0)
    return lengths[shape.positions]


def map_weights(state: dict[str, torch.Tensor], shape: Shape) -> tuple[dict[str, torch.Tensor], dict, dict[str, str]]:
    """(our names -> tensors, the config settings their shapes give, our names -> theirs for messages).
    Every key of theirs must be used."""
    used: set[str] = set()
    src = _take(state, used, shape.src_embedding)
    tgt = _take(state, used, shape.tgt_embedding)
    ours = {"src_embed.token.weight": src, "tgt_embed.token.weight": tgt,
            "generator.proj.weight": _take(state, used, f"{shape.generator}.weight"),
            "generator.proj.bias": _take(state, used, f"{shape.generator}.bias")}
    n_enc, n_dec = _count_layers(state, shape.encoder_layer), _count_layers(state, shape.decoder_layer)
    if not n_enc or not n_dec:
        raise CheckpointError(f"the checkpoint has no {'encoder' if not n_enc else 'decoder'} layers "
                              f"({(shape.encoder_layer if not n_enc else shape.decoder_layer).format(i=0)}.*)")
    for stack, n in (("encoder", n_enc), ("decoder", n_dec)):
        for i in range(n):
            ours |= _layer(state, used, shape, stack, i)
    for stack, theirs in zip(("encoder", "decoder"), shape.final_norms):
        ours |= {f"{stack}.norm.{k}": v for k, v in _norm(state, used, shape, theirs).items()}
    max_len = _positions(state, used, shape, src.size(-1))
    unknown = sorted(set(state) - used)
    if unknown:
        raise CheckpointError(f"the checkpoint has weights the {shape.name} shape does not: {', '.join(unknown[:3])}"
                              f"{' …' if len(unknown) > 3 else ''}")
    if src.dim() != 2 or tgt.dim() != 2:
        raise CheckpointError(f"{shape.src_embedding} has shape {tuple(src.shape)}, not [vocabulary, d_model]")
    d_ff_weight = ours["encoder.layers.0.ff.w_1.weight"]
    settings = dict(shape.config, d_model=src.size(1), d_ff=d_ff_weight.size(0), n_encoder_layers=n_enc,
                    n_decoder_layers=n_dec, max_len=max_len, vocab_size=tgt.size(0), share_embeddings=False)
    return ours, settings, _their_names(state, ours)


def _their_names(state: dict, ours: dict) -> dict[str, str]:
    """Our name -> the checkpoint's, so a message names what the student saved (a third of in_proj_weight
    is a view of it)."""
    by_id = {id(t): k for k, t in state.items()}
    names = {}
    for name, t in ours.items():
        base = t._base if t._base is not None else t
        names[name] = by_id.get(id(t)) or (f"{by_id[id(base)]} (a third of it)" if id(base) in by_id else name)
    return names


# -- vocabularies ---------------------------------------------------------------------------------------
@dataclass
class Vocabulary:
    """One side's tokenizer in our numbering, and where each of our ids was in theirs (our id -> theirs)."""
    tokenizer: Tokenizer
    order: list[int]
    source: str                       # what it was read from, for the card


def read_vocabulary(path: str | Path) -> Vocabulary:
    """A plain list of tokens, one a line, in id order (torchtext's vocab.get_itos()), or a tokenizers JSON."""
    path = Path(path)
    try:
        text = read_bytes_limited(path, MAX_TOKENIZER_BYTES, "a vocabulary of 100,000 words is about 1 MB").decode()
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: {e}" if str(path) not in str(e) else str(e)) from None
    if path.suffix == ".json":
        return _json_vocabulary(path, text)
    tokens = text.split("\n")                         # only \n: a \r inside a token is part of it
    if tokens and tokens[-1] == "":
        tokens.pop()                                  # the file's final newline
    if tokens and all(t.endswith("\r") for t in tokens):
        tokens = [t[:-1] for t in tokens]             # written with Windows line ends
    seen: dict[str, int] = {}
    for line, token in enumerate(tokens, 1):
        if token in seen:
            raise CheckpointError(f"{path}: line {line} repeats the token {token[:40]!r} of line {seen[token] + 1}")
        seen[token] = line - 1
    specials = _specials(path, seen)
    order = [seen[name] for name in specials] + [i for i in range(len(tokens)) if i not in specials.values()]
    return Vocabulary(Tokenizer.word_level([tokens[i] for i in order[len(SPECIAL_TOKENS):]], words=True),
                      order, path.name)


def _specials(path: Path, vocab: dict[str, int]) -> dict[str, int]:
    """Their token names of <pad>, <s>, </s> -> name (in our order); one sentence when one is missing."""
    found = {}
    for names in SPECIAL_NAMES.values():
        present = [n for n in names if n in vocab]
        if not present:
            raise CheckpointError(f"{path}: no padding/start/end token {' or '.join(names)} among its tokens "
                                  f"(this vocabulary needs all three: {', '.join(SPECIAL_NAMES)})")
        found[present[0]] = vocab[present[0]]
    clash = [name for name in SPECIAL_TOKENS if name in vocab and name not in found]
    if clash:
        raise CheckpointError(f"{path}: {clash[0]!r} is an ordinary token here, but this app names a special token "
                              "so; rename it in the file")
    return found


def _json_vocabulary(path: Path, text: str) -> Vocabulary:
    """A tokenizers JSON whose model keeps a token -> id table (WordLevel, BPE, WordPiece): ids renumbered,
    specials renamed. Of the rest only what the app runs on a sentence is kept, each part one of
    tokenizer.READABLE_PARTS (no regular expression: a pattern could freeze a worker); its post-processor,
    padding and truncation are dropped (the framing <s> x </s> is config.src_bos's)."""
    try:
        data = json.loads(text)
        check_readable(data)
    except (ValueError, RecursionError) as e:         # json.JSONDecodeError is a ValueError
        raise CheckpointError(f"{path}: not a tokenizers JSON this app reads ({str(e)[:200] or 'nested too deeply'})"
                              ) from None
    vocab = data["model"].get("vocab")
    if not isinstance(vocab, dict):
        raise CheckpointError(f"{path}: a {data['model']['type']} model without a token -> id table; give a "
                              "WordLevel, BPE or WordPiece tokenizer, or a list of tokens one a line")
    wrong = next((tok for tok, i in vocab.items() if type(i) is not int), None)
    if wrong is not None:
        raise CheckpointError(f"{path}: the id of {wrong[:40]!r} is {str(vocab[wrong])[:40]}, not a whole number")
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise CheckpointError(f"{path}: its token ids are not 0..{len(ids) - 1}, one each")
    added = data.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(a, dict) and isinstance(a.get("content"), str)
                                              and type(a.get("id")) is int for a in added):
        raise CheckpointError(f"{path}: its added_tokens are not a list of tokens, each with a whole-number id and "
                              "a content string")
    specials = _specials(path, vocab)
    order = list(specials.values()) + [i for i in range(len(ids)) if i not in specials.values()]
    new_id = {old: new for new, old in enumerate(order)}
    rename = dict(zip(specials, SPECIAL_TOKENS))
    data["model"]["vocab"] = {rename.get(tok, tok): new_id[i] for tok, i in vocab.items()}
    for token in added:
        if token["id"] in new_id:
            token["id"], token["content"] = new_id[token["id"]], rename.get(token["content"], token["content"])
    data["post_processor"], data["padding"], data["truncation"] = None, None, None
    try:
        tokenizer = Tokenizer.from_json(json.dumps(data))
    except Exception as e:  # noqa: BLE001 - the tokenizers package raises plain Exceptions
        raise CheckpointError(f"{path}: not a usable tokenizer ({str(e)[:200]})") from None
    return Vocabulary(tokenizer, order, path.name)


# -- putting it together ------------------------------------------------------------------------------
@dataclass
class Imported:
    model: Transformer
    tokenizer: Tokenizer              # the target's (and the source's, with one vocabulary)
    source_tokenizer: Tokenizer | None
    shape: Shape
    card: str


@dataclass(frozen=True)
class Told:
    """What the weights cannot show, as the person says it: a wrong value imports without an error and computes
    something else (nn.Transformer(norm_first=True) read as post-norm: logits off by 2.3), which only a check
    against their model's own output reveals (import --check-with; docs/byo-model.md)."""
    n_heads: int
    norm_first: bool | None = None    # None: the shape's own (tutorial post-norm, annotated pre-norm)
    activation: str = "relu"          # the feed-forward's (nn.Transformer(activation="gelu"))

    def settings(self, shape: Shape) -> dict:
        """The config settings this adds to the shape's; CheckpointError where the shape cannot have them."""
        if shape is ANNOTATED and self.norm_first is False:
            raise CheckpointError("the Annotated Transformer is pre-norm by construction (SublayerConnection): "
                                  "it has no post-norm form to import")
        if shape is ANNOTATED and self.activation != "relu":
            raise CheckpointError("the Annotated Transformer's feed-forward is ReLU (PositionwiseFeedForward): "
                                  f"--activation {self.activation} does not apply")
        chosen = {"n_heads": self.n_heads, "activation": self.activation}
        return chosen | ({} if self.norm_first is None else {"norm_first": self.norm_first})


def build(state: dict[str, torch.Tensor], told: Told, tgt_vocab: Vocabulary, src_vocab: Vocabulary | None = None,
          shape: Shape | None = None, origin: str = "") -> Imported:
    """Our model computing theirs, every check done. src_vocab None: one vocabulary for both sides."""
    shape = shape or detect_shape(state)
    weights, settings, their_names = map_weights(state, shape)
    settings |= told.settings(shape)
    joint = src_vocab is None
    src_vocab = src_vocab or tgt_vocab
    for side, vocab, name in (("source", src_vocab, "src_embed.token.weight"),
                              ("target", tgt_vocab, "tgt_embed.token.weight")):
        rows = weights[name].size(0)
        if len(vocab.order) != rows:
            raise CheckpointError(f"the {side} vocabulary {vocab.source} has {len(vocab.order):,} tokens, but the "
                                  f"checkpoint's {side} embedding has {rows:,} rows: is it the vocabulary it was "
                                  "trained with?")
    try:
        config = TransformerConfig(**settings, src_vocab_size=None if joint else src_vocab.tokenizer.vocab_size)
    except ValueError as e:
        raise CheckpointError(f"these weights do not make a model: {e}") from None
    model = Transformer(config)
    _check_tensors(model, weights, their_names)
    model.load_state_dict(_renumbered(weights, src_vocab.order, tgt_vocab.order))
    model.eval()
    card = model_card(shape, config, origin, src_vocab.source, None if joint else tgt_vocab.source)
    return Imported(model, tgt_vocab.tokenizer, None if joint else src_vocab.tokenizer, shape, card)


def _renumbered(weights: dict, src_order: list[int], tgt_order: list[int]) -> dict[str, torch.Tensor]:
    """Rows of every [vocabulary, ...] tensor in our id order (row k of ours = row order[k] of theirs)."""
    moved = dict(weights)
    moved["src_embed.token.weight"] = weights["src_embed.token.weight"][src_order]
    for name in ("tgt_embed.token.weight", "generator.proj.weight", "generator.proj.bias"):
        moved[name] = weights[name][tgt_order]
    return moved


def _check_tensors(model: Transformer, weights: dict[str, torch.Tensor], their_names: dict[str, str]) -> None:
    expected = model.state_dict()
    for name, tensor in weights.items():
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise CheckpointError(f"{their_names[name]} has shape {tuple(tensor.shape)}, but the checkpoint's other "
                                  f"weights imply {tuple(expected[name].shape)}")
        if not tensor.is_floating_point():
            raise CheckpointError(f"{their_names[name]} holds {tensor.dtype} numbers, not floating point weights")
        if not torch.isfinite(tensor).all():
            raise CheckpointError(f"{their_names[name]} contains NaN or infinite values")


def model_card(shape: Shape, config: TransformerConfig, origin: str, src_vocab: str, tgt_vocab: str | None) -> str:
    vocab = (f"source `{src_vocab}` ({config.source_vocab_size:,} tokens), target `{tgt_vocab}` "
             f"({config.vocab_size:,} tokens)" if tgt_vocab else f"`{src_vocab}`, one for both sides "
             f"({config.vocab_size:,} tokens)")
    placement = "pre-norm (norm_first=True)" if config.norm_first else "post-norm as in the paper"
    norm = ("pre-norm, a final LayerNorm on each stack, LayerNorm (x - mean) / (std + eps) with Bessel-corrected "
            "std" if shape is ANNOTATED else f"{placement}, plus a final LayerNorm on each stack (torch.nn.Transformer "
            "adds them)")
    return f"""# Imported model: {shape.description}

Not trained by this project. It was imported with `transformer-viz import` on
{datetime.now(timezone.utc):%Y-%m-%d} from {origin or 'a checkpoint'}.

- Shape: {shape.description}; {norm}.
- Size: {config.n_encoder_layers} encoder and {config.n_decoder_layers} decoder layers, d_model {config.d_model},
  {config.n_heads} heads, d_ff {config.d_ff}, {config.activation.upper()} in the feed-forward.
- Vocabularies: {vocab}; word-level, unknown words read as `<unk>`.
- The source is read as `<s> words </s>`, as that project trains it.

What changed on import: token ids were renumbered so that padding, start and end are 0, 1, 2 and were renamed
`<pad>`, `<s>`, `</s>`; the embedding and output rows moved with their tokens, so the model computes the
same function (its tests compare logits). Words are split from punctuation by whitespace and punctuation
rules, which approximate the spaCy tokenizers such vocabularies come from; a sentence spaCy splits
differently (e.g. "don't") reads differently here. Training data, scores and curves are not known here.
"""


def import_model(checkpoint: str | Path, out: str | Path, told: Told | int, vocab: str | Path | None = None,
                 src_vocab: str | Path | None = None, tgt_vocab: str | Path | None = None,
                 shape: str | None = None, check: Callable[[Imported], None] | None = None) -> Path:
    """Read, check and write the folder `out` (which must not exist yet, or be empty). `told`: the heads (an int)
    or a Told. `check(imported)` runs last and may refuse (a CheckpointError), e.g. comparing outputs with the
    source model's (model/cli/import_model.py). Nothing is written unless every check passes."""
    told = told if isinstance(told, Told) else Told(told)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CheckpointError(f"{out}: already exists and is not an empty folder; choose a new one")
    if (vocab is not None and (src_vocab or tgt_vocab)) or (vocab is None and (src_vocab is None or tgt_vocab is None)):
        raise CheckpointError("give either one vocabulary for both sides (--vocab) or both --src-vocab and --tgt-vocab")
    state = read_state_dict(checkpoint)
    chosen = SHAPE_OF[shape] if shape else detect_shape(state)
    if chosen.marker not in state:
        raise CheckpointError(f"{checkpoint}: not the {chosen.name} shape (it has no {chosen.marker})")
    source: Vocabulary | None = None                                     # None: one vocabulary for both sides
    if vocab:
        target = read_vocabulary(vocab)
    else:
        assert tgt_vocab is not None and src_vocab is not None           # both given: checked above
        target, source = read_vocabulary(tgt_vocab), read_vocabulary(src_vocab)
    origin = f"`{Path(checkpoint).name}` (sha256 {_sha256(Path(checkpoint))[:16]}…)"
    imported = build(state, told, target, source, shape=chosen, origin=origin)
    if check is not None:
        check(imported)
    _write(imported, out)
    return out


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            digest.update(block)
    return digest.hexdigest()


def _write(imported: Imported, out: Path) -> None:
    """Written into a new folder beside `out`, loaded back as the app would, then renamed into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        staging.chmod(0o755)                          # mkdtemp's 0700 would hide it from an app run as another user
        save_checkpoint(imported.model, imported.tokenizer, staging, source_tokenizer=imported.source_tokenizer)
        (staging / "README.md").write_text(imported.card, encoding="utf-8")
        load_checkpoint(staging, device="cpu")
        if out.exists():
            out.rmdir()                               # empty, checked before
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
