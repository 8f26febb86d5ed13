"""Autoregressive decoding with per-step traces, reduced to what the Decoding page draws.

Each step's Trace holds full [H, t, t] maps, but step t only adds its last row (earlier rows are the
previous steps' rows, unchanged because of the causal mask), so only last rows are kept. Next-token
distributions are kept as their TOP_N most likely tokens plus the chosen token's log-probability and
rank: enough for any top-k bar chart the page offers, and a few KB per step instead of the vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from model.analysis.attention_math import entropy_bits, log_softmax
from model.capture import schema
from model.inference.decode import BEAM_ALPHA, Hypothesis, beam_search, greedy
from model.inference.pipeline import encode_text
from model.io.checkpoint import Bundle

METHODS = ("greedy", "beam")
TOP_N = 50              # candidates kept per step (the page shows at most 20)
CAPTURE = [schema.patterns_glob("decoder"), schema.patterns_glob("cross"), schema.LOGITS]
# A step-through reads at most this many source tokens (each step keeps only the rows the page draws, see
# step_rows; it kept every step's whole trace, which grew with the cube of the length: ~1.8 GB at 128 tokens)
MAX_STEP_TOKENS = 128


@dataclass(frozen=True)
class Decoding:
    method: str
    beam: int
    src_tokens: list[str]          # encoder input labels (ending in </s>)
    out_ids: list[int]             # generated y_1..y_T (ending in </s> unless the length limit hit)
    out_tokens: list[str]
    in_tokens: list[str]           # decoder inputs <s> y_1..y_{T-1}: step t reads in_tokens[:t+1]
    self_rows: list[np.ndarray]    # per step t: [L, H, t+1] last row of masked self-attention
    cross_rows: np.ndarray         # [T, L, H, S] last row of cross-attention at each step
    top_ids: np.ndarray            # [T, N] most likely next tokens at each step, best first
    top_logprobs: np.ndarray       # [T, N]
    chosen_logprob: np.ndarray     # [T] log p(y_t | y_<t, x) of the token actually appended
    chosen_rank: np.ndarray        # [T] its rank among all tokens (1 = most likely)
    entropy: np.ndarray            # [T] bits, of the full next-token distribution
    hypotheses: list[dict]         # beam search: every returned hypothesis, best first
    translation: str

    @property
    def n_steps(self) -> int:
        return len(self.out_ids)


def _last_logits(arrays: dict) -> np.ndarray:
    """Greedy captures logits of the last position only ([V]); step_traces of every position ([t, V])."""
    return np.atleast_2d(arrays[schema.LOGITS])[-1]


def _hypothesis_rows(bundle: Bundle, hyps: list[Hypothesis]) -> list[dict]:
    eos = bundle.config.eos_id
    return [dict(rank=i + 1, output=bundle.tokenizer.decode(h.ids) or "(empty)", tokens=len(h.ids),
                 finished=bool(h.ids and h.ids[-1] == eos), log_prob=h.score,
                 normalized=h.normalized(BEAM_ALPHA)) for i, h in enumerate(hyps)]


def step_rows(trace, n_dec: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the page draws of one decoding step, kept as soon as the step is captured: the newest position's row
    of masked self-attention [L,H,t+1] and of cross-attention [L,H,S], and the next token's log-probabilities [V]."""
    a = trace.arrays
    return (schema.stacked(a, "decoder", layers=range(n_dec))[:, :, -1].copy(),
            schema.stacked(a, "cross", layers=range(n_dec))[:, :, -1].copy(),
            log_softmax(_last_logits(a)))


