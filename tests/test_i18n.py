"""The message catalogues: the same keys and placeholders in both languages; the language picker and
`lang=` keep the view and never recompute the model's work."""
import json
import re

import pytest

from apptest_utils import browser_view_sent, browser_view_whole, explorer_drawn, no_exceptions, run_page, texts
from viz.services import models, traces
from viz.core.i18n import LANGS, catalogue

HAN = re.compile(r"[\u4e00-\u9fff]")


# Messages that are notation, the same in every language: a word beside them repeated the block's name
# ("前馈网络 · 前馈 ‖FFN‖", "线性层 … 线性 256 → 8,002" on the model map)
NOTATION = {"map.ff_size", "map.linear_value", "map.sigma"}
# a template of other messages and punctuation alone, Chinese by its full-width colon or brackets
PUNCTUATION = {"map.tokens_row", "positional.curves.dim_option", "positional.norms.half", "step.why.panel"}


def test_every_chinese_message_is_chinese():
    """A rule that can be checked: every zh message has Han characters (English terms may stand beside
    them in parentheses, as Chinese course notes write them), but for notation, written as in English."""
    untranslated = [k for k, v in catalogue("zh").items() if not HAN.search(v) and k not in NOTATION | PUNCTUATION]
    assert not untranslated
    assert all(catalogue("zh")[k] == catalogue("en")[k] for k in NOTATION)
    assert all(re.search("[：（）]", catalogue("zh")[k]) for k in PUNCTUATION)


@pytest.mark.parametrize("lang", list(LANGS))
def test_the_shell_speaks_the_chosen_language(lang):
    at = run_page("explorer.py", model="toy-reverse", text="a b c", lang=lang, kind="cross", layer=1)
    no_exceptions(at)
    sentence = at.text_area(key="text")
    assert sentence.label == catalogue(lang)["sidebar.sentence"]
    assert at.selectbox(key="model").label == catalogue(lang)["sidebar.model"]
    assert at.segmented_control(key="lang").value == lang
    assert explorer_drawn(at)
    assert at.query_params.get("lang") == (None if lang == "en" else lang)


def test_switching_language_keeps_the_view_and_the_trace(monkeypatch):
    at = run_page("explorer.py", model="toy-reverse", text="a b c", kind="cross", layer=1)
    charts = _chart_data(at)
    runs = []
    real_trace = traces.trace_sentence
    monkeypatch.setattr(traces, "trace_sentence", lambda *a, **k: runs.append(a) or real_trace(*a, **k))
    monkeypatch.setattr(models, "load_engine", lambda *a, **k: pytest.fail("the model was loaded again"))
    at.segmented_control(key="lang").set_value("zh").run()
    no_exceptions(at)
    assert at.text_area(key="text").label == "句子" and at.text_area(key="text").value == "a b c"
    assert at.query_params["kind"] == "cross" and at.query_params["layer"] == "1"
    assert _chart_data(at) == charts            # the same pictures (now with Chinese titles), from the cache
    assert "URL" not in texts(at)
    assert runs == []                                                      # no trace was computed again


def _chart_data(at) -> list:
    """The numbers and token labels the charts draw (their titles follow the language); the explorer's view: each
    kind's weights and keys."""
    charts = [[{k: trace.get(k) for k in ("z", "x", "y", "customdata")} for trace in json.loads(c.proto.spec)["data"]]
              for c in at.get("plotly_chart")]
    if explorer_drawn(at):
        charts += [[part["z"], part["x"]] for part in browser_view_sent(at)[1]["kinds"].values()]
    return charts


# -- the pages of issue 19: every word a person reads is in the chosen language -------------------------
TRANSLATED_PAGES = ["home.py", "explorer.py", "tour.py", "about.py"]
TEXT_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success")
WIDGETS = ("button", "selectbox", "radio", "text_area", "text_input", "number_input", "slider", "select_slider",
           "checkbox", "toggle", "multiselect", "segmented_control", "expander", "download_button", "page_link")
