"""AppTest of the live training page's result view (issue 44): after a training, its snapshots are a deck drawn in the
browser, a pick a snapshot (step i: the i-th, named by its training step) and a layer and head of its two maps (or
the layer's mean of heads), all made by the page's own builders and sent at once: a step's part ("3") its curve,
caption and grid, once a snapshot, a pick's ("3:1:-1") its two maps; no server widget picks any of it; the CSVs (the
history, a map's matrix at the browser's layer and head) come from the server; no pick goes in the URL. What the
browser does with it: tests/test_browser_training_view.py. Each test trains a small run the page offers (copy, 20
steps: four snapshots)."""
import io
import json
import re

import numpy as np
import pandas as pd

from apptest_utils import browser_says, browser_view, browser_view_sent, no_exceptions, run_page
from test_page_ffn import arr, query
from viz.core.catalogue import message
from viz.core.i18n import words
from viz.figures.browser_view import figure_spec, head_names
from viz.figures.style import NORMAL, PRESENTER, Look

WHERE = "train-deck"


def trained(size: str = "tiny", **params):
    """The page after one toy training (copy, 20 steps: snapshots at steps 5, 10, 15 and 20) and the run."""
    at = run_page("training.py", model="toy-reverse", text="a b c d", task="copy", size=size, steps=20,
                  example="a b c", **params)
    next(b for b in at.button if b.key == "train-button").click()
    at.run()
    no_exceptions(at)
    return at, at.session_state["train-result"]


def deck(at) -> tuple[dict, dict]:
    return browser_view_sent(at, WHERE)


def as_sent(fig) -> dict:
    """A builder's figure as the deck's body holds it (figure_spec, through JSON)."""
    return json.loads(json.dumps(figure_spec(fig)))


def test_the_deck_holds_every_snapshot_layer_and_head_as_the_page_builders_draw_them():
    import viz.pages.training as page          # the page's builders (the run itself imports the page afresh)
    at, run = trained("small")                 # 2 layers of 4 heads (encoder and decoder alike)
    head, body = deck(at)
    n = len(run.snapshots)
    assert [snap.step for snap in run.snapshots] == [5, 10, 15, 20]
    # the last snapshot, the last layer's mean of heads first (as the page's select boxes were), every pick sent
    assert head["pick"] == {"step": n - 1, "layer": 1, "head": -1} and head["whole"]
    assert body["names"] == ["step", "layer", "head"] and body["url_names"] == {}     # no pick in the URL
    assert body["steps"] == n and body["layers"] == {"decoder": 2} and body["heads"] == 4 and body["mean"]
    assert body["words"]["step_names"] == ["5", "10", "15", "20"]           # the steps named by the training's steps
    assert body["words"]["layer_names"] == [message("en", "ui.layer_n", i=i) for i in range(2)]
    assert body["words"]["head_names"] == head_names(4, words("en"))         # "-1", the mean, first
    picks = [(layer, h) for layer in range(2) for h in (-1, 0, 1, 2, 3)]
    assert set(body["picks"]) == {str(i) for i in range(n)} | {f"{i}:{layer}:{h}" for i in range(n) for layer, h in picks}
    assert body["blocks"][:3] == [{"type": "figure", "id": "curve", "csv": True}, {"type": "text", "id": "caption"},
                                  {"type": "figure", "id": "grid", "csv": False}]
    assert body["blocks"][-1] == {"type": "pickers", "title": message("en", "training.maps.pick")}  # under the maps
    look = Look(words("en"), NORMAL)
    for i, snap in enumerate(run.snapshots):
        step = body["picks"][str(i)]                 # what every layer and head of the snapshot shows, once
        assert set(step["figures"]) == {"curve", "grid"}
        assert step["figures"]["curve"] == as_sent(page.snapshot_curve(run, snap, look))
        assert step["figures"]["grid"] == as_sent(page.snapshot_grid(snap, look))
        assert step["figures"]["curve"]["layout"]["shapes"][0]["x0"] == snap.step         # the snapshot's marker
        assert f"Step {snap.step}:" in step["texts"]["caption"] and f"loss {snap.loss:.3f}" in step["texts"]["caption"]
        assert step["files"] == {"curve": "live-copy-small-curve", "grid": f"live-copy-grid-step{snap.step}"}
        for layer, h in picks:
            part = body["picks"][f"{i}:{layer}:{h}"]
            assert set(part["figures"]) == {"cross", "encoder"} and not part["texts"]
            maps = page.snapshot_maps(run, snap, layer, None if h == -1 else h, look)
            assert part["figures"]["cross"] == as_sent(maps["cross"])
            assert part["figures"]["encoder"] == as_sent(maps["encoder"])
            # ...which are the run's own numbers for that layer and head (or their mean)
            for which in ("cross", "encoder"):
                weights = getattr(snap, which)[layer]
                np.testing.assert_allclose(arr(part["figures"][which]["data"][0]["z"]),
                                           weights.mean(0) if h == -1 else weights[h], atol=1e-6)
            at_pick = f"step{snap.step}-L{layer}-{'avg' if h == -1 else f'H{h}'}"
            assert part["files"] == {"cross": f"live-copy-cross-{at_pick}", "encoder": f"live-copy-encoder-{at_pick}"}
    # no server widget picks the snapshot, the layer or the head
    keys = [w.key for kind in ("select_slider", "selectbox", "slider") for w in at.get(kind)]
    assert not {"train-layer", "train-head", "train-snapshot"} & set(keys)
    assert at.get("plotly_chart")[0].key == "train-try-fig"                  # the server draws the try-out map alone


