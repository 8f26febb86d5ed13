"""BLEU and chrF (sacrebleu, detokenised output) on a held-out TSV; the command (model/cli/evaluate.py)
writes them to the model's metrics.json.

    python -m model.cli evaluate --test pretrained/en-es/test.tsv
"""
from __future__ import annotations

from pathlib import Path

import sacrebleu

CORPUS_SPLITS = ("train.tsv", "dev.tsv", "test.tsv")


def set_style(path: str | Path) -> str | None:
    """The Spanish a test set's references are written in, so a two-style model is scored in it: an everyday
    set (a file or folder named so: everyday_test.tsv, data/everyday/test.tsv, docs/examples/everyday.tsv) is
    modern; a split of the Bible corpus (data/en-es/test.tsv, the copy shipped as pretrained/en-es/test.tsv)
    the 1909 Bible's; any other file None (the model's default). A source that starts with its own style
    token (data/mix) keeps it."""
    path = Path(path)
    if any("everyday" in part.lower() for part in path.parts[-2:]):
        return "modern"
    return "bible" if path.name in CORPUS_SPLITS else None



def score(hypotheses: list[str], references: list[str]) -> dict:
    bleu, chrf = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
    return {"bleu": round(bleu.corpus_score(hypotheses, [references]).score, 2),
            "chrf": round(chrf.corpus_score(hypotheses, [references]).score, 2),
            "bleu_signature": str(bleu.get_signature()), "chrf_signature": str(chrf.get_signature())}
