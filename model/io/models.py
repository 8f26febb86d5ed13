"""Which models there are: the folders under one models folder that hold a config.json. The app's model picker
and the `app` command both ask here, so they always list the same models.

The models folder is the operator's TRANSFORMER_VIZ_MODELS, else the default the caller gives (the source
tree's or the installed pretrained/). Models are only ever read from it: never from a path a user typed.
"""
from __future__ import annotations

import os
from pathlib import Path

from model.io.files import MiB, read_text_limited

MODELS_ENV = "TRANSFORMER_VIZ_MODELS"
DEFAULT_MODEL = "en-es"


def models_folder(default: Path) -> Path:
    """The operator's models folder (read on every call, so a changed environment applies), else `default`."""
    return Path(os.environ.get(MODELS_ENV) or default).expanduser().resolve()


def model_ids(folder: Path) -> list[str]:
    """The model folders directly under `folder`: the default model first, then English-to-X, then the rest."""
    if not folder.is_dir():
        return []
    root = folder.resolve()
    ids = sorted(p.name for p in folder.iterdir()                # a linked folder only when it stays inside
                 if p.is_dir() and p.resolve().is_relative_to(root) and (p / "config.json").is_file())
    return sorted(ids, key=lambda m: (m != DEFAULT_MODEL, not m.startswith("en-"), m))


# Text files beside the weights that the app and the lesson read, each read only when stat() says it is a regular
# file within its limit (config.json, tokenizer.json, metrics.json and the weights have theirs in checkpoint.py).
MODEL_FILE_LIMITS = {"presets.txt": MiB, "README.md": MiB, "README.zh.md": MiB, "train_log.csv": 8 * MiB,
                     "test.tsv": 8 * MiB, "everyday_test.tsv": 8 * MiB}


def model_file_text(folder: Path, name: str) -> str | None:
    """One of MODEL_FILE_LIMITS' files of a model folder (None when absent); a ValueError naming the file when it
    is not a regular file or is bigger than its limit. A bad byte costs one character."""
    path = Path(folder) / name
    if not (path.exists() or path.is_symlink()):
        return None
    return read_text_limited(path, MODEL_FILE_LIMITS[name], errors="replace", within=path.parent)
