"""Step-through and Multi-head assembly pages through AppTest, on the toy-reverse model."""
import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apptest_utils import (browser_says, browser_view, browser_view_sent, browser_view_whole, no_exceptions, run_page,
                           texts)
from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence
from model.analysis.attention_math import entropy_bits
from viz.pages.step_through import MASK_FORMULAS
from viz.tour.formula_html import formula_mathml

TOY = Path(__file__).resolve().parents[1] / "pretrained" / "toy-reverse"
TEXT = "a b c d e"


@pytest.fixture(scope="module")
def trace():
    return trace_sentence(load_checkpoint(TOY, device="cpu"), TEXT)     # what the app traces for this input


# -- step-through: its nine steps drawn in the browser (a deck: viz/figures/browser_view.py); what the page sends ---
def step_deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The step view's head (the pick...) and body (every step's figures, words, the row and the checks)."""
    return browser_view_sent(browser_view_whole(at, "step") if whole else at, "step")


def part_of(body: dict, step: int, layer: int = 0, head: int = 0) -> dict:
    """A head's step's part of the deck body, with what its head's and every pick's parts add (the browser's
    deckPart): its prefixes' ("0:1", "") blocks under its own; a part that is another's ({same}) read there."""
    picks, key = body["picks"], f"{layer}:{head}:{step}"
    merged: dict = {}
    for at in ("", f"{layer}:{head}", key):
        own = picks.get(picks.get(at, {}).get("same", at), {})
        for field in ("figures", "files", "texts", "tables", "notes"):
            merged[field] = {**merged.get(field, {}), **own.get(field, {})}
    return merged


def shown_row(part: dict) -> np.ndarray:
    """The step's "row as numbers" table: its numbers in order (a wide row is sent on its side), −∞ as -inf."""
    cells = [cell for row in part["tables"]["row"]["rows"] for cell in row]
    return np.array([-np.inf if cell == "−∞" else float(cell) for cell in cells])


def successes(part: dict) -> list[str]:
    return [note["text"] for note in part["notes"]["checks"] if note["ok"]]


def test_step_opens_where_a_lesson_starts_and_walks_on_with_next(trace):
    """Issue 46, item 3: the page opens on step 1, the input X (issue 26 opened on Q·Kᵀ, mid-lesson); Next goes
    to Q, K, V and the scores one click each (in the browser now, issue 44: the deck holds every step, in order)."""
    at = run_page("step_through.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Step-through: one head"
    assert at.radio(key="step-kind").value == "encoder"
    assert at.selectbox(key="step-query-encoder").value == 0
    head, body = step_deck(at)
    # the first screen: layer 0's head 0 at step 1, its head's part (why scaling matters) and every pick's
    assert head["pick"] == {"layer": 0, "head": 0, "step": 0} and list(body["picks"]) == ["", "0:0", "0:0:0"]
    assert body["names"] == ["layer", "head", "step"] and body["url_names"] == {"layer": "layer", "head": "head",
                                                                               "step": "step"}
    assert body["words"]["step_names"][:5] == ["1 X", "2 Q", "3 K", "4 V", "5 Q·Kᵀ"]
    assert body["words"]["previous"] == "◀ Previous" and body["words"]["next"] == "Next ▶"
    head, body = step_deck(at, whole=True)
    cfg = load_checkpoint(TOY, device="cpu").config
    heads = [(layer, h) for layer in range(cfg.n_encoder_layers) for h in range(cfg.n_heads)]
    assert set(body["picks"]) == {""} | {f"{layer}:{h}" for layer, h in heads} | {
        f"{layer}:{h}:{step}" for layer, h in heads for step in range(9)}
    assert body["steps"] == 9 and body["heads"] == cfg.n_heads and body["layers"] == {"encoder": cfg.n_encoder_layers}
    assert body["ahead"] == "step"                    # only its steps drawn ahead, not another head's (Next after Next)
    scores = part_of(body, 4)                                     # four Next: the scores
    n = len(trace.arrays["src_embed.hook_out"])
    assert figure_z(scores["figures"]["picture-0"]).shape == (n, n)               # queries x keys
    q = trace.arrays["encoder.layers.0.self_attn.hook_q"][0].astype(np.float64)
    k = trace.arrays["encoder.layers.0.self_attn.hook_k"][0].astype(np.float64)
    np.testing.assert_allclose(shown_row(scores), q[0] @ k.T, atol=1e-3)
    assert scores["texts"]["step-heading"] == "Step 5 of 9: $QK^⊤$"      # its maths as characters (viz/core/tex.py)
    assert scores["texts"]["why-header"] == "Why divide by $√d_k$?" and "scaling" in scores["figures"]
    no_exceptions(at)


def test_step_every_head_of_a_layer_shares_its_input_and_has_its_own_steps(trace):
    """Issue 44: the deck holds every head of the kind; the first step (the layer's input X) is every head's of the
    layer, sent once (a head's step 1 is head 0's: {same}); each head's Q and weights are its own."""
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="encoder", query=1)
    body = step_deck(at, whole=True)[1]
    assert body["picks"]["1:2:0"] == {"same": "1:0:0"} and "figures" in body["picks"]["1:0:0"]
    x = trace.arrays["encoder.layers.1.hook_resid_pre"][1].astype(np.float64)       # layer 1's input, query 1
    np.testing.assert_allclose(shown_row(part_of(body, 0, layer=1, head=2)), x, atol=1e-4)
    for h in range(2):
        q = trace.arrays["encoder.layers.1.self_attn.hook_q"][h]
        np.testing.assert_allclose(figure_z(part_of(body, 1, layer=1, head=h)["figures"]["full-0"]), q, atol=1e-4)
        np.testing.assert_allclose(figure_z(part_of(body, 7, layer=1, head=h)["figures"]["picture-0"]),
                                   trace.arrays["encoder.layers.1.self_attn.hook_pattern"][h], atol=1e-6)
    # why scaling matters: each head's own, for the query followed
    bars = [part_of(body, 3, layer=1, head=h)["figures"]["scaling"] for h in range(2)]
    assert bars[0]["data"][1]["y"] != bars[1]["data"][1]["y"]


