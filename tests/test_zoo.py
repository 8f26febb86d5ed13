"""Attention-zoo math (model/zoo.py) and figures (viz/figures/zoo.py): pure numpy / plotly, no app."""
import numpy as np
import pytest

from model.analysis import zoo
from viz.figures.zoo import gallery, mark_centres

RNG = np.random.default_rng(7)
Q = RNG.normal(size=(4, 8))
K = RNG.normal(size=(6, 8))
V = RNG.normal(size=(6, 3))


def test_dot_and_scaled_differ_by_sqrt_d():
    np.testing.assert_allclose(zoo.scores("dot", Q, K), zoo.scores("scaled", Q, K) * np.sqrt(8))
    np.testing.assert_allclose(zoo.scores("dot", Q, K), Q @ K.T)


def test_cosine_is_bounded_and_one_for_parallel_vectors():
    s = zoo.scores("cosine", np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[5.0, 0.0], [0.0, 3.0], [-1.0, -1.0]]))
    np.testing.assert_allclose(s, [[1.0, 0.0, -np.sqrt(0.5)], [np.sqrt(0.5), np.sqrt(0.5), -1.0]], atol=1e-12)


def test_general_uses_fixed_bilinear_matrix():
    w = zoo.random_weights(8, seed=3)["W"]
    np.testing.assert_allclose(zoo.scores("general", Q, K, seed=3), Q @ w @ K.T)


def test_additive_is_deterministic_for_a_seed_and_matches_the_formula():
    a, b = zoo.scores("additive", Q, K, seed=5), zoo.scores("additive", Q, K, seed=5)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, zoo.scores("additive", Q, K, seed=6))
    p = zoo.random_weights(8, seed=5)
    t, s = 2, 4
    expected = p["v"] @ np.tanh(p["W1"] @ Q[t] + p["W2"] @ K[s])
    assert a[t, s] == pytest.approx(expected)
    assert a.shape == (4, 6)


def test_softmax_rows_sum_to_one_and_respect_the_mask():
    w = zoo.softmax(zoo.scores("scaled", Q, Q))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    causal = zoo.causal_mask(4)
    w = zoo.softmax(zoo.scores("dot", Q, Q), causal)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert np.all(w[~causal] == 0)
    assert w[0, 0] == 1.0


def test_hard_attention_is_one_hot_at_the_argmax():
    s = zoo.scores("dot", Q, K)
    w = zoo.hard(s)
    assert set(np.unique(w)) == {0.0, 1.0}
    np.testing.assert_array_equal(w.sum(axis=1), 1.0)
    np.testing.assert_array_equal(w.argmax(axis=1), s.argmax(axis=1))
    np.testing.assert_allclose(zoo.attend(w, V), V[s.argmax(axis=1)])


def test_local_weights_zero_outside_window_and_peak_at_the_centre():
    s = zoo.scores("dot", Q, K)
    w, centres = zoo.local(s, half_width=1, centre="argmax")
    np.testing.assert_array_equal(centres, s.argmax(axis=1))
    for t, c in enumerate(centres):
        outside = np.abs(np.arange(6) - c) > 1
        assert np.all(w[t, outside] == 0)
        assert w[t].argmax() == c
        assert 0 < w[t].sum() <= 1 + 1e-12
    # monotonic centre round(t*S/T); equal scores: the Gaussian alone decides, so the peak is the centre
    w, centres = zoo.local(np.zeros((4, 6)), half_width=2, centre="monotonic")
    np.testing.assert_array_equal(centres, [0, 2, 3, 4])   # round(0, 1.5, 3, 4.5) with numpy's round-half-even
    np.testing.assert_array_equal(w.argmax(axis=1), centres)
    assert np.all(w[0, 3:] == 0)
    # inside the window: in-window softmax times exp(-(s-p)^2 / (2 sigma^2)), sigma = D/2 = 1
    row = w[2]
    np.testing.assert_allclose(row[1:6], np.full(5, 0.2) * np.exp(-np.array([-2, -1, 0, 1, 2]) ** 2 / 2.0))


def test_local_with_zero_width_equals_hard_at_the_centre():
    s = zoo.scores("scaled", Q, K)
    np.testing.assert_allclose(zoo.local(s, 0)[0], zoo.hard(s))


def test_weigh_dispatch_and_attend_shapes():
    s = zoo.scores("scaled", Q, K)
    for weighting in zoo.WEIGHTINGS:
        w = zoo.weigh(s, weighting)
        assert w.shape == (4, 6) and np.all(w >= 0) and np.all(w <= 1)
        assert zoo.attend(w, V).shape == (4, 3)


