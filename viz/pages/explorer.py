"""Attention explorer: every layer x head at a glance, one head large with token labels."""
from functools import partial

import numpy as np
import streamlit as st

from model.analysis.attention_math import future_mask
from model.capture import schema
from viz.figures.attention import (WINDOW_ROWS, attention_heatmap, grid_cell, key_labels_fit, map_window, model_view,
                                   thumbnail_block)
from viz.i18n import catalogue_keys, kind_title, t, words
from viz.map_view import head_view_figure
from viz import view
from viz.state import Context
from viz.text import attention_labels, plain
from viz.ui import attention_window, drawable, layer_head_pickers, matrix_frame, need_context, show_figure
from viz.ui import type_scale

FORMULA = r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}+M\right)V"


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
EXPLORER_NOTE_KEYS = catalogue_keys("explorer.note", "cross", "decoder", "encoder")


def open_clicked_head(kind: str) -> None:
    """on_select of the explorer's all-heads grid: runs before the rerun, while the pickers may still
    change (setting them from the page, after they are drawn, raises)."""
    points = view.get(view.GRID, kind)["selection"]["points"]
    picked = grid_cell(points[0]) if points else None
    if picked is not None:
        view.put(view.EXPLORER, picked[0], kind, "layer")
        view.put(view.EXPLORER, picked[1], kind, "head")


def controls(cfg) -> tuple[str, int, int | None]:
    """One row: the attention kind, then layer and head (seeded from and written to the URL)."""
    c_kind, c_pick = st.columns([1.15, 1], vertical_alignment="bottom")
    kind_default = view.read(view.KIND, choices=list(schema.KINDS))
    kind = c_kind.radio(t("explorer.kind"), schema.KINDS, horizontal=True,
                        key=view.seeded("explorer-kind", kind_default), format_func=kind_title)
    view.write_url({view.KIND: kind})
    with c_pick:
        layer, head = layer_head_pickers(schema.n_layers(cfg, kind), cfg.n_heads, key=f"explorer-{kind}")
    return kind, layer, head



def overview(ctx: Context, kind: str, patterns: np.ndarray, layer: int, head: int | None) -> None:
    """Every layer x head as clickable thumbnails."""
    n_layers, n_heads = patterns.shape[:2]
    # a rerun that changes nothing drawn here (a slider moved, the lines opened) reuses the last run's figure
    grid = view.shared_memo("explorer-grid", (ctx.trace_key, kind, layer, head, words(), type_scale()), lambda: model_view(
        patterns, words(), title=t("explorer.grid.title", kind=kind_title(kind), layers=n_layers, heads=n_heads),
        selected=(layer, head), masked=future_mask(kind, *patterns.shape[-2:]), type_scale=type_scale()))
    st.plotly_chart(drawable(grid), on_select=partial(open_clicked_head, kind), selection_mode="points", key=f"grid-{kind}",
                    config={"displaylogo": False})


def how_to_read(kind: str, n_rows: int, n_cols: int) -> str:
    text = t("explorer.read") + " " + t(EXPLORER_NOTE_KEYS[kind])
    block = thumbnail_block(n_rows, n_cols)
    if block > 1:
        text += " " + t("explorer.read.block", block=block)
    return text


def windows(kind: str, patterns: np.ndarray, layer: int, size: int) -> tuple[slice, slice]:
    """A long sentence through a window of `size` tokens: the queries the reader picks, the keys they look at
    (self-attention: the same tokens), every label legible; the CSV and the strongest links keep it whole."""
    return attention_window(kind, patterns.shape[-2], patterns[layer].mean(0), size, "explorer-window")


def window_key(shown: tuple[slice, slice]) -> tuple[int, ...]:
    """The window's rows and columns as a memo key (a slice cannot be hashed)."""
    return tuple(i for part in shown for i in (part.start, part.stop))