PROPER_NAMES = ("Transformer", "Attention Is All You Need", "Vaswani", "Bahdanau", "Luong", "Xu", "Reina-Valera",
                "World English Bible", "README.md", "train_log.csv", "metrics.json", "model/train.py",
                "model/tasks.py", "softmax", "LayerNorm", "Sublayer", "Dropout", "d_model", "max_len", "log_k",
                "d_k", "PE")
SOURCE_AND_OUTPUT = re.compile(r"^\*\*.*\*\* → \*\*.*\*\*$", re.S)   # the home page's "sentence → translation"


def english_left(text: str) -> bool:
    """The rule: a text a person reads on a zh page holds a Han character, unless it is only digits,
    punctuation, formulas ($…$ or \\(…\\)), `code`, words of one or two letters (token labels of the toy
    models, symbols such as n, d, k, L0, H3), or proper names (PROPER_NAMES) — i.e. what is left after
    removing those has no run of three Latin letters."""
    if HAN.search(text) or SOURCE_AND_OUTPUT.match(text.strip()):
        return False
    rest = re.sub(r"\$[^$]*\$|`[^`]*`|<[^>]+>", " ", text)
    for name in PROPER_NAMES:
        rest = rest.replace(name, " ")
    return bool(re.search(r"[A-Za-z]{3,}", rest))


def assert_speaks(shown: list[str], lang: str) -> None:
    """What a page shows is in `lang`: on zh no English left by the rule, on en no Han at all."""
    assert shown
    if lang == "zh":
        assert [text for text in shown if english_left(text)] == []
    else:
        assert [text for text in shown if HAN.search(text)] == []


def chart_texts(chart) -> list[str]:
    """What a chart shows in words: its title, axis and colour-bar titles, tick texts, annotations, legend
    entries, and category labels other than token labels."""
    return figure_texts(json.loads(chart.proto.spec))


def figure_texts(figure: dict) -> list[str]:
    layout, found = figure.get("layout", {}), []
    found.append((layout.get("title") or {}).get("text") or "")
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(axis, dict):
            found.append((axis.get("title") or {}).get("text") or "")
        if re.fullmatch(r"coloraxis\d*", name) and isinstance(axis, dict):
            found.append((((axis.get("colorbar") or {}).get("title")) or {}).get("text") or "")
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(axis, dict):
            found += [str(tick) for tick in axis.get("ticktext") or []]
    found += [note.get("text") or "" for note in layout.get("annotations", [])]
    for trace in figure.get("data", []):
        found.append((((trace.get("colorbar") or {}).get("title")) or {}).get("text") or "")
        for side in ("x", "y"):          # category labels; token labels start with their position ("3 ▁to")
            values = trace.get(side)
            if isinstance(values, list):
                found += [v for v in values if isinstance(v, str) and not v[:1].isdigit()]
        if layout.get("showlegend", True) is not False and trace.get("showlegend", True) is not False:
            found.append(trace.get("name") or "")
    return [text for text in found if text]


def readable_texts(at) -> list[str]:
    """Every text of the page's main area a person reads (the model card, a document shown as its authors
    wrote it, excepted), widget labels and options, chart words and table headers."""
    found = []
    card = catalogue("zh")["about.card"]
    for kind in TEXT_ELEMENTS:
        for element in at.main.get(kind):
            if not _inside(element, card):
                found.append(str(element.value))
    for kind in WIDGETS:
        for widget in at.main.get(kind):
            found.append(str(getattr(widget, "label", "") or ""))
            options = getattr(widget, "options", None)
            if kind in ("radio", "segmented_control") and options:
                found += [str(o) for o in options]
    for chart in at.main.get("plotly_chart"):
        found += chart_texts(chart)
    if explorer_drawn(at):
        found += view_texts(at)
    for where in ("mh", "step", "ln-deck", "train-deck"):    # the decks (in the browser): multi-head's,
        # step-through's, LayerNorm's, the training's snapshots
        if any(getattr(node, "key", None) == f"{where}-view" for node in at._tree):
            found += deck_texts(at, where)
    for frame in at.main.get("dataframe"):
        value = frame.value
        found += [str(c) for c in value.columns] + [str(n) for n in value.index.names if n]
    return [text for text in found if text.strip()]


