"""The tools that check, as pyproject.toml configures them; the README's test command runs them with the rest.

ruff over the whole tree ([tool.ruff]): no finding, and every `# noqa` names its rule and is still needed (RUF100);
`ruff check .` alone is the same. mypy over model/ ([tool.mypy]: every function body checked, every
`# type: ignore` naming its error code and still needed); `mypy` alone in the root is the same."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run([ruff, "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_mypy_finds_nothing_in_model():
    # The files and settings come from pyproject.toml; the cache (.mypy_cache, which ignores itself) makes a rerun fast.
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
