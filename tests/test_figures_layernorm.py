"""Pure tests of the LayerNorm / BatchNorm statistics (model/analysis/norms.py), residual stages and
their figures (viz/figures/layernorm.py)."""
import numpy as np
import pytest
import torch

from model.nn.layers import LayerNorm
import viz.figures.layernorm as figures
from viz.figures.style import NORMAL, PHONE, PRESENTER, Look
from model.analysis import norms
from model.analysis.norms import (batch_norm_drift, batch_norm_stats, layer_norm, layer_norm_stats, normalize,
                                  residual_stages)
from viz.figures.layernorm import (drift_figure, feature_histogram, gain_bias_figure, ln_vs_bn_figure,
                                   residual_norm_figure, token_stats_figure)
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

X = np.array([[1.0, 2.0, 3.0, 6.0],
              [0.0, 0.0, 4.0, 4.0],
              [-1.0, 1.0, -1.0, 1.0]])                                                   # [T=3, D=4]


def test_layer_norm_stats_are_per_row():
    mean, std = layer_norm_stats(X)
    assert np.allclose(mean, [3.0, 2.0, 0.0])
    assert np.allclose(std, [np.sqrt(3.5), 2.0, 1.0])          # biased std, as LayerNorm uses


def test_batch_norm_stats_are_per_column():
    mean, std = batch_norm_stats(X)
    assert mean.shape == (4,) and np.allclose(mean, [0.0, 1.0, 2.0, 11 / 3])
    assert np.allclose(std, X.std(axis=0))


def test_normalize_axes():
    ln = normalize(X, axis=1, eps=0)
    bn = normalize(X, axis=0, eps=0)
    assert np.allclose(ln.mean(1), 0) and np.allclose(ln.std(1), 1)
    assert np.allclose(bn.mean(0), 0) and np.allclose(bn.std(0), 1)
    assert not np.allclose(ln, bn)
    with pytest.raises(ValueError, match="axis"):
        normalize(X, axis=2)
    with pytest.raises(ValueError, match="matrix"):
        normalize(np.zeros(4), axis=1)


def test_stats_match_the_models_layernorm():
    torch.manual_seed(0)
    x = torch.randn(1, 5, 16) * 3 + 1
    out = LayerNorm(16, eps=1e-5)(x)[0].detach().numpy()        # gain 1, bias 0: just the normalization
    assert np.allclose(normalize(x[0].numpy(), axis=1, eps=1e-5), out, atol=1e-5)


def test_one_layer_norm_serves_every_page():
    """The LayerNorm page's statistics and the multi-head page's check are one computation."""
    ln = layer_norm(X, np.ones(4), np.zeros(4), 1e-5)
    np.testing.assert_array_equal(ln, normalize(X, axis=1, eps=1e-5))
    np.testing.assert_array_equal(normalize(X[None], axis=-1, eps=1e-5)[0], ln)     # any leading axes
    gain, bias = np.linspace(0.5, 2, 4), np.linspace(-1, 1, 4)
    np.testing.assert_allclose(layer_norm(X, gain, bias, 0), normalize(X, 1, 0) * gain + bias)
    for name in ("normalize", "batch_norm_drift", "residual_stages"):    # one import path: model/analysis
        assert not hasattr(figures, name) and callable(getattr(norms, name))


def test_batch_norm_drift():
    drift = batch_norm_drift(X, token=0, eps=1e-5)
    assert drift.shape == (3,)
    assert np.isclose(drift[0], 1.0)     # a batch of one: every feature has std 0, the token becomes all zeros
    assert np.isclose(drift[-1], 0.0)    # the full batch is the reference
    assert len(batch_norm_drift(X, token=1)) == 2
    with pytest.raises(ValueError, match="token"):
        batch_norm_drift(X, token=3)


def _arrays(n_enc=2, n_dec=1, s=3, t=4, d=8):
    rng = np.random.default_rng(0)
    arrays = {}
    for stack, n, length, hooks in (("encoder", n_enc, s, ["pre", "mid", "post"]),
                                    ("decoder", n_dec, t, ["pre", "mid", "cross", "post"])):
        for i in range(n):
            for h in hooks:
                arrays[f"{stack}.layers.{i}.hook_resid_{h}"] = rng.normal(size=(length, d))
    return arrays


def test_residual_stages_order_and_values():
    arrays = _arrays()
    labels, norms = residual_stages(arrays, "encoder", 2)
    assert labels == ["enc embedding", "enc L0 +attn", "enc L0 +ff", "enc L1 +attn", "enc L1 +ff"]
    assert norms.shape == (5, 3)
    assert np.allclose(norms[2], np.linalg.norm(arrays["encoder.layers.0.hook_resid_post"], axis=1))
    labels, norms = residual_stages(arrays, "decoder", 1)
    assert labels == ["dec embedding", "dec L0 +attn", "dec L0 +cross", "dec L0 +ff"]
    assert norms.shape == (4, 4)
    with pytest.raises(KeyError, match="not captured"):
        residual_stages(arrays, "decoder", 2)
    with pytest.raises(ValueError, match="stack"):
        residual_stages(arrays, "middle", 1)


def test_residual_norm_figure_draws_tokens_and_means():
    arrays = _arrays()
    parts = [("encoder", *residual_stages(arrays, "encoder", 2), ["0 a", "1 b", "2 </s>"]),
             ("decoder", *residual_stages(arrays, "decoder", 1), ["0 <s>", "1 x", "2 y", "3 z"])]
    fig = residual_norm_figure(parts, Look(EN))
    assert len(fig.data) == 2 * 2            # per stack: every token's line in one trace (1,000 traces at 512), the mean
    lines = [t for t in fig.data if t.showlegend is False]
    assert [len(set(t.text)) for t in lines] == [3, 4]                # each token named on hover
    assert np.isnan(np.asarray(lines[0].y, dtype=float)).sum() == 3   # one break after each token's line
    means = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in means] == ["encoder: mean over 3 tokens", "decoder: mean over 4 tokens"]
    assert np.allclose(means[0].y, parts[0][2].mean(1))
    with pytest.raises(ValueError):
        residual_norm_figure([("encoder", ["a"], np.zeros((2, 3)), ["x", "y", "z"])], Look(EN))


