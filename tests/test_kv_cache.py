"""Cached decoding (key/value cache) gives what full-prefix decoding gives, and traces never see it."""
import numpy as np
import pytest
import torch

from conftest import ROOT, tiny_config
from model.io.checkpoint import load_checkpoint
from model.inference.decode import StaticGreedySteps, _new_cache, beam_search, greedy, greedy_batch, greedy_rows
from model.inference.pipeline import encode_text
from model.inference.decode import pad_batch
from model.capture.hooks import capture
from model.nn.transformer import StaticDecoderCache, Transformer, causal_mask

TOY_TEXTS = ["a b c d e", "b d h", "j i h g f e d c b a", "c", "a a b b c c d"]


def tiny(**overrides) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config(**overrides)).eval()


# Post-norm (paper), pre-norm, and learned positions: the cache must use absolute positions in each.
CONFIGS = {"post-norm": {}, "pre-norm": dict(norm_first=True),
           "pre-norm-learned": dict(norm_first=True, pe="learned", share_embeddings=False)}


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse", device="cpu")


def toy_ids(toy, text):
    return encode_text(toy, text).ids


def test_causal_mask_with_a_past_is_the_last_rows_of_the_full_mask():
    full = causal_mask(7)
    assert torch.equal(causal_mask(3, past=4), full[4:])
    assert torch.equal(causal_mask(1, past=6), torch.ones(1, 7, dtype=torch.bool))


@pytest.mark.parametrize("n, past", [(1, 0), (5, 0), (3, 4), (1, 6)])
def test_the_models_causal_mask_means_what_the_analysis_mask_means(n, past):
    """True = the query may read the key, in the model (torch) and in the analysis layer (numpy) alike: the
    pages' recomputed attention and their grey cells rest on the model's own mask."""
    from model.analysis.attention_math import causal_mask as numpy_mask, future_mask

    np.testing.assert_array_equal(causal_mask(n, past=past).numpy(), numpy_mask(past + n)[past:])
    np.testing.assert_array_equal(future_mask("decoder", past + n, past + n), ~numpy_mask(past + n))
    assert future_mask("encoder", n, n) is None and future_mask("cross", n, n + 1) is None


@pytest.mark.parametrize("overrides", CONFIGS.values(), ids=CONFIGS.keys())
@torch.no_grad()
def test_cached_logits_match_a_full_prefix_decode(overrides):
    model = tiny(**overrides)
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])                      # second one padded
    tgt = torch.tensor([[1, 6, 5, 4, 9, 3, 7, 8], [1, 8, 7, 0, 3, 3, 0, 6]])   # [B,T] pad keys masked
    src_mask = model.src_mask(src)
    memory = model.encode(src, src_mask)
    full = model.generator(model.decode(memory, src_mask, tgt))                  # [B,T,V]
    cache = model.new_cache()
    # a chunk of three tokens first (needs the offset causal mask), then one token per step
    chunks = [tgt[:, :3]] + [tgt[:, t:t + 1] for t in range(3, tgt.size(1))]
    for chunk in chunks:
        start = cache.length
        out = model.generator(model.decode(memory, src_mask, chunk, cache))      # [B,T_new,V]
        torch.testing.assert_close(out, full[:, start:start + chunk.size(1)], atol=1e-5, rtol=1e-5)
    assert cache.length == tgt.size(1)


@pytest.mark.parametrize("overrides", CONFIGS.values(), ids=CONFIGS.keys())
@torch.no_grad()
def test_static_cache_logits_match_a_full_prefix_decode_whatever_its_unused_slots_hold(overrides):
    model = tiny(**overrides)
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    tgt = torch.tensor([[1, 6, 5, 4, 9, 3], [1, 8, 7, 5, 3, 3]])                 # no padding is fed
    src_mask = model.src_mask(src)
    memory = model.encode(src, src_mask)
    full = model.generator(model.decode(memory, src_mask, tgt))                  # [B,T,V]
    cache = StaticDecoderCache(model, batch=2, capacity=10)
    for self_kv, _ in cache.layers:                                              # stale values: must be masked
        self_kv.k.normal_(std=100.0)
        self_kv.v.normal_(std=100.0)
    for t in range(tgt.size(1)):
        out = model.generator(model.decode(memory, src_mask, tgt[:, t:t + 1], cache))   # [B,1,V]
        torch.testing.assert_close(out[:, 0], full[:, t], atol=1e-5, rtol=1e-5)
        cache.pos += 1


def test_static_greedy_steps_write_what_the_growing_cache_decodes(toy):
    for text in TOY_TEXTS:
        src = torch.tensor([toy_ids(toy, text)])
        steps = StaticGreedySteps(toy.model, src, 12)
        for _ in range(12):
            steps.step()
        _, grown = next(greedy_rows(toy.model, src, [12]))
        assert steps.ids[0, :len(grown)].tolist() == grown
        assert int(steps.cache.pos) == 12


def test_static_greedy_refuses_more_steps_than_positions(toy):
    with pytest.raises(ValueError, match="exceeds max_len"):
        greedy(toy.model, toy_ids(toy, "a b"), max_len=toy.config.max_len + 1)


