"""Decoding: the real decoder generating one token at a time (greedy or beam), against teacher forcing. The step's
pictures are drawn in the browser (viz/elements/browser_view.py, a deck of every step): the step is picked there
without a script run; the page reads it from the URL and sends each decoding's pictures for every step once."""

import numpy as np
import plotly.graph_objects as go
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
from viz.core.keys import Decoded, DecodingSettings
from viz.core.view import MAX_TEXT_CHARS, number_box_value, whole_number_box
from viz.core.text import plain, position_labels
from viz.elements.browser_view import STEP_PICK, browser_view, url_names, whole_asked
from viz.elements.ui import (explained, look, matrix_frame, need_context, plotly_config, safe_filename, show_figure,
                             stop_page, type_scale)
from viz.figures import browser_view as payloads
from viz.figures.style import Look
from viz.figures.browser_view import template_spec

DEFAULT_BEAM = 4
NO_REPEAT_N = 3     # the n-gram the page's "no repeats" choice blocks (fairseq's usual no_repeat_ngram_size)


OWN = view.Own("viz.pages.decoding")   # this page's own session values
DECODING = OWN.value("decoding")       # decoding-view, -head, -csv, -whole: the step's browser view
DECODING_METHOD = OWN.value("decoding-method")      # the method's radio
DECODING_BEAM = OWN.value("decoding-beam")          # the beam box
DECODING_LAST_BEAM = OWN.value("_decoding_last_beam")# the last beam asked for
DECODING_SEEN_BEAM = OWN.value("_decoding_seen_beam")# the sidebar's beam last seen
DECODING_LAYER = OWN.value("decoding-layer")        # the layer's select box
DECODING_K = OWN.value("decoding-k")                # the top-k slider
DECODING_NO_REPEAT = OWN.value("decoding-no-repeat")# the no-repeat toggle
DECODING_STEP = OWN.value("decoding-step")          # the link's step= read once
DECODING_REFERENCE = OWN.value("decoding-reference")# the page's reference box


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
DECODING_HYP_KEYS = catalogue_keys("decoding.hyp", "finished", "output", "rank", "tokens")
DECODING_METHOD_KEYS = catalogue_keys("decoding.method", "beam", "greedy")


def _beam_choice(sidebar_beam: int) -> int:
    """The beam size the box starts from: the last one chosen here, else the sidebar's, else 4."""
    return int(view.get(DECODING_LAST_BEAM) or (sidebar_beam if sidebar_beam > 1 else DEFAULT_BEAM))


def _on_method() -> None:
    """Header, sidebar and other pages use the sidebar's beam size: greedy sets it to 1, beam search to the
    beam size last chosen here (the box is hidden while greedy, so its own state is not trusted)."""
    if view.get(DECODING_METHOD) == "beam":
        beam = _beam_choice(number_box_value(view.BEAM, 1, 8) or 1)
        view.put(DECODING_BEAM, beam)
        view.put(view.BEAM, beam)
    else:
        view.put(view.BEAM, 1)


def _on_beam() -> None:
    beam = number_box_value(DECODING_BEAM, 2, 8)     # None: NaN or out of range (said by controls())
    if beam is not None:
        view.put(view.BEAM, beam)
        view.put(DECODING_LAST_BEAM, beam)


