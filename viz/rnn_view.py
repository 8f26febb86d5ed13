"""The RNN encoder-decoders' accuracy by input length, in a reader's language: one chart for the "Before the
Transformer" page (the shipped models' measured numbers), the training page (models trained live) and the tour
(and so the offline lesson). No Streamlit here: words come through `say` (catalogue key -> text)."""
from __future__ import annotations

from typing import Callable

import plotly.graph_objects as go

from viz.figures.rnn import accuracy_by_length_figure
from viz.figures.style import NORMAL, TypeScale

# Catalogue keys (viz/locales), written out so that a test finds every key in use.
RNN_MODEL_KEYS = {"none": "rnn.model.none", "additive": "rnn.model.additive", "dot": "rnn.model.dot",
                  "general": "rnn.model.general"}
RNN_SCORE_KEYS = {"additive": "rnn.score.additive", "dot": "rnn.score.dot", "general": "rnn.score.general"}


def model_name(attention: str, say: Callable[[str], str]) -> str:
    return say(RNN_MODEL_KEYS[attention])


def accuracy_chart(tables: dict[str, dict], trained: tuple[int, int], say: Callable[[str], str],
                   marked: int | None = None, title: str = "", type_scale: TypeScale = NORMAL) -> go.Figure:
    """tables: {attention: {length: {"exact": 0-1, ...}}} (lengths as ints or, read from JSON, strings)."""
    lengths = sorted(int(n) for n in next(iter(tables.values())))
    curves = {model_name(a, say): [_at(table, n)["exact"] for n in lengths] for a, table in tables.items()}
    return accuracy_by_length_figure(lengths, curves, trained, marked, title=title, x_title=say("rnn.acc.x"),
                                     y_title=say("rnn.acc.y"), trained_label=say("rnn.acc.trained"),
                                     hover_length=say("rnn.acc.hover_length"),
                                     hover_accuracy=say("rnn.acc.hover_accuracy"),
                                     emphasis=model_name("none", say) if "none" in tables else None,
                                     type_scale=type_scale)


def _at(table: dict, length: int) -> dict:
    return table[length] if length in table else table[str(length)]

