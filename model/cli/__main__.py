"""`transformer-viz COMMAND ...` (installed) or `python -m model.cli COMMAND ...`: one entry point for every
command-line tool."""
from __future__ import annotations

import importlib
import sys

from model.cli.arguments import fail

COMMANDS = {
    "app": "start the web app (streamlit run app.py; extra arguments go to streamlit)",
    "lesson": "write one sentence's guided lesson as a single offline HTML file",
    "translate": "translate text with a model folder",
    "trace": "capture a Trace of one sentence to an .npz file",
    "train": "train a toy task model or the en-es translator",
    "evaluate": "BLEU and chrF of a model on a test TSV",
    "export": "export a training run to a shipped model folder",
    "data": "build the en-es corpus from the SWORD Bible modules",
    "examples": "choose a model's example sentences by measuring them (presets.txt)",
    "sweep": "train a few settings side by side and rank them on the dev set",
    "judge": "should a retrained model replace the shipped one? (dev, test, repeats, everyday, size)",
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    commands = "\n".join(f"  {name:<{width}}  {text}" for name, text in COMMANDS.items())
    return f"usage: transformer-viz COMMAND [options]   (or: python -m model.cli COMMAND)\n\ncommands:\n{commands}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(usage(), file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(f"model.cli.{argv[0]}")
    sys.argv[0] = f"{sys.argv[0]} {argv[0]}"
    try:
        result = module.main(argv[1:])
    except (ValueError, OSError) as e:   # a person's mistake, one line and no traceback: InputError, CheckpointError,
        return fail(e)                   # a file read_tsv refuses and a device pick_device refuses are ValueErrors
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
