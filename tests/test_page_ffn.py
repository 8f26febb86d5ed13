"""AppTest of the Feed-forward & training tricks page (viz/pages/ffn.py, issue 26 item 11) on toy-reverse,
in English and 中文: each view draws the sentence's real numbers first."""
import base64
import re

import numpy as np
import pytest

from apptest_utils import figure, first_chart, no_exceptions, run_page, texts
from model.analysis import regularize as rg
from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from viz import ROOT

TEXT = "a b c d e"


def arr(v) -> np.ndarray:
    """A plotly array as numpy (numpy arrays travel as base64 typed arrays)."""
    if isinstance(v, dict):
        shape = [int(n) for n in str(v.get("shape", -1)).split(",")]
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).reshape(shape).astype(float)
    return np.array(v, dtype=float)


@pytest.fixture(scope="module")
def trace():
    return trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), TEXT)


def test_ffn_view_shows_the_hidden_units_and_what_the_ffn_adds(trace):
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, stack="encoder", layer=1)
    no_exceptions(at)
    assert at.title[0].value == "Feed-forward, label smoothing, dropout"
    chart, words = first_chart(at)
    assert chart is not None and words == 0                                   # the picture first
    units = figure(at, 0)["data"][0]
    ff = rg.feed_forward(trace.arrays, "encoder", 1)
    shown = [int(u.lstrip("#")) for u in units["x"]]
    assert np.allclose(arr(units["z"]), ff.hidden[:, shown], atol=1e-5)  # the model's own activations
    assert units["y"][0] == "0 a"
    adds = figure(at, 1)["data"]
    assert np.allclose(arr(adds[1]["y"]), ff.out_norm, atol=1e-4) and np.allclose(arr(adds[0]["y"]), ff.resid_norm, atol=1e-4)
    assert f"On average {100 * ff.active.mean():.0f}% of the" in texts(at)


def test_smoothing_view_shows_target_and_both_losses(trace):
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="smoothing", token=1)
    no_exceptions(at)
    s = rg.smoothing_losses(trace[schema.LOGITS], trace.meta["tgt_ids"])
    bars = figure(at, 0)["data"]
    gold = trace.meta["tgt_ids"][1]
    assert arr(bars[1]["y"])[0] == pytest.approx(1 - 0.1 + 0.1 / s.probs.shape[1])    # gold share of q
    assert arr(bars[0]["y"])[0] == pytest.approx(s.probs[1, gold], abs=1e-6)
    assert arr(bars[1]["y"]).sum() == pytest.approx(1) and arr(bars[0]["y"]).sum() == pytest.approx(1, abs=1e-6)
    loss = figure(at, 1)["data"]
    assert np.allclose(arr(loss[0]["y"]), s.nll, atol=1e-5) and np.allclose(arr(loss[1]["y"]), s.smoothed, atol=1e-5)
    assert f"with smoothing {s.smoothed[1]:.3f}" in texts(at)


def test_the_words_under_what_the_ffn_adds_follow_its_cosines():
    """en-es's first encoder layer writes at cosines 0.39-0.68 (0.41-0.70 since the learner model, 0.42-0.72 since step 4) to the stream: the caption said "near 0: it writes
    in new directions"; it now says they are all clearly above 0. In 中文 on the toy model, where all are near 0."""
    at = run_page("ffn.py", model="en-es", text="The man went to the house.", stack="encoder", layer=0)
    no_exceptions(at)
    shown = texts(at)
    assert "runs from 0.42 to 0.72 (all clearly above 0: besides writing in new directions it partly lengthens" in shown
    assert "near 0" not in shown
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, stack="decoder", layer=1, lang="zh")
    no_exceptions(at)
    assert "（都接近 0：它写入新的方向" in texts(at)


def test_the_smoothing_caption_counts_the_other_tokens(trace):
    """"each of the other 8002 tokens" where the vocabulary is 8,002: the others are V - 1."""
    vocab = trace[schema.LOGITS].shape[-1]
    for lang, words in (("en", "each of the other {n} tokens ε/V"), ("zh", "给其余 {n} 个词元")):
        at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="smoothing", lang=lang)
        no_exceptions(at)
        assert words.format(n=vocab - 1) in texts(at)


def test_dropout_view_samples_differ_from_off():
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", kind="decoder", layer=0, head=1)
    no_exceptions(at)
    heat = [d for d in figure(at, 0)["data"] if d["type"] == "heatmap" and d.get("hoverinfo") != "skip"]
    assert len(heat) == 4
    off, first = (arr(h["z"]) for h in heat[:2])
    assert np.isnan(off[0, 1])                                   # decoder: future positions masked
    assert not np.allclose(np.nan_to_num(off), np.nan_to_num(first))
    kept = np.nan_to_num(first) > 0
    assert np.allclose(np.nan_to_num(first)[kept], np.nan_to_num(off)[kept] / 0.9)   # survivors scaled by 1/(1-p)
    assert "are not renormalised" in texts(at)


@pytest.mark.parametrize("view", ["ffn", "smoothing", "dropout"])
def test_page_in_chinese(view):
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, lang="zh", view=view)
    no_exceptions(at)
    assert at.title[0].value == "前馈网络、标签平滑与随机失活"
    title = figure(at, 0)["layout"]["title"]["text"]
    assert re.search(r"[\u4e00-\u9fff]", title) and not re.search(r"\b(layer|head|hidden|token)\b", title)
    assert re.search(r"[\u4e00-\u9fff]", " ".join(str(c.value) for c in at.caption))
