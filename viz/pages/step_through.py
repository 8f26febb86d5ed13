"""Step-through: one head, one query token, from the layer input to the head's output, on real numbers. Every head's
nine steps are drawn in the browser (viz/elements/browser_view.py, a deck of the kind's heads x the steps): a layer,
a head and a step are picked there (its selects; ◀ Previous, Next ▶, the row of steps, the arrow keys) with no script
run and written to the URL; the page reads them from the URL and sends the deck of a kind and query once. Kind and
query are the page's own widgets (another query: another deck). Under the steps, in the deck too: the whole head in
one line and why scaling matters (the head's, for the query)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from model.analysis.attention_math import (HeadSteps, dim_labels, head_projection, head_steps,
                                           max_abs_error, scaling_comparison)
from model.analysis.vectors import cosine_similarity
from model.capture import schema
from model.capture.schema import sublayer_names
from viz.figures import browser_view as payloads
from viz.figures.attention import attention_heatmap_spec, map_window, window_around
from viz.figures.browser_view import template_spec
from viz.figures.step import masked_scores_spec, scaling_bars_spec, step_spec
from viz.figures.style import Labels, Look, plotly_text
from viz.figures.vectors import cosine_spec
from viz.core.context import Traced
from viz.core.i18n import kind_title, t
from viz.core import view
from viz.core.keys import FollowedHead, FollowedQuery
from viz.core.text import attention_labels, first_word
from viz.elements.browser_view import HEAD_STEP_PICK, browser_view, url_names, whole_asked
from viz.elements.ui import (PRESENTER_TABLE_COLUMNS, look, matrix_frame,
                             need_context, on_phone, plotly_config, safe_filename, type_scale)
from viz.tour.formula_html import formula_mathml

OWN = view.Own("viz.pages.step_through")  # this module's own session values
STEP_THROUGH = OWN.value("step")          # step-<control>: this page's widgets; step-view, -head, -csv, -whole: its deck

KINDS = list(schema.KINDS)
# The steps' names: formulas as they are, words as catalogue keys (step.*), read by say()
STEPS = ["step.steps.input", "$Q = XW^Q$", "$K = XW^K$", "$V = XW^V$", r"$QK^\top$", r"$\div\sqrt{d_k}$",
         "step.steps.mask", "softmax", "step.steps.output"]
SHORT = ["X", "Q", "K", "V", "Q·Kᵀ", "÷√dₖ", "step.short.mask", "softmax", "· V"]   # fits one line on a projector
FIRST_STEP = 0   # the page opens where a lesson starts: the input X, then Q, K, V, the scores… one Next each
TOLERANCE = 1e-4   # float32 model vs float64 recomputation
# The query's select in the left column of a row (the layer, head and step are picked in the deck under it)
CONTROL_COLUMNS = [2.4, 2.0]
def plot_px() -> int:
    """The plot area of a matrix in the left three fifths of the page at 1280x720: wider in presenter mode,
    where the sidebar is folded away."""
    return int(picture_px() - 130)
FORMULA = r"z = \mathrm{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}} + M\right) XW^V"
# Each step's formula (LaTeX; the deck draws it as MathML, viz/tour/formula_html.formula_mathml): numbers of the
# model's config go in, never a token
SCORES_FORMULA = r"s_{ij} = q_i \cdot k_j = \sum_{d=1}^{d_k} q_{id}\,k_{jd}"
MASK_FORMULAS = {True: r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}",
                 False: r"M_{ij} = 0 \quad \forall j"}
SOFTMAX_FORMULA = r"a_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}},\qquad \sum_j a_{ij} = 1"
OUTPUT_FORMULA = r"z_i = \sum_j a_{ij}\, v_j"


def projection_formula(which: str, head: int, d: int, d_head: int) -> str:
    w_h = rf"W^{which}_{{{head}}}"
    return rf"{which}_{{{head}}} = X {w_h} + b^{which}_{{{head}}},\quad {w_h} \in \mathbb{{R}}^{{{d}\times{d_head}}}"


def scaled_formula(d_head: int) -> str:
    return (rf"\frac{{q_i\cdot k_j}}{{\sqrt{{d_k}}}} = \frac{{q_i\cdot k_j}}{{\sqrt{{{d_head}}}}} = "
            rf"\frac{{q_i\cdot k_j}}{{{np.sqrt(d_head):.3g}}}")


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
STEP_ROLE_KEYS = {"K": "step.role.K", "Q": "step.role.Q", "V": "step.role.V"}


@dataclass(frozen=True)
class Row:
    """The followed row of a matrix: its label, the columns' labels and its numbers."""
    label: str
    columns: list
    values: np.ndarray


