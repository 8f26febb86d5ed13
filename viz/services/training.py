"""Live toy training (model/training/live.py: one training per server process) and the toy model before its
first step; the names the training page needs from model/training, which pages may not import."""
from __future__ import annotations

import streamlit as st
import torch

from model.capture import schema
from model.capture.trace import Trace
from model.inference.pipeline import trace_sentence
from model.training.live import (TRAINING_THREADS, LiveRun, make_example, parse_symbols,  # noqa: F401 (for the page)
                                 train_live, trained_lengths_note, training_slot)
from model.training.tasks import TASKS  # noqa: F401 (for the page)
from model.training.toy import TOY_SIZES  # noqa: F401 (for the page)


def trace_toy(run: LiveRun, text: str) -> Trace:
    """The live-trained toy model's cross-attention on `text` (not cached: the model changes while it trains)."""
    return trace_sentence(run.bundle(), text, names=schema.patterns_glob("cross"))


@st.cache_resource(max_entries=16, show_spinner=False)
def untrained_snapshot(task: str, size: str, symbols: tuple[str, ...]):
    """Attention on the example in the toy model a training of this size starts from: train_toy's seed-0
    initial weights, before step 1 (a Snapshot at step 0). The global random state is left as it was."""
    from model.nn.transformer import Transformer
    from model.training.live import snapshot
    from model.training.toy import toy_config

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Transformer(toy_config(size)).eval()
    return snapshot(model, make_example(task, list(symbols)), dict(step=0, loss=float("nan"), accuracy=0.0))
