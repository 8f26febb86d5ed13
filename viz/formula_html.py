"""The tour's formulas (LaTeX, as the tour page shows them with st.latex) as HTML text, for the offline
lesson (viz/lesson.py), which has no KaTeX: fractions as a/b, sub- and superscripts, square roots with an
overline, Greek letters and operators as Unicode."""
from __future__ import annotations

import html
import re

SYMBOLS = {
    "top": "T", "odot": " ⊙ ", "mid": " | ", "leftarrow": " ← ", "infty": "∞", "dots": "…", "sum": "Σ",
    "nabla": "∇", "theta": "θ", "eta": "η", "mu": "μ", "sigma": "σ", "gamma": "γ", "beta": "β",
    "epsilon": "ε", "alpha": "α", "quad": "\u2003", ";": " ", ",": "\u2009", " ": " ", "!": "",
}
FUNCTIONS = ("sin", "cos", "log", "tanh", "exp", "arg", "max", "min")
SIZERS = ("big", "Big", "bigg", "Bigg", "left", "right")
TEXT_COMMANDS = ("mathrm", "text", "operatorname", "mathit", "mathbf")


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
