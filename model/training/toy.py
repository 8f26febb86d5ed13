"""The toy tasks' trainer (reverse, copy, sort): small models that learn in minutes on a CPU, for the
app's live training page and the shipped toy models.

    python -m model.cli train --task reverse --out pretrained/toy-reverse
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

from model.inference.decode import greedy_batch
from model.io.tokenizer import PAD_ID, Tokenizer
from model.nn.config import TransformerConfig
from model.nn.transformer import Transformer
from model.training.runtime import Runtime, paper_adam, train_step, wrap
from model.training.tasks import TASKS, make_batch, toy_tokenizer

TOY_SIZES = {  # d_model, heads, layers, d_ff
    "tiny": (32, 2, 1, 64),
    "small": (64, 4, 2, 128),
    "medium": (128, 4, 2, 256),
}


@dataclass
class ToyResult:
    model: Transformer
    tokenizer: Tokenizer
    history: list[dict] = field(default_factory=list)  # step, loss, accuracy, lr, seconds


def toy_config(size: str = "small") -> TransformerConfig:
    d, h, n, ff = TOY_SIZES[size]
    return TransformerConfig(vocab_size=len(toy_tokenizer().backend.get_vocab()), d_model=d, n_heads=h,
                             n_encoder_layers=n, n_decoder_layers=n, d_ff=ff, dropout=0.0, max_len=32)


@torch.no_grad()
def sequence_accuracy(model: Transformer, task: str, n: int = 500, seed: int = 99) -> float:
    """Share of sampled inputs whose greedy output is exactly right."""
    tok = toy_tokenizer()
    model.eval()
    src, _, tgt_out = make_batch(task, n, random.Random(seed), tok)
    src, tgt_out = src.to(model.device), tgt_out.to(model.device)          # [n,S], [n,T]
    out = greedy_batch(model, src, tgt_out.size(1))
    width = tgt_out.size(1)
    out = F.pad(out, (0, max(0, width - out.size(1))), value=PAD_ID)[:, :width]
    return float((out == tgt_out).all(dim=1).float().mean())


def train_toy(task: str, steps: int = 800, size: str = "small", batch_size: int = 64, peak_lr: float = 2e-3,
              warmup: int = 100, seed: int = 0, eval_every: int = 250,
              on_eval: Callable[[dict, Transformer], None] | None = None,
              rt: Runtime | None = None) -> ToyResult:
    """Train a toy model; `on_eval(record, model)` lets a caller draw curves or snapshot attention.
    Learning rate: linear warmup, then linear decay to zero, which settles a short run cleanly.
    rt: where to train (default: one process on the CPU, as the app's live training); under several
    ranks each takes its rows of every batch and only rank 0 evaluates."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {TASKS}")
    rt = rt or Runtime(torch.device("cpu"))
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tok = toy_tokenizer()
    model = Transformer(toy_config(size)).to(rt.device)
    ddp = wrap(model, rt)
    opt = paper_adam(model, peak_lr)
    result = ToyResult(model, tok)
    start = time.perf_counter()
    for step in range(1, steps + 1):
        model.train()
        for group in opt.param_groups:
            group["lr"] = peak_lr * min(step / warmup, (steps - step + 1) / (steps - warmup + 1))
        src, tgt_in, tgt_out = make_batch(task, batch_size, rng, tok)      # the global batch
        n_targets = int((tgt_out != PAD_ID).sum())
        mine = slice(rt.rank, None, rt.world)
        loss_sum = train_step(ddp, opt, src[mine], tgt_in[mine], tgt_out[mine], n_targets, rt, smoothing=0.0)
        if rt.main and (step % eval_every == 0 or step == steps):
            record = dict(step=step, loss=float(loss_sum) * rt.world / n_targets,   # rank 0's shard
                          accuracy=sequence_accuracy(model, task, 200),
                          lr=opt.param_groups[0]["lr"], seconds=time.perf_counter() - start)
            result.history.append(record)
            if on_eval:
                on_eval(record, model)
    model.eval()
    return result
