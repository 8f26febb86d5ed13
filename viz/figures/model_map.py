"""A live map of the whole model: the paper's Figure 1 for an encoder-decoder, drawn from one sentence's Trace.

Embeddings + positional encoding; N x encoder layer (self-attention, Add & Norm, feed-forward, Add & Norm);
N x decoder layer (masked self-attention, cross-attention, feed-forward, each with Add & Norm); linear +
softmax. Every layer is a column of cells inside its stack, so each block carries the real picture or
number of every layer: the mean-of-heads attention map as a thumbnail, the sigma a LayerNorm divides by,
the size of what the feed-forward network adds, the most probable output token with its p.

Two steps, as BertViz splits them: `map_data(trace)` reads the numbers out of a Trace (pure numpy, no
plotly), `model_map(data, look, ...)` draws them (numpy + the reader's words and sizes in, plotly out). Which page
explains a block is the app's navigation (viz/elements/nav.block_target); a page passes the links it wants, the offline
lesson none.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

from model.analysis.attention_math import future_mask, softmax
from model.capture import schema
from viz.figures.attention import thumbnail
from viz.figures.style import ATTENTION_SCALE, MASKED_COLOR, NORMAL, Look, TypeScale, Words, plotly_text

THUMB_CELLS = 24          # a thumbnail shows at most this many cells a side (max-pooled, as the explorer's grid)
TOKENS_SHOWN = 12         # the inputs/outputs rows list this many tokens, then "…"

ATTN_KINDS = {"attn.encoder": "encoder", "attn.decoder": "decoder", "attn.cross": "cross"}
NORM_BLOCKS = {"norm.encoder.norm_attn": ("encoder", "norm_attn"), "norm.encoder.norm_ff": ("encoder", "norm_ff"),
               "norm.decoder.norm_attn": ("decoder", "norm_attn"),
               "norm.decoder.norm_cross": ("decoder", "norm_cross"), "norm.decoder.norm_ff": ("decoder", "norm_ff")}
# Each stack's rows from the bottom up, as the paper draws them.
STACK_ROWS = {"encoder": ("attn.encoder", "norm.encoder.norm_attn", "ff.encoder", "norm.encoder.norm_ff"),
              "decoder": ("attn.decoder", "norm.decoder.norm_attn", "attn.cross", "norm.decoder.norm_cross",
                          "ff.decoder", "norm.decoder.norm_ff")}
BLOCKS = ("embed.encoder", "embed.decoder", *STACK_ROWS["encoder"], *STACK_ROWS["decoder"], "linear", "softmax")

COLORS = {"embed": "#f9dcdc", "attn": "#fde5c8", "norm": "#fbf3b9", "ff": "#d9e9f7", "linear": "#e6dcef",
          "softmax": "#d8f0e0", "frame": "#f4f5f7", "frame_line": "#9aa5b1", "masked": MASKED_COLOR,
          "highlight": "#d62728", "link": "#1a4f8b"}


@dataclass(frozen=True)
class MapData:
    """What the map shows, read from one trace (`map_data`)."""
    src_tokens: list[str]
    tgt_in_tokens: list[str]
    tgt_out_tokens: list[str]
    attention: dict[str, np.ndarray]           # kind -> [L, Q, K] mean over heads
    sigma: dict[str, np.ndarray]               # norm block -> [L] mean over tokens of the LayerNorm's std
    ff_norm: dict[str, np.ndarray]             # stack -> [L] mean over tokens of ||FFN(x)||
    embed_norm: dict[str, tuple[float, float]]  # stack -> (mean ||token embedding||, mean ||PE||)
    top_tokens: list[str]                      # per output position: the most probable token
    top_p: np.ndarray                          # [T] its probability
    d_model: int
    vocab: int
    focus: int = 0                             # the output position whose top token the softmax block names
    n_heads: int = field(default=1)

    @property
    def n_layers(self) -> dict[str, int]:
        return {"encoder": len(self.attention["encoder"]), "decoder": len(self.attention["decoder"])}


def map_data(trace, token_strings: Callable[[list[int]], list[str]] | None = None, focus: int = 0) -> MapData:
    """The map's numbers from a trace with every hook (trace_sentence's default). token_strings turns token
    ids into strings (a tokenizer's token_strings) for a top token the output does not contain; without it
    such a token is written #id."""
    arrays, meta = trace.arrays if hasattr(trace, "arrays") else trace, trace.meta
    patterns = {kind: schema.stacked(trace, kind) for kind in schema.KINDS}          # [L,H,Q,K]
    attention = {kind: p.mean(1) for kind, p in patterns.items()}
    sigma = {}
    for block, (stack, norm) in NORM_BLOCKS.items():
        n = len(attention["encoder" if stack == "encoder" else "decoder"])
        sigma[block] = np.array([float(np.mean(arrays[schema.norm_name(stack, i, norm, "std")])) for i in range(n)])
    ff_norm = {stack: np.array([float(np.linalg.norm(arrays[schema.ff_name(stack, i, "out")], axis=-1).mean())
                                for i in range(len(attention[stack]))]) for stack in schema.STACKS}
    embed_norm = {stack: (float(np.linalg.norm(arrays[schema.embed_name(stack, "tokens")], axis=-1).mean()),
                          float(np.linalg.norm(arrays[schema.embed_name(stack, "pos")], axis=-1).mean()))
                  for stack in schema.STACKS}
    logits = np.asarray(arrays[schema.LOGITS], dtype=np.float64)                     # [T, V]
    probs = softmax(logits)
    top_ids = probs.argmax(-1)
    top_p = probs[np.arange(len(top_ids)), top_ids]
    out_ids, out_tokens = list(meta["tgt_ids"]), list(meta["tgt_out_tokens"])
    known = {int(i): tok for i, tok in zip(out_ids, out_tokens)}
    missing = sorted({int(i) for i in top_ids} - set(known))
    if missing and token_strings is not None:
        known.update(zip(missing, token_strings(missing)))
    top_tokens = [known.get(int(i), f"#{int(i)}") for i in top_ids]
    return MapData(list(meta["src_tokens"]), list(meta["tgt_in_tokens"]), out_tokens, attention, sigma, ff_norm,
                   embed_norm, top_tokens, top_p,
                   d_model=int(arrays[schema.embed_name("encoder", "out")].shape[-1]), vocab=int(logits.shape[-1]), focus=min(max(0, focus), max(0, len(top_ids) - 1)),
                   n_heads=int(patterns["encoder"].shape[1]))


# -- which page explains a block ------------------------------------------------------------------------------
def cell_id(block: str, layer: int | None = None) -> str:
    """A block of the map, or one layer's cell of it: "attn.cross" or "attn.cross#2"."""
    return block if layer is None else f"{block}#{int(layer)}"


def parse_cell(cell: str) -> tuple[str, int | None]:
    block, _, layer = str(cell).partition("#")
    if block not in BLOCKS:
        raise ValueError(f"unknown block {block!r}")
    return block, (int(layer) if layer else None)


def all_cells(n_encoder: int, n_decoder: int) -> list[str]:
    """Every clickable cell of a map of this size."""
    cells = ["embed.encoder", "embed.decoder", "linear", "softmax"]
    for stack, n in (("encoder", n_encoder), ("decoder", n_decoder)):
        cells += [cell_id(block, i) for block in STACK_ROWS[stack] for i in range(n)]
    return cells


# -- the figure -------------------------------------------------------------------------------------------
ROW_HEIGHT = {"attn": 74, "norm": 30, "ff": 34}
GAP = 7


def _short_tokens(tokens: Sequence[str], limit: int = TOKENS_SHOWN, room_px: float | None = None,
                  type_scale: TypeScale = NORMAL) -> str:
    """The first `limit` tokens, fewer where they would not fit in room_px at the tick size, then " …"."""
    tokens = [str(t) for t in tokens]
    n = min(limit, len(tokens))
    while room_px is not None and n > 1 and type_scale.text_px(" ".join(tokens[:n]) + " …", "tick") > room_px:
        n -= 1
    return " ".join(plotly_text(tokens[:n])) + (" …" if len(tokens) > n else "")


def _link(text: str, url: str | None) -> str:
    return text if not url else f'<a href="{url}" target="_self" style="color:{COLORS["link"]}">{text}</a>'


@dataclass(frozen=True)
class _Geometry:
    """Where the map's parts go. x runs 0-100 across the figure; y is in px from the bottom, so every height is a
    multiple of `u` (the text size / 16) and the rows grow with the type."""
    u: float
    heights: dict[str, float]            # a stack row's height by its kind (attn, norm, ff)
    gap: float                           # between two rows of a stack
    embed_h: float                       # the embedding and softmax blocks
    line_h: float                        # the linear block
    base: float                          # the embeddings' bottom, over the tokens rows
    stacked: bool                        # a phone's column: the decoder over the encoder
    sides: dict[str, tuple[float, float]]   # stack -> its x0, x1
    name_width: float                    # the rows' names, before the layers' columns

    def cells_x(self, stack: str, n: int) -> list[tuple[float, float]]:
        """x0, x1 of each of a stack's n layer columns, right of the rows' names."""
        x0, x1 = self.sides[stack]
        left, right = x0 + self.name_width + 1.0, x1 - 1.0
        width = (right - left - (n - 1) * 1.0) / n
        return [(left + i * (width + 1.0), left + i * (width + 1.0) + width) for i in range(n)]


def _geometry(look: Look, compact: bool) -> _Geometry:
    """The map's sizes at the look's type scale; compact: lower rows (the tour's map)."""
    u = look.scale.text / 16                            # y is in px: rows grow with the type
    heights = {"attn": 52, "norm": 24, "ff": 26} if compact else dict(ROW_HEIGHT)
    # a phone's column (look.scale.narrow): the decoder above the encoder, each the column's width, the names of
    # the rows given 44% of it (side by side, "feed-forward · ‖FFN‖" ran over its layers' numbers in 60 px)
    stacked = look.scale.narrow
    sides = {"encoder": (1.0, 96.0), "decoder": (1.0, 96.0)} if stacked else {"encoder": (1.0, 47.0),
                                                                             "decoder": (53.0, 99.0)}
    return _Geometry(u=u, heights={kind: h * u for kind, h in heights.items()}, gap=GAP * u, embed_h=46 * u,
                     line_h=30 * u, base=28.0 * u, stacked=stacked, sides=sides,
                     name_width=44.0 if stacked else 17.0)


@dataclass
class _Canvas:
    """The map as it is drawn: what draws it (the look, the links, the geometry) and what it has drawn so far, in
    plotly's order (shapes, annotations, traces, the invisible hover points), with each block's box by name."""
    look: Look
    links: dict[str, str]
    geo: _Geometry
    shapes: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    traces: list = field(default_factory=list)
    hover_x: list[float] = field(default_factory=list)
    hover_y: list[float] = field(default_factory=list)
    hover_text: list[str] = field(default_factory=list)
    hover_cell: list[str] = field(default_factory=list)
    boxes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)

    def box(self, block: str, x0: float, y0: float, x1: float, y1: float, color: str) -> None:
        self.boxes[block] = (x0, y0, x1, y1)
        self.shapes.append(dict(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, xref="x", yref="y", fillcolor=color,
                                line=dict(color="#7a7a7a", width=1), layer="below"))

    def note(self, x, y, text, size=None, anchor="left", color="#222222", **extra) -> None:
        if "<a href=" in text:        # above the plot's drag layer, so a click reaches the link
            extra["captureevents"] = True
        self.notes.append(dict(x=x, y=y, xref="x", yref="y", text=text, showarrow=False, xanchor=anchor,
                               align=anchor, font=dict(size=size or self.look.scale.text, color=color), **extra))

    def hover(self, x, y, text, cell) -> None:
        """An invisible point over a block or cell (_draw_hover_points draws them all, last): its hover text and
        cell id."""
        self.hover_x.append(x)
        self.hover_y.append(y)
        self.hover_text.append(text)
        self.hover_cell.append(cell)


