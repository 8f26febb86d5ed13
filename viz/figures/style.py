"""One look for every figure: one type scale (normal and presenter), shared colour scales, masked cells
drawn as masked, input checks, and one way for words and sizes to reach a figure (Look: Words and a TypeScale)."""
from __future__ import annotations

import copy
import functools
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots


# -- words ----------------------------------------------------------------------------------------
class Words(Protocol):
    """The reader's words, the one way a builder gets any (in its look, Look.words): words(key, **fields) is the
    catalogue's message `key` (viz/locales) in the reader's language, {fields} filled in; words.kind(kind) names an
    attention kind.
    viz.core.i18n.words(lang) makes one. A builder names the keys it draws itself, so its signature holds data and a
    few options (not a parameter per word), no English copy of the catalogue lives in Python, the key test finds
    every key a figure uses, and a figure never decides the language (it has no session to read it from)."""

    def __call__(self, key: str, **fields) -> str: ...

    def kind(self, kind: str) -> str: ...


class Labels(NamedTuple):
    """A chart's own words where one builder serves several pictures (a score map, a rollout, a difference):
    its title, the x and y axes' titles and the name of its values (colour bar, hover), composed by the caller
    from its words."""
    title: str
    x: str
    y: str
    value: str


# -- the type scale -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TypeScale:
    """Every size of chart text, in CSS px (plotly draws its fonts at the size given: no scaling).

    A builder takes one in its look (Look.scale, NORMAL by default) and sizes its texts by role, never by a number
    of its own; pages pass PRESENTER in presenter mode (viz/elements/ui.look); the helpers below take the scale itself. `page_px` is about how wide
    the page's main area is at a projector's 1280x720 (normal: sidebar open; presenter: sidebar folded),
    for builders that plan cells and line breaks. `cell` is the smallest text a chart shows: a grid
    whose cells cannot hold a number at that size drops its numbers (hover keeps them), `numbers_fit`."""
    name: str
    title: int       # a figure's title
    text: int        # axis titles, legends, colour bars, panel titles, notes on the plot
    tick: int        # tick labels (tokens, numbers on axes)
    cell: int        # numbers in heatmap cells and on bars: the floor
    page_px: int     # main-area width at 1280x720
    ink: str | None = None   # colour of every text but cell numbers (None: the chart theme's, a grey)
    narrow: bool = False     # a phone's column: a title longer than page_px wraps (typeset)

    def font(self, role: str = "text", **extra) -> dict:
        """A plotly font dict for a role ("title", "text", "tick", "cell"), with extra keys (color...). Cell
        numbers keep plotly's own colour, which contrasts with each cell (white on dark)."""
        ink = {"color": self.ink} if self.ink and role != "cell" else {}
        return {**ink, **extra, "size": getattr(self, role)}

    def numbers_fit(self, cell_w_px: float, cell_h_px: float | None = None, chars: int = 4) -> bool:
        """Whether a cell cell_w_px wide (and cell_h_px high) holds a number of `chars` characters
        ("0.42") at the cell size with a little room: ~0.6 em a digit, 1.25 em of height."""
        wide_enough = cell_w_px >= chars * 0.6 * self.cell + 6
        return wide_enough and (cell_h_px is None or cell_h_px >= 1.25 * self.cell)

    def column_px(self, share: float = 0.5) -> float:
        """About how wide a chart in a page column `share` of the page wide is drawn: on a phone (narrow) Streamlit
        stacks columns under one another, each the page's width (a map planned for half of 350 px showed 3 of a
        9-word sentence's 12 tokens in a 350 px column)."""
        return self.page_px if self.narrow else share * self.page_px

    def text_px(self, text: str, role: str = "text") -> float:
        """About how many px a one-line text takes at a role's size (CJK characters a full em)."""
        return sum(1.0 if wide(c) else 0.56 for c in text) * getattr(self, role)


def wide(char: str) -> bool:
    """A character a full em wide (Chinese, Japanese, Korean, full-width punctuation): a line may break at it."""
    return unicodedata.east_asian_width(char) in "WF"


TEXT_COLOR = "#31333F"         # the page's body text (Streamlit's light theme)
NORMAL = TypeScale("normal", title=17, text=16, tick=14, cell=13, page_px=820)
PHONE = TypeScale("phone", title=15, text=14, tick=12, cell=11, page_px=350, narrow=True)   # a 390 px screen
# The back row at 1280x720: no text under 20 px (about 15 pt of a 540 pt slide), in the text's colour.
PRESENTER = TypeScale("presenter", title=26, text=22, tick=20, cell=20, page_px=1220, ink=TEXT_COLOR)
TYPE_SCALES = {s.name: s for s in (NORMAL, PRESENTER)}


