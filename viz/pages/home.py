"""Start page: the model's translation of the sidebar sentence, where each output word looked, how sure it
was; what the model knows; where to go next."""
import streamlit as st

from model.capture import schema
from viz.figures.attention import translation_figure
from viz.pages.about import what_the_model_knows
from viz.services import token_confidence
from viz.state import Context
from viz.text import attention_labels, plain
from viz.ui import need_context, show_figure

NEXT_PAGES = (  # (file, label, icon): where to go from here
    ("viz/pages/tour.py", "Guided tour: one idea per step", ":material/school:"),
    ("viz/pages/explorer.py", "Every head of every layer", ":material/grid_view:"),
    ("viz/pages/step_through.py", "One head's arithmetic", ":material/calculate:"),
    ("viz/pages/decoding.py", "Watch it write, token by token", ":material/play_arrow:"),
)
INTRO = (
    "This app runs a real encoder–decoder Transformer — the architecture of *Attention Is All You Need* "
    "(Vaswani et al., 2017), trained here from scratch — on the sentence in the sidebar, and shows every "
    "number it computes: each head's attention, the queries, keys and values, the scaled scores and the mask, "
    "the positional encodings, the LayerNorm statistics and the residual stream. Change the sentence and "
    "every picture is recomputed from the model.")


def translation_picture(ctx: Context) -> None:
    """The translation's cross-attention (last decoder layer, mean of its heads) and the confidence per token."""
    trace, cfg = ctx.trace, ctx.bundle.config
    last = schema.n_layers(cfg, "cross") - 1
    weights = schema.stacked(trace, "cross", layers=[last])[0].mean(0)                 # [T, S]
    rows, cols = attention_labels(trace.meta, "cross")
    confidence = token_confidence(ctx.model_id, trace)
    if confidence is None:                     # a trace without logits: the attention alone
        probs, others, other_probs = [0.0] * len(rows), [""] * len(rows), [0.0] * len(rows)
    else:
        probs, others, other_probs = confidence["p"], list(confidence["runner_up"]), confidence["runner_up_p"]
    fig = translation_figure(weights, rows, cols, probs, others, other_probs)
    show_figure(fig, f"{ctx.model_id}-translation-attention", key="home-translation")


def how_to_read(ctx: Context) -> str:
    cfg = ctx.bundle.config
    forced = ctx.trace.meta["teacher_forced"]
    written = "each token of your reference translation" if forced else "each token the model wrote"
    return (f"Read down the rows: {written}, in order. Its dark cells are the source tokens it looked at while "
            f"writing it (cross-attention of the last decoder layer, layer {schema.n_layers(cfg, 'cross') - 1}, "
            f"averaged over its {cfg.n_heads} heads). On the right, how sure it was of that token (blue) and the "
            "token it ranked next (grey).")


def next_pages() -> None:
    for column, (page, label, icon) in zip(st.columns(len(NEXT_PAGES)), NEXT_PAGES):
        column.page_link(page, label=label, icon=icon)


def model_facts(ctx: Context) -> str:
    cfg = ctx.bundle.config
    return (f"Model `{ctx.model_id}`: {cfg.n_encoder_layers} encoder and {cfg.n_decoder_layers} decoder layers, "
            f"{cfg.n_heads} heads, d_model = {cfg.d_model}, {ctx.bundle.model.num_parameters():,} parameters.")


def render() -> None:
    st.title("See a Transformer think")
    ctx = need_context(need_trace=False)
    if ctx.trace is None:
        st.info("Type a sentence in the sidebar to see the model translate it.")
    else:
        st.markdown(f"**{plain(ctx.trace.meta['src_text'])}** → **{plain(ctx.trace.meta['tgt_text'] or '(empty)')}**")
        translation_picture(ctx)
        st.caption(how_to_read(ctx))
    knows = what_the_model_knows(ctx.model_id, ctx.bundle.extra.get("metrics"))
    if knows:
        st.markdown(f"**What this model knows.** {knows}")
    st.markdown("**Where to go next**")
    next_pages()
    st.caption(model_facts(ctx))
    with st.expander("What this app is"):
        st.markdown(INTRO)
        st.caption("Every view keeps its settings in the address bar: copy the URL to share exactly what you see. "
                   "Every chart downloads as PNG or SVG (camera button) and as CSV.")


if __name__ == "__main__":
    render()
