"""Autoregressive decoding: greedy and beam search, optionally with one Trace per step.

Fast path (no trace active): a key/value cache (model.transformer.DecoderCache). Each step feeds only
the newest token; every decoder layer appends its self-attention keys and values to the cache and
reuses the cross-attention keys and values of the memory, computed once. Step t then costs O(t), not a
decoder pass over t tokens. Beam search reorders the cache by parent beam after every step.

With a trace active (return_traces, step_traces, an ablation's edits) or use_cache=False, each step
re-runs the decoder over the whole prefix, as an ordinary forward pass whose every value can be
captured (and edited); the cache would show only the newest query row. Both paths give the same ids.
Because of the causal mask, row t of a teacher-forced pass over the final output equals what step t
computed; `step_traces` gives the per-step view explicitly.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from model.capture.hooks import active_trace, capture
from model.capture.trace import Trace
from model.io.tokenizer import PAD_ID
from model.nn.transformer import DecoderCache, StaticDecoderCache, Transformer


def pad_batch(seqs: list[list[int]], pad: int = PAD_ID) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [pad] * (width - len(s)) for s in seqs], dtype=torch.long)


KeepStep = Callable[[Trace], Any]     # what a traced decoding keeps of each step's Trace


@dataclass
class Hypothesis:
    ids: list[int]                 # generated ids, without <s>, ending in </s> if it was produced
    score: float                   # sum of log-probabilities
    step_logprobs: list[float] = field(default_factory=list)
    encoder_trace: Trace | None = None                        # with return_traces
    step_traces: list[Any] = field(default_factory=list)      # step t saw <s> y_1 .. y_{t-1}: its Trace, or
                                                              # what keep_step kept of it

    def normalized(self, alpha: float) -> float:
        """GNMT length penalty: longer outputs are not punished just for having more terms."""
        return self.score / (((5 + len(self.ids)) / 6) ** alpha)


def repeated_ngram_ends(ids: list[int], n: int) -> list[int]:
    """Tokens that would complete an n-gram `ids` already holds (fairseq's no_repeat_ngram_size): the
    tokens that followed each earlier occurrence of the last n-1 ids. None when n < 1."""
    if n < 1 or len(ids) < n - 1:
        return []
    if n == 1:
        return list(set(ids))
    tail = ids[len(ids) - n + 1:]
    return [ids[i + n - 1] for i in range(len(ids) - n + 1) if ids[i:i + n - 1] == tail]


def block_repeats(logits: torch.Tensor, prefixes: list[list[int]], n: int) -> torch.Tensor:
    """Scores [R,V] with -inf at every token that would repeat an n-gram of its row's prefix (n=0: as is)."""
    if n < 1:
        return logits
    rows = [(r, t) for r, ids in enumerate(prefixes) for t in repeated_ngram_ends(ids, n)]
    if rows:
        logits = logits.clone()
        index = torch.tensor(rows, device=logits.device)
        logits[index[:, 0], index[:, 1]] = float("-inf")
    return logits


def default_max_len(model: Transformer, src_len: int) -> int:
    return min(model.cfg.max_len - 1, int(src_len * 1.5) + 10)


def _src_tensor(model: Transformer, src_ids) -> torch.Tensor:
    src = torch.as_tensor(src_ids, dtype=torch.long, device=model.device)
    return src[None] if src.dim() == 1 else src


def _new_cache(model: Transformer, enabled: bool) -> DecoderCache | None:
    """A cache only when nothing is being captured or edited: traces need full forward passes."""
    return model.new_cache() if enabled and active_trace() is None else None


def _decode_last(model: Transformer, memory, src_mask, ys, cache: DecoderCache | None):
    """Decoder output at the last position of the prefix ys [B,t] -> [B,D]. With a cache only the
    tokens it has not seen are fed (one per step); without, the whole prefix."""
    tgt = ys if cache is None else ys[:, cache.length:]
    return model.decode(memory, src_mask, tgt, cache)[:, -1]


@torch.inference_mode()   # no autograd bookkeeping at all (ids out, nothing kept): ~5% a step on the CPU
def greedy_rows(model: Transformer, src: torch.Tensor, max_lens: list[int],
                use_cache: bool = True, no_repeat_ngram: int = 0) -> Iterator[tuple[int, list[int]]]:
    """Greedy decoding of a padded batch [B,S], row b for at most max_lens[b] tokens. Yields (b, ids)
    as each row finishes (ids end in </s> unless the limit came first) and drops that row from the
    batch, so a long row does not keep short ones waiting or computing. no_repeat_ngram=n > 0 never
    picks a token that would repeat an n-gram already written."""
    cfg = model.cfg
    src_mask = model.src_mask(src)                                        # [B,1,1,S]
    memory = model.encode(src, src_mask)                                  # [B,S,D]
    cache = _new_cache(model, use_cache)
    rows = torch.arange(src.size(0), device=src.device)                   # input row of each batch row
    limits = torch.as_tensor(max_lens, device=src.device)
    ys = torch.full((src.size(0), 1), cfg.bos_id, dtype=torch.long, device=src.device)   # [B,1+t]
    for step in range(1, int(limits.max()) + 1):
        logits = model.generator(_decode_last(model, memory, src_mask, ys, cache))          # [B,V]
        if no_repeat_ngram:
            logits = block_repeats(logits, ys[:, 1:].tolist(), no_repeat_ngram)
        nxt = logits.argmax(-1)                                                              # [B]
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done = (nxt == cfg.eos_id) | (limits <= step)
        if not done.any():
            continue
        for b in done.nonzero().flatten().tolist():
            yield int(rows[b]), ys[b, 1:].tolist()
        keep = (~done).nonzero().flatten()
        if keep.numel() == 0:
            return
        rows, limits, ys, memory, src_mask = rows[keep], limits[keep], ys[keep], memory[keep], src_mask[keep]
        if cache is not None:
            cache.reorder(keep)


def greedy_batch(model: Transformer, src: torch.Tensor, max_len: int, use_cache: bool = True,
                 no_repeat_ngram: int = 0) -> torch.Tensor:
    """Greedy decoding of a padded batch [B,S]; returns [B,<=max_len] ids (pad after </s>)."""
    out = dict(greedy_rows(model, src, [max_len] * src.size(0), use_cache, no_repeat_ngram))
    return pad_batch([out[b] for b in range(src.size(0))], model.cfg.pad_id).to(src.device)


@torch.no_grad()
def greedy(model: Transformer, src_ids, max_len: int | None = None, names=None,
           return_traces: bool = False, use_cache: bool = True, no_repeat_ngram: int = 0,
           keep_step: KeepStep | None = None) -> Hypothesis:
    """Greedy decoding of one sentence; with return_traces, the encoder's Trace and one per step (keep_step:
    what to keep of each step's Trace as soon as it is captured; a step's whole Trace holds every row of the
    prefix, so keeping them all grows with the cube of the length).
    Untraced and cached, it runs on a static cache (greedy_static): on CUDA as a replayed graph.
    no_repeat_ngram=n > 0 blocks repeated n-grams (on the full-prefix path: it looks at every step)."""
    src = _src_tensor(model, src_ids)
    max_len = max_len or default_max_len(model, src.size(1))
    if use_cache and not return_traces and active_trace() is None and not no_repeat_ngram:
        return greedy_static(model, src, max_len)
    src_mask = model.src_mask(src)
    hyp = Hypothesis([], 0.0)
    with _maybe_capture(return_traces, names) as trace:
        memory = model.encode(src, src_mask)
    hyp.encoder_trace = trace
    for _ in range(max_len):
        tgt = torch.tensor([[model.cfg.bos_id] + hyp.ids], device=src.device)
        with _maybe_capture(return_traces, names) as trace:
            logits = model.generator(model.decode(memory, src_mask, tgt)[:, -1])
        logprobs = block_repeats(logits.log_softmax(-1), [hyp.ids], no_repeat_ngram)[0]
        if trace is not None:
            hyp.step_traces.append(keep_step(trace) if keep_step else trace)
        nxt = int(logprobs.argmax())
        hyp.ids.append(nxt)
        hyp.step_logprobs.append(float(logprobs[nxt]))
        hyp.score += float(logprobs[nxt])
        if nxt == model.cfg.eos_id:
            break
    return hyp


class StaticGreedySteps:
    """Greedy decoding of a batch as fixed-shape steps on a StaticDecoderCache: step() reads the fed
    token and the position from device buffers and writes back the chosen token, its log-probability
    and the next position. Nothing in a step waits for the host, so on CUDA it can be recorded once
    as a graph and replayed (graphed): a step's ~80 kernel launches and its Python become one launch."""

    @torch.no_grad()
    def __init__(self, model: Transformer, src: torch.Tensor, max_len: int):
        if max_len > model.cfg.max_len:                 # the positional table's rows (as an int start checks)
            raise ValueError(f"sequence of {max_len} tokens exceeds max_len={model.cfg.max_len}")
        self.model, B = model, src.size(0)
        self.src_mask = model.src_mask(src)                                       # [B,1,1,S]
        self.memory = model.encode(src, self.src_mask)                            # [B,S,D]
        self.cache = StaticDecoderCache(model, B, max_len)
        self.token = torch.full((B, 1), model.cfg.bos_id, dtype=torch.long, device=src.device)   # fed next
        self.ids = torch.full((B, max_len), model.cfg.pad_id, dtype=torch.long, device=src.device)
        self.logprobs = torch.zeros(B, max_len, device=src.device)

    @torch.no_grad()
    def step(self) -> None:
        pos = self.cache.pos
        out = self.model.decode(self.memory, self.src_mask, self.token, self.cache)[:, -1]   # [B,D]
        logprobs = self.model.generator(out).float().log_softmax(-1)                        # [B,V]
        best, nxt = logprobs.max(-1)                                                         # [B], [B]
        self.ids.index_copy_(1, pos, nxt[:, None])
        self.logprobs.index_copy_(1, pos, best[:, None])
        self.token.copy_(nxt[:, None])
        pos += 1

    def graphed(self, warmup: int):
        """Run `warmup` steps eagerly on a side stream (the first also caches cross-attention's keys
        and values; allocator and kernels settle), then record one step as a CUDA graph; returns its replay."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                self.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.step()
        self._graph = graph                             # keeps its memory pool alive with the replays
        return graph.replay


BEAM_ALPHA = 0.6        # GNMT length penalty ((5 + |y|) / 6) ** alpha: beam search's default
GRAPH_CHECK_EVERY = 8   # CUDA: graph replays between looks for </s> (a look waits for the GPU)


@torch.no_grad()
def greedy_static(model: Transformer, src: torch.Tensor, max_len: int) -> Hypothesis:
    """Greedy decoding of one sentence [1,S] on a static cache: the ids the cached and full-prefix
    paths give. On CUDA the steps after the first two are replays of one CUDA graph, and the host
    looks for </s> every GRAPH_CHECK_EVERY steps (the few extra steps are cut off); on the CPU,
    every step."""
    steps = StaticGreedySteps(model, src, max_len)
    eos, done = model.cfg.eos_id, 0
    run, check_every = steps.step, 1
    if src.is_cuda and max_len > 2:
        run, check_every, done = steps.graphed(warmup=2), GRAPH_CHECK_EVERY, 2
    while done < max_len and not (steps.ids[0, :done] == eos).any():
        for _ in range(min(check_every, max_len - done)):
            run()
            done += 1
    ids, logprobs = steps.ids[0, :done].tolist(), steps.logprobs[0, :done].tolist()
    n = ids.index(eos) + 1 if eos in ids else len(ids)
    return Hypothesis(ids[:n], sum(logprobs[:n]), logprobs[:n])


def _maybe_capture(enabled: bool, names):
    return capture(names) if enabled else nullcontext()


@torch.no_grad()
def beam_search(model: Transformer, src_ids, beam_size: int = 4, max_len: int | None = None,
                alpha: float = BEAM_ALPHA, names=None, return_traces: bool = False,
                use_cache: bool = True, no_repeat_ngram: int = 0, keep_step: KeepStep | None = None) -> list[Hypothesis]:
    """Beam search of one sentence (beam_search_batch with one row); returns hypotheses, best first (by
    length-normalised score). With return_traces the best one carries its encoder Trace and one Trace per
    step, or what keep_step keeps of it (the search itself is never traced; step_traces reruns the best output)."""
    src = _src_tensor(model, src_ids)
    max_len = max_len or default_max_len(model, src.size(1))
    ranked = beam_search_batch(model, src, [max_len], beam_size, alpha, use_cache, no_repeat_ngram)[0]
    if return_traces:
        ranked[0].encoder_trace, ranked[0].step_traces = step_traces(model, src, ranked[0].ids, names, keep_step)
    return ranked


@torch.no_grad()
def beam_search_batch(model: Transformer, src: torch.Tensor, max_lens: list[int], beam_size: int = 4,
                      alpha: float = BEAM_ALPHA, use_cache: bool = True,
                      no_repeat_ngram: int = 0) -> list[list[Hypothesis]]:
    """Beam search over a padded batch [B,S] at once; row b gets what beam_search gives it alone
    (searching at most max_lens[b] steps), hypotheses best first.

    Each sentence owns K = beam_size decoder rows; a row whose beam does not exist (yet) copies a live
    one and scores -inf, so it never wins. The top 2K candidates of every sentence come from one topk
    and one transfer per step. A sentence's search ends when nothing is open, or when K hypotheses have
    finished and the best of them beats every open one; it then leaves the batch, so a long one does not
    keep finished ones computing. no_repeat_ngram=n > 0: no hypothesis repeats an n-gram it holds.
    """
    cfg, K, B = model.cfg, beam_size, src.size(0)
    src_mask = model.src_mask(src)                                        # [B,1,1,S]
    memory = model.encode(src, src_mask)                                  # [B,S,D]
    memory, src_mask = memory.repeat_interleave(K, 0), src_mask.repeat_interleave(K, 0)   # [B*K,S,D] [B*K,1,1,S]
    cache = _new_cache(model, use_cache)
    active = list(range(B))                                               # input row of each sentence in the batch
    beams = [[Hypothesis([], 0.0)] for _ in range(B)]                     # live hypotheses of each active sentence
    finished: list[list[Hypothesis]] = [[] for _ in range(B)]             # by input row
    results: list[list[Hypothesis]] = [[] for _ in range(B)]
    for step in range(1, max(max_lens) + 1):
        slots = [(h, k < len(live)) for live in beams for k, h in enumerate(_slots(live, K))]
        fed = [[cfg.bos_id] + h.ids for h, _ in slots]                   # with a cache, only the newest token
        tgt = torch.tensor([f[-1:] for f in fed] if cache is not None else fed, device=src.device)  # [R,1|t]
        scores = torch.tensor([h.score if real else float("-inf") for h, real in slots], device=src.device)  # [R]
        out = model.decode(memory, src_mask, tgt, cache)[:, -1]           # [R,D], R = len(active) * K
        logprobs = block_repeats(model.generator(out).log_softmax(-1), [h.ids for h, _ in slots],
                                 no_repeat_ngram)                         # [R,V]
        V = logprobs.size(1)
        total = (logprobs + scores[:, None]).view(len(active), K * V)     # [n,K*V]
        top = total.topk(min(2 * K, K * V), dim=1)                        # [n,2K]
        chosen = logprobs.view(len(active), K * V).gather(1, top.indices)  # [n,2K] each candidate's own step
        rows: list[int] = []                                              # next rows (by current row)
        still: list[int] = []                                             # sentences left
        for i, candidates in enumerate(zip(top.values.tolist(), top.indices.tolist(), chosen.tolist())):
            b = active[i]
            live, parents = _expand(beams[i], *candidates, V, K, cfg.eos_id, finished[b])
            if _search_done(live, finished[b], K, alpha) or step >= max_lens[b]:
                results[b] = sorted(finished[b] or live, key=lambda h: h.normalized(alpha), reverse=True)
                continue
            beams[i] = live
            still.append(i)
            rows.extend(i * K + p for p in parents + [parents[0]] * (K - len(parents)))
        if not still:
            break
        index = torch.tensor(rows, device=src.device)                     # [R'] row r continues row index[r]
        if cache is not None:
            cache.reorder(index)
        if len(still) < len(active):
            memory, src_mask = memory[index], src_mask[index]
        active, beams = [active[i] for i in still], [beams[i] for i in still]
    return results


def _expand(live: list[Hypothesis], values: list[float], flats: list[int], logprobs: list[float], vocab: int,
            k: int, eos: int, finished: list[Hypothesis]) -> tuple[list[Hypothesis], list[int]]:
    """One sentence's step of the search: its top candidates (flat index parent * vocab + token, best
    first) end in </s> and join `finished`, or stay open; returns the best k open ones and their parents."""
    open_, parents = [], []
    for score, flat, lp in zip(values, flats, logprobs):
        if score == float("-inf"):                                        # a padding slot's: none left
            break
        parent, tok = divmod(flat, vocab)
        h = live[parent]
        child = Hypothesis(h.ids + [tok], score, h.step_logprobs + [lp])
        if tok == eos:
            finished.append(child)
        else:
            open_.append(child)
            parents.append(parent)
    return open_[:k], parents[:k]


def _search_done(live: list[Hypothesis], finished: list[Hypothesis], k: int, alpha: float) -> bool:
    """The search's stop: nothing open, or k finished and the best of them beats every open one."""
    best_open = max((h.normalized(alpha) for h in live), default=float("-inf"))
    return not live or (len(finished) >= k and max(h.normalized(alpha) for h in finished) >= best_open)


def _slots(live: list[Hypothesis], k: int) -> list[Hypothesis]:
    """k hypotheses for a sentence's k decoder rows: the live ones, then copies of the first."""
    return live + [live[0]] * (k - len(live))


@torch.no_grad()
def step_traces(model: Transformer, src_ids, out_ids: list[int], names=None,
                keep_step: KeepStep | None = None) -> tuple[Trace, list[Any]]:
    """The encoder's Trace and one Trace per decoding step of a given output (or what keep_step keeps of it)."""
    src = _src_tensor(model, src_ids)
    src_mask = model.src_mask(src)
    with capture(names) as encoder_trace:
        memory = model.encode(src, src_mask)
    steps = []
    for t in range(len(out_ids)):
        tgt = torch.tensor([[model.cfg.bos_id] + list(out_ids[:t])], device=src.device)
        with capture(names) as trace:
            model.generator(model.decode(memory, src_mask, tgt))
        steps.append(keep_step(trace) if keep_step else trace)
    return encoder_trace, steps
