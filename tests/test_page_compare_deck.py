"""AppTest of the compare page's deck (issue 44): one head on two sentences, its layer and head (or the layer's mean
of the heads) picked in the browser, every layer x head sent for the kind, sentence B and token window the server's
widgets chose; what the page sends the view is checked here (the builders' figures for every pick, the model's
numbers, the word-order test, the deep link, the CSVs), the browser's side in tests/test_browser_compare_view.py.
The two-heads mode: head A the server's select boxes, head B a deck of every layer x head (and mean) against A."""
import io

import numpy as np
import pandas as pd
import pytest

from apptest_utils import browser_says, browser_view, browser_view_sent, browser_view_whole, no_exceptions, run_page
from model.analysis import word_order
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

TEXT, TEXT_B = "a b c d e f", "f b c d e a"          # B: the page's default, A with two words swapped


@pytest.fixture(scope="module")
def bundle():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse")


@pytest.fixture(scope="module")
def traces(bundle):
    return trace_sentence(bundle, TEXT), trace_sentence(bundle, TEXT_B)


def deck(at, whole: bool = False) -> tuple[dict, dict]:
    return browser_view_sent(browser_view_whole(at, "cmp-deck") if whole else at, "cmp-deck")


def test_the_deck_holds_every_layer_and_head_and_each_layers_mean(traces):
    trace_a, trace_b = traces
    at = run_page("compare.py", model="toy-reverse", text=TEXT, layer=1, head=-1)
    no_exceptions(at)
    head, body = deck(at)
    assert head["pick"] == {"layer": 1, "head": -1} and list(body["picks"]) == ["1:-1"]      # the first screen
    assert body["names"] == ["layer", "head"] and body["heads"] == 4 and body["mean"] is True
    assert body["url_names"] == {"layer": "layer", "head": "head"} and body["layers"] == {"encoder": 2}
    assert body["words"]["head_names"] == {"-1": message("en", "ui.head_mean"),
                                           **{str(h): message("en", "ui.head_n", h=h) for h in range(4)}}
    assert "kind" not in body["words"]                       # the kind is the server's radio
    assert query(at)["layer"] == "1" and query(at)["head"] == "-1"
    keys = [w.key for kind in ("radio", "selectbox") for w in at.get(kind)]
    assert {"compare-mode", "compare-kind"} <= set(keys) and not any("layer" in k or "head" in k for k in keys)
    head, body = deck(at, whole=True)
    no_exceptions(at)
    assert sorted(body["picks"]) == sorted(f"{layer}:{h}" for layer in range(2) for h in range(-1, 4))
    perm = word_order.token_permutation(trace_a.meta["src_ids"], trace_b.meta["src_ids"])
    for key, part in body["picks"].items():
        layer, h = map(int, key.split(":"))
        a, b = (schema.stacked(tr, "encoder")[layer] for tr in traces)
        a, b = (m.mean(0) if h == -1 else m[h] for m in (a, b))
        assert np.allclose(arr(part["figures"]["a"]["data"][0]["z"]), a, atol=1e-5), key
        assert np.allclose(arr(part["figures"]["b"]["data"][0]["z"]), b, atol=1e-5), key
        assert np.allclose(arr(part["figures"]["order"]["data"][0]["z"]), word_order.reorder_to(b, perm) - a,
                           atol=1e-5), key
        name = message("en", "ui.head_mean") if h == -1 else message("en", "ui.head_n", h=h)
        assert name in part["figures"]["a"]["layout"]["title"]["text"]
        assert part["files"]["a"] == f"toy-reverse-A-encoder-L{layer}-{'avg' if h == -1 else f'H{h}'}"
        assert part["texts"] == {"translation-a": trace_a.meta["translation"],
                                 "translation-b": trace_b.meta["translation"]}


def test_each_picks_figures_are_the_page_builders(bundle, traces):
    from viz.pages.compare import SentencePair, map_size
    at = run_page("compare.py", model="toy-reverse", text=TEXT, kind="cross")
    no_exceptions(at)
    _, body = deck(at, whole=True)
    assert [b.get("title") for b in body["blocks"] if b.get("id") == "order-note"] == [message("en", "compare.decoder_rows")]
    page_look = Look(words("en"), NORMAL)
    traced_a, traced_b = (Traced((str(i),), bundle, tr) for i, tr in enumerate(traces))
    for layer, h in ((0, None), (1, 2)):
        made = SentencePair(traced_a, traced_b, "cross", layer, h, 0, map_size(page_look))
        part = body["picks"][f"{layer}:{-1 if h is None else h}"]
        assert set(part["figures"]) == {"a", "b"}                 # no word-order test on cross-attention
        for name, figure in made.figures(page_look).items():
            import json
            assert_same(part["figures"][name], json.loads(json.dumps(figure_spec(figure))), f"{layer}:{h} {name}")


