"""The model core: capture, masks, positional encoding, decoding, threads."""
import math
import threading

import numpy as np
import pytest
import torch

from conftest import tiny_config
from model.inference.decode import beam_search, greedy, step_traces
from model.nn.layers import attention, sinusoidal_table
from model.capture.hooks import HookPoint, active_trace, capture
from model.nn.transformer import Transformer


def test_capture_on_and_off_give_the_same_logits(tiny_model, batch):
    src, tgt = batch
    plain = tiny_model(src, tgt)
    with capture() as trace:
        traced = tiny_model(src, tgt)
    torch.testing.assert_close(plain, traced, atol=1e-5, rtol=1e-5)
    assert "generator.hook_logits" in trace
    np.testing.assert_allclose(trace["generator.hook_logits"], traced.detach().numpy(), atol=1e-6)


def test_fast_and_explicit_attention_agree():
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8)
    mask = torch.rand(2, 1, 5, 7) > 0.3
    mask[..., 0] = True  # every query keeps at least one key
    explicit, _, _ = attention(q, k, v, mask)
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(explicit, fused, atol=1e-5, rtol=1e-5)


def test_pattern_rows_sum_to_one(tiny_model, batch):
    with capture("*.hook_pattern") as trace:
        tiny_model(*batch)
    assert len(trace.arrays) == 2 + 2 + 2  # encoder self, decoder self, cross; 2 layers each
    for name, pattern in trace.arrays.items():
        np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-5, err_msg=name)


def test_decoder_self_attention_is_zero_above_the_diagonal(tiny_model, batch):
    with capture("decoder.*.self_attn.hook_pattern") as trace:
        tiny_model(*batch)
    for pattern in trace.arrays.values():              # [B,H,T,T]
        upper = np.triu(np.ones(pattern.shape[-2:], dtype=bool), k=1)
        assert np.all(pattern[..., upper] == 0.0)
        assert np.all(pattern[..., ~upper][..., :1] > 0)


def test_padding_keys_get_zero_weight(tiny_model, batch):
    src, tgt = batch
    with capture(["encoder.*.hook_pattern", "decoder.*.cross_attn.hook_pattern"]) as trace:
        tiny_model(src, tgt)
    for pattern in trace.arrays.values():              # second sentence: last two source keys are pad
        assert np.all(pattern[1, :, :, 3:] == 0.0)
        assert np.all(pattern[1, :, :, :3].sum(-1) > 0.999)


def test_scores_are_scaled_and_unmasked(tiny_model, batch):
    with capture(["decoder.layers.0.self_attn.*"]) as trace:
        tiny_model(*batch)
    q = trace["decoder.layers.0.self_attn.hook_q"]
    k = trace["decoder.layers.0.self_attn.hook_k"]
    scores = trace["decoder.layers.0.self_attn.hook_scores"]
    np.testing.assert_allclose(scores, q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]), atol=1e-5)
    assert np.isfinite(scores).all()                   # the mask is applied after this point


def test_positional_encoding_matches_the_formula():
    d = 16
    table = sinusoidal_table(50, d).numpy()
    for pos in (0, 1, 7, 49):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert table[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)


def test_capture_names_follow_the_module_tree_and_filter(tiny_model, batch):
    modules = {name for name, m in tiny_model.named_modules() if isinstance(m, HookPoint)}
    assert set(tiny_model.hook_names) == modules
    for expected in ("src_embed.hook_tokens", "src_embed.hook_pos", "src_embed.hook_out",
                     "encoder.layers.1.self_attn.hook_pattern", "decoder.layers.0.cross_attn.hook_z",
                     "decoder.layers.1.norm_cross.hook_std", "encoder.layers.0.hook_resid_mid",
                     "decoder.layers.0.hook_resid_cross", "generator.hook_logits"):
        assert expected in modules
    with capture() as everything:
        tiny_model(*batch)
    assert set(everything.arrays) == modules
    with capture(["encoder.layers.0.self_attn.hook_q", "*.cross_attn.hook_pattern"]) as some:
        tiny_model(*batch)
    assert sorted(some.arrays) == ["decoder.layers.0.cross_attn.hook_pattern",
                                   "decoder.layers.1.cross_attn.hook_pattern",
                                   "encoder.layers.0.self_attn.hook_q"]


def test_capture_shapes_drop_a_batch_of_one(tiny_model):
    src, tgt = torch.tensor([[3, 4, 5, 2]]), torch.tensor([[1, 5, 4]])
    with capture() as trace:
        tiny_model(src, tgt)
    assert trace["encoder.layers.0.self_attn.hook_q"].shape == (2, 4, 16)
    assert trace["decoder.layers.0.cross_attn.hook_pattern"].shape == (2, 3, 4)
    assert trace["src_embed.hook_pos"].shape == (4, 32)
    assert trace["encoder.layers.0.norm_attn.hook_mean"].shape == (4,)
    assert trace["encoder.layers.0.norm_attn.hook_gain"].shape == (32,)


