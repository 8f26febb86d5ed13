"""One sentence's guided tour as a single HTML file: it opens from a USB stick with the network off.

The tour's steps (viz/tour_steps.py) in order, each with its explanation, its formula as text and an
interactive figure drawn by the same builders the pages use, from a real trace of the real model
(model.inference.pipeline.trace_sentence; this module only reads the Trace, as the figures do).
plotly.js is inlined once (about 4.7 MB), no other file or CDN is referenced, and every piece of user
text is escaped, so a sentence containing <script> shows as text and runs nothing. No Streamlit here.

In English (the default) or 中文: the words come from viz/locales/<lang>.json (the tour page's messages) and
the figures' English texts are put in the language by localize_figure, which the tour page uses too. Token
labels, the sentence and the model's translation are never translated; formulas stay as they are.
"""
from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from model.analysis import heads as head_stats
from model.analysis import zoo
from model.analysis.attention_math import dim_labels
from model.capture import schema
from model.capture.trace import Trace
from viz.figures import attention_figure, heads_figure, token_labels
from viz.figures.attention import KIND_TITLES
from viz.figures.decoding import confidence_bars
from viz.figures.heads import layer_head_heatmap
from viz.figures.layernorm import layer_norm_stats, token_stats_figure
from viz.figures.positional import pe_heatmap
from viz.figures.step import level_ticks
from viz.figures.style import plotly_text, signed_heatmap
from viz.figures.training import clean_train_log, loss_curve
from viz.figures.zoo import gallery
from viz.i18n import DEFAULT_LANG, LANGS, message
from viz.text import position_labels
from viz.tour_steps import TOUR, TourStep

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}
# About how wide a tour figure's plot area is drawn on a projector (1280x720, sidebar open; the lesson's page
# is wider): dimension labels are thinned for it, d0 d32 d64 … for d_model 256, level (step.level_ticks).
DIMENSION_AXIS_PX = 480


# -- formulas: the tour's LaTeX as HTML text (no KaTeX offline) ------------------------------------------
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


# -- one figure per tour step, from the trace ----------------------------------------------------------
def embeddings_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    x = trace[schema.embed_name("encoder", "tokens")]                     # [S, D]
    dims = dim_labels(x.shape[1])
    fig = signed_heatmap(x, position_labels(trace.meta["src_tokens"]), dims,
                         title="Each source token's embedding vector (× √d_model)", x_title="dimension",
                         y_title="token")
    # 256 slanted labels (plotly showed every 6th) ran into each other: every k-th, level
    fig.layout.xaxis.update(level_ticks(plotly_text(dims), DIMENSION_AXIS_PX))
    return fig


def positional_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    table = trace[schema.embed_name("encoder", "pos")]                    # [S, D]
    n = table.shape[0]
    fig = pe_heatmap(table, n_sentence=n,
                     title="The positional vectors added to your sentence, one row per position")
    # The table is the sentence, so the box is the whole plot: its label goes just above the box's top right
    # corner, under the title, not in the row under the sentence (there is none here: plotly grew the axis to
    # fit the label there, an empty row "n"), nor over the data.
    fig.layout.yaxis.update(autorange=False, range=[n - 0.5, -0.5])       # reversed: position 0 on top
    for note in fig.layout.annotations:
        note.update(yref="paper", y=1, yanchor="bottom", yshift=2)
    return fig


def one_head_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    return attention_figure(trace, "encoder", layer=0, head=0)


def multi_head_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    return heads_figure(trace, "encoder", layer=0)


def add_norm_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    before = tuple(trace[schema.norm_name("encoder", 0, "norm_attn", h)] for h in ("mean", "std"))
    after = layer_norm_stats(trace[schema.norm_name("encoder", 0, "norm_attn", "normalized")])
    return token_stats_figure(position_labels(trace.meta["src_tokens"]), before, after,
                              title="Encoder layer 0, the attention sublayer's LayerNorm: its input and output")


def decoder_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    last = len(schema.stacked(trace, "cross")) - 1
    return attention_figure(trace, "cross", layer=last)


def decoding_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    logits = trace[schema.LOGITS].astype(np.float64)                     # [T, V]
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    chosen = probs[np.arange(len(trace.meta["tgt_ids"])), trace.meta["tgt_ids"]]
    return confidence_bars(chosen, position_labels(trace.meta["tgt_out_tokens"]),
                           title="How sure the model was of each output token")


