"""Attention-zoo math (model/analysis/zoo.py), figures (viz/figures/zoo.py) and the general and additive scores
fitted to a model's heads (model/analysis/zoo_fit.py: a tiny model, the shipped en-es file). No app."""
import numpy as np
import pytest

from model.analysis import zoo
from model.analysis.attention_math import causal_mask
from viz.figures.zoo import gallery, mark_centres
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

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
    w = zoo.soft(zoo.scores("scaled", Q, Q))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    causal = causal_mask(4)
    w = zoo.soft(zoo.scores("dot", Q, Q), causal)
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
    (lambda: zoo.soft(np.zeros((2, 3)), np.zeros((2, 3), bool)), "at least one key"),
    (lambda: zoo.attend(np.zeros((2, 3)), np.zeros((4, 2))), "do not fit"),
])
def test_bad_inputs_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_gallery_shares_one_colour_scale_and_labels():
    mats = [zoo.soft(zoo.scores(n, Q, K)) for n in zoo.SCORES]
    fig = gallery(mats, list(zoo.SCORES), [f"q{i}" for i in range(4)], [f"k{i}" for i in range(6)], Look(EN), title="t")
    assert len(fig.data) == 5
    assert all(tr.coloraxis == "coloraxis" for tr in fig.data)
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert list(fig.data[0].x) == [f"k{i}" for i in range(6)]
    assert [a.text for a in fig.layout.annotations] == list(zoo.SCORES)
    with pytest.raises(ValueError, match="one title per matrix"):
        gallery(mats, ["a"], ["q"] * 4, ["k"] * 6, Look(EN))
    with pytest.raises(ValueError, match="does not match"):
        gallery(mats, list(zoo.SCORES), ["q"] * 3, ["k"] * 6, Look(EN))


def test_mark_centres_places_a_marker_per_query():
    import plotly.graph_objects as go
    fig = mark_centres(go.Figure(), [2, 0], ["q0", "q1"], ["a", "b", "c"], Look(EN))
    assert list(fig.data[-1].x) == ["c", "a"] and list(fig.data[-1].y) == ["q0", "q1"]
    with pytest.raises(ValueError, match="one centre"):
        mark_centres(go.Figure(), [3, 0], ["q0", "q1"], ["a", "b", "c"], Look(EN))


def test_gallery_escapes_token_labels_for_plotly():
    fig = gallery([np.eye(2)], ["t"], ["0 <s>", "1 a"], ["0 a", "1 </s>"], Look(EN))
    assert list(fig.data[0].x) == ["0 a", "1 &lt;/s&gt;"] and list(fig.data[0].y)[0] == "0 &lt;s&gt;"


# -- the teacher's defects: squashed panels, dropped key labels, colliding gallery titles -------------------------
from viz.figures.style import Labels, Look  # noqa: E402
from viz.figures.zoo import CHAR_WIDTH, PAGE_WIDTH, TITLE_FONT, step_heatmap, title_lines  # noqa: E402

SCORE_TITLES = ["Dot", "Scaled dot", "General (bilinear)", "Additive (Bahdanau)", "Cosine"]
PLOT_WIDTH = PAGE_WIDTH - 160          # the page's main area less the query labels and the colour bar


def _text_px(text: str, size: int = TITLE_FONT) -> float:
    return max(len(line) for line in text.split("<br>")) * CHAR_WIDTH * size


def test_gallery_titles_fit_their_panels_on_the_projector_page():
    """'General (bilinear)' and 'Additive (Bahdanau)' collided when five panels shared one row."""
    keys = [f"{i} tok{i}" for i in range(10)]
    mats = [np.full((4, 10), 0.1)] * 5
    labelled = ["Dot", "Scaled dot", "General (bilinear), random W", "Additive (Bahdanau), fitted", "Cosine"]
    for titles in (SCORE_TITLES, labelled, ["Soft (softmax)", "Hard (one-hot)", "Local (window + Gaussian), D=1"]):
        fig = gallery(mats[:len(titles)], titles, ["q0", "q1", "q2", "q3"], keys, Look(EN))
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


