"""LayerNorm & residual: one norm's statistics, its gain and bias, LN vs BN, and the residual stream's size."""
from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis.norms import batch_norm_drift, batch_norm_stats, layer_norm_stats, residual_stages
from model.capture import schema
from viz.figures.layernorm import (drift_figure, feature_histogram, gain_bias_figure, ln_vs_bn_figure,
                                   residual_norm_figure, token_stats_figure, tokens_that_fit)
from viz.figures.style import plotly_text
from viz.core.folder_text import code_span
from viz.core.i18n import t
from viz.core import view
from viz.core.text import plain, position_labels
from viz.elements.ui import look, matrix_frame, need_context, show_figure, token_window, type_scale

STACKS = ["encoder", "decoder"]
NORMS = ("norm_attn", "norm_cross", "norm_ff")   # where each sits: layernorm.place.<after|before>.<norm> in viz/locales
LN_FORMULA = (r"\mathrm{LN}(x)=\gamma\odot\frac{x-\mu}{\sigma}+\beta,\quad \mu=\frac1d\sum_{j=1}^{d}x_j,\quad "
              r"\sigma=\sqrt{\frac1d\sum_{j=1}^{d}(x_j-\mu)^2+\epsilon}")
POST_PRE_FORMULA = (r"\begin{aligned}\text{%(post)s:}&\ \ "
                    r"x\leftarrow\mathrm{LN}\big(x+\mathrm{Sublayer}(x)\big)\\ "
                    r"\text{%(pre)s:}&\ \ x\leftarrow x+\mathrm{Sublayer}\big(\mathrm{LN}(x)\big)\end{aligned}")


STAGE_WORDS = {"enc": "layernorm.stage.enc", "dec": "layernorm.stage.dec", "embedding": "layernorm.stage.embedding",
               "+attn": "layernorm.stage.attn", "+cross": "layernorm.stage.cross", "+ff": "layernorm.stage.ff"}


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
LAYERNORM_STACK_KEYS = {"decoder": "layernorm.stack.decoder", "encoder": "layernorm.stack.encoder"}


def stack_name(stack: str) -> str:
    return t(LAYERNORM_STACK_KEYS[stack])


def stage_label(label: str) -> str:
    """A residual_stages label ("enc L0 +attn") in the page's language; layer names (L0) stay."""
    return " ".join(t(STAGE_WORDS[w]) if w in STAGE_WORDS else w for w in label.split(" "))


NORM_PLACES = {  # (pre-norm?, norm) -> where the LayerNorm sits, in the catalogue
    (False, "norm_attn"): "layernorm.place.after.norm_attn", (False, "norm_cross"): "layernorm.place.after.norm_cross",
    (False, "norm_ff"): "layernorm.place.after.norm_ff", (True, "norm_attn"): "layernorm.place.before.norm_attn",
    (True, "norm_cross"): "layernorm.place.before.norm_cross", (True, "norm_ff"): "layernorm.place.before.norm_ff",
}


def norm_place(norm: str, pre_norm: bool) -> str:
    return t(NORM_PLACES[bool(pre_norm), norm])


def _stack_changed() -> None:
    """Layer, norm and token belong to the old stack: let the new one start from its defaults."""
    view.forget_url(view.LAYER, view.NORM, view.TOKEN)


def controls(cfg) -> tuple[str, int, str]:
    """Stack, layer and norm in one row; the options say what they are."""
    c1, c2, c3 = st.columns([1.3, 1, 3.4], vertical_alignment="center")
    stack = c1.radio(t("layernorm.stack"), STACKS, horizontal=True,
                     key=view.seeded("ln-stack", view.read(view.STACK, choices=STACKS)), on_change=_stack_changed, label_visibility="collapsed",
                     format_func=stack_name)
    n = schema.n_layers(cfg, stack)
    layer = c2.selectbox(t("ui.layer"), list(range(n)), key=view.seeded(f"ln-layer-{stack}", view.read(view.LAYER, hi=n - 1)),
                         format_func=lambda i: t("ui.layer_n", i=i), label_visibility="collapsed")
    norm_names = [k for k in NORMS if stack == "decoder" or k != "norm_cross"]
    norm = c3.radio(t("layernorm.norm"), norm_names, horizontal=True,
                    key=view.seeded(f"ln-norm-{stack}", view.read(view.NORM, choices=norm_names)),
                    format_func=lambda k: t("layernorm.norm_option", place=norm_place(k, cfg.norm_first)),
                    label_visibility="collapsed")
    return stack, layer, norm


