"""Which models there are: the folders under one models folder that hold a config.json. The app's model picker
and the `app` command both ask here, so they always list the same models.

The models folder is the operator's TRANSFORMER_VIZ_MODELS, else the default the caller gives (the source
tree's or the installed pretrained/). Models are only ever read from it: never from a path a user typed.
"""
from __future__ import annotations

import os
from pathlib import Path

MODELS_ENV = "TRANSFORMER_VIZ_MODELS"
DEFAULT_MODEL = "en-es"


def models_folder(default: Path) -> Path:
    """The operator's models folder (read on every call, so a changed environment applies), else `default`."""
    return Path(os.environ.get(MODELS_ENV) or default).expanduser().resolve()


def model_ids(folder: Path) -> list[str]:
    """The model folders directly under `folder`: the default model first, then English-to-X, then the rest."""
    if not folder.is_dir():
        return []
    ids = sorted(p.name for p in folder.iterdir() if p.is_dir() and (p / "config.json").is_file())
    return sorted(ids, key=lambda m: (m != DEFAULT_MODEL, not m.startswith("en-"), m))
