"""The offline lesson's formulas as MathML (issue 26, item 7): browsers draw MathML themselves, so the maths
reads as maths with the network off. Every formula the tour ships converts (none falls back to the plain
text), into well-formed MathML whose scripts and fractions have the children they need."""
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from viz.tour.formula_html import UnsupportedLatex, formula_block, formula_html, formula_mathml
from viz.tour.steps import TOUR

NS = "{http://www.w3.org/1998/Math/MathML}"
CHILDREN = {"mfrac": 2, "msub": 2, "msup": 2, "munder": 2, "msubsup": 3, "munderover": 3}


def parse(latex: str) -> ET.Element:
    return ET.fromstring(formula_mathml(latex))


def tags(root: ET.Element) -> list[str]:
    return [e.tag.removeprefix(NS) for e in root.iter()]


@pytest.mark.parametrize("step", TOUR, ids=lambda s: s.key)
def test_every_shipped_formula_is_mathml(step):
    root = parse(step.formula)
    assert root.tag == NS + "math" and root.get("display") == "block"
    for element in root.iter():
        name = element.tag.removeprefix(NS)
        if name in CHILDREN:
            assert len(element) == CHILDREN[name], (name, ET.tostring(element, encoding="unicode"))
    shown = "".join(e.text or "" for e in root.iter())
    assert not re.search(r"[\\{}]", shown) and "frac" not in shown and "mathrm" not in shown, shown
    assert formula_block(step.formula).startswith('<div class="formula"><math')      # no fallback


def test_pieces():
    root = parse(r"\frac{QK^\top}{\sqrt{d_k}}")
    assert tags(root)[:7] == ["math", "mrow", "mfrac", "mrow", "mi", "msup", "mi"]
    assert "msqrt" in tags(root) and "⊤" in formula_mathml(r"K^\top")
    assert "<msubsup><mi>W</mi><mi>i</mi><mi>Q</mi></msubsup>" in formula_mathml("W_i^Q")
    assert "<munder><mo>∑</mo><mi>s</mi></munder>" in formula_mathml(r"-\sum_s a_{ts}")
    assert "<munder><mi>arg max</mi><mrow><mi>y</mi></mrow></munder>" in formula_mathml(r"\arg\max_{y} p")
    assert "<msub><mi>token</mi><mi>i</mi></msub>" in formula_mathml(r"\mathrm{token}_i")
    assert '<mo form="prefix">−</mo><mi>∞</mi>' in formula_mathml(r"M=-\infty")
    assert "<mn>10000</mn>" in formula_mathml(r"10000^{2i/d}")
    assert "<mtext>for</mtext>" in formula_mathml(r"s\ \text{for}\ t")
    assert 'minsize="1.623em"' in formula_mathml(r"\Big(x\Big)")
    assert '<mi>sin</mi><mo rspace="0.1667em">\u2061</mo>' in formula_mathml(r"\sin x")
    assert "<mi>max</mi><mo>\u2061</mo><mo" in formula_mathml(r"\max(0, x)")     # no space before a bracket
    assert "<mi>ℒ</mi>" in formula_mathml(r"\mathcal{L}") and "<mi>𝒬</mi>" in formula_mathml(r"\mathcal{Q}")
    assert '<mover accent="true"><mi>a</mi>' in formula_mathml(r"\tilde a") and "ε" in formula_mathml(r"\varepsilon")
    with pytest.raises(UnsupportedLatex):
        formula_mathml(r"\frac{a}")


# -- the step-through page's formulas (issue 44): drawn in its browser-side deck as MathML, no KaTeX there ---------
def step_formulas() -> list[str]:
    """Every formula the step-through page draws, for both shipped configurations' numbers, the whole head's too."""
    from viz.pages.step_through import (FORMULA, MASK_FORMULAS, OUTPUT_FORMULA, SCORES_FORMULA, SOFTMAX_FORMULA,
                                        projection_formula, scaled_formula)
    made = [FORMULA, SCORES_FORMULA, *MASK_FORMULAS.values(), SOFTMAX_FORMULA, OUTPUT_FORMULA]
    for d, d_head, head in ((64, 16, 3), (256, 32, 7)):                # toy-reverse's and en-es's
        made += [projection_formula(which, head, d, d_head) for which in "QKV"] + [scaled_formula(d_head)]
    return made


@pytest.mark.parametrize("latex", step_formulas())
def test_every_step_through_formula_is_mathml(latex):
    root = parse(latex)
    for element in root.iter():
        name = element.tag.removeprefix(NS)
        if name in CHILDREN:
            assert len(element) == CHILDREN[name], (name, ET.tostring(element, encoding="unicode"))
    shown = "".join(e.text or "" for e in root.iter() if e.text != "{")        # but the cases' brace
    assert not re.search(r"[\\{}&]", shown) and "mathbb" not in shown and "cases" not in shown, shown


