"""A fresh install: the wheel of this tree, installed into a new venv, serves the app and writes the lesson from
another folder, with nothing from the source tree on the path. The venv sees the packages of the Python running
the tests (torch, streamlit: not reinstalled), whether that is the system's or a virtualenv's; the package
itself comes from the wheel only."""
import os
import shutil
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


def tracked_files() -> list[str]:
    """The files git tracks: what ships (a model a person imported into pretrained/ is theirs, not shipped)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return list(filter(None, listed.split("\0")))


def test_every_shipped_model_is_packaged():
    """pyproject.toml lists each folder of pretrained/ that git tracks (and .streamlit/config.toml) in its
    data-files: the Transformers (config.json) and the RNNs (rnn.json). A model imported into pretrained/ (as
    docs/byo-model.md once said) failed this test: 'Extra items … my-model'."""
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {Path(name).parent.name for name in tracked_files()
               if name.startswith("pretrained/") and Path(name).name in ("config.json", "rnn.json")}
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


def doc_blocks(doc: str, language: str) -> list[str]:
    import re
    return re.findall(rf"^```{language}\n(.*?)^```", (ROOT / doc).read_text(encoding="utf-8"), flags=re.S | re.M)


class Itos:
    """A torchtext vocabulary as the tutorial's notebook holds it: get_itos()."""
    def __init__(self, tokens):
        self.tokens = tokens

    def get_itos(self):
        return self.tokens


@pytest.fixture(scope="module")
def own_model(installed):
    """The newcomer's path of docs/byo-model.md, as written, with the installed command from another folder: the
    notebook block (their tutorial model: 8 heads, d_model 32), then the import command, in a fresh home."""
    import torch
    from test_import_models import SRC_WORDS, TGT_WORDS, TUT_SPECIALS, Seq2SeqTransformer
    venv, _, elsewhere, env = installed
    home, notebook = elsewhere / "home", elsewhere / "notebook"
    home.mkdir()
    notebook.mkdir()
    env = {**env, "HOME": str(home), "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    env.pop("XDG_DATA_HOME", None)
    torch.manual_seed(0)
    names = {"torch": torch, "vocab_src": Itos(TUT_SPECIALS + SRC_WORDS), "vocab_tgt": Itos(TUT_SPECIALS + TGT_WORDS),
             "model": Seq2SeqTransformer(1, 1, 32, 8, len(TUT_SPECIALS + SRC_WORDS), len(TUT_SPECIALS + TGT_WORDS),
                                         dim_feedforward=64).eval()}
    cwd = os.getcwd()
    os.chdir(notebook)
    try:
        exec(doc_blocks("docs/byo-model.md", "python")[0], names)
    finally:
        os.chdir(cwd)
    imported = run(["bash", "-c", doc_blocks("docs/byo-model.md", "bash")[0]], notebook, env)
    assert imported.returncode == 0, imported.stderr[-3000:]
    return env, home / ".local/share/transformer-viz/models", imported.stdout


def test_a_model_of_ones_own_imports_and_translates_from_another_folder(installed, own_model):
    """docs/byo-model.md's import, as written, said the app's picker would list pretrained/my-model; the installed
    app did not (issue 47). Now it goes into the user's models folder, which every command and the app list."""
    venv, share, elsewhere, _ = installed
    env, mine, said = own_model
    assert (mine / "my-model" / "config.json").is_file(), said
    assert "its model picker lists my-model" in said.strip().split("\n")[-1], said
    translated = run([venv / "bin/transformer-viz", "translate", "--model", "my-model", "s3 s11 s5"], elsewhere, env)
    assert translated.returncode == 0 and set(translated.stdout.split()) <= set(TGT_WORDS_AND_UNK), translated
    shipped = run([venv / "bin/transformer-viz", "translate", "--model", "toy-reverse", "a b c"], elsewhere, env)
    assert shipped.stdout == "c b a\n", shipped.stderr[-2000:]


TGT_WORDS_AND_UNK = [f"t{i}" for i in range(15)] + ["<unk>"]


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


def test_installed_app_serves_the_shipped_models_from_another_folder(installed, own_model):
    """The shipped models, and beside them the model of one's own that the newcomer imported (own_model)."""
    venv, share, elsewhere, _ = installed
    env, mine, _ = own_model
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
        assert kinds.get("bidi_component", 0) >= 1 and kinds.get("download_button", 0) >= 1, kinds   # the explorer's view
        assert f"models from {share / 'pretrained'}: en-es, toy-copy, toy-reverse, toy-sort" in log.read_text()
        assert f"models from {mine}: my-model" in log.read_text()
        assert explorer_run(port, "my-model", "s3 s11 s5").get("bidi_component", 0) >= 1
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


def test_the_readme_says_what_a_newcomer_needs_before_its_two_commands():
    """The README never said to make a virtual environment before installing about 60 packages, nor that
    run_all.sh installs redis-server and a CJK font (issue 47): each apt package run_all.sh may install is named."""
    import re
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    two_commands = readme[readme.index("## Two commands"):readme.index("## What is inside")]
    assert "python3 -m venv .venv" in two_commands.split("pip install -r requirements.txt")[0]
    installed = re.findall(r"need\+=\(([\w-]+)\)", (ROOT / "tests" / "run_all.sh").read_text())
    wording = {"chromium": "Chromium", "sword-text-web": "SWORD", "sword-text-sparv": "SWORD", "wordnet-base": "WordNet",
               "apertium-en-es": "Apertium"}
    assert len(installed) >= 8
    assert [p for p in installed if wording.get(p, p) not in two_commands] == []
