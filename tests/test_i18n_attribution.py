"""The Attribution page in both languages: every word a person reads (titles, explanations, widget labels,
the section radio, figure, axis and colour-bar titles, method names) follows the chosen language."""
import pytest

from apptest_utils import no_exceptions, run_page
from test_i18n import HAN, assert_speaks, english_left, readable_texts
from viz.core.i18n import LANGS, catalogue, placeholders

TOY = dict(model="toy-reverse", text="a b c d e f")
VIEWS = ["lens", "source", "contrastive", "patching"]


def test_the_pages_messages_are_in_both_catalogues():
    en, zh = catalogue("en"), catalogue("zh")
    keys = [key for key in en if key.startswith("attribution.")]
    assert keys and {key for key in zh if key.startswith("attribution.")} == set(keys)
    for key in keys:
        assert placeholders(en[key]) == placeholders(zh[key]), key
        assert HAN.search(zh[key]) and not HAN.search(en[key]), key


def check(at, lang: str) -> list[str]:
    no_exceptions(at)
    shown = readable_texts(at)
    assert at.get("plotly_chart")
    assert_speaks(shown, lang)
    return shown


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("view", VIEWS)
def test_every_section_speaks_the_chosen_language(view, lang):
    at = run_page("attribution.py", **TOY, view=view, lang=lang)
    shown = check(at, lang)
    messages = catalogue(lang)
    assert messages["attribution.title"] in shown
    assert at.radio(key="attr-section").options == [messages[f"attribution.section.{v}"] for v in VIEWS]


@pytest.mark.parametrize("lang", list(LANGS))
def test_the_logit_lens_on_the_translation_model(lang):
    at = run_page("attribution.py", model="en-es", text="The man went to the house.", lang=lang)
    check(at, lang)


def test_the_warnings_are_translated_too():
    at = run_page("attribution.py", **TOY, view="patching", corrupt="a b c", lang="zh")
    no_exceptions(at)
    warning = " ".join(w.value for w in at.warning)
    assert "词元数必须相同" in warning and not at.get("plotly_chart")
    assert [text for text in readable_texts(at) if english_left(text)] == []
