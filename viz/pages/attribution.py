"""Attribution: beyond attention weights. Logit lens, source attribution, contrastive explanations,
activation patching (model/analysis/attribution.py and patching.py; docs/attribution.md)."""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from model.analysis import word_order
from model.analysis.attribution import agreement
from model.capture import schema
from viz.figures.attribution import (SOURCE_AXIS, agreement_heatmap, contrastive_head_bars, contrastive_source_bars,
                                     logit_lens_heatmap, method_heatmaps, patching_heatmap)
from viz.figures.heads import head_label
from viz.services import contrastive, encode, logit_lens, patch, source_maps
from viz.state import MAX_TEXT_CHARS, qp_choice, qp_int, qp_str, set_query
from viz.text import plain, position_labels
from viz.ui import matrix_frame, need_context, show_figure, stop_page


SECTIONS = {"lens": "Logit lens", "source": "Source attribution", "contrastive": "Contrastive", "patching": "Patching"}
METHODS = {"attention": "cross-attention (last layer)", "rollout": "rollout (last cross layer)",
           "rollout_all": "rollout (all layers)", "value_norm": "value-norm ‖αf(x)‖",
           "grad": "gradient × input", "ig": "integrated gradients"}
DEFAULT_METHODS = ["attention", "value_norm", "rollout", "ig"]
TOP_K = 5
IG_STEPS = 16          # the page's default: 32 took 10-16 s on a 32-token en-es sentence (bench/attribution.py)
MAX_IG_TOKENS = 40     # IG costs steps x output tokens backward passes: longer sentences would take minutes
MAX_PATCH_TOKENS = 64  # patching runs (layers x positions + heads) forwards of the whole sentence

@dataclass(frozen=True)
class View:
    """What every section reads: the sentence's trace keys, tokens and labels."""
    model_id: str
    key: tuple                 # (model_id, text, target, beam, max_tokens): the trace cache's key
    meta: dict
    tok: object
    cfg: object
    out_labels: list[str]
    src_labels: list[str]

    @property
    def n_out(self) -> int:
        return len(self.meta["tgt_ids"])


def view_of(ctx) -> View:
    meta = ctx.trace.meta
    key = (ctx.model_id, ctx.text.strip(), (ctx.target or "").strip() or None, ctx.beam, ctx.max_tokens)
    return View(ctx.model_id, key, meta, ctx.bundle.tokenizer, ctx.bundle.config,
                position_labels(meta["tgt_out_tokens"]), position_labels(meta["src_tokens"]))

def seed(widget_key: str, value) -> None:
    """A widget starts from the URL once; afterwards it keeps what the student chose."""
    if widget_key not in st.session_state:
        st.session_state[widget_key] = value



# -- logit lens ---------------------------------------------------------------------------------------------
def lens_section(v: View) -> None:
    lens = logit_lens(v.key, TOP_K)
    tops = [v.tok.token_strings([int(i) for i in row[:, 0]]) for row in lens.top_ids]          # [L][T]
    fig = logit_lens_heatmap(lens.final_prob, tops, v.out_labels, final_rank=lens.final_rank,
                             title="What would each decoder layer say, if it were the last?")
    show_figure(fig, f"{v.model_id}-logit-lens", matrix_frame(lens.final_prob, [f"layer {i}" for i in
                                                                                   range(len(tops))], v.out_labels),
                key="attr-lens")
    st.caption("Each cell: the token that layer's output would predict (text) and the probability it already gives "
               "the model's final choice (colour). Read a column bottom-up to see when the answer forms.")
    with st.expander("How it works, and its caveats"):
        st.markdown(
            "The **logit lens** sends every decoder layer's output $h_\\ell$ through the final output layer "
            "(the same $W$ that turns the last layer into logits). This model is **post-norm** (as in the "
            "paper): every layer's output is already LayerNorm'd, and the output layer reads the last one as it "
            "is, so nothing else is applied; the last row is exactly the model's own distribution.")
        st.latex(r"p_\ell(y_t)=\mathrm{softmax}(W\,h_\ell^{(t)}+b)")
        st.markdown("Caveat: earlier layers were never trained to be read this way, so a low probability there "
                    "can mean 'not yet in a readable form' rather than 'not known'.")