def head_entropy_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    n_layers, n_heads = schema.stacked(trace, "encoder").shape[:2]
    stats = head_stats.trace_head_stats(trace, kinds=("encoder",))
    entropy = head_stats.stat_matrix(stats, "encoder", "entropy", n_layers, n_heads)
    return layer_head_heatmap(entropy, title="Encoder heads: entropy of attention (bits; low = focused)",
                              value_name="bits")


ZOO_SCORES = {"scaled": "scaled dot q·k/√d", "general": "bilinear qᵀWk (random W)",
              "additive": "additive vᵀtanh(W₁q+W₂k) (random W)"}


def zoo_figure(trace: Trace, model_dir: Path | None) -> go.Figure:
    q, k = (trace[schema.attn_name("encoder", 0, h)][0] for h in ("q", "k"))   # [S, d_head]
    queries, keys = token_labels(trace, "encoder")
    weights = [zoo.softmax(zoo.scores(score, q, k)) for score in ZOO_SCORES]
    return gallery(weights, list(ZOO_SCORES.values()), queries, keys,
                   title="Encoder layer 0, head 0's queries and keys under older score functions")


NO_TRAINING_LOG = "This model's folder has no readable training log; the app's live toy training draws one."


def training_figure(trace: Trace, model_dir: Path | None) -> go.Figure | None:
    """The model's own loss curve, when its folder ships a readable training log (toy models ship none):
    a lesson is about the sentence, so a broken log costs this figure, not the file."""
    log_path = model_dir / "train_log.csv" if model_dir else None
    if log_path is None or not log_path.is_file():
        return None
    try:
        log = clean_train_log(pd.read_csv(log_path))
    except ValueError:   # pandas ParserError included
        return None
    return loss_curve(log, title=f"{trace.meta['model_id']}: loss during training")


# Tour step title -> (figure, how to read it). A test checks every step of TOUR has one.
STEP_FIGURES: dict[str, tuple[Callable[[Trace, Path | None], go.Figure | None], str]] = {
    "Tokens become vectors": (embeddings_figure, "One row per token, one column per dimension; red is positive, "
                              "blue negative. Repeated words share a row pattern: nothing here says where they stand."),
    "Positional encoding": (positional_figure, "Left columns change fast from row to row, right columns slowly: "
                            "each position gets its own pattern, added to the token's vector."),
    "Self-attention, one head": (one_head_figure, "Each row is one token asking; the darker a cell, the more of that "
                                 "column's value it takes. Every row sums to 1."),
    "Multi-head attention": (multi_head_figure, "Same sentence, same layer: each head has learned to look somewhere "
                             "else (the next word, the previous one, the end of the sentence…)."),
    "Add & Norm": (add_norm_figure, "Before the norm, tokens have different means and spreads; after it, every token "
                   "has mean 0 and standard deviation 1."),
    "The decoder": (decoder_figure, "Each row is an output token; the dark cells show which source tokens it read "
                    "while it was predicted."),
    "Decoding": (decoding_figure, "The probability the model gave to the token it wrote, step by step."),
    "What the heads do": (head_entropy_figure, "Low entropy: the head looks at one or two tokens; high: it spreads "
                          "its attention over the sentence."),
    "Where attention came from": (zoo_figure, "The same queries and keys, scored three ways; the bilinear and "
                                  "additive scores use random, not learned, weights."),
    "Watch it learn": (training_figure, "Loss falls as the model learns; the live toy training in the app shows "
                       "the attention change as it does."),
}


