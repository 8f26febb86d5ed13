"""Teaching pictures of token vectors instead of tokens x d_model stripe charts:
the tokens' cosine similarities (tokens x tokens) and how much each head adds to each token's output.
numpy in, plotly out; words from the caller (Labels, Words), sizes from the type scale."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.step import upright_when_crowded
from viz.figures.style import (ATTENTION_SCALE, Labels, Look, TypeScale, check_matrix, colorbar, frame_row, plotly_text,
                               signed_heatmap_spec, token_axes, trusted_figure, typeset, wrapped)


def _numbers_fit(n_rows: int, n_cols: int, width_px: float, height_px: float, type_scale: TypeScale,
                 overhead_px: float = 200) -> bool:
    """Whether numbers fit in the cells at the scale's cell size (otherwise hover only). overhead_px: the figure's
    height outside its cells (title, labels)."""
    return type_scale.numbers_fit((width_px - 200) / max(n_cols, 1), (height_px - overhead_px) / max(n_rows, 1),
                                  chars=5)


def cosine_map(cos: np.ndarray, token_labels: list[str], labels: Labels, look: Look, highlight: int | None = None,
               width_px: float | None = None) -> go.Figure:
    """cosine_spec's figure."""
    return trusted_figure(cosine_spec(cos, token_labels, labels, look, highlight, width_px))


def cosine_spec(cos: np.ndarray, token_labels: list[str], labels: Labels, look: Look, highlight: int | None = None,
                width_px: float | None = None) -> dict:
    """Cosine similarity of every pair of token vectors [T, T] on the diverging scale fixed at -1..1
    (white = unrelated, red = pointing the same way, blue = opposite), titled by `labels` (composed by the caller:
    the look gives the sizes). One row framed when given. A figure's spec (plain dicts: built unchecked)."""
    cos = check_matrix(cos, len(token_labels), len(token_labels))
    if width_px:      # a title wider than the picture's column in lines (cross-attention's memory: plotly cut it)
        labels = labels._replace(title="<br>".join(wrapped(labels.title, look.scale, width_px - 24, "title")))
    spec = signed_heatmap_spec(cos, token_labels, token_labels, labels, zmax=1.0, type_scale=look.scale)
    layout, width = spec["layout"], width_px or 0.6 * look.scale.page_px
    # rows tall enough for every token label and a number (the slanted key labels below take ~120 px)
    row_px = max(1.8 * look.scale.tick, 1.25 * look.scale.cell + 8)
    layout["height"] = int(max(320, min(900, 230 + row_px * len(token_labels))))
    if _numbers_fit(len(token_labels), len(token_labels), width, layout["height"], look.scale):
        spec["data"][0]["texttemplate"] = "%{z:.2f}"
    upright_when_crowded(layout, len(token_labels), width, look.scale)
    frame_row(layout, highlight, len(token_labels))
    return spec      # unchecked, as signed_heatmap's (tests/test_figures_step.py: the long way)


def contribution_map(norms: np.ndarray, token_labels: list[str], head_labels: list[str], look: Look,
                     title: str = "", width_px: float | None = None) -> go.Figure:
    """[T, H]: how long the vector is that head h writes into token t's output (|z_h W^O_h|), tokens down,
    heads across, 0 = white."""
    x_title, y_title = look.words("multihead.head"), look.words("multihead.axis.token")
    value_name = look.words("multihead.share.value")
    norms = check_matrix(norms, len(token_labels), len(head_labels))
    rows, cols = plotly_text(token_labels), plotly_text(head_labels)
    heatmap = go.Heatmap(z=norms, x=cols, y=rows, zmin=0, colorscale=ATTENTION_SCALE,
                         colorbar=colorbar(value_name, look.scale), textfont=look.scale.font("cell"),
                         hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.3f}}"
                                       "<extra></extra>")
    row_px = max(24, 1.45 * look.scale.tick, 1.25 * look.scale.cell + 8)   # rows tall enough for their numbers
    # head names are short ("head 0", "头 0"): upright under their columns, then the axis title, under the
    # 60 px title margin (slanted names took ~75 px more of a page that must fit in three screens)
    overhead = 60 + 1.6 * look.scale.tick + 1.6 * look.scale.text + 24
    axes = token_axes(x_title, y_title, look.scale)
    axes["xaxis"]["tickangle"] = 0
    layout = dict(axes, title=dict(text=title), height=int(min(800, overhead + row_px * len(rows))),
                  margin=dict(l=10, r=10, t=60, b=10))
    if _numbers_fit(len(rows), len(cols), width_px or look.scale.page_px, layout["height"], look.scale, overhead):
        heatmap.texttemplate = "%{z:.2f}"
    return go.Figure(heatmap, layout=typeset(layout, look.scale))
