"""Decoding figures as pure functions: top-k bars, attention rows, alignment, log-probabilities."""
import numpy as np
import pytest

from model.analysis.decoding import token_logprobs, top_k_view
from viz.figures.decoding import (CHOSEN_COLOR, alignment_heatmap, confidence_bars, cross_attention_multiples,
                                  generation_loop, heads_row_heatmap, logprob_comparison, next_token_bars,
                                  teacher_forced_pass)
from viz.core.i18n import words
from viz.figures.style import NORMAL, PRESENTER, Look

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

LOGPROBS = np.log(np.array([0.5, 0.3, 0.1, 0.06, 0.04]))   # sorted, most likely first
IDS = np.array([7, 3, 9, 4, 5])


def test_top_k_view_keeps_the_k_most_likely_and_marks_the_chosen():
    ids, probs, ranks, chosen = top_k_view(IDS, LOGPROBS, 3, chosen_id=3, chosen_logprob=LOGPROBS[1], chosen_rank=2)
    assert ids == [7, 3, 9]
    np.testing.assert_allclose(probs, [0.5, 0.3, 0.1])
    assert ranks == [1, 2, 3] and chosen == 1


def test_top_k_view_appends_a_chosen_token_ranked_below_k():
    # beam search can append a token that is not among the step's top k
    ids, probs, ranks, chosen = top_k_view(IDS, LOGPROBS, 2, chosen_id=12, chosen_logprob=np.log(0.001),
                                           chosen_rank=40)
    assert ids == [7, 3, 12] and ranks == [1, 2, 40] and chosen == 2
    assert probs[-1] == pytest.approx(0.001)


def test_top_k_view_caps_k_at_the_candidates_given():
    ids, _, ranks, _ = top_k_view(IDS, LOGPROBS, 50, 7, LOGPROBS[0], 1)
    assert len(ids) == 5 and ranks == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("kwargs, message", [
    (dict(top_ids=IDS[:4], top_logprobs=LOGPROBS, k=2), "token ids"),
    (dict(top_ids=IDS, top_logprobs=LOGPROBS[::-1], k=2), "sorted"),
    (dict(top_ids=IDS, top_logprobs=LOGPROBS, k=0), "at least 1"),
])
def test_top_k_view_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        top_k_view(**kwargs, chosen_id=7, chosen_logprob=0.0, chosen_rank=1)


def test_next_token_bars_highlights_the_chosen_bar_and_labels_ranks():
    fig = next_token_bars([0.5, 0.3, 0.1], ["▁la", "▁el", "▁una"], [1, 2, 3], Look(EN), chosen=1, title="t")
    bar = fig.data[0]
    assert list(bar.y) == ["#1  ▁la", "#2  ▁el", "#3  ▁una"]
    np.testing.assert_allclose(bar.x, [0.5, 0.3, 0.1])
    assert bar.marker.color[1] == CHOSEN_COLOR and bar.marker.color[0] != CHOSEN_COLOR
    assert tuple(fig.layout.xaxis.range) == (0, 1.12)          # fixed scale: confidence is comparable


@pytest.mark.parametrize("probs, labels, ranks, message", [
    ([0.5, 0.3], ["a"], [1, 2], "differ in length"),
    ([], [], [], "no candidates"),
    ([1.5], ["a"], [1], r"\[0, 1\]"),
    (np.ones((2, 2)), ["a", "b"], [1, 2], "1-D"),
])
def test_next_token_bars_rejects_bad_input(probs, labels, ranks, message):
    with pytest.raises(ValueError, match=message):
        next_token_bars(probs, labels, ranks, Look(EN))


def test_heads_row_heatmap_has_one_row_per_head():
    rows = np.array([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    fig = heads_row_heatmap(rows, ["0 <s>", "1 a", "2 b"], Look(EN))
    assert list(fig.data[0].y) == ["head 0", "head 1"]
    np.testing.assert_allclose(fig.data[0].z, rows)
    assert fig.layout.xaxis.title.text == "decoder input so far"
    with pytest.raises(ValueError, match="head, key"):
        heads_row_heatmap(np.ones(3), ["a", "b", "c"], Look(EN))


def test_cross_attention_multiples_average_first_then_one_panel_per_head():
    rows = np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5]])     # 3 heads over 2 source tokens
    fig = cross_attention_multiples(rows, ["0 a", "1 </s>"], Look(EN))
    assert len(fig.data) == 4
    np.testing.assert_allclose(fig.data[0].y, rows.mean(0))
    np.testing.assert_allclose(fig.data[2].y, rows[1])
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["average of heads", "head 0", "head 1", "head 2"]
    with pytest.raises(ValueError, match="source tokens"):
        cross_attention_multiples(rows, ["only one"], Look(EN))


