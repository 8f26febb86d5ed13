"""The layout's rules, checked by walking every module's imports (ast): who may import whom.

    model/capture   imports nothing else from model          (the bottom: hooks, Trace, the name schema)
    model/nn        capture                                   model/io        nn
    model/inference nn, capture, io                           model/training  nn, capture, io, inference
    model/analysis  capture (and inference/io only in the modules that run the model, RUNS_MODEL);
                    its pure-maths modules import no torch
    model/cli       anything in model (every main() lives here); nothing under model/ imports viz/
    viz/figures     never streamlit, torch or a model package that runs the model
    viz/pages       never torch, never model io/inference/training/nn (they ask viz/services)
    viz/*           only viz/services touches model io/inference/training/nn
    viz rooms       lowest first: core < figures < services < elements < tour < classroom < pages < frame;
                    a module imports its own room and those below, never one above (so no two rooms import
                    each other); every viz module lives in a room
    everywhere      no import circle: model, viz, app.py, the commands above both, bench/, deploy/, tests/
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, tiny_config
from model.capture import schema
from model.nn.config import TransformerConfig
from model.nn.transformer import Transformer

LAYERS_ALLOWED = {
    "capture": {"capture"},
    "nn": {"nn", "capture"},
    "io": {"io", "nn"},
    "inference": {"inference", "nn", "capture", "io"},
    "analysis": {"analysis", "capture"},
    "training": {"training", "nn", "capture", "io", "inference"},
}
RUNS_MODEL = {"ablation", "decoding", "attribution", "patching", "zoo_fit"}     # analyses that run the model
MODEL_RUNNERS = {"model.io", "model.inference", "model.training", "model.nn"}
# model io that loads and runs nothing: CheckpointError, the size-limited reader of a model folder's text files, and
# the pure check of a sentence's alphabet (the notice that a model reads English)
READS_NO_MODEL = {"model.io.checkpoint", "model.io.models", "model.io.language"}
VIZ_SERVICES = "viz.services"                      # a package: every module under it may run the model


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (function-level imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}   # `from model.analysis import ablation`
    return found


def python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def model_layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "model" and parts[1] in LAYERS_ALLOWED else None


def is_under(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("path", python_files("model"), ids=lambda p: str(p.relative_to(ROOT)))
def test_model_layers_import_only_what_they_may(path):
    me = module_name(path)
    layer = model_layer(me)
    if layer is None:
        return                                          # model/__init__, runtime, cli
    allowed = set(LAYERS_ALLOWED[layer])
    if layer == "analysis" and me.split(".")[-1] in RUNS_MODEL:
        allowed |= {"inference", "io"}
    wrong = sorted(m for m in imports_of(path) if model_layer(m) and model_layer(m) not in allowed)
    assert not wrong, f"{me} may import model.{{{', '.join(sorted(allowed))}}} only, imports {wrong}"


def test_pure_analysis_modules_import_no_torch():
    for path in python_files("model/analysis"):
        if path.stem in RUNS_MODEL or path.stem == "__init__":
            continue
        assert "torch" not in {m.split(".")[0] for m in imports_of(path)}, f"{path.name} imports torch"


def test_nothing_under_model_imports_the_app():
    """The library stands alone: a command that needs both the model and viz/ lives above both."""
    for path in python_files("model"):
        upward = sorted(m for m in imports_of(path) if m == "viz" or m.startswith("viz."))
        assert not upward, f"{module_name(path)} imports {upward}"


# Folders whose scripts import each other by bare name (their folder is on sys.path when they run).
SCRIPT_FOLDERS = ("bench", "deploy", "tests")


def project_modules() -> dict[str, Path]:
    """Every importable module of the project: dotted names of the packages and app.py, bare names of the
    scripts in SCRIPT_FOLDERS."""
    found = {module_name(p): p for folder in PACKAGES for p in python_files(folder)}
    found |= {p.stem: p for p in ROOT.glob("*.py")}
    for folder in SCRIPT_FOLDERS:
        found |= {p.stem: p for p in (ROOT / folder).glob("*.py") if p.stem not in found}
    return found


PACKAGES = [p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()]


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in it, function-level imports included)."""
    modules = project_modules()
    return {me: {m for m in imports_of(path) if m in modules and m != me} for me, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each a circle of imports."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_anywhere():
    graph = import_graph()
    assert {"bench.faults", "faults", "viz.services.models", "model.cli.__main__"} & set(graph), "the walk found nothing"
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The rooms of viz/, lowest first (docs/architecture.md): a module may import its own room and the rooms below it,
# never one above. viz itself (viz/__init__.py: ROOT) is the floor every room stands on. The entries above every
# room (app.py, transformer_viz_app.py, transformer_viz/) may import any of them.
VIZ_ROOMS = ("core", "figures", "services", "elements", "tour", "classroom", "pages", "frame")


def viz_room(module: str) -> str | None:
    """The room of a viz module (viz.core.view -> "core"); None for viz itself and anything outside viz."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "viz" else None


def upward_imports(me: str, imported: set[str]) -> list[str]:
    """The modules `me` imports from a room above its own."""
    mine = viz_room(me)
    if mine is None:
        return []
    return sorted(m for m in imported if (room := viz_room(m)) is not None and room in VIZ_ROOMS
                  and VIZ_ROOMS.index(room) > VIZ_ROOMS.index(mine))


def test_every_viz_package_is_a_declared_room():
    found = sorted(p.name for p in (ROOT / "viz").iterdir() if p.is_dir() and any(p.glob("*.py")))
    assert found == sorted(VIZ_ROOMS), "declare a new viz package in VIZ_ROOMS (and docs/architecture.md)"
    assert sorted(p.name for p in (ROOT / "viz").glob("*.py")) == ["__init__.py"], "a viz module lives in a room"


@pytest.mark.parametrize("path", python_files("viz"), ids=lambda p: str(p.relative_to(ROOT)))
def test_viz_rooms_import_only_downward(path):
    """Package direction, not only file circles: an import from a lower room to a higher one fails, naming the file."""
    me = module_name(path)
    upward = upward_imports(me, imports_of(path))
    assert not upward, (f"{path.relative_to(ROOT)} (room {viz_room(me)}) imports {upward} from a room above it; "
                        f"the rooms, lowest first: {' < '.join(VIZ_ROOMS)}")


def test_no_two_viz_rooms_import_each_other():
    arrows = {(viz_room(me), viz_room(m)) for me, path in project_modules().items() if viz_room(me)
              for m in imports_of(path) if viz_room(m) and viz_room(m) != viz_room(me)}
    assert arrows, "the walk found no arrow between rooms"
    assert sorted((a, b) for a, b in arrows if (b, a) in arrows) == []


def test_the_room_check_finds_an_upward_import():
    assert upward_imports("viz.core.view", {"viz.frame.sidebar", "viz.core.text", "viz", "streamlit"}) == [
        "viz.frame.sidebar"]
    assert upward_imports("viz.pages.heads", {"viz.frame.sidebar", "viz.elements.ui"}) == ["viz.frame.sidebar"]
    assert upward_imports("viz.frame.router", {"viz.pages", "viz.core.view"}) == []
    assert upward_imports("transformer_viz.app", {"viz.frame.router"}) == []


# -- the README's tree ("What is inside") names what exists ------------------------------------------------------------
MODULE_NAME = re.compile(r"(?<![\w/.])(\w+)\.py\b")       # a module named in the tree (not a path's last part)
FOLDER_NAME = re.compile(r"^(\S+)/(?=\s|$)")


def readme_tree(text: str) -> dict[str, list[str]]:
    """The tree under "## What is inside": each folder it lists (top level "x/", one level in "x/y/") -> the lines of
    its entry (its own line and the deeper-indented lines under it); top-level files and folders under "" too."""
    block = text.split("## What is inside", 1)[1].split("```\n", 2)[1]
    entries: dict[str, list[str]] = {"": []}
    parent, current = None, ""
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        head = FOLDER_NAME.match(line.lstrip(" "))
        if indent == 0:
            entries[""].append(line)
            parent = current = head.group(1) if head else None
            for folder in re.findall(r"(?:^|\s)(\w+)/(?=\s|$)", line):     # "tests/  bench/  docs/"
                entries.setdefault(folder, [])
        elif indent == 2 and head and parent:
            current = f"{parent}/{head.group(1)}"
            entries[current] = [line]
        elif current:
            entries.setdefault(current, []).append(line)
    return entries


def test_the_readmes_tree_names_every_package_and_module_and_nothing_gone():
    tree = readme_tree((ROOT / "README.md").read_text(encoding="utf-8"))
    top = "\n".join(tree[""])
    listed_top = set(re.findall(r"^([\w.]+?/?)(?=\s)", top, re.M)) | {f + "/" for f in tree if f and "/" not in f}
    code_top = {p.name for p in ROOT.glob("*.py")} | {p.name + "/" for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert code_top - listed_top == set(), "the README's tree misses these"
    assert {e for e in listed_top if not (ROOT / e.rstrip("/")).exists()} == set(), "the README's tree names these; gone"
    rooms = {p.name for p in (ROOT / "viz").iterdir() if p.is_dir() and any(p.glob("*.py"))}
    subpackages = {p.name for p in (ROOT / "model").iterdir() if (p / "__init__.py").is_file()}
    listed = {folder: set(MODULE_NAME.findall(" ".join(lines))) for folder, lines in tree.items() if "/" in folder}
    assert {f.split("/")[1] for f in listed if f.startswith("viz/") and (ROOT / f).is_dir() and any((ROOT / f).glob("*.py"))} \
        == rooms, "every viz room, and only those, in the README's tree"
    assert {f.split("/")[1] for f in listed if f.startswith("model/")} == subpackages
    assert [f for f in listed if not (ROOT / f).is_dir()] == [], "folders in the README's tree that do not exist"
    for room in rooms:
        modules = {p.stem for p in (ROOT / "viz" / room).glob("*.py") if p.stem != "__init__"}
        assert listed[f"viz/{room}"] == modules, (f"viz/{room}/ in the README's tree: missing "
                                                  f"{sorted(modules - listed[f'viz/{room}'])}, gone {sorted(listed[f'viz/{room}'] - modules)}")


def test_the_tree_reader_reads_rooms_and_their_modules():
    text = "## What is inside\n\n```\napp.py   the entry\nviz/     rooms\n  core/   view.py (the view), text.py\n" \
           "          i18n.py, and viz/x/y.py is a path\n  pages/  home.py\ntests/  bench/\n```\n"
    tree = readme_tree(text)
    assert tree[""] == ["app.py   the entry", "viz/     rooms", "tests/  bench/"]
    assert set(MODULE_NAME.findall(" ".join(tree["viz/core"]))) == {"view", "text", "i18n"}
    assert tree["viz/pages"] == ["  pages/  home.py"] and "bench" in tree


def test_only_the_command_line_tools_define_main():
    for path in python_files("model"):
        defines = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
        if "main" in defines:
            assert module_name(path).startswith("model.cli."), f"{module_name(path)} defines main()"


@pytest.mark.parametrize("path", python_files("viz"), ids=lambda p: str(p.relative_to(ROOT)))
def test_viz_leaves_the_model_to_services(path):
    me, imported = module_name(path), imports_of(path)
    roots = {m.split(".")[0] for m in imported}
    if me.startswith("viz.figures"):
        assert not roots & {"streamlit", "torch"}, f"{me} imports {sorted(roots & {'streamlit', 'torch'})}"
    if me.startswith("viz.pages"):
        assert "torch" not in roots, f"{me} imports torch"
    if not is_under(me, {VIZ_SERVICES}):
        runners = sorted(m for m in imported if is_under(m, MODEL_RUNNERS) and not is_under(m, READS_NO_MODEL))
        assert not runners, f"{me} reaches the model directly ({runners}); ask viz/services"


def test_app_is_a_router_that_runs_only_as_a_script():
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    calls_at_top = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                    and getattr(n.value.func, "id", None) == "main"]
    assert not calls_at_top, "app.py calls main() at import; put it under `if __name__ == '__main__':`"


@pytest.mark.parametrize("config", [tiny_config(), tiny_config(norm_first=True), TransformerConfig.from_dict(
    json.loads((ROOT / "pretrained/en-es/config.json").read_text())),
    tiny_config(final_norm=True, share_embeddings=False, src_vocab_size=9, src_bos=True),
    tiny_config(norm_first=True, ln_kind="annotated", share_embeddings=False)],
    ids=["toy", "toy-pre-norm", "en-es", "torch-tutorial", "annotated"])
def test_the_schema_names_exactly_the_models_hook_points(config):
    hook_points = {name for name, _ in Transformer(config).named_modules() if name.rsplit(".", 1)[-1].startswith("hook_")}
    made = schema.all_names(config)
    assert len(made) == len(set(made))
    assert set(made) == hook_points


def test_schema_labels_follow_one_convention():
    meta = {"src_tokens": ["a", "b", "</s>"], "tgt_in_tokens": ["<s>", "x"], "tgt_out_tokens": ["x", "</s>"]}
    assert schema.query_tokens(meta, "encoder") == schema.key_tokens(meta, "encoder") == meta["src_tokens"]
    for kind in ("decoder", "cross"):
        assert schema.query_tokens(meta, kind) == meta["tgt_out_tokens"]     # the token each position predicts
    assert schema.key_tokens(meta, "decoder") == meta["tgt_in_tokens"]       # what a query can see
    assert schema.key_tokens(meta, "cross") == meta["src_tokens"]
    assert schema.stack_tokens(meta, "decoder") == schema.query_tokens(meta, "decoder")
    with pytest.raises(ValueError, match="unknown attention kind"):
        schema.attn_name("sideways", 0, "pattern")


# -- one style for every page ---------------------------------------------------------------------------
# Pages converted to it so far (the others follow; then this can become every file under viz/pages).
RENDER_PAGES = sorted(p.name for p in (ROOT / "viz" / "pages").glob("*.py"))                 # every page
PAGE_GLOBALS = {"ctx", "trace", "cfg", "arrays", "A"}   # what a page used to read from its module scope


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__": render()` and nothing else."""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and getattr(node.test.left, "id", None) == "__name__"
            and [getattr(c, "value", None) for c in node.test.comparators] == ["__main__"]
            and not node.orelse and len(node.body) == 1 and isinstance(node.body[0], ast.Expr)
            and getattr(node.body[0].value.func, "id", None) == "render" and not node.body[0].value.args)