def labels(title: str, x: str = "key", y: str = "query", value: str = "value") -> Labels:
    return Labels(title, x, y, value)


def test_step_heatmap_keeps_cells_square_and_every_key_label():
    """The three top panels were thin strips (440 px tall in a third of the page) that dropped key labels."""
    rows = [f"{i} w{i}" for i in range(8)]
    cols = [f"{i} w{i}" for i in range(9)]
    fig = step_heatmap(np.random.default_rng(0).normal(size=(8, 9)), rows, cols, labels("1. Scores: Scaled dot"), Look(EN))
    width = PAGE_WIDTH / 2
    assert fig.layout.height <= 1.25 * width                 # not a strip
    assert fig.layout.xaxis.dtick == 1 and fig.layout.xaxis.tickmode == "linear"
    assert fig.data[0].zmin == -fig.data[0].zmax              # signed: centred on 0
    weights = step_heatmap(np.full((8, 9), 1 / 9), rows, cols, labels("2. Weights: Soft (softmax)"), Look(EN),
                           zrange=(0.0, 1.0))
    assert (weights.data[0].zmin, weights.data[0].zmax) == (0.0, 1.0)
    assert weights.layout.height == fig.layout.height        # side by side, the panels line up
    with pytest.raises(ValueError, match="does not match"):
        step_heatmap(np.ones((2, 2)), ["a"], ["b", "c"], labels("t"), Look(EN))



# -- numbers in the cells: only where they fit, as many characters as they need ------------------------------------
from viz.figures.style import NORMAL, PRESENTER  # noqa: E402

POSITIONS = ["0 <modern>", "1 ▁The", "2 ▁man", "3 ▁went", "4 ▁to", "5 ▁the", "6 ▁house", "7 .", "8 </s>"]


def test_step_heatmap_drops_signed_numbers_the_cells_it_really_gets_cannot_hold():
    """Compare's word-order difference map (screenshot review, en and zh normal): 9 signed cells ('-0.01') in
    its 492 px column ran together ('-0.01-0.03'): the cells are ~28 px beside the '0 <modern>' labels and the
    two-line colour bar, and a 5-character number needs 45. The numbers go; hover keeps them."""
    diff = np.random.default_rng(1).normal(0, 0.05, size=(9, 9))
    for names in (dict(value="difference<br>(±0.163)"), dict(value="差值<br>(±0.163)", y="查询")):
        fig = step_heatmap(diff, POSITIONS, POSITIONS, labels("(B in A's order) − A", **names), Look(EN),
                           width_px=0.6 * PAGE_WIDTH)
        assert not fig.data[0].texttemplate
        assert "%{z:.4f}" in fig.data[0].hovertemplate


def test_step_heatmap_counts_the_characters_its_numbers_need():
    """In the same 7 cells, weights ('0.14', 4 characters) fit and signed scores ('-0.14', 5) do not."""
    rows, cols = [f"q{i}" for i in range(5)], [f"k{i}" for i in range(7)]
    weights = np.full((5, 7), 1 / 7)
    shown = step_heatmap(weights, rows, cols, labels("w", value="weight"), Look(EN), zrange=(0.0, 1.0), width_px=420)
    assert shown.data[0].texttemplate == "%{text}" and shown.data[0].text[0][0] == "0.14"
    signed = step_heatmap(-weights, rows, cols, labels("s", value="weight"), Look(EN), width_px=420)
    assert not signed.data[0].texttemplate


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER])
def test_step_heatmap_keeps_the_numbers_of_a_small_grid_and_writes_no_negative_zero(scale):
    """The zoo's toy example (3 queries, 5 keys) keeps its numbers on both scales; a value that rounds to zero is
    0.00, not '-0.00' (plotly's %{z:.2f} writes the sign), and a masked cell has none."""
    m = np.array([[-0.001, 1.5, -2.25, 0.0, 3.0], [0.5, -0.004, 2.0, -1.0, 0.25], [1.0, 2.0, -3.0, 0.1, -0.2]])
    masked = np.zeros_like(m, dtype=bool)
    masked[2, 4] = True
    for signed in (True, False):
        fig = step_heatmap(np.abs(m) / 3 if not signed else m, ["q0", "q1", "q2"], [f"k{i}" for i in range(5)],
                           labels("1. Scores"), Look(EN, scale), zrange=None if signed else (0.0, 1.0), masked=masked)
        assert fig.data[0].texttemplate == "%{text}"
        text = [list(row) for row in fig.data[0].text]
        assert not any(v.startswith("-0.00") for row in text for v in row)
        assert text[2][4] == ""
    assert text[0][0] == "0.00" and text[1][3] == "0.33"
    signed_text = step_heatmap(m, ["q0", "q1", "q2"], [f"k{i}" for i in range(5)], labels("s"), Look(EN, scale)).data[0].text
    assert signed_text[0][0] == "0.00" and signed_text[0][2] == "-2.25" and signed_text[1][1] == "0.00"


