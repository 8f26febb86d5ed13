"""The live model map (viz/figures/model_map.py) from a real trace of the shipped en-es model: the paper's
Figure 1 blocks, thumbnails that are the real attention, numbers that are the trace's, links to the
pages and views that explain each block."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from model import load_checkpoint, trace_sentence
from model.capture import schema
from viz.figures.model_map import BLOCKS, STACK_ROWS, TOUR_BLOCKS, all_cells, map_cell, map_data, model_map
from viz.elements.nav import block_target
from viz.figures.style import MASKED_COLOR, PRESENTER, Look
from viz.elements.map_view import map_figure
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "The man went to the house."


@pytest.fixture(scope="module")
def bundle():
    return load_checkpoint(ROOT / "pretrained" / "en-es")


@pytest.fixture(scope="module")
def trace(bundle):
    return trace_sentence(bundle, SENTENCE)


@pytest.fixture(scope="module")
def data(trace, bundle):
    return map_data(trace, bundle.tokenizer.token_strings)


def _heatmaps(fig):
    return {tr.name: tr for tr in fig.data if tr.type == "heatmap"}


def test_map_data_reads_the_trace(trace, data, bundle):
    cfg = bundle.config
    assert data.n_layers == {"encoder": cfg.n_encoder_layers, "decoder": cfg.n_decoder_layers}
    for kind in schema.KINDS:
        assert np.allclose(data.attention[kind], schema.stacked(trace, kind).mean(1))
    assert np.isclose(data.sigma["norm.decoder.norm_cross"][1],
                      trace[schema.norm_name("decoder", 1, "norm_cross", "std")].mean())
    ff = trace[schema.ff_name("encoder", 2, "out")]
    assert np.isclose(data.ff_norm["encoder"][2], np.linalg.norm(ff, axis=-1).mean())
    logits = trace[schema.LOGITS].astype(np.float64)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert np.allclose(data.top_p, p.max(-1))
    assert data.top_tokens[0] == trace.meta["tgt_out_tokens"][0]      # greedy: the top token is the output
    assert data.d_model == cfg.d_model and data.vocab == cfg.vocab_size


def test_every_block_of_figure_1_is_drawn_once_per_layer(data):
    links = {cell: "" for cell in all_cells(3, 3)}          # clickable
    fig = model_map(data, Look(EN), links=links)
    # thumbnails: 3 attention kinds x 3 layers, plus the softmax strip
    maps = _heatmaps(fig)
    assert sorted(maps) == sorted([f"{b}#{i}" for b in ("attn.encoder", "attn.decoder", "attn.cross")
                                   for i in range(3)] + ["softmax"])
    cells = list(next(tr for tr in fig.data if tr.name == "cells").customdata)
    # every block of the paper's figure: 2 embeddings, 4 encoder rows, 6 decoder rows, linear, softmax
    assert len(BLOCKS) == 2 + 4 + 6 + 2
    assert sorted(cells) == sorted(all_cells(3, 3))
    assert len(cells) == 4 + 3 * (len(STACK_ROWS["encoder"]) + len(STACK_ROWS["decoder"]))
    boxes = [s for s in fig.layout.shapes if s.type == "rect" and s.line.width == 1]
    assert len(boxes) == len(BLOCKS)
    text = " ".join(a.text for a in fig.layout.annotations)
    for word in ("self-attention", "masked", "cross-attention", "Add &amp; Norm" if "&amp;" in text else "Add & Norm",
                 "feed-forward", "linear", "softmax", "3 × encoder layer", "3 × decoder layer", "layer 2"):
        assert word in text, word


def test_thumbnails_are_the_real_mean_of_heads_patterns(trace, data):
    maps = _heatmaps(model_map(data, Look(EN)))
    for kind, block in (("encoder", "attn.encoder"), ("cross", "attn.cross"), ("decoder", "attn.decoder")):
        for layer in range(3):
            expected = schema.stacked(trace, kind)[layer].mean(0)
            z = np.array(maps[f"{block}#{layer}"].z, dtype=float)[::-1]          # drawn bottom-up
            if kind == "decoder":                      # the future is masked: grey, not a 0
                upper = np.triu_indices(len(expected), 1)
                assert np.isnan(z[upper]).all()
                z[upper] = expected[upper]
            assert np.allclose(z, expected, atol=1e-6), (kind, layer)
    masked = [s for s in model_map(data, Look(EN)).layout.shapes if s.fillcolor == MASKED_COLOR]
    assert len(masked) == 3                             # behind each decoder self-attention thumbnail


def test_numbers_are_the_traces(data):
    fig = model_map(data, Look(EN))
    text = [a.text for a in fig.layout.annotations]
    assert f"{data.sigma['norm.encoder.norm_attn'][0]:.1f}" in text
    assert f"{data.ff_norm['decoder'][2]:.1f}" in text
    top = f"‘{data.top_tokens[0].replace('<', '&lt;')}’ {data.top_p[0]:.0%}"
    assert top in text
    assert f"{data.d_model} → {data.vocab:,}" in text


def test_each_block_opens_the_page_and_view_that_explains_it(data):
    assert block_target("attn.cross#2") == ("explorer.py", {"kind": "cross", "layer": "2", "head": "-1"})
    assert block_target("attn.decoder#0")[1]["kind"] == "decoder"
    assert block_target("norm.decoder.norm_cross#1") == ("layernorm.py", {"stack": "decoder", "layer": "1",
                                                                           "norm": "norm_cross"})
    assert block_target("ff.encoder#2") == ("ffn.py", {"view": "ffn", "stack": "encoder", "layer": "2"})
    assert block_target("embed.encoder")[0] == "positional.py"
    assert block_target("softmax") == ("decoding.py", {"method": "greedy"})
    with_urls = model_map(data, Look(EN), links={cell: f"explorer?c={i}" for i, cell in enumerate(all_cells(3, 3))})
    hrefs = [a.text for a in with_urls.layout.annotations if "<a href=" in a.text]
    assert hrefs and all('target="_self"' in h for h in hrefs)
    clicked = model_map(data, Look(EN), links={cell: "" for cell in all_cells(3, 3)})     # the app's live map
    assert not any("<a href=" in a.text for a in clicked.layout.annotations)
    assert map_cell({"customdata": "attn.cross#2"}) == "attn.cross#2"
    assert map_cell({"customdata": "nonsense#1"}) is None and map_cell({}) is None


def test_link_pages_and_parameters_are_the_apps():
    # each page reads the parameters the map writes: by their declarations in viz/core/view.py (view.METHOD, ...)
    from viz.core import view
    declared = {v.name: const for const, v in vars(view).items() if isinstance(v, view.Value)}
    for cell in all_cells(3, 3):
        page, params = block_target(cell)
        source = (ROOT / "viz" / "pages" / page).read_text(encoding="utf-8")
        for name in params:
            assert f"view.{declared[name]}" in source or name in ("layer", "head"), (page, name)   # ui.layer_head_pickers


def test_highlight_and_words(trace, bundle):
    fig = map_figure(trace, Look(words("zh"), PRESENTER), highlight=TOUR_BLOCKS["decoder"],
                     token_strings=bundle.tokenizer.token_strings)
    red = [s for s in fig.layout.shapes if s.line.color == "#d62728"]
    assert len(red) == 2
    text = " ".join(a.text for a in fig.layout.annotations)
    assert "交叉注意力" in text and "你在这里" in text and "self-attention" not in text
    assert min(a.font.size for a in fig.layout.annotations if a.text) >= 16    # presenter: nothing under 16 px
    assert all(set(TOUR_BLOCKS[k]) <= set(BLOCKS) for k in TOUR_BLOCKS)


@pytest.mark.parametrize("scale_name", ["normal", "presenter"])
def test_the_token_rows_stay_on_their_side(bundle, scale_name):
    """Seen on the home page with 'The children are playing in the garden while their mother reads a book.'
    (normal, 1280x720): twelve tokens of the inputs row ran into the outputs row, and that row off the figure.
    Each row now lists the tokens that fit in its half of the figure, then '…'."""
    from viz.figures.style import TYPE_SCALES
    scale = TYPE_SCALES[scale_name]
    long = "The children are playing in the garden while their mother reads a book."
    data = map_data(trace_sentence(bundle, long), bundle.tokenizer.token_strings)
    fig = model_map(data, Look(EN, scale))
    rows = [a for a in fig.layout.annotations if a.text and a.text.startswith("<i>") and ":" in a.text]
    assert len(rows) == 2
    for row in rows:
        shown = row.text.replace("<i>", "").replace("</i>", "").replace("&lt;", "<").replace("&gt;", ">")
        assert scale.text_px(shown, "tick") <= 0.46 * scale.page_px, shown
    assert all(row.text.endswith(" …") for row in rows)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_softmax_strip_starts_after_its_words(trace, bundle, lang):
    """Presenter mode, 中文: the top-token words ('最可能 “▁El” 96%') ran under the softmax's probability strip."""
    from viz.figures.style import TYPE_SCALES
    for scale in TYPE_SCALES.values():
        fig = map_figure(trace, Look(words(lang), scale), compact=True,
                         token_strings=bundle.tokenizer.token_strings)
        top = next(a for a in fig.layout.annotations if "%" in (a.text or "") and a.y == fig.data[-1].y0)
        strip = next(d for d in fig.data if d.name == "softmax")
        words_end = top.x + scale.text_px(top.text) * 100 / scale.page_px
        assert strip.x0 - strip.dx / 2 >= words_end, (top.text, strip.x0)


