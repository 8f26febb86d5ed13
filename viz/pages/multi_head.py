"""Multi-head assembly: h head outputs -> concatenation -> W^O -> + residual -> LayerNorm, on real numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.attention_math import (concat_heads, describe_heads, dim_labels, head_summary, layer_norm,
                                           linear_arrays, max_abs_error, output_projection, token_norms)
from model.capture import schema
from model.capture.schema import sublayer_names
from viz.figures.attention import KIND_TITLES
from viz.figures.multihead import concat_heatmap, head_patterns, per_head_outputs, stage_heatmap, stage_norms
from viz.state import qp_choice, qp_int, set_query
from viz.text import attention_labels
from viz.ui import matrix_frame, need_context, show_figure

KINDS = list(schema.KINDS)
TOLERANCE = 1e-4   # float32 model vs float64 recomputation
# Long formulas are split into lines that fit a 1280x720 projector's page width (one line was cut at "…VW").
MULTIHEAD_FORMULA = [r"\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O",
                     r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\;KW_i^K,\;VW_i^V)"]
POST_NORM = r"x_{\text{next}} = \mathrm{LayerNorm}\big(x + \mathrm{MultiHead}(x)\big)"
HALF_PX = 280      # the plot area of a matrix in one of two columns, on a projector
PRE_NORM = r"x_{\text{next}} = x + \mathrm{MultiHead}(\mathrm{LayerNorm}(x))"


def controls(cfg) -> tuple[str, int]:
    """Attention kind and layer in one compact row (the options say what they are)."""
    c_kind, c_layer = st.columns([5, 1], vertical_alignment="center")
    kind = c_kind.radio("Attention", KINDS, index=KINDS.index(qp_choice("kind", KINDS, "encoder")), horizontal=True,
                        key="mh-kind", format_func=KIND_TITLES.get, label_visibility="collapsed")
    n_layers = schema.n_layers(cfg, kind)
    layer = c_layer.selectbox("Layer", list(range(n_layers)), index=qp_int("layer", 0, 0, n_layers - 1),
                              key=f"mh-layer-{kind}", format_func=lambda i: f"layer {i}",
                              label_visibility="collapsed")
    return kind, layer


def heads_side_by_side(patterns: np.ndarray, rows: list[str], cols: list[str], kind: str, where: str,
                       tag: str) -> None:
    """The page's picture: every head's weights, then how to read them."""
    n_heads = patterns.shape[0]
    show_figure(head_patterns(patterns, rows, cols, title=f"{where}: the {n_heads} heads' attention weights"),
                f"{tag}-heads", pd.concat({f"head {h}": matrix_frame(patterns[h], rows, cols) for h in range(n_heads)}),
                key="mh-heads")
    st.caption("One small map per head, all on the same sentence: a row is a query, a column a key it may read, "
               "darker = more weight. Different pictures = heads doing different jobs."
               + (" Decoder rows are labelled by the token each position predicts (it reads the token before it), "
                  "as on every page." if kind != "encoder" else ""))


def head_table(patterns: np.ndarray, cols: list[str], kind: str) -> None:
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
    st.dataframe(pd.DataFrame(table, index=[f"head {h}" for h in range(patterns.shape[0])]))
    st.caption("Entropy: 0 bits = all weight on one key, log₂(number of keys) = spread evenly. Favourite key = the "
               "key with the most weight averaged over queries."
               + (" Usual offset = the most common key position − query position of each query's strongest key (0 = "
                  "itself, −1 = the token before), and the share of queries that have it." if positional else "")
               + " Heads that differ here do different jobs on the same sentence.")


def explain(cfg) -> None:
    h, d, dh = cfg.n_heads, cfg.d_model, cfg.d_head
    st.markdown(
        f"A layer does not run one attention but $h = {h}$ smaller ones in parallel, each in its own "
        f"$d_k = d_{{model}}/h = {d}/{h} = {dh}$-dimensional subspace, so the total cost is about that of one "
        "full-size head. Each head can follow a different relation (the previous word, the same word, the aligned "
        f"source word…). Their outputs are laid side by side into one {d}-wide vector per token and mixed by $W^O$; "
        "the result is added to the residual stream and normalised. Every stage below is taken from the model on "
        "your sentence.")
    for line in MULTIHEAD_FORMULA:
        st.latex(line)
    st.latex(PRE_NORM if cfg.norm_first else POST_NORM)


def render() -> None:
    ctx = need_context()
    trace, cfg, arrays = ctx.trace, ctx.bundle.config, ctx.trace.arrays
    n_heads, d, dh = cfg.n_heads, cfg.d_model, cfg.d_head

    st.title("Multi-head assembly")
    kind, layer = controls(cfg)
    set_query(kind=kind, layer=layer)
    names = sublayer_names(kind, layer, cfg.norm_first)
    rows, cols = attention_labels(trace.meta, kind)
    tag = f"{ctx.model_id}-{kind}-L{layer}"
    where = f"{KIND_TITLES[kind]}, layer {layer}"

    # -- the real numbers --------------------------------------------------------------------------
    z = arrays[schema.attn_name(kind, layer, "z")]                                  # [H,T,Dh]
    patterns = arrays[schema.attn_name(kind, layer, "pattern")]                     # [H,T,S]
    concat = concat_heads(z)                                                        # [T,D]
    attn_out = arrays[schema.attn_name(kind, layer, "out")]                         # [T,D] after W^O
    residual = arrays[names.residual]                                               # [T,D] the stream added back
    summed = residual.astype(np.float64) + attn_out                                 # [T,D]
    after = arrays[names.after]                                                     # [T,D] the next residual stream
    w_o, b_o = linear_arrays(ctx.bundle.model.get_submodule(names.attn).w_o)
    checks = [("Concat(z) · $W^O$ + b, with the model's own $W^O$, vs the captured sublayer output",
               max_abs_error(output_projection(concat, w_o, b_o), attn_out))]
    if cfg.norm_first:
        checks.append(("x + MultiHead vs the next residual stream", max_abs_error(summed, after)))
    else:
        checks.append(("x + MultiHead vs the LayerNorm's input", max_abs_error(summed, arrays[names.norm_hook("in")])))
        checks.append(("LayerNorm recomputed (mean, std, gain, bias) vs the next residual stream",
                       max_abs_error(layer_norm(summed, arrays[names.norm_hook("gain")],
                                                arrays[names.norm_hook("bias")], cfg.ln_eps), after)))
    dims = dim_labels(d)

    # -- the picture: heads side by side ---------------------------------------------------------------
    heads_side_by_side(patterns, rows, cols, kind, where, tag)
    st.header("Different heads, different relations")
    head_table(patterns, cols, kind)

    # -- assembly, stage by stage ----------------------------------------------------------------------
    st.header("From heads to the next residual stream")
    explain(cfg)
    st.subheader(f"1. Each head's output $z_h$  [{len(rows)} × {dh}]")
    show_figure(per_head_outputs(z, rows, title=f"{where}: per-head outputs (weights · V)"), f"{tag}-z",
                pd.concat({f"head {h}": matrix_frame(z[h], rows, dim_labels(dh)) for h in range(n_heads)}), key="mh-z")

    st.subheader(f"2. Concatenate  [{len(rows)} × {n_heads}·{dh} = {d}]")
    st.markdown(f"The heads are laid side by side: head $h$ fills dimensions {dh}·h to {dh}·h + {dh - 1}. Nothing is "
                "mixed yet; each block is exactly one head's output from step 1.")
    show_figure(concat_heatmap(concat, rows, n_heads, title="Concat(head₁ … headₕ)"), f"{tag}-concat",
                matrix_frame(concat, rows, dims), key="mh-concat")

    left, right = st.columns(2)
    with left:
        st.subheader(f"3. × $W^O$  [{d} × {d}]")
        st.markdown("$W^O$ mixes the heads: every output dimension reads all heads. This is the sublayer's output.")
        show_figure(stage_heatmap(attn_out, rows, "MultiHead(x) = Concat · W<sup>O</sup> + b", plot_px=HALF_PX),
                    f"{tag}-out", matrix_frame(attn_out, rows, dims), key="mh-out")
    with right:
        st.subheader("4. + residual")
        st.markdown("The layer's input $x$ is added back (the residual connection), so the sublayer only has to "
                    "learn a change to the stream.")
        show_figure(stage_heatmap(summed, rows, "x + MultiHead(x)", plot_px=HALF_PX), f"{tag}-sum",
                    matrix_frame(summed, rows, dims), key="mh-sum")

    stages = {"x (input stream)": token_norms(residual), "Concat(heads)": token_norms(concat),
              "× Wᴼ": token_norms(attn_out), "x + MultiHead": token_norms(summed)}
    if not cfg.norm_first:
        st.subheader("5. LayerNorm → the next residual stream")
        st.markdown("Each token's vector is shifted to mean 0 and scaled to variance 1 across its "
                    f"{d} dimensions, then multiplied by a learned gain and shifted by a learned bias. Whatever size "
                    "the sum had, every token leaves with a similar norm: see the bars below.")
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


if __name__ == "__main__":
    render()