def model_map(data: MapData, look: Look, links: dict[str, str] | None = None, highlight: Sequence[str] = (),
              title: str = "", compact: bool = False) -> go.Figure:
    """The paper's Figure 1 drawn from `data` (map_data). links: cell id -> URL ("" for none: the
    block is clicked, not followed); a block name or number with a URL links to it, and with links an invisible
    point over every cell carries its cell id (customdata) for a page's on_select. highlight: blocks drawn with a
    red frame ("you are here").
    look: the reader's words (map.* in the catalogue); block names at its scale's text size, numbers and tokens
    at its tick size (PRESENTER in presenter mode). compact: lower rows (the tour's "you are here" map)."""
    canvas = _Canvas(look, links or {}, _geometry(look, compact))
    # bottom up, as the paper draws it; stacked, the decoder starts above the encoder's top
    encoder_top = _draw_stack(canvas, data, "encoder", bottom=canvas.geo.base)
    decoder_top = _draw_stack(canvas, data, "decoder", bottom=_decoder_bottom(canvas.geo, encoder_top))
    y_top = _draw_output_head(canvas, data, decoder_top)
    _draw_encoder_output_arrow(canvas, encoder_top)
    _draw_highlights(canvas, highlight, y_top)
    if not compact or canvas.links:          # the tour's compact map, linked nowhere, has no hovers
        _draw_hover_points(canvas)
    return go.Figure(canvas.traces, layout=_map_layout(canvas, title, y_top))


