"""Decoding: the real decoder generating one token at a time (greedy or beam), against teacher forcing."""
import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.decoding import BEAM_ALPHA, METHODS
from model.capture import schema
from viz.services import get_decoding
from viz.figures.decoding import (alignment_heatmap, confidence_bars, cross_attention_multiples, heads_row_heatmap,
                                  logprob_comparison, next_token_bars, token_logprobs, top_k_view)
from viz.state import qp_choice, qp_int, set_query
from viz.text import plain, position_labels
from viz.ui import matrix_frame, need_context, show_figure, stop_page

LAST_BEAM = "_decoding_last_beam"      # the page's beam size, kept while greedy hides its box
DEFAULT_BEAM = 4


def _seed(key: str, value) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


def _beam_choice(sidebar_beam: int) -> int:
    """The beam size the box starts from: the last one chosen here, else the sidebar's, else 4."""
    return int(st.session_state.get(LAST_BEAM) or (sidebar_beam if sidebar_beam > 1 else DEFAULT_BEAM))


def _on_method() -> None:
    """Header, sidebar and other pages use the sidebar's beam size: greedy sets it to 1, beam search to the
    beam size last chosen here (the box was hidden while greedy, so its own state is not trusted)."""
    if st.session_state["decoding-method"] == "beam":
        beam = _beam_choice(st.session_state.get("beam", 1))
        st.session_state["decoding-beam"] = st.session_state["beam"] = beam
    else:
        st.session_state["beam"] = 1


def _on_beam() -> None:
    st.session_state["beam"] = st.session_state[LAST_BEAM] = int(st.session_state["decoding-beam"])


def controls(ctx, n_layers: int) -> tuple[str, int, int, int]:
    """Method, beam size (only for beam search: greedy has none), decoder layer and top-k in one row, seeded
    from the URL and kept in step with the sidebar's beam size. Returns (method, beam, layer, k); beam is 1
    for greedy."""
    if st.session_state.get("_decoding_seen_beam", ctx.beam) != ctx.beam:   # the sidebar's beam size changed
        st.session_state["decoding-method"] = "beam" if ctx.beam > 1 else "greedy"
        if ctx.beam > 1:
            st.session_state["decoding-beam"] = st.session_state[LAST_BEAM] = ctx.beam
    st.session_state["_decoding_seen_beam"] = ctx.beam
    # the sidebar's beam size decides (a link's method= is checked, and agrees when the page wrote the link)
    qp_choice("method", list(METHODS), "beam" if ctx.beam > 1 else "greedy")
    _seed("decoding-method", "beam" if ctx.beam > 1 else "greedy")
    _seed("decoding-beam", _beam_choice(ctx.beam))
    _seed("decoding-layer", qp_int("layer", n_layers - 1, 0, n_layers - 1))
    _seed("decoding-k", qp_int("k", 10, 1, 20))
    c1, c2, c3, c4 = st.columns([1.35, 0.85, 1, 1.2])
    method = c1.radio("Method", list(METHODS), key="decoding-method", horizontal=True, on_change=_on_method,
                      format_func={"greedy": "greedy", "beam": "beam search"}.get,
                      help="Also sets the sidebar's beam size (greedy = beam 1).")
    if method == "beam":
        beam = int(c2.number_input("Beam size", 2, 8, key="decoding-beam", on_change=_on_beam,
                                   help="Also sets the sidebar's beam size."))
        st.session_state[LAST_BEAM] = beam
    else:
        beam = 1
        c2.caption("Greedy: one hypothesis (beam size 1, as in the sidebar).")
    layer = c3.selectbox("Decoder layer", list(range(n_layers)), key="decoding-layer",
                         format_func=lambda i: f"layer {i}", help="Layer whose attention is shown.")
    k = c4.slider("Top-k candidates", 1, 20, key="decoding-k")
    return method, beam, layer, k


def step_slider(n_steps: int) -> int:
    _seed("decoding-step", qp_int("step", 0, 0, n_steps - 1))
    st.session_state["decoding-step"] = min(int(st.session_state["decoding-step"]), n_steps - 1)
    if n_steps > 1:
        return st.slider("Decoding step", 0, n_steps - 1, key="decoding-step",
                         help="Step t reads ⟨s⟩ and the t tokens generated so far, and appends one more.")
    st.caption("The output has a single token, so there is a single step.")
    return 0


