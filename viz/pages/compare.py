"""Compare: one head on two sentences (what word order does), or two heads on one sentence."""
import zlib

import numpy as np
import streamlit as st

from model.analysis import word_order
from model.capture import schema
from viz.figures.attention import attention_heatmap, map_window
from viz.figures.style import symmetric_range
from viz.figures.style import Labels
from viz.figures.zoo import step_heatmap
from viz.core.i18n import catalogue_keys, error_text, kind_short, kind_title, t
from viz.services.traces import get_trace
from viz.core import view
from viz.core.view import MAX_TEXT_CHARS
from viz.core.text import attention_labels, plain, position_labels
from viz.elements.ui import (attention_window, explained, layer_head_pickers, look, matrix_frame, need_context,
                             on_phone, show_figure, type_scale)

OWN = view.Own("viz.pages.compare")  # this module's own session values
COMPARE = OWN.value("compare")  # compare-<kind>-layer/head: the layer and head pickers

KINDS = list(schema.KINDS)
MODES = ("sentences", "heads")                      # labels: compare.mode.<mode>
DIFF_SHARE = 0.6                       # a difference map takes this share of the row, its explanation the rest
COLUMN_GAP = 16                        # px between two st.columns (Streamlit's default gap, 1rem)


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
COMPARE_MODE_KEYS = catalogue_keys("compare.mode", "heads", "sentences")


def head_map(tr, kind: str, layer: int, head: int | None) -> np.ndarray:
    patterns = schema.stacked(tr, kind)[layer]                     # [H,Q,K]
    return patterns.mean(0) if head is None else patterns[head]


def head_name(layer: int, head: int | None) -> str:
    return t("compare.head_name", layer=t("ui.layer_n", i=layer),
             head=t("ui.head_mean") if head is None else t("ui.head_n", h=head))


def shown_tokens(kind: str, a: np.ndarray) -> tuple[slice, slice]:
    """The queries and keys the maps show: all of a short sentence's; of a longer one, a window of the queries
    the reader picks (a slider) and the keys they look at (self-attention: the same tokens), as many as a
    half-page map labels legibly (a 70-token map drew every third row label and smeared its key labels)."""
    size = map_window(type_scale().column_px(), type_scale())
    return attention_window(kind, a.shape[0], a, size, "compare-tokens")


def clip(shown: tuple[slice, slice], m: np.ndarray) -> tuple[slice, slice]:
    """A window kept inside a matrix (sentence B may be shorter than A)."""
    return tuple(slice(min(s.start, n), min(s.stop, n)) for s, n in zip(shown, m.shape))


def side_by_side(left, right, key: str, shown: tuple[slice, slice]) -> None:
    """Two (title, matrix, rows, cols, filename) heatmaps next to each other, each through the window `shown`
    (the CSVs hold the whole maps)."""
    for col, (title, m, rows, cols, filename) in zip(st.columns(2), (left, right)):
        q, k = clip(shown, m)
        with col:
            show_figure(attention_heatmap(m[q, k], rows[q], cols[k], look(), title=title, width_px=type_scale().column_px()), filename,
                        matrix_frame(m, rows, cols),
                        key=f"{key}-{filename}")


def difference_map(diff: np.ndarray, rows: list[str], cols: list[str], title: str):
    """A difference of two attention maps on a colour scale fitted to the data (symmetric about 0): a small
    difference still shows. The scale is said on the colour bar; the title is one line (with the scale in it,
    it breaks into two in its column and the first is cut off at the figure's top, in en and zh)."""
    zmax = symmetric_range(diff)
    labels = Labels(title, t("fig.attention.x"),
                    t("fig.attention.y"), t("compare.diff.value", zmax=f"{zmax:.3g}"))
    return step_heatmap(diff, rows, cols, labels, look(), zrange=(-zmax, zmax),
                        width_px=(type_scale().page_px - COLUMN_GAP) * DIFF_SHARE,   # its column: numbers that fit
                        )