def test_cross_attention_multiples_wraps_many_heads_into_rows():
    fig = cross_attention_multiples(np.full((8, 3), 1 / 3), ["a", "b", "c"], Look(EN), max_cols=4)
    assert len(fig.data) == 9
    assert fig.data[8].xaxis == "x9"                   # average on x, heads 0-7 on x2..x9
    assert fig.layout.xaxis.domain[1] == 1.0           # the average spans the full width
    rows = {tuple(fig.layout[f'yaxis{i}'].domain) for i in range(2, 10)}
    assert len(rows) == 2 and fig.layout.yaxis6.domain == fig.layout.yaxis9.domain   # two rows of four heads
    assert fig.layout.xaxis2.showticklabels            # few source tokens: every panel labelled
    many = cross_attention_multiples(np.full((2, 20), 0.05), [f"{i} t" for i in range(20)], Look(EN))
    assert many.layout.xaxis.showticklabels and not many.layout.xaxis2.showticklabels


def test_alignment_heatmap_outlines_the_current_step():
    weights = np.eye(3)[::-1]
    fig = alignment_heatmap(weights, ["0 c", "1 b", "2 a"], ["0 a", "1 b", "2 c"], Look(EN), step=1)
    np.testing.assert_allclose(fig.data[0].z, weights)
    rect = fig.layout.shapes[0]
    assert (rect.y0, rect.y1) == (0.5, 1.5)
    assert fig.layout.yaxis.title.text.startswith("output token")
    with pytest.raises(ValueError, match="does not match"):
        alignment_heatmap(weights, ["0 c", "1 b"], ["0 a", "1 b", "2 c"], Look(EN))


def test_token_logprobs_is_log_softmax_at_the_ids():
    logits = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    lp = token_logprobs(logits, [0, 2])
    expected0 = 2.0 - np.log(np.exp([2.0, 1.0, 0.0]).sum())
    np.testing.assert_allclose(lp, [expected0, np.log(1 / 3)])
    # shifting logits does not change probabilities (numerically stable for large values)
    np.testing.assert_allclose(token_logprobs(logits + 1000, [0, 2]), lp)
    with pytest.raises(ValueError, match="positions"):
        token_logprobs(logits, [0])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        token_logprobs(logits, [0, 3])


def test_logprob_comparison_titles_carry_the_sums():
    ref, gen = np.array([-0.1, -2.0]), np.array([-0.05, -0.2, -0.01])
    fig = logprob_comparison([("reference", ref, ["a", "b"], np.exp(ref)),
                              ("model output", gen, ["a", "c", "</s>"], np.exp(gen))], Look(EN))
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["reference: Σ log p = -2.10", "model output: Σ log p = -0.26"]
    np.testing.assert_allclose(fig.data[1].customdata, np.exp(gen))
    with pytest.raises(ValueError, match="2 log-probabilities for 1 tokens"):
        logprob_comparison([("reference", ref, ["a"], np.exp(ref))], Look(EN))
    with pytest.raises(ValueError, match="nothing"):
        logprob_comparison([], Look(EN))


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER], ids=lambda s: s.name)
def test_logprob_comparison_writes_numbers_only_where_they_stay_apart(scale):
    """Issue 46, item 1: thirteen near-zero log-probabilities in half a page ran together ("0.000.000.00")."""
    many = np.full(13, -0.004)
    fig = logprob_comparison([("reference", many, [str(i) for i in range(13)], np.exp(many)),
                              ("model output", many, [str(i) for i in range(13)], np.exp(many))], Look(EN, scale))
    assert all(bar.text is None for bar in fig.data)
    assert all(bar.hovertemplate and "log p" in bar.hovertemplate for bar in fig.data)   # hover keeps them
    few = np.array([-0.5, -2.0, -0.01])
    fig = logprob_comparison([("reference", few, ["a", "b", "c"], np.exp(few))], Look(EN, scale))
    assert list(fig.data[0].text) == ["-0.50", "-2.00", "-0.01"]


TF_WEIGHTS = np.tril(np.full((3, 3), 1.0)) / np.arange(1, 4)[:, None]      # each row: its prefix, evenly


def test_teacher_forced_pass_greys_the_future_and_gives_every_positions_loss():
    """Issue 46, item 1: one pass over the shifted target, the causal mask's cells grey (never 0.00), and the
    loss of every position beside its row."""
    fig = teacher_forced_pass(TF_WEIGHTS, [0.1, 2.5, 0.3], ["0 <s>", "1 a", "2 b"], ["0 a", "1 b", "2 </s>"], Look(EN),
                              title="t")
    heat, grey, _, bars = fig.data
    z = np.array(heat.z, dtype=float)
    assert np.isnan(z[np.triu_indices(3, 1)]).all() and not np.isnan(z[np.tril_indices(3)]).any()
    assert np.array_equal(~np.isnan(np.array(grey.z, dtype=float)), np.triu(np.ones((3, 3), bool), 1))
    assert list(bars.x) == [0.1, 2.5, 0.3] and list(bars.y) == ["0 a", "1 b", "2 &lt;/s&gt;"]
    assert list(bars.text) == ["0.10", "2.50", "0.30"] and bars.yaxis == "y2" and heat.y == bars.y
    assert list(heat.x) == ["0 &lt;s&gt;", "1 a", "2 b"]
    assert fig.layout.annotations[0].text == EN("fig.tf.loss")
    with pytest.raises(ValueError, match="losses"):
        teacher_forced_pass(TF_WEIGHTS, [0.1, 2.5], ["0 <s>", "1 a", "2 b"], ["0 a", "1 b", "2 </s>"], Look(EN))


