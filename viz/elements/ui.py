"""Small Streamlit helpers every page uses: figures with export, matrix CSV, pickers."""
from __future__ import annotations

import re
from typing import Any, Callable, NoReturn

import numpy as np
import pandas as pd
import streamlit as st

from viz.figures.attention import source_window
from viz.figures.style import NORMAL, PHONE, PRESENTER, Look, TypeScale
from viz.core.i18n import t, words
from viz.core import view
from viz.core.context import current

OWN = view.Own("viz.elements.ui")  # this module's own session values
ON_PHONE = OWN.value("_on_phone")                 # the browser said it is a phone's (on_phone), once a session


def look() -> Look:
    """This run's look, the one argument a page gives every figure builder: the session's language (its words) and
    this run's type scale (type_scale()). Cheap: a page calls it at each builder rather than keeping one."""
    return Look(words(), type_scale())


def type_scale() -> TypeScale:
    """The chart type scale for this run: a phone's on a phone, presenter sizes while presenter mode is on (a
    class's students: charts planned for its ~350 px column, long titles wrapped), else normal. Builders get it in
    their look (look()); the sizing helpers (how many tokens fit) take it alone. A phone keeps its own in presenter
    mode too: projector sizes in a 390 px column cut every title."""
    if on_phone():
        return PHONE
    return PRESENTER if view.get(view.PRESENT) else NORMAL


def on_phone() -> bool:
    """Whether the browser says it is a phone's ("Mobi" in its User-Agent, as every phone browser's has; a
    tablet's has not): the server cannot see a screen's width. Read once a session (reading the request's
    headers took ~1 ms a run, 3% of an explorer run)."""
    if not view.has(ON_PHONE):
        agent = st.context.headers.get("User-Agent")
        view.put(ON_PHONE, isinstance(agent, str) and "Mobi" in agent)
    return view.get(ON_PHONE)


def plotly_config(filename: str) -> dict:
    """Modebar download in the format chosen in the sidebar (PNG or SVG), at 2x for projectors. No modebar in
    presenter mode or on a phone: its icons, shown while the pointer (or a finger) is over a chart, covered the
    chart's title in front of the class; the chart's own download stays in normal mode."""
    fmt = view.get(view.IMAGE_FORMAT, default="png").lower()
    return {
        "displaylogo": False, "displayModeBar": not (view.get(view.PRESENT) or on_phone()),
        "toImageButtonOptions": {"format": fmt, "filename": safe_filename(filename), "scale": 2},
    }


def safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80] or "figure"


def show_figure(fig, filename: str, matrix: pd.DataFrame | Callable[[], pd.DataFrame] | None = None,
                key: str | None = None) -> None:
    """A plotly figure with the modebar image export and, when given, a CSV of the matrix shown: a data frame, or
    the function that makes it. The CSV, like the figure's dict (drawable), is made once per figure: a figure
    the worker shares (view.shared_memo) is drawn by every student of a class, and its matrix is the one the
    figure's key determines."""
    st.plotly_chart(drawable(fig), config=plotly_config(filename), key=key)
    if matrix is not None:
        # Bytes, not a deferred callable: Streamlit 1.67 keeps every run's callable for the session's
        # life (server RSS grew ~6.6 MB per new sentence, bench/memory.py). A click does not rerun.
        csv = _made_once(fig, "_viz_csv", lambda: (matrix() if callable(matrix) else matrix).to_csv().encode("utf-8"))
        st.download_button(t("ui.csv"), csv, file_name=safe_filename(filename) + ".csv", mime="text/csv",
                           key=f"csv-{key or filename}", on_click="ignore")


def drawable(fig):
    """`fig`, its dict made once: st.plotly_chart asks the figure for its dict at every draw, which plotly makes
    by deep-copying every array (a third of the explorer's run at 7 tokens). A figure is built, then only drawn
    (view.shared_memo's rule), so its dict stays its own."""
    if "to_dict" not in vars(fig):
        spec = fig.to_dict()
        object.__setattr__(fig, "to_dict", lambda: spec)     # plotly's figures refuse attributes they do not know
    return fig


def _made_once(fig, name: str, make: Callable[[], Any]) -> Any:
    """What `make` returns, kept on the figure object (two sessions drawing it at once may both make it)."""
    made = vars(fig).get(name)
    if made is None:
        made = make()
        object.__setattr__(fig, name, made)
    return made


PRESENTER_TABLE_COLUMNS = 6   # a wider table turns on its side in presenter mode: a half-page column holds ~6 numbers
PRESENTER_TABLE_ROWS, PRESENTER_TABLE_PX = 12, 520   # a longer one scrolls in a box (the heads table: 72 rows)


def data_table(frame: pd.DataFrame, digits: int = 3, missing: str = "—", formats: dict | None = None,
               **dataframe_args) -> None:
    """A table of numbers at the page's type scale. Normal mode: an interactive data frame (dataframe_args:
    st.dataframe's). Presenter mode: a static table, which the presenter styles size like the text (a data frame
    draws on a canvas at a fixed 14 px), numbers at `digits` decimals or a column's format string in `formats`
    ("{:.1%}"); one wider than a half-page column holds is
    turned on its side (a row of 32 numbers would be cut off at the right edge), a long one scrolls in a box."""
    if not view.get(view.PRESENT):
        st.dataframe(frame, **{**dataframe_args, "column_config": whole_headers(frame, dataframe_args.get("column_config"))})
        return
    if frame.shape[1] > PRESENTER_TABLE_COLUMNS and frame.shape[0] <= PRESENTER_TABLE_COLUMNS:
        frame = frame.T
    styled = frame.style.format(precision=digits, na_rep=missing, thousands=",")
    if formats:                   # only these columns: a formatter dict resets every other column's precision
        styled = styled.format(formats, subset=list(formats), na_rep=missing)
    where = st.container(height=PRESENTER_TABLE_PX) if len(frame) > PRESENTER_TABLE_ROWS else st
    where.table(styled.hide(axis="index") if dataframe_args.get("hide_index") else styled)