def run_decoding(bundle: Bundle, text: str, method: str, beam: int, max_tokens: int,
                 no_repeat_ngram: int = 0) -> Decoding:
    """Decode `text` with the real model and keep, for every step, what the page shows. no_repeat_ngram=n > 0:
    the search never repeats an n-gram it holds; each step still shows the model's own probabilities, so a
    blocked token is seen losing its place to the next one."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.config
    src = encode_text(bundle, text, max_tokens)
    keep = partial(step_rows, n_dec=cfg.n_decoder_layers)
    if method == "greedy":
        best, hyps = greedy(model, src.ids, names=CAPTURE, return_traces=True, no_repeat_ngram=no_repeat_ngram,
                            keep_step=keep), []
    else:
        hyps = beam_search(model, src.ids, beam_size=beam, alpha=BEAM_ALPHA, names=CAPTURE, return_traces=True,
                           no_repeat_ngram=no_repeat_ngram, keep_step=keep)
        best = hyps[0]
    self_rows, cross_rows, logprobs = (list(rows) for rows in zip(*best.step_traces))
    lp = np.stack(logprobs)                                                   # [T, V]
    order = np.argsort(-lp, axis=1, kind="stable")[:, :TOP_N]                 # [T, N]
    chosen = np.asarray(best.ids)
    chosen_lp = lp[np.arange(len(chosen)), chosen]                            # [T]
    return Decoding(
        method=method, beam=beam if method == "beam" else 1,
        src_tokens=bundle.encoder_tokenizer.token_strings(src.ids),
        out_ids=list(best.ids), out_tokens=tok.token_strings(best.ids),
        in_tokens=tok.token_strings([cfg.bos_id] + list(best.ids[:-1])),
        self_rows=self_rows, cross_rows=np.stack(cross_rows),
        top_ids=order, top_logprobs=np.take_along_axis(lp, order, axis=1).astype(np.float32),
        chosen_logprob=chosen_lp.astype(np.float32),
        chosen_rank=(lp > chosen_lp[:, None]).sum(1) + 1,
        entropy=entropy_bits(np.exp(lp)).astype(np.float32),
        hypotheses=_hypothesis_rows(bundle, hyps),
        translation=tok.decode(best.ids),
    )


def top_k_view(top_ids, top_logprobs, k: int, chosen_id: int, chosen_logprob: float,
               chosen_rank: int) -> tuple[list[int], np.ndarray, list[int], int]:
    """The k most likely tokens of one step, plus the chosen one when it ranks lower (beam search can
    pick a token that is not the step's favourite). Returns (ids, probabilities, ranks, chosen index)."""
    ids, lps = list(np.asarray(top_ids).tolist()), np.asarray(top_logprobs, dtype=float)
    if lps.ndim != 1:
        raise ValueError(f"top_logprobs must be 1-D, got shape {lps.shape}")
    if len(ids) != len(lps):
        raise ValueError(f"{len(ids)} token ids but {len(lps)} log-probabilities")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if np.any(np.diff(lps) > 1e-6):
        raise ValueError("candidates must be sorted from most to least likely")
    k = min(k, len(ids))
    out_ids, out_lp, ranks = ids[:k], list(lps[:k]), list(range(1, k + 1))
    if chosen_id in out_ids:
        chosen = out_ids.index(chosen_id)
    else:
        out_ids.append(int(chosen_id))
        out_lp.append(float(chosen_logprob))
        ranks.append(int(chosen_rank))
        chosen = len(out_ids) - 1
    return out_ids, np.exp(np.asarray(out_lp)), ranks, chosen


def token_logprobs(logits, ids) -> np.ndarray:
    """log p(ids[t]) under row t of logits [T, V] (log-softmax per row)."""
    logits = np.asarray(logits, dtype=np.float64)
    ids = np.asarray(ids, dtype=int)
    if logits.ndim != 2:
        raise ValueError(f"logits must be [position, vocabulary], got shape {logits.shape}")
    if ids.shape != (logits.shape[0],):
        raise ValueError(f"{ids.size} token ids for {logits.shape[0]} positions")
    if ids.size and (ids.min() < 0 or ids.max() >= logits.shape[1]):
        raise ValueError("token id outside the vocabulary")
    return log_softmax(logits)[np.arange(len(ids)), ids]