def explain(ctx) -> None:
    st.header(t("layernorm.explain.header"))
    st.markdown(t("layernorm.explain.text"))
    st.latex(LN_FORMULA)
    st.latex(POST_PRE_FORMULA % {"post": t("layernorm.formula.post"), "pre": t("layernorm.formula.pre")})
    cfg = ctx.model.config
    if cfg.norm_first:
        said = [t("layernorm.explain.pre_norm", model=code_span(ctx.model_id))]
    else:
        said = [t("layernorm.explain.post_norm", model=code_span(ctx.model_id))]
        said += [t("layernorm.explain.final_norm")] if cfg.has_final_norm else []
    said += [t("layernorm.explain.ln_kind")] if cfg.ln_kind == "annotated" else []
    st.info(" ".join(said))


def one_token(ctx, stack: str, layer: int, norm: str, tokens: list[str]) -> int:
    """A token's features as histograms before and after, and the norm's learned gain and bias."""
    arrays = ctx.trace.arrays
    x_in, x_norm, x_out = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("in", "normalized", "out"))
    gain, bias = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("gain", "bias"))        # [D]
    mean_in, std_in = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("mean", "std"))    # [T]
    mean_after, std_after = layer_norm_stats(x_norm)                                                 # [T]
    c_token, _ = st.columns([1, 2])
    token = c_token.selectbox(t("layernorm.token.pick"), list(range(len(tokens))),
                               key=view.seeded(f"ln-token-{stack}", view.read(view.TOKEN, hi=len(tokens) - 1)),
                               format_func=lambda i: tokens[i])
    series = {t("layernorm.token.input"): x_in[token], t("layernorm.token.normalized"): x_norm[token],
              t("layernorm.token.output"): x_out[token]}
    tag = f"{ctx.model_id}-{stack}-L{layer}-{norm}"
    col_a, col_b = st.columns(2)
    with col_a:
        chosen = plotly_text([tokens[token]])[0]
        show_figure(feature_histogram(series, look(),
                                      title=t("layernorm.token.title", features=x_in.shape[1], token=chosen), width_px=type_scale().column_px()),
                    f"{tag}-token{token}",
                    matrix_frame(np.stack(list(series.values()), axis=1), list(range(x_in.shape[1])), list(series)),
                    key="ln-hist")
        st.caption(t("layernorm.token.caption", token=plain(tokens[token]), mean_in=f"{mean_in[token]:.4f}",
                     std_in=f"{std_in[token]:.4f}", mean_after=f"{mean_after[token]:.1e}",
                     std_after=f"{std_after[token]:.4f}"))
    with col_b:
        place = norm_place(norm, ctx.model.config.norm_first)
        show_figure(gain_bias_figure(gain, bias, look(), title=t("layernorm.gain.title", norm=place)), f"{tag}-gain-bias",
                    matrix_frame(np.stack([gain, bias], axis=1), list(range(gain.size)),
                                 [t("layernorm.gain"), t("layernorm.bias")]),
                    key="ln-gb")
        st.caption(t("layernorm.gain.caption"))
    return token


def ln_vs_bn(ctx, x_in: np.ndarray, tokens: list[str], tag: str, shown: slice) -> None:
    st.header(t("layernorm.bn.header"))
    st.markdown(t("layernorm.bn.text", tokens=len(tokens), features=x_in.shape[1]))
    show_figure(ln_vs_bn_figure(x_in, tokens, look(), title=t("layernorm.bn.title"),
                                shown=shown),
                f"{tag}-ln-vs-bn", matrix_frame(x_in, tokens, list(range(x_in.shape[1]))), key="ln-bn")
    _bn_mean, bn_std = batch_norm_stats(x_in)
    drift = batch_norm_drift(x_in, 0, ctx.model.config.ln_eps)
    st.caption(t("layernorm.bn.caption", tokens=len(tokens), features=bn_std.size, low=f"{bn_std.min():.3f}",
                 high=f"{bn_std.max():.3f}"))
    first = plotly_text(tokens[:1])[0]
    show_figure(drift_figure(drift, look(), 0, title=t("layernorm.drift.title", token=first)),
                f"{tag}-bn-drift", matrix_frame(drift[:, None], list(range(1, drift.size + 1)),
                                                [t("layernorm.drift.change")]),
                key="ln-drift")
    st.caption(t("layernorm.drift.caption", token=plain(tokens[0]), change=f"{drift[0]:.2f}"))