@dataclass(frozen=True)
class Look:
    """How a figure reads and how big its text is: the reader's words (Words, their language) and the type scale,
    the one argument every builder takes for both (`look`), after its data. The page's comes from
    viz/elements/ui.look() (the session's language; NORMAL, PRESENTER or PHONE); the lesson and the command line
    make their own, Look(words("zh"), PRESENTER). No default words: a figure never picks the language."""
    words: Words
    scale: TypeScale = NORMAL
BASE_FONT = NORMAL.font()      # kept for callers that only need the normal body font
ATTENTION_SCALE = "Blues"          # sequential, 0 = white: an absent link looks absent
DIVERGING_SCALE = "RdBu_r"         # signed values (Q, K, V, scores, activations): 0 = white
LINE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def typeset(layout: dict, type_scale: TypeScale = NORMAL) -> dict:
    """Give every text of a layout dict its size from the scale: the body font, the title, the legend,
    the hover label, each axis's ticks and title, colour axes' bars and the annotations (panel titles,
    notes; an annotation's own colour or weight stays). Explicit sizes, because Streamlit's chart theme
    otherwise sets its own (12 px ticks and legends). Called by each builder on the layout it builds."""
    s = type_scale
    layout["font"] = {**s.font("text"), **layout.get("font", {}), "size": s.text}
    if isinstance(layout.get("title"), dict):
        layout["title"]["font"] = {**s.font("title"), **layout["title"].get("font", {}), "size": s.title}
        if s.narrow:
            wrap_title(layout, s)
            wrap_panel_titles(layout, s)
        title_on_top(layout, s)
    layout["legend"] = {**layout.get("legend", {}), "font": {**s.font("text"), **layout.get("legend", {}).get("font", {}),
                                                              "size": s.text}}
    layout["hoverlabel"] = {**layout.get("hoverlabel", {}), "font": dict(size=s.text)}
    for name, axis in layout.items():
        if (name.startswith("xaxis") or name.startswith("yaxis")) and isinstance(axis, dict):
            axis["tickfont"] = {**s.font("tick"), **axis.get("tickfont", {}), "size": s.tick}
            if isinstance(axis.get("title"), dict):
                axis["title"]["font"] = {**s.font("text"), **axis["title"].get("font", {}), "size": s.text}
                if s.narrow and name.startswith("xaxis") and axis["title"].get("text"):
                    # a phone's column: an axis title longer than its axis in lines (plotly cut it at the edge)
                    a, b = axis.get("domain") or (0, 1)
                    room = (b - a) * ((layout.get("width") or s.page_px) - 20) - 4
                    text = str(axis["title"]["text"])
                    axis["title"]["text"] = "<br>".join(line for part in text.split("<br>")
                                                        for line in wrapped(part, s, room))
        elif name.startswith("coloraxis") and isinstance(axis, dict) and "colorbar" in axis:
            axis["colorbar"] = colorbar_sizes(axis["colorbar"], s)
    for note in layout.get("annotations", []):
        note["font"] = {**s.font("text"), **(note.get("font") or {}), "size": s.text}
    return layout


def title_on_top(layout: dict, type_scale: TypeScale) -> None:
    """A title at the figure's top edge and the top margin tall enough for it and the panel titles under it: plotly
    centres a title in the top margin, so a two-line one was cut at the top ("Learned gain and bias") and one over
    panels ran over their titles (step-through's scaling, the heads' grid, the tour's steps)."""
    title = layout["title"]
    text = str(title.get("text") or "")
    lines = text.count("<br>") + 1
    # plotly anchors a title of several lines too high by about 0.7 em: its first line was cut at the top
    lifted = int(0.7 * type_scale.title) if lines > 1 else 0
    if not text or "y" in title:                  # a builder that placed its title itself keeps it there, lowered
        if lifted and title.get("yanchor") == "top":
            title["pad"] = {**title.get("pad", {}), "t": title.get("pad", {}).get("t", 0) + lifted}
            _grow_top(layout, lifted)
        return
    title.update(yref="container", y=1.0, yanchor="top", pad={"t": 8 + lifted, **title.get("pad", {})})
    need = 8 + lifted + lines * 1.3 * type_scale.title + 6
    panel_titles = [note for note in layout.get("annotations", []) if isinstance(note, dict)
                    and note.get("yref") == "paper" and note.get("yanchor") == "bottom" and note.get("y", 0) >= 0.999]
    if panel_titles:
        need += max(str(n.get("text", "")).count("<br>") + 1 for n in panel_titles) * 1.3 * type_scale.text + 6
    _grow_top(layout, int(need - layout.get("margin", {}).get("t", 100)))