def view_texts(at) -> list[str]:
    """The words of the explorer's browser-side view: its pickers, captions, map titles and its figures' words."""
    browser_view_whole(at)                        # every kind (the first run sends the first screen's)
    _, body = browser_view_sent(at)
    words = body["words"]
    found = [words[k] for k in ("kind", "layer", "head", "csv", "lines_read")]
    found += [*words["kind_names"].values(), *words["layer_names"], *words["head_names"].values()]
    for part in body["kinds"].values():
        found += [part["read"], *part["titles"], *part["strongest"], *part["lines_titles"]]
        for figure in (part["grid"], part["map"], *(lines for lines in part["lines"] if lines)):
            found += figure_texts(figure)
    return found


def deck_texts(at, where: str = "mh") -> list[str]:
    """The words of a page's browser-side view (a deck: multi-head's, step-through's, LayerNorm's): its pickers,
    sections, tabs, and every pick's words (a formula's MathML: its text, the model's numbers and letters), tables,
    checks and figures' words."""
    _, body = browser_view_sent(browser_view_whole(at, where), where)

    def strings(value) -> list[str]:
        if isinstance(value, dict):
            return [text for item in value.values() for text in strings(item)]
        if isinstance(value, list):
            return [text for item in value for text in strings(item)]
        return [value] if isinstance(value, str) else []
    found = strings(body["words"])
    formulas = set()

    def titles(blocks):
        for block in blocks:
            found.extend([block["title"]] if block.get("title") else [])
            if block["type"] == "formula":
                formulas.add(block["id"])
            titles(block.get("blocks", []))
            for tab in block.get("tabs", []):
                found.append(tab["title"])
                titles(tab["blocks"])
            for column in block.get("columns", []):
                titles(column)
    titles(body["blocks"])
    for part in body["picks"].values():            # a part that is another's ({same}) has nothing of its own
        found += [text for name, text in part.get("texts", {}).items() if name not in formulas]
        for table in part.get("tables", {}).values():
            found += table["columns"] + table["index"] + [cell for row in table["rows"] for cell in row]
        found += [note["text"] for notes in part.get("notes", {}).values() for note in notes]
        for figure in part.get("figures", {}).values():
            found += figure_texts(figure)
    return found


def _inside(element, expander_label: str) -> bool:
    parent = getattr(element, "parent", None)
    while parent is not None:
        if getattr(parent, "type", None) == "expander" and getattr(parent, "label", None) == expander_label:
            return True
        parent = getattr(parent, "parent", None)
    return False


def test_the_english_left_rule():
    assert english_left("Attention explorer") and english_left("layer 0, head 1")
    assert not english_left("注意力浏览器") and not english_left("n = d = 64") and not english_left("L0")
    assert not english_left("**a b c** → **c b a**") and not english_left("$QK^\\top$ PE 12%")


PAGE_VIEWS = [("home.py", {}), ("explorer.py", {"kind": "encoder"}), ("explorer.py", {"kind": "decoder"}),
              ("explorer.py", {"kind": "cross", "head": "-1"}), ("about.py", {})]
PAGE_VIEWS += [("tour.py", {"tour_step": str(n)}) for n in range(1, 14)]


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("page, params", PAGE_VIEWS)
def test_the_translated_pages_render_in_both_languages(page, params, lang):
    at = run_page(page, model="toy-reverse", text="a b c d", lang=lang, **params)
    no_exceptions(at)
    assert_speaks(readable_texts(at), lang)


