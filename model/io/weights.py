"""A loaded model's weights as numpy arrays, for the pages that redo its arithmetic (read-only: the model is
not touched)."""
from __future__ import annotations

import numpy as np


def linear_arrays(linear) -> tuple[np.ndarray, np.ndarray | None]:
    """(weight [out, in], bias [out] or None) as float64 numpy from anything with .weight/.bias
    (an nn.Linear of the loaded model, or plain arrays): read-only, the model is not touched."""
    def as_numpy(p):
        if p is None:
            return None
        return np.array(p.detach().cpu().numpy() if hasattr(p, "detach") else p, dtype=np.float64)
    return as_numpy(linear.weight), as_numpy(getattr(linear, "bias", None))