@pytest.mark.parametrize("page", RENDER_PAGES)
def test_a_page_is_imports_constants_functions_and_render(page):
    """Imports, constants, small functions taking explicit arguments, `def render() -> None`, and at the
    end `if __name__ == "__main__": render()` (Streamlit runs a page with that name; a test can import it)."""
    tree = ast.parse((ROOT / "viz" / "pages" / page).read_text(encoding="utf-8"))
    body = tree.body[1:] if ast.get_docstring(tree) else tree.body
    assert body and _is_main_guard(body[-1]), f"{page} must end with `if __name__ == \"__main__\":\\n    render()`"
    renders = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == "render"]
    assert len(renders) == 1, f"{page} defines no render()"
    render = renders[0]
    assert not (render.args.args or render.args.posonlyargs or render.args.kwonlyargs or render.args.vararg), \
        "render() takes no arguments"
    assert isinstance(render.returns, ast.Constant) and render.returns.value is None, "def render() -> None"
    for node in body[:-1]:
        assert isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign,
                                 ast.AnnAssign)), f"{page} line {node.lineno}: only definitions at module level"
        if isinstance(node, (ast.Assign, ast.AnnAssign)):     # constants: no streamlit call, no page state
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
            assert not any(getattr(getattr(c.func, "value", None), "id", None) == "st" for c in calls), \
                f"{page} line {node.lineno}: a streamlit call at module level"
            targets = {t.id for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
            assert not targets & PAGE_GLOBALS, f"{page} line {node.lineno}: page state at module level"
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))):
        assert not any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(fn)), f"{page}: global state"