def test_the_chinese_map_does_not_say_its_block_twice(trace, bundle):
    """Home's map in 中文 read "前馈网络 · 前馈 ‖FFN‖" and "线性层 … 线性 256 → 8,002": the block's name and again
    inside its value. They now read as the English ones do: "前馈网络 · ‖FFN‖", "256 → 8,002"."""
    assert words("zh")("map.ff_size") == words("en")("map.ff_size") == "‖FFN‖"
    fig = map_figure(trace, Look(words("zh")), token_strings=bundle.tokenizer.token_strings)
    texts = [a.text for a in fig.layout.annotations if a.text]
    assert "前馈网络 · ‖FFN‖" in texts and not any("前馈 ‖" in text for text in texts)
    assert any(re.fullmatch(r"\d+ → [\d,]+", text) for text in texts) and not any(text.startswith("线性 ") for text in texts)


def test_no_chinese_block_name_is_wider_than_the_english_the_names_column_holds():
    """The map's names column is sized for the English names; 中文 '残差 + 层归一化 · 标准差 σ' ran over layer 0's σ
    on every page's map (its number read 'σ.4'). σ is named in the map's caption and hover."""
    from viz.figures.model_map import STACK_ROWS, block_name
    from viz.figures.style import PRESENTER

    def widest(lang):
        return max(PRESENTER.text_px(line) for rows in STACK_ROWS.values() for block in rows
                   for line in block_name(block, words(lang)).split("<br>"))
    assert widest("zh") <= widest("en"), (widest("zh"), widest("en"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_the_decoder_stands_over_the_encoder_and_each_name_fits_its_column(data, trace, bundle, lang):
    """Issue 46, item 8: side by side in a phone's 350 px, each stack 160 px wide, 'feed-forward · ‖FFN‖' and
    'Add & Norm · σ' ran over their layers' numbers and '3 × encoder layer' over 'layer 0'. On a phone (PHONE is
    narrow) the decoder is drawn above the encoder, both the column's width, and every name fits before the first
    layer's column."""
    from viz.figures.model_map import block_name
    from viz.figures.style import PHONE
    fig = map_figure(trace, Look(words(lang), PHONE), token_strings=bundle.tokenizer.token_strings)
    boxes = [s for s in fig.layout.shapes if s.type == "rect" and s.xref == "x"]
    assert min(s.x0 for s in boxes) < 2 and max(s.x1 for s in boxes) > 95         # every box the column's width
    names = {block_name(block, words(lang)).split("<br>")[0] for rows in STACK_ROWS.values() for block in rows}
    notes = [a for a in fig.layout.annotations if a.text and a.text.split("<br>")[0] in names]
    def first_row_y(block):                      # each stack's first row: side by side, both at one height
        return next(a.y for a in notes if a.text.split("<br>")[0] == block_name(block, words(lang)).split("<br>")[0])
    assert first_row_y("attn.decoder") > first_row_y("attn.encoder") + 200       # the decoder's above the encoder
    first_layer = min(a.x for a in fig.layout.annotations if a.xanchor == "center" and a.text and
                      re.fullmatch(r"[\d.]+", a.text))
    for note in notes:
        widest = max(PHONE.text_px(line) for line in note.text.split("<br>"))
        assert note.x + widest * 100 / PHONE.page_px <= first_layer - 3, note.text