# -- source attribution --------------------------------------------------------------------------------------
def method_choice() -> list[str]:
    raw = qp_str("methods")
    chosen = [m for m in (raw or "").split(",") if m in METHODS] or DEFAULT_METHODS
    if raw and len(chosen) != len([m for m in raw.split(",") if m]):
        st.warning(plain(f"URL parameter methods={raw[:60]!r}: only {', '.join(METHODS)} exist; unknown names "
                         "ignored.", limit=600))
    seed("attr-methods", chosen)
    picked = st.multiselect("Methods side by side", list(METHODS), key="attr-methods", format_func=METHODS.get,
                            max_selections=4)
    return picked or DEFAULT_METHODS


def source_section(v: View) -> None:
    c1, c2 = st.columns([3, 1])
    with c1:
        picked = method_choice()
    seed("attr-steps", qp_int("steps", IG_STEPS, 4, 128))
    steps = int(c2.number_input("IG steps", 4, 128, key="attr-steps", help="Integrated gradients: points on the "
                                                                           "path from the baseline to the input."))
    set_query(methods=None if picked == DEFAULT_METHODS else ",".join(picked),
              steps=None if steps == IG_STEPS else steps)
    with_ig = len(v.meta["src_ids"]) <= MAX_IG_TOKENS
    maps = source_maps(v.key, steps, with_ig)
    if not with_ig:
        st.info(f"Integrated gradients is left out for sentences over {MAX_IG_TOKENS} tokens (this one has "
                f"{len(v.meta['src_ids'])}): it needs {steps} backward passes per output token.")
        picked = [m for m in picked if m in maps] or ["attention"]
    fig = method_heatmaps([maps[m] for m in picked], [METHODS[m] for m in picked], v.out_labels, v.src_labels,
                          title="Which source tokens does each output token come from?")
    show_figure(fig, f"{v.model_id}-source-attribution", key="attr-methods-fig")
    st.caption("Row t: output token t; each row sums to 1 (its share per source token), one colour scale for all "
               "methods. Where the methods agree, trust the picture more.")
    names, rho = agreement({METHODS[m]: maps[m] for m in METHODS if m in maps})
    show_figure(agreement_heatmap(names, rho, title="Do the methods agree? (Spearman ρ, mean over output tokens)"),
                f"{v.model_id}-attribution-agreement", matrix_frame(rho, names, names), key="attr-agreement")
    with st.expander("What each method measures, and its caveats"):
        st.markdown(
            "- **Cross-attention**: the last layer's weights $\\alpha_{ts}$, heads averaged. *Attention is not "
            "explanation*: a large weight on a value that is nearly zero moves nothing.\n"
            "- **Rollout** (Abnar & Zuidema 2020): encoder attention multiplied through its layers (with ½ for the "
            "residual path), then the cross-attention; *all layers* also mixes in each decoder layer.\n"
            "- **Value-norm** (Kobayashi et al. 2020): $\\lVert\\alpha_{ts} f(x_s)\\rVert$ with $f(x_s)=v_s W^O_h$, "
            "summed over heads: how much each source token *adds*, not only where the head looks.\n"
            "- **Gradient × input**: $x_s\\cdot\\nabla_{x_s}\\,\\mathrm{logit}(y_t)$ on the token embeddings. "
            "First-order: where the model is sure (saturated) the slope says little.\n"
            "- **Integrated gradients** (Sundararajan et al. 2017): the gradient averaged on the path from a "
            "baseline $x'$ to $x$; the scores add up to $\\mathrm{logit}(x)-\\mathrm{logit}(x')$. The baseline "
            "here is **all token embeddings 0, positions kept**: the answer depends on that choice.")
        st.latex(r"\mathrm{IG}_s=x_s\cdot\frac1m\sum_{k=1}^{m}\nabla_{x_s}\mathrm{logit}(y_t)\Big|_{\frac{k-1/2}{m}x}")
        st.markdown("Gradient maps show |score|, normalised per row. On the toy reverse model they put much of "
                    "each row on `</s>`: to mirror a position the model must know where the sentence ends.")


