r"""The tour's formulas (LaTeX, as the tour page shows them with st.latex) for the offline lesson
(viz/tour/lesson.py), which has no KaTeX and no network: as MathML (formula_mathml), which browsers draw
natively, for the subset of LaTeX the tour uses; and as HTML text (formula_html: fractions as a/b, sub- and
superscripts, square roots with an overline, Greek letters and operators as Unicode), the fallback for a
construct the MathML writer does not know (formula_block picks). The step-through page's deck draws its steps'
formulas with formula_mathml too (\mathbb, a cases environment, \forall, primes, \left/\right: its subset;
viz/figures/browser_view.js keeps only MathML elements and attributes of it). Its commands' characters:
viz/core/tex.py (a deck's inline maths uses them too)."""
from __future__ import annotations

import html
import re

from viz.core.tex import FUNCTIONS, GREEK, MATH_IDENTIFIERS, MATH_OPERATORS, SYMBOLS, TEXT_COMMANDS

SIZERS = ("big", "Big", "bigg", "Bigg", "left", "right")


def formula_html(latex: str) -> str:
    """The subset of LaTeX the tour uses as readable HTML text: fractions as a/b, sub- and superscripts
    as <sub>/<sup>, square roots with an overline, Greek letters and operators as Unicode."""
    html_text, _ = _group(latex, 0, closing=None)
    return html_text.strip()


def _group(src: str, i: int, closing: str | None) -> tuple[str, int]:
    out = []
    while i < len(src):
        ch = src[i]
        if ch == closing:
            return "".join(out), i + 1
        piece, i = _atom(src, i)
        out.append(piece)
    return "".join(out), i


def _argument(src: str, i: int) -> tuple[str, int]:
    """One argument: {a group}, a command, or a single character."""
    while i < len(src) and src[i] == " ":
        i += 1
    if i < len(src) and src[i] == "{":
        return _group(src, i + 1, closing="}")
    return _atom(src, i)


def _atom(src: str, i: int) -> tuple[str, int]:
    ch = src[i]
    if ch == "\\":
        return _command(src, i + 1)
    if ch == "{":
        return _group(src, i + 1, closing="}")
    if ch in "_^":
        arg, i = _argument(src, i + 1)
        tag = "sub" if ch == "_" else "sup"
        return f"<{tag}>{arg}</{tag}>", i
    if ch == " ":
        return "", i + 1
    return html.escape("−" if ch == "-" else ch), i + 1


def _command(src: str, i: int) -> tuple[str, int]:
    match = re.match(r"[A-Za-z]+", src[i:])
    name = match.group(0) if match else src[i]
    i += len(name)
    if name in TEXT_COMMANDS:
        return _text_argument(src, i)
    if name == "frac":
        top, i = _argument(src, i)
        bottom, i = _argument(src, i)
        return f"{_parenthesized(top)}/{_parenthesized(bottom)}", i
    if name == "sqrt":
        arg, i = _argument(src, i)
        return f'√<span class="radicand">{arg}</span>', i
    if name in SIZERS:
        return "", i
    if name in FUNCTIONS:
        return name + "\u2009", i
    return SYMBOLS.get(name, html.escape(name)), i


def _text_argument(src: str, i: int) -> tuple[str, int]:
    """\\text{...} keeps its spaces."""
    if i < len(src) and src[i] == "{":
        end = src.index("}", i)
        return html.escape(src[i + 1:end]), end + 1
    return _argument(src, i)


def _parenthesized(part: str) -> str:
    plain = re.sub(r"<[^>]+>", "", part)
    return f"({part})" if re.search(r"[+−,\s]", plain) else part


# -- MathML ---------------------------------------------------------------------------------------------
class UnsupportedLatex(ValueError):
    """A construct formula_mathml does not convert (formula_block then falls back to formula_html)."""