def test_a_browser_pick_rebuilds_nothing_a_deep_link_is_checked_and_the_heads_mode_stays_the_servers():
    at = run_page("compare.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert deck(at)[0]["pick"] == {"layer": 0, "head": 0}
    deck(at, whole=True)
    sent = browser_view(at, "cmp-deck-view").proto.bytes
    browser_says(at, state={"pick": {"layer": 1, "head": -1}}, where="cmp-deck")      # a teacher's pick
    no_exceptions(at)
    assert query(at)["layer"] == "1" and query(at)["head"] == "-1"
    assert deck(at)[0]["pick"] == {"layer": 1, "head": -1}
    assert browser_view(at, "cmp-deck-view").proto.bytes == sent
    at.radio(key="compare-mode").set_value("heads").run()          # two heads: A the server's pickers, B a deck
    no_exceptions(at)
    assert at.selectbox(key="compare-encoder-layer").value == 1 and at.selectbox(key="compare-encoder-head").value == -1
    assert not [node for node in at._tree if getattr(node, "key", None) == "cmp-deck-view"]
    assert len(at.get("plotly_chart")) == 0 and heads_deck(at)[0]["pick"] == {"layer": 0, "head": 1}
    bad = run_page("compare.py", model="toy-reverse", text=TEXT, head=9)
    no_exceptions(bad)
    assert "head='9'" in " ".join(w.value for w in bad.warning)
    assert deck(bad)[0]["pick"] == {"layer": 0, "head": 0}


@pytest.mark.parametrize("figure_name", ["a", "b", "order"])
def test_a_picks_csv_is_its_whole_map(traces, figure_name):
    trace_a, trace_b = traces
    at = run_page("compare.py", model="toy-reverse", text=TEXT)
    browser_says(at, trigger=("csv", {"layer": 1, "head": 2, "figure": figure_name}), where="cmp-deck")
    no_exceptions(at)
    head, _ = deck(at)
    stem = {"a": "A-encoder-L1-H2", "b": "B-encoder-L1-H2", "order": "order-test-L1"}[figure_name]
    assert head["csv"]["name"] == f"toy-reverse-{stem}.csv"
    assert query(at)["layer"] == "1" and query(at)["head"] == "2"
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0).to_numpy()
    a, b = (schema.stacked(tr, "encoder")[1][2] for tr in traces)
    perm = word_order.token_permutation(trace_a.meta["src_ids"], trace_b.meta["src_ids"])
    expected = {"a": a, "b": b, "order": word_order.reorder_to(b, perm) - a}[figure_name]
    np.testing.assert_allclose(frame, expected, atol=1e-5)


def test_the_deck_in_chinese_and_in_presenter_mode():
    at = run_page("compare.py", model="toy-reverse", text=TEXT, lang="zh", present=1)
    no_exceptions(at)
    head, body = deck(at, whole=True)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    assert body["words"]["head"] == message("zh", "ui.head") and body["words"]["layer"] == message("zh", "ui.layer")
    assert body["words"]["head_names"]["-1"] == message("zh", "ui.head_mean")
    titles = [b["title"] for b in body["blocks"] if b.get("title")]
    assert message("zh", "compare.sentences.caption") in titles and message("zh", "compare.order_test") in titles
    for part in body["picks"].values():
        for fig in part["figures"].values():
            assert fig["layout"]["font"]["size"] >= 20


# -- two heads on one sentence: A the server's pick, B the browser's -------------------------------------------------
def heads_deck(at, whole: bool = False) -> tuple[dict, dict]:
    return browser_view_sent(browser_view_whole(at, "cmp-heads-deck") if whole else at, "cmp-heads-deck")


