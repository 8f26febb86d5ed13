"""The model map and the head view of a trace, for the pages (home, tour, explorer) and the offline lesson: the
trace's arrays, the reader's words and the type sizes handed to the builders in viz/figures/model_map.py and
viz/figures/head_view.py. No Streamlit here: a page passes its look (viz.elements.ui.look())."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

from model.capture import schema
from viz.figures.head_view import head_view
from viz.figures.model_map import all_cells, map_data, model_map
from viz.figures.style import Look


def clickable_cells(trace) -> dict[str, str]:
    """Every cell clickable, with no href: the page opens a clicked block itself (viz/elements/map_chart, through the view,
    which carries the sentence). An href cannot carry it: plotly.js writes a link as encodeURI(decodeURI(href)),
    so a %2C of the sentence became %252C, and no form of '+', '&' or '#' survives."""
    n_enc, n_dec = (len(schema.stacked(trace, kind)) for kind in ("encoder", "decoder"))
    return {cell: "" for cell in all_cells(n_enc, n_dec)}


def map_figure(trace, look: Look, clickable: bool = False, highlight: Sequence[str] = (), compact: bool = False,
               token_strings: Callable[[list[int]], list[str]] | None = None) -> go.Figure:
    """The live map of one trace in the reader's words; `clickable`: its blocks can be clicked (the page opens
    them)."""
    links = clickable_cells(trace) if clickable else None
    return model_map(map_data(trace, token_strings), look, links=links, highlight=highlight, compact=compact)


def head_view_figure(patterns: np.ndarray, query_labels: list[str], key_labels: list[str], kind: str, layer: int,
                     look: Look, selected_head: int | None = None, titled: bool = True) -> go.Figure:
    """The head view of one layer's [H, Q, K] patterns (titled=False: beside a chart that names them)."""
    title = look.words("headview.title", kind=look.words.kind(kind), layer=layer) if titled else ""
    return head_view(patterns, query_labels, key_labels, look, title=title, selected_head=selected_head)
