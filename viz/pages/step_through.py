"""Step-through: one head, one query token, from the layer input to the head's output, on real numbers."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np
import streamlit as st

from model.analysis.attention_math import (HeadSteps, dim_labels, head_projection, head_steps,
                                           max_abs_error, scaling_comparison)
from model.analysis.vectors import cosine_similarity
from model.capture import schema
from model.capture.schema import sublayer_names
from viz.figures.attention import attention_heatmap, map_window, window_around
from viz.figures.step import masked_scores_figure, scaling_bars, step_heatmap
from viz.figures.style import Labels, plotly_text
from viz.figures.vectors import cosine_map
from viz.core.i18n import kind_title, t
from viz.core import view
from viz.core.text import attention_labels, first_word
from viz.elements.ui import (data_table, layer_head_pickers, look, matrix_frame, need_context, on_phone, show_figure,
                             type_scale)

OWN = view.Own("viz.pages.step_through")  # this module's own session values
STEP_THROUGH = OWN.value("step")                  # step-<control>: this page's widgets

KINDS = list(schema.KINDS)
# The steps' names: formulas as they are, words as catalogue keys (step.*), read by say()
STEPS = ["step.steps.input", "$Q = XW^Q$", "$K = XW^K$", "$V = XW^V$", r"$QK^\top$", r"$\div\sqrt{d_k}$",
         "step.steps.mask", "softmax", "step.steps.output"]
SHORT = ["X", "Q", "K", "V", "Q·Kᵀ", "÷√dₖ", "step.short.mask", "softmax", "· V"]   # fits one line on a projector
FIRST_STEP = 0   # the page opens where a lesson starts: the input X, then Q, K, V, the scores… one Next each
TOLERANCE = 1e-4   # float32 model vs float64 recomputation
# One row of controls: layer + head (two columns inside), the query, then the two buttons. The buttons
# get ~1/5 of the row each, so "◀ Previous" is whole on a 1280x720 projector with the sidebar open
# (at 1/10 of a row it was cut to "◀ Pre…").
CONTROL_COLUMNS = [2.4, 2.0, 1.25, 1.05]
def plot_px() -> int:
    """The plot area of a matrix in the left three fifths of the page at 1280x720: wider in presenter mode,
    where the sidebar is folded away."""
    return int(picture_px() - 130)
FORMULA = r"z = \mathrm{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}} + M\right) XW^V"


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
STEP_ROLE_KEYS = {"K": "step.role.K", "Q": "step.role.Q", "V": "step.role.V"}


@dataclass
class View:
    """What one step shows: figures (figure, filename, CSV frame), the followed row as numbers, text."""
    figures: list = field(default_factory=list)
    row: object = None           # a one-row DataFrame
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


def load_head(ctx, kind: str, layer: int, head: int, query: int) -> Head:
    cfg, arrays = ctx.model.config, ctx.trace.arrays
    names = sublayer_names(kind, layer, cfg.norm_first)
    q_labels, k_labels = attention_labels(ctx.trace.meta, kind)
    q, k, v, scores, pattern, z = (arrays[schema.attn_name(kind, layer, n)][head]
                                   for n in ("q", "k", "v", "scores", "pattern", "z"))
    # a long sentence through a window around the followed query (the query picker moves it) and around the key
    # it reads (cross-attention: the source token it attends to most)
    size = window_size()
    key_row = query if kind != "cross" else int(np.argmax(pattern[query]))
    return Head(kind, layer, head, query, cfg, names, ctx.model, q_labels, k_labels,
                arrays[names.query_input], arrays[names.kv_input], q, k, v, scores, pattern, z,
                head_steps(q, k, v, names.causal), f"{ctx.model_id}-{kind}-L{layer}-H{head}",
                window_around(query, len(q_labels), size), window_around(key_row, len(k_labels), size))


def _init_state(value: view.Value, default: int, lo: int, hi: int, *part) -> None:
    """Seed the widget step-<part> from the URL once; afterwards the widget owns its value (no default+state
    clash)."""
    if not view.has(STEP_THROUGH, *part):
        view.put(STEP_THROUGH, view.read(value, default=default, lo=lo, hi=hi), *part)
    elif not lo <= view.get(STEP_THROUGH, *part) <= hi:   # a shorter sentence than before
        view.put(STEP_THROUGH, default, *part)


def _move(delta: int) -> None:
    step = view.get(STEP_THROUGH, "step")
    view.put(STEP_THROUGH, min(len(STEPS) - 1, max(0, step + delta)), "step")


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


def _row(matrix: np.ndarray, index: int, row_labels: list[str], col_labels: list[str]):
    return matrix_frame(np.asarray(matrix)[index: index + 1], row_labels[index: index + 1], col_labels).round(4)


def vector_pictures(matrix: np.ndarray, labels: list[str], dims: list[str], name: str, full_title: str, x_title: str,
                    y_title: str, filename: str, shown: slice, highlight: int | None = None) -> tuple[tuple, tuple]:
    """A [tokens, dims] matrix as a class can read it (how alike its token vectors are, tokens x tokens) and
    the full matrix for the click behind it: ((figure, filename, CSV frame), (figure, filename, CSV frame)). The
    pictures show the tokens `shown` (highlight: a token's index in the whole sentence); the CSVs hold them all."""
    cos = cosine_similarity(matrix)
    mark = None if highlight is None else highlight - shown.start
    teach = cosine_map(cos[shown, shown], labels[shown],
                       Labels(t("step.cosine.title", name=name), y_title, y_title, t("step.cosine.value")), look(),
                       highlight=mark, width_px=picture_px())
    full = step_heatmap(matrix[shown], labels[shown], dims, Labels(full_title, x_title, y_title, t("step.axis.value")),
                        look(), highlight=mark, show_values=False, plot_px=plot_px())
    return ((teach, f"{filename}-cosine", matrix_frame(cos, labels, labels)),
            (full, filename, matrix_frame(matrix, labels, dims)))


# -- the nine steps ---------------------------------------------------------------------------------
def view_input(h: Head) -> View:
    cfg, layer, query = h.cfg, h.layer, h.query
    d = cfg.d_model
    model_dims = dim_labels(d)
    x_name = t("step.input.embeddings") if layer == 0 and not cfg.norm_first else t("step.input.previous")
    teach, full = vector_pictures(h.x_q, h.q_labels, model_dims, "X",
                                  t("step.input.title", n=h.n_q, d=d, side=h.q_side, layer=layer),
                                  t("step.axis.dimension"), t("step.axis.token"), f"{h.tag}-X", h.rows,
                                  highlight=query)
    view = View([teach], _row(h.x_q, query, h.q_labels, model_dims), full=[full])
    if h.kind in ("encoder", "decoder"):
        view.text = t("step.input.text", layer=layer, d=d, x_name=x_name,
                      pe=t("step.input.pe") if layer == 0 else "")
    else:
        teach, full = vector_pictures(h.x_kv, h.k_labels, model_dims, t("step.side.memory"),
                                      t("step.memory.title", n=len(h.k_labels), d=d), t("step.axis.dimension"),
                                      t("step.axis.source_token"), f"{h.tag}-memory", h.keys)
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
    w_h = rf"W^{which}_{{{head}}}"
    view.latex = (rf"{which}_{{{head}}} = X {w_h} + b^{which}_{{{head}}},\quad "
                  rf"{w_h} \in \mathbb{{R}}^{{{d}\times{d_head}}}")
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
    fig = step_heatmap(h.shown(raw), q_labels[h.rows], k_labels[h.keys], labels, look(),
                       highlight=h.mark)
    view = View([(fig, f"{h.tag}-QK", matrix_frame(raw, q_labels, k_labels))], _row(raw, query, q_labels, k_labels),
                latex=r"s_{ij} = q_i \cdot k_j = \sum_{d=1}^{d_k} q_{id}\,k_{jd}")
    view.text = t("step.raw.text", token=q_labels[query], low=f"{raw.min():.1f}", high=f"{raw.max():.1f}")
    view.row_caption = t("step.raw.row", token=q_labels[query])
    return view


def view_scaled(h: Head) -> View:
    scaled, q_labels, k_labels, query, d_head = h.mine.scaled, h.q_labels, h.k_labels, h.query, h.cfg.d_head
    labels = Labels(t("step.scaled.title", d_k=d_head), t("step.axis.key"), t("step.axis.query"),
                    t("step.axis.score"))
    fig = step_heatmap(h.shown(scaled), q_labels[h.rows], k_labels[h.keys], labels, look(),
                       highlight=h.mark)
    view = View([(fig, f"{h.tag}-scores", matrix_frame(h.scores, q_labels, k_labels))],
                _row(scaled, query, q_labels, k_labels),
                latex=rf"\frac{{q_i\cdot k_j}}{{\sqrt{{d_k}}}} = \frac{{q_i\cdot k_j}}{{\sqrt{{{d_head}}}}} = "
                      rf"\frac{{q_i\cdot k_j}}{{{np.sqrt(d_head):.3g}}}")
    view.text = t("step.scaled.text", root=f"{np.sqrt(d_head):.3g}")
    view.row_caption = t("step.scaled.row", token=q_labels[query])
    view.checks.append((t("step.scaled.check"), max_abs_error(scaled, h.scores)))
    return view


def view_mask(h: Head) -> View:
    masked, q_labels, k_labels, query, causal = h.mine.masked, h.q_labels, h.k_labels, h.query, h.names.causal
    fig = masked_scores_figure(h.shown(masked), q_labels[h.rows], k_labels[h.keys],
                               t("step.mask.title_causal") if causal else t("step.mask.title_none"), look(),
                               highlight=h.mark)
    view = View([(fig, f"{h.tag}-masked", matrix_frame(masked, q_labels, k_labels))],
                _row(masked, query, q_labels, k_labels),
                latex=r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}" if causal else
                r"M_{ij} = 0 \quad \forall j")
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
    fig = attention_heatmap(h.shown(pattern), q_labels[h.rows], k_labels[h.keys], look(),
                            t("step.softmax.title", where=h.where), highlight_row=h.mark,
                            masked=h.shown(~h.mine.allowed),
                            width_px=picture_px())
    view = View([(fig, f"{h.tag}-weights", matrix_frame(pattern, q_labels, k_labels))],
                _row(pattern, query, q_labels, k_labels),
                latex=r"a_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}},\qquad \sum_j a_{ij} = 1")
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
    fig = step_heatmap(z[h.rows], q_labels[h.rows], dims, labels, look(), highlight=h.mark, show_values=False,
                       plot_px=plot_px())
    view = View([(fig, f"{h.tag}-z", matrix_frame(z, q_labels, dims))], _row(z, query, q_labels, dims),
                latex=r"z_i = \sum_j a_{ij}\, v_j")
    view.text = t("step.output.text", head=h.head, heads=h.cfg.n_heads)
    view.row_caption = t("step.output.row", token=q_labels[query])
    view.checks.append((t("step.output.check"),
                        max_abs_error(h.pattern.astype(np.float64) @ h.v.astype(np.float64), z)))
    return view


