"""Greedy decoding shared by concurrent callers: whoever arrives while the model is busy is decoded
together with the others in one padded batch.

Why: one cached decoding step is bound by reading the weights (~18 MB for en-es: the 8000-word output
layer alone is 8 MB), not by arithmetic. Twenty sessions decoding one by one read them twenty times per
step; in one batch, once. On 2 cores, 20 sixteen-token sentences took 1.50 s one by one and 0.25 s as a
batch, with the same ids (bench/load_server.py measures what this does to a classroom's latency).

No thread of its own: the first caller that finds the model idle decodes the batch waiting at that
moment, everyone else waits; when a batch ends, a caller still waiting takes the next one. A row
returns as soon as it has finished (model.decode.greedy_rows), not when the whole batch has.
"""
from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass, field

import torch

from model.decode import greedy_rows
from model.transformer import Transformer


@dataclass
class _Request:
    src_ids: list[int]
    max_len: int
    ids: list[int] | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class GreedyBatcher:
    def __init__(self, model: Transformer, max_batch: int = 32):
        self.model, self.max_batch = model, max_batch
        self._cond = threading.Condition()
        self._pending: list[_Request] = []
        self._busy = False
        self.batch_sizes: list[int] = []          # one entry per batch decoded, for tests and benchmarks

    def greedy(self, src_ids: list[int], max_len: int) -> list[int]:
        """The greedy output ids of one source sentence (ending in </s> unless max_len came first)."""
        if max_len < 1 or not src_ids:
            raise ValueError(f"nothing to decode: {len(src_ids)} source tokens, at most {max_len} output tokens")
        request = _Request(list(src_ids), max_len)
        with self._cond:
            self._pending.append(request)
            while not request.done.is_set():
                if self._busy:
                    self._cond.wait()
                    continue
                self._busy = True
                batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
                self._cond.release()
                try:
                    # A fresh context: a trace active in this caller's thread must not see others' rows.
                    contextvars.Context().run(self._decode, batch)
                finally:
                    self._cond.acquire()
                    self._busy = False
                    self._cond.notify_all()
        if request.error is not None:
            raise request.error
        return request.ids

    def _decode(self, batch: list[_Request]) -> None:
        """Decode the batch, releasing each request as its row finishes. After an error the unfinished
        requests are retried one by one, so one bad sentence fails only its own caller, who raises the
        error in their own thread (greedy)."""
        self.batch_sizes.append(len(batch))
        try:
            width = max(len(r.src_ids) for r in batch)
            pad = self.model.cfg.pad_id
            src = torch.tensor([r.src_ids + [pad] * (width - len(r.src_ids)) for r in batch],
                               device=self.model.device)                                    # [B,S]
            for row, ids in greedy_rows(self.model, src, [r.max_len for r in batch]):
                batch[row].ids = ids
                self._finish(batch[row])
        except BaseException as e:  # noqa: BLE001  no waiting caller may be left without an answer
            unfinished = [r for r in batch if not r.done.is_set()]
            if len(batch) > 1 and isinstance(e, Exception):
                for request in unfinished:
                    self._decode([request])
            else:
                for request in unfinished:
                    request.error = e
                    self._finish(request)
            if not isinstance(e, Exception):                  # KeyboardInterrupt and the like go on up
                raise

    def _finish(self, request: _Request) -> None:
        request.done.set()
        with self._cond:
            self._cond.notify_all()
