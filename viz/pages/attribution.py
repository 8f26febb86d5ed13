"""Attribution: beyond attention weights. Logit lens, source attribution, contrastive explanations,
activation patching (model/analysis/attribution.py and patching.py; docs/attribution.md)."""
from dataclasses import dataclass

import numpy as np
import streamlit as st

from model.analysis import word_order
from model.analysis.attribution import agreement
from model.capture import schema
from viz.figures.attention import source_window, window_around
from viz.figures.attribution import (agreement_heatmap, contrast_tokens, contrastive_head_bars, contrastive_source_bars,
                                     lens_tokens, logit_lens_heatmap, method_heatmaps, method_tokens, patch_tokens,
                                     patching_heatmap)
from viz.figures.style import Labels
from viz.core.i18n import error_text, kind_word, t
from viz.services.analyses import contrastive, encode, logit_lens, patch, source_maps
from viz.core import view
from viz.core.view import MAX_TEXT_CHARS, whole_number_box
from viz.core.text import plain, position_labels
from viz.elements.ui import (explained, look, matrix_frame, need_context, show_figure, stop_page, token_window,
                             type_scale)

OWN = view.Own("viz.pages.attribution")  # this module's own session values
ATTRIBUTION = OWN.value("attr")                   # attr-<control>: this page's widgets
ATTRIBUTION_STEPS = OWN.value("attr-steps")       # its integrated-gradient steps box (the part "steps" of ATTRIBUTION)


SECTIONS = ("lens", "source", "contrastive", "patching")          # names: attribution.section.<name>
METHODS = ("attention", "rollout", "rollout_all", "value_norm", "grad", "ig")   # attribution.method.<name>
DEFAULT_METHODS = ["attention", "value_norm", "rollout", "ig"]
TOP_K = 5
IG_STEPS = 16          # the page's default: 32 took 10-16 s on a 32-token en-es sentence (bench/attribution.py)
MAX_IG_TOKENS = 40     # IG costs steps x output tokens backward passes: longer sentences would take minutes
MAX_PATCH_TOKENS = 64  # patching runs (layers x positions + heads) forwards of the whole sentence

# Catalogue keys (viz/locales), written out so that a test finds every key in use.
ATTRIBUTION_SECTION_KEYS = {
    "contrastive": "attribution.section.contrastive", "lens": "attribution.section.lens",
    "patching": "attribution.section.patching", "source": "attribution.section.source"
}
ATTRIBUTION_METHOD_KEYS = {
    "attention": "attribution.method.attention", "grad": "attribution.method.grad", "ig": "attribution.method.ig",
    "rollout": "attribution.method.rollout", "rollout_all": "attribution.method.rollout_all",
    "value_norm": "attribution.method.value_norm"
}
ATTRIBUTION_PATCH_TEX_KEYS = {
    "alternative": "attribution.patch.tex.alternative", "chosen": "attribution.patch.tex.chosen",
    "clean": "attribution.patch.tex.clean", "corrupted": "attribution.patch.tex.corrupted",
    "patched": "attribution.patch.tex.patched", "restored": "attribution.patch.tex.restored"
}


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
    text: str = ""             # the sentence as typed (without a two-style model's style token)
    style: str | None = None   # the style token the model reads first, if any

    @property
    def n_out(self) -> int:
        return len(self.meta["tgt_ids"])


def section_name(section: str) -> str:
    return t(ATTRIBUTION_SECTION_KEYS[section])


def method_name(method: str) -> str:
    return t(ATTRIBUTION_METHOD_KEYS[method])


def layer_labels(n: int) -> list[str]:
    return [t("ui.layer_n", i=i) for i in range(n)]


def head_name(kind: str, layer: int, head: int) -> str:
    """viz.figures.heads.head_label ("cross L1 H3") in the page's language."""
    return t("attribution.head_label", kind=kind_word(kind), layer=layer, head=head)


def view_of(ctx) -> View:
    meta = ctx.trace.meta
    return View(ctx.model_id, ctx.trace_key, meta, ctx.model.tokenizer, ctx.model.config,
                position_labels(meta["tgt_out_tokens"]), position_labels(meta["src_tokens"]), ctx.text.strip(), ctx.style)


