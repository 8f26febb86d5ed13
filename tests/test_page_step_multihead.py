"""Step-through and Multi-head assembly pages through AppTest, on the toy-reverse model."""
from pathlib import Path

import numpy as np
import pytest

from apptest_utils import no_exceptions, run_page, texts
from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence
from model.analysis.attention_math import entropy_bits

TOY = Path(__file__).resolve().parents[1] / "pretrained" / "toy-reverse"
TEXT = "a b c d e"


@pytest.fixture(scope="module")
def trace():
    return trace_sentence(load_checkpoint(TOY, device="cpu"), TEXT)     # what the app traces for this input


def shown_row(at):
    """The step's "row as numbers" table (the first dataframe on the step page)."""
    return at.dataframe[0].value.to_numpy(dtype=float)[0]


def successes(at):
    return [s.value for s in at.success]


# -- step-through --------------------------------------------------------------------------------------
def test_step_default_view_shows_the_real_layer_input(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Step-through: one head"
    assert at.radio(key="step-kind").value == "encoder" and at.radio(key="step-step").value == 0
    assert at.selectbox(key="step-query-encoder").value == 0 and at.selectbox(key="step-encoder-head").value == 0
    # step 1 shows X = the embeddings for layer 0, row of the first token
    np.testing.assert_allclose(shown_row(at), trace.arrays["src_embed.hook_out"][0], atol=1e-4)
    assert "Why divide by" in texts(at)


def test_step_deep_link_reproduces_the_view_with_real_numbers(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="decoder", layer=1, head=2, query=3, step=6)
    no_exceptions(at)
    assert at.radio(key="step-kind").value == "decoder"
    assert at.selectbox(key="step-decoder-layer").value == 1 and at.selectbox(key="step-decoder-head").value == 2
    assert at.selectbox(key="step-query-decoder").value == 3 and at.radio(key="step-step").value == 6
    assert {k: at.query_params[k] for k in ("kind", "layer", "head", "query", "step")} == \
        {"kind": "decoder", "layer": "1", "head": "2", "query": "3", "step": "6"}
    row = shown_row(at)                                          # step 7: scores + mask, query row 3
    scores = trace.arrays["decoder.layers.1.self_attn.hook_scores"][2, 3]
    np.testing.assert_allclose(row[:4], scores[:4], atol=1e-4)
    assert np.all(np.isneginf(row[4:]))                          # the future is masked
    assert "hides 2 future position(s)" in texts(at)
    # the scaling comparison reports the entropy of the real scaled weights for this query
    pattern_row = trace.arrays["decoder.layers.1.self_attn.hook_pattern"][2, 3]
    summary = at.dataframe[1].value
    assert summary.iloc[1]["entropy (bits)"] == pytest.approx(entropy_bits(pattern_row), abs=1e-3)


def test_step_next_and_previous_buttons_walk_through_the_steps(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="cross", query=2, step=7)
    no_exceptions(at)
    at.button(key="step-next").click().run()
    no_exceptions(at)
    assert at.radio(key="step-step").value == 8 and at.query_params["step"] == "8"
    assert at.button(key="step-next").disabled
    # the last step: the head output, checked against pattern @ V with the error shown
    z = trace.arrays["decoder.layers.0.cross_attn.hook_z"][0, 2]
    np.testing.assert_allclose(shown_row(at), z, atol=1e-4)
    assert any("weights · $V$" in s and "max |difference|" in s for s in successes(at))
    at.button(key="step-prev").click().run()
    at.button(key="step-prev").click().run()
    assert at.radio(key="step-step").value == 6
    no_exceptions(at)


def test_step_bad_parameters_warn_and_fall_back():
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="sideways", step=99, query="x", head=7)
    no_exceptions(at)
    warnings = " ".join(w.value for w in at.warning)
    for name in ("kind", "step", "query", "head"):
        assert f"URL parameter {name}=" in warnings
    assert at.radio(key="step-kind").value == "encoder" and at.radio(key="step-step").value == 0
    assert at.selectbox(key="step-query-encoder").value == 0


def test_step_and_multihead_with_an_empty_sentence():
    for page in ("step_through.py", "multi_head.py"):
        at = run_page(page, model="toy-reverse", text="")
        no_exceptions(at)
        assert "The sentence is empty" in texts(at)
        assert not at.dataframe


# -- multi-head ----------------------------------------------------------------------------------------
def test_multihead_default_view_checks_the_assembly_against_the_model(trace):
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Multi-head assembly"
    assert at.radio(key="mh-kind").value == "encoder" and at.selectbox(key="mh-layer-encoder").value == 0
    assert len(successes(at)) == 3 and not at.error           # W^O, + residual, LayerNorm reproduce the model
    heads = at.dataframe[0].value
    pattern = trace.arrays["encoder.layers.0.self_attn.hook_pattern"]
    np.testing.assert_allclose(heads["mean entropy (bits)"], entropy_bits(pattern).mean(-1).round(2))
    assert "MultiHead(Q,K,V)" in texts(at).replace(r"\mathrm{MultiHead}", "MultiHead")
    assert "d_k = d_{model}/h = 64/4 = 16" in texts(at)


def test_multihead_deep_link_and_bad_parameter():
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="cross", layer=1)
    no_exceptions(at)
    assert at.radio(key="mh-kind").value == "cross" and at.selectbox(key="mh-layer-cross").value == 1
    assert "usual offset" not in at.dataframe[0].value.columns   # no offsets across sequences
    assert len(successes(at)) == 3
    bad = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="decoder", layer=5)
    no_exceptions(bad)
    assert "URL parameter layer='5'" in " ".join(w.value for w in bad.warning)
    assert bad.selectbox(key="mh-layer-decoder").value == 0
