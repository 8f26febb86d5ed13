"""The downloadable lesson: every tour step with its formula and a figure from a real trace, user text
escaped, plotly.js inlined once; in Chromium with the network cut every chart draws and nothing runs;
and the app's download button at the top of a page serves it. In English by default, in 中文 when asked (the
page's words, the steps and the figures; never the tokens or the model's translation)."""
import ast
import functools
import html
import json
import re
from types import SimpleNamespace

import pytest
from plotly.offline import get_plotlyjs

from apptest_utils import no_exceptions, run_page
from browser_utils import APP_TIMEOUT_MS, streamlit_server, wait_for_app
from conftest import ROOT
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from test_cli import TOY, run_cli
from test_i18n import HAN, chart_texts, english_left
from viz.core.i18n import catalogue
from viz.tour.formula_html import formula_html
from viz.tour.lesson import BUNDLE_TRACE_TYPES, PLOTLY_BUNDLE, lesson_html, write_lesson
from model.capture import schema
from viz.figures.head_view import head_color, head_view_data, rgba
from viz.tour.pictures import MORE_READINGS, STEP_FIGURES
from viz.tour.steps import TOUR

HOSTILE = 'The man <script>alert(1)</script> & "quotes" went home.'
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;"
SENTENCES = {"toy-reverse": "c a f e", "en-es": HOSTILE}   # the toy model reads only the symbols a..j
MODELS = tuple(SENTENCES)
MULTI_HEAD = next(n for n, step in enumerate(TOUR, 1) if step.key == "multi_head")   # its step's number
PICTURES = len(TOUR) + sum(map(len, MORE_READINGS.values()))   # every step's pictures (multi-head: + its head view)


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
    assert sorted(s.key for s in TOUR) == sorted(STEP_FIGURES)


@pytest.mark.parametrize("step", TOUR, ids=lambda s: s.key)
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
    assert page.count(PLOTLY_BUNDLE.read_text(encoding="utf-8")) == 1
    assert get_plotlyjs()[200:2000] not in page                      # not plotly.py's full bundle as well
    assert not re.search(r"<script[^>]*\ssrc=|<link\b|<iframe\b|<img\b", page)


def plotly_js_version(text: str) -> str:
    return re.search(r"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+)", text[:300]).group(1)


def test_the_bundle_is_the_plotly_js_of_plotly_py_and_mit():
    """The vendored partial bundle is the plotly.js that plotly.py writes its figures for (a plotly upgrade
    fails here until the bundle follows: viz/vendor/README.md), MIT-licensed, with its licence beside it."""
    bundle = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    assert plotly_js_version(bundle) == plotly_js_version(get_plotlyjs())
    assert "(cartesian - minified)" in bundle[:100] and "Licensed under the MIT license" in bundle[:300]
    assert (PLOTLY_BUNDLE.parent / "plotly.js-LICENSE").read_text().startswith("MIT License")
    assert "</script" not in bundle.lower()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lesson_fits_in_2_mb(lessons, styled_lessons, lang):
    """Small enough to mail to a class (it weighed 5.0 MB, 4.8 of it the full plotly.js); every figure of
    a trace type the partial bundle draws."""
    page = styled_lessons["modern", lang]
    assert len(page.encode("utf-8")) <= 2_000_000
    types = {trace["type"] for spec in figure_specs(page) for trace in spec["data"]}
    assert types == {"heatmap", "bar", "scatter"} and types <= BUNDLE_TRACE_TYPES
    assert lessons["en-es"].stat().st_size <= 2_000_000


def test_a_trace_type_the_bundle_cannot_draw_is_refused():
    import plotly.graph_objects as go
    from viz.tour.lesson import _figure_div
    with pytest.raises(ValueError, match="cannot draw sankey"):
        _figure_div(go.Figure(go.Sankey()), "figure-1-0")