# -- contrastive ---------------------------------------------------------------------------------------------
def step_picker(v: View, widget_key: str) -> int:
    seed(widget_key, qp_int("step", 0, 0, v.n_out - 1))
    st.session_state[widget_key] = min(int(st.session_state[widget_key]), v.n_out - 1)
    if v.n_out == 1:
        return 0
    return st.select_slider("Output token", list(range(v.n_out)), key=widget_key, format_func=lambda t: v.out_labels[t])


def contrastive_section(v: View) -> None:
    c1, c2 = st.columns([2, 1])
    with c1:
        step = step_picker(v, "attr-step")
    lens = logit_lens(v.key, TOP_K)
    chosen = int(v.meta["tgt_ids"][step])
    top = [(int(i), float(p)) for i, p in zip(lens.top_ids[-1, step], lens.top_probs[-1, step]) if int(i) != chosen]
    alternatives, alt_probs = [i for i, _ in top[:TOP_K - 1]], [p for _, p in top[:TOP_K - 1]]
    alt_labels = v.tok.token_strings(alternatives)
    seed("attr-alt", qp_int("alt", 0, 0, len(alternatives) - 1))
    st.session_state["attr-alt"] = min(int(st.session_state["attr-alt"]), len(alternatives) - 1)
    alt_index = c2.selectbox("Rather than", list(range(len(alternatives))), key="attr-alt",
                             format_func=lambda i: f"{alt_labels[i]} (p = {alt_probs[i]:.3f})",
                             help="The model's next most likely tokens at this step.")
    set_query(step=step, alt=alt_index or None)
    chosen_label, alt_label = plain(v.tok.token_strings([chosen])[0]), plain(alt_labels[alt_index])   # Markdown below
    result = contrastive(v.model_id, tuple(v.meta["src_ids"]), tuple(v.meta["tgt_ids"][:step]), chosen,
                         alternatives[alt_index], 32)
    st.subheader(f"Why “{chosen_label}” rather than “{alt_label}”?")
    st.caption(f"logit({chosen_label}) − logit({alt_label}) = {result.base_difference:+.2f}. Blue pushes toward "
               f"“{chosen_label}”, red toward “{alt_label}”.")
    left, right = st.columns(2)
    with left:
        labels = [head_label(*h) for h in result.heads]
        show_figure(contrastive_head_bars(labels, result.head_effects, title="Heads (each switched off alone)"),
                    f"{v.model_id}-contrastive-heads", key="attr-contrast-heads")
    with right:
        show_figure(contrastive_source_bars(v.src_labels, result.source_scores, title="Source tokens (integrated "
                                                                                      "gradients)"),
                    f"{v.model_id}-contrastive-source", key="attr-contrast-source")
    with st.expander("How it works"):
        st.markdown(
            "A contrastive question has a sharper answer than 'why this word': only what separates the two "
            "candidates counts. **Heads**: each head's output $z_h$ is set to 0 alone and the drop in "
            "$\\mathrm{logit}(a)-\\mathrm{logit}(b)$ is measured (the model itself is not changed). **Source "
            "tokens**: integrated gradients of that difference from the zero-embedding baseline (32 steps); plain "
            "gradient × input is often misleading here because a confident model is saturated.")


# -- patching ------------------------------------------------------------------------------------------------
def corrupted_sentence(v: View) -> str:
    derived = word_order.swap_two_words(v.meta["src_text"])
    seed("attr-corrupt", qp_str("corrupt", derived))
    text = st.text_input("Corrupted sentence (same number of tokens)", key="attr-corrupt", max_chars=MAX_TEXT_CHARS,
                         help="Starts as the sentence with its two longest words swapped; change one word.")
    set_query(corrupt=None if text.strip() == derived else text.strip())
    return text.strip()


