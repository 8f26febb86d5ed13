"""Start page: what this is, and where to go next."""
import streamlit as st

from viz.ui import need_context

st.title("See a Transformer think")
st.markdown(
    "This app runs a real encoder–decoder Transformer — the architecture of *Attention Is All You Need* "
    "(Vaswani et al., 2017), trained here from scratch — on the sentence in the sidebar, and shows every "
    "number it computes: each head's attention, the queries, keys and values, the scaled scores and the mask, "
    "the positional encodings, the LayerNorm statistics and the residual stream. Change the sentence and "
    "every picture is recomputed from the model.")
ctx = need_context()
cfg = ctx.bundle.config
st.markdown(
    f"**Model `{ctx.model_id}`**: {cfg.n_encoder_layers} encoder and {cfg.n_decoder_layers} decoder layers, "
    f"{cfg.n_heads} heads, d_model = {cfg.d_model}, {ctx.bundle.model.num_parameters():,} parameters.")
st.subheader("Where to start")
st.page_link("viz/pages/explorer.py", label="Attention explorer — every head of every layer at a glance",
             icon=":material/grid_view:")
st.page_link("viz/pages/step_through.py", label="Step-through — one head's arithmetic with the real numbers",
             icon=":material/calculate:")
st.page_link("viz/pages/decoding.py", label="Decoding — watch the translation being generated token by token",
             icon=":material/play_arrow:")
st.caption("Every view keeps its settings in the address bar: copy the URL to share exactly what you see. "
           "Every chart downloads as PNG or SVG (camera button) and as CSV.")
