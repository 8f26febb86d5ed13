"""Attribution and activation patching: known answers on toy-reverse, exact identities, no leaks."""
import random
import threading

import numpy as np
import pytest
import torch

from conftest import ROOT, tiny_config
from model.analysis import attribution as at
from model.analysis import patching as pt
from model.capture import schema
from model.capture.hooks import capture
from model.inference.pipeline import generate, trace_sentence, translate
from model.io.checkpoint import Bundle, load_checkpoint
from model.nn.transformer import Transformer
from model.training.tasks import SYMBOLS, toy_tokenizer

N_SENTENCES = 200


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse", device="cpu")


def tiny_bundle(**overrides) -> Bundle:
    torch.manual_seed(0)
    model = Transformer(tiny_config(**overrides)).eval()
    return Bundle(model, toy_tokenizer(), model.cfg, ROOT / "tiny")


def example(bundle, text="a b c d e f"):
    src = bundle.tokenizer.encode(text)
    return src, generate(bundle, src)


# -- known answers: output t of toy-reverse comes from the mirrored source position ------------------------
def method_maps(bundle, trace) -> dict[str, np.ndarray]:
    src, tgt = trace.meta["src_ids"], trace.meta["tgt_ids"]
    norms = at.value_norms(bundle, trace)
    return {"gradient x input": at.gradient_x_input(bundle, src, tgt).map,
            "integrated gradients": at.integrated_gradients(bundle, src, tgt, steps=32).map,
            "rollout (last cross layer)": at.cross_rollout(trace, "last"),
            "rollout (all layers)": at.cross_rollout(trace, "all"),
            "value norm (last layer)": at.value_norm_map(norms, "last"),
            "raw cross-attention (last layer)": at.raw_cross_attention(trace)}


@pytest.fixture(scope="module")
def accuracies(toy):
    """Top-1 accuracy of each method over 200 random inputs (symbols, lengths 3-8), computed on the source
    words only and on every source column (</s> included)."""
    rng = random.Random(0)
    hits_words, hits_all = {}, {}
    for _ in range(N_SENTENCES):
        seq = [rng.choice(SYMBOLS) for _ in range(rng.randint(3, 8))]
        trace = trace_sentence(toy, " ".join(seq))
        n = len(seq)
        expected = np.arange(n)[::-1]                        # output t <- source n-1-t (</s> row left out)
        for name, m in method_maps(toy, trace).items():
            hits_words.setdefault(name, []).extend(np.argmax(m[:n, :n], -1) == expected)
            hits_all.setdefault(name, []).extend(np.argmax(m[:n], -1) == expected)
    mean = lambda hits: {k: float(np.mean(v)) for k, v in hits.items()}  # noqa: E731
    return mean(hits_words), mean(hits_all)


# Measured 2026-11-23 (seed 0): on the words / with </s>. Gradient methods put much of each row on </s>:
# to mirror position t the model must know where the sentence ends, and the </s> embedding tells it.
MEASURED = {
    "gradient x input": (0.425, 0.19),
    "integrated gradients": (0.66, 0.281),
    "rollout (last cross layer)": (0.934, 0.834),
    "rollout (all layers)": (0.887, 0.482),
    "value norm (last layer)": (0.977, 0.977),
    "raw cross-attention (last layer)": (0.963, 0.963),
}


@pytest.mark.slow          # the accuracies: every method on 200 sentences, integrated gradients at 32 steps
@pytest.mark.parametrize("method", list(MEASURED))
def test_top1_accuracy_on_toy_reverse_is_what_we_measured(accuracies, method):
    words, everything = accuracies
    expected_words, expected_all = MEASURED[method]
    assert words[method] == pytest.approx(expected_words, abs=0.08)
    assert everything[method] == pytest.approx(expected_all, abs=0.08)


@pytest.mark.slow
def test_attention_based_maps_find_the_mirror_and_beat_plain_gradients(accuracies):
    words, _ = accuracies
    assert words["value norm (last layer)"] > 0.9
    assert words["rollout (last cross layer)"] > 0.85
    assert words["integrated gradients"] > words["gradient x input"] + 0.1   # IG escapes some saturation
    assert words["gradient x input"] > 1 / 5                                 # still better than chance


