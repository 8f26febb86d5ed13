"""Multi-head assembly: h head outputs -> concatenation -> W^O -> + residual -> LayerNorm, on real numbers. Drawn in
the browser (viz/elements/browser_view.py, a deck): the kind and layer are picked there without a script run; the page reads
the pick from the URL and sends each sentence's pictures for every kind and layer once."""
from __future__ import annotations


import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from model.analysis.attention_math import concat_heads, dim_labels, future_mask, max_abs_error, output_projection
from model.analysis.heads import head_summary, head_traits
from model.analysis.norms import layer_norm, token_norms
from model.analysis.vectors import head_contribution_norms
from model.capture import schema
from model.capture.schema import sublayer_names
from viz.elements.browser_view import MULTIHEAD_PICK, browser_view, url_names, whole_asked
from viz.figures import browser_view as payloads
from viz.figures.browser_view import template_spec
from viz.figures.style import Look
from viz.figures.attention import window_from
from viz.figures.multihead import (concat_heatmap, head_patterns, head_window, per_head_outputs, stage_heatmap,
                                  stage_norms)
from viz.figures.vectors import contribution_map
from viz.core.i18n import catalogue_keys, kind_title, t
from viz.core import view
from viz.core.context import Traced
from viz.core.text import attention_labels
from viz.elements.ui import (explained, look, matrix_frame, need_context, plotly_config, safe_filename, token_window,
                             type_scale)

OWN = view.Own("viz.pages.multi_head")  # this module's own session values
MULTIHEAD = OWN.value("mh")  # mh-view, -whole, -csv: this page's browser view (elements/browser_view)

KINDS = list(schema.KINDS)
TOLERANCE = 1e-4   # float32 model vs float64 recomputation
# Long formulas are split into lines that fit a 1280x720 projector's page width (one line is cut at "…VW").
MULTIHEAD_FORMULA = [r"\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O",
                     r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\;KW_i^K,\;VW_i^V)"]
POST_NORM = r"x_{\text{next}} = \mathrm{LayerNorm}\big(x + \mathrm{MultiHead}(x)\big)"
HALF_PX = 280      # the plot area of a matrix in one of two columns, on a projector
HEAD_COLUMNS = 4   # a long sentence's heads through a window of as many tokens as four panels a row label...
MIN_WINDOW = 14    # ...but never fewer than this (three panels a row then: the page grows by under a screen)
PRE_NORM = r"x_{\text{next}} = x + \mathrm{MultiHead}(\mathrm{LayerNorm}(x))"


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
MULTIHEAD_TRAIT_KEYS = catalogue_keys("multihead.trait", "self", "previous", "next", "far", "key", "sharp", "broad",
                                      "order")


def picked(cfg) -> tuple[str, int]:
    """The view's kind and layer, from the URL (which the browser's picks write), checked against the model, and
    written back."""
    kind = view.read(view.KIND, choices=KINDS)
    layer = view.read(view.LAYER, hi=schema.n_layers(cfg, kind) - 1)
    view.write_url({view.KIND: kind, view.LAYER: layer})
    return kind, layer


def window_size(trace) -> int:
    """A long sentence's heads through a window of as many tokens as HEAD_COLUMNS panels a row label, never fewer
    than MIN_WINDOW; a sentence a token or two longer than that whole (head_window: a window of 14 of 15 tokens hid
    its </s>)."""
    n_longest = max(len(attention_labels(trace.meta, kind)[0]) for kind in KINDS)
    return head_window(n_longest, HEAD_COLUMNS, MIN_WINDOW, type_scale())


def window_starts(trace, size: int) -> tuple[int, int]:
    """Where a long sentence's window starts: one slider over the longest rows (every kind keeps its window inside
    its own), and one over the source tokens that cross-attention's keys are (each slider only when needed)."""
    n_src = len(attention_labels(trace.meta, "encoder")[0])
    n_rows = max(len(attention_labels(trace.meta, kind)[0]) for kind in KINDS)
    queries = token_window(n_rows, size, "mh-window")
    keys = token_window(n_src, size, "mh-window-keys", "ui.window.keys")
    return queries.start, keys.start