def test_layernorm_statistics(tiny_model, batch):
    with capture("encoder.layers.0.norm_attn.*") as trace:
        tiny_model(*batch)
    x = trace["encoder.layers.0.norm_attn.hook_in"]
    np.testing.assert_allclose(trace["encoder.layers.0.norm_attn.hook_mean"], x.mean(-1), atol=1e-5)
    np.testing.assert_allclose(trace["encoder.layers.0.norm_attn.hook_std"], np.sqrt(x.var(-1) + 1e-5), atol=1e-5)
    normalized = trace["encoder.layers.0.norm_attn.hook_normalized"]
    np.testing.assert_allclose(normalized.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(normalized.std(-1), 1, atol=1e-3)


def test_nothing_stays_active_after_capture(tiny_model, batch):
    with capture() as trace:
        tiny_model(*batch)
    assert active_trace() is None
    n = len(trace.arrays)
    tiny_model(*batch)
    assert len(trace.arrays) == n
    with pytest.raises(RuntimeError):
        with capture():
            raise RuntimeError("boom")
    assert active_trace() is None
    assert not any(isinstance(v, torch.Tensor) for m in tiny_model.modules() for v in vars(m).values()
                   if not isinstance(v, (dict, torch.nn.Parameter)))


def test_two_threads_tracing_at_once_never_mix(tiny_model):
    sentences = {0: torch.tensor([[3, 4, 5, 6, 7, 2]]), 1: torch.tensor([[9, 8, 2]])}
    expected = {}
    for key, src in sentences.items():
        with capture("encoder.layers.1.self_attn.hook_pattern") as t:
            tiny_model(src, torch.tensor([[1, 4]]))
        expected[key] = t["encoder.layers.1.self_attn.hook_pattern"]
    barrier, errors = threading.Barrier(2), []

    def worker(key):
        barrier.wait()
        for _ in range(30):
            with capture("encoder.layers.1.self_attn.hook_pattern") as t:
                tiny_model(sentences[key], torch.tensor([[1, 4]]))
            got = t["encoder.layers.1.self_attn.hook_pattern"]
            if got.shape != expected[key].shape or not np.allclose(got, expected[key], atol=1e-6):
                errors.append(key)

    threads = [threading.Thread(target=worker, args=(k,)) for k in sentences]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_edits_replace_values_without_touching_the_model(tiny_model, batch):
    name = "encoder.layers.0.self_attn.hook_z"

    def zero_head_1(z):
        z = z.clone()
        z[:, 1] = 0
        return z

    with capture(name, edits={name: zero_head_1}) as trace:
        edited = tiny_model(*batch)
    assert np.all(trace[name][:, 1] == 0) and np.any(trace[name][:, 0] != 0)
    assert not torch.allclose(edited, tiny_model(*batch))


def test_prenorm_and_learned_pe_run():
    model = Transformer(tiny_config(norm_first=True, pe="learned", share_embeddings=False)).eval()
    with capture() as trace:
        out = model(torch.tensor([[3, 4, 2]]), torch.tensor([[1, 5]]))
    assert out.shape == (1, 2, model.cfg.vocab_size)
    assert "encoder.norm.hook_mean" in trace


def test_config_validation():
    with pytest.raises(ValueError, match="divisible"):
        tiny_config(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="pe=.rotary.: must be one of"):
        tiny_config(pe="rotary")


def test_too_long_input_raises_a_clear_error(tiny_model):
    with pytest.raises(ValueError, match="max_len"):
        tiny_model(torch.full((1, 100), 3), torch.tensor([[1]]))


def test_greedy_step_traces_match_teacher_forcing(tiny_model):
    src = [3, 4, 5, 2]
    hyp = greedy(tiny_model, src, max_len=5, return_traces=True, names="*.cross_attn.hook_pattern")
    assert len(hyp.step_traces) == len(hyp.ids)
    with capture("*.cross_attn.hook_pattern") as full:
        tiny_model(torch.tensor([src]), torch.tensor([[1] + hyp.ids[:-1]]))
    for t, trace in enumerate(hyp.step_traces):
        step = trace["decoder.layers.1.cross_attn.hook_pattern"]          # [H, t+1, S]
        assert step.shape[-2] == t + 1
        np.testing.assert_allclose(step[:, -1], full["decoder.layers.1.cross_attn.hook_pattern"][:, t], atol=1e-5)
    enc, steps = step_traces(tiny_model, src, hyp.ids, names="*.cross_attn.hook_pattern")
    assert len(steps) == len(hyp.ids)


def test_beam_search_of_width_one_is_greedy(tiny_model):
    src = [3, 4, 5, 6, 2]
    g = greedy(tiny_model, src, max_len=6)
    b = beam_search(tiny_model, src, beam_size=1, max_len=6)[0]
    assert b.ids == g.ids
    wide = beam_search(tiny_model, src, beam_size=4, max_len=6, return_traces=True)
    assert wide[0].normalized(0.6) >= wide[-1].normalized(0.6)
    assert len(wide[0].step_traces) == len(wide[0].ids)
