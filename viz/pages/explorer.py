"""Attention explorer: every layer x head at a glance, one head large with token labels, every head of its layer
as lines. Drawn in the browser (viz/elements/browser_view.py): the kind, layer and head are picked there without a
script run; the page reads the pick from the URL and sends each sentence's attention once."""
from typing import Callable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from model.analysis.attention_math import future_mask
from model.capture import schema
from viz.elements.browser_view import EXPLORER_PICK, explorer_view, url_names, whole_asked
from viz.figures.style import Look
from viz.figures.attention import (WINDOW_ROWS, key_labels_fit, map_window, source_window, thumbnail_block,
                                   window_from)
from viz.figures.browser_view import (MEAN, Body, Window, encode, head_weights, kind_part, layer_lines, payload,
                                      template_spec, view_sig)
from viz.core.i18n import catalogue_keys, t
from viz.core import view
from viz.core.context import Context, Traced
from viz.core.text import attention_labels
from viz.elements.ui import explained, look, matrix_frame, need_context, safe_filename, token_window, type_scale

FORMULA = r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V"


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
EXPLORER_NOTE_KEYS = catalogue_keys("explorer.note", "cross", "decoder", "encoder")


def picked(cfg) -> tuple[str, int, int]:
    """The view's kind, layer and head (-1: the layer's average of heads), from the URL (which the browser's
    picks write), checked against the model, and written back."""
    kind = view.read(view.KIND, choices=list(schema.KINDS))
    layer = view.read(view.LAYER, hi=schema.n_layers(cfg, kind) - 1)
    head = view.read(view.HEAD, default=0, lo=-1, hi=cfg.n_heads - 1)
    view.write_url({view.KIND: kind, view.LAYER: layer, view.HEAD: head})
    return kind, layer, head


def how_to_read(kind: str, n_rows: int, n_cols: int) -> str:
    text = t("explorer.read") + " " + t(EXPLORER_NOTE_KEYS[kind])
    block = thumbnail_block(n_rows, n_cols)
    if block > 1:
        text += " " + t("explorer.read.block", block=block)
    return text


def beside(n_keys: int) -> bool:
    """The head's lines beside the large map while the map's key labels fit in half the page; else (a long
    sentence) the map takes the page's width, the lines folded below it (in half a page plotly dropped every
    second key). A phone's column holds one: the map takes it whole."""
    return not type_scale().narrow and key_labels_fit(type_scale().page_px / 2, n_keys, type_scale())


def window_size(half: bool) -> int:
    """At most WINDOW_ROWS tokens: the map and the lines under it stay within a screen more than a short
    sentence's."""
    return min(WINDOW_ROWS, map_window(type_scale().page_px / (2 if half else 1), type_scale()))


def kind_window(kind: str, patterns: np.ndarray, start: int, size: int) -> Window:
    """A long sentence through a window of `size` tokens from `start` (the reader's slider, kept inside this
    kind's rows): the queries, and the keys they look at (self-attention: the same tokens; cross-attention: each
    layer's most looked-at source tokens). The CSV keeps it whole."""
    queries = window_from(start, patterns.shape[-2], size)
    if kind != "cross":
        return Window(queries, (queries,) * len(patterns))
    return Window(queries, tuple(source_window(patterns[layer].mean(0), queries, size) for layer in range(len(patterns))))


def shown_kinds(trace) -> dict[str, np.ndarray]:
    """Every attention kind the trace holds, [L, H, Q, K] each."""
    return {kind: schema.stacked(trace, kind) for kind in schema.KINDS}


def window_start(kinds: dict[str, np.ndarray], sizes: dict[str, int]) -> int:
    """Where a long sentence's window starts: one slider over the longest rows (token_window), each kind keeping
    its window inside its own rows."""
    longest = max(kinds, key=lambda kind: kinds[kind].shape[-2] - sizes[kind])
    return token_window(kinds[longest].shape[-2], sizes[longest], "explorer-window").start


def view_body(ctx: Context, start: int, sizes: dict[str, int], first: tuple[str, int] | None = None) -> Body:
    """The browser's data for this sentence, words, type scale and window: built once, for every session of the
    worker (a class's students drawing the teacher's view build it once). `first` (kind, layer): only what the
    first screen shows, that kind and that layer's lines (a new sentence's first run); the view asks for the rest
    once it has drawn it (viz/elements/browser_view.py), which reuses the parts the first screen's body was made of."""
    return built_body(ctx.traced, start, tuple(sorted(sizes.items())), look(), first)


