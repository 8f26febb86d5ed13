"""The GRU encoder-decoders with and without attention (model/nn/rnn.py), their training, folder, reading of one
input, and the maths beside the Transformer's (model/analysis/rnn_alignment.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import ROOT
from model.analysis import rnn_alignment
from model.errors import CheckpointError
from model.inference.rnn import read_input
from model.io.rnn_checkpoint import load_rnns, save_rnns
from model.nn.rnn import ATTENTIONS, RNNConfig, Seq2SeqRNN
from model.training.rnn import accuracy_by_length, rnn_config, train_rnn
from model.training.tasks import toy_tokenizer

SHIPPED = ROOT / "pretrained" / "rnn-reverse"


def tiny(attention: str) -> Seq2SeqRNN:
    torch.manual_seed(0)
    return Seq2SeqRNN(rnn_config(attention, d_hidden=16, d_embed=8)).eval()


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_shapes_and_rows_sum_to_one(attention, batch):
    src, tgt = batch
    out = tiny(attention)(src, tgt)
    assert out.logits.shape == (2, 4, 13) and out.context.shape == (2, 4, 16)
    if attention == "none":
        assert out.scores is None and out.weights is None
        return
    assert out.weights.shape == (2, 4, 5)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(2, 4))
    assert (out.weights[1, :, 3:] == 0).all() and torch.isinf(out.scores[1, :, 3:]).all()    # padding never read
    # c_i is the weighted sum of the annotations
    annotations = tiny(attention).encode(src).annotations
    torch.testing.assert_close(out.context, torch.einsum("bts,bsd->btd", out.weights, annotations))


@torch.no_grad()
def test_without_attention_the_context_is_one_vector(batch):
    src, tgt = batch
    model = tiny("none")
    out = model(src, tgt)
    summary = model.encode(src).summary                                      # [B,D]
    torch.testing.assert_close(out.context, summary[:, None, :].expand_as(out.context))
    assert rnn_alignment.context_change(out.context[0].numpy()) == 0.0
    assert rnn_alignment.context_change(tiny("additive")(src, tgt).context[0].numpy()) > 1e-4   # untrained: near-uniform weights


def test_padding_does_not_change_a_sentence(batch):
    """Packing: a source read alone and beside a longer one gives the same outputs."""
    src, tgt = batch
    model = tiny("additive")
    alone = model(src[1:, :3], tgt[1:])
    together = model(src, tgt)
    torch.testing.assert_close(alone.logits[0], together.logits[1], atol=1e-5, rtol=1e-5)


def test_config_refuses_bad_values():
    for bad in (dict(attention="cosine"), dict(d_hidden=15), dict(d_hidden=True), dict(eos_id=99)):
        with pytest.raises(ValueError):
            RNNConfig(vocab_size=13, **bad)


@pytest.mark.slow          # training
def test_a_few_steps_lower_the_loss():
    first = train_rnn("reverse", "additive", steps=1, eval_every=1)
    later = train_rnn("reverse", "additive", steps=60, eval_every=60)
    assert later.history[-1]["loss"] < 0.8 * first.history[-1]["loss"]


def test_save_load_and_read_one_input(tmp_path):
    models = {a: tiny(a) for a in ("none", "dot")}
    save_rnns(models, "reverse", tmp_path, {"steps": 0})
    task, loaded, metrics = load_rnns(tmp_path)
    assert task == "reverse" and list(loaded) == ["none", "dot"] and metrics == {"steps": 0}
    for name, model in loaded.items():
        for a, b in zip(model.state_dict().values(), models[name].state_dict().values()):
            assert torch.equal(a, b)
    reading = read_input(loaded["dot"], toy_tokenizer(), "a b c")
    assert reading.src_tokens == ["a", "b", "c", "</s>"]
    assert reading.weights.shape == (len(reading.out_tokens), 4)
    np.testing.assert_allclose(reading.weights.sum(1), 1.0, atol=1e-6)
    assert read_input(loaded["none"], toy_tokenizer(), "a b c").weights is None


def test_a_broken_folder_is_one_sentence(tmp_path):
    save_rnns({"dot": tiny("dot")}, "reverse", tmp_path, {})
    (tmp_path / "dot.safetensors").write_bytes(b"not weights")
    with pytest.raises(CheckpointError, match="dot.safetensors"):
        load_rnns(tmp_path)
    (tmp_path / "rnn.json").write_text('{"task": "reverse", "models": {"lstm": {}}}')
    with pytest.raises(CheckpointError, match="unknown attention"):
        load_rnns(tmp_path)


def test_the_shipped_accuracy_reproduces():
    """The model card's numbers: re-measured on the same inputs, every model, a short, a middle and a long length."""
    task, models, metrics = load_rnns(SHIPPED)
    lengths = (4, 10, 16)
    for attention, model in models.items():
        shipped = metrics["models"][attention]["accuracy_by_length"]
        measured = accuracy_by_length(model, task, lengths, n=metrics["eval_inputs_per_length"])
        for n in lengths:
            assert measured[n]["exact"] == pytest.approx(shipped[str(n)]["exact"], abs=0.01), (attention, n)


def test_the_shipped_models_show_the_bottleneck():
    """With attention the longest trained inputs stay right; without, accuracy falls with length."""
    metrics = load_rnns(SHIPPED)[2]["models"]
    exact = {a: {int(n): v["exact"] for n, v in m["accuracy_by_length"].items()} for a, m in metrics.items()}
    assert exact["none"][4] >= 0.95 and exact["none"][16] <= 0.2
    for attention in ("additive", "dot", "general"):
        assert exact[attention][16] >= 0.9, attention


def test_weightings_and_agreement():
    scores = np.array([[3.0, 1.0, -np.inf], [0.0, 2.0, -np.inf]])
    w = rnn_alignment.weightings(scores)
    assert set(w) == {"soft", "hard", "local"}
    np.testing.assert_allclose(w["soft"].sum(1), 1.0)
    assert (w["soft"][:, 2] == 0).all() and (w["hard"] == [[1, 0, 0], [0, 1, 0]]).all()
    assert rnn_alignment.same_focus(w["soft"], np.array([[0.9, 0.1, 0], [0.8, 0.2, 0], [1, 0, 0]])) == (1, 2)