def test_step_selects_the_first_word_not_the_style_token():
    """Issue 46, item 3: a two-style model reads <modern> first; the lesson's query is the sentence's first word."""
    at = run_page("step_through.py", model="en-es", text="The man went to the house.")
    no_exceptions(at)
    query = at.selectbox(key="step-query-encoder")
    assert query.value == 1 and "The" in query.format_func(query.value) and at.query_params["query"] == "1"


@pytest.mark.parametrize("step,which", [(0, "X"), (1, "Q"), (2, "K"), (3, "V")])
def test_step_vectors_shown_as_cosine_map_with_the_full_matrix_behind(trace, step, which):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, step=step)
    no_exceptions(at)
    head, body = step_deck(at)
    assert head["pick"] == {"layer": 0, "head": 0, "step": step}                 # a link's step: its first screen
    assert list(body["picks"]) == ["", "0:0", f"0:0:{step}"]
    part = part_of(body, step)
    x = (trace.arrays["src_embed.hook_out"] if which == "X" else
         trace.arrays[f"encoder.layers.0.self_attn.hook_{which.lower()}"][0]).astype(np.float64)
    if which == "X":                                             # the row shown: X of the first token
        np.testing.assert_allclose(shown_row(part), x[0], atol=1e-4)
    first = figure_z(part["figures"]["picture-0"])
    assert first.shape == (len(x), len(x)) and first.shape[1] < x.shape[1]   # tokens x tokens, not d columns
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(first, unit @ unit.T, atol=1e-5)  # the cosine formula on the trace's vectors
    full = [block for column in body["blocks"][0]["columns"] for block in column if block["type"] == "details"]
    assert len(full) == 1 and full[0]["title"] == "All the numbers: the full matrix"
    assert [block["id"] for block in full[0]["blocks"]] == ["full-0", "full-1"]
    np.testing.assert_allclose(figure_z(part["figures"]["full-0"]), x, atol=1e-4)   # the full matrix, a click away
    assert part["texts"]["cosine-caption"].startswith("Each cell compares two tokens' vectors")
    assert set(part["figures"]) == {"picture-0", "full-0", "scaling"}    # the encoder's: one map, one full matrix


