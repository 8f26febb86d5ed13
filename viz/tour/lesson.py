"""One sentence's guided tour as a single HTML file: it opens from a USB stick with the network off.

The tour's steps (viz/tour/steps.py) in order, each with its explanation, its formula as MathML
(viz/tour/formula_html.py; the browser draws it, no script or font is fetched) and its interactive figures, the tour
page's own (viz/tour/pictures.step_pictures; the multi-head step's head view isolates a head on a legend click,
plotly's own, no server), from a real trace
of the real model (model.inference.pipeline.trace_sentence; this module only reads the Trace, as the figures
do). plotly.js is inlined once, its cartesian partial bundle (viz/vendor: 1.5 MB, the full one is 4.8 MB; the
lesson draws heatmaps, bars and lines only), no other file or CDN is referenced, and every piece of user
text is escaped, so a sentence containing <script> shows as text and runs nothing. No Streamlit here.

One file for one view wherever it is written: the app's download button (viz/tour/download.py) and the command
line (transformer_viz/lesson.py) write the same bytes. The figures get plotly's own template whatever the
process's default is (importing Streamlit's plotly_chart makes its "streamlit" template the default, which has
no automargin: the download button's file lost the layer labels and drew axis titles over the ticks), and
each figure's div a fixed id, not a random one.

In English (the default) or 中文: the words come from viz/locales/<lang>.json (the tour page's messages), the
figures are built with them. Token labels, the sentence and the model's translation are never translated;
formulas stay as they are.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio

from model.capture.trace import Trace
from viz.tour.formula_html import formula_block
from viz.figures.style import NORMAL, PRESENTER, Look
from viz.core.i18n import DEFAULT_LANG, LANGS, STYLE_KEYS, message, words
from viz.tour.pictures import step_pictures
from viz.tour.steps import TOUR, TourStep

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}
PRESENTER_BODY = ' class="presenter"'     # the body of a lesson at presenter sizes (STYLE's body.presenter)
# The lesson's figures draw with plotly.py's own template, not the process's default (see above)
FIGURE_TEMPLATE = "plotly"
PLOTLY_BUNDLE = Path(__file__).parents[1] / "vendor" / "plotly-cartesian.min.js"
# What the bundle draws (viz/vendor/README.md); a lesson figure of another trace type is refused, not left blank
BUNDLE_TRACE_TYPES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                                "image", "pie", "scatter", "scatterternary", "violin"})


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #222; }
header { border-bottom: 2px solid #9bbbd9; margin-bottom: 1.5rem; }
dt { font-weight: 600; } dd { margin: 0 0 0.6rem 0; font-size: 1.15rem; }
section { margin: 2.5rem 0; }
.formula { font-family: 'Cambria Math', 'STIX Two Math', serif; font-size: 1.3rem; background: #f5f8fc;
           padding: 0.6rem 1rem; border-radius: 0.4rem; overflow-x: auto; }
.formula math { font-size: 1.45rem; margin: 0;   /* fonts with a MATH table: stretched brackets, big sums */
                font-family: 'Cambria Math', 'STIX Two Math', 'Latin Modern Math', 'DejaVu Math TeX Gyre', math; }
.radicand { border-top: 1px solid currentColor; padding-top: 0.1em; }
.how { color: #555; font-style: italic; }
html[lang=zh] .how { font-style: normal; }   /* Chinese characters have no italic: a slanted copy reads poorly */
/* a narrow picture (the head view) with its reading beside it; under it on a narrow screen */
.beside { display: flex; flex-wrap: wrap; gap: 0 2rem; align-items: center; }
.beside > .picture { flex: 3 1 480px; min-width: 0; } .beside > .how { flex: 2 1 240px; font-size: 1.1rem; order: 1; }
/* a presenter's lesson: the app's presenter sizes (20 px and up), the page as wide as the projector */
body.presenter { max-width: 1280px; font-size: 1.3rem; } body.presenter h1 { font-size: 2.6rem; }
body.presenter h2 { font-size: 2rem; } body.presenter dd, body.presenter .beside > .how { font-size: 1.3rem; }
"""


def _figure_div(fig: go.Figure, div_id: str) -> str:
    unknown = {trace.type for trace in fig.data} - BUNDLE_TRACE_TYPES
    if unknown:
        raise ValueError(f"the lesson's plotly.js bundle cannot draw {', '.join(sorted(unknown))}")
    fig.layout.template = None        # cleared first: setting a template over another merges in the other's order
    # as a dict: a figure built unchecked (style.trusted_figure, the head view) would keep a name as it is
    fig.layout.template = pio.templates[FIGURE_TEMPLATE].to_plotly_json()
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, include_mathjax=False, config=PLOTLY_CONFIG,
                       div_id=div_id)


