"""Attention figures: one head large, or every layer x head small. numpy in, plotly out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.figures.style import (ATTENTION_SCALE, LINE_COLORS, NORMAL, Look, TypeScale, check_matrix, colorbar,
                               colorscale, frame_row, legend_above, mask_legend, mask_overlay, masked_z, plotly_text,
                               slim_colorbar, subplot_axes, subplot_layout, token_axes, trusted_figure, typeset)

MAP_ROOM = 250          # px of a map's width that are not its plot: the query labels and the colour bar (presenter)
NORMAL_MAP_ROOM = 200   # the same at the normal 14 px: with 250, a map in half the page showed 9 of a 9-word
                        # sentence's 12 tokens (compare), where its plot has ~210 px, 17.5 a key
PHONE_MAP_ROOM = 165    # the same in a phone's column (12 px labels, a thin colour bar, no row title): with 250 a
                        # 9-word sentence showed 6 of its tokens; with 130 a long one's window of 14 had 170 px, and
                        # plotly drew every second key (it wants 14 px a 12 px label)


def map_room(type_scale: TypeScale = NORMAL) -> int:
    if type_scale.narrow:
        return PHONE_MAP_ROOM
    return NORMAL_MAP_ROOM if type_scale.name == NORMAL.name else MAP_ROOM
SLANTED_EM = 1.7        # px between two 45° labels' baselines, in ems of the tick size, for them not to touch
UPRIGHT_EM = 1.25       # the same for upright (90°) labels


def slanted_labels_fit(width_px: float, n_keys: int, type_scale: TypeScale = NORMAL) -> bool:
    """Whether n_keys slanted (45°) key labels stay apart under a map width_px wide."""
    return (width_px - map_room(type_scale)) / max(n_keys, 1) >= SLANTED_EM * type_scale.tick


def key_labels_fit(width_px: float, n_keys: int, type_scale: TypeScale = NORMAL) -> bool:
    """Whether n_keys key labels fit under a map width_px wide at all (upright); fewer and plotly drops every
    second one."""
    return (width_px - map_room(type_scale)) / max(n_keys, 1) >= UPRIGHT_EM * type_scale.tick


def keys_that_fit(width_px: float, type_scale: TypeScale = NORMAL, em: float = UPRIGHT_EM) -> int:
    """How many key labels a map width_px wide shows upright (em: SLANTED_EM for slanted), each legible
    (key_labels_fit's count)."""
    return labels_that_fit(width_px - map_room(type_scale), type_scale, em)


def labels_that_fit(plot_px: float, type_scale: TypeScale = NORMAL, em: float = UPRIGHT_EM) -> int:
    """How many category labels (tokens) an axis plot_px long shows, each em ems of the tick size from the next
    (UPRIGHT_EM for upright or row labels, SLANTED_EM for slanted ones): fewer px a label and plotly leaves
    labels out. A long sentence's picture shows a window of this many tokens."""
    return max(1, int(plot_px / (em * type_scale.tick)))


MAP_SIDE = 900          # px: the tallest an attention map grows


def map_row_px(type_scale: TypeScale = NORMAL) -> float:
    return max(26, 1.9 * type_scale.tick)


def map_window(width_px: float, type_scale: TypeScale = NORMAL) -> int:
    """How many tokens an attention map width_px wide shows with every label legible: keys across (upright),
    rows down its tallest height. A longer sentence is shown through a window of this many."""
    return min(keys_that_fit(width_px, type_scale), int((MAP_SIDE - 160) / map_row_px(type_scale)))


def attention_heatmap(weights: np.ndarray, query_labels: list[str], key_labels: list[str], look: Look,
                      title: str = "", highlight_row: int | None = None, masked=None,
                      width_px: float | None = None) -> go.Figure:
    """attention_heatmap_spec's figure."""
    return trusted_figure(attention_heatmap_spec(weights, query_labels, key_labels, look, title, highlight_row, masked,
                                                 width_px))


def attention_heatmap_spec(weights: np.ndarray, query_labels: list[str], key_labels: list[str], look: Look,
                           title: str = "", highlight_row: int | None = None, masked=None,
                           width_px: float | None = None) -> dict:
    """A [query, key] matrix of attention weights (0-1) with token labels on both axes and hover values, in the
    reader's words (fig.attention.*). masked: optional bool [query, key], True where the mask hid the key
    (decoder self-attention's future): those cells are grey, without a number, and the legend names them.
    Numbers show in the cells when they fit at the scale's cell size, in a plot about width_px wide (default:
    the scale's page width); hover always has them. A figure's spec (plain dicts: {data, layout})."""
    weights = check_matrix(weights, len(query_labels), len(key_labels))
    query_labels, key_labels = plotly_text(query_labels), plotly_text(key_labels)
    n_q, n_k = len(query_labels), len(key_labels)
    row_px = map_row_px(look.scale)                # every token label shown (plotly drops every other when crowded)
    side = int(max(360, min(MAP_SIDE, 160 + row_px * max(n_q, n_k))))
    plot_w = (width_px or look.scale.page_px) - map_room(look.scale)
    show_values = look.scale.numbers_fit(plot_w / n_k, (side - 200) / n_q)
    value_name, hover_query, hover_key = (look.words(key) for key in ("fig.attention.weight", "fig.attention.query",
                                                                 "fig.attention.key"))
    bar = colorbar(value_name, look.scale)
    if width_px and width_px <= 0.55 * look.scale.page_px:    # half a page: the keys get the bar's width
        bar = slim_colorbar(bar)
    heatmap = dict(
        type="heatmap", z=masked_z(weights, masked), x=key_labels, y=query_labels, zmin=0.0, zmax=1.0,
        colorscale=colorscale(ATTENTION_SCALE), colorbar=bar, hoverongaps=False, textfont=look.scale.font("cell"),
        hovertemplate=f"{hover_query} %{{y}}<br>{hover_key} %{{x}}<br>{value_name} %{{z:.4f}}<extra></extra>")
    if show_values:
        heatmap["texttemplate"] = "%{z:.2f}"
    traces = [heatmap]
    layout = dict(token_axes(look.words("fig.attention.x"), look.words("fig.attention.y"), look.scale), title=dict(text=title),
                  height=side,
                  margin=dict(l=10, r=10, t=60, b=10))
    if not slanted_labels_fit(width_px or look.scale.page_px, n_k, look.scale):
        layout["xaxis"]["tickangle"] = -90       # upright: slanted key labels in narrow columns ran into each other
    if masked is not None and np.any(masked):
        traces += [mask_overlay(masked, key_labels, query_labels),
                   mask_legend(look.words("fig.masked"))]
        legend_above(layout)                   # under the title: a long title takes the whole width
        layout["legend"].update(yref="paper", y=1.0, yanchor="bottom")
        layout["margin"]["t"] = int(60 + 1.6 * look.scale.text)
        layout["height"] = side + int(1.6 * look.scale.text)
    frame_row(layout, highlight_row, n_q)
    # a spec, built unchecked (trusted_figure), or sent as it is (a deck's: browser_view.figure_spec): the map of
    # every page and deck pick, plotly's checks most of its build (tests/test_figures_attention.py: the long way)
    return {"data": traces, "layout": typeset(layout, look.scale)}


def model_view(patterns: np.ndarray, look: Look, title: str = "", selected: tuple[int, int | None] | None = None,
               masked=None) -> go.Figure:
    """Every layer (rows) x head (columns) as thumbnails sharing one 0-1 colour scale. [L,H,Q,K] in; the
    reader's words name the heads, layers and colour bar (fig.grid.*, fig.attention.weight).

    One heatmap on one pair of axes, thumbnails tiled with blank (NaN) gaps: a subplot per head made
    24-72 axes that the browser laid out one by one. Heatmap cells cannot be selected in plotly, so an
    invisible lattice of points over each thumbnail carries its (layer, head) for clicks (`grid_cell`).
    `selected` is (layer, head), or (layer, None) for a layer's head average. Long sentences are
    shrunk to THUMBNAIL_CELLS cells a side (`thumbnail`): the browser gets 0.7 MB, not 12 MB, at 256 tokens.
    masked: optional bool [Q, K], True where every head's mask hid the key (decoder self-attention): grey in
    every thumbnail (a shrunk cell only when its whole block was masked), named in the legend.
    """
    patterns = np.asarray(patterns, dtype=np.float32)
    if patterns.ndim != 4:
        raise ValueError(f"model_view expects [layer, head, query, key], got shape {patterns.shape}")
    if masked is not None:
        masked = np.asarray(masked, dtype=bool)
        if masked.shape != patterns.shape[-2:]:
            raise ValueError(f"mask of shape {masked.shape} does not match the patterns' {patterns.shape[-2:]}")
        patterns = np.where(masked, np.nan, patterns)
    patterns = thumbnail(patterns)
    n_layers, n_heads, n_q, n_k = patterns.shape
    gap = max(1, round(0.15 * max(n_q, n_k)))

    def tiled(p: np.ndarray) -> np.ndarray:                  # [L,H,Q,K] -> one plane, NaN between tiles
        tiles = np.pad(p, ((0, 0), (0, 0), (0, gap), (0, gap)), constant_values=np.nan)   # [L,H,Q+g,K+g]
        return tiles.transpose(0, 2, 1, 3).reshape(n_layers * (n_q + gap), n_heads * (n_k + gap))[:-gap, :-gap]

    z = tiled(patterns)
    heatmap = go.Heatmap(z=z, zmin=0, zmax=1, colorscale=ATTENTION_SCALE, hoverinfo="skip",
                         colorbar=colorbar(look.words("fig.attention.weight"), look.scale, thickness=12))
    masks = []
    if masked is not None and masked.any():
        shrunk = np.isnan(patterns)                          # masked cells (all-masked blocks once shrunk)
        masks = [mask_overlay(tiled(np.where(shrunk, 1.0, np.nan)) == 1.0), mask_legend(look.words("fig.masked"))]
    margin = 0.5 + 0.6 * gap                    # room for the selection box around the outer thumbnails
    bare = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False)
    labels = [dict(x=j * (n_k + gap) + (n_k - 1) / 2, y=1, xref="x", yref="paper", yanchor="bottom",
                   text=look.words("fig.grid.head", h=j), showarrow=False) for j in range(n_heads)]
    # layer names left of their rows, in a margin as wide as the longest ("第2层" ran into the colour bar on the right)
    row_names = [look.words("fig.grid.layer", i=i) for i in range(n_layers)]
    left = 10 + int(max(look.scale.text_px(name) for name in row_names)) + 6
    labels += [dict(x=0, y=i * (n_q + gap) + (n_q - 1) / 2, xref="paper", yref="y", xanchor="right",
                    text=name, showarrow=False, xshift=-4) for i, name in enumerate(row_names)]
    layout = dict(xaxis=dict(bare, range=[-margin, z.shape[1] - 1 + margin]),
                  yaxis=dict(bare, range=[z.shape[0] - 1 + margin, -margin]), annotations=labels,
                  title=dict(text=title), height=max(260, 130 * n_layers + 80), showlegend=False,
                  margin=dict(l=left, r=50, t=90, b=10), plot_bgcolor="white", hovermode="closest",
                  hoverdistance=-1)
    if masks:
        legend_above(layout)
    if selected is not None:
        i, j = selected
        left, right = (0, z.shape[1]) if j is None else (j * (n_k + gap), j * (n_k + gap) + n_k)
        top, bottom = i * (n_q + gap), i * (n_q + gap) + n_q
        layout["shapes"] = [dict(type="rect", xref="x", yref="y", x0=left - 0.5 - gap / 2,
                                 x1=right - 0.5 + gap / 2, y0=top - 0.5 - gap / 2, y1=bottom - 0.5 + gap / 2,
                                 line=dict(color="#d62728", width=3))]
    # built in one go (see style.token_axes): update_* calls cost ~11 ms here, on every new sentence
    hint = look.words("fig.grid.hover", layer="%{customdata[0]}", head="%{customdata[1]}")
    return go.Figure([heatmap, *masks[:1], _click_targets(n_layers, n_heads, n_q + gap, n_k + gap, n_q, n_k, hint),
                      *masks[1:]], layout=typeset(layout, look.scale))


