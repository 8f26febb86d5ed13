"""Where and how one training step runs, shared by the toy tasks and translation: one device or one rank
of N under torchrun (DistributedDataParallel), the paper's learning-rate schedule, one optimizer step with
label smoothing, sums over ranks, and the clock that stops a run (--max-minutes).

On CUDA the forward pass runs under bf16 autocast while the weights and Adam's moments stay float32.
Under torchrun every rank builds the same global batches and takes its shard; the loss is scaled so
that N ranks take exactly the step one process would take on the whole batch (train_step). Only rank
0 logs and saves.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from model.io.device import pick_device
from model.io.tokenizer import PAD_ID
from model.nn.transformer import Transformer


def lr_at(step: int, peak: float, warmup: int) -> float:
    """Linear warmup to `peak`, then decay with 1/sqrt(step) (the paper's schedule, rescaled)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


# -- where this process trains: one device, perhaps one rank of N under torchrun ------------------
@dataclass
class Runtime:
    device: torch.device
    rank: int = 0
    world: int = 1

    @property
    def main(self) -> bool:                      # only rank 0 logs and saves
        return self.rank == 0

    def autocast(self):
        """bf16 matmuls on CUDA (weights stay float32); on the CPU float32 as always."""
        return torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.device.type == "cuda")

    def shard(self, items: list) -> list:        # this rank's share of a global batch
        return items[self.rank::self.world]


def start_runtime(device: str | None = None) -> Runtime:
    """One process, or under torchrun (WORLD_SIZE > 1) one rank: joins the process group, NCCL on
    GPUs (one per LOCAL_RANK) and gloo on CPUs."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    chosen = pick_device(device)
    if world == 1:
        return Runtime(chosen)
    rank = int(os.environ["RANK"])
    if chosen.type == "cuda":
        chosen = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(chosen)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if chosen.type == "cuda" else "gloo")
    return Runtime(chosen, rank, world)


def stop_runtime(rt: Runtime) -> None:
    if rt.world > 1 and dist.is_initialized():
        dist.destroy_process_group()


def wrap(model: Transformer, rt: Runtime) -> torch.nn.Module:
    """DistributedDataParallel when there are several ranks (it all-reduces gradients in backward)."""
    if rt.world == 1:
        return model
    return DistributedDataParallel(model, device_ids=[rt.device.index] if rt.device.type == "cuda" else None)


def paper_adam(model: torch.nn.Module, lr: float) -> torch.optim.Adam:
    """The paper's Adam (β 0.9, 0.98, ε 1e-9); fused into one kernel on CUDA, where a small model's step is
    otherwise dozens of launches."""
    on_cuda = next(model.parameters()).device.type == "cuda"
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9, fused=on_cuda or None)


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A batch tensor on the device. On CUDA through pinned memory: a copy from pageable memory would wait for
    the GPU to finish the previous step, so the Python loop and the GPU would take turns instead of overlapping."""
    if device.type == "cuda" and t.device.type == "cpu":
        t = t.pin_memory()
    return t.to(device, non_blocking=True)


def train_step(model, opt, src, tgt_in, tgt_out, n_targets: int, rt: Runtime, smoothing: float,
               clip: float | None = None) -> torch.Tensor:
    """One optimizer step on this rank's shard; returns the shard's summed loss (a tensor: no sync).

    The loss is a sum over the shard's target tokens divided by n_targets, the whole global batch's
    count, times world (DDP averages gradients over ranks): so every rank, and one process given the
    whole batch, takes the same step however unevenly tokens fall into shards.
    """
    src, tgt_in, tgt_out = (to_device(t, rt.device) for t in (src, tgt_in, tgt_out))
    with rt.autocast():
        logits = model(src, tgt_in)                                          # [B,T,V]
    loss_sum = F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID,
                               label_smoothing=smoothing, reduction="sum")
    opt.zero_grad(set_to_none=True)
    (loss_sum * (rt.world / n_targets)).backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return loss_sum.detach()


def global_sum(value: torch.Tensor, rt: Runtime) -> float:
    """A sum over ranks (every rank must call it at the same step)."""
    if rt.world > 1:
        value = value.clone()
        dist.all_reduce(value)
    return float(value)


def out_of_time(started: float, max_minutes: float | None, rt: Runtime) -> bool:
    """Whether this call's time is up (--max-minutes: a GPU lease or a CI job ends, --resume goes on).
    Rank 0's clock decides for every rank, so all stop at the same step."""
    if max_minutes is None:
        return False
    late = torch.tensor(float(time.time() - started > max_minutes * 60), device=rt.device)
    if rt.world > 1:
        dist.broadcast(late, src=0)
    return bool(late)
