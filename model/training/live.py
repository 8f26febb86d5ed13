"""Train a toy model inside the app, one training per server process, with attention snapshots.

No Streamlit here: the page passes callbacks. A training runs on TRAINING_THREADS = 1 (the model is
too small to gain from two on a shared machine) and puts torch's thread count back when it ends;
TRAINING_SLOT lets one training run per process, so a second class member waits (and is told so)
instead of halving everyone's speed. Measurements: docs/performance-fixes.md.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import torch

from model.io.checkpoint import Bundle
from model.training.tasks import SYMBOLS, solve, toy_tokenizer
from model.capture import schema
from model.errors import InputError
from model.capture.hooks import capture
from model.training.rnn import EVAL_LENGTHS, RNNResult, accuracy_by_length, train_rnn
from model.training.toy import ToyResult, train_toy

TRAINING_SLOT = threading.Semaphore(1)
TRAINING_THREADS = 1
SNAPSHOT_NAMES = [schema.patterns_glob("encoder"), schema.patterns_glob("cross")]
MAX_EXAMPLE_SYMBOLS = 16    # the toy models' positional table covers 32 positions
TRAINED_LENGTHS = (3, 8)    # model/training/tasks.py samples sequences of this many symbols


@dataclass
class Snapshot:
    """Attention on the watched example at one evaluation during training."""
    step: int
    loss: float
    accuracy: float
    encoder: np.ndarray      # [L,H,S,S] encoder self-attention
    cross: np.ndarray        # [L,H,T,S] cross-attention, rows predict the target tokens


@dataclass
class Example:
    """The fixed input watched during training; the decoder is teacher-forced on the right answer."""
    symbols: list[str]
    answer: list[str]
    src: torch.Tensor        # [1,S] ids ending in </s>
    tgt_in: torch.Tensor     # [1,T] <s> y1 .. y_{T-1}
    src_tokens: list[str]
    tgt_out_tokens: list[str]


@dataclass
class LiveRun:
    task: str
    size: str
    steps: int
    example: Example
    result: ToyResult | None = None
    snapshots: list[Snapshot] = field(default_factory=list)

    @property
    def history(self) -> list[dict]:
        return self.result.history if self.result else []

    def bundle(self) -> Bundle:
        """The trained model as a Bundle, so model/inference/pipeline.py can translate and trace with it."""
        assert self.result is not None, "bundle() before training"
        model = self.result.model.eval()
        return Bundle(model, self.result.tokenizer, model.cfg, Path(f"live-{self.task}-{self.size}"))


def parse_symbols(text: str, max_symbols: int = MAX_EXAMPLE_SYMBOLS) -> list[str]:
    """'a b c' -> ['a','b','c']; a clear ValueError for anything the toy vocabulary cannot read."""
    symbols = (text or "").split()
    if not symbols:
        raise InputError("no_symbols", "type a few symbols separated by spaces, e.g. 'a b c d'")
    unknown = sorted({s for s in symbols if s not in SYMBOLS})
    if unknown:
        shown = ", ".join(repr(s[:12]) for s in unknown[:5])
        raise InputError("live_symbols", f"the toy models know only the symbols {' '.join(SYMBOLS)} (separated "
                         f"by spaces); not {shown}", known=" ".join(SYMBOLS), shown=shown)
    if len(symbols) > max_symbols:
        raise InputError("too_many_symbols", f"at most {max_symbols} symbols, got {len(symbols)}",
                         limit=max_symbols, n=len(symbols))
    return symbols


def make_example(task: str, symbols: list[str]) -> Example:
    tok = toy_tokenizer()
    answer = solve(task, symbols)
    src_ids, tgt_ids = tok.encode(" ".join(symbols)), tok.encode(" ".join(answer))
    return Example(symbols, answer, torch.tensor([src_ids]), torch.tensor([[1] + tgt_ids[:-1]]),
                   tok.token_strings(src_ids), tok.token_strings(tgt_ids))


@torch.no_grad()
def snapshot(model, example: Example, record: dict) -> Snapshot:
    """Encoder and cross-attention of the example, in eval mode (train_toy switches back each step)."""
    model.eval()
    with capture(SNAPSHOT_NAMES) as trace:
        model(example.src, example.tgt_in)
    encoder, cross = schema.stacked(trace, "encoder"), schema.stacked(trace, "cross")      # [L,H,Q,K] each
    return Snapshot(record["step"], float(record["loss"]), float(record["accuracy"]), encoder, cross)


def eval_interval(steps: int) -> int:
    """About 16 evaluations per run, every 5 to 50 steps: a smooth curve at a small cost."""
    return int(min(50, max(5, steps // 16)))


@contextmanager
def training_slot(on_wait: Callable[[int], None], poll_seconds: float = 1.0) -> Iterator[None]:
    """Hold the process's one training slot; on_wait(seconds waited) runs while another training holds it
    (a Streamlit call there lets a rerun or a closed tab end the wait)."""
    waited = 0
    while not TRAINING_SLOT.acquire(timeout=0 if waited == 0 else poll_seconds):
        on_wait(waited)
        waited += 1
    try:
        yield
    finally:
        TRAINING_SLOT.release()


def train_live(run: LiveRun, on_progress: Callable[[dict, Snapshot], None] | None = None, seed: int = 0) -> LiveRun:
    """train_toy with a snapshot of the example's attention at every evaluation. Threads: see module doc."""

    def on_eval(record: dict, model) -> None:
        snap = snapshot(model, run.example, record)
        run.snapshots.append(snap)
        if on_progress:
            on_progress(record, snap)

    run.snapshots.clear()
    previous = torch.get_num_threads()
    torch.set_num_threads(min(TRAINING_THREADS, previous))
    try:
        run.result = train_toy(run.task, steps=run.steps, size=run.size, seed=seed,
                               eval_every=eval_interval(run.steps), on_eval=on_eval)
    finally:
        torch.set_num_threads(previous)
    return run


def train_rnns_live(task: str, attentions: list[str], steps: int, on_progress: Callable[[str, dict], None] | None = None,
                    seed: int = 0, eval_inputs: int = 100) -> dict[str, tuple[RNNResult, dict]]:
    """The RNN encoder-decoders (model/training/rnn.py) one after another on TRAINING_THREADS, each followed by
    its accuracy at every length of EVAL_LENGTHS: {attention: (result, accuracy_by_length)}.
    on_progress(attention, record) at every evaluation."""
    previous = torch.get_num_threads()
    torch.set_num_threads(min(TRAINING_THREADS, previous))
    runs = {}
    try:
        for attention in attentions:
            report = (lambda record, _model, a=attention: on_progress(a, record)) if on_progress else None
            result = train_rnn(task, attention, steps=steps, seed=seed, eval_every=eval_interval(steps), on_eval=report)
            runs[attention] = (result, accuracy_by_length(result.model, task, EVAL_LENGTHS, n=eval_inputs))
    finally:
        torch.set_num_threads(previous)
    return runs


def trained_lengths_note(symbols: list[str]) -> str | None:
    lo, hi = TRAINED_LENGTHS
    if lo <= len(symbols) <= hi:
        return None
    return (f"Training only showed sequences of {lo} to {hi} symbols; with {len(symbols)} the model is "
            "outside what it learned, so expect mistakes.")