# -- integrated gradients ------------------------------------------------------------------------------------
def scores_with_embeddings(model, src_ids, tgt_in_ids, embeddings: torch.Tensor, positions: torch.Tensor,
                           tokens: torch.Tensor, score: str = "logit") -> torch.Tensor:
    """[B] logit (or log p) of tokens[b] at positions[b] when the source token embeddings are `embeddings`
    [B,S,D]: the score written directly, to check the attribution module's against."""
    rows = embeddings.size(0)
    with capture(names=[], edits={at.TOKENS_HOOK: lambda _: embeddings}):
        states = at.decoder_states(model, at.as_batch(src_ids, model, rows), at.as_batch(tgt_in_ids, model, rows))
    logits = model.generator.proj(states[torch.arange(rows), positions])                          # [B,V]
    logits = logits.log_softmax(-1) if score == "logprob" else logits
    return logits.gather(1, tokens[:, None]).squeeze(1)


@pytest.mark.parametrize("score", at.SCORES)
def test_integrated_gradients_completeness(toy, score):
    src, tgt = example(toy)
    ig = at.integrated_gradients(toy, src, tgt, steps=64, score=score)
    gap = ig.score - ig.baseline_score
    np.testing.assert_allclose(ig.signed.sum(-1), gap, atol=0.05 * np.abs(gap).max() + 0.05)
    rows = len(tgt)                                                          # every y_t with no token embedding at all
    zero = torch.zeros_like(at.token_embeddings(toy.model, src)).expand(rows, -1, -1)
    baseline = scores_with_embeddings(toy.model, src, at.decoder_input(toy.config, tgt), zero, torch.arange(rows),
                                      torch.tensor(tgt), score)
    np.testing.assert_allclose(ig.baseline_score, baseline.detach().numpy(), atol=1e-5)


def test_gradient_x_input_matches_a_direct_gradient(toy):
    src, tgt = example(toy)
    t = 2
    x = at.token_embeddings(toy.model, src).requires_grad_()
    scores = scores_with_embeddings(toy.model, src, at.decoder_input(toy.config, tgt), x,
                                    torch.tensor([t]), torch.tensor([tgt[t]]))
    (grad,) = torch.autograd.grad(scores.sum(), x)
    expected = (grad * x).sum(-1)[0].detach().numpy()
    np.testing.assert_allclose(at.gradient_x_input(toy, src, tgt).signed[t], expected, rtol=1e-4, atol=1e-5)


def test_attribution_maps_are_row_normalised(toy):
    trace = trace_sentence(toy, "c a f e")
    for name, m in method_maps(toy, trace).items():
        assert m.shape == (len(trace.meta["tgt_ids"]), len(trace.meta["src_ids"])), name
        np.testing.assert_allclose(m.sum(-1), 1.0, atol=1e-6, err_msg=name)


def test_ig_batches_are_chunked_the_same(toy, monkeypatch):
    src, tgt = example(toy)
    whole = at.integrated_gradients(toy, src, tgt, steps=8).signed
    monkeypatch.setattr(at, "MAX_TOKEN_ROWS", 8)            # one path point per forward
    np.testing.assert_allclose(at.integrated_gradients(toy, src, tgt, steps=8).signed, whole, atol=1e-4)


# -- logit lens ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
def test_logit_lens_last_layer_is_the_model_output(norm_first):
    bundle = tiny_bundle(norm_first=norm_first)
    src, tgt = [3, 4, 5, 6, 2], [6, 5, 4, 3, 2]
    model = bundle.model
    with torch.no_grad():
        real = model(torch.tensor([src]), torch.tensor([at.decoder_input(bundle.config, tgt)]))[0].softmax(-1)
    resid = at.decoder_layer_outputs(model, src, tgt)                                  # [L,T,D]
    np.testing.assert_allclose(at.layer_distributions(model, resid)[-1].numpy(), real.numpy(), atol=1e-5)
    lens = at.logit_lens(bundle, src, tgt, k=3)
    np.testing.assert_array_equal(lens.final_ids, real.argmax(-1).numpy())
    np.testing.assert_allclose(lens.final_prob[-1], real.max(-1).values.numpy(), atol=1e-5)
    assert (lens.final_rank[-1] == 0).all()
    assert lens.top_ids.shape == (2, len(tgt), 3)
    assert (np.diff(lens.top_probs, axis=-1) <= 1e-7).all()


