"""Step-through arithmetic (viz/headmath.py) and figures (viz/figures/step.py): pure, fast."""
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from model.io.checkpoint import load_checkpoint
from model.nn.layers import attention
from model.inference.pipeline import trace_sentence
from viz.figures.step import (MIN_EM_PER_LEVEL_LABEL, level_ticks, masked_scores_figure, scaling_bars,
                              step_heatmap)
from viz.figures.style import HIGHLIGHT, MASKED_COLOR, NORMAL, Look
from model.analysis.attention_math import (apply_mask, causal_mask, dim_labels, entropy_bits, head_projection,
                                           head_steps, max_abs_error, scaling_comparison, softmax)
from model.io.weights import linear_arrays
from model.capture.schema import sublayer_names
from viz.figures.style import Labels
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

TOY = Path(__file__).resolve().parents[1] / "pretrained" / "toy-reverse"
LABELS = ["0 <s>", "1 a", "2 b", "3 c"]


@pytest.fixture(scope="module")
def toy():
    bundle = load_checkpoint(TOY, device="cpu")
    return bundle, trace_sentence(bundle, "a b c d e")


def rng_matrix(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# -- names -------------------------------------------------------------------------------------------
def test_sublayer_names_follow_the_post_norm_wiring():
    enc = sublayer_names("encoder", 1)
    assert enc.attn == "encoder.layers.1.self_attn"
    assert enc.query_input == enc.kv_input == "encoder.layers.1.hook_resid_pre"
    assert enc.norm == "encoder.layers.1.norm_attn" and enc.after == "encoder.layers.1.hook_resid_mid"
    assert not enc.causal
    dec = sublayer_names("decoder", 0)
    assert dec.causal and dec.attn == "decoder.layers.0.self_attn"
    cross = sublayer_names("cross", 2)
    assert cross.attn == "decoder.layers.2.cross_attn" and cross.kv_input == "encoder.hook_out"
    assert cross.query_input == cross.residual == "decoder.layers.2.hook_resid_mid"
    assert cross.after == "decoder.layers.2.hook_resid_cross" and not cross.causal


def test_sublayer_names_pre_norm_reads_the_normalised_stream():
    pre = sublayer_names("cross", 0, norm_first=True)
    assert pre.query_input == "decoder.layers.0.norm_cross.hook_out"
    assert pre.residual == "decoder.layers.0.hook_resid_mid" and pre.kv_input == "encoder.hook_out"


@pytest.mark.parametrize("kind, layer", [("self", 0), ("encoder", -1)])
def test_sublayer_names_rejects_bad_input(kind, layer):
    with pytest.raises(ValueError):
        sublayer_names(kind, layer)


def test_dim_labels():
    assert dim_labels(3) == ["d0", "d1", "d2"]


# -- the arithmetic ------------------------------------------------------------------------------------
def test_head_projection_is_the_heads_slice_of_the_full_linear_map():
    torch.manual_seed(0)
    linear = torch.nn.Linear(8, 8)
    x = rng_matrix(5, 8)
    full = linear(torch.tensor(x, dtype=torch.float32)).detach().numpy()        # [5,8]
    weight, bias = linear_arrays(linear)
    for head in range(4):
        np.testing.assert_allclose(head_projection(x, weight, bias, head, 4), full[:, 2 * head: 2 * head + 2],
                                   atol=1e-5)
    with pytest.raises(ValueError, match="head 4"):
        head_projection(x, weight, bias, 4, 4)
    with pytest.raises(ValueError, match="divisible"):
        head_projection(x, weight, bias, 0, 3)
    with pytest.raises(ValueError, match="does not fit"):
        head_projection(x[:, :5], weight, bias, 0, 4)


def test_head_steps_equal_the_models_attention_function():
    q, k, v = rng_matrix(5, 4, seed=1), rng_matrix(5, 4, seed=2), rng_matrix(5, 4, seed=3)
    steps = head_steps(q, k, v, causal=True)
    t = [torch.tensor(a)[None, None] for a in (q, k, v)]
    out, scores, weights = attention(*t, mask=torch.ones(5, 5, dtype=torch.bool).tril()[None, None])
    np.testing.assert_allclose(steps.raw, q @ k.T)
    np.testing.assert_allclose(steps.scaled, scores[0, 0].numpy(), atol=1e-12)
    np.testing.assert_allclose(steps.weights, weights[0, 0].numpy(), atol=1e-12)
    np.testing.assert_allclose(steps.output, out[0, 0].numpy(), atol=1e-12)
    assert np.all(np.isneginf(steps.masked[np.triu_indices(5, 1)]))
    assert np.all(steps.weights[np.triu_indices(5, 1)] == 0)
    np.testing.assert_allclose(steps.weights.sum(1), 1)
    assert head_steps(q, k, v, causal=False).allowed.all()
    with pytest.raises(ValueError, match="do not fit"):
        head_steps(q, k[:, :3], v, causal=False)


def test_head_steps_reproduce_a_real_trace(toy):
    bundle, trace = toy
    for kind in ("encoder", "decoder", "cross"):
        names = sublayer_names(kind, 1)
        a = {n: trace.arrays[f"{names.attn}.hook_{n}"][2] for n in ("q", "k", "v", "scores", "pattern", "z")}
        steps = head_steps(a["q"], a["k"], a["v"], names.causal)
        assert max_abs_error(steps.scaled, a["scores"]) < 1e-5
        assert max_abs_error(steps.weights, a["pattern"]) < 1e-5
        assert max_abs_error(steps.output, a["z"]) < 1e-5
        weight, bias = linear_arrays(bundle.model.get_submodule(names.attn).w_k)
        k_again = head_projection(trace.arrays[names.kv_input], weight, bias, 2, bundle.config.n_heads)
        assert max_abs_error(k_again, a["k"]) < 1e-5


def test_softmax_and_mask():
    allowed = causal_mask(2, 3)
    assert allowed.tolist() == [[True, False, False], [True, True, False]]
    masked = apply_mask(np.zeros((2, 3)), allowed)
    np.testing.assert_allclose(softmax(masked), [[1, 0, 0], [0.5, 0.5, 0]])
    with pytest.raises(ValueError, match="finite"):
        softmax(np.full(3, -np.inf))
    with pytest.raises(ValueError, match="mask shape"):
        apply_mask(np.zeros((2, 3)), np.ones((3, 3), dtype=bool))


def test_entropy_bits():
    assert entropy_bits(np.full(4, 0.25)) == pytest.approx(2.0)
    assert entropy_bits(np.array([0.0, 1.0, 0.0])) == 0.0
    np.testing.assert_allclose(entropy_bits(np.array([[0.5, 0.5], [1.0, 0.0]])), [1.0, 0.0])
    with pytest.raises(ValueError):
        entropy_bits(np.array([-0.5, 1.5]))


def test_scaling_makes_the_softmax_softer():
    raw = rng_matrix(8, seed=4) * 8                                  # dot products of size ~sqrt(64)
    cmp = scaling_comparison(raw, 64)
    np.testing.assert_allclose(cmp.scaled, softmax(raw / 8))
    np.testing.assert_allclose(cmp.unscaled, softmax(raw))
    assert cmp.entropy_scaled > cmp.entropy_unscaled and cmp.max_scaled < cmp.max_unscaled
    masked = scaling_comparison(raw, 64, np.arange(8) < 5)
    assert np.all(masked.scaled[5:] == 0) and np.all(masked.unscaled[5:] == 0)
    with pytest.raises(ValueError):
        scaling_comparison(raw, 0)


def test_max_abs_error_treats_matching_minus_infinity_as_equal():
    a = np.array([1.0, -np.inf])
    assert max_abs_error(a, np.array([1.5, -np.inf])) == 0.5
    assert max_abs_error(a, np.array([1.0, 3.0])) == math.inf
    with pytest.raises(ValueError):
        max_abs_error(a, np.zeros(3))


# -- figures ------------------------------------------------------------------------------------------
def _row_frames(fig):
    return [s for s in fig.layout.shapes if s.line.color == HIGHLIGHT]


def test_step_heatmap_frames_the_query_row_and_escapes_labels():
    m = rng_matrix(4, 3)
    fig = step_heatmap(m, LABELS, dim_labels(3), Labels("Q", "dimension", "token", "value"), Look(EN), highlight=2)
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z), m)
    assert list(heat.y) == ["0 &lt;s&gt;", "1 a", "2 b", "3 c"] and list(heat.x) == ["d0", "d1", "d2"]
    assert heat.zmin == -heat.zmax and heat.zmax == pytest.approx(np.abs(m).max())
    (frame,) = _row_frames(fig)
    assert (frame.y0, frame.y1) == (1.5, 2.5)
    assert heat.texttemplate                                          # few cells: numbers drawn
    hidden = step_heatmap(m, LABELS, dim_labels(3), Labels("Q", "d", "t", "value"), Look(EN), show_values=False)
    assert not hidden.data[0].texttemplate
    assert not _row_frames(step_heatmap(m, LABELS, dim_labels(3), Labels("Q", "d", "t", "value"), Look(EN), highlight=None))
    with pytest.raises(ValueError, match="does not match"):
        step_heatmap(m, LABELS[:3], dim_labels(3), Labels("Q", "d", "t", "value"), Look(EN))