VIEWS = [view_input, partial(view_projection, which="Q"), partial(view_projection, which="K"),
         partial(view_projection, which="V"), view_raw, view_scaled, view_mask, view_softmax, view_output]


# -- layout -------------------------------------------------------------------------------------------
def show_view(view: View, step: int) -> None:
    """The step's picture on the left, what it computes on the right."""
    left, right = st.columns([3, 2])
    with left:
        for i, (fig, filename, frame) in enumerate(view.figures):
            show_figure(fig, filename, frame, key=f"step-fig-{i}")
        if view.window_note:
            st.caption(view.window_note)
        if view.figures and view.full:
            st.caption(t("step.cosine.caption"))
        if view.full:
            with st.expander(t("step.full")):
                for i, (fig, filename, frame) in enumerate(view.full):
                    show_figure(fig, filename, frame, key=f"step-full-{i}")
    with right:
        st.subheader(t("step.subheader", number=step + 1, total=len(STEPS), name=step_name(step)))
        if view.latex:
            st.latex(view.latex)
        st.markdown(view.text)
        st.caption(view.row_caption)
        data_table(view.row, digits=4)
        for description, error in view.checks:
            ok = error < TOLERANCE
            (st.success if ok else st.error)(t("step.check", description=description, error=f"{error:.2e}")
                                             + ("" if ok else " " + t("step.check.large")))


