"""`transformer-viz` (python -m transformer_viz): the command list, and the lesson command's file and one-line
errors (exit 2)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

TOY = ROOT / "pretrained" / "toy-reverse"


def run_cli(*args, cwd) -> subprocess.CompletedProcess:
    """From any working directory, as an installed `transformer-viz` would run (model paths as given)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "transformer_viz", *args], cwd=cwd, env=env, capture_output=True,
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


def test_app_help_is_the_apps_own_and_errors_name_the_program(tmp_path):
    """`app --help` printed Streamlit's generic help (no --models); errors said `__main__.py translate: error`."""
    app_help = run_cli("app", "--help", cwd=tmp_path)
    assert app_help.returncode == 0 and "--models DIR" in app_help.stdout, app_help.stdout
    assert "streamlit run --help" in app_help.stdout and "Usage: streamlit" not in app_help.stdout
    wrong = run_cli("translate", "--beam", "0", "a", cwd=tmp_path)
    assert "python -m transformer_viz translate: error: argument --beam" in wrong.stderr, wrong.stderr
    assert "__main__.py" not in wrong.stderr


def test_app_runs_streamlit_on_the_repository_app_from_its_folder(monkeypatch):
    """From the repository folder, so that streamlit reads its .streamlit/config.toml."""
    from transformer_viz import app
    calls = []
    monkeypatch.setattr(app.os, "chdir", lambda path: calls.append(("chdir", path)))
    monkeypatch.setattr(app.os, "execv", lambda exe, cmd: calls.append(("execv", cmd)))
    app.main(["--server.port", "8600"])
    assert calls == [("chdir", ROOT),
                     ("execv", [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", "8600"])]


def test_a_model_is_a_name_or_a_folder_from_one_lookup(tmp_path, monkeypatch):
    """--model en-es, a folder, --models DIR and $TRANSFORMER_VIZ_MODELS: one lookup (model/io/models.py) for
    every command and the app; a name it cannot find says where it looked and what is there."""
    from model.errors import CheckpointError
    from model.io.models import MODELS_ENV, find_model, models_source
    monkeypatch.delenv(MODELS_ENV, raising=False)
    assert find_model("en-es") == ROOT / "pretrained" / "en-es" and find_model() == find_model("en-es")
    assert find_model(str(TOY)) == TOY
    assert models_source() == (ROOT / "pretrained", "the shipped models")
    shutil.copytree(TOY, tmp_path / "mine")
    assert find_model("mine", models=tmp_path) == tmp_path / "mine"
    monkeypatch.setenv(MODELS_ENV, str(tmp_path))
    assert find_model("mine") == tmp_path / "mine" and models_source()[1] == f"${MODELS_ENV}"
    with pytest.raises(CheckpointError, match=rf"en-es: .* in {tmp_path} \(\${MODELS_ENV}; the models there: mine\)"):
        find_model("en-es")
    with pytest.raises(CheckpointError, match="no such model folder"):
        find_model("../pretrained/en-es")       # a name is a folder's name, never a path out of the models folder


def test_every_command_takes_a_model_name_and_defaults_to_en_es(tmp_path):
    toy = run_cli("translate", "--model", "toy-reverse", "a b c", cwd=tmp_path)
    assert (toy.returncode, toy.stdout) == (0, "c b a\n"), toy.stderr
    shutil.copytree(TOY, tmp_path / "models" / "mine")
    mine = run_cli("trace", "--models", tmp_path / "models", "--model", "mine", "--text", "a b", "--out", "t.npz",
                   cwd=tmp_path)
    assert mine.returncode == 0 and "output: b a" in mine.stdout, mine.stderr
    default = run_cli("translate", "The man went to the house.", cwd=tmp_path)
    assert (default.returncode, default.stdout) == (0, "El hombre fue a la casa.\n"), default.stderr


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
    "evaluate, a test file without the header": (["evaluate", "--model", str(TOY), "--test", str(ROOT / "README.md"),
                                                  "--out", "m.json"], "README.md: expected the header line"),
    "evaluate, --beam 0": (["evaluate", "--model", str(TOY), "--test", "t.tsv", "--out", "m.json", "--beam", "0"],
                           "argument --beam: must be 1 or more, got 0"),
    "translate, unknown device": (["translate", "--model", str(TOY), "--device", "tpu", "a b"],
                                  "unknown device 'tpu'"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_every_command_says_a_persons_mistake_in_one_line(tmp_path, case):
    argv, said = BAD_CALLS[case]
    result = run_cli(*argv, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert said in error_line(result.stderr)


def error_line(stderr: str) -> str:
    """The one error line of a failed call: `error: ...` alone, or argparse's usage lines and then
    `PROG: error: argument --beam: ...` (argparse's own format for a bad argument)."""
    *usage, last = stderr.splitlines() or [""]
    assert not usage or (usage[0].startswith("usage: ") and all(line.startswith(" ") for line in usage[1:])), stderr
    assert last.startswith("error: ") or (usage and ": error: " in last), stderr
    return last



LATIN1 = "en\tes\ncafé\tcafé\n".encode("latin-1")
HOSTILE_FILES = {  # under the folder TMP the calls below name, beside TMP/toy, a copy of the toy model
    "ok.tsv": "en\tes\na b c\tc b a\n", "header-only.tsv": "en\tes\n", "empty.tsv": "",
    "wrong-header.tsv": "x\ty\na b\tb a\n", "latin1.tsv": LATIN1,
    "list.json": "[1, 2]\n", "latin1.json": '{"note": "café"}'.encode("latin-1"),
    "latin1-data/dev.tsv": LATIN1, "latin1-data/test.tsv": "en\tes\na b\tb a\n",
    "header-only-data/dev.tsv": "en\tes\n", "header-only-data/test.tsv": "en\tes\na b\tb a\n",
    "bad-tok-data/train.tsv": "en\tes\na b\tb a\n", "bad-tok-data/dev.tsv": "en\tes\na b\tb a\n",
    "bad-tok-data/tokenizer.json": '{"not": "a tokenizer"}',
    "fifo-tok-data/train.tsv": "en\tes\na b\tb a\n", "fifo-tok-data/dev.tsv": "en\tes\na b\tb a\n",
    "ok-data/train.tsv": "en\tes\na b\tb a\n", "ok-data/dev.tsv": "en\tes\na b\tb a\n",
}
EVALUATE = ["evaluate", "--model", "TMP/toy", "--out", "TMP/metrics.json", "--test"]
EXAMPLES = ["examples", "--model", "TMP/toy", "--start", "a b", "--test"]
SWEEP = ["sweep", "--minutes", "1", "--out", "TMP/sweep", "--data", "TMP/latin1-data"]
TRANSLATE = ["translate", "--model", "TMP/toy"]
RESUME = ["train", "--task", "translate", "--data", "TMP/ok-data", "--resume", "--out"]
MISTAKES = {  # more of a person's mistakes, called in-process (seconds for the table): the error line says
    "evaluate, wrong header": (EVALUATE + ["TMP/wrong-header.tsv"], "wrong-header.tsv: expected the header line"),
    "evaluate, empty test file": (EVALUATE + ["TMP/empty.tsv"], "empty.tsv: expected the header line"),
    "evaluate, test file not UTF-8": (EVALUATE + ["TMP/latin1.tsv"], "latin1.tsv: not UTF-8"),
    "evaluate, header only": (EVALUATE + ["TMP/header-only.tsv"], "header-only.tsv: no pairs"),
    "evaluate, --limit -5": (EVALUATE + ["TMP/ok.tsv", "--limit", "-5"], "argument --limit: must be 1 or more"),
    "evaluate, --beam 0": (EVALUATE + ["TMP/ok.tsv", "--beam", "0"], "argument --beam: must be 1 or more"),
    "translate, --max-tokens 100000": (["translate", "--model", "TMP/toy", "--max-tokens", "100000", "a b"],
                                       "argument --max-tokens: at most 512"),
    "trace, empty --target": (["trace", "--model", "TMP/toy", "--text", "a b", "--target", " ", "--out", "TMP/t.npz"],
                              "argument --target: empty"),
    "train, --dropout 5": (["train", "--task", "reverse", "--out", "TMP/run", "--dropout", "5"],
                           "argument --dropout: must be at least 0 and below 1"),
    "train, --lr nan": (["train", "--task", "reverse", "--out", "TMP/run", "--lr", "nan"],
                        "argument --lr: must be a finite number"),
    "train, --smoothing -0.1": (["train", "--task", "reverse", "--out", "TMP/run", "--smoothing", "-0.1"],
                                "argument --smoothing: must be at least 0"),
    "evaluate, --beam 100000": (EVALUATE + ["TMP/ok.tsv", "--beam", "100000"], "argument --beam: at most 16"),
    "evaluate, --threads 0": (EVALUATE + ["TMP/ok.tsv", "--threads", "0"], "argument --threads: must be 1 or more"),
    "evaluate, metrics file not UTF-8": (EVALUATE + ["TMP/ok.tsv", "--out", "TMP/latin1.json"],
                                         "latin1.json: not a JSON object"),
    "evaluate, metrics file a JSON list": (EVALUATE + ["TMP/ok.tsv", "--out", "TMP/list.json"],
                                           "list.json: not a JSON object"),
    "examples, test file not UTF-8": (EXAMPLES + ["TMP/latin1.tsv", "--everyday", "TMP/ok.tsv"], "latin1.tsv: not UTF-8"),
    "examples, wrong header": (EXAMPLES + ["TMP/ok.tsv", "--everyday", "TMP/wrong-header.tsv"], "wrong-header.tsv"),
    "examples, --pairs 0": (EXAMPLES + ["TMP/ok.tsv", "--everyday", "TMP/ok.tsv", "--pairs", "0"], "argument --pairs"),
    "examples, header only": (EXAMPLES + ["TMP/header-only.tsv", "--everyday", "TMP/ok.tsv"], "header-only.tsv: no pairs"),
    "examples, -n -1": (EXAMPLES + ["TMP/ok.tsv", "--everyday", "TMP/ok.tsv", "-n", "-1"], "argument -n"),
    "examples, a start sentence the model cannot read": (
        ["examples", "--model", "TMP/toy", "--test", "TMP/ok.tsv", "--everyday", "TMP/ok.tsv"],
        "argument --start: this toy model only reads"),
    "judge, dev.tsv not UTF-8": (["judge", "--candidate", "TMP/toy", "--baseline", "TMP/toy", "--data", "TMP/latin1-data"],
                                 "dev.tsv: not UTF-8"),
    "judge, empty dev.tsv": (["judge", "--candidate", "TMP/toy", "--baseline", "TMP/toy", "--data",
                              "TMP/header-only-data"], "dev.tsv: no pairs"),
    "sweep, --grid not JSON": (SWEEP + ["--grid", "not json"], "argument --grid: not JSON"),
    "sweep, --grid a list": (SWEEP + ["--grid", "[1, 2]"], "argument --grid: expected"),
    "sweep, --grid with a number": (SWEEP + ["--grid", '{"x": {"--f": 1}}'], "argument --grid: expected"),
    "sweep, --only an unknown run": (SWEEP + ["--only", "base,nosuchrun"], "argument --only: no run named 'nosuchrun'"),
    "sweep, --common with an open quote": (SWEEP + ["--common", "'x"], "argument --common: No closing quotation"),
    "translate, --device tpu": (TRANSLATE + ["--device", "tpu", "a b"], "unknown device 'tpu'"),
    "lesson, --device tpu": (["lesson", "--model", "TMP/toy", "--text", "a b", "--out", "TMP/l.html", "--device", "tpu"],
                             "unknown device 'tpu'"),
    "translate --input, --beam 0": (TRANSLATE + ["--input", "TMP/ok.tsv", "--beam", "0"], "argument --beam"),
    "translate, --beam -3": (TRANSLATE + ["a b", "--beam", "-3"], "argument --beam: must be 1 or more, got -3"),
    "translate, --max-tokens 0": (TRANSLATE + ["a b", "--max-tokens", "0"], "argument --max-tokens"),
    "translate, --batch-tokens -5": (TRANSLATE + ["--input", "TMP/ok.tsv", "--batch-tokens", "-5"],
                                     "argument --batch-tokens"),
    "trace, --names matching nothing": (["trace", "--model", "TMP/toy", "--text", "a b", "--out", "TMP/t.npz",
                                         "--names", "nomatch*"], "--names: nothing captured matches 'nomatch*'"),
    "export, --average 0": (["export", "--run", "TMP/run", "--out", "TMP/x", "--average", "0"], "argument --average"),
    "export, --average -1": (["export", "--run", "TMP/run", "--out", "TMP/x", "--average", "-1"], "argument --average"),
    # issue 27, finding 8: input files with a size limit, and nothing that is not a regular file
    "translate --input /dev/zero": (TRANSLATE + ["--input", "/dev/zero"], "/dev/zero: a device, not a regular file"),
    "translate --input a FIFO": (TRANSLATE + ["--input", "TMP/fifo"], "fifo: a pipe (FIFO), not a regular file"),
    "translate --input a folder": (TRANSLATE + ["--input", "TMP"], "a folder, not a regular file"),
    "translate --input over the limit": (TRANSLATE + ["--input", "TMP/huge.txt"], "huge.txt: 67,108,865 bytes, more than"),
    "evaluate --test /dev/zero": (EVALUATE + ["/dev/zero"], "/dev/zero: a device, not a regular file"),
    "evaluate --test a FIFO": (EVALUATE + ["TMP/fifo"], "fifo: a pipe (FIFO), not a regular file"),
    "examples --test /dev/zero": (EXAMPLES + ["/dev/zero", "--everyday", "TMP/ok.tsv"], "/dev/zero: a device"),
    "examples --everyday a FIFO": (EXAMPLES + ["TMP/ok.tsv", "--everyday", "TMP/fifo"], "fifo: a pipe (FIFO)"),
    # finding 9: train's data, options that do not apply, and its output folder, before any training
    "train --data /dev/zero": (["train", "--task", "translate", "--data", "/dev/zero", "--out", "TMP/run"],
                               "--data /dev/zero: a device, not a corpus folder; build it with"),
    "train --data an empty folder": (["train", "--task", "translate", "--data", "TMP/empty-data", "--out", "TMP/run"],
                                     "no train.tsv, no dev.tsv, no tokenizer.json in it"),
    "train --data with a broken tokenizer": (["train", "--task", "translate", "--data", "TMP/bad-tok-data",
                                              "--out", "TMP/run"], "tokenizer.json: not a usable tokenizer"),
    "train --data with a FIFO for a tokenizer": (["train", "--task", "translate", "--data", "TMP/fifo-tok-data",
                                                  "--out", "TMP/run"], "no tokenizer.json in it"),
    "train reverse --d-model": (["train", "--task", "reverse", "--out", "TMP/run", "--d-model", "512"],
                                "argument --d-model: applies to --task translate only"),
    "train reverse --layers": (["train", "--task", "reverse", "--out", "TMP/run", "--layers", "6"],
                               "argument --layers: applies to --task translate only"),
    "train reverse --heads": (["train", "--task", "reverse", "--out", "TMP/run", "--heads", "4"],
                              "argument --heads: applies to --task translate only"),
    "train reverse --init-from": (["train", "--task", "reverse", "--out", "TMP/run", "--init-from", "/etc"],
                                  "argument --init-from: applies to --task translate only"),
    "train translate --steps": (["train", "--task", "translate", "--out", "TMP/run", "--steps", "5"],
                                "argument --steps: applies to the toy tasks only"),
    "train reverse --out /dev/full": (["train", "--task", "reverse", "--out", "/dev/full"],
                                      "--out /dev/full: a device, not a folder"),
    "train reverse --out a file": (["train", "--task", "reverse", "--out", "TMP/ok.tsv"], "ok.tsv: a file, not a folder"),
    "train translate --out /dev/full": (["train", "--task", "translate", "--data", "TMP/ok-data", "--out", "/dev/full"],
                                        "--out /dev/full: a device, not a folder"),
    # finding 10: trace writes the path given or refuses it
    "trace --out /dev/full": (["trace", "--model", "TMP/toy", "--text", "a b", "--out", "/dev/full"],
                              "--out /dev/full: a device, not a regular file; not written"),
    "trace --out ''": (["trace", "--model", "TMP/toy", "--text", "a b", "--out", ""], "--out: empty"),
    "trace --out a FIFO": (["trace", "--model", "TMP/toy", "--text", "a b", "--out", "TMP/fifo"],
                           "fifo: a pipe (FIFO), not a regular file; not written"),
    "trace --out in a missing folder": (["trace", "--model", "TMP/toy", "--text", "a b", "--out", "TMP/nope/t.npz"],
                                        "no folder"),
    "lesson --out a FIFO": (["lesson", "--model", "TMP/toy", "--text", "a b", "--out", "TMP/fifo"],
                            "fifo: a pipe (FIFO), not a regular file; not written"),
    "lesson --out /dev/full": (["lesson", "--model", "TMP/toy", "--text", "a b", "--out", "/dev/full"],
                               "--out /dev/full: a device, not a regular file"),
    # issue 35, item 18: tracebacks and hangs of the hostile class, each one sentence naming its file
    "train --resume, a cut-off optimizer.safetensors": (
        RESUME + ["TMP/run-cut"], "run-cut/last/optimizer.safetensors: corrupt or cut off"),
    "train --resume, \"epoch\": \"x\" in state.json": (
        RESUME + ["TMP/run-epoch-x"], 'run-epoch-x/last/state.json: "epoch" must be a whole number'),
    "train --resume, state.json not JSON": (RESUME + ["TMP/run-not-json"], "run-not-json/last/state.json: not valid JSON"),
    "train --resume, state.json a FIFO": (RESUME + ["TMP/run-fifo"], "run-fifo/last/state.json: a pipe (FIFO)"),
    "train --resume, a 300 MB state.json": (RESUME + ["TMP/run-huge"], "run-huge/last/state.json: 314,572,800 bytes"),
    "train --resume, state.json linked outside": (RESUME + ["TMP/run-link"],
                                                  "run-link/last/state.json: a symbolic link"),
    "train --resume, last/ missing beside an earlier run": (RESUME + ["TMP/run-no-last"],
                                                            "run-no-last/last is missing, so there is nothing to resume"),
    "train --init-from a model of another tokenizer kind": (
        ["train", "--task", "translate", "--data", "TMP/bpe-data", "--init-from", "TMP/toy", "--out", "TMP/run-init"],
        "--init-from: its tokenizer is WordLevel, the corpus's"),
    "evaluate --out /dev/full": (EVALUATE + ["TMP/ok.tsv", "--out", "/dev/full"],
                                 "--out /dev/full: a device, not a regular file; not written"),
    "evaluate --out a FIFO": (EVALUATE + ["TMP/ok.tsv", "--out", "TMP/fifo"], "fifo: a pipe (FIFO), not a regular file"),
    "evaluate --out ''": (EVALUATE + ["TMP/ok.tsv", "--out", ""], "--out: empty"),
    "evaluate --out a 300 MB metrics file": (EVALUATE + ["TMP/ok.tsv", "--out", "TMP/huge.json"], "huge.json: 314,572,800"),
    "train --threads 100000": (["train", "--task", "reverse", "--out", "TMP/run", "--threads", "100000"],
                               "argument --threads: at most 256, got 100000"),
    "train --steps 10**22": (["train", "--task", "reverse", "--out", "TMP/run", "--steps", str(10 ** 22)],
                             "argument --steps: '10000000000000000000'… (23 characters) is not a whole number"),
    "train --steps 2,000,000": (["train", "--task", "reverse", "--out", "TMP/run", "--steps", "2000000"],
                                "argument --steps: at most 1000000"),
    "train a 5000-digit --d-model": (["train", "--task", "translate", "--out", "TMP/run", "--d-model", "9" * 5000],
                                     "(5,000 characters) is not a whole number from 1 to 1,000,000,000"),
    "data --out /dev/full": (["data", "--out", "/dev/full"], "--out /dev/full: a device, not a folder"),
    "examples, presets.txt a FIFO": (
        ["examples", "--model", "TMP/toy-fifo-presets", "--test", "TMP/ok.tsv", "--everyday", "TMP/ok.tsv"],
        "toy-fifo-presets/presets.txt: a pipe (FIFO), not a regular file; not written"),
    "examples, presets.txt a link": (
        ["examples", "--model", "TMP/toy-link-presets", "--test", "TMP/ok.tsv", "--everyday", "TMP/ok.tsv"],
        "toy-link-presets/presets.txt: a symbolic link, not a file of its folder itself; not written"),
}


def make_runs(folder) -> None:
    """Training runs to --resume, each broken one way (MISTAKES), beside a folder holding an earlier run's log."""
    import torch
    from safetensors.torch import save_file
    from model.io.checkpoint import load_checkpoint
    model = load_checkpoint(TOY).model
    moments = {f"{n}.{m}": torch.zeros_like(p) for n, p in model.named_parameters() for m in ("exp_avg", "exp_avg_sq")}
    state = {"step": 5, "epoch": 0, "batch": 5, "seconds": 1.0, "tokens": 50}
    for run in ("run-cut", "run-epoch-x", "run-not-json", "run-fifo", "run-huge", "run-link"):
        shutil.copytree(TOY, folder / run / "last")
        save_file(moments, str(folder / run / "last" / "optimizer.safetensors"))
        (folder / run / "last" / "state.json").write_text(json.dumps(state))
    with open(folder / "run-cut" / "last" / "optimizer.safetensors", "r+b") as f:
        f.truncate(os.path.getsize(f.name) // 2)
    (folder / "run-epoch-x" / "last" / "state.json").write_text(json.dumps(state | {"epoch": "x"}))
    (folder / "run-not-json" / "last" / "state.json").write_text('{"step": 5,')
    for run in ("run-fifo", "run-huge", "run-link"):
        (folder / run / "last" / "state.json").unlink()
    os.mkfifo(folder / "run-fifo" / "last" / "state.json")
    with open(folder / "run-huge" / "last" / "state.json", "wb") as f:      # sparse: 300 MB of nothing
        f.truncate(300 * 2**20)
    (folder / "outside.json").write_text(json.dumps(state))
    (folder / "run-link" / "last" / "state.json").symlink_to(folder / "outside.json")
    (folder / "run-no-last").mkdir()
    (folder / "run-no-last" / "train_log.csv").write_text("step,epoch,train_loss,dev_loss,lr,tokens_per_s\n10,1,2.0,,0.1,5\n")



@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    shutil.copytree(TOY, folder / "toy")
    for name, content in HOSTILE_FILES.items():
        (folder / name).parent.mkdir(exist_ok=True)
        getattr(folder / name, "write_bytes" if isinstance(content, bytes) else "write_text")(content)
    os.mkfifo(folder / "fifo")                                  # opening it to read or write would block
    os.mkfifo(folder / "fifo-tok-data" / "tokenizer.json")
    (folder / "empty-data").mkdir()
    shutil.copyfile(TOY / "tokenizer.json", folder / "ok-data" / "tokenizer.json")
    with open(folder / "huge.txt", "wb") as f:                 # sparse: one byte over translate's 64 MiB
        f.truncate(64 * 2**20 + 1)
    with open(folder / "huge.json", "wb") as f:
        f.truncate(300 * 2**20)
    make_runs(folder)
    (folder / "bpe-data").mkdir()                               # a corpus whose tokenizer is en-es's BPE
    shutil.copyfile(ROOT / "pretrained" / "en-es" / "tokenizer.json", folder / "bpe-data" / "tokenizer.json")
    for name in ("train.tsv", "dev.tsv"):
        (folder / "bpe-data" / name).write_text("en\tes\nThe man.\tEl hombre.\n")
    shutil.copytree(TOY, folder / "toy-fifo-presets")
    (folder / "toy-fifo-presets" / "presets.txt").unlink()
    os.mkfifo(folder / "toy-fifo-presets" / "presets.txt")
    shutil.copytree(TOY, folder / "toy-link-presets")
    (folder / "toy-link-presets" / "presets.txt").unlink()
    (folder / "toy-link-presets" / "presets.txt").symlink_to(folder / "ok.tsv")
    return folder


@pytest.mark.parametrize("case", MISTAKES)
def test_a_mistaken_argument_or_file_is_one_error_line(hostile, case, capsys, monkeypatch):
    from transformer_viz.__main__ import main
    argv, said = MISTAKES[case]
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])     # the dispatcher names the command in sys.argv[0]
    try:
        code = main([a.replace("TMP", str(hostile)) for a in argv])
    except SystemExit as e:                                    # argparse: usage, the error line, exit 2
        code = e.code
    assert code == 2
    assert said in error_line(capsys.readouterr().err)


def test_translate_reads_the_english_column_of_a_test_set(tmp_path):
    from model.cli.translate import read_lines

    (tmp_path / "pairs.tsv").write_text("en\tes\na b\tb a\n\tvacío\nc\tc\n", encoding="utf-8")
    (tmp_path / "lines.txt").write_text("en\ta b\n\nc\n", encoding="utf-8")     # no header: every line as it is
    assert read_lines(str(tmp_path / "pairs.tsv")) == ["a b", "", "c"]
    assert read_lines(str(tmp_path / "lines.txt")) == ["en\ta b", "", "c"]


def test_trace_writes_exactly_the_path_given(tmp_path):
    """numpy's savez adds .npz to a name without it (--out /dev/full made /dev/full.npz): trace writes the
    name given, and says it."""
    from model.capture.trace import Trace
    result = run_cli("trace", "--model", str(TOY), "--text", "a b c", "--out", "trace", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace"] and result.stdout.startswith("trace: ")
    assert Trace.load(tmp_path / "trace").meta["tgt_text"] == "c b a"


def test_data_without_the_sword_modules_says_what_to_install(tmp_path, capsys, monkeypatch):
    """pysword's own error was `KeyError: 'spaRV1909eb'` (or a missing mods.d) with a traceback."""
    from model.cli.__main__ import main
    from model.training import corpus
    monkeypatch.setattr(corpus.build_corpus, "__defaults__", (tmp_path / "no-sword", corpus.MAX_CHARS))
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    (tmp_path / "no-sword" / "mods.d").mkdir(parents=True)
    (tmp_path / "no-sword" / "mods.d" / "engweb2015eb.conf").write_text("[engWEB2015eb]\n")   # English only
    assert main(["data", "--out", str(tmp_path / "corpus")]) == 2
    line = error_line(capsys.readouterr().err)
    assert "spaRV1909eb is not installed" in line and "apt-get install sword-text-web sword-text-sparv" in line
    assert not (tmp_path / "corpus").exists()


def test_train_refuses_an_unwritable_out_before_training(hostile, capsys, monkeypatch):
    """--out /dev/full failed only after the training; now before a step is taken."""
    from model.cli.__main__ import main
    from model.cli import train
    monkeypatch.setattr(train, "train_toy", lambda *a, **k: pytest.fail("trained before checking --out"))
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    assert main(["train", "--task", "reverse", "--out", "/dev/full"]) == 2
    assert "--out /dev/full: a device, not a folder" in error_line(capsys.readouterr().err)


def test_evaluate_leaves_the_model_folder_alone_unless_out_is_given(hostile, capsys):
    """The README's evaluate command rewrote pretrained/en-es/metrics.json (its default --out was the model
    folder): the scores are printed, and a file is written only where --out says."""
    from model.cli.evaluate import main as evaluate_main
    shipped = {p.name: p.read_bytes() for p in (hostile / "toy").iterdir()}
    metrics = evaluate_main(["--model", str(hostile / "toy"), "--test", str(hostile / "ok.tsv"), "--beam", "2"])
    assert {p.name: p.read_bytes() for p in (hostile / "toy").iterdir()} == shipped
    assert "beam 2: BLEU" in capsys.readouterr().out and metrics["pairs"] == 1
    evaluate_main(["--model", str(hostile / "toy"), "--test", str(hostile / "ok.tsv"), "--out", str(hostile / "m.json")])
    assert json.loads((hostile / "m.json").read_text())["pairs"] == 1


def test_commands_run_with_sleeping_openmp_threads(tmp_path):
    """The dispatcher sets model/runtime's torch settings before a command imports torch: with spinning OpenMP
    threads, evaluate on a busy 2-core machine took 164 s and 42.7 CPU s for 40 sentences (beam 4) instead of
    5.7 s and 2.9 CPU s."""
    (tmp_path / "probe_command.py").write_text(
        "import os, sys\n"
        "def main(argv):\n"
        "    print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)\n"
        "    return 0\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | {"PYTHONPATH": f"{ROOT}:{tmp_path}"}
    probe = subprocess.run([sys.executable, "-c", "from model.cli.__main__ import dispatch; "
                            "dispatch(['probe'], {'probe': ('probe_command', '')})"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == ["PASSIVE", "False"], probe.stderr


def test_evaluate_scores_a_set_in_its_own_style_and_says_which(tmp_path, capsys):
    """`evaluate --test pretrained/en-es/test.tsv` scored the Bible verses in modern Spanish (27.11 BLEU against
    the card's 32.29); then the style came from the file's name, and twenty Bible lines saved as small_test.tsv
    were scored as modern (issue 47). Now it is read from the content, said on the first line, and kept."""
    from model.cli.evaluate import main as evaluate_main
    from model.training.corpus import read_tsv, write_tsv
    from model.training.evaluate import guess_style
    bible_lines = read_tsv(ROOT / "pretrained/en-es/test.tsv")[:20]
    styles = ["modern", "bible"]
    assert guess_style(bible_lines, styles)[0] == "bible"
    assert guess_style(read_tsv(ROOT / "pretrained/en-es/everyday_test.tsv"), styles)[0] == "modern"
    assert guess_style(read_tsv(ROOT / "docs/examples/everyday.tsv"), styles)[0] == "modern"
    assert guess_style([(f"<modern> {en}", es) for en, es in bible_lines], styles)[0] == "modern"   # tokens lead
    assert guess_style(bible_lines, [])[0] is None                                                  # one style
    write_tsv(tmp_path / "small_test.tsv", bible_lines[:8])
    bible = evaluate_main(["--test", str(tmp_path / "small_test.tsv"), "--beam", "1", "--threads", "1"])
    first = capsys.readouterr().out.split("\n")[0]
    assert first.startswith("style: bible (read from the references: ") and bible["style"] == "bible", first
    modern = evaluate_main(["--test", str(tmp_path / "small_test.tsv"), "--beam", "1", "--threads", "1",
                            "--style", "modern"])
    assert modern["style"] == "modern" and bible["greedy"]["chrf"] > modern["greedy"]["chrf"]

def test_exports_never_follow_a_symbolic_link(tmp_path, capsys, monkeypatch):
    """`lesson --out` and `figure --out` onto a symbolic link overwrote the file it pointed to (issue 47): --out
    that is a link is refused, and a link already inside the figures folder is replaced, not written through."""
    from transformer_viz.__main__ import main
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me")
    (tmp_path / "lesson.html").symlink_to(secret)
    sentence = ["--model", str(TOY), "--text", "a b c"]
    assert main(["lesson", *sentence, "--out", str(tmp_path / "lesson.html")]) == 2
    assert "lesson.html: a symbolic link; not written" in error_line(capsys.readouterr().err)
    (tmp_path / "figures-link").symlink_to(tmp_path, target_is_directory=True)
    assert main(["figure", *sentence, "--format", "svg", "--out", str(tmp_path / "figures-link")]) == 2
    assert "figures-link: a symbolic link; not written into" in error_line(capsys.readouterr().err)
    from viz.tour.steps import TOUR
    figures = tmp_path / "figures"
    figures.mkdir()
    tokens = figures / f"{[s.key for s in TOUR].index('tokens') + 1:02d}-tokens.svg"    # a file the command writes
    tokens.symlink_to(secret)
    assert main(["figure", *sentence, "--format", "svg", "--out", str(figures)]) == 0
    assert secret.read_text() == "keep me"
    assert not tokens.is_symlink() and tokens.read_text().lstrip().startswith("<")
    assert not [p for p in figures.iterdir() if p.name.startswith(".")]          # no staging folder left behind


def test_a_written_file_replaces_a_link_made_after_the_check(tmp_path):
    """The check before the work and the write after it: a link swapped in between is replaced, not followed."""
    from model.io.files import write_replacing
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me")
    (tmp_path / "out.json").symlink_to(secret)
    write_replacing(tmp_path / "out.json", "{}\n")
    assert secret.read_text() == "keep me" and (tmp_path / "out.json").read_text() == "{}\n"
    assert not (tmp_path / "out.json").is_symlink() and oct((tmp_path / "out.json").stat().st_mode & 0o777) != "0o600"


def test_a_long_command_says_what_it_is_doing_while_a_person_watches(tmp_path, capsys, monkeypatch):
    """figure took 54-64 s, lesson 27-36 s and translate 10-36 s in silence (issue 47): on a terminal each stage is
    said on stderr and the figures get a bar; piped, the output stays clean."""
    from transformer_viz.__main__ import main
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    sentence = ["--model", str(TOY), "--text", "a b c"]
    assert main(["figure", *sentence, "--format", "svg", "--out", str(tmp_path / "quiet")]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["figure", *sentence, "--format", "svg", "--out", str(tmp_path / "watched")]) == 0
    err = capsys.readouterr().err
    assert "… loading the model toy-reverse" in err and "… drawing the tour's figures" in err
    assert "writing figures" in err and "13/13" in err, err                      # the bar, at its end
    assert main(["translate", "--model", str(TOY), "a b c"]) == 0
    assert capsys.readouterr().err == "… loading the model toy-reverse\n"


def test_every_option_of_every_command_says_what_it_is(monkeypatch):
    """`translate --help` listed --max-tokens with no text (issue 47); 17 options of 8 commands had none."""
    import argparse
    import importlib
    from transformer_viz.__main__ import COMMANDS
    silent = {}

    def look(self, args=None, namespace=None):
        silent[self.prog] = [a.option_strings[-1] if a.option_strings else a.dest for a in self._actions if a.help is None]
        raise SystemExit(0)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", look)
    for name, (module, _) in COMMANDS.items():
        monkeypatch.setattr(sys, "argv", [f"transformer-viz {name}"])
        with pytest.raises(SystemExit):
            importlib.import_module(module).main([])
    assert len(silent) == len(COMMANDS) and {prog: names for prog, names in silent.items() if names} == {}


def documented_commands() -> list[tuple[str, list[str]]]:
    """(where, arguments) of every command line in the README's and the docs' bash blocks: `python -m
    transformer_viz`, `python -m model.cli` or `transformer-viz`, continuation lines joined, [optional] parts kept."""
    import re
    import shlex
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"^```bash\n(.*?)^```", doc.read_text(encoding="utf-8"), flags=re.S | re.M):
            for line in block.replace("\\\n", " ").split("\n"):
                words = [w.strip("[]") for w in shlex.split(line, comments=True)]
                words = [w for w in words if w]
                for program in (["python", "-m", "transformer_viz"], ["python", "-m", "model.cli"], ["transformer-viz"]):
                    if words[:len(program)] == program:
                        found.append((f"{doc.name}: {line.strip()[:80]}", words[len(program):]))
    return found


def test_every_documented_command_line_parses_as_written(tmp_path, monkeypatch):
    """Every command the README and docs show is a command with options that exist (issue 45: the API as
    written); parsed only, nothing run."""
    import argparse
    import importlib
    from transformer_viz.__main__ import COMMANDS

    class Parsed(Exception):
        pass
    original = argparse.ArgumentParser.parse_known_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise Parsed
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", parse_then_stop)
    monkeypatch.chdir(tmp_path)
    commands = documented_commands()
    assert len(commands) >= 25
    for where, words in commands:
        assert words and words[0] in COMMANDS, where
        monkeypatch.setattr(sys, "argv", [f"transformer-viz {words[0]}"])
        try:
            importlib.import_module(COMMANDS[words[0]][0]).main(words[1:])
        except Parsed:
            continue
        except SystemExit as e:
            pytest.fail(f"{where}: exit {e.code}")
        pytest.fail(f"{where}: never parsed its arguments")