def _grow_top(layout: dict, px: int) -> None:
    """The top margin and the figure px taller (nothing when px <= 0)."""
    if px <= 0:
        return
    margin = layout.setdefault("margin", {})
    margin["t"] = margin.get("t", 100) + px
    if layout.get("height"):
        layout["height"] += px


def wrap_title(layout: dict, type_scale: TypeScale) -> None:
    """A title wider than the figure broken into lines at spaces (between any two CJK characters), the top
    margin and the height grown by the added lines: plotly cuts a long title off at the figure's edge."""
    title = layout["title"]
    room = (layout.get("width") or type_scale.page_px) - 24
    parts = str(title.get("text") or "").split("<br>")               # its own line breaks stay
    lines = [line for part in parts for line in wrapped(part, type_scale, room, "title")]
    if len(lines) <= len(parts):
        return
    title["text"] = "<br>".join(lines)
    added = (len(lines) - len(parts)) * round(1.3 * type_scale.title)
    layout["margin"] = {**layout.get("margin", {}), "t": layout.get("margin", {}).get("t", 80) + added}
    if layout.get("height"):
        layout["height"] += added


def wrap_panel_titles(layout: dict, type_scale: TypeScale) -> None:
    """Each panel title (an annotation centred over its panel, as make_subplots writes them) wider than its panel
    broken into lines (title_on_top then makes room for them): in a phone's column three panels side by side are
    ~100 px each, and their one-line titles ran over one another and past the figure's edge."""
    width = (layout.get("width") or type_scale.page_px) - sum(layout.get("margin", {}).get(k, 10) for k in "lr")
    domains = [axis["domain"] for name, axis in layout.items() if name.startswith("xaxis") and isinstance(axis, dict)
               and isinstance(axis.get("domain"), (list, tuple))]
    for note in layout.get("annotations", []):
        text = str(note.get("text") or "")
        if not text or note.get("xref", "paper") != "paper" or note.get("xanchor", "center") != "center":
            continue
        x = note.get("x", 0.5)
        share = min((b - a for a, b in domains if abs((a + b) / 2 - x) < 0.02), default=1.0)
        room = share * width - 4
        lines = [line for part in text.split("<br>") for line in wrapped(part, type_scale, room)]
        if len(lines) > text.count("<br>") + 1:
            note["text"] = "<br>".join(lines)


def wrapped(text: str, type_scale: TypeScale, room_px: float, role: str = "text") -> list[str]:
    """`text` in lines of at most room_px at a role's size; a tag (<b>) counts no width and is never cut, nor a
    number from the word before it ("head 0")."""
    text = re.sub(r"(?<=\w) (?=\d+\b)", "\u00a0", text)
    pieces = []
    for part in filter(None, re.split(r"(<[^>]+>| +)", text)):        # tags and runs of spaces whole
        if part.startswith(("<", " ")):
            pieces.append(part)
        else:                                                          # a word; each wide character one of its own
            pieces += [c for is_wide, run in itertools.groupby(part, key=wide)
                       for c in (list(run) if is_wide else ["".join(run)])]
    lines, line = [], ""
    for piece in pieces:
        if line and not piece.startswith("<") and type_scale.text_px(re.sub(r"<[^>]+>", "", line + piece), role) > room_px:
            lines.append(line.rstrip())
            line = "" if piece.startswith(" ") else piece
        else:
            line += piece
    return [*lines, line.rstrip()] if line.strip() else lines


def colorbar_sizes(colorbar: dict, type_scale: TypeScale = NORMAL) -> dict:
    """A colour bar dict with its ticks and title at the scale's sizes."""
    bar = dict(colorbar, tickfont={**type_scale.font("tick"), **colorbar.get("tickfont", {}), "size": type_scale.tick})
    if isinstance(bar.get("title"), dict):
        bar["title"] = dict(bar["title"], font={**type_scale.font("text"), **bar["title"].get("font", {}),
                                                "size": type_scale.text})
    if type_scale.narrow and bar.get("orientation") != "h":
        # a phone's column: the bar thin, its name along it, not over it ("attention weight" took 110 of the
        # column's 350 px, and the map left out every second token's label in what was left), few numbers
        bar = slim_colorbar(bar)
    return bar


