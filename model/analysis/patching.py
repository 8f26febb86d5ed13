"""Activation patching (causal tracing): which activations carry the difference between two inputs?

Run a clean source and a corrupted one (same number of tokens, e.g. one word swapped) with the same
output prefix. Then rerun the corrupted source with one activation copied in from the clean run:
a layer's output (hook_resid_post) at one position, or one head's output (hook_z) at every position.
The share of the clean-vs-corrupted logit difference that this single copy restores,

    restored = (m_patched - m_corrupted) / (m_clean - m_corrupted),   m = logit(chosen) - logit(alternative),

is 1 where that activation alone carries everything the corruption changed, and 0 where it carries
nothing. Every patch is one row of one batched forward, injected with `capture(edits=...)`: the shared
model is never changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from model.analysis.attribution import as_batch, decoder_states, logit_difference, model_of
from model.capture import schema
from model.capture.hooks import capture

MAX_ROWS = 128                     # patched runs per forward
Site = tuple[str, int]             # (hook name, index on dim 1: a position of resid_post, a head of hook_z)


@dataclass
class Patching:
    encoder: np.ndarray            # [L_enc,S] restored share, encoder layer output patched at one source position
    decoder: np.ndarray            # [L_dec,T] decoder layer output patched at one decoder position
    heads: dict[str, np.ndarray]   # kind -> [L,H] one head's output patched at every position
    clean: float                   # m on the clean source
    corrupted: float               # m on the corrupted source
    chosen: int
    alternative: int


def check_equal_length(clean_ids: Sequence[int], corrupted_ids: Sequence[int]) -> None:
    if len(clean_ids) != len(corrupted_ids):
        raise ValueError(f"the clean source has {len(clean_ids)} tokens and the corrupted one {len(corrupted_ids)}: "
                         "patching copies activations position by position, so both need the same number of tokens")


def resid_sites(config, stack: str, n_positions: int) -> list[Site]:
    return [(schema.resid_name(stack, layer, "resid_post"), pos)
            for layer in range(schema.n_layers(config, stack)) for pos in range(n_positions)]


def head_sites(config, kind: str) -> list[Site]:
    return [(schema.z_name(kind, layer), head)
            for layer in range(schema.n_layers(config, kind)) for head in range(config.n_heads)]


class PatchRun:
    """A clean and a corrupted source with one output prefix; measures m with any group of sites patched."""

    def __init__(self, bundle_or_model, clean_ids, corrupted_ids, prefix_ids, chosen: int,
                 alternative: int | None = None):
        check_equal_length(clean_ids, corrupted_ids)
        self.model = model_of(bundle_or_model)
        self.corrupted_ids = list(corrupted_ids)
        self.tgt_in = [self.model.cfg.bos_id] + [int(t) for t in prefix_ids]
        clean_logits, self.clean_values = self._clean_run(clean_ids)
        corrupted_logits = self._logits(self._rows(1), {})[0]                    # [V]
        self.chosen = int(chosen)
        self.alternative = self._default_alternative(corrupted_logits) if alternative is None else int(alternative)
        self.clean = float(logit_difference(clean_logits, self.chosen, self.alternative))
        self.corrupted = float(logit_difference(corrupted_logits, self.chosen, self.alternative))

    @torch.no_grad()
    def _clean_run(self, clean_ids):
        names = [n for n, _ in resid_sites(self.model.cfg, "encoder", 1) + resid_sites(self.model.cfg, "decoder", 1)]
        names += [n for kind in schema.KINDS for n, _ in head_sites(self.model.cfg, kind)]
        with capture(names=sorted(set(names))) as trace:
            logits = self._last_logits(as_batch(clean_ids, self.model), as_batch(self.tgt_in, self.model))
        values = {n: torch.from_numpy(trace[n]).to(self.model.device) for n in trace.names()}   # [S|T,D] or [H,T,Dh]
        return logits[0], values

    def _default_alternative(self, corrupted_logits: torch.Tensor) -> int:
        """The corrupted run's favourite, or its runner-up when that is the chosen token itself."""
        top2 = corrupted_logits.topk(2).indices.tolist()
        return top2[1] if top2[0] == self.chosen else top2[0]

    def _last_logits(self, src, tgt_in) -> torch.Tensor:                        # -> [B,V]
        return self.model.generator.proj(decoder_states(self.model, src, tgt_in)[:, -1])

    def _rows(self, n: int):
        return as_batch(self.corrupted_ids, self.model, n), as_batch(self.tgt_in, self.model, n)

    @torch.no_grad()
    def _logits(self, rows, edits) -> torch.Tensor:
        with capture(names=[], edits=edits):
            return self._last_logits(*rows)

    def metrics(self, groups: Sequence[Sequence[Site]]) -> np.ndarray:
        """[G] m of the corrupted run with each group of sites patched from the clean run (G rows at once)."""
        out = []
        for start in range(0, len(groups), MAX_ROWS):
            chunk = groups[start:start + MAX_ROWS]
            logits = self._logits(self._rows(len(chunk)), self._edits(chunk))   # [G,V]
            out.append(logit_difference(logits, self.chosen, self.alternative).cpu().numpy())
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)

    def restored(self, groups: Sequence[Sequence[Site]]) -> np.ndarray:
        """[G] (m_patched - m_corrupted) / (m_clean - m_corrupted); NaN when clean and corrupted agree."""
        gap = self.clean - self.corrupted
        if abs(gap) < 1e-6:
            return np.full(len(groups), np.nan)
        return (self.metrics(groups) - self.corrupted) / gap

    def _edits(self, groups) -> dict:
        by_hook: dict[str, tuple[list[int], list[int]]] = {}
        for row, group in enumerate(groups):
            for name, index in group:
                rows, indices = by_hook.setdefault(name, ([], []))
                rows.append(row)
                indices.append(int(index))
        return {name: _copy_in(self.clean_values[name], rows, indices) for name, (rows, indices) in by_hook.items()}