def whole_headers(frame: pd.DataFrame, config: dict | None = None) -> dict:
    """st.dataframe's column config with every column not configured in `config` wide enough for its header whole:
    it sizes a column by its numbers and cut a token header to "0 <moder" or "14 ▁frien"."""
    config = dict(config or {})
    if not frame.columns.is_unique:
        return config
    for column in frame.columns:
        if column in config or not isinstance(column, str):
            continue
        header = NORMAL.text_px(column, "tick")
        if header > max((NORMAL.text_px(str(v), "tick") for v in frame[column].head(200)), default=0):
            config[column] = st.column_config.Column(width=int(header) + 32)
    return config


def matrix_frame(matrix: np.ndarray, row_labels: list[str], col_labels: list[str]) -> pd.DataFrame:
    return pd.DataFrame(np.asarray(matrix), index=row_labels, columns=col_labels)


def layer_head_pickers(n_layers: int, n_heads: int, key: str, allow_mean: bool = True, suffix: str = "",
                       default_head: int = 0) -> tuple[int, int | None]:
    """Layer and head select boxes, seeded from and written back to the URL (layer{suffix}, head{suffix}); their
    widget keys `key`-layer and `key`-head (key: the page's own value and the kind, view.key(STEP_THROUGH, kind)).
    The head's view.MEAN_HEAD, the mean of the heads, offered when allow_mean, is None to the caller."""
    layer_value, head_value = (view.LAYER_B, view.HEAD_B) if suffix == "_b" else (view.LAYER, view.HEAD)
    layer_default = view.read(layer_value, hi=n_layers - 1)
    head_default = view.read(head_value, default=default_head, lo=view.MEAN_HEAD if allow_mean else 0, hi=n_heads - 1)
    head_options = ([view.MEAN_HEAD] if allow_mean else []) + list(range(n_heads))
    c1, c2 = st.columns(2)
    # the options' names made in this run's language (a lambda calling t() later, outside a run, spoke English)
    layer = c1.selectbox(t("ui.layer"), list(range(n_layers)), key=view.seeded(f"{key}-layer", layer_default),
                         format_func={i: t("ui.layer_n", i=i) for i in range(n_layers)}.get)
    head = c2.selectbox(t("ui.head"), head_options, key=view.seeded(f"{key}-head", head_default),
                        format_func={h: t("ui.head_mean") if h == view.MEAN_HEAD else t("ui.head_n", h=h)
                                     for h in head_options}.get)
    view.write_url({layer_value: layer, head_value: head})
    return layer, view.as_head(head)


def token_window(n: int, size: int, key: str, label_key: str = "ui.window") -> slice:
    """The tokens a chart shows: all of them while they fit (n <= size); of a longer sentence, `size`
    consecutive ones from a position the reader picks, so that every label stays legible and the page keeps
    its height (a 128-token chart thinned its labels or ran to three screens). The slider says what is shown."""
    if n <= size:
        return slice(0, n)
    # the length in the key: another sentence gets a fresh slider (a kept start could lie beyond its end)
    start = st.slider(t(label_key, size=size, n=n), 0, n - size, 0, key=f"{key}-{n}-{size}",
                      format=t("ui.window.format"))
    return slice(start, start + size)


def attention_window(kind: str, n_queries: int, weights: np.ndarray | None, size: int, key: str) -> tuple[slice, slice]:
    """The queries and keys an attention map shows: a window of `size` queries the reader picks (token_window);
    self-attention's keys are the same tokens, cross-attention's the `size` source tokens those rows look at most
    (source_window of `weights`, its [query, key] map)."""
    queries = token_window(n_queries, size, key)
    return queries, (source_window(weights, queries, size) if kind == "cross" else queries)


class PageStop(Exception):
    """Ends a page early. Unlike st.stop, whatever runs the page (viz/frame/presenter.run_page) can still add
    to it afterwards: the presenter's page buttons."""


def stop_page() -> NoReturn:
    raise PageStop


def need_context(need_trace: bool = True):
    """The shared context (set by app.py), or stop the page saying what is missing: a model that loads,
    or (need_trace) a sentence the model has read."""
    ctx = current()
    if ctx is None:                                    # app.py found no loadable model for this choice
        st.warning(t("notice.no_model"))
        stop_page()
    if need_trace and ctx.trace is None:
        st.info(t("notice.need_sentence"))
        stop_page()
    return ctx


def explained(title: str):
    """Where a page explains what it teaches (formulas, how to read it): folded in an expander normally; in
    presenter mode open on the page under a heading, as the long text below the picture (a projector's class cannot
    unfold it, and a click and a scroll in front of them lose the thread)."""
    if view.get(view.PRESENT):
        box = st.container()
        box.subheader(title)
        return box
    return st.expander(title)