def test_one_lesson_whatever_the_process_plotly_template(toy_trace, monkeypatch):
    """The app's process imports Streamlit's plotly_chart, which makes its "streamlit" template plotly.py's
    default (no automargin): the download button's lesson lost its layer labels and drew axis titles over the
    ticks where the command line's did not. The lesson is the same bytes under either default."""
    import plotly.io as pio
    model_dir = ROOT / "pretrained" / "toy-reverse"
    monkeypatch.setattr(pio.templates, "default", "plotly")
    plain = lesson_html(toy_trace, model_dir)
    import streamlit.elements.plotly_chart  # noqa: F401  registers the template
    monkeypatch.setattr(pio.templates, "default", "streamlit")
    assert lesson_html(toy_trace, model_dir) == plain
    assert all(spec["layout"]["template"]["layout"]["xaxis"]["automargin"] for spec in figure_specs(plain))


def test_figures_per_model(lessons):
    """en-es ships its training log (the last step's loss curve); the toy models do not."""
    counts = {m: n_figures(lessons[m].read_text(encoding="utf-8")) for m in MODELS}
    assert counts == {"toy-reverse": PICTURES - 1, "en-es": PICTURES}


def test_teacher_forced_target_is_named():
    page = lesson_html(trace_of("en-es", "The house.", target="<b>La</b> casa."))
    assert "Target (teacher-forced)" in page and "&lt;b&gt;La&lt;/b&gt; casa." in page


# Every chart has its SVG and, inside it, the drawn data: a heatmap's image, bars or lines.
DRAWN_JS = """n => { const plots = [...document.querySelectorAll('.js-plotly-plot')];
  return plots.length === n && plots.every(p => p.querySelector('.main-svg')
    && p.querySelector('.heatmaplayer image, .bars path, .scatterlayer path')); }"""


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
        head_view = f"#step-{MULTI_HEAD} .beside .js-plotly-plot .scatterlayer path.js-line"
        head_view_lines = page.locator(head_view).count()
    assert dialogs == [] and errors == [], (dialogs, errors)
    assert blocked == []
    assert head_view_lines > 0                 # the multi-head step's head view drew its lines, offline
    assert SENTENCES[model] in header


# -- the head view (issue 26, item 10) -------------------------------------------------------------------
def step_html(page: str, number: int) -> str:
    start = page.index(f'<section id="step-{number}">')
    return page[start:page.index("</section>", start)]


def head_view_spec(page: str) -> dict:
    """The head view among a page's figures: the one whose legend isolates a head."""
    (spec,) = [f for f in figure_specs(page) if f["layout"].get("legend", {}).get("itemclick") == "toggleothers"]
    return spec


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_multi_head_step_shows_the_head_view_of_its_layer(lang):
    """The multi-head step shows the heads' grid, then the same layer's head view from the real trace: one legend entry per
    head named in the lesson's language (head 0 shown, the others a click away), one line trace per head and
    opacity level in the head's colour; its reading line beside it."""
    trace = trace_of("en-es", "The man went to the house.")
    page = lesson_html(trace, lang=lang)
    number = MULTI_HEAD
    step = step_html(page, number)
    assert n_figures(step) == 2 and step.count('<div class="beside">') == 1
    assert [n_figures(step_html(page, n)) for n in (number - 1, number + 1)] == [1, 1]
    spec = head_view_spec(step)
    assert head_view_spec(page) == spec                                   # the lesson's one head view
    patterns = schema.stacked(trace, "encoder")[0]                        # [8 heads, 8, 8]
    name = {"en": "head {h}", "zh": "头 {h}"}[lang]
    legend = [t for t in spec["data"] if t.get("legendgroup") and t.get("showlegend") is not False]
    assert [t["name"] for t in legend] == [name.format(h=h) for h in range(len(patterns))]
    assert [t["visible"] for t in legend] == [True] + ["legendonly"] * (len(patterns) - 1)
    lines = [t for t in spec["data"] if t.get("legendgroup") and t.get("showlegend") is False]
    groups = head_view_data(patterns)
    assert len(lines) == len(groups) > len(patterns)
    assert [(t["legendgroup"], t["line"]["color"], len(t["x"])) for t in lines] == \
        [(f"h{g.head}", rgba(head_color(g.head), g.alpha), 3 * len(g.query)) for g in groups]
    assert {"en": "Encoder self-attention, layer 0", "zh": "编码器自注意力"}[lang] in spec["layout"]["title"]["text"]
    reading = catalogue(lang)["tour.multi_head.reading_lines"]
    # beside the head view, and before it in the file, so that plotly sizes the view to its half of the row
    assert f'<div class="beside"><p class="how">{html.escape(reading)}</p><div class="picture">' in step
    assert re.findall(r"https?://[^\s\"']*", step) == ["http://www.w3.org/1998/Math/MathML"]   # no address but a name


