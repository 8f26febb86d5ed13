"""BLEU and chrF (sacrebleu, detokenised output) on a held-out TSV; the command (model/cli/evaluate.py)
writes them to the model's metrics.json.

    python -m model.cli evaluate --model pretrained/en-es --test pretrained/en-es/test.tsv
"""
from __future__ import annotations


import sacrebleu



def score(hypotheses: list[str], references: list[str]) -> dict:
    bleu, chrf = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
    return {"bleu": round(bleu.corpus_score(hypotheses, [references]).score, 2),
            "chrf": round(chrf.corpus_score(hypotheses, [references]).score, 2),
            "bleu_signature": str(bleu.get_signature()), "chrf_signature": str(chrf.get_signature())}
