"""Step-through and Multi-head assembly pages through AppTest, on the toy-reverse model."""
import re
from pathlib import Path

import numpy as np
import pytest

from apptest_utils import no_exceptions, run_page, texts
from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence
from model.analysis.attention_math import entropy_bits

TOY = Path(__file__).resolve().parents[1] / "pretrained" / "toy-reverse"
TEXT = "a b c d e"


@pytest.fixture(scope="module")
def trace():
    return trace_sentence(load_checkpoint(TOY, device="cpu"), TEXT)     # what the app traces for this input


def shown_row(at):
    """The step's "row as numbers" table (the first dataframe on the step page)."""
    return at.dataframe[0].value.to_numpy(dtype=float)[0]


def successes(at):
    return [s.value for s in at.success]


# -- step-through --------------------------------------------------------------------------------------
def test_step_default_view_shows_the_real_layer_input(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Step-through: one head"
    assert at.radio(key="step-kind").value == "encoder" and at.radio(key="step-step").value == 0
    assert at.selectbox(key="step-query-encoder").value == 0 and at.selectbox(key="step-encoder-head").value == 0
    # step 1 shows X = the embeddings for layer 0, row of the first token
    np.testing.assert_allclose(shown_row(at), trace.arrays["src_embed.hook_out"][0], atol=1e-4)
    assert "Why divide by" in texts(at)


def test_step_deep_link_reproduces_the_view_with_real_numbers(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="decoder", layer=1, head=2, query=3, step=6)
    no_exceptions(at)
    assert at.radio(key="step-kind").value == "decoder"
    assert at.selectbox(key="step-decoder-layer").value == 1 and at.selectbox(key="step-decoder-head").value == 2
    assert at.selectbox(key="step-query-decoder").value == 3 and at.radio(key="step-step").value == 6
    assert {k: at.query_params[k] for k in ("kind", "layer", "head", "query", "step")} == \
        {"kind": "decoder", "layer": "1", "head": "2", "query": "3", "step": "6"}
    row = shown_row(at)                                          # step 7: scores + mask, query row 3
    scores = trace.arrays["decoder.layers.1.self_attn.hook_scores"][2, 3]
    np.testing.assert_allclose(row[:4], scores[:4], atol=1e-4)
    assert np.all(np.isneginf(row[4:]))                          # the future is masked
    assert "hides 2 future position(s)" in texts(at)
    # the scaling comparison reports the entropy of the real scaled weights for this query
    pattern_row = trace.arrays["decoder.layers.1.self_attn.hook_pattern"][2, 3]
    summary = at.dataframe[1].value
    assert summary.iloc[1]["entropy (bits)"] == pytest.approx(entropy_bits(pattern_row), abs=1e-3)


def test_step_next_and_previous_buttons_walk_through_the_steps(trace):
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="cross", query=2, step=7)
    no_exceptions(at)
    at.button(key="step-next").click().run()
    no_exceptions(at)
    assert at.radio(key="step-step").value == 8 and at.query_params["step"] == "8"
    assert at.button(key="step-next").disabled
    # the last step: the head output, checked against pattern @ V with the error shown
    z = trace.arrays["decoder.layers.0.cross_attn.hook_z"][0, 2]
    np.testing.assert_allclose(shown_row(at), z, atol=1e-4)
    assert any("weights · $V$" in s and "max |difference|" in s for s in successes(at))
    at.button(key="step-prev").click().run()
    at.button(key="step-prev").click().run()
    assert at.radio(key="step-step").value == 6
    no_exceptions(at)


def test_step_bad_parameters_warn_and_fall_back():
    at = run_page("step_through.py", model="toy-reverse", text=TEXT, kind="sideways", step=99, query="x", head=7)
    no_exceptions(at)
    warnings = " ".join(w.value for w in at.warning)
    for name in ("kind", "step", "query", "head"):
        assert f"URL parameter {name}=" in warnings
    assert at.radio(key="step-kind").value == "encoder" and at.radio(key="step-step").value == 0
    assert at.selectbox(key="step-query-encoder").value == 0


def test_step_and_multihead_with_an_empty_sentence():
    for page in ("step_through.py", "multi_head.py"):
        at = run_page(page, model="toy-reverse", text="")
        no_exceptions(at)
        assert "The sentence is empty" in texts(at)
        assert not at.dataframe


