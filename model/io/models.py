"""Where the models are: one lookup for the app and every command.

The models folder is, first found: --models (a command's argument), $TRANSFORMER_VIZ_MODELS, the source
tree's pretrained/ when this code runs from a source tree, else the installed share folder
(<prefix>/share/transformer-viz/pretrained, pyproject.toml's data-files). A model is named by its folder's name
in it (en-es, toy-reverse) or given as a folder path.

Beside the shipped models (when neither --models nor the variable chooses), a person's own models folder is
listed too: $XDG_DATA_HOME/transformer-viz/models, ~/.local/share/transformer-viz/models by default, where
`import` suggests putting a model (the shipped folder of an installed copy is not theirs to write, and a model
imported into the source tree's pretrained/ looked like one more shipped model). A name found in both is the
shipped one.
"""
from __future__ import annotations

import os
import sysconfig
from pathlib import Path

from model.errors import CheckpointError
from model.io.files import MiB, read_text_limited

MODELS_ENV = "TRANSFORMER_VIZ_MODELS"
DEFAULT_MODEL = "en-es"
SHARE = ("share", "transformer-viz")
SOURCE_TREE = Path(__file__).resolve().parents[2]      # the repository; site-packages once installed


def is_source_tree(root: Path = SOURCE_TREE) -> bool:
    return (root / "pyproject.toml").is_file() and (root / "app.py").is_file()


def installed_homes() -> list[Path]:
    """Where pip puts the data files: this interpreter's prefix (a venv's), then the user's (--user)."""
    schemes = dict.fromkeys([sysconfig.get_default_scheme(), sysconfig.get_preferred_scheme("user")])
    return [Path(sysconfig.get_path("data", scheme)).joinpath(*SHARE) for scheme in schemes]


def shipped_models_folder() -> Path:
    """The shipped models: the source tree's pretrained/, else the first installed share folder that exists."""
    if is_source_tree():
        return SOURCE_TREE / "pretrained"
    homes = installed_homes()
    return next((h / "pretrained" for h in homes if (h / "pretrained").is_dir()), homes[0] / "pretrained")


def models_source(models: str | os.PathLike | None = None, default: Path | None = None) -> tuple[Path, str]:
    """(the models folder, which setting chose it: '--models', '$TRANSFORMER_VIZ_MODELS' or 'the shipped models'):
    `models` (a command's --models), else the operator's setting (read on every call), else `default`, else the
    shipped models."""
    if models is not None and str(models).strip():
        return Path(models).expanduser().resolve(), "--models"
    if os.environ.get(MODELS_ENV, "").strip():
        return Path(os.environ[MODELS_ENV]).expanduser().resolve(), f"${MODELS_ENV}"
    return Path(default or shipped_models_folder()).expanduser().resolve(), "the shipped models"


def user_models_folder() -> Path:
    """A person's own models, listed beside the shipped ones: $XDG_DATA_HOME/transformer-viz/models (the XDG base
    directory rule), ~/.local/share/transformer-viz/models by default."""
    base = os.environ.get("XDG_DATA_HOME", "").strip() or Path.home() / ".local" / "share"
    return Path(base).expanduser().joinpath(SHARE[1], "models").resolve()


def models_folders(models: str | os.PathLike | None = None, default: Path | None = None) -> tuple[list[Path], str]:
    """(the folders whose models are listed, in order, and which setting chose them): models_source's folder,
    followed by user_models_folder() when the shipped models were chosen."""
    folder, chosen_by = models_source(models, default)
    if chosen_by != "the shipped models":
        return [folder], chosen_by
    return [folder, user_models_folder()], f"the shipped models, then yours in {user_models_folder()}"


def listed_models(folders: list[Path]) -> dict[str, Path]:
    """Name -> folder of every model in `folders` (the first folder's of a name found twice), the default first."""
    found: dict[str, Path] = {}
    for folder in folders:
        for name in model_ids(folder):
            found.setdefault(name, folder / name)
    return dict(sorted(found.items(), key=lambda item: _listing_order(item[0])))


def _listing_order(name: str) -> tuple:
    return name != DEFAULT_MODEL, not name.startswith("en-"), name


def models_folder(default: Path | None = None) -> Path:
    """The folder the app and the commands read models from, when no --models is given."""
    return models_source(None, default)[0]


def model_ids(folder: Path) -> list[str]:
    """The model folders (each with a config.json) directly under `folder`: the default model first."""
    if not folder.is_dir():
        return []
    root = folder.resolve()
    names = sorted(p.name for p in folder.iterdir()              # a linked folder only when it stays inside
                   if p.is_dir() and p.resolve().is_relative_to(root) and (p / "config.json").is_file())
    return sorted(names, key=_listing_order)


def find_model(model: str | os.PathLike = DEFAULT_MODEL, models: str | os.PathLike | None = None) -> Path:
    """The folder of `model`: a folder path as it is, else a name in the models folder. CheckpointError,
    saying where it looked and which models are there, when neither."""
    text = str(model).strip()
    if not text:
        raise CheckpointError("no model given: give a name such as en-es, or a model folder")
    if Path(text).expanduser().is_dir():
        return Path(text).expanduser()
    folders, _ = models_folders(models)
    if Path(text).name == text and text not in (".", ".."):
        named = next((folder / text for folder in folders if (folder / text).is_dir()), None)
        if named is not None:
            return named
    folder, chosen_by = models_source(models)
    known = model_ids(folder)
    there = f"the models there: {', '.join(known)}" if known else "no model there"
    yours = (f", nor in your models folder {folders[1]} ({', '.join(model_ids(folders[1])) or 'none there'})"
             if len(folders) > 1 else "")
    raise CheckpointError(f"{text}: no such model folder, and no model of that name in {folder} ({chosen_by}; "
                          f"{there}){yours}; give a folder, a name, --models DIR or ${MODELS_ENV}")


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
