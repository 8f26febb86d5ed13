"""Head statistics, ablation, rollout and flow: hand-made matrices with known answers, toy models."""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import ROOT, tiny_config
from model.analysis import ablation, flow, heads, word_order
from model.io.checkpoint import Bundle, load_checkpoint
from model.inference.pipeline import trace_sentence, translate
from model.training.tasks import toy_tokenizer
from model.capture.hooks import active_trace, capture
from model.nn.transformer import Transformer


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse", device="cpu")


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    cfg = tiny_config()
    return Bundle(Transformer(cfg).eval(), toy_tokenizer(), cfg, Path("tiny"))


def one(records, head=0):
    return records[head]


# -- statistics ---------------------------------------------------------------------------------------
def test_uniform_attention_has_maximal_entropy():
    k = 5
    rec = one(heads.head_statistics(np.full((1, k, k), 1 / k), list("abcde"), "encoder"))
    assert rec["entropy"] == pytest.approx(math.log2(k))                 # bits
    assert rec["entropy_norm"] == pytest.approx(1.0)
    assert rec["max_weight"] == pytest.approx(1 / k)
    assert rec["self"] == pytest.approx(1 / k)


def test_identity_attention_is_a_self_head():
    rec = one(heads.head_statistics(np.eye(4)[None], list("abcd"), "encoder"))
    assert rec["distance"] == 0.0 and rec["entropy"] == 0.0
    assert rec["self"] == 1.0 and rec["prev"] == 0.0 and rec["next"] == 0.0 and rec["max_weight"] == 1.0


def test_shifted_identity_is_a_previous_token_head():
    a = np.zeros((1, 5, 5))
    a[0, 0, 0] = 1.0                      # the first token has no previous one
    a[0, np.arange(1, 5), np.arange(0, 4)] = 1.0
    rec = one(heads.head_statistics(a, list("abcde"), "decoder"))
    assert rec["prev"] == pytest.approx(1.0)
    assert rec["distance"] == pytest.approx(4 / 5)
    assert math.isnan(rec["next"])        # the causal mask forbids looking ahead


def test_next_token_head_in_the_encoder():
    a = np.zeros((1, 4, 4))
    a[0, np.arange(3), np.arange(1, 4)] = 1.0
    a[0, 3, 3] = 1.0
    rec = one(heads.head_statistics(a, list("abcd"), "encoder"))
    assert rec["next"] == 1.0 and rec["prev"] == 0.0 and rec["self"] == pytest.approx(1 / 4)


def test_causal_rows_are_normalised_by_the_keys_they_may_see():
    t = 4
    a = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]     # uniform over the allowed keys
    rec = one(heads.head_statistics(a[None], ["<s>", "x", "y", "z"], "decoder"))
    assert rec["entropy_norm"] == pytest.approx(1.0)
    assert rec["entropy"] == pytest.approx(np.mean([math.log2(n) for n in range(1, t + 1)]))
    assert rec["bos"] == pytest.approx(np.mean([1 / n for n in range(1, t + 1)]))


def test_cross_attention_distance_is_measured_from_the_scaled_diagonal():
    a = np.zeros((2, 3, 5))
    a[0, [0, 1, 2], [0, 2, 4]] = 1.0      # a straight alignment of 3 target onto 5 source tokens
    a[1, [0, 1, 2], [4, 2, 0]] = 1.0      # the reverse alignment
    labels = ["▁a", "▁b", "▁c", "▁d", "</s>"]
    diag, anti = heads.head_statistics(a, labels, "cross", layer=2)
    assert diag["distance"] == 0.0 and anti["distance"] == pytest.approx(8 / 3)
    assert math.isnan(diag["self"]) and math.isnan(diag["prev"]) and math.isnan(diag["next"])
    assert diag["eos"] == pytest.approx(1 / 3) and diag["layer"] == 2 and anti["head"] == 1


def test_special_token_and_punctuation_shares():
    labels = ["▁Hi", "▁,", "▁there", ".", "</s>"]
    rec = one(heads.head_statistics(np.full((1, 5, 5), 0.2), labels, "encoder"))
    assert rec["eos"] == pytest.approx(0.2) and rec["punct"] == pytest.approx(0.4) and rec["bos"] == 0.0


@pytest.mark.parametrize("label,expected", [(".", True), ("▁,", True), ("¿", True), ("?!", True), ("▁a", False),
                                            ("<s>", False), ("▁", False), ("<0xE2>", False), ("3", False)])