def second_sentence(text_a: str) -> str:
    """Sentence B: from the URL, else sentence A with two words swapped; follows A when A changes."""
    derived = word_order.swap_two_words(text_a)
    text_b = st.text_input(t("compare.text_b"), max_chars=MAX_TEXT_CHARS,
                           key=view.seeded(f"compare-text-b-{zlib.crc32(text_a.encode('utf-8'))}",
                                           view.read(view.TEXT_B, default=derived)),
                           help=t("compare.text_b.help"))
    view.write_url({view.TEXT_B: None if text_b.strip() == derived else text_b.strip()})
    return text_b.strip()


def compare_sentences(ctx, kind: str, n_layers: int, picture=None) -> None:
    """picture: where the two maps go (a phone: a place over the pickers); else under them."""
    trace, cfg = ctx.trace, ctx.model.config
    c1, c2 = st.columns(2)
    with c1:
        layer, head = layer_head_pickers(n_layers, cfg.n_heads, key=view.key(COMPARE, kind))
    with c2:
        text_b = second_sentence(ctx.text.strip())          # the typed words: a style token is not a word to swap
    if not text_b:
        st.info(t("compare.b_empty"))
        return
    try:
        trace_b = get_trace(ctx.model_id, ctx.model.tokenizer.styled(text_b, ctx.style), None, ctx.beam, ctx.max_tokens)
    except ValueError as e:
        st.warning(plain(t("compare.b_error", error=error_text(e)), limit=600))
        return
    if trace_b.meta["src_text"] == trace.meta["src_text"]:
        st.info(t("compare.b_same"))
    a, b = head_map(trace, kind, layer, head), head_map(trace_b, kind, layer, head)
    rows_a, cols_a = attention_labels(trace.meta, kind)
    rows_b, cols_b = attention_labels(trace_b.meta, kind)
    tag = f"{kind}-L{layer}-{'avg' if head is None else f'H{head}'}"
    shown = shown_tokens(kind, a)
    with picture if picture is not None else st.container():
        side_by_side((f"A: {head_name(layer, head)}", a, rows_a, cols_a, f"{ctx.model_id}-A-{tag}"),
                     (f"B: {head_name(layer, head)}", b, rows_b, cols_b, f"{ctx.model_id}-B-{tag}"), key="cmp-s",
                     shown=shown)
    st.caption(t("compare.sentences.caption"))
    c1, c2 = st.columns(2)
    c1.caption(t("compare.translation", which="A"))
    c1.text(trace.meta["translation"] or t("compare.empty_output"))
    c2.caption(t("compare.translation", which="B"))
    c2.text(trace_b.meta["translation"] or t("compare.empty_output"))
    if kind == "encoder":
        order_blind_check(ctx, a, b, trace_b, layer, head, shown)
    else:
        st.caption(t("compare.decoder_rows"))


def order_blind_check(ctx, a: np.ndarray, b: np.ndarray, trace_b, layer: int, head: int | None,
                      shown: tuple[slice, slice]) -> None:
    """Move B's rows and columns back into A's order: an order-blind model would give exactly A."""
    trace = ctx.trace
    perm = word_order.token_permutation(trace.meta["src_ids"], trace_b.meta["src_ids"])
    if perm is None:
        st.caption(t("compare.not_permutation"))
        return
    if trace.meta["src_ids"] == trace_b.meta["src_ids"]:
        return
    labels = position_labels(trace.meta["src_tokens"])
    diff = word_order.reorder_to(b, perm) - a
    st.subheader(t("compare.order_test"))
    c1, c2 = st.columns([DIFF_SHARE, 1 - DIFF_SHARE])
    with c1:
        q, k = shown
        fig = difference_map(diff[q, k], labels[q], labels[k],
                             t("compare.order_test.title", head=head_name(layer, head)))
        show_figure(fig, f"{ctx.model_id}-order-test-L{layer}", matrix_frame(diff, labels, labels),
                    key="cmp-order-test")
    c2.markdown(t("compare.order_test.text"))
    c2.caption(t("compare.order_test.caption"))