@dataclass
class View:
    """What one step shows: figures (a figure's spec, filename, its CSV frame made when asked), the followed row as
    numbers, text."""
    figures: list = field(default_factory=list)
    row: Row | None = None       # the followed row
    row_caption: str = ""
    text: str = ""
    latex: str = ""
    checks: list = field(default_factory=list)   # (description, max error)
    window_note: str = ""        # which tokens a long sentence's pictures show
    full: list = field(default_factory=list)     # the whole matrices (figure, filename, CSV), one click away


@dataclass(frozen=True)
class Head:
    """One head of one sublayer on the sentence: the captured arrays, their float64 recomputation, labels."""
    kind: str
    layer: int
    head: int
    query: int
    cfg: object
    names: object                 # schema.SublayerNames of the sublayer
    model: object                 # viz/services/models.ModelView: the sublayer's W^Q, W^K, W^V as arrays
    q_labels: list
    k_labels: list
    x_q: np.ndarray               # [Tq, D] the query side's input
    x_kv: np.ndarray              # [Tk, D] the key/value side's input
    q: np.ndarray                 # [Tq, Dh]
    k: np.ndarray                 # [Tk, Dh]
    v: np.ndarray                 # [Tk, Dh]
    scores: np.ndarray            # [Tq, Tk] the model's scaled scores
    pattern: np.ndarray           # [Tq, Tk] the model's weights
    z: np.ndarray                 # [Tq, Dh] the head's output
    mine: HeadSteps               # every step recomputed in float64
    tag: str                      # file name stem of downloads
    rows: slice                   # the query tokens the pictures show: all, or of a long sentence those around the query
    keys: slice                   # the key tokens they show: around the key row (self-attention: the same as rows)

    @property
    def layer_tag(self) -> str:
        """File name stem of what every head of the layer shows (the first step: its input X)."""
        return self.tag.removesuffix(f"-H{self.head}")

    @property
    def n_q(self) -> int:
        return len(self.q_labels)

    @property
    def key_row(self) -> int:
        """K and V rows are keys: in self-attention follow the query's own token, in cross-attention the
        source token this query attends to most."""
        return self.query if self.kind != "cross" else int(np.argmax(self.pattern[self.query]))

    @property
    def mark(self) -> int:
        """The followed query's row in the pictures (they show the rows of `rows`)."""
        return self.query - self.rows.start

    def shown(self, matrix: np.ndarray) -> np.ndarray:
        """A [query, key] matrix's part the pictures show."""
        return np.asarray(matrix)[self.rows, self.keys]

    @property
    def window_note(self) -> str:
        """What a long sentence's pictures leave out, said under them (nothing while every token is shown)."""
        if self.rows.stop - self.rows.start == self.n_q and self.keys.stop - self.keys.start == len(self.k_labels):
            return ""
        return t("ui.window.around", first=self.rows.start, last=self.rows.stop - 1, n=self.n_q)

    @property
    def key_row_note(self) -> str:
        return (t("step.key_row.own") if self.kind != "cross" else
                t("step.key_row.cross", token=self.k_labels[self.key_row]))

    @property
    def where(self) -> str:
        return t("step.where", kind=kind_title(self.kind), layer=self.layer, head=self.head)

    @property
    def q_side(self) -> str:
        return t("step.side.decoder") if self.kind != "encoder" else t("step.side.source")

    @property
    def kv_side(self) -> str:
        return t({"cross": "step.side.memory", "decoder": "step.side.decoder"}.get(self.kind, "step.side.source"))


def picture_px() -> float:
    """The picture column's width: three fifths of the page, a phone's whole column (its columns stack)."""
    return (1.0 if on_phone() else 0.6) * type_scale().page_px


def window_size() -> int:
    """Tokens a step's map shows with every label legible, in the page's picture column."""
    return map_window(picture_px(), type_scale())