@pytest.mark.parametrize("page", RENDER_PAGES)
def test_importing_a_page_draws_nothing(page, monkeypatch):
    """The module can be imported (by a test, a lesson) without running the page."""
    import importlib
    import streamlit as st

    def refuse(*_args, **_kwargs):
        raise AssertionError(f"{page} called streamlit at import")

    for name in ("title", "markdown", "radio", "selectbox", "slider", "plotly_chart", "columns", "latex"):
        monkeypatch.setattr(st, name, refuse)
    module = importlib.import_module(f"viz.pages.{page[:-3]}")
    assert callable(module.render)


# -- one implementation per concept --------------------------------------------------------------------
def call_name(node: ast.Call) -> str | None:
    return getattr(node.func, "id", None) or getattr(node.func, "attr", None)


def calls_named(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every call to a function or method called one of `names` (np.exp, x.exp(), exp)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and call_name(node) in names:
            found.append((node.lineno, call_name(node)))
    return found


def functions_named(path: Path, pattern) -> list[str]:
    return [n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.FunctionDef) and pattern(n.name)]


CODE = [*python_files("model"), *python_files("viz"), *python_files("bench")]
EXP = {"exp", "exp2", "expm1", "logsumexp", "softmax", "log_softmax"}
TRIANGLES = {"tril", "triu", "tril_indices", "triu_indices"}
ANALYSIS = ROOT / "model" / "analysis" / "attention_math.py"


