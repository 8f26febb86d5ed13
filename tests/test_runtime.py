"""model/runtime.py: the settings torch reads once must be in place before torch loads."""
import ast
import os
import subprocess
import sys
from pathlib import Path

from model import runtime

ROOT = Path(__file__).resolve().parents[1]


def test_configure_sets_defaults_and_keeps_values_already_set(monkeypatch):
    monkeypatch.delenv("THP_MEM_ALLOC_ENABLE", raising=False)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    values = runtime.configure()
    assert values == {"OMP_WAIT_POLICY": "ACTIVE", "THP_MEM_ALLOC_ENABLE": "1"}
    assert os.environ["THP_MEM_ALLOC_ENABLE"] == "1"


def test_app_configures_before_anything_imports_torch():
    """app.py imports only the entry module; that module's first statements import runtime and call
    configure(), and only then come other imports."""
    app = [ast.unparse(n) for n in ast.parse((ROOT / "app.py").read_text()).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert app == ["from transformer_viz_app import page"]
    body = ast.parse((ROOT / "transformer_viz_app.py").read_text()).body
    calls = [i for i, node in enumerate(body) if isinstance(node, ast.Expr) and "runtime.configure" in ast.unparse(node)]
    assert calls, "transformer_viz_app.py never calls runtime.configure()"
    imports_before = [ast.unparse(n) for n in body[:calls[0]]
                     if isinstance(n, (ast.Import, ast.ImportFrom)) and "runtime" not in ast.unparse(n)
                     and "__future__" not in ast.unparse(n) and "pathlib" not in ast.unparse(n)]
    assert imports_before == []


def test_importing_runtime_does_not_load_torch():
    code = "import sys; from model import runtime; runtime.configure(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