# -- the figures' texts in the lesson's language ---------------------------------------------------------
_KINDS = "|".join(re.escape(title) for title in KIND_TITLES.values())
# The figures above carry English titles; each text is put in the language by (pattern of the whole
# English text, catalogue key; named groups fill the message's placeholders, a group named "kind" is an
# attention kind's title and is translated too).
FIGURE_TEXTS = tuple((re.compile(pattern), key) for pattern, key in (
    (r"Each source token's embedding vector \(× √d_model\)", "fig.tour.embeddings"),
    (r"dimension", "fig.tour.dimension"),
    (r"token", "fig.tour.token"),
    (r"value", "fig.tour.value"),
    (r"The positional vectors added to your sentence, one row per position", "fig.tour.pe"),
    (r"dimension \(pairs 2i, 2i\+1 share a frequency; slower to the right\)", "fig.tour.pe.x"),
    (r"position", "fig.tour.position"),
    (r"your sentence: positions 0–(?P<last>\d+)", "fig.tour.pe.sentence"),
    (rf"(?P<kind>{_KINDS}), layer (?P<layer>\d+), head (?P<head>\d+)", "fig.tour.one_head"),
    (rf"(?P<kind>{_KINDS}), layer (?P<layer>\d+): every head", "fig.tour.every_head"),
    (rf"(?P<kind>{_KINDS}), layer (?P<layer>\d+), mean of the heads", "fig.tour.mean_heads"),
    (r"head (?P<head>\d+)", "fig.tour.head"),
    (r"layer (?P<layer>\d+)", "fig.tour.layer"),
    (r"key \(attended to\)", "fig.attention.x"),
    (r"query \(attending\)", "fig.attention.y"),
    (r"weight", "fig.attention.weight"),
    (r"query", "fig.attention.query"),
    (r"key", "fig.attention.key"),
    (r"before", "fig.tour.hover.before"),
    (r"after", "fig.tour.hover.after"),
    (r"Encoder layer 0, the attention sublayer's LayerNorm: its input and output", "fig.tour.add_norm"),
    (r"mean per token", "fig.tour.mean"),
    (r"standard deviation per token", "fig.tour.std"),
    (r"input \(before\)", "fig.tour.before"),
    (r"normalized \(after\)", "fig.tour.after"),
    (r"How sure the model was of each output token", "fig.tour.confidence"),
    (r"p\(chosen token\)", "fig.tour.p_chosen"),
    (r"Encoder heads: entropy of attention \(bits; low = focused\)", "fig.tour.entropy"),
    (r"bits", "fig.tour.bits"),
    (r"Encoder layer 0, head 0's queries and keys under older score functions", "fig.tour.zoo"),
    (r"scaled dot q·k/√d", "fig.tour.zoo.scaled"),
    (r"bilinear qᵀWk \(random W\)", "fig.tour.zoo.general"),
    (r"additive vᵀtanh\(W₁q\+W₂k\)<br>\(random W\)", "fig.tour.zoo.additive"),
    (r"(?P<model>.+): loss during training", "fig.loss.title"),
    (r"training step", "fig.loss.step"),
    (r"cross-entropy per token", "fig.loss.loss"),
    (r"train loss \(label-smoothed\)", "fig.loss.train"),
    (r"dev loss \(plain cross-entropy\)", "fig.loss.dev"),
))
LAYER_HEAD = re.compile(r"(layer|head) \d+")        # the row and column labels of a layer × head grid
HOVER_LINE = re.compile(r"(?P<label>[^%]*?)(?P<rest> =? ?%\{.*)", re.S)   # "query %{y}", "p = %{x:.3f}"


def figure_text(text: str, lang: str) -> str:
    """One of the lesson figures' English texts in `lang` (FIGURE_TEXTS); others as they are."""
    for pattern, key in FIGURE_TEXTS:
        match = pattern.fullmatch(text)
        if match:
            values = match.groupdict()
            if values.get("kind"):
                kind = next(k for k, title in KIND_TITLES.items() if title == values["kind"])
                values["kind"] = message(lang, f"fig.kind.{kind}")
            return message(lang, key, **values)
    return text


def hover_text(template: str, lang: str) -> str:
    """A hover template in `lang`: its leading lines without a field (a head's or score's name) as one text,
    then each line's word before its field ("query %{y}"); the fields (token labels, numbers) as they are."""
    lines = template.split("<br>")
    n_named = next((i for i, line in enumerate(lines) if "%{" in line), len(lines))
    named = ["<br>".join(lines[:n_named])] if n_named else []
    out = [figure_text(text, lang) for text in named]
    for line in lines[n_named:]:
        match = HOVER_LINE.fullmatch(line)
        out.append(figure_text(match["label"], lang) + match["rest"] if match and match["label"] else line)
    return "<br>".join(out)


def localize_figure(fig: go.Figure, lang: str) -> go.Figure:
    """Put a lesson figure's title, axis and colour-bar titles, annotations, trace names and layer × head
    labels and the words of its hover texts in `lang`, in place (token labels stay as they are); returns the
    figure."""
    layout = fig.layout
    if layout.title and layout.title.text:
        layout.title.text = figure_text(layout.title.text, lang)
    for name in list(layout.to_plotly_json()):
        if re.fullmatch(r"[xy]axis\d*", name) and layout[name].title and layout[name].title.text:
            layout[name].title.text = figure_text(layout[name].title.text, lang)
        elif re.fullmatch(r"coloraxis\d*", name) and layout[name].colorbar.title.text:
            layout[name].colorbar.title.text = figure_text(layout[name].colorbar.title.text, lang)
    for note in layout.annotations or ():
        if note.text:
            note.text = figure_text(note.text, lang)
    for trace in fig.data:
        for side in ("x", "y"):             # a layer × head grid's labels (token labels stay as they are)
            values = getattr(trace, side, None)
            if values is not None and len(values) and all(isinstance(v, str) and LAYER_HEAD.fullmatch(v)
                                                           for v in values):
                setattr(trace, side, [figure_text(v, lang) for v in values])
        if getattr(trace, "name", None):
            trace.name = figure_text(trace.name, lang)
        if getattr(trace, "hovertemplate", None) and isinstance(trace.hovertemplate, str):
            trace.hovertemplate = hover_text(trace.hovertemplate, lang)
        colorbar = getattr(trace, "colorbar", None)
        if colorbar is not None and colorbar.title and colorbar.title.text:
            colorbar.title.text = figure_text(colorbar.title.text, lang)
    return fig


