"""What the browser-side view (viz/elements/browser_view.py, its JS beside this file) is sent: the explorer's, a sentence's
attention, every layer x head x kind the page offers, once, with the figures the builders here already make; or a
deck (deck(), at the end: the multi-head page's kind x layer, the feed-forward page's stack x layer and its dropout view's kind x layer x head, the
LayerNorm page's layers, the attention zoo's kind x layer x head, the compare page's layer x head (and head B against A), the head page's
kinds, the decoding page's steps, the step-through page's nine steps, the training page's snapshots x its maps' layer x head), every figure a page's builders make for every pick.

The browser swaps the picks (kind, layer, head) itself: it draws each kind's grid and head-view figures as the
builders made them, and the one head's map from the builder's figure with that head's weights, title and file
name put in. So there is one drawing code per picture (the builders), and nothing here draws. numpy in, JSON
out; no Streamlit.

Compact: the large map's weights travel as float32 (exact hover numbers), only the rows and keys it shows (a
long sentence's window); the grids as their builder thumbnails them (at most 64 cells a side a head).
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import plotly.io as pio

from viz.core.tex import inline_text
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.head_view import head_view_spec
from viz.figures.style import Look, TypeScale, Words, masked_z, plotly_text, wrap_title

MEAN = -1          # the head picker's "average of heads", as the view's URL writes it


def typed_array(array: np.ndarray) -> dict:
    """A float array as plotly.js's typed-array spec ({dtype, bdata, shape}): 4 bytes a number, NaN kept (a
    masked cell), a third of what JSON numbers take."""
    array = np.ascontiguousarray(array, dtype="<f4")
    return {"dtype": "f4", "bdata": base64.b64encode(array.tobytes()).decode("ascii"), "shape": list(array.shape)}


def figure_spec(fig) -> dict:
    """A built figure as the JSON-ready dict plotly.js draws, without its template (the payload carries it once:
    template_spec). Made from the figure's own data and layout, as plotly.py's to_dict holds them, without its
    deep copy (a figure is built, then only drawn: view.shared_memo's rule) and with float arrays as float32
    typed arrays: 10-30 ms a figure less, 15 figures a sentence (tests/test_figures_browser_view.py holds it
    equal to to_dict's). `fig` may be a builder's plain spec ({data, layout}: head_view_spec) as well."""
    data, layout = (fig["data"], fig["layout"]) if isinstance(fig, dict) else (fig._data, fig._layout)
    spec = {"data": json_ready(data), "layout": json_ready(layout)}
    spec["layout"].pop("template", None)
    return spec


PLAIN = (float, int, str, bool, type(None))


def json_ready(value: Any) -> Any:
    """`value` with numpy in it made JSON's: a float array as a typed array (f4), another array as a list, a
    numpy number as Python's. Lists of plain values (a head view's thousands of line ends) are taken as they are."""
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if all(type(item) in PLAIN for item in value):
            return list(value)
        return [json_ready(item) for item in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f":
            return value.tolist()
        spec = typed_array(value)
        spec["shape"] = ", ".join(map(str, value.shape))          # plotly.py's form of it
        if value.ndim == 1:
            del spec["shape"]
        return spec
    if isinstance(value, np.generic):
        return value.item()
    return value


def template_spec(fig) -> dict | None:
    """The template a figure is drawn with (the app's plotly theme), once for every figure of the payload."""
    return json.loads(pio.to_json(fig, validate=False)).get("layout", {}).get("template")


@dataclass(frozen=True)
class Window:
    """The rows a map shows and, per layer, its keys (cross-attention's follow each layer's strongest source
    tokens; self-attention's are the rows)."""
    queries: slice
    keys: tuple[slice, ...]


def pick_names(n_layers: int, n_heads: int) -> list[tuple[int, int]]:
    """Every (layer, head) a reader can pick, the layer's mean (head MEAN) first in each layer."""
    return [(layer, head) for layer in range(n_layers) for head in (MEAN, *range(n_heads))]


def head_weights(patterns: np.ndarray, layer: int, head: int) -> np.ndarray:
    """One pick's [Q, K] weights: a head's, or (MEAN) the layer's average of heads."""
    return patterns[layer].mean(0) if head == MEAN else patterns[layer, head]


def strongest(weights: np.ndarray, rows: Sequence[str], cols: Sequence[str], limit: int = 12) -> str:
    """"query → the key it weighs most" for the first `limit` queries (plain text: the browser sets it as text)."""
    top = np.argmax(np.nan_to_num(weights), axis=1)
    return " · ".join(f"{rows[i].split(' ', 1)[-1]} → {cols[j].split(' ', 1)[-1]}" for i, j in enumerate(top[:limit]))


def kind_part(kind: str, patterns: np.ndarray, rows: list[str], cols: list[str], masked: np.ndarray | None,
              window: Window, look: Look, width_px: float | None = None,
              file_stem: str = "attention", lines_layers: Sequence[int] | None = None) -> dict:
    """One attention kind of the view: its grid (model_view), the large map's figure (attention_heatmap, made once
    for the first pick) and every pick's weights, title, strongest links and file name; each layer's head-view
    figure (head_view; only `lines_layers`' when given, None for the others: the first screen of a new sentence
    needs one, and the head views are most of the build). patterns [L, H, Q, K]."""
    n_layers, n_heads = patterns.shape[:2]
    grid = model_view(patterns, look, title=look.words("explorer.grid.title", kind=look.words.kind(kind), layers=n_layers,
                                                    heads=n_heads), selected=(0, 0), masked=masked)
    q = window.queries
    picks = pick_names(n_layers, n_heads)
    z = np.stack([masked_z(head_weights(patterns, layer, head)[q, window.keys[layer]],
                           None if masked is None else masked[q, window.keys[layer]]) for layer, head in picks])

    def title(layer: int, head: int) -> str:
        if head == MEAN:
            text = look.words("explorer.one.mean", kind=look.words.kind(kind), layer=layer, heads=n_heads)
        else:
            text = look.words("explorer.one.head", kind=look.words.kind(kind), layer=layer, head=head)
        return phone_title(text, look.scale)

    titles = [title(layer, head) for layer, head in picks]
    first_keys = window.keys[0]
    # the map's figure made with the longest title (the layer's average): its top margin holds every pick's
    template = attention_heatmap(head_weights(patterns, 0, MEAN)[q, first_keys], rows[q], cols[first_keys], look,
                                 title=max(titles, key=lambda text: (text.count("<br>"), len(text))),
                                 masked=None if masked is None else masked[q, first_keys], width_px=width_px)

    wanted = range(n_layers) if lines_layers is None else lines_layers
    lines = [layer_lines(patterns, layer, rows, cols, window, look) if layer in wanted else None
             for layer in range(n_layers)]
    return {
        "grid": figure_spec(grid),
        "selection": [grid_selection(grid, n_layers, n_heads, layer, head) for layer, head in picks],
        "map": figure_spec(template),
        "z": typed_array(z),
        "x": [plotly_text(cols[keys]) for keys in window.keys],     # as the builder writes its labels
        "picks": [[layer, head] for layer, head in picks],
        "titles": titles,
        "strongest": [look.words("explorer.strongest", links=strongest(head_weights(patterns, layer, head), rows, cols))
                      for layer, head in picks],
        "files": [f"{file_stem}-{kind}-L{layer}-{'avg' if head == MEAN else f'H{head}'}" for layer, head in picks],
        "lines": lines,
        "lines_titles": [look.words("headview.title", kind=look.words.kind(kind), layer=layer) for layer in range(n_layers)],
        "layers": n_layers,
        "heads": n_heads,
    }


def layer_lines(patterns: np.ndarray, layer: int, rows: list[str], cols: list[str], window: Window, look: Look) -> dict:
    """One layer's head view (head_view) of the window's queries and keys, as the view draws it."""
    q, keys = window.queries, window.keys[layer]
    return figure_spec(head_view_spec(patterns[layer][:, q, keys], rows[q], cols[keys], look, selected_head=0))


def phone_title(text: str, type_scale: TypeScale) -> str:
    """A title as the builders' typeset writes it: on a phone's narrow scale, broken into lines that fit."""
    if not type_scale.narrow:
        return text
    layout = {"title": {"text": text}}
    wrap_title(layout, type_scale)
    return layout["title"]["text"]


def grid_selection(grid, n_layers: int, n_heads: int, layer: int, head: int) -> dict:
    """The grid's selection box around (layer, head) (MEAN: the whole layer), where model_view draws it: the
    builder's own box for (0, 0) moved by whole tiles (a tile and its gap: the step between the centres of the
    grid's click targets)."""
    box = dict(grid.layout.shapes[0].to_plotly_json())
    targets = next(trace for trace in grid.data if trace.customdata is not None)
    x, y = np.asarray(targets.x, dtype=float), np.asarray(targets.y, dtype=float)
    col_step = x[1] - x[0] if n_heads > 1 else 0.0
    row_step = y[n_heads] - y[0] if n_layers > 1 else 0.0
    dy = layer * row_step
    moved = {**box, "y0": box["y0"] + dy, "y1": box["y1"] + dy}
    if head == MEAN:
        return {**moved, "x1": box["x1"] + (n_heads - 1) * col_step}
    return {**moved, "x0": box["x0"] + head * col_step, "x1": box["x1"] + head * col_step}


def payload(parts: dict[str, dict], kinds: dict[str, int], template: Any, words: Words, shown: dict) -> dict:
    """The view's data: the parts built of `kinds` (kind: its number of layers; a first screen's body holds one),
    the figures' template once, the pickers' words (every kind's and layer's name), and how it is laid out
    (`shown`: the file format, the text size...)."""
    any_part = next(iter(parts.values()))
    n_heads = any_part["heads"]
    return {
        "kinds": parts,
        "template": template,
        "words": {
            "kind": words("explorer.kind"), "layer": words("ui.layer"), "head": words("ui.head"),
            "csv": words("ui.csv"), "lines_read": words("headview.read"),
            "kind_names": {kind: words.kind(kind) for kind in kinds},
            "layer_names": [words("ui.layer_n", i=i) for i in range(max(kinds.values()))],
            "head_names": head_names(n_heads, words),
        },
        **shown,
    }


def head_names(n_heads: int, words: Words, mean: bool = True) -> dict[str, str]:
    """The head picker's options' words, by head as the browser keys them ("-1": the mean of the heads, first, when
    offered; "0"...): the explorer's and a deck's."""
    return {str(h): (words("ui.head_mean") if h == MEAN else words("ui.head_n", h=h))
            for h in ((MEAN,) if mean else ()) + tuple(range(n_heads))}


@dataclass(frozen=True)
class Body:
    """The payload, gzipped (JSON of typed arrays and figures: ~5x smaller; the browser unzips it natively,
    DecompressionStream), and `sig`, its digest: the browser unzips and draws a body only when its sig is new."""
    sig: str
    gzipped: bytes


GZIP_LEVEL = 1    # a 32-token first screen: 251 KB in ~6 ms; level 6 took twice the time for 239 KB (its typed
                  # arrays' base64 hardly compresses)


def encode(data: dict) -> Body:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return Body(hashlib.blake2b(text, digest_size=8).hexdigest(), gzip.compress(text, compresslevel=GZIP_LEVEL, mtime=0))


def view_sig(page: str, at: Any) -> str:
    """What a page's first-screen body and its whole one share, `at` (the sentence and the view they are built for),
    as the browser names it: it takes the whole body in without drawing again what it drew."""
    return hashlib.blake2b(repr((page, at)).encode("utf-8"), digest_size=8).hexdigest()


def framed(body: Body, about: dict) -> bytes:
    """What the view's element is sent: one line of JSON about the body (its sig, the sentence it is for, whether
    it is whole), then the gzipped body. The same bytes every run of a sentence and view: Streamlit's message
    cache then sends them to a browser once, and a pick's run sends only the small head (head())."""
    line = json.dumps({"sig": body.sig, **about}, ensure_ascii=True, separators=(",", ":"))
    return line.encode("ascii") + b"\n" + body.gzipped


def head(pick: dict, about: dict, extra: dict | None = None) -> dict:
    """The run's own part, sent in an element of its own: the view's pick, the body it goes with (the sentence),
    anything `extra` (a teaching session, the image format, a CSV asked for)."""
    return {"pick": pick, **about, **(extra or {})}


VIEW_ELEMENT = "viz_attention_explorer"       # the component's name (viz/elements/browser_view.py registers it)
HEAD_ELEMENT = "viz_attention_explorer_head"  # the run's head every view listens to (a class's poll draws it too)


def drawn_labels(framed_bytes: bytes) -> list[str]:
    """The token labels a view's element draws (its maps' keys and queries, as plotly shows them: escaped), read
    from what it was sent (framed()): for a client that reads the websocket itself (tests, load benchmarks)."""
    body = json.loads(gzip.decompress(framed_bytes[framed_bytes.index(b"\n") + 1:]))
    labels = []
    for part in body.get("picks", {}).values():          # a deck: every pick's figures' categories
        for figure in part.get("figures", {}).values():      # a part that is another's ({same}) has none
            for trace in figure["data"]:
                labels += [label for side in ("x", "y") if isinstance(trace.get(side), list)
                           for label in trace[side] if isinstance(label, str)]
    for part in body.get("kinds", {}).values():
        labels += [label for keys in part["x"] for label in keys]
        labels += [label for label in part["map"]["data"][0].get("y") or [] if isinstance(label, str)]
    return labels


# -- a deck: a page's pictures for every pick (the multi-head page: kind x layer; the feed-forward page: stack x
# layer; the decoding and step-through pages: a step) -----------------------------------------------------------
# The same element and JS as the explorer's: the body's "view" says which it is. A deck's body holds, for each pick
# it was built for, every figure the page's builders made (figure_spec), and the words, tables and checks beside
# them; `blocks` lays them out (the same for every pick). The browser swaps a pick's figures in (Plotly.react), its
# words and tables (as text), drawing the figures out of sight (a closed section, another tab) when they come into
# it. Nothing here draws: the builders do.

def deck_pick(figures: dict[str, Any], files: dict[str, str], texts: dict[str, str] | None = None,
              tables: dict[str, dict] | None = None, notes: dict[str, list[dict]] | None = None,
              opens: dict[str, bool] | None = None) -> dict:
    """One pick's part of a deck: its figures (plotly figures, the builders'), their file names (PNG/SVG/CSV),
    its words by block id, its tables (table()), its notes ([{text, ok}]) and which sections start open."""
    return {"figures": {name: figure_spec(fig) for name, fig in figures.items()}, "files": files,
            "texts": texts or {}, "tables": tables or {}, "notes": notes or {}, "opens": opens or {}}


def table(columns: Sequence[str], index: Sequence[str], rows: Sequence[Sequence[str]]) -> dict:
    """A static table of words (a head table): its header, its rows' names, its cells as the page writes them."""
    return {"columns": list(columns), "index": list(index), "rows": [list(map(str, row)) for row in rows]}


def pick_key(pick: dict, names: Sequence[str]) -> str:
    """How a deck names a pick ("encoder:1"), as the browser does."""
    return ":".join(str(pick[name]) for name in names)


def deck(picks: dict[str, dict], blocks: list[dict], names: Sequence[str], layers: dict[str, int], template: Any,
         words: Words, shown: dict, steps: int = 0, said: dict | None = None, heads: int = 0,
         mean: bool = False, ahead: str | None = None) -> dict:
    """A deck's data: the parts built (pick_key: deck_pick(); a new sentence's first screen holds one; a part keyed
    by a prefix of picks' keys, a step's "3" of "3:1:-1" (or "", of every key), holds what every pick under it shows, sent once: the
    browser takes a pick's blocks from its own part, then from its prefixes', browser_view.js deckPart), how they
    are laid out (`blocks`: {type: figure|text|heading|code|formula|table|notes|tabs|columns|details|pickers,
    id...}), what
    is picked (`names`: kind and layer, each kind's number of `layers`; a layer alone, `layers` the one stack's, and
    no kind picker; either with a head of `heads`, the mean of them (MEAN) too when `mean`; or the step, of
    `steps`, alone or with a layer and a head: the training page's), the figures' template once, the pickers' words (`said`: a page's own, over picker_words': the feed-forward page's stack
    picker's label and names; "step_names": the steps as a row of named choices, not a slider). A block's id names what it shows in every pick (a figure, words, a table):
    one id, one block; a block's `title` is its words in every pick (a pick's texts name only what changes). A
    formula block's text is MathML (viz/tour/formula_html.formula_mathml: made from numbers, never user text; the
    browser keeps only MathML elements and attributes of it); a text, heading or details block's words and a notes
    block's lines go with their inline maths as characters (inline_picks, inline_titles: the browser knows no
    LaTeX); a figure, or a section's every block, a pick lacks takes no room; a `columns` block's `widths` ([3, 2]) share the row; a table block with `scroll` scrolls in a
    box; a `pickers` block is where the kind, layer and head pickers go (its `title`: their words before them;
    without one they head the deck). `ahead`: the name picked most (the step-through's step), the only one along which
    the browser draws picks ahead (browser_view.js drawAhead, pickDistance)."""
    ids = block_ids(blocks)
    if len(ids) != len(set(ids)):
        raise ValueError(f"a deck's block ids must differ: {sorted(i for i in set(ids) if ids.count(i) > 1)}")
    return {
        "view": "deck",
        "names": list(names),
        "layers": layers,
        "steps": steps,
        "heads": heads,
        "mean": mean,
        "ahead": ahead,
        "picks": inline_picks(picks, blocks),
        "blocks": inline_titles(blocks),
        "template": template,
        "words": {"csv": words("ui.csv"), **picker_words(names, layers, words, heads, mean), **(said or {})},
        **shown,
    }


def picker_words(names: Sequence[str], layers: dict[str, int], words: Words, heads: int = 0,
                 mean: bool = False) -> dict:
    """The words of a deck's pickers: the kinds', layers' and heads' names (head_names, as the explorer's); the step
    slider's name and its buttons'."""
    said: dict[str, Any] = {}
    if "kind" in names:
        said.update(kind=words("explorer.kind"), kind_names={kind: words.kind(kind) for kind in layers})
    if "layer" in names:
        said.update(layer=words("ui.layer"), layer_names=[words("ui.layer_n", i=i) for i in range(max(layers.values()))])
    if "head" in names:
        said.update(head=words("ui.head"), head_names=head_names(heads, words, mean))
    if "step" in names:
        said.update(step=words("decoding.step"), step_help=words("decoding.step.help"),
                    previous=words("ui.step.previous"), next=words("ui.step.next"))
    return said


def every_block(blocks: list[dict]) -> list[dict]:
    """Every block, sections', tabs' and columns' blocks included, each before those it holds."""
    found = []
    for block in blocks:
        found.append(block)
        found += every_block(block.get("blocks", []))
        for tab in block.get("tabs", []):
            found += every_block(tab["blocks"])
        for column in block.get("columns", []):
            found += every_block(column)
    return found


def block_ids(blocks: list[dict]) -> list[str]:
    """Every block's id, sections', tabs' and columns' blocks included."""
    return [block["id"] for block in every_block(blocks) if "id" in block]


# The blocks whose words the browser sets with the catalogue's light markup (**bold**, *italic*, $x_h$: its
# richText), and a notes block's every line: their inline maths goes as characters (viz/core/tex.inline_text), so
# the browser knows no LaTeX; a code block's text and a formula's MathML are left as they are.
RICH_TEXT = ("text", "heading", "details")


def inline_picks(picks: dict[str, dict], blocks: list[dict]) -> dict[str, dict]:
    """The picks with their rich words' inline maths as characters (copies: a part may be kept for every session)."""
    rich = {block["id"] for block in every_block(blocks) if block.get("type") in RICH_TEXT and "id" in block}

    def inline(part: dict) -> dict:
        part = dict(part)
        if "texts" in part:
            part["texts"] = {id_: inline_text(text) if id_ in rich and isinstance(text, str) else text
                             for id_, text in part["texts"].items()}
        if "notes" in part:
            part["notes"] = {id_: [{**note, "text": inline_text(note["text"])} for note in notes]
                             for id_, notes in part["notes"].items()}
        return part

    return {key: inline(part) for key, part in picks.items()}


def inline_titles(blocks: list[dict]) -> list[dict]:
    """The blocks with their rich titles' inline maths as characters (copies)."""
    copied = []
    for block in blocks:
        block = dict(block)
        if block.get("type") in RICH_TEXT and isinstance(block.get("title"), str):
            block["title"] = inline_text(block["title"])
        if "blocks" in block:
            block["blocks"] = inline_titles(block["blocks"])
        if "tabs" in block:
            block["tabs"] = [{**tab, "blocks": inline_titles(tab["blocks"])} for tab in block["tabs"]]
        if "columns" in block:
            block["columns"] = [inline_titles(column) for column in block["columns"]]
        copied.append(block)
    return copied