def windows(kind: str, n_rows: int, n_cols: int, size: int, starts: tuple[int, int]) -> tuple[slice, slice]:
    """The queries and keys the page's pictures show for `kind`: all of a short sentence; of a long one, `size`
    from where the reader says (self-attention's queries and keys are the same tokens: one window;
    cross-attention's: one each)."""
    queries = window_from(starts[0], n_rows, size)
    return queries, queries if kind != "cross" else window_from(starts[1], n_cols, size)


def describe(patterns: np.ndarray, cols: list[str], positional: bool) -> list[str]:
    """head_traits (model.analysis.heads): what sets each head apart, measured, in the page's language."""
    words = []
    for trait, v in head_traits(patterns, positional):
        values = {"share": f"{v['share']:.0%}"} if "share" in v else {}
        if trait == "key":
            values["token"] = cols[v["index"]]
        elif trait == "far":
            values["distance"] = f"{v['distance']:.1f}"
        elif trait == "broad":
            values.update(n=f"{v['n']:.0f}", bits=f"{v['bits']:.2f}")
        elif trait == "order":
            values["r"] = f"{v['r']:.2f}"
        words.append(t(MULTIHEAD_TRAIT_KEYS[trait], **values))
    return words


def head_table(patterns: np.ndarray, cols: list[str], kind: str) -> pd.DataFrame:
    """What sets each head apart, measured (the whole sentence): a static table, every column shown (a data frame
    cut its last columns off at 1280 px and kept 14 px text in presenter mode)."""
    stats = head_summary(patterns)
    positional = kind != "cross"   # an offset means something only within one sequence
    two = np.vectorize("{:.2f}".format, otypes=[str])        # a static table prints its numbers as given
    table = {
        t("multihead.table.does"): describe(patterns, cols, positional),
        t("multihead.table.entropy"): two(stats["entropy"]),
        t("multihead.table.max"): two(stats["max_weight"]),
        t("multihead.table.favourite"): [cols[i].replace(" ", "\u00a0") for i in stats["favourite"]],  # '0 <modern>' one line
        t("multihead.table.favourite_weight"): two(stats["favourite_weight"]),
    }
    if positional:
        table[t("multihead.table.offset")] = [f"{int(o)}" for o in stats["offset"]]
        table[t("multihead.table.share")] = two(stats["offset_share"])
    heads = [t("ui.head_n", h=h).replace(" ", "\u00a0") for h in range(patterns.shape[0])]   # 'head 0' one line
    return pd.DataFrame(table, index=heads)


def explain(cfg) -> None:
    """How the heads are put together, with the formulas, and what the table's columns measure, folded:
    the page stays about three screens long."""
    h, d, dh = cfg.n_heads, cfg.d_model, cfg.d_head
    with explained(t("multihead.formulas")):        # open on the projector: the W^O assembly is the lesson
        st.markdown(t("multihead.explain", h=h, d=d, d_k=dh))
        for line in MULTIHEAD_FORMULA:
            st.latex(line)
        st.latex(PRE_NORM if cfg.norm_first else POST_NORM)
        # the offset columns are self-attention's (the view picks the kind: both are said)
        st.markdown(t("multihead.table.measures") + " " + t("multihead.table.caption_offset"))