def controls(ctx) -> tuple[str, int, int, int, int]:
    """Kind on one line; layer, head, query and the Previous/Next buttons on the next; the steps under
    them. Returns (kind, layer, head, query, step)."""
    cfg = ctx.model.config
    kind = st.radio(t("step.kind"), KINDS, horizontal=True, key=view.seed(STEP_THROUGH, view.read(view.KIND, choices=KINDS), "kind"),
                    format_func=kind_title, on_change=_forget_query,
                    label_visibility="collapsed")
    q_labels, _ = attention_labels(ctx.trace.meta, kind)
    reads = ctx.trace.meta["tgt_in_tokens"]
    n_q = len(q_labels)
    query_key = view.key(STEP_THROUGH, "query", kind)
    # the first word of the sentence, not a two-style model's <modern> that leads it
    _init_state(view.QUERY, first_word(schema.query_tokens(ctx.trace.meta, kind)), 0, n_q - 1, "query", kind)
    _init_state(view.STEP, FIRST_STEP, 0, len(STEPS) - 1, "step")
    c_pick, c_query, c_prev, c_next = st.columns(CONTROL_COLUMNS, vertical_alignment="bottom")
    with c_pick:
        layer, head = layer_head_pickers(schema.n_layers(cfg, kind), cfg.n_heads, key=view.key(STEP_THROUGH, kind),
                                         allow_mean=False)
    query = c_query.selectbox(t("step.query"), list(range(n_q)), key=query_key,
                              format_func=lambda i: q_labels[i] if kind == "encoder" else
                              t("step.query.reads", token=q_labels[i], reads=reads[i]))
    c_prev.button(t("step.previous"), on_click=_move, args=(-1,), disabled=view.get(STEP_THROUGH, "step") == 0,
                  width="stretch", key=view.key(STEP_THROUGH, "prev"))
    c_next.button(t("step.next"), on_click=_move, args=(1,),
                  disabled=view.get(STEP_THROUGH, "step") == len(STEPS) - 1,
                  width="stretch", key=view.key(STEP_THROUGH, "next"))
    step = st.radio(t("step.step"), list(range(len(STEPS))), key=view.key(STEP_THROUGH, "step"), horizontal=True,
                    format_func=lambda i: f"{i + 1} {short_name(i)}", label_visibility="collapsed")
    return kind, layer, head, query, step


