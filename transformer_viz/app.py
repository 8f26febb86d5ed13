"""Start the web app (`streamlit run app.py`) from wherever you are; extra arguments go to streamlit.

    transformer-viz app [--models DIR] [streamlit options, e.g. --server.port 8600]

It lives beside `lesson`, above model/ and viz/: it starts the app, which the library does not know about.

From the source tree it runs app.py there. After `pip install .` it runs the installed transformer_viz_app.py
(beside viz/ in site-packages) from <prefix>/share/transformer-viz, which holds .streamlit/config.toml and the
shipped models (pyproject.toml's data-files). The models come from --models DIR, else $TRANSFORMER_VIZ_MODELS,
else the home's pretrained/ (model/io/models.py, which the app's picker reads too).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

from model.io.models import MODELS_ENV, model_ids, models_folder

ROOT = Path(__file__).resolve().parents[1]      # the source tree; site-packages once installed
SHARE = ("share", "transformer-viz")
ENTRY = "transformer_viz_app"                   # the installed entry script (a top-level module)


def installed_homes() -> list[Path]:
    """Where pip puts the data files: this interpreter's prefix (a venv's), then the user's (--user)."""
    schemes = dict.fromkeys([sysconfig.get_default_scheme(), sysconfig.get_preferred_scheme("user")])
    return [Path(sysconfig.get_path("data", scheme)).joinpath(*SHARE) for scheme in schemes]


def locate() -> tuple[Path, Path] | None:
    """(the script to run, the folder to run it from: .streamlit/config.toml and pretrained/), or None."""
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "app.py").is_file():
        return ROOT / "app.py", ROOT
    spec = importlib.util.find_spec(ENTRY)            # finds the file without running it
    home = next((h for h in installed_homes() if h.is_dir()), None)
    if spec is None or spec.origin is None or home is None:
        return None
    return Path(spec.origin), home


def take_models(argv: list[str]) -> tuple[str | None, list[str]]:
    """--models DIR (or --models=DIR) out of argv; the rest goes to streamlit."""
    rest, models, i = [], None, 0
    while i < len(argv):
        if argv[i] == "--models":
            if i + 1 >= len(argv):
                raise ValueError("--models needs a folder")
            models, i = argv[i + 1], i + 2
            continue
        if argv[i].startswith("--models="):
            models = argv[i].split("=", 1)[1]
        else:
            rest.append(argv[i])
        i += 1
    return models, rest


def command(app: Path, argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(app), *argv]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    models_arg, argv = take_models(argv)
    found = locate()
    if found is None:
        print(f"error: the app's files are missing ({ENTRY}.py, or the data folder: looked in "
              + ", ".join(str(h) for h in installed_homes()) + "): reinstall with `pip install .` from the source "
              "tree, or run `streamlit run app.py` there", file=sys.stderr)
        return 2
    app, home = found
    models = Path(models_arg).expanduser().resolve() if models_arg else models_folder(home / "pretrained")
    names = model_ids(models)
    if not names:
        where = "--models" if models_arg else MODELS_ENV if os.environ.get(MODELS_ENV) else "the shipped models"
        print(f"error: no model under {models} ({where}; a model is a folder with config.json, model.safetensors "
              f"and tokenizer.json): give --models DIR or set {MODELS_ENV}", file=sys.stderr)
        return 2
    print(f"models from {models}: {', '.join(names)}", flush=True)
    if models != (ROOT / "pretrained").resolve():
        os.environ[MODELS_ENV] = str(models)      # for the app (this process becomes streamlit just below)
    cmd = command(app, argv)
    os.chdir(home)   # streamlit reads .streamlit/config.toml (upload limit, error details) from the working folder
    os.execv(cmd[0], cmd)   # replaces this process: Ctrl+C and the exit status are streamlit's own


if __name__ == "__main__":
    sys.exit(main())