def step_picture(ctx, dec, step: int, layer: int, k: int) -> None:
    """The main picture: the next-token candidates of this step and where the newest position looks."""
    n_heads = ctx.bundle.config.n_heads
    left, right = st.columns(2)
    with left:
        ids, probs, ranks, chosen = top_k_view(dec.top_ids[step], dec.top_logprobs[step], k, dec.out_ids[step],
                                               float(dec.chosen_logprob[step]), int(dec.chosen_rank[step]))
        labels = ctx.bundle.tokenizer.token_strings(ids)
        fig = next_token_bars(probs, labels, ranks, chosen, title=f"Step {step}: next token, top {k}")
        show_figure(fig, f"{ctx.model_id}-decoding-step{step}-topk",
                    pd.DataFrame({"rank": ranks, "token": labels, "probability": probs}).set_index("rank"),
                    key="decoding-topk")
    with right:
        keys = position_labels(dec.in_tokens[:step + 1])
        rows = dec.self_rows[step][layer]                                              # [H, step+1]
        fig = heads_row_heatmap(rows, keys, key_title="decoder input so far",
                                title=f"Newest position's self-attention, layer {layer}")
        show_figure(fig, f"{ctx.model_id}-decoding-step{step}-self-L{layer}",
                    matrix_frame(rows, [f"head {h}" for h in range(n_heads)], keys), key="decoding-self")
    st.caption(f"Left: p(next token | tokens so far, source); red is the token appended. Entropy of the whole "
               f"distribution: {dec.entropy[step]:.3f} bits (0 = certain). Right: each head's weights over the "
               "tokens generated so far (future tokens do not exist yet); rows sum to 1.")


def step_text(dec, step: int, vocab_size: int, eos_id: int) -> None:
    n_steps = dec.n_steps
    chosen_p = float(np.exp(dec.chosen_logprob[step]))
    st.markdown(f"**Step {step}: choosing output token {step + 1} of {n_steps}**")
    st.code(f"decoder input : {'  '.join(dec.in_tokens[:step + 1])}\n"
            f"appends       : {dec.out_tokens[step]}   (p = {chosen_p:.4f}, rank {int(dec.chosen_rank[step])} "
            f"of {vocab_size})\n"
            f"output so far : {'  '.join(dec.out_tokens[:step + 1])}", language=None)
    if dec.out_ids[-1] != eos_id:
        st.warning(f"Decoding stopped at the length limit ({n_steps} tokens) before the model produced ⟨/s⟩.")


def cross_section(ctx, dec, step: int, layer: int, src_labels: list[str]) -> None:
    n_heads = ctx.bundle.config.n_heads
    cross = dec.cross_rows[step, layer]                                                  # [H, S]
    fig = cross_attention_multiples(cross, src_labels,
                                    title=f"Cross-attention at step {step}, layer {layer}: where it reads the source")
    show_figure(fig, f"{ctx.model_id}-decoding-step{step}-cross-L{layer}",
                matrix_frame(np.vstack([cross.mean(0), cross]), ["average"] + [f"head {h}" for h in range(n_heads)],
                             src_labels), key="decoding-cross")


def confidence_section(ctx, dec, step: int, out_labels: list[str]) -> None:
    st.subheader("Confidence along the output")
    fig = confidence_bars(np.exp(dec.chosen_logprob), out_labels, step,
                          title="Probability the model gave each token it appended")
    show_figure(fig, f"{ctx.model_id}-decoding-confidence",
                pd.DataFrame({"token": dec.out_tokens, "probability": np.exp(dec.chosen_logprob),
                              "rank": dec.chosen_rank, "entropy_bits": dec.entropy}), key="decoding-confidence")


def hypotheses_section(dec, beam: int) -> None:
    st.subheader(f"Beam search hypotheses (beam {beam})")
    table = pd.DataFrame(dec.hypotheses).rename(columns={
        "log_prob": "Σ log p", "normalized": f"normalized (α={BEAM_ALPHA})"}).set_index("rank")
    st.dataframe(table, column_config={"Σ log p": st.column_config.NumberColumn(format="%.3f"),
                                       f"normalized (α={BEAM_ALPHA})": st.column_config.NumberColumn(format="%.3f")})
    st.caption("Best first, by normalized score; the steps above follow the best one. 'finished' means it ended "
               "with ⟨/s⟩.")


def alignment_section(ctx, dec, step: int, layer: int, method: str, out_labels, src_labels) -> np.ndarray:
    st.subheader("Source ↔ output alignment")
    alignment = dec.cross_rows[:, layer].mean(1)                                        # [T, S]
    fig = alignment_heatmap(alignment, out_labels, src_labels, step=step,
                            title=f"Cross-attention, layer {layer}, average of {ctx.bundle.config.n_heads} heads "
                                  f"({method})")
    show_figure(fig, f"{ctx.model_id}-decoding-alignment-L{layer}", matrix_frame(alignment, out_labels, src_labels),
                key="decoding-alignment")
    st.caption("Row t is the step that produced output token t; the red box is the current step.")
    return alignment