# -- given weights: the fitted scores (model/analysis/zoo_fit.py) ---------------------------------------------------
def test_scores_use_given_weights_and_general_with_identity_over_sqrt_d_is_scaled():
    np.testing.assert_allclose(zoo.scores("general", Q, K, weights={"W": np.eye(8) / np.sqrt(8)}),
                               zoo.scores("scaled", Q, K))
    p = {"W1": RNG.normal(size=(5, 8)), "W2": RNG.normal(size=(5, 8)), "v": RNG.normal(size=5)}   # h = 5 != d
    s = zoo.scores("additive", Q, K, weights=p)
    assert s[1, 3] == pytest.approx(p["v"] @ np.tanh(p["W1"] @ Q[1] + p["W2"] @ K[3]))
    assert not np.allclose(s, zoo.scores("additive", Q, K))              # not the random ones
    np.testing.assert_array_equal(zoo.scores("dot", Q, K, weights=p), Q @ K.T)   # weightless scores ignore them


@pytest.mark.parametrize("kind, weights, message", [
    ("general", {"W": np.eye(3)}, r"W must be \[8,8\]"),
    ("general", {"W1": np.eye(8)}, "missing W"),
    ("additive", {"W1": np.ones((4, 8)), "W2": np.ones((4, 7)), "v": np.ones(4)}, "W1, W2 must be"),
    ("additive", {"W1": np.ones((4, 8)), "W2": np.ones((4, 8))}, "missing v"),
    ("general", {"W": np.full((8, 8), np.inf)}, "finite"),
])
def test_bad_given_weights_raise_clear_errors(kind, weights, message):
    with pytest.raises(ValueError, match=message):
        zoo.scores(kind, Q, K, weights=weights)


import random  # noqa: E402
import shutil  # noqa: E402

import torch  # noqa: E402

from conftest import ROOT, tiny_config  # noqa: E402
from model.analysis import zoo_fit  # noqa: E402
from model.capture import schema  # noqa: E402
from model.io.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from model.nn.transformer import Transformer  # noqa: E402
from model.training.tasks import toy_tokenizer  # noqa: E402


def _synthetic_head(rng, n_heads=2, d=16):
    """Q, K of `n_heads` heads on one sentence and their own scaled-dot attention: what a head captures."""
    t, s = rng.integers(4, 10, size=2)
    q, k = rng.normal(size=(n_heads, t, d)).astype(np.float32), rng.normal(size=(n_heads, s, d)).astype(np.float32)
    return q, k, np.stack([zoo.soft(q[h] @ k[h].T / np.sqrt(d)) for h in range(n_heads)]).astype(np.float32)


