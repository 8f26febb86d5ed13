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


BAD_CALLS = {  # a person's mistakes with every command that reads a model or a file: one line, exit 2
    "trace, missing model": (["trace", "--model", "no-such-model", "--text", "a", "--out", "t.npz"], "no such model folder"),
    "trace, unreadable text": (["trace", "--model", str(TOY), "--text", "Hello", "--out", "t.npz"], "cannot read 'Hello'"),
    "translate, unreadable text": (["translate", "--model", str(TOY), "Hello"], "cannot read 'Hello'"),
    "translate, unreadable file line": (["translate", "--model", str(TOY), "--input",
                                         str(ROOT / "docs/examples/everyday.tsv")], "only reads the symbols"),
    "evaluate, missing test file": (["evaluate", "--model", str(TOY), "--test", "no-such.tsv"], "no-such.tsv"),
    "export, missing run": (["export", "--run", "no-such-run", "--out", "x"], "no such model folder"),
    "examples, missing model": (["examples", "--model", "no-such-model", "--test", "x", "--everyday", "y"],
                                "no such model folder"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_every_command_says_a_persons_mistake_in_one_line(tmp_path, case):
    argv, said = BAD_CALLS[case]
    result = run_cli(*argv, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert said in result.stderr


def test_translate_reads_the_english_column_of_a_test_set(tmp_path):
    from model.cli.translate import read_lines

    (tmp_path / "pairs.tsv").write_text("en\tes\na b\tb a\n\tvacío\nc\tc\n", encoding="utf-8")
    (tmp_path / "lines.txt").write_text("en\ta b\n\nc\n", encoding="utf-8")     # no header: every line as it is
    assert read_lines(str(tmp_path / "pairs.tsv")) == ["a b", "", "c"]
    assert read_lines(str(tmp_path / "lines.txt")) == ["en\ta b", "", "c"]