def why_scaling(h: Head) -> None:
    """The followed query's softmax with and without 1/√d_k, its entropy, and why it matters."""
    d_head, query, mine = h.cfg.d_head, h.query, h.mine
    st.header(t("step.why.header"))
    comparison = scaling_comparison(mine.raw[query], d_head, mine.allowed[query])
    show_figure(scaling_bars(comparison.unscaled, comparison.scaled, h.k_labels, d_head, look(),
                             title=t("step.why.title", token=plotly_text(h.q_labels)[query]),
                             masked=~mine.allowed[query], shown=h.keys),
                f"{h.tag}-q{query}-scaling", matrix_frame(np.stack([comparison.unscaled, comparison.scaled]),
                                                          [t("step.why.without"), t("step.why.with")], h.k_labels),
                key="step-scaling")
    allowed_raw = mine.raw[query][mine.allowed[query]]
    summary = matrix_frame(
        np.array([[comparison.max_unscaled, comparison.entropy_unscaled, allowed_raw.std()],
                  [comparison.max_scaled, comparison.entropy_scaled, allowed_raw.std() / np.sqrt(d_head)]]),
        ["softmax(q·k)", f"softmax(q·k / √{d_head})"],
        [t("step.why.max"), t("step.why.entropy"), t("step.why.spread")]).round(3)
    data_table(summary, width="content")
    st.markdown(t("step.why.text", d_k=d_head, root=f"{np.sqrt(d_head):.1f}"))


def render() -> None:
    ctx = need_context()
    cfg = ctx.model.config
    st.title(t("step.title"))
    # a phone: the picture first and its pickers under it (they filled its whole first screen)
    picture = st.container() if on_phone() else None
    kind, layer, head, query, step = controls(ctx)
    view.write_url({view.KIND: kind, view.QUERY: query, view.STEP: step})
    h = load_head(ctx, kind, layer, head, query)
    shown = VIEWS[step](h)
    shown.window_note = h.window_note
    with picture if picture is not None else st.container():
        show_view(shown, step)
    st.caption(t("step.caption"))
    st.header(t("step.whole.header"))
    st.markdown(t("step.whole.text", d_model=cfg.d_model, heads=cfg.n_heads, d_k=cfg.d_head))
    st.latex(FORMULA)
    why_scaling(h)


if __name__ == "__main__":
    render()