# -- logit lens ---------------------------------------------------------------------------------------------
def lens_section(v: View) -> None:
    lens = logit_lens(v.key, TOP_K)
    tops = [v.tok.token_strings([int(i) for i in row[:, 0]]) for row in lens.top_ids]          # [L][T]
    layers = layer_labels(len(tops))
    shown = token_window(v.n_out, lens_tokens(type_scale()), "attr-lens-window")   # a long output: a window of it
    fig = logit_lens_heatmap(lens.final_prob[:, shown], [row[shown] for row in tops], v.out_labels[shown], look(),
                             title=t("attribution.lens.title"), final_rank=lens.final_rank[:, shown])
    show_figure(fig, f"{v.model_id}-logit-lens", matrix_frame(lens.final_prob, layers, v.out_labels), key="attr-lens")
    st.caption(t("attribution.lens.caption"))
    with st.expander(t("attribution.how_caveats")):
        st.markdown(t("attribution.lens.how"))
        st.latex(r"p_\ell(y_t)=\mathrm{softmax}(W\,h_\ell^{(t)}+b)")
        st.markdown(t("attribution.lens.caveat"))


# -- source attribution --------------------------------------------------------------------------------------
# The chosen methods' chips wrap onto a second line instead of scrolling sideways (at 1280x720 with the
# sidebar open the fourth, "integrated gradients", showed as "integ"). A fixed string, no user text.
METHOD_CHIPS_CSS = """<style>
.st-key-attr-methods div:has(> span > span) { flex-wrap: wrap !important; overflow: visible !important;
  height: auto !important; }
.st-key-attr-methods div:has(span > span) { height: auto !important; max-height: none !important; }
</style>"""


def method_choice() -> list[str]:
    st.html(METHOD_CHIPS_CSS)
    raw = view.read(view.METHODS)
    chosen = [m for m in (raw or "").split(",") if m in METHODS] or DEFAULT_METHODS
    if raw and len(chosen) != len([m for m in raw.split(",") if m]):
        st.warning(plain(t("attribution.methods.unknown", raw=repr(raw[:60]), names=", ".join(METHODS)), limit=600))
    view.seed(ATTRIBUTION, chosen, "methods")
    picked = st.multiselect(t("attribution.methods.label"), list(METHODS), key=view.key(ATTRIBUTION, "methods"),
                            format_func=method_name, max_selections=4)
    return picked or DEFAULT_METHODS


def source_section(v: View) -> None:
    c1, c2 = st.columns([3, 1])
    with c1:
        picked = method_choice()
    view.seed(ATTRIBUTION, view.read(view.STEPS, default=IG_STEPS, hi=128), "steps")
    steps = whole_number_box(c2, t("attribution.steps.label"), 4, 128, ATTRIBUTION_STEPS, IG_STEPS,
                             help=t("attribution.steps.help"))
    view.write_url({view.METHODS: None if picked == DEFAULT_METHODS else ",".join(picked),
                    view.STEPS: None if steps == IG_STEPS else steps})
    with_ig = len(v.meta["src_ids"]) <= MAX_IG_TOKENS
    maps = source_maps(v.key, steps, with_ig)
    if not with_ig:
        st.info(t("attribution.ig_left_out", max=MAX_IG_TOKENS, n=len(v.meta["src_ids"]), steps=steps))
        picked = [m for m in picked if m in maps] or ["attention"]
    # a long sentence: the output rows the reader picks and the source tokens they draw on most
    n_rows, n_cols = method_tokens(type_scale())
    rows = token_window(v.n_out, n_rows, "attr-source-window")
    cols = source_window(maps[picked[0]], rows, n_cols)
    fig = method_heatmaps([maps[m][rows, cols] for m in picked], [method_name(m) for m in picked], v.out_labels[rows],
                          v.src_labels[cols], look(), title=t("attribution.source.title"))
    show_figure(fig, f"{v.model_id}-source-attribution", key="attr-methods-fig")
    if cols.stop - cols.start < len(v.src_labels):
        st.caption(t("home.window.source", first=cols.start, last=cols.stop - 1, n=len(v.src_labels)))
    st.caption(t("attribution.source.caption"))
    names, rho = agreement({method_name(m): maps[m] for m in METHODS if m in maps})
    show_figure(agreement_heatmap(names, rho, look(), title=t("attribution.agree.title")),
                f"{v.model_id}-attribution-agreement", matrix_frame(rho, names, names), key="attr-agreement")
    with explained(t("attribution.source.how_title")):
        st.markdown(t("attribution.source.how"))
        st.latex(r"\mathrm{IG}_s=x_s\cdot\frac1m\sum_{k=1}^{m}\nabla_{x_s}\mathrm{logit}(y_t)\Big|_{\frac{k-1/2}{m}x}")
        st.markdown(t("attribution.source.how_gradients"))


