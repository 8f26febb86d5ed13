"""A fresh install: the wheel of this tree, installed into a new venv, serves the app and writes the lesson from
another folder, with nothing from the source tree on the path. The venv sees the packages of the Python running
the tests (torch, streamlit: not reinstalled), whether that is the system's or a virtualenv's; the package
itself comes from the wheel only."""
import os
import shutil
import site
import socket
import subprocess
import sys
import time
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STEP_TIMEOUT = 180


def run(cmd: list, cwd: Path, env: dict, timeout: float = STEP_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def site_dirs() -> list[str]:
    """The running interpreter's package folders (site-packages, Debian's dist-packages), its venv's included."""
    return [p for p in dict.fromkeys(sys.path) if p and Path(p).name in ("site-packages", "dist-packages")]


def share_packages(venv: Path) -> None:
    """Make the running interpreter's packages importable in `venv`, after the venv's own. A venv made from
    inside a virtualenv has the *base* Python's packages only (--system-site-packages), where torch and
    tokenizers may be missing; site.addsitedir also reads those folders' own .pth files."""
    lib = next((venv / "lib").glob("python3*/site-packages"))
    lines = [f"import site; site.addsitedir({folder!r})" for folder in site_dirs()]
    (lib / "zz_tests_share_packages.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_venv(venv: Path, pip: bool = True) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", *([] if pip else ["--without-pip"]), venv],
                   check=True, timeout=STEP_TIMEOUT)
    share_packages(venv)


