"""The downloadable lesson: every tour step with its formula and a figure from a real trace, user text
escaped, plotly.js inlined once; in Chromium with the network cut every chart draws and nothing runs;
and the app's download button under a page serves it."""
import re
import shutil

import pytest
from plotly.offline import get_plotlyjs

from browser_utils import CHROMIUM, browser, streamlit_server, wait_for_app
from conftest import ROOT
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from viz.lesson import STEP_FIGURES, formula_html, lesson_html, write_lesson
from viz.tour_steps import TOUR

HOSTILE = 'The man <script>alert(1)</script> & "quotes" went home.'
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;"
SENTENCES = {"toy-reverse": "c a f e", "en-es": HOSTILE}   # the toy model reads only the symbols a..j
MODELS = tuple(SENTENCES)


@pytest.fixture(scope="module")
def lessons(tmp_path_factory) -> dict:
    """model id -> path of its lesson."""
    folder = tmp_path_factory.mktemp("lessons")
    return {m: write_lesson(trace_of(m, text), folder / f"{m}.html", ROOT / "pretrained" / m)
            for m, text in SENTENCES.items()}


def trace_of(model: str, text: str, target: str | None = None):
    return trace_sentence(load_checkpoint(ROOT / "pretrained" / model), text, target=target)


def n_figures(page: str) -> int:
    return page.count('class="plotly-graph-div"')


def test_every_tour_step_has_a_figure_builder():
    assert [s.title for s in TOUR] == list(STEP_FIGURES)


@pytest.mark.parametrize("step", TOUR, ids=lambda s: s.title)
def test_formulas_read_as_text(step):
    text = formula_html(step.formula)
    assert not re.search(r"[\\{}]", text), text
    assert "frac" not in text and "mathrm" not in text


def test_formula_pieces():
    root_dk = '√<span class="radicand">d<sub>k</sub></span>'
    assert formula_html(r"\frac{QK^\top}{\sqrt{d_k}}") == f"QK<sup>T</sup>/{root_dk}"
    assert formula_html(r"\frac{z-\mu}{\sigma}") == "(z−μ)/σ"
    assert formula_html(r"M_{ts}=-\infty\ \text{for}\ s>t") == "M<sub>ts</sub>=−∞ for s&gt;t"


def test_user_text_is_escaped(lessons):
    page = lessons["en-es"].read_text(encoding="utf-8")
    assert ESCAPED in page
    assert "<script>alert" not in page and "alert(1)</script>" not in page


@pytest.mark.parametrize("model", MODELS)
def test_lesson_names_the_model_and_shows_every_step(lessons, model):
    page = lessons[model].read_text(encoding="utf-8")
    assert f"<dd>{model}</dd>" in page
    assert [f"Step {i} of {len(TOUR)}: " in page for i in range(1, len(TOUR) + 1)] == [True] * len(TOUR)
    assert page.count("\\mathrm") == page.count("\\frac") == 0


@pytest.mark.parametrize("model", MODELS)
def test_plotly_js_inlined_once_and_nothing_fetched(lessons, model):
    page = lessons[model].read_text(encoding="utf-8")
    assert page.count(get_plotlyjs()[:2000]) == 1
    assert not re.search(r"<script[^>]*\ssrc=|<link\b|<iframe\b|<img\b", page)


def test_figures_per_model(lessons):
    """en-es ships its training log (the last step's loss curve); the toy models do not."""
    counts = {m: n_figures(lessons[m].read_text(encoding="utf-8")) for m in MODELS}
    assert counts == {"toy-reverse": len(TOUR) - 1, "en-es": len(TOUR)}


def test_teacher_forced_target_is_named():
    page = lesson_html(trace_of("en-es", "The house.", target="<b>La</b> casa."))
    assert "Target (teacher-forced)" in page and "&lt;b&gt;La&lt;/b&gt; casa." in page


# Every chart has its SVG and, inside it, the drawn data: a heatmap's image, bars or lines.
DRAWN_JS = """n => { const plots = [...document.querySelectorAll('.js-plotly-plot')];
  return plots.length === n && plots.every(p => p.querySelector('.main-svg')
    && p.querySelector('.heatmaplayer image, .bars path, .scatterlayer path')); }"""


@pytest.fixture(scope="module")
def chromium():
    if not shutil.which(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    with browser() as b:
        yield b


@pytest.mark.browser
@pytest.mark.parametrize("model", MODELS)
def test_every_chart_draws_offline_and_nothing_runs(lessons, model, chromium):
    path = lessons[model]
    expected = n_figures(path.read_text(encoding="utf-8"))
    blocked, dialogs, errors = [], [], []
    with chromium.new_context(viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                   else (blocked.append(route.request.url), route.abort()))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_function(DRAWN_JS, arg=expected, timeout=120_000)   # times out unless every chart drew
        header = page.inner_text("header")
    assert dialogs == [] and errors == [], (dialogs, errors)
    assert blocked == []
    assert SENTENCES[model] in header


@pytest.mark.browser
def test_download_button_under_a_page_serves_the_lesson(tmp_path, chromium):
    """viz/lesson_ui.py through viz/presenter.py: the button is under the page and its file is the lesson."""
    with streamlit_server() as url:
        page = chromium.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        page.goto(f"{url}/tour?model=toy-reverse&text=c+a+f+e")
        wait_for_app(page)
        button = page.get_by_role("button", name="Download this lesson as HTML")
        with page.expect_download(timeout=120_000) as download:
            button.click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
    assert saved.name == "lesson-toy-reverse-c-a-f-e.html"
    lesson = saved.read_text(encoding="utf-8")
    assert "<dd>c a f e</dd>" in lesson and f"Step {len(TOUR)} of {len(TOUR)}" in lesson
