"""`python -m model.cli`: the command list, and the lesson command's file and one-line errors (exit 2)."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

TOY = ROOT / "pretrained" / "toy-reverse"


def run_cli(*args, cwd) -> subprocess.CompletedProcess:
    """From any working directory, as an installed `transformer-viz` would run (model paths as given)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "model.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_help_lists_every_command(tmp_path):
    result = run_cli("--help", cwd=tmp_path)
    assert result.returncode == 0
    for command in ("app", "lesson", "translate", "trace", "train", "evaluate", "export", "data"):
        assert f"  {command} " in result.stdout


def test_unknown_command_exits_2(tmp_path):
    assert run_cli("nope", cwd=tmp_path).returncode == 2


def test_lesson_writes_a_file_with_a_relative_model_path(tmp_path):
    model = os.path.relpath(TOY, tmp_path)
    result = run_cli("lesson", "--model", model, "--text", "c a f e", "--out", "lesson.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "lesson.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "toy-reverse" in page


@pytest.mark.parametrize("case", ["missing model", "empty text", "unwritable output"])
def test_lesson_errors_are_one_line_and_exit_2(tmp_path, case):
    model, text, out = str(TOY), "c a f e", str(tmp_path / "lesson.html")
    if case == "missing model":
        model = str(tmp_path / "no-such-model")
    elif case == "empty text":
        text = "   "
    else:
        out = str(tmp_path / "no-such-folder" / "lesson.html")
    result = run_cli("lesson", "--model", model, "--text", text, "--out", out, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert {"missing model": "no such model folder", "empty text": "empty",
            "unwritable output": "cannot write"}[case] in result.stderr


def test_app_runs_streamlit_on_the_repository_app_from_its_folder(monkeypatch):
    """From the repository folder, so that streamlit reads its .streamlit/config.toml."""
    from model.cli import app
    calls = []
    monkeypatch.setattr(app.os, "chdir", lambda path: calls.append(("chdir", path)))
    monkeypatch.setattr(app.os, "execv", lambda exe, cmd: calls.append(("execv", cmd)))
    app.main(["--server.port", "8600"])
    assert calls == [("chdir", ROOT),
                     ("execv", [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", "8600"])]