@pytest.mark.parametrize("path", python_files("viz/figures"), ids=lambda p: str(p.relative_to(ROOT)))
def test_figures_draw_and_do_no_softmax_or_exp(path):
    """Probabilities reach a figure computed (model/analysis); a figure that exponentiates does maths."""
    assert calls_named(path, EXP - {"softmax"}) == [], f"{path.name} exponentiates"
    assert functions_named(path, lambda name: "softmax" in name) == []


def test_one_softmax_and_log_softmax():
    """The analysis layer's softmax and log_softmax (attention_math) are the only ones written in numpy; torch's
    own serve the model."""
    defined = {str(p.relative_to(ROOT)): names for p in CODE
               if (names := functions_named(p, lambda name: name.strip("_") in {"softmax", "log_softmax"}))}
    assert defined == {"model/analysis/attention_math.py": ["softmax", "log_softmax"]}


def test_one_causal_mask():
    """One causal mask in numpy (True: the query may read the key) and the model's in torch, meaning the same
    (tests/test_kv_cache.py holds them equal); nothing else builds a triangle."""
    triangles = {str(p.relative_to(ROOT)): [n for _, n in found] for p in CODE
                 if (found := calls_named(p, TRIANGLES))}
    assert triangles == {"model/analysis/attention_math.py": ["tril"], "model/nn/transformer.py": ["tril"]}
    masks = {str(p.relative_to(ROOT)) for p in CODE if functions_named(p, lambda name: name.endswith("causal_mask"))}
    assert masks == {"model/analysis/attention_math.py", "model/nn/transformer.py"}


