"""AppTest of the Feed-forward & training tricks page (viz/pages/ffn.py, issue 26 item 11) on toy-reverse,
in English and 中文: each view draws the sentence's real numbers first. The feed-forward view is drawn in the
browser (issue 44: a deck of every stack x layer, picked there); what the page sends it is checked here, the
browser's side in tests/test_browser_ffn_view.py."""
import base64
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from apptest_utils import (browser_says, browser_view, browser_view_sent, browser_view_whole, figure, no_exceptions,
                           run_page, texts)
from model.analysis import regularize as rg
from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from viz import ROOT
from viz.core.catalogue import message
from viz.figures.style import plotly_text

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


# -- the feed-forward view: drawn in the browser (a deck, viz/figures/browser_view.py); what the page sends it ------
def deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The feed-forward view's head (the pick...) and body (every stack x layer's figures and captions)."""
    return browser_view_sent(browser_view_whole(at, "ffn-deck") if whole else at, "ffn-deck")


def query(at) -> dict[str, str]:
    return {k: v if isinstance(v, str) else v[0] for k, v in dict(at.query_params).items()}


def assert_same(sent, built, where: str) -> None:
    """Two figures' JSON alike, their numbers to float32's precision (the page traced the sentence in its own run:
    the same model and tokens, the last bits of a float may differ). (The zoo's and compare's deck tests use it too.)"""
    if isinstance(sent, dict) and "bdata" in sent:
        assert np.allclose(arr(sent), arr(built), rtol=1e-5, atol=1e-6, equal_nan=True), where
    elif isinstance(sent, dict):
        assert isinstance(built, dict) and sent.keys() == built.keys(), where
        for key in sent:
            assert_same(sent[key], built[key], f"{where}.{key}")
    elif isinstance(sent, list):
        assert isinstance(built, list) and len(sent) == len(built), where
        for i, (a, b) in enumerate(zip(sent, built)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(sent, float):
        assert np.isclose(sent, built, rtol=1e-5, atol=1e-6), where
    else:
        assert sent == built, where


def assert_pick_is_the_models(part: dict, trace, stack: str, layer: int, lang: str = "en") -> None:
    """A pick's part holds what the builders make of the model's own numbers: each token's strongest units and
    what the FFN adds, the pick named in the title, the captions' numbers the pick's."""
    ff = rg.feed_forward(trace.arrays, stack, layer)
    units = part["figures"]["units"]["data"][0]
    shown = [int(u.lstrip("#")) for u in units["x"]]
    assert shown == rg.top_units(ff.hidden, per_token=2, limit=24).tolist()
    assert np.allclose(arr(units["z"]), ff.hidden[:, shown], atol=1e-5)  # the model's own activations
    tokens = schema.stack_tokens(trace.meta, stack)
    assert units["y"] == plotly_text([f"{i} {token}" for i, token in enumerate(tokens)])    # as the builder labels
    stack_name = message(lang, f"ffn.stack.{stack}")
    assert part["figures"]["units"]["layout"]["title"]["text"].startswith(
        message(lang, "ffn.units.title", stack=stack_name, layer=layer, shown=len(shown), d_ff=ff.hidden.shape[1]))
    adds = part["figures"]["adds"]["data"]
    assert np.allclose(arr(adds[1]["y"]), ff.out_norm, atol=1e-4) and np.allclose(arr(adds[0]["y"]), ff.resid_norm, atol=1e-4)
    assert f"{100 * ff.active.mean():.0f}%" in part["texts"]["units-caption"]
    assert f"{ff.cosine.min():.2f}" in part["texts"]["adds-caption"]


def test_ffn_view_shows_the_hidden_units_and_what_the_ffn_adds(trace):
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, stack="encoder", layer=1)
    no_exceptions(at)
    assert at.title[0].value == "Feed-forward, label smoothing, dropout"
    head, body = deck(at)
    assert head["pick"] == {"kind": "encoder", "layer": 1} and list(body["picks"]) == ["encoder:1"]   # first screen
    assert body["blocks"][0] == {"type": "figure", "id": "units", "csv": True}          # the picture first
    assert [block["id"] for block in body["blocks"]] == ["units", "units-caption", "adds", "adds-caption"]
    assert_pick_is_the_models(body["picks"]["encoder:1"], trace, "encoder", 1)
    assert "On average" in body["picks"]["encoder:1"]["texts"]["units-caption"]
    assert body["picks"]["encoder:1"]["files"] == {"units": "toy-reverse-encoder-L1-ffn-units",
                                                   "adds": "toy-reverse-encoder-L1-ffn-adds"}
    assert query(at)["stack"] == "encoder" and query(at)["layer"] == "1" and "kind" not in query(at)
    assert any("xW_1" in str(e.value) for e in at.latex)            # the formula stays the server's, folded


def test_ffn_view_stack_and_layer_are_picked_in_the_browser_not_by_server_widgets():
    """Issue 44: the stack radio and the layer select box were server widgets (a script run a pick); the view's own
    pickers are the deck's, with the page's stack names (not attention kinds') and the URL's `stack`."""
    at = run_page("ffn.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    keys = [w.key for kind in ("radio", "selectbox") for w in at.get(kind)]
    assert not [key for key in keys if key.startswith(("ffn-stack", "ffn-layer"))], keys
    assert "ffn-view" in keys                                       # the page's three views: still the server's
    _, body = deck(at)
    assert body["names"] == ["kind", "layer"] and body["url_names"] == {"kind": "stack", "layer": "layer"}
    assert body["words"]["kind"] == "Stack" and body["words"]["kind_names"] == {"encoder": "encoder",
                                                                                "decoder": "decoder"}
    _, body = deck(run_page("ffn.py", model="toy-reverse", text=TEXT, lang="zh"))
    assert body["words"]["kind"] == "堆叠" and body["words"]["kind_names"] == {"encoder": "编码器", "decoder": "解码器"}


def test_ffn_view_sends_every_stack_and_layer_once_then_a_pick_rebuilds_nothing(trace):
    """The view asks for the rest after drawing the first screen; every stack x layer is then in the body, each the
    builders' of the model's numbers; a pick the browser reports (a teacher's) writes the URL's stack and layer
    with the same body (nothing rebuilt, not resent)."""
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, stack="decoder", layer=1)
    head, body = deck(at, whole=True)
    no_exceptions(at)
    assert head["whole"] and set(body["picks"]) == {f"{s}:{n}" for s in ("encoder", "decoder") for n in (0, 1)}
    assert body["layers"] == {"encoder": 2, "decoder": 2}
    for key, part in body["picks"].items():
        stack, layer = key.split(":")
        assert_pick_is_the_models(part, trace, stack, int(layer))
    sent = browser_view(at, "ffn-deck-view").proto.bytes
    browser_says(at, state={"pick": {"kind": "encoder", "layer": 0}}, where="ffn-deck")
    no_exceptions(at)
    assert query(at)["stack"] == "encoder" and query(at)["layer"] == "0" and "kind" not in query(at)
    assert deck(at)[0]["pick"] == {"kind": "encoder", "layer": 0}
    assert browser_view(at, "ffn-deck-view").proto.bytes == sent        # the same message: the browser has it


def test_ffn_view_deep_link_and_bad_parameters():
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="ffn", stack="decoder", layer=1)
    no_exceptions(at)
    assert deck(at)[0]["pick"] == {"kind": "decoder", "layer": 1}
    bad = run_page("ffn.py", model="toy-reverse", text=TEXT, stack="middle", layer=5)
    no_exceptions(bad)
    said = " ".join(w.value for w in bad.warning)
    assert "URL parameter stack='middle'" in said and "URL parameter layer='5'" in said
    assert deck(bad)[0]["pick"] == {"kind": "encoder", "layer": 0}
    assert query(bad)["stack"] == "encoder" and query(bad)["layer"] == "0"


@pytest.mark.parametrize("figure_name", ["units", "adds"])
def test_ffn_view_a_pictures_csv_is_its_numbers(trace, figure_name):
    at = run_page("ffn.py", model="toy-reverse", text=TEXT)
    browser_says(at, trigger=("csv", {"kind": "decoder", "layer": 1, "figure": figure_name}), where="ffn-deck")
    no_exceptions(at)
    head, _ = deck(at)
    assert head["csv"]["name"] == f"toy-reverse-decoder-L1-ffn-{figure_name}.csv"
    assert query(at)["stack"] == "decoder" and query(at)["layer"] == "1"      # the pick shown: the URL's too
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    ff = rg.feed_forward(trace.arrays, "decoder", 1)
    assert list(frame.index) == [f"{i} {token}" for i, token in enumerate(schema.stack_tokens(trace.meta, "decoder"))]
    if figure_name == "units":
        units = [int(c.lstrip("#")) for c in frame.columns]
        np.testing.assert_allclose(frame.to_numpy(), ff.hidden[:, units], atol=1e-5)
    else:
        np.testing.assert_allclose(frame.to_numpy(), np.stack([ff.resid_norm, ff.out_norm, ff.cosine], 1), atol=1e-4)


def test_ffn_view_in_presenter_mode_is_drawn_at_its_sizes():
    """Presenter mode: the view's text at the presenter scale (20 px), 20 units a picture, no modebar."""
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, present=1, lang="zh")
    no_exceptions(at)
    head, body = deck(at)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    part = body["picks"]["encoder:0"]
    assert len(part["figures"]["units"]["data"][0]["x"]) <= 20
    assert re.search(r"[\u4e00-\u9fff]", part["texts"]["units-caption"])


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
    shown = deck(at)[1]["picks"]["encoder:0"]["texts"]["adds-caption"]
    assert "runs from 0.42 to 0.72 (all clearly above 0: besides writing in new directions it partly lengthens" in shown
    assert "near 0" not in shown
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, stack="decoder", layer=1, lang="zh")
    no_exceptions(at)
    assert "（都接近 0：它写入新的方向" in deck(at)[1]["picks"]["decoder:1"]["texts"]["adds-caption"]