def test_step_deep_link_reproduces_the_view_with_real_numbers(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="decoder", layer=1, head=2, query=3, step=6)
    no_exceptions(at)
    assert at.radio(key="step-kind").value == "decoder"
    assert at.selectbox(key="step-query-decoder").value == 3
    assert step_deck(at)[0]["pick"] == {"layer": 1, "head": 2, "step": 6}
    assert {k: at.query_params[k] for k in ("kind", "layer", "head", "query", "step")} == \
        {"kind": "decoder", "layer": "1", "head": "2", "query": "3", "step": "6"}
    part = part_of(step_deck(at)[1], 6, layer=1, head=2)
    row = shown_row(part)                                        # step 7: scores + mask, query row 3
    scores = trace.arrays["decoder.layers.1.self_attn.hook_scores"][2, 3]
    np.testing.assert_allclose(row[:4], scores[:4], atol=1e-4)
    assert np.all(np.isneginf(row[4:]))                          # the future is masked
    assert "hides 2 future position(s)" in part["texts"]["step-text"]
    # the mask's cases as MathML (the browser draws it: no KaTeX in the deck)
    assert part["texts"]["formula"] == formula_mathml(MASK_FORMULAS[True]) and "<mtable" in part["texts"]["formula"]
    # the scaling comparison reports the entropy of the real scaled weights for this query
    pattern_row = trace.arrays["decoder.layers.1.self_attn.hook_pattern"][2, 3]
    summary = part["tables"]["scaling-summary"]
    assert summary["columns"][1] == "entropy (bits)" and summary["index"][1].startswith("softmax(q·k / √")
    assert float(summary["rows"][1][1]) == pytest.approx(entropy_bits(pattern_row), abs=2e-3)


def test_step_next_and_previous_buttons_walk_through_the_steps(trace):
    """Next and Previous are the browser's now (issue 44): it draws each step from the deck with no script run; a
    step it reports (a teacher's, or a reader's once when a run they caused otherwise came back) writes the URL
    with the same body (nothing rebuilt, not resent)."""
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="cross", query=2, step=7)
    no_exceptions(at)
    step_deck(at, whole=True)
    sent = browser_view(at, "step-view").proto.bytes
    browser_says(at, state={"pick": {"layer": 0, "head": 0, "step": 8}}, where="step")      # Next ▶
    no_exceptions(at)
    assert step_deck(at)[0]["pick"] == {"layer": 0, "head": 0, "step": 8} and at.query_params["step"] == "8"
    assert browser_view(at, "step-view").proto.bytes == sent     # the same message: the browser has it
    # the last step: the head output, checked against pattern @ V with the error shown
    last = part_of(step_deck(at)[1], 8)
    z = trace.arrays["decoder.layers.0.cross_attn.hook_z"][0, 2]
    np.testing.assert_allclose(shown_row(last), z, atol=1e-4)
    assert any("weights · $V$" in s and "max |difference|" in s for s in successes(last))
    browser_says(at, state={"pick": {"layer": 0, "head": 0, "step": 6}}, where="step")      # ◀ Previous, twice
    no_exceptions(at)
    assert step_deck(at)[0]["pick"] == {"layer": 0, "head": 0, "step": 6} and at.query_params["step"] == "6"
    assert browser_view(at, "step-view").proto.bytes == sent
    browser_says(at, state={"pick": {"layer": 1, "head": 1, "step": 6}}, where="step")      # another head
    no_exceptions(at)
    assert step_deck(at)[0]["pick"] == {"layer": 1, "head": 1, "step": 6}
    assert (at.query_params["layer"], at.query_params["head"], at.query_params["kind"]) == ("1", "1", "cross")
    assert browser_view(at, "step-view").proto.bytes == sent


