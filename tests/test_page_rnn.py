"""The "Before the Transformer" page (viz/pages/rnn.py) and the training page's live RNNs, through app.py with AppTest."""
import base64
import json
import shutil

import numpy as np
import pytest

from apptest_utils import figure, first_chart, no_exceptions, run_page, texts, z_of
from viz import ROOT
from viz.core.i18n import catalogue

METRICS = json.loads((ROOT / "pretrained" / "rnn-reverse" / "metrics.json").read_text())


def typed(values) -> list[float]:
    """A chart's numbers: a list, or plotly's base64 typed array."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float).tolist()
    return [float(v) for v in values]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_alignment_beside_the_transformer_then_the_bottleneck(lang):
    words = catalogue(lang)
    at = run_page("rnn.py", lang=lang, input="a b c d e f g h")
    no_exceptions(at)
    assert at.title[0].value == words["rnn.title"]
    chart, above = first_chart(at)
    assert chart.key == "rnn-align" and above <= 25                  # the picture first
    keys = [c.key for c in at.get("plotly_chart")]
    assert keys[:2] == ["rnn-align", "rnn-cross"] and "rnn-accuracy" in keys and "rnn-variants" in keys
    rnn = z_of(at, 0)
    assert rnn.shape == (9, 9)                                        # 8 symbols and </s>, both ways
    np.testing.assert_allclose(rnn.sum(1), 1.0, atol=1e-6)
    assert (rnn[:8].argmax(1) == np.arange(7, -1, -1)).all()          # it reads the input backwards
    out = texts(at)
    assert "h g f e d c b a" in out and "✓" in out
    # the accuracy chart draws the shipped numbers
    acc = figure(at, keys.index("rnn-accuracy"))["data"]
    assert acc[0]["name"] == words["rnn.model.none"]
    shipped = METRICS["models"]["none"]["accuracy_by_length"]
    x, y = (typed(acc[0][axis]) for axis in "xy")
    assert y == pytest.approx([100 * shipped[str(int(n))]["exact"] for n in x])
    assert words["rnn.explain.title"] in [e.label for e in at.expander]


def test_a_long_input_and_another_score():
    at = run_page("rnn.py", input="a b c d e f g h i j a b c d", score="dot")
    no_exceptions(at)
    assert at.radio(key="rnn-score").value == "dot"
    out = texts(at)
    assert "RNN + dot attention** wrote: d c b a j i h g f e d c b a ✓" in out.replace("\\", "")
    assert "At 14 symbols" in out


def test_the_page_says_both_read_backwards_only_where_they_do():
    """Issue 46, item 6: at 16 symbols the toy Transformer wrote a wrong answer and the two alignments agreed at 0
    of 8 steps, beside "both learned to read the input backwards"."""
    words = catalogue("en")
    short = texts(run_page("rnn.py", input="a b c d e f g h"))
    assert words["rnn.read"].split("{")[0] in short
    long = run_page("rnn.py", input="a b c d e f g h a b c d e f g h")
    no_exceptions(long)
    said = texts(long)
    assert "✗" in said and "Both learned to read the input backwards" not in said
    assert "breaks down" in said


def test_bad_symbols_are_said_and_the_default_shown():
    at = run_page("rnn.py", input="a b <script>")
    no_exceptions(at)
    assert at.warning and "a b c d e f g h" in at.warning[0].value
    assert "<script>" not in at.warning[0].value


def test_without_the_rnn_folder_the_page_says_so(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "pretrained" / "toy-reverse", tmp_path / "toy-reverse")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(tmp_path))
    at = run_page("rnn.py", model="toy-reverse", text="a b c")
    no_exceptions(at)
    said = at.info[0].value.replace("\\", "") if at.info else ""
    assert "rnn-reverse/rnn.json" in said and "file missing" in said and str(tmp_path) not in said


@pytest.mark.slow          # trains two RNNs on the page
def test_the_training_page_trains_both_rnns_live():
    at = run_page("training.py", lang="zh")
    no_exceptions(at)
    assert catalogue("zh")["training.rnn.press"] in texts(at)
    at.slider(key="train-rnn-steps").set_value(50)
    at.button(key="train-rnn-button").click().run()
    no_exceptions(at)
    chart = next(c for c in at.get("plotly_chart") if c.key == "train-rnn-accuracy")
    names = [d["name"] for d in json.loads(chart.proto.spec)["data"]]
    assert names == [catalogue("zh")["rnn.model.none"], catalogue("zh")["rnn.model.additive"]]


def test_no_message_writes_a_subscript_letter_the_fonts_lack():
    """Issue 46, item 6: "cᵢ" drew as "cı" (the page's fonts have no subscript i or j): written as $c_i$ instead."""
    for lang in ("en", "zh"):
        assert [key for key, text in catalogue(lang).items() if set(text) & set("ᵢⱼₖ")] == [], lang