class Layer:
    """The real numbers of one kind and layer, through the page's window (the table and the checks measure the
    whole sentence): what every picture, table, CSV and check of that pick is made of."""

    def __init__(self, ctx, kind: str, layer: int, size: int, starts: tuple[int, int]):
        trace, cfg, arrays = ctx.trace, ctx.model.config, ctx.trace.arrays
        names = sublayer_names(kind, layer, cfg.norm_first)
        rows, cols = attention_labels(trace.meta, kind)
        self.kind, self.layer, self.cfg = kind, layer, cfg
        self.tag = f"{ctx.model_id}-{kind}-L{layer}"
        self.where = t("multihead.where", kind=kind_title(kind), layer=layer)
        z = arrays[schema.attn_name(kind, layer, "z")]                                  # [H,T,Dh]
        patterns = arrays[schema.attn_name(kind, layer, "pattern")]                     # [H,T,S]
        concat = concat_heads(z)                                                        # [T,D]
        attn_out = arrays[schema.attn_name(kind, layer, "out")]                         # [T,D] after W^O
        residual = arrays[names.residual]                                               # [T,D] the stream added back
        summed = residual.astype(np.float64) + attn_out                                 # [T,D]
        after = arrays[names.after]                                                     # [T,D] the next residual stream
        w_o, b_o = ctx.model.attention_weights(names.attn, "o")
        self.checks = [(t("multihead.check.wo"), max_abs_error(output_projection(concat, w_o, b_o), attn_out))]
        if cfg.norm_first:
            self.checks.append((t("multihead.check.sum_next"), max_abs_error(summed, after)))
        else:
            self.checks.append((t("multihead.check.sum_ln"), max_abs_error(summed, arrays[names.norm_hook("in")])))
            self.checks.append((t("multihead.check.ln"),
                                max_abs_error(layer_norm(summed, arrays[names.norm_hook("gain")],
                                                         arrays[names.norm_hook("bias")], cfg.ln_eps), after)))
        self.table = head_table(patterns, cols, kind)
        queries, keys = self.shown = windows(kind, len(rows), len(cols), size, starts)
        self.masked = future_mask(kind, len(rows), len(cols))
        if self.masked is not None:
            self.masked = self.masked[queries, keys]
        self.patterns, self.rows, self.cols = patterns[:, queries, keys], rows[queries], cols[keys]
        # the pictures below the heads show the window's tokens too
        w = queries
        self.z, self.concat, self.attn_out, self.summed = z[:, w], concat[w], attn_out[w], summed[w]
        self.residual, self.after = residual[w], after[w]
        self.contributions = head_contribution_norms(self.z, w_o)                       # [T,H]
        self.head_names = [t("ui.head_n", h=h) for h in range(cfg.n_heads)]
        self.stages = {t("multihead.norms.input"): token_norms(self.residual),
                       t("multihead.norms.concat"): token_norms(self.concat),
                       t("multihead.norms.out"): token_norms(self.attn_out),
                       t("multihead.norms.sum"): token_norms(self.summed)}
        if not cfg.norm_first:
            self.stages[t("multihead.norms.ln")] = token_norms(self.after)

    def files(self) -> dict[str, str]:
        return {name: safe_filename(f"{self.tag}-{suffix}") for name, suffix in FILES.items()}

    def figures(self) -> dict:
        """Every picture of the pick, as the builders draw it."""
        cfg, rows, where, page_look = self.cfg, self.rows, self.where, look()
        made = {
            "heads": head_patterns(self.patterns, rows, self.cols, page_look,
                                   title=t("multihead.heads.title", where=where, heads=cfg.n_heads),
                                   masked=self.masked),
            "shares": contribution_map(self.contributions, rows, self.head_names, page_look,
                                       title=t("multihead.share.title", where=where)),
            "norms": stage_norms(self.stages, rows, page_look, title=t("multihead.norms.title", where=where)),
            "z": per_head_outputs(self.z, rows, page_look, title=t("multihead.z.title", where=where)),
            "concat": concat_heatmap(self.concat, rows, cfg.n_heads, page_look, title=t("multihead.concat.title")),
            "out": stage_heatmap(self.attn_out, rows, page_look, t("multihead.out.title"), plot_px=HALF_PX),
            "sum": stage_heatmap(self.summed, rows, page_look, t("multihead.sum.title"), plot_px=HALF_PX),
        }
        if not cfg.norm_first:
            made["norm"] = stage_heatmap(self.after, rows, page_look, t("multihead.norm.title"))
        return made

    def matrix(self, figure: str) -> pd.DataFrame:
        """The numbers a picture shows (its CSV)."""
        rows, n_heads, dh = self.rows, self.cfg.n_heads, self.cfg.d_head
        dims = dim_labels(self.cfg.d_model)
        if figure == "heads":
            return pd.concat({f"head {h}": matrix_frame(self.patterns[h], rows, self.cols) for h in range(n_heads)})
        if figure == "shares":
            return matrix_frame(self.contributions, rows, self.head_names)
        if figure == "norms":
            return pd.DataFrame(self.stages, index=rows)
        if figure == "z":
            return pd.concat({f"head {h}": matrix_frame(self.z[h], rows, dim_labels(dh)) for h in range(n_heads)})
        stage = {"concat": self.concat, "out": self.attn_out, "sum": self.summed, "norm": self.after}[figure]
        return matrix_frame(stage, rows, dims)

    def texts(self) -> dict[str, str]:
        cfg, n = self.cfg, len(self.rows)
        passed = sum(error < TOLERANCE for _, error in self.checks)
        texts = {
            "heads-caption": t("multihead.heads.caption")
            + (" " + t("multihead.heads.decoder") if self.kind != "encoder" else ""),
            "table-caption": t("multihead.table.caption"),
            "share-caption": t("multihead.share.caption"),
            "stage1": t("multihead.stage1", n=n, d_k=cfg.d_head),
            "stage2": t("multihead.stage2", n=n, heads=cfg.n_heads, d_k=cfg.d_head, d=cfg.d_model),
            "stage2-text": t("multihead.stage2.text", d_k=cfg.d_head, last=cfg.d_head - 1),
            "stage3": t("multihead.stage3", d=cfg.d_model), "stage3-text": t("multihead.stage3.text"),
            "stage4": t("multihead.stage4"), "stage4-text": t("multihead.stage4.text"),
            "checks": t("multihead.checks.summary", n=passed, total=len(self.checks),
                        error=f"{max(error for _, error in self.checks):.1e}"),
        }
        if cfg.norm_first:
            texts["pre-norm"] = t("multihead.pre_norm")
        else:
            texts.update({"stage5": t("multihead.stage5"), "stage5-text": t("multihead.stage5.text", d=cfg.d_model)})
        return texts

    def part(self) -> dict:
        """The pick's part of the page's deck (viz/figures/browser_view.py)."""
        frame = self.table
        notes = [{"text": t("multihead.check", description=description, error=f"{error:.2e}")
                  + ("" if error < TOLERANCE else " " + t("step.check.large")), "ok": bool(error < TOLERANCE)}
                 for description, error in self.checks]
        return payloads.deck_pick(self.figures(), self.files(), self.texts(),
                                  {"head-table": payloads.table(frame.columns, frame.index, frame.to_numpy())},
                                  {"check-notes": notes}, {"checks": not all(note["ok"] for note in notes)})