def test_fitting_a_head_finds_w_identity_over_sqrt_d_and_beats_random():
    """The general score's loss is convex in W and W = I/sqrt(d) reproduces the head exactly: the fit finds it."""
    rng = np.random.default_rng(0)
    train, dev = [_synthetic_head(rng) for _ in range(40)], [_synthetic_head(rng) for _ in range(10)]
    fitted = zoo_fit.fit_group(train, causal=False, steps=300, seed=0, lr=0.05, batch=8)
    assert fitted["W"].shape == (2, 16, 16) and fitted["W1"].shape == (2, 16, 16) and fitted["v"].shape == (2, 16)
    assert zoo_fit.random_w_distance(16) > 4
    assert all(zoo_fit.w_distance(w) < 0.01 for w in fitted["W"])
    kl = zoo_fit.held_out(dev, False, fitted)
    assert max(kl["general"]) < 1e-4 < min(kl["random_general"]) and min(kl["random_general"]) > 1
    assert max(kl["scaled"]) < 1e-6                 # the head's own score: 0 by construction


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """A tiny model (d_model 32, 2 heads) saved as a model folder, and toy sentences for it."""
    torch.manual_seed(0)
    folder = save_checkpoint(Transformer(tiny_config()).eval(), toy_tokenizer(), tmp_path_factory.mktemp("tiny") / "m")
    r = random.Random(0)
    symbols = [w for w in toy_tokenizer().backend.get_vocab() if len(w) == 1 and w.isalpha()]
    pairs = [(" ".join(r.choice(symbols) for _ in range(r.randint(4, 10))),) * 2 for _ in range(40)]
    return folder, pairs


@pytest.fixture(scope="module")
def tiny_fit(tiny_folder):
    folder, pairs = tiny_folder
    torch.set_num_threads(1)
    try:
        return zoo_fit.fit_model(load_checkpoint(folder), pairs[:30], pairs[30:], steps=200, seed=0, lr=0.05, batch=8)
    finally:
        torch.set_num_threads(2)


def test_fitting_a_tiny_model_lowers_kl_below_random_for_every_head(tiny_fit):
    assert tiny_fit.sentences == 30 and tiny_fit.dev_sentences == 10 and tiny_fit.steps == 200
    assert set(tiny_fit.kl) == {schema.attn_prefix(k, layer) for k in schema.KINDS for layer in range(2)}
    for prefix, kl in tiny_fit.kl.items():
        for h in range(2):
            assert kl["general"][h] < 0.2 * kl["random_general"][h], (prefix, h, kl)
            assert kl["additive"][h] < 0.5 * kl["random_additive"][h], (prefix, h, kl)
            assert kl["scaled"][h] < 1e-5
        # W moved from the random start towards I/sqrt(d) (an untrained model's near-uniform heads pin W down
        # only loosely; the synthetic head above shows the fit reaching it)
        assert max(tiny_fit.w_distance[prefix]) < zoo_fit.random_w_distance(16)
    assert tiny_fit.mean_w_distance() < 0.8 * zoo_fit.random_w_distance(16)
    report = tiny_fit.report("decoder", 1, 0)
    assert report.kl["general"] == tiny_fit.kl["decoder.layers.1.self_attn"]["general"][0]
    assert tiny_fit.head("cross", 0, 1)["W"].shape == (16, 16)


def test_fitted_file_round_trips_and_is_safetensors(tiny_folder, tiny_fit):
    folder, _ = tiny_folder
    path = zoo_fit.save_fit(tiny_fit, folder)
    assert path.name == "zoo_fit.safetensors" and path.read_bytes()[8:9] == b"{"    # a safetensors header
    loaded = zoo_fit.load_fit(folder, load_checkpoint(folder).config)
    assert set(loaded.params) == set(tiny_fit.params) and "encoder.layers.0.self_attn.general.W" in loaded.params
    for name, a in tiny_fit.params.items():
        np.testing.assert_array_equal(loaded.params[name], a)
    assert loaded.kl == tiny_fit.kl and loaded.w_distance == tiny_fit.w_distance
    assert (loaded.sentences, loaded.dev_sentences, loaded.steps, loaded.seed) == (30, 10, 200, 0)
    assert loaded.weights_sha256 == zoo_fit.weights_sha256(folder) != ""
    # the trace's config (a dict) works as well as the TransformerConfig
    assert zoo_fit.load_fit(folder, tiny_config().to_dict()) is not None
    # a scored head with its fitted weights
    w = loaded.head("encoder", 0, 0)
    q, k = RNG.normal(size=(3, 16)), RNG.normal(size=(5, 16))
    np.testing.assert_allclose(zoo.scores("general", q, k, weights=w), q @ w["W"].astype(float) @ k.T)