# -- one way for words ----------------------------------------------------------------------------------
MAX_BUILDER_PARAMETERS = 10     # data and a handful of options; words and sizes come as one `look` (style.Look)


def figure_builders() -> list[tuple[Path, ast.FunctionDef]]:
    """Every public function under viz/figures that returns a figure (annotated `-> go.Figure`)."""
    found = []
    for path in python_files("viz/figures"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and node.returns is not None \
                    and "Figure" in ast.unparse(node.returns):
                found.append((path, node))
    return found


def n_parameters(fn: ast.FunctionDef) -> int:
    a = fn.args
    return len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)


def test_no_figure_builder_takes_a_parameter_per_word():
    builders = figure_builders()
    assert len(builders) > 40                                   # the walk finds the builders
    too_many = {f"{path.name}:{fn.name}": n_parameters(fn) for path, fn in builders
                if n_parameters(fn) > MAX_BUILDER_PARAMETERS}
    assert too_many == {}


def test_figures_get_their_words_from_the_caller():
    """No figure module reads the catalogue or the session's language: the caller's look (its words) carries them."""
    for path in python_files("viz/figures"):
        assert "viz.core.i18n" not in imports_of(path), f"{path.name} imports viz.core.i18n"


def english_ui_text(path: Path, catalogue: set[str]) -> list[tuple[int, str]]:
    """String literals in a module equal to a catalogue message that holds a space (UI text, not an identifier
    such as "encoder"): docstrings and exceptions' developer messages (a ...Error(...) call's arguments) aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            skip.add(id(first.value))                                                    # a docstring
        if isinstance(node, ast.Call) and (call_name(node) or "").endswith("Error"):
            skip |= {id(n) for arg in node.args for n in ast.walk(arg)}
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in skip and n.value in catalogue and any(c.isspace() for c in n.value)]


def test_no_english_ui_text_in_python():
    """The words a reader sees live in viz/locales only: a copy in Python (an English default) drifts from
    the catalogue and stays English on a page read in 中文."""
    from viz.core.i18n import catalogue
    messages = set(catalogue("en").values())
    found = {str(p.relative_to(ROOT)): hits for p in python_files("viz") if (hits := english_ui_text(p, messages))}
    assert found == {}


def test_the_english_text_finder_finds_english(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text('def f(x_title="key (attended to)", kind="encoder"):\n    """key (attended to)"""\n'
                    '    raise ValueError("key (attended to)")\n', encoding="utf-8")
    assert english_ui_text(path, {"key (attended to)", "encoder"}) == [(1, "key (attended to)")]


def test_figure_parameters_have_no_words_for_defaults():
    """A builder's parameter defaults are data or sizes, never a word of the catalogue (an attention kind's
    name, schema.KINDS, is data)."""
    from viz.core.i18n import catalogue
    words = set(catalogue("en").values()) - set(schema.KINDS) - set(schema.STACKS)
    found = [f"{path.name}:{fn.name}={d.value!r}" for path, fn in figure_builders()
             for d in fn.args.defaults + [k for k in fn.args.kw_defaults if k]
             if isinstance(d, ast.Constant) and d.value in words]
    assert found == []


# -- the view (viz/core/view.py) is the one door to the session and the URL ------------------------------------------
SESSION_OR_URL = ("session_state", "query_params")


def _session_or_url_uses(path: Path) -> list[int]:
    """Lines where `path` reads or writes Streamlit's session state or query parameters itself (`st.session_state`,
    `st.query_params`, also under another name). A keyword argument of the same name (page_link's
    query_params=) is a link's value, not the session's, and does not count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in SESSION_OR_URL)


