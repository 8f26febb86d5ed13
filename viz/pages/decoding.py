"""Decoding: the real decoder generating one token at a time (greedy or beam), against teacher forcing."""
import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.decoding import BEAM_ALPHA, MAX_STEP_TOKENS, METHODS, token_logprobs, top_k_view
from model.capture import schema
from viz.services.analyses import get_decoding
from viz.services.presets import reference_of
from viz.figures.attention import (WINDOW_ROWS, keys_that_fit, source_window, translation_columns,
                                   window_around)
from viz.figures.decoding import (alignment_heatmap, confidence_bars, cross_attention_multiples, cross_tokens,
                                  forcing_labels_fit, generation_loop, heads_row_heatmap, logprob_comparison, next_token_bars,
                                  teacher_forced_pass)
from viz.core.i18n import catalogue_keys, t
from viz.core import view
from viz.core.view import MAX_TEXT_CHARS, number_box_value, whole_number_box
from viz.core.text import plain, position_labels
from viz.elements.ui import data_table, explained, look, matrix_frame, need_context, show_figure, stop_page, type_scale

DEFAULT_BEAM = 4
NO_REPEAT_N = 3     # the n-gram the page's "no repeats" choice blocks (fairseq's usual no_repeat_ngram_size)


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
DECODING_HYP_KEYS = catalogue_keys("decoding.hyp", "finished", "output", "rank", "tokens")
DECODING_METHOD_KEYS = catalogue_keys("decoding.method", "beam", "greedy")


def _beam_choice(sidebar_beam: int) -> int:
    """The beam size the box starts from: the last one chosen here, else the sidebar's, else 4."""
    return int(view.get(view.DECODING_LAST_BEAM) or (sidebar_beam if sidebar_beam > 1 else DEFAULT_BEAM))


def _on_method() -> None:
    """Header, sidebar and other pages use the sidebar's beam size: greedy sets it to 1, beam search to the
    beam size last chosen here (the box is hidden while greedy, so its own state is not trusted)."""
    if view.get(view.DECODING_METHOD) == "beam":
        beam = _beam_choice(number_box_value(view.BEAM, 1, 8) or 1)
        view.put(view.DECODING_BEAM, beam)
        view.put(view.BEAM, beam)
    else:
        view.put(view.BEAM, 1)


def _on_beam() -> None:
    beam = number_box_value(view.DECODING_BEAM, 2, 8)     # None: NaN or out of range (said by controls())
    if beam is not None:
        view.put(view.BEAM, beam)
        view.put(view.DECODING_LAST_BEAM, beam)


def controls(ctx, n_layers: int) -> tuple[str, int, int, int]:
    """Method, beam size (only for beam search: greedy has none), decoder layer and top-k in one row, seeded
    from the URL and kept in step with the sidebar's beam size. Returns (method, beam, layer, k); beam is 1
    for greedy."""
    if view.get(view.DECODING_SEEN_BEAM, default=ctx.beam) != ctx.beam:   # the sidebar's beam size changed
        view.put(view.DECODING_METHOD, "beam" if ctx.beam > 1 else "greedy")
        if ctx.beam > 1:
            view.put(view.DECODING_BEAM, ctx.beam)
            view.put(view.DECODING_LAST_BEAM, ctx.beam)
    view.put(view.DECODING_SEEN_BEAM, ctx.beam)
    # the sidebar's beam size decides (a link's method= is checked, and agrees when the page wrote the link)
    view.read(view.METHOD, choices=list(METHODS), default="beam" if ctx.beam > 1 else "greedy")
    view.seed(view.DECODING_METHOD, "beam" if ctx.beam > 1 else "greedy")
    view.seed(view.DECODING_BEAM, _beam_choice(ctx.beam))
    view.seed(view.DECODING_LAYER, view.read(view.LAYER, default=n_layers - 1, hi=n_layers - 1))
    view.seed(view.DECODING_K, view.read(view.TOP_K))
    c1, c2, c3, c4 = st.columns([1.35, 0.85, 1, 1.2])
    method = c1.radio(t("decoding.method"), list(METHODS), key=view.key(view.DECODING_METHOD), horizontal=True,
                      on_change=_on_method, format_func={m: t(DECODING_METHOD_KEYS[m]) for m in METHODS}.get,
                      help=t("decoding.method.help"))
    if method == "beam":
        beam = whole_number_box(c2, t("decoding.beam"), 2, 8, view.DECODING_BEAM, DEFAULT_BEAM, on_change=_on_beam,
                                help=t("decoding.beam.help"))
        view.put(view.DECODING_LAST_BEAM, beam)
    else:
        beam = 1
        c2.caption(t("decoding.greedy_note"))
    layer = c3.selectbox(t("decoding.layer"), list(range(n_layers)), key=view.key(view.DECODING_LAYER),
                         format_func={i: t("ui.layer_n", i=i) for i in range(n_layers)}.get,
                         help=t("decoding.layer.help"))
    k = c4.slider(t("decoding.k"), 1, 20, key=view.key(view.DECODING_K))
    return method, beam, layer, k


