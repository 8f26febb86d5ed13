"""The class's questions about the sentence on screen: model/analysis/questions.py reads the answer from the real
trace; here each becomes a store.Question with the view that proves it (no Streamlit here).

A question's words are catalogue keys: class.q.<kind> with its fields, read by each student in their language.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from model.analysis import questions as maths
from model.capture import schema
from viz.classroom.store import Question

class KindKeys(NamedTuple):
    """A kind of question's words: its name in the teacher's picker, and the question students read."""
    name: str
    prompt: str


KINDS = {"cross_look": KindKeys("class.kind.cross_look", "class.q.cross_look"),
         "next_token": KindKeys("class.kind.next_token", "class.q.next_token"),
         "positional_head": KindKeys("class.kind.positional_head", "class.q.positional_head")}
HEAD_CHOICES = {"positional_head"}          # choices that are head numbers (the UI names them "head 3")


def prompt_key(question: Question) -> str:
    return KINDS[question.key].prompt


def _question(quiz: maths.Quiz, page: str, query: dict) -> Question:
    return Question(quiz.key, dict(quiz.fields), quiz.choices, quiz.answer, page, {k: str(v) for k, v in query.items()})


def cross_look(trace, sentence: dict, layer: int, head: int, target: int) -> Question:
    """Which source token cross-attention head `head` of `layer` reads most when writing target token `target`;
    the proof: that head on the explorer. sentence: the view's model/sentence values, kept in the proof's link."""
    quiz = maths.cross_look(trace[schema.pattern_name("cross", layer)], trace.meta["src_tokens"],
                            schema.query_tokens(trace.meta, "cross"), layer, head, target)
    return _question(quiz, "explorer", {**sentence, "kind": "cross", "layer": layer, "head": head})


def next_token(trace, sentence: dict, label_of: Callable[[list[int]], list[str]], step: int) -> Question:
    """Which token the decoder writes at `step` (its top prediction, given the tokens before); the proof: that
    step of the decoding page."""
    written = schema.query_tokens(trace.meta, "cross")[:step]
    quiz = maths.next_token(trace[schema.LOGITS][step], label_of, written, step)
    return _question(quiz, "decoding", {**sentence, "method": "greedy", "step": step})


def positional_head(trace, sentence: dict, layer: int) -> Question:
    """Which head of encoder layer `layer` attends to its neighbour; the proof: that head on the explorer."""
    quiz = maths.positional_head(trace[schema.pattern_name("encoder", layer)], trace.meta["src_tokens"], layer)
    return _question(quiz, "explorer", {**sentence, "kind": "encoder", "layer": layer, "head": quiz.answer})


def default_target(trace, layer: int, head: int) -> int:
    """The target position whose cross-attention row in that head is the sharpest (a clear answer)."""
    return maths.sharpest_row(trace[schema.pattern_name("cross", layer)][head])


def clearest_previous_layer(trace) -> int:
    """The encoder layer whose previous-token head is the clearest (the positional question's first layer)."""
    patterns = schema.stacked(trace, "encoder")
    best = [maths.previous_scores(layer_patterns, trace.meta["src_tokens"], layer).max()
            for layer, layer_patterns in enumerate(patterns)]
    return int(np.argmax(best))
