"""Attention explorer: every layer x head at a glance, one head large with token labels."""
from functools import partial

import numpy as np
import streamlit as st

from model.capture import schema
from viz.figures.attention import KIND_TITLES, attention_heatmap, model_view, thumbnail_block
from viz.state import qp_choice, set_query
from viz.text import attention_labels
from viz.ui import layer_head_pickers, matrix_frame, need_context, open_clicked_head, show_figure

ctx = need_context()
trace, cfg = ctx.trace, ctx.bundle.config

st.title("Attention explorer")
st.markdown(
    "Each head turns every token into a query $q$, a key $k$ and a value $v$. A query's weights over the keys "
    "are a softmax of scaled dot products, so every row below sums to 1; the head's output is the weighted sum "
    "of the values. Darker = more attention.")
st.latex(r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V")

kind_default = qp_choice("kind", list(schema.KINDS), "encoder")
kind = st.radio("Attention", schema.KINDS, index=schema.KINDS.index(kind_default), horizontal=True, key="explorer-kind",
                format_func=KIND_TITLES.get)
set_query(kind=kind)

rows, cols = attention_labels(trace.meta, kind)
n_layers = schema.n_layers(cfg, kind)
if kind == "encoder":
    st.caption("Queries and keys are both source tokens: every token looks at every other, in both directions.")
elif kind == "decoder":
    st.caption("Row t is the step that reads ⟨s⟩ y₁…yₜ₋₁ (columns) and predicts yₜ (the row label). Future "
               "positions are masked to −∞ before the softmax, so everything above the diagonal is exactly 0.")
else:
    st.caption("Queries come from the decoder, keys and values from the encoder's output: row t shows where "
               "the model looks in the source while it predicts target token t (the row label).")

patterns = schema.stacked(trace, kind)                                  # [L,H,Q,K]

layer, head = layer_head_pickers(n_layers, cfg.n_heads, key=f"explorer-{kind}")
grid = model_view(patterns, title=f"{KIND_TITLES[kind]}: all {n_layers} layers × {cfg.n_heads} heads "
                                  "(click a thumbnail to open it)", selected=(layer, head))
block = thumbnail_block(len(rows), len(cols))
if block > 1:
    st.caption(f"Thumbnails of a sentence this long show the strongest weight in each {block}×{block} block of "
               "cells; the large map below is exact.")
st.plotly_chart(grid, on_select=partial(open_clicked_head, kind), selection_mode="points", key=f"grid-{kind}",
                config={"displaylogo": False})

if head is None:
    weights, name = patterns[layer].mean(0), f"layer {layer}, average of {cfg.n_heads} heads"
else:
    weights, name = patterns[layer, head], f"layer {layer}, head {head}"
fig = attention_heatmap(weights, rows, cols, title=f"{KIND_TITLES[kind]}: {name}")
show_figure(fig, f"{ctx.model_id}-{kind}-L{layer}-{'avg' if head is None else f'H{head}'}",
            matrix_frame(weights, rows, cols), key="explorer-main")

top = np.argmax(weights, axis=1)
st.caption("Strongest link per query: " + "; ".join(f"{rows[i].split(' ', 1)[1]} → {cols[j].split(' ', 1)[1]}"
                                                     for i, j in enumerate(top[:12])))