def test_step_every_step_holds_what_the_builders_make(trace):
    """Issue 44: each step's part of the deck is the page's builders' own figure for that step (the same figure,
    not a second drawing of it), its formula the converter's MathML of the page's formula, its row and checks."""
    from test_page_decoding_about import assert_same_figure
    from viz.core.i18n import words
    from viz.core.text import attention_labels
    from viz.figures.browser_view import figure_spec
    from viz.figures.step import step_heatmap
    from viz.figures.style import NORMAL, Labels, Look
    from viz.pages.step_through import (OUTPUT_FORMULA, SCORES_FORMULA, SOFTMAX_FORMULA, projection_formula,
                                        scaled_formula)
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="encoder", layer=1, head=1, query=2)
    no_exceptions(at)
    body = step_deck(at, whole=True)[1]
    picks = {str(step): part_of(body, step, layer=1, head=1) for step in range(9)}
    cfg = load_checkpoint(TOY, device="cpu").config
    formulas = ["", *(projection_formula(w, 1, cfg.d_model, cfg.d_head) for w in "QKV"), SCORES_FORMULA,
                scaled_formula(cfg.d_head), MASK_FORMULAS[False], SOFTMAX_FORMULA, OUTPUT_FORMULA]
    for step, latex in enumerate(formulas):
        assert picks[str(step)]["texts"]["formula"] == (formula_mathml(latex) if latex else ""), step
        assert picks[str(step)]["texts"]["step-heading"].startswith(f"Step {step + 1} of 9: ")
        assert picks[str(step)]["files"]["picture-0"].startswith(
            "toy-reverse-encoder-L1-X" if step == 0 else "toy-reverse-encoder-L1-H1-")   # X: every head's
    arrays = trace.arrays
    q, k = (arrays[f"encoder.layers.1.self_attn.hook_{n}"][1].astype(np.float64) for n in "qk")
    look = Look(words("en"), NORMAL)
    rows, _ = attention_labels(trace.meta, "encoder")
    made = step_heatmap(q @ k.T, rows, rows, Labels(look.words("step.raw.title", n=len(rows), m=len(rows)),
                                                    look.words("step.axis.key"), look.words("step.axis.query"), "q·k"),
                        look, highlight=2)
    assert picks["4"]["tables"]["row"]["columns"] == [str(label) for label in rows]    # keys across, the query's row
    assert_same_figure(picks["4"]["figures"]["picture-0"], figure_spec(made))       # Q·Kᵀ: the builder's figure
    np.testing.assert_allclose(figure_z(picks["7"]["figures"]["picture-0"]),
                               arrays["encoder.layers.1.self_attn.hook_pattern"][1], atol=1e-6)
    np.testing.assert_allclose(shown_row(picks["5"]), arrays["encoder.layers.1.self_attn.hook_scores"][1, 2],
                               atol=1e-4)
    assert all(len(picks[str(s)]["notes"]["checks"]) == n and all(note["ok"] for note in picks[str(s)]["notes"]["checks"])
               for s, n in enumerate([0, 1, 1, 1, 0, 1, 0, 1, 1]))


@pytest.mark.parametrize("figure, shape", [("picture-0", (6, 6)), ("full-0", (6, 16))])
def test_step_a_pictures_csv_is_its_numbers(trace, figure, shape):
    """A step's CSV (the browser asks, the server makes it, the browser downloads it): every number of the matrix
    the picture shows, the full matrix's too."""
    at = run_page("step_through.py", model="toy-reverse", text=TEXT)
    browser_says(at, trigger=("csv", {"layer": 1, "head": 1, "step": 1, "figure": figure}), where="step")
    no_exceptions(at)
    csv = step_deck(at)[0]["csv"]
    assert csv["name"] == f"toy-reverse-encoder-L1-H1-Q{'-cosine' if figure == 'picture-0' else ''}.csv"
    frame = pd.read_csv(io.StringIO(csv["text"]), index_col=0)
    assert frame.shape == shape
    if figure == "full-0":
        np.testing.assert_allclose(frame.to_numpy(), trace.arrays["encoder.layers.1.self_attn.hook_q"][1], atol=1e-6)
    assert (at.query_params["layer"], at.query_params["head"], at.query_params["step"]) == ("1", "1", "1")  # shown


def test_step_why_scalings_csv_is_the_heads_two_softmaxes(trace):
    """Why scaling matters is the head's (its part of the deck); its CSV: the query's weights without and with
    1/√d_k, the second the model's own."""
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="decoder", query=2)
    browser_says(at, trigger=("csv", {"layer": 1, "head": 1, "step": 4, "figure": "scaling"}), where="step")
    no_exceptions(at)
    csv = step_deck(at)[0]["csv"]
    assert csv["name"] == "toy-reverse-decoder-L1-H1-q2-scaling.csv"
    frame = pd.read_csv(io.StringIO(csv["text"]), index_col=0)
    np.testing.assert_allclose(frame.iloc[1].to_numpy(), trace.arrays["decoder.layers.1.self_attn.hook_pattern"][1, 2],
                               atol=1e-5)


def test_step_bad_parameters_warn_and_fall_back():
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="sideways", step=99, query="x", head=7)
    no_exceptions(at)
    warnings = " ".join(w.value for w in at.warning)
    for name in ("kind", "step", "query", "head"):
        assert f"URL parameter {name}=" in warnings
    assert at.radio(key="step-kind").value == "encoder"
    assert step_deck(at)[0]["pick"] == {"layer": 0, "head": 0, "step": 0}
    assert at.selectbox(key="step-query-encoder").value == 0


def test_step_and_multihead_with_an_empty_sentence():
    for page in ("step_through.py", "multi_head.py"):
        at = run_page(page, model="toy-reverse", text="")
        no_exceptions(at)
        assert "The sentence is empty" in texts(at)
        assert not at.dataframe