def slim_colorbar(bar: dict) -> dict:
    """A vertical colour bar that takes little width: thin, its name along it, the scale's ends and little between
    ("0", "1"). A phone's charts, and a map in half a page (compare's: its keys need the width)."""
    bar = dict(bar, thickness=min(bar.get("thickness", 14), 10), xpad=4)
    if "tickvals" not in bar and "nticks" not in bar:
        bar["nticks"] = 2
    if isinstance(bar.get("title"), dict):
        bar["title"] = dict(bar["title"], side="right")
    return bar


def colorbar(title: str, type_scale: TypeScale = NORMAL, thickness: int = 14, **extra) -> dict:
    """A trace's colour bar titled `title`, sized by the scale."""
    return colorbar_sizes(dict(extra, title=dict(text=title), thickness=thickness), type_scale)


# -- masked cells ---------------------------------------------------------------------------------
MASKED_COLOR = "#bdbdbd"        # a masked cell: grey, no number (never a white "0.00")


def masked_z(z, mask) -> np.ndarray:
    """The matrix with masked cells set to NaN: plotly draws no colour, no number and no hover there;
    `mask_overlay` paints them grey."""
    z = np.array(z, dtype=float)
    if mask is None:
        return z
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != z.shape:
        raise ValueError(f"mask of shape {mask.shape} does not match the matrix's {z.shape}")
    z[mask] = np.nan
    return z


def mask_overlay(mask, x=None, y=None, **trace) -> dict:
    """Grey cells where `mask` is True (nothing elsewhere), drawn over a heatmap of the same x and y:
    the one look of a masked cell on every page. No hover, no colour bar; `mask_legend` names them. A plain trace
    dict (None values left out, as plotly's checks leave them): checked figures take it as they take a go.Heatmap,
    and the unchecked builders (trusted_figure) take it as it is."""
    mask = np.asarray(mask, dtype=bool)
    return _given(dict(type="heatmap", z=np.where(mask, 1.0, np.nan), x=x, y=y, zmin=0, zmax=1, showscale=False,
                       colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]], hoverinfo="skip", hoverongaps=False,
                       **trace))


def mask_legend(label: str, **trace) -> dict:
    """The legend entry naming the grey cells: a grey square that draws nothing on the plot (a plain trace dict,
    as mask_overlay's)."""
    return _given(dict(type="scatter", x=[None], y=[None], mode="markers", name=label, showlegend=True,
                       hoverinfo="skip", marker=dict(symbol="square", size=16, color=MASKED_COLOR,
                                                     line=dict(color="#888", width=1)), **trace))


def _given(trace: dict) -> dict:
    """A trace dict without its None values (a property not given)."""
    return {name: value for name, value in trace.items() if value is not None}


def legend_above(layout: dict) -> dict:
    """The legend in one row at the figure's top right, across from the title (where the mask's entry
    reads), clear of the plot and of labels above it."""
    layout["showlegend"] = True
    layout["legend"] = dict(layout.get("legend", {}), orientation="h", yref="container", yanchor="top", y=0.995,
                            xanchor="right", x=1.0, bgcolor="rgba(255,255,255,0)")
    return layout


def legend_lines(names, type_scale: TypeScale = NORMAL, width_px: float | None = None) -> int:
    """How many lines a horizontal legend of `names` takes in a figure width_px wide (default: the scale's
    page width): plotly wraps whole entries (about 50 px of symbol and gap each) at the plot's width."""
    room, lines, x = max((width_px or type_scale.page_px) - 140, 200), 1, 0.0
    for name in names:
        entry = type_scale.text_px(str(name)) + 50
        if x and x + entry > room:
            lines, x = lines + 1, 0.0
        x += entry
    return lines