def _copy_in(clean: torch.Tensor, rows: list[int], indices: list[int]):
    """Edit: in batch row rows[i], entry indices[i] along dim 1 (a position or a head) becomes the clean one."""
    def edit(x: torch.Tensor) -> torch.Tensor:                                  # [B,S,D] or [B,H,T,Dh]
        x = x.clone()                                                           # never write into the model's value
        index = torch.tensor(indices, device=x.device)
        x[torch.tensor(rows, device=x.device), index] = clean[index]
        return x
    return edit


def activation_patching(bundle_or_model, clean_ids, corrupted_ids, prefix_ids, chosen: int,
                        alternative: int | None = None) -> Patching:
    """Restored share for every layer output x position and every head (see the module docstring).

    prefix_ids: output tokens before the step (the decoder reads <s> + prefix); chosen: the token whose
    logit difference against `alternative` is measured (default alternative: the corrupted run's top
    token, or its runner-up when that is `chosen`).
    """
    run = PatchRun(bundle_or_model, clean_ids, corrupted_ids, prefix_ids, chosen, alternative)
    cfg = run.model.cfg
    n_src, n_tgt = len(run.corrupted_ids), len(run.tgt_in)
    grids = {"encoder": resid_sites(cfg, "encoder", n_src), "decoder": resid_sites(cfg, "decoder", n_tgt)}
    grids.update({f"head:{kind}": head_sites(cfg, kind) for kind in schema.KINDS})
    sites = [site for grid in grids.values() for site in grid]
    shares = iter(run.restored([[site] for site in sites]))
    shaped = {key: np.array([next(shares) for _ in grid]) for key, grid in grids.items()}
    return Patching(encoder=shaped["encoder"].reshape(-1, n_src), decoder=shaped["decoder"].reshape(-1, n_tgt),
                    heads={kind: shaped[f"head:{kind}"].reshape(-1, cfg.n_heads) for kind in schema.KINDS},
                    clean=run.clean, corrupted=run.corrupted, chosen=run.chosen, alternative=run.alternative)