def test_the_smoothing_caption_counts_the_other_tokens(trace):
    """"each of the other 8002 tokens" where the vocabulary is 8,002: the others are V - 1."""
    vocab = trace[schema.LOGITS].shape[-1]
    for lang, words in (("en", "each of the other {n} tokens ε/V"), ("zh", "给其余 {n} 个词元")):
        at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="smoothing", lang=lang)
        no_exceptions(at)
        assert words.format(n=vocab - 1) in texts(at)


# -- the dropout view: drawn in the browser too (a deck of every kind x layer x head for the server's window) ---------
HEADS = range(4)                   # toy-reverse's


def drop_deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The dropout view's head (the pick...) and body (every kind x layer x head's picture and caption)."""
    return browser_view_sent(browser_view_whole(at, "drop-deck") if whole else at, "drop-deck")


def heatmaps(part: dict) -> list[np.ndarray]:
    """A dropout picture's four panels (off, then the samples), as the builder drew them."""
    return [arr(d["z"]) for d in part["figures"]["drop"]["data"]
            if d["type"] == "heatmap" and d.get("hoverinfo") != "skip"]


def assert_drop_is_the_models(part: dict, trace, kind: str, layer: int, head: int) -> None:
    """A pick's part holds the builder's picture of the model's own weights with dropout off and rg's seeded samples
    on, and its caption the share of weights those samples really dropped."""
    weights = np.asarray(trace[schema.pattern_name(kind, layer)][head], dtype=np.float64)
    p = 0.1                                                       # the toy trains without: the paper's rate
    samples = rg.attention_dropout(weights, p, 3, seed=0)
    off, *on = heatmaps(part)
    assert len(on) == 3
    assert np.allclose(np.nan_to_num(off), weights, atol=1e-6)
    for shown, sample in zip(on, samples):
        assert np.allclose(np.nan_to_num(shown), sample, atol=1e-5)
    masked = np.isnan(off)
    assert masked.any() == (kind == "decoder")                   # decoder self-attention: the future masked
    live = (weights > 0) & ~masked
    dropped = ((samples == 0) & live).sum() / (live.sum() * 3)
    assert f"here {100 * dropped:.0f}% of the non-zero weights" in part["texts"]["drop-caption"]
    sums = samples.sum(-1)
    assert f"sum to {sums.min():.2f}–{sums.max():.2f}" in part["texts"]["drop-caption"]
    assert part["files"] == {"drop": f"toy-reverse-{kind}-L{layer}-H{head}-dropout"}
    assert part["figures"]["drop"]["layout"]["title"]["text"].startswith(
        message("en", "ffn.drop.title", kind=message("en", f"fig.kind.{kind}"), layer=layer, head=head, p=p))