def test_logit_lens_from_a_trace_equals_from_ids(toy):
    trace = trace_sentence(toy, "a b c")
    from_trace = at.logit_lens(toy, trace)
    from_ids = at.logit_lens(toy, trace.meta["src_ids"], trace.meta["tgt_ids"])
    np.testing.assert_allclose(from_trace.final_prob, from_ids.final_prob, atol=1e-5)
    np.testing.assert_array_equal(from_trace.final_ids, trace.meta["tgt_ids"])   # greedy output = the lens' top
    with pytest.raises(ValueError, match="resid_post"):
        at.logit_lens(toy, trace_sentence(toy, "a b c", names="*.hook_pattern"))


# -- value norms, rollout --------------------------------------------------------------------------------------
def test_value_norms_are_attention_times_the_norm_of_what_each_head_adds(toy):
    trace = trace_sentence(toy, "a b c d")
    norms = at.value_norms(toy, trace)                                                 # [L,H,T,S]
    layer, head = 1, 2
    w_o = toy.model.decoder.layers[layer].cross_attn.w_o.weight.detach().numpy()       # [D,D]
    dh = toy.config.d_head
    v = trace[schema.attn_name("cross", layer, "v")][head]                             # [S,Dh]
    f = v @ w_o[:, head * dh:(head + 1) * dh].T                                        # [S,D]
    pattern = trace[schema.pattern_name("cross", layer)][head]                         # [T,S]
    np.testing.assert_allclose(norms[layer, head], pattern * np.linalg.norm(f, axis=-1), rtol=1e-4, atol=1e-6)


def test_rollout_rejects_unknown_layers(toy):
    with pytest.raises(ValueError, match="layers"):
        at.cross_rollout(trace_sentence(toy, "a b"), "some")


# -- agreement ---------------------------------------------------------------------------------------------------
def test_rank_and_spearman_handle_ties():
    np.testing.assert_allclose(at.rank([10, 20, 20, 5]), [2, 3.5, 3.5, 1])
    assert at.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert at.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(at.spearman([1, 1, 1], [1, 2, 3]))
    # Spearman of [1,2,3,4] and [1,3,2,4]: 1 - 6*2/(4*15) = 0.8
    assert at.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)


def test_agreement_matrix_is_symmetric_with_ones_on_the_diagonal():
    rng = np.random.default_rng(0)
    a = rng.random((4, 6))
    names, m = at.agreement({"a": a, "same": a * 2, "reversed": -a})
    assert names == ["a", "same", "reversed"]
    np.testing.assert_allclose(m, m.T)
    np.testing.assert_allclose(np.diag(m), 1.0)
    assert m[0, 1] == pytest.approx(1.0) and m[0, 2] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="shape"):
        at.agreement({"a": a, "b": a[:2]})


# -- contrastive ---------------------------------------------------------------------------------------------------
def test_contrastive_heads_and_sources_on_toy_reverse(toy):
    src, out = example(toy)                  # a b c d e f -> f e d c b a
    step = 1                                 # predicting 'e' (source position 4) after 'f'
    chosen, alternative = out[step], toy.tokenizer.encode("d")[0]
    result = at.contrastive(toy, src, out[:step], chosen, alternative)
    assert result.base_difference > 0
    assert len(result.heads) == len(result.head_effects) == 4 * (2 + 2 + 2)
    assert result.source_scores.shape == (len(src),)
    # Integrated gradients of the difference find the two words; plain gradient x input does not here
    # (it credits 'd' and blames 'f': the model is saturated, the local slope says little).
    words = at.contrastive(toy, src, out[:step], chosen, alternative, steps=32).source_scores[:-1]   # no </s>
    assert np.argmax(words) == 4                            # 'e' pushes toward 'e' ...
    assert np.argmin(words) == 3                            # ... and 'd' toward 'd'
    # zeroing a head one at a time equals the ablation run on its own
    from model.analysis.ablation import ablation_edits
    from model.capture.hooks import capture
    kind, layer, head = result.heads[int(np.argmax(result.head_effects))]
    with torch.no_grad(), capture(names=[], edits=ablation_edits([(kind, layer, head)])):
        logits = toy.model(torch.tensor([src]), torch.tensor([[toy.config.bos_id] + out[:step]]))[0, -1]
    alone = float(logits[chosen] - logits[alternative])
    assert result.base_difference - alone == pytest.approx(result.head_effects.max(), abs=1e-4)