def one_head(ctx: Context, kind: str, patterns: np.ndarray, layer: int, head: int | None, rows, cols,
             shown: tuple[slice, slice], half: bool = True) -> np.ndarray:
    """The picked head's map (the layer's mean of heads when head is None), in half the page or (half=False) all
    of it, the queries and keys `shown`."""
    n_heads = patterns.shape[1]
    if head is None:
        weights, title = patterns[layer].mean(0), t("explorer.one.mean", kind=kind_title(kind), layer=layer,
                                                    heads=n_heads)
    else:
        weights, title = patterns[layer, head], t("explorer.one.head", kind=kind_title(kind), layer=layer, head=head)
    width = type_scale().page_px / (2 if half else 1)
    masked = future_mask(kind, *patterns.shape[-2:])
    queries, keys = shown
    fig = view.shared_memo("explorer-map", (ctx.trace_key, kind, layer, head, window_key(shown), width, words(),
                                        type_scale()), lambda: attention_heatmap(
        weights[queries, keys], rows[queries], cols[keys], words(), title=title,
        masked=None if masked is None else masked[queries, keys], type_scale=type_scale(), width_px=width))
    show_figure(fig, f"{ctx.model_id}-{kind}-L{layer}-{'avg' if head is None else f'H{head}'}",
                lambda: matrix_frame(weights, rows, cols), key="explorer-main")
    return weights


def head_lines(ctx: Context, kind: str, patterns: np.ndarray, layer: int, head: int | None, rows, cols,
               shown: tuple[slice, slice]) -> None:
    """Beside the large map: every head of the layer as lines (the picked head alone; its legend brings back the
    others), the queries and keys `shown`."""
    queries, keys = shown
    fig = view.shared_memo("explorer-lines", (ctx.trace_key, kind, layer, head, window_key(shown), words(), type_scale()),
                       lambda: head_view_figure(patterns[layer][:, queries, keys], rows[queries], cols[keys], kind,
                                                layer, words(), selected_head=head, type_scale=type_scale(),
                                                titled=False))
    show_figure(fig, f"{ctx.model_id}-{kind}-L{layer}-lines", key="explorer-lines")
    st.caption(t("headview.read"))


def lines_below(kind: str, layer: int):
    """Under a full-width map the lines are a screen or more down the page: folded there, and built and drawn
    only while the reader has them open (an edit of the sentence drew them unseen, ~0.2-0.4 s at 32 tokens on a
    loaded machine). The container to draw them in, or None while folded."""
    folded = st.expander(t("headview.title", kind=kind_title(kind), layer=layer), key="explorer-lines-open",
                         on_change="rerun")
    return folded if folded.open else None


def strongest_links(weights: np.ndarray, rows: list[str], cols: list[str], limit: int = 12) -> str:
    top = np.argmax(weights, axis=1)
    links = " · ".join(f"{plain(rows[i].split(' ', 1)[1])} → {plain(cols[j].split(' ', 1)[1])}"   # tokens in Markdown
                       for i, j in enumerate(top[:limit]))
    return t("explorer.strongest", links=links)


def render() -> None:
    ctx = need_context()
    trace, cfg = ctx.trace, ctx.model.config
    st.title(t("explorer.title"))
    kind, layer, head = controls(cfg)
    rows, cols = attention_labels(trace.meta, kind)
    patterns = schema.stacked(trace, kind)                                  # [L,H,Q,K]
    overview(ctx, kind, patterns, layer, head)
    st.caption(how_to_read(kind, len(rows), len(cols)))
    # the head's lines beside the map while the map's key labels fit in half the page; else (a long sentence)
    # the map takes the page's width, the lines folded below it (in half a page plotly dropped every second key)
    # (a phone's column holds one: the map takes it whole)
    beside = not type_scale().narrow and key_labels_fit(type_scale().page_px / 2, len(cols), type_scale())
    # at most WINDOW_ROWS tokens: the map and the lines under it stay within a screen more than a short sentence's
    size = min(WINDOW_ROWS, map_window(type_scale().page_px / (2 if beside else 1), type_scale()))
    shown = windows(kind, patterns, layer, size)
    c_map, c_lines = st.columns(2) if beside else (st.container(), None)
    with c_map:
        weights = one_head(ctx, kind, patterns, layer, head, rows, cols, shown, beside)
        st.caption(strongest_links(weights, rows, cols))
    if not beside:
        c_lines = lines_below(kind, layer)
    if c_lines is not None:
        with c_lines:
            head_lines(ctx, kind, patterns, layer, head, rows, cols, shown)
    with st.expander(t("explorer.how.title"), expanded=False):
        st.markdown(t("explorer.how"))
        st.latex(FORMULA)


if __name__ == "__main__":
    render()