@pytest.mark.browser
def test_the_head_view_isolates_a_head_offline(lessons, chromium):
    """In Chromium with the network cut: the head view draws head 0's lines; a click on head 3 in the legend
    shows every head, a second click head 3 alone (plotly's own legend, no server)."""
    path = lessons["en-es"]
    shown = """() => { const gd = document.querySelectorAll('#step-MULTI_HEAD .js-plotly-plot')[1];
      return [...new Set(gd._fullData.filter(t => t.visible === true && t.legendgroup).map(t => t.legendgroup))].sort(); }"""
    shown = shown.replace("MULTI_HEAD", str(MULTI_HEAD))
    blocked, errors = [], []
    with chromium.new_context(viewport={"width": 1280, "height": 720}) as context:
        page = context.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                   else (blocked.append(route.request.url), route.abort()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        view = page.locator(f"#step-{MULTI_HEAD} .beside .js-plotly-plot")
        view.locator(".scatterlayer path.js-line").first.wait_for(state="attached", timeout=120_000)
        seen = [page.evaluate(shown)]
        toggle = view.locator(".legend .legendtoggle").nth(3)
        toggle.scroll_into_view_if_needed()
        for _ in range(2):
            toggle.click()
            page.wait_for_timeout(1000)     # plotly waits out its double-click delay (300 ms) before a click acts
            seen.append(page.evaluate(shown))
        legend = view.locator(".legend .traces text.legendtext").evaluate_all("els => els.map(e => e.textContent)")
        # the view keeps to its box and the reading beside it shows (it drew 1,100 px wide over the reading)
        boxes = page.evaluate("""() => { const row = document.querySelector('#step-MULTI_HEAD .beside');
          const box = e => row.querySelector(e).getBoundingClientRect();
          return [box('.picture').right, box('.main-svg').right, box('.how').left]; }""".replace("MULTI_HEAD", str(MULTI_HEAD)))
    assert boxes[1] <= boxes[0] + 1 and boxes[0] < boxes[2], boxes
    assert errors == [] and blocked == []
    assert legend == [f"head {h}" for h in range(8)]
    assert seen == [["h0"], sorted(f"h{h}" for h in range(8)), ["h3"]]


# Every chart as drawn: its tick labels, and whether each label and axis title lies inside the figure and clear of
# the other texts (the download button's lesson drew the heads step's "layer 0" left of the figure, cut off,
# and axis titles over the ticks)
DRAWN_LAYOUT_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(p => {
  const svg = p.querySelector('.main-svg').getBoundingClientRect();
  const boxes = sel => [...p.querySelectorAll(sel)].filter(e => e.textContent).map(e => e.getBoundingClientRect());
  const inside = b => b.left >= svg.left - 1 && b.right <= svg.right + 1 && b.top >= svg.top - 1 && b.bottom <= svg.bottom + 1;
  const apart = (a, b) => a.right <= b.left + 1 || b.right <= a.left + 1 || a.bottom <= b.top + 1 || b.bottom <= a.top + 1;
  const ticks = boxes('.xtick text, .ytick text'), titles = boxes('.g-xtitle text, .g-ytitle text');
  return {y: [...p.querySelectorAll('.ytick text')].map(e => e.textContent),
          inside: [...ticks, ...titles].every(inside),
          clear: titles.every(t => ticks.every(k => apart(t, k)))};
})"""


def drawn_layout(chromium, path) -> list[dict]:
    """The lesson at `path` drawn in Chromium with the network cut, every chart's drawn layout (DRAWN_LAYOUT_JS)."""
    with chromium.new_context(viewport={"width": 1280, "height": 720}) as context:
        page = context.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                   else route.abort())
        page.goto(path.as_uri())
        page.wait_for_function(DRAWN_JS, arg=n_figures(path.read_text(encoding="utf-8")), timeout=120_000)
        return page.evaluate(DRAWN_LAYOUT_JS)


