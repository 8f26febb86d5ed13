"""Positional encoding: the model's real PE table first, why order needs it, its geometry, and a word swap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.positional import diagonal_spread, order_gap, pe_similarity, rotation_errors, rotation_matrix
from model.analysis.word_order import permuted_pattern, swap_permutation
from model.capture import schema
from viz.figures.positional import (norms_figure, order_gap_figure, pe_curves, pe_heatmap, rotation_error_figure,
                                    rotation_matrix_heatmap, similarity_heatmap, similarity_profile_figure,
                                    word_order_figure)
from viz.services import encoder_patterns, paper_table, positional_table
from viz.state import parse_index_list, qp_int, qp_str, set_query
from viz.text import plain, position_labels
from viz.ui import matrix_frame, need_context, show_figure, stop_page

MAX_DIMS = 8
ZOOM_DIMS = 8          # M_k's corner with numbers in its cells: 4 rotation blocks stay readable at half width
DEFAULT_DIMS = (0, 1, 8, 9)
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
    return [d for d in DEFAULT_DIMS if d < d_model]


def dims_from_url(d_model: int) -> list[int]:
    default = default_dims(d_model)
    raw = qp_str("dims")
    if raw is None:
        return default
    try:
        return parse_index_list(raw, 0, d_model - 1, MAX_DIMS)
    except ValueError as e:
        st.warning(f"URL parameter dims={plain(raw[:40])} was not used ({plain(str(e))}); showing dimensions "
                   f"{', '.join(map(str, default))}.")
        return default


def swap_from_url(n_src: int) -> tuple[int, int]:
    default = (0, 1)
    raw = qp_str("swap")
    if raw is None:
        return default
    try:
        pair = parse_index_list(raw, 0, n_src - 1, 2)
        if len(pair) != 2:
            raise ValueError("give two different positions, e.g. 0,2")
        return pair[0], pair[1]
    except ValueError as e:
        st.warning(f"URL parameter swap={plain(raw[:40])} was not used ({plain(str(e))}); swapping positions 0 and 1.")
        return default


def table_section(ctx, full_table: np.ndarray, n_positions: int, n_src: int) -> None:
    """The page's picture: the model's PE table, then how to read it and the check against the trace."""
    cfg, trace = ctx.bundle.config, ctx.trace
    table = full_table[:n_positions]                                                    # [N, D]
    show_figure(pe_heatmap(table, n_src, title=f"The model's positional encoding: positions 0–{n_positions - 1} × "
                                               f"{cfg.d_model} dimensions"),
                f"{ctx.model_id}-pe-table", matrix_frame(table, list(range(n_positions)), list(range(cfg.d_model))),
                key="pe-table")
    trace_pe = trace[schema.embed_name("encoder", "pos")]                               # [S, D]
    shared = min(n_src, cfg.max_len)
    st.caption("Each row is the vector added to the token at that position; the green box is your sentence. Left "
               "columns oscillate fast, right columns slowly, like the hands of a clock, so every position gets its "
               f"own pattern. Check: the {n_src} rows the model added to your sentence (src_embed.hook_pos) differ "
               f"from this table by at most {np.abs(trace_pe[:shared] - full_table[:shared]).max():.1e}.")


def why_section(ctx, learned: bool) -> None:
    cfg = ctx.bundle.config
    st.header("Why a position vector?")
    st.markdown(
        "Attention compares every token with every other token, but nothing in "
        "$\\mathrm{softmax}(QK^\\top/\\sqrt{d_k})V$ knows *where* a token stands: shuffle the words and each token "
        "gets the same attention, just in a new row. On its own, self-attention sees a **bag of words**, so *dog "
        "bites man* and *man bites dog* would look the same. The fix is to **add** a position vector to each token "
        "embedding before the first layer. Adding is no loss compared with concatenating: concatenating "
        "[embedding; position] and then multiplying by a weight matrix $W=[W_e; W_p]$ gives $W_e e + W_p p$, which "
        "is an addition of two projected vectors.")
    st.latex(PE_FORMULA)
    if learned:
        st.info(f"This model ({ctx.model_id}) uses a **learned** positional embedding: a trained table of "
                f"{cfg.max_len} × {cfg.d_model} numbers instead of the formula. The figures show its real table; the "
                "rotation demonstration uses the paper's sinusoidal table, which is the one with that property.")
    else:
        st.info(f"This model ({ctx.model_id}) uses the paper's **sinusoidal** encoding (no trained weights; the other "
                f"option is a learned table). d_model = {cfg.d_model}, positions up to {cfg.max_len}.")


def curves_section(ctx, table: np.ndarray, n_src: int) -> list[int]:
    d_model, n_positions = table.shape[1], table.shape[0]
    dims = st.multiselect("Dimensions to plot", list(range(d_model)), default=dims_from_url(d_model),
                          max_selections=MAX_DIMS, key="pe-dims",
                          format_func=lambda d: f"{d} ({'sin' if d % 2 == 0 else 'cos'})")
    if dims:
        show_figure(pe_curves(table, dims, n_src, title="Each dimension is a wave over positions"),
                    f"{ctx.model_id}-pe-curves", matrix_frame(table[:, dims], list(range(n_positions)),
                                                              [f"dim {d}" for d in dims]), key="pe-curves")
        st.caption("Dimensions 2i and 2i+1 share one frequency ω_i = 1/10000^(2i/d): a sine and a cosine of the "
                   "same angle, i.e. a point going round a circle. Higher pairs turn more slowly.")
    else:
        st.info("Choose at least one dimension to plot its curve.")
    return dims


def similarity_section(ctx, table: np.ndarray, n_src: int, learned: bool) -> None:
    st.header("Similarity depends on distance")
    n_positions = table.shape[0]
    sim = pe_similarity(table)                                                          # [N, N]
    st.latex(SIMILARITY_FORMULA)
    col_a, col_b = st.columns([3, 2])
    with col_a:
        show_figure(similarity_heatmap(sim, n_src, title="PE · PEᵀ between every two positions"),
                    f"{ctx.model_id}-pe-similarity",
                    matrix_frame(sim, list(range(n_positions)), list(range(n_positions))), key="pe-sim")
    with col_b:
        show_figure(similarity_profile_figure(sim, title="One row: PE(0) · PE(k)"),
                    f"{ctx.model_id}-pe-similarity-row0",
                    matrix_frame(sim[0][:, None], list(range(n_positions)), ["PE(0)·PE(k)"]), key="pe-sim-row")
    spread = diagonal_spread(sim)
    st.caption(f"Largest spread along any diagonal of this matrix: {spread:.2g} (the diagonal itself is "
               f"{sim[0, 0]:.1f}). " + ("For the learned table the pattern need not depend on distance alone."
                                        if learned else "So the dot product depends only on the distance p − q: "
                                        "neighbours are similar, far positions less so."))


def rotation_section(ctx, full_table: np.ndarray, learned: bool) -> int:
    cfg = ctx.bundle.config
    d_model, max_len = cfg.d_model, cfg.max_len
    st.header("Relative position is a fixed linear map")
    st.markdown(
        "For any offset $k$ there is one matrix $M_k$, the same for every position $p$, with "
        "$PE_{p+k} = M_k\\,PE_p$. It is block-diagonal: each (sin, cos) pair is rotated by the angle $k\\,\\omega_i$ "
        "(angle-addition formulas). That is why the paper expected the model to attend by *relative* position "
        "easily.")
    st.latex(ROTATION_FORMULA)
    rot_table = paper_table(max_len, d_model) if learned else full_table   # the model's own table
    offset_default = min(3, max_len - 1)
    offset = st.slider("Offset k", 1, max_len - 1, qp_int("offset", offset_default, 1, max_len - 1),
                       key="pe-offset")
    m_k = rotation_matrix(offset, d_model)                                              # [D, D]
    errors = rotation_errors(rot_table, offset)                                         # [max_len - k]
    plain_gap = np.linalg.norm(rot_table[offset:] - rot_table[:-offset], axis=1)
    c1, c2, c3 = st.columns(3)
    c1.metric("max ‖M_k·PE(p) − PE(p+k)‖", f"{errors.max():.1e}")
    c2.metric("positions p checked", f"{errors.size}")
    c3.metric("for scale: mean ‖PE(p+k) − PE(p)‖", f"{plain_gap.mean():.2f}")
    col_a, col_b = st.columns(2)
    with col_a:
        show_figure(rotation_error_figure(errors, offset, title=f"Error of the map for k = {offset}, every p"),
                    f"{ctx.model_id}-pe-rotation-error",
                    matrix_frame(errors[:, None], list(range(errors.size)), ["error"]), key="pe-rot-err")
        st.caption(("On the model's own float32 table: " if not learned else "On the sinusoidal table: ") +
                   "the error is rounding, about a millionth, not an approximation.")
    with col_b:
        zoom = min(ZOOM_DIMS, d_model)
        show_figure(rotation_matrix_heatmap(m_k, zoom, title=f"M<sub>{offset}</sub>: first {zoom} of {d_model} "
                                                             "dimensions"),
                    f"pe-rotation-M{offset}-d{d_model}", matrix_frame(m_k, list(range(d_model)), list(range(d_model))),
                    key="pe-rot-m")
        st.caption("2×2 rotation blocks on the diagonal, zeros elsewhere (blank; the CSV holds all of M_k). Later "
                   "pairs turn by smaller angles, so their blocks approach the identity.")
    return offset


def norms_section(ctx, src_labels: list[str]) -> None:
    trace, d_model = ctx.trace, ctx.bundle.config.d_model
    learned = ctx.bundle.config.pe == "learned"
    st.header("Token embedding vs. positional encoding: sizes")
    tokens_scaled = trace[schema.embed_name("encoder", "tokens")]                       # [S, D]
    series = {
        "token embedding E[token]": np.linalg.norm(tokens_scaled / np.sqrt(d_model), axis=1),
        f"× √d_model (= {np.sqrt(d_model):.1f})": np.linalg.norm(tokens_scaled, axis=1),
        "positional encoding": np.linalg.norm(trace[schema.embed_name("encoder", "pos")], axis=1),
        "sum: the encoder's input": np.linalg.norm(trace[schema.embed_name("encoder", "out")], axis=1),
    }
    st.markdown(
        "Every sinusoidal row has the same length $\\sqrt{d_{model}/2}$ (each sin²+cos² pair adds 1). The embedding "
        "matrix is shared with the output layer and kept small, so on its own the word would be drowned by the "
        "position. Multiplying the embedding by $\\sqrt{d_{model}}$ makes the word the larger part of the sum while "
        "the position still shifts it measurably. Values below are from the forward pass on your sentence.")
    show_figure(norms_figure(src_labels, series, title="L2 norm per source token"), f"{ctx.model_id}-pe-norms",
                matrix_frame(np.stack(list(series.values()), axis=1), src_labels, list(series)), key="pe-norms")
    norm_tok, norm_pe, norm_sum = (series[k][0] for k in list(series)[1:])
    st.caption(f"Token {plain(src_labels[0])}: ‖√d·E‖ = {norm_tok:.3f}, ‖PE‖ = {norm_pe:.3f}"
               + ("" if learned else f" (√(d/2) = {np.sqrt(d_model / 2):.3f})") + f", ‖sum‖ = {norm_sum:.3f}.")


def word_order_section(ctx, src_tokens: list[str], src_labels: list[str]) -> None:
    trace = ctx.trace
    n_src = len(src_labels)
    st.header("Word order: swap two tokens")
    st.markdown(
        "Without positional encoding the encoder is *permutation-equivariant*: swap two input tokens and every "
        "attention map is the old one with the same two rows and columns swapped, nothing else. With PE the swapped "
        "tokens arrive with different position vectors, so the model computes genuinely different attention. Below, "
        "the encoder runs on your sentence and on a swapped copy, once as trained and once with PE replaced by zeros.")
    if n_src < 2:
        st.info("The sentence needs at least two tokens to swap.")
        stop_page()
    swap_a, swap_b = swap_from_url(n_src)
    c1, c2 = st.columns(2)
    a = c1.selectbox("Swap token", list(range(n_src)), index=swap_a, key="pe-swap-a",
                     format_func=lambda i: src_labels[i])
    b = c2.selectbox("with token", list(range(n_src)), index=swap_b, key="pe-swap-b",
                     format_func=lambda i: src_labels[i])
    set_query(swap=f"{a},{b}" if (a, b) != (0, 1) else None)
    if a == b:
        st.info("Pick two different positions.")
        stop_page()
    perm = swap_permutation(n_src, a, b)
    ids = tuple(int(i) for i in trace.meta["src_ids"])
    swapped_ids = tuple(ids[i] for i in perm)
    st.text("Swapped input: " + " ".join(src_tokens[i] for i in perm))
    with st.spinner("Running the encoder four times…"):
        runs = {(s, drop): encoder_patterns(ctx.model_id, s, drop) for s in (ids, swapped_ids)
                for drop in (False, True)}
    gap_pe = order_gap(runs[ids, False], runs[swapped_ids, False], perm)                # [L]
    gap_no_pe = order_gap(runs[ids, True], runs[swapped_ids, True], perm)               # [L]
    show_figure(order_gap_figure(gap_pe, gap_no_pe, title="Is the swapped sentence's attention the old one, "
                                                          "reordered?"),
                f"{ctx.model_id}-pe-word-order",
                matrix_frame(np.stack([gap_pe, gap_no_pe], axis=1), [f"layer {i}" for i in range(gap_pe.size)],
                             ["with PE", "PE set to 0"]), key="pe-order")
    st.caption(f"Largest difference over all heads and cells: {gap_pe.max():.3f} with positional encoding, "
               f"{gap_no_pe.max():.1e} without it (rounding). Without PE the swap changes nothing but the order.")
    # Labels go to the figure builder as they are: it escapes them for plotly once (escaping here too
    # showed "7 &lt;/s&gt;").
    swapped_labels = position_labels([src_tokens[i] for i in perm])
    reordered = permuted_pattern(runs[ids, False][0].mean(0), perm)                     # [S, S]
    actual = runs[swapped_ids, False][0].mean(0)                                        # [S, S]
    frames = {"original, reordered": reordered, "swapped": actual, "difference": actual - reordered}
    show_figure(word_order_figure(reordered, actual, swapped_labels), f"{ctx.model_id}-pe-order-maps",
                pd.concat({name: matrix_frame(m, swapped_labels, swapped_labels) for name, m in frames.items()}),
                key="pe-order-maps")
    st.caption("Layer 0, mean of the heads: the original sentence's attention with the two tokens' rows and columns "
               "swapped (left), the swapped sentence as the model sees it (middle), and their difference (right). "
               "Without positional encoding the difference would be 0 everywhere.")


def render() -> None:
    ctx = need_context()
    trace, cfg = ctx.trace, ctx.bundle.config
    max_len = cfg.max_len
    src_tokens = trace.meta["src_tokens"]
    src_labels = position_labels(src_tokens)
    n_src = len(src_labels)
    learned = cfg.pe == "learned"
    full_table = positional_table(ctx.model_id)         # [max_len, D]: the sinusoidal buffer or the learned weights

    st.title("Positional encoding")
    n_default = min(64, max_len)
    c_slider, _ = st.columns([2, 3])
    n_positions = c_slider.slider("Positions shown", 2, max_len, qp_int("positions", n_default, 2, max_len),
                                  key="pe-positions")
    table_section(ctx, full_table, n_positions, n_src)
    table = full_table[:n_positions]

    why_section(ctx, learned)
    dims = curves_section(ctx, table, n_src)
    similarity_section(ctx, table, n_src, learned)
    offset = rotation_section(ctx, full_table, learned)
    set_query(positions=n_positions if n_positions != n_default else None,
              dims=",".join(map(str, dims)) if dims != default_dims(cfg.d_model) else None,
              offset=offset if offset != min(3, max_len - 1) else None)
    norms_section(ctx, src_labels)
    word_order_section(ctx, src_tokens, src_labels)


if __name__ == "__main__":
    render()