FILES = {"heads": "heads", "shares": "head-shares", "norms": "norms", "z": "z", "concat": "concat", "out": "out",
         "sum": "sum", "norm": "norm"}


def blocks(cfg) -> list[dict]:
    """How the page's deck is laid out, every pick alike: the heads side by side, how to read them, the table under
    them; each head's share and the sizes after each stage as two tabs of one picture's room (the page is about
    three screens at 1280x720); every stage's numbers and the checks folded."""
    figure = lambda name: {"type": "figure", "id": name, "csv": True}        # noqa: E731
    text = lambda name: {"type": "text", "id": name}                        # noqa: E731
    heading = lambda name: {"type": "heading", "id": name}                  # noqa: E731
    last = ([heading("stage5"), text("stage5-text"), figure("norm")] if not cfg.norm_first else [text("pre-norm")])
    return [
        figure("heads"), text("heads-caption"),
        {"type": "table", "id": "head-table"}, text("table-caption"),
        {"type": "tabs", "tabs": [
            {"title": t("multihead.share.tab"), "blocks": [figure("shares"), text("share-caption")]},
            {"title": t("multihead.norms.header"), "blocks": [figure("norms")]}]},
        {"type": "details", "id": "full", "title": t("multihead.full"), "blocks": [
            heading("stage1"), figure("z"),
            heading("stage2"), text("stage2-text"), figure("concat"),
            {"type": "columns", "columns": [[heading("stage3"), text("stage3-text"), figure("out")],
                                            [heading("stage4"), text("stage4-text"), figure("sum")]]},
            *last]},
        {"type": "details", "id": "checks", "blocks": [{"type": "notes", "id": "check-notes"}]},
    ]


