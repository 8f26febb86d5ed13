"""AppTest of the live training page's result view (issue 44): after a training, its snapshots are a deck drawn in the
browser (step i: the i-th snapshot, named by its training step), every snapshot's curve, caption, grid and two maps
sent at once, made by the page's own builders; the layer and head of the maps stay server select boxes (a change
builds the maps again, not the curves and grids); the CSVs (the history, a map's matrix) come from the server; the
snapshot never goes in the URL. What the browser does with it: tests/test_browser_training_view.py. Each test trains
the smallest run the page offers (copy, tiny, 20 steps: four snapshots, well under a second)."""
import io
import json
import re

import numpy as np
import pandas as pd

from apptest_utils import browser_says, browser_view, browser_view_sent, no_exceptions, run_page
from test_page_ffn import arr, query
from viz.core.catalogue import message
from viz.core.i18n import words
from viz.figures.browser_view import figure_spec
from viz.figures.style import NORMAL, PRESENTER, Look

WHERE = "train-deck"


def trained(**params):
    """The page after one toy training (copy, tiny, 20 steps: snapshots at steps 5, 10, 15 and 20) and the run."""
    at = run_page("training.py", model="toy-reverse", text="a b c d", task="copy", size="tiny", steps=20,
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


def test_the_deck_holds_every_snapshot_as_the_page_builders_draw_it():
    import viz.pages.training as page          # the page's builders (the run itself imports the page afresh)
    at, run = trained()
    head, body = deck(at)
    n = len(run.snapshots)
    assert [snap.step for snap in run.snapshots] == [5, 10, 15, 20]
    assert head["pick"] == {"step": n - 1} and head["whole"]                 # the last snapshot first, every one sent
    assert body["names"] == ["step"] and body["steps"] == n and body["url_names"] == {}      # no step= in the URL
    assert body["words"]["step_names"] == ["5", "10", "15", "20"]           # the steps named by the training's steps
    assert list(body["picks"]) == [str(i) for i in range(n)]
    assert body["blocks"][:3] == [{"type": "figure", "id": "curve", "csv": True}, {"type": "text", "id": "caption"},
                                  {"type": "figure", "id": "grid", "csv": False}]
    look = Look(words("en"), NORMAL)
    for i, snap in enumerate(run.snapshots):
        part = body["picks"][str(i)]
        assert part["figures"]["curve"] == as_sent(page.snapshot_curve(run, snap, look))
        assert part["figures"]["grid"] == as_sent(page.snapshot_grid(snap, look))
        maps = page.snapshot_maps(run, snap, 0, None, look)                   # the tiny model's one layer, heads' mean
        assert part["figures"]["cross"] == as_sent(maps["cross"]) and part["figures"]["encoder"] == as_sent(maps["encoder"])
        # ...which are the run's own numbers: the maps' weights, the curve's marker at the snapshot's step
        np.testing.assert_allclose(arr(part["figures"]["cross"]["data"][0]["z"]), snap.cross[0].mean(0), atol=1e-6)
        np.testing.assert_allclose(arr(part["figures"]["encoder"]["data"][0]["z"]), snap.encoder[0].mean(0), atol=1e-6)
        assert part["figures"]["curve"]["layout"]["shapes"][0]["x0"] == snap.step
        assert f"Step {snap.step}:" in part["texts"]["caption"] and f"loss {snap.loss:.3f}" in part["texts"]["caption"]
        assert part["files"] == {"curve": "live-copy-tiny-curve", "grid": f"live-copy-grid-step{snap.step}",
                                 "cross": f"live-copy-cross-step{snap.step}",
                                 "encoder": f"live-copy-encoder-step{snap.step}"}
    # the layer and head stay server widgets; the snapshot is no widget of the page's
    keys = [w.key for kind in ("select_slider", "selectbox", "slider") for w in at.get(kind)]
    assert {"train-layer", "train-head"} <= set(keys) and "train-snapshot" not in keys
    assert at.get("plotly_chart")[0].key == "train-try-fig"                  # the server draws the try-out map alone


def test_a_head_changed_builds_the_maps_again_and_a_pick_rebuilds_nothing():
    at, run = trained()
    sent = browser_view(at, f"{WHERE}-view").proto.bytes
    common = at.session_state["memo:train-deck-common"]
    at.selectbox(key="train-head").select(1).run()
    no_exceptions(at)
    head, body = deck(at)
    assert browser_view(at, f"{WHERE}-view").proto.bytes != sent             # a new body, for head 1
    assert at.session_state["memo:train-deck-common"] is common              # the curves and grids not built again
    for i, snap in enumerate(run.snapshots):
        cross = body["picks"][str(i)]["figures"]["cross"]
        np.testing.assert_allclose(arr(cross["data"][0]["z"]), snap.cross[0, 1], atol=1e-6)
        assert cross["layout"]["title"]["text"].endswith("layer 0, head 1")
    # the browser tells the server the reader's snapshot (a run it did not cause by it came back): the run takes it
    # and builds nothing; the URL never holds it
    sent = browser_view(at, f"{WHERE}-view").proto.bytes
    browser_says(at, state={"pick": {"step": 1}}, where=WHERE)
    no_exceptions(at)
    assert deck(at)[0]["pick"] == {"step": 1} and "step" not in query(at)
    assert browser_view(at, f"{WHERE}-view").proto.bytes == sent             # the same message: the browser has it
    at.selectbox(key="train-layer").select(0).run()                          # another server run keeps the snapshot
    assert deck(at)[0]["pick"] == {"step": 1} and "step" not in query(at)
    assert query(at)["task"] == "copy" and query(at)["steps"] == "20"        # the training's settings stay linked


def test_the_csvs_are_the_history_and_the_maps_matrices():
    at, run = trained()
    browser_says(at, trigger=("csv", {"step": 1, "figure": "cross"}), where=WHERE)
    no_exceptions(at)
    head, _ = deck(at)
    assert head["csv"]["name"] == "live-copy-cross-step10.csv" and head["pick"] == {"step": 1}
    assert "step" not in query(at)
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert list(frame.index) == ["0 a", "1 b", "2 c", "3 </s>"] and list(frame.columns) == list(frame.index)
    np.testing.assert_allclose(frame.to_numpy(), run.snapshots[1].cross[0].mean(0), atol=1e-5)
    browser_says(at, trigger=("csv", {"step": 3, "figure": "encoder"}), where=WHERE)
    head, _ = deck(at)
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert head["csv"]["name"] == "live-copy-encoder-step20.csv"
    np.testing.assert_allclose(frame.to_numpy(), run.snapshots[3].encoder[0].mean(0), atol=1e-5)
    browser_says(at, trigger=("csv", {"step": 0, "figure": "curve"}), where=WHERE)
    head, _ = deck(at)
    frame = pd.read_csv(io.StringIO(head["csv"]["text"]), index_col=0)
    assert head["csv"]["name"] == "live-copy-tiny-curve.csv"
    assert list(frame.index) == [5, 10, 15, 20] and list(frame.columns) == ["loss", "accuracy", "lr", "seconds"]
    np.testing.assert_allclose(frame.to_numpy()[:, 0], [r["loss"] for r in run.history], rtol=1e-6)


def test_the_deck_in_chinese_and_in_presenter_mode():
    at, run = trained(lang="zh", present=1)
    head, body = deck(at)
    assert body["text_px"] >= 20 and body["modebar"] is False and head["toolbar"] is False
    assert body["words"]["previous"] == message("zh", "step.previous") and body["words"]["step"] == message(
        "zh", "training.scrub")
    zh = re.compile(r"[\u4e00-\u9fff]")
    for part in body["picks"].values():
        for fig in part["figures"].values():
            assert zh.search(fig["layout"]["title"]["text"]), fig["layout"]["title"]["text"]
            assert fig["layout"]["font"]["size"] >= 20
        assert zh.search(part["texts"]["caption"])
    snap = run.snapshots[-1]
    import viz.pages.training as page
    assert body["picks"]["3"]["figures"]["grid"] == as_sent(page.snapshot_grid(snap, Look(words("zh"), PRESENTER)))