# -- multi-head ----------------------------------------------------------------------------------------
def test_multihead_default_view_checks_the_assembly_against_the_model(trace):
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.title[0].value == "Multi-head assembly"
    assert at.radio(key="mh-kind").value == "encoder" and at.selectbox(key="mh-layer-encoder").value == 0
    assert len(successes(at)) == 3 and not at.error           # W^O, + residual, LayerNorm reproduce the model
    heads = at.dataframe[0].value
    pattern = trace.arrays["encoder.layers.0.self_attn.hook_pattern"]
    np.testing.assert_allclose(heads["mean entropy (bits)"], entropy_bits(pattern).mean(-1).round(2))
    # each head described by what sets it apart, measured (all alike before: "spread out / depends on the content")
    apart = heads["what sets it apart"].tolist()
    assert len(set(apart)) == len(apart) == 4 and not any("depends on the content" in a for a in apart)
    assert all(re.search(r"\d", a) for a in apart)                         # each with its value
    assert "MultiHead(Q,K,V)" in texts(at).replace(r"\mathrm{MultiHead}", "MultiHead")
    assert "d_k = d_{model}/h = 64/4 = 16" in texts(at)


def test_multihead_deep_link_and_bad_parameter():
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="cross", layer=1)
    no_exceptions(at)
    assert at.radio(key="mh-kind").value == "cross" and at.selectbox(key="mh-layer-cross").value == 1
    assert "usual offset" not in at.dataframe[0].value.columns   # no offsets across sequences
    assert len(successes(at)) == 3
    bad = run_page("multi_head.py", model="toy-reverse", text=TEXT, kind="decoder", layer=5)
    no_exceptions(bad)
    assert "URL parameter layer='5'" in " ".join(w.value for w in bad.warning)
    assert bad.selectbox(key="mh-layer-decoder").value == 0


def test_multihead_picture_first_and_formula_in_short_lines():
    at = run_page("multi_head.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    first = at.get("plotly_chart")[0].proto.spec
    assert "the 4 heads' attention weights" in first                # the heads side by side come first
    # MultiHead(...) and head_i = ... were one line, cut at "...VW" on a projector: now one line each
    latex = [l.value.strip("$\n") for l in at.latex]
    multihead = [l for l in latex if "MultiHead}(Q,K,V)" in l]
    assert len(multihead) == 1 and "Attention" not in multihead[0]
    assert any(l.startswith(r"\mathrm{head}_i") for l in latex)


def test_step_controls_give_the_buttons_room():
    """◀ Previous was cut to "◀ Pre…" at 1/10 of the row: each button now has a fifth of the row or more,
    beside the pickers (the browser test below measures the text itself)."""
    from viz.pages.step_through import CONTROL_COLUMNS
    share = [w / sum(CONTROL_COLUMNS) for w in CONTROL_COLUMNS]
    assert min(share[-2:]) >= 0.15


# -- on a projector: 1280x720, sidebar open, in Chromium ---------------------------------------------
LAYOUT_JS = """() => {
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
    .map(k => k.textContent.slice(0, 60));
  const cut_titles = [];
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const box = plot.getBoundingClientRect();
    for (const t of plot.querySelectorAll('.gtitle, .annotation-text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 2 || r.right > box.right + 2)) cut_titles.push(t.textContent);
    }
  }
  const crowded_labels = [];            // tick labels of one chart drawn over each other
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


@pytest.fixture(scope="module")
def projector():
    """A fresh `streamlit run app.py` and Chromium (tests/browser_utils.py)."""
    import shutil
    from browser_utils import CHROMIUM, browser, streamlit_server
    if not shutil.which(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    with streamlit_server() as url, browser() as chromium:
        yield url, chromium


@pytest.mark.browser
@pytest.mark.parametrize("page", ["step", "multihead", "positional", "layernorm"])
def test_projector_first_screen(projector, page):
    """At 1280x720 with the sidebar open: the page's picture starts on the first screen (180 px of it at
    least), no button label is cut ("◀ Pre…"), no formula runs past the page column ("…VW"), no chart
    title runs out of its chart ("…as the model see"), no two upright tick labels of a chart overlap (the
    head grid's crowded key labels)."""
    from browser_utils import wait_for_app
    url, chromium = projector
    tab = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        tab.goto(f"{url}/{page}?model=en-es&text=The+man+went+to+the+house.")
        tab.wait_for_selector(".js-plotly-plot", timeout=240_000)
        wait_for_app(tab)
        tab.wait_for_timeout(1500)                      # plotly's last relayout
        found = tab.evaluate(LAYOUT_JS)
    finally:
        tab.close()
    assert found["top"] is not None and found["top"] <= 720 - 180, found
    assert not found["cut_buttons"], found
    assert not found["wide_formulas"], found
    assert not found["cut_titles"], found
    assert not found["crowded_labels"], found