def controls(ctx, n_layers: int) -> tuple[str, int, int, int]:
    """Method, beam size (only for beam search: greedy has none), decoder layer and top-k in one row, seeded
    from the URL and kept in step with the sidebar's beam size. Returns (method, beam, layer, k); beam is 1
    for greedy."""
    if view.get(DECODING_SEEN_BEAM, default=ctx.beam) != ctx.beam:   # the sidebar's beam size changed
        view.put(DECODING_METHOD, "beam" if ctx.beam > 1 else "greedy")
        if ctx.beam > 1:
            view.put(DECODING_BEAM, ctx.beam)
            view.put(DECODING_LAST_BEAM, ctx.beam)
    view.put(DECODING_SEEN_BEAM, ctx.beam)
    # the sidebar's beam size decides (a link's method= is checked, and agrees when the page wrote the link)
    view.read(view.METHOD, choices=list(METHODS), default="beam" if ctx.beam > 1 else "greedy")
    view.seed(DECODING_METHOD, "beam" if ctx.beam > 1 else "greedy")
    view.seed(DECODING_BEAM, _beam_choice(ctx.beam))
    view.seed(DECODING_LAYER, view.read(view.LAYER, default=n_layers - 1, hi=n_layers - 1))
    view.seed(DECODING_K, view.read(view.TOP_K))
    c1, c2, c3, c4 = st.columns([1.35, 0.85, 1, 1.2])
    method = c1.radio(t("decoding.method"), list(METHODS), key=view.key(DECODING_METHOD), horizontal=True,
                      on_change=_on_method, format_func={m: t(DECODING_METHOD_KEYS[m]) for m in METHODS}.get,
                      help=t("decoding.method.help"))
    if method == "beam":
        beam = whole_number_box(c2, t("decoding.beam"), 2, 8, DECODING_BEAM, DEFAULT_BEAM, on_change=_on_beam,
                                help=t("decoding.beam.help"))
        view.put(DECODING_LAST_BEAM, beam)
    else:
        beam = 1
        c2.caption(t("decoding.greedy_note"))
    layer = c3.selectbox(t("decoding.layer"), list(range(n_layers)), key=view.key(DECODING_LAYER),
                         format_func={i: t("ui.layer_n", i=i) for i in range(n_layers)}.get,
                         help=t("decoding.layer.help"))
    k = c4.slider(t("decoding.k"), 1, 20, key=view.key(DECODING_K))
    return method, beam, layer, k


def no_repeat_choice() -> int:
    """Off by default, so a class can watch a loop happen; on, the search never repeats a 3-token group."""
    view.seed(DECODING_NO_REPEAT, view.read(view.NO_REPEAT) > 0)
    blocked = st.toggle(t("decoding.no_repeat", n=NO_REPEAT_N), key=view.key(DECODING_NO_REPEAT),
                        help=t("decoding.no_repeat.help", n=NO_REPEAT_N))
    return NO_REPEAT_N if blocked else 0


def step_pick(n_steps: int) -> int:
    """The step shown, from the URL (which the browser's step picks write); without step= step 0, where the loop
    starts: <s> alone, the first token. The link's step= is checked once (a bad one said); later a step past a
    shorter output (beam instead of greedy, another sentence) is its last step, quietly (the URL's step= is the
    page's own: warning about it blamed the link)."""
    if not view.has(DECODING_STEP):
        view.put(DECODING_STEP, True)
        return view.read(view.STEP, default=0, hi=n_steps - 1)
    return min(view.read(view.STEP, [], default=0), n_steps - 1)