def patching_section(v: View) -> None:
    c1, c2 = st.columns([2, 1])
    with c1:
        corrupted = corrupted_sentence(v)
    with c2:
        step = step_picker(v, "attr-patch-step")
    set_query(step=step)
    if not corrupted:
        st.info("Type a corrupted sentence: the same sentence with one word changed.")
        return
    clean = tuple(v.meta["src_ids"])
    if len(clean) > MAX_PATCH_TOKENS:
        st.info(f"Patching is limited to sentences of {MAX_PATCH_TOKENS} tokens here (this one has {len(clean)}): "
                "it reruns the model once per layer, position and head.")
        return
    bad = tuple(encode(v.model_id, corrupted))           # uncut: a sentence cut to the token limit cannot be matched
    if len(bad) != len(clean):
        st.warning(f"The corrupted sentence has {len(bad)} tokens and the sentence {len(clean)}: patching copies "
                   "activations position by position, so both need the same number of tokens. Change one word "
                   "for another of the same length in tokens.")
        return
    if bad == clean:
        st.info("The corrupted sentence is the same as the sentence: change a word to see what carries it.")
        return
    result = patch(v.model_id, clean, bad, tuple(v.meta["tgt_ids"][:step]), int(v.meta["tgt_ids"][step]))
    chosen, alt = (plain(t) for t in v.tok.token_strings([result.chosen, result.alternative]))   # Markdown below
    show_patching(v, result, step, chosen, alt)


def show_patching(v: View, result, step: int, chosen: str, alt: str) -> None:
    st.caption(f"Output token {step}: m = logit({chosen}) − logit({alt}) is {result.clean:+.2f} on the sentence and "
               f"{result.corrupted:+.2f} on the corrupted one. Each cell: the share of that gap restored by copying "
               "one activation from the sentence's run into the corrupted run (1 = all of it, 0 = none).")
    if np.isnan(result.encoder).all():
        st.info("Both sentences give the same logit difference here: there is nothing to restore.")
        return
    layers = lambda stack: [f"layer {i}" for i in range(schema.n_layers(v.cfg, stack))]  # noqa: E731
    dec_labels = position_labels(v.meta["tgt_in_tokens"][:step + 1])
    show_figure(patching_heatmap(result.encoder, layers("encoder"), v.src_labels, title="Encoder layer outputs",
                                 x_title=SOURCE_AXIS, y_title="encoder layer"),
                f"{v.model_id}-patching-encoder", matrix_frame(result.encoder, layers("encoder"), v.src_labels),
                key="attr-patch-enc")
    rows = [f"{kind} L{i}" for kind in schema.KINDS for i in range(schema.n_layers(v.cfg, kind))]
    heads = [f"head {h}" for h in range(v.cfg.n_heads)]
    grid = np.concatenate([result.heads[kind] for kind in schema.KINDS])                      # [kinds x L, H]
    show_figure(patching_heatmap(grid, rows, heads, title="Heads (output z at every position)", x_title="head",
                                 y_title="attention (kind, layer)"),
                f"{v.model_id}-patching-heads", matrix_frame(grid, rows, heads), key="attr-patch-heads")
    show_figure(patching_heatmap(result.decoder, layers("decoder"), dec_labels, title="Decoder layer outputs",
                                 x_title="decoder input (position, token)", y_title="decoder layer"),
                f"{v.model_id}-patching-decoder", matrix_frame(result.decoder, layers("decoder"), dec_labels),
                key="attr-patch-dec")
    with st.expander("How it works, and its caveats"):
        st.markdown("**Activation patching** (causal tracing): run the corrupted sentence, but copy one activation "
                    "from the clean run, and see how much of the clean answer comes back.")
        st.latex(r"\text{restored}=\frac{m_\text{patched}-m_\text{corrupted}}{m_\text{clean}-m_\text{corrupted}},"
                 r"\quad m=\mathrm{logit}(\text{chosen})-\mathrm{logit}(\text{alternative})")
        st.markdown("The alternative is the corrupted run's favourite (its runner-up if that is the chosen token). "
                    "Shares can exceed 1 or fall below 0: a single patch may overshoot or push further away. "
                    "One patch at a time misses effects that need two activations together.")


SECTION_RENDERERS = {"lens": lens_section, "source": source_section, "contrastive": contrastive_section,
                     "patching": patching_section}


def render() -> None:
    ctx = need_context()
    v = view_of(ctx)
    st.title("Attribution")
    seed("attr-section", qp_choice("view", list(SECTIONS), "lens"))
    section = st.radio("Show", list(SECTIONS), key="attr-section", horizontal=True, format_func=SECTIONS.get,
                       label_visibility="collapsed")
    set_query(view=None if section == "lens" else section)
    if v.n_out == 0:
        st.info("The model produced no output for this sentence.")
        stop_page()
    SECTION_RENDERERS[section](v)


if __name__ == "__main__":
    render()