def test_the_start_page_in_chinese_with_the_translation_model():
    at = run_page("home.py", model="en-es", text="The man went to the house.", lang="zh")
    no_exceptions(at)
    assert [text for text in readable_texts(at) if english_left(text)] == []
    assert "看 Transformer 如何思考" in texts(at)


def test_pages_without_a_sentence_speak_chinese_too():
    for page in TRANSLATED_PAGES:
        at = run_page(page, model="toy-reverse", text="", lang="zh")
        no_exceptions(at)
        assert [text for text in readable_texts(at) if english_left(text)] == []


def test_every_tour_step_has_its_words_in_both_catalogues():
    """viz/tour/steps.py holds keys only: each step's title, text, reading and link labels are in the
    catalogue (English once, in en.json), in both languages."""
    from viz.tour.steps import TOUR
    assert len({step.key for step in TOUR}) == len(TOUR) and all(step.key for step in TOUR)
    for lang in ("en", "zh"):
        messages = catalogue(lang)
        for step in TOUR:
            parts = ["title", "text", "reading"] + [f"link{i}" for i in range(len(step.links))]
            assert all(messages.get(step.message_key(part)) for part in parts), (lang, step.key)
    zh = catalogue("zh")
    assert all(HAN.search(zh[step.message_key(f"link{i}")]) for step in TOUR for i in range(len(step.links)))


def test_what_the_model_knows_in_chinese():
    from viz.core.model_words import what_the_model_knows
    assert "1909" in what_the_model_knows("en-es", None, "zh") and "圣经" in what_the_model_knows("en-es", None, "zh")
    assert "倒序" in what_the_model_knows("toy-reverse", {"task": "reverse"}, "zh")
    assert "mystery" in what_the_model_knows("toy-x", {"task": "mystery"}, "zh")


# issue 27, finding 5: switching to 中文 keeps every radio group's choice (Streamlit keeps a radio's choice as its
# label's text: the English label is not among the Chinese ones, and the browser showed no selection)
# (page, radio key, the option id chosen, its position): the browser showed no selection in each before
# (the explorer's kind is picked in the browser-side view, whose words the page sends in the reader's language:
# tests/test_page_explorer_view.py)
# (multi-head's kind, likewise, is picked in its browser-side view: tests/test_page_step_multihead.py; the head
# page's statistics' kind too: tests/test_page_heads_compare.py)
KEPT_CHOICES = [("heads.py", "heads-source", "file", 1), ("decoding.py", "decoding-method", "beam", 1),
                ("training.py", "train-task", "sort", 2), ("attribution.py", "attr-section", "contrastive", 2)]


@pytest.mark.parametrize("page, key, choice, position", KEPT_CHOICES, ids=[c[0] for c in KEPT_CHOICES])
def test_switching_language_keeps_every_radio_choice(page, key, choice, position):
    at = run_page(page, model="toy-reverse", text="a b c")
    at.radio(key=key).set_value(choice).run()
    english = at.radio(key=key).options
    at.sidebar.button_group(key="lang").set_value("zh").run()
    assert not at.exception, [e.value for e in at.exception]
    radio = at.radio(key=key)
    assert radio.options != english and at.session_state[key] == choice   # Chinese labels, the same choice
    # what the browser is sent: set the choice, in its Chinese label (else it kept the English one: no selection)
    assert radio.proto.set_value and radio.proto.raw_value == radio.options[position]


def test_the_uploaders_words_are_css_strings():
    """Issue 26.6: Streamlit's uploader English is drawn at size 0 and the catalogue's words after it; a quote or
    backslash in the words stays inside the CSS string (the browser test checks what Chromium shows)."""
    from viz.elements.nav import uploader_css
    css = uploader_css('say "hi" \\ now', "每个文件")
    assert 'content: "say \\"hi\\" \\\\ now";' in css and 'content: "每个文件";' in css
    assert css.count("font-size: 0 !important") == 1
