"""The en-es translation trainer, as in the paper, scaled down: Adam, warmup then inverse-sqrt learning
rate, label smoothing, dropout; token-bucketed batches; checkpoint, --max-minutes and resume; a start from
a shipped model's weights (--init-from), its vocabulary grown to the data's (style tokens).

    python -m model.cli train --task translate --data data/en-es --out runs/en-es [--resume] [--device cuda]
    torchrun --nproc_per_node 4 -m model.cli train --task translate ...      # DistributedDataParallel

The step, the ranks and the clock: model/training/runtime.py; the toy tasks: model/training/toy.py.
"""
from __future__ import annotations

import csv
import json
import random
import time
from pathlib import Path

import math

import torch
import torch.nn.functional as F
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from model.io.checkpoint import save_checkpoint
from model.io.files import MiB, check_regular_file, read_text_limited
from model.inference.decode import pad_batch
from model.io.tokenizer import BOS_ID, PAD_ID, Tokenizer
from model.nn.config import TransformerConfig
from model.nn.transformer import Transformer
from model.training.runtime import (Runtime, global_sum, lr_at, out_of_time, paper_adam, start_runtime,
                                    stop_runtime, train_step, wrap)


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
    batches: list[list[int]] = []
    batch: list[int] = []
    width = 0
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


def collate(data, idx) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    src = pad_batch([data[i][0] for i in idx])
    tgt_in = pad_batch([[BOS_ID] + data[i][1][:-1] for i in idx])
    tgt_out = pad_batch([data[i][1] for i in idx])
    return src, tgt_in, tgt_out


@torch.no_grad()
def evaluate_loss(model, data, max_tokens: int, rt: Runtime | None = None) -> float:
    rt = rt or Runtime(model.device)
    model.eval()
    total, count = 0.0, 0
    for idx in token_batches(data, max_tokens, random.Random(0)):
        src, tgt_in, tgt_out = (t.to(rt.device) for t in collate(data, idx))
        with rt.autocast():
            logits = model(src, tgt_in)                                      # [B,T,V]
        total += float(F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID,
                                       reduction="sum"))
        count += int((tgt_out != PAD_ID).sum())
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
            moments[f"{names[i]}.exp_avg"] = s["exp_avg"].cpu().contiguous()
            moments[f"{names[i]}.exp_avg_sq"] = s["exp_avg_sq"].cpu().contiguous()
    save_file(moments, str(folder / "optimizer.safetensors.tmp"))
    (folder / "optimizer.safetensors.tmp").replace(folder / "optimizer.safetensors")
    (folder / "state.json").write_text(json.dumps(state, indent=2))


MAX_STATE_BYTES = 64 * 1024          # state.json: five counters, a hundred bytes
STATE_COUNTERS = ("step", "epoch", "batch", "tokens")


def read_state(folder: Path) -> dict:
    """state.json's counters, each checked: ValueError naming the file for anything but a small JSON object of
    whole numbers (and seconds), a regular file inside the run folder (folder's parent: no linked last/)."""
    path = folder / "state.json"
    try:
        state = json.loads(read_text_limited(path, MAX_STATE_BYTES, "a few counters", within=folder.parent))
    except FileNotFoundError:
        raise ValueError(f"{path}: missing, so there is nothing to resume") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: not valid JSON ({str(e)[:120]})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: not a JSON object of counters")
    for key in STATE_COUNTERS:
        value = state.get(key, 0)
        if type(value) is not int or not 0 <= value < 10 ** 15:
            raise ValueError(f"{path}: \"{key}\" must be a whole number from 0, got {str(value)[:40]!r}")
    seconds = state.get("seconds", 0.0)
    if type(seconds) not in (int, float) or not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{path}: \"seconds\" must be a number from 0, got {str(seconds)[:40]!r}")
    return state


def read_moments(folder: Path, model) -> dict[str, torch.Tensor]:
    """optimizer.safetensors: Adam's two moments of each parameter, at most 8 bytes a parameter (two float32) and
    each of its parameter's shape, inside the run folder; ValueError naming the file else (missing, linked, cut off,
    mismatched)."""
    path = folder / "optimizer.safetensors"
    params = dict(model.named_parameters())
    try:
        check_regular_file(path, 8 * sum(p.numel() for p in params.values()) + MiB, "two moments a parameter",
                           within=folder.parent)
        moments = load_file(str(path))
    except FileNotFoundError:
        raise ValueError(f"{path}: missing, so there is nothing to resume") from None
    except (SafetensorError, RuntimeError) as e:
        raise ValueError(f"{path}: corrupt or cut off ({str(e)[:120]}); not resumed") from None
    for key, tensor in moments.items():
        name = key.removesuffix(".exp_avg_sq").removesuffix(".exp_avg")
        if name not in params or tensor.shape != params[name].shape:
            raise ValueError(f"{path}: {key} does not match the model in {folder}; not resumed")
    return moments