def legend_under_title(layout: dict, names, type_scale: TypeScale = NORMAL, width_px: float | None = None) -> dict:
    """A horizontal legend between the title and the plot, with room for both: the title at the figure's top,
    the top margin its line plus every line the legend needs (`legend_lines`), the plot keeping its height.
    A fixed 60 px margin drew a two-line legend (Chinese, presenter sizes, a half-page figure) over the title."""
    s = type_scale
    title = layout.get("title") or {}
    title_px = 30 + 1.4 * s.title if title.get("text") else 8
    top = int(title_px + legend_lines(names, s, width_px) * 1.5 * s.text)
    old_top = layout.get("margin", {}).get("t", 60)
    layout["title"] = dict(title, yref="container", y=1, yanchor="top", pad=dict(t=6))
    layout["legend"] = dict(layout.get("legend", {}), orientation="h", yanchor="bottom", y=1.0, x=0)
    layout["margin"] = dict(layout.get("margin", {}), t=top)
    layout["height"] = int(layout.get("height", 450) + max(0, top - old_top))
    return layout


def plotly_text(labels: list[str]) -> list[str]:
    """Plotly reads '<...>' in text as markup ('</s>' would vanish, '<a href>' would become a link):
    escape it so tokens show exactly as typed."""
    return [str(t).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for t in labels]


def cell_numbers(m, missing: str, digits: int = 2) -> list[list[str]]:
    """A matrix's cell labels at `digits` decimals, a value that rounds to zero written without its sign
    (-0.001 as "0.00", not "-0.00", which reads as a measured negative); `missing` where there is no number."""
    return [[format(round(float(v), digits) + 0.0, f".{digits}f") if np.isfinite(v) else missing for v in row]
            for row in np.asarray(m, dtype=float)]


