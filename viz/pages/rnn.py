"""Before the Transformer: why attention exists. Two real GRU encoder-decoders trained on the reverse task, one
reading the input through attention and one through a single vector; the first's alignment beside the toy
Transformer's cross-attention on the same input, and both RNNs' accuracy against the input's length."""
from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis import rnn_alignment, zoo
from model.capture import schema
from model.errors import CheckpointError
from viz.figures.attention import attention_heatmap
from viz.figures.zoo import gallery
from viz.core.i18n import catalogue_keys, error_text, t, words
from viz.elements.rnn_view import RNN_SCORE_KEYS, accuracy_chart, model_name, rnn_look
from viz.services.models import model_ids
from viz.services.rnn import RNN_FOLDER, rnn_models, rnn_reading
from viz.services.traces import get_trace
from viz.services.training import make_example, parse_symbols
from viz.core import view
from viz.core.text import attention_labels, plain, position_labels
from viz.elements.ui import explained, look, matrix_frame, show_figure, type_scale

DEFAULT_INPUT = "a b c d e f g h"
TRANSFORMER = "toy-{task}"          # the shipped toy Transformer of the same task
MAX_TOKENS = 64
LOCAL_HALF_WIDTH = 1
SCORES = list(RNN_SCORE_KEYS)
# Catalogue keys of the zoo's weighting names, reused for the RNN's soft, hard and local variants
WEIGHT_NAME_KEYS = catalogue_keys("zoo.weight_name", "soft", "hard")
FORMULAS = (
    r"\text{no attention:}\quad c_i=c=[\overrightarrow{h}_S;\overleftarrow{h}_1]\quad\text{for every step } i",
    r"s_i=\mathrm{GRU}\big(s_{i-1},\,[y_{i-1};\,c_i]\big),\qquad p(y_i)=\mathrm{softmax}\big(W_o\tanh(W_r[s_i;c_i;y_{i-1}])\big)",
    r"\text{Bahdanau (additive):}\quad e_{ij}=v^\top\tanh(W s_{i-1}+U h_j)",
    r"\text{Luong dot:}\quad e_{ij}=s_{i-1}^\top h_j,\qquad \text{Luong general:}\quad e_{ij}=s_{i-1}^\top W h_j",
    r"a_{ij}=\frac{\exp e_{ij}}{\sum_{j'}\exp e_{ij'}},\qquad c_i=\sum_j a_{ij}\,h_j",
    r"\text{Transformer:}\quad \mathrm{softmax}\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V,"
    r"\quad Q\ \text{from the decoder},\ K,V\ \text{from the encoder}",
)


def controls() -> tuple[list[str], str]:
    c1, c2 = st.columns([5, 6])
    text = c1.text_input(t("rnn.input"), max_chars=80,
                         key=view.seeded("rnn-input", view.read(view.RNN_INPUT, default=DEFAULT_INPUT)))
    score = c2.radio(t("rnn.score"), SCORES, horizontal=True,
                     key=view.seeded("rnn-score", view.read(view.SCORE, choices=SCORES, default="additive")), format_func={s: t(RNN_SCORE_KEYS[s]) for s in RNN_SCORE_KEYS}.get)
    try:
        symbols = parse_symbols(text)
    except ValueError as e:
        st.warning(t("rnn.input.bad", error=plain(error_text(e)), default=DEFAULT_INPUT))
        symbols = parse_symbols(DEFAULT_INPUT)
    view.write_url({view.RNN_INPUT: " ".join(symbols) if text.strip() else None, view.SCORE: score})
    return symbols, score


def alignment_map(weights, rows, cols, title: str):
    """One alignment map in the half of the page its column has, its axes named as the RNN's."""
    return attention_heatmap(weights, rows, cols, rnn_look(look()), title=title,
                             width_px=type_scale().column_px())


def transformer_cross(task: str, text: str):
    """(weights [T,S] of the toy Transformer's last cross-attention layer, heads averaged, rows, cols, its output)
    or None when the toy model is not installed."""
    model_id = TRANSFORMER.format(task=task)
    if model_id not in model_ids():
        return None
    trace = get_trace(model_id, text, None, 1, MAX_TOKENS)
    rows, cols = attention_labels(trace.meta, "cross")
    return schema.stacked(trace, "cross")[-1].mean(0), rows, cols, trace.meta["translation"], model_id


def alignment_pair(task: str, score: str, text: str):
    """The picture: the RNN's alignment beside the Transformer's cross-attention. Returns both for the words."""
    reading = rnn_reading(RNN_FOLDER, score, text)
    rows, cols = position_labels(reading.out_tokens), position_labels(reading.src_tokens)
    other = transformer_cross(task, text)
    left, right = st.columns(2)
    with left:
        fig = alignment_map(reading.weights, rows, cols, t("rnn.fig.rnn", model=model_name(score, words())))
        show_figure(fig, f"rnn-{task}-{score}-alignment", matrix_frame(reading.weights, rows, cols), key="rnn-align")
    with right:
        if other is None:
            st.info(t("rnn.no_transformer", model=TRANSFORMER.format(task=task)))
        else:
            weights, t_rows, t_cols, _out, model_id = other
            fig = alignment_map(weights, t_rows, t_cols, t("rnn.fig.transformer", model=model_id))
            show_figure(fig, f"rnn-{task}-transformer-cross", matrix_frame(weights, t_rows, t_cols), key="rnn-cross")
    return reading, other