def test_a_folder_without_a_fit_gives_none(tmp_path):
    assert zoo_fit.load_fit(tmp_path, tiny_config()) is None


def _copy(folder, tmp_path, name):
    out = tmp_path / name
    shutil.copytree(folder, out)
    return out


@pytest.mark.parametrize("how, message", [
    ("garbage", "not a safetensors file"),
    ("truncated", "not a readable safetensors file"),
    ("oversized", "more than"),
    ("folder", "a folder"),
    ("other shapes", "fitted to another model"),
    ("other weights", "fitted to other weights"),
    ("bad metadata", "KL numbers"),
])
def test_an_unusable_fit_file_is_one_clear_sentence(tiny_folder, tiny_fit, tmp_path, how, message):
    folder = _copy(tiny_folder[0], tmp_path, "m")
    path = folder / zoo_fit.FILE
    data = zoo_fit.to_bytes(tiny_fit)
    config = tiny_config()
    if how == "garbage":
        path.write_bytes(b"\xff" * 100)
    elif how == "truncated":
        path.write_bytes(data[:-100])
    elif how == "oversized":
        path.write_bytes(data + b"\0" * zoo_fit.Dims.of(config).file_limit())
    elif how == "folder":
        path.unlink(missing_ok=True)
        path.mkdir()
    elif how == "other shapes":
        path.write_bytes(data)
        config = tiny_config(d_model=64)            # 2 heads of 32 dimensions
    elif how == "other weights":
        path.write_bytes(data)
        torch.manual_seed(1)
        save_checkpoint(Transformer(tiny_config()).eval(), toy_tokenizer(), folder)
    elif how == "bad metadata":
        broken = zoo_fit.ZooFit(**{**tiny_fit.__dict__, "kl": {p: {} for p in tiny_fit.kl}})
        path.write_bytes(zoo_fit.to_bytes(broken))
    with pytest.raises(zoo_fit.ZooFitError, match=message) as e:
        zoo_fit.load_fit(folder, config)
    assert str(e.value).startswith("zoo_fit.safetensors: ") and str(tmp_path) not in str(e.value)


def test_the_shipped_fit_matches_the_shipped_model():
    folder = ROOT / "pretrained" / "en-es"
    bundle = load_checkpoint(folder)
    fit = zoo_fit.load_fit(folder, bundle.config)   # checks every name, shape and the weights' SHA-256
    assert fit is not None and (folder / zoo_fit.FILE).stat().st_size < 1.1e6
    d = bundle.config.d_model // bundle.config.n_heads
    assert fit.params["decoder.layers.2.cross_attn.general.W"].shape == (bundle.config.n_heads, d, d)
    assert fit.weights_sha256 == zoo_fit.weights_sha256(folder)
    assert fit.sentences >= 200 and fit.dev_sentences >= 50
    for kind in schema.KINDS:
        kl = fit.mean_kl(kind)
        assert kl["general"] < 0.01 * kl["random_general"] and kl["additive"] < 0.5 * kl["random_additive"]
        assert kl["scaled"] < 1e-4
        assert fit.mean_w_distance(kind) < 0.25 * zoo_fit.random_w_distance(d)


def test_tour_zoo_figure_uses_the_fitted_weights_when_the_folder_has_them():
    from model.inference.pipeline import trace_sentence
    from viz.tour.pictures import zoo_figure
    folder = ROOT / "pretrained" / "en-es"
    bundle = load_checkpoint(folder)
    trace = trace_sentence(bundle, bundle.tokenizer.styled("The man went to the house.", "modern"))
    q, k = (trace[schema.attn_name("encoder", 0, h)][0] for h in ("q", "k"))
    fitted = zoo_fit.load_fit(folder, bundle.config).head("encoder", 0, 0)

    def panels(fig):
        titles = [a.text.replace("<br>", " ") for a in fig.layout.annotations]     # long titles wrap
        return titles, [np.asarray(tr.z, dtype=float) for tr in fig.data[:3]]

    titles, z = panels(zoo_figure(trace, folder, Look(EN)))
    assert "(W fitted to this head)" in titles[1] and "fitted to this head" in titles[2]
    np.testing.assert_allclose(z[1], zoo.soft(zoo.scores("general", q, k, weights=fitted)), atol=1e-6)
    np.testing.assert_allclose(z[1], z[0], atol=0.01)         # fitted: W ~ I/sqrt(d), the scaled dot's picture
    np.testing.assert_allclose(z[2], zoo.soft(zoo.scores("additive", q, k, weights=fitted)), atol=1e-6)
    assert "拟合" in panels(zoo_figure(trace, folder, Look(words("zh"))))[0][1]
    titles, z = panels(zoo_figure(trace, None, Look(EN)))                # no folder (a trace file alone): random, said so
    assert "(random W)" in titles[1] and "random W" in titles[2]
    np.testing.assert_allclose(z[1], zoo.soft(zoo.scores("general", q, k)), atol=1e-6)
    assert np.abs(z[1] - z[0]).max() > 0.3


