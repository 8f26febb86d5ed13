"""The feed-forward network, label smoothing and dropout on one sentence (model/analysis/regularize.py) and
their figures (viz/figures/regularize.py), issue 26 item 11."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.analysis import regularize as rg
from model.analysis.attention_math import log_softmax
from model.capture import schema
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from model.nn.config import TransformerConfig
from viz import ROOT
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English


@pytest.fixture(scope="module")
def bundle():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse")


@pytest.fixture(scope="module")
def trace(bundle):
    return trace_sentence(bundle, "a b c d e")


# -- feed-forward -----------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ["encoder", "decoder"])
def test_ffn_adds_its_output_to_the_residual_stream(trace, bundle, stack):
    cfg = bundle.config
    for layer in range(schema.n_layers(cfg, stack)):
        ff = rg.feed_forward(trace.arrays, stack, layer, cfg.norm_first)
        # post-norm (toy-reverse): norm_ff reads resid + FFN(resid); resid_post is that, normalised
        assert not cfg.norm_first
        norm_in = trace.arrays[schema.norm_name(stack, layer, "norm_ff", "in")]
        assert np.allclose(ff.summed, norm_in, atol=1e-5)
        assert np.allclose(trace.arrays[schema.resid_name(stack, layer, "resid_post")],
                           trace.arrays[schema.norm_name(stack, layer, "norm_ff", "out")], atol=1e-6)
        # the hidden units are the ReLU of x W1 + b1, and out = hidden W2 + b2 (the model's own weights)
        ffm = getattr(bundle.model, stack).layers[layer].ff
        w1, b1, w2, b2 = (p.detach().double().numpy() for p in (ffm.w_1.weight, ffm.w_1.bias, ffm.w_2.weight,
                                                                ffm.w_2.bias))
        assert np.allclose(ff.hidden, np.maximum(ff.resid_in @ w1.T + b1, 0), atol=1e-4)
        assert np.allclose(ff.out, ff.hidden @ w2.T + b2, atol=1e-4)
        assert ff.hidden.shape == (len(schema.stack_tokens(trace.meta, stack)), cfg.d_ff)
        assert np.all((ff.active > 0) & (ff.active < 1))
        assert np.allclose(ff.out_norm, np.linalg.norm(ff.out, axis=1)) and np.all(np.abs(ff.cosine) <= 1)


def test_the_direction_of_what_the_ffn_writes_follows_the_cosines():
    """The words under the FFN chart said "near 0: new directions" for cosines of 0.39-0.68; they follow the
    numbers: every |cos| < 0.3 is new, every cos >= 0.3 along, every cos <= -0.3 against, else mixed."""
    stream = np.array([[1.0, 0.0], [0.0, 1.0]])

    def direction(angles_deg) -> str:
        out = np.stack([[np.cos(a), np.sin(a)] for a in np.radians(angles_deg)])
        out = np.stack([out[0], out[1][::-1]])        # token 1's stream is the y axis: the same angle to it
        ff = rg.FeedForward(np.zeros((2, 1)), out, stream, stream + out)
        return ff.direction
    assert direction([85, 80]) == "new"                # cos 0.09, 0.17
    assert direction([67, 47]) == "along"              # cos 0.39, 0.68: the en-es encoder's first layer
    assert direction([113, 133]) == "against"
    assert direction([85, 47]) == "mixed"


def test_top_units_take_each_tokens_strongest():
    hidden = np.zeros((3, 10))
    hidden[0, 7], hidden[1, 2], hidden[2, 9], hidden[2, 4] = 5.0, 4.0, 3.0, 2.0
    units = rg.top_units(hidden, per_token=1, limit=4)
    assert list(units[:3]) == [7, 2, 9]                # ordered by the token that fires them most
    assert set(units) == {7, 2, 9, 4}                  # then the strongest remaining
    assert len(rg.top_units(np.random.default_rng(0).random((5, 100)), per_token=3, limit=8)) == 8
    with pytest.raises(ValueError, match="hidden"):
        rg.top_units(np.zeros(3))


# -- label smoothing --------------------------------------------------------------------------------
def test_smoothed_target_sums_to_one_with_the_gold_share():
    q = rg.smoothed_target([3, 0], vocab_size=10, eps=0.1)
    assert q.shape == (2, 10) and np.allclose(q.sum(1), 1)
    assert q[0, 3] == pytest.approx(1 - 0.1 + 0.1 / 10) and q[0, 0] == pytest.approx(0.01)
    assert q[1, 0] == pytest.approx(0.91)
    assert np.allclose(rg.smoothed_target([3], 10, eps=0.0)[0], np.eye(10)[3])
    with pytest.raises(ValueError, match="ε"):
        rg.smoothed_target([1], 10, eps=1.0)
    with pytest.raises(ValueError, match="gold"):
        rg.smoothed_target([10], 10)


def test_smoothed_loss_is_the_formula_and_torchs():
    logits = np.random.default_rng(1).normal(size=(4, 12)) * 3
    gold = np.array([0, 5, 11, 5])
    s = rg.smoothing_losses(logits, gold, eps=0.1)
    logp = log_softmax(logits)
    assert np.allclose(s.nll, -logp[np.arange(4), gold])
    assert np.allclose(s.smoothed, 0.9 * s.nll + 0.1 * (-logp).mean(1))           # (1-ε)·NLL + ε·mean(-log p)
    torch_loss = F.cross_entropy(torch.tensor(logits), torch.tensor(gold), label_smoothing=0.1, reduction="none")
    assert np.allclose(s.smoothed, torch_loss.numpy())                              # what training minimised
    assert np.allclose(s.probs.sum(1), 1) and np.allclose(s.target.sum(1), 1)
    assert np.all(s.gap >= -1e-12)                                                   # KL(q‖p) ≥ 0
    # the floor is reached when the model predicts q itself
    at_q = rg.smoothing_losses(np.log(s.target), gold, eps=0.1)
    assert np.allclose(at_q.smoothed, at_q.floor) and np.allclose(at_q.gap, 0, atol=1e-12)
    assert list(rg.candidates(s.probs[1], gold[1], k=3))[0] == 5


def test_smoothing_on_the_models_own_output(trace):
    gold = trace.meta["tgt_ids"]
    s = rg.smoothing_losses(trace[schema.LOGITS], gold)
    assert s.eps == rg.TRAINING_SMOOTHING == 0.1
    # sum of -log p(gold) is the trace's own log-probability of its output
    assert s.nll.sum() == pytest.approx(-trace.meta["tgt_logprob"], rel=1e-4)
    assert np.all(s.smoothed > s.nll)      # a confident model pays for the ε it gives no other token


# -- dropout ----------------------------------------------------------------------------------------
def test_attention_dropout_is_inverted_dropout_seeded():
    w = np.full((2, 5, 5), 0.2)
    d = rg.attention_dropout(w, p=0.1, samples=3, seed=0)
    assert d.shape == (3, 2, 5, 5)
    assert set(np.round(np.unique(d), 9)) <= {0.0, round(0.2 / 0.9, 9)}    # zeroed, or scaled by 1/(1-p)
    assert np.any(d == 0) and not np.allclose(d[0], d[1])                # samples differ from each other
    assert not np.allclose(d[0], w)                                      # and from eval (dropout off)
    assert np.allclose(rg.attention_dropout(w, 0.1, 3, seed=0), d)       # the same seed, the same samples
    rows = d.sum(-1)
    assert not np.allclose(rows, 1)                                      # rows are not renormalised...
    many = rg.attention_dropout(w, 0.1, samples=4000, seed=1)
    assert np.allclose(many.mean(0), w, atol=0.01)                       # ...each weight keeps its expectation
    assert np.allclose(rg.attention_dropout(w, 0.0, 2), w)
    with pytest.raises(ValueError, match="dropout"):
        rg.attention_dropout(w, 1.0)


# -- figures ----------------------------------------------------------------------------------------
from viz.figures import regularize as figs  # noqa: E402
from viz.figures.style import Look, PRESENTER  # noqa: E402


def test_figures_draw_what_they_are_given():
    hidden = np.array([[0.0, 2.0], [1.5, 0.0]])
    fig = figs.ffn_units_figure(hidden, ["a", "</s>"], [7, 3], Look(EN, PRESENTER))
    assert list(fig.data[0].x) == ["#7", "#3"] and list(fig.data[0].y) == ["a", "&lt;/s&gt;"]
    assert np.allclose(fig.data[0].z, hidden) and fig.layout.xaxis.tickfont.size == PRESENTER.tick
    assert list(fig.layout.xaxis.tickvals) == ["#7", "#3"]                      # every unit labelled
    add = figs.ffn_add_figure(["a", "b"], [16, 16], [3, 5], [0.1, -0.2], Look(EN))
    assert [b.name for b in add.data] == [EN("ffn.add.resid"), EN("ffn.add.out")] and list(add.data[1].y) == [3, 5]
    # its legend under the title, over the plot (at the top right it ran into a centred title: the browser's view)
    assert add.layout.legend.yanchor == "bottom" and add.layout.legend.y == 1.0 and add.layout.legend.x == 0
    titled = figs.ffn_add_figure(["a", "b"], [16, 16], [3, 5], [0.1, -0.2], Look(EN), title=EN("ffn.add.title"))
    assert titled.layout.title.yref == "container" and titled.layout.margin.t >= 60     # room for both
    sm = figs.smoothing_figure(["casa", "la"], [0.9, 0.05], [0.91, 0.01], Look(EN), rest=(0.05, 0.08), rest_label="others")
    assert list(sm.data[0].x) == ["casa", "la", "others"] and list(sm.data[1].y) == [0.91, 0.01, 0.08]
    loss = figs.loss_figure(["a", "b"], [0.1, 0.2], [0.5, 0.6], 0.1, Look(EN), [0.4, 0.4])
    assert len(loss.data) == 3 and list(loss.data[1].y) == [0.5, 0.6]
    w = np.array([[1.0, 0.0], [0.5, 0.5]])
    mask = np.array([[False, True], [False, False]])
    dr = figs.dropout_figure([w, w / 0.9], ["off", "sample 1"], ["x", "y"], ["x", "y"], Look(EN), mask=mask)
    heat = [d for d in dr.data if d.type == "heatmap" and d.hoverinfo != "skip"]
    assert len(heat) == 2 and np.isnan(heat[0].z[0][1])          # masked cells drawn masked, not 0.00
    assert heat[1].zmax == pytest.approx(1 / 0.9)                 # one range for all: scaled-up weights show
    with pytest.raises(ValueError):
        figs.dropout_figure([w], ["a", "b"], ["x", "y"], ["x", "y"], Look(EN))
    with pytest.raises(ValueError):
        figs.smoothing_figure(["a"], [0.1, 0.2], [0.1], Look(EN))


def test_dropout_rate_shown_is_the_models_or_the_papers(bundle):
    assert bundle.config.dropout == 0.0 and rg.trained_plainly(bundle.config)      # toy: no dropout, no smoothing
    assert rg.shown_dropout(bundle.config) == rg.PAPER_DROPOUT == 0.1
    en_es = TransformerConfig(
        vocab_size=100, d_model=32, n_heads=2, d_ff=64, dropout=0.2)
    assert rg.shown_dropout(en_es) == 0.2 and not rg.trained_plainly(en_es)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tour_steps_show_the_ffn_and_smoothing_on_the_sentence(trace, lang):
    from viz.tour.pictures import ffn_figure, regularize_figure
    from viz.tour.steps import TOUR
    keys = [s.key for s in TOUR]
    assert keys.index("ffn") == keys.index("add_norm") + 1 and keys.index("regularize") == keys.index("decoding") + 1
    fig = ffn_figure(trace, None, Look(words(lang)))
    ff = rg.feed_forward(trace.arrays, "encoder", 0)
    units = [int(u.lstrip("#")) for u in fig.data[0].x]
    assert np.allclose(fig.data[0].z, ff.hidden[:, units])
    bars = regularize_figure(trace, None, Look(words(lang))).data
    s = rg.smoothing_losses(trace[schema.LOGITS], trace.meta["tgt_ids"])
    gold = trace.meta["tgt_ids"][0]
    assert bars[0].y[0] == pytest.approx(s.probs[0, gold]) and bars[1].y[0] == pytest.approx(0.9 + 0.1 / s.probs.shape[1])
    assert bars[0].y[1] == pytest.approx(1 - s.probs[0, gold]) and bars[1].y[1] == pytest.approx(0.1 - 0.1 / s.probs.shape[1])
    if lang == "zh":
        assert "隐藏单元" in fig.layout.title.text


def test_smoothing_numbers_and_loss_legend_stay_apart():
    """Seen on the feed-forward page's label-smoothing view (en, 1280x720): the two bars of a candidate
    carried '0.00243' and '0.0000125' side by side, drawn into one another ('0.002430.0000125'); and the loss
    chart's legend, at the title's height, drew its second line over the title. Numbers too wide for their bar
    stand upright (with room above the tallest bar); the legend sits under the title with room for its lines."""
    from viz.figures.style import NORMAL, legend_lines
    cands = ["▁El", "▁Un", "▁La", "▁E", "▁Y"]
    p = [0.963, 0.00243, 0.00235, 0.00174, 0.00106]
    q = [0.9, 0.0000125, 0.0000125, 0.0000125, 0.0000125]
    sm = figs.smoothing_figure(cands, p, q, Look(EN, NORMAL), rest=(0.029, 0.0999))
    assert {bar.textangle for bar in sm.data} == {-90}
    # room above every bar for its upright number, and no empty band under the legend (a fixed headroom of 1.12
    # plus the widest number left about 70 px of nothing between the legend and the tallest bar's number)
    top, layout = sm.layout.yaxis.range[1], sm.layout
    plot_px = layout.height - layout.margin.t - layout.margin.b - 1.5 * NORMAL.tick
    for v, number in zip(p + [0.029] + q + [0.0999], list(sm.data[0].text) + list(sm.data[1].text)):
        assert (top - v) / top * plot_px >= NORMAL.text_px(number, "cell"), number
    assert (top - 0.963) / top * plot_px <= NORMAL.text_px("0.963", "cell") + 2 * NORMAL.cell
    assert max(sm.layout.yaxis.tickvals) == 1                        # the headroom is not a probability
    assert list(sm.data[1].text)[1] == "0.0000125"                   # as written, no 1.25e-05
    few = figs.smoothing_figure(["▁El"], [0.9], [0.91], Look(EN, NORMAL))
    assert {bar.textangle for bar in few.data} == {0}                 # wide bars keep level numbers
    loss = figs.loss_figure(["a", "b"], [0.1, 0.2], [0.5, 0.6], 0.1, Look(EN, NORMAL), [0.4, 0.4], title="Loss per output token")
    names = [d.name for d in loss.data]
    assert (loss.layout.title.yref, loss.layout.title.yanchor) == ("container", "top")
    assert loss.layout.legend.yref in (None, "paper") and loss.layout.legend.yanchor == "bottom"
    assert loss.layout.margin.t >= 1.4 * NORMAL.title + legend_lines(names, NORMAL) * 1.5 * NORMAL.text


@pytest.mark.parametrize("scale", ["NORMAL", "PRESENTER"])
def test_smoothing_legend_under_its_title(scale):
    """Screenshot review (tour step 12, the Feed-forward page's smoothing view): the legend sat at the figure's
    top right, above the title, with a gap under the title. The title is at the top, the legend under it with
    room for both (style.legend_under_title), as on the positional and LayerNorm figures."""
    from viz.figures import style
    from viz.figures.style import legend_lines
    s = getattr(style, scale)
    names = ["model's prediction p", "label-smoothed target q"]
    fig = figs.smoothing_figure(["▁El"], [0.963], [0.9], Look(EN, s), rest=(0.037, 0.1),
                                title="Predicting 0 ▁El: the model's distribution")
    title, legend = fig.layout.title, fig.layout.legend
    assert (title.yref, title.y, title.yanchor) == ("container", 1, "top")
    assert legend.orientation == "h" and legend.yref in (None, "paper") and legend.yanchor == "bottom"
    assert legend.y == 1.0 and legend.x == 0                       # on the plot's top edge, from the left
    assert fig.layout.margin.t >= 1.4 * s.title + legend_lines(names, s) * 1.5 * s.text