def load_head(traced: Traced, kind: str, layer: int, head: int, query: int, size: int) -> Head:
    """The head's arrays and their recomputation; a long sentence's pictures through a window of `size` tokens."""
    cfg, arrays = traced.model.config, traced.trace.arrays
    names = sublayer_names(kind, layer, cfg.norm_first)
    q_labels, k_labels = attention_labels(traced.trace.meta, kind)
    q, k, v, scores, pattern, z = (arrays[schema.attn_name(kind, layer, n)][head]
                                   for n in ("q", "k", "v", "scores", "pattern", "z"))
    # a long sentence through a window around the followed query (the query picker moves it) and around the key
    # it reads (cross-attention: the source token it attends to most)
    key_row = query if kind != "cross" else int(np.argmax(pattern[query]))
    return Head(kind, layer, head, query, cfg, names, traced.model, q_labels, k_labels,
                arrays[names.query_input], arrays[names.kv_input], q, k, v, scores, pattern, z,
                head_steps(q, k, v, names.causal), f"{traced.model_id}-{kind}-L{layer}-H{head}",
                window_around(query, len(q_labels), size), window_around(key_row, len(k_labels), size))


@view.shared_cached
def head_of(traced: Traced, followed: FollowedHead) -> Head:
    """The followed head, loaded once for its nine steps, its CSVs and the scaling section."""
    return load_head(traced, followed.kind, followed.layer, followed.head, followed.query, followed.size)


def _init_state(value: view.Value, default: int, lo: int, hi: int, *part) -> None:
    """Seed the widget step-<part> from the URL once; afterwards the widget owns its value (no default+state
    clash)."""
    if not view.has(STEP_THROUGH, *part):
        view.put(STEP_THROUGH, view.read(value, default=default, lo=lo, hi=hi), *part)
    elif not lo <= view.get(STEP_THROUGH, *part) <= hi:   # a shorter sentence than before
        view.put(STEP_THROUGH, default, *part)


def _forget_query() -> None:
    """A new attention kind has other query tokens: do not carry the old index over."""
    view.forget_url(view.QUERY)


def say(name: str) -> str:
    """A step's name in the reader's language: a catalogue key's message, a formula as it is."""
    return t(name) if name.startswith("step.") else name


def step_name(i: int) -> str:
    return say(STEPS[i])


def short_name(i: int) -> str:
    return say(SHORT[i])


def _row(matrix: np.ndarray, index: int, row_labels: list[str], col_labels: list[str]) -> Row:
    return Row(str(row_labels[index]), [str(c) for c in col_labels], np.asarray(matrix, dtype=float)[index])


def vector_pictures(matrix: np.ndarray, labels: list[str], dims: list[str], name: str, full_title: str, x_title: str,
                    y_title: str, filename: str, shown: slice, highlight: int | None = None) -> tuple[tuple, tuple]:
    """A [tokens, dims] matrix as a class can read it (how alike its token vectors are, tokens x tokens) and
    the full matrix for the click behind it: ((figure, filename, CSV frame), (figure, filename, CSV frame)). The
    pictures show the tokens `shown` (highlight: a token's index in the whole sentence); the CSVs hold them all."""
    cos = cosine_similarity(matrix)
    mark = None if highlight is None else highlight - shown.start
    teach = cosine_spec(cos[shown, shown], labels[shown],
                        Labels(t("step.cosine.title", name=name), y_title, y_title, t("step.cosine.value")), look(),
                        highlight=mark, width_px=picture_px())
    full = step_spec(matrix[shown], labels[shown], dims, Labels(full_title, x_title, y_title, t("step.axis.value")),
                     look(), highlight=mark, show_values=False, plot_px=plot_px())
    return ((teach, f"{filename}-cosine", partial(matrix_frame, cos, labels, labels)),
            (full, filename, partial(matrix_frame, matrix, labels, dims)))


# -- the nine steps ---------------------------------------------------------------------------------
def view_input(h: Head) -> View:
    cfg, layer, query = h.cfg, h.layer, h.query
    d = cfg.d_model
    model_dims = dim_labels(d)
    x_name = t("step.input.embeddings") if layer == 0 and not cfg.norm_first else t("step.input.previous")
    teach, full = vector_pictures(h.x_q, h.q_labels, model_dims, "X",
                                  t("step.input.title", n=h.n_q, d=d, side=h.q_side, layer=layer),
                                  t("step.axis.dimension"), t("step.axis.token"), f"{h.layer_tag}-X", h.rows,
                                  highlight=query)
    view = View([teach], _row(h.x_q, query, h.q_labels, model_dims), full=[full])
    if h.kind in ("encoder", "decoder"):
        view.text = t("step.input.text", layer=layer, d=d, x_name=x_name,
                      pe=t("step.input.pe") if layer == 0 else "")
    else:
        teach, full = vector_pictures(h.x_kv, h.k_labels, model_dims, t("step.side.memory"),
                                      t("step.memory.title", n=len(h.k_labels), d=d), t("step.axis.dimension"),
                                      t("step.axis.source_token"), f"{h.layer_tag}-memory", h.keys)
        view.figures.append(teach)
        view.full.append(full)
        view.text = t("step.memory.text")
    if cfg.norm_first:
        view.text += " " + t("step.input.pre_norm")
    view.row_caption = t("step.input.row", token=h.q_labels[query])
    return view


