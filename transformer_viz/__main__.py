"""`transformer-viz COMMAND ...` (installed) or `python -m transformer_viz COMMAND ...`: one entry point for
every command-line tool: model/cli's, and the ones here that need the app's figures and words as well."""
from __future__ import annotations

import sys
from pathlib import Path

from model.cli.__main__ import COMMANDS as LIBRARY_COMMANDS
from model.cli.__main__ import dispatch

COMMANDS = {
    **LIBRARY_COMMANDS,
    "app": ("transformer_viz.app", "start the web app (streamlit run app.py; extra arguments go to streamlit)"),
    "lesson": ("transformer_viz.lesson", "write one sentence's guided lesson as a single offline HTML file"),
    "figure": ("transformer_viz.figure", "write every figure of one sentence's tour as PDF, SVG or PNG (slides, papers)"),
}


def main(argv: list[str] | None = None) -> int:
    program = "transformer-viz" if Path(sys.argv[0]).name == "transformer-viz" else "python -m transformer_viz"
    return dispatch(sys.argv[1:] if argv is None else argv, COMMANDS, "transformer-viz COMMAND [options]   "
                    "(or: python -m transformer_viz COMMAND)", program)


if __name__ == "__main__":
    sys.exit(main())
