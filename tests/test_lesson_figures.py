"""The tour's pictures (viz/tour/pictures.py, drawn by the Guided tour page and the offline lesson) read on a
projector: a dimension axis with a few level labels, the positional table without an empty row under the
sentence, and a step's `code` spans shown as code, never as markup."""
import json
import re

import numpy as np

import pytest

from test_lesson import trace_of
from viz.figures.style import Look
from viz.tour.lesson import lesson_html, text_html
from viz.tour.pictures import (FULL_FIGURES, decoder_figure, embeddings_figure, embeddings_matrix_figure,
                              positional_figure, positional_table_figure)
from viz.tour.steps import TOUR
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

SENTENCE = "The man went to the house."


@pytest.fixture(scope="module")
def trace():
    return trace_of("en-es", SENTENCE)         # d_model 256, 9 source positions: <modern> (the default style) first


def layout_of(fig) -> dict:
    return json.loads(fig.to_json())["layout"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_embeddings_step_shows_how_alike_the_tokens_are(trace, lang):
    """Issue 26, item 2: no 8x256 stripe chart as the teaching picture, but the tokens' cosine similarities
    (tokens x tokens), computed on the trace's embedding vectors; the full matrix is one click away."""
    fig = embeddings_figure(trace, None, Look(words(lang)))
    x = trace["src_embed.hook_tokens"].astype(np.float64)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), unit @ unit.T, atol=1e-9)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1, 1) and fig.data[0].texttemplate
    assert FULL_FIGURES["tokens"] is embeddings_matrix_figure
    assert np.asarray(embeddings_matrix_figure(trace, None, Look(words(lang))).data[0].z).shape == x.shape


def test_a_repeated_token_is_alike_to_itself():
    trace = trace_of("toy-reverse", "c a c e")
    z = np.asarray(embeddings_figure(trace, None, Look(EN)).data[0].z)
    tokens = trace.meta["src_tokens"]
    i, j = [n for n, tok in enumerate(tokens) if tok == tokens[0]][:2]
    assert z[i, j] == pytest.approx(1.0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_embedding_dimensions_are_a_few_level_labels(trace, lang):
    """256 dimensions: d0, d32, … d224, level (plotly's own pick was 43 slanted labels, d0 d6 … d252, that ran
    into each other); the heatmap still has every column."""
    fig = embeddings_matrix_figure(trace, None, Look(words(lang)))
    xaxis = layout_of(fig)["xaxis"]
    assert xaxis["tickvals"] == xaxis["ticktext"] == [f"d{i}" for i in range(0, 256, 32)]
    assert xaxis["tickangle"] == 0 and xaxis["tickmode"] == "array"
    assert len(fig.data[0].x) == 256


def test_a_small_models_dimensions_are_thinned_too():
    fig = embeddings_matrix_figure(trace_of("toy-reverse", "c a f e"), None, Look(words("en")))
    shown = fig.layout.xaxis.tickvals
    assert 4 <= len(shown) <= 10 and shown[0] == "d0" and fig.layout.xaxis.tickangle == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_positional_step_shows_how_alike_the_positions_are(trace, lang):
    """Issue 26, item 2: no 8x256 moire as the picture, but the positions' cosine similarities, on the trace's
    positional vectors; neighbours are more alike than the far ends; the table is one click away."""
    fig = positional_figure(trace, None, Look(words(lang)))
    pe = trace["src_embed.hook_pos"].astype(np.float64)
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, unit @ unit.T, atol=1e-9)
    assert z[0, 1] > z[0, -1] and z.shape == (9, 9)
    assert fig.data[0].zmin == pytest.approx(z.min()) and fig.data[0].zmax == 1.0   # the colours span what is shown
    assert FULL_FIGURES["positional"] is positional_table_figure


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_positional_table_has_no_row_under_the_sentence(trace, lang):
    """Positions 0-8 fill the axis (reversed, 0 on top): no empty row "9" for the label to sit in; the label
    is above the box, outside the data, and names the sentence's positions."""
    fig = positional_table_figure(trace, None, Look(words(lang)))
    layout = layout_of(fig)
    n = len(fig.data[0].z)
    assert n == 9
    assert layout["yaxis"]["range"] == [n - 0.5, -0.5] and layout["yaxis"]["autorange"] is False
    (box,) = layout["shapes"]
    assert (box["y0"], box["y1"]) == (-0.5, n - 0.5)
    (label,) = layout["annotations"]
    assert (label["yref"], label["y"], label["yanchor"]) == ("paper", 1, "bottom")
    assert label["text"].endswith("0–8")


def test_code_spans_in_a_steps_text():
    assert text_html("until it writes `</s>`.") == "until it writes <code>&lt;/s&gt;</code>."
    assert text_html("a </s> b") == "a &lt;/s&gt; b"
    assert text_html("`<script>alert(1)</script>`") == "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>"
    assert text_html("√d_model & d_k") == "√d_model &amp; d_k"


def test_the_lesson_shows_no_bare_end_tag(trace):
    """Step 8 (decoding) names the end token; whatever the catalogue writes, the lesson shows it as text."""
    body = re.sub(r"<script\b.*?</script>", "", lesson_html(trace), flags=re.S)
    assert "</s>" not in body and 'id="step-8"' in body


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_decoder_step_shows_the_mask_it_explains(trace, lang):
    """Issue 26, item 4: step 7 explains the causal mask, so its picture is the decoder's masked self-attention
    (it showed cross-attention): queries and keys are both the output, the future cells grey without a number
    and named in the legend; its first link opens that view, its formula says s > t without English words."""
    fig = decoder_figure(trace, None, Look(words(lang)))
    data = json.loads(fig.to_json())["data"]
    heat = data[0]
    assert len(heat["x"]) == len(heat["y"]) and "&lt;s&gt;" in heat["x"][0]   # output looks at output so far
    z = np.array(fig.data[0].z, dtype=float)
    assert np.isnan(z[np.triu_indices(len(z), 1)]).all() and not np.isnan(np.tril(z)).any()
    legend = {"en": "masked (future position)", "zh": "被掩码（未来位置）"}[lang]
    assert any(d.get("name") == legend and d.get("showlegend") for d in data)
    assert {"en": "Decoder masked self-attention", "zh": "解码器掩码自注意力"}[lang] in fig.layout.title.text
    step = next(s for s in TOUR if s.key == "decoder")
    assert step.links[0].params == {"kind": "decoder"} and "text{for}" not in step.formula and "s>t" in step.formula


@pytest.mark.parametrize("scale", ["normal", "presenter"])
def test_positional_title_and_label_each_have_their_line_and_the_axes_their_numbers(trace, scale):
    """Issue 26, item 7: the title at the top of the figure, the sentence label on the map's top edge, the top
    margin holding both lines (at 60 px the centred title and the label met over the map); numbers on both axes."""
    from viz.figures.style import TYPE_SCALES
    type_scale = TYPE_SCALES[scale]
    layout = layout_of(positional_table_figure(trace, None, Look(EN, type_scale)))
    title = layout["title"]
    assert (title["yref"], title["y"], title["yanchor"]) == ("container", 1, "top")
    title_bottom = title["pad"]["t"] + 1.35 * type_scale.title
    label_top = layout["margin"]["t"] - 2 - 1.35 * type_scale.text
    assert title_bottom + 4 <= label_top
    for axis in ("xaxis", "yaxis"):
        assert layout[axis].get("showticklabels", True) and layout[axis]["tickfont"]["size"] >= 14
