"""Multi-head assembly: h head outputs -> concatenation -> W^O -> + residual -> LayerNorm, on real numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.capture import schema
from viz.figures.attention import KIND_TITLES
from viz.figures.multihead import concat_heatmap, head_patterns, per_head_outputs, stage_heatmap, stage_norms
from model.analysis.attention_math import (concat_heads, describe_heads, dim_labels, head_summary, layer_norm,
                                           linear_arrays, max_abs_error, output_projection, token_norms)
from model.capture.schema import sublayer_names
from viz.state import qp_choice, qp_int, set_query
from viz.text import attention_labels
from viz.ui import matrix_frame, need_context, show_figure

KINDS = list(schema.KINDS)
TOLERANCE = 1e-4   # float32 model vs float64 recomputation

ctx = need_context()
trace, cfg, A = ctx.trace, ctx.bundle.config, ctx.trace.arrays
H, D, DH = cfg.n_heads, cfg.d_model, cfg.d_head

st.title("Multi-head assembly")
st.markdown(
    f"A layer does not run one attention but $h = {H}$ smaller ones in parallel, each in its own "
    f"$d_k = d_{{model}}/h = {D}/{H} = {DH}$-dimensional subspace, so the total cost is about that of one full-size "
    "head. Each head can follow a different relation (the previous word, the same word, the aligned source word…). "
    f"Their outputs are laid side by side into one {D}-wide vector per token and mixed by $W^O$; the result is "
    "added to the residual stream and normalised. Below, every stage is taken from the model on your sentence.")
st.latex(r"\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\qquad "
         r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\;KW_i^K,\;VW_i^V)")
st.latex(r"x_{\text{next}} = \mathrm{LayerNorm}\big(x + \mathrm{MultiHead}(x)\big)" if not cfg.norm_first else
         r"x_{\text{next}} = x + \mathrm{MultiHead}(\mathrm{LayerNorm}(x))")

c_kind, c_layer = st.columns([3, 1])
kind = c_kind.radio("Attention", KINDS, index=KINDS.index(qp_choice("kind", KINDS, "encoder")), horizontal=True,
                    key="mh-kind", format_func=KIND_TITLES.get)
n_layers = schema.n_layers(cfg, kind)
layer = c_layer.selectbox("Layer", list(range(n_layers)), index=qp_int("layer", 0, 0, n_layers - 1),
                          key=f"mh-layer-{kind}", format_func=lambda i: f"layer {i}")
set_query(kind=kind, layer=layer)
names = sublayer_names(kind, layer, cfg.norm_first)

rows, cols = attention_labels(trace.meta, kind)
tag = f"{ctx.model_id}-{kind}-L{layer}"
where = f"{KIND_TITLES[kind]}, layer {layer}"
if kind != "encoder":
    st.caption("Decoder rows are labelled by the token each position predicts (it reads the token before it), as on every page.")

# -- the real numbers ------------------------------------------------------------------------------
z = A[schema.attn_name(kind, layer, "z")]                                          # [H,T,Dh]
patterns = A[schema.attn_name(kind, layer, "pattern")]                             # [H,T,S]
concat = concat_heads(z)                                               # [T,D]
attn_out = A[schema.attn_name(kind, layer, "out")]                                 # [T,D] after W^O
residual = A[names.residual]                                           # [T,D] the stream added back
summed = residual.astype(np.float64) + attn_out                        # [T,D]
after = A[names.after]                                                 # [T,D] the next residual stream
w_o, b_o = linear_arrays(ctx.bundle.model.get_submodule(names.attn).w_o)
checks = [("Concat(z) · $W^O$ + b, with the model's own $W^O$, vs the captured sublayer output",
           max_abs_error(output_projection(concat, w_o, b_o), attn_out))]
if cfg.norm_first:
    checks.append(("x + MultiHead vs the next residual stream", max_abs_error(summed, after)))
else:
    checks.append(("x + MultiHead vs the LayerNorm's input", max_abs_error(summed, A[names.norm_hook("in")])))
    checks.append(("LayerNorm recomputed (mean, std, gain, bias) vs the next residual stream",
                   max_abs_error(layer_norm(summed, A[names.norm_hook("gain")], A[names.norm_hook("bias")], cfg.ln_eps),
                                 after)))
dims = dim_labels(D)

# -- heads side by side -----------------------------------------------------------------------------
st.header("Different heads, different relations")
show_figure(head_patterns(patterns, rows, cols, title=f"{where}: the {H} heads' attention weights"),
            f"{tag}-heads", pd.concat({f"head {h}": matrix_frame(patterns[h], rows, cols) for h in range(H)}),
            key="mh-heads")
stats = head_summary(patterns)
positional = kind != "cross"   # an offset means something only within one sequence
table = {
    "what it does here": describe_heads(stats, cols, positional=positional),
    "mean entropy (bits)": stats["entropy"].round(2),
    "mean max weight": stats["max_weight"].round(2),
    "favourite key": [cols[i] for i in stats["favourite"]],
    "its mean weight": stats["favourite_weight"].round(2),
}
if positional:
    table["usual offset"] = stats["offset"]
    table["queries with it"] = stats["offset_share"].round(2)
st.dataframe(pd.DataFrame(table, index=[f"head {h}" for h in range(H)]))
st.caption("Entropy: 0 bits = all weight on one key, log₂(number of keys) = spread evenly. Favourite key = the key "
           "with the most weight averaged over queries."
           + (" Usual offset = the most common key position − query position of each query's strongest key (0 = "
              "itself, −1 = the token before), and the share of queries that have it." if positional else "")
           + " Heads that differ here do different jobs on the same sentence.")

# -- assembly, stage by stage --------------------------------------------------------------------------
st.header("From heads to the next residual stream")
st.subheader(f"1. Each head's output $z_h$  [{len(rows)} × {DH}]")
show_figure(per_head_outputs(z, rows, title=f"{where}: per-head outputs (weights · V)"), f"{tag}-z",
            pd.concat({f"head {h}": matrix_frame(z[h], rows, dim_labels(DH)) for h in range(H)}), key="mh-z")

st.subheader(f"2. Concatenate  [{len(rows)} × {H}·{DH} = {D}]")
st.markdown(f"The heads are laid side by side: head $h$ fills dimensions {DH}·h to {DH}·h + {DH - 1}. Nothing is "
            "mixed yet; each block is exactly one head's output from step 1.")
show_figure(concat_heatmap(concat, rows, H, title="Concat(head₁ … headₕ)"), f"{tag}-concat",
            matrix_frame(concat, rows, dims), key="mh-concat")

left, right = st.columns(2)
with left:
    st.subheader(f"3. × $W^O$  [{D} × {D}]")
    st.markdown("$W^O$ mixes the heads: every output dimension reads all heads. This is the sublayer's output.")
    show_figure(stage_heatmap(attn_out, rows, "MultiHead(x) = Concat · W<sup>O</sup> + b"),
                f"{tag}-out", matrix_frame(attn_out, rows, dims), key="mh-out")
with right:
    st.subheader("4. + residual")
    st.markdown("The layer's input $x$ is added back (the residual connection), so the sublayer only has to "
                "learn a change to the stream.")
    show_figure(stage_heatmap(summed, rows, "x + MultiHead(x)"), f"{tag}-sum",
                matrix_frame(summed, rows, dims), key="mh-sum")

stages = {"x (input stream)": token_norms(residual), "Concat(heads)": token_norms(concat),
          "× Wᴼ": token_norms(attn_out), "x + MultiHead": token_norms(summed)}
if not cfg.norm_first:
    st.subheader("5. LayerNorm → the next residual stream")
    st.markdown("Each token's vector is shifted to mean 0 and scaled to variance 1 across its "
                f"{D} dimensions, then multiplied by a learned gain and shifted by a learned bias. Whatever size the "
                "sum had, every token leaves with a similar norm: see the bars below.")
    show_figure(stage_heatmap(after, rows, "LayerNorm(x + MultiHead(x))"),
                f"{tag}-norm", matrix_frame(after, rows, dims), key="mh-norm")
    stages["LayerNorm"] = token_norms(after)
else:
    st.caption("This model is pre-norm: the LayerNorm was applied to x before attention, so x + MultiHead(x) is "
               "already the next residual stream.")

st.header("How big is each token after each stage?")
show_figure(stage_norms(stages, rows, title=f"{where}: L2 norm per token"), f"{tag}-norms",
            pd.DataFrame(stages, index=rows), key="mh-norms")

st.header("Checks")
for description, error in checks:
    ok = error < TOLERANCE
    (st.success if ok else st.error)(f"{description}: max |difference| = {error:.2e}"
                                     + ("" if ok else " (larger than expected!)"))