@pytest.mark.parametrize("overrides", CONFIGS.values(), ids=CONFIGS.keys())
def test_cached_greedy_equals_uncached_on_a_random_model(overrides):
    model = tiny(**overrides)
    for src in ([3, 4, 5, 2], [3, 4, 5, 6, 7, 8, 9, 2], [5, 2], [9, 9, 9, 3, 3, 2]):
        fast = greedy(model, src, max_len=20)
        slow = greedy(model, src, max_len=20, use_cache=False)
        assert fast.ids == slow.ids
        np.testing.assert_allclose(fast.step_logprobs, slow.step_logprobs, atol=1e-5)


def test_cached_greedy_equals_uncached_on_the_toy_model(toy):
    for text in TOY_TEXTS:
        src = toy_ids(toy, text)
        fast, slow = greedy(toy.model, src), greedy(toy.model, src, use_cache=False)
        assert fast.ids == slow.ids
        assert fast.ids[-1] == toy.config.eos_id                  # trained: it stops
        assert fast.score == pytest.approx(slow.score, abs=1e-4)


def test_cached_greedy_batch_with_padding_equals_uncached(toy):
    rows = [toy_ids(toy, t) for t in TOY_TEXTS]
    src = pad_batch(rows, toy.config.pad_id)                          # different source lengths
    fast = greedy_batch(toy.model, src, 16)
    slow = greedy_batch(toy.model, src, 16, use_cache=False)
    assert torch.equal(fast, slow)
    for i, row in enumerate(rows):                                 # padding changes nothing either
        alone = greedy_batch(toy.model, torch.tensor([row]), 16)[0]
        assert fast[i, :alone.numel()].tolist() == alone.tolist()
        assert (fast[i, alone.numel():] == toy.config.pad_id).all()  # finished rows emit pad


def test_cached_greedy_batch_equals_uncached_on_a_random_model():
    model = tiny()
    src = pad_batch([[3, 4, 5, 6, 7, 2], [8, 2], [4, 4, 9, 2]], model.cfg.pad_id)
    assert torch.equal(greedy_batch(model, src, 12), greedy_batch(model, src, 12, use_cache=False))


def _assert_same_beams(fast, slow):
    assert [h.ids for h in fast] == [h.ids for h in slow]
    for a, b in zip(fast, slow):
        assert a.score == pytest.approx(b.score, abs=1e-4)
        np.testing.assert_allclose(a.step_logprobs, b.step_logprobs, atol=1e-4)


@pytest.mark.parametrize("beam", [1, 3, 4])
def test_cached_beam_search_equals_uncached(toy, beam):
    for text in TOY_TEXTS[:3]:
        src = toy_ids(toy, text)
        _assert_same_beams(beam_search(toy.model, src, beam_size=beam),
                           beam_search(toy.model, src, beam_size=beam, use_cache=False))
    model = tiny(norm_first=True)
    for src in ([3, 4, 5, 6, 2], [7, 8, 2]):                     # random: runs to max_len, beams reorder
        _assert_same_beams(beam_search(model, src, beam_size=beam, max_len=10),
                           beam_search(model, src, beam_size=beam, max_len=10, use_cache=False))


def test_no_cache_while_a_trace_is_active(toy):
    assert _new_cache(toy.model, True) is not None
    with capture(names=[]):
        assert _new_cache(toy.model, True) is None              # edits and captures need full passes
    src = toy_ids(toy, "a b c d")
    hyp = greedy(toy.model, src, return_traces=True, names="decoder.layers.*.self_attn.hook_pattern")
    assert hyp.ids == greedy(toy.model, src).ids
    heads = toy.config.n_heads
    for t, trace in enumerate(hyp.step_traces):                    # step t: the full prefix of t+1 queries
        assert trace["decoder.layers.1.self_attn.hook_pattern"].shape == (heads, t + 1, t + 1)


def test_a_static_greedy_step_never_asks_the_host(toy, monkeypatch):
    """What a CUDA graph needs, checked on the CPU: a step reads no tensor value into Python (bool, item,
    tolist, int, float: each would wait for the GPU) and builds no tensor from host data (a copy the graph
    could not record). tests/test_cuda.py records and replays it on a GPU."""
    steps = StaticGreedySteps(toy.model, torch.tensor([toy_ids(toy, "a b c d")]), 8)
    steps.step()                                                    # the first step caches cross-attention's keys

    def host_read(*args, **kwargs):
        raise AssertionError("a decoding step asked the host for a value")

    for name in ("__bool__", "item", "tolist", "__int__", "__float__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, host_read)
    monkeypatch.setattr(torch, "tensor", host_read)
    monkeypatch.setattr(torch, "as_tensor", host_read)
    for _ in range(7):
        steps.step()
    monkeypatch.undo()
    _, grown = next(greedy_rows(toy.model, torch.tensor([toy_ids(toy, "a b c d")]), [8]))
    assert steps.ids[0, :len(grown)].tolist() == grown