def check_matrix(m, n_rows: int, n_cols: int) -> np.ndarray:
    m = np.asarray(m, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {m.shape}")
    if m.shape != (n_rows, n_cols):
        raise ValueError(f"matrix shape {m.shape} does not match {n_rows} row and {n_cols} column labels")
    return m


def token_axes(x_title: str, y_title: str, type_scale: TypeScale = NORMAL) -> dict:
    """Layout entries for token axes: every label shown, rows top-to-bottom in reading order.

    Figures on a hot path are built in one go, `go.Figure(data, layout)`: each `update_*` call parses
    and validates its property paths anew, which made two heatmaps cost ~19 ms of the server's
    single-threaded Python per new sentence instead of ~5 ms."""
    ticks = dict(type="category", automargin=True, tickfont=type_scale.font("tick"))
    title_font = type_scale.font("text")
    # a phone's column: the rows' title left to the hover and the caption, its 30 px to the map (with it, 12 keys
    # had 150 px in presenter mode and plotly drew every second one)
    y_title = "" if type_scale.narrow else y_title
    return dict(xaxis=dict(ticks, title=dict(text=x_title, font=title_font), tickangle=-45),
                yaxis=dict(ticks, title=dict(text=y_title, font=title_font), autorange="reversed"))


def trusted_figure(spec: dict) -> go.Figure:
    """A figure of many plain-dict traces ({data, layout}: a builder's spec) built without plotly's per-property
    checks: the head view's ~85-170 line traces took ~110 ms to validate at 32 tokens, ~20 ms unchecked. Only for
    builders whose tests check the result the long way (go.Figure(fig.to_dict()) gives the same JSON)."""
    return go.Figure(spec["data"], layout=spec["layout"], _validate=False)


@functools.lru_cache(maxsize=None)
def colorscale(name: str) -> tuple:
    """A named colour scale as plotly.py's checks write it into a figure ([position, colour] pairs): what an
    unchecked figure (trusted_figure) holds instead of the name, which plotly.js may not know ("RdBu_r")."""
    return go.Heatmap(colorscale=name).colorscale


def symmetric_range(*arrays) -> float:
    """Half-width for a diverging colour scale centred on zero."""
    peak = max(float(np.nanmax(np.abs(a))) if np.size(a) else 0.0 for a in arrays)
    return peak or 1.0


def signed_heatmap(m: np.ndarray, row_labels: list[str], col_labels: list[str], labels: Labels,
                   zmax: float | None = None, type_scale: TypeScale = NORMAL) -> go.Figure:
    """A signed matrix on a diverging scale centred at 0 (Q, K, V, activations, scores), titled by `labels`."""
    return trusted_figure(signed_heatmap_spec(m, row_labels, col_labels, labels, zmax, type_scale))


def signed_heatmap_spec(m: np.ndarray, row_labels: list[str], col_labels: list[str], labels: Labels,
                        zmax: float | None = None, type_scale: TypeScale = NORMAL) -> dict:
    """signed_heatmap's figure as a spec ({data: [the heatmap], layout}: plain dicts), for a builder that adds to it
    before it is built (the step-through's maps: their numbers, a framed row, thinned labels)."""
    title, x_title, y_title, value_name = labels
    m = check_matrix(m, len(row_labels), len(col_labels))
    # under the plot: the slanted column labels (45°: ~0.71 of the longest, plus a line) and the axis title
    below = 0.71 * max((type_scale.text_px(str(c), "tick") for c in col_labels), default=0) + type_scale.tick
    row_labels, col_labels = plotly_text(row_labels), plotly_text(col_labels)
    zmax = zmax or symmetric_range(m)
    heatmap = dict(type="heatmap", z=m, x=col_labels, y=row_labels, zmin=-zmax, zmax=zmax,
                   colorscale=colorscale(DIVERGING_SCALE), colorbar=colorbar(value_name, type_scale),
                   textfont=type_scale.font("cell"),
                   hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{value_name} %{{z:.4f}}<extra></extra>")
    # each row as tall as its label needs, or plotly drops every second one (presenter: 140 px for the title
    # and the slanted labels left 21 px rows for 18 px labels)
    row_px = max(24, 1.45 * type_scale.tick)
    below += 1.6 * type_scale.text + 20
    layout = dict(token_axes(x_title, y_title, type_scale), title=dict(text=title),
                  height=int(max(320, min(800, 60 + below + row_px * len(row_labels)))),
                  margin=dict(l=10, r=10, t=60, b=10))
    # built unchecked (trusted_figure): every step-through step, cosine map and multi-head matrix is one, plotly's
    # checks half their build (tests/test_figures_step.py checks them the long way)
    return {"data": [heatmap], "layout": typeset(layout, type_scale)}


HIGHLIGHT = "#d62728"          # the followed row's frame


def frame_row(layout: dict, row: int | None, n_rows: int) -> dict:
    """A red frame around one row of a heatmap's layout (the query being followed)."""
    if row is not None and 0 <= row < n_rows:
        layout["shapes"] = [*layout.get("shapes", []), dict(type="rect", xref="paper", x0=0, x1=1, yref="y",
                                                             y0=row - 0.5, y1=row + 0.5, line=dict(color=HIGHLIGHT, width=3))]
    return layout


def vline(x, line: dict) -> dict:
    """A vertical line at data x across the plot, as fig.add_vline draws it, for a layout's shapes."""
    return dict(type="line", xref="x", x0=x, x1=x, yref="y domain", y0=0, y1=1, line=line)


def hline(y, line: dict) -> dict:
    """A horizontal line at data y across the plot, as fig.add_hline draws it, for a layout's shapes."""
    return dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y, line=line)

# -- subplot grids, built in one go (see token_axes for why) -----------------------------------------
def subplot_layout(titles=(), **grid) -> dict:
    """The layout `make_subplots(subplot_titles=titles, **grid)` starts from (axis domains and anchors,
    shared axes, subplot-title annotations) as a fresh dict; traces name their axes (`subplot_axes`).
    make_subplots costs 10-30 ms a call, so each grid shape is laid out once with placeholder titles
    and the real titles are filled in. Empty titles get no annotation, as in make_subplots."""
    layout = copy.deepcopy(_grid_layout(tuple(bool(t) for t in titles), json.dumps(grid, sort_keys=True)))
    for note, text in zip(layout.get("annotations", []), [t for t in titles if t]):
        note["text"] = text
    return layout


@functools.lru_cache(maxsize=64)
def _grid_layout(has_title: tuple[bool, ...], grid: str) -> dict:
    fig = make_subplots(subplot_titles=["·" if t else "" for t in has_title], **json.loads(grid))
    return {k: v for k, v in fig.layout.to_plotly_json().items() if k != "template"}  # go.Figure adds it


def axis_suffix(i: int) -> str:
    """Axis number of the i-th panel (from 0, row by row) as make_subplots numbers them: '', '2', '3'..."""
    return str(i + 1) if i else ""


def subplot_axes(i: int) -> dict:
    """The axes of the i-th panel of a subplot grid, for its trace."""
    return dict(xaxis="x" + axis_suffix(i), yaxis="y" + axis_suffix(i))


def update_axes(layout: dict, axis: str, **settings) -> dict:
    """What fig.update_xaxes / update_yaxes (axis "x" / "y") do to every panel, on a layout dict."""
    for name, value in layout.items():
        if name.startswith(f"{axis}axis"):
            value.update(settings)
    return layout
