"""Start page, guided tour, About and explorer: the picture first, drawn from the sidebar sentence (AppTest
with the toy model), the confidence service behind the start page, and the page-module style."""
import ast
import base64
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest

from apptest_utils import BROWSER_VIEW_KEY, browser_view_sent, no_exceptions, run_page, texts
from model.capture import schema
from model.analysis.confidence import token_confidence
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from viz.core.model_words import what_the_model_knows
from viz.core.i18n import catalogue
from viz.tour.steps import TOUR

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "pretrained" / "toy-reverse"
MY_PAGES = ["home.py", "tour.py", "about.py", "explorer.py"]
LONG_TEXT = 200        # characters: more than a title or a one-line "source → translation"


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(TOY, device="cpu")


def _figure(chart):
    """The chart's figure as plotly reads it back (typed arrays decoded)."""
    return pio.from_json(chart.proto.spec)


def _array(value) -> np.ndarray:
    """A figure array as sent to the browser: a list, or plotly's typed array {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        shape = [int(n) for n in str(value.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape)
    return np.asarray(value)


def _before_first_chart(at) -> list:
    """The main area's elements, in page order, up to the first chart (which must exist)."""
    nodes = [n for n in at.main if getattr(n, "type", None) or getattr(n, "key", None) == BROWSER_VIEW_KEY]
    first = next(i for i, n in enumerate(nodes) if getattr(n, "type", None) == "plotly_chart"
                 or getattr(n, "key", None) == BROWSER_VIEW_KEY)
    return nodes[:first]


def assert_picture_first(at) -> None:
    """Title, compact controls, then the picture: no formula, table, expander or paragraph before it."""
    for node in _before_first_chart(at):
        assert node.type not in ("latex", "dataframe", "expander", "tabs"), node.type
        if node.type == "markdown":
            assert len(str(node.value)) < LONG_TEXT, node.value


# -- the page modules' style ---------------------------------------------------------------------------
@pytest.mark.parametrize("page", MY_PAGES)
def test_page_module_is_imports_constants_functions_and_render(page):
    """Importing a page runs nothing: module level holds imports, constants and functions; Streamlit runs
    the file as __main__, where the last statement calls render()."""
    tree = ast.parse((ROOT / "viz" / "pages" / page).read_text(encoding="utf-8"))
    body = tree.body
    last = body[-1]
    assert isinstance(last, ast.If) and ast.unparse(last.test) == "__name__ == '__main__'"
    assert [ast.unparse(s) for s in last.body] == ["render()"]
    assert any(isinstance(s, ast.FunctionDef) and s.name == "render" for s in body)
    for stmt in body[:-1]:
        assert isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign, ast.AnnAssign, ast.Expr)), \
            ast.unparse(stmt)[:80]
        if isinstance(stmt, ast.Expr):                                       # only the docstring
            assert isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):                    # constants: no calls into streamlit
            assert "st." not in ast.unparse(stmt.value), ast.unparse(stmt)[:80]


# -- the confidence service ------------------------------------------------------------------------------
def test_token_confidence_is_each_tokens_probability_and_its_runner_up(toy):
    for target in (None, "a b d c"):                        # the model's own output, and a teacher-forced one
        trace = trace_sentence(toy, "c a f e", target=target)
        table = token_confidence(trace, toy.tokenizer.token_strings)
        logits = trace[schema.LOGITS].astype(np.float64)
        probs = np.exp(logits - logits.max(1, keepdims=True))
        probs /= probs.sum(1, keepdims=True)
        ids = trace.meta["tgt_ids"]
        assert list(table["token"]) == trace.meta["tgt_out_tokens"]
        assert np.allclose(table["p"], probs[np.arange(len(ids)), ids])
        for t, tid in enumerate(ids):
            others = np.delete(probs[t], tid)
            assert table["runner_up_p"][t] == pytest.approx(others.max())
            assert table["runner_up"][t] != toy.tokenizer.token_strings([tid])[0]
        assert np.isclose(np.log(table["p"]).sum(), trace.meta["tgt_logprob"], atol=1e-4)
    trace.arrays.pop(schema.LOGITS)
    assert token_confidence(trace, toy.tokenizer.token_strings) is None


def test_what_the_model_knows_is_said_plainly():
    en_es = what_the_model_knows("en-es", None)
    assert "WordNet" in en_es and "Apertium" in en_es and "1909" in en_es and "Reina-Valera" in en_es and "se fué á casa" in en_es and "wrong" in en_es
    assert "reverse" in what_the_model_knows("toy-reverse", {"task": "reverse"})
    assert what_the_model_knows("someone-elses", {}) is None


