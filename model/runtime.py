"""Settings torch reads once, when it loads: call configure() before the first `import torch`
(app.py and bench/common.py do). Values already in the environment win."""
from __future__ import annotations

import os

TORCH_ENV = {
    # Idle OpenMP threads sleep instead of spinning. Sessions share a few cores (each script thread
    # gets its own OpenMP team); spinning teams made a forward pass 10-20x slower.
    "OMP_WAIT_POLICY": "PASSIVE",
    # Tensors of 2 MiB and more get transparent huge pages. A full capture keeps every intermediate
    # (234 MiB at 512 tokens), all fresh memory; with 4 KiB pages the page faults alone made capture
    # 2x the plain forward pass at 512 tokens, with huge pages 1.3-1.5x (docs/performance-fixes.md).
    "THP_MEM_ALLOC_ENABLE": "1",
}


def configure() -> dict[str, str]:
    """Set the defaults above; returns the values in effect."""
    for key, value in TORCH_ENV.items():
        os.environ.setdefault(key, value)
    return {key: os.environ[key] for key in TORCH_ENV}
