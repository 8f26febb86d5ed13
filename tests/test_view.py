"""The view (viz/core/view.py): declared values, checked like a link's; the sidebar's input survives Streamlit dropping
its widgets' state; a view is a plain value that round-trips through its URL."""
import pytest

from apptest_utils import no_exceptions, run_page
from viz.core import view
from viz.core.view import View

SENTENCE = "Hello, my friend: is it 5+5=10?"


def test_the_sidebar_keeps_the_sentence_when_streamlit_drops_its_widgets(tmp_path):
    """Streamlit deletes a widget's state when a finished run did not draw it (a click on the menu before the
    sidebar had drawn). Here one run of a script that draws no sidebar stands for that run. The sentence, the
    decoding settings and presenter mode come back from the view; before, the sentence was empty for the rest of
    the session and beam and token limit were said to be bad values."""
    at = run_page("explorer.py", text=SENTENCE, beam="3", max_tokens="40", present="1")
    no_exceptions(at)
    app = at._script_path
    blank = tmp_path / "no_sidebar.py"
    blank.write_text("import streamlit as st\nst.write('the menu was clicked')\n")
    at._script_path = str(blank)
    at.run()
    assert not at.sidebar.children                        # Streamlit dropped the sidebar widgets' state
    at._script_path = app
    at.run()
    no_exceptions(at)
    assert at.text_area(key="text").value == SENTENCE
    assert at.number_input(key="beam").value == 3 and at.number_input(key="max_tokens").value == 40
    assert at.toggle(key="presenter").value is True
    assert not at.warning, [w.value for w in at.warning]
    assert at.get("plotly_chart"), "the page drew nothing"


def test_each_sidebar_value_is_read_from_the_link_once():
    """A later link in the same session does not overwrite what the student has typed since."""
    at = run_page("explorer.py", text="The man went to the house.")
    at.text_area(key="text").input("The woman went to the sea.").run()
    at.query_params["text"] = "ignored"
    at.run()
    assert at.text_area(key="text").value == "The woman went to the sea."


@pytest.mark.parametrize("name, raw, expected, said", [
    ("layer", "2", 2, False), ("layer", "99", 0, True), ("layer", "1_0", 0, True), ("layer", "9" * 19, 0, True),
    ("head", "-1", -1, False), ("kind", "cross", "cross", False), ("kind", "sideways", "encoder", True),
    ("present", "1", True, False), ("present", "yes", False, True), ("text", SENTENCE, SENTENCE, False),
    ("text", "x" * 6000, "x" * 5000, True), ("tour_step", "12", 12, False), ("tour_step", "0", 1, True),
])
def test_a_url_value_is_checked_by_its_declaration(name, raw, expected, said):
    """Whole numbers of at most 18 digits within bounds, choices, on/off, text cut to its length (said)."""
    notices: list[str] = []
    assert view.check(view.DECLARED[name], raw, notices) == expected
    assert bool(notices) == said, notices


def test_a_view_is_a_plain_value_that_round_trips_through_its_url():
    query = {"model": "en-es", "text": SENTENCE, "lang": "zh", "present": "1", "kind": "cross", "layer": "2",
             "head": "-1", "unknown": "x"}
    a = View.from_query("explorer", query)
    assert a.get(view.LAYER) == 2 and a.get(view.PRESENT) is True and a.get(view.KIND) == "cross"
    assert "unknown" not in a.query()
    b = View.from_query("explorer", a.query())
    assert a == b and hash(a) == hash(b)
    assert View.from_query("explorer", {**query, "layer": "1"}) != a
    assert a.url().startswith("/explorer?") and "Hello%2C+my+friend%3A+is+it+5%2B5%3D10%3F" in a.url()


# -- a shared builder is keyed by its arguments (view.shared_cached) -------------------------------------------------
def test_a_shared_builder_is_keyed_by_its_arguments():
    built = []

    @view.shared_cached
    def square(n: int, *, plus: int = 0) -> int:
        built.append((n, plus))
        return n * n + plus

    assert square(3) == 9 and square(3) == 9 and built == [(3, 0)]          # equal arguments: one entry
    assert square(4) == 16 and square(3, plus=1) == 10                       # different ones: an entry each
    assert built == [(3, 0), (4, 0), (3, 1)]