@pytest.mark.browser
def test_the_download_button_and_the_command_line_write_one_lesson(tmp_path, chromium):
    """viz/tour/download.py through viz/frame/presenter.py: the button at the top of the page serves the lesson, and it is
    the command line's file for the same sentence, style and language, byte for byte; both drawn in Chromium
    offline alike, every label inside its chart and no axis title over the ticks, the heads step's layer rows
    labelled (the button's file lost them and drew titles over the ticks, in en and zh)."""
    saved = {}
    with streamlit_server() as url:
        page = chromium.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        for lang in ("en", "zh"):
            page.goto(f"{url}/tour?model=en-es&text={STYLED_TEXT.replace(' ', '+')}&lang={lang}")
            wait_for_app(page)
            button = page.get_by_role("button", name=catalogue(lang)["lesson.button"])
            # a state, not a clock: the button is drawn once the script reaches it (wait_for_app can return
            # before the first run has even started)
            button.wait_for(state="visible", timeout=APP_TIMEOUT_MS)
            with page.expect_download(timeout=APP_TIMEOUT_MS) as download:
                button.click(timeout=APP_TIMEOUT_MS)
            saved[lang] = tmp_path / f"app-{lang}.html"
            download.value.save_as(saved[lang])
            # each language its own name: the Chinese lesson no longer saves over the English one (issue 46, item 7)
            assert download.value.suggested_filename == f"lesson-en-es-the-man-went-to-the-{lang}.html"
        page.close()
    for lang, app_file in saved.items():
        cli_file = tmp_path / f"cli-{lang}.html"
        result = run_cli("lesson", "--model", str(ROOT / "pretrained" / "en-es"), "--text", STYLED_TEXT,
                         "--out", str(cli_file), "--lang", lang, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert app_file.read_bytes() == cli_file.read_bytes()
        assert f"<dd>{STYLED_TEXT}</dd>" in app_file.read_text(encoding="utf-8")
        drawn = drawn_layout(chromium, app_file)
        assert drawn == drawn_layout(chromium, cli_file)
        assert all(chart["inside"] and chart["clear"] for chart in drawn), drawn
        layer = catalogue(lang)["ui.layer_n"]                       # the heads step's layer rows
        assert {layer.format(i=i) for i in range(3)} in [set(chart["y"]) for chart in drawn]


# -- 中文 -------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def toy_trace():
    return trace_of("toy-reverse", "c a f e")


@pytest.fixture(scope="module")
def zh_lesson(toy_trace) -> str:
    return lesson_html(toy_trace, ROOT / "pretrained" / "toy-reverse", lang="zh")


def read_texts(page: str) -> list[str]:
    """The words a person reads in a lesson: its title, headings, labels and paragraphs as text (the
    formulas, the sentence and translation lines and the figures' scripts left out)."""
    page = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    found = [m.group(2) for m in re.finditer(r"<(title|h1|h2|dt|p)>(.*?)</\1>", page, flags=re.S)]
    found += [m.group(1) for m in re.finditer(r'<p class="how">(.*?)</p>', page, flags=re.S)]
    return [re.sub(r"<[^>]+>", "", text) for text in found]


def figure_specs(page: str) -> list[dict]:
    """Every figure's data and layout, as plotly.io.to_html writes them into the page."""
    calls = re.finditer(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\]),\s*(\{.*?\}),\s*\{"displaylogo"', page, flags=re.S)
    return [{"data": json.loads(m.group(1)), "layout": json.loads(m.group(2))} for m in calls]


def test_english_is_the_default_and_unchanged(toy_trace):
    model_dir = ROOT / "pretrained" / "toy-reverse"
    english = lesson_html(toy_trace, model_dir)
    assert lesson_html(toy_trace, model_dir, lang="en") == english
    assert english.startswith('<!DOCTYPE html><html lang="en">') and not HAN.search(english.split("<script")[0])
    assert "<h1>Inside a Transformer: a guided lesson</h1>" in english and "<dt>Translation</dt>" in english
    assert f"Step 1 of {len(TOUR)}: {catalogue('en')[TOUR[0].message_key('title')]}" in english


def test_the_lesson_in_chinese(zh_lesson):
    zh = catalogue("zh")
    assert zh_lesson.startswith('<!DOCTYPE html><html lang="zh">')
    for number, step in enumerate(TOUR, start=1):
        title = zh[step.message_key("title")].replace("&", "&amp;")
        assert f"<h2>{zh['tour.step'].format(number=number, total=len(TOUR), title=title)}</h2>" in zh_lesson
    shown = read_texts(zh_lesson)
    assert len(shown) >= 3 * len(TOUR)
    assert [text for text in shown if english_left(text)] == []
    assert "<dd>c a f e</dd>" in zh_lesson                          # the sentence and the tokens as they are
    assert zh["tour.no_training_log"] in zh_lesson                  # the toy model ships no training log


def test_the_chinese_lessons_figures_speak_chinese(zh_lesson):
    figures = figure_specs(zh_lesson)
    assert len(figures) == PICTURES - 1
    words = [text for fig in figures for text in chart_texts(SimpleNamespace(proto=SimpleNamespace(spec=json.dumps(fig))))]
    words += [re.sub(r"%\{[^}]*\}", " ", trace["hovertemplate"]) for fig in figures for trace in fig["data"]
              if trace.get("hovertemplate")]                   # the hover texts' words, not their fields
    assert len(words) > 2 * len(figures) and [text for text in words if english_left(text)] == []


def test_an_unknown_language_is_refused(toy_trace):
    with pytest.raises(ValueError, match="unknown language"):
        lesson_html(toy_trace, lang="fr")


def test_the_lesson_and_the_catalogue_need_no_streamlit():
    for module in ("viz/tour/lesson.py", "viz/tour/pictures.py", "viz/tour/formula_html.py", "viz/core/i18n.py"):
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
        top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
        assert "streamlit" not in top, module


@pytest.mark.slow          # the command, twice in a new Python
def test_cli_writes_the_lesson_in_chinese(tmp_path):
    result = run_cli("lesson", "--model", str(TOY), "--text", "c a f e", "--out", "课.html", "--lang", "zh",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "课.html").read_text(encoding="utf-8")
    assert page.startswith('<!DOCTYPE html><html lang="zh">') and catalogue("zh")["tour.tokens.title"] in page
    assert run_cli("lesson", "--model", str(TOY), "--text", "c a f e", "--out", "x.html", "--lang", "fr",
                   cwd=tmp_path).returncode == 2


@pytest.mark.parametrize("style", [None, "modern", "bible"])
def test_cli_lesson_writes_the_style_the_app_writes(tmp_path, monkeypatch, style):
    """Screenshot review: the command's lesson traced en-es without a style token, so its translation was the
    1909 Bible's ('Y el varón se fué á la casa.') where the app's tour (modern by default) wrote 'El hombre fue a
    la casa.'. It now reads --style as translate and trace do, modern when not given."""
    import transformer_viz.lesson as command
    import viz.tour.lesson
    seen = {}

    def keep(trace, *args, **kwargs):
        seen["trace"] = trace
        return ""
    monkeypatch.setattr(viz.tour.lesson, "lesson_html", keep)
    argv = ["--model", str(ROOT / "pretrained" / "en-es"), "--text", "The man went to the house.", "--device", "cpu",
            "--out", str(tmp_path / "x.html")] + (["--style", style] if style else [])
    assert command.main(argv) == 0
    assert seen["trace"].meta["src_tokens"][0] == f"<{style or 'modern'}>"


@pytest.fixture(scope="module")
def styled_lessons() -> dict:
    """(style, lang) -> the lesson of en-es's trace of a sentence led by the style token, as the app and the
    command trace it."""
    bundle = load_checkpoint(ROOT / "pretrained" / "en-es")
    traces = {style: trace_sentence(bundle, bundle.tokenizer.styled(STYLED_TEXT, style)) for style in ("modern", "bible")}
    return {(style, lang): lesson_html(trace, bundle.path, lang) for style, trace in traces.items() for lang in ("en", "zh")}


STYLED_TEXT = "The man went to the house."


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("style", ["modern", "bible"])
def test_the_header_shows_the_sentence_as_typed_and_the_style_in_words(styled_lessons, style, lang):
    """Screenshot review (the lesson, en and zh): the header read 'Sentence: <modern> The man went to the house.',
    the page title too: the traced source with the model's style token. They show the sentence as the reader
    typed it and say the style in the sidebar's words; the token stays in the figures (the model reads it)."""
    page, words = styled_lessons[(style, lang)], catalogue(lang)
    header = page[page.index("<header>"):page.index("</header>")]
    assert f"<dt>{words['lesson.sentence']}</dt><dd>{STYLED_TEXT}</dd>" in header
    assert f"<dt>{words['sidebar.style']}</dt><dd>{words['sidebar.style.' + style]}</dd>" in header
    assert "&lt;modern&gt;" not in header and "&lt;bible&gt;" not in header
    title = re.search(r"<title>(.*?)</title>", page).group(1)
    assert title == html.escape(words["lesson.page_title"].format(text=STYLED_TEXT))
    assert f"&lt;{style}&gt;" in json.dumps(figure_specs(page))          # the figures keep the token


def test_the_style_tokens_are_the_models_and_a_typed_one_stays():
    from model.io.tokenizer import STYLE_TOKENS
    from viz.core.i18n import STYLE_KEYS
    from viz.tour.lesson import STYLE_TOKEN_KEYS, reader_sentence
    assert STYLE_TOKEN_KEYS == {STYLE_TOKENS[style]: key for style, key in STYLE_KEYS.items()}
    # a one-style model reads '<bible>' typed by the reader as the characters it is: nothing to take away
    typed = {"src_text": "<bible> a b", "src_tokens": ["▁<", "bible", ">", "▁a", "▁b", "</s>"]}
    assert reader_sentence(typed) == ("<bible> a b", None)
    assert reader_sentence({"src_text": "c a f e", "src_tokens": ["c", "a", "f", "e", "</s>"]}) == ("c a f e", None)


@pytest.mark.browser
def test_chinese_readings_are_upright_english_ones_italic(chromium):
    """Screenshot review (the zh lesson): the readings under the figures (class how) were set in italic, a
    slanted copy of Chinese characters that reads poorly. Chinese readings are upright; English keeps italic."""
    from viz.tour.lesson import STYLE
    page = chromium.new_page()
    try:
        styles = {}
        for lang in ("en", "zh"):
            page.set_content(f'<!DOCTYPE html><html lang="{lang}"><head><style>{STYLE}</style></head>'
                             f'<body><p class="how">{catalogue(lang)["tour.tokens.reading"]}</p></body></html>')
            styles[lang] = page.eval_on_selector(".how", "e => getComputedStyle(e).fontStyle")
    finally:
        page.close()
    assert styles == {"en": "italic", "zh": "normal"}


def test_the_download_buttons_lesson_follows_the_session_language(monkeypatch):
    """The button (viz/tour/download.py under every page) is given the view's keys and the session's language;
    the lesson it serves has the steps' Chinese titles."""
    from viz.tour import download
    given = []
    monkeypatch.setattr(download, "partial", lambda *a, **k: given.append((a, k)) or functools.partial(*a, **k))
    at = run_page("explorer.py", model="toy-reverse", text="a b c", lang="zh")
    no_exceptions(at)
    assert given, "no download button under the page"
    (function, *keys), options = given[-1]
    assert function is download.lesson_bytes and keys[:2] == ["toy-reverse", "a b c"]
    assert options == {"lang": "zh", "presenter": False}
    lesson = download.lesson_bytes(*keys, lang="zh").decode("utf-8")
    assert '<html lang="zh">' in lesson and catalogue("zh")["tour.one_head.title"] in lesson
    assert download.lesson_bytes(*keys).decode("utf-8").count(catalogue("zh")["tour.one_head.title"]) == 0