SPACES = {"quad": "1em", "qquad": "2em", ";": "0.2778em", ":": "0.2222em", ",": "0.1667em", " ": "0.25em"}
ACCENTS = {"tilde": "˜", "hat": "^", "bar": "¯", "vec": "→"}
SCRIPT_EXCEPTIONS = {"B": "ℬ", "E": "ℰ", "F": "ℱ", "H": "ℋ", "I": "ℐ", "L": "ℒ", "M": "ℳ", "R": "ℛ"}
DOUBLE_STRUCK_EXCEPTIONS = {"C": "ℂ", "H": "ℍ", "N": "ℕ", "P": "ℙ", "Q": "ℚ", "R": "ℝ", "Z": "ℤ"}
ENVIRONMENTS = ("cases",)        # \begin{cases} a & b \\ c & d \end{cases}: rows of cells after a left brace
SIZES = {"big": "1.2em", "Big": "1.623em", "bigg": "2.047em", "Bigg": "2.470em"}
LIMIT_BASES = ("∑", "∏", "max", "min", "arg max", "arg min")    # their subscript goes under them
OPERATOR_CHARS = set("=+-*/()[]|,<>!:;.")
MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# After a function name (\log a): the invisible "function application" mark. MathML Core gives it no space, so
# "log a" drew as "loga"; TeX puts a thin space between an operator name and what follows it unless that is an
# opening bracket (\max(0, x)), and so does the mark here. Before the name, a thin space too after an ordinary
# symbol (a_{ts}\log a_{ts}: "a_tslog"), as TeX puts between an ordinary symbol and an operator name.
APPLY = "<mo>\u2061</mo>"
APPLY_SPACED = '<mo rspace="0.1667em">\u2061</mo>'
THIN_SPACE = '<mspace width="0.1667em"/>'
OPENING = re.compile(r"\s*(\\(big|Big|bigg|Bigg|left)\s*)?[(\[|]")


def formula_mathml(latex: str) -> str:
    """The formula as a block of MathML (<math display="block">; no LaTeX left in it), for the subset of
    LaTeX the tour uses; UnsupportedLatex for anything else."""
    nodes, i = _m_group(latex, 0, closing=None)
    return f'<math xmlns="{MATHML_NS}" display="block"><mrow>{"".join(nodes)}</mrow></math>'


def formula_block(latex: str) -> str:
    """The lesson's formula: MathML where formula_mathml converts it, else the HTML text of formula_html."""
    try:
        return f'<div class="formula">{formula_mathml(latex)}</div>'
    except UnsupportedLatex:
        return f'<p class="formula">{formula_html(latex)}</p>'


def _m_group(src: str, i: int, closing: str | None) -> tuple[list[str], int]:
    """Nodes up to `closing` (a "}" or the end); a _ or ^ attaches to the node before it."""
    nodes: list[str] = []
    while i < len(src):
        ch = src[i]
        if ch == closing:
            return nodes, i + 1
        if ch == "}":
            raise UnsupportedLatex(f"unbalanced }} at {i}")
        if ch in "_^":
            if not nodes:
                raise UnsupportedLatex(f"{ch} without a base at {i}")
            nodes[-1], i = _m_scripts(src, i, nodes[-1])
            continue
        node, i = _m_atom(src, i)
        if node == "<mo>−</mo>" and (not nodes or nodes[-1].startswith("<mo")):
            node = '<mo form="prefix">−</mo>'          # a sign (=-\infty), not a subtraction
        if nodes and _is_function(node) and not re.match(r"<(mo|mspace|munder><mo|munderover><mo)\b", nodes[-1]):
            nodes.append(THIN_SPACE)
        if node:
            nodes.append(node)
    if closing is not None:
        raise UnsupportedLatex("missing }")
    return nodes, i


def _is_function(node: str) -> bool:
    return node.endswith((APPLY, APPLY_SPACED))


def _m_scripts(src: str, i: int, base: str) -> tuple[str, int]:
    """base_{sub}^{sup} in either order."""
    scripts = {}
    while i < len(src) and src[i] in "_^" and src[i] not in scripts:
        ch = src[i]
        scripts[ch], i = _m_argument(src, i + 1)
    sub, sup = scripts.get("_"), scripts.get("^")
    tail = ""                                 # \max_y: the script goes on the name, before the applying mark
    for apply in (APPLY, APPLY_SPACED):
        if base.endswith(apply):
            base, tail = base[:-len(apply)], apply
    under = re.sub(r"<[^>]+>", "", base).strip() in LIMIT_BASES
    if sub is not None and sup is not None:
        tag = "munderover" if under else "msubsup"
        return f"<{tag}>{base}{sub}{sup}</{tag}>{tail}", i
    if sub is not None:
        tag = "munder" if under else "msub"
        return f"<{tag}>{base}{sub}</{tag}>{tail}", i
    return f"<msup>{base}{sup}</msup>{tail}", i