def b_pickers(kind: str, n_layers: int, n_heads: int) -> tuple[int, int | None]:
    """Layer and head of the second head (URL layer_b, head_b)."""
    return layer_head_pickers(n_layers, n_heads, key=view.key(COMPARE, "b", kind), suffix="_b",
                              default_head=1 if n_heads > 1 else 0)


def compare_heads(ctx, kind: str, n_layers: int, picture=None) -> None:
    """picture: as compare_sentences'."""
    trace, cfg = ctx.trace, ctx.model.config
    c1, c2 = st.columns(2)
    with c1:
        st.caption(t("compare.head", which="A"))
        layer, head = layer_head_pickers(n_layers, cfg.n_heads, key=view.key(COMPARE, kind))
    with c2:
        st.caption(t("compare.head", which="B"))
        layer_b, head_b = b_pickers(kind, n_layers, cfg.n_heads)
    rows, cols = attention_labels(trace.meta, kind)
    a, b = head_map(trace, kind, layer, head), head_map(trace, kind, layer_b, head_b)
    tag = lambda lay, h: f"{kind}-L{lay}-{'avg' if h is None else f'H{h}'}"  # noqa: E731
    shown = shown_tokens(kind, a)
    with picture if picture is not None else st.container():
        side_by_side((f"A: {head_name(layer, head)}", a, rows, cols, f"{ctx.model_id}-{tag(layer, head)}"),
                     (f"B: {head_name(layer_b, head_b)}", b, rows, cols, f"{ctx.model_id}-{tag(layer_b, head_b)}"),
                     key="cmp-h", shown=shown)
    c1, c2 = st.columns([DIFF_SHARE, 1 - DIFF_SHARE])
    with c1:
        q, k = shown
        fig = difference_map((b - a)[q, k], rows[q], cols[k], "B − A")
        show_figure(fig, f"{ctx.model_id}-{tag(layer_b, head_b)}-minus-{tag(layer, head)}",
                    matrix_frame(b - a, rows, cols), key="cmp-h-diff")
    c2.markdown(t("compare.heads.text"))
    c2.caption(t("compare.heads.caption"))


def explain_positions() -> None:
    with explained(t("compare.why.title")):
        st.markdown(t("compare.why.text"))
        st.latex(r"x_{pos}=\sqrt{d}\,E[w_{pos}]+PE(pos),\quad PE(pos,2i)=\sin\frac{pos}{10000^{2i/d}},\ "
                 r"PE(pos,2i+1)=\cos\frac{pos}{10000^{2i/d}}")


def render() -> None:
    ctx = need_context()
    st.title(t("compare.title"))
    picture = st.container() if on_phone() else None      # a phone: the maps over the pickers (they filled its screen)
    c1, c2 = st.columns(2)
    mode = c1.radio(t("compare.mode"), list(MODES), horizontal=True,
                    key=view.seeded("compare-mode", view.read(view.MODE, choices=list(MODES))),
                    format_func={m: t(COMPARE_MODE_KEYS[m]) for m in MODES}.get)
    kind = c2.radio(t("compare.kind"), KINDS, horizontal=True, key=view.seeded("compare-kind", view.read(view.KIND, choices=KINDS)),
                    format_func=kind_short,
                    help=" · ".join(kind_title(k) for k in KINDS))
    view.write_url({view.MODE: mode, view.KIND: kind})
    n_layers = schema.n_layers(ctx.model.config, kind)
    if mode == "sentences":
        view.write_url({view.LAYER_B: None, view.HEAD_B: None})
        compare_sentences(ctx, kind, n_layers, picture)
    else:
        view.write_url({view.TEXT_B: None})
        compare_heads(ctx, kind, n_layers, picture)
    explain_positions()


if __name__ == "__main__":
    render()