def test_masked_scores_figure_greys_out_minus_infinity():
    """-inf cells: no colour and no number of the scores' own, a grey overlay marked −∞, named in the legend."""
    masked = apply_mask(rng_matrix(4, 4), causal_mask(4, 4))
    fig = masked_scores_figure(masked, LABELS, LABELS, "masked", Look(EN), highlight=1)
    z = np.array(fig.data[0].z, dtype=float)
    assert np.isnan(z[0, 1]) and z[1, 0] == masked[1, 0]
    assert fig.data[0].texttemplate == "%{z:.2f}"                      # few cells: the scores' numbers
    grey, legend = fig.data[1], fig.data[2]
    np.testing.assert_array_equal(~np.isnan(np.array(grey.z, dtype=float)), np.isneginf(masked))
    assert grey.colorscale[0][1] == MASKED_COLOR and grey.showscale is False
    assert grey.text[0][3] == "−∞" and grey.text[3][0] == ""
    assert legend.name == EN("fig.masked") and legend.showlegend and legend.marker.color == MASKED_COLOR
    assert len(_row_frames(fig)) == 1
    assert fig.data[0].zmax == pytest.approx(np.abs(masked[np.isfinite(masked)]).max())
    with pytest.raises(ValueError, match="every score"):
        masked_scores_figure(np.full((2, 2), -np.inf), LABELS[:2], LABELS[:2], "x", Look(EN))