def test_generation_loop_shows_each_pass_with_only_the_inputs_it_has():
    """Inference: row t is pass t, reading its t+1 inputs; what comes after does not exist yet (grey, named so)."""
    rows = np.full((3, 3), 7.0)                 # anything past t is ignored
    rows[np.tril_indices(3)] = TF_WEIGHTS[np.tril_indices(3)]
    fig = generation_loop(rows, [0.2, 0.1, 0.05], ["0 <s>", "1 x", "2 y"], ["0 x", "1 y", "2 </s>"], Look(EN))
    z = np.array(fig.data[0].z, dtype=float)
    np.testing.assert_allclose(z[np.tril_indices(3)], TF_WEIGHTS[np.tril_indices(3)])
    assert np.isnan(z[np.triu_indices(3, 1)]).all()
    assert fig.data[2].name == EN("fig.tf.not_yet") and fig.layout.annotations[0].text == EN("fig.tf.chosen")


def test_confidence_bars_marks_the_step():
    fig = confidence_bars([0.9, 0.5, 0.99], ["0 a", "1 b", "2 </s>"], Look(EN), step=2)
    assert fig.data[0].marker.color[2] == CHOSEN_COLOR
    assert list(fig.data[0].text) == ["0.90", "0.50", "0.99"]
    with pytest.raises(ValueError, match="3 probabilities for 2 tokens"):
        confidence_bars([0.9, 0.5, 0.99], ["a", "b"], Look(EN))


def test_special_tokens_are_escaped_for_plotly():
    # plotly reads "<s>" as strike-through markup and drops "</s>": labels must arrive escaped
    fig = next_token_bars([0.6, 0.4], ["</s>", "a&b"], [1, 2], Look(EN))
    assert list(fig.data[0].y) == ["#1  &lt;/s&gt;", "#2  a&amp;b"]
    fig = alignment_heatmap(np.ones((1, 2)) / 2, ["0 </s>"], ["0 <s>", "1 x"], Look(EN))
    assert list(fig.data[0].y) == ["0 &lt;/s&gt;"] and list(fig.data[0].x) == ["0 &lt;s&gt;", "1 x"]


@pytest.mark.parametrize("scale", [NORMAL, PRESENTER], ids=lambda s: s.name)
def test_cross_attention_multiples_keep_the_source_labels_off_the_heads_titles(scale):
    """A 40-word sentence's window of 28 source tokens at presenter size: the average's slanted labels ran over
    the heads' panel titles ("22 ▁teacher" over "head 2") under a fixed 130 px gap."""
    labels = [f"{i} ▁teacher" for i in range(28)]
    fig = cross_attention_multiples(np.full((8, 28), 1 / 28), labels, Look(EN, scale), title="t")
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    gap_px = (fig.layout.yaxis.domain[0] - fig.layout.yaxis2.domain[1]) * plot_px
    label_px = 0.71 * (scale.text_px(labels[-1], "tick") + scale.tick)   # a 45° label's depth
    assert gap_px >= label_px + 1.25 * scale.text, (gap_px, label_px)


def test_cross_attention_heads_drop_their_labels_where_they_would_run_together():
    """A 9-word sentence's 12 source tokens under each of four heads' panels at presenter size ran into one another
    ('1 ▁The2 ▁cat'): those panels go without labels (the average's labels above carry the order); a few tokens
    are labelled everywhere."""
    labels = [f"{i} ▁cat" for i in range(12)]
    fig = cross_attention_multiples(np.full((8, 12), 1 / 12), labels, Look(EN, PRESENTER))
    assert fig.layout.xaxis.showticklabels and not fig.layout.xaxis2.showticklabels
    few = cross_attention_multiples(np.full((8, 5), 0.2), labels[:5], Look(EN, PRESENTER))
    assert few.layout.xaxis2.showticklabels


def test_teacher_forcing_pictures_sit_side_by_side_only_where_half_a_page_labels_every_input():
    """Screen check (issue 46): 12 inputs in half a normal page lost every other label; the page then draws the two
    pictures one under the other."""
    from viz.figures.decoding import forcing_labels_fit
    assert forcing_labels_fit(9, NORMAL.page_px / 2, NORMAL) and not forcing_labels_fit(12, NORMAL.page_px / 2, NORMAL)
    assert forcing_labels_fit(12, PRESENTER.page_px / 2, PRESENTER) and forcing_labels_fit(20, NORMAL.page_px, NORMAL)
    fig = teacher_forced_pass(TF_WEIGHTS, [0.1, 2.5, 0.3], ["0 <s>", "1 a", "2 b"], ["0 a", "1 b", "2 </s>"], Look(EN))
    notes = {note.text: note for note in fig.layout.annotations}
    assert notes[EN("fig.tf.inputs")].xanchor == "left" and notes[EN("fig.tf.loss")].xanchor == "right"
