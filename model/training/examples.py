"""Example sentences chosen by measuring, not by guessing: what the model translates well (held-out
verses and everyday sentences with the best sentence chrF) and everyday sentences where a class can watch
it struggle (the lowest confidence per token, or a word repeated three times in a row). Nothing the word
list forbids is suggested (model/training/wordlist.py). A two-style model reads verses as <bible> and
everyday sentences as <modern>."""
from __future__ import annotations

import re
from dataclasses import dataclass

import sacrebleu
import torch

from model.inference.pipeline import encode_text, generate
from model.io.checkpoint import Bundle
from model.training.wordlist import is_clean

@dataclass
class Measured:
    source: str
    output: str
    confidence: float        # mean probability of the tokens it chose (greedy)
    repeats: bool            # a word three times in a row, e.g. "ley ley ley"
    chrf: float | None       # sentence chrF against a reference, when one is given


def repeats_a_word(text: str) -> bool:
    words = re.findall(r"\w+", text.lower())
    return any(words[i] == words[i + 1] == words[i + 2] for i in range(len(words) - 2))


@torch.no_grad()
def measure(bundle: Bundle, source: str, reference: str | None = None, style: str | None = None) -> Measured:
    model, cfg = bundle.model, bundle.config
    src = encode_text(bundle, bundle.tokenizer.styled(source, style)).ids
    out = generate(bundle, src)
    tgt_in = torch.tensor([[cfg.bos_id] + out[:-1]], device=model.device)
    probs = model(torch.tensor([src], device=model.device), tgt_in).softmax(-1)[0]      # [T,V]
    chosen = probs[torch.arange(len(out)), torch.tensor(out)]                          # [T]
    output = bundle.tokenizer.decode(out)
    chrf = sacrebleu.sentence_chrf(output, [reference]).score if reference is not None else None
    return Measured(source, output, float(chosen.mean()), repeats_a_word(output), chrf)


def _chrf(m: Measured) -> float:
    assert m.chrf is not None, f"no reference for {m.source!r}"      # ranked by chrF: measured against one
    return m.chrf


def choose(measured_well: list[Measured], measured_everyday: list[Measured], n: int = 6) -> dict[str, list[Measured]]:
    """The n everyday sentences with the best chrF (when they have references), the n held-out verses with
    the best chrF, and the n everyday ones that go worst (repeats first, then the lowest confidence); a
    sentence the word list forbids is never chosen, and none is in two groups."""
    measured_well = [m for m in measured_well if is_clean(m.source) and is_clean(m.output)]
    measured_everyday = [m for m in measured_everyday if is_clean(m.source) and is_clean(m.output)]
    with_ref = [m for m in measured_everyday if m.chrf is not None]
    everyday = sorted(with_ref, key=lambda m: (m.repeats, -_chrf(m)))[:n]
    rest = [m for m in measured_everyday if m not in everyday]
    well = sorted(measured_well, key=lambda m: -_chrf(m))[:n]
    struggles = sorted(rest, key=lambda m: (not m.repeats, m.confidence))[:n]
    return {"everyday": everyday, "well": well, "struggles": struggles} if everyday else \
        {"well": well, "struggles": struggles}


def presets_text(chosen: dict[str, list[Measured]], start: str | None = None) -> str:
    """presets.txt: '# group' lines, then one sentence a line (what viz/services/presets.preset_groups reads);
    `start`, the app's default sentence, comes first."""
    lines = ["# Chosen by `python -m model.cli examples`: measured on this model, not guessed."]
    if start:
        lines += ["# start", start]
    for group, items in chosen.items():
        lines.append(f"# {group}")
        lines += [m.source for m in items]
    return "\n".join(lines) + "\n"
