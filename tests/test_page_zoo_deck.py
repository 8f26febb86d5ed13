"""AppTest of the attention zoo's deck (issue 44): one head of the model, its kind, layer and head picked in the
browser, every kind x layer x head sent for the score function, weighting, local window and token window the
server's widgets chose; what the page sends the view is checked here (the builders' own figures for every pick, the
model's numbers, the deep link, the CSVs, the words in 中文), the browser's side in tests/test_browser_zoo_view.py.
The page's server-side parts and the toy: tests/test_page_zoo_training_tour.py."""
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from apptest_utils import browser_says, browser_view, browser_view_sent, browser_view_whole, no_exceptions, run_page
from model.analysis import zoo
from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from test_page_ffn import arr, assert_same, query
from viz import ROOT
from viz.core.catalogue import message
from viz.core.context import Traced
from viz.core.i18n import words
from viz.figures.browser_view import figure_spec
from viz.figures.style import NORMAL, Look

TEXT = "a b c d e"
KINDS = ("encoder", "decoder", "cross")


@pytest.fixture(scope="module")
def bundle():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse")


@pytest.fixture(scope="module")
def trace(bundle):
    return trace_sentence(bundle, TEXT)


def deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The deck's head (the pick...) and body (every head's figures and words)."""
    return browser_view_sent(browser_view_whole(at, "zoo-deck") if whole else at, "zoo-deck")


def test_the_first_screen_holds_the_pick_and_the_whole_body_every_kind_layer_and_head(trace):
    at = run_page("zoo.py", model="toy-reverse", text=TEXT, kind="decoder", layer=1, head=3)
    no_exceptions(at)
    head, body = deck(at)
    assert head["pick"] == {"kind": "decoder", "layer": 1, "head": 3} and list(body["picks"]) == ["decoder:1:3"]
    assert body["names"] == ["kind", "layer", "head"] and body["heads"] == 4 and body["mean"] is False
    assert body["url_names"] == {"kind": "kind", "layer": "layer", "head": "head"}
    assert body["layers"] == {"encoder": 2, "decoder": 2, "cross": 2}
    said = body["words"]
    assert said["head"] == "Head" and said["head_names"] == {str(h): f"head {h}" for h in range(4)}    # no mean
    assert said["kind"] == message("en", "zoo.kind")
    assert said["kind_names"] == {kind: message("en", f"zoo.kind.{kind}") for kind in KINDS}
    assert query(at)["kind"] == "decoder" and query(at)["layer"] == "1" and query(at)["head"] == "3"
    # the kind, layer and head are no widgets of the page's; the score, weighting stay the server's
    keys = [w.key for kind in ("radio", "selectbox") for w in at.get(kind)]
    assert {"zoo-source", "zoo-score", "zoo-weighting"} <= set(keys)
    assert not any(re.search("kind|layer|head", k or "") for k in keys), keys
    head, body = deck(at, whole=True)
    no_exceptions(at)
    assert head["whole"] and head["pick"] == {"kind": "decoder", "layer": 1, "head": 3}
    assert sorted(body["picks"]) == sorted(f"{k}:{layer}:{h}" for k in KINDS for layer in range(2) for h in range(4))
    for key, part in body["picks"].items():
        kind, layer, h = key.split(":")
        q, k = (trace[schema.attn_name(kind, int(layer), x)][int(h)] for x in "qk")
        pattern = trace[schema.pattern_name(kind, int(layer))][int(h)]
        weights = arr(part["figures"]["weights"]["data"][0]["z"])
        shown = ~np.isnan(weights)                                                   # the mask's cells: blank
        assert np.allclose(weights[shown], pattern[shown], atol=1e-5), key        # scaled dot + softmax: the head's
        scores = zoo.scores("scaled", q, k)
        assert np.allclose(arr(part["figures"]["scores"]["data"][0]["z"])[shown], scores[shown], atol=1e-4), key
        assert part["files"]["weights"] == f"zoo-weights-toy-reverse-{kind}-L{layer}-H{h}-scaled-soft"
        assert set(part["figures"]) == {"scores", "weights", "output", "gallery-scores", "gallery-weightings"}
        gap = float(part["texts"]["check"].rsplit("difference ", 1)[1].rstrip(")."))
        assert gap < 1e-5
        assert ("causal mask" in part["texts"]["read"]) == (kind == "decoder")


def test_each_picks_figures_are_the_page_builders(bundle, trace):
    """The deck calls the page's own builders (Head.picture, Head.galleries: the toy's too): a pick's figures are
    what they draw for that head, exactly."""
    from viz.pages.zoo import Head, map_size, model_inputs
    at = run_page("zoo.py", model="toy-reverse", text=TEXT, score="additive", weighting="local", window=2)
    no_exceptions(at)
    _, body = deck(at, whole=True)
    page_look = Look(words("en"), NORMAL)
    traced = Traced(("toy-reverse",), bundle, trace)
    for kind, layer, h in (("encoder", 0, 0), ("decoder", 1, 3), ("cross", 1, 2)):
        made = Head(model_inputs(traced, kind, layer, h), "additive", "local", 2, "argmax", 0, map_size(page_look))
        figures = {**made.picture(page_look), **made.galleries(page_look)}
        part = body["picks"][f"{kind}:{layer}:{h}"]
        for name, figure in figures.items():
            assert_same(part["figures"][name], json.loads(json.dumps(figure_spec(figure))), f"{kind}:{layer}:{h} {name}")
        assert part["texts"]["note"] == made.texts(page_look.words)["note"]


def test_a_browser_pick_rebuilds_nothing_and_a_deep_link_is_checked():
    at = run_page("zoo.py", model="toy-reverse", text=TEXT, kind="cross", layer=1, head=2)
    no_exceptions(at)
    deck(at, whole=True)
    sent = browser_view(at, "zoo-deck-view").proto.bytes
    browser_says(at, state={"pick": {"kind": "encoder", "layer": 0, "head": 1}}, where="zoo-deck")   # a teacher's
    no_exceptions(at)
    assert {k: query(at)[k] for k in ("kind", "layer", "head")} == {"kind": "encoder", "layer": "0", "head": "1"}
    assert deck(at)[0]["pick"] == {"kind": "encoder", "layer": 0, "head": 1}
    assert browser_view(at, "zoo-deck-view").proto.bytes == sent           # the same message: the browser has it
    # a server-side widget (the score): a new body for every head, the pick kept
    at.radio(key="zoo-score").set_value("cosine").run()
    no_exceptions(at)
    head, body = deck(at, whole=True)
    assert head["pick"] == {"kind": "encoder", "layer": 0, "head": 1} and query(at)["score"] == "cosine"
    assert "Cosine" in body["picks"]["encoder:0:1"]["figures"]["scores"]["layout"]["title"]["text"]
    bad = run_page("zoo.py", model="toy-reverse", text=TEXT, head=9, layer=7)
    no_exceptions(bad)
    said = " ".join(w.value for w in bad.warning)
    assert "head='9'" in said and "layer='7'" in said
    assert deck(bad)[0]["pick"] == {"kind": "encoder", "layer": 0, "head": 0}


@pytest.mark.parametrize("figure_name", ["scores", "weights", "output"])
def test_a_heads_csv_is_its_numbers(trace, figure_name):
    at = run_page("zoo.py", model="toy-reverse", text=TEXT)
    browser_says(at, trigger=("csv", {"kind": "decoder", "layer": 1, "head": 2, "figure": figure_name}),
                 where="zoo-deck")
    no_exceptions(at)
    head, _ = deck(at)
    assert head["csv"]["name"] == f"zoo-{figure_name}-toy-reverse-decoder-L1-H2-scaled-soft.csv"
    assert {k: query(at)[k] for k in ("kind", "layer", "head")} == {"kind": "decoder", "layer": "1", "head": "2"}
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    pattern = trace[schema.pattern_name("decoder", 1)][2]
    if figure_name == "weights":
        np.testing.assert_allclose(frame.to_numpy(), pattern, atol=1e-5)
    elif figure_name == "output":
        v = trace[schema.attn_name("decoder", 1, "v")][2]
        np.testing.assert_allclose(frame.to_numpy(), pattern @ v, atol=1e-4)
    else:
        assert frame.shape == pattern.shape and np.isnan(frame.to_numpy()[0, 1])      # a hidden key: no number


def test_the_deck_in_chinese_and_in_presenter_mode():
    at = run_page("zoo.py", model="toy-reverse", text=TEXT, lang="zh", present=1, kind="decoder")
    no_exceptions(at)
    head, body = deck(at, whole=True)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    assert body["words"]["head"] == message("zh", "ui.head")
    assert body["words"]["head_names"] == {str(h): message("zh", "ui.head_n", h=h) for h in range(4)}
    assert body["words"]["kind_names"]["cross"] == message("zh", "zoo.kind.cross")
    for part in body["picks"].values():
        for fig in part["figures"].values():
            title = fig["layout"]["title"]["text"] if fig["layout"].get("title") else ""
            assert not title or re.search(r"[\u4e00-\u9fff]", title), title
            assert fig["layout"]["font"]["size"] >= 20
        assert all(re.search(r"[\u4e00-\u9fff]", text) for text in part["texts"].values() if text)


def test_the_toy_example_stays_the_servers():
    """The toy's queries and keys are edited on the page: its pictures are the server's charts (the same builders),
    with no deck, and the URL names no kind, layer or head."""
    at = run_page("zoo.py", model="toy-reverse", text=TEXT, source="toy", score="general")
    no_exceptions(at)
    keys = [chart.key for chart in at.get("plotly_chart")]
    assert keys == ["zoo-scores", "zoo-weights", "zoo-output", "zoo-gallery-scores", "zoo-gallery-weightings"]
    assert not [node for node in at._tree if getattr(node, "key", None) == "zoo-deck-view"]
    assert not {"kind", "layer", "head"} & set(at.query_params)
    assert "random, fixed" in " ".join(i.value for i in at.info)
