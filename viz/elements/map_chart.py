"""The live model map as a page element: the paper's Figure 1 drawn from the sentence's trace in the reader's
language, every block a link to the page and view that explains it (a click opens it on the same input). The
start page shows it whole; presenter mode shows it under a page with that page's blocks framed ("you are here")."""
from __future__ import annotations

from typing import Sequence

import streamlit as st

from viz.figures.model_map import map_cell
from viz.core import view
from viz.elements.map_view import map_figure
from viz.elements.nav import block_target
from viz.core.context import Context
from viz.elements.ui import look


def block_link(cell: str) -> tuple[str, dict[str, str]]:
    """The page (file under the repository root) and URL parameters a click on a block opens: the view's input,
    language and mode (view.link_params) and the block's own view."""
    page, own = block_target(cell)
    return f"viz/pages/{page}", view.link_params(**own)


def model_map_chart(ctx: Context, key: str, highlight: Sequence[str] = (), compact: bool = False) -> None:
    """Draw the map of ctx's trace; a click on a block switches to its page with the same input."""
    fig = map_figure(ctx.trace, look(), clickable=True, highlight=highlight,
                     compact=compact, token_strings=ctx.model.tokenizer.token_strings)
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=key,
                            config={"displaylogo": False, "displayModeBar": False})
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    cell = map_cell(points[0]) if points else None
    if cell is not None:
        page, params = block_link(cell)
        st.switch_page(page, query_params=params)
