"""LayerNorm & residual: one norm's statistics, its gain and bias, LN vs BN, and the residual stream's size."""
from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis.attention_math import batch_norm_drift, batch_norm_stats, layer_norm_stats, residual_stages
from model.capture import schema
from viz.figures.layernorm import (drift_figure, feature_histogram, gain_bias_figure, ln_vs_bn_figure,
                                   residual_norm_figure, token_stats_figure)
from viz.figures.style import plotly_text
from viz.state import qp_choice, qp_int, set_query
from viz.text import position_labels
from viz.ui import matrix_frame, need_context, show_figure

STACKS = ["encoder", "decoder"]
NORMS = {"norm_attn": "after self-attention", "norm_cross": "after cross-attention", "norm_ff": "after feed-forward"}
PRE_NORM_PLACE = {"norm_attn": "before self-attention", "norm_cross": "before cross-attention",
                  "norm_ff": "before feed-forward"}
LN_FORMULA = (r"\mathrm{LN}(x)=\gamma\odot\frac{x-\mu}{\sigma}+\beta,\quad \mu=\frac1d\sum_{j=1}^{d}x_j,\quad "
              r"\sigma=\sqrt{\frac1d\sum_{j=1}^{d}(x_j-\mu)^2+\epsilon}")
POST_PRE_FORMULA = (r"\begin{aligned}\text{post-norm (paper):}&\ \ "
                    r"x\leftarrow\mathrm{LN}\big(x+\mathrm{Sublayer}(x)\big)\\ "
                    r"\text{pre-norm:}&\ \ x\leftarrow x+\mathrm{Sublayer}\big(\mathrm{LN}(x)\big)\end{aligned}")


def _stack_changed() -> None:
    """Layer, norm and token belong to the old stack: let the new one start from its defaults."""
    for name in ("layer", "norm", "token"):
        if name in st.query_params:
            del st.query_params[name]


def controls(cfg) -> tuple[str, int, str]:
    """Stack, layer and norm in one row; the options say what they are."""
    places = PRE_NORM_PLACE if cfg.norm_first else NORMS
    c1, c2, c3 = st.columns([1.3, 1, 3.4], vertical_alignment="center")
    stack = c1.radio("Stack", STACKS, index=STACKS.index(qp_choice("stack", STACKS, "encoder")), horizontal=True,
                     key="ln-stack", on_change=_stack_changed, label_visibility="collapsed")
    n = schema.n_layers(cfg, stack)
    layer = c2.selectbox("Layer", list(range(n)), index=qp_int("layer", 0, 0, n - 1), key=f"ln-layer-{stack}",
                         format_func=lambda i: f"layer {i}", label_visibility="collapsed")
    norm_names = [k for k in NORMS if stack == "decoder" or k != "norm_cross"]
    norm = c3.radio("Norm", norm_names, index=norm_names.index(qp_choice("norm", norm_names, "norm_attn")),
                    horizontal=True, key=f"ln-norm-{stack}", format_func=lambda k: f"{k} ({places[k]})",
                    label_visibility="collapsed")
    return stack, layer, norm


def explain(ctx) -> None:
    st.header("What a LayerNorm does")
    st.markdown(
        "Every sublayer (attention, feed-forward) is wrapped in a **residual connection** and a **layer "
        "normalization**. The residual path carries the input through unchanged, so a layer only has to learn a "
        "correction and the signal (and gradient) passes through deep stacks. LayerNorm then rescales each token's "
        "vector: subtract the mean of its features, divide by their standard deviation, then apply a learned gain γ "
        "and bias β per feature.")
    st.latex(LN_FORMULA)
    st.latex(POST_PRE_FORMULA)
    if ctx.bundle.config.norm_first:
        st.info(f"This model ({ctx.model_id}) is **pre-norm**: each norm reads the residual stream x before the "
                "sublayer, and the stream itself is never normalized until a final LayerNorm after the last layer.")
    else:
        st.info(f"This model ({ctx.model_id}) is **post-norm**, as in the paper: each norm reads x + Sublayer(x), and "
                "its output *is* the residual stream passed on.")


