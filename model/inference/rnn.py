"""One input through a GRU encoder-decoder (model/nn/rnn.py), greedily, as numpy for the pages: what it wrote,
and at every step the context it read and, with attention, the scores and weights over the input."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.io.tokenizer import Tokenizer
from model.nn.rnn import Seq2SeqRNN

EXTRA_STEPS = 4      # decode a few steps past the input's length, so a model that runs on shows it


@dataclass(frozen=True)
class RNNReading:
    attention: str
    src_tokens: list[str]         # the input's tokens, </s> last
    out_tokens: list[str]         # what the model wrote, up to and with its </s> (if it wrote one)
    output: str                   # out_tokens as text, without </s>
    context: np.ndarray           # [T,D] c_i of each output step
    scores: np.ndarray | None     # [T,S] e_ij (None without attention)
    weights: np.ndarray | None    # [T,S] a_ij, each row sums to 1


@torch.no_grad()
def read_input(model: Seq2SeqRNN, tokenizer: Tokenizer, text: str) -> RNNReading:
    src_ids = tokenizer.encode(text)
    ids, out = model.greedy(torch.tensor([src_ids], device=model.device), len(src_ids) + EXTRA_STEPS)
    wrote = ids[0].tolist()
    n = wrote.index(model.cfg.eos_id) + 1 if model.cfg.eos_id in wrote else len(wrote)
    as_numpy = lambda x: x[0, :n].double().cpu().numpy()                        # noqa: E731
    maybe = lambda x: None if x is None else as_numpy(x)                         # noqa: E731  (no attention)
    return RNNReading(model.cfg.attention, tokenizer.token_strings(src_ids), tokenizer.token_strings(wrote[:n]),
                      tokenizer.decode(wrote[:n]), as_numpy(out.context), maybe(out.scores), maybe(out.weights))