def residual_stream(ctx, labels: dict[str, list[str]]) -> None:
    cfg, arrays = ctx.model.config, ctx.trace.arrays
    st.header(t("layernorm.resid.header"))
    parts = []
    for s in STACKS:
        stages, norms = residual_stages(arrays, s, schema.n_layers(cfg, s))                         # [stages, T]
        parts.append((stack_name(s), [stage_label(stage) for stage in stages], norms, labels[s]))
    show_figure(residual_norm_figure(parts, look(), title=t("layernorm.resid.title")),
                f"{ctx.model_id}-residual-norms",
                matrix_frame(np.concatenate([p[2].mean(1) for p in parts])[:, None], sum((p[1] for p in parts), []),
                             [t("layernorm.resid.column")]), key="ln-resid")
    enc_norms = parts[0][2]
    if cfg.norm_first:
        st.caption(t("layernorm.resid.pre_norm", first=f"{enc_norms[0].mean():.1f}",
                     last=f"{enc_norms[-1].mean():.1f}"))
    else:
        later = enc_norms[1:].mean(1)                                                                # [stages - 1]
        st.caption(t("layernorm.resid.post_norm", first=f"{enc_norms[0].mean():.1f}", low=f"{later.min():.1f}",
                     high=f"{later.max():.1f}", root=f"{np.sqrt(cfg.d_model):.1f}"))


def render() -> None:
    ctx = need_context()
    trace, cfg, arrays = ctx.trace, ctx.model.config, ctx.trace.arrays
    labels = {stack: position_labels(schema.stack_tokens(trace.meta, stack)) for stack in schema.STACKS}

    st.title(t("layernorm.title"))
    stack, layer, norm = controls(cfg)
    tokens = labels[stack]
    x_in, x_norm = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("in", "normalized"))   # [T,D]
    mean_in, std_in = (arrays[schema.norm_name(stack, layer, norm, h)] for h in ("mean", "std"))    # [T]
    mean_after, std_after = layer_norm_stats(x_norm)                                                 # [T]
    input_is = t("layernorm.stats.input_pre") if cfg.norm_first else "x + Sublayer(x)"
    # a long sentence: the token charts show a window of it (the CSVs and the captions: every token)
    shown = token_window(len(tokens), tokens_that_fit(type_scale()), f"ln-window-{stack}")
    show_figure(token_stats_figure(tokens[shown], (mean_in[shown], std_in[shown]), (mean_after[shown], std_after[shown]),
                                   look(),
                                   title=t("layernorm.stats.title", stack=stack_name(stack), layer=layer,
                                           norm=norm_place(norm, cfg.norm_first),
                                           input=input_is)),
                f"{ctx.model_id}-{stack}-L{layer}-{norm}-stats",
                matrix_frame(np.stack([mean_in, std_in, mean_after, std_after], axis=1), tokens,
                             [t("layernorm.stats.col_mean_before"), t("layernorm.stats.col_std_before"),
                              t("layernorm.stats.col_mean_after"), t("layernorm.stats.col_std_after")]), key="ln-stats")
    decoder = ""
    if stack == "decoder":
        decoder = " " + t("layernorm.stats.decoder", tokens=t("layernorm.stats.teacher_forced")
                          if trace.meta["teacher_forced"] else t("layernorm.stats.own_output"))
    st.caption(t("layernorm.stats.caption", mean_low=f"{mean_in.min():.3f}", mean_high=f"{mean_in.max():.3f}",
                 std_low=f"{std_in.min():.3f}", std_high=f"{std_in.max():.3f}",
                 largest=f"{np.abs(mean_after).max():.1e}", after_low=f"{std_after.min():.6f}",
                 after_high=f"{std_after.max():.6f}", eps=f"{cfg.ln_eps:g}") + decoder)
    explain(ctx)
    st.header(t("layernorm.token.header"))
    token = one_token(ctx, stack, layer, norm, tokens)
    view.write_url({view.STACK: stack, view.LAYER: layer, view.NORM: norm, view.TOKEN: token})
    ln_vs_bn(ctx, x_in, tokens, f"{ctx.model_id}-{stack}-L{layer}-{norm}", shown)
    residual_stream(ctx, labels)


if __name__ == "__main__":
    render()