def test_is_punctuation(label, expected):
    assert heads.is_punctuation(label) is expected


@pytest.mark.parametrize("patterns,labels,kind", [
    (np.full((1, 3, 3), 1 / 3), ["a", "b"], "encoder"),          # labels do not match keys
    (np.full((1, 2, 3), 1 / 3), ["a", "b", "c"], "encoder"),     # self-attention must be square
    (np.full((3, 3), 1 / 3), ["a", "b", "c"], "encoder"),        # missing head axis
    (np.full((1, 3, 3), 1 / 3), ["a", "b", "c"], "sideways"),    # unknown kind
    (-np.ones((1, 2, 2)), ["a", "b"], "encoder"),                # negative weights
])
def test_bad_patterns_raise_clear_errors(patterns, labels, kind):
    with pytest.raises(ValueError):
        heads.head_statistics(patterns, labels, kind)


def test_trace_head_stats_covers_every_head(toy):
    trace = trace_sentence(toy, "a b c d e f", names="*.hook_pattern")
    frame = heads.trace_head_stats(trace)
    cfg = toy.config
    assert len(frame) == cfg.n_heads * (cfg.n_encoder_layers + 2 * cfg.n_decoder_layers)
    assert list(frame.columns) == heads.ID_COLUMNS + list(heads.STATS)
    row = frame[(frame.kind == "cross") & (frame.layer == 1) & (frame["head"] == 2)].iloc[0]
    direct = heads.head_statistics(trace["decoder.layers.1.cross_attn.hook_pattern"], trace.meta["src_tokens"],
                                "cross", 1)[2]
    assert row["entropy"] == pytest.approx(direct["entropy"])
    m = heads.stat_matrix(frame, "encoder", "entropy", cfg.n_encoder_layers, cfg.n_heads)
    assert m.shape == (cfg.n_encoder_layers, cfg.n_heads) and np.isfinite(m).all()
    assert m[1, 3] == pytest.approx(frame[(frame.kind == "encoder") & (frame.layer == 1)
                                          & (frame["head"] == 3)]["entropy"].iloc[0])


def test_aggregate_is_the_mean_per_head_skipping_nans():
    a = heads.stats_frame(heads.head_statistics(np.eye(3)[None], list("abc"), "encoder"))
    b = heads.stats_frame(heads.head_statistics(np.full((1, 3, 3), 1 / 3), list("abc"), "encoder"))
    c = heads.stats_frame(heads.head_statistics(np.full((1, 2, 3), 1 / 3), list("abc"), "cross"))
    agg = heads.aggregate_stats([a, b, c])
    enc = agg[agg.kind == "encoder"].iloc[0]
    assert enc["n_sentences"] == 2 and enc["self"] == pytest.approx((1 + 1 / 3) / 2)
    assert enc["entropy"] == pytest.approx(math.log2(3) / 2)
    assert list(agg.kind) == ["encoder", "cross"]
    with pytest.raises(ValueError):
        heads.aggregate_stats([])


