"""AppTest of the Positional encoding and LayerNorm & residual pages on the toy-reverse model (the LayerNorm page's
norm pictures are its deck's, drawn in the browser: tests/test_page_layernorm.py)."""
import json
import re

import numpy as np
import pytest

from apptest_utils import browser_view_sent, no_exceptions, run_page, texts
from model.analysis.positional import frequencies
from model.io.checkpoint import load_checkpoint
from viz.pages.positional import TABLE_OPEN
from model.inference.pipeline import trace_sentence
from viz import ROOT

TEXT = "a b c d e"


@pytest.fixture(scope="module")
def trace():
    """The same forward pass the page runs, computed independently."""
    return trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), TEXT)


def _caption(at, start: str) -> str:
    return next(str(c.value) for c in at.caption if str(c.value).startswith(start))


def _deck_part(at) -> dict:
    """The LayerNorm page's deck: the part of the layer it shows (its figures, its captions)."""
    head, body = browser_view_sent(at, "ln-deck")
    return body["picks"][str(head["pick"]["layer"])]


def _number_after(text: str, label: str) -> float:
    return float(re.search(re.escape(label) + r"\s*([-+0-9.e]+)", text).group(1))


# -- positional -------------------------------------------------------------------------------------
def test_positional_default_view_uses_the_real_model(trace):
    at = run_page("positional.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Positional encoding"
    assert "sinusoidal" in texts(at)
    assert at.slider(key="pe-positions").value == 32          # toy-reverse max_len
    # issue 26, item 4: default curves span fast to slow (0, 1, 8, 9 all oscillated fast): sine dims 0, d/8,
    # d/4, d/2 of toy-reverse's d_model 64, wavelengths from about 6 positions to far more than the 32 shown
    dims = at.multiselect(key="pe-dims").value
    assert dims == [0, 8, 16, 32]
    wavelengths = 2 * np.pi / frequencies(64)[np.array(dims) // 2]
    assert wavelengths[0] < 8 and 16 < wavelengths[1] < 32 and wavelengths[-1] > 10 * 32
    assert at.slider(key="pe-offset").value == 3
    # the rows added to the sentence equal the table shown (in its expander, built once opened)
    assert "differ from this table by at most 0.0e+00" in texts(open_table(at))
    # rotation demonstration: numerically exact on the model's own table
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["max ‖M_k·PE(p) − PE(p+k)‖"]) < 1e-5
    assert metrics["positions p checked"] == str(32 - 3)
    # norms from the forward pass
    caption = _caption(at, "Token 0 a")
    tokens, pos, total = (np.linalg.norm(trace.arrays[f"src_embed.hook_{h}"][0]) for h in ("tokens", "pos", "out"))
    for expected in (f"‖√d·E‖ = {tokens:.3f}", f"‖PE‖ = {pos:.3f}", f"‖sum‖ = {total:.3f}"):
        assert expected in caption
    # word order: with PE the swapped sentence is not just reordered; with PE at 0 it is, to rounding
    order = _caption(at, "Largest difference")
    assert _number_after(order, "cells:") > 1e-3
    assert float(re.search(r"encoding, ([-+0-9.e]+) without", order).group(1)) < 1e-5


def test_positional_deep_link_reproduces_the_view():
    at = run_page("positional.py", model="toy-reverse", text=TEXT, positions=12, dims="2,3,30", offset=5, swap="1,3")
    no_exceptions(at)
    assert at.slider(key="pe-positions").value == 12
    assert at.multiselect(key="pe-dims").value == [2, 3, 30]
    assert at.slider(key="pe-offset").value == 5
    assert (at.selectbox(key="pe-swap-a").value, at.selectbox(key="pe-swap-b").value) == (1, 3)
    assert "Swapped input: a d c b e </s>" in texts(at)
    assert {m.label: m.value for m in at.metric}["positions p checked"] == str(32 - 5)
    assert at.query_params["positions"] == "12" and at.query_params["swap"] == "1,3"


def open_table(at):
    """The page again with the full table's expander opened, as a click does (its state, then a run)."""
    at.session_state[TABLE_OPEN] = True
    return at.run()


def _chart_specs(at) -> list[str]:
    return [chart.proto.spec for chart in at.get("plotly_chart")]


def test_positional_escapes_token_labels_once():
    """Tick labels showed "7 &lt;/s&gt;": the page escaped labels that the figure builders escape again."""
    at = run_page("positional.py", model="toy-reverse", text=TEXT, swap="1,5")   # </s> moves into the maps
    no_exceptions(at)
    specs = _chart_specs(at)
    assert any("&lt;\\u002fs&gt;" in spec for spec in specs)          # "</s>", escaped once for plotly
    assert not any("&amp;lt;" in spec or "&amp;gt;" in spec for spec in specs)


def test_positional_picture_first_and_formulas_on_short_lines():
    at = run_page("positional.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    # issue 26, item 2: title, then the waves (the 32 x 64 table read as a moire on a projector): a few
    # dimensions as curves over positions, the whole table one click away in an expander
    first = json.loads(_chart_specs(at)[0])
    assert first["layout"]["title"]["text"] == "Each dimension is a wave over positions"
    assert [d["type"] for d in first["data"]] == ["scatter"] * 4
    (expander,) = [e for e in open_table(at).expander if e.label == "All the numbers: the full matrix"]
    table = json.loads(expander.get("plotly_chart")[0].proto.spec)
    assert table["layout"]["title"]["text"].startswith("The model's positional encoding")
    assert "differ from this table by at most" in " ".join(c.value for c in expander.caption)
    # the PE formula is three short aligned lines, not one that ran off the right edge
    pe = next(block.value for block in at.latex if "10000" in block.value)
    assert r"\begin{aligned}" in pe and pe.count(r"\\") == 2
    # the word-order maps: one figure, panel titles short enough for a third of the page
    maps = json.loads(_chart_specs(at)[-1])
    titles = [a["text"] for a in maps["layout"]["annotations"]]
    assert titles[1] == "Swapped sentence" and max(map(len, titles)) <= 26


def test_positional_table_built_only_when_opened():
    """Issue 46 item 9: folded, the full table is neither built nor sent (its N x d_model cells were the page's
    largest chart, drawn on every visit); opened, it is drawn with its CSV and the check against the trace;
    folded again, it goes."""
    at = run_page("positional.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    (folded,) = [e for e in at.expander if e.label == "All the numbers: the full matrix"]
    assert not folded.get("plotly_chart") and not folded.caption
    titles = [json.loads(spec)["layout"]["title"]["text"] for spec in _chart_specs(at)]
    assert not any(title.startswith("The model's positional encoding") for title in titles)
    (opened,) = [e for e in open_table(at).expander if e.label == "All the numbers: the full matrix"]
    table = json.loads(opened.get("plotly_chart")[0].proto.spec)
    assert table["data"][0]["z"]["shape"] == "32, 64"               # toy-reverse: 32 positions x d_model 64
    assert [b.label for b in opened.get("download_button")] == ["Download CSV"]
    assert len(_chart_specs(at)) == len(titles) + 1
    at.session_state[TABLE_OPEN] = False
    assert len(_chart_specs(at.run())) == len(titles)


def test_positional_bad_parameters_warn():
    at = run_page("positional.py", model="toy-reverse", text=TEXT, positions="many", dims="0,<b>x</b>", offset=99,
                  swap="2,2")
    no_exceptions(at)
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "positions" in warnings and "offset" in warnings and "dims" in warnings and "swap" in warnings
    assert at.slider(key="pe-positions").value == 32 and at.slider(key="pe-offset").value == 3
    assert at.multiselect(key="pe-dims").value == [0, 8, 16, 32]


# -- layernorm ----------------------------------------------------------------------------------------
def test_layernorm_default_view_uses_the_real_model(trace):
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "LayerNorm & residual"
    assert "post-norm" in texts(at)
    assert at.radio(key="ln-stack").value == "encoder"
    # issue 26, item 6: no code names (norm_attn, norm_ff) in the options, in either language
    assert at.radio(key="ln-norm-encoder").options == ["LayerNorm after self-attention",
                                                       "LayerNorm after feed-forward"]
    zh = run_page("layernorm.py", model="toy-reverse", text=TEXT, lang="zh", stack="decoder")
    no_exceptions(zh)
    assert zh.radio(key="ln-norm-decoder").options == ["自注意力之后的层归一化", "交叉注意力之后的层归一化",
                                                       "前馈网络之后的层归一化"]
    assert "后归一化（Post-Norm）" in texts(zh) and "**Post-Norm**" not in texts(zh)   # the term, then the English
    mean = trace.arrays["encoder.layers.0.norm_attn.hook_mean"][0]
    std = trace.arrays["encoder.layers.0.norm_attn.hook_std"][0]
    assert _deck_part(at)["texts"]["hist-caption"].startswith(f"0 a: input mean {mean:.4f}, std {std:.4f}")
    assert len(at.get("plotly_chart")) == 1 and len(_deck_part(at)["figures"]) == 5     # the residual stream's: the server's


def test_layernorm_deep_link_reproduces_the_view(trace):
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT, stack="decoder", layer=1, norm="norm_cross", token=2)
    no_exceptions(at)
    assert at.radio(key="ln-stack").value == "decoder"
    assert browser_view_sent(at, "ln-deck")[0]["pick"] == {"layer": 1}
    assert at.radio(key="ln-norm-decoder").value == "norm_cross"
    assert at.selectbox(key="ln-token-decoder").value == 2
    mean = trace.arrays["decoder.layers.1.norm_cross.hook_mean"][2]
    label = f"2 {trace.meta['tgt_out_tokens'][2]}"            # decoder rows: the token each position predicts
    assert f"{label}: input mean {mean:.4f}" in _deck_part(at)["texts"]["hist-caption"]
    # switching the stack drops the decoder-only norm and starts the encoder at its defaults
    at.radio(key="ln-stack").set_value("encoder").run()
    no_exceptions(at)
    assert at.radio(key="ln-norm-encoder").value == "norm_attn" and at.query_params["norm"] == "norm_attn"


def test_layernorm_bad_parameters_warn():
    at = run_page("layernorm.py", model="toy-reverse", text=TEXT, stack="middle", layer=7, norm="norm_cross", token="x")
    no_exceptions(at)
    warnings = " ".join(str(w.value) for w in at.warning)
    for name in ("stack", "layer", "norm", "token"):
        assert name in warnings
    assert at.radio(key="ln-stack").value == "encoder" and at.radio(key="ln-norm-encoder").value == "norm_attn"


@pytest.mark.parametrize("page", ["positional.py", "layernorm.py"])
def test_empty_sentence_explains(page):
    at = run_page(page, model="toy-reverse", text="")
    no_exceptions(at)
    assert "sentence is empty" in texts(at)
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("lang, post, pre, device", [("en", "post-norm (paper)", "pre-norm", "Runs on CPU ("),
                                                      ("zh", "后归一化（论文）", "前归一化", "CPU（")])
def test_layernorm_formula_and_the_device_line_speak_the_pages_language(lang, post, pre, device):
    at = run_page("layernorm.py", model="toy-reverse", text="a b c", lang=lang)
    no_exceptions(at)
    formulas = " ".join(e.value for e in at.latex)
    assert rf"\text{{{post}:}}" in formulas and rf"\text{{{pre}:}}" in formulas
    assert lang == "en" or "norm" not in formulas.replace("Sublayer", "")
    assert any(device in c.value for c in at.sidebar.caption)


def test_the_default_swap_is_two_words_not_the_style_token():
    """en-es's sentence starts with its style token: the default swap was <modern> ↔ "The", a style token with a
    word. It is now the first two words; the toy model's sentence (no style token) keeps its first two."""
    from model.analysis.word_order import first_two_words
    assert first_two_words(["<modern>", "ĠThe", "Ġman", "."]) == (1, 2)
    assert first_two_words([".", "<bible>", "a", "</s>"]) == (0, 1)                  # fewer than two words
    at = run_page("positional.py", model="en-es", text="The man went to the house.")
    no_exceptions(at)
    picked = [at.selectbox(key=k).value for k in ("pe-swap-a", "pe-swap-b")]
    labels = [at.selectbox(key="pe-swap-a").format_func(i) for i in picked]
    assert picked == [1, 2] and [label.split()[-1].lstrip("▁") for label in labels] == ["The", "man"]
    assert "swap" not in at.query_params
    at = run_page("positional.py", model="toy-reverse", text=TEXT)
    assert [at.selectbox(key=k).value for k in ("pe-swap-a", "pe-swap-b")] == [0, 1]


def test_layernorm_chart_titles_name_the_norm_in_words():
    """A chart title said `norm_attn`, the code name, in en and zh: it names where the LayerNorm sits."""
    import json
    for lang, place in (("en", "after self-attention"), ("zh", "自注意力之后")):
        at = run_page("layernorm.py", model="toy-reverse", text=TEXT, lang=lang)
        no_exceptions(at)
        layouts = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
        layouts += [fig["layout"] for fig in _deck_part(at)["figures"].values()]         # the deck's, the browser's
        titles = [layout.get("title", {}).get("text", "").replace("<br>", " ")
                  for layout in layouts]   # a title wrapped for its column reads as one line
        assert not any("norm_" in title for title in titles), titles
        assert sum(place in title for title in titles) == 2              # the statistics and the gain and bias


def test_positional_dimension_choices_speak_the_chosen_language():
    """The dimension picker's chips wrote '0 (sin)' with ASCII brackets on the 中文 page: a catalogue message."""
    zh = run_page("positional.py", lang="zh", text="The cat sat.")
    no_exceptions(zh)
    picker = next(w for w in zh.multiselect if w.key == "pe-dims")
    assert picker.options[:2] == ["0（sin）", "1（cos）"]
    assert any("（√(d/2) = 11.314）" in c.value for c in zh.caption)          # the norms' caption likewise
    en = run_page("positional.py", text="The cat sat.")
    assert next(w for w in en.multiselect if w.key == "pe-dims").options[0] == "0 (sin)"
    assert any(" (√(d/2) = 11.314)" in c.value for c in en.caption)