def test_dropout_view_samples_differ_from_off():
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", kind="decoder", layer=0, head=1)
    no_exceptions(at)
    head, body = drop_deck(at)
    assert head["pick"] == {"kind": "decoder", "layer": 0, "head": 1}
    assert list(body["picks"]) == ["decoder:0:1"]                # a new sentence's first screen: the pick alone
    off, first, *_ = heatmaps(body["picks"]["decoder:0:1"])
    assert np.isnan(off[0, 1])                                   # decoder: future positions masked
    assert not np.allclose(np.nan_to_num(off), np.nan_to_num(first))
    kept = np.nan_to_num(first) > 0
    assert np.allclose(np.nan_to_num(first)[kept], np.nan_to_num(off)[kept] / 0.9)   # survivors scaled by 1/(1-p)
    assert "are not renormalised" in body["picks"]["decoder:0:1"]["texts"]["drop-caption"]
    assert body["blocks"] == [{"type": "figure", "id": "drop", "csv": True}, {"type": "text", "id": "drop-caption"}]
    assert not at.get("plotly_chart")                            # no server chart: the deck draws it


def test_dropout_view_kind_layer_and_head_are_picked_in_the_browser_not_by_server_widgets():
    """Issue 44: the head was a server select box ("ffn-head": a script run and a new deck a head); the deck picks
    it now, with the kind and layer, each a head of its own (no mean: dropout acts per head), written to the URL's
    kind, layer and head. The window's slider stays the server's."""
    at = run_page("ffn.py", model="toy-reverse", text=" ".join("abcdefgh"[i % 8] for i in range(20)), view="dropout")
    no_exceptions(at)
    keys = [w.key for kind in ("radio", "selectbox", "slider") for w in at.get(kind)]
    assert not [key for key in keys if re.search("head|kind|layer", key)], keys
    assert any(key.startswith("drop-tokens") for key in keys)   # a long sentence's window: the server's slider
    head, body = drop_deck(at)
    assert head["pick"] == {"kind": "cross", "layer": 0, "head": 0}           # cross-attention's head 0 unless linked
    assert body["names"] == ["kind", "layer", "head"] and body["heads"] == 4 and body["mean"] is False
    assert body["url_names"] == {"kind": "kind", "layer": "layer", "head": "head"}
    assert body["words"]["head"] == "Head" and body["words"]["head_names"] == {str(h): f"head {h}" for h in HEADS}
    assert {k: query(at)[k] for k in ("kind", "layer", "head")} == {"kind": "cross", "layer": "0", "head": "0"}


