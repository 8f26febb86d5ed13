r"""LaTeX's commands as the characters they draw: the tables the tour's formulas use (viz/tour/formula_html: as
MathML, or as the lesson's HTML text), and a catalogue's inline maths as text (inline_text: `$\sqrt{d_k}$` as
`$√d_k$`), which a deck's words are sent as (viz/figures/browser_view.deck): the browser sets them as text, its
sub- and superscripts as elements, and knows no LaTeX. Pure: no Streamlit."""
from __future__ import annotations

import re

# the lesson's HTML text (formula_html): a transposed W^T reads as a letter there, sums as a capital sigma
SYMBOLS = {
    "top": "T", "odot": " ⊙ ", "mid": " | ", "leftarrow": " ← ", "infty": "∞", "dots": "…", "sum": "Σ",
    "nabla": "∇", "theta": "θ", "eta": "η", "mu": "μ", "sigma": "σ", "gamma": "γ", "beta": "β",
    "epsilon": "ε", "alpha": "α", "quad": "\u2003", ";": " ", ",": "\u2009", " ": " ", "!": "",
}
FUNCTIONS = ("sin", "cos", "log", "tanh", "exp", "arg", "max", "min")
TEXT_COMMANDS = ("mathrm", "text", "operatorname", "mathit", "mathbf")
# the characters KaTeX and MathML draw (formula_mathml; inline_text)
GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "eta": "η",
         "theta": "θ",
         "lambda": "λ", "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω",
         "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω"}
MATH_OPERATORS = {"top": "⊤", "odot": "⊙", "mid": "∣", "leftarrow": "←", "rightarrow": "→", "to": "→",
                  "times": "×", "cdot": "⋅", "le": "≤", "ge": "≥", "leq": "≤", "geq": "≥", "neq": "≠",
                  "approx": "≈", "in": "∈", "propto": "∝", "sum": "∑", "prod": "∏", "forall": "∀",
                  "exists": "∃", "div": "÷", "pm": "±", "lVert": "‖", "rVert": "‖"}
MATH_IDENTIFIERS = {"infty": "∞", "nabla": "∇", "partial": "∂", "dots": "…", "ldots": "…", "cdots": "⋯", "ell": "ℓ"}

# a command as its character in running text: the drawn one, else the lesson's (its spaces as characters)
CHARACTERS = {**SYMBOLS, **GREEK, **MATH_IDENTIFIERS, **MATH_OPERATORS, **{name: name for name in FUNCTIONS}}
ACCENTS = {"hat": "\u0302", "tilde": "\u0303", "bar": "\u0304", "vec": "\u20d7"}     # combining, after the letter
INLINE = re.compile(r"\$[^$]+\$")
# a command and its argument: {a group, one level of groups inside} or a letter (\hat A)
WITH_ARGUMENT = re.compile(r"\\(sqrt|hat|tilde|bar|vec|" + "|".join(TEXT_COMMANDS)
                           + r")\s*(?:\{((?:[^{}]|\{[^{}]*\})*)\}|([A-Za-z0-9]))")
COMMAND = re.compile(r"\\([A-Za-z]+|[,;:! ])")


def _characters(math: str) -> str:
    """A command as its character (one the tables lack as its name: `\\foo` as foo), a minus as −."""
    return COMMAND.sub(lambda m: CHARACTERS.get(m.group(1), m.group(1)), math).replace("-", "−")


def _argument(match: re.Match) -> str:
    command, argument = match.group(1), _characters(match.group(2) if match.group(3) is None else match.group(3))
    if command == "sqrt":
        return "√" + argument
    if command in ACCENTS:
        return argument + ACCENTS[command]
    return argument


def inline_math(math: str) -> str:
    """One inline formula's LaTeX (what is between the dollars) as the characters it draws: \\sqrt{d_k} as √d_k,
    \\mathrm{softmax} as softmax, \\top as ⊤, a minus as −; its sub- and superscripts (_k, ^{O}) kept as written."""
    return _characters(WITH_ARGUMENT.sub(_argument, math))


def inline_text(text: str) -> str:
    """A catalogue's text with every inline `$…$` as characters (inline_math), the dollars kept (they mark the
    maths, drawn upright or italic with its sub- and superscripts); the rest untouched."""
    return INLINE.sub(lambda m: "$" + inline_math(m.group(0)[1:-1]) + "$", text) if "$" in text else text