def _plotly_script() -> str:
    """plotly.js inlined, once, before the first figure (the bundle contains no "</script")."""
    return ('<script type="text/javascript">window.PlotlyConfig = {MathJaxConfig: \'local\'};</script>'
            f'<script type="text/javascript">{PLOTLY_BUNDLE.read_text(encoding="utf-8")}</script>')


# A two-style model reads its style token first, a style written <style> (model/io/tokenizer.py STYLE_TOKENS;
# a test keeps the two alike): the token -> the catalogue key of the style's words, the sidebar's.
STYLE_TOKEN_KEYS = {f"<{style}>": key for style, key in STYLE_KEYS.items()}


def reader_sentence(meta: dict) -> tuple[str, str | None]:
    """The traced sentence as the reader typed it, and the catalogue key of its style's words (None: no style
    token led it). The token itself stays in the figures: the model really reads it."""
    text, tokens = meta["src_text"], meta.get("src_tokens") or []
    first, _, rest = text.partition(" ")
    if first in STYLE_TOKEN_KEYS and tokens and tokens[0] == first:
        return rest.strip(), STYLE_TOKEN_KEYS[first]
    return text, None


def _header(meta: dict, lang: str) -> str:
    sentence, style = reader_sentence(meta)
    rows = [("lesson.model", meta["model_id"]), ("lesson.sentence", sentence)]
    if style is not None:
        rows.append(("sidebar.style", message(lang, style)))
    rows.append(("lesson.translation", meta["translation"]))
    if meta.get("teacher_forced"):
        rows.append(("lesson.target", meta["tgt_text"]))
    items = "".join(f"<dt>{html.escape(message(lang, key))}</dt><dd>{html.escape(str(value))}</dd>"
                    for key, value in rows)
    return f"<header><h1>{html.escape(message(lang, 'lesson.heading'))}</h1><dl>{items}</dl></header>"


def text_html(text: str) -> str:
    """A step's text (Markdown on the tour page) as HTML: escaped, and its `code` spans (a token such as
    `</s>`) as <code>; no other markup."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _section(number: int, step: TourStep, pictures_html: str, lang: str) -> str:
    heading = message(lang, "tour.step", number=number, total=len(TOUR), title=message(lang, step.message_key("title")))
    return (f'<section id="step-{number}"><h2>{html.escape(heading)}</h2>'
            f"<p>{text_html(message(lang, step.message_key('text')))}</p>"
            f"{formula_block(step.formula)}{pictures_html}</section>")


def _how(text: str) -> str:
    return f'<p class="how">{html.escape(text)}</p>'


def lesson_html(trace: Trace, model_dir: Path | None = None, lang: str = DEFAULT_LANG, presenter: bool = False) -> str:
    """The lesson of one sentence's trace (every hook captured, as trace_sentence does by default) as a
    complete HTML document. model_dir: the model's folder, for its training log (the last step's figure).
    lang: "en" or "zh" (viz/core/i18n.py LANGS), the language of its words and figures. presenter: at the app's presenter
    sizes (no chart text under 20 px), for a projector; else at its normal sizes."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGS)}")
    look = Look(words(lang), PRESENTER if presenter else NORMAL)
    sections = []
    for number, step in enumerate(TOUR, start=1):
        pictures = step_pictures(step, trace, model_dir, look)   # the tour page's
        parts = []
        for index, picture in enumerate(pictures):
            div = _figure_div(picture.figure, div_id=f"figure-{number}-{index}")
            how = _how(message(lang, picture.reading))
            # the reading comes first in the file (shown after by CSS order): plotly sizes a figure to its box when
            # its script runs, and with the reading not yet parsed the box is the page's whole width (the
            # head view would be 1,100 px wide, over its reading)
            parts.append(f'<div class="beside">{how}<div class="picture">{div}</div></div>' if picture.narrow
                         else div + how)
        if not pictures:     # only the training step can lack its data
            parts.append(_how(message(lang, "tour.no_training_log")))
        sections.append(_section(number, step, "".join(parts), lang))
    title = html.escape(message(lang, "lesson.page_title", text=reader_sentence(trace.meta)[0]))
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style>'
            f"{_plotly_script()}</head>"
            f"<body{PRESENTER_BODY if presenter else ''}>{_header(trace.meta, lang)}{''.join(sections)}"
            f"<footer><p>{html.escape(message(lang, 'lesson.footer'))}</p></footer></body></html>")


def write_lesson(trace: Trace, path, model_dir: Path | None = None, lang: str = DEFAULT_LANG) -> Path:
    """Write the lesson in `lang` to `path` (UTF-8); OSError when it cannot be written."""
    path = Path(path)
    path.write_text(lesson_html(trace, model_dir, lang), encoding="utf-8")
    return path
