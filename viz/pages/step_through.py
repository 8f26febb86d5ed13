"""Step-through: one head, one query token, from the layer input to the head's output, on real numbers."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from model.capture import schema
from viz.figures.attention import KIND_TITLES, attention_heatmap
from viz.figures.step import masked_scores_figure, scaling_bars, step_heatmap
from viz.figures.style import plotly_text
from model.analysis.attention_math import (dim_labels, head_projection, head_steps, linear_arrays, max_abs_error,
                                           scaling_comparison)
from model.capture.schema import sublayer_names
from viz.state import qp_choice, qp_int, set_query
from viz.text import attention_labels
from viz.ui import layer_head_pickers, matrix_frame, need_context, show_figure

KINDS = list(schema.KINDS)
STEPS = ["$X$: the input", "$Q = XW^Q$", "$K = XW^K$", "$V = XW^V$", r"$QK^\top$", r"$\div\sqrt{d_k}$",
         r"$+\,M$ (the mask)", "softmax", r"weights $\cdot\,V$"]
SHORT = ["X", "Q", "K", "V", "Q·Kᵀ", "÷√dₖ", "+ mask", "softmax", "· V"]   # fits one line on a projector
STEP_KEY = "step-step"
TOLERANCE = 1e-4   # float32 model vs float64 recomputation


@dataclass
class View:
    """What one step shows: figures (figure, filename, CSV frame), the followed row as numbers, text."""
    figures: list = field(default_factory=list)
    row: object = None           # a one-row DataFrame
    row_caption: str = ""
    text: str = ""
    latex: str = ""
    checks: list = field(default_factory=list)   # (description, max error)


def _init_state(key: str, url_name: str, default: int, lo: int, hi: int) -> None:
    """Seed a widget from the URL once; afterwards the widget owns its value (no default+state clash)."""
    if key not in st.session_state:
        st.session_state[key] = qp_int(url_name, default, lo, hi)
    elif not lo <= st.session_state[key] <= hi:   # a shorter sentence than before
        st.session_state[key] = default


def _move(delta: int) -> None:
    st.session_state[STEP_KEY] = min(len(STEPS) - 1, max(0, st.session_state[STEP_KEY] + delta))


def _forget_query() -> None:
    """A new attention kind has other query tokens: do not carry the old index over."""
    if "query" in st.query_params:
        del st.query_params["query"]


def _row(matrix: np.ndarray, index: int, row_labels: list[str], col_labels: list[str]):
    return matrix_frame(np.asarray(matrix)[index: index + 1], row_labels[index: index + 1], col_labels).round(4)


ctx = need_context()
trace, cfg, A = ctx.trace, ctx.bundle.config, ctx.trace.arrays
H, D, DH = cfg.n_heads, cfg.d_model, cfg.d_head

st.title("Step-through: one head")
st.markdown(
    "One attention head, one query token, every multiplication in order, with the numbers the model computed "
    "on your sentence. Each head projects the layer input $X$ into queries, keys and values of size "
    f"$d_k = d_{{model}}/h = {D}/{H} = {DH}$, compares each query with every key, and returns a weighted average "
    "of the values. Use **Next** to walk through; the followed query is framed in red in every matrix.")
st.latex(r"z = \mathrm{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}} + M\right) XW^V")

kind = st.radio("Attention", KINDS, index=KINDS.index(qp_choice("kind", KINDS, "encoder")), horizontal=True,
                key="step-kind", format_func=KIND_TITLES.get, on_change=_forget_query)
n_layers = schema.n_layers(cfg, kind)
layer, head = layer_head_pickers(n_layers, H, key=f"step-{kind}", allow_mean=False)
names = sublayer_names(kind, layer, cfg.norm_first)

q_labels, k_labels = attention_labels(trace.meta, kind)
reads = trace.meta["tgt_in_tokens"]
n_q = len(q_labels)


def _query_label(i: int) -> str:
    return q_labels[i] if kind == "encoder" else f"{q_labels[i]}   (reads {reads[i]})"


query_key = f"step-query-{kind}"
_init_state(query_key, "query", 0, 0, n_q - 1)
query = st.selectbox("Query token (the row followed)", list(range(n_q)), key=query_key, format_func=_query_label)

_init_state(STEP_KEY, "step", 0, 0, len(STEPS) - 1)
c_prev, c_steps, c_next = st.columns([1, 8, 1], vertical_alignment="center")
c_prev.button("◀ Previous", on_click=_move, args=(-1,), disabled=st.session_state[STEP_KEY] == 0,
              width="stretch", key="step-prev")
c_next.button("Next ▶", on_click=_move, args=(1,), disabled=st.session_state[STEP_KEY] == len(STEPS) - 1,
              width="stretch", key="step-next")
step = c_steps.radio("Step", list(range(len(STEPS))), key=STEP_KEY, horizontal=True,
                     format_func=lambda i: f"{i + 1} {SHORT[i]}")
set_query(kind=kind, query=query, step=step)

# -- the real numbers ------------------------------------------------------------------------------
x_q, x_kv = A[names.query_input], A[names.kv_input]                   # [Tq,D], [Tk,D]
q, k, v = (A[schema.attn_name(kind, layer, n)][head] for n in "qkv")         # [Tq,Dh], [Tk,Dh], [Tk,Dh]
scores, pattern, z = (A[schema.attn_name(kind, layer, n)][head] for n in ("scores", "pattern", "z"))
mine = head_steps(q, k, v, names.causal)                              # recomputed in float64
module = ctx.bundle.model.get_submodule(names.attn)
dims, model_dims = dim_labels(DH), dim_labels(D)
# K and V rows are keys: in self-attention follow the query's own token, in cross-attention the
# source token this query attends to most.
key_row = query if kind != "cross" else int(np.argmax(pattern[query]))
key_row_note = ("the query token's own key row" if kind != "cross" else
                f"the source token this query attends to most ({k_labels[key_row]})")
tag = f"{ctx.model_id}-{kind}-L{layer}-H{head}"
where = f"{KIND_TITLES[kind]}, layer {layer}, head {head}"
q_side = "decoder" if kind != "encoder" else "source"
kv_side = "encoder output (memory)" if kind == "cross" else ("decoder" if kind == "decoder" else "source")


def view_input() -> View:
    x_name = "embeddings" if layer == 0 and not cfg.norm_first else "previous layer's output"
    fig = step_heatmap(x_q, q_labels, model_dims, f"X [{n_q} × {D}]: {q_side} input of layer {layer}",
                       "dimension", "token", highlight=query, show_values=False)
    view = View([(fig, f"{tag}-X", matrix_frame(x_q, q_labels, model_dims))], _row(x_q, query, q_labels, model_dims))
    if kind == "encoder" or kind == "decoder":
        view.text = (f"The input of layer {layer}: one row of $d_{{model}} = {D}$ numbers per token. It is the "
                     f"{x_name}" + (" (token embedding × √d_model + positional encoding)." if layer == 0 else ".")
                     + " Queries, keys and values are all made from this one matrix.")
    else:
        memory = step_heatmap(x_kv, k_labels, model_dims, f"Memory [{len(k_labels)} × {D}]: the encoder's output",
                              "dimension", "source token", show_values=False)
        view.figures.append((memory, f"{tag}-memory", matrix_frame(x_kv, k_labels, model_dims)))
        view.text = ("Cross-attention reads two inputs. Queries come from the decoder stream (after its masked "
                     "self-attention and Add & Norm); keys and values come from the encoder's final output, the "
                     "memory, which is the same for every decoder layer.")
    if cfg.norm_first:
        view.text += " (This model is pre-norm, so X is the LayerNorm of the residual stream.)"
    view.row_caption = f"Row {q_labels[query]} of X"
    return view


def view_projection(which: str) -> View:
    source, matrix = {"Q": (x_q, q), "K": (x_kv, k), "V": (x_kv, v)}[which]
    labels, row = (q_labels, query) if which == "Q" else (k_labels, key_row)
    weight, bias = linear_arrays(getattr(module, f"w_{which.lower()}"))
    role = {"Q": "what this token is looking for", "K": "what each token offers to be found by",
            "V": "what each token hands over when it is attended to"}[which]
    side = q_side if which == "Q" else kv_side
    fig = step_heatmap(matrix, labels, dims, f"{which} for head {head} [{len(labels)} × {DH}], from the {side}",
                       "dimension of the head (d_k)", "token", highlight=row, show_values=False)
    view = View([(fig, f"{tag}-{which}", matrix_frame(matrix, labels, dims))], _row(matrix, row, labels, dims))
    w_h = rf"W^{which}_{{{head}}}"
    view.latex = rf"{which}_{{{head}}} = X {w_h} + b^{which}_{{{head}}},\quad {w_h} \in \mathbb{{R}}^{{{D}\times{DH}}}"
    view.text = (f"Head {head} takes its own {DH} columns of the {D}×{D} matrix $W^{which}$, so each token becomes "
                 f"{DH} numbers: {role}." + (" In cross-attention these come from the encoder's memory." if
                                            which != "Q" and kind == "cross" else ""))
    view.row_caption = f"Row {labels[row]} of {which}" + ("" if which == "Q" else f": {key_row_note}")
    redone = head_projection(source, weight, bias, head, H)
    view.checks.append((f"$XW^{which} + b$ recomputed from the model's weights vs the captured ${which}$",
                        max_abs_error(redone, matrix)))
    return view


def view_raw() -> View:
    fig = step_heatmap(mine.raw, q_labels, k_labels, f"Q·Kᵀ [{n_q} × {len(k_labels)}]: raw dot products",
                       "key", "query", value_name="q·k", highlight=query)
    view = View([(fig, f"{tag}-QK", matrix_frame(mine.raw, q_labels, k_labels))],
                _row(mine.raw, query, q_labels, k_labels),
                latex=r"s_{ij} = q_i \cdot k_j = \sum_{d=1}^{d_k} q_{id}\,k_{jd}")
    view.text = ("Every query is compared with every key by a dot product: large when the two vectors point the "
                 f"same way. The row of {q_labels[query]} says how well each key matches what it looks for. "
                 f"These raw numbers spread from {mine.raw.min():.1f} to {mine.raw.max():.1f}.")
    view.row_caption = f"Row {q_labels[query]}: its dot product with every key"
    return view


def view_scaled() -> View:
    fig = step_heatmap(mine.scaled, q_labels, k_labels, f"Q·Kᵀ / √{DH}: the scores", "key", "query",
                       value_name="score", highlight=query)
    view = View([(fig, f"{tag}-scores", matrix_frame(scores, q_labels, k_labels))],
                _row(mine.scaled, query, q_labels, k_labels),
                latex=rf"\frac{{q_i\cdot k_j}}{{\sqrt{{d_k}}}} = \frac{{q_i\cdot k_j}}{{\sqrt{{{DH}}}}} = "
                      rf"\frac{{q_i\cdot k_j}}{{{np.sqrt(DH):.3g}}}")
    view.text = (f"Divide by $\\sqrt{{d_k}} = {np.sqrt(DH):.3g}$. Same ranking of keys, smaller spread, so the "
                 "softmax stays soft: see *Why divide by √d_k?* below.")
    view.row_caption = f"Row {q_labels[query]} after scaling"
    view.checks.append((r"$QK^\top/\sqrt{d_k}$ recomputed vs the model's scores", max_abs_error(mine.scaled, scores)))
    return view


def view_mask() -> View:
    fig = masked_scores_figure(mine.masked, q_labels, k_labels, "Scores + mask (grey = −∞)" if names.causal else
                               "Scores + mask (nothing masked here)", highlight=query)
    view = View([(fig, f"{tag}-masked", matrix_frame(mine.masked, q_labels, k_labels))],
                _row(mine.masked, query, q_labels, k_labels),
                latex=r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}" if names.causal else
                r"M_{ij} = 0 \ \text{for every real token}")
    if names.causal:
        n_hidden = int((~mine.allowed[query]).sum())
        view.text = ("The decoder must not peek at the words it has yet to write, so every key after the query "
                     f"gets $-\\infty$. Row {q_labels[query]} hides {n_hidden} future position(s); after the "
                     "softmax their weight is exactly 0.")
    else:
        view.text = ("The mask adds $-\\infty$ only where a key must be hidden: padding when sentences are batched, "
                     "and the future in the decoder. A single sentence has no padding and "
                     + ("cross-attention may read every source token" if kind == "cross" else
                        "the encoder sees in both directions") + ", so nothing changes here.")
    view.row_caption = f"Row {q_labels[query]} after the mask"
    return view


def view_softmax() -> View:
    fig = attention_heatmap(pattern, q_labels, k_labels, f"softmax: attention weights, {where}", highlight_row=query)
    view = View([(fig, f"{tag}-weights", matrix_frame(pattern, q_labels, k_labels))],
                _row(pattern, query, q_labels, k_labels),
                latex=r"a_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}},\qquad \sum_j a_{ij} = 1")
    top = int(np.argmax(pattern[query]))
    view.text = (f"Exponentiate and normalise each row: weights between 0 and 1 that sum to 1. "
                 f"{q_labels[query]} gives its largest weight, {pattern[query, top]:.2f}, to {k_labels[top]}.")
    view.row_caption = f"Row {q_labels[query]}: its attention weights (sum {pattern[query].sum():.4f})"
    view.checks.append(("softmax recomputed vs the model's weights", max_abs_error(mine.weights, pattern)))
    return view


def view_output() -> View:
    fig = step_heatmap(z, q_labels, dims, f"z = weights · V for head {head} [{n_q} × {DH}]",
                       "dimension of the head (d_k)", "query token", highlight=query, show_values=False)
    view = View([(fig, f"{tag}-z", matrix_frame(z, q_labels, dims))], _row(z, query, q_labels, dims),
                latex=r"z_i = \sum_j a_{ij}\, v_j")
    view.text = (f"Each query's output is the average of the value rows, weighted by its attention. This is head "
                 f"{head}'s contribution; the *Multi-head assembly* page shows how the {H} heads are combined.")
    view.row_caption = f"Row {q_labels[query]} of the head output"
    view.checks.append(("weights · $V$ (the model's own weights and $V$) vs the model's head output $z$",
                        max_abs_error(pattern.astype(np.float64) @ v.astype(np.float64), z)))
    return view


VIEWS = [view_input, lambda: view_projection("Q"), lambda: view_projection("K"), lambda: view_projection("V"),
         view_raw, view_scaled, view_mask, view_softmax, view_output]


def show_view(view: View) -> None:
    left, right = st.columns([3, 2])
    with left:
        for i, (fig, filename, frame) in enumerate(view.figures):
            show_figure(fig, filename, frame, key=f"step-fig-{i}")
    with right:
        st.subheader(f"Step {step + 1} of {len(STEPS)}: {STEPS[step]}")
        if view.latex:
            st.latex(view.latex)
        st.markdown(view.text)
        st.caption(view.row_caption)
        st.dataframe(view.row)
        for description, error in view.checks:
            ok = error < TOLERANCE
            (st.success if ok else st.error)(f"Check — {description}: max |difference| = {error:.2e}"
                                             + ("" if ok else " (larger than expected!)"))


show_view(VIEWS[step]())

# -- why the scaling matters ------------------------------------------------------------------------
st.header(r"Why divide by $\sqrt{d_k}$?")
comparison = scaling_comparison(mine.raw[query], DH, mine.allowed[query])
show_figure(scaling_bars(comparison.unscaled, comparison.scaled, k_labels, DH,
                         title=f"Query {plotly_text(q_labels)[query]}: the same dot products, softmaxed two ways",
                         masked=~mine.allowed[query]),
            f"{tag}-q{query}-scaling", matrix_frame(np.stack([comparison.unscaled, comparison.scaled]),
                                                    ["without scaling", "with scaling"], k_labels),
            key="step-scaling")
allowed_raw = mine.raw[query][mine.allowed[query]]
summary = matrix_frame(
    np.array([[comparison.max_unscaled, comparison.entropy_unscaled, allowed_raw.std()],
              [comparison.max_scaled, comparison.entropy_scaled, allowed_raw.std() / np.sqrt(DH)]]),
    ["softmax(q·k)", f"softmax(q·k / √{DH})"], ["max weight", "entropy (bits)", "spread of scores (std)"]).round(3)
st.dataframe(summary, width="content")
st.markdown(
    f"A dot product adds up $d_k$ products: if the components of $q$ and $k$ have mean 0 and variance 1, $q\\cdot k$ "
    f"has variance $d_k$, so its typical size grows like $\\sqrt{{d_k}}$ "
    f"(here $\\sqrt{{{DH}}} \\approx {np.sqrt(DH):.1f}$). "
    "Fed such large numbers, the softmax **saturates**: nearly all weight lands on one key and its gradient for "
    "the others is almost zero, so the head stops learning. Dividing by $\\sqrt{d_k}$ brings the variance back to "
    "about 1. The model was trained with the scaling, so the left chart is what these same vectors would give "
    "without it (lower entropy = a sharper, more one-hot distribution).")