class Step:
    """One decoding step as the page shows it: its pictures (the builders'), the numbers each shows (its CSV), its
    words and file names. Steps around it set the long output's window (the step slider moves it)."""

    def __init__(self, decoded: Decoded, step: int, settings: DecodingSettings):
        dec = decoded.dec
        self.decoded, self.dec, self.step, self.settings = decoded, dec, step, settings
        self.n_heads = decoded.model.config.n_heads
        self.head_names = [t("ui.head_n", h=h) for h in range(self.n_heads)]
        self.out_labels = position_labels(dec.out_tokens)
        self.src_labels = position_labels(dec.src_tokens)
        self.steps = window_around(step, len(self.out_labels), WINDOW_ROWS)
        self.alignment = dec.cross_rows[:, settings.layer].mean(1)                      # [T, S]

    def files(self) -> dict[str, str]:
        tag, step, layer = self.decoded.model_id, self.step, self.settings.layer
        return {name: safe_filename(f"{tag}-{suffix}") for name, suffix in
                {"topk": f"decoding-step{step}-topk", "self": f"decoding-step{step}-self-L{layer}",
                 "cross": f"decoding-step{step}-cross-L{layer}", "confidence": "decoding-confidence",
                 "alignment": f"decoding-alignment-L{layer}"}.items()}

    def candidates(self) -> tuple[list[str], np.ndarray, list[int], int | None]:
        """This step's top-k next tokens: their labels, probabilities, ranks, and which is the one appended."""
        dec, step = self.dec, self.step
        ids, probs, ranks, chosen = top_k_view(dec.top_ids[step], dec.top_logprobs[step], self.settings.k,
                                               dec.out_ids[step], float(dec.chosen_logprob[step]),
                                               int(dec.chosen_rank[step]))
        return self.decoded.model.tokenizer.token_strings(ids), probs, ranks, chosen

    def topk(self):
        """The next-token candidates of this step."""
        labels, probs, ranks, chosen = self.candidates()
        return next_token_bars(probs, labels, ranks, look(), chosen,
                               title=t("decoding.topk.title", step=self.step, k=self.settings.k))

    def self_keys(self) -> tuple[list[str], slice]:
        """The inputs the newest position looks at, and of a long output the newest, as many as the half-page map
        labels legibly (the CSV has them all)."""
        keys = position_labels(self.dec.in_tokens[:self.step + 1])
        return keys, slice(max(0, len(keys) - keys_that_fit(type_scale().column_px(), type_scale())), len(keys))

    def self_rows(self):
        """Where the newest position looks, every head."""
        layer = self.settings.layer
        keys, newest = self.self_keys()
        rows = self.dec.self_rows[self.step][layer]                                       # [H, step+1]
        return heads_row_heatmap(rows[:, newest], keys[newest], look(), title=t("decoding.self.title", layer=layer),
                                 width_px=type_scale().column_px())

    def cross_shown(self) -> slice:
        """A long sentence: the source tokens this step looked at most, as many as slanted labels fit across the
        page."""
        cross = self.dec.cross_rows[self.step, self.settings.layer]
        return source_window(cross.mean(0)[None], slice(0, 1), cross_tokens(type_scale()))

    def cross(self):
        """Where this step looked in the source, every head and their average."""
        step, layer, src = self.step, self.settings.layer, self.src_labels
        shown = self.cross_shown()
        return cross_attention_multiples(self.dec.cross_rows[step, layer][:, shown], src[shown], look(),
                                         title=t("decoding.cross.title", step=step, layer=layer))

    def confidence(self):
        """How sure the model was of each token it appended, this step's marked."""
        dec, steps = self.dec, self.steps
        return confidence_bars(np.exp(dec.chosen_logprob)[steps], self.out_labels[steps], look(),
                               self.step - steps.start, title=t("decoding.confidence.title"))

    def alignment_shown(self) -> slice:
        return source_window(self.alignment, self.steps, translation_columns(type_scale()))

    def aligned(self):
        """The whole output against the source, this step marked."""
        settings, steps, shown = self.settings, self.steps, self.alignment_shown()
        return alignment_heatmap(self.alignment[steps, shown], self.out_labels[steps], self.src_labels[shown], look(),
                                 step=self.step - steps.start,
                                 title=t("decoding.alignment.title", layer=settings.layer, heads=self.n_heads,
                                         method=t(DECODING_METHOD_KEYS[settings.method])))

    def figures(self) -> dict:
        """Every picture of the step, as the builders draw it."""
        return {"topk": self.topk(), "self": self.self_rows(), "cross": self.cross(), "confidence": self.confidence(),
                "alignment": self.aligned()}

    def numbers(self, figure: str) -> pd.DataFrame:
        """The numbers a picture shows (its CSV): all of them, a long sentence's whole too."""
        dec, step, layer = self.dec, self.step, self.settings.layer
        if figure == "topk":
            labels, probs, ranks, _ = self.candidates()
            return pd.DataFrame({t("decoding.col.rank"): ranks, t("decoding.col.token"): labels,
                                 t("decoding.col.probability"): probs}).set_index(t("decoding.col.rank"))
        if figure == "self":
            return matrix_frame(dec.self_rows[step][layer], self.head_names, self.self_keys()[0])
        if figure == "cross":
            cross = dec.cross_rows[step, layer]
            return matrix_frame(np.vstack([cross.mean(0), cross]), [t("decoding.average")] + self.head_names,
                                self.src_labels)
        if figure == "confidence":
            return pd.DataFrame({t("decoding.col.token"): dec.out_tokens,
                                 t("decoding.col.probability"): np.exp(dec.chosen_logprob),
                                 t("decoding.col.rank"): dec.chosen_rank, t("decoding.col.entropy"): dec.entropy})
        return matrix_frame(self.alignment, self.out_labels, self.src_labels)

    def texts(self) -> dict[str, str]:
        dec, step = self.dec, self.step
        keys, newest = self.self_keys()
        return {
            "self-newest": t("decoding.self.newest", shown=len(keys) - newest.start, n=len(keys)) if newest.start else "",
            "step-caption": t("decoding.step.caption", entropy=f"{dec.entropy[step]:.3f}"),
            "step-heading": t("decoding.step.heading", step=step, last=dec.n_steps - 1),  # 0-based, as the labels
            "step-code": step_code(dec, step, self.decoded.model.config.vocab_size),
            "cross-source": source_words(self.cross_shown(), len(self.src_labels)),
            "alignment-source": source_words(self.alignment_shown(), len(self.src_labels)),
        }

    def part(self, hypotheses: dict | None = None) -> dict:
        """The step's part of the page's deck (viz/figures/browser_view.py); the beam's hypotheses, the same every
        step, where the page shows them."""
        return payloads.deck_pick(self.figures(), self.files(), self.texts(),
                                  {"hypotheses": hypotheses} if hypotheses else None)