def view_projection(h: Head, which: str) -> View:
    d, d_head, n_heads, head = h.cfg.d_model, h.cfg.d_head, h.cfg.n_heads, h.head
    source, matrix = {"Q": (h.x_q, h.q), "K": (h.x_kv, h.k), "V": (h.x_kv, h.v)}[which]
    labels, row, shown = (h.q_labels, h.query, h.rows) if which == "Q" else (h.k_labels, h.key_row, h.keys)
    weight, bias = h.model.attention_weights(h.names.attn, which.lower())
    role = t(STEP_ROLE_KEYS[which])
    side = h.q_side if which == "Q" else h.kv_side
    dims = dim_labels(d_head)
    teach, full = vector_pictures(matrix, labels, dims, which,
                                  t("step.proj.title", which=which, head=head, n=len(labels), d_k=d_head, side=side),
                                  t("step.axis.head_dimension"), t("step.axis.token"), f"{h.tag}-{which}",
                                  shown, highlight=row)
    view = View([teach], _row(matrix, row, labels, dims), full=[full])
    view.latex = projection_formula(which, head, d, d_head)
    view.text = t("step.proj.text", head=head, d_k=d_head, d=d, which=which, role=role) + (
        " " + t("step.proj.cross") if which != "Q" and h.kind == "cross" else "")
    view.row_caption = (t("step.proj.row", token=labels[row], which=which) if which == "Q" else
                        t("step.proj.row_key", token=labels[row], which=which, note=h.key_row_note))
    redone = head_projection(source, weight, bias, head, n_heads)
    view.checks.append((t("step.proj.check", which=which),
                        max_abs_error(redone, matrix)))
    return view


def view_raw(h: Head) -> View:
    raw, q_labels, k_labels, query = h.mine.raw, h.q_labels, h.k_labels, h.query
    labels = Labels(t("step.raw.title", n=h.n_q, m=len(k_labels)), t("step.axis.key"), t("step.axis.query"), "q·k")
    fig = step_spec(h.shown(raw), q_labels[h.rows], k_labels[h.keys], labels, look(),
                    highlight=h.mark)
    view = View([(fig, f"{h.tag}-QK", partial(matrix_frame, raw, q_labels, k_labels))], _row(raw, query, q_labels, k_labels),
                latex=SCORES_FORMULA)
    view.text = t("step.raw.text", token=q_labels[query], low=f"{raw.min():.1f}", high=f"{raw.max():.1f}")
    view.row_caption = t("step.raw.row", token=q_labels[query])
    return view


def view_scaled(h: Head) -> View:
    scaled, q_labels, k_labels, query, d_head = h.mine.scaled, h.q_labels, h.k_labels, h.query, h.cfg.d_head
    labels = Labels(t("step.scaled.title", d_k=d_head), t("step.axis.key"), t("step.axis.query"),
                    t("step.axis.score"))
    fig = step_spec(h.shown(scaled), q_labels[h.rows], k_labels[h.keys], labels, look(),
                    highlight=h.mark)
    view = View([(fig, f"{h.tag}-scores", partial(matrix_frame, h.scores, q_labels, k_labels))],
                _row(scaled, query, q_labels, k_labels),
                latex=scaled_formula(d_head))
    view.text = t("step.scaled.text", root=f"{np.sqrt(d_head):.3g}")
    view.row_caption = t("step.scaled.row", token=q_labels[query])
    view.checks.append((t("step.scaled.check"), max_abs_error(scaled, h.scores)))
    return view