def test_token_stats_figure():
    mean, std = layer_norm_stats(X)
    after = layer_norm_stats(normalize(X, 1))
    labels = ["0 a", "1 b", "2 </s>"]
    fig = token_stats_figure(labels, (mean, std), after, Look(EN))
    assert len(fig.data) == 4
    assert list(fig.data[0].x) == ["0 a", "1 b", "2 &lt;/s&gt;"]
    assert np.allclose(fig.data[0].y, mean) and np.allclose(fig.data[3].y, after[1])
    with pytest.raises(ValueError, match="expected"):
        token_stats_figure(labels[:2], (mean, std), after, Look(EN))


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER])
def test_token_stats_legend_between_the_title_and_the_panel_titles(scale):
    """Screenshot review (tour step 5, 1280x720): the legend sat right-aligned on the title's line and ran into
    a long title ('...its input and output■ input (before)'). It now sits under the title and above the panel
    titles, placed in the figure's px so that the tick labels' automargin cannot move it."""
    mean, std = layer_norm_stats(X)
    title = "Encoder layer 0, the attention sublayer's LayerNorm: its input and output"
    fig = token_stats_figure(["0 a", "1 b", "2 c"], (mean, std), layer_norm_stats(normalize(X, 1)), Look(EN, scale), title=title)
    legend, top = fig.layout.legend, fig.layout.margin.t
    assert legend.orientation == "h" and legend.yref == "container" and legend.yanchor == "bottom"
    legend_bottom = fig.layout.height * (1 - legend.y)                   # px from the figure's top
    assert legend_bottom >= int(30 + 1.4 * scale.title + 1.5 * scale.text) - 0.01  # the title's line, then the legend's
    assert top - legend_bottom >= 1.5 * scale.text                         # the panel titles' line under it


@pytest.mark.parametrize("means", [[0.18, 0.4, 0.06], [0.18, -0.3, 0.06]], ids=["positive", "one-negative"])
def test_token_stats_panels_share_one_baseline(means):
    """Screenshot review (tour step 5, 1280x720): the mean panel's zero line sat about 13 px above the std panel's.
    The panels were as tall, but plotly's range for the means went below 0 (the normalized means are about
    -1e-9) and the std's started at 0. Now 0 is at the same height in both, and every bar is inside its range."""
    mean_after, std_after = np.array([-1e-9, 2e-9, -3e-9]), np.ones(3)
    fig = token_stats_figure(["0 a", "1 b", "2 c"], (np.array(means), np.array([0.76, 1.29, 0.85])),
                             (mean_after, std_after), Look(EN), title="t")
    layout = fig.layout
    assert tuple(layout.yaxis.domain or (0, 1)) == tuple(layout.yaxis2.domain or (0, 1))
    (lo1, hi1), (lo2, hi2) = layout.yaxis.range, layout.yaxis2.range
    assert -lo1 / (hi1 - lo1) == pytest.approx(-lo2 / (hi2 - lo2), abs=1e-9)    # 0 at the same share of the height
    assert lo1 <= min(*means, *mean_after) and hi1 >= max(means)
    assert lo2 <= 0 and hi2 >= 1.29
    if min(means) >= 0:
        assert -lo1 / (hi1 - lo1) < 1e-6                                         # no room below 0 for -1e-9


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER, PHONE], ids=lambda s: s.name)
def test_histogram_x_tick_labels_stand_below_the_counts_zero(scale):
    """The counts' "0" is centred on the x axis's line, half its box (1.15 em) below it; the x tick labels start
    plotly's 2 px below the line plus their standoff, under it (en-es layers 1 and 2: −6 was drawn over the 0; in
    Chromium: tests/test_browser_layernorm_view.py)."""
    hist = feature_histogram({"input": X[0]}, Look(EN, scale))
    assert hist.layout.xaxis.tickfont.size == hist.layout.yaxis.tickfont.size == scale.tick
    assert 2 + hist.layout.xaxis.ticklabelstandoff >= 1.15 * scale.tick / 2


def test_histogram_gain_bias_ln_bn_drift_figures():
    hist = feature_histogram({"input": X[0], "normalized": normalize(X, 1)[0]}, Look(EN))
    assert [t.name for t in hist.data] == ["input", "normalized"] and hist.layout.barmode == "overlay"
    with pytest.raises(ValueError):
        feature_histogram({}, Look(EN))
    gb = gain_bias_figure(np.ones(4), np.zeros(4), Look(EN))
    assert len(gb.data) == 2 and list(gb.data[0].x) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="bias"):
        gain_bias_figure(np.ones(4), np.zeros(3), Look(EN))
    both = ln_vs_bn_figure(X, ["a", "b", "c"], Look(EN))
    assert len(both.data[0].y) == 3 and len(both.data[2].y) == 4   # LN per token, BN per feature
    assert np.allclose(both.data[2].y, X.mean(0))
    with pytest.raises(ValueError, match="labels"):
        ln_vs_bn_figure(X, ["a"], Look(EN))
    drift = drift_figure(batch_norm_drift(X), Look(EN))
    assert list(drift.data[0].x) == [1, 2, 3] and np.allclose(drift.data[1].y, 0)