def _decoder_bottom(geo: _Geometry, encoder_top: float) -> float:
    """Side by side both stacks start at the base; stacked, the decoder starts over the encoder's stack name, its
    output's label and its own tokens."""
    return encoder_top + 58 * geo.u + geo.base if geo.stacked else geo.base


def _draw_stack(canvas: _Canvas, data: MapData, stack: str, bottom: float) -> float:
    """One stack from its tokens row up: the embedding, then its rows in a frame, a column per layer. Returns the
    frame's top."""
    geo = canvas.geo
    _draw_tokens_row(canvas, data, stack, bottom)
    frame_bottom = _draw_embedding(canvas, data, stack, bottom)
    y = frame_bottom + geo.gap
    columns = geo.cells_x(stack, data.n_layers[stack])
    for block in STACK_ROWS[stack]:
        y = _draw_stack_row(canvas, data, stack, block, columns, y)
    _draw_stack_frame(canvas, stack, columns, frame_bottom, y)
    return y


def _draw_tokens_row(canvas: _Canvas, data: MapData, stack: str, bottom: float) -> None:
    """The stack's tokens ("inputs: …", "outputs: …") under its embedding."""
    look, geo = canvas.look, canvas.geo
    x0, x1 = geo.sides[stack]
    tokens = data.src_tokens if stack == "encoder" else data.tgt_in_tokens
    # a row of tokens stays on its side: 12 long ones ran into the other side's row (and off the figure)
    label = look.words("map.inputs") if stack == "encoder" else look.words("map.outputs")
    room = (x1 - x0) / 100 * look.scale.page_px - look.scale.text_px(label + ": ", "tick")
    row = look.words("map.tokens_row", label=label,
                     tokens=_short_tokens(tokens, room_px=room, type_scale=look.scale))
    canvas.note(x0, bottom - geo.base + 12 * geo.u, row, look.scale.tick)