def view_mask(h: Head) -> View:
    masked, q_labels, k_labels, query, causal = h.mine.masked, h.q_labels, h.k_labels, h.query, h.names.causal
    fig = masked_scores_spec(h.shown(masked), q_labels[h.rows], k_labels[h.keys],
                             t("step.mask.title_causal") if causal else t("step.mask.title_none"), look(),
                             highlight=h.mark)
    view = View([(fig, f"{h.tag}-masked", partial(matrix_frame, masked, q_labels, k_labels))],
                _row(masked, query, q_labels, k_labels),
                latex=MASK_FORMULAS[bool(causal)])
    if causal:
        n_hidden = int((~h.mine.allowed[query]).sum())
        view.text = t("step.mask.causal", token=q_labels[query], n=n_hidden)
    else:
        view.text = t("step.mask.none", why=t("step.mask.why_cross") if h.kind == "cross" else
                      t("step.mask.why_encoder"))
    view.row_caption = t("step.mask.row", token=q_labels[query])
    return view


def view_softmax(h: Head) -> View:
    pattern, q_labels, k_labels, query = h.pattern, h.q_labels, h.k_labels, h.query
    fig = attention_heatmap_spec(h.shown(pattern), q_labels[h.rows], k_labels[h.keys], look(),
                                 t("step.softmax.title", where=h.where), highlight_row=h.mark,
                                 masked=h.shown(~h.mine.allowed),
                                 width_px=picture_px())
    view = View([(fig, f"{h.tag}-weights", partial(matrix_frame, pattern, q_labels, k_labels))],
                _row(pattern, query, q_labels, k_labels),
                latex=SOFTMAX_FORMULA)
    top = int(np.argmax(pattern[query]))
    view.text = t("step.softmax.text", token=q_labels[query], weight=f"{pattern[query, top]:.2f}", target=k_labels[top])
    view.row_caption = t("step.softmax.row", token=q_labels[query], total=f"{pattern[query].sum():.4f}")
    view.checks.append((t("step.softmax.check"), max_abs_error(h.mine.weights, pattern)))
    return view


def view_output(h: Head) -> View:
    z, q_labels, query, d_head = h.z, h.q_labels, h.query, h.cfg.d_head
    dims = dim_labels(d_head)
    labels = Labels(t("step.output.title", head=h.head, n=h.n_q, d_k=d_head), t("step.axis.head_dimension"),
                    t("step.axis.query_token"), t("step.axis.value"))
    fig = step_spec(z[h.rows], q_labels[h.rows], dims, labels, look(), highlight=h.mark, show_values=False,
                    plot_px=plot_px())
    view = View([(fig, f"{h.tag}-z", partial(matrix_frame, z, q_labels, dims))], _row(z, query, q_labels, dims),
                latex=OUTPUT_FORMULA)
    view.text = t("step.output.text", head=h.head, heads=h.cfg.n_heads)
    view.row_caption = t("step.output.row", token=q_labels[query])
    view.checks.append((t("step.output.check"),
                        max_abs_error(h.pattern.astype(np.float64) @ h.v.astype(np.float64), z)))
    return view


VIEWS = [view_input, partial(view_projection, which="Q"), partial(view_projection, which="K"),
         partial(view_projection, which="V"), view_raw, view_scaled, view_mask, view_softmax, view_output]


# -- the deck: every step, drawn in the browser -----------------------------------------------------------
def step_figures(shown: View) -> dict[str, tuple]:
    """A step's pictures by the deck's block ids (figure, file name, CSV frame): the step's one or two (cross-attention's
    input: the decoder's and the memory's), and behind them the full matrices."""
    return {**{f"picture-{i}": made for i, made in enumerate(shown.figures)},
            **{f"full-{i}": made for i, made in enumerate(shown.full)}}


def number(value: float) -> str:
    """A number of the followed row, as the table shows it: 4 decimals; a masked score −∞."""
    return "−∞" if np.isneginf(value) else f"{value:.4f}"


def row_table(row: Row) -> dict:
    """The followed row's numbers as a static table at the text's size; a row wider than a half-page column holds
    (a d_model-wide X) on its side, scrolling in its box."""
    cells = [number(v) for v in row.values]
    if len(cells) > PRESENTER_TABLE_COLUMNS:
        return payloads.table([row.label], row.columns, [[cell] for cell in cells])
    return payloads.table(row.columns, [row.label], [cells])


