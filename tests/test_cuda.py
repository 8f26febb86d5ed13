"""On a CUDA machine: the GPU computes what the CPU computes (traces, batched and one-by-one decoding,
a bf16 training step) and every page of the app runs on it. Without CUDA every test is skipped."""
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import ROOT
from model.capture.hooks import capture
from model.inference.batch_translate import translate_many
from model.inference.decode import (StaticGreedySteps, beam_search, beam_search_batch, default_max_len, greedy,
                                    greedy_rows, pad_batch)
from model.inference.pipeline import encode_text, trace_sentence, translate
from model.io.checkpoint import load_checkpoint
from model.io.device import describe_device, pick_device
from model.training.runtime import Runtime, train_step
from model.training.toy import train_toy
from viz.elements.nav import PAGES

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")

EN_ES = ["The man went to the house.", "God said: let there be light.", "And the king spoke to his servants.",
         "Where are you going?", "In the beginning God created the heaven and the earth."]


@pytest.fixture(scope="module")
def models():
    folder = ROOT / "pretrained" / "en-es"
    return load_checkpoint(folder, device="cpu"), load_checkpoint(folder, device="cuda")


def test_cuda_is_picked_and_described():
    assert pick_device().type == "cuda"
    assert describe_device("cuda").startswith("CUDA: ")


def test_full_trace_on_the_gpu_equals_the_cpu(models):
    cpu, gpu = models
    a = trace_sentence(cpu, EN_ES[4])
    b = trace_sentence(gpu, EN_ES[4])
    assert a.meta["tgt_ids"] == b.meta["tgt_ids"]
    assert set(a.arrays) == set(b.arrays)
    for name, array in a.arrays.items():
        assert b[name].dtype == np.float32 and b[name].shape == array.shape, name
        np.testing.assert_allclose(b[name], array, atol=2e-3, rtol=1e-3, err_msg=name)


def test_bf16_values_come_back_as_float32(models):
    _, gpu = models
    src = torch.tensor([encode_text(gpu, EN_ES[0]).ids], device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16), capture("*.hook_pattern") as trace:
        gpu.model(src, src[:, :3])
    assert trace.arrays and all(a.dtype == np.float32 for a in trace.arrays.values())


@pytest.mark.parametrize("beam", [1, 4])
def test_batched_decoding_equals_one_by_one_on_the_gpu(models, beam):
    _, gpu = models
    assert translate_many(gpu, EN_ES, beam=beam) == [translate(gpu, t, beam=beam) for t in EN_ES]


def test_batched_beam_search_on_the_gpu_equals_the_cpu(models):
    cpu, gpu = models
    sources = [encode_text(cpu, t).ids for t in EN_ES]
    max_lens = [default_max_len(cpu.model, len(s)) for s in sources]
    on_gpu = beam_search_batch(gpu.model, pad_batch(sources).cuda(), max_lens, 4)
    assert [h[0].ids for h in on_gpu] == [beam_search(cpu.model, s, 4)[0].ids for s in sources]


def test_graphed_greedy_on_the_gpu_equals_the_cpu(models):
    cpu, gpu = models
    for text in EN_ES:
        ids = encode_text(cpu, text).ids
        a, b = greedy(cpu.model, ids), greedy(gpu.model, ids)            # b: CUDA graph replays
        assert a.ids == b.ids and a.ids[-1] == cpu.config.eos_id
        np.testing.assert_allclose(b.step_logprobs, a.step_logprobs, atol=1e-3)


@torch.no_grad()
def test_graph_replays_equal_eager_steps_on_a_long_random_source(models):
    _, gpu = models
    src = torch.randint(3, gpu.config.vocab_size, (1, 256), generator=torch.Generator().manual_seed(0)).cuda()
    eager, graphed = StaticGreedySteps(gpu.model, src, 300), StaticGreedySteps(gpu.model, src, 300)
    for _ in range(300):
        eager.step()
    replay = graphed.graphed(warmup=2)
    for _ in range(298):
        replay()
    torch.cuda.synchronize()
    assert torch.equal(graphed.ids, eager.ids) and int(graphed.cache.pos) == 300
    _, grown = next(greedy_rows(gpu.model, src, [300]))                 # the growing cache's answer
    assert eager.ids[0, :len(grown)].tolist() == grown


def test_a_bf16_training_step_on_the_gpu_lowers_the_loss():
    rt = Runtime(torch.device("cuda"))
    model = train_toy("reverse", steps=0, size="tiny", rt=rt).model.train()
    assert next(model.parameters()).dtype == torch.float32                # master weights stay float32
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    src = torch.tensor([[3, 4, 5, 6, 2]] * 8)
    tgt_in, tgt_out = torch.tensor([[1, 6, 5, 4, 3]] * 8), torch.tensor([[6, 5, 4, 3, 2]] * 8)
    losses = [float(train_step(model, opt, src, tgt_in, tgt_out, 40, rt, smoothing=0.0)) / 40 for _ in range(20)]
    assert np.isfinite(losses).all() and losses[-1] < losses[0] / 2


def test_toy_training_on_the_gpu_learns():
    result = train_toy("reverse", steps=300, rt=Runtime(torch.device("cuda")))
    assert result.history[-1]["accuracy"] > 0.5


PAGE_FILES = [Path(file).name for file, *_ in PAGES]


@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_runs_on_cuda(page, monkeypatch):
    from apptest_utils import no_exceptions, run_page

    monkeypatch.setenv("TRANSFORMER_VIZ_DEVICE", "cuda")
    no_exceptions(run_page(page))