def test_a_pick_told_to_the_server_rebuilds_nothing_and_stays_out_of_the_url():
    at, run = trained()
    sent = browser_view(at, f"{WHERE}-view").proto.bytes
    # the browser tells the server the reader's pick (a run it did not cause by it came back): the run takes it and
    # builds nothing; the URL never holds it
    browser_says(at, state={"pick": {"step": 1, "layer": 0, "head": 1}}, where=WHERE)
    no_exceptions(at)
    assert deck(at)[0]["pick"] == {"step": 1, "layer": 0, "head": 1}
    assert not {"step", "layer", "head"} & set(query(at))
    assert browser_view(at, f"{WHERE}-view").proto.bytes == sent             # the same message: the browser has it
    at.run()                                                                 # another server run keeps the pick
    assert deck(at)[0]["pick"] == {"step": 1, "layer": 0, "head": 1}
    assert query(at)["task"] == "copy" and query(at)["steps"] == "20"        # the training's settings stay linked
    # a pick past the training's (a client's own): within its snapshots, layers and heads
    browser_says(at, state={"pick": {"step": 9, "layer": 3, "head": 7}}, where=WHERE)
    assert deck(at)[0]["pick"] == {"step": 3, "layer": 0, "head": 1}


def test_the_csvs_are_the_history_and_the_picked_layer_and_heads_matrices():
    at, run = trained()
    browser_says(at, trigger=("csv", {"step": 1, "layer": 0, "head": 1, "figure": "cross"}), where=WHERE)
    no_exceptions(at)
    head, _ = deck(at)
    assert head["csv"]["name"] == "live-copy-cross-step10-L0-H1.csv"
    assert head["pick"] == {"step": 1, "layer": 0, "head": 1} and not {"step", "layer", "head"} & set(query(at))
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert list(frame.index) == ["0 a", "1 b", "2 c", "3 </s>"] and list(frame.columns) == list(frame.index)
    np.testing.assert_allclose(frame.to_numpy(), run.snapshots[1].cross[0, 1], atol=1e-5)
    browser_says(at, trigger=("csv", {"step": 3, "layer": 0, "head": -1, "figure": "encoder"}), where=WHERE)
    head, _ = deck(at)
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert head["csv"]["name"] == "live-copy-encoder-step20-L0-avg.csv"
    np.testing.assert_allclose(frame.to_numpy(), run.snapshots[3].encoder[0].mean(0), atol=1e-5)
    browser_says(at, trigger=("csv", {"step": 0, "layer": 0, "head": 0, "figure": "curve"}), where=WHERE)
    head, _ = deck(at)
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert head["csv"]["name"] == "live-copy-tiny-curve.csv"
    assert list(frame.index) == [5, 10, 15, 20] and list(frame.columns) == ["loss", "accuracy", "lr", "seconds"]
    np.testing.assert_allclose(frame.to_numpy()[:, 0], [r["loss"] for r in run.history], rtol=1e-6)


def test_the_deck_in_chinese_and_in_presenter_mode():
    at, run = trained(lang="zh", present=1)
    head, body = deck(at)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    said = body["words"]
    assert said["previous"] == message("zh", "step.previous") and said["step"] == message("zh", "training.scrub")
    assert said["layer_names"] == [message("zh", "ui.layer_n", i=0)] and said["head_names"]["-1"] == message(
        "zh", "ui.head_mean")
    assert body["blocks"][-1]["title"] == message("zh", "training.maps.pick")
    zh = re.compile(r"[\u4e00-\u9fff]")
    for key, part in body["picks"].items():
        for fig in part["figures"].values():
            assert zh.search(fig["layout"]["title"]["text"]), fig["layout"]["title"]["text"]
            assert fig["layout"]["font"]["size"] >= 20
        if ":" not in key:
            assert zh.search(part["texts"]["caption"])
    snap = run.snapshots[-1]
    import viz.pages.training as page
    assert body["picks"]["3"]["figures"]["grid"] == as_sent(page.snapshot_grid(snap, Look(words("zh"), PRESENTER)))
    assert body["picks"]["3:0:1"]["figures"]["cross"] == as_sent(
        page.snapshot_maps(run, snap, 0, 1, Look(words("zh"), PRESENTER))["cross"])