def no_repeat_choice() -> int:
    """Off by default, so a class can watch a loop happen; on, the search never repeats a 3-token group."""
    view.seed(view.DECODING_NO_REPEAT, view.read(view.NO_REPEAT) > 0)
    blocked = st.toggle(t("decoding.no_repeat", n=NO_REPEAT_N), key=view.key(view.DECODING_NO_REPEAT),
                        help=t("decoding.no_repeat.help", n=NO_REPEAT_N))
    return NO_REPEAT_N if blocked else 0


def step_slider(n_steps: int) -> int:
    """The step shown; without step= in the URL step 0, where the loop starts: <s> alone, the first token."""
    if not view.has(view.DECODING_STEP):      # the link's step=, checked once: later the page's own bounds move
        view.put(view.DECODING_STEP, view.read(view.STEP, default=0, hi=n_steps - 1))
    # a step past a shorter output (beam instead of greedy, another sentence): its last step, quietly (the URL's
    # step= is the page's own, written at the last run; warning about it blamed the link)
    view.put(view.DECODING_STEP, min(int(view.get(view.DECODING_STEP)), n_steps - 1))
    if n_steps > 1:
        return st.slider(t("decoding.step"), 0, n_steps - 1, key=view.key(view.DECODING_STEP),
                         help=t("decoding.step.help"))
    st.caption(t("decoding.single_step"))
    return 0


def step_picture(ctx, dec, step: int, layer: int, k: int) -> None:
    """The main picture: the next-token candidates of this step and where the newest position looks."""
    n_heads = ctx.model.config.n_heads
    left, right = st.columns(2)
    with left:
        ids, probs, ranks, chosen = top_k_view(dec.top_ids[step], dec.top_logprobs[step], k, dec.out_ids[step],
                                               float(dec.chosen_logprob[step]), int(dec.chosen_rank[step]))
        labels = ctx.model.tokenizer.token_strings(ids)
        fig = next_token_bars(probs, labels, ranks, look(), chosen, title=t("decoding.topk.title", step=step, k=k))
        show_figure(fig, f"{ctx.model_id}-decoding-step{step}-topk",
                    pd.DataFrame({t("decoding.col.rank"): ranks, t("decoding.col.token"): labels,
                                  t("decoding.col.probability"): probs}).set_index(t("decoding.col.rank")),
                    key="decoding-topk")
    with right:
        keys = position_labels(dec.in_tokens[:step + 1])
        rows = dec.self_rows[step][layer]                                              # [H, step+1]
        # a long output's newest positions, as many as the half-page map labels legibly (the CSV has them all)
        width = type_scale().column_px()
        newest = slice(max(0, len(keys) - keys_that_fit(width, type_scale())), len(keys))
        fig = heads_row_heatmap(rows[:, newest], keys[newest], look(), title=t("decoding.self.title", layer=layer), width_px=width)
        show_figure(fig, f"{ctx.model_id}-decoding-step{step}-self-L{layer}",
                    matrix_frame(rows, [t("ui.head_n", h=h) for h in range(n_heads)], keys), key="decoding-self")
        if newest.start:
            st.caption(t("decoding.self.newest", shown=len(keys) - newest.start, n=len(keys)))
    st.caption(t("decoding.step.caption", entropy=f"{dec.entropy[step]:.3f}"))