# -- multi-head: drawn in the browser (a deck: viz/figures/browser_view.py); what the page sends it -----------
def deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The multi-head view's head (the pick...) and body (every pick's figures, words, tables and checks)."""
    return browser_view_sent(browser_view_whole(at, "mh") if whole else at, "mh")


def part(at, pick: str = "encoder:0") -> dict:
    return deck(at)[1]["picks"][pick]


def table_frame(spec: dict) -> pd.DataFrame:
    return pd.DataFrame(spec["rows"], index=spec["index"], columns=spec["columns"])


def figure_z(figure: dict, index: int = 0) -> np.ndarray:
    z = figure["data"][index]["z"]
    if isinstance(z, dict):
        shape = [int(n) for n in str(z["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape).astype(float)
    return np.array(z, dtype=float)


def blocks_in_view(blocks: list[dict]) -> list[dict]:
    """The blocks a reader sees without opening anything: outside folded sections, in the first tab of a row."""
    found = []
    for block in blocks:
        if block["type"] == "details":
            continue
        if block["type"] == "tabs":
            found += blocks_in_view(block["tabs"][0]["blocks"])
        elif block["type"] == "columns":
            found += [b for column in block["columns"] for b in blocks_in_view(column)]
        else:
            found.append(block)
    return found


def test_multihead_default_view_checks_the_assembly_against_the_model(trace):
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Multi-head assembly"
    head, body = deck(at)
    assert head["pick"] == {"kind": "encoder", "layer": 0} and list(body["picks"]) == ["encoder:0"]   # first screen
    checks = body["picks"]["encoder:0"]["notes"]["check-notes"]
    assert len(checks) == 3 and all(note["ok"] for note in checks)     # W^O, + residual, LayerNorm reproduce the model
    heads = table_frame(body["picks"]["encoder:0"]["tables"]["head-table"])
    pattern = trace.arrays["encoder.layers.0.self_attn.hook_pattern"]
    np.testing.assert_allclose(heads["mean entropy (bits)"].astype(float), entropy_bits(pattern).mean(-1).round(2))
    # each head described by what sets it apart, measured (all alike before: "spread out / depends on the content")
    apart = heads["what sets it apart"].tolist()
    assert len(set(apart)) == len(apart) == 4 and not any("depends on the content" in a for a in apart)
    assert all(re.search(r"\d", a) for a in apart)                         # each with its value
    assert "MultiHead(Q,K,V)" in texts(at).replace(r"\mathrm{MultiHead}", "MultiHead")
    assert "d_k = d_{model}/h = 64/4 = 16" in texts(at)


def test_multihead_sends_every_kind_and_layer_once_then_a_pick_rebuilds_nothing():
    """Issue 44: the view asks for the rest after drawing the first screen; every kind x layer is then in the body,
    and a pick the browser reports (a teacher's) writes the URL with the same body (nothing rebuilt, not resent)."""
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="cross", layer=1)
    head, body = deck(at, whole=True)
    assert head["whole"] and set(body["picks"]) == {f"{k}:{n}" for k in ("encoder", "decoder", "cross") for n in (0, 1)}
    assert body["layers"] == {"encoder": 2, "decoder": 2, "cross": 2} and body["names"] == ["kind", "layer"]
    assert body["url_names"] == {"kind": "kind", "layer": "layer"}
    sent = browser_view(at, "mh-view").proto.bytes
    browser_says(at, state={"pick": {"kind": "decoder", "layer": 0}}, where="mh")
    no_exceptions(at)
    assert at.query_params["kind"] in ("decoder", ["decoder"]) and at.query_params["layer"] in ("0", ["0"])
    assert deck(at)[0]["pick"] == {"kind": "decoder", "layer": 0}
    assert browser_view(at, "mh-view").proto.bytes == sent        # the same message: the browser has it


def test_multihead_a_pictures_csv_is_its_numbers(trace):
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    browser_says(at, trigger=("csv", {"kind": "encoder", "layer": 0, "figure": "heads"}), where="mh")
    no_exceptions(at)
    csv = deck(at)[0]["csv"]
    assert csv["name"] == "toy-reverse-encoder-L0-heads.csv"
    frame = pd.read_csv(io.StringIO(csv["text"]), index_col=[0, 1])
    pattern = trace.arrays["encoder.layers.0.self_attn.hook_pattern"]
    np.testing.assert_allclose(frame.loc["head 2"].to_numpy(), pattern[2], atol=1e-6)


