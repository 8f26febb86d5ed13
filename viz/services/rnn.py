"""Before the Transformer: the shipped GRU encoder-decoders with and without attention (model/nn/rnn.py), read
once per server, and their live training."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from model.io.checkpoint import CheckpointError
from model.training.live import training_slot
from viz.services.models import model_root


RNN_FOLDER = "rnn-reverse"      # under model_root(): rnn.json, <attention>.safetensors, metrics.json


def rnn_models(folder: str = RNN_FOLDER):
    """(task, {attention: model}, metrics) of a shipped RNN folder under model_root(), loaded once per server;
    CheckpointError naming the file relative to the models' folder when it is missing or broken."""
    return _rnn_models(str(model_root()), folder)


@st.cache_resource(max_entries=2, show_spinner=False)
def _rnn_models(root: str, folder: str):
    from model.io.rnn_checkpoint import load_rnns
    try:
        return load_rnns(Path(root) / folder)
    except CheckpointError as e:
        raise CheckpointError(str(e).replace(f"{root}{os.sep}", "")) from None


def rnn_reading(folder: str, attention: str, text: str):
    """One input through one shipped RNN, greedily (model/inference/rnn.RNNReading: output, contexts, attention)."""
    return _rnn_reading(str(model_root()), folder, attention, text)


@st.cache_data(max_entries=64, show_spinner=False)
def _rnn_reading(root: str, folder: str, attention: str, text: str):
    from model.inference.rnn import read_input
    from model.training.tasks import toy_tokenizer
    return read_input(_rnn_models(root, folder)[1][attention], toy_tokenizer(), text)


def train_rnns(task: str, attentions: list[str], steps: int, on_progress, on_wait) -> dict:
    """The training page's RNNs, trained live in the process's one training slot (model/training/live.py):
    {"task", "steps", "train_lengths", "tables": {attention: accuracy by length}, "seconds": {attention: s}}."""
    from model.training.live import train_rnns_live
    from model.training.rnn import TRAIN_LENGTHS
    with training_slot(on_wait):
        runs = train_rnns_live(task, attentions, steps, on_progress)
    return dict(task=task, steps=steps, train_lengths=TRAIN_LENGTHS, tables={a: table for a, (_r, table) in runs.items()},
                seconds={a: r.history[-1]["seconds"] for a, (r, _table) in runs.items()})