def _draw_embedding(canvas: _Canvas, data: MapData, stack: str, y: float) -> float:
    """The stack's embedding block, with the mean sizes of its token embedding and positional encoding. Returns
    the y its stack's frame starts at."""
    look, geo = canvas.look, canvas.geo
    x0, x1 = geo.sides[stack]
    block, small_size = f"embed.{stack}", look.scale.tick
    embed_words = look.words("map.input_embedding" if stack == "encoder" else "map.output_embedding")
    canvas.box(block, x0, y, x1, y + geo.embed_h, COLORS["embed"])
    canvas.note(x0 + 1.0, y + geo.embed_h / 2, _link(embed_words, canvas.links.get(block)), small_size)
    token_norm, pe_norm = data.embed_norm[stack]
    canvas.note(x1 - 1.0, y + geo.embed_h / 2,
                look.words("map.embed_value", token=f"{token_norm:.1f}", pe=f"{pe_norm:.1f}"), small_size,
                anchor="right")
    canvas.hover((x0 + x1) / 2, y + geo.embed_h / 2, embed_words.replace("<br>", " "), block)
    return y + (geo.embed_h + 18 * geo.u)


def _draw_stack_row(canvas: _Canvas, data: MapData, stack: str, block: str, columns: list[tuple[float, float]],
                    y: float) -> float:
    """One row of a stack (a sublayer): its box and name, then each layer's cell. Returns the next row's y."""
    x0, x1 = canvas.geo.sides[stack]
    kind = block.split(".")[0]
    h = canvas.geo.heights[kind]
    canvas.box(block, x0 + 0.5, y, x1 - 0.5, y + h, COLORS[kind])
    name = block_name(block, canvas.look.words)
    canvas.note(x0 + 1.5, y + h / 2, _link(name, canvas.links.get(cell_id(block, 0)) or canvas.links.get(block)),
                canvas.look.scale.text)
    draw_cell = _draw_attention_cell if kind == "attn" else _draw_value_cell
    for i, cell_x in enumerate(columns):
        draw_cell(canvas, data, block, i, cell_x, y, h)
    return y + (h + canvas.geo.gap)


