"""Start the web app (`streamlit run app.py`) from wherever you are; extra arguments go to streamlit.

    transformer-viz app [--models DIR] [streamlit options, e.g. --server.port 8600]

It lives beside `lesson`, above model/ and viz/: it starts the app, which the library does not know about.

From the source tree it runs app.py there. After `pip install .` it runs the installed transformer_viz_app.py
(beside viz/ in site-packages) from <prefix>/share/transformer-viz, which holds .streamlit/config.toml and the
shipped models (pyproject.toml's data-files). The models come from --models DIR, else $TRANSFORMER_VIZ_MODELS,
else the shipped ones and your own models folder beside them, ~/.local/share/transformer-viz/models
(model/io/models.py: the lookup every command and the app share).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from model.io.models import (MODELS_ENV, SOURCE_TREE, installed_homes, is_source_tree, listed_models, model_ids,
                             models_folders)

ENTRY = "transformer_viz_app"                   # the installed entry script (a top-level module)


def locate() -> tuple[Path, Path] | None:
    """(the script to run, the folder to run it from: .streamlit/config.toml and pretrained/), or None."""
    if is_source_tree():
        return SOURCE_TREE / "app.py", SOURCE_TREE
    spec = importlib.util.find_spec(ENTRY)            # finds the file without running it
    home = next((h for h in installed_homes() if h.is_dir()), None)
    if spec is None or spec.origin is None or home is None:
        return None
    return Path(spec.origin), home


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The app's own options (--models, --help); every other argument goes to `streamlit run`."""
    parser = argparse.ArgumentParser(
        description="Start the web app (streamlit run app.py).",
        epilog="Any other option goes to `streamlit run`, e.g. --server.port 8600 or --server.address 0.0.0.0\n"
               "(the list: streamlit run --help).", formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False)     # --mod is not --models: an option streamlit might know stays streamlit's
    parser.add_argument("--models", metavar="DIR", default=None,
                        help=f"the folder that holds the models (default: ${MODELS_ENV}, else the shipped models and "
                             "yours in ~/.local/share/transformer-viz/models)")
    return parser.parse_known_args(argv)


def command(app: Path, argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(app), *argv]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args, argv = parse(argv)
    found = locate()
    if found is None:
        print(f"error: the app's files are missing ({ENTRY}.py, or the data folder: looked in "
              + ", ".join(str(h) for h in installed_homes()) + "): reinstall with `pip install .` from the source "
              "tree, or run `streamlit run app.py` there", file=sys.stderr)
        return 2
    app, home = found
    folders, where = models_folders(args.models)
    if not listed_models(folders):
        print(f"error: no model under {folders[0]} ({where}; a model is a folder with config.json, model.safetensors "
              f"and tokenizer.json): give --models DIR or set {MODELS_ENV}", file=sys.stderr)
        return 2
    for folder in folders:
        if model_ids(folder):
            print(f"models from {folder}: {', '.join(model_ids(folder))}", flush=True)
    if args.models is not None:
        os.environ[MODELS_ENV] = str(folders[0])   # for the app (this process becomes streamlit just below)
    cmd = command(app, argv)
    os.chdir(home)   # streamlit reads .streamlit/config.toml (upload limit, error details) from the working folder
    os.execv(cmd[0], cmd)   # replaces this process: Ctrl+C and the exit status are streamlit's own


if __name__ == "__main__":
    sys.exit(main())
