"""The RNN encoder-decoders' accuracy by input length, in a reader's language: one chart for the "Before the
Transformer" page (the shipped models' measured numbers), the training page (models trained live) and the tour
(and so the offline lesson). No Streamlit here: words and sizes come as the figures' `look` (viz.figures.style.Look)."""
from __future__ import annotations

import plotly.graph_objects as go

from viz.core.i18n import catalogue_keys
from viz.figures.rnn import accuracy_by_length_figure
from viz.figures.style import Look, Words

# Catalogue keys (viz/locales), written out so that a test finds every key in use.
RNN_MODEL_KEYS = catalogue_keys("rnn.model", "none", "additive", "dot", "general")
RNN_SCORE_KEYS = catalogue_keys("rnn.score", "additive", "dot", "general")


def model_name(attention: str, words: Words) -> str:
    return words(RNN_MODEL_KEYS[attention])


RNN_AXES = {"fig.attention.query": "rnn.fig.output", "fig.attention.y": "rnn.fig.output",
            "fig.attention.key": "rnn.fig.input", "fig.attention.x": "rnn.fig.input"}


class RnnWords:
    """The reader's words with the attention maps' query and key named as an RNN's: output step and input."""

    def __init__(self, words: Words):
        self.words = words

    def __call__(self, key: str, **fields) -> str:
        key = RNN_AXES.get(key, key)
        return self.words(key, **fields)

    def kind(self, kind: str) -> str:
        return self.words.kind(kind)


def rnn_look(look: Look) -> Look:
    """The look with its words naming the attention maps' query and key as an RNN's (RnnWords), its scale kept."""
    return Look(RnnWords(look.words), look.scale)


def accuracy_chart(tables: dict[str, dict], trained: tuple[int, int], look: Look,
                   marked: int | None = None, title: str = "") -> go.Figure:
    """tables: {attention: {length: {"exact": 0-1, ...}}} (lengths as ints or, read from JSON, strings)."""
    lengths = sorted(int(n) for n in next(iter(tables.values())))
    curves = {model_name(a, look.words): [_at(table, n)["exact"] for n in lengths] for a, table in tables.items()}
    return accuracy_by_length_figure(lengths, curves, trained, look, marked, title=title,
                                     emphasis=model_name("none", look.words) if "none" in tables else None)


def _at(table: dict, length: int) -> dict:
    return table[length] if length in table else table[str(length)]

