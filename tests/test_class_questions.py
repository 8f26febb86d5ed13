"""The class's questions (model/analysis/questions.py, viz/classroom/questions.py) on a tiny model and on the
shipped en-es and the tally chart."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import ROOT, tiny_config
from model.analysis import questions as maths
from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import Bundle, load_checkpoint
from model.nn.transformer import Transformer
from model.training.tasks import toy_tokenizer
from viz.classroom import questions
from viz.classroom.store import MemoryStore
from viz.figures.style import PRESENTER, Look
from viz.figures.tally import tally_figure
from viz.core.i18n import words
from viz.core import view
from viz.core.view import View

SENTENCE = {"model": "en-es", "text": "The man went to the house."}


@pytest.fixture(scope="module")
def en_es_trace():
    bundle = load_checkpoint(ROOT / "pretrained" / "en-es", device="cpu")
    return bundle, trace_sentence(bundle, SENTENCE["text"])


@pytest.fixture(scope="module")
def tiny_trace():
    torch.manual_seed(0)
    cfg = tiny_config()
    bundle = Bundle(Transformer(cfg).eval(), toy_tokenizer(), cfg, Path("tiny"))
    return bundle, trace_sentence(bundle, "a b c d", target="d c b a")


def test_token_choices_tell_repeated_tokens_apart():
    assert maths.token_choices(["▁the", "▁man", "▁the", "."]) == ["the (0)", "man", "the (2)", "."]


def test_cross_look_offers_every_token_of_a_short_sentence_and_the_likeliest_of_a_long_one():
    """Eight choices from nine tokens left one out, which told students it was not the answer: a sentence of up to
    ALL_CHOICES_UP_TO tokens offers all; a longer one the MAX_CHOICES heaviest (the answer and the distractors the
    head itself finds likeliest: none left out is more plausible than one kept)."""
    for n in (9, maths.ALL_CHOICES_UP_TO):
        short = maths.cross_look(np.full((1, 1, n), 1 / n), [f"▁w{i}" for i in range(n)], ["▁a"], 0, 0, 0)
        assert len(short.choices) == n
    cross = np.zeros((2, 3, 16))
    cross[1, 2, 9] = 1.0
    cross[1, 2, :] += np.linspace(0, 0.5, 16)     # 15 is second heaviest, 14 third...
    src = [f"▁w{i}" for i in range(16)]
    quiz = maths.cross_look(cross, src, ["▁a", "▁b", "▁c"], layer=0, head=1, target=2)
    assert len(quiz.choices) == maths.MAX_CHOICES
    assert quiz.choices[quiz.answer] == "w9"
    kept = {int(c[1:]) for c in quiz.choices}
    assert min(cross[1, 2, sorted(kept)]) >= max(cross[1, 2, [i for i in range(16) if i not in kept]])
    assert list(quiz.choices) == sorted(quiz.choices, key=lambda c: int(c[1:]))   # sentence order
    with pytest.raises(ValueError):
        maths.cross_look(cross, src[:5], ["▁a", "▁b", "▁c"], 0, 1, 2)


def test_positional_head_finds_the_previous_token_head():
    n = 6
    spread = np.full((n, n), 1 / n)
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1.0
    quiz = maths.positional_head(np.stack([spread, previous, spread]), [f"t{i}" for i in range(n)], layer=1)
    assert quiz.choices == ("0", "1", "2") and quiz.answer == 1


def test_questions_on_a_tiny_model(tiny_trace):
    bundle, trace = tiny_trace
    for layer in range(2):
        for head in range(2):
            target = questions.default_target(trace, layer, head)
            asked = questions.cross_look(trace, {}, layer, head, target)
            weights = trace[schema.pattern_name("cross", layer)][head, target]
            assert asked.choices[asked.answer] == maths.token_choices(trace.meta["src_tokens"])[int(weights.argmax())]
            assert asked.page == "explorer" and asked.query["head"] == str(head)
    step = questions.next_token(trace, {}, bundle.tokenizer.token_strings, 1)
    assert len(step.choices) == 4 and 0 <= step.answer < 4


def test_next_token_question_agrees_with_the_models_translation(en_es_trace):
    """The trace is teacher-forced on the model's own greedy translation: its top prediction at every step is
    the token it wrote there."""
    bundle, trace = en_es_trace
    written = maths.token_choices(trace.meta["tgt_out_tokens"])
    for step in range(len(written)):
        asked = questions.next_token(trace, SENTENCE, bundle.tokenizer.token_strings, step)
        assert asked.choices[asked.answer] == maths.token_choices([trace.meta["tgt_out_tokens"][step]])[0]
        assert asked.page == "decoding" and asked.query["step"] == str(step)
    proof = View.from_query(asked.page, asked.query)
    assert proof.get(view.TEXT) == SENTENCE["text"] and proof.get(view.STEP) == step


def test_cross_look_on_en_es_writing_casa_reads_house(en_es_trace):
    """A cross-attention head that aligns words: when writing 'casa' the sharpest head of the last layer reads
    'house' (measured on the shipped model)."""
    bundle, trace = en_es_trace
    target = trace.meta["tgt_out_tokens"].index("▁casa")
    layer = bundle.config.n_decoder_layers - 1
    answers = [questions.cross_look(trace, SENTENCE, layer, h, target) for h in range(bundle.config.n_heads)]
    assert "house" in {a.choices[a.answer] for a in answers}


@pytest.mark.parametrize("sentence", [SENTENCE["text"], "My sister reads a long book every evening in the garden."])
def test_positional_head_on_en_es_is_its_previous_token_head(en_es_trace, sentence):
    """Measured on the shipped model: encoder layer 2's head 6 puts about two thirds of its weight on the previous
    token (the other heads at most 0.3)."""
    bundle, _ = en_es_trace
    trace = trace_sentence(bundle, sentence)
    asked = questions.positional_head(trace, {**SENTENCE, "text": sentence}, 2)
    assert asked.answer == 6 and asked.fields["share"] > 0.5, asked.fields
    assert asked.query == {**SENTENCE, "text": sentence, "kind": "encoder", "layer": "2", "head": "6"}
    assert questions.clearest_previous_layer(trace) == 2


def test_a_question_from_the_trace_goes_through_the_store(en_es_trace):
    bundle, trace = en_es_trace
    store = MemoryStore()
    code, secret = store.create()
    s1 = store.enrol(code, "10.0.0.1")
    asked = store.ask(code, secret, questions.positional_head(trace, SENTENCE, 0))
    assert store.answer(code, asked.id, s1, asked.answer) and not store.answer(code, asked.id, s1, 0)
    assert sum(store.tally(code, asked.id)) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tally_figure(lang):
    fig = tally_figure(["house", "</s>", "man"], [3, 0, 5], Look(words(lang), PRESENTER), answer=None)
    bar = fig.data[0]
    assert list(bar.x) == [3, 0, 5] and list(bar.y) == ["house", "&lt;/s&gt;", "man"]
    assert fig.layout.title.text == words(lang)("class.tally.title", n=8)
    assert min(fig.layout.font.size, bar.textfont.size, fig.layout.yaxis.tickfont.size) >= 20
    revealed = tally_figure(["house", "</s>", "man"], [3, 0, 5], Look(words(lang)), answer=0)
    assert revealed.data[0].marker.color[0] != revealed.data[0].marker.color[1]
    assert words(lang)("class.tally.answer", answer="house") in revealed.layout.title.text
    with pytest.raises(ValueError):
        tally_figure(["a", "b"], [1], Look(words(lang)))
    with pytest.raises(ValueError):
        tally_figure(["a", "b"], [1, 2], Look(words(lang)), answer=2)