# -- contrastive ---------------------------------------------------------------------------------------------
def step_picker(v: View, part: str) -> int:
    """The output step, from the URL once; `part`: the widget's name among the page's (attr-<part>)."""
    view.seed(ATTRIBUTION, view.read(view.STEP, hi=v.n_out - 1), part)
    view.put(ATTRIBUTION, min(int(view.get(ATTRIBUTION, part)), v.n_out - 1), part)
    widget_key = view.key(ATTRIBUTION, part)
    if v.n_out == 1:
        return 0
    return st.select_slider(t("attribution.step"), list(range(v.n_out)), key=widget_key,
                            format_func=lambda i: v.out_labels[i])


def contrastive_section(v: View) -> None:
    c1, c2 = st.columns([2, 1])
    with c1:
        step = step_picker(v, "step")
    lens = logit_lens(v.key, TOP_K)
    chosen = int(v.meta["tgt_ids"][step])
    top = [(int(i), float(p)) for i, p in zip(lens.top_ids[-1, step], lens.top_probs[-1, step]) if int(i) != chosen]
    alternatives, alt_probs = [i for i, _ in top[:TOP_K - 1]], [p for _, p in top[:TOP_K - 1]]
    alt_labels = v.tok.token_strings(alternatives)
    view.seed(ATTRIBUTION, view.read(view.ALT, hi=len(alternatives) - 1), "alt")
    view.put(ATTRIBUTION, min(int(view.get(ATTRIBUTION, "alt")), len(alternatives) - 1), "alt")
    alt_index = c2.selectbox(t("attribution.alt"), list(range(len(alternatives))),
                             key=view.key(ATTRIBUTION, "alt"),
                             format_func=lambda i: f"{alt_labels[i]} (p = {alt_probs[i]:.3f})",
                             help=t("attribution.alt.help"))
    view.write_url({view.STEP: step, view.ALT: alt_index or None})
    chosen_label, alt_label = plain(v.tok.token_strings([chosen])[0]), plain(alt_labels[alt_index])   # Markdown below
    result = contrastive(v.model_id, tuple(v.meta["src_ids"]), tuple(v.meta["tgt_ids"][:step]), chosen,
                         alternatives[alt_index], 32)
    st.subheader(t("attribution.contrast.title", chosen=chosen_label, alt=alt_label))
    st.caption(t("attribution.contrast.caption", chosen=chosen_label, alt=alt_label,
                 diff=f"{result.base_difference:+.2f}"))
    left, right = st.columns(2)
    with left:
        labels = [head_name(*h) for h in result.heads]
        show_figure(contrastive_head_bars(labels, result.head_effects, look(), title=t("attribution.contrast.heads")),
                    f"{v.model_id}-contrastive-heads", key="attr-contrast-heads")
    with right:
        shown = token_window(len(v.src_labels), contrast_tokens(type_scale()), "attr-contrast-window")
        show_figure(contrastive_source_bars(v.src_labels[shown], result.source_scores[shown], look(),
                                            title=t("attribution.contrast.source")),
                    f"{v.model_id}-contrastive-source", key="attr-contrast-source")
    with explained(t("attribution.how")):
        st.markdown(t("attribution.contrast.how"))


# -- patching ------------------------------------------------------------------------------------------------
def corrupted_sentence(v: View) -> str:
    derived = word_order.swap_two_words(v.text)         # the typed words: a style token is not a word to swap
    view.seed(ATTRIBUTION, view.read(view.CORRUPT, default=derived), "corrupt")
    text = st.text_input(t("attribution.corrupt.label"), key=view.key(ATTRIBUTION, "corrupt"),
                         max_chars=MAX_TEXT_CHARS,
                         help=t("attribution.corrupt.help"))
    view.write_url({view.CORRUPT: None if text.strip() == derived else text.strip()})
    return text.strip()


def patching_section(v: View) -> None:
    c1, c2 = st.columns([2, 1])
    with c1:
        corrupted = corrupted_sentence(v)
    with c2:
        step = step_picker(v, "patch-step")
    view.write_url({view.STEP: step})
    if not corrupted:
        st.info(t("attribution.corrupt.empty"))
        return
    clean = tuple(v.meta["src_ids"])
    if len(clean) > MAX_PATCH_TOKENS:
        st.info(t("attribution.patch.too_long", max=MAX_PATCH_TOKENS, n=len(clean)))
        return
    try:
        bad = tuple(encode(v.model_id, v.tok.styled(corrupted, v.style)))   # uncut: a cut sentence cannot be matched
    except ValueError as e:                              # symbols a toy model cannot read
        st.warning(plain(t("attribution.corrupt.unreadable", error=error_text(e)), limit=600))
        return
    if len(bad) != len(clean):
        st.warning(t("attribution.patch.unequal", bad=len(bad), clean=len(clean)))
        return
    if bad == clean:
        st.info(t("attribution.patch.same"))
        return
    result = patch(v.model_id, clean, bad, tuple(v.meta["tgt_ids"][:step]), int(v.meta["tgt_ids"][step]))
    chosen, alt = (plain(t) for t in v.tok.token_strings([result.chosen, result.alternative]))   # Markdown below
    show_patching(v, result, step, chosen, alt)


