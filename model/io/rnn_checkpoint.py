"""The GRU encoder-decoders' folder (model/nn/rnn.py): one set of weights per attention, one config, safetensors
only. A folder such as pretrained/rnn-reverse holds

    rnn.json                  {"task": ..., "models": {"none": {RNNConfig}, "additive": {...}, ...}}
    <attention>.safetensors   each model's weights
    metrics.json              accuracy by input length, steps, seconds (model/training/rnn.py measures them)
    README.md                 the model card

The config is rnn.json, not config.json: the app lists every folder with a config.json as a Transformer.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from model.errors import CheckpointError
from model.io.files import MiB, check_regular_file, read_text_limited
from model.nn.rnn import ATTENTIONS, RNNConfig, Seq2SeqRNN

CONFIG = "rnn.json"
METRICS = "metrics.json"
MAX_JSON_BYTES = MiB


def weights_file(attention: str) -> str:
    return f"{attention}.safetensors"


def save_rnns(models: dict[str, Seq2SeqRNN], task: str, folder, metrics: dict) -> Path:
    """Write every model's weights, the shared rnn.json and metrics.json into folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for attention, model in models.items():
        tensors = {n: t.detach().to("cpu", torch.float32).contiguous() for n, t in model.state_dict().items()}
        save_file(tensors, str(folder / weights_file(attention)), metadata={"format": "pt"})
    config = {"task": task, "models": {a: m.cfg.to_dict() for a, m in models.items()}}
    (folder / CONFIG).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (folder / METRICS).write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    return folder


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(read_text_limited(path, MAX_JSON_BYTES, "a few kilobytes of settings and scores"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: file missing") from None
    except (ValueError, OSError, RecursionError) as e:      # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CheckpointError(f"{path}: not readable JSON ({str(e)[:200]})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: not a JSON object")
    return data


def _load_one(folder: Path, attention: str, settings) -> Seq2SeqRNN:
    try:
        model = Seq2SeqRNN(RNNConfig.from_dict(settings))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / CONFIG}: {attention}: {e}") from None
    if model.cfg.attention != attention:
        raise CheckpointError(f"{folder / CONFIG}: the {attention!r} model says attention={model.cfg.attention!r}")
    path = folder / weights_file(attention)
    expected = model.state_dict()
    try:
        check_regular_file(path, 8 * sum(t.numel() for t in expected.values()) + MiB)
        tensors = load_file(str(path))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: file missing") from None
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path}: not usable ({str(e)[:200]})") from None
    if set(tensors) != set(expected) or any(tensors[n].shape != expected[n].shape for n in expected):
        raise CheckpointError(f"{path}: weights do not match {CONFIG}")
    if not all(torch.isfinite(t.float()).all() for t in tensors.values()):
        raise CheckpointError(f"{path}: contains NaN or infinite values")
    model.load_state_dict({n: t.float() for n, t in tensors.items()})
    return model.eval()


def load_rnns(folder) -> tuple[str, dict[str, Seq2SeqRNN], dict]:
    """(task, {attention: model on the CPU, in ATTENTIONS order}, metrics) of a folder save_rnns wrote."""
    folder = Path(folder)
    config = _read_json(folder / CONFIG)
    task, settings = config.get("task"), config.get("models")
    if not isinstance(task, str) or not isinstance(settings, dict) or not settings:
        raise CheckpointError(f"{folder / CONFIG}: needs a task and one or more models")
    unknown = sorted(set(settings) - set(ATTENTIONS))
    if unknown:
        raise CheckpointError(f"{folder / CONFIG}: unknown attention {unknown}; choose from {', '.join(ATTENTIONS)}")
    models = {a: _load_one(folder, a, settings[a]) for a in ATTENTIONS if a in settings}
    metrics = _read_json(folder / METRICS) if (folder / METRICS).exists() else {}
    return task, models, metrics