from viz.figures.style import PHONE, PRESENTER  # noqa: E402


def _unchecked_figures(look: Look) -> dict:
    """The figures built unchecked on style.signed_heatmap (trusted_figure), each as a page draws it."""
    from viz.figures.multihead import concat_heatmap, stage_heatmap
    from viz.figures.vectors import cosine_map

    m, labels = rng_matrix(4, 3), Labels("Q <b>", "dimension", "token", "value")
    cos = np.clip(rng_matrix(4, 4, seed=2), -1, 1)
    return {
        "step, row framed, numbers": step_heatmap(m, LABELS, dim_labels(3), labels, look, highlight=2),
        "step, dimensions thinned": step_heatmap(rng_matrix(4, 64), LABELS, dim_labels(64), labels, look,
                                                 show_values=False, plot_px=400),
        "mask step": masked_scores_figure(apply_mask(rng_matrix(4, 4), causal_mask(4, 4)), LABELS, LABELS, "masked",
                                          look, highlight=1),
        "mask step, nothing masked": masked_scores_figure(rng_matrix(4, 4), LABELS, LABELS, "scores", look),
        "cosine map": cosine_map(cos, LABELS, labels, look, highlight=1, width_px=500),
        "scaling bars": scaling_bars(np.array([0.7, 0.2, 0.1, 0.0]), np.array([0.4, 0.3, 0.3, 0.0]), LABELS, 16, look,
                                     "why", masked=np.array([0, 0, 0, 1], dtype=bool)),
        "multi-head stage": stage_heatmap(rng_matrix(4, 8), LABELS, look, "Q", plot_px=600),
        "multi-head concat": concat_heatmap(rng_matrix(4, 8), LABELS, 2, look, "concat"),
    }


@pytest.mark.parametrize("type_scale", [NORMAL, PRESENTER, PHONE])
def test_the_unchecked_step_figures_are_valid_figures_with_the_checked_json(type_scale):
    """style.signed_heatmap, and masked_scores_figure over it, and scaling_bars skip plotly's checks when they build
    (each of the step-through's steps, its cosine maps and bars, the multi-head page's matrices): checked the long
    way, each is a valid figure with the same JSON, normal, presenter and phone; the named diverging scale went in as
    plotly.js knows it (not "RdBu_r"), and the masked cells' trace dicts hold no None."""
    import json

    import plotly.graph_objects as go

    for name, fig in _unchecked_figures(Look(EN, type_scale)).items():
        checked = go.Figure(fig.to_dict())                   # raises on any property plotly does not know
        assert json.loads(checked.to_json()) == json.loads(fig.to_json()), name
        assert name == "scaling bars" or (isinstance(fig.data[0].colorscale, tuple)
                                          and fig.data[0].colorscale[0][1].startswith("rgb")), name
        assert "null" not in json.dumps(json.loads(fig.to_json())["data"][1:]).replace("[null]", ""), name