def _m_argument(src: str, i: int) -> tuple[str, int]:
    """One argument as one node: {a group} (an <mrow>), a command, or a single character."""
    while i < len(src) and src[i] == " ":
        i += 1
    if i >= len(src):
        raise UnsupportedLatex("missing argument")
    if src[i] == "{":
        nodes, i = _m_group(src, i + 1, closing="}")
        return f"<mrow>{''.join(nodes)}</mrow>", i
    if src[i] == "\\":
        node, i = _m_command(src, i + 1)
        if not node:
            raise UnsupportedLatex("empty argument")
        return node, i
    if src[i].isdigit():                      # x^2: one digit, as TeX reads it
        return f"<mn>{src[i]}</mn>", i + 1
    return _m_atom(src, i)


def _m_atom(src: str, i: int) -> tuple[str, int]:
    ch = src[i]
    if ch == "\\":
        return _m_command(src, i + 1)
    if ch == "{":
        nodes, i = _m_group(src, i + 1, closing="}")
        return f"<mrow>{''.join(nodes)}</mrow>", i
    if ch.isspace():
        return "", i + 1
    if ch.isdigit():
        number = re.match(r"[0-9]+(\.[0-9]+)?", src[i:]).group(0)
        return f"<mn>{number}</mn>", i + len(number)
    if ch.isalpha():
        return f"<mi>{html.escape(ch)}</mi>", i + 1
    if ch == "'":                              # j': a prime (TeX's j^{\prime}), not an apostrophe
        return "<mo>′</mo>", i + 1
    if ch in "()[]|":                          # as TeX: as tall as the text, unless \big/\Big says otherwise
        return f'<mo stretchy="false">{html.escape(ch)}</mo>', i + 1
    if ch in OPERATOR_CHARS:
        shown = {"-": "−", "*": "∗"}.get(ch, ch)
        return f"<mo>{html.escape(shown)}</mo>", i + 1
    raise UnsupportedLatex(f"character {ch!r}")


def _m_command(src: str, i: int) -> tuple[str, int]:
    match = re.match(r"[A-Za-z]+", src[i:])
    name = match.group(0) if match else src[i:i + 1]
    i += len(name)
    if name in TEXT_COMMANDS:
        return _m_text(src, i, name)
    if name == "frac":
        top, i = _m_argument(src, i)
        bottom, i = _m_argument(src, i)
        return f"<mfrac>{top}{bottom}</mfrac>", i
    if name == "sqrt":
        if i < len(src) and src[i] == "[":
            raise UnsupportedLatex(r"\sqrt[n]")
        arg, i = _m_argument(src, i)
        return f"<msqrt>{arg}</msqrt>", i
    if name in ACCENTS:                        # \tilde a
        arg, i = _m_argument(src, i)
        return f'<mover accent="true">{arg}<mo stretchy="false">{ACCENTS[name]}</mo></mover>', i
    if name == "mathcal":                      # \mathcal{L}: the script capital (MathML Core has no mathvariant for it)
        arg = re.match(r"\{([A-Z])\}", src[i:])
        if not arg:
            raise UnsupportedLatex(r"\mathcal of more than one capital")
        letter = arg.group(1)
        return f"<mi>{SCRIPT_EXCEPTIONS.get(letter, chr(0x1D49C + ord(letter) - ord('A')))}</mi>", i + 3
    if name == "mathbb":                       # \mathbb{R}: the double-struck capital (as \mathcal, by its character)
        arg = re.match(r"\{([A-Z])\}", src[i:])
        if not arg:
            raise UnsupportedLatex(r"\mathbb of more than one capital")
        letter = arg.group(1)
        return f"<mi>{DOUBLE_STRUCK_EXCEPTIONS.get(letter, chr(0x1D538 + ord(letter) - ord('A')))}</mi>", i + 3
    if name == "begin":
        return _m_environment(src, i)
    if name in ("left", "right"):              # \left( ... \right): brackets as tall as what they hold
        while i < len(src) and src[i] == " ":
            i += 1
        if src[i:i + 1] == ".":                # \left. : no bracket
            return "", i + 1
        if i < len(src) and src[i] in "()[]|":
            return f'<mo fence="true" stretchy="true">{html.escape(src[i])}</mo>', i + 1
        raise UnsupportedLatex(f"\\{name} before {src[i:i + 1]!r}")
    if name in SIZES:                          # \Big( : the next delimiter, that tall
        while i < len(src) and src[i] == " ":
            i += 1
        if i < len(src) and src[i] in "()[]|":
            return (f'<mo fence="true" stretchy="true" minsize="{SIZES[name]}" maxsize="{SIZES[name]}">'
                    f"{html.escape(src[i])}</mo>"), i + 1
        raise UnsupportedLatex(f"\\{name} before {src[i:i + 1]!r}")
    if name in FUNCTIONS:
        if name == "arg" and src[i:i + 4] == r"\max":
            return "<mi>arg max</mi>", i + 4
        return f"<mi>{name}</mi>{APPLY if OPENING.match(src, i) else APPLY_SPACED}", i
    if name in GREEK:
        return f"<mi>{GREEK[name]}</mi>", i
    if name == "mid":
        return '<mo stretchy="false" lspace="0.2778em" rspace="0.2778em">∣</mo>', i
    if name in MATH_OPERATORS:
        return f"<mo>{MATH_OPERATORS[name]}</mo>", i
    if name in MATH_IDENTIFIERS:
        return f"<mi>{MATH_IDENTIFIERS[name]}</mi>", i
    if name in SPACES:
        return f'<mspace width="{SPACES[name]}"/>', i
    if name == "!":                            # a thin negative space: none
        return "", i
    raise UnsupportedLatex(f"\\{name}")


