"""Attribution page with AppTest on toy-reverse and en-es: every section, deep links, bad input."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_utils import figure, no_exceptions, run_page, texts, z_of

TOY = dict(model="toy-reverse", text="a b c d e f")


def run(**params) -> AppTest:
    """The page as a deep link opens it."""
    return run_page("attribution.py", **params)


def titles(at) -> list[str]:
    return [figure(at, i)["layout"].get("title", {}).get("text", "") for i in range(len(at.get("plotly_chart")))]


def test_logit_lens_is_the_default_view():
    at = run(**TOY)
    no_exceptions(at)
    assert "Attribution" in texts(at)
    assert at.radio(key="attr-section").value == "lens"
    fig = figure(at)
    assert fig["data"][0]["y"] == ["layer 0", "layer 1"]
    assert fig["data"][0]["text"][-1] == ["f", "e", "d", "c", "b", "a", "&lt;/s&gt;"]   # last layer = the output


def test_source_attribution_methods_and_agreement_from_a_link():
    at = run(**TOY, view="source", methods="attention,ig", steps=8)
    no_exceptions(at)
    assert at.multiselect(key="attr-methods").value == ["attention", "ig"]
    assert at.number_input(key="attr-steps").value == 8
    heat = figure(at, 0)
    assert len(heat["data"]) == 2
    assert any("agree" in t for t in titles(at))


def test_contrastive_step_and_alternative_from_a_link():
    at = run(**TOY, view="contrastive", step=1, alt=1)
    no_exceptions(at)
    assert at.query_params["step"] == "1" and at.query_params["alt"] == "1"
    assert "rather than" in texts(at)
    assert len(at.get("plotly_chart")) == 2


def test_patching_default_corruption_and_grids():
    at = run(**TOY, view="patching")
    no_exceptions(at)
    assert at.text_input(key="attr-corrupt").value == "f b c d e a"          # first and last swapped
    assert len(at.get("plotly_chart")) == 3
    assert figure(at, 0)["data"][0]["colorbar"]["title"]["text"] == "restored share"
    encoder = z_of(at, 0)                                  # [layer, source position]; output 0 reads position 5
    np.testing.assert_allclose(encoder[:, 5], 1.0, atol=0.05)
    assert z_of(at, 2)[-1, 0] == pytest.approx(1.0, abs=1e-3)   # last decoder layer at the predicting position


def test_patching_refuses_unequal_lengths():
    at = run(**TOY, view="patching", corrupt="a b c")
    no_exceptions(at)
    assert "same number of tokens" in " ".join(w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_bad_parameters_warn_without_failing():
    at = run(**TOY, view="nowhere", step=99, methods="magic")
    no_exceptions(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "view=" in warnings
    at = run(**TOY, view="source", methods="magic,ig")
    no_exceptions(at)
    assert "methods" in " ".join(w.value for w in at.warning)
    assert at.multiselect(key="attr-methods").value == ["ig"]


@pytest.mark.parametrize("view", ["lens", "source", "contrastive", "patching"])
def test_en_es(view):
    at = run(model="en-es", text="The man went to the house.", view=view)
    no_exceptions(at)
    assert at.get("plotly_chart")


def test_long_sentences_skip_the_costly_methods_with_a_note():
    text = " ".join(["The man went to the house."] * 6)            # > 40 tokens
    at = run(model="en-es", text=text, view="source", methods="attention,grad")
    no_exceptions(at)
    assert "left out" in texts(at)
    assert len(figure(at, 0)["data"]) == 2
    at = run(model="en-es", text=" ".join(["The man went to the house."] * 10), view="patching")
    no_exceptions(at)
    assert "limited to sentences of 64 tokens" in texts(at)
    assert not at.get("plotly_chart")


def test_tokens_are_shown_as_typed_not_as_markdown():
    at = run(model="en-es", text="The man went to the house.", target="* [x](y) *", view="contrastive", step=1)
    no_exceptions(at)
    assert at.subheader[0].value.startswith("Why “\\*” rather than")      # the reference's '*', escaped
