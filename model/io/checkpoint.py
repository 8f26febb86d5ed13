"""Checkpoint folders: model.safetensors + config.json + tokenizer.json. Never pickle.

Loading checks everything it reads and raises CheckpointError naming the file and the problem, so a
page can show one clear sentence instead of a traceback.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from model.nn.config import TransformerConfig, parameter_count
from model.io.tokenizer import Tokenizer
from model.io.device import pick_device
from model.nn.transformer import Transformer
from model.errors import CheckpointError

WEIGHTS, CONFIG, TOKENIZER = "model.safetensors", "config.json", "tokenizer.json"
PICKLE_SUFFIXES = {".pt", ".pth", ".bin", ".pkl", ".pickle", ".ckpt"}


@dataclass
class Bundle:
    """A loaded checkpoint: what every caller needs to translate and trace."""
    model: Transformer
    tokenizer: Tokenizer
    config: TransformerConfig
    path: Path
    extra: dict = field(default_factory=dict)  # metrics.json etc., when present

    @property
    def model_id(self) -> str:
        return self.path.name


def _aliases(model: torch.nn.Module) -> dict[str, str]:
    """Tied weights appear under several names; map each extra name to the first one."""
    first: dict[int, str] = {}
    aliases = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        key = id(tensor)
        if key in first:
            aliases[name] = first[key]
        else:
            first[key] = name
    return aliases


def save_checkpoint(model: Transformer, tokenizer: Tokenizer, folder, dtype: torch.dtype = torch.float32) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    aliases = _aliases(model)
    tensors = {name: t.detach().to("cpu", dtype).contiguous()
               for name, t in model.state_dict().items() if name not in aliases}
    save_file(tensors, str(folder / WEIGHTS), metadata={"format": "pt"})
    model.cfg.save(folder / CONFIG)
    tokenizer.save(folder / TOKENIZER)
    return folder


MAX_CONFIG_BYTES = 64 * 1024   # a real config.json is ~300 bytes; never read a huge file into memory


def _read_config(path: Path) -> TransformerConfig:
    """The config, every field checked against its meaning and the model's size against the memory
    budget (TransformerConfig.__post_init__), before any tensor is built."""
    _check_file_size(path, MAX_CONFIG_BYTES, "a config.json needs a few hundred bytes")
    try:
        return TransformerConfig.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise CheckpointError(f"{path}: not valid JSON (nested too deeply)") from None
    except (TypeError, ValueError) as e:  # ValueError: "field=value: why" from TransformerConfig
        raise CheckpointError(f"{path}: {e}") from None


def _weights_limit(config: TransformerConfig) -> int:
    """Largest model.safetensors this config can explain: every parameter in fp64 (the widest dtype
    save_checkpoint may write) plus a generous header, checked before the file is read."""
    return 8 * parameter_count(config) + 2**20


def _check_file_size(path: Path, limit: int, why: str) -> None:
    size = path.stat().st_size
    if size > limit:
        raise CheckpointError(f"{path}: {size} bytes, more than {limit} ({why}); not read")


def _read_tokenizer(path: Path) -> Tokenizer:
    try:
        return Tokenizer.load(path)
    except Exception as e:  # the tokenizers package raises plain Exceptions on bad files
        raise CheckpointError(f"{path}: not a usable tokenizer ({str(e)[:200]})") from None


def _read_weights(path: Path) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({str(e)[:200]})") from None


def _check_weights(model: Transformer, tensors: dict[str, torch.Tensor], path: Path) -> None:
    expected = {n: t for n, t in model.state_dict().items() if n not in _aliases(model)}
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path}: weights do not match config.json "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    for name, t in tensors.items():
        if tuple(t.shape) != tuple(expected[name].shape):
            raise CheckpointError(f"{path}: {name} has shape {tuple(t.shape)}, config.json implies "
                                  f"{tuple(expected[name].shape)}")
        if not torch.isfinite(t.float()).all():
            raise CheckpointError(f"{path}: {name} contains NaN or infinite values")


def load_checkpoint(folder, device: str | None = None) -> Bundle:
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: no such model folder")
    pickles = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise CheckpointError(f"{folder}: refusing to load a folder with pickle files ({', '.join(pickles)}); "
                              f"only {WEIGHTS} is read")
    for name in (WEIGHTS, CONFIG, TOKENIZER):
        if not (folder / name).is_file():
            raise CheckpointError(f"{folder / name}: file missing")
    config = _read_config(folder / CONFIG)
    _check_file_size(folder / WEIGHTS, _weights_limit(config),
                     f"config.json describes {parameter_count(config)} parameters, at most 8 bytes each")
    tokenizer = _read_tokenizer(folder / TOKENIZER)
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(f"{folder / TOKENIZER}: vocabulary of {tokenizer.vocab_size} tokens, "
                              f"but config.json says vocab_size={config.vocab_size}")
    model = Transformer(config)
    tensors = _read_weights(folder / WEIGHTS)
    _check_weights(model, tensors, folder / WEIGHTS)
    model.load_state_dict({n: t.float() for n, t in tensors.items()}, strict=False)
    model.to(pick_device(device)).eval()
    return Bundle(model, tokenizer, config, folder, _read_extra(folder))


def _read_extra(folder: Path) -> dict:
    extra = {}
    for name in ("metrics.json",):
        path = folder / name
        if path.is_file():
            try:
                extra[path.stem] = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                extra[path.stem] = {"error": f"{name} is not valid JSON"}
            if not isinstance(extra[path.stem], dict):
                extra[path.stem] = {"error": f"{name} is not a JSON object of name: value"}
    return extra