def _m_text(src: str, i: int, command: str) -> tuple[str, int]:
    """\\mathrm{softmax} -> an upright identifier; \\text{for} -> text (its spaces kept)."""
    if i >= len(src) or src[i] != "{":
        node, i = _m_argument(src, i)
        return node, i
    end = src.find("}", i)
    inner = src[i + 1:end]
    if end < 0 or "\\" in inner or "{" in inner:
        raise UnsupportedLatex(f"\\{command} with markup inside")
    if command == "text":
        return f"<mtext>{html.escape(inner)}</mtext>", end + 1
    variant = {"mathbf": ' mathvariant="bold"', "mathit": ""}.get(command, ' mathvariant="normal"' if len(inner) == 1 else "")
    return f"<mi{variant}>{html.escape(inner)}</mi>", end + 1


def _m_environment(src: str, i: int) -> tuple[str, int]:
    r"""\begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}: a left brace before a table of rows (split at
    \\) of cells (split at &), each cell left-aligned, as TeX sets cases. No other environment."""
    name = re.match(r"\{([a-z]+)\}", src[i:])
    if not name or name.group(1) not in ENVIRONMENTS:
        raise UnsupportedLatex(f"\\begin{src[i:i + 12]}")
    start = i + len(name.group(0))
    end_tag = r"\end{" + name.group(1) + "}"
    end = src.find(end_tag, start)
    if end < 0:
        raise UnsupportedLatex(f"\\begin{{{name.group(1)}}} without its end")
    rows = []
    for row in _top_level_split(src[start:end], r"\\"):
        if not row.strip():
            continue
        cells = []
        for cell in _top_level_split(row, "&"):
            nodes, _ = _m_group(cell, 0, closing=None)
            cells.append(f'<mtd columnalign="left"><mrow>{"".join(nodes)}</mrow></mtd>')
        rows.append(f"<mtr>{''.join(cells)}</mtr>")
    if not rows:
        raise UnsupportedLatex(f"an empty {name.group(1)}")
    return (f'<mrow><mo fence="true" stretchy="true" form="prefix">{{</mo>'
            f'<mtable columnalign="left">{"".join(rows)}</mtable></mrow>'), end + len(end_tag)


def _top_level_split(src: str, separator: str) -> list[str]:
    """`src` split at `separator` (\\\\ or &) outside braces; a command's backslash takes its next character along
    (\\& is no cell)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(src):
        if depth == 0 and src.startswith(separator, i):
            parts.append(src[start:i])
            i = start = i + len(separator)
            continue
        if src[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(src[i], 0)
        i += 1
    parts.append(src[start:])
    return parts
