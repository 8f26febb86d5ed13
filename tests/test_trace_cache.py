"""The server-wide trace cache: bounded by bytes and age, least recently used out first, shared objects."""
import threading

import numpy as np

from model.capture.trace import Trace
from viz.services.trace_cache import TraceCache


def _trace(n_bytes: int) -> Trace:
    t = Trace()
    t.arrays["x"] = np.zeros(n_bytes, dtype=np.uint8)
    return t


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_hit_returns_the_same_object_without_recomputing():
    cache, calls = TraceCache(max_bytes=1000, ttl_s=60), []
    first = cache.get("a", lambda: calls.append(1) or _trace(10))
    assert cache.get("a", lambda: calls.append(1) or _trace(10)) is first
    assert calls == [1]


def test_least_recently_used_goes_first_when_over_the_byte_budget():
    cache = TraceCache(max_bytes=300, ttl_s=60)
    for key in "abc":
        cache.get(key, lambda: _trace(100))
    cache.get("a", lambda: _trace(100))                   # a is now the most recent
    cache.get("d", lambda: _trace(100))                   # 400 > 300: b (least recent) goes
    assert set(cache._items) == {"a", "c", "d"} and cache.nbytes == 300


def test_a_trace_over_the_whole_budget_is_kept_alone():
    cache = TraceCache(max_bytes=300, ttl_s=60)
    cache.get("small", lambda: _trace(100))
    big = cache.get("big", lambda: _trace(1000))
    assert list(cache._items) == ["big"]
    assert cache.get("big", lambda: _trace(1)) is big     # the page's reruns do not recompute it


def test_old_entries_expire():
    clock = Clock()
    cache = TraceCache(max_bytes=10**6, ttl_s=60, clock=clock)
    old = cache.get("a", lambda: _trace(10))
    clock.now = 61
    assert cache.get("a", lambda: _trace(10)) is not old


def test_memory_stays_under_budget_over_many_keys_and_threads():
    cache = TraceCache(max_bytes=50_000, ttl_s=60)

    def worker(offset):
        for i in range(200):
            cache.get((offset, i), lambda i=i: _trace(1000 + i))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 0 < cache.nbytes <= 50_000 and len(cache) < 50