def step_text(dec, step: int, vocab_size: int, eos_id: int) -> None:
    n_steps = dec.n_steps
    chosen_p = float(np.exp(dec.chosen_logprob[step]))
    st.markdown(t("decoding.step.heading", step=step, last=n_steps - 1))   # 0-based, as the pictures' labels
    st.code(t("decoding.code.input", tokens="  ".join(dec.in_tokens[:step + 1])) + "\n"
            + t("decoding.code.appends", token=dec.out_tokens[step], p=f"{chosen_p:.4f}",
                rank=int(dec.chosen_rank[step]), vocab=vocab_size) + "\n"
            + t("decoding.code.output", tokens="  ".join(dec.out_tokens[:step + 1])), language=None,
            wrap_lines=True)             # a long output's lines wrap: on a projector a scrolled line is cut off
    if dec.out_ids[-1] != eos_id:
        st.warning(t("decoding.length_limit", n=n_steps))


def source_caption(shown: slice, n: int) -> None:
    """Says which source tokens a long sentence's picture shows (the CSV holds them all)."""
    if shown.stop - shown.start < n:
        st.caption(t("decoding.window.source", first=shown.start, last=shown.stop - 1, n=n))


def cross_section(ctx, dec, step: int, layer: int, src_labels: list[str]) -> None:
    n_heads = ctx.model.config.n_heads
    cross = dec.cross_rows[step, layer]                                                  # [H, S]
    # a long sentence: the source tokens this step looked at most, as many as slanted labels fit across the page
    shown = source_window(cross.mean(0)[None], slice(0, 1), cross_tokens(type_scale()))
    fig = cross_attention_multiples(cross[:, shown], src_labels[shown], look(),
                                    title=t("decoding.cross.title", step=step, layer=layer))
    show_figure(fig, f"{ctx.model_id}-decoding-step{step}-cross-L{layer}",
                matrix_frame(np.vstack([cross.mean(0), cross]),
                             [t("decoding.average")] + [t("ui.head_n", h=h) for h in range(n_heads)], src_labels),
                key="decoding-cross")
    source_caption(shown, len(src_labels))


def confidence_section(ctx, dec, step: int, out_labels: list[str], steps: slice) -> None:
    st.subheader(t("decoding.confidence"))
    fig = confidence_bars(np.exp(dec.chosen_logprob)[steps], out_labels[steps], look(), step - steps.start,
                          title=t("decoding.confidence.title"))
    show_figure(fig, f"{ctx.model_id}-decoding-confidence",
                pd.DataFrame({t("decoding.col.token"): dec.out_tokens,
                              t("decoding.col.probability"): np.exp(dec.chosen_logprob),
                              t("decoding.col.rank"): dec.chosen_rank, t("decoding.col.entropy"): dec.entropy}),
                key="decoding-confidence")


def hypotheses_section(dec, beam: int) -> None:
    st.subheader(t("decoding.hypotheses", beam=beam))
    normalized = t("decoding.hyp.normalized", alpha=BEAM_ALPHA)
    total = t("decoding.hyp.log_prob")
    columns = {"log_prob": total, "normalized": normalized}
    columns.update({name: t(DECODING_HYP_KEYS[name]) for name in ("rank", "output", "tokens", "finished")})
    table = pd.DataFrame(dec.hypotheses).rename(columns=columns).set_index(columns["rank"])
    # presenter mode: a static table at the text's size (a data frame draws on a canvas at 14 px)
    data_table(table, formats={total: "{:.3f}", normalized: "{:.3f}"},
               column_config={total: st.column_config.NumberColumn(format="%.3f"),
                              normalized: st.column_config.NumberColumn(format="%.3f")})
    st.caption(t("decoding.hypotheses.caption"))


def alignment_section(ctx, dec, step: int, layer: int, method: str, out_labels, src_labels,
                      steps: slice) -> np.ndarray:
    st.subheader(t("decoding.alignment"))
    alignment = dec.cross_rows[:, layer].mean(1)                                        # [T, S]
    shown = source_window(alignment, steps, translation_columns(type_scale()))
    fig = alignment_heatmap(alignment[steps, shown], out_labels[steps], src_labels[shown], look(),
                            step=step - steps.start,
                            title=t("decoding.alignment.title", layer=layer, heads=ctx.model.config.n_heads,
                                    method=t(DECODING_METHOD_KEYS[method])))
    show_figure(fig, f"{ctx.model_id}-decoding-alignment-L{layer}", matrix_frame(alignment, out_labels, src_labels),
                key="decoding-alignment")
    source_caption(shown, len(src_labels))
    st.caption(t("decoding.alignment.caption"))
    return alignment