@view.shared_cached
def built_body(traced: Traced, start: int, sizes: tuple[tuple[str, int], ...], page_look: Look,
               first: tuple[str, int] | None) -> Body:
    layers = {kind: schema.n_layers(traced.model.config, kind) for kind in schema.KINDS}
    size_of = dict(sizes)
    parts = {kind: kind_view(traced, kind, start, size_of[kind], page_look,
                             range(layers[kind]) if first is None else (first[1],))
             for kind in ([first[0]] if first else layers)}
    return encode(payload(parts, layers, template_spec(go.Figure()), page_look.words, {
        "text_px": page_look.scale.text,
        "url_names": url_names(EXPLORER_PICK),
        "sentence": sentence_sig((traced.trace_key, start, sizes, page_look)), "whole": first is None}))  # body_key


def kind_view(traced: Traced, kind: str, start: int, size: int, page_look: Look, layers) -> dict:
    """One kind's part of the body, with the head views of `layers` (None for the others); the part and each
    layer's lines are kept (view.shared_cached) so that the whole body reuses what the first screen's was made of."""
    lines = [kind_lines(traced, kind, start, size, page_look, layer) if layer in layers else None
             for layer in range(schema.n_layers(traced.model.config, kind))]
    return {**kind_core(traced, kind, start, size, page_look), "lines": lines}


def kind_window_of(traced: Traced, kind: str, start: int, size: int) -> tuple[np.ndarray, list, list, Window]:
    """A kind's [L, H, Q, K] patterns, its row and column labels, and the window of them the view shows."""
    patterns = schema.stacked(traced.trace, kind)
    rows, cols = attention_labels(traced.trace.meta, kind)
    return patterns, rows, cols, kind_window(kind, patterns, start, size)


@view.shared_cached
def kind_core(traced: Traced, kind: str, start: int, size: int, page_look: Look) -> dict:
    """A kind's part of the body without its layers' lines."""
    patterns, rows, cols, window = kind_window_of(traced, kind, start, size)
    half = beside(len(cols))
    part = kind_part(kind, patterns, rows, cols, future_mask(kind, *patterns.shape[-2:]), window, page_look,
                     width_px=page_look.scale.page_px / (2 if half else 1), file_stem=safe_filename(traced.model_id),
                     lines_layers=())
    return {**part, "beside": half, "read": how_to_read(kind, len(rows), len(cols))}


@view.shared_part
def kind_lines(traced: Traced, kind: str, start: int, size: int, page_look: Look, layer: int):
    """One layer's head lines of a kind."""
    patterns, rows, cols, window = kind_window_of(traced, kind, start, size)
    return layer_lines(patterns, layer, rows, cols, window, page_look)


def body_key(ctx: Context, start: int, sizes: dict[str, int]) -> tuple:
    """What the view's body is built for (built_body's arguments but `first`, which it signs the same way): the
    sentence (trace), the window, the look (words and type scale)."""
    return ctx.trace_key, start, tuple(sorted(sizes.items())), look()


def sentence_sig(at) -> str:
    """What the first screen's body and the whole one share (the sentence and the view they are built for): the
    browser takes the whole one in without drawing again what it drew."""
    return view_sig("explorer", at)


def pick_csv(ctx: Context, kinds: dict[str, np.ndarray]) -> Callable[[dict], dict]:
    """The CSV of a pick the browser asked for: its whole [query, key] matrix, every label (the map shows a
    window of a long sentence)."""
    def make(pick: dict) -> dict:
        kind = pick["kind"] if pick["kind"] in kinds else schema.KINDS[0]
        patterns = kinds[kind]
        layer = min(max(pick["layer"], 0), len(patterns) - 1)
        head = min(max(pick["head"], MEAN), patterns.shape[1] - 1)
        rows, cols = attention_labels(ctx.trace.meta, kind)
        name = f"{ctx.model_id}-{kind}-L{layer}-{'avg' if head == MEAN else f'H{head}'}"
        text = matrix_frame(head_weights(patterns, layer, head), rows, cols).to_csv()
        return {"name": safe_filename(name) + ".csv", "text": text}
    return make


def render() -> None:
    ctx = need_context()
    cfg = ctx.model.config
    st.title(t("explorer.title"))
    kind, layer, head = picked(cfg)
    kinds = shown_kinds(ctx.trace)
    sizes = {k: window_size(beside(p.shape[-1])) for k, p in kinds.items()}
    drawn = st.container()
    start = window_start(kinds, sizes)        # the slider under the view: the window is what the view is built for
    sentence = sentence_sig(body_key(ctx, start, sizes))
    whole = whole_asked(sentence)
    with drawn:
        body = view_body(ctx, start, sizes, first=None if whole else (kind, layer))
        explorer_view(body, {"kind": kind, "layer": layer, "head": head}, {"sentence": sentence, "whole": whole},
                      csv=pick_csv(ctx, kinds))
    with explained(t("explorer.how.title")):
        st.markdown(t("explorer.how"))
        st.latex(FORMULA)


if __name__ == "__main__":
    render()
