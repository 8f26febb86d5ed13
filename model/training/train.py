"""Training as in the paper, scaled down: Adam, warmup then inverse-sqrt learning rate, label
smoothing, dropout; token-bucketed batches for translation; checkpoint and resume.

    python -m model.cli train --task reverse --out pretrained/toy-reverse
    python -m model.cli train --task translate --data data/en-es --out runs/en-es [--resume]
"""
from __future__ import annotations

import csv
import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from model.io.checkpoint import save_checkpoint
from model.nn.config import TransformerConfig
from model.inference.decode import greedy_batch
from model.inference.decode import pad_batch
from model.training.tasks import TASKS, make_batch, toy_tokenizer
from model.io.tokenizer import BOS_ID, PAD_ID, Tokenizer
from model.nn.transformer import Transformer


def lr_at(step: int, peak: float, warmup: int) -> float:
    """Linear warmup to `peak`, then decay with 1/sqrt(step) (the paper's schedule, rescaled)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def loss_fn(logits, tgt_out, smoothing: float):
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID,
                           label_smoothing=smoothing)


# -- toy tasks ----------------------------------------------------------------------------------
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
    out = greedy_batch(model, src, tgt_out.size(1))
    width = tgt_out.size(1)
    out = F.pad(out, (0, max(0, width - out.size(1))), value=PAD_ID)[:, :width]
    return float((out == tgt_out).all(dim=1).float().mean())


def train_toy(task: str, steps: int = 800, size: str = "small", batch_size: int = 64, peak_lr: float = 2e-3,
              warmup: int = 100, seed: int = 0, eval_every: int = 250,
              on_eval: Callable[[dict, Transformer], None] | None = None) -> ToyResult:
    """Train a toy model; `on_eval(record, model)` lets a caller draw curves or snapshot attention.
    Learning rate: linear warmup, then linear decay to zero, which settles a short run cleanly."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {TASKS}")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tok = toy_tokenizer()
    model = Transformer(toy_config(size))
    opt = torch.optim.Adam(model.parameters(), lr=peak_lr, betas=(0.9, 0.98), eps=1e-9)
    result = ToyResult(model, tok)
    start = time.perf_counter()
    for step in range(1, steps + 1):
        model.train()
        for group in opt.param_groups:
            group["lr"] = peak_lr * min(step / warmup, (steps - step + 1) / (steps - warmup + 1))
        src, tgt_in, tgt_out = make_batch(task, batch_size, rng, tok)
        loss = loss_fn(model(src, tgt_in), tgt_out, smoothing=0.0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0 or step == steps:
            record = dict(step=step, loss=loss.item(), accuracy=sequence_accuracy(model, task, 200),
                          lr=opt.param_groups[0]["lr"], seconds=time.perf_counter() - start)
            result.history.append(record)
            if on_eval:
                on_eval(record, model)
    model.eval()
    return result


# -- translation --------------------------------------------------------------------------------
def read_pairs(path: Path) -> list[tuple[str, str]]:
    from model.training.corpus import read_tsv
    return read_tsv(path)


def encode_pairs(tok: Tokenizer, pairs, max_len: int) -> list[tuple[list[int], list[int]]]:
    src = tok.backend.encode_batch([s for s, _ in pairs], add_special_tokens=False)
    tgt = tok.backend.encode_batch([t for _, t in pairs], add_special_tokens=False)
    out = []
    for s, t in zip(src, tgt):
        s_ids, t_ids = s.ids + [2], t.ids + [2]
        if len(s_ids) <= max_len and len(t_ids) <= max_len:
            out.append((s_ids, t_ids))
    return out


def token_batches(data, max_tokens: int, rng: random.Random):
    """Length-bucketed batches of about max_tokens (padded source + target), in random order."""
    order = sorted(range(len(data)), key=lambda i: (len(data[i][0]) + rng.random() * 3, len(data[i][1])))
    batches, batch, width = [], [], 0
    for i in order:
        w = max(width, len(data[i][0]) + len(data[i][1]))
        if batch and w * (len(batch) + 1) > max_tokens:
            batches.append(batch)
            batch, w = [], len(data[i][0]) + len(data[i][1])
        batch.append(i)
        width = w
    if batch:
        batches.append(batch)
    rng.shuffle(batches)
    return batches


def collate(data, idx):
    src = pad_batch([data[i][0] for i in idx])
    tgt_in = pad_batch([[BOS_ID] + data[i][1][:-1] for i in idx])
    tgt_out = pad_batch([data[i][1] for i in idx])
    return src, tgt_in, tgt_out


@torch.no_grad()
def evaluate_loss(model, data, max_tokens: int) -> float:
    model.eval()
    total, count = 0.0, 0
    for idx in token_batches(data, max_tokens, random.Random(0)):
        src, tgt_in, tgt_out = collate(data, idx)
        logits = model(src, tgt_in)
        n = int((tgt_out != PAD_ID).sum())
        total += float(F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID,
                                       reduction="sum"))
        count += n
    model.train()
    return total / max(count, 1)