def outputs(task: str, symbols: list[str], reading, other) -> None:
    """What each model wrote, against the right answer; the agreement of the two alignments."""
    answer = " ".join(make_example(task, symbols).answer)
    plain_rnn = rnn_reading(RNN_FOLDER, "none", " ".join(symbols))
    wrote = [(model_name(reading.attention, words()), reading.output), (model_name("none", words()), plain_rnn.output)]
    if other is not None:
        wrote.append((other[4], other[3]))
    mark = lambda out: "✓" if out == answer else "✗"                       # noqa: E731
    lines = [t("rnn.wrote", model=plain(name), output=plain(out) or "∅", mark=mark(out)) for name, out in wrote]
    st.markdown("  \n".join([t("rnn.answer", answer=plain(answer))] + lines))
    if other is not None:
        same, rows = rnn_alignment.same_focus(reading.weights, other[0])
        # "both read it backwards" only where they do: at 16 symbols the toy Transformer wrote a wrong answer and the
        # two agreed at 0 of 8 steps
        both_right = mark(reading.output) == mark(other[3]) == "✓"
        st.caption(t("rnn.read" if both_right and 2 * same >= rows else "rnn.read.apart", same=same, rows=rows))
    st.caption(t("rnn.one_vector", d=plain_rnn.context.shape[1], steps=plain_rnn.context.shape[0],
                 change=f"{rnn_alignment.context_change(plain_rnn.context):.0f}",
                 moved=f"{rnn_alignment.context_change(reading.context):.2f}"))


def accuracy_section(metrics: dict, score: str, length: int) -> None:
    st.subheader(t("rnn.acc.title"))
    models = metrics["models"]
    shown = {a: models[a]["accuracy_by_length"] for a in ("none", *SCORES) if a in models}
    trained = tuple(metrics["train_lengths"])
    show_figure(accuracy_chart(shown, trained, look(), marked=length), f"rnn-{metrics['task']}-accuracy-by-length",
                key="rnn-accuracy")
    at = lambda a: shown[a].get(str(length), {}).get("exact")              # noqa: E731
    if at("none") is not None and at(score) is not None:
        st.caption(t("rnn.acc.caption", n=length, none=f"{at('none'):.0%}", model=model_name(score, words()),
                     with_attention=f"{at(score):.0%}", inputs=metrics["eval_inputs_per_length"],
                     lo=trained[0], hi=trained[1], steps=metrics["steps"],
                     seconds=f"{models['none']['seconds']:.0f}"))


def variants(reading, score: str) -> None:
    """Soft (the model's own), hard and local weights over the RNN's scores: the zoo's weightings (model/analysis/zoo)."""
    st.subheader(t("rnn.variants.title"))
    weights = rnn_alignment.weightings(reading.scores, LOCAL_HALF_WIDTH)
    rows, cols = position_labels(reading.out_tokens), position_labels(reading.src_tokens)
    titles = [t(WEIGHT_NAME_KEYS[w]) if w in WEIGHT_NAME_KEYS else t("zoo.local_d", d=LOCAL_HALF_WIDTH)
              for w in zoo.WEIGHTINGS]
    fig = gallery([weights[w] for w in zoo.WEIGHTINGS], titles, rows, cols, rnn_look(look()))
    show_figure(fig, f"rnn-{score}-variants", key="rnn-variants")
    hard_same = int((weights["hard"].argmax(1) == weights["soft"].argmax(1)).sum())
    st.caption(t("rnn.variants.caption", rows=len(rows), peak=f"{np.mean(weights['soft'].max(1)):.2f}",
                 same=hard_same))


def explain(d: int) -> None:
    with explained(t("rnn.explain.title")):
        st.markdown(t("rnn.explain.text", d=d))
        for formula in FORMULAS:
            st.latex(formula)


def render() -> None:
    st.title(t("rnn.title"))
    try:
        task, models, metrics = rnn_models()
    except CheckpointError as e:          # a models folder without them (an operator's own): said, not an error
        st.info(t("rnn.missing", error=plain(str(e))))
        return
    symbols, score = controls()
    reading, other = alignment_pair(task, score, " ".join(symbols))
    outputs(task, symbols, reading, other)
    accuracy_section(metrics, score, len(symbols))
    variants(reading, score)
    explain(models["none"].cfg.d_hidden if "none" in models else reading.context.shape[1])


if __name__ == "__main__":
    render()