def step_code(dec, step: int, vocab_size: int) -> str:
    """What the step reads, appends and has made so far, as three lines."""
    chosen_p = float(np.exp(dec.chosen_logprob[step]))
    return (t("decoding.code.input", tokens="  ".join(dec.in_tokens[:step + 1])) + "\n"
            + t("decoding.code.appends", token=dec.out_tokens[step], p=f"{chosen_p:.4f}",
                rank=int(dec.chosen_rank[step]), vocab=vocab_size) + "\n"
            + t("decoding.code.output", tokens="  ".join(dec.out_tokens[:step + 1])))


def source_words(shown: slice, n: int) -> str:
    """Which source tokens a long sentence's picture shows (the CSV holds them all); nothing for a short one."""
    if shown.stop - shown.start < n:
        return t("decoding.window.source", first=shown.start, last=shown.stop - 1, n=n)
    return ""


def hypotheses_table(dec) -> dict:
    """The beam's finished hypotheses, best first: a static table at the text's size."""
    columns = {"log_prob": t("decoding.hyp.log_prob"), "normalized": t("decoding.hyp.normalized", alpha=BEAM_ALPHA)}
    columns.update({name: t(DECODING_HYP_KEYS[name]) for name in ("rank", "output", "tokens", "finished")})
    frame = pd.DataFrame(dec.hypotheses).rename(columns=columns).set_index(columns["rank"])
    for column in (columns["log_prob"], columns["normalized"]):
        frame[column] = frame[column].map("{:.3f}".format)
    return payloads.table(frame.columns, frame.index.astype(str), frame.to_numpy())


def blocks(beam: int) -> list[dict]:
    """How the page's deck is laid out, every step alike: the candidates beside where the newest position looks,
    what the step reads and appends, where it looked in the source, the confidence of every step, (beam search)
    the hypotheses, and the whole output against the source."""
    figure = lambda name: {"type": "figure", "id": name, "csv": True}        # noqa: E731
    text = lambda name: {"type": "text", "id": name}                        # noqa: E731
    section = lambda name, words: {"type": "heading", "id": name, "title": words, "size": "section"}  # noqa: E731
    hypotheses = [section("hypotheses-heading", t("decoding.hypotheses", beam=beam)),
                  {"type": "table", "id": "hypotheses"},
                  {"type": "text", "id": "hypotheses-caption", "title": t("decoding.hypotheses.caption")}]
    return [
        {"type": "columns", "columns": [[figure("topk")], [figure("self"), text("self-newest")]]},
        text("step-caption"), {"type": "heading", "id": "step-heading"}, {"type": "code", "id": "step-code"},
        figure("cross"), text("cross-source"),
        section("confidence-heading", t("decoding.confidence")), figure("confidence"),
        *(hypotheses if beam > 1 else []),
        section("alignment-heading", t("decoding.alignment")), figure("alignment"), text("alignment-source"),
        {"type": "text", "id": "alignment-caption", "title": t("decoding.alignment.caption")},
    ]


def sentence_sig(decoded: Decoded, settings: DecodingSettings, page_look: Look, modebar: bool) -> str:
    """What the page's deck is built for, as the browser names it: the decoding (sentence, method, beam, limits),
    the layer and k, the look (words and type scale), the modebar."""
    at = (decoded.args, settings, page_look, modebar)
    return payloads.view_sig("decoding", at)


