"""Multi-head assembly arithmetic (viz/headmath.py) and figures (viz/figures/multihead.py): pure, fast."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence
from viz.figures.style import Look
from viz.figures.multihead import (MIN_PX_PER_KEY, concat_heatmap, head_columns, head_patterns, per_head_outputs,
                                   stage_heatmap, stage_norms, width_per_key)
from model.analysis.attention_math import concat_heads, max_abs_error, output_projection
from model.analysis.heads import head_summary, head_traits
from model.analysis.norms import layer_norm, token_norms
from model.io.weights import linear_arrays
from model.capture.schema import sublayer_names
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

TOY = Path(__file__).resolve().parents[1] / "pretrained" / "toy-reverse"
TOKENS = ["0 a", "1 b", "2 </s>"]


@pytest.fixture(scope="module")
def toy():
    bundle = load_checkpoint(TOY, device="cpu")
    return bundle, trace_sentence(bundle, "a b c d e")


def z_stack(n_heads=2, n_pos=3, d_head=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n_heads, n_pos, d_head))


# -- the arithmetic ------------------------------------------------------------------------------------
def test_concat_heads_matches_the_models_reshape():
    z = z_stack()
    concat = concat_heads(z)
    assert concat.shape == (3, 8)
    np.testing.assert_array_equal(concat[:, 4:], z[1])
    model_way = torch.tensor(z)[None].transpose(1, 2).reshape(1, 3, 8)[0].numpy()   # as MultiHeadAttention
    np.testing.assert_array_equal(concat, model_way)
    with pytest.raises(ValueError):
        concat_heads(z[0])


def test_output_projection_and_layer_norm_match_torch():
    torch.manual_seed(0)
    linear = torch.nn.Linear(8, 8)
    x = np.random.default_rng(1).normal(size=(3, 8))
    weight, bias = linear_arrays(linear)
    expected = linear(torch.tensor(x, dtype=torch.float32)).detach().numpy()
    np.testing.assert_allclose(output_projection(x, weight, bias), expected, atol=1e-5)
    np.testing.assert_allclose(output_projection(x, weight, None), x @ weight.T)
    with pytest.raises(ValueError, match="does not fit"):
        output_projection(x[:, :5], weight, bias)
    gain, shift = np.linspace(0.5, 2, 8), np.linspace(-1, 1, 8)
    torch_ln = F.layer_norm(torch.tensor(x), (8,), torch.tensor(gain), torch.tensor(shift), 1e-5).numpy()
    np.testing.assert_allclose(layer_norm(x, gain, shift, 1e-5), torch_ln, atol=1e-10)


def test_linear_arrays_accepts_plain_arrays():
    weight, bias = linear_arrays(SimpleNamespace(weight=[[1, 2], [3, 4]], bias=None))
    assert weight.dtype == np.float64 and weight.shape == (2, 2) and bias is None


def test_token_norms():
    np.testing.assert_allclose(token_norms(np.array([[3.0, 4.0], [0.0, 0.0]])), [5.0, 0.0])
    with pytest.raises(ValueError):
        token_norms(np.zeros(3))


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_assembly_reproduces_the_real_sublayer(toy, kind):
    bundle, trace = toy
    a, cfg = trace.arrays, bundle.config
    names = sublayer_names(kind, 1, cfg.norm_first)
    concat = concat_heads(a[f"{names.attn}.hook_z"])
    weight, bias = linear_arrays(bundle.model.get_submodule(names.attn).w_o)
    out = output_projection(concat, weight, bias)
    assert max_abs_error(out, a[f"{names.attn}.hook_out"]) < 1e-5
    summed = a[names.residual] + out
    assert max_abs_error(summed, a[f"{names.norm}.hook_in"]) < 1e-5
    normed = layer_norm(summed, a[f"{names.norm}.hook_gain"], a[f"{names.norm}.hook_bias"], cfg.ln_eps)
    assert max_abs_error(normed, a[names.after]) < 1e-5



def test_head_traits_describe_each_head_by_what_sets_it_apart():
    """Issue 26, item 4: the multi-head table said "spread out / depends on the content" for all 8 heads of the
    default view. Each head is now named by the measured statistic in which it stands out, with its value."""
    n = 6
    eye, prev, nxt = np.eye(n), np.eye(n, k=-1), np.eye(n, k=1)
    prev[0, 0] = nxt[-1, -1] = 1.0
    fixed = np.zeros((n, n))
    fixed[:, 2] = 1.0
    uniform = np.full((n, n), 1 / n)
    far = np.zeros((n, n))
    far[np.arange(n), (np.arange(n) + n // 2) % n] = 1.0                  # always half the sentence away
    traits = head_traits(np.stack([eye, prev, nxt, fixed, uniform, far]), positional=True)
    names = [name for name, _ in traits]
    assert names == ["self", "previous", "next", "key", "broad", "far"]
    assert traits[0][1] == {"share": 1.0} and traits[3][1] == {"share": 1.0, "index": 2}
    assert traits[4][1]["n"] == pytest.approx(n) and traits[5][1]["distance"] == pytest.approx(3.0)
    # across sequences: a head that walks through the source in order, against ones that do not
    diagonal = np.eye(n)
    stuck = np.zeros((n, n))
    stuck[:, 0] = 1.0
    cross = head_traits(np.stack([diagonal, stuck, uniform]), positional=False)
    assert [name for name, _ in cross] == ["order", "key", "broad"] and cross[0][1]["r"] == pytest.approx(1.0)
    # one head: nothing to compare with, its favourite key
    assert head_traits(eye[None], positional=True)[0][0] == "key"
    with pytest.raises(ValueError):
        head_traits(eye, positional=True)

def test_head_summary_tells_positional_and_fixed_heads_apart():
    eye, prev, fixed = np.eye(4), np.eye(4, k=-1), np.zeros((4, 4))
    prev[0, 0] = 1.0
    fixed[:, 3] = 1.0
    summary = head_summary(np.stack([eye, prev, fixed]))
    np.testing.assert_allclose(summary["entropy"], 0.0)
    np.testing.assert_allclose(summary["max_weight"], 1.0)
    assert summary["offset"].tolist() == [0, -1, 0] and summary["offset_share"][1] == 0.75
    assert summary["favourite"][2] == 3 and summary["favourite_weight"][2] == 1.0
    spread = head_summary(np.full((1, 4, 4), 0.25))
    np.testing.assert_allclose([spread["entropy"][0], spread["favourite_weight"][0]], [2.0, 0.25])
    with pytest.raises(ValueError):
        head_summary(eye)


# -- figures ------------------------------------------------------------------------------------------
def test_per_head_outputs_share_one_symmetric_scale():
    z = z_stack(n_heads=3)
    fig = per_head_outputs(z, TOKENS, Look(EN), "z")
    assert len(fig.data) == 3 and all(t.coloraxis == "coloraxis" for t in fig.data)
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax == pytest.approx(-np.abs(z).max())
    np.testing.assert_allclose(np.asarray(fig.data[2].z), z[2])
    assert list(fig.data[0].y)[2] == "2 &lt;/s&gt;" and list(fig.data[0].x) == ["d0", "d1", "d2", "d3"]
    assert [a.text for a in fig.layout.annotations][:1] == ["head 0: z<sub>0</sub> [3 × 4]"]
    with pytest.raises(ValueError, match="does not match"):
        per_head_outputs(z, TOKENS[:2], Look(EN))


def test_concat_heatmap_marks_head_boundaries():
    concat = concat_heads(z_stack(n_heads=4, d_head=2))
    fig = concat_heatmap(concat, TOKENS, 4, Look(EN), "concat")
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert [s.x0 for s in lines] == [1.5, 3.5, 5.5]
    assert [a.text for a in fig.layout.annotations] == ["head 0", "head 1", "head 2", "head 3"]
    assert list(fig.data[0].x)[-1] == "d7"
    with pytest.raises(ValueError, match="split"):
        concat_heatmap(concat, TOKENS, 3, Look(EN))


def test_stage_heatmap_and_norms():
    m = np.random.default_rng(2).normal(size=(3, 5))
    fig = stage_heatmap(m, TOKENS, Look(EN), "stage")
    assert list(fig.data[0].x) == ["d0", "d1", "d2", "d3", "d4"] and fig.data[0].zmin == -fig.data[0].zmax
    wide = stage_heatmap(np.zeros((3, 256)), TOKENS, Look(EN), "stage", plot_px=280)       # one of two columns
    assert wide.layout.xaxis.tickangle == 0 and list(wide.layout.xaxis.tickvals)[:2] == ["d0", "d64"]
    with pytest.raises(ValueError):
        stage_heatmap(m[0], TOKENS, Look(EN))
    norms = {"x": token_norms(m), "LayerNorm": np.ones(3)}
    bars = stage_norms(norms, TOKENS, Look(EN), "norms")
    assert [b.name for b in bars.data] == ["x", "LayerNorm"] and bars.layout.barmode == "group"
    np.testing.assert_allclose(bars.data[0].y, token_norms(m))
    with pytest.raises(ValueError, match="expected"):
        stage_norms({"x": np.ones(2)}, TOKENS, Look(EN))
    with pytest.raises(ValueError):
        stage_norms({}, TOKENS, Look(EN))


def test_head_patterns_small_multiples():
    p = np.random.default_rng(3).dirichlet(np.ones(2), size=(6, 3))          # [H=6, Q=3, K=2]
    fig = head_patterns(p, TOKENS, ["0 x", "1 <s>"], Look(EN), "heads", n_cols=4)
    assert len(fig.data) == 6 and fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert fig.data[5].xaxis == "x6" and list(fig.data[0].x) == ["0 x", "1 &lt;s&gt;"]
    np.testing.assert_allclose(np.asarray(fig.data[4].z), p[4])
    assert [a.text for a in fig.layout.annotations] == [f"head {h}" for h in range(6)]
    with pytest.raises(ValueError, match="does not match"):
        head_patterns(p, TOKENS, ["0 x"], Look(EN))


def test_head_grid_key_labels_do_not_crowd():
    """8 heads x 9 keys in 4 columns: the -45° labels ran into each other and into the next panel. Now upright,
    under the bottom panels only, and fewer columns when a key would get less than MIN_PX_PER_KEY."""
    keys = [f"{i} ▁token" for i in range(9)]
    p = np.random.default_rng(4).dirichlet(np.ones(9), size=(8, 9))
    fig = head_patterns(p, keys, keys, Look(EN))
    shown = [name for name in fig.layout.to_plotly_json() if name.startswith("xaxis")
             and fig.layout[name].showticklabels]
    assert sorted(shown) == ["xaxis5", "xaxis6", "xaxis7", "xaxis8"]        # the bottom row of 2 x 4
    assert all(fig.layout[name].tickangle == -90 for name in shown)
    assert fig.layout.yaxis.showticklabels and not fig.layout.yaxis2.showticklabels
    assert head_columns(8, 9) == 4 and width_per_key(4, 9) >= MIN_PX_PER_KEY
    # a long sentence: fewer, wider panels, so each key keeps its room
    assert head_columns(8, 20) == 2 and width_per_key(2, 20) >= MIN_PX_PER_KEY
    long_keys = [f"{i} t" for i in range(20)]
    wide = head_patterns(np.full((8, 20, 20), 1 / 20), long_keys, long_keys, Look(EN))
    assert [t.xaxis for t in wide.data][-2:] == ["x7", "x8"] and wide.layout.xaxis7.showticklabels
    assert wide.layout.xaxis.domain[1] > 0.45                                # 2 columns, not 4
    # too many keys for even one column: no labels rather than a smear (hover still names them)
    many = [f"{i}" for i in range(60)]
    assert not head_patterns(np.full((2, 60, 60), 1 / 60), many, many, Look(EN)).layout.xaxis.showticklabels


def test_head_grid_rows_as_tall_as_their_labels_need():
    """Issue 26, item 2: 8 heads x 9 tokens drew 185 px panels (568 px at the normal scale, 813 in presenter
    mode); now each query row is ROW_EM of the tick size (its label clears its neighbours) and the grid is
    under three quarters of a 720 px screen in both scales, with room for each row's panel titles."""
    from viz.figures.multihead import ROW_EM
    from viz.figures.style import NORMAL, PRESENTER
    keys = [f"{i} ▁token" for i in range(9)]
    p = np.random.default_rng(5).dirichlet(np.ones(9), size=(8, 9))
    for scale, at_most in ((NORMAL, 540), (PRESENTER, 700)):       # presenter: 20 px rows, the back row's size
        fig = head_patterns(p, keys, keys, Look(EN, scale), "heads")
        top, bottom = fig.layout.yaxis.domain, fig.layout.yaxis5.domain          # rows 1 and 2 of 2 x 4
        plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        labels = max(scale.text_px(k, "tick") for k in keys)                      # the keys under row 2
        assert fig.layout.height <= at_most, (scale.name, fig.layout.height)
        assert (top[1] - top[0]) * (plot_h - labels) >= ROW_EM * scale.tick * 9 - 1
        assert (top[0] - bottom[1]) * plot_h >= 1.5 * scale.text                  # "head 4" above row 2


def test_a_sentence_a_token_longer_than_the_heads_window_is_shown_whole():
    """Issue 46, item 5: the multi-head page showed 14 of a 15-token sentence and hid its </s> behind a slider that
    moved by one token. A sentence up to two tokens longer than the window is shown whole, with every key labelled;
    a long one keeps its window."""
    from viz.figures.multihead import head_window
    from viz.figures.style import NORMAL, PHONE, PRESENTER
    for scale in (NORMAL, PRESENTER, PHONE):
        assert head_window(12, type_scale=scale) == 12
        assert head_window(15, type_scale=scale) == 15 and head_window(16, type_scale=scale) == 16
        assert head_window(69, type_scale=scale) == 14                  # the 40-word sentence: its window
    keys = [f"{i} ▁tok" for i in range(14)] + ["14 </s>"]
    fig = head_patterns(np.full((8, 15, 15), 1 / 15), keys, keys, Look(EN))
    labelled = [name for name in fig.layout.to_plotly_json() if name.startswith("xaxis") and fig.layout[name].showticklabels]
    assert labelled and all(list(fig.layout[name].tickvals)[-1] == "14 &lt;/s&gt;" for name in labelled)
    assert all(len(fig.layout[name].tickvals) == 15 for name in labelled)