def save_state(folder: Path, model, opt, state: dict) -> None:
    """Resumable state, no pickle: weights and Adam moments in safetensors, counters in JSON."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [n for n, _ in model.named_parameters()]
    moments = {}
    for i, p in enumerate(model.parameters()):
        s = opt.state.get(p)
        if s:
            moments[f"{names[i]}.exp_avg"] = s["exp_avg"].contiguous()
            moments[f"{names[i]}.exp_avg_sq"] = s["exp_avg_sq"].contiguous()
    save_file(moments, str(folder / "optimizer.safetensors.tmp"))
    (folder / "optimizer.safetensors.tmp").replace(folder / "optimizer.safetensors")
    (folder / "state.json").write_text(json.dumps(state, indent=2))


def load_state(folder: Path, model, opt) -> dict:
    moments = load_file(str(folder / "optimizer.safetensors"))
    state = json.loads((folder / "state.json").read_text())
    for name, p in model.named_parameters():
        if f"{name}.exp_avg" in moments:
            opt.state[p] = {"step": torch.tensor(float(state["step"])),
                            "exp_avg": moments[f"{name}.exp_avg"],
                            "exp_avg_sq": moments[f"{name}.exp_avg_sq"]}
    return state


def train_translation(args) -> None:
    from model.io.checkpoint import load_checkpoint

    data_dir, out = Path(args.data), Path(args.out)
    torch.set_num_threads(args.threads)
    last = out / "last"
    resuming = args.resume and (last / "state.json").is_file()
    # A resumed run keeps the vocabulary it was trained with, even if the corpus was rebuilt since.
    tok = Tokenizer.load((last if resuming else data_dir) / "tokenizer.json")
    train = encode_pairs(tok, read_pairs(data_dir / "train.tsv"), args.max_len)
    dev = encode_pairs(tok, read_pairs(data_dir / "dev.tsv"), args.max_len)
    if resuming:
        bundle = load_checkpoint(last, device="cpu")
        model = bundle.model
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
        state = load_state(last, model, opt)
        print(f"resumed at step {state['step']} (epoch {state['epoch']}, batch {state['batch']})")
    else:
        cfg = TransformerConfig(vocab_size=tok.vocab_size, d_model=args.d_model, n_heads=args.heads,
                                n_encoder_layers=args.layers, n_decoder_layers=args.layers, d_ff=args.d_ff,
                                dropout=args.dropout, max_len=512)
        torch.manual_seed(args.seed)
        model = Transformer(cfg)
        opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
        state = {"step": 0, "epoch": 0, "batch": 0, "seconds": 0.0, "tokens": 0}
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "train_log.csv", "w", newline="") as f:
            csv.writer(f).writerow(["step", "epoch", "train_loss", "dev_loss", "lr", "tokens_per_s"])
    print(f"{model.num_parameters():,} parameters; {len(train):,} train / {len(dev):,} dev pairs")
    model.train()
    last_save = time.time()
    while state["epoch"] < args.epochs:
        batches = token_batches(train, args.max_tokens, random.Random(args.seed + state["epoch"]))
        bar = tqdm(total=len(batches), initial=state["batch"], desc=f"epoch {state['epoch'] + 1}")
        window_loss, window_tokens, t0 = 0.0, 0, time.perf_counter()
        for b in range(state["batch"], len(batches)):
            src, tgt_in, tgt_out = collate(train, batches[b])
            state["step"] += 1
            lr = lr_at(state["step"], args.lr, args.warmup)
            for group in opt.param_groups:
                group["lr"] = lr
            loss = loss_fn(model(src, tgt_in), tgt_out, args.smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            n_tok = int((src != PAD_ID).sum() + (tgt_out != PAD_ID).sum())
            window_loss += loss.item() * n_tok
            window_tokens += n_tok
            state["tokens"] += n_tok
            state["batch"] = b + 1
            bar.update(1)
            if state["step"] % args.log_every == 0:
                dt = time.perf_counter() - t0
                state["seconds"] += dt
                dev_loss = evaluate_loss(model, dev, args.max_tokens) if state["step"] % args.eval_every == 0 else ""
                with open(out / "train_log.csv", "a", newline="") as f:
                    csv.writer(f).writerow([state["step"], state["epoch"] + 1, f"{window_loss / window_tokens:.4f}",
                                            f"{dev_loss:.4f}" if dev_loss != "" else "", f"{lr:.6f}",
                                            f"{window_tokens / dt:.0f}"])
                bar.set_postfix(loss=f"{window_loss / window_tokens:.3f}", tok_s=f"{window_tokens / dt:.0f}")
                window_loss, window_tokens, t0 = 0.0, 0, time.perf_counter()
            if time.time() - last_save > args.save_minutes * 60:
                _save(model, tok, opt, state, out)
                last_save = time.time()
        bar.close()
        state["epoch"] += 1
        state["batch"] = 0
        _save(model, tok, opt, state, out)
        save_checkpoint(model, tok, out / f"epoch{state['epoch']:03d}")
        last_save = time.time()
    print("done")


def _save(model, tok, opt, state, out: Path) -> None:
    tmp = out / "last.tmp"
    save_checkpoint(model, tok, tmp)
    save_state(tmp, model, opt, state)
    last = out / "last"
    if last.exists():
        old = out / "last.old"
        if old.exists():
            import shutil
            shutil.rmtree(old)
        last.replace(old)
    tmp.replace(last)