def body_key(ctx, size: int, starts: tuple[int, int]) -> tuple:
    """What the page's deck is built for (built_deck's arguments but `first`, which it signs the same way): the
    sentence (trace), the window, the look (words and type scale), the modebar."""
    return ctx.trace_key, size, starts, look(), plotly_config("")["displayModeBar"]


def sentence_sig(at) -> str:
    return payloads.view_sig("multihead", at)


def deck_body(ctx, size: int, starts: tuple[int, int], first: tuple[str, int] | None) -> payloads.Body:
    """The browser's data for this sentence and view: built once, for every session of the worker (a class's
    students drawing the teacher's view build it once). `first` (kind, layer): only that pick (a new sentence's
    first run); the view asks for the rest once it has drawn it, which reuses the part the first one made."""
    return built_deck(ctx.traced, size, starts, look(), plotly_config("")["displayModeBar"], first)


@view.shared_cached
def built_deck(traced: Traced, size: int, starts: tuple[int, int], page_look: Look, modebar: bool,
               first: tuple[str, int] | None) -> payloads.Body:
    cfg = traced.model.config
    layers = {kind: schema.n_layers(cfg, kind) for kind in KINDS}
    picks = [(kind, layer) for kind in KINDS for layer in range(layers[kind])] if first is None else [first]
    parts = {f"{kind}:{layer}": layer_part(traced, kind, layer, size, starts, page_look, modebar)
             for kind, layer in picks}
    sentence = sentence_sig((traced.trace_key, size, starts, page_look, modebar))     # body_key
    return payloads.encode(payloads.deck(parts, blocks(cfg), MULTIHEAD_PICK, layers, template_spec(go.Figure()),
                                         page_look.words, {"text_px": page_look.scale.text, "sentence": sentence,
                                                           "whole": first is None, "modebar": modebar,
                                                           "url_names": url_names(MULTIHEAD_PICK)}))


@view.shared_part
def layer_part(traced: Traced, kind: str, layer: int, size: int, starts: tuple[int, int], page_look: Look,
               modebar: bool) -> dict:
    """One pick's part of the deck (its pictures are drawn in `page_look`, with or without the modebar)."""
    return Layer(traced, kind, layer, size, starts).part()


def pick_csv(ctx, size: int, starts: tuple[int, int]):
    """The CSV of a picture the browser asked for: the numbers it shows."""
    cfg = ctx.model.config

    def make(pick: dict) -> dict:
        kind = pick["kind"] if pick["kind"] in KINDS else KINDS[0]
        layer = min(max(pick["layer"], 0), schema.n_layers(cfg, kind) - 1)
        figure = pick.get("figure") if pick.get("figure") in FILES else "heads"
        if figure == "norm" and cfg.norm_first:
            figure = "sum"
        numbers = Layer(ctx, kind, layer, size, starts)
        return {"name": numbers.files()[figure] + ".csv", "text": numbers.matrix(figure).to_csv()}
    return make


def render() -> None:
    ctx = need_context()
    cfg = ctx.model.config
    st.title(t("multihead.title"))
    kind, layer = picked(cfg)
    drawn = st.container()
    size = window_size(ctx.trace)
    starts = window_starts(ctx.trace, size)     # the sliders under the view: the window is what it is built for
    sentence = sentence_sig(body_key(ctx, size, starts))
    whole = whole_asked(sentence, MULTIHEAD)
    with drawn:
        body = deck_body(ctx, size, starts, None if whole else (kind, layer))
        browser_view(MULTIHEAD, MULTIHEAD_PICK, body, {"kind": kind, "layer": layer},
                     {"sentence": sentence, "whole": whole}, csv=pick_csv(ctx, size, starts))
    explain(cfg)


if __name__ == "__main__":
    render()
