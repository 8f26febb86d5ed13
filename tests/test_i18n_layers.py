"""The layer pages (step-through, multi-head assembly, positional encoding, LayerNorm & residual) in both
languages: in Chinese no English is left by the rule of test_i18n, in English no Han character shows."""
import re

import pytest

from apptest_utils import no_exceptions, run_page
from test_i18n import HAN, PUNCTUATION, assert_speaks, english_left, readable_texts
from viz.core.i18n import LANGS, catalogue

TOKEN_LABEL = re.compile(r"^\d+[ \u00a0]\S+$")     # "3 ▁went"; a table keeps it on one line with a no-break space
LAYER_PREFIXES = ("step.", "multihead.", "positional.", "layernorm.")

LAYER_VIEWS = [("step_through.py", {"kind": "encoder", "step": str(step)}) for step in range(9)]
LAYER_VIEWS += [("step_through.py", {"kind": "decoder", "layer": "1", "head": "2", "query": "3", "step": "6"}),
                ("step_through.py", {"kind": "cross", "step": "2"}),
                ("step_through.py", {"kind": "cross", "step": "0"}),
                ("step_through.py", {"kind": "decoder", "step": "8"})]
LAYER_VIEWS += [("multi_head.py", {"kind": kind, "layer": layer}) for kind in ("encoder", "decoder", "cross")
                for layer in ("0", "1")]
LAYER_VIEWS += [("positional.py", {}), ("positional.py", {"offset": "5", "dims": "0,3", "swap": "1,3"}),
                ("positional.py", {"positions": "10", "swap": "2,2"}), ("positional.py", {"dims": "x", "swap": "9"})]
LAYER_VIEWS += [("layernorm.py", {"stack": stack, "layer": layer, "norm": norm}) for stack, layer, norm in
                (("encoder", "0", "norm_attn"), ("encoder", "1", "norm_ff"), ("decoder", "0", "norm_cross"),
                 ("decoder", "1", "norm_attn"))]


def test_the_layer_messages_are_in_both_languages():
    en, zh = catalogue("en"), catalogue("zh")
    mine = [key for key in en if key.startswith(LAYER_PREFIXES)]
    assert mine and all(HAN.search(zh[key]) for key in mine if key not in PUNCTUATION)
    assert not any(HAN.search(en[key]) for key in mine)


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("page, params", LAYER_VIEWS)
def test_the_layer_pages_render_in_both_languages(page, params, lang):
    at = run_page(page, model="toy-reverse", text="a b c d", lang=lang, **params)
    no_exceptions(at)
    assert_speaks(readable_texts(at), lang)


@pytest.mark.parametrize("page", ["step_through.py", "multi_head.py", "positional.py", "layernorm.py"])
def test_the_layer_pages_speak_chinese_without_a_sentence_and_with_the_translation_model(page):
    empty = run_page(page, model="toy-reverse", text="", lang="zh")
    no_exceptions(empty)
    assert [text for text in readable_texts(empty) if english_left(text)] == []
    at = run_page(page, model="en-es", text="The man went to the house.", lang="zh")
    no_exceptions(at)
    # token labels ("3 ▁went", the tick texts of the word-swap maps) stay as the model wrote them
    assert [text for text in readable_texts(at) if english_left(text) and not TOKEN_LABEL.match(text)] == []