def show_patching(v: View, result, step: int, chosen: str, alt: str) -> None:
    st.caption(t("attribution.patch.caption", step=step, chosen=chosen, alt=alt, clean=f"{result.clean:+.2f}",
                 corrupted=f"{result.corrupted:+.2f}"))
    if np.isnan(result.encoder).all():
        st.info(t("attribution.patch.nothing"))
        return
    layers = lambda stack: layer_labels(schema.n_layers(v.cfg, stack))  # noqa: E731
    dec_labels = position_labels(v.meta["tgt_in_tokens"][:step + 1])
    value = t("attribution.patch.value")
    size = patch_tokens(type_scale())
    shown = token_window(len(v.src_labels), size, "attr-patch-window")     # a long sentence: a window of it
    show_figure(patching_heatmap(result.encoder[:, shown], layers("encoder"), v.src_labels[shown],
                                 Labels(t("attribution.patch.enc_title"), t("attribution.patch.source_x"),
                                        t("attribution.patch.enc_y"), value), look()),
                f"{v.model_id}-patching-encoder", matrix_frame(result.encoder, layers("encoder"), v.src_labels),
                key="attr-patch-enc")
    rows = [t("attribution.layer_row", kind=kind_word(kind), layer=i)
            for kind in schema.KINDS for i in range(schema.n_layers(v.cfg, kind))]
    heads = [t("ui.head_n", h=h) for h in range(v.cfg.n_heads)]
    grid = np.concatenate([result.heads[kind] for kind in schema.KINDS])                      # [kinds x L, H]
    show_figure(patching_heatmap(grid, rows, heads,
                                 Labels(t("attribution.patch.heads_title"), t("attribution.patch.heads_x"),
                                        t("attribution.patch.heads_y"), value), look()),
                f"{v.model_id}-patching-heads", matrix_frame(grid, rows, heads), key="attr-patch-heads")
    steps = window_around(step, len(dec_labels), size)                       # the steps up to this one: its last
    show_figure(patching_heatmap(result.decoder[:, steps], layers("decoder"), dec_labels[steps],
                                 Labels(t("attribution.patch.dec_title"), t("attribution.patch.dec_x"),
                                        t("attribution.patch.dec_y"), value), look()),
                f"{v.model_id}-patching-decoder", matrix_frame(result.decoder, layers("decoder"), dec_labels),
                key="attr-patch-dec")
    with st.expander(t("attribution.how_caveats")):
        st.markdown(t("attribution.patch.how"))
        st.latex(restored_formula())
        st.markdown(t("attribution.patch.caveat"))


def restored_formula() -> str:
    """The restored share in LaTeX, its words (\\text{…}) in the page's language."""
    w = {name: t(ATTRIBUTION_PATCH_TEX_KEYS[name])
         for name in ("restored", "patched", "corrupted", "clean", "chosen", "alternative")}
    return (rf"\text{{{w['restored']}}}=\frac{{m_\text{{{w['patched']}}}-m_\text{{{w['corrupted']}}}}}"
            rf"{{m_\text{{{w['clean']}}}-m_\text{{{w['corrupted']}}}}},"
            rf"\quad m=\mathrm{{logit}}(\text{{{w['chosen']}}})-\mathrm{{logit}}(\text{{{w['alternative']}}})")


SECTION_RENDERERS = {"lens": lens_section, "source": source_section, "contrastive": contrastive_section,
                     "patching": patching_section}


def render() -> None:
    ctx = need_context()
    v = view_of(ctx)
    st.title(t("attribution.title"))
    view.seed(ATTRIBUTION, view.read(view.PART, choices=list(SECTIONS), default="lens"), "section")
    section = st.radio(t("attribution.show"), list(SECTIONS), key=view.key(ATTRIBUTION, "section"),
                       horizontal=True,
                       format_func=section_name, label_visibility="collapsed")
    view.write_url({view.PART: None if section == "lens" else section})
    if v.n_out == 0:
        st.info(t("attribution.no_output"))
        stop_page()
    SECTION_RENDERERS[section](v)


if __name__ == "__main__":
    render()