def step_part(h: Head, step: int) -> dict:
    """One step's part of the page's deck (viz/figures/browser_view.py): its pictures, as the builders above draw
    them, and what it computes (the heading, the formula as MathML, the text, the row and the checks)."""
    shown = VIEWS[step](h)
    figures = step_figures(shown)
    texts = {
        "window-note": h.window_note,
        "cosine-caption": t("step.cosine.caption") if shown.figures and shown.full else "",
        "step-heading": t("step.subheader", number=step + 1, total=len(STEPS), name=step_name(step)),
        "formula": formula_mathml(shown.latex) if shown.latex else "",
        "step-text": shown.text,
        "row-caption": shown.row_caption,
    }
    notes = [{"text": t("step.check", description=description, error=f"{error:.2e}")
              + ("" if error < TOLERANCE else " " + t("step.check.large")), "ok": bool(error < TOLERANCE)}
             for description, error in shown.checks]
    return payloads.deck_pick({name: made[0] for name, made in figures.items()},
                              {name: safe_filename(made[1]) for name, made in figures.items()}, texts,
                              {"row": row_table(shown.row)}, {"checks": notes})


# -- why scaling matters: the followed query's softmax with and without 1/√d_k, in the head's part of the deck -----
@dataclass(frozen=True)
class Scaling:
    """The followed query's scores softmaxed with and without 1/√d_k (the figure, its file, its numbers) and what
    they do to the softmax (the summary: peak, entropy, spread)."""
    figure: dict                  # a figure's spec (viz/figures/step.scaling_bars_spec)
    filename: str
    numbers: pd.DataFrame
    summary: pd.DataFrame


def scaling(h: Head) -> Scaling:
    d_head, query, mine = h.cfg.d_head, h.query, h.mine
    comparison = scaling_comparison(mine.raw[query], d_head, mine.allowed[query])
    figure = scaling_bars_spec(comparison.unscaled, comparison.scaled, h.k_labels, d_head, look(),
                               title=t("step.why.title", token=plotly_text(h.q_labels)[query]),
                               masked=~mine.allowed[query], shown=h.keys)
    numbers = matrix_frame(np.stack([comparison.unscaled, comparison.scaled]),
                           [t("step.why.without"), t("step.why.with")], h.k_labels)
    allowed_raw = mine.raw[query][mine.allowed[query]]
    summary = matrix_frame(
        np.array([[comparison.max_unscaled, comparison.entropy_unscaled, allowed_raw.std()],
                  [comparison.max_scaled, comparison.entropy_scaled, allowed_raw.std() / np.sqrt(d_head)]]),
        ["softmax(q·k)", f"softmax(q·k / √{d_head})"],
        [t("step.why.max"), t("step.why.entropy"), t("step.why.spread")]).round(3)
    return Scaling(figure, f"{h.tag}-q{query}-scaling", numbers, summary)


def scaling_part(h: Head) -> dict:
    """The head's part of the deck (every step of it shows it): why scaling matters, for the followed query."""
    made = scaling(h)
    summary = made.summary
    return payloads.deck_pick({"scaling": made.figure}, {"scaling": safe_filename(made.filename)},
                              tables={"scaling-summary": payloads.table(
                                  [str(c) for c in summary.columns], [str(i) for i in summary.index],
                                  [[f"{v:.3f}" for v in row] for row in summary.to_numpy(dtype=float)])})


def every_pick_part(cfg) -> dict:
    """What every pick of the deck shows (its part keyed "": browser_view.js deckPart): the caption, the whole head
    in one line, the heading and the words of why scaling matters."""
    return payloads.deck_pick({}, {}, {
        "caption": t("step.caption"),
        "whole-header": t("step.whole.header"),
        "whole-text": t("step.whole.text", d_model=cfg.d_model, heads=cfg.n_heads, d_k=cfg.d_head),
        "whole-formula": formula_mathml(FORMULA),
        "why-header": t("step.why.header"),
        "why-text": t("step.why.text", d_k=cfg.d_head, root=f"{np.sqrt(cfg.d_head):.1f}"),
    })