def test_dropout_view_sends_every_kind_layer_and_head_and_a_pick_rebuilds_nothing(trace):
    """The whole body holds every kind x layer x head, each the builder's of the model's weights and rg's samples;
    a pick the browser reports (a teacher's) writes the URL's kind, layer and head with the same body."""
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", head=1)
    head, body = drop_deck(at, whole=True)
    no_exceptions(at)
    assert head["whole"] and head["pick"] == {"kind": "cross", "layer": 0, "head": 1}
    assert body["layers"] == {"encoder": 2, "decoder": 2, "cross": 2}
    assert set(body["picks"]) == {f"{k}:{n}:{h}" for k in ("encoder", "decoder", "cross") for n in (0, 1)
                                  for h in HEADS}
    for key, part in body["picks"].items():
        kind, layer, h = key.split(":")
        assert_drop_is_the_models(part, trace, kind, int(layer), int(h))
    assert body["words"]["kind_names"] == {kind: message("en", f"fig.kind.{kind}")
                                           for kind in ("encoder", "decoder", "cross")}
    sent = browser_view(at, "drop-deck-view").proto.bytes
    browser_says(at, state={"pick": {"kind": "encoder", "layer": 1, "head": 3}}, where="drop-deck")
    no_exceptions(at)
    assert {k: query(at)[k] for k in ("kind", "layer", "head")} == {"kind": "encoder", "layer": "1", "head": "3"}
    assert drop_deck(at)[0]["pick"] == {"kind": "encoder", "layer": 1, "head": 3}
    assert browser_view(at, "drop-deck-view").proto.bytes == sent        # the same message: the browser has it


