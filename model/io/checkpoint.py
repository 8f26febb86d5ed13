"""Checkpoint folders: model.safetensors + config.json + tokenizer.json (+ source_tokenizer.json when the
source has its own vocabulary, config.src_vocab_size). Never pickle.

Loading checks everything it reads and raises CheckpointError naming the file and the problem, so a
page can show one clear sentence instead of a traceback.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from model.nn.config import TransformerConfig, parameter_count
from model.io.tokenizer import Tokenizer
from model.io.device import pick_device
from model.io.files import MiB, check_regular_file, read_text_limited
from model.nn.transformer import Transformer
from model.errors import CheckpointError

WEIGHTS, CONFIG, TOKENIZER = "model.safetensors", "config.json", "tokenizer.json"
SOURCE_TOKENIZER = "source_tokenizer.json"
PICKLE_SUFFIXES = {".pt", ".pth", ".bin", ".pkl", ".pickle", ".ckpt"}


@dataclass
class Bundle:
    """A loaded checkpoint: what every caller needs to translate and trace."""
    model: Transformer
    tokenizer: Tokenizer                       # the target's, and the source's unless source_tokenizer
    config: TransformerConfig
    path: Path
    extra: dict = field(default_factory=dict)  # metrics.json etc., when present
    source_tokenizer: Tokenizer | None = None  # None: the source reads `tokenizer` (one joint vocabulary)

    def __post_init__(self):
        if self.source_tokenizer is None:
            self.source_tokenizer = self.tokenizer

    @property
    def encoder_tokenizer(self) -> Tokenizer:
        """The source side's tokenizer, never None (source_tokenizer, typed for the constructor's None)."""
        return self.tokenizer if self.source_tokenizer is None else self.source_tokenizer

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


def save_checkpoint(model: Transformer, tokenizer: Tokenizer, folder, dtype: torch.dtype = torch.float32,
                    source_tokenizer: Tokenizer | None = None) -> Path:
    """source_tokenizer: the source's own vocabulary (a model with config.src_vocab_size)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    aliases = _aliases(model)
    tensors = {name: t.detach().to("cpu", dtype).contiguous()
               for name, t in model.state_dict().items() if name not in aliases}
    save_file(tensors, str(folder / WEIGHTS), metadata={"format": "pt"})
    model.cfg.save(folder / CONFIG)
    tokenizer.save(folder / TOKENIZER)
    if source_tokenizer is not None:
        source_tokenizer.save(folder / SOURCE_TOKENIZER)
    return folder


MAX_CONFIG_BYTES = 64 * 1024   # a real config.json is ~300 bytes; never read a huge file into memory


def _read_config(path: Path) -> TransformerConfig:
    """The config, every field checked against its meaning and the model's size against the memory
    budget (TransformerConfig.__post_init__), before any tensor is built."""
    _check_file_size(path, MAX_CONFIG_BYTES, "a config.json needs a few hundred bytes")
    try:
        return TransformerConfig.from_dict(json.loads(read_text_limited(path, MAX_CONFIG_BYTES, within=path.parent)))
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
    try:
        check_regular_file(path, limit, why, within=path.parent)
    except ValueError as e:
        raise CheckpointError(str(e)) from None


# tokenizer.json: the en-es BPE vocabulary of 8,000 tokens is 0.54 MB (~68 bytes a token). A 250 MB one took
# 17-26 s and 2 GB to refuse when parsed first: the size is checked before a byte is parsed.
MAX_TOKENIZER_BYTES = 16 * MiB
TOKENIZER_BYTES_PER_TOKEN = 512
MAX_METRICS_BYTES = 1 * MiB    # metrics.json: a few hundred bytes of scores


def tokenizer_limit(vocab_size: int | None = None) -> int:
    """The largest tokenizer.json read: 1 MiB plus 512 bytes a token of the config's vocabulary (7.5x what
    the BPE files take), never more than MAX_TOKENIZER_BYTES."""
    if vocab_size is None:
        return MAX_TOKENIZER_BYTES
    return min(MAX_TOKENIZER_BYTES, MiB + TOKENIZER_BYTES_PER_TOKEN * vocab_size)


