"""Train the GRU encoder-decoders (model/nn/rnn.py) on a toy task, and measure exact-match accuracy against the
input's length: without attention the whole input must pass through one vector, and the longer it is the
more is lost; with attention each output step reads the input again.

    python -m model.cli train-rnn --task reverse --out pretrained/rnn-reverse
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

from model.io.tokenizer import PAD_ID
from model.nn.rnn import ATTENTIONS, RNNConfig, Seq2SeqRNN
from model.training.tasks import TASKS, make_batch, toy_tokenizer

TRAIN_LENGTHS = (3, 16)          # symbols per training input: long enough for one vector to run out of room
EVAL_LENGTHS = tuple(range(2, 21))   # accuracy by length: the trained lengths and a few beyond
DEFAULT_STEPS = 1500
EVAL_SEED = 7


@dataclass
class RNNResult:
    model: Seq2SeqRNN
    history: list[dict] = field(default_factory=list)  # step, loss, accuracy, seconds


def rnn_config(attention: str, d_hidden: int = 64, d_embed: int = 32) -> RNNConfig:
    return RNNConfig(vocab_size=toy_tokenizer().vocab_size, attention=attention, d_embed=d_embed, d_hidden=d_hidden)


def sequence_loss(model: Seq2SeqRNN, src, tgt_in, tgt_out) -> torch.Tensor:
    """Mean cross-entropy per target token (padding ignored)."""
    logits = model(src, tgt_in).logits
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), ignore_index=PAD_ID)


@torch.no_grad()
def exact_and_token_accuracy(model: Seq2SeqRNN, task: str, n: int, length: int, seed: int) -> tuple[float, float]:
    """(share of n inputs of `length` symbols answered exactly, share of answer tokens right) under greedy decoding."""
    model.eval()
    src, _, tgt_out = make_batch(task, n, random.Random(seed), toy_tokenizer(), length, length)
    src, tgt_out = src.to(model.device), tgt_out.to(model.device)
    out, _ = model.greedy(src, tgt_out.size(1))
    width = tgt_out.size(1)
    out = F.pad(out, (0, max(0, width - out.size(1))), value=PAD_ID)[:, :width]
    real = tgt_out != PAD_ID
    right = (out == tgt_out) | ~real
    return float(right.all(1).float().mean()), float((right & real).sum() / real.sum())


def accuracy_by_length(model: Seq2SeqRNN, task: str, lengths=EVAL_LENGTHS, n: int = 200,
                       seed: int = EVAL_SEED) -> dict[int, dict[str, float]]:
    """{length: {"exact": .., "token": ..}} on n fresh inputs of each length (a fixed seed per length)."""
    table = {}
    for length in lengths:
        exact, token = exact_and_token_accuracy(model, task, n, length, seed + length)
        table[int(length)] = {"exact": round(exact, 4), "token": round(token, 4)}
    return table


def train_rnn(task: str, attention: str, steps: int = DEFAULT_STEPS, batch_size: int = 64, lr: float = 3e-3,
              seed: int = 0, lengths: tuple[int, int] = TRAIN_LENGTHS, eval_every: int = 250,
              on_eval: Callable[[dict, Seq2SeqRNN], None] | None = None) -> RNNResult:
    """Adam with a linear decay to zero over the run, gradients clipped at 1 (a GRU's can spike early).
    Every eval_every steps (and at the end) one record: the batch's loss, exact accuracy on 100 inputs of
    the longest trained length, seconds so far; on_eval(record, model) lets a page draw it."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    if attention not in ATTENTIONS:
        raise ValueError(f"unknown attention {attention!r}; choose from {', '.join(ATTENTIONS)}")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tok = toy_tokenizer()
    model = Seq2SeqRNN(rnn_config(attention))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    result = RNNResult(model)
    start = time.perf_counter()
    for step in range(1, steps + 1):
        model.train()
        for group in opt.param_groups:
            group["lr"] = lr * (steps - step + 1) / steps
        src, tgt_in, tgt_out = make_batch(task, batch_size, rng, tok, *lengths)
        loss = sequence_loss(model, src, tgt_in, tgt_out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % eval_every == 0 or step == steps:
            exact, _ = exact_and_token_accuracy(model, task, 100, lengths[1], EVAL_SEED)
            record = dict(step=step, loss=float(loss.detach()), accuracy=exact, seconds=time.perf_counter() - start)
            result.history.append(record)
            if on_eval:
                on_eval(record, model)
    model.eval()
    return result