def test_each_dropout_picks_picture_is_the_pages_builders(trace):
    """The deck calls the page's own DropoutPick: a pick's picture and caption are what it draws for that head,
    exactly (and two heads of one layer draw two pictures)."""
    from viz.core.context import Traced
    from viz.core.i18n import words
    from viz.figures.browser_view import figure_spec
    from viz.figures.style import NORMAL, Look
    from viz.pages.ffn import DropoutPick
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout")
    _, body = drop_deck(at, whole=True)
    no_exceptions(at)
    page_look = Look(words("en"), NORMAL)
    traced = Traced(("toy-reverse",), load_checkpoint(ROOT / "pretrained" / "toy-reverse"), trace)
    for kind, layer, h in (("encoder", 0, 0), ("decoder", 1, 3), ("cross", 1, 2), ("cross", 1, 1)):
        made = DropoutPick(traced, kind, layer, h)
        part = body["picks"][f"{kind}:{layer}:{h}"]
        assert_same(part["figures"]["drop"], json.loads(json.dumps(figure_spec(made.figure(page_look)))),
                    f"{kind}:{layer}:{h}")
        assert part["texts"]["drop-caption"] == made.caption(page_look.words)
    assert not np.allclose(heatmaps(body["picks"]["cross:1:1"])[0], heatmaps(body["picks"]["cross:1:2"])[0])


def test_dropout_view_a_run_after_the_whole_body_builds_nothing():
    from viz.core import view
    at = browser_view_whole(run_page("ffn.py", model="toy-reverse", text="b a d c f", view="dropout"), "drop-deck")
    no_exceptions(at)
    built = list(view._shared)
    at.run()
    browser_says(at, state={"pick": {"kind": "decoder", "layer": 1, "head": 2}}, where="drop-deck")
    no_exceptions(at)
    assert [key for key in view._shared if key not in built] == []


def test_dropout_view_deep_link_and_bad_parameters():
    """A link's head is the view's pick (the first screen's part that head's); a head the model lacks is named and
    head 0 shown."""
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", kind="cross", layer=1, head=2)
    no_exceptions(at)
    head, body = drop_deck(at)
    assert head["pick"] == {"kind": "cross", "layer": 1, "head": 2} and list(body["picks"]) == ["cross:1:2"]
    assert {k: query(at)[k] for k in ("view", "kind", "layer", "head")} == {"view": "dropout", "kind": "cross",
                                                                            "layer": "1", "head": "2"}
    assert "toy-reverse-cross-L1-H2-dropout" == body["picks"]["cross:1:2"]["files"]["drop"]
    bad = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", kind="middle", layer=5, head=9)
    no_exceptions(bad)
    said = " ".join(w.value for w in bad.warning)
    assert "URL parameter kind='middle'" in said and "URL parameter layer='5'" in said and "head='9'" in said
    assert drop_deck(bad)[0]["pick"] == {"kind": "cross", "layer": 0, "head": 0}
    assert query(bad)["head"] == "0"
    mean = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", head=-1)     # no mean of heads here
    no_exceptions(mean)
    assert drop_deck(mean)[0]["pick"]["head"] == 0 and query(mean)["head"] == "0"


@pytest.mark.parametrize("head_asked", [1, 3])
def test_dropout_view_a_picks_csv_is_its_heads_first_sample(trace, head_asked):
    """The CSV of the head the browser shows (its pick, not the URL's head): that head's first sample."""
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", head=0)
    browser_says(at, trigger=("csv", {"kind": "decoder", "layer": 1, "head": head_asked, "figure": "drop"}),
                 where="drop-deck")
    no_exceptions(at)
    head, _ = drop_deck(at)
    assert head["csv"]["name"] == f"toy-reverse-decoder-L1-H{head_asked}-dropout.csv"
    assert {k: query(at)[k] for k in ("kind", "layer", "head")} == {"kind": "decoder", "layer": "1",
                                                                    "head": str(head_asked)}   # the pick shown
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    weights = np.asarray(trace[schema.pattern_name("decoder", 1)][head_asked], dtype=np.float64)
    np.testing.assert_allclose(frame.to_numpy(), rg.attention_dropout(weights, 0.1, 3, seed=0)[0], atol=1e-6)
    assert len(frame) == len(schema.stack_tokens(trace.meta, "decoder"))


