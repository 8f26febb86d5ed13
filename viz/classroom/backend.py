"""Which store this process's classes live in: REDIS_URL_ENV unset, one MemoryStore (one `streamlit run`);
set to a Redis URL (the lecture hall's workers, deploy/serve.py sets it), a RedisStore shared by every worker.
No Streamlit here: the app caches the store with st.cache_resource."""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from viz.classroom.redis_store import RedisStore
from viz.classroom.store import REDIS_URL_ENV, ClassStore, MemoryStore, StoreDown

_opened: dict[str, ClassStore] = {}
_lock = threading.Lock()


def open_store(env: Mapping[str, str] | None = None) -> ClassStore:
    """The same store on every call with the same setting. A URL redis-py cannot read raises StoreDown, as an
    unreachable Redis does later: the pages then work on their own with a notice."""
    url = (os.environ if env is None else env).get(REDIS_URL_ENV, "").strip()
    with _lock:
        if url not in _opened:
            try:
                _opened[url] = RedisStore(url) if url else MemoryStore()
            except ValueError as e:
                raise StoreDown(f"{REDIS_URL_ENV} is not a Redis URL ({e})") from e
        return _opened[url]
