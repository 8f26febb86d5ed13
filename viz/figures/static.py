"""The app's plotly figures as static matplotlib figures (PDF, SVG, PNG for slides and papers, no browser): one
converter, so a static figure has the app's words and colours by construction, never a second drawing.

What it carries over: heatmaps (colour scale, its bounds, gaps for masked cells, numbers in cells), bars,
scatter lines and markers, on every subplot (each axis pair at its layout domain); the title, axis titles,
tick labels (tickvals/ticktext or the categories), reversed axes, legends, colour bars, annotations and line or
rectangle shapes. Hover text and interaction have no static form and are left out.
"""
from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")          # no display: a server, a test, a script
import matplotlib.font_manager
import matplotlib.patches
import matplotlib.pyplot as plt
import matplotlib.transforms
import numpy as np
import plotly.graph_objects as go
from matplotlib.colors import LinearSegmentedColormap, to_rgba
from plotly.colors import DEFAULT_PLOTLY_COLORS

FORMATS = ("pdf", "svg", "png")
PX_PER_INCH = 100              # plotly sizes in CSS pixels; 100 px to the inch keeps its proportions
DEFAULT_SIZE = (700, 450)      # plotly's own default width and height
DEFAULT_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}
PT_PER_PX = 0.75               # a CSS pixel is 0.75 point
TEXT_AS_TEXT = {"svg.fonttype": "none", "pdf.fonttype": 42}   # words stay text (found, edited), not outlines
CJK_FONTS = ("Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "SimHei")
_TAG = re.compile(r"<[^>]+>")
_Z_FORMAT = re.compile(r"%\{(z|text)(?::([^}]*))?\}")


def plain_text(text) -> str:
    """Plotly's text (a subset of HTML: <br>, <b>, <sub>, entities) as the characters a reader sees."""
    if text is None:
        return ""
    return html.unescape(_TAG.sub("", re.sub(r"<br\s*/?>", "\n", str(text), flags=re.I)))


def colour(value, opacity: float = 1.0):
    """A plotly colour ('rgb(1,2,3)', 'rgba(...)', '#abc', a name) as matplotlib's RGBA."""
    if value is None:
        return None
    text = str(value).strip()
    if text.startswith("rgb"):
        parts = text[text.index("(") + 1:text.rindex(")")].split(",")
        r, g, b = (float(p) / 255 for p in parts[:3])
        a = float(parts[3]) if len(parts) > 3 else 1.0
        return (r, g, b, a * opacity)
    rgba = to_rgba(text)
    return (*rgba[:3], rgba[3] * opacity)


def colormap(scale) -> LinearSegmentedColormap:
    """A plotly colour scale ([[0, colour], ..., [1, colour]]) as a matplotlib colour map."""
    return LinearSegmentedColormap.from_list("plotly", [(float(p), colour(c)) for p, c in scale])


def _font_pt(font: dict | None, default_px: float) -> float:
    return float((font or {}).get("size") or default_px) * PT_PER_PX


class _Axes:
    """One plotly axis pair drawn as matplotlib axes; categories become positions 0, 1, ... in order."""

    def __init__(self, ax, xaxis: dict, yaxis: dict):
        self.ax, self.xaxis, self.yaxis = ax, xaxis, yaxis
        self.categories: dict[str, dict] = {"x": {}, "y": {}}

    def positions(self, values, axis: str) -> np.ndarray:
        values = list(values)
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
            return np.asarray(values, dtype=float)
        seen = self.categories[axis]
        for v in values:
            seen.setdefault(str(v), len(seen))
        return np.asarray([seen[str(v)] for v in values], dtype=float)


def _arrays(value):
    """`value` with plotly's typed arrays ({'dtype', 'bdata', 'shape'}: numpy arrays in its JSON) as numpy arrays."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            shape = value.get("shape")
            return array.reshape([int(n) for n in str(shape).split(",")]) if shape else array
        return {k: _arrays(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_arrays(v) for v in value]
    return value


def fonts() -> dict:
    """matplotlib's settings for the figures: DejaVu Sans, then the first Chinese font installed (matplotlib falls
    back glyph by glyph, so a 中文 figure needs one: Debian's fonts-noto-cjk or fonts-wqy-microhei)."""
    installed = {f.name for f in matplotlib.font_manager.fontManager.ttflist}
    return TEXT_AS_TEXT | {"font.family": ["DejaVu Sans", *[f for f in CJK_FONTS if f in installed][:1]]}


def to_matplotlib(fig: go.Figure) -> plt.Figure:
    """A matplotlib figure of `fig`: same size, words and colours (see the module's docstring)."""
    with plt.rc_context(fonts()):
        return _draw(fig)


def _draw(fig: go.Figure) -> plt.Figure:
    spec = _arrays(fig.to_plotly_json())
    layout = spec.get("layout", {})
    template = fig.layout.template.layout if fig.layout.template else None
    width, height = layout.get("width") or DEFAULT_SIZE[0], layout.get("height") or DEFAULT_SIZE[1]
    margin = DEFAULT_MARGIN | {k: v for k, v in (layout.get("margin") or {}).items() if v is not None}
    font_px = (layout.get("font") or {}).get("size") or 12
    text_colour = colour((layout.get("font") or {}).get("color") or "#2a3f5f")
    out = plt.figure(figsize=(width / PX_PER_INCH, height / PX_PER_INCH), dpi=PX_PER_INCH)
    out.patch.set_facecolor(colour(layout.get("paper_bgcolor") or "white"))
    area = (margin["l"] / width, margin["b"] / height,
            1 - (margin["l"] + margin["r"]) / width, 1 - (margin["t"] + margin["b"]) / height)
    colourway = list(layout.get("colorway") or (template.colorway if template and template.colorway else ())
                     or DEFAULT_PLOTLY_COLORS)
    axes: dict[tuple[str, str], _Axes] = {}
    shared: dict[str, object] = {}                 # coloraxis name -> one of its heatmaps (one colour bar each)
    for i, trace in enumerate(spec.get("data", [])):
        key = (trace.get("xaxis") or "x", trace.get("yaxis") or "y")
        if key not in axes:
            axes[key] = _new_axes(out, layout, area, key, font_px, text_colour)
        if trace.get("coloraxis"):              # the colour scale of several heatmaps, in the layout
            scale = layout.get(trace["coloraxis"]) or {}
            trace = {"colorscale": scale.get("colorscale"), "zmin": scale.get("cmin"), "zmax": scale.get("cmax"),
                     "zmid": scale.get("cmid"), "colorbar": scale.get("colorbar"), "reversescale":
                     scale.get("reversescale"), **trace, "showscale": False}
            trace = {k: v for k, v in trace.items() if v is not None}
        drawn = _draw_trace(out, axes[key], trace, colourway[i % len(colourway)], font_px)
        if trace.get("coloraxis") and drawn is not None:
            shared.setdefault(trace["coloraxis"], (drawn, trace))
    for name, (mesh, trace) in shared.items():
        if (layout.get(name) or {}).get("showscale", True) is not False:
            _colour_bar(out, mesh, [a.ax for a in axes.values()], trace, font_px)
    for target in axes.values():
        _finish_axes(target, font_px, text_colour, layout)
    _draw_shapes(layout, axes, area)
    _draw_annotations(out, layout, axes, area, font_px, text_colour)
    title = layout.get("title") or {}
    if title.get("text"):
        out.text(area[0] if title.get("x") is None else float(title["x"]), 1 - 12 / height, plain_text(title["text"]),
                 ha="left", va="top", fontsize=_font_pt(title.get("font"), font_px * 1.4), color=text_colour)
    return out


def _domain(axis: dict) -> tuple[float, float]:
    d = axis.get("domain") or (0, 1)
    return float(d[0]), float(d[1])


def _new_axes(out, layout: dict, area, key: tuple[str, str], font_px: float, text_colour) -> _Axes:
    xaxis = layout.get("xaxis" + key[0][1:], {}) or {}
    yaxis = layout.get("yaxis" + key[1][1:], {}) or {}
    (x0, x1), (y0, y1) = _domain(xaxis), _domain(yaxis)
    left, bottom, w, h = area
    ax = out.add_axes((left + x0 * w, bottom + y0 * h, (x1 - x0) * w, (y1 - y0) * h))
    ax.set_facecolor(colour(layout.get("plot_bgcolor") or "white"))
    ax.tick_params(labelsize=font_px * PT_PER_PX, colors=text_colour)
    for side in ax.spines.values():
        side.set_color((0.8, 0.8, 0.8, 1))
    return _Axes(ax, xaxis, yaxis)


def _draw_trace(out, target: _Axes, trace: dict, default_colour: str, font_px: float):
    """Draws one trace; returns a heatmap's mesh (for a shared colour bar), else None."""
    kind = trace.get("type", "scatter")
    if trace.get("visible") is False:
        return None
    if kind == "heatmap":
        return _draw_heatmap(out, target, trace, font_px)
    if kind == "bar":
        _draw_bar(target, trace, default_colour)
    elif kind in ("scatter", "scattergl"):
        _draw_scatter(target, trace, default_colour)
    return None


def _draw_heatmap(out, target: _Axes, trace: dict, font_px: float):
    z = np.asarray([[np.nan if v is None else v for v in row] for row in trace.get("z")], dtype=float)
    if z.ndim != 2:
        return None
    rows, cols = z.shape
    xs = target.positions(trace["x"], "x") if trace.get("x") is not None else np.arange(cols, dtype=float)
    ys = target.positions(trace["y"], "y") if trace.get("y") is not None else np.arange(rows, dtype=float)
    finite = z[np.isfinite(z)]
    low = trace.get("zmin", float(finite.min()) if finite.size else 0.0)
    high = trace.get("zmax", float(finite.max()) if finite.size else 1.0)
    if trace.get("zmid") is not None and trace.get("zmin") is None:
        half = max(abs(high - trace["zmid"]), abs(trace["zmid"] - low))
        low, high = trace["zmid"] - half, trace["zmid"] + half
    cmap = colormap(trace.get("colorscale") or [[0, "#0d0887"], [1, "#f0f921"]])
    if trace.get("reversescale"):
        cmap = cmap.reversed()
    mesh = target.ax.pcolormesh(_edges(xs[:cols]), _edges(ys[:rows]), np.ma.masked_invalid(z), cmap=cmap,
                                vmin=low, vmax=high, shading="flat")
    _cell_text(target, trace, z, xs, ys, font_px, mesh)
    if trace.get("showscale", True) is not False:
        _colour_bar(out, mesh, target.ax, trace, font_px)
    return mesh


def _colour_bar(out, mesh, ax, trace: dict, font_px: float) -> None:
    bar = out.colorbar(mesh, ax=ax, fraction=0.04, pad=0.02)
    spec = trace.get("colorbar") or {}
    bar.ax.tick_params(labelsize=_font_pt(spec.get("tickfont"), font_px))
    title = spec.get("title") or {}
    if isinstance(title, dict) and title.get("text"):
        bar.set_label(plain_text(title["text"]), fontsize=_font_pt(title.get("font"), font_px))


def _edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges around cell centres (a single cell is one unit wide)."""
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[centres[0] - (mid[0] - centres[0])], mid, [centres[-1] + (centres[-1] - mid[-1])]])


def _cell_text(target: _Axes, trace: dict, z: np.ndarray, xs, ys, font_px: float, mesh=None) -> None:
    """The numbers a heatmap writes in its cells (texttemplate '%{z:.2f}' or '%{text}')."""
    template, texts = trace.get("texttemplate"), trace.get("text")
    if not template or not _Z_FORMAT.search(str(template)):
        return
    size = _font_pt(trace.get("textfont"), font_px)
    fixed = colour((trace.get("textfont") or {}).get("color"))

    def ink(r: int, c: int):
        """The text colour plotly picks: the textfont's, else white on a dark cell and black on a light one."""
        if fixed is not None or mesh is None or not np.isfinite(z[r, c]):
            return fixed or "black"
        red, green, blue, _ = mesh.cmap(mesh.norm(z[r, c]))
        return "white" if 0.299 * red + 0.587 * green + 0.114 * blue < 0.5 else "black"

    for r in range(z.shape[0]):
        for c in range(z.shape[1]):
            def fill(m, r=r, c=c):
                value = z[r, c] if m.group(1) == "z" else (texts[r][c] if texts is not None else "")
                if m.group(1) == "z" and not np.isfinite(value):
                    return ""
                return format(value, _d3_format(m.group(2))) if m.group(2) else str(value)
            text = plain_text(_Z_FORMAT.sub(fill, str(template)))
            if text.strip():
                target.ax.text(xs[c], ys[r], text, ha="center", va="center", fontsize=size, color=ink(r, c))


def _d3_format(spec: str) -> str:
    """The d3 number formats the figures use (.2f, .0%, .1e, ,) in Python's format spec."""
    return spec.replace("~", "")


def _draw_bar(target: _Axes, trace: dict, default_colour: str) -> None:
    horizontal = trace.get("orientation") == "h"
    values = np.asarray(trace.get("x" if horizontal else "y"), dtype=float)
    places = trace.get("y" if horizontal else "x")
    at = target.positions(places, "y" if horizontal else "x") if places is not None else np.arange(values.size)
    marker = trace.get("marker") or {}
    colours = marker.get("color", default_colour)
    if isinstance(colours, (list, tuple)) and colours and not isinstance(colours[0], (int, float)):
        colours = [colour(c, marker.get("opacity", 1.0)) for c in colours]
    elif isinstance(colours, str):
        colours = colour(colours, marker.get("opacity", 1.0))
    else:
        colours = colour(default_colour)
    draw = target.ax.barh if horizontal else target.ax.bar
    draw(at, values, 0.8, color=colours, label=plain_text(trace.get("name")) or None)
    outside = trace.get("textposition") == "outside"
    for place, value, text in zip(at, values, trace.get("text") or []):
        where = (value if outside else value / 2, place) if horizontal else (place, value if outside else value / 2)
        target.ax.text(*where, plain_text(text), fontsize=_font_pt(trace.get("textfont"), 12),
                       ha="left" if horizontal and outside else "center",
                       va="bottom" if outside and not horizontal else "center")


def _draw_scatter(target: _Axes, trace: dict, default_colour: str) -> None:
    if trace.get("x") is None or trace.get("y") is None:
        return
    mode = trace.get("mode") or "lines+markers"
    xs, ys = target.positions(trace["x"], "x"), np.asarray(
        [np.nan if v is None else v for v in target.positions(trace["y"], "y")], dtype=float)
    line, marker = trace.get("line") or {}, trace.get("marker") or {}
    line_colour = colour(line.get("color") or default_colour, trace.get("opacity", 1.0))
    style = {"dash": "--", "dot": ":", "dashdot": "-."}.get(line.get("dash"), "-")
    label = plain_text(trace.get("name")) if trace.get("showlegend", True) is not False else None
    if "lines" in mode:
        target.ax.plot(xs, ys, style, color=line_colour, linewidth=float(line.get("width") or 2) * PT_PER_PX,
                       label=label or None)
        label = None
    if "markers" in mode:
        colours = marker.get("color") or line.get("color") or default_colour
        colours = [colour(c) for c in colours] if isinstance(colours, (list, tuple)) and colours and \
            isinstance(colours[0], str) else colour(colours) if isinstance(colours, str) else line_colour
        target.ax.scatter(xs, ys, s=(float(marker.get("size") or 6) * PT_PER_PX) ** 2, color=colours,
                          label=label or None, zorder=3)
    if "text" in mode and trace.get("text") is not None:
        for x, y, text in zip(xs, ys, trace["text"]):
            target.ax.text(x, y, plain_text(text), ha="center", va="center")


def _ticks(target: _Axes, axis: dict, which: str) -> None:
    ax = target.ax
    set_ticks, set_labels = (ax.set_xticks, ax.set_xticklabels) if which == "x" else (ax.set_yticks, ax.set_yticklabels)
    if axis.get("tickvals") is not None:
        set_ticks(target.positions(axis["tickvals"], which))
        if axis.get("ticktext") is not None:
            set_labels([plain_text(t) for t in axis["ticktext"]])
    elif target.categories[which]:
        names = list(target.categories[which])
        set_ticks(range(len(names)))
        set_labels([plain_text(n) for n in names])
    if axis.get("tickangle") not in (None, "auto"):
        for label in ax.get_xticklabels() if which == "x" else ax.get_yticklabels():
            label.set_rotation(-float(axis["tickangle"]))
            label.set_ha("right" if which == "x" and float(axis["tickangle"]) < 0 else "center")
    if axis.get("showticklabels") is False:
        set_labels([])


def _finish_axes(target: _Axes, font_px: float, text_colour, layout: dict) -> None:
    ax = target.ax
    for which, axis in (("x", target.xaxis), ("y", target.yaxis)):
        _ticks(target, axis, which)
        title = axis.get("title") or {}
        text = plain_text(title.get("text") if isinstance(title, dict) else title)
        if text:
            (ax.set_xlabel if which == "x" else ax.set_ylabel)(text, fontsize=_font_pt(title.get("font"), font_px),
                                                               color=text_colour)
        if axis.get("range") is not None and axis.get("type") != "log":
            (ax.set_xlim if which == "x" else ax.set_ylim)(*axis["range"])
        if axis.get("type") == "log":
            (ax.set_xscale if which == "x" else ax.set_yscale)("log")
        if axis.get("autorange") == "reversed":
            (ax.invert_xaxis if which == "x" else ax.invert_yaxis)()
        if axis.get("visible") is False:
            (ax.xaxis if which == "x" else ax.yaxis).set_visible(False)
    handles, labels = ax.get_legend_handles_labels()
    if labels and layout.get("showlegend", True) is not False:
        ax.legend(fontsize=font_px * PT_PER_PX, frameon=False)


def _ref_axes(axes: dict[tuple[str, str], _Axes], ref: str, which: str) -> _Axes | None:
    name = (ref or "").split(" ")[0]
    return next((a for key, a in axes.items() if key[0 if which == "x" else 1] == name), None)


def _draw_shapes(layout: dict, axes: dict[tuple[str, str], _Axes], area) -> None:
    for shape in layout.get("shapes") or []:
        target = _ref_axes(axes, shape.get("xref", "x"), "x")
        if target is None or str(shape.get("xref", "")).startswith("paper"):
            continue
        line = shape.get("line") or {}
        edge = colour(line.get("color") or "#444", shape.get("opacity", 1.0))
        x0, x1, y0, y1 = (float(shape.get(k, 0)) for k in ("x0", "x1", "y0", "y1"))
        width = float(line.get("width") if line.get("width") is not None else 2) * PT_PER_PX
        if shape.get("type") == "rect":
            fill = colour(shape.get("fillcolor"), shape.get("opacity", 1.0)) if shape.get("fillcolor") else "none"
            target.ax.add_patch(matplotlib.patches.Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=fill,
                                                             edgecolor=edge, linewidth=width))
        elif shape.get("type") == "line":
            target.ax.plot([x0, x1], [y0, y1], color=edge, linewidth=width)


