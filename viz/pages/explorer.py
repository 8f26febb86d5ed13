"""Attention explorer: every layer x head at a glance, one head large with token labels."""
from functools import partial

import numpy as np
import streamlit as st

from model.capture import schema
from viz.figures.attention import KIND_TITLES, attention_heatmap, model_view, thumbnail_block
from viz.state import Context, qp_choice, set_query
from viz.text import attention_labels
from viz.ui import layer_head_pickers, matrix_frame, need_context, open_clicked_head, show_figure

KIND_NOTES = {
    "encoder": "Queries and keys are both source tokens: every token looks at every other, in both directions.",
    "decoder": "Row t is the step that reads ⟨s⟩ y₁…yₜ₋₁ (columns) and predicts yₜ (the row label). Future "
               "positions are masked to −∞ before the softmax, so everything above the diagonal is exactly 0.",
    "cross": "Queries come from the decoder, keys and values from the encoder's output: row t shows where "
             "the model looks in the source while it predicts target token t (the row label).",
}
FORMULA = r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V"
EXPLANATION = (
    "Each head turns every token into a query $q$, a key $k$ and a value $v$. A query's weights over the keys "
    "are a softmax of scaled dot products, so every row sums to 1; the head's output is the weighted sum "
    "of the values. Darker = more attention.")


def controls(cfg) -> tuple[str, int, int | None]:
    """One row: the attention kind, then layer and head (seeded from and written to the URL)."""
    c_kind, c_pick = st.columns([1.15, 1], vertical_alignment="bottom")
    kind_default = qp_choice("kind", list(schema.KINDS), "encoder")
    kind = c_kind.radio("Attention", schema.KINDS, index=schema.KINDS.index(kind_default), horizontal=True,
                        key="explorer-kind", format_func=KIND_TITLES.get)
    set_query(kind=kind)
    with c_pick:
        layer, head = layer_head_pickers(schema.n_layers(cfg, kind), cfg.n_heads, key=f"explorer-{kind}")
    return kind, layer, head



def overview(ctx: Context, kind: str, patterns: np.ndarray, layer: int, head: int | None) -> None:
    """Every layer x head as clickable thumbnails."""
    n_layers, n_heads = patterns.shape[:2]
    grid = model_view(patterns, title=f"{KIND_TITLES[kind]}: all {n_layers} layers × {n_heads} heads "
                                      "(click a thumbnail to open it)", selected=(layer, head))
    st.plotly_chart(grid, on_select=partial(open_clicked_head, kind), selection_mode="points", key=f"grid-{kind}",
                    config={"displaylogo": False})


def how_to_read(kind: str, n_rows: int, n_cols: int) -> str:
    text = ("Each small map is one head (columns H0, H1, …) of one layer (rows L0, L1, …): a row of a map is one "
            "query token, its cells the weights it gives the keys (darker = more, each row sums to 1). The boxed "
            "one is shown large below. " + KIND_NOTES[kind])
    block = thumbnail_block(n_rows, n_cols)
    if block > 1:
        text += (f" Thumbnails of a sentence this long show the strongest weight in each {block}×{block} block of "
                 "cells; the large map below is exact.")
    return text


def one_head(ctx: Context, kind: str, patterns: np.ndarray, layer: int, head: int | None, rows, cols) -> np.ndarray:
    n_heads = patterns.shape[1]
    if head is None:
        weights, name = patterns[layer].mean(0), f"layer {layer}, average of {n_heads} heads"
    else:
        weights, name = patterns[layer, head], f"layer {layer}, head {head}"
    fig = attention_heatmap(weights, rows, cols, title=f"{KIND_TITLES[kind]}: {name}")
    show_figure(fig, f"{ctx.model_id}-{kind}-L{layer}-{'avg' if head is None else f'H{head}'}",
                matrix_frame(weights, rows, cols), key="explorer-main")
    return weights


def strongest_links(weights: np.ndarray, rows: list[str], cols: list[str], limit: int = 12) -> str:
    top = np.argmax(weights, axis=1)
    return "Strongest link per query: " + "; ".join(f"{rows[i].split(' ', 1)[1]} → {cols[j].split(' ', 1)[1]}"
                                                    for i, j in enumerate(top[:limit]))


def render() -> None:
    ctx = need_context()
    trace, cfg = ctx.trace, ctx.bundle.config
    st.title("Attention explorer")
    kind, layer, head = controls(cfg)
    rows, cols = attention_labels(trace.meta, kind)
    patterns = schema.stacked(trace, kind)                                  # [L,H,Q,K]
    overview(ctx, kind, patterns, layer, head)
    st.caption(how_to_read(kind, len(rows), len(cols)))
    weights = one_head(ctx, kind, patterns, layer, head, rows, cols)
    st.caption(strongest_links(weights, rows, cols))
    with st.expander("How a head computes its weights", expanded=False):
        st.markdown(EXPLANATION)
        st.latex(FORMULA)


if __name__ == "__main__":
    render()
