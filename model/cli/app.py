"""Start the web app: `streamlit run app.py` from wherever you are; extra arguments go to streamlit.

    python -m model.cli app --server.port 8600
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"


def command(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(APP), *argv]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not APP.is_file():
        print(f"error: {APP} not found: the app runs from the source tree (app.py, viz/pages/, pretrained/)",
              file=sys.stderr)
        return 2
    cmd = command(argv)
    os.chdir(ROOT)   # streamlit reads .streamlit/config.toml (upload limit, error details) from the working folder
    os.execv(cmd[0], cmd)   # replaces this process: Ctrl+C and the exit status are streamlit's own


if __name__ == "__main__":
    sys.exit(main())