# -- the page -----------------------------------------------------------------------------------------
STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #222; }
header { border-bottom: 2px solid #9bbbd9; margin-bottom: 1.5rem; }
dt { font-weight: 600; } dd { margin: 0 0 0.6rem 0; font-size: 1.15rem; }
section { margin: 2.5rem 0; }
.formula { font-family: 'Cambria Math', 'STIX Two Math', serif; font-size: 1.3rem; background: #f5f8fc;
           padding: 0.6rem 1rem; border-radius: 0.4rem; overflow-x: auto; }
.radicand { border-top: 1px solid currentColor; padding-top: 0.1em; }
.how { color: #555; font-style: italic; }
"""


def _figure_div(fig: go.Figure, first: bool) -> str:
    return pio.to_html(fig, full_html=False, include_plotlyjs=first, include_mathjax=False, config=PLOTLY_CONFIG)


def _header(meta: dict, lang: str) -> str:
    rows = [("lesson.model", meta["model_id"]), ("lesson.sentence", meta["src_text"]),
            ("lesson.translation", meta["translation"])]
    if meta.get("teacher_forced"):
        rows.append(("lesson.target", meta["tgt_text"]))
    items = "".join(f"<dt>{html.escape(message(lang, key))}</dt><dd>{html.escape(str(value))}</dd>"
                    for key, value in rows)
    return f"<header><h1>{html.escape(message(lang, 'lesson.heading'))}</h1><dl>{items}</dl></header>"


def text_html(text: str) -> str:
    """A step's text (Markdown on the tour page) as HTML: escaped, and its `code` spans (a token such as
    `</s>`) as <code>; no other markup."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _section(number: int, step: TourStep, figure_html: str, how: str, lang: str) -> str:
    heading = message(lang, "tour.step", number=number, total=len(TOUR), title=message(lang, step.message_key("title")))
    return (f'<section id="step-{number}"><h2>{html.escape(heading)}</h2>'
            f"<p>{text_html(message(lang, step.message_key('text')))}</p>"
            f'<p class="formula">{formula_html(step.formula)}</p>'
            f"{figure_html}<p class=\"how\">{html.escape(how)}</p></section>")


def lesson_html(trace: Trace, model_dir: Path | None = None, lang: str = DEFAULT_LANG) -> str:
    """The lesson of one sentence's trace (every hook captured, as trace_sentence does by default) as a
    complete HTML document. model_dir: the model's folder, for its training log (the last step's figure).
    lang: "en" or "zh" (viz/i18n.py LANGS), the language of its words and figures."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGS)}")
    sections, plotly_inlined = [], False
    for number, step in enumerate(TOUR, start=1):
        build, _english_reading = STEP_FIGURES[step.title]
        fig = build(trace, model_dir)
        if fig is None:      # only the training step can lack its data
            figure_html, how = "", message(lang, "tour.no_training_log")
        else:
            figure_html = _figure_div(localize_figure(fig, lang), first=not plotly_inlined)
            plotly_inlined, how = True, message(lang, step.message_key("reading"))
        sections.append(_section(number, step, figure_html, how, lang))
    title = html.escape(message(lang, "lesson.page_title", text=trace.meta["src_text"]))
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>'
            f"<body>{_header(trace.meta, lang)}{''.join(sections)}"
            f"<footer><p>{html.escape(message(lang, 'lesson.footer'))}</p></footer></body></html>")


def write_lesson(trace: Trace, path, model_dir: Path | None = None, lang: str = DEFAULT_LANG) -> Path:
    """Write the lesson in `lang` to `path` (UTF-8); OSError when it cannot be written."""
    path = Path(path)
    path.write_text(lesson_html(trace, model_dir, lang), encoding="utf-8")
    return path
