"""Text in, translation and Trace out: what the app and the command-line tools call.

An Engine is a loaded checkpoint (a Bundle) plus a GreedyBatcher, so that greedy requests from
concurrent sessions share decoding batches. Every function here takes a Bundle; given an Engine,
greedy decoding goes through its batcher.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from model.errors import InputError
from model.inference.shared_greedy import GreedyBatcher
from model.io.checkpoint import Bundle, load_checkpoint
from model.inference.decode import beam_search, default_max_len, greedy
from model.capture.hooks import active_trace, capture
from model.capture.trace import Trace

DEFAULT_MAX_TOKENS = 128
HARD_MAX_TOKENS = 512


@dataclass
class Engine(Bundle):
    """A Bundle whose greedy decoding is shared by concurrent sessions (model/inference/shared_greedy.py)."""
    batcher: GreedyBatcher = field(init=False, repr=False)

    def __post_init__(self):
        super().__post_init__()
        self.batcher = GreedyBatcher(self.model)

    @classmethod
    def of(cls, bundle: Bundle) -> "Engine":
        return cls(bundle.model, bundle.tokenizer, bundle.config, bundle.path, bundle.extra, bundle.source_tokenizer)


def load_engine(folder, device: str | None = None) -> Engine:
    return Engine.of(load_checkpoint(folder, device))


@dataclass
class Encoded:
    ids: list[int]            # ends in </s>
    n_total: int              # tokens before any cut
    truncated: bool


def source_ids(bundle: Bundle, text: str) -> list[int]:
    """The encoder's input, uncut: the source vocabulary's ids, ending in </s> (and led by <s> where the
    model was trained so, config.src_bos)."""
    ids = bundle.encoder_tokenizer.encode(text.strip())
    return [bundle.config.bos_id] + ids if bundle.config.src_bos else ids


def encode_text(bundle: Bundle, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, target: bool = False) -> Encoded:
    """Tokenize a source sentence (or, target=True, a target one, as the decoder predicts it); cut to
    max_tokens (and the model's max_len) keeping the final </s>."""
    if not text or not text.strip():
        raise InputError("empty", "the sentence is empty")
    limit = max(2, min(max_tokens, HARD_MAX_TOKENS, bundle.config.max_len))
    ids = bundle.tokenizer.encode(text.strip()) if target else source_ids(bundle, text)
    if len(ids) <= limit:
        return Encoded(ids, len(ids), False)
    return Encoded(ids[: limit - 1] + [bundle.config.eos_id], len(ids), True)


def generate(bundle: Bundle, src_ids: list[int], beam: int = 1, max_len: int | None = None,
             no_repeat_ngram: int = 0) -> list[int]:
    """Output ids (ending in </s> unless max_len came first). An Engine's greedy requests are decoded
    in shared batches, except under an active trace: an ablation's edits must change this sentence alone.
    no_repeat_ngram=n > 0 blocks repeated n-grams (decode.block_repeats)."""
    if beam > 1:
        return beam_search(bundle.model, src_ids, beam_size=beam, max_len=max_len, no_repeat_ngram=no_repeat_ngram)[0].ids
    if active_trace() is not None or not isinstance(bundle, Engine) or no_repeat_ngram:
        return greedy(bundle.model, src_ids, max_len, no_repeat_ngram=no_repeat_ngram).ids
    return bundle.batcher.greedy(src_ids, max_len or default_max_len(bundle.model, len(src_ids)))


def source_text(bundle: Bundle, text: str, style: str | None = None) -> str:
    """The source as the model reads it: a two-style model's text led by `style`'s token (None: the model's
    default, modern, as the app and the command line write), unless it already starts with one."""
    return bundle.tokenizer.styled(text, style or bundle.tokenizer.default_style)


def translate(bundle: Bundle, text: str, beam: int = 1, max_tokens: int = DEFAULT_MAX_TOKENS,
              style: str | None = None, no_repeat_ngram: int = 0) -> str:
    """The translation of `text`, in `style` (modern or bible) for a two-style model: see source_text.
    no_repeat_ngram: decoding never repeats an n-gram of that many tokens (0: off)."""
    src = encode_text(bundle, source_text(bundle, text, style), max_tokens)
    return bundle.tokenizer.decode(generate(bundle, src.ids, beam, no_repeat_ngram=no_repeat_ngram))


@torch.no_grad()
def forced_pass(bundle: Bundle, src_ids: list[int], y: list[int], names=None) -> tuple[Trace, torch.Tensor]:
    """One teacher-forced forward pass: the decoder reads <s> y_1 .. y_{n-1} and predicts y; the hooks in
    `names` (None: all) captured. Returns (trace, logits [1,T,V])."""
    model = bundle.model
    src_t = torch.tensor([src_ids], device=model.device)
    tgt_in = torch.tensor([[bundle.config.bos_id] + y[:-1]], device=model.device)
    with capture(names) as trace:
        logits = model(src_t, tgt_in)                                         # [1,T,V]
    return trace, logits


def trace_sentence(bundle: Bundle, text: str, target: str | None = None, names=None, beam: int = 1,
                   max_tokens: int = DEFAULT_MAX_TOKENS, style: str | None = None) -> Trace:
    """One teacher-forced pass over `target`, or over the model's own output when there is none; the source
    in `style` (see source_text: modern unless asked, or unless `text` starts with a style token).

    Rows of decoder maps are decoder inputs (<s> y_1 .. y_{n-1}); the token predicted at row t is
    y_t (meta["tgt_out_tokens"]). The translation is always generated and kept in meta.
    """
    tok = bundle.tokenizer
    text = source_text(bundle, text, style)
    src = encode_text(bundle, text, max_tokens)
    generated = generate(bundle, src.ids, beam)
    target = target if target and target.strip() else None                   # blank: the model's own output
    forced = target is not None
    y = encode_text(bundle, target, max_tokens, target=True).ids if target is not None else generated
    trace, logits = forced_pass(bundle, src.ids, y, names)
    logprobs = logits.log_softmax(-1)[0, torch.arange(len(y)), torch.tensor(y)]
    trace.meta.update(
        model_id=bundle.model_id,
        config=bundle.config.to_dict(),
        src_text=text.strip(),
        src_ids=src.ids,
        src_tokens=bundle.encoder_tokenizer.token_strings(src.ids),
        src_truncated=src.truncated,
        src_n_tokens=src.n_total,
        teacher_forced=forced,
        tgt_text=target.strip() if target is not None else tok.decode(y),
        tgt_ids=y,
        tgt_in_tokens=tok.token_strings([bundle.config.bos_id] + y[:-1]),
        tgt_out_tokens=tok.token_strings(y),
        tgt_logprob=float(logprobs.sum()),
        translation=tok.decode(generated),
        beam=beam,
    )
    return trace
