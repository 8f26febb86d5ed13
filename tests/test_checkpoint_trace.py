"""Checkpoints (safetensors only, clear errors) and the .npz trace export."""
import json

import numpy as np
import pytest
import torch

from model.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from model.inference.pipeline import trace_sentence, translate
from model.training.tasks import toy_tokenizer
from model.capture.hooks import capture
from model.capture.trace import Trace


@pytest.fixture
def saved(tmp_path, tiny_model):
    return save_checkpoint(tiny_model, toy_tokenizer(), tmp_path / "ckpt")


def test_checkpoint_round_trips_bit_exactly(saved, tiny_model):
    loaded = load_checkpoint(saved, device="cpu").model
    original = tiny_model.state_dict()
    for name, tensor in loaded.state_dict().items():
        assert torch.equal(tensor, original[name]), name
    assert loaded.generator.proj.weight is loaded.src_embed.token.weight  # tying survives


def test_fp16_storage_loads_as_float32(tmp_path, tiny_model):
    folder = save_checkpoint(tiny_model, toy_tokenizer(), tmp_path / "half", dtype=torch.float16)
    loaded = load_checkpoint(folder).model
    assert loaded.generator.proj.weight.dtype == torch.float32
    torch.testing.assert_close(loaded.generator.proj.weight, tiny_model.generator.proj.weight, atol=2e-3, rtol=1e-2)


def _corrupt(folder, name, data: bytes):
    (folder / name).write_bytes(data)


@pytest.mark.parametrize("damage, message", [
    (lambda f: (f / "model.safetensors").write_bytes((f / "model.safetensors").read_bytes()[:100]), "corrupt or truncated"),
    (lambda f: (f / "model.safetensors").write_bytes(b"\x00" * 64), "corrupt or truncated"),
    (lambda f: (f / "config.json").write_text("{not json"), "not valid JSON"),
    (lambda f: (f / "config.json").write_text(json.dumps({"vocab_size": 13, "d_model": 64, "n_heads": 2,
                                                          "n_encoder_layers": 2, "n_decoder_layers": 2, "d_ff": 64})),
     "shape"),
    (lambda f: (f / "config.json").write_text(json.dumps({"vocab_size": 13, "colour": "red"})), "unknown config keys"),
    (lambda f: (f / "tokenizer.json").write_text("garbage"), "not a usable tokenizer"),
    (lambda f: (f / "tokenizer.json").unlink(), "file missing"),
    (lambda f: (f / "evil.pkl").write_bytes(b"\x80\x04."), "pickle"),
])
def test_damaged_checkpoints_give_a_clear_error(saved, damage, message):
    damage(saved)
    with pytest.raises(CheckpointError, match=message) as info:
        load_checkpoint(saved)
    assert str(saved) in str(info.value)


def test_missing_folder(tmp_path):
    with pytest.raises(CheckpointError, match="no such model folder"):
        load_checkpoint(tmp_path / "nope")


def test_trace_saves_and_loads_as_npz(tmp_path):
    bundle = load_checkpoint("pretrained/toy-reverse")
    trace = trace_sentence(bundle, "a b c d")
    path = tmp_path / "trace.npz"
    trace.save(path)
    back = Trace.load(path)
    assert set(back.arrays) == set(trace.arrays)
    for name in trace.arrays:
        np.testing.assert_array_equal(back[name], trace[name])
    assert back.meta["src_tokens"] == ["a", "b", "c", "d", "</s>"]
    assert back.meta["config"]["d_model"] == bundle.config.d_model
    assert back.meta["format_version"] == 1
    with np.load(path, allow_pickle=False) as raw:   # readable with plain numpy, no pickle
        assert raw["encoder.layers.0.self_attn.hook_pattern"].shape == (bundle.config.n_heads, 5, 5)


def test_trace_load_rejects_other_npz(tmp_path):
    np.savez(tmp_path / "x.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="not a trace file"):
        Trace.load(tmp_path / "x.npz")


def test_teacher_forced_trace_uses_the_reference():
    bundle = load_checkpoint("pretrained/toy-reverse")
    trace = trace_sentence(bundle, "a b c", target="c b a")
    assert trace.meta["teacher_forced"] and trace.meta["translation"] == "c b a"
    assert trace.meta["tgt_in_tokens"] == ["<s>", "c", "b", "a"]
    assert trace.meta["tgt_out_tokens"] == ["c", "b", "a", "</s>"]
    assert trace["decoder.layers.0.cross_attn.hook_pattern"].shape[1:] == (4, 4)
    assert trace.meta["tgt_logprob"] > -0.5     # the model is sure of the right answer


def test_long_input_is_cut_with_a_flag():
    bundle = load_checkpoint("pretrained/toy-reverse")
    trace = trace_sentence(bundle, " ".join("abcdefghij" * 3), max_tokens=12)
    assert trace.meta["src_truncated"] and trace.meta["src_n_tokens"] == 31
    assert len(trace.meta["src_tokens"]) == 12 and trace.meta["src_tokens"][-1] == "</s>"
    with pytest.raises(ValueError, match="empty"):
        translate(bundle, "   ")


def test_translate_cli(capsys, tmp_path):
    from model.cli.translate import main
    assert main(["--model", "pretrained/toy-reverse", "a b c"]) == 0
    assert capsys.readouterr().out.strip() == "c b a"
    lines = tmp_path / "in.txt"
    lines.write_text("a b\n\nc d e\n")
    assert main(["--model", "pretrained/toy-reverse", "--input", str(lines), "--beam", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == ["b a", "", "e d c"]


def test_trace_cli(tmp_path):
    from model.cli.trace import main
    out = tmp_path / "t.npz"
    main(["--model", "pretrained/toy-reverse", "--text", "a b", "--target", "b a", "--out", str(out),
          "--names", "*.hook_pattern"])
    trace = Trace.load(out)
    assert trace.names() == trace.names("*.hook_pattern") and len(trace.names()) == 6


def test_a_trace_keeps_its_values_when_the_model_changes_afterwards(tiny_model, batch):
    """Capture keeps fresh tensors without copying; values that are views of parameters must be copied."""
    src, tgt = batch
    with capture() as trace:
        tiny_model(src, tgt)
    before = {name: array.copy() for name, array in trace.arrays.items()}
    with torch.no_grad():
        for p in tiny_model.parameters():
            p.add_(1.0)                                   # what a training step does, in place
        with capture() as later:
            tiny_model(src, tgt)
    changed = [n for n in before if not np.array_equal(before[n], trace.arrays[n])]
    assert changed == []
    assert not np.allclose(later["encoder.layers.0.norm_attn.hook_gain"], before["encoder.layers.0.norm_attn.hook_gain"])


def test_a_translation_has_one_space_between_words():
    """en-es emits lone space tokens (learned from Apertium references with doubled spaces): the text of its
    output read '¿Puede  me ayudas?' and 'Dijo que  necesité ayuda.'; the tokens stay as they are."""
    from model.io.models import find_model
    bundle = load_checkpoint(find_model("en-es"))
    tok = bundle.tokenizer
    lone = tok.encode("Dijo que  necesité ayuda.", add_eos=False)
    assert "▁" in tok.token_strings(lone)                     # a lone space token, as the model writes it
    assert tok.decode(lone) == "Dijo que necesité ayuda."
    for english in ("Can you help me?", "He said that I needed help.", "How could you do such a thing?"):
        spanish = translate(bundle, english)
        assert spanish and "  " not in spanish, spanish
        assert "  " not in trace_sentence(bundle, english).meta["tgt_text"]