def read_tokenizer(path: str | Path, vocab_size: int | None = None) -> Tokenizer:
    """A tokenizer.json of at most tokenizer_limit(vocab_size) bytes, its folder's own file (no link), as a
    Tokenizer; CheckpointError naming the file when it is bigger, not a regular file, or not a tokenizer."""
    path = Path(path)
    try:
        text = read_text_limited(path, tokenizer_limit(vocab_size),
                                 f"{vocab_size:,} tokens need far less" if vocab_size else "an 8,000-token BPE is 0.5 MB",
                                 within=path.parent)
        return Tokenizer.from_json(text)          # its parts checked first: no regular expression runs
    except (ValueError, OSError) as e:
        raise CheckpointError(str(e) if str(path) in str(e) else f"{path}: {e}") from None
    except Exception as e:  # noqa: BLE001 - the tokenizers package raises plain Exceptions on bad files
        raise CheckpointError(f"{path}: not a usable tokenizer ({str(e)[:200]})") from None


def _read_tokenizer(path: Path, vocab_size: int | None = None) -> Tokenizer:
    return read_tokenizer(path, vocab_size)


def _read_weights(path: Path) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({str(e)[:200]})") from None


def _expected_shapes(config: TransformerConfig) -> dict[str, tuple]:
    """Each stored tensor's shape as config.json implies it, from a model on the meta device (no memory)."""
    with torch.device("meta"):
        model = Transformer(config)
    return {n: tuple(t.shape) for n, t in model.state_dict().items() if n not in _aliases(model)}


def _header_shapes(path: Path) -> dict[str, tuple]:
    """The tensors' names and shapes from the safetensors header alone (its offsets checked against the file's
    size by safetensors), nothing else read."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return {name: tuple(f.get_slice(name).get_shape()) for name in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({str(e)[:200]})") from None


def _check_shapes(shapes: dict[str, tuple], expected: dict[str, tuple], path: Path) -> None:
    missing = sorted(set(expected) - set(shapes))
    unexpected = sorted(set(shapes) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path}: weights do not match config.json "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    for name, shape in shapes.items():
        if shape != expected[name]:
            raise CheckpointError(f"{path}: {name} has shape {shape}, config.json implies {expected[name]}")


def _check_weights(tensors: dict[str, torch.Tensor], expected: dict[str, tuple], path: Path) -> None:
    _check_shapes({n: tuple(t.shape) for n, t in tensors.items()}, expected, path)
    for name, t in tensors.items():
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
    expected = _expected_shapes(config)           # the header against config.json before a tensor is built
    _check_shapes(_header_shapes(folder / WEIGHTS), expected, folder / WEIGHTS)
    tokenizer = _read_sized_tokenizer(folder / TOKENIZER, config.vocab_size, "vocab_size")
    source_tokenizer = _read_source_tokenizer(folder, config)
    tensors = _read_weights(folder / WEIGHTS)
    _check_weights(tensors, expected, folder / WEIGHTS)
    model = Transformer(config)
    model.load_state_dict({n: t.float() for n, t in tensors.items()}, strict=False)
    model.to(pick_device(device)).eval()
    return Bundle(model, tokenizer, config, folder, _read_extra(folder), source_tokenizer)


def _read_sized_tokenizer(path: Path, size: int, field_name: str) -> Tokenizer:
    tokenizer = _read_tokenizer(path, size)
    if tokenizer.vocab_size != size:
        raise CheckpointError(f"{path}: vocabulary of {tokenizer.vocab_size} tokens, "
                              f"but config.json says {field_name}={size}")
    return tokenizer


def _read_source_tokenizer(folder: Path, config: TransformerConfig) -> Tokenizer | None:
    """The source's own vocabulary: present exactly when config.json gives src_vocab_size."""
    path = folder / SOURCE_TOKENIZER
    if config.src_vocab_size is None:
        if path.exists():
            raise CheckpointError(f"{path}: a source vocabulary, but config.json gives no src_vocab_size")
        return None
    if not path.is_file():
        raise CheckpointError(f"{path}: file missing (config.json gives src_vocab_size={config.src_vocab_size})")
    return _read_sized_tokenizer(path, config.src_vocab_size, "src_vocab_size")


def _read_extra(folder: Path) -> dict:
    extra = {}
    for name in ("metrics.json",):
        path = folder / name
        if path.is_file():
            try:
                extra[path.stem] = json.loads(read_text_limited(path, MAX_METRICS_BYTES, "scores take a few hundred",
                                                                within=folder))
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                extra[path.stem] = {"error": f"{name} is not valid JSON"}
            except (ValueError, OSError) as e:     # too big, or not a regular file: said, not read
                extra[path.stem] = {"error": str(e).replace(f"{path}", name)}
            if not isinstance(extra[path.stem], dict):
                extra[path.stem] = {"error": f"{name} is not a JSON object of name: value"}
    return extra