def test_multihead_no_stripe_charts_and_the_full_matrices_a_click_away(trace):
    """Issue 26, item 2: z, the concatenation and × W^O as what each head adds to each token (tokens x
    heads), the 256-column stages in a folded section; the page is short."""
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    _, body = deck(at)
    seen = [block["id"] for block in blocks_in_view(body["blocks"]) if block["type"] == "figure"]
    assert seen == ["heads", "shares"]                           # heads, each head's share (norms: next tab)
    figures = body["picks"]["encoder:0"]["figures"]
    for name in seen:
        for index, trace_ in enumerate(figures[name]["data"]):
            if "z" in trace_:
                assert figure_z(figures[name], index).shape[-1] < 64      # no d_model-wide matrix in view
    z = trace.arrays["encoder.layers.0.self_attn.hook_z"].astype(np.float64)        # [H,T,Dh]
    out = trace.arrays["encoder.layers.0.self_attn.hook_out"].astype(np.float64)
    model = load_checkpoint(TOY, device="cpu").model
    w = model.get_submodule("encoder.layers.0.self_attn").w_o.weight.detach().numpy().astype(np.float64)
    n_heads, n_tok, dh = z.shape
    shares = np.array([[np.linalg.norm(z[h, t] @ w[:, h * dh:(h + 1) * dh].T) for h in range(n_heads)]
                       for t in range(n_tok)])
    np.testing.assert_allclose(figure_z(figures["shares"]), shares, rtol=1e-4, atol=1e-5)
    assert "how much each head adds to each token" in json.dumps(figures["shares"])
    full = [block for block in body["blocks"] if block["type"] == "details" and block["id"] == "full"]
    assert len(full) == 1 and full[0]["title"].startswith("All the numbers, stage by stage")
    np.testing.assert_allclose(figure_z(figures["out"]), out, atol=1e-4)          # every stage drawn inside it


def test_multihead_page_is_its_pictures_with_the_long_text_folded():
    """Issue 26, item 2: the page fits in about three screens at 1280x720 (4.1 before). In view: the heads and
    each head's share of the output, no section headers, captions of a line or two; the per-stage norms are
    the second tab beside the share map; the table's column definitions and the formulas one click away."""
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    _, body = deck(at)
    shown = blocks_in_view(body["blocks"])
    assert not [block for block in shown if block["type"] == "heading"]
    texts_ = body["picks"]["encoder:0"]["texts"]
    assert all(len(texts_[block["id"]]) < 300 for block in shown if block["type"] == "text")
    tabs = next(block for block in body["blocks"] if block["type"] == "tabs")
    assert [tab["title"] for tab in tabs["tabs"]] == ["How much each head adds to each token",
                                                      "How big is each token after each stage?"]
    norms = body["picks"]["encoder:0"]["figures"]["norms"]
    assert [bar["name"] for bar in norms["data"]] == ["x (input stream)", "Concat(heads)", "× Wᴼ", "x + MultiHead",
                                                     "LayerNorm"]
    formulas = [e for e in at.expander if e.label.startswith("How the heads are put together")]
    assert len(formulas) == 1
    folded = " ".join(m.value for m in formulas[0].markdown)
    assert "Entropy: 0 bits" in folded and "Usual offset" in folded and "Favourite key" in folded
    assert not any("Entropy: 0 bits" in texts_[block["id"]] for block in shown if block["type"] == "text")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_multihead_head_table_is_static_so_every_column_shows(lang):
    """Screenshot review (1280x720, normal): as a data frame the heads' table cut its last columns off ('us…'
    in English; '具有该偏移的查询占比' hidden in Chinese) and kept 14 px text in presenter mode. A static table
    (HTML, in the view) wraps its headers and words: every column in view, numbers to two decimals, 'head 0' on
    one line."""
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT, lang=lang)
    no_exceptions(at)
    assert not at.dataframe
    heads = table_frame(part(at)["tables"]["head-table"])
    assert len(heads.columns) == 7                                # the two offset columns included
    assert all(re.fullmatch(r"\d\.\d\d", v) for v in heads.iloc[:, 1])
    assert all(" " not in name for name in heads.index)