# -- patching ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def swapped(toy):
    clean, corrupted = toy.tokenizer.encode("a b c d e f"), toy.tokenizer.encode("a b c d e g")
    out = generate(toy, clean)
    return clean, corrupted, out


def test_patching_nothing_restores_0_and_everything_restores_1(toy, swapped):
    clean, corrupted, out = swapped
    run = pt.PatchRun(toy, clean, corrupted, [], out[0])
    n_layers = toy.config.n_encoder_layers
    last_encoder = pt.resid_sites(toy.config, "encoder", len(clean))[(n_layers - 1) * len(clean):]
    last_decoder = [(schema.resid_name("decoder", toy.config.n_decoder_layers - 1, "resid_post"), 0)]
    np.testing.assert_allclose(run.restored([[], last_encoder, last_decoder]), [0.0, 1.0, 1.0], atol=1e-4)


def test_patching_a_run_with_itself_changes_nothing(toy, swapped):
    clean, _, out = swapped
    run = pt.PatchRun(toy, clean, clean, [], out[0])
    assert run.clean == pytest.approx(run.corrupted)
    metrics = run.metrics([[site] for site in pt.resid_sites(toy.config, "encoder", len(clean))])
    np.testing.assert_allclose(metrics, run.clean, atol=1e-4)
    assert np.isnan(run.restored([[]])).all()               # nothing to restore: no share to speak of


def test_patching_finds_the_swapped_word(toy, swapped):
    clean, corrupted, out = swapped       # 'f' -> 'g' at source position 5; output 0 reads position 5
    result = pt.activation_patching(toy, clean, corrupted, [], out[0])
    assert result.clean > 0 > result.corrupted
    assert result.alternative == toy.tokenizer.encode("g")[0]
    assert result.encoder.shape == (2, len(clean)) and result.decoder.shape == (2, 1)
    np.testing.assert_allclose(result.encoder[:, 5], 1.0, atol=0.05)   # the swapped position carries it all
    np.testing.assert_allclose(np.delete(result.encoder, 5, axis=1), 0.0, atol=0.05)
    assert result.decoder[-1, 0] == pytest.approx(1.0, abs=1e-4)
    assert {k: v.shape for k, v in result.heads.items()} == {"encoder": (2, 4), "decoder": (2, 4), "cross": (2, 4)}
    assert np.nanmax(result.heads["cross"]) > 0.2           # a cross-attention head moves the word


def test_patching_refuses_unequal_lengths(toy):
    with pytest.raises(ValueError, match="same number of tokens"):
        pt.activation_patching(toy, [3, 4, 2], [3, 4, 5, 2], [], 4)


def test_patching_chunks_agree(toy, swapped, monkeypatch):
    clean, corrupted, out = swapped
    whole = pt.activation_patching(toy, clean, corrupted, [], out[0])
    monkeypatch.setattr(pt, "MAX_ROWS", 5)
    chunked = pt.activation_patching(toy, clean, corrupted, [], out[0])
    np.testing.assert_allclose(chunked.encoder, whole.encoder, atol=1e-5)
    np.testing.assert_allclose(chunked.heads["cross"], whole.heads["cross"], atol=1e-5)