@view.shared_cached
def built_deck(decoded: Decoded, settings: DecodingSettings, page_look: Look, modebar: bool,
               first: int | None) -> payloads.Body:
    """The browser's data for this decoding and view: built once, for every session of the worker. `first`: only
    that step (a new sentence's first run); the view asks for the rest once it has drawn it, which reuses the
    part the first one made."""
    dec = decoded.dec
    picks = range(dec.n_steps) if first is None else [first]
    parts = {str(step): step_part(decoded, step, settings, page_look, modebar, settings.method == "beam")
             for step in picks}
    return payloads.encode(payloads.deck(parts, blocks(settings.beam), STEP_PICK, {},
                                         template_spec(go.Figure()), page_look.words,
                                         {"text_px": page_look.scale.text,
                                          "sentence": sentence_sig(decoded, settings, page_look, modebar),
                                          "whole": first is None, "modebar": modebar,
                                          "url_names": url_names(STEP_PICK)}, steps=dec.n_steps))


@view.shared_part
def step_part(decoded: Decoded, step: int, settings: DecodingSettings, page_look: Look, modebar: bool,
              hypotheses: bool) -> dict:
    """One step's part of the deck (its pictures drawn in `page_look`, with or without the modebar; the beam's
    hypotheses where the page shows them)."""
    return Step(decoded, step, settings).part(beam_hypotheses(decoded, page_look) if hypotheses else None)


@view.shared_cached
def beam_hypotheses(decoded: Decoded, page_look: Look) -> dict:
    """The beam's hypotheses table, the same every step: made once a decoding and language."""
    return hypotheses_table(decoded.dec)


STEP_FIGURES = ("topk", "self", "cross", "confidence", "alignment")      # a step's pictures (Step.figures)


def pick_csv(decoded: Decoded, settings: DecodingSettings):
    """The CSV of a picture the browser asked for: the numbers it shows."""
    def make(pick: dict) -> dict:
        step = Step(decoded, min(max(pick["step"], 0), decoded.dec.n_steps - 1), settings)
        figure = str(pick.get("figure"))
        if figure not in STEP_FIGURES:
            figure = "topk"
        return {"name": step.files()[figure] + ".csv", "text": step.numbers(figure).to_csv()}
    return make


def step_view(decoded: Decoded, settings: DecodingSettings, step: int) -> None:
    """The step's pictures, drawn in the browser (a deck of every step): the step slider moves there, with no
    script run."""
    if decoded.dec.n_steps == 1:
        st.caption(t("decoding.single_step"))
    page_look, modebar = look(), plotly_config("")["displayModeBar"]
    sentence = sentence_sig(decoded, settings, page_look, modebar)
    whole = whole_asked(sentence, DECODING)
    body = built_deck(decoded, settings, page_look, modebar, None if whole else step)
    browser_view(DECODING, STEP_PICK, body, {"step": step}, {"sentence": sentence, "whole": whole},
                 csv=pick_csv(decoded, settings))


def _use_reference(value: str | None = None) -> None:
    """The page's reference box (or its test-split button) sets the sidebar's reference, on which the trace
    is teacher-forced: one reference for every page."""
    view.put(view.TARGET, view.get(DECODING_REFERENCE) if value is None else value)


def reference_box(ctx) -> None:
    """The page's own reference box, the sidebar's reference in step (folded away in presenter mode), and for a
    test-split sentence a button that brings the split's reference."""
    view.put(DECODING_REFERENCE, ctx.target or "")
    c1, c2 = st.columns([3, 1.2], vertical_alignment="bottom")
    c1.text_input(t("decoding.tf.reference"), key=view.key(DECODING_REFERENCE), on_change=_use_reference,
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
    args = (ctx.model_id, ctx.source, method, beam, max_tokens, no_repeat)
    try:
        dec = get_decoding(*args)
    except ValueError as e:
        st.error(plain(t("decoding.error", error=e), limit=600))
        stop_page()
    step = step_pick(dec.n_steps)
    view.write_url({view.METHOD: method, view.BEAM: beam if method == "beam" else None, view.LAYER: layer,
                    view.TOP_K: k, view.STEP: step, view.NO_REPEAT: no_repeat or None})
    if dec.out_ids[-1] != cfg.eos_id:
        st.warning(t("decoding.length_limit", n=dec.n_steps))
    settings = DecodingSettings(method, beam, layer, k)
    step_view(Decoded(args, ctx.model, dec), settings, step)
    out_labels = position_labels(dec.out_tokens)
    src_labels = position_labels(dec.src_tokens)
    alignment = dec.cross_rows[:, layer].mean(1)                                        # [T, S]
    teacher_forcing_section(ctx, dec, layer, method, alignment, out_labels, src_labels)
    explain()


if __name__ == "__main__":
    render()