@pytest.mark.parametrize("shared", [view.shared_cached, view.shared_part])
def test_two_builders_of_one_name_in_two_files_are_two_entries(shared):
    """Pages run as __main__: a builder is keyed by its file and name, not its module's name (a part's too: the
    multi-head page's layer_part and the LayerNorm page's)."""
    made = {}
    for file in ("a.py", "b.py"):
        code = compile("def build(n):\n    return (__file__, n)\n", file, "exec")
        space = {"__file__": file}
        exec(code, space)
        made[file] = shared(space["build"])
    assert made["a.py"](1) == ("a.py", 1) and made["b.py"](1) == ("b.py", 1)


def test_parts_are_kept_apart_from_bodies_and_built_after_a_checkpoint(monkeypatch):
    """A whole body's parts (the zoo's 72 heads a sentence) are counted apart from the bodies: building them evicts
    no page's body (counted together, one zoo sentence evicted every body kept). Each part built gives way to a
    newer run first (view.checkpoint); one already kept does not ask."""
    from collections import OrderedDict

    monkeypatch.setattr(view, "_shared", OrderedDict())
    monkeypatch.setattr(view, "_parts", set())
    checks = []
    monkeypatch.setattr(view, "checkpoint", lambda: checks.append(1))

    @view.shared_cached
    def body(n: int) -> list:
        return ["body", n]

    @view.shared_part
    def part(n: int) -> list:
        return ["part", n]

    bodies = [body(n) for n in range(view.SHARED_MEMO_SIZE)]
    parts = [part(n) for n in range(view.SHARED_PARTS_SIZE + 3)]
    assert len(checks) == view.SHARED_PARTS_SIZE + 3 and part(5) is parts[5] and len(checks) == len(parts)
    assert all(body(n) is bodies[n] for n in range(view.SHARED_MEMO_SIZE))          # every body kept
    assert part(3) is parts[3] and part(2) is not parts[2]                           # the oldest three went
    body(view.SHARED_MEMO_SIZE)                                                      # a body more: the oldest goes
    assert body(0) is not bodies[0] and part(view.SHARED_PARTS_SIZE + 2) is parts[-1]


def test_a_shared_builder_refuses_what_cannot_be_its_key():
    @view.shared_cached
    def total(values) -> int:
        return sum(values)

    with pytest.raises(TypeError, match="pass what determines the result"):
        total([1, 2])                           # a list (an array, a dict, a Context) would be left out of the key
    assert total((1, 2)) == 3


def test_a_shared_builder_refuses_a_class_a_page_defines():
    """A page runs as __main__ and defines its classes again every run: an instance of one (the decoding page's
    Decoded and Settings were) equals nothing of the run before, so the builder was built again every run."""
    space = {"__name__": "__main__"}
    exec(compile("from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Pick:\n    step: int\n",
                 "page.py", "exec"), space)

    @view.shared_cached
    def shown(pick) -> int:
        return pick.step

    with pytest.raises(TypeError, match="Pick is defined in a page"):
        shown(space["Pick"](1))


def test_a_traced_context_is_keyed_by_its_trace_key():
    from types import SimpleNamespace

    from viz.core.context import Context, Traced
    model = SimpleNamespace(tokenizer=SimpleNamespace(styled=lambda text, style: text))

    def context(text: str, notices: list[str]) -> Context:
        return Context("m", model, text, None, 1, 64, None, notices)

    a, b = context("a b", []), context(" a b ", ["a notice"])     # the same sentence as the model reads it
    assert a.traced == b.traced and hash(a.traced) == hash(b.traced) and a.traced.model_id == "m"
    assert context("a c", []).traced != a.traced
    assert isinstance(a.traced, Traced)
    with pytest.raises(TypeError):
        hash(a)                                 # the Context itself cannot be a key
