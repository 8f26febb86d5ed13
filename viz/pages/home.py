"""Start page: the model's translation of the sidebar sentence, where each output word looked, how sure it
was; what the model knows; where to go next."""
import numpy as np
import streamlit as st

from model.analysis.confidence import token_confidence
from model.capture import schema
from viz.figures.attention import source_window, translation_columns, translation_figure, window_rows
from viz.core.folder_text import code_span
from viz.core import view
from viz.core.i18n import current_lang, t
from viz.elements.map_chart import model_map_chart
from viz.core.model_words import what_the_model_knows
from viz.core.context import Context
from viz.core.text import attention_labels, plain
from viz.elements.ui import explained, look, need_context, show_figure, token_window
from viz.elements.ui import type_scale

NEXT_PER_ROW = 2   # links a row: four in one row cut their labels at 1280x720 ("Guided tour: one idea per s")
NEXT_PAGES = (  # (file, label key in viz/locales, icon): where to go from here
    ("viz/pages/tour.py", "home.next.tour", ":material/school:"),
    ("viz/pages/explorer.py", "home.next.explorer", ":material/grid_view:"),
    ("viz/pages/step_through.py", "home.next.step", ":material/calculate:"),
    ("viz/pages/decoding.py", "home.next.decoding", ":material/play_arrow:"),
)


def sentence_and_translation(ctx: Context) -> None:
    """The sentence as typed (the style token is in the pictures) and the model's translation on one line (a pasted
    40-word sentence took four and pushed the picture off the first screen): cut with "…", the whole on hover."""
    output = plain(ctx.trace.meta["tgt_text"] or t("home.empty"), limit=view.MAX_TEXT_CHARS)
    st.markdown(f"**{plain(ctx.text.strip(), limit=view.MAX_TEXT_CHARS)}** → **{output}**", wrap=False)


def translation_picture(ctx: Context) -> None:
    """The translation's cross-attention (last decoder layer, mean of its heads) and the confidence per token."""
    trace, cfg = ctx.trace, ctx.model.config
    last = schema.n_layers(cfg, "cross") - 1
    weights = schema.stacked(trace, "cross", layers=[last])[0].mean(0)                 # [T, S]
    rows, cols = attention_labels(trace.meta, "cross")
    confidence = token_confidence(trace, ctx.model.tokenizer.token_strings)
    if confidence is None:                     # a trace without logits: the attention alone
        probs, others, other_probs = [0.0] * len(rows), [""] * len(rows), [0.0] * len(rows)
    else:
        probs, others, other_probs = confidence["p"], list(confidence["runner_up"]), confidence["runner_up_p"]
    # a long sentence in windows: the output rows the reader picks, the source tokens those rows looked at
    shown = token_window(len(rows), window_rows(type_scale()), "home-window")
    source = source_window(weights, shown, translation_columns(type_scale()))
    if source.stop - source.start < len(cols):
        st.caption(t("home.window.source", first=source.start, last=source.stop - 1, n=len(cols)))
    fig = translation_figure(weights[shown, source], rows[shown], cols[source], np.asarray(probs)[shown],
                             others[shown], np.asarray(other_probs)[shown], look())
    show_figure(fig, f"{ctx.model_id}-translation-attention", key="home-translation")


def model_map_picture(ctx: Context) -> None:
    """The paper's Figure 1 drawn from this sentence's trace; a block's name, number or picture opens its page."""
    st.subheader(t("map.heading"))
    model_map_chart(ctx, "home-map")
    st.caption(t("map.read"))


def how_to_read(ctx: Context) -> str:
    cfg = ctx.model.config
    forced = ctx.trace.meta["teacher_forced"]
    written = t("home.read.forced") if forced else t("home.read.own")
    return t("home.read", written=written, layer=schema.n_layers(cfg, "cross") - 1, heads=cfg.n_heads)


def next_pages() -> None:
    for start in range(0, len(NEXT_PAGES), NEXT_PER_ROW):
        row = NEXT_PAGES[start:start + NEXT_PER_ROW]
        for column, (page, label, icon) in zip(st.columns(NEXT_PER_ROW), row):
            column.page_link(page, label=t(label), icon=icon)


def model_facts(ctx: Context) -> str:
    cfg = ctx.model.config
    return t("home.facts", model=code_span(ctx.model_id), encoder=cfg.n_encoder_layers, decoder=cfg.n_decoder_layers,
             heads=cfg.n_heads, d_model=cfg.d_model, parameters=f"{ctx.model.n_parameters:,}")


def render() -> None:
    st.title(t("home.title"))
    ctx = need_context(need_trace=False)
    if ctx.trace is None:
        st.info(t("home.need_sentence"))
    else:
        if not view.get(view.PRESENT):          # presenter mode's sentence line over the page says it already
            sentence_and_translation(ctx)
        translation_picture(ctx)
        st.caption(how_to_read(ctx))
        model_map_picture(ctx)
    knows = what_the_model_knows(ctx.model_id, ctx.model.metrics, current_lang())
    if knows:
        st.markdown(t("home.knows", knows=knows))
    st.markdown(t("home.next"))
    next_pages()
    st.caption(model_facts(ctx))
    with explained(t("home.intro.title")):
        st.markdown(t("home.intro"))
        st.caption(t("home.intro.share"))


if __name__ == "__main__":
    render()