def test_a_long_sentences_dropout_panels_show_a_window_its_caption_and_csv_every_token():
    """A sentence longer than DROP_WINDOW: each panel shows a window of its tokens (the page's slider; four panels of
    128 tokens were unreadable and their deck 2.7 MB), the caption's numbers and the CSV are every token's."""
    from viz.pages.ffn import DROP_WINDOW
    text = " ".join("abcdefgh"[i % 8] for i in range(20))
    long_trace = trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), text)
    weights = np.asarray(long_trace[schema.pattern_name("encoder", 0)][2], dtype=np.float64)
    n = weights.shape[0]
    assert n > DROP_WINDOW
    at = run_page("ffn.py", model="toy-reverse", text=text, view="dropout", kind="encoder", layer=0, head=2)
    no_exceptions(at)
    samples = rg.attention_dropout(weights, 0.1, 3, seed=0)
    for start in (0, 4):
        if start:
            at.slider[0].set_value(start).run()
            no_exceptions(at)
        part = drop_deck(at)[1]["picks"]["encoder:0:2"]
        shown = slice(start, start + DROP_WINDOW)
        off, *on = heatmaps(part)
        np.testing.assert_allclose(off, weights[shown, shown], atol=1e-6)
        np.testing.assert_allclose(on[0], samples[0][shown, shown], atol=1e-5)
        dropped = ((samples == 0) & (weights > 0)).sum() / ((weights > 0).sum() * 3)        # every token's
        assert f"here {100 * dropped:.0f}% of the non-zero weights" in part["texts"]["drop-caption"]
    browser_says(at, trigger=("csv", {"kind": "encoder", "layer": 0, "head": 2, "figure": "drop"}), where="drop-deck")
    frame = pd.read_csv(io.StringIO(drop_deck(at)[0]["csv"]["text"]), index_col=0)
    assert frame.shape == (n, n)                                                            # the CSV: every token


def test_dropout_view_in_presenter_mode_and_chinese():
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, view="dropout", present=1, lang="zh")
    no_exceptions(at)
    head, body = drop_deck(at)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    assert body["words"]["kind"] == message("zh", "explorer.kind")
    assert all(re.search(r"[\u4e00-\u9fff]", name) for name in body["words"]["kind_names"].values())
    assert all(re.search(r"[\u4e00-\u9fff]", name) for name in body["words"]["layer_names"])
    assert body["words"]["head"] == message("zh", "ui.head")
    assert body["words"]["head_names"] == {str(h): message("zh", "ui.head_n", h=h) for h in HEADS}
    part = body["picks"]["cross:0:0"]
    layout = part["figures"]["drop"]["layout"]
    sizes = [layout["font"]["size"], layout["title"]["font"]["size"]] + [
        axis["tickfont"]["size"] for name, axis in layout.items() if name.startswith(("xaxis", "yaxis"))]
    assert min(sizes) >= 20, sizes                                      # presenter: the projector's sizes
    assert re.search(r"[\u4e00-\u9fff]", layout["title"]["text"]) and "layer" not in layout["title"]["text"]
    assert re.search(r"[\u4e00-\u9fff]", part["texts"]["drop-caption"])


@pytest.mark.parametrize("view", ["ffn", "smoothing", "dropout"])
def test_page_in_chinese(view):
    at = run_page("ffn.py", model="toy-reverse", text=TEXT, lang="zh", view=view)
    no_exceptions(at)
    assert at.title[0].value == "前馈网络、标签平滑与随机失活"
    if view != "smoothing":                 # drawn in the browser: its figures and captions are the deck's
        part = deck(at)[1]["picks"]["encoder:0"] if view == "ffn" else drop_deck(at)[1]["picks"]["cross:0:0"]
        titles = [fig["layout"]["title"]["text"] for fig in part["figures"].values()]
        captions = " ".join(part["texts"].values())
    else:
        titles, captions = [figure(at, 0)["layout"]["title"]["text"]], " ".join(str(c.value) for c in at.caption)
    for title in titles:
        assert re.search(r"[\u4e00-\u9fff]", title) and not re.search(r"\b(layer|head|hidden|token)\b", title)
    assert re.search(r"[\u4e00-\u9fff]", captions)