def test_a_new_venv_sees_the_packages_of_the_python_running_the_tests(tmp_path):
    """From a virtualenv (the README's `pip install -r requirements.txt` inside one), torch lives in that venv,
    not in the base Python a new venv is built from: the test venv must see this interpreter's folders."""
    make_venv(tmp_path / "venv", pip=False)
    seen = run([tmp_path / "venv/bin/python", "-c", "import sys, tokenizers, torch; print('\\n'.join(sys.path))"],
               tmp_path, {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert seen.returncode == 0, seen.stderr[-2000:]
    missing = [p for p in site_dirs() if p not in seen.stdout.split("\n")]
    assert not missing, (missing, seen.stdout)


def test_every_shipped_model_is_packaged():
    """pyproject.toml lists each folder of pretrained/ (and .streamlit/config.toml) in its data-files: the
    Transformers (config.json) and the RNNs (rnn.json)."""
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {p.name for p in (ROOT / "pretrained").iterdir()
               if (p / "config.json").is_file() or (p / "rnn.json").is_file()}
    packaged = {Path(target).name for target in data_files if target.startswith("share/transformer-viz/pretrained/")}
    assert shipped == packaged
    assert data_files["share/transformer-viz/.streamlit"] == [".streamlit/config.toml"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, its data folder, a folder outside the tree, a clean environment) after installing the wheel."""
    tmp = tmp_path_factory.mktemp("install")
    # The tree as git would hand it over (tracked and new files, nothing ignored): no stale build/ folder.
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    source = tmp / "source"
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRANSFORMER_VIZ_MODELS")}
    wheel = run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--no-build-isolation", "-q",
                 "-w", tmp / "wheel"], tmp, env)
    assert wheel.returncode == 0, wheel.stderr[-3000:]
    venv = tmp / "venv"
    make_venv(venv)
    install = run([venv / "bin/python", "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                   *(tmp / "wheel").glob("*.whl")], tmp, env)
    assert install.returncode == 0, install.stderr[-3000:]
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return venv, venv / "share" / "transformer-viz", elsewhere, env


def test_the_installed_package_is_the_wheels_not_the_trees(installed):
    venv, _, elsewhere, env = installed
    where = run([venv / "bin/python", "-c", "import importlib.util as u; print('\\n'.join(u.find_spec(m).origin for m "
                 "in ('viz', 'model', 'transformer_viz', 'transformer_viz_app')))"], elsewhere, env)
    assert where.returncode == 0, where.stderr
    assert all(line.startswith(str(venv)) for line in where.stdout.split()), where.stdout


def test_installed_lesson_writes_from_another_folder(installed):
    venv, share, elsewhere, env = installed
    out = elsewhere / "lesson.html"
    lesson = run([venv / "bin/transformer-viz", "lesson", "--model", share / "pretrained/toy-reverse", "--text",
                  "a b c", "--out", out], elsewhere, env)
    assert lesson.returncode == 0, lesson.stderr[-3000:]
    page = out.read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "plotly.js (cartesian - minified)" in page              # viz/vendor's bundle is in the package


def test_installed_commands_find_the_shipped_models_by_name(installed):
    """After `pip install .`, from another folder: --model is a name in the installed share folder, en-es when
    left out (the commands said 'the following arguments are required: --model' and 'no such model folder')."""
    venv, share, elsewhere, env = installed
    toy = run([venv / "bin/transformer-viz", "translate", "--model", "toy-reverse", "a b c"], elsewhere, env)
    assert (toy.returncode, toy.stdout) == (0, "c b a\n"), toy.stderr[-3000:]
    default = run([venv / "bin/transformer-viz", "translate", "The man went to the house."], elsewhere, env)
    assert (default.returncode, default.stdout) == (0, "El hombre fue a la casa.\n"), default.stderr[-3000:]
    missing = run([venv / "bin/transformer-viz", "translate", "--model", "nope", "a"], elsewhere, env)
    assert missing.returncode == 2 and f"in {share / 'pretrained'} (the shipped models" in missing.stderr, missing.stderr
    wrong = run([venv / "bin/transformer-viz", "translate", "--beam", "0", "a"], elsewhere, env)
    assert "usage: transformer-viz translate" in wrong.stderr and "__main__" not in wrong.stderr, wrong.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def explorer_run(port: int, model: str, text: str) -> dict[str, int]:
    """Element kinds of one explorer run over Streamlit's websocket (exceptions fail)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect
    base = f"127.0.0.1:{port}"
    kinds: dict[str, int] = {}
    with connect(f"ws://{base}/_stcore/stream", subprotocols=["streamlit"], origin=f"http://{base}",
                 max_size=2**28, open_timeout=30) as ws:
        message = BackMsg()
        message.rerun_script.query_string = urllib.parse.urlencode({"model": model, "text": text})
        message.rerun_script.page_name = "explorer"
        ws.send(message.SerializeToString())
        deadline = time.monotonic() + STEP_TIMEOUT
        while time.monotonic() < deadline:
            forward = ForwardMsg()
            forward.ParseFromString(ws.recv(timeout=STEP_TIMEOUT))
            if forward.WhichOneof("type") == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                kind = element.WhichOneof("type")
                assert kind != "exception", element.exception.message + "".join(element.exception.stack_trace)
                kinds[kind] = kinds.get(kind, 0) + 1
                if kind == "file_uploader":
                    kinds["max_upload_size_mb"] = element.file_uploader.max_upload_size_mb
            elif forward.WhichOneof("type") == "script_finished":
                assert forward.script_finished == 0
                return kinds
    raise AssertionError("no script_finished")


def test_installed_app_serves_the_shipped_models_from_another_folder(installed):
    venv, share, elsewhere, env = installed
    port = free_port()
    log = elsewhere / "app.log"
    with open(log, "wb") as out:
        app = subprocess.Popen([venv / "bin/transformer-viz", "app", "--server.port", str(port), "--server.address",
                                "127.0.0.1", "--server.headless", "true"], cwd=elsewhere, env=env, stdout=out,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            assert app.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        kinds = explorer_run(port, "toy-reverse", "a b c")
        assert kinds.get("plotly_chart", 0) >= 1 and kinds.get("download_button", 0) >= 1, kinds
        assert f"models from {share / 'pretrained'}: en-es, toy-copy, toy-reverse, toy-sort" in log.read_text()
        # .streamlit/config.toml came along (Streamlit reads it from the folder the command runs it in): 1 MB, not 200
        assert kinds.get("max_upload_size_mb") == 1, kinds
    finally:
        app.terminate()
        app.wait(30)


def test_installed_app_says_where_it_looked_for_models(installed):
    venv, _, elsewhere, env = installed
    result = run([venv / "bin/transformer-viz", "app", "--models", elsewhere / "none"], elsewhere, env)
    assert result.returncode == 2 and f"no model under {elsewhere / 'none'} (--models" in result.stderr, result.stderr
    result = run([venv / "bin/transformer-viz", "app"], elsewhere, {**env, "TRANSFORMER_VIZ_MODELS": str(elsewhere)})
    assert result.returncode == 2 and "TRANSFORMER_VIZ_MODELS" in result.stderr, result.stderr


def test_a_lesson_missing_its_catalogue_names_the_catalogue(installed):
    """Issue 27: without viz/locales/en.json in the package the lesson said 'cannot write /tmp/x.html'."""
    venv, share, elsewhere, env = installed
    catalogue = next(venv.glob("lib/python*/site-packages/viz/locales/en.json"))
    kept = catalogue.with_suffix(".kept")
    catalogue.rename(kept)
    try:
        result = run([venv / "bin/transformer-viz", "lesson", "--model", share / "pretrained/toy-reverse", "--text",
                      "a b", "--out", elsewhere / "x.html"], elsewhere, env)
    finally:
        kept.rename(catalogue)
    assert result.returncode == 2 and "en.json" in result.stderr and "cannot write" not in result.stderr, result.stderr
