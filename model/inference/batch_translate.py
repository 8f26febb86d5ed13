"""Many sentences at once (evaluation, a file of lines): sources sorted by length and decoded in
batches, greedy (decode.greedy_rows) or beam search (decode.beam_search_batch). Same outputs as
translating them one by one (pipeline.translate), much faster: a decoding step reads the weights once
per batch instead of once per sentence, and sorting keeps padding small.
"""
from __future__ import annotations

from typing import Callable

import torch

from model.inference.decode import beam_search_batch, default_max_len, greedy_rows, pad_batch
from model.inference.pipeline import DEFAULT_MAX_TOKENS, encode_text, source_text
from model.io.checkpoint import Bundle
from model.nn.transformer import Transformer

DEFAULT_BATCH_TOKENS = 2048        # on the CPU; a GPU takes 16 times more per batch (default_batch_tokens)


def length_batches(lengths: dict[int, int], batch_tokens: int) -> list[list[int]]:
    """Keys sorted by length, cut into batches of at most batch_tokens padded tokens (at least one each)."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(lengths, key=lambda i: (lengths[i], i)):
        if batch and lengths[i] * (len(batch) + 1) > batch_tokens:    # sorted: the newest is the widest
            batches.append(batch)
            batch = []
        batch.append(i)
    return batches + [batch] if batch else batches


def decode_batch(model: Transformer, src_ids: list[list[int]], beam: int = 1,
                 no_repeat_ngram: int = 0) -> list[list[int]]:
    """Output ids of each source (ending in </s> unless the length limit came first), in order;
    no_repeat_ngram=n > 0 blocks repeated n-grams (decode.block_repeats)."""
    src = pad_batch(src_ids, model.cfg.pad_id).to(model.device)          # [B,S]
    max_lens = [default_max_len(model, len(s)) for s in src_ids]
    if beam > 1:
        return [hyps[0].ids for hyps in beam_search_batch(model, src, max_lens, beam,
                                                          no_repeat_ngram=no_repeat_ngram)]
    out = dict(greedy_rows(model, src, max_lens, no_repeat_ngram=no_repeat_ngram))
    return [out[b] for b in range(len(src_ids))]


def default_batch_tokens(device: torch.device) -> int:
    """Padded tokens a batch: 2048 on the CPU, where a larger batch is no faster; 32768 on a GPU, where a beam
    step costs about the same for 20 sentences as for 300 (an H200 took 12.3 s for the 1,000 test pairs at
    beam 4 in batches of 2048)."""
    return DEFAULT_BATCH_TOKENS * (16 if device.type == "cuda" else 1)


def translate_many(bundle: Bundle, texts: list[str], beam: int = 1, batch_tokens: int | None = None,
                   max_tokens: int = DEFAULT_MAX_TOKENS,
                   on_batch: Callable[[int], object] | None = None, style: str | None = None,
                   no_repeat_ngram: int = 0) -> list[str]:
    """Translations in the order of texts ("" for a blank one), in `style` (pipeline.source_text). batch_tokens
    bounds padded source tokens per batch, counting each of a beam's decoder rows (default: the device's); on_batch(n) reports n done;
    no_repeat_ngram: decoding never repeats an n-gram of that many tokens (0: off)."""
    sources = {i: encode_text(bundle, source_text(bundle, t, style), max_tokens).ids
               for i, t in enumerate(texts) if t and t.strip()}
    out = [""] * len(texts)
    batch_tokens = batch_tokens or default_batch_tokens(bundle.model.device)
    for batch in length_batches({i: len(s) for i, s in sources.items()}, max(1, batch_tokens // beam)):
        for i, ids in zip(batch, decode_batch(bundle.model, [sources[i] for i in batch], beam, no_repeat_ngram)):
            out[i] = bundle.tokenizer.decode(ids)
        if on_batch:
            on_batch(len(batch))
    return out