def one_token(ctx, stack: str, layer: int, norm: str, tokens: list[str]) -> int:
    """A token's features as histograms before and after, and the norm's learned gain and bias."""
    arrays = ctx.trace.arrays
    x_in, x_norm, x_out = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("in", "normalized", "out"))
    gain, bias = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("gain", "bias"))        # [D]
    mean_in, std_in = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("mean", "std"))    # [T]
    mean_after, std_after = layer_norm_stats(x_norm)                                                 # [T]
    c_token, _ = st.columns([1, 2])
    token = c_token.selectbox("Token for the histogram", list(range(len(tokens))), key=f"ln-token-{stack}",
                               index=qp_int("token", 0, 0, len(tokens) - 1), format_func=lambda i: tokens[i])
    series = {"input": x_in[token], "normalized (x−μ)/σ": x_norm[token], "output γ·x̂+β": x_out[token]}
    tag = f"{ctx.model_id}-{stack}-L{layer}-{norm}"
    col_a, col_b = st.columns(2)
    with col_a:
        chosen = plotly_text([tokens[token]])[0]
        show_figure(feature_histogram(series, title=f"The {x_in.shape[1]} features of {chosen}"),
                    f"{tag}-token{token}",
                    matrix_frame(np.stack(list(series.values()), axis=1), list(range(x_in.shape[1])), list(series)),
                    key="ln-hist")
        st.caption(f"{tokens[token]}: input mean {mean_in[token]:.4f}, std {std_in[token]:.4f} → normalized mean "
                   f"{mean_after[token]:.1e}, std {std_after[token]:.4f}.")
    with col_b:
        show_figure(gain_bias_figure(gain, bias, title=f"Learned gain and bias of {norm}"), f"{tag}-gain-bias",
                    matrix_frame(np.stack([gain, bias], axis=1), list(range(gain.size)), ["gain", "bias"]),
                    key="ln-gb")
        st.caption("After normalizing, the layer may re-scale and shift each feature: a gain of 1 and bias of 0 "
                   "would leave x̂ as it is. These are trained weights, the same for every token.")
    return token


def ln_vs_bn(ctx, x_in: np.ndarray, tokens: list[str], tag: str) -> None:
    st.header("LayerNorm vs. BatchNorm on the same numbers")
    st.markdown(
        f"Take this norm's input as a table: {len(tokens)} tokens (rows) × {x_in.shape[1]} features (columns). "
        "**LayerNorm** computes one mean and std per *row*: each token is normalized on its own. **BatchNorm** "
        "computes one mean and std per *column*, across the tokens (and sentences) of a batch. So BatchNorm makes "
        "a token's output depend on which other tokens happen to share the batch, needs running averages at test "
        "time, and breaks down for a batch of one token or sentences of different lengths. LayerNorm needs none "
        "of that: batch size 1 and any length work the same in training and inference.")
    show_figure(ln_vs_bn_figure(x_in, tokens, title="Statistics of the norm's input [tokens × features], two ways"),
                f"{tag}-ln-vs-bn", matrix_frame(x_in, tokens, list(range(x_in.shape[1]))), key="ln-bn")
    _bn_mean, bn_std = batch_norm_stats(x_in)
    drift = batch_norm_drift(x_in, 0, ctx.bundle.config.ln_eps)
    st.caption(f"LayerNorm: {len(tokens)} means and stds (rows). BatchNorm: {bn_std.size} means and stds (columns); "
               f"feature stds range from {bn_std.min():.3f} to {bn_std.max():.3f}. The CSV holds the input matrix.")
    first = plotly_text(tokens[:1])[0]
    show_figure(drift_figure(drift, 0, title=f"BatchNorm output of {first} changes with the batch; "
                                             "LayerNorm's does not"),
                f"{tag}-bn-drift", matrix_frame(drift[:, None], list(range(1, drift.size + 1)), ["relative change"]),
                key="ln-drift")
    st.caption(f"Batch = the first t tokens of the sentence. With t = 1 every column has std 0, so BatchNorm maps "
               f"{tokens[0]} to all zeros (relative change {drift[0]:.2f}): a batch of one erases the token. LayerNorm "
               "uses only the token itself, so its output never changes.")


