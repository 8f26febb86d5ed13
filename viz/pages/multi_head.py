"""Multi-head assembly: h head outputs -> concatenation -> W^O -> + residual -> LayerNorm, on real numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.attention_math import concat_heads, dim_labels, future_mask, max_abs_error, output_projection
from model.analysis.heads import head_summary, head_traits
from model.analysis.norms import layer_norm, token_norms
from model.analysis.vectors import head_contribution_norms
from model.capture import schema
from model.capture.schema import sublayer_names
from viz.figures.multihead import (concat_heatmap, head_patterns, head_window, per_head_outputs, stage_heatmap,
                                  stage_norms)
from viz.figures.vectors import contribution_map
from viz.i18n import catalogue_keys, kind_title, t, words
from viz import view
from viz.text import attention_labels
from viz.ui import explained, matrix_frame, need_context, show_figure, token_window, type_scale

KINDS = list(schema.KINDS)
TOLERANCE = 1e-4   # float32 model vs float64 recomputation
# Long formulas are split into lines that fit a 1280x720 projector's page width (one line is cut at "…VW").
MULTIHEAD_FORMULA = [r"\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O",
                     r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\;KW_i^K,\;VW_i^V)"]
POST_NORM = r"x_{\text{next}} = \mathrm{LayerNorm}\big(x + \mathrm{MultiHead}(x)\big)"
HALF_PX = 280      # the plot area of a matrix in one of two columns, on a projector
HEAD_COLUMNS = 4   # a long sentence's heads through a window of as many tokens as four panels a row label...
MIN_WINDOW = 14    # ...but never fewer than this (three panels a row then: the page grows by under a screen)
PRE_NORM = r"x_{\text{next}} = x + \mathrm{MultiHead}(\mathrm{LayerNorm}(x))"


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
MULTIHEAD_TRAIT_KEYS = catalogue_keys("multihead.trait", "self", "previous", "next", "far", "key", "sharp", "broad",
                                      "order")


def controls(cfg) -> tuple[str, int]:
    """Attention kind and layer in one compact row (the options say what they are)."""
    c_kind, c_layer = st.columns([5, 1], vertical_alignment="center")
    kind = c_kind.radio(t("multihead.kind"), KINDS, horizontal=True,
                        key=view.seeded("mh-kind", view.read(view.KIND, choices=KINDS)), format_func=kind_title,
                        label_visibility="collapsed")
    n_layers = schema.n_layers(cfg, kind)
    layer = c_layer.selectbox(t("ui.layer"), list(range(n_layers)),
                              key=view.seeded(f"mh-layer-{kind}", view.read(view.LAYER, hi=n_layers - 1)),
                              format_func=lambda i: t("ui.layer_n", i=i),
                              label_visibility="collapsed")
    return kind, layer


def windows(kind: str, n_rows: int, n_cols: int) -> tuple[slice, slice]:
    """The queries and keys the page's pictures show: all of a short sentence; of a long one, as many as a
    head panel labels legibly in a grid HEAD_COLUMNS wide (at least MIN_WINDOW), from where the reader says (self-attention's
    queries and keys are the same tokens: one window; cross-attention's: one each); a sentence a token or two longer
    than that whole (head_window)."""
    def size(n: int) -> int:
        return head_window(n, HEAD_COLUMNS, MIN_WINDOW, type_scale())
    queries = token_window(n_rows, size(n_rows), "mh-window")
    keys = queries if kind != "cross" else token_window(n_cols, size(n_cols), "mh-window-keys", "ui.window.keys")
    return queries, keys


def heads_side_by_side(patterns: np.ndarray, rows: list[str], cols: list[str], kind: str, where: str,
                       tag: str, shown: tuple[slice, slice], at: tuple) -> None:
    """The page's picture: every head's weights (the queries and keys `shown`), then how to read them."""
    n_heads = patterns.shape[0]
    masked = future_mask(kind, len(rows), len(cols))
    queries, keys = shown
    patterns, rows, cols = patterns[:, queries, keys], rows[queries], cols[keys]
    show_figure(view.shared_memo("mh-heads", at, lambda: head_patterns(
                    patterns, rows, cols, words(), title=t("multihead.heads.title", where=where, heads=n_heads),
                    masked=None if masked is None else masked[queries, keys], type_scale=type_scale())),
                f"{tag}-heads", lambda: pd.concat({f"head {h}": matrix_frame(patterns[h], rows, cols)
                                                   for h in range(n_heads)}),
                key="mh-heads")
    st.caption(t("multihead.heads.caption") + (" " + t("multihead.heads.decoder") if kind != "encoder" else ""))


def describe(patterns: np.ndarray, cols: list[str], positional: bool) -> list[str]:
    """head_traits (model.analysis.heads): what sets each head apart, measured, in the page's language."""
    words = []
    for trait, v in head_traits(patterns, positional):
        values = {"share": f"{v['share']:.0%}"} if "share" in v else {}
        if trait == "key":
            values["token"] = cols[v["index"]]
        elif trait == "far":
            values["distance"] = f"{v['distance']:.1f}"
        elif trait == "broad":
            values.update(n=f"{v['n']:.0f}", bits=f"{v['bits']:.2f}")
        elif trait == "order":
            values["r"] = f"{v['r']:.2f}"
        words.append(t(MULTIHEAD_TRAIT_KEYS[trait], **values))
    return words


def head_table(patterns: np.ndarray, cols: list[str], kind: str) -> None:
    stats = head_summary(patterns)
    positional = kind != "cross"   # an offset means something only within one sequence
    two = np.vectorize("{:.2f}".format, otypes=[str])        # a static table prints its numbers as given
    table = {
        t("multihead.table.does"): describe(patterns, cols, positional),
        t("multihead.table.entropy"): two(stats["entropy"]),
        t("multihead.table.max"): two(stats["max_weight"]),
        t("multihead.table.favourite"): [cols[i] for i in stats["favourite"]],
        t("multihead.table.favourite_weight"): two(stats["favourite_weight"]),
    }
    if positional:
        table[t("multihead.table.offset")] = [f"{int(o)}" for o in stats["offset"]]
        table[t("multihead.table.share")] = two(stats["offset_share"])
    # A static table wraps its headers and words: the data frame cut its last columns off at 1280 px ('us…' in
    # English, '具有该偏移的查询占比' hidden in Chinese) and kept 14 px text in presenter mode.
    heads = [t("ui.head_n", h=h).replace(" ", "\u00a0") for h in range(patterns.shape[0])]   # 'head 0' one line
    st.table(pd.DataFrame(table, index=heads))
    st.caption(t("multihead.table.caption"))          # one line; what each column measures is in explain()


def explain(cfg, kind: str) -> None:
    """How the heads are put together, with the formulas, and what the table's columns measure, folded:
    the page stays about three screens long."""
    h, d, dh = cfg.n_heads, cfg.d_model, cfg.d_head
    with explained(t("multihead.formulas")):        # open on the projector: the W^O assembly is the lesson
        st.markdown(t("multihead.explain", h=h, d=d, d_k=dh))
        for line in MULTIHEAD_FORMULA:
            st.latex(line)
        st.latex(PRE_NORM if cfg.norm_first else POST_NORM)
        st.markdown(t("multihead.table.measures")
                    + (" " + t("multihead.table.caption_offset") if kind != "cross" else ""))


def render() -> None:
    ctx = need_context()
    trace, cfg, arrays = ctx.trace, ctx.model.config, ctx.trace.arrays
    n_heads, d, dh = cfg.n_heads, cfg.d_model, cfg.d_head

    st.title(t("multihead.title"))
    kind, layer = controls(cfg)
    view.write_url({view.KIND: kind, view.LAYER: layer})
    names = sublayer_names(kind, layer, cfg.norm_first)
    rows, cols = attention_labels(trace.meta, kind)
    tag = f"{ctx.model_id}-{kind}-L{layer}"
    where = t("multihead.where", kind=kind_title(kind), layer=layer)

    # -- the real numbers --------------------------------------------------------------------------
    z = arrays[schema.attn_name(kind, layer, "z")]                                  # [H,T,Dh]
    patterns = arrays[schema.attn_name(kind, layer, "pattern")]                     # [H,T,S]
    concat = concat_heads(z)                                                        # [T,D]
    attn_out = arrays[schema.attn_name(kind, layer, "out")]                         # [T,D] after W^O
    residual = arrays[names.residual]                                               # [T,D] the stream added back
    summed = residual.astype(np.float64) + attn_out                                 # [T,D]
    after = arrays[names.after]                                                     # [T,D] the next residual stream
    w_o, b_o = ctx.model.attention_weights(names.attn, "o")
    checks = [(t("multihead.check.wo"),
               max_abs_error(output_projection(concat, w_o, b_o), attn_out))]
    if cfg.norm_first:
        checks.append((t("multihead.check.sum_next"), max_abs_error(summed, after)))
    else:
        checks.append((t("multihead.check.sum_ln"), max_abs_error(summed, arrays[names.norm_hook("in")])))
        checks.append((t("multihead.check.ln"),
                       max_abs_error(layer_norm(summed, arrays[names.norm_hook("gain")],
                                                arrays[names.norm_hook("bias")], cfg.ln_eps), after)))
    dims = dim_labels(d)

    # -- the picture: heads side by side ---------------------------------------------------------------
    shown = windows(kind, len(rows), len(cols))
    # every figure here is the trace's at this layer, window, language and type scale: built once per worker
    at = (ctx.trace_key, kind, layer, tuple((part.start, part.stop) for part in shown), words(), type_scale())
    heads_side_by_side(patterns, rows, cols, kind, where, tag, shown, at)
    head_table(patterns, cols, kind)                  # under the picture it names, its caption its heading
    # the pictures below show the window's tokens too (the table and the checks measure the whole sentence)
    window = shown[0]
    rows, z, concat, attn_out, summed = rows[window], z[:, window], concat[window], attn_out[window], summed[window]
    residual, after = residual[window], after[window]

    # -- assembly: each head's share of the output, and the size of each token after each stage, as two
    # tabs of one picture's room (the page is about three screens at 1280x720) ------------
    share_tab, norms_tab = st.tabs([t("multihead.share.tab"), t("multihead.norms.header")])
    # the teaching picture of stages 1-3: Concat(z) W^O = sum over heads of z_h W^O_h, so each head's share
    # of every token's output has a length; the 256-column matrices are one click away
    contributions = head_contribution_norms(z, w_o)                                 # [T,H]
    head_names = [t("ui.head_n", h=h) for h in range(n_heads)]
    with share_tab:
        show_figure(view.shared_memo("mh-shares", at, lambda: contribution_map(
                        contributions, rows, head_names, words(), title=t("multihead.share.title", where=where),
                        type_scale=type_scale())),
                    f"{tag}-head-shares", lambda: matrix_frame(contributions, rows, head_names), key="mh-shares")
        st.caption(t("multihead.share.caption"))
    stages = {t("multihead.norms.input"): token_norms(residual), t("multihead.norms.concat"): token_norms(concat),
              t("multihead.norms.out"): token_norms(attn_out), t("multihead.norms.sum"): token_norms(summed)}
    if not cfg.norm_first:
        stages[t("multihead.norms.ln")] = token_norms(after)
    with norms_tab:
        show_figure(view.shared_memo("mh-norms", at, lambda: stage_norms(
                        stages, rows, words(), title=t("multihead.norms.title", where=where),
                        type_scale=type_scale())), f"{tag}-norms",
                    lambda: pd.DataFrame(stages, index=rows), key="mh-norms")

    explain(cfg, kind)
    with st.expander(t("multihead.full")):
        st.subheader(t("multihead.stage1", n=len(rows), d_k=dh))
        show_figure(view.shared_memo("mh-z", at, lambda: per_head_outputs(
                        z, rows, words(), title=t("multihead.z.title", where=where), type_scale=type_scale())),
                    f"{tag}-z",
                    lambda: pd.concat({f"head {h}": matrix_frame(z[h], rows, dim_labels(dh)) for h in range(n_heads)}),
                    key="mh-z")

        st.subheader(t("multihead.stage2", n=len(rows), heads=n_heads, d_k=dh, d=d))
        st.markdown(t("multihead.stage2.text", d_k=dh, last=dh - 1))
        show_figure(view.shared_memo("mh-concat", at, lambda: concat_heatmap(
                        concat, rows, n_heads, words(), title=t("multihead.concat.title"),
                        type_scale=type_scale())), f"{tag}-concat",
                    lambda: matrix_frame(concat, rows, dims), key="mh-concat")

        left, right = st.columns(2)
        with left:
            st.subheader(t("multihead.stage3", d=d))
            st.markdown(t("multihead.stage3.text"))
            show_figure(view.shared_memo("mh-out", at, lambda: stage_heatmap(
                            attn_out, rows, words(), t("multihead.out.title"), plot_px=HALF_PX,
                            type_scale=type_scale())),
                        f"{tag}-out", lambda: matrix_frame(attn_out, rows, dims), key="mh-out")
        with right:
            st.subheader(t("multihead.stage4"))
            st.markdown(t("multihead.stage4.text"))
            show_figure(view.shared_memo("mh-sum", at, lambda: stage_heatmap(
                            summed, rows, words(), t("multihead.sum.title"), plot_px=HALF_PX,
                            type_scale=type_scale())), f"{tag}-sum",
                        lambda: matrix_frame(summed, rows, dims), key="mh-sum")

        if not cfg.norm_first:
            st.subheader(t("multihead.stage5"))
            st.markdown(t("multihead.stage5.text", d=d))
            show_figure(view.shared_memo("mh-norm", at, lambda: stage_heatmap(
                            after, rows, words(), t("multihead.norm.title"), type_scale=type_scale())),
                        f"{tag}-norm", lambda: matrix_frame(after, rows, dims), key="mh-norm")
        else:
            st.caption(t("multihead.pre_norm"))

    passed = sum(error < TOLERANCE for _, error in checks)
    label = t("multihead.checks.summary", n=passed, total=len(checks), error=f"{max(error for _, error in checks):.1e}")
    with st.expander(label, expanded=passed < len(checks)):     # open when a stage does not reproduce the model
        for description, error in checks:
            ok = error < TOLERANCE
            (st.success if ok else st.error)(t("multihead.check", description=description, error=f"{error:.2e}")
                                             + ("" if ok else " " + t("step.check.large")))


if __name__ == "__main__":
    render()