def test_corpus_stats_report_progress_and_skip_bad_lines(toy):
    calls = []
    agg, problems = ablation.corpus_head_stats(toy, ["a b c", "   ", "d e f g"], progress=lambda i, n: calls.append((i, n)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert len(problems) == 1 and problems[0].startswith("line 2")
    assert (agg["n_sentences"] == 2).all() and len(agg) == 24


# -- ablation -----------------------------------------------------------------------------------------
def _forward(bundle, names, edits=None):
    src = torch.tensor([bundle.tokenizer.encode("a b c d e")])
    tgt = torch.tensor([[1] + bundle.tokenizer.encode("e d c b a")[:-1]])
    with capture(names, edits) as trace:
        bundle.model(src, tgt)
    return trace


def test_zero_ablation_changes_only_that_head_and_what_follows(tiny):
    names = ["encoder.layers.0.self_attn.hook_pattern", "encoder.layers.0.self_attn.hook_z",
             "encoder.layers.0.self_attn.hook_out", "encoder.layers.1.self_attn.hook_pattern", "generator.hook_logits"]
    params = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    base = _forward(tiny, names)
    cut = _forward(tiny, names, ablation.ablation_edits([("encoder", 0, 1)], "zero"))
    z, z0 = cut["encoder.layers.0.self_attn.hook_z"], base["encoder.layers.0.self_attn.hook_z"]   # [H,S,Dh]
    assert np.all(z[1] == 0) and np.any(z0[1] != 0)
    np.testing.assert_array_equal(z[0], z0[0])                       # the other head is untouched
    np.testing.assert_array_equal(cut["encoder.layers.0.self_attn.hook_pattern"],
                                  base["encoder.layers.0.self_attn.hook_pattern"])   # upstream: the same
    for downstream in ("encoder.layers.0.self_attn.hook_out", "encoder.layers.1.self_attn.hook_pattern",
                       "generator.hook_logits"):
        assert not np.allclose(cut[downstream], base[downstream]), downstream
    for k, v in tiny.model.state_dict().items():                     # the shared model is unchanged
        assert torch.equal(v, params[k]), k
    assert active_trace() is None                                    # no edit outlives its capture
    np.testing.assert_array_equal(_forward(tiny, names)["generator.hook_logits"], base["generator.hook_logits"])


def test_mean_ablation_replaces_a_head_by_its_average_over_positions(tiny):
    base = _forward(tiny, ["*.hook_z"])
    cut = _forward(tiny, ["*.hook_z"], ablation.ablation_edits([("encoder", 0, 0), ("cross", 1, 1)], "mean"))
    enc, enc0 = cut["encoder.layers.0.self_attn.hook_z"], base["encoder.layers.0.self_attn.hook_z"]
    np.testing.assert_allclose(enc[0], np.broadcast_to(enc0[0].mean(0), enc0[0].shape), atol=1e-6)
    np.testing.assert_array_equal(enc[1], enc0[1])
    cross = cut["decoder.layers.1.cross_attn.hook_z"]                # decoder side: mean over positions <= t
    # the cross head's input changed upstream (encoder ablation), so compare with its own pre-edit value
    pre = _forward(tiny, ["decoder.layers.1.cross_attn.hook_z"],
                   ablation.ablation_edits([("encoder", 0, 0)], "mean"))["decoder.layers.1.cross_attn.hook_z"]
    expected = np.cumsum(pre[1], 0) / np.arange(1, pre.shape[1] + 1)[:, None]
    np.testing.assert_allclose(cross[1], expected, atol=1e-6)


def test_capture_with_no_names_stores_nothing(tiny):
    trace = _forward(tiny, [], ablation.ablation_edits([("decoder", 1, 0)]))
    assert trace.arrays == {}


def test_ablated_translation_and_reference_logprob(toy):
    text = "a b c d e f"
    assert ablation.ablated_translation(toy, text, []) == translate(toy, text) == "f e d c b a"
    assert ablation.ablated_translation(toy, text, [("decoder", 0, 3)], "zero") != "f e d c b a"
    trace = trace_sentence(toy, text, target="f e d c b a", names=[])
    base = ablation.reference_logprob(toy, text, "f e d c b a")
    assert base == pytest.approx(trace.meta["tgt_logprob"], abs=1e-5)
    assert ablation.reference_logprob(toy, text, None) == pytest.approx(base, abs=1e-5)     # its own output
    assert ablation.reference_logprob(toy, text, trace.meta["tgt_ids"]) == pytest.approx(base, abs=1e-5)
    assert ablation.reference_logprob(toy, text, "f e d c b a", [("decoder", 0, 3)]) < base - 1.0


def test_bad_heads_and_modes_are_rejected(tiny):
    with pytest.raises(ValueError):
        ablation.ablated_translation(tiny, "a b", [("encoder", 5, 0)])
    with pytest.raises(ValueError):
        ablation.reference_logprob(tiny, "a b", None, [("sideways", 0, 0)])
    with pytest.raises(ValueError):
        ablation.ablation_edits([("encoder", 0, 0)], "half")


def test_rank_heads_has_one_row_per_head_sorted_by_damage(tiny):
    calls = []
    ranked = ablation.rank_heads(tiny, "a b c", "c b a", "zero", progress=lambda i, n: calls.append(i))
    cfg = tiny.config
    n = cfg.n_heads * (cfg.n_encoder_layers + 2 * cfg.n_decoder_layers)
    assert len(ranked) == n and calls[-1] == n
    assert len(set(map(tuple, ranked[heads.ID_COLUMNS].values.tolist()))) == n
    assert ranked["delta"].is_monotonic_increasing
    base = ablation.reference_logprob(tiny, "a b c", "c b a")
    np.testing.assert_allclose(ranked["logprob"] - base, ranked["delta"], atol=1e-5)
    top = ranked.iloc[0]
    single = ablation.reference_logprob(tiny, "a b c", "c b a", [(top["kind"], int(top["layer"]), int(top["head"]))])
    assert single == pytest.approx(top["logprob"], abs=1e-5)


# -- rollout and flow ---------------------------------------------------------------------------------
def test_rollout_of_identities_is_the_identity():
    np.testing.assert_allclose(flow.attention_rollout(np.broadcast_to(np.eye(4), (3, 2, 4, 4))), np.eye(4))


def test_rollout_multiplies_residual_mixed_layers():
    rng = np.random.default_rng(0)
    p = rng.random((2, 3, 4, 4))
    p /= p.sum(-1, keepdims=True)
    mixed = [0.5 * p[i].mean(0) + 0.5 * np.eye(4) for i in range(2)]
    np.testing.assert_allclose(flow.attention_rollout(p), mixed[1] @ mixed[0])
    np.testing.assert_allclose(flow.attention_rollout(p).sum(-1), 1.0)
    with pytest.raises(ValueError):
        flow.attention_rollout(np.ones((2, 3, 4, 5)))


def test_max_flow_on_a_textbook_graph():
    net = flow.FlowNetwork(6)                # CLRS figure 26.1: the maximum flow is 23
    for u, v, c in [(0, 1, 16), (0, 2, 13), (1, 3, 12), (2, 1, 4), (2, 4, 14), (3, 2, 9), (3, 5, 20),
                    (4, 3, 7), (4, 5, 4)]:
        net.add_edge(u, v, c)
    assert net.max_flow(0, 5) == pytest.approx(23)
    assert net.max_flow(0, 5) == pytest.approx(23)        # residuals do not leak between calls
    assert net.max_flow(5, 0) == 0.0


def test_flow_through_one_and_two_layers_has_a_closed_form():
    rng = np.random.default_rng(1)
    p = rng.random((2, 2, 5, 5))
    p /= p.sum(-1, keepdims=True)
    a = flow.residual_attention(p)
    np.testing.assert_allclose(flow.attention_flow(p[:1], normalize=False), a[0])   # one edge per pair
    # two layers: each middle token k is its own path j -> k -> i, so flow = sum_k min(A1[k,j], A2[i,k])
    expected = np.minimum(a[1][:, :, None], a[0][None, :, :]).sum(1)
    np.testing.assert_allclose(flow.attention_flow(p, normalize=False), expected, atol=1e-12)
    flows = flow.attention_flow(p)
    np.testing.assert_allclose(flows.sum(-1), 1.0)


def test_flow_of_identities_is_the_identity_and_is_limited_in_length():
    np.testing.assert_allclose(flow.attention_flow(np.broadcast_to(np.eye(3), (3, 1, 3, 3))), np.eye(3))
    with pytest.raises(ValueError, match="32 tokens"):
        flow.attention_flow(np.broadcast_to(np.eye(33), (1, 1, 33, 33)))


# -- comparing sentences ------------------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    ("The man went from Beijing to Shanghai.", "The man went from Shanghai to Beijing."),
    ("a b c d", "d b c a"),
    ("word", "word"),
    ("", ""),
    ("the the", "the the"),
    ("attention moves words and attention reads them", "reads moves words and attention attention them"),
])
def test_swap_two_words(text, expected):
    assert word_order.swap_two_words(text) == expected


def test_token_permutation_undoes_a_rearrangement():
    ids_a, ids_b = [5, 6, 7, 6, 2], [7, 6, 5, 6, 2]
    perm = word_order.token_permutation(ids_a, ids_b)
    assert [ids_a[k] for k in perm] == ids_b
    assert word_order.token_permutation([1, 2], [1, 3]) is None
    rng = np.random.default_rng(2)
    m = rng.random((5, 5))
    permuted = m[np.ix_(perm, perm)]              # what an order-blind model would show for B
    np.testing.assert_array_equal(word_order.reorder_to(permuted, perm), m)
    with pytest.raises(ValueError):
        word_order.reorder_to(np.ones((4, 4)), perm)


def test_stat_matrix_rejects_unknown_statistics():
    frame = heads.stats_frame(heads.head_statistics(np.eye(2)[None], ["a", "b"], "encoder"))
    with pytest.raises(ValueError):
        heads.stat_matrix(frame, "encoder", "beauty", 1, 1)
    assert isinstance(frame, pd.DataFrame)
