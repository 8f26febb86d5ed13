"""AppTest of the LayerNorm & residual page's deck (issue 44): its layer is picked in the browser, every layer of the
stack sent for the stack, norm and token the server's pickers chose; what the page sends the view is checked here
(the model's own numbers, the deep link, the CSVs, the words in 中文), the browser's side in
tests/test_browser_layernorm_view.py. The page's server-side parts: tests/test_page_positional_layernorm.py."""
import io
import re

import numpy as np
import pandas as pd
import pytest

from apptest_utils import browser_says, browser_view, browser_view_sent, browser_view_whole, no_exceptions, run_page
from model.analysis.norms import batch_norm_drift, layer_norm_stats
from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from test_page_ffn import arr, query
from viz import ROOT
from viz.core.catalogue import message

TEXT = "a b c d e"


@pytest.fixture(scope="module")
def trace():
    return trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), TEXT)


def deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The deck's head (the pick...) and body (every layer's figures and captions)."""
    return browser_view_sent(browser_view_whole(at, "ln-deck") if whole else at, "ln-deck")


def assert_layer_is_the_models(part: dict, trace, stack: str, layer: int, norm: str, token: int) -> None:
    """A layer's part holds the builders' pictures of the model's own numbers: each token's mean and std before and
    after the norm, the token's features, the norm's gain and bias, its input for LN vs BN; the layer named."""
    hook = lambda h: trace.arrays[schema.norm_name(stack, layer, norm, h)]      # noqa: E731
    stats = part["figures"]["stats"]
    assert f"layer {layer}," in stats["layout"]["title"]["text"]
    mean_b, mean_a, std_b, std_a = (arr(t["y"]) for t in stats["data"])              # the builder's four bars
    assert np.allclose(mean_b, hook("mean"), atol=1e-5) and np.allclose(std_b, hook("std"), atol=1e-5)
    after = layer_norm_stats(hook("normalized"))
    assert np.allclose(mean_a, after[0], atol=1e-5) and np.allclose(std_a, after[1], atol=1e-5)
    gain = part["figures"]["gain"]["data"]
    assert np.allclose(arr(gain[0]["y"]), hook("gain"), atol=1e-5) and np.allclose(arr(gain[1]["y"]), hook("bias"), atol=1e-5)
    hist = part["figures"]["hist"]["data"]
    assert np.allclose(np.sort(arr(hist[0]["x"])), np.sort(hook("in")[token]), atol=1e-5)    # the token's features
    drift = part["figures"]["drift"]["data"]
    assert np.allclose(arr(drift[0]["y"]), batch_norm_drift(hook("in"), 0, 1e-5), atol=1e-4)
    assert f"input mean {hook('mean')[token]:.4f}" in part["texts"]["hist-caption"]


def test_the_deck_holds_every_layer_of_the_stack_for_the_server_picks(trace):
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT, stack="decoder", layer=1, norm="norm_cross", token=2)
    no_exceptions(at)
    head, body = deck(at)
    assert head["pick"] == {"layer": 1} and list(body["picks"]) == ["1"]                # the first screen: the pick
    assert body["names"] == ["layer"] and body["url_names"] == {"layer": "layer"} and body["layers"] == {"decoder": 2}
    assert "kind" not in body["words"] and body["words"]["layer_names"] == ["layer 0", "layer 1"]
    assert body["blocks"][0] == {"type": "figure", "id": "stats", "csv": True}          # the picture first
    head, body = deck(at, whole=True)
    no_exceptions(at)
    assert head["whole"] and list(body["picks"]) == ["0", "1"]
    for layer in (0, 1):
        assert_layer_is_the_models(body["picks"][str(layer)], trace, "decoder", layer, "norm_cross", 2)
    assert body["picks"]["0"]["files"]["hist"] == "toy-reverse-decoder-L0-norm_cross-token2"
    # the stack, the norm and the token stay server widgets; the layer is no widget of the page's
    keys = [w.key for kind in ("radio", "selectbox") for w in at.get(kind)]
    assert {"ln-stack", "ln-norm-decoder", "ln-token-decoder"} <= set(keys) and not any("layer" in k for k in keys)
    assert len(at.get("plotly_chart")) == 1                                              # the residual stream's


def test_a_deep_link_opens_its_layer_and_a_browser_pick_rebuilds_nothing():
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT, layer=1)
    no_exceptions(at)
    assert deck(at)[0]["pick"] == {"layer": 1} and query(at)["layer"] == "1" and query(at)["stack"] == "encoder"
    deck(at, whole=True)
    sent = browser_view(at, "ln-deck-view").proto.bytes
    browser_says(at, state={"pick": {"layer": 0}}, where="ln-deck")                        # a teacher's pick
    no_exceptions(at)
    assert query(at)["layer"] == "0" and deck(at)[0]["pick"] == {"layer": 0}
    assert browser_view(at, "ln-deck-view").proto.bytes == sent           # the same message: the browser has it
    bad = run_page("layernorm.py", model="toy-reverse", text=TEXT, layer=5)
    no_exceptions(bad)
    assert "URL parameter layer='5'" in " ".join(w.value for w in bad.warning)
    assert deck(bad)[0]["pick"] == {"layer": 0}


def test_a_run_after_the_whole_body_builds_nothing_and_another_token_only_its_histograms():
    """The deck's builders are kept for every session (view.shared_cached): a run after the whole body builds none;
    another token rebuilds each layer's part, but the norm's pictures (norm_part: the same for every token) not."""
    from viz.core import view
    at = browser_view_whole(run_page("layernorm.py", model="toy-reverse", text="b a d c f e"), "ln-deck")
    no_exceptions(at)
    built = list(view._shared)
    at.run()
    no_exceptions(at)
    assert [key for key in view._shared if key not in built] == []
    at.selectbox(key="ln-token-encoder").select(3).run()
    browser_view_whole(at, "ln-deck")
    no_exceptions(at)
    new = [key[0][1] for key in view._shared if key not in built]
    assert sorted(new) == ["built_deck", "built_deck", "layer_part", "layer_part"], new   # first screen, whole


@pytest.mark.parametrize("figure_name, columns", [("stats", 4), ("hist", 3), ("gain", 2), ("bn", 64), ("drift", 1)])
def test_a_layers_csv_is_its_numbers(trace, figure_name, columns):
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT, norm="norm_ff", token=1)
    browser_says(at, trigger=("csv", {"layer": 1, "figure": figure_name}), where="ln-deck")
    no_exceptions(at)
    head, _ = deck(at)
    stem = {"stats": "stats", "hist": "token1", "gain": "gain-bias", "bn": "ln-vs-bn", "drift": "bn-drift"}[figure_name]
    assert head["csv"]["name"] == f"toy-reverse-encoder-L1-norm_ff-{stem}.csv"
    assert query(at)["layer"] == "1"                                       # the pick shown: the URL's too
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert frame.shape[1] == columns
    hook = lambda h: trace.arrays[schema.norm_name("encoder", 1, "norm_ff", h)]      # noqa: E731
    if figure_name == "stats":
        np.testing.assert_allclose(frame.to_numpy()[:, :2], np.stack([hook("mean"), hook("std")], 1), atol=1e-5)
    elif figure_name == "hist":
        np.testing.assert_allclose(frame.to_numpy()[:, 0], hook("in")[1], atol=1e-5)
    elif figure_name == "gain":
        np.testing.assert_allclose(frame.to_numpy(), np.stack([hook("gain"), hook("bias")], 1), atol=1e-5)
    elif figure_name == "bn":
        np.testing.assert_allclose(frame.to_numpy(), hook("in"), atol=1e-4)


def test_the_deck_in_chinese_and_in_presenter_mode():
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT, lang="zh", present=1, stack="decoder")
    no_exceptions(at)
    head, body = deck(at, whole=True)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    assert body["words"]["layer"] == message("zh", "ui.layer")
    assert body["words"]["layer_names"] == [message("zh", "ui.layer_n", i=i) for i in range(2)]
    titles = [block["title"] for block in body["blocks"] if block.get("title")]
    assert titles and all(re.search(r"[\u4e00-\u9fff]", title) for title in titles)
    for part in body["picks"].values():
        for fig in part["figures"].values():
            assert re.search(r"[\u4e00-\u9fff]", fig["layout"]["title"]["text"]), fig["layout"]["title"]["text"]
            assert fig["layout"]["font"]["size"] >= 20
        assert all(re.search(r"[\u4e00-\u9fff]", text) for text in part["texts"].values())