def teacher_forcing_section(ctx, dec, layer: int, method: str, alignment, out_labels, src_labels) -> None:
    st.subheader("Teacher-forced versus generated")
    trace = ctx.trace
    if not trace.meta.get("teacher_forced"):
        st.info("Type a reference translation in the sidebar ('Reference translation (optional)') to see the "
                "decoder teacher-forced on it next to its own output, with the log-probability of each token.")
        return
    ref_labels = position_labels(schema.query_tokens(trace.meta, "cross"))
    ref_alignment = trace[schema.pattern_name("cross", layer)].mean(0)   # [T_ref, S]
    st.markdown("Teacher-forced: every row reads the *reference* prefix. Generated: every row reads the model's "
                "own previous tokens.")
    c1, c2 = st.columns(2)
    with c1:
        fig = alignment_heatmap(ref_alignment, ref_labels, src_labels,
                                title=f"Teacher-forced on the reference, layer {layer}")
        show_figure(fig, f"{ctx.model_id}-teacher-forced-L{layer}",
                    matrix_frame(ref_alignment, ref_labels, src_labels), key="decoding-tf")
    with c2:
        fig = alignment_heatmap(alignment, out_labels, src_labels, title=f"Generated ({method}), layer {layer}")
        show_figure(fig, f"{ctx.model_id}-generated-L{layer}", key="decoding-gen")
    ref_lp = token_logprobs(trace[schema.LOGITS], trace.meta["tgt_ids"])
    gen_lp = dec.chosen_logprob.astype(float)
    fig = logprob_comparison([("reference", ref_lp, ref_labels), ("model output", gen_lp, out_labels)],
                             title="log p of each token, given the tokens before it")
    show_figure(fig, f"{ctx.model_id}-logprob-comparison", key="decoding-logprob")
    better = "its own output" if gen_lp.sum() >= ref_lp.sum() else "the reference"
    st.caption(f"The model gives the reference Σ log p = {ref_lp.sum():.2f} and its own output "
               f"{gen_lp.sum():.2f}: it prefers {better}. "
               + plain(f"Reference: {trace.meta['tgt_text']}  |  output: {dec.translation}"))


def explain() -> None:
    with st.expander("How decoding works: teacher forcing, greedy, beam search, label smoothing"):
        st.markdown(
            "**Training** uses *teacher forcing*: the decoder reads the whole correct target shifted right "
            "(⟨s⟩ y₁ … yₙ₋₁) and predicts every next token at once. **Inference** has no target: the decoder starts "
            "from ⟨s⟩, picks a token, appends it to its own input and runs again, until it produces ⟨/s⟩ or hits a "
            "length limit. At each step the top decoder state $h_t$ goes through the output layer and a softmax:")
        st.latex(r"p(y_t \mid y_{<t}, x) = \mathrm{softmax}(W h_t)")
        st.markdown(
            "**Greedy** decoding appends the single most likely token. **Beam search** keeps the *b* best partial "
            "outputs by total log-probability, extends each, and keeps the best *b* again; finished outputs are "
            f"compared by a length-normalised score, Σ log p / ((5+|y|)/6)^α with α = {BEAM_ALPHA}, so longer "
            "outputs are not punished just for having more terms. **Label smoothing** (the paper uses ε = 0.1) "
            "trains the model to give only 1−ε to the right token and spread ε over the rest, so a smoothed model "
            "is rarely 100 % sure; the toy models here were trained without it.")


def render() -> None:
    ctx = need_context()
    cfg = ctx.bundle.config
    st.title("Decoding: one token at a time")
    method, beam, layer, k = controls(ctx, cfg.n_decoder_layers)
    try:
        dec = get_decoding(ctx.model_id, ctx.text.strip(), method, beam, ctx.max_tokens)
    except ValueError as e:
        st.error(plain(f"The model could not decode this input: {e}", limit=600))
        stop_page()
    step = step_slider(dec.n_steps)
    set_query(method=method, beam=beam if method == "beam" else None, layer=layer, k=k, step=step)
    out_labels = position_labels(dec.out_tokens)
    src_labels = position_labels(dec.src_tokens)
    step_picture(ctx, dec, step, layer, k)
    step_text(dec, step, cfg.vocab_size, cfg.eos_id)
    cross_section(ctx, dec, step, layer, src_labels)
    confidence_section(ctx, dec, step, out_labels)
    if method == "beam":
        hypotheses_section(dec, beam)
    alignment = alignment_section(ctx, dec, step, layer, method, out_labels, src_labels)
    teacher_forcing_section(ctx, dec, layer, method, alignment, out_labels, src_labels)
    explain()


if __name__ == "__main__":
    render()