def load_state(folder: Path, model, opt) -> dict:
    moments = read_moments(folder, model)
    state = read_state(folder)
    for name, p in model.named_parameters():
        if f"{name}.exp_avg" in moments:
            # fused Adam keeps its step count on the parameter's device, the plain one on the CPU
            step_device = p.device if opt.defaults.get("fused") else "cpu"
            opt.state[p] = {"step": torch.tensor(float(state["step"]), device=step_device),
                            "exp_avg": moments[f"{name}.exp_avg"].to(p.device),
                            "exp_avg_sq": moments[f"{name}.exp_avg_sq"].to(p.device)}
    return state


def resume_point(out: Path) -> Path | None:
    """--resume: OUT/last to go on from, or None when OUT holds no run yet (a sweep resumes from its first call).
    ValueError when OUT holds an earlier run (its train_log.csv) but nothing to resume: starting anew there
    would overwrite that run's log without a word."""
    last = out / "last"
    if last.exists() or last.is_symlink():
        read_state(last)                              # a FIFO, a link, a huge or broken state.json: said now
        return last
    if (out / "train_log.csv").exists():
        raise ValueError(f"--resume: {last} is missing, so there is nothing to resume, and {out} holds an earlier "
                         "run's train_log.csv; drop --resume to start anew there, or give another --out")
    return None


def train_translation(args) -> None:
    """The en-es trainer behind `python -m model.cli train --task translate` (arguments: model/cli/train.py)."""
    rt = start_runtime(args.device)
    torch.set_num_threads(args.threads)
    try:
        _train_translation(args, rt)
    finally:
        stop_runtime(rt)


def _start_model(args, rt: Runtime, out: Path):
    """(model, tokenizer, optimizer, state): resumed from out/last, started from --init-from's weights
    with a fresh optimizer, or new. A resumed or initialised run keeps the vocabulary of its weights."""
    from model.io.checkpoint import load_checkpoint

    last = out / "last"
    say = print if rt.main else (lambda *a: None)
    fresh = {"step": 0, "epoch": 0, "batch": 0, "seconds": 0.0, "tokens": 0}
    if args.resume and resume_point(out) is not None:
        bundle = load_checkpoint(last, device=str(rt.device))
        opt = paper_adam(bundle.model, args.lr)
        state = load_state(last, bundle.model, opt)
        say(f"resumed at step {state['step']} (epoch {state['epoch']}, batch {state['batch']})")
        return bundle.model, bundle.tokenizer, opt, state
    if args.init_from:
        bundle = load_checkpoint(args.init_from, device=str(rt.device))
        say(f"starting from the weights of {args.init_from} (its config and tokenizer), fresh optimizer")
        model, tok = extend_vocab(bundle.model, bundle.tokenizer, Path(args.data) / "tokenizer.json", say)
    else:
        tok = Tokenizer.load(Path(args.data) / "tokenizer.json")
        cfg = TransformerConfig(vocab_size=tok.vocab_size, d_model=args.d_model, n_heads=args.heads,
                                n_encoder_layers=args.layers, n_decoder_layers=args.layers, d_ff=args.d_ff,
                                dropout=args.dropout, max_len=512)
        torch.manual_seed(args.seed)
        model = Transformer(cfg).to(rt.device)
    if rt.main:
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "train_log.csv", "w", newline="") as f:
            csv.writer(f).writerow(["step", "epoch", "train_loss", "dev_loss", "lr", "tokens_per_s"])
    return model, tok, paper_adam(model, args.lr), fresh