# -- the shared model stays as it was, in every thread ------------------------------------------------------------
def test_nothing_leaks_into_the_shared_model(toy, swapped):
    clean, corrupted, out = swapped
    before = translate(toy, "a b c d e f")
    weights = {n: p.detach().clone() for n, p in toy.model.named_parameters()}
    trace = trace_sentence(toy, "a b c d e f")
    at.logit_lens(toy, trace)
    at.integrated_gradients(toy, clean, out, steps=4)
    at.gradient_x_input(toy, clean, out)
    at.contrastive(toy, clean, out[:1], out[1], out[2])
    pt.activation_patching(toy, clean, corrupted, [], out[0])
    assert translate(toy, "a b c d e f") == before
    for name, p in toy.model.named_parameters():
        assert p.grad is None, name
        assert torch.equal(p, weights[name]), name
    assert not toy.model.training


def test_threads_running_at_once_get_their_own_answers(toy, swapped):
    clean, corrupted, out = swapped
    other = toy.tokenizer.encode("j i h g f e")
    other_out = generate(toy, other)
    expected = {0: at.integrated_gradients(toy, clean, out, steps=8).signed,
                1: at.integrated_gradients(toy, other, other_out, steps=8).signed,
                2: pt.activation_patching(toy, clean, corrupted, [], out[0]).encoder}
    results, errors = {}, []

    def work(i):
        try:
            for _ in range(3):
                if i == 2:
                    results[i] = pt.activation_patching(toy, clean, corrupted, [], out[0]).encoder
                else:
                    src, tgt = (clean, out) if i == 0 else (other, other_out)
                    results[i] = at.integrated_gradients(toy, src, tgt, steps=8).signed
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in expected:
        np.testing.assert_allclose(results[i], expected[i], atol=1e-4)


# -- tiny random models ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("overrides", [{}, {"norm_first": True}, {"n_heads": 4, "n_encoder_layers": 1},
                                       {"share_embeddings": False, "pe": "learned"}])
def test_everything_runs_on_tiny_random_models(overrides):
    bundle = tiny_bundle(**overrides)
    src, tgt = [3, 4, 5, 6, 2], [6, 5, 4, 2]
    trace = trace_sentence(bundle, "a b c d", target="d c b a")
    assert at.logit_lens(bundle, trace).final_rank.shape == (bundle.config.n_decoder_layers, len(trace.meta["tgt_ids"]))
    ig = at.integrated_gradients(bundle, src, tgt, steps=32)
    np.testing.assert_allclose(ig.signed.sum(-1), ig.score - ig.baseline_score, atol=0.05)
    assert at.value_norms(bundle, trace).shape == (bundle.config.n_decoder_layers, bundle.config.n_heads, 5, 5)
    assert at.cross_rollout(trace, "all").shape == (5, 5)
    result = at.contrastive(bundle, src, [6], 5, 4)
    assert np.isfinite(result.head_effects).all() and np.isfinite(result.source_scores).all()
    patched = pt.activation_patching(bundle, src, [3, 4, 7, 6, 2], [6, 5], 4)
    assert patched.decoder.shape == (bundle.config.n_decoder_layers, 3)
    assert patched.heads["encoder"].shape == (bundle.config.n_encoder_layers, bundle.config.n_heads)


@pytest.mark.parametrize("overrides", [{}, {"norm_first": True}])
def test_output_rows_in_groups_give_the_same_gradients_as_all_at_once(monkeypatch, overrides):
    """IG and gradient × input decode the output rows in groups through the cache (faster); a long target
    spans several groups, and each group's rows must get exactly what one pass over all rows gives."""
    bundle = tiny_bundle(**overrides)
    src, tgt = [3, 4, 5, 6, 7, 2], [8, 9, 10, 11, 12, 3, 4, 5, 6, 2]
    monkeypatch.setattr(at, "ROW_GROUP", 100)
    whole = (at.integrated_gradients(bundle, src, tgt, steps=4).signed, at.gradient_x_input(bundle, src, tgt).signed)
    monkeypatch.setattr(at, "ROW_GROUP", 2)
    grouped = (at.integrated_gradients(bundle, src, tgt, steps=4).signed, at.gradient_x_input(bundle, src, tgt).signed)
    for a, b in zip(whole, grouped):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
