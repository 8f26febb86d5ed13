"""The explorer drawn in the browser (issue 44): what the page sends the view, and what it does with what the view
reports back (a teacher's pick, a reader's pick the server had not heard of, a CSV asked for). The view's own
drawing is tested in a browser: tests/test_browser_explorer_view.py."""
from __future__ import annotations

import numpy as np
import pytest

from apptest_utils import browser_says, browser_view, browser_view_sent as sent, browser_view_whole as whole, no_exceptions, run_page
from viz.elements.browser_view import browser_pick

TEXT = "a b c d"


@pytest.fixture(scope="module")
def page():
    at = run_page("explorer.py", model="toy-reverse", text=TEXT, kind="decoder", layer=1, head=-1)
    no_exceptions(at)
    return whole(at)


def test_a_new_sentence_sends_the_first_screen_first():
    """The first run builds what the first screen shows: the picked kind, every head's map, the picked layer's
    lines; the view asks for the rest after drawing it, and every later run of the session sends the whole."""
    at = run_page("explorer.py", model="toy-reverse", text="b a d", kind="cross", layer=1)
    head, body = sent(at)
    assert not head["whole"] and list(body["kinds"]) == ["cross"]
    assert [lines is not None for lines in body["kinds"]["cross"]["lines"]] == [False, True]
    assert set(body["words"]["kind_names"]) == {"encoder", "decoder", "cross"}    # the pickers offer every kind
    whole(at)
    head2, body2 = sent(at)
    assert head2["whole"] and head2["sentence"] == head["sentence"] and set(body2["kinds"]) == {"encoder", "decoder", "cross"}
    assert all(lines is not None for part in body2["kinds"].values() for lines in part["lines"])
    assert body2["kinds"]["cross"]["titles"] == body["kinds"]["cross"]["titles"]   # the same picture, and more
    at.run()
    assert sent(at)[0]["whole"]


def test_the_view_gets_every_kind_layer_and_head_once(page):
    head, body = sent(page)
    assert head["pick"] == {"kind": "decoder", "layer": 1, "head": -1}          # the link's pick
    assert head["image_format"] == "png"                                       # the sidebar's, each run
    assert set(body["kinds"]) == {"encoder", "decoder", "cross"}
    for part in body["kinds"].values():
        n_picks = part["layers"] * (part["heads"] + 1)
        assert len(part["titles"]) == len(part["files"]) == len(part["selection"]) == n_picks
        assert part["z"]["shape"][0] == n_picks and len(part["lines"]) == part["layers"]
        assert part["grid"]["data"][0]["type"] == "heatmap" and "template" not in part["grid"]["layout"]
    assert body["template"]                                                     # once, for every figure
    assert dict(page.query_params) | {"kind": "decoder", "layer": "1", "head": "-1"} == dict(page.query_params)


def test_masked_cells_travel_as_masked(page):
    """Decoder self-attention's future cells are NaN in the weights the view draws (grey, no number, no hover),
    the encoder's none."""
    _, body = sent(page)
    for kind, masked in (("decoder", True), ("encoder", False)):
        part = body["kinds"][kind]
        z = np.frombuffer(__import__("base64").b64decode(part["z"]["bdata"]), dtype="<f4").reshape(part["z"]["shape"])
        assert np.isnan(z).any() == masked
        if masked:
            assert np.isnan(z[:, 0, 1:]).all() and not np.isnan(z[:, -1, :]).any()   # the first row sees itself only


def test_the_words_are_the_readers_language():
    at = run_page("explorer.py", model="toy-reverse", text=TEXT, lang="zh")
    no_exceptions(at)
    _, body = sent(whole(at))
    assert body["words"]["layer"] == "层" or "层" in body["words"]["layer"]
    assert any("层" in title for title in body["kinds"]["encoder"]["titles"])
    assert not any("layer" in title for title in body["kinds"]["encoder"]["titles"])


def test_a_bad_link_pick_is_said_and_replaced():
    at = run_page("explorer.py", model="toy-reverse", text=TEXT, kind="sideways", layer=7, head=99)
    no_exceptions(at)
    head, _ = sent(at)
    assert head["pick"] == {"kind": "encoder", "layer": 0, "head": 0}
    assert len(at.warning) >= 3


def test_a_pick_the_browser_reports_reaches_the_url_and_rebuilds_nothing():
    """A teacher's pick (or a reader's the server has not heard of) comes as the view's state: the run writes it
    to the URL, which the class publishes; the body is the one already built (same sig: nothing rebuilt)."""
    at = whole(run_page("explorer.py", model="toy-reverse", text=TEXT))
    first, _ = sent(at)
    body = browser_view(at).proto.bytes
    browser_says(at, state={"pick": {"kind": "cross", "layer": 1, "head": 3}})
    no_exceptions(at)
    assert {name: at.query_params[name] for name in ("kind", "layer", "head")} in (
        {"kind": "cross", "layer": "1", "head": "3"}, {"kind": ["cross"], "layer": ["1"], "head": ["3"]})
    head, _ = sent(at)
    assert head["pick"] == {"kind": "cross", "layer": 1, "head": 3} and head["sig"] == first["sig"]
    assert browser_view(at).proto.bytes == body        # the same message: the browser's cache has it, not resent


def test_a_teachers_session_reports_its_picks():
    """The view reports every pick of a teaching session (the class follows it), no reader's."""
    at = run_page("explorer.py", model="toy-reverse", text=TEXT)
    assert sent(at)[0]["teach"] is False
    at.session_state["class-secret"] = "a teacher's secret"          # what viz/classroom/teacher keeps (no code:
    at.run()                                                          # nothing is published in this test)
    assert sent(at)[0]["teach"] is True


def test_a_csv_asked_for_is_the_whole_matrix_of_the_pick():
    at = run_page("explorer.py", model="toy-reverse", text=TEXT)
    browser_says(at, trigger=("csv", {"kind": "encoder", "layer": 1, "head": 2}))
    no_exceptions(at)
    head, _ = sent(at)
    csv = head["csv"]
    assert csv["name"].endswith("-encoder-L1-H2.csv")
    assert head["pick"] == {"kind": "encoder", "layer": 1, "head": 2}         # the browser's pick: now the URL's
    lines = csv["text"].strip().splitlines()
    n_tokens = len(lines) - 1
    assert all(len(line.split(",")) == n_tokens + 1 for line in lines)      # a label and every key
    rows = np.array([[float(x) for x in line.split(",")[1:]] for line in lines[1:]])
    assert np.allclose(rows.sum(1), 1.0, atol=1e-4)
    browser_says(at)                                                          # asked once: the next run sends none
    assert "csv" not in sent(at)[0]


@pytest.mark.parametrize("state, expected", [
    ({"kind": "cross", "layer": 1, "head": -1}, {"kind": "cross", "layer": 1, "head": -1}),
    ({"kind": "cross", "layer": True, "head": 0}, None),
    ({"kind": 3, "layer": 1, "head": 0}, None),
    ({"kind": "cross", "layer": "1", "head": 0}, None),
    ("cross", None),
])
def test_only_a_well_formed_pick_is_taken(state, expected):
    assert browser_pick(state) == expected