def _draw_attention_cell(canvas: _Canvas, data: MapData, block: str, i: int, cell_x: tuple[float, float],
                         y: float, h: float) -> None:
    """Layer i's mean-of-heads attention as a thumbnail (at most THUMB_CELLS a side); the decoder's future, which
    no query sees, drawn as masked."""
    cx0, cx1 = cell_x
    attn_kind = ATTN_KINDS[block]
    weights = thumbnail(np.asarray(data.attention[attn_kind][i], dtype=np.float32), THUMB_CELLS)
    if attn_kind == "decoder":
        weights = weights.copy()
        weights[future_mask(attn_kind, *weights.shape)] = np.nan
    ty0, ty1 = y + 5, y + h - 5
    # the ground under the heatmap: NaN cells (the masked future) show it
    canvas.shapes.append(dict(type="rect", x0=cx0, x1=cx1, y0=ty0, y1=ty1, xref="x", yref="y",
                              fillcolor=COLORS["masked"] if attn_kind == "decoder" else "white",
                              line=dict(width=0), layer="below"))
    n_q, n_k = weights.shape
    dx, dy = (cx1 - cx0) / n_k, (ty1 - ty0) / n_q
    canvas.traces.append(go.Heatmap(z=weights[::-1], x0=cx0 + dx / 2, dx=dx, y0=ty0 + dy / 2, dy=dy, zmin=0, zmax=1,
                                    colorscale=ATTENTION_SCALE, showscale=False, hoverinfo="skip",
                                    name=cell_id(block, i)))
    canvas.hover((cx0 + cx1) / 2, (ty0 + ty1) / 2,
                 canvas.look.words("map.hover_attention", block=_plain_name(block, canvas.look.words), i=i,
                                   heads=data.n_heads),
                 cell_id(block, i))


def _draw_value_cell(canvas: _Canvas, data: MapData, block: str, i: int, cell_x: tuple[float, float],
                     y: float, h: float) -> None:
    """Layer i's number: the sigma its LayerNorm divides by, or the size of what its feed-forward network adds."""
    cx0, cx1 = cell_x
    kind, cell = block.split(".")[0], cell_id(block, i)
    value = data.sigma[block][i] if kind == "norm" else data.ff_norm[block.split(".")[1]][i]
    canvas.note((cx0 + cx1) / 2, y + h / 2, _link(f"{value:.1f}", canvas.links.get(cell)), canvas.look.scale.tick,
                anchor="center")
    template = "map.hover_sigma" if kind == "norm" else "map.hover_ff"
    canvas.hover((cx0 + cx1) / 2, y + h / 2,
                 canvas.look.words(template, block=_plain_name(block, canvas.look.words), i=i, value=value), cell)


def _plain_name(block: str, words: Words) -> str:
    """A row's name on one line, for a hover."""
    return block_name(block, words).replace("<br>", " ")


def _draw_stack_frame(canvas: _Canvas, stack: str, columns: list[tuple[float, float]], bottom: float,
                      top: float) -> None:
    """The grey frame around a stack's rows (the paper's "N x"), its name and its layers' numbers over it."""
    look, geo = canvas.look, canvas.geo
    x0, x1 = geo.sides[stack]
    # first in the list: plotly draws the shapes in order, so the frame goes under the rows drawn already
    canvas.shapes.insert(0, dict(type="rect", x0=x0, x1=x1, y0=bottom, y1=top, xref="x", yref="y",
                                 fillcolor=COLORS["frame"], line=dict(color=COLORS["frame_line"], width=2),
                                 layer="below"))
    name = look.words("map.encoder_stack" if stack == "encoder" else "map.decoder_stack", n=len(columns))
    canvas.note(x0, top + 12 * geo.u, name, look.scale.tick, color="#444444")
    for i, (cx0, cx1) in enumerate(columns):
        canvas.note((cx0 + cx1) / 2, top + 12 * geo.u, look.words("map.layer", i=i), look.scale.tick,
                    anchor="center", color="#444444")