def _use_reference(value: str | None = None) -> None:
    """The page's reference box (or its test-split button) sets the sidebar's reference, on which the trace
    is teacher-forced: one reference for every page."""
    view.put(view.TARGET, view.get(view.DECODING_REFERENCE) if value is None else value)


def reference_box(ctx) -> None:
    """The page's own reference box, the sidebar's reference in step (folded away in presenter mode), and for a
    test-split sentence a button that brings the split's reference."""
    view.put(view.DECODING_REFERENCE, ctx.target or "")
    c1, c2 = st.columns([3, 1.2], vertical_alignment="bottom")
    c1.text_input(t("decoding.tf.reference"), key=view.key(view.DECODING_REFERENCE), on_change=_use_reference,
                  max_chars=MAX_TEXT_CHARS, help=t("sidebar.reference.help"))
    known = reference_of(ctx.model_id, ctx.text)
    if known and known != (ctx.target or "").strip():
        c2.button(t("decoding.tf.use_test"), key="decoding-use-test", on_click=_use_reference, args=(known,),
                  help=t("decoding.tf.use_test.help", reference=known), width="stretch")


TF_POSITIONS = 12      # the teacher-forcing pictures' positions: a 9-word sentence's, a longer one's first (the
                       # picture teaches the shape of training and inference; at 20 the page grew by over a screen)


def forcing_rows(n: int) -> slice:
    """The positions the two pictures of teacher forcing show: all of a short sentence's, a long one's first
    TF_POSITIONS (their CSVs have them all)."""
    return slice(0, min(n, TF_POSITIONS))


def forcing_picture(ctx, dec, layer: int) -> None:
    """Training next to inference, from the real model: left the one teacher-forced pass over the shifted target
    (the reference, or the model's own output when none is given), its causal mask and every position's loss at
    once; right the loop at inference, one pass per token, each output fed back as the next input."""
    trace = ctx.trace
    ref_in = position_labels(schema.key_tokens(trace.meta, "decoder"))
    ref_out = position_labels(schema.query_tokens(trace.meta, "decoder"))
    ref_loss = -token_logprobs(trace[schema.LOGITS], trace.meta["tgt_ids"])
    shown = forcing_rows(len(ref_out))
    weights = trace[schema.pattern_name("decoder", layer)].mean(0)[shown, shown]          # [T, T]
    gen = forcing_rows(dec.n_steps)
    loop = np.zeros((gen.stop, gen.stop))
    for step in range(gen.stop):              # pass t: its newest position's row over the t+1 inputs it has
        loop[step, :step + 1] = dec.self_rows[step][layer].mean(0)
    # side by side where half the page labels every input, else one under the other
    n = max(shown.stop, gen.stop)
    left, right = (st.columns(2) if forcing_labels_fit(n, type_scale().column_px(), type_scale())
                   else (st.container(), st.container()))
    with left:
        fig = teacher_forced_pass(weights, ref_loss[shown], ref_in[shown], ref_out[shown], look(),
                                  title=t("decoding.tf.pass.title", n=len(ref_out)))
        show_figure(fig, f"{ctx.model_id}-teacher-forcing-L{layer}",
                    pd.DataFrame({t("fig.tf.predicts"): ref_out, t("fig.tf.loss"): ref_loss}), key="decoding-tf-pass")
    with right:
        gen_loss = -dec.chosen_logprob.astype(float)
        fig = generation_loop(loop, gen_loss[gen], position_labels(dec.in_tokens)[gen],
                              position_labels(dec.out_tokens)[gen], look(),
                              title=t("decoding.tf.loop.title", n=dec.n_steps))
        show_figure(fig, f"{ctx.model_id}-generation-loop-L{layer}",
                    pd.DataFrame({t("fig.tf.predicts"): position_labels(dec.out_tokens), t("fig.tf.chosen"): gen_loss}),
                    key="decoding-tf-loop")
    st.markdown(t("decoding.tf.picture", layer=layer, loss=f"{ref_loss.mean():.2f}",
                  target=t("decoding.tf.target.reference" if trace.meta.get("teacher_forced")
                           else "decoding.tf.target.own")))
    if shown.stop < len(ref_out) or gen.stop < dec.n_steps:
        st.caption(t("decoding.tf.window", n=TF_POSITIONS))