def test_multihead_decoder_heads_grey_the_future():
    """Masked cells look masked on every page (DESIGN.md): the decoder's head grid names them in a legend, and
    its future cells carry no number."""
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="decoder")
    no_exceptions(at)
    heads = part(at, "decoder:0")["figures"]["heads"]
    assert "masked (future position)" in [d.get("name") for d in heads["data"]]
    z = figure_z(heads)
    assert np.isnan(z[0, 1:]).all() and not np.isnan(z[-1]).any()


def test_multihead_deep_link_and_bad_parameter():
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="cross", layer=1)
    no_exceptions(at)
    head, body = deck(at)
    assert head["pick"] == {"kind": "cross", "layer": 1}
    cross = body["picks"]["cross:1"]
    assert "usual offset" not in cross["tables"]["head-table"]["columns"]       # no offsets across sequences
    assert all(note["ok"] for note in cross["notes"]["check-notes"]) and len(cross["notes"]["check-notes"]) == 3
    bad = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="decoder", layer=5)
    no_exceptions(bad)
    assert "URL parameter layer='5'" in " ".join(w.value for w in bad.warning)
    assert deck(bad)[0]["pick"] == {"kind": "decoder", "layer": 0}


def test_multihead_picture_first_and_formula_in_short_lines():
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    _, body = deck(at)
    assert body["blocks"][0] == {"type": "figure", "id": "heads", "csv": True}     # the heads side by side first
    assert "the 4 heads' attention weights" in body["picks"]["encoder:0"]["figures"]["heads"]["layout"]["title"]["text"]
    # MultiHead(...) and head_i = ... were one line, cut at "...VW" on a projector: now one line each
    latex = [block.value.strip("$\n") for block in at.latex]
    multihead = [line for line in latex if "MultiHead}(Q,K,V)" in line]
    assert len(multihead) == 1 and "Attention" not in multihead[0]
    assert any(line.startswith(r"\mathrm{head}_i") for line in latex)


def test_step_controls_give_the_buttons_room():
    """◀ Previous was cut to "◀ Pre…" at 1/10 of the row: the buttons are the deck's now, at either end of the step
    row, their words whole and never wrapped (browser_view.css); the pickers' row keeps the layer, head and query
    (the browser test below measures the text itself)."""
    from viz.pages.step_through import CONTROL_COLUMNS
    css = (Path(__file__).resolve().parents[1] / "viz" / "figures" / "browser_view.css").read_text(encoding="utf-8")
    assert ".vz-named-steps .vz-step-button { white-space: nowrap; }" in css
    assert len(CONTROL_COLUMNS) == 2                            # layer + head, the query: no buttons among them


# -- on a projector: 1280x720, sidebar open, in Chromium ---------------------------------------------
LAYOUT_JS = r"""() => {
  const main = document.querySelector('[data-testid=stMain]').getBoundingClientRect();
  const block = document.querySelector('[data-testid=stMainBlockContainer]');
  const right = block.getBoundingClientRect().right - parseFloat(getComputedStyle(block).paddingRight);
  const charts = [...document.querySelectorAll('.js-plotly-plot')].map(e => e.getBoundingClientRect())
    .filter(r => r.width > 50 && r.height > 50);
  const top = charts.length ? Math.min(...charts.map(r => r.top)) - main.top : null;
  const cut_buttons = [...document.querySelectorAll('[data-testid=stMain] button')]   // "◀ Pre…": an ellipsis
    .filter(b => [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1))
    .map(b => b.textContent);
  const wide_formulas = [...document.querySelectorAll('[data-testid=stMain] .katex-display > .katex')]
    .filter(k => k.getBoundingClientRect().right > right + 2 ||
                 k.parentElement.scrollWidth > k.parentElement.clientWidth + 2)
    .map(k => k.textContent.slice(0, 60))
    .concat([...document.querySelectorAll('[data-testid=stMain] .vz-formula')]       // a deck's MathML (step-through)
      .filter(f => f.getBoundingClientRect().right > right + 2 || f.scrollWidth > f.clientWidth + 2)
      .map(f => f.textContent.slice(0, 60)));
  const cut_titles = [];
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const box = plot.getBoundingClientRect();
    for (const t of plot.querySelectorAll('.gtitle, .annotation-text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 2 || r.right > box.right + 2)) cut_titles.push(t.textContent);
    }
  }
  const crowded_labels = [];            // tick labels of one chart drawn over each other (a deck's plots of other
  // picks drawn ahead, out of sight, .vz-offstage, too: the LayerNorm histogram's −6 over its 0 was one)
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const labels = [...plot.querySelectorAll('.xtick text, .ytick text')].map(t => {
      const r = t.getBoundingClientRect();
      const turn = /rotate\((-?[\d.]+)/.exec(t.getAttribute('transform') || '');
      return {text: t.textContent, r, angle: turn ? parseFloat(turn[1]) : 0,
              size: parseFloat(getComputedStyle(t).fontSize) || 12};
    }).filter(l => l.r.width > 0);
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i], b = labels[j];
      let hit;
      if (a.angle === 0 && b.angle === 0) {            // level text: its box is its ink
        const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        hit = w > 1 && h > 1;
      } else if (a.angle === b.angle) {                 // slanted text: two parallel strips ending at the tick
        const th = a.angle * Math.PI / 180, u = [Math.cos(th), Math.sin(th)], n = [-u[1], u[0]];
        const end = l => [l.r.right, l.r.top], len = l => Math.hypot(l.r.width, l.r.height) - l.size;
        const ea = end(a), eb = end(b), d = [eb[0] - ea[0], eb[1] - ea[1]];
        const apart = Math.abs(d[0] * n[0] + d[1] * n[1]);
        const ta = 0, tb = d[0] * u[0] + d[1] * u[1];
        const along = Math.min(ta, tb) - Math.max(ta - len(a), tb - len(b));
        hit = apart < 1.15 * Math.min(a.size, b.size) && along > 0;   // closer than a line of text
      }
      if (hit) crowded_labels.push(a.text + ' / ' + b.text);
    }
  }
  return {top: top === null ? null : Math.round(top), cut_buttons, wide_formulas, cut_titles, crowded_labels};
}"""


