"""The model map and the head view in a reader's language, for the pages (home, tour, explorer) and the
offline lesson: the catalogue's words (literal keys) and the type sizes handed to the builders in
viz/figures/model_map.py and viz/figures/head_view.py. No Streamlit here: a page passes its language."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

from model.capture import schema
from viz.figures.head_view import head_view
from viz.figures.model_map import all_cells, map_data, model_map
from viz.figures.style import NORMAL, TypeScale
from viz.i18n import DEFAULT_LANG, KIND_KEYS, message



def map_words(lang: str = DEFAULT_LANG) -> dict[str, str]:
    def m(key: str) -> str:
        return message(lang, key)
    return dict(inputs=m("map.inputs"), outputs=m("map.outputs"), input_embedding=m("map.input_embedding"),
                output_embedding=m("map.output_embedding"), encoder_stack=m("map.encoder_stack"),
                decoder_stack=m("map.decoder_stack"), layer_name=m("map.layer"),
                self_attention=m("map.self_attention"), masked_attention=m("map.masked_attention"),
                cross_attention=m("map.cross_attention"), add_norm=m("map.add_norm"),
                feed_forward=m("map.feed_forward"), linear=m("map.linear"), softmax=m("map.softmax"),
                sigma_name=m("map.sigma"), ff_name=m("map.ff_size"), embed_value=m("map.embed_value"),
                linear_value=m("map.linear_value"), top_value=m("map.top_value"),
                encoder_output=m("map.encoder_output"), hover_attention=m("map.hover_attention"),
                hover_sigma=m("map.hover_sigma"), hover_ff=m("map.hover_ff"), hover_top=m("map.hover_top"),
                click_hint=m("map.click"), you_are_here=m("map.you_are_here"))


def clickable_cells(trace) -> dict[str, str]:
    """Every cell clickable, with no href: the page opens a clicked block itself (viz/map_chart, through the view,
    which carries the sentence). An href cannot carry it: plotly.js writes a link as encodeURI(decodeURI(href)),
    so a %2C of the sentence became %252C, and no form of '+', '&' or '#' survives."""
    n_enc, n_dec = (len(schema.stacked(trace, kind)) for kind in ("encoder", "decoder"))
    return {cell: "" for cell in all_cells(n_enc, n_dec)}


def map_figure(trace, lang: str = DEFAULT_LANG, clickable: bool = False, highlight: Sequence[str] = (),
               type_scale: TypeScale = NORMAL, compact: bool = False,
               token_strings: Callable[[list[int]], list[str]] | None = None) -> go.Figure:
    """The live map of one trace in `lang`; `clickable`: its blocks can be clicked (the page opens them)."""
    links = clickable_cells(trace) if clickable else None
    return model_map(map_data(trace, token_strings), links=links, highlight=highlight,
                     type_scale=type_scale, compact=compact, **map_words(lang))


def head_view_figure(patterns: np.ndarray, query_labels: list[str], key_labels: list[str], kind: str, layer: int,
                     lang: str = DEFAULT_LANG, selected_head: int | None = None,
                     type_scale: TypeScale = NORMAL, titled: bool = True) -> go.Figure:
    """The head view of one layer's [H, Q, K] patterns in `lang` (titled=False: beside a chart that names them)."""
    title = message(lang, "headview.title", kind=message(lang, KIND_KEYS[kind]), layer=layer) if titled else ""
    return head_view(patterns, query_labels, key_labels, selected_head=selected_head, type_scale=type_scale,
                     title=title,
                     head_name=message(lang, "headview.head"), legend_title=message(lang, "headview.legend"),
                     query_title=message(lang, "fig.attention.y"), key_title=message(lang, "fig.attention.x"),
                     hover_query=message(lang, "headview.hover_query"), hover_key=message(lang, "headview.hover_key"))