THUMBNAIL_CELLS = 64


def thumbnail_block(n_q: int, n_k: int, cells: int = THUMBNAIL_CELLS) -> int:
    """Side f of the f x f blocks `thumbnail` pools a [n_q, n_k] map into; 1 = shown as it is."""
    return -(-max(n_q, n_k) // cells)


def thumbnail(patterns: np.ndarray, cells: int = THUMBNAIL_CELLS) -> np.ndarray:
    """[..., Q, K] -> at most `cells` a side, each cell the max of its f x f block (f = ceil(n / cells)):
    a strong link stays visible in the overview instead of being averaged away."""
    n_q, n_k = patterns.shape[-2:]
    f = thumbnail_block(n_q, n_k, cells)
    if f == 1:
        return patterns
    pad_q, pad_k = -n_q % f, -n_k % f
    padded = np.pad(patterns, [(0, 0)] * (patterns.ndim - 2) + [(0, pad_q), (0, pad_k)])
    blocks = padded.reshape(*patterns.shape[:-2], (n_q + pad_q) // f, f, (n_k + pad_k) // f, f)
    return np.fmax.reduce(np.fmax.reduce(blocks, axis=-1), axis=-2)   # NaN (masked) only when the whole block is


def _click_targets(n_layers: int, n_heads: int, row_step: int, col_step: int, n_q: int, n_k: int,
                   hint: str) -> go.Scatter:
    """An invisible point at the centre of each thumbnail, knowing its (layer, head). With
    hoverdistance -1 a click anywhere picks the nearest centre, and on a regular lattice of equal tiles
    that is the tile clicked. (A 4x4 lattice per tile cost the browser ~40 ms a draw to style.)"""
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    x = head * col_step + (n_k - 1) / 2
    y = layer * row_step + (n_q - 1) / 2
    # Plain lists, not typed arrays: a few dozen numbers, and clicks report them back as they are.
    return go.Scatter(x=x.ravel().tolist(), y=y.ravel().tolist(), mode="markers", showlegend=False,
                      marker=dict(size=1, color="rgba(0,0,0,0)"),
                      customdata=np.stack([layer.ravel(), head.ravel()], axis=1).tolist(),
                      hovertemplate=hint + "<extra></extra>")


def grid_cell(point: dict) -> tuple[int, int] | None:
    """(layer, head) of a point clicked in `model_view`; None for anything else."""
    data = point.get("customdata")
    if not isinstance(data, (list, tuple)) or len(data) != 2:
        return None
    try:
        return int(data[0]), int(data[1])
    except (TypeError, ValueError):
        return None



RUNNER_UP_COLOR = "#b0b0b0"
WINDOW_ROWS = 20        # rows a long sentence's picture shows at once in normal mode (30 px rows: about a screen)


def translation_row_px(type_scale: TypeScale = NORMAL, labelled: bool = True) -> float:
    """A row of the translation picture: two bar labels one above the other, else one tick label."""
    return max(30, 2.3 * type_scale.cell) if labelled else max(22, 1.3 * type_scale.tick)


def window_rows(type_scale: TypeScale = NORMAL) -> int:
    """Rows of a long sentence shown at once: as many as WINDOW_ROWS take in normal mode (presenter's rows are
    taller), so the picture stays about a screen high."""
    return int(WINDOW_ROWS * translation_row_px(NORMAL) / translation_row_px(type_scale))


def translation_share(type_scale: TypeScale = NORMAL) -> tuple[float, int]:
    """The translation picture's map panel: its share of the width and the px of it that are not cells (the output
    labels). A phone gives the map more of its column (at 62 % a 9-word sentence showed 2 source tokens)."""
    return (0.8, 80) if type_scale.narrow else (0.62, 180)


def translation_columns(type_scale: TypeScale = NORMAL) -> int:
    """How many source tokens the translation picture labels legibly (upright, in its map panel)."""
    share, room = translation_share(type_scale)
    return int((share * type_scale.page_px - room) / (UPRIGHT_EM * type_scale.tick))


def window_from(start: int, n: int, size: int) -> slice:
    """`size` consecutive positions of n from `start`, kept inside 0..n (all n when they fit): a reader's window
    slider over the longest rows, kept inside a shorter kind's or stack's own."""
    first = min(start, max(n - size, 0))
    return slice(first, min(n, first + size))


def window_around(index: int, n: int, size: int) -> slice:
    """`size` consecutive positions of n with `index` in the middle, kept inside 0..n (all n when they fit)."""
    return window_from(max(index - size // 2, 0), n, size)


def source_window(weights: np.ndarray, rows: slice, size: int) -> slice:
    """The `size` source tokens a window of output rows looked at most: centred on the median of the rows'
    strongest columns, kept inside the sentence. A long sentence's translation reads in windows, and its rows
    look hardest near one part of the source (a weighted mean drifted to the middle of a 128-token sentence:
    the mean over heads spreads a little weight everywhere)."""
    weights = np.asarray(weights, dtype=float)
    n = weights.shape[1]
    if n <= size:
        return slice(0, n)
    centre = float(np.median(weights[rows].argmax(1)))
    start = int(min(max(round(centre - (size - 1) / 2), 0), n - size))
    return slice(start, start + size)


def translation_figure(weights: np.ndarray, out_labels: list[str], src_labels: list[str], probs, runner_up: list[str],
                       runner_up_probs, look: Look, title: str = "") -> go.Figure:
    """The translation read top to bottom: left, where each output token looked in the source (a
    [output, source] cross-attention map, the source tokens along its top edge, so they are on the first
    screen however many rows follow); right, on the same rows, how sure the model was of that token
    (p of the chosen token) and the token it ranked next (the runner-up) with its p, in the reader's words
    (fig.translation.*)."""
    weights = check_matrix(weights, len(out_labels), len(src_labels))
    probs, runner_up_probs = (np.asarray(v, dtype=float).reshape(-1) for v in (probs, runner_up_probs))
    n = len(out_labels)
    if not len(probs) == len(runner_up_probs) == len(runner_up) == n:
        raise ValueError(f"{n} output tokens need {n} probabilities and runner-ups, got {len(probs)}, "
                         f"{len(runner_up_probs)} and {len(runner_up)}")
    rows, cols, others = plotly_text(out_labels), plotly_text(src_labels), plotly_text(runner_up)
    source_name, output_name = look.words("fig.translation.source"), look.words("fig.translation.output")
    runner_up_name = look.words("fig.translation.runner_up")
    s = look.scale
    labelled = n <= 40                         # bar labels while rows are tall enough to hold them
    row_px = translation_row_px(s, labelled)
    share, room = translation_share(s)
    sure = look.words("fig.translation.sure.short" if s.narrow else "fig.translation.sure")   # a phone's narrow panel
    layout = subplot_layout((look.words("fig.translation.looked"), sure), rows=1, cols=2,
                            shared_yaxes=True, column_widths=[share, 1 - share], horizontal_spacing=0.03)
    cell_w = (share * s.page_px - room) / max(len(cols), 1)
    heatmap = go.Heatmap(z=weights, x=cols, y=rows, zmin=0, zmax=1, colorscale=ATTENTION_SCALE, showscale=False,
                         texttemplate="%{z:.2f}" if s.numbers_fit(cell_w, row_px) else None,
                         textfont=s.font("cell"),
                         hovertemplate=f"{output_name} %{{y}}<br>{source_name} %{{x}}<br>"
                                       f"{look.words('fig.translation.weight')} %{{z:.3f}}<extra></extra>",
                         **subplot_axes(0))
    outside = dict(orientation="h", textposition="outside", cliponaxis=False, constraintext="none",
                   **subplot_axes(1))
    chosen = go.Bar(x=probs, y=rows, name=look.words("fig.translation.chosen"), marker_color=LINE_COLORS[0],
                    textfont=s.font("cell"),
                    text=[f"{p:.0%}" for p in probs] if labelled else None,
                    hovertemplate="%{y}<br>p = %{x:.3f}<extra></extra>", **outside)
    second = go.Bar(x=runner_up_probs, y=rows, name=runner_up_name, marker_color=RUNNER_UP_COLOR, customdata=others,
                    # a phone's narrow bars panel: the runner-up on hover only (its words ran off the figure)
                    text=[f"{t} {p:.0%}" for t, p in zip(others, runner_up_probs)] if labelled and not s.narrow
                    else None,
                    textfont=s.font("cell", color="#444444"),
                    hovertemplate="%{y}: " + runner_up_name + " %{customdata}<br>p = %{x:.3f}<extra></extra>",
                    **outside)
    # source tokens slanted along the top, upright where slanted ones would touch (a long sentence's narrow
    # columns): their height, above which the panel titles and the title sit
    longest = max((s.text_px(str(c), "tick") for c in src_labels), default=0)
    upright = cell_w < SLANTED_EM * s.tick
    label_px = longest + 12 if upright else 0.71 * longest + 0.71 * s.tick + 12
    ticks = dict(type="category", automargin=True)
    layout["xaxis"].update(ticks, side="top", tickangle=-90 if upright else -45,
                           title=dict(text=source_name, standoff=6))
    layout["yaxis"].update(ticks, title=dict(text=output_name), autorange="reversed")
    layout["xaxis2"].update(range=[0, 1.75], tickvals=[0, 0.5, 1], ticktext=["0", "50%", "100%"],
                            title=dict(text=look.words("fig.translation.probability")))
    top = int(label_px + 2.7 * s.text + 16 + (s.title + 16 if title else 0))
    layout.update(title=dict(text=title, yref="container", y=1, yanchor="top", pad=dict(t=10)), barmode="group",
                  bargap=0.25, bargroupgap=0.05, height=int(max(300, top + row_px * n + 70)),
                  margin=dict(l=10, r=10, t=top, b=10), showlegend=False)
    notes = layout.get("annotations", [])
    if notes:                                  # the heatmap's panel title above its slanted source tokens
        notes[0]["yshift"] = label_px + 1.5 * s.text + 4
        if s.narrow:                           # the bars' title ends at the figure's edge, not past it
            notes[1].update(x=1.0, xanchor="right")
    layout = typeset(layout, s)
    return go.Figure([heatmap, chosen, second], layout=layout)
