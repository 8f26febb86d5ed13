"""What the explorer's browser-side view is sent (viz/figures/browser_view.py): the builders' own figures (one
renderer), every pick's weights, box, title and file name, compactly; no Streamlit, no browser."""
from __future__ import annotations

import base64
import gzip
import json

import numpy as np
import pytest

from model.analysis.attention_math import future_mask
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.browser_view import (MEAN, Window, encode, figure_spec, grid_selection, kind_part, pick_names,
                                      drawn_labels, framed, head)
from viz.figures.head_view import head_view, head_view_spec
from viz.figures.style import NORMAL, PHONE, PRESENTER, Look
from viz.core.i18n import words

RNG = np.random.default_rng(4)


def patterns(n_layers=2, n_heads=3, n_q=5, n_k=5) -> np.ndarray:
    p = RNG.random((n_layers, n_heads, n_q, n_k)).astype(np.float32) ** 4
    return p / p.sum(-1, keepdims=True)


def decoded(value):
    """A typed array (plotly's {dtype, bdata, shape}) as numbers; anything else as it is."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float)
        shape = value.get("shape")
        if shape is not None:
            array = array.reshape([int(n) for n in (shape.split(",") if isinstance(shape, str) else shape)])
        return array
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


def assert_same(a, b, where="") -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert a.shape == b.shape and np.allclose(a, b, atol=1e-6, equal_nan=True), where
    elif isinstance(a, dict):
        assert set(a) == set(b), (where, set(a) ^ set(b))
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (isinstance(a, float) and isinstance(b, float) and abs(a - b) < 1e-9), (where, a, b)


LABELS = [f"{i} ▁t<{i}>" for i in range(5)]


@pytest.mark.parametrize("build", [
    lambda w: head_view(patterns()[0], LABELS, LABELS, Look(w), selected_head=1),
    lambda w: model_view(patterns(), Look(w), title="t", selected=(1, 2), masked=future_mask("decoder", 5, 5)),
    lambda w: attention_heatmap(patterns()[0, 0], LABELS, LABELS, Look(w), title="t", masked=future_mask("decoder", 5, 5)),
], ids=["head_view", "model_view", "attention_heatmap"])
def test_the_view_draws_the_builders_figure_as_plotly_writes_it(build):
    """One renderer: the figure the view is sent is the builder's, as plotly.py's own to_dict writes it (float
    arrays as float32, the template once for the whole payload)."""
    fig = build(words("en"))
    ours, theirs = figure_spec(fig), fig.to_dict()
    theirs["layout"].pop("template", None)
    assert "template" not in ours["layout"]
    assert_same(decoded(ours), decoded(theirs))


def test_the_head_views_plain_spec_is_the_figure_plotly_writes():
    """The view sends head_view_spec's plain data (no plotly.py figure made of it): the same JSON as the head
    view's figure, as plotly.py's to_dict writes it."""
    args = (patterns()[0], LABELS, LABELS, Look(words("zh")))
    fig = head_view(*args, title="t", selected_head=2)
    theirs = fig.to_dict()
    theirs["layout"].pop("template", None)
    ours = figure_spec(head_view_spec(*args, title="t", selected_head=2))
    assert_same(decoded(ours), decoded(theirs))
    assert len(ours["data"]) > 8                         # a legend entry per head, then the lines and tokens


@pytest.mark.parametrize("layer, head", [(0, 0), (1, 2), (0, MEAN), (1, MEAN), (1, 0)])
def test_the_grid_box_of_every_pick_is_where_model_view_draws_it(layer, head):
    p, w = patterns(2, 3, 7, 7), words("en")
    drawn = model_view(p, Look(w), selected=(layer, None if head == MEAN else head)).layout.shapes[0]
    moved = grid_selection(model_view(p, Look(w), selected=(0, 0)), 2, 3, layer, head)
    assert [round(moved[k], 6) for k in ("x0", "x1", "y0", "y1")] == [round(drawn[k], 6) for k in ("x0", "x1", "y0", "y1")]


def test_a_kind_part_holds_every_picks_weights_title_and_file():
    p, w = patterns(2, 3, 5, 5), words("zh")
    q = slice(1, 4)
    part = kind_part("decoder", p, LABELS, LABELS, future_mask("decoder", 5, 5), Window(q, (q, q)), Look(w),
                     file_stem="m")
    picks = pick_names(2, 3)
    assert part["picks"] == [list(pick) for pick in picks] and picks[0] == (0, MEAN)
    z = decoded(part["z"])
    assert z.shape == (len(picks), 3, 3)
    index = picks.index((1, 2))
    expected = p[1, 2][q, q].astype(float)
    expected[np.triu_indices(3, 1)] = np.nan                       # the future, masked: no number, grey
    assert np.allclose(z[index], expected, equal_nan=True)
    assert np.allclose(z[picks.index((0, MEAN))][:, 0], p[0].mean(0)[q, q][:, 0])
    assert part["titles"][index] == w("explorer.one.head", kind=w.kind("decoder"), layer=1, head=2)
    assert part["files"][index] == "m-decoder-L1-H2" and part["files"][0] == "m-decoder-L0-avg"
    assert part["x"][1] == ["1 ▁t&lt;1&gt;", "2 ▁t&lt;2&gt;", "3 ▁t&lt;3&gt;"]      # escaped as the builder does
    assert "→" in part["strongest"][index] and "<" in part["strongest"][index]  # plain text: set as text
    assert all(lines is not None for lines in part["lines"])
    first = kind_part("decoder", p, LABELS, LABELS, None, Window(q, (q, q)), Look(w), lines_layers=(1,))
    assert first["lines"][0] is None and first["lines"][1] is not None


def test_a_phone_gets_every_map_title_wrapped_and_presenter_sizes_reach_the_figures():
    p, w = patterns(1, 8, 4, 4), words("en")
    q = slice(0, 4)
    phone = kind_part("cross", p, LABELS[:4], LABELS[:4], None, Window(q, (q,)), Look(w, PHONE))
    assert all("<br>" in title for title in phone["titles"])       # "Cross-attention (decoder → encoder): ..." is long
    big = kind_part("cross", p, LABELS[:4], LABELS[:4], None, Window(q, (q,)), Look(w, PRESENTER))
    assert big["map"]["layout"]["xaxis"]["tickfont"]["size"] >= 20 and big["grid"]["layout"]["font"]["size"] >= 20
    normal = kind_part("cross", p, LABELS[:4], LABELS[:4], None, Window(q, (q,)), Look(w, NORMAL))
    assert normal["map"]["layout"]["xaxis"]["tickfont"]["size"] < 20


def test_the_body_is_sent_once_and_the_pick_each_run():
    """The body's element gets the same bytes every run of a sentence (Streamlit's message cache sends them to a
    browser once); the pick travels in the head, an element of its own."""
    body = encode({"kinds": {}, "words": {"head": "头"}})
    assert body == encode({"kinds": {}, "words": {"head": "头"}})          # the same sig for the same data
    about = {"sentence": "s1", "whole": True}
    sent = framed(body, about)
    assert sent == framed(body, about)
    line, rest = sent.split(b"\n", 1)
    assert json.loads(line) == {"sig": body.sig, "sentence": "s1", "whole": True}
    assert rest == body.gzipped and json.loads(gzip.decompress(rest)) == {"kinds": {}, "words": {"head": "头"}}
    assert head({"kind": "cross", "layer": 1, "head": -1}, about, {"csv": {"text": "a\n,b"}}) == {
        "pick": {"kind": "cross", "layer": 1, "head": -1}, "sentence": "s1", "whole": True, "csv": {"text": "a\n,b"}}


def test_a_websocket_client_reads_the_views_labels():
    p, w = patterns(1, 2, 3, 3), words("en")
    q = slice(0, 3)
    part = kind_part("encoder", p, LABELS[:3], LABELS[:3], None, Window(q, (q,)), Look(w))
    data = framed(encode({"kinds": {"encoder": part}}), {"sentence": "s", "whole": True})
    assert set(drawn_labels(data)) == {"0 ▁t&lt;0&gt;", "1 ▁t&lt;1&gt;", "2 ▁t&lt;2&gt;"}


def test_a_deck_names_each_block_once():
    """A deck's pick fills its blocks by id (viz/figures/browser_view.js): two blocks of one id (a figure and a
    table both "heads") would show one of them empty."""
    from viz.figures.browser_view import deck
    from viz.core.i18n import words
    blocks = [{"type": "figure", "id": "heads"}, {"type": "details", "id": "more", "blocks": [
        {"type": "columns", "columns": [[{"type": "table", "id": "heads"}], []]}]}]
    with pytest.raises(ValueError, match="heads"):
        deck({}, blocks, ("kind", "layer"), {"encoder": 1}, None, words("en"), {})
    blocks[1]["blocks"][0]["columns"][0][0]["id"] = "head-table"
    assert deck({}, blocks, ("kind", "layer"), {"encoder": 1}, None, words("en"), {})["blocks"] == blocks


def test_a_decks_words_come_with_their_inline_maths_as_characters():
    """The browser knows no LaTeX (viz/figures/browser_view.js sets words as text): a text, heading or details
    block's words and title and a notes block's lines go with their $…$ as characters (viz/core/tex.py), the
    dollars and sub- and superscripts kept; a code block's text and a formula's MathML as they were; the parts the
    deck was given are left unchanged (a part may be kept for every session)."""
    from viz.figures.browser_view import deck, deck_pick
    blocks = [{"type": "heading", "id": "title"}, {"type": "code", "id": "code"}, {"type": "formula", "id": "f"},
              {"type": "details", "id": "more", "title": r"Why $\sqrt{d_k}$?", "blocks": [
                  {"type": "columns", "columns": [[{"type": "text", "id": "read"}], [{"type": "notes", "id": "ok"}]]}]}]
    texts = {"title": r"Step 3: $q\cdot k^\top$", "code": r"$\sqrt{x}$ - 1", "f": "<math>-</math>",
             "read": r"**Scale** by $\sqrt{d_k}$, $x-1$; a token $\top$ stays words: \top"}
    part = deck_pick({}, {}, texts, notes={"ok": [{"text": r"$\sum_j a_j = 1$", "ok": True}]})
    made = deck({"0": part}, blocks, ("step",), {}, None, words("en"), {}, steps=1)
    shown = made["picks"]["0"]
    assert shown["texts"] == {"title": "Step 3: $q⋅ k^⊤$", "code": r"$\sqrt{x}$ - 1", "f": "<math>-</math>",
                              "read": r"**Scale** by $√d_k$, $x−1$; a token $⊤$ stays words: \top"}
    assert shown["notes"] == {"ok": [{"text": "$∑_j a_j = 1$", "ok": True}]}
    assert made["blocks"][3]["title"] == "Why $√d_k$?" and blocks[3]["title"] == r"Why $\sqrt{d_k}$?"
    assert part["texts"] == texts                                                   # the part given: untouched


def test_inline_maths_as_the_characters_katex_draws():
    from viz.core.tex import inline_math, inline_text
    assert inline_math(r"z_h=\mathrm{softmax}(q_hK_h^\top/\sqrt{d_k})V_h") == "z_h=softmax(q_hK_h^⊤/√d_k)V_h"
    assert inline_math(r"\sqrt{d_{model}/2}") == "√d_{model}/2"           # a group inside the root's
    assert inline_math(r"\hat A_\ell") == "A\u0302_ℓ" and inline_math(r"\lVert\alpha_{ts}\rVert") == "‖α_{ts}‖"
    assert inline_math(r"k\,\omega_i") == "k\u2009ω_i" and inline_math(r"\foo") == "foo"
    assert inline_text("no maths - here") == "no maths - here"
    assert inline_text(r"a $-x$ and $\infty$ - b") == "a $−x$ and $∞$ - b"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_deck_of_steps_says_its_slider_and_buttons_in_the_readers_language(lang):
    """A deck that picks a step (the decoding page): the slider's name and its ◀/▶ buttons' from the catalogue, how
    many steps; no kind or layer pickers' words."""
    from viz.figures.browser_view import deck
    from viz.core.catalogue import message
    made = deck({"0": {}}, [{"type": "code", "id": "step-code"}], ("step",), {}, None, words(lang), {}, steps=7)
    assert made["names"] == ["step"] and made["steps"] == 7
    assert made["words"] == {"csv": message(lang, "ui.csv"), "step": message(lang, "decoding.step"),
                             "step_help": message(lang, "decoding.step.help"),
                             "previous": message(lang, "ui.step.previous"), "next": message(lang, "ui.step.next")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("mean", [False, True])
def test_a_deck_that_picks_a_head_names_its_heads_as_the_explorer_does(lang, mean):
    """A deck with a head picker (the attention zoo's kind x layer x head): its heads' names are the explorer's
    (head_names: the catalogue's, the mean of the heads first where offered), the body says how many and whether the
    mean is one; a deck without one has no head words."""
    from viz.figures.browser_view import deck, head_names
    from viz.core.catalogue import message
    made = deck({}, [], ("kind", "layer", "head"), {"encoder": 2}, None, words(lang), {}, heads=3, mean=mean)
    assert made["heads"] == 3 and made["mean"] is mean
    expected = {str(h): message(lang, "ui.head_n", h=h) for h in range(3)}
    if mean:
        expected = {str(MEAN): message(lang, "ui.head_mean"), **expected}
    assert made["words"]["head"] == message(lang, "ui.head") and made["words"]["head_names"] == expected
    assert list(made["words"]["head_names"]) == list(expected)                # the mean first
    assert head_names(3, words(lang)) == {str(MEAN): message(lang, "ui.head_mean"),
                                          **{str(h): message(lang, "ui.head_n", h=h) for h in range(3)}}
    assert "head" not in deck({}, [], ("kind", "layer"), {"encoder": 2}, None, words(lang), {})["words"]


def test_a_deck_takes_a_pages_own_step_words_and_a_client_reads_its_labels():
    """The step-through page's deck (issue 44): its own words over the pickers' (its steps by name, ◀ Previous and
    Next ▶ as the page wrote them); a websocket client reads every pick's figure labels from its body as from the
    explorer's."""
    from viz.figures.browser_view import deck, deck_pick
    import plotly.graph_objects as go
    fig = go.Figure(go.Heatmap(z=[[0.5, 0.5]], x=["0 ▁a", "1 ▁b"], y=["0 ▁a"]))
    said = {"previous": "◀ 上一步", "next": "下一步 ▶", "step_names": ["1 X", "2 Q"]}
    made = deck({"0": deck_pick({"picture-0": fig}, {"picture-0": "x"})}, [{"type": "formula", "id": "formula"}],
                ("step",), {}, None, words("zh"), {}, steps=2, said=said)
    assert made["words"]["previous"] == "◀ 上一步" and made["words"]["step_names"] == ["1 X", "2 Q"]
    assert made["words"]["csv"] and made["words"]["step"]                  # the pickers' words the page kept
    data = framed(encode(made), {"sentence": "s", "whole": True})
    assert set(drawn_labels(data)) == {"0 ▁a", "1 ▁b"}


def test_a_deck_of_steps_with_a_layer_and_a_head_says_every_pickers_words_and_reads_its_step_parts():
    """The training page's deck (a snapshot, its maps' layer and head or their mean): the step's words and the
    layer's and head's together, and the pickers' place (a `pickers` block) kept; a client reads the labels of a
    step's part ("0": what every layer and head of it shows) as of a pick's ("0:1:-1")."""
    from viz.figures.browser_view import deck, deck_pick, head_names
    from viz.core.catalogue import message
    import plotly.graph_objects as go
    step = deck_pick({"curve": go.Figure(go.Scatter(x=["5", "10"], y=[1, 2]))}, {"curve": "c"})
    pick = deck_pick({"cross": go.Figure(go.Heatmap(z=[[1.0]], x=["0 a"], y=["1 b"]))}, {"cross": "x"})
    blocks = [{"type": "figure", "id": "curve"}, {"type": "figure", "id": "cross"}, {"type": "pickers", "title": "t"}]
    made = deck({"0": step, "0:1:-1": pick}, blocks, ("step", "layer", "head"), {"decoder": 2}, None, words("zh"), {},
                steps=1, heads=2, mean=True)
    said = made["words"]
    assert said["step"] == message("zh", "decoding.step") and said["next"] == message("zh", "ui.step.next")
    assert said["layer_names"] == [message("zh", "ui.layer_n", i=i) for i in range(2)]
    assert said["head_names"] == head_names(2, words("zh")) and list(said["head_names"])[0] == str(MEAN)
    assert made["blocks"][-1] == {"type": "pickers", "title": "t"}
    assert set(drawn_labels(framed(encode(made), {"sentence": "s", "whole": True}))) == {"5", "10", "0 a", "1 b"}
