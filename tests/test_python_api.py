"""docs/python-api.md runs as written: every ```python block, in order, in one namespace, in an empty
working directory (the page finds pretrained/ itself), and the files it says it writes are written."""
import re

import pytest

from conftest import ROOT
from viz.figures.style import Look
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

DOC = ROOT / "docs" / "python-api.md"


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_page_has_runnable_examples():
    blocks = python_blocks()
    assert len(blocks) >= 3
    assert not any(".show()" in b for b in blocks), "a test run must not open a browser"


def test_every_example_runs_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc_example__"}
    for number, block in enumerate(python_blocks(), start=1):
        try:
            exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - name the block, not just the line inside it
            pytest.fail(f"{DOC.name}, python block {number} failed: {type(e).__name__}: {e}")
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["cross-attention.html", "decoder-heads.html", "lesson.html", "three-figures.html"]
    assert all((tmp_path / name).stat().st_size > 1000 for name in written)


@pytest.fixture(scope="module")
def toy_trace():
    from model import load_checkpoint, trace_sentence
    return trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), "c a f e")


def test_attention_figure_averages_heads_or_shows_one(toy_trace):
    import numpy as np
    from model.capture import schema
    from viz.figures import attention_figure
    patterns = toy_trace[schema.pattern_name("cross", 1)]
    assert np.allclose(attention_figure(toy_trace, Look(EN), "cross", 1).data[0].z, patterns.mean(0))
    assert np.allclose(attention_figure(toy_trace, Look(EN), "cross", 1, head=1).data[0].z, patterns[1])


@pytest.mark.parametrize("args, message", [(("cross", 9), "layer 9 does not exist"),
                                           (("encoder", 0, 99), "head 99 does not exist"),
                                           (("sideways", 0), "unknown attention kind")])
def test_attention_figure_says_what_is_wrong(toy_trace, args, message):
    from viz.figures import attention_figure
    with pytest.raises(ValueError, match=message):
        attention_figure(toy_trace, Look(EN), *args)


def test_the_python_api_writes_modern_spanish_unless_asked():
    """translate and trace_sentence wrote the 1909 Bible's Spanish ('Y el varón se fué á la casa.') where the app
    and the command line write modern by default; style= chooses, a text led by a style token keeps it."""
    from model import find_model, load_checkpoint, trace_sentence, translate
    bundle = load_checkpoint(find_model("en-es"))
    assert translate(bundle, "The man went to the house.") == "El hombre fue a la casa."
    assert translate(bundle, "The man went to the house.", style="bible") == "Y el varón se fué á la casa."
    assert translate(bundle, "<bible> The man went to the house.") == "Y el varón se fué á la casa."
    trace = trace_sentence(bundle, "The man went to the house.")
    assert trace.meta["src_tokens"][0] == "<modern>" and trace.meta["translation"] == "El hombre fue a la casa."
    assert trace_sentence(bundle, "The man went to the house.", style="bible").meta["src_tokens"][0] == "<bible>"
    toy = load_checkpoint(find_model("toy-reverse"))
    assert translate(toy, "a b c", style="bible") == "c b a"         # a one-style model has no style to choose


# == the API as written (issue 45): every public name, and every python block of the README and the docs ==========
def python_blocks_of(path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_every_public_name_is_what_it_names():
    """`from model import capture` gave the subpackage model/capture/ once anything had imported it, and the
    README's `with capture() as trace:` raised "'module' object is not callable"."""
    import importlib
    import inspect
    import model
    import model.capture.hooks
    from model.capture import schema, trace  # noqa: F401  (its modules stay importable by name)
    for name in model.__all__:
        public = getattr(model, name)
        assert not inspect.ismodule(public), name
        assert public is getattr(importlib.import_module(model._PUBLIC[name]), name), name
    from model import capture, load_checkpoint
    assert inspect.isfunction(capture)
    with capture() as traced:
        load_checkpoint(ROOT / "pretrained" / "toy-reverse").model.encode(__import__("torch").tensor([[3, 4, 2]]))
    assert any(name.startswith("encoder.layers.0.") for name in traced.arrays)


def test_the_readme_and_trace_format_examples_run_as_written(tmp_path, monkeypatch):
    """The README's block writes trace.npz; docs/trace-format.md's block reads it back with numpy alone."""
    monkeypatch.chdir(tmp_path)
    for doc in (ROOT / "README.md", ROOT / "docs" / "trace-format.md"):
        blocks = python_blocks_of(doc)
        assert blocks, doc
        for number, block in enumerate(blocks, start=1):
            try:
                exec(compile(block, f"{doc.name} block {number}", "exec"), {"__name__": "__doc_example__"})
            except Exception as e:  # noqa: BLE001 - name the block, not just the line inside it
                pytest.fail(f"{doc.name}, python block {number} failed: {type(e).__name__}: {e}")
    assert (tmp_path / "trace.npz").stat().st_size > 10_000


def test_the_lesson_has_as_many_steps_as_the_docs_say():
    from viz.tour.steps import TOUR
    assert f"all {len(TOUR)} steps of the tour" in DOC.read_text(encoding="utf-8")
