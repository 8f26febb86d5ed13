"""A model folder whose config.json is valid JSON with bad values gives one sentence naming the field
and the value (CheckpointError "config.json: field=value: why"), at once, without building a tensor."""
import json
import shutil
import time
from pathlib import Path

import pytest

from model.io import checkpoint
from model.io.checkpoint import CheckpointError, load_checkpoint
from model.nn.config import TransformerConfig, parameter_count
from model.nn.transformer import Transformer

PRETRAINED = Path(__file__).resolve().parents[1] / "pretrained"
TOY = PRETRAINED / "toy-reverse"     # vocab_size 13, d_model 64, n_heads 4, 2 + 2 layers, d_ff 128

NAN, INF = float("nan"), float("inf")

# (field named in the message, the edit to config.json)
BAD_VALUES = [
    ("dropout", {"dropout": 5}),
    ("dropout", {"dropout": -0.1}),
    ("dropout", {"dropout": 1.0}),
    ("dropout", {"dropout": NAN}),
    ("dropout", {"dropout": True}),
    ("dropout", {"dropout": "0.1"}),
    ("ln_eps", {"ln_eps": INF}),
    ("ln_eps", {"ln_eps": 0}),
    ("pad_id", {"pad_id": 99999}),
    ("bos_id", {"bos_id": 99999}),
    ("eos_id", {"eos_id": 99999}),
    ("pad_id", {"pad_id": -1}),
    ("eos_id", {"eos_id": 1}),                 # same id as bos_id: decoding would stop at once
    ("bos_id", {"bos_id": 0}),                 # same id as pad_id: the start token masked as padding
    ("d_ff", {"d_ff": 10**14}),
    ("d_ff", {"d_ff": 10**400}),              # beyond a float's range
    ("d_ff", {"d_ff": 0}),
    ("d_ff", {"d_ff": -128}),
    ("d_ff", {"d_ff": 128.0}),
    ("vocab_size", {"vocab_size": 10**12}),
    ("vocab_size", {"vocab_size": 0}),
    ("vocab_size", {"vocab_size": None}),
    ("max_len", {"max_len": 10**12}),
    ("max_len", {"max_len": -1}),
    ("max_len", {"max_len": 1}),               # nothing could be read or written
    ("d_model", {"d_model": 63}),              # not divisible by n_heads=4
    ("d_model", {"d_model": 4 * 10**6}),       # attention matrices alone: 4 * 16e12 numbers
    ("d_model", {"d_model": "64"}),
    ("n_heads", {"n_heads": 0}),
    ("n_heads", {"n_heads": -4}),
    ("n_heads", {"n_heads": True}),
    ("n_encoder_layers", {"n_encoder_layers": 0}),
    ("n_decoder_layers", {"n_decoder_layers": 10**6}),
    ("n_decoder_layers", {"n_decoder_layers": 2.5}),
    ("norm_first", {"norm_first": 1}),
    ("share_embeddings", {"share_embeddings": "yes"}),
    ("pe", {"pe": "rotary"}),
    ("pe", {"pe": 5}),
    ("colour", {"colour": "red"}),             # unknown key, named
]


@pytest.fixture
def toy_folder(tmp_path) -> Path:
    folder = tmp_path / "toy-reverse"
    shutil.copytree(TOY, folder)
    return folder


def edit_config(folder: Path, **changes) -> None:
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))   # NaN/Infinity as Python writes them


@pytest.fixture
def no_model_built(monkeypatch):
    """Building the network with a refused config would be the crash (or the huge allocation)."""
    def refuse(cfg):
        raise AssertionError(f"Transformer built for a config that should have been refused: {cfg}")
    monkeypatch.setattr(checkpoint, "Transformer", refuse)


@pytest.mark.parametrize("field, changes", BAD_VALUES, ids=[f"{f}={list(c.values())[0]!r}"[:40] for f, c in BAD_VALUES])
def test_bad_config_value_names_the_field_at_once(toy_folder, no_model_built, field, changes):
    edit_config(toy_folder, **changes)
    start = time.process_time()
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(toy_folder)
    assert time.process_time() - start < 1.0, "refusing a config must not try to allocate the model"
    message = str(info.value)
    assert message.startswith(str(toy_folder / "config.json") + ": "), message
    assert field in message, message
    assert "\n" not in message and len(message) < 600, message


@pytest.mark.parametrize("field, value", [("dropout", 5), ("pad_id", 99999), ("d_ff", 10**14), ("d_model", 63)])
def test_message_is_field_equals_value_then_why(field, value):
    with pytest.raises(ValueError, match=rf"^{field}={value}: \S"):
        TransformerConfig(**{"vocab_size": 13, "d_model": 64, "n_heads": 4, field: value})


def test_unknown_keys_are_all_listed(toy_folder):
    edit_config(toy_folder, colour="red", flavour="salty")
    with pytest.raises(CheckpointError, match=r"unknown config keys: \['colour', 'flavour'\]"):
        load_checkpoint(toy_folder)


@pytest.mark.parametrize("text, message", [
    ("[13, 64]", "JSON object"),
    (json.dumps({"d_model": 64}), "vocab_size is missing"),
    ("[" * 100_000, "not valid JSON|more than the 65,536 read here"),
    (json.dumps({"vocab_size": 13, "pe": "x" * 100_000}), "more than the 65,536 read here"),
])
def test_config_that_is_not_a_settings_object(toy_folder, text, message):
    (toy_folder / "config.json").write_text(text)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(toy_folder)


def test_weights_file_larger_than_the_config_explains_is_not_read(toy_folder, no_model_built):
    with open(toy_folder / "model.safetensors", "r+b") as f:
        f.truncate(10 * 2**30)                  # sparse: 10 GiB by its size, no disk used
    start = time.process_time()
    with pytest.raises(CheckpointError, match=r"model.safetensors: [\d,]+ bytes, more than the [\d,]+ read here \(config.json describes"):
        load_checkpoint(toy_folder)
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize("overrides", [
    {},
    {"share_embeddings": False},
    {"pe": "learned"},
    {"norm_first": True, "n_encoder_layers": 1, "n_decoder_layers": 3},
    {"d_model": 30, "n_heads": 3, "d_ff": 7, "vocab_size": 5},      # odd sizes
])
def test_parameter_count_matches_the_built_model(overrides):
    cfg = TransformerConfig(**{"vocab_size": 13, "d_model": 32, "n_heads": 2, "n_encoder_layers": 2,
                               "n_decoder_layers": 2, "d_ff": 64, "max_len": 16, **overrides})
    assert parameter_count(cfg) == Transformer(cfg).num_parameters()


def test_numpy_scalars_are_accepted_as_numbers():
    np = pytest.importorskip("numpy")
    cfg = TransformerConfig(vocab_size=np.int64(13), d_model=np.int64(32), n_heads=2, dropout=np.float32(0.1))
    assert cfg.d_head == 16


@pytest.mark.parametrize("folder", sorted(p for p in PRETRAINED.iterdir() if (p / "config.json").is_file()),
                         ids=lambda p: p.name)
def test_every_shipped_model_still_loads(folder):
    bundle = load_checkpoint(folder, device="cpu")
    assert parameter_count(bundle.config) == bundle.model.num_parameters()