def test_the_step_through_pieces():
    projection = formula_mathml(r"Q_{0} = X W^Q_{0},\quad W^Q_{0} \in \mathbb{R}^{64\times16}")
    assert "<mi>ℝ</mi>" in projection and "<mo>×</mo>" in projection and "<mo>∈</mo>" in projection
    assert '<mspace width="1em"/>' in projection and '<mspace width="2em"/>' in formula_mathml(r"a,\qquad b")
    assert "<mi>𝔸</mi>" in formula_mathml(r"\mathbb{A}")
    cases = parse(r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}")
    table = cases.find(f".//{NS}mtable")
    assert table is not None and [len(row) for row in table] == [2, 2]                # two rows of two cells
    brace = cases.find(f".//{NS}mrow/{NS}mo[@stretchy='true']")
    assert brace is not None and brace.text == "{"                                      # the left brace before it
    assert "≤" in ET.tostring(table, encoding="unicode") and "−" in ET.tostring(table, encoding="unicode")
    assert "<mo>∀</mo>" in formula_mathml(r"M_{ij} = 0 \quad \forall j")
    assert "<mi>j</mi><mo>′</mo>" in formula_mathml(r"\sum_{j'} e^{s_{ij'}}")           # a prime, not an apostrophe
    fenced = formula_mathml(r"\mathrm{softmax}\!\left(\frac{a}{b} + M\right) X")
    assert fenced.count('<mo fence="true" stretchy="true">') == 2 and "left" not in fenced


@pytest.mark.parametrize("latex", [r"\begin{cases} a & b", r"\begin{cases}\end{cases}", r"a \\ b",
                                   r"\mathbb{RR}", r"\left\{ a \right\}"])
def test_what_the_step_pieces_do_not_take_is_said(latex):
    with pytest.raises(UnsupportedLatex):
        formula_mathml(latex)


def test_the_browser_keeps_every_element_and_attribute_the_formulas_use():
    """The deck inserts a formula's MathML only as the whitelisted MathML elements and attributes
    (viz/figures/browser_view.js MATH_TAGS, MATH_ATTRIBUTES): every one the converter writes for the page's and the
    tour's formulas is on them, so nothing of a formula is dropped."""
    js = (Path(__file__).resolve().parents[1] / "viz" / "figures" / "browser_view.js").read_text(encoding="utf-8")

    def listed(name: str) -> set[str]:
        found = re.search(name + r" = new Set\(\[([^\]]*)\]\)", js)
        assert found, name
        return set(re.findall(r'"([a-z]+)"', found.group(1)))
    tags, attributes = listed("MATH_TAGS"), listed("MATH_ATTRIBUTES")
    for latex in step_formulas() + [step.formula for step in TOUR]:
        for element in parse(latex).iter():
            assert element.tag.removeprefix(NS) in tags, (latex, element.tag)
            assert set(element.attrib) <= attributes, (latex, element.attrib)


def test_user_text_in_a_formula_is_escaped():
    out = formula_mathml(r"a<b \text{<script>}")
    assert "<script>" not in out and "&lt;script&gt;" in out


@pytest.mark.parametrize("latex", [r"\begin{matrix}a\end{matrix}", r"\sqrt[3]{x}", "a}", "^x",
                                   r"\mathrm{\alpha}", "a & b"])
def test_what_it_cannot_convert_falls_back_to_text(latex):
    with pytest.raises(UnsupportedLatex):
        formula_mathml(latex)
    assert formula_block(latex) == f'<p class="formula">{formula_html(latex)}</p>'


def test_the_lesson_shows_every_formula_as_mathml():
    from test_lesson import trace_of
    from viz.tour.lesson import lesson_html
    page = lesson_html(trace_of("toy-reverse", "c a f e"), None)
    assert page.count('<div class="formula"><math') == len(TOUR) and '<p class="formula">' not in page


# -- drawn: no words run together (a_{ts}\log a_{ts} drew as "a_tsloga_ts") ------------------------------------
GAPS_JS = """() => [...document.querySelectorAll('math')].map(m => {
  const names = [...m.querySelectorAll('mi')].filter(e => e.textContent === 'log');
  return names.map(name => {
    const box = e => e.getBoundingClientRect();
    const after = name.nextElementSibling.nextElementSibling;     // past the invisible function mark
    let before = name.previousElementSibling;
    while (before.tagName.toLowerCase() === 'mspace') before = before.previousElementSibling;
    return [box(name).left - box(before).right, box(after).left - box(name).right, name.getBoundingClientRect().height];
  });
}).flat()"""


@pytest.mark.browser
def test_function_names_stand_apart_in_chromium(chromium):
    """The heads and regularize steps' formulas in Chromium (MathML Core, the browser's own maths): "log" keeps
    at least a thin space (1/6 em, ~3.9 px at the lesson's 1.45 x 16 px) from the symbol before and after it;
    with no space the boxes touched (0 px)."""
    formulas = [step.formula for step in TOUR if step.key in ("heads", "regularize")]
    body = "".join(formula_mathml(f) for f in formulas)
    page = chromium.new_page()
    page.set_content(f'<html><body style="font-size:23px">{body}</body></html>')
    gaps = page.evaluate(GAPS_JS)
    page.close()
    assert len(gaps) == 2                           # a_{ts} log a_{ts}; q_v log p_v
    for before, after, _height in gaps:
        assert before >= 3 and after >= 3, gaps