def extend_vocab(model: Transformer, tok: Tokenizer, data_tokenizer: Path, say=print):
    """The model and tokenizer to train: grown to the data folder's tokenizer when that one is this
    vocabulary plus new tokens (style tokens: `python -m model.cli data --mix`), else as they are."""
    data_kind = tokenizer_kind(Tokenizer.load(data_tokenizer)) if data_tokenizer.is_file() else "BPE"
    if tokenizer_kind(tok) != data_kind:
        raise ValueError(f"--init-from: its tokenizer is {tokenizer_kind(tok)}, the corpus's ({data_tokenizer}) is "
                         f"{data_kind}; start from a model whose tokenizer reads this corpus")
    if not data_tokenizer.is_file():
        return model, tok
    wanted = Tokenizer.load(data_tokenizer)
    old = tok.backend.get_vocab()
    if wanted.vocab_size <= tok.vocab_size or any(wanted.backend.token_to_id(t) != i for t, i in old.items()):
        return model, tok
    say(f"vocabulary grown from {tok.vocab_size} to {wanted.vocab_size} ({data_tokenizer})")
    return model.with_vocab(wanted.vocab_size), wanted


def tokenizer_kind(tok: Tokenizer) -> str:
    """'BPE' (the translation corpora's) or 'WordLevel' (a toy task's symbols)."""
    return type(tok.backend.model).__name__


def _train_translation(args, rt: Runtime) -> None:
    data_dir, out = Path(args.data), Path(args.out)
    model, tok, opt, state = _start_model(args, rt, out)
    train = encode_pairs(tok, read_pairs(data_dir / "train.tsv"), args.max_len)
    dev = encode_pairs(tok, read_pairs(data_dir / "dev.tsv"), args.max_len)
    if rt.main:
        print(f"{model.num_parameters():,} parameters; {len(train):,} train / {len(dev):,} dev pairs; "
              f"{rt.world} × {rt.device}{' (bf16 autocast)' if rt.device.type == 'cuda' else ''}")
    model.train()
    ddp = wrap(model, rt)
    started = last_save = time.time()
    while state["epoch"] < args.epochs:
        batches = token_batches(train, args.max_tokens, random.Random(args.seed + state["epoch"]))
        bar = tqdm(total=len(batches), initial=state["batch"], desc=f"epoch {state['epoch'] + 1}", disable=not rt.main)
        window_loss, window_targets, window_tokens, t0 = torch.zeros((), device=rt.device), 0, 0, time.perf_counter()
        for b in range(state["batch"], len(batches)):
            state["batch"] = b + 1
            bar.update(1)
            if len(batches[b]) < rt.world:          # too few pairs to give every rank one
                continue
            state["step"] += 1
            lr = lr_at(state["step"], args.lr, args.warmup)
            for group in opt.param_groups:
                group["lr"] = lr
            n_targets = sum(len(train[i][1]) for i in batches[b])             # the global batch's
            window_loss += train_step(ddp, opt, *collate(train, rt.shard(batches[b])), n_targets, rt,
                                      args.smoothing, clip=1.0)
            n_tok = n_targets + sum(len(train[i][0]) for i in batches[b])
            window_targets += n_targets
            window_tokens += n_tok
            state["tokens"] += n_tok
            if state["step"] % args.log_every == 0:
                loss = global_sum(window_loss, rt) / window_targets          # waits for the device
                dt = time.perf_counter() - t0
                state["seconds"] += dt
                if rt.main:
                    _log(out, state, loss, model, dev, args, rt, lr, window_tokens / dt)
                    bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{window_tokens / dt:.0f}")
                window_loss.zero_()
                window_targets, window_tokens, t0 = 0, 0, time.perf_counter()
                if out_of_time(started, args.max_minutes, rt):
                    if rt.main:
                        _save(model, tok, opt, state, out)
                        print(f"stopped after {args.max_minutes} minutes at step {state['step']}: go on with --resume")
                    bar.close()
                    return
            if rt.main and time.time() - last_save > args.save_minutes * 60:
                _save(model, tok, opt, state, out)
                last_save = time.time()
        bar.close()
        state["epoch"] += 1
        state["batch"] = 0
        if rt.main:
            _save(model, tok, opt, state, out)
            save_checkpoint(model, tok, out / f"epoch{state['epoch']:03d}")
        last_save = time.time()
    if rt.main:
        print("done")


def _log(out: Path, state: dict, loss: float, model, dev, args, rt: Runtime, lr: float, tokens_per_s: float) -> None:
    """One row of train_log.csv; the dev loss every eval_every steps (rank 0 alone, on the bare model)."""
    dev_loss = evaluate_loss(model, dev, args.max_tokens, rt) if state["step"] % args.eval_every == 0 else None
    with open(out / "train_log.csv", "a", newline="") as f:
        csv.writer(f).writerow([state["step"], state["epoch"] + 1, f"{loss:.4f}",
                                "" if dev_loss is None else f"{dev_loss:.4f}", f"{lr:.6f}", f"{tokens_per_s:.0f}"])


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