def _draw_output_head(canvas: _Canvas, data: MapData, decoder_top: float) -> float:
    """The decoder's head over its stack: the linear layer (d_model -> vocabulary), then the softmax. Returns the
    top of the drawing."""
    geo = canvas.geo
    y = decoder_top + 28 * geo.u
    _draw_linear(canvas, data, y)
    return _draw_probabilities(canvas, data, y + (geo.line_h + geo.gap))


def _draw_linear(canvas: _Canvas, data: MapData, y: float) -> None:
    """The linear block from y up, with its shape: d_model -> vocabulary."""
    look, geo = canvas.look, canvas.geo
    x0, x1 = geo.sides["decoder"]
    canvas.box("linear", x0, y, x1, y + geo.line_h, COLORS["linear"])
    canvas.note(x0 + 1.0, y + geo.line_h / 2, _link(look.words("map.linear"), canvas.links.get("linear")),
                look.scale.text)
    canvas.note(x1 - 1.0, y + geo.line_h / 2,
                look.words("map.linear_value", d_model=data.d_model, vocab=f"{data.vocab:,}"), look.scale.tick,
                anchor="right")
    canvas.hover((x0 + x1) / 2, y + geo.line_h / 2, look.words("map.linear"), "linear")


def _draw_probabilities(canvas: _Canvas, data: MapData, y: float) -> float:
    """The softmax block (not named _draw_softmax: a figure does no softmax, and a test finds any function so
    named): the focused position's most probable token and a strip of every position's p. Returns its top."""
    look, geo = canvas.look, canvas.geo
    x0, x1 = geo.sides["decoder"]
    canvas.box("softmax", x0, y, x1, y + geo.embed_h, COLORS["softmax"])
    canvas.note(x0 + 1.0, y + geo.embed_h / 2, _link(look.words("map.softmax"), canvas.links.get("softmax")),
                look.scale.text)
    if len(data.top_tokens):
        _draw_top_tokens(canvas, data, y)
    canvas.hover((x0 + x0 + geo.name_width) / 2, y + geo.embed_h / 2, look.words("map.softmax"), "softmax")
    return y + geo.embed_h


def _draw_top_tokens(canvas: _Canvas, data: MapData, y: float) -> None:
    """In the softmax block: the focused position's top token and its p in words, then every position's p as
    a strip of green cells (its hover names the token)."""
    look, geo = canvas.look, canvas.geo
    x0, x1 = geo.sides["decoder"]
    focus = data.focus
    token = plotly_text([data.top_tokens[focus]])[0]
    top_text = look.words("map.top_value", token=token, p=f"{data.top_p[focus]:.0%}")
    canvas.note(x0 + geo.name_width + 1.0, y + geo.embed_h / 2, top_text, look.scale.text)
    # the strip starts after the words (x: 100 units a page width), at 62% of the block at the earliest
    # ("最可能 “▁El” 96%" ran under it)
    text_end = x0 + geo.name_width + 2.0 + look.scale.text_px(top_text) * 100 / look.scale.page_px
    strip_x0, strip_x1 = max(x0 + 0.62 * (x1 - x0), text_end), x1 - 1.0
    p = np.asarray(data.top_p, dtype=float)[None, :]
    dx = (strip_x1 - strip_x0) / p.shape[1]
    hovers = [look.words("map.hover_top", i=i, token=tok, p=float(q))
              for i, (tok, q) in enumerate(zip(plotly_text(data.top_tokens), data.top_p))]
    canvas.traces.append(go.Heatmap(z=p, x0=strip_x0 + dx / 2, dx=dx, y0=y + geo.embed_h / 2,
                                    dy=geo.embed_h - 14 * geo.u, zmin=0, zmax=1, colorscale="Greens",
                                    showscale=False, name="softmax", customdata=[hovers],
                                    hovertemplate="%{customdata}<extra></extra>"))


def _draw_encoder_output_arrow(canvas: _Canvas, encoder_top: float) -> None:
    """The encoder's output into every decoder layer's cross-attention (its keys and values), labelled."""
    geo, cross = canvas.geo, canvas.boxes["attn.cross"]
    # stacked: up the right-hand edge into the cross-attention row's end
    head_x, tail_x = (cross[2] + 0.2, 98.5) if geo.stacked else (cross[0], geo.sides["encoder"][1])
    canvas.notes.append(dict(x=head_x, y=(cross[1] + cross[3]) / 2, ax=tail_x, ay=encoder_top,
                             xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=3, arrowsize=1.3,
                             arrowwidth=2.5, arrowcolor="#555555", text=""))
    canvas.note(geo.sides["encoder"][1] - 0.5, encoder_top + 34 * geo.u,
                f"<i>{canvas.look.words('map.encoder_output')}</i>", canvas.look.scale.tick, anchor="right",
                color="#444444")


