"""Traces shared by every session of one server, bounded by bytes and age, least recently used out first.

A count bound is not enough: a trace is ~3 MB at 16 tokens and ~250 MB at 512, so 16 long ones would
take gigabytes. Streamlit's cache_data would also copy a trace on every rerun; this hands out the one
shared, read-only object.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Hashable

from model.capture.trace import Trace


class TraceCache:
    def __init__(self, max_bytes: int, ttl_s: float, clock: Callable[[], float] = time.monotonic):
        self.max_bytes, self.ttl_s, self.clock = max_bytes, ttl_s, clock
        self._items: OrderedDict[Hashable, tuple[float, Trace]] = OrderedDict()   # oldest use first
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Trace]) -> Trace:
        """The cached trace for `key`, or compute() it (outside the lock: sessions do not wait on each other)."""
        with self._lock:
            self._drop_expired()
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][1]
        trace = compute()
        with self._lock:
            self._items[key] = (self.clock(), trace)
            self._items.move_to_end(key)
            self._shrink(keep=key)
        return trace

    @property
    def nbytes(self) -> int:
        return sum(trace.nbytes for _, trace in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _drop_expired(self) -> None:
        now = self.clock()
        for key in [k for k, (born, _) in self._items.items() if now - born > self.ttl_s]:
            del self._items[key]

    def _shrink(self, keep: Hashable) -> None:
        """Evict least recently used traces until under budget; the newest stays even if alone it is
        over (its session is about to draw it, and reruns of that page must not recompute it)."""
        total = self.nbytes
        for key in list(self._items):
            if total <= self.max_bytes:
                break
            if key != keep:
                total -= self._items.pop(key)[1].nbytes
