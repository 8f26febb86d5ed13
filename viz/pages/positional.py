"""Positional encoding: the model's real PE table first, why order needs it, its geometry, and a word swap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.positional import diagonal_spread, order_gap, pe_similarity, rotation_errors, rotation_matrix
from model.analysis.word_order import first_two_words, permuted_pattern, swap_permutation
from model.capture import schema
from viz.figures.positional import (norm_tokens, norms_figure, order_gap_figure, order_tokens, pe_curves, pe_heatmap,
                                    rotation_error_figure, rotation_matrix_heatmap, similarity_heatmap,
                                    similarity_profile_figure, word_order_figure)
from viz.figures.attention import window_around
from viz.core.folder_text import code_span
from viz.core.i18n import error_text, t
from viz.services.analyses import encoder_patterns, paper_table, positional_table
from viz.core import view
from viz.core.view import parse_index_list
from viz.core.text import plain, position_labels
from viz.elements.ui import look, matrix_frame, need_context, show_figure, stop_page, token_window, type_scale

MAX_DIMS = 8
SWAP_CONTEXT = 40      # tokens of the swapped input written out around the swap
TABLE_OPEN = "pe-table-open"   # the full table's expander (its state: drawn only while open)
ZOOM_DIMS = 8          # M_k's corner with numbers in its cells: 4 rotation blocks stay readable at half width
DIMS_SPAN = (0, 1 / 8, 1 / 4, 1 / 2)   # default curves at these fractions of d_model: fast to slow (sine dims;
                                      # wavelengths 2π·10000^f: about 6, 20, 63 and 628 positions)
# Formulas one short line each: one long line was cut at the right edge of a 1280x720 projector.
PE_FORMULA = (r"\begin{aligned}PE_{(pos,\,2i)}&=\sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)\\"
              r"PE_{(pos,\,2i+1)}&=\cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)\\"
              r"x_{pos}&=\sqrt{d_{model}}\;E[\text{token}]+PE_{pos}\end{aligned}")
SIMILARITY_FORMULA = (r"\begin{aligned}PE_p\cdot PE_q&=\sum_i \sin(p\omega_i)\sin(q\omega_i)+\cos(p\omega_i)"
                      r"\cos(q\omega_i)\\&=\sum_i\cos\big((p-q)\,\omega_i\big)\end{aligned}")
ROTATION_FORMULA = (r"\begin{pmatrix}\sin((p+k)\omega_i)\\ \cos((p+k)\omega_i)\end{pmatrix}="
                    r"\begin{pmatrix}\cos k\omega_i & \sin k\omega_i\\ -\sin k\omega_i & \cos k\omega_i\end{pmatrix}"
                    r"\begin{pmatrix}\sin(p\omega_i)\\ \cos(p\omega_i)\end{pmatrix}")


def default_dims(d_model: int) -> list[int]:
    """Sine dimensions that span fast to slow waves (0, d/8, d/4, d/2): 0, 1, 8, 9 all oscillated fast."""
    return list(dict.fromkeys(2 * int(f * d_model // 2) for f in DIMS_SPAN if 2 * int(f * d_model // 2) < d_model))


def dims_from_url(d_model: int) -> list[int]:
    default = default_dims(d_model)
    raw = view.read(view.DIMS)
    if raw is None:
        return default
    try:
        return parse_index_list(raw, 0, d_model - 1, MAX_DIMS)
    except ValueError as e:
        st.warning(t("positional.url.dims", raw=plain(raw[:40]), error=plain(error_text(e)),
                     dims=", ".join(map(str, default))))
        return default


def swap_from_url(n_src: int, default: tuple[int, int]) -> tuple[int, int]:
    raw = view.read(view.SWAP)
    if raw is None:
        return default
    try:
        pair = parse_index_list(raw, 0, n_src - 1, 2)
        if len(pair) != 2:
            raise ValueError(t("positional.url.two"))
        return pair[0], pair[1]
    except ValueError as e:
        st.warning(t("positional.url.swap", raw=plain(raw[:40]), error=plain(error_text(e))))
        return default


def table_section(ctx, full_table: np.ndarray, n_positions: int, n_src: int) -> None:
    """The model's whole PE table, how to read it and the check against the trace, one click away: drawn as the
    page's picture, N x d_model cells read as a moire on a projector. Built and drawn only while open (a click
    reruns the page): folded, its N x d_model cells (216 KB of chart JSON at 64 x 256) and their CSV were built,
    sent and drawn on every visit (issue 46 item 9)."""
    cfg, trace = ctx.model.config, ctx.trace
    table = full_table[:n_positions]                                                    # [N, D]
    with st.expander(t("step.full"), key=TABLE_OPEN, on_change="rerun") as box:
        if not box.open:
            return
        table_figure(ctx, table, n_positions, n_src)
        trace_pe = trace[schema.embed_name("encoder", "pos")]                           # [S, D]
        shared = min(n_src, cfg.max_len)
        st.caption(t("positional.table.caption", n=n_src,
                     error=f"{np.abs(trace_pe[:shared] - full_table[:shared]).max():.1e}"))


def table_figure(ctx, table: np.ndarray, n_positions: int, n_src: int) -> None:
    cfg = ctx.model.config
    show_figure(pe_heatmap(table, look(), n_src,
                           title=t("positional.table.title", last=n_positions - 1, d=cfg.d_model)),
                f"{ctx.model_id}-pe-table", matrix_frame(table, list(range(n_positions)), list(range(cfg.d_model))),
                key="pe-table")


def why_section(ctx, learned: bool) -> None:
    cfg = ctx.model.config
    st.header(t("positional.why.header"))
    st.markdown(t("positional.why.text"))
    st.latex(PE_FORMULA)
    if learned:
        st.info(t("positional.why.learned", model=code_span(ctx.model_id), max_len=cfg.max_len, d=cfg.d_model))
    else:
        st.info(t("positional.why.sinusoidal", model=code_span(ctx.model_id), max_len=cfg.max_len, d=cfg.d_model))


def curves_section(ctx, table: np.ndarray, n_src: int, picker=None) -> list[int]:
    """The page's picture: a few dimensions of the table as waves, slow to fast (picker: where the dimension
    choice goes, beside the positions slider)."""
    d_model, n_positions = table.shape[1], table.shape[0]
    dims = (picker or st).multiselect(t("positional.curves.dims"), list(range(d_model)),
                          max_selections=MAX_DIMS, key=view.seeded("pe-dims", dims_from_url(d_model)),
                          format_func=lambda d: t("positional.curves.dim_option", d=d, wave="sin" if d % 2 == 0 else "cos"))
    if dims:
        show_figure(pe_curves(table, dims, look(), n_src, title=t("positional.curves.title")),
                    f"{ctx.model_id}-pe-curves", matrix_frame(table[:, dims], list(range(n_positions)),
                                                              [t("positional.curves.column", d=d) for d in dims]),
                    key="pe-curves")
        st.caption(t("positional.curves.caption"))
    else:
        st.info(t("positional.curves.none"))
    return dims


def similarity_section(ctx, table: np.ndarray, n_src: int, learned: bool) -> None:
    st.header(t("positional.similarity.header"))
    n_positions = table.shape[0]
    sim = pe_similarity(table)                                                          # [N, N]
    st.latex(SIMILARITY_FORMULA)
    col_a, col_b = st.columns([3, 2])
    with col_a:
        show_figure(similarity_heatmap(sim, look(), n_src, title=t("positional.similarity.title")),
                    f"{ctx.model_id}-pe-similarity",
                    matrix_frame(sim, list(range(n_positions)), list(range(n_positions))), key="pe-sim")
    with col_b:
        show_figure(similarity_profile_figure(sim, look(), title=t("positional.similarity.row")),
                    f"{ctx.model_id}-pe-similarity-row0",
                    matrix_frame(sim[0][:, None], list(range(n_positions)), ["PE(0)·PE(k)"]), key="pe-sim-row")
    spread = diagonal_spread(sim)
    st.caption(t("positional.similarity.caption", spread=f"{spread:.2g}", diagonal=f"{sim[0, 0]:.1f}") + " "
               + (t("positional.similarity.learned") if learned else t("positional.similarity.sinusoidal")))


def rotation_section(ctx, full_table: np.ndarray, learned: bool) -> int:
    cfg = ctx.model.config
    d_model, max_len = cfg.d_model, cfg.max_len
    st.header(t("positional.rotation.header"))
    st.markdown(t("positional.rotation.text"))
    st.latex(ROTATION_FORMULA)
    rot_table = paper_table(max_len, d_model) if learned else full_table   # the model's own table
    offset_default = min(3, max_len - 1)
    offset = st.slider(t("positional.rotation.offset"), 1, max_len - 1,
                       key=view.seeded("pe-offset", view.read(view.OFFSET, default=offset_default, hi=max_len - 1)))
    m_k = rotation_matrix(offset, d_model)                                              # [D, D]
    errors = rotation_errors(rot_table, offset)                                         # [max_len - k]
    plain_gap = np.linalg.norm(rot_table[offset:] - rot_table[:-offset], axis=1)
    c1, c2, c3 = st.columns(3)
    c1.metric(t("positional.rotation.max"), f"{errors.max():.1e}")
    c2.metric(t("positional.rotation.checked"), f"{errors.size}")
    c3.metric(t("positional.rotation.scale"), f"{plain_gap.mean():.2f}")
    col_a, col_b = st.columns(2)
    with col_a:
        show_figure(rotation_error_figure(errors, offset, look(), title=t("positional.rotation.error_title", k=offset)),
                    f"{ctx.model_id}-pe-rotation-error",
                    matrix_frame(errors[:, None], list(range(errors.size)), [t("positional.rotation.error")]),
                    key="pe-rot-err")
        st.caption(t("positional.rotation.learned") if learned else t("positional.rotation.own"))
    with col_b:
        zoom = min(ZOOM_DIMS, d_model)
        show_figure(rotation_matrix_heatmap(m_k, look(), zoom,
                                            title=t("positional.rotation.m_title", k=offset, zoom=zoom, d=d_model)),
                    f"pe-rotation-M{offset}-d{d_model}", matrix_frame(m_k, list(range(d_model)), list(range(d_model))),
                    key="pe-rot-m")
        st.caption(t("positional.rotation.m_caption"))
    return offset


def norms_section(ctx, src_labels: list[str]) -> None:
    trace, d_model = ctx.trace, ctx.model.config.d_model
    learned = ctx.model.config.pe == "learned"
    st.header(t("positional.norms.header"))
    tokens_scaled = trace[schema.embed_name("encoder", "tokens")]                       # [S, D]
    series = {
        t("positional.norms.embedding"): np.linalg.norm(tokens_scaled / np.sqrt(d_model), axis=1),
        t("positional.norms.scaled", root=f"{np.sqrt(d_model):.1f}"): np.linalg.norm(tokens_scaled, axis=1),
        t("positional.norms.pe"): np.linalg.norm(trace[schema.embed_name("encoder", "pos")], axis=1),
        t("positional.norms.sum"): np.linalg.norm(trace[schema.embed_name("encoder", "out")], axis=1),
    }
    st.markdown(t("positional.norms.text", d=d_model))
    shown = token_window(len(src_labels), norm_tokens(type_scale()), "pe-norms-window")   # a long sentence: a window
    show_figure(norms_figure(src_labels[shown], {name: norms[shown] for name, norms in series.items()}, look(),
                             title=t("positional.norms.title")),
                f"{ctx.model_id}-pe-norms",
                matrix_frame(np.stack(list(series.values()), axis=1), src_labels, list(series)), key="pe-norms")
    norm_tok, norm_pe, norm_sum = (series[k][0] for k in list(series)[1:])
    st.caption(t("positional.norms.caption", token=plain(src_labels[0]), tok=f"{norm_tok:.3f}", pe=f"{norm_pe:.3f}",
                 half="" if learned else t("positional.norms.half", root=f"{np.sqrt(d_model / 2):.3f}"),
                 total=f"{norm_sum:.3f}"))


def word_order_section(ctx, src_tokens: list[str], src_labels: list[str]) -> None:
    trace = ctx.trace
    n_src = len(src_labels)
    st.header(t("positional.order.header"))
    st.markdown(t("positional.order.text"))
    if n_src < 2:
        st.info(t("positional.order.short"))
        stop_page()
    default = first_two_words(src_tokens)          # two words, not the style token <modern> and "The"
    swap_a, swap_b = swap_from_url(n_src, default)
    c1, c2 = st.columns(2)
    a = c1.selectbox(t("positional.order.swap"), list(range(n_src)), key=view.seeded("pe-swap-a", swap_a),
                     format_func=lambda i: src_labels[i])
    b = c2.selectbox(t("positional.order.with"), list(range(n_src)), key=view.seeded("pe-swap-b", swap_b),
                     format_func=lambda i: src_labels[i])
    view.write_url({view.SWAP: f"{a},{b}" if (a, b) != default else None})
    if a == b:
        st.info(t("positional.order.same"))
        stop_page()
    perm = swap_permutation(n_src, a, b)
    ids = tuple(int(i) for i in trace.meta["src_ids"])
    swapped_ids = tuple(ids[i] for i in perm)
    # the swapped input around the two tokens (a 512-token sentence ran to twenty lines here)
    near = window_around((a + b) // 2, n_src, max(abs(a - b) + 9, SWAP_CONTEXT))
    shown_tokens = [src_tokens[i] for i in perm[near]]
    st.text(t("positional.order.input") + " " + " ".join(["…"] * (near.start > 0) + shown_tokens
                                                          + ["…"] * (near.stop < n_src)))
    with st.spinner(t("positional.order.spinner")):
        runs = {(s, drop): encoder_patterns(ctx.model_id, s, drop) for s in (ids, swapped_ids)
                for drop in (False, True)}
    gap_pe = order_gap(runs[ids, False], runs[swapped_ids, False], perm)                # [L]
    gap_no_pe = order_gap(runs[ids, True], runs[swapped_ids, True], perm)               # [L]
    show_figure(order_gap_figure(gap_pe, gap_no_pe, look(), title=t("positional.order.gap_title")),
                f"{ctx.model_id}-pe-word-order",
                matrix_frame(np.stack([gap_pe, gap_no_pe], axis=1),
                             [t("ui.layer_n", i=i) for i in range(gap_pe.size)],
                             [t("positional.order.with_pe_short"), t("positional.order.without_pe_short")]),
                key="pe-order")
    st.caption(t("positional.order.gap_caption", with_pe=f"{gap_pe.max():.3f}", without_pe=f"{gap_no_pe.max():.1e}"))
    # Labels go to the figure builder as they are: it escapes them for plotly once (escaping here too
    # showed "7 &lt;/s&gt;").
    swapped_labels = position_labels([src_tokens[i] for i in perm])
    reordered = permuted_pattern(runs[ids, False][0].mean(0), perm)                     # [S, S]
    actual = runs[swapped_ids, False][0].mean(0)                                        # [S, S]
    frames = {t("positional.order.frame_original"): reordered, t("positional.order.frame_swapped"): actual,
              t("positional.order.frame_difference"): actual - reordered}
    shown = token_window(n_src, order_tokens(type_scale()), "pe-order-window")   # every label legible in a third
    show_figure(word_order_figure(reordered[shown, shown], actual[shown, shown], swapped_labels[shown], look()),
                f"{ctx.model_id}-pe-order-maps",
                pd.concat({name: matrix_frame(m, swapped_labels, swapped_labels) for name, m in frames.items()}),
                key="pe-order-maps")
    st.caption(t("positional.order.maps_caption"))


def render() -> None:
    ctx = need_context()
    trace, cfg = ctx.trace, ctx.model.config
    max_len = cfg.max_len
    src_tokens = trace.meta["src_tokens"]
    src_labels = position_labels(src_tokens)
    n_src = len(src_labels)
    learned = cfg.pe == "learned"
    full_table = positional_table(ctx.model_id)         # [max_len, D]: the sinusoidal buffer or the learned weights

    st.title(t("positional.title"))
    n_default = min(64, max_len)
    c_slider, c_dims = st.columns([2, 3])
    n_positions = c_slider.slider(t("positional.positions"), 2, max_len,
                                  key=view.seeded("pe-positions", view.read(view.POSITIONS, default=n_default, hi=max_len)))
    table = full_table[:n_positions]
    dims = curves_section(ctx, table, n_src, picker=c_dims)        # the picture: waves, slow to fast
    table_section(ctx, full_table, n_positions, n_src)             # every number, one click away

    why_section(ctx, learned)
    similarity_section(ctx, table, n_src, learned)
    offset = rotation_section(ctx, full_table, learned)
    view.write_url({view.POSITIONS: n_positions if n_positions != n_default else None,
                    view.DIMS: ",".join(map(str, dims)) if dims != default_dims(cfg.d_model) else None,
                    view.OFFSET: offset if offset != min(3, max_len - 1) else None})
    norms_section(ctx, src_labels)
    word_order_section(ctx, src_tokens, src_labels)


if __name__ == "__main__":
    render()
