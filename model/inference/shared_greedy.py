"""Greedy decoding shared by concurrent callers: whoever arrives while the model is busy is decoded
together with the others in one padded batch.

Why: a cached decoding step is bound by reading the weights, not by arithmetic; twenty sessions in one
batch read them once per step instead of twenty times. A lane is a short-lived thread that decodes
whatever is waiting and ends when nothing is left; a caller waits only for its own row (rows leave
their batch as they finish). A sentence that has waited `patience_s` opens a second lane, so one long
sentence does not hold up a classroom's short ones. Lanes start with an empty context, so a trace
active in a caller's thread never sees a batch. Measurements: docs/performance-fixes.md.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from model.inference.decode import greedy_rows
from model.inference.decode import pad_batch
from model.nn.transformer import Transformer


@dataclass(eq=False)  # compared by identity: two sessions may send the same sentence
class _Request:
    src_ids: list[int]
    max_len: int
    ids: list[int] | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class GreedyBatcher:
    def __init__(self, model: Transformer, max_batch: int = 32, lanes: int = 2, patience_s: float = 0.5):
        self.model, self.max_batch, self.lanes, self.patience_s = model, max_batch, lanes, patience_s
        self._lock = threading.Lock()
        self._pending: list[_Request] = []
        self._running = 0                         # lanes decoding now
        self.batch_sizes: list[int] = []          # one entry per batch decoded, for tests and benchmarks

    def greedy(self, src_ids: list[int], max_len: int) -> list[int]:
        """The greedy output ids of one source sentence (ending in </s> unless max_len came first)."""
        if max_len < 1 or not src_ids:
            raise ValueError(f"nothing to decode: {len(src_ids)} source tokens, at most {max_len} output tokens")
        request = _Request(list(src_ids), max_len)
        with self._lock:
            self._pending.append(request)
            self._open_lane(up_to=1)
        while not request.done.wait(self.patience_s):
            with self._lock:
                if request in self._pending:          # still not taken: the busy lane is on a long batch
                    self._open_lane(up_to=self.lanes)
        if request.error is not None:
            raise request.error
        assert request.ids is not None                # done without an error: decoded
        return request.ids

    def _open_lane(self, up_to: int) -> None:      # with the lock held
        if self._running < up_to:
            self._running += 1
            # Not a daemon: a lane always ends, and one killed inside torch at exit aborts the process.
            threading.Thread(target=self._lane, name="greedy-lane").start()

    def _lane(self) -> None:
        """Decode what is waiting, batch after batch; end when nothing is."""
        while True:
            with self._lock:
                if not self._pending:
                    self._running -= 1
                    return
                batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
            self._decode(batch)

    def _decode(self, batch: list[_Request]) -> None:
        """Decode the batch, releasing each request as its row finishes. After an error the unfinished
        requests are retried one by one, so one bad sentence fails only its own caller, who raises the
        error in their own thread (greedy). Never raises: the lane must go on."""
        self.batch_sizes.append(len(batch))
        try:
            src = pad_batch([r.src_ids for r in batch], self.model.cfg.pad_id).to(self.model.device)   # [B,S]
            for row, ids in greedy_rows(self.model, src, [r.max_len for r in batch]):
                batch[row].ids = ids
                batch[row].done.set()
        except BaseException as e:  # noqa: BLE001  no waiting caller may be left without an answer
            unfinished = [r for r in batch if not r.done.is_set()]
            if len(batch) > 1:
                for request in unfinished:
                    self._decode([request])
            else:
                for request in unfinished:
                    request.error = e
                    request.done.set()