def teacher_forcing_section(ctx, dec, layer: int, method: str, alignment, out_labels, src_labels) -> None:
    st.subheader(t("decoding.tf"))
    forcing_picture(ctx, dec, layer)
    reference_box(ctx)
    trace = ctx.trace
    if not trace.meta.get("teacher_forced"):
        st.info(t("decoding.tf.none", reference=t("sidebar.reference")))
        return
    ref_labels = position_labels(schema.query_tokens(trace.meta, "cross"))
    ref_alignment = trace[schema.pattern_name("cross", layer)].mean(0)   # [T_ref, S]
    st.markdown(t("decoding.tf.text"))
    c1, c2 = st.columns(2)
    with c1:
        fig = alignment_heatmap(ref_alignment, ref_labels, src_labels, look(),
                                title=t("decoding.tf.title", layer=layer))
        show_figure(fig, f"{ctx.model_id}-teacher-forced-L{layer}",
                    matrix_frame(ref_alignment, ref_labels, src_labels), key="decoding-tf")
    with c2:
        fig = alignment_heatmap(alignment, out_labels, src_labels, look(),
                                title=t("decoding.gen.title", method=t(DECODING_METHOD_KEYS[method]), layer=layer))
        show_figure(fig, f"{ctx.model_id}-generated-L{layer}", key="decoding-gen")
    ref_lp = token_logprobs(trace[schema.LOGITS], trace.meta["tgt_ids"])
    gen_lp = dec.chosen_logprob.astype(float)
    fig = logprob_comparison([(t("decoding.lp.reference"), ref_lp, ref_labels, np.exp(ref_lp)),
                              (t("decoding.lp.output"), gen_lp, out_labels, np.exp(gen_lp))],
                             look(), title=t("decoding.lp.title"))
    show_figure(fig, f"{ctx.model_id}-logprob-comparison", key="decoding-logprob")
    better = t("decoding.lp.own") if gen_lp.sum() >= ref_lp.sum() else t("decoding.lp.ref")
    st.caption(t("decoding.lp.caption", ref=f"{ref_lp.sum():.2f}", gen=f"{gen_lp.sum():.2f}", better=better)
               + plain(t("decoding.lp.texts", reference=trace.meta['tgt_text'], output=dec.translation)))


def explain() -> None:
    with explained(t("decoding.how.title")):
        st.markdown(t("decoding.how.text1"))
        st.latex(r"p(y_t \mid y_{<t}, x) = \mathrm{softmax}(W h_t)")
        st.markdown(t("decoding.how.text2", alpha=BEAM_ALPHA))


def render() -> None:
    ctx = need_context()
    cfg = ctx.model.config
    st.title(t("decoding.title"))
    method, beam, layer, k = controls(ctx, cfg.n_decoder_layers)
    no_repeat = no_repeat_choice()
    max_tokens = min(ctx.max_tokens, MAX_STEP_TOKENS)
    if len(ctx.trace.meta["src_ids"]) > max_tokens:
        st.info(t("decoding.cut", n=max_tokens))
    try:
        dec = get_decoding(ctx.model_id, ctx.source, method, beam, max_tokens, no_repeat)
    except ValueError as e:
        st.error(plain(t("decoding.error", error=e), limit=600))
        stop_page()
    step = step_slider(dec.n_steps)
    view.write_url({view.METHOD: method, view.BEAM: beam if method == "beam" else None, view.LAYER: layer,
                    view.TOP_K: k, view.STEP: step, view.NO_REPEAT: no_repeat or None})
    out_labels = position_labels(dec.out_tokens)
    src_labels = position_labels(dec.src_tokens)
    # a long output: the steps around the current one (the step slider moves the window)
    steps = window_around(step, len(out_labels), WINDOW_ROWS)
    step_picture(ctx, dec, step, layer, k)
    step_text(dec, step, cfg.vocab_size, cfg.eos_id)
    cross_section(ctx, dec, step, layer, src_labels)
    confidence_section(ctx, dec, step, out_labels, steps)
    if method == "beam":
        hypotheses_section(dec, beam)
    alignment = alignment_section(ctx, dec, step, layer, method, out_labels, src_labels, steps)
    teacher_forcing_section(ctx, dec, layer, method, alignment, out_labels, src_labels)
    explain()


if __name__ == "__main__":
    render()