def test_only_the_view_touches_the_session_and_the_url():
    found = {str(p.relative_to(ROOT)): lines for p in [*python_files("viz"), *python_files("transformer_viz"),
                                                       ROOT / "transformer_viz_app.py", ROOT / "app.py"]
             if p.name != "view.py" and (lines := _session_or_url_uses(p))}
    assert found == {}, f"only viz/core/view.py reads or writes st.session_state / st.query_params: {found}"


def test_the_session_check_finds_a_literal_key(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('import streamlit as st\nx = st.session_state["text"]\nst.query_params["layer"] = "1"\n')
    assert _session_or_url_uses(page) == [2, 3]


def _url_names_spelled(path: Path) -> list[int]:
    """Lines where a value of the view is named by its URL name: a string given to a view function, or a keyword
    of write_url/link_params (a page names a value by its declaration, view.LAYER)."""
    from viz.core import view
    names = {v.name for v in vars(view).values() if isinstance(v, view.Value)}
    functions = {"read", "check", "start", "bind", "write_url", "link_params", "qp_int", "qp_choice", "qp_str", "set_query"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in functions:
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if set(strings) & names or any(k.arg in names for k in node.keywords):
                found.append(node.lineno)
    return found


def test_no_page_spells_a_url_name():
    found = {p.name: lines for p in python_files("viz/pages") if (lines := _url_names_spelled(p))}
    assert found == {}, f"name the view's values by their declarations (view.LAYER), not their URL names: {found}"


def test_the_url_name_check_finds_a_spelled_name(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('from viz import view\nview.read("layer")\nview.write_url(kind="cross")\nview.read(view.LAYER)\n')
    assert _url_names_spelled(page) == [2, 3]


def test_the_view_declares_each_url_name_once():
    from viz.core import view

    declared = [v for v in vars(view).values() if isinstance(v, view.Value)]
    names = [v.name for v in declared if v.url]
    assert len(names) == len(set(names)) and len(names) > 30
    kept = [v.session_key for v in declared if not v.url]
    assert len(kept) == len(set(kept)), "two values the session keeps share a key"
    with pytest.raises(KeyError):
        view.write_url({view.Value("not_declared"): 1})


# -- where a value is declared: the shared view in viz/core/view.py, a module's own values in that module -------------
# Values of the view that one module uses, left in view.py for a reason (the integrator moves them: view.Own).
KEPT_IN_THE_VIEW: dict[str, str] = {}     # a session value one module uses, kept in the view: its reason


def _viz_modules() -> dict[str, Path]:
    return {module_name(p): p for p in python_files("viz")}


def _view_names_used(path: Path) -> set[str]:
    """The view's declarations a module names (view.LAYER); in view.py, those it uses beyond declaring them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.name == "view.py" and path.parent.name == "core":
        declared = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        loads = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        return {name for name in declared if name in loads}
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "view"}


def test_a_value_of_the_view_is_shared_or_carried():
    """viz/core/view.py declares the shared view: what a link or a class's view carries (every URL value:
    View.from_query reads it in a process that never ran the page) and what two modules or more keep in the
    session. A value one module alone keeps is declared in that module (view.Own)."""
    from viz.core import view
    users: dict[str, set[str]] = {}
    for module, path in _viz_modules().items():
        for name in _view_names_used(path):
            users.setdefault(name, set()).add(module)
    values = {name: v for name, v in vars(view).items() if isinstance(v, view.Value)}
    alone = {name: sorted(users.get(name, ())) for name, v in values.items()
             if not v.url and len(users.get(name, ())) < 2 and name not in KEPT_IN_THE_VIEW}
    assert alone == {}, f"declare these in the one module that uses them (view.Own): {alone}"
    assert set(KEPT_IN_THE_VIEW) <= set(values), "a value kept in the view for a reason is gone: drop its reason"


def test_a_modules_own_values_are_declared_in_it_and_used_there_only():
    """Every value outside viz/core/view.py comes from its module's own namespace (view.Own(<that module>)), no
    other module names it, and no two modules' session keys overlap (the namespace checks it on declaration)."""
    import importlib
    from viz.core import view
    shared = {id(v) for v in vars(view).values() if isinstance(v, view.Value)}
    owners = {}
    for module in _viz_modules():
        loaded = importlib.import_module(module)
        for name, thing in vars(loaded).items():
            if isinstance(thing, view.Own):
                assert thing.module == module, f"{module}: view.Own({thing.module!r}) names another module"
            if isinstance(thing, view.Value) and id(thing) not in shared:
                owners[(module, name)] = thing
    keys = view.owners()
    wrong = {f"{m}.{n}": keys.get(v.session_key) for (m, n), v in owners.items() if keys.get(v.session_key) != m}
    assert wrong == {}, f"a module's own value is declared with view.Own(<that module>) in it: {wrong}"
    own_names = {name: module for module, name in owners}
    named_elsewhere = {}
    for module, path in _viz_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in set(own_names.values()) and node.module != module:
                named_elsewhere.update({f"{module}: {a.name}": node.module for a in node.names
                                        if own_names.get(a.name) == node.module})
    assert named_elsewhere == {}, f"a module's own value is its own: {named_elsewhere}"


def test_own_keys_cannot_collide():
    from viz.core import view
    import viz.pages.heads      # declares "abl" (abl-<kind>-<layer>-<head>)
    with pytest.raises(ValueError, match="overlaps"):
        view.Own("tests.elsewhere").value("class-code")           # a session value of the shared view
    with pytest.raises(ValueError, match="overlaps"):
        view.Own("tests.elsewhere").value("abl-encoder")          # a part of the heads page's check boxes
    assert view.Own("viz.pages.heads").value("abl") == viz.pages.heads.ABLATE_BOX   # a page's run declares it again


def _shared_memo_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
            and getattr(n.func, "attr", getattr(n.func, "id", None)) == "shared_memo"]


def test_no_hand_written_shared_memo_keys():
    """A builder kept for every session is keyed by its arguments (@view.shared_cached), never by a tuple written
    beside it."""
    found = {p.name: lines for p in python_files("viz") if p.name != "view.py" and (lines := _shared_memo_calls(p))}
    assert found == {}, f"use @view.shared_cached: {found}"


def test_no_page_keeps_a_cache_of_its_own():
    """A page runs as __main__ and defines its functions and classes again every run: functools' cache there is
    empty each run, and a class of its own as a shared builder's argument is equal to nothing of the run before
    (the decoding page rebuilt every step on every run: 2.7 s at 40 words). A page keeps results with
    @view.shared_cached, its argument classes defined in a module (view.shared_cached refuses a page's class)."""
    found = {}
    for path in (ROOT / "viz" / "pages").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        used = [word for word in ("functools.cache", "lru_cache", "@cache") if word in text]
        if used:
            found[path.name] = used
    assert found == {}, found


def test_the_models_folder_is_named_and_searched_in_one_place():
    """model/io/models.py: the only code that names TRANSFORMER_VIZ_MODELS and lists a models folder; the app's
    picker (viz/services) and the `app` command (transformer_viz/app.py) both ask it."""
    def names_it(path: Path) -> bool:          # in a string the code uses (docstrings only describe it)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "TRANSFORMER_VIZ_MODELS" in n.value
                   and id(n) not in docs for n in ast.walk(tree))

    code = [*python_files("model"), *python_files("viz"), *python_files("transformer_viz")]
    assert [str(p.relative_to(ROOT)) for p in code if names_it(p)] == ["model/io/models.py"]
    from model.io import models
    from transformer_viz import app
    from viz.services.models import model_ids
    assert model_ids() == models.model_ids(ROOT / "pretrained")[:len(model_ids())]
    assert app.model_ids is models.model_ids