def test_fit_zoo_command_writes_the_file_into_the_model_folder(tiny_folder, tmp_path, capsys):
    from model.cli.__main__ import main
    from model.training.corpus import write_tsv
    folder = _copy(tiny_folder[0], tmp_path, "m")
    (folder / zoo_fit.FILE).unlink(missing_ok=True)
    data = tmp_path / "data"
    data.mkdir()
    write_tsv(data / "train.tsv", tiny_folder[1][:20])
    write_tsv(data / "dev.tsv", tiny_folder[1][20:])
    try:
        assert main(["fit-zoo", "--model", str(folder), "--data", str(data), "--sentences", "12", "--dev-sentences",
                     "4", "--steps", "5", "--seed", "3"]) == 0
    finally:
        torch.set_num_threads(2)                      # the command's --threads 1; the tests' own setting back
    out = capsys.readouterr().out
    assert "all heads: mean held-out KL per query row" in out and "zoo_fit.safetensors" in out
    fit = zoo_fit.load_fit(folder, tiny_config())
    assert (fit.sentences, fit.dev_sentences, fit.steps, fit.seed) == (12, 4, 5, 3)
    assert fit.extra["threads"] == 1 and fit.extra["cpu_seconds"] >= 0
    assert main(["fit-zoo", "--model", str(folder), "--data", str(tmp_path / "nowhere")]) == 2   # one line, no trace
    assert "nowhere" in capsys.readouterr().err


from viz.figures.style import PHONE  # noqa: E402


@pytest.mark.parametrize("type_scale", [NORMAL, PRESENTER, PHONE])
@pytest.mark.parametrize("masked", [False, True])
def test_unchecked_builds_are_valid_figures_with_the_checked_json(type_scale, masked):
    """step_heatmap, gallery and mark_centres skip plotly's checks when they build (the zoo's deck holds hundreds of
    their figures): checked the long way, each is a valid figure with the same JSON, signed and unsigned, with the
    causal mask's grey cells and local attention's rings, normal, presenter and phone."""
    import json

    import plotly.graph_objects as go

    rng = np.random.default_rng(0)
    rows, cols = ["0 <s>", "1 cat", "2 sat", "3 .", "4 ok"], ["0 a", "1 b", "2 c", "3 d", "4 e"]
    mask = causal_mask(5) if masked else None
    look = Look(words("en"), type_scale)
    labels = Labels("scores", "key", "query", "score")
    weights = step_heatmap(zoo.soft(rng.normal(size=(5, 5)), mask), rows, cols, labels, look, zrange=(0.0, 1.0),
                           masked=mask)
    figures = [step_heatmap(rng.normal(size=(5, 5)), rows, cols, labels, look, masked=mask),
               mark_centres(weights, [0, 1, 2, 2, 4], rows, cols, look),
               gallery([zoo.soft(rng.normal(size=(5, 5)), mask) for _ in range(4)], ["a", "b", "c", "d"], rows, cols,
                       look, title="every score", masked=mask)]
    for fig in figures:
        checked = go.Figure(fig.to_dict())                   # raises on any property plotly does not know
        assert json.loads(checked.to_json()) == json.loads(fig.to_json())
    assert figures[1].data[-1].showlegend is False and figures[1].data[-1].marker.symbol == "circle-open"