MAIN_HEIGHT_JS = "() => document.querySelector('[data-testid=stMain]').scrollHeight"


@pytest.fixture(scope="module")
def projector():
    """A fresh `streamlit run app.py` and Chromium (tests/browser_utils.py)."""
    import shutil
    from browser_utils import CHROMIUM, browser, streamlit_server
    if not shutil.which(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    with streamlit_server() as url, browser() as chromium:
        yield url, chromium


def _measure_at_1280x720(projector, page: str, script: str):
    """`script`'s value on `page` (en-es, the default sentence) at a projector's 1280x720, charts drawn."""
    from browser_utils import wait_for_app
    url, chromium = projector
    tab = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        tab.goto(f"{url}/{page}?model=en-es&text=The+man+went+to+the+house.")
        tab.wait_for_selector(".js-plotly-plot", timeout=240_000)
        wait_for_app(tab)
        tab.wait_for_timeout(1500)                      # plotly's last relayout
        return tab.evaluate(script)
    finally:
        tab.close()


@pytest.mark.browser
@pytest.mark.parametrize("page", ["step", "multihead", "positional", "layernorm"])
def test_projector_first_screen(projector, page):
    """At 1280x720 with the sidebar open: the page's picture starts on the first screen (180 px of it at
    least), no button label is cut ("◀ Pre…"), no formula runs past the page column ("…VW"), no chart
    title runs out of its chart ("…as the model see"), no two upright tick labels of a chart overlap (the
    head grid's crowded key labels)."""
    found = _measure_at_1280x720(projector, page, LAYOUT_JS)
    assert found["top"] is not None and found["top"] <= 720 - 180, found
    assert not found["cut_buttons"], found
    assert not found["wide_formulas"], found
    assert not found["cut_titles"], found
    assert not found["crowded_labels"], found


@pytest.mark.browser
def test_multihead_page_fits_in_three_screens(projector):
    """Issue 26, item 2: at 1280x720 with the sidebar open, the multi-head page with the default sentence
    is at most three screens tall (2,984 px, 4.1 screens, before the norms became a tab and the long
    caption and section headers went; 2,111 px after; 2,149 px once the heads' table was static and
    wrapped)."""
    height = _measure_at_1280x720(projector, "multihead", MAIN_HEIGHT_JS)
    assert height <= 3 * 720, f"{height} px = {height / 720:.2f} screens"


def test_multihead_checks_label_writes_the_language_s_colon():
    """中文 wrote "校验: …" with an ASCII colon, joined in the page; the label is one catalogue message."""
    for lang, start in (("en", "Checks: 3 of 3 stages"), ("zh", "校验：从追踪数据重算的 3 个阶段中有 3 个")):
        at = run_page("multi_head.py", model="toy-reverse", text=TEXT, lang=lang)
        no_exceptions(at)
        label = part(at)["texts"]["checks"]
        assert label.startswith(start), label
        assert ":" not in label if lang == "zh" else True