# -- the deck: every head's nine steps, drawn in the browser --------------------------------------------------------
# A pick of the deck is a head (a layer and its index) of the kind the page's radio picked, and a step of it, for the
# query its select follows: "1:3:4" is layer 1's head 3 at step 5 (Q·Kᵀ). The part of a head ("1:3") holds what its
# every step shows (why scaling matters for the query); the part keyed "" what every pick shows (the caption, the
# whole head's formula): the browser takes a pick's blocks from its own part, then from its prefixes'
# (browser_view.js deckPart).
def blocks() -> list[dict]:
    """How the page's deck is laid out, every step alike (as the page was): the step's picture on the left (three
    fifths; on a phone first), how to read it, the full matrices folded under it; on the right what the step
    computes: its name, its formula, the text, the followed row and the checks. Under them the caption, the whole
    head in one line and why scaling matters (the head's, for the query)."""
    figure = lambda name: {"type": "figure", "id": name, "csv": True}        # noqa: E731
    text = lambda name, size=None: {"type": "text", "id": name, **({"size": size} if size else {})}   # noqa: E731
    heading = lambda name: {"type": "heading", "id": name, "size": "section"}   # noqa: E731
    return [{"type": "columns", "widths": [3, 2], "columns": [
        [figure("picture-0"), figure("picture-1"), text("window-note"), text("cosine-caption"),
         {"type": "details", "id": "full", "title": t("step.full"), "blocks": [figure("full-0"), figure("full-1")]}],
        [heading("step-heading"), {"type": "formula", "id": "formula"},
         text("step-text", "body"), text("row-caption"), {"type": "table", "id": "row", "scroll": True},
         {"type": "notes", "id": "checks"}]]},
        text("caption"),
        heading("whole-header"), text("whole-text", "body"), {"type": "formula", "id": "whole-formula"},
        heading("why-header"), figure("scaling"), {"type": "table", "id": "scaling-summary"}, text("why-text", "body")]


def step_words() -> dict:
    """The deck's step row: the steps by their short names, ◀ Previous and Next ▶ (the page's own words)."""
    return {"step": t("step.step"), "step_help": "", "previous": t("step.previous"), "next": t("step.next"),
            "step_names": [f"{i + 1} {short_name(i)}" for i in range(len(STEPS))]}


def sentence_sig(traced: Traced, followed: FollowedQuery, page_look: Look, modebar: bool) -> str:
    """What the page's deck is built for, as the browser names it: the sentence (trace), the kind, query and window,
    the look (words and type scale), the modebar."""
    at = (traced.trace_key, followed, page_look, modebar)
    return payloads.view_sig("step", at)


def heads_of(cfg, kind: str) -> list[tuple[int, int]]:
    """Every head of the kind's layers, as the deck picks them: (layer, head)."""
    return [(layer, head) for layer in range(schema.n_layers(cfg, kind)) for head in range(cfg.n_heads)]


@view.shared_cached
def built_deck(traced: Traced, followed: FollowedQuery, page_look: Look, modebar: bool,
               first: tuple[int, int, int] | None) -> payloads.Body:
    """The browser's data for this kind, query and view: built once, for every session of the worker. `first`: only
    that (layer, head, step) (a new sentence's, kind's or query's first run); the view asks for the rest once it has
    drawn it, which reuses the parts the first one made (the encoder's 3 x 8 heads of en-es: ~1 s, bench/step_ab.py)."""
    cfg = traced.model.config
    parts = {"": every_pick_part(cfg)}
    for layer, head in heads_of(cfg, followed.kind) if first is None else [first[:2]]:
        one = followed.head(layer, head)
        parts[f"{layer}:{head}"] = built_scaling(traced, one, page_look, modebar)
        for step in range(len(STEPS)) if first is None else [first[2]]:
            if step == 0 and head:        # the layer's input: every head's, sent once as head 0's (deckPart's same)
                parts[f"{layer}:0:0"] = built_step(traced, followed.head(layer, 0), step, page_look, modebar)
                parts[f"{layer}:{head}:0"] = {"same": f"{layer}:0:0"}
            else:
                parts[f"{layer}:{head}:{step}"] = built_step(traced, one, step, page_look, modebar)
    return payloads.encode(payloads.deck(parts, blocks(), HEAD_STEP_PICK, {followed.kind: schema.n_layers(cfg, followed.kind)},
                                         template_spec(go.Figure()), page_look.words,
                                         {"text_px": page_look.scale.text,
                                          "sentence": sentence_sig(traced, followed, page_look, modebar),
                                          "whole": first is None, "modebar": modebar,
                                          "url_names": url_names(HEAD_STEP_PICK)},
                                         steps=len(STEPS), said=step_words(), heads=cfg.n_heads, ahead="step"))


@view.shared_part
def built_step(traced: Traced, followed: FollowedHead, step: int, page_look: Look, modebar: bool) -> dict:
    """One step's part of the deck (its pictures drawn in `page_look`, with or without the modebar)."""
    return step_part(head_of(traced, followed), step)


@view.shared_part
def built_scaling(traced: Traced, followed: FollowedHead, page_look: Look, modebar: bool) -> dict:
    """A head's part of the deck: why scaling matters (drawn in `page_look`, with or without the modebar)."""
    return scaling_part(head_of(traced, followed))


