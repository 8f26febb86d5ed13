"""Text in, translation and Trace out: what the app and the command-line tools call."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from model.checkpoint import Bundle
from model.decode import beam_search, default_max_len, greedy
from model.trace import Trace, active_trace, capture

DEFAULT_MAX_TOKENS = 128
HARD_MAX_TOKENS = 512


@dataclass
class Encoded:
    ids: list[int]            # ends in </s>
    n_total: int              # tokens before any cut
    truncated: bool


def encode_text(bundle: Bundle, text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> Encoded:
    """Tokenize; cut to max_tokens (and the model's max_len) keeping the final </s>."""
    if not text or not text.strip():
        raise ValueError("the sentence is empty")
    limit = max(2, min(max_tokens, HARD_MAX_TOKENS, bundle.config.max_len))
    ids = bundle.tokenizer.encode(text.strip())
    if len(ids) <= limit:
        return Encoded(ids, len(ids), False)
    return Encoded(ids[: limit - 1] + [bundle.config.eos_id], len(ids), True)


def generate(bundle: Bundle, src_ids: list[int], beam: int = 1, max_len: int | None = None) -> list[int]:
    """Output ids (ending in </s> unless max_len came first). Greedy requests of concurrent sessions
    are decoded in shared batches (model/batching.py), except under an active trace: an ablation's
    edits must change this sentence alone."""
    if beam > 1:
        return beam_search(bundle.model, src_ids, beam_size=beam, max_len=max_len)[0].ids
    if active_trace() is not None:
        return greedy(bundle.model, src_ids, max_len).ids
    return bundle.batcher.greedy(src_ids, max_len or default_max_len(bundle.model, len(src_ids)))


def translate(bundle: Bundle, text: str, beam: int = 1, max_tokens: int = DEFAULT_MAX_TOKENS) -> str:
    src = encode_text(bundle, text, max_tokens)
    return bundle.tokenizer.decode(generate(bundle, src.ids, beam))


@torch.no_grad()
def trace_sentence(bundle: Bundle, text: str, target: str | None = None, names=None, beam: int = 1,
                   max_tokens: int = DEFAULT_MAX_TOKENS) -> Trace:
    """One teacher-forced pass over `target`, or over the model's own output when there is none.

    Rows of decoder maps are decoder inputs (<s> y_1 .. y_{n-1}); the token predicted at row t is
    y_t (meta["tgt_out_tokens"]). The translation is always generated and kept in meta.
    """
    tok, model = bundle.tokenizer, bundle.model
    src = encode_text(bundle, text, max_tokens)
    generated = generate(bundle, src.ids, beam)
    forced = bool(target and target.strip())
    y = encode_text(bundle, target, max_tokens).ids if forced else generated
    src_t = torch.tensor([src.ids], device=model.device)
    tgt_in = torch.tensor([[bundle.config.bos_id] + y[:-1]], device=model.device)
    with capture(names) as trace:
        logits = model(src_t, tgt_in)                                         # [1,T,V]
    logprobs = logits.log_softmax(-1)[0, torch.arange(len(y)), torch.tensor(y)]
    trace.meta.update(
        model_id=bundle.model_id,
        config=bundle.config.to_dict(),
        src_text=text.strip(),
        src_ids=src.ids,
        src_tokens=tok.token_strings(src.ids),
        src_truncated=src.truncated,
        src_n_tokens=src.n_total,
        teacher_forced=forced,
        tgt_text=target.strip() if forced else tok.decode(y),
        tgt_ids=y,
        tgt_in_tokens=tok.token_strings([bundle.config.bos_id] + y[:-1]),
        tgt_out_tokens=tok.token_strings(y),
        tgt_logprob=float(logprobs.sum()),
        translation=tok.decode(generated),
        beam=beam,
    )
    return trace
