"""The toy reverse task: learned quickly, and its cross-attention is the anti-diagonal."""
import random

import numpy as np

from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence
from model.io.tokenizer import Tokenizer
from model.training.toy import sequence_accuracy, train_toy


def anti_diagonal_argmax(bundle, text):
    trace = trace_sentence(bundle, text)
    n_layers = bundle.config.n_decoder_layers
    mean = trace[f"decoder.layers.{n_layers - 1}.cross_attn.hook_pattern"].mean(0)   # [T,S]
    n = len(text.split())
    return mean.argmax(-1)[:n], np.arange(n)[::-1]


def test_reverse_trains_past_99_percent():
    result = train_toy("reverse", seed=0)               # its time is a benchmark's business (README: minutes)
    assert sequence_accuracy(result.model, "reverse", 1000, seed=7) > 0.99


def test_shipped_reverse_model_attends_anti_diagonally():
    bundle = load_checkpoint("pretrained/toy-reverse")
    assert sequence_accuracy(bundle.model, "reverse", 1000, seed=5) > 0.99
    for text in ("a c e g i b d", "j i h g f"):
        got, expected = anti_diagonal_argmax(bundle, text)
        np.testing.assert_array_equal(got, expected)
    rng, hits, total = random.Random(3), 0, 0           # over many inputs: ~97% of rows (ties on short ones)
    for _ in range(60):
        text = " ".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 8)))
        got, expected = anti_diagonal_argmax(bundle, text)
        hits, total = hits + int((got == expected).sum()), total + len(got)
    assert hits / total > 0.9


def test_byte_level_tokenizer_never_needs_unk():
    tok = Tokenizer.train_bpe(["the house", "la casa"] * 20, vocab_size=300)
    for text in ("😀 你好 مرحبا", "zero\u200bwidth", "<img src=x onerror=alert(1)>", "\x07bell"):
        ids = tok.encode(text)
        assert tok.decode(ids) == text.strip()
        assert len(tok.token_strings(ids)) == len(ids)