def test_navigation_lives_in_nav():
    """Pages, their URLs and the map blocks they explain: viz/elements/nav.py; the figures know no page."""
    for path in python_files("viz/figures"):
        text = path.read_text(encoding="utf-8")
        assert "PAGE_URLS" not in text and "PAGE_BLOCKS" not in text and "viz.elements.nav" not in text, path.name


def test_pages_see_the_model_through_a_read_only_view():
    """Pages get viz/services/models.ModelView (config, tokenizer, sizes, weights as arrays), never the engine: no viz
    module but services loads a bundle or reaches for its torch module."""
    for path in python_files("viz"):
        if is_under(module_name(path), {VIZ_SERVICES}):
            continue
        text = path.read_text(encoding="utf-8")
        assert "load_bundle" not in text and ".bundle" not in text and "get_submodule" not in text, path.name


def private_streamlit_uses(path: Path) -> list[str]:
    """Imports of Streamlit's internals (streamlit.runtime, streamlit.proto, any _private module or name) and
    attribute reads of a _private name of streamlit (st._foo): what the next release may change without notice."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "streamlit" and (parts[1:2] in (["runtime"], ["proto"]) or
                                            any(p.startswith("_") for p in parts[1:])):
                found.append(f"{node.lineno}: {name}")
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in ("st", "streamlit")):
            found.append(f"{node.lineno}: st.{node.attr}")
    return found


def test_the_app_uses_public_streamlit_only():
    """The live class once re-sent Streamlit's AutoRerun message by hand (streamlit.runtime, streamlit.proto) and
    parsed its XSRF cookie: a release could break either silently. tests/test_streamlit_contract.py checks what
    the app does rely on."""
    found = {str(p.relative_to(ROOT)): uses for p in [*python_files("viz"), *python_files("transformer_viz"),
                                                      ROOT / "transformer_viz_app.py", ROOT / "app.py"]
             if (uses := private_streamlit_uses(p))}
    assert found == {}, f"public Streamlit only: {found}"
    cookie_parsers = [str(p.relative_to(ROOT)) for p in python_files("viz") if "_streamlit_xsrf" in p.read_text()]
    assert cookie_parsers == [], "the app tells students apart by the ids it gives them, not Streamlit's cookies"


def test_the_private_streamlit_finder_finds_them(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import streamlit as st\nfrom streamlit.runtime.x import y\nfrom streamlit.proto.A_pb2 import A\n"
                      "import streamlit._private\nst._bidi_component('x')\nfrom streamlit.components.v2 import component\n")
    assert private_streamlit_uses(module) == ["2: streamlit.runtime.x", "2: streamlit.runtime.x.y",
                                              "3: streamlit.proto.A_pb2", "3: streamlit.proto.A_pb2.A",
                                              "4: streamlit._private", "5: st._bidi_component"]