def test_every_lesson_figure_is_a_valid_figure_with_the_checked_json(toy):
    """The offline lesson's and the figure command's pictures (viz/tour/static_figures.py) are built on the unchecked
    builders, and what a picture sets on one afterwards is unchecked too (the positional cosines' "Reds" stayed a
    name plotly.js and the static export do not read): checked the long way, each is a valid figure with the same
    JSON."""
    import json

    import plotly.graph_objects as go

    from viz.tour.static_figures import trace_figures

    for name, fig in trace_figures(toy[1], TOY):
        checked = go.Figure(fig.to_dict())                   # raises on any property plotly does not know
        assert json.loads(checked.to_json()) == json.loads(fig.to_json()), name


def test_scaling_bars_show_both_distributions_with_their_entropy():
    cmp = scaling_comparison(np.array([4.0, 1.0, 0.0, -2.0]), 16, np.array([True, True, True, False]))
    fig = scaling_bars(cmp.unscaled, cmp.scaled, LABELS, 16, Look(EN), "why", masked=np.array([0, 0, 0, 1], dtype=bool))
    unscaled, scaled = fig.data
    np.testing.assert_allclose(unscaled.y, cmp.unscaled)
    np.testing.assert_allclose(scaled.y, cmp.scaled)
    assert unscaled.text[-1] == "masked" and scaled.text[0] == f"{cmp.scaled[0]:.2f}"
    titles = [a.text for a in fig.layout.annotations]
    assert f"entropy {cmp.entropy_unscaled:.2f} bits" in titles[0] and "√16" in titles[1]
    assert f"max weight {cmp.max_scaled:.2f}" in titles[1]
    assert list(unscaled.x)[0] == "0 &lt;s&gt;"
    with pytest.raises(ValueError, match="distribution"):
        scaling_bars(np.ones(4), cmp.scaled, LABELS, 16, Look(EN))
    with pytest.raises(ValueError, match="key labels"):
        scaling_bars(cmp.unscaled, cmp.scaled, LABELS[:3], 16, Look(EN))


def test_dimension_labels_are_thinned_to_fit():
    """X [8 x 256] labelled d0 … d255 at -45° every few pixels: the labels ran into each other. With the
    plot's width given, every k-th label (k a power of two) stands level with room around it."""
    dims = dim_labels(256)
    fig = step_heatmap(rng_matrix(3, 256), LABELS[:3], dims, Labels("X", "dimension", "token", "value"), Look(EN),
                       show_values=False,
                       plot_px=360)
    axis = fig.layout.xaxis
    assert axis.tickangle == 0 and list(axis.tickvals) == dims[::32] == list(axis.ticktext)
    assert 360 / 256 * 32 >= MIN_EM_PER_LEVEL_LABEL * NORMAL.tick
    assert level_ticks(dims[:16], 720)["tickvals"] == dims[:16]                 # room for all: all shown
    small = step_heatmap(rng_matrix(4, 4), LABELS, LABELS, Labels("s", "key", "query", "value"), Look(EN))
    assert small.layout.xaxis.tickvals is None


@pytest.mark.parametrize("scale_name", ["normal", "presenter"])
def test_every_query_row_is_tall_enough_for_its_label(scale_name):
    """Seen on the step-through in presenter mode at 1280x720: the 9 x 9 Q·Kᵀ map was 374 px high, and after the
    title, the slanted key labels and the axis title its rows were 21 px for 18 px labels, so plotly showed
    only every second query (0 <modern>, 2 _man, 4 _to…). Each row now has 1.25 ems of the tick size."""
    from viz.figures.style import TYPE_SCALES
    scale = TYPE_SCALES[scale_name]
    labels = ["0 <modern>", "1 ▁The", "2 ▁man", "3 ▁went", "4 ▁to", "5 ▁the", "6 ▁house", "7 .", "8 </s>"]
    m = np.random.default_rng(1).normal(size=(9, 9))
    fig = step_heatmap(m, labels, labels, Labels("Q·Kᵀ [9 × 9]: raw dot products", "key", "query", "value"),
                       Look(EN, scale))
    slanted = 0.71 * max(scale.text_px(label, "tick") for label in labels) + scale.tick
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b - slanted - 1.5 * scale.text
    assert plot_h / len(labels) >= 1.25 * scale.tick
