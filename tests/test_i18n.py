"""The message catalogues: the same keys and placeholders in both languages; the language picker and
`lang=` keep the view and never recompute the model's work."""
import re

import pytest

from apptest_utils import no_exceptions, run_page, texts
from viz import services
from viz.i18n import LANGS, catalogue, placeholders

HAN = re.compile(r"[\u4e00-\u9fff]")


def test_both_languages_have_the_same_keys_and_placeholders():
    en, zh = catalogue("en"), catalogue("zh")
    assert set(en) == set(zh)
    for key in en:
        assert placeholders(en[key]) == placeholders(zh[key]), key


def test_every_chinese_message_is_chinese():
    """A rule that can be checked: every zh message has Han characters (English terms may stand beside
    them in parentheses, as Chinese course notes write them)."""
    untranslated = [k for k, v in catalogue("zh").items() if not HAN.search(v)]
    assert not untranslated


@pytest.mark.parametrize("lang", list(LANGS))
def test_the_shell_speaks_the_chosen_language(lang):
    at = run_page("explorer.py", model="toy-reverse", text="a b c", lang=lang, kind="cross", layer=1)
    no_exceptions(at)
    sentence = at.text_area(key="text")
    assert sentence.label == catalogue(lang)["sidebar.sentence"]
    assert at.selectbox(key="model").label == catalogue(lang)["sidebar.model"]
    assert at.segmented_control(key="lang").value == lang
    assert at.get("plotly_chart")
    assert at.query_params.get("lang") == (None if lang == "en" else lang)


def test_switching_language_keeps_the_view_and_the_trace(monkeypatch):
    at = run_page("explorer.py", model="toy-reverse", text="a b c", kind="cross", layer=1)
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    runs = []
    real_trace = services.trace_sentence
    monkeypatch.setattr(services, "trace_sentence", lambda *a, **k: runs.append(a) or real_trace(*a, **k))
    monkeypatch.setattr(services, "load_engine", lambda *a, **k: pytest.fail("the model was loaded again"))
    at.segmented_control(key="lang").set_value("zh").run()
    no_exceptions(at)
    assert at.text_area(key="text").label == "句子" and at.text_area(key="text").value == "a b c"
    assert at.query_params["kind"] == "cross" and at.query_params["layer"] == "1"
    assert [c.proto.spec for c in at.get("plotly_chart")] == charts      # the same pictures, from the cache
    assert "URL" not in texts(at)
    assert runs == []                                                      # no trace was computed again