def _draw_highlights(canvas: _Canvas, highlight: Sequence[str], y_top: float) -> None:
    """A red frame around each highlighted block ("you are here"), and their key at the top left."""
    for block in highlight:
        if block in canvas.boxes:
            bx0, by0, bx1, by1 = canvas.boxes[block]
            canvas.shapes.append(dict(type="rect", x0=bx0 - 0.4, x1=bx1 + 0.4, y0=by0 - 3, y1=by1 + 3, xref="x",
                                      yref="y", line=dict(color=COLORS["highlight"], width=4)))
    if any(b in canvas.boxes for b in highlight):
        canvas.note(canvas.geo.sides["encoder"][0], y_top - 10 * canvas.geo.u,
                    f"<b>▭ {canvas.look.words('map.you_are_here')}</b>", canvas.look.scale.text,
                    color=COLORS["highlight"])


def _draw_hover_points(canvas: _Canvas) -> None:
    """An invisible point over every block and cell, as one trace: its hover names what is under it and, with
    links, its customdata is the cell id a page's on_select reads (map_cell)."""
    click = canvas.look.words("map.click")
    hints = [f"{text}<br><i>{click}</i>" if canvas.links else text for text in canvas.hover_text]
    canvas.traces.append(go.Scatter(x=canvas.hover_x, y=canvas.hover_y, mode="markers",
                                    marker=dict(size=24, color="rgba(0,0,0,0)"), customdata=canvas.hover_cell,
                                    text=hints, hovertemplate="%{text}<extra></extra>", showlegend=False,
                                    name="cells"))


def _map_layout(canvas: _Canvas, title: str, y_top: float) -> dict:
    """Bare axes in the drawing's units (x 0-100, y px), every shape and note, no zoom or drag; as high as the
    drawing."""
    scale = canvas.look.scale
    margin_top = 50 if title else 12
    height = int(y_top + 8 + margin_top + 8)
    bare = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False, fixedrange=True)
    return dict(xaxis=dict(bare, range=[0, 100]), yaxis=dict(bare, range=[0, y_top + 8]), shapes=canvas.shapes,
                annotations=canvas.notes, title=dict(text=title, font=scale.font("title")), height=height,
                font=scale.font("text"), hoverlabel=dict(font=scale.font("text")),
                margin=dict(l=6, r=6, t=margin_top, b=8), plot_bgcolor="white", showlegend=False,
                hovermode="closest", dragmode=False)


def block_name(block: str, words: Words) -> str:
    """A stack row's name in the reader's words: the attention's kind, or what the sublayer shows per layer."""
    names = {"attn.encoder": "map.self_attention", "attn.decoder": "map.masked_attention",
             "attn.cross": "map.cross_attention"}
    if block in names:
        return words(names[block])
    if block.startswith("ff."):
        return f"{words('map.feed_forward')} · {words('map.ff_size')}"
    return f"{words('map.add_norm')} · {words('map.sigma')}"


def map_cell(point: dict) -> str | None:
    """The cell id of a point clicked in `model_map`; None for anything else."""
    data = point.get("customdata")
    if isinstance(data, list):
        data = data[0] if data else None
    try:
        parse_cell(data)
    except (TypeError, ValueError):
        return None
    return data


TOUR_BLOCKS = {  # the tour's step key -> the blocks it explains ("you are here")
    "tokens": ("embed.encoder", "embed.decoder"), "positional": ("embed.encoder", "embed.decoder"),
    "one_head": ("attn.encoder",), "multi_head": ("attn.encoder",),
    "add_norm": ("norm.encoder.norm_attn", "norm.encoder.norm_ff"),
    "decoder": ("attn.decoder", "attn.cross"), "decoding": ("linear", "softmax"),
    "heads": ("attn.encoder", "attn.decoder", "attn.cross"), "zoo": ("attn.encoder", "attn.decoder", "attn.cross"),
    "learn": (), "ffn": ("ff.encoder", "ff.decoder"), "regularize": ("softmax",),
}