def test_the_heads_deck_holds_head_a_once_and_every_head_b_with_b_minus_a(bundle, traces):
    """Head A (the server's select boxes: layer 1, head 2) is sent once, in the part every pick shows (""); each head B
    (every layer's heads and their mean) has its map and B − A, the page's builders' (HeadPair), the model's numbers;
    B is written to the URL as layer_b= and head_b=, and no widget of the page's picks it."""
    from viz.pages.compare import HeadPair, shown_tokens
    at = run_page("compare.py", model="toy-reverse", text=TEXT, mode="heads", layer=1, head=2, layer_b=0, head_b=-1)
    no_exceptions(at)
    head, body = heads_deck(at)
    assert head["pick"] == {"layer": 0, "head": -1} and sorted(body["picks"]) == ["", "0:-1"]       # the first screen
    assert body["url_names"] == {"layer": "layer_b", "head": "head_b"} and body["mean"] is True
    assert body["blocks"][0] == {"type": "pickers", "title": message("en", "compare.head", which="B")}
    assert query(at)["layer_b"] == "0" and query(at)["head_b"] == "-1" and query(at)["layer"] == "1"
    keys = [w.key for w in at.selectbox]
    assert "compare-encoder-layer" in keys and not any(k.startswith("compare-b") for k in keys if k)
    head, body = heads_deck(at, whole=True)
    no_exceptions(at)
    assert sorted(body["picks"]) == sorted(["", *(f"{layer}:{h}" for layer in range(2) for h in range(-1, 4))])
    a = schema.stacked(traces[0], "encoder")[1][2]
    assert set(body["picks"][""]["figures"]) == {"a"}
    assert np.allclose(arr(body["picks"][""]["figures"]["a"]["data"][0]["z"]), a, atol=1e-5)
    page_look = Look(words("en"), NORMAL)
    q, k = shown_tokens("encoder", a)
    traced = Traced(("a",), bundle, traces[0])
    for key, part in body["picks"].items():
        if not key:
            continue
        layer, h = map(int, key.split(":"))
        b = schema.stacked(traces[0], "encoder")[layer]
        b = b.mean(0) if h == -1 else b[h]
        assert set(part["figures"]) == {"b", "diff"}
        assert np.allclose(arr(part["figures"]["b"]["data"][0]["z"]), b, atol=1e-5), key
        assert np.allclose(arr(part["figures"]["diff"]["data"][0]["z"]), b - a, atol=1e-5), key
        assert part["files"]["diff"] == f"toy-reverse-encoder-L{layer}-{'avg' if h == -1 else f'H{h}'}-minus-encoder-L1-H2"
        made = HeadPair(traced, "encoder", (1, 2), (layer, None if h == -1 else h), (q.start, q.stop, k.start, k.stop))
        import json
        for name in ("b", "diff"):
            assert_same(part["figures"][name], json.loads(json.dumps(figure_spec(made.figure(name, page_look)))),
                        f"{key} {name}")


def test_a_browser_pick_of_head_b_rebuilds_nothing_and_head_a_on_the_server_builds_a_new_deck():
    at = run_page("compare.py", model="toy-reverse", text=TEXT, mode="heads")
    no_exceptions(at)
    heads_deck(at, whole=True)
    sent = browser_view(at, "cmp-heads-deck-view").proto.bytes
    browser_says(at, state={"pick": {"layer": 1, "head": 3}}, where="cmp-heads-deck")     # a teacher's pick of B
    no_exceptions(at)
    assert query(at)["layer_b"] == "1" and query(at)["head_b"] == "3"
    assert heads_deck(at)[0]["pick"] == {"layer": 1, "head": 3}
    assert browser_view(at, "cmp-heads-deck-view").proto.bytes == sent
    at.selectbox(key="compare-encoder-head").set_value(3).run()                        # head A: a new deck
    no_exceptions(at)
    head, body = heads_deck(at)
    assert head["pick"] == {"layer": 1, "head": 3} and "H3" in body["picks"][""]["files"]["a"]


@pytest.mark.parametrize("figure_name", ["a", "b", "diff"])
def test_a_csv_of_the_heads_deck_is_its_whole_map(traces, figure_name):
    at = run_page("compare.py", model="toy-reverse", text=TEXT, mode="heads", layer=0, head=1)
    browser_says(at, trigger=("csv", {"layer": 1, "head": -1, "figure": figure_name}), where="cmp-heads-deck")
    no_exceptions(at)
    head, _ = heads_deck(at)
    stem = {"a": "encoder-L0-H1", "b": "encoder-L1-avg", "diff": "encoder-L1-avg-minus-encoder-L0-H1"}[figure_name]
    assert head["csv"]["name"] == f"toy-reverse-{stem}.csv"
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0).to_numpy()
    a, b = schema.stacked(traces[0], "encoder")[0][1], schema.stacked(traces[0], "encoder")[1].mean(0)
    np.testing.assert_allclose(frame, {"a": a, "b": b, "diff": b - a}[figure_name], atol=1e-5)


def test_the_heads_deck_in_chinese_and_presenter_mode():
    at = run_page("compare.py", model="toy-reverse", text=TEXT, mode="heads", lang="zh", present="1")
    no_exceptions(at)
    _, body = heads_deck(at, whole=True)
    assert body["blocks"][0]["title"] == message("zh", "compare.head", which="B")
    assert body["words"]["head"] == message("zh", "ui.head") and body["text_px"] >= 20
    assert message("zh", "ui.head_n", h=1) in body["picks"]["0:1"]["figures"]["b"]["layout"]["title"]["text"]