# -- the pages -------------------------------------------------------------------------------------------
def test_home_draws_the_translation_its_attention_and_confidence_first(toy):
    at = run_page("home.py", model="toy-reverse", text="c a f e")
    no_exceptions(at)
    assert_picture_first(at)
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and "home-translation" in c.proto.id)
    heat, chosen, runner_up = _figure(chart).data
    trace = trace_sentence(toy, "c a f e")
    last = schema.n_layers(toy.config, "cross") - 1
    expected = trace[schema.pattern_name("cross", last)].mean(0)
    assert np.allclose(_array(heat.z).astype(float), expected, atol=1e-5)    # last layer, mean of heads
    assert len(_array(chosen.x)) == len(trace.meta["tgt_ids"]) == len(_array(runner_up.x))
    body = texts(at)
    assert "averaged over its" in body and "What this model knows" in body and "reverse" in body
    assert {link.proto.page for link in at.get("page_link")} >= {"tour", "explorer"}


def test_where_to_go_next_gives_each_link_half_the_page():
    """At 1280x720 four links in one row cut their labels ('Guided tour: one idea per s', 'Watch it write,
    token by tok'): two a row, each link in a column of its own."""
    at = run_page("home.py", model="toy-reverse", text="c a f e")
    no_exceptions(at)
    rows = [block for block in at.main.children.values()
            if any(link.type == "page_link" for column in getattr(block, "children", {}).values()
                   for link in getattr(column, "children", {}).values())]
    assert len(rows) == 2
    for row in rows:
        columns = list(row.children.values())
        assert len(columns) == 2 and all(len(column.children) == 1 for column in columns)


def test_home_without_a_sentence_still_says_what_the_model_is():
    at = run_page("home.py", model="toy-reverse", text="")
    no_exceptions(at)
    assert "Type a sentence in the sidebar" in texts(at) and "parameters" in texts(at)
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("number", range(1, len(TOUR) + 1))
def test_every_tour_step_draws_its_picture_in_place_first(number):
    at = run_page("tour.py", model="toy-reverse", text="a b c d", tour_step=number)
    no_exceptions(at)
    step = TOUR[number - 1]
    assert f"Step {number} of {len(TOUR)}: {catalogue('en')[step.message_key('title')]}" in texts(at)
    assert at.get("page_link"), "the step still links to its full page"
    if step.key == "learn":                     # the toy keeps no training log: said, not drawn
        assert catalogue("en")["tour.no_training_log"] in texts(at)
        return
    assert_picture_first(at)
    assert any(c.proto.id and f"tour-picture-{number}" in c.proto.id for c in at.get("plotly_chart"))


def test_tour_without_a_sentence_asks_for_one_instead_of_a_picture():
    at = run_page("tour.py", model="toy-reverse", text="", tour_step=4)
    no_exceptions(at)
    assert "see this step drawn from it" in texts(at) and not at.get("plotly_chart")


def test_about_and_explorer_show_their_picture_first():
    about = run_page("about.py", model="toy-reverse", text="a b c d")
    no_exceptions(about)
    assert_picture_first(about)
    first = _figure(about.get("plotly_chart")[0])
    assert first.layout.xaxis.type == "log" and first.layout.xaxis.range[1] < 4
    explorer = run_page("explorer.py", model="toy-reverse", text="a b c d", kind="cross")
    no_exceptions(explorer)
    assert_picture_first(explorer)
    assert "click a thumbnail" in browser_view_sent(explorer)[1]["kinds"]["cross"]["grid"]["layout"]["title"]["text"]


def test_home_says_the_sentence_as_typed_and_its_translation():
    """The two-style model reads '<modern> The man…'; the line over the picture said so ('**<modern> The man went
    to the house.** → …'). It shows the sentence as the reader typed it; the token stays in the pictures."""
    at = run_page("home.py", model="en-es", text="The man went to the house.")
    no_exceptions(at)
    shown = next(m for m in at.markdown if "→" in m.value)
    line = shown.value.replace("\\", "")                                            # Markdown-escaped
    assert line.startswith("**The man went to the house.** → **") and "modern" not in line
    assert shown.proto.wrap is False          # one line whatever the sentence's length (issue 46, item 5)