def checked_pick(cfg, kind: str, pick: dict) -> dict:
    """A pick ({layer, head, step}) within the kind's layers, the heads and the steps."""
    within = lambda value, hi: min(max(int(value), 0), hi)                   # noqa: E731
    return {"layer": within(pick["layer"], schema.n_layers(cfg, kind) - 1), "head": within(pick["head"], cfg.n_heads - 1),
            "step": within(pick["step"], len(STEPS) - 1)}


def pick_csv(traced: Traced, followed: FollowedQuery):
    """The CSV of a picture the browser asked for: every number of the matrix a step's picture shows, or why
    scaling matters' bars."""
    def make(asked: dict) -> dict:
        pick = checked_pick(traced.model.config, followed.kind, asked)
        h = head_of(traced, followed.head(pick["layer"], pick["head"]))
        if asked.get("figure") == "scaling":
            made = scaling(h)
            return {"name": safe_filename(made.filename) + ".csv", "text": made.numbers.to_csv()}
        figures = step_figures(VIEWS[pick["step"]](h))
        _, name, frame = figures.get(str(asked.get("figure")), figures["picture-0"])
        return {"name": safe_filename(name) + ".csv", "text": frame().to_csv()}
    return make


def step_view(traced: Traced, followed: FollowedQuery, pick: dict) -> None:
    """Every head's steps and why scaling matters, drawn in the browser (a deck of the kind's heads x the nine
    steps): the layer, the head and the step are picked there, with no script run."""
    page_look, modebar = look(), plotly_config("")["displayModeBar"]
    sentence = sentence_sig(traced, followed, page_look, modebar)
    whole = whole_asked(sentence, STEP_THROUGH)
    first = None if whole else (pick["layer"], pick["head"], pick["step"])
    body = built_deck(traced, followed, page_look, modebar, first)
    browser_view(STEP_THROUGH, HEAD_STEP_PICK, body, pick, {"sentence": sentence, "whole": whole},
                 csv=pick_csv(traced, followed))


def controls(ctx) -> tuple[str, int]:
    """The kind on one line, the query under it (the layer, head and step are picked in the deck under them).
    Returns (kind, query)."""
    # the options' names made in this run's language (a function calling t() later, outside a run, spoke English)
    kind = st.radio(t("step.kind"), KINDS, horizontal=True, key=view.seed(STEP_THROUGH, view.read(view.KIND, choices=KINDS), "kind"),
                    format_func={k: kind_title(k) for k in KINDS}.get, on_change=_forget_query,
                    label_visibility="collapsed")
    q_labels, _ = attention_labels(ctx.trace.meta, kind)
    reads = ctx.trace.meta["tgt_in_tokens"]
    n_q = len(q_labels)
    query_key = view.key(STEP_THROUGH, "query", kind)
    # the first word of the sentence, not a two-style model's <modern> that leads it
    _init_state(view.QUERY, first_word(schema.query_tokens(ctx.trace.meta, kind)), 0, n_q - 1, "query", kind)
    c_query, _ = st.columns(CONTROL_COLUMNS)
    query = c_query.selectbox(t("step.query"), list(range(n_q)), key=query_key,
                              format_func={i: q_labels[i] if kind == "encoder" else
                                           t("step.query.reads", token=q_labels[i], reads=reads[i])
                                           for i in range(n_q)}.get)
    return kind, query


def head_and_step(cfg, kind: str) -> dict:
    """The deck's pick from the URL (the browser's picks write it): a layer of the kind, a head, a step."""
    return {"layer": view.read(view.LAYER, hi=schema.n_layers(cfg, kind) - 1),
            "head": view.read(view.HEAD, default=0, lo=0, hi=cfg.n_heads - 1),
            "step": view.read(view.STEP, default=FIRST_STEP, hi=len(STEPS) - 1)}


def render() -> None:
    ctx = need_context()
    st.title(t("step.title"))
    # a phone: the picture first and its pickers under it (they filled its whole first screen)
    picture = st.container() if on_phone() else None
    kind, query = controls(ctx)
    pick = head_and_step(ctx.model.config, kind)
    view.write_url({view.KIND: kind, view.QUERY: query, view.LAYER: pick["layer"], view.HEAD: pick["head"],
                    view.STEP: pick["step"]})
    with picture if picture is not None else st.container():
        step_view(ctx.traced, FollowedQuery(kind, query, window_size()), pick)


if __name__ == "__main__":
    render()