@pytest.mark.parametrize("call, message", [
    (lambda: zoo.scores("nope", Q, K), "unknown score"),
    (lambda: zoo.scores("dot", Q, K[:, :3]), "dimensions"),
    (lambda: zoo.scores("dot", Q[:0], K), "at least one"),
    (lambda: zoo.scores("dot", np.full((2, 8), np.nan), K), "finite"),
    (lambda: zoo.weigh(np.zeros((2, 3)), "medium"), "unknown weighting"),
    (lambda: zoo.local(np.zeros((2, 3)), -1), "half-width"),
    (lambda: zoo.local(np.zeros((2, 3)), 1, centre="middle"), "unknown centre"),
    (lambda: zoo.softmax(np.zeros((2, 3)), np.zeros((2, 3), bool)), "at least one key"),
    (lambda: zoo.attend(np.zeros((2, 3)), np.zeros((4, 2))), "do not fit"),
])
def test_bad_inputs_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_gallery_shares_one_colour_scale_and_labels():
    mats = [zoo.softmax(zoo.scores(n, Q, K)) for n in zoo.SCORES]
    fig = gallery(mats, list(zoo.SCORES), [f"q{i}" for i in range(4)], [f"k{i}" for i in range(6)], title="t")
    assert len(fig.data) == 5
    assert all(tr.coloraxis == "coloraxis" for tr in fig.data)
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert list(fig.data[0].x) == [f"k{i}" for i in range(6)]
    assert [a.text for a in fig.layout.annotations] == list(zoo.SCORES)
    with pytest.raises(ValueError, match="one title per matrix"):
        gallery(mats, ["a"], ["q"] * 4, ["k"] * 6)
    with pytest.raises(ValueError, match="does not match"):
        gallery(mats, list(zoo.SCORES), ["q"] * 3, ["k"] * 6)


def test_mark_centres_places_a_marker_per_query():
    import plotly.graph_objects as go
    fig = mark_centres(go.Figure(), [2, 0], ["q0", "q1"], ["a", "b", "c"])
    assert list(fig.data[-1].x) == ["c", "a"] and list(fig.data[-1].y) == ["q0", "q1"]
    with pytest.raises(ValueError, match="one centre"):
        mark_centres(go.Figure(), [3, 0], ["q0", "q1"], ["a", "b", "c"])


def test_gallery_escapes_token_labels_for_plotly():
    fig = gallery([np.eye(2)], ["t"], ["0 <s>", "1 a"], ["0 a", "1 </s>"])
    assert list(fig.data[0].x) == ["0 a", "1 &lt;/s&gt;"] and list(fig.data[0].y)[0] == "0 &lt;s&gt;"


# -- the teacher's defects: squashed panels, dropped key labels, colliding gallery titles -------------------------
from viz.figures.zoo import CHAR_WIDTH, PAGE_WIDTH, TITLE_FONT, step_heatmap, title_lines  # noqa: E402

SCORE_TITLES = ["Dot", "Scaled dot", "General (bilinear)", "Additive (Bahdanau)", "Cosine"]
PLOT_WIDTH = PAGE_WIDTH - 160          # the page's main area less the query labels and the colour bar


def _text_px(text: str, size: int = TITLE_FONT) -> float:
    return max(len(line) for line in text.split("<br>")) * CHAR_WIDTH * size


def test_gallery_titles_fit_their_panels_on_the_projector_page():
    """'General (bilinear)' and 'Additive (Bahdanau)' collided when five panels shared one row."""
    keys = [f"{i} tok{i}" for i in range(10)]
    mats = [np.full((4, 10), 0.1)] * 5
    for titles in (SCORE_TITLES, ["Soft (softmax)", "Hard (one-hot)", "Local (window + Gaussian), D=1"]):
        fig = gallery(mats[:len(titles)], titles, ["q0", "q1", "q2", "q3"], keys)
        axes = {name: ax for name, ax in fig.layout.to_plotly_json().items() if name.startswith("xaxis")}
        assert len(fig.layout.annotations) == len(titles)
        panels = []
        for note, trace in zip(fig.layout.annotations, fig.data):
            domain = axes["xaxis" + trace.xaxis[1:]]["domain"]
            panels.append((note.text, (domain[1] - domain[0]) * PLOT_WIDTH, axes["xaxis" + trace.xaxis[1:]]))
        for text, panel_px, _axis in panels:
            assert _text_px(text) <= panel_px, (text, panel_px)
        for _text, panel_px, axis in panels:                 # every key label drawn, with room for it
            assert axis.get("dtick") == 1 and panel_px / len(keys) >= 14


def test_title_lines_breaks_at_spaces_to_fit():
    assert title_lines("Dot", 200) == "Dot"
    wrapped = title_lines("Local (window + Gaussian), D=1", 150)
    assert wrapped.replace("<br>", " ") == "Local (window + Gaussian), D=1"
    assert all(len(line) * CHAR_WIDTH * TITLE_FONT <= 150 for line in wrapped.split("<br>"))


def test_step_heatmap_keeps_cells_square_and_every_key_label():
    """The three top panels were thin strips (440 px tall in a third of the page) that dropped key labels."""
    rows = [f"{i} w{i}" for i in range(8)]
    cols = [f"{i} w{i}" for i in range(9)]
    fig = step_heatmap(np.random.default_rng(0).normal(size=(8, 9)), rows, cols, "1. Scores: Scaled dot", "key")
    width = PAGE_WIDTH / 2
    assert fig.layout.height <= 1.25 * width                 # not a strip
    assert fig.layout.xaxis.dtick == 1 and fig.layout.xaxis.tickmode == "linear"
    assert fig.data[0].zmin == -fig.data[0].zmax              # signed: centred on 0
    weights = step_heatmap(np.full((8, 9), 1 / 9), rows, cols, "2. Weights: Soft (softmax)", "key", signed=False)
    assert (weights.data[0].zmin, weights.data[0].zmax) == (0.0, 1.0)
    assert weights.layout.height == fig.layout.height        # side by side, the panels line up
    with pytest.raises(ValueError, match="does not match"):
        step_heatmap(np.ones((2, 2)), ["a"], ["b", "c"], "t", "key")