def _draw_annotations(out, layout: dict, axes, area, font_px: float, text_colour) -> None:
    for note in layout.get("annotations") or []:
        text = plain_text(note.get("text"))
        if not text or note.get("visible") is False:
            continue
        size = _font_pt(note.get("font"), font_px)
        ink = colour((note.get("font") or {}).get("color")) or text_colour
        ha = {"left": "left", "right": "right"}.get(note.get("xanchor"), "center")
        va = {"top": "top", "bottom": "bottom"}.get(note.get("yanchor"), "center")
        xref, yref = str(note.get("xref", "x")), str(note.get("yref", "y"))
        if xref.startswith("paper") and yref.startswith("paper"):
            left, bottom, w, h = area
            out.text(left + float(note.get("x", 0)) * w, bottom + float(note.get("y", 0)) * h, text, ha=ha, va=va,
                     fontsize=size, color=ink)
            continue
        target = _ref_axes(axes, xref, "x") or _ref_axes(axes, yref, "y")
        if target is None:
            continue
        x = target.positions([note.get("x", 0)], "x")[0] if not xref.startswith("paper") else note.get("x", 0)
        y = target.positions([note.get("y", 0)], "y")[0] if not yref.startswith("paper") else note.get("y", 0)
        transform = target.ax.transData
        if xref.startswith("paper") or yref.startswith("paper"):
            transform = matplotlib.transforms.blended_transform_factory(
                target.ax.transAxes if xref.startswith("paper") else target.ax.transData,
                target.ax.transAxes if yref.startswith("paper") else target.ax.transData)
        target.ax.text(x, y, text, ha=ha, va=va, fontsize=size, color=ink, transform=transform, clip_on=False)


def save_figure(fig: go.Figure, path: str | Path) -> Path:
    """`fig` drawn by matplotlib into `path`; the format is the file's suffix (pdf, svg or png)."""
    path = Path(path)
    kind = path.suffix.lstrip(".").lower()
    if kind not in FORMATS:
        raise ValueError(f"{path.name}: a static figure is written as {', '.join(FORMATS)}, not {kind or 'no suffix'}")
    drawn = to_matplotlib(fig)
    try:
        with plt.rc_context(fonts()):
            drawn.savefig(path, format=kind, dpi=2 * PX_PER_INCH if kind == "png" else PX_PER_INCH,
                          facecolor=drawn.get_facecolor(), bbox_inches="tight", pad_inches=0.1)  # plotly's automargin
    finally:
        plt.close(drawn)
    return path
