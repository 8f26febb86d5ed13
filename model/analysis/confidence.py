"""How sure the model was of each word it wrote: the probability of each output token and of its runner-up,
from a trace's logits (pure numpy/pandas)."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from model.analysis.attention_math import softmax
from model.capture import schema


def token_confidence(trace, token_strings: Callable[[list[int]], list[str]]) -> pd.DataFrame | None:
    """For each output token t (meta tgt_ids): p of that token under row t of the trace's logits, and the
    most probable other token (the runner-up, named by token_strings: the tokenizer's) with its p. None when
    the trace has no logits."""
    if schema.LOGITS not in trace:
        return None
    probs = softmax(trace[schema.LOGITS])                                              # [T, V]
    ids = np.asarray(trace.meta["tgt_ids"], dtype=int)
    rows = np.arange(len(ids))
    others = probs.copy()
    others[rows, ids] = -1.0
    other_ids = others.argmax(1)
    return pd.DataFrame({"token": trace.meta["tgt_out_tokens"], "p": probs[rows, ids],
                         "runner_up": token_strings(other_ids.tolist()), "runner_up_p": probs[rows, other_ids]})
