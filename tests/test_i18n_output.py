"""Decoding, heads, compare, zoo and training pages in English and 中文: every word a person reads is in
the chosen language (the rule of test_i18n.english_left), and the English pages hold no Chinese."""
import re

import pytest

from apptest_utils import no_exceptions, run_page
from test_i18n import assert_speaks, english_left, readable_texts
from viz.figures.style import Look
from viz.core.i18n import LANGS
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

TEXT = "a b c d"
OUTPUT_VIEWS = [
    ("decoding.py", {}),
    ("decoding.py", {"method": "beam", "beam": "3", "step": "2", "layer": "0", "k": "5"}),
    ("decoding.py", {"target": "d b c a"}),
    ("heads.py", {}),
    ("heads.py", {"stat": "prev", "kind": "decoder"}),
    ("heads.py", {"tab": "ablation", "kind": "decoder", "abl_mode": "mean", "ablate": "decoder:0:3"}),
    ("heads.py", {"tab": "rollout"}),
    ("compare.py", {}),
    ("compare.py", {"mode": "heads", "kind": "cross", "layer": "1", "head": "2", "layer_b": "0", "head_b": "-1"}),
    ("compare.py", {"kind": "decoder", "text_b": "a b c"}),
    ("compare.py", {"text_b": "x y"}),
    ("zoo.py", {}),
    ("zoo.py", {"kind": "cross", "layer": "1", "head": "2", "score": "additive", "weighting": "local", "window": "2",
                "centre": "monotonic"}),
    ("zoo.py", {"kind": "decoder", "score": "general", "weighting": "hard"}),
    ("zoo.py", {"source": "toy", "score": "cosine", "weighting": "local"}),
    ("training.py", {}),
    ("training.py", {"task": "sort", "size": "tiny", "example": "a b c d e f g h i j a b"}),
]


CANDIDATE = re.compile(r"^#\d+  ")      # the decoding page's "#rank  token" bars: token labels stay as they are


def shown_words(at) -> list[str]:
    return [text for text in readable_texts(at) if not CANDIDATE.match(text)]


def check(at, lang: str) -> None:
    no_exceptions(at)
    assert_speaks(shown_words(at), lang)


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("page, params", OUTPUT_VIEWS)
def test_the_output_pages_render_in_both_languages(page, params, lang):
    check(run_page(page, model="toy-reverse", text=TEXT, lang=lang, **params), lang)


@pytest.mark.parametrize("page", sorted({page for page, _ in OUTPUT_VIEWS}))
def test_the_output_pages_without_a_sentence_speak_chinese(page):
    at = run_page(page, model="toy-reverse", text="", lang="zh")
    no_exceptions(at)
    assert [text for text in shown_words(at) if english_left(text)] == []


@pytest.mark.parametrize("lang", list(LANGS))
def test_ranking_the_heads_in_both_languages(lang):
    at = run_page("heads.py", model="toy-reverse", text=TEXT, lang=lang, tab="ablation", ablate="encoder:0:0")
    at.button(key="heads-rank-go").click().run()
    check(at, lang)
    assert at.get("plotly_chart")


@pytest.mark.parametrize("lang", list(LANGS))
def test_a_live_training_in_both_languages(lang):
    at = run_page("training.py", model="toy-reverse", text=TEXT, lang=lang, task="copy", size="tiny", steps=20,
                  example="a b c")
    next(b for b in at.button if b.key == "train-button").click()
    at.run()
    check(at, lang)                # the snapshots' deck too (readable_texts: every deck's words)
    assert any(getattr(node, "key", None) == "train-deck-view" for node in at._tree)


def test_the_figures_speak_the_words_they_are_given():
    """A builder draws in the words it is handed (viz.core.i18n.words(lang)): English for a notebook's words("en"),
    中文 for a page read in Chinese."""
    import numpy as np

    from viz.figures.decoding import alignment_heatmap, cross_attention_multiples, heads_row_heatmap
    from viz.figures.heads import head_label, layer_head_heatmap
    from viz.figures.live_training import training_curves
    from viz.figures.zoo import title_lines

    rows = np.full((2, 3), 1 / 3)
    assert heads_row_heatmap(rows, ["0 a", "1 b", "2 c"], Look(EN)).data[0].y == ("head 0", "head 1")
    assert heads_row_heatmap(rows, ["0 a", "1 b", "2 c"], Look(words("zh"))).data[0].y == ("头 0", "头 1")
    fig = alignment_heatmap(rows, ["0 x", "1 y"], ["0 a", "1 b", "2 c"], Look(words("zh")))
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("源句词元", "输出词元（每步一行）")
    assert cross_attention_multiples(rows, ["0 a", "1 b", "2 c"], Look(EN)).layout.annotations[0].text == "average of heads"
    grid = layer_head_heatmap(np.array([[np.nan, 0.5]]), Look(words("zh")), "熵")
    assert grid.data[0].y == ("第 0 层",) and grid.data[0].text[0][0] == "无"
    assert head_label("encoder", 0, 1) == "encoder L0 H1" and head_label("encoder", 0, 1, "编码器") == "编码器 L0 H1"
    history = [{"step": 5, "loss": 1.0, "accuracy": 0.5}]
    assert training_curves(history, Look(EN)).layout.xaxis.title.text == "training step"
    assert training_curves(history, Look(words("zh"))).layout.xaxis.title.text == "训练步"
    lines = title_lines("第 0 步、第 1 层的交叉注意力：它读源句的哪里，以及每个注意力头各看向哪里", 300).split("<br>")
    assert len(lines) > 1 and "".join(lines).startswith("第 0 步")


def test_chinese_figure_labels_join_with_a_full_width_colon():
    """中文 chart text wrote "不缩放: softmax(q·k)" (step-through's scaling bars) and "输入: <modern> …" (the model
    map's token rows) with an ASCII colon joined in the builder; each label is a catalogue message."""
    import numpy as np

    from model.inference.pipeline import trace_sentence
    from model.io.checkpoint import load_checkpoint
    from viz import ROOT
    from viz.figures.model_map import map_data, model_map
    from viz.figures.step import scaling_bars

    w = np.array([0.5, 0.5])
    titles = [a.text for a in scaling_bars(w, w, ["0 a", "1 b"], 32, Look(words("zh"))).layout.annotations]
    assert titles[0].startswith("<b>不缩放</b>：softmax(q·k)") and titles[1].startswith("<b>缩放</b>：softmax")
    bundle = load_checkpoint(ROOT / "pretrained" / "toy-reverse")
    fig = model_map(map_data(trace_sentence(bundle, TEXT), bundle.tokenizer.token_strings), Look(words("zh")))
    rows = [a.text for a in fig.layout.annotations if a.text.startswith(("<i>输入", "<i>输出"))]
    assert len(rows) == 2 and all("</i>：" in r for r in rows), rows
    english = [a.text for a in scaling_bars(w, w, ["0 a", "1 b"], 32, Look(EN)).layout.annotations]
    assert english[0].startswith("<b>without scaling</b>: softmax(q·k)")