def residual_stream(ctx, labels: dict[str, list[str]]) -> None:
    cfg, arrays = ctx.bundle.config, ctx.trace.arrays
    st.header("The residual stream through both stacks")
    parts = []
    for s in STACKS:
        stages, norms = residual_stages(arrays, s, schema.n_layers(cfg, s))                         # [stages, T]
        parts.append((s, stages, norms, labels[s]))
    show_figure(residual_norm_figure(parts, title="‖x‖ per token at every stage (thin) and the mean (bold)"),
                f"{ctx.model_id}-residual-norms",
                matrix_frame(np.concatenate([p[2].mean(1) for p in parts])[:, None], sum((p[1] for p in parts), []),
                             ["mean L2 norm"]), key="ln-resid")
    enc_norms = parts[0][2]
    if cfg.norm_first:
        st.caption("Pre-norm: sublayers add to the stream without normalizing it, so its norm can grow layer after "
                   f"layer (encoder: {enc_norms[0].mean():.1f} at the embedding, {enc_norms[-1].mean():.1f} after "
                   "the last layer); the final LayerNorm after the stack brings it back.")
    else:
        later = enc_norms[1:].mean(1)                                                                # [stages - 1]
        st.caption(f"Post-norm: after every Add & Norm the stream is re-normalized, so each token's norm stays near "
                   f"√d × the typical gain, whatever the sublayer added (encoder: {enc_norms[0].mean():.1f} at the "
                   f"embedding, then {later.min():.1f}–{later.max():.1f}; √d = {np.sqrt(cfg.d_model):.1f}).")


def render() -> None:
    ctx = need_context()
    trace, cfg, arrays = ctx.trace, ctx.bundle.config, ctx.trace.arrays
    labels = {stack: position_labels(schema.stack_tokens(trace.meta, stack)) for stack in schema.STACKS}

    st.title("LayerNorm & residual")
    stack, layer, norm = controls(cfg)
    tokens = labels[stack]
    x_in, x_norm = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("in", "normalized"))   # [T,D]
    mean_in, std_in = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("mean", "std"))    # [T]
    mean_after, std_after = layer_norm_stats(x_norm)                                                 # [T]
    input_is = "x (the residual stream)" if cfg.norm_first else "x + Sublayer(x)"
    show_figure(token_stats_figure(tokens, (mean_in, std_in), (mean_after, std_after),
                                   title=f"{stack} layer {layer}, {norm}: input {input_is} vs. normalized"),
                f"{ctx.model_id}-{stack}-L{layer}-{norm}-stats",
                matrix_frame(np.stack([mean_in, std_in, mean_after, std_after], axis=1), tokens,
                             ["mean before", "std before", "mean after", "std after"]), key="ln-stats")
    st.caption(f"Orange: each token's mean and std before the norm (means {mean_in.min():.3f} to "
               f"{mean_in.max():.3f}, stds {std_in.min():.3f} to {std_in.max():.3f}). Blue: after it, every token has "
               f"mean ≈ 0 (largest |mean| {np.abs(mean_after).max():.1e}) and std ≈ 1 "
               f"(from {std_after.min():.6f} to {std_after.max():.6f}; ε = {cfg.ln_eps:g} keeps it just under 1)."
               + (" Decoder rows are labelled by the token each position predicts (it reads the token before it), as "
                  "on every page; its tokens are " + ("your reference, teacher-forced." if trace.meta["teacher_forced"]
                                                      else "the model's own output.") if stack == "decoder" else ""))
    explain(ctx)
    st.header("One token's features")
    token = one_token(ctx, stack, layer, norm, tokens)
    set_query(stack=stack, layer=layer, norm=norm, token=token)
    ln_vs_bn(ctx, x_in, tokens, f"{ctx.model_id}-{stack}-L{layer}-{norm}")
    residual_stream(ctx, labels)


if __name__ == "__main__":
    render()
