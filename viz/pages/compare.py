"""Compare: one head on two sentences (what word order does), or two heads on one sentence.

One head on two sentences: its pictures are drawn in the browser (viz/elements/browser_view.py, a deck): the layer
and head (or the mean of the heads) are picked there with no script run, written to the URL (layer=, head=); for the
kind, sentence B and the token window the server's widgets chose, the page sends every layer x head's pictures once.
Two heads on one sentence: head A is the server's pick (its layer and head select boxes); head B is the browser's (a
deck of every layer x head and each layer's mean against A, written to the URL as layer_b= and head_b=), its map and
B − A drawn with no script run; A's map is sent once, in the deck's part of every pick."""
import zlib

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from model.analysis import word_order
from model.capture import schema
from viz.figures import browser_view as payloads
from viz.figures.attention import attention_heatmap, map_window, source_window, window_from
from viz.figures.browser_view import template_spec
from viz.figures.style import Look, Words, symmetric_range
from viz.figures.style import Labels
from viz.figures.zoo import step_heatmap
from viz.core.context import Traced
from viz.core.i18n import catalogue_keys, error_text, kind_short, kind_title, t
from viz.services.traces import get_trace
from viz.core import view
from viz.core.view import MAX_TEXT_CHARS
from viz.core.text import attention_labels, plain, position_labels
from viz.elements.browser_view import COMPARE_PICK, browser_view, url_names, whole_asked
from viz.elements.ui import (attention_window, explained, layer_head_pickers, look, matrix_frame, need_context,
                             on_phone, plotly_config, safe_filename, token_window, type_scale)

OWN = view.Own("viz.pages.compare")  # this module's own session values
COMPARE = OWN.value("compare")  # compare-<kind>-layer/head: the layer and head pickers
COMPARE_DECK = OWN.value("cmp-deck")  # cmp-deck-view, -head, -whole, -csv: one head on two sentences' browser view
HEADS_DECK = OWN.value("cmp-heads-deck")  # cmp-heads-deck-view, -head, -whole, -csv: head B against head A
B_URLS = (("layer", view.LAYER_B), ("head", view.HEAD_B))    # head B's pick, as the URL writes it (layer_b, head_b)

KINDS = list(schema.KINDS)
MODES = ("sentences", "heads")                      # labels: compare.mode.<mode>
DIFF_SHARE = 0.6                       # a difference map takes this share of the row, its explanation the rest
COLUMN_GAP = 16                        # px between two st.columns (Streamlit's default gap, 1rem)


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
COMPARE_MODE_KEYS = catalogue_keys("compare.mode", "heads", "sentences")


def head_map(tr, kind: str, layer: int, head: int | None) -> np.ndarray:
    patterns = schema.stacked(tr, kind)[layer]                     # [H,Q,K]
    return patterns.mean(0) if head is None else patterns[head]


def head_name(layer: int, head: int | None, words: Words = t) -> str:
    return words("compare.head_name", layer=words("ui.layer_n", i=layer),
                 head=words("ui.head_mean") if head is None else words("ui.head_n", h=head))


def head_tag(kind: str, layer: int, head: int | None) -> str:
    return f"{kind}-L{layer}-{'avg' if head is None else f'H{head}'}"


def shown_tokens(kind: str, a: np.ndarray) -> tuple[slice, slice]:
    """The queries and keys the maps show: all of a short sentence's; of a longer one, a window of the queries
    the reader picks (a slider) and the keys they look at (self-attention: the same tokens), as many as a
    half-page map labels legibly (a 70-token map drew every third row label and smeared its key labels)."""
    size = map_window(type_scale().column_px(), type_scale())
    return attention_window(kind, a.shape[0], a, size, "compare-tokens")


def clip(shown: tuple[slice, slice], m: np.ndarray) -> tuple[slice, slice]:
    """A window kept inside a matrix (sentence B may be shorter than A)."""
    return tuple(slice(min(s.start, n), min(s.stop, n)) for s, n in zip(shown, m.shape))


def half_map(title: str, m: np.ndarray, rows: list[str], cols: list[str], shown: tuple[slice, slice],
             page_look: Look) -> go.Figure:
    """One of two maps side by side (half the page), through the window `shown`."""
    q, k = clip(shown, m)
    return attention_heatmap(m[q, k], rows[q], cols[k], page_look, title=title, width_px=page_look.scale.column_px())


def difference_map(diff: np.ndarray, rows: list[str], cols: list[str], title: str, page_look: Look | None = None):
    """A difference of two attention maps on a colour scale fitted to the data (symmetric about 0): a small
    difference still shows. The scale is said on the colour bar; the title is one line (with the scale in it,
    it breaks into two in its column and the first is cut off at the figure's top, in en and zh)."""
    page_look = page_look or look()
    words = page_look.words
    zmax = symmetric_range(diff)
    labels = Labels(title, words("fig.attention.x"),
                    words("fig.attention.y"), words("compare.diff.value", zmax=f"{zmax:.3g}"))
    return step_heatmap(diff, rows, cols, labels, page_look, zrange=(-zmax, zmax),
                        width_px=(page_look.scale.page_px - COLUMN_GAP) * DIFF_SHARE,   # its column: numbers that fit
                        )


def second_sentence(text_a: str) -> str:
    """Sentence B: from the URL, else sentence A with two words swapped; follows A when A changes."""
    derived = word_order.swap_two_words(text_a)
    text_b = st.text_input(t("compare.text_b"), max_chars=MAX_TEXT_CHARS,
                           key=view.seeded(f"compare-text-b-{zlib.crc32(text_a.encode('utf-8'))}",
                                           view.read(view.TEXT_B, default=derived)),
                           help=t("compare.text_b.help"))
    view.write_url({view.TEXT_B: None if text_b.strip() == derived else text_b.strip()})
    return text_b.strip()


def compare_sentences(ctx, kind: str, n_layers: int, picture=None) -> None:
    """picture: where the two maps go (a phone: a place over the pickers); else under them. The layer and head are
    the browser's picks (a deck: every layer x head, and each layer's mean of the heads, sent once for the kind,
    sentence B and window)."""
    trace, cfg = ctx.trace, ctx.model.config
    text_b = second_sentence(ctx.text.strip())          # the typed words: a style token is not a word to swap
    if not text_b:
        st.info(t("compare.b_empty"))
        return
    styled_b = ctx.model.tokenizer.styled(text_b, ctx.style)
    try:
        trace_b = get_trace(ctx.model_id, styled_b, None, ctx.beam, ctx.max_tokens)
    except ValueError as e:
        st.warning(plain(t("compare.b_error", error=error_text(e)), limit=600))
        return
    if trace_b.meta["src_text"] == trace.meta["src_text"]:
        st.info(t("compare.b_same"))
    layer = view.read(view.LAYER, hi=n_layers - 1)
    head = view.read(view.HEAD, lo=view.MEAN_HEAD, hi=cfg.n_heads - 1)
    view.write_url({view.LAYER: layer, view.HEAD: head})
    traced_b = Traced((ctx.model_id, styled_b, None, ctx.beam, ctx.max_tokens), ctx.model, trace_b)
    page_look, modebar = look(), plotly_config("")["displayModeBar"]
    start = token_window(len(attention_labels(trace.meta, kind)[0]), map_size(page_look), "compare-tokens").start
    sentence = payloads.view_sig("compare", (ctx.trace_key, traced_b.trace_key, kind, start, page_look, modebar))
    whole = whole_asked(sentence, COMPARE_DECK)
    body = built_deck(ctx.traced, traced_b, kind, start, page_look, modebar, None if whole else (layer, head))
    with picture if picture is not None else st.container():
        browser_view(COMPARE_DECK, COMPARE_PICK, body, {"layer": layer, "head": head},
                     {"sentence": sentence, "whole": whole}, csv=pick_csv(ctx.traced, traced_b, kind, start))


def map_size(page_look: Look) -> int:
    """How many queries (and keys) a half-page map labels legibly."""
    return map_window(page_look.scale.column_px(), page_look.scale)


FIGURES = ("a", "b", "order")      # the two maps, the word-order test's difference


class SentencePair:
    """One head (or a layer's mean of the heads: `head` None) on sentences A and B: the two maps, and the word-order
    test (B's map moved back into A's order, minus A's) where the encoder reads the same tokens in another order;
    what the pictures and their CSVs are made of (the maps through the window: `start`, `size`)."""

    def __init__(self, traced_a: Traced, traced_b: Traced, kind: str, layer: int, head: int | None, start: int,
                 size: int):
        trace, trace_b = traced_a.trace, traced_b.trace
        self.model_id, self.kind, self.layer, self.head = traced_a.model_id, kind, layer, head
        self.a, self.b = head_map(trace, kind, layer, head), head_map(trace_b, kind, layer, head)
        self.rows_a, self.cols_a = attention_labels(trace.meta, kind)
        self.rows_b, self.cols_b = attention_labels(trace_b.meta, kind)
        queries = window_from(start, self.a.shape[0], size)
        self.shown = queries, (source_window(self.a, queries, size) if kind == "cross" else queries)
        self.order = order_state(trace, trace_b, kind)
        self.diff = self.labels = None
        if self.order == "test":
            perm = word_order.token_permutation(trace.meta["src_ids"], trace_b.meta["src_ids"])
            self.diff = word_order.reorder_to(self.b, perm) - self.a
            self.labels = position_labels(trace.meta["src_tokens"])
        self.translations = trace.meta["translation"], trace_b.meta["translation"]

    def files(self) -> dict[str, str]:
        tag = head_tag(self.kind, self.layer, self.head)
        return {"a": safe_filename(f"{self.model_id}-A-{tag}"), "b": safe_filename(f"{self.model_id}-B-{tag}"),
                "order": safe_filename(f"{self.model_id}-order-test-L{self.layer}")}

    def figures(self, page_look: Look) -> dict[str, go.Figure]:
        words = page_look.words
        name = head_name(self.layer, self.head, words)
        figures = {"a": half_map(f"A: {name}", self.a, self.rows_a, self.cols_a, self.shown, page_look),
                   "b": half_map(f"B: {name}", self.b, self.rows_b, self.cols_b, self.shown, page_look)}
        if self.diff is not None:
            q, k = self.shown
            figures["order"] = difference_map(self.diff[q, k], self.labels[q], self.labels[k],
                                              words("compare.order_test.title", head=name), page_look)
        return figures

    def texts(self, words: Words) -> dict[str, str]:
        """The two translations (set as text: the model's words as they are)."""
        return {f"translation-{which}": text or words("compare.empty_output")
                for which, text in zip("ab", self.translations)}

    def matrix(self, figure: str):
        """The whole numbers of a picture (its CSV)."""
        if figure == "order" and self.diff is not None:
            return matrix_frame(self.diff, self.labels, self.labels)
        if figure == "b":
            return matrix_frame(self.b, self.rows_b, self.cols_b)
        return matrix_frame(self.a, self.rows_a, self.cols_a)


def order_state(trace, trace_b, kind: str) -> str:
    """What the page says under the maps: the word-order test ("test"), that B's tokens are not A's in another
    order ("not_permutation"), nothing (the same tokens: "same"), or that decoder rows follow each translation."""
    if kind != "encoder":
        return "rows"
    if word_order.token_permutation(trace.meta["src_ids"], trace_b.meta["src_ids"]) is None:
        return "not_permutation"
    return "same" if trace.meta["src_ids"] == trace_b.meta["src_ids"] else "test"


def blocks(order: str, words: Words) -> list[dict]:
    """How the deck is laid out, every pick alike: the two maps side by side, how to read them, the translations,
    then the word-order test (or what stands for it)."""
    figure = lambda name: {"type": "figure", "id": name, "csv": True}        # noqa: E731
    title = lambda name, words_: {"type": "text", "id": name, "title": words_}   # noqa: E731
    laid = [
        {"type": "columns", "columns": [[figure("a")], [figure("b")]]},
        title("caption", words("compare.sentences.caption")),
        {"type": "columns", "columns": [[title(f"translation-{which}-label", words("compare.translation",
                                                                                      which=which.upper())),
                                         {"type": "code", "id": f"translation-{which}"}] for which in "ab"]},
    ]
    if order == "test":
        laid += [{"type": "heading", "id": "order-heading", "size": "section", "title": words("compare.order_test")},
                 {"type": "columns", "widths": [DIFF_SHARE, 1 - DIFF_SHARE], "columns": [
                     [figure("order")],
                     [{**title("order-text", words("compare.order_test.text")), "size": "body"},
                      title("order-caption", words("compare.order_test.caption"))]]}]
    elif order == "not_permutation":
        laid.append(title("order-note", words("compare.not_permutation")))
    elif order == "rows":
        laid.append(title("order-note", words("compare.decoder_rows")))
    return laid


@view.shared_cached
def built_deck(traced_a: Traced, traced_b: Traced, kind: str, start: int, page_look: Look, modebar: bool,
               first: tuple[int, int] | None) -> payloads.Body:
    """The browser's data for sentences A and B: every layer's heads and their mean (`first`: only that pick, a new
    sentence's first run; the view asks for the rest once it has drawn it)."""
    cfg, words = traced_a.model.config, page_look.words
    n_layers = schema.n_layers(cfg, kind)
    picks = ([first] if first is not None else
             [(layer, head) for layer in range(n_layers) for head in (view.MEAN_HEAD, *range(cfg.n_heads))])
    parts = {f"{layer}:{head}": pair_part(traced_a, traced_b, kind, layer, head, start, page_look)
             for layer, head in picks}
    sentence = payloads.view_sig("compare", (traced_a.trace_key, traced_b.trace_key, kind, start, page_look, modebar))
    return payloads.encode(payloads.deck(
        parts, blocks(order_state(traced_a.trace, traced_b.trace, kind), words), COMPARE_PICK, {kind: n_layers},
        template_spec(go.Figure()), words,
        {"text_px": page_look.scale.text, "sentence": sentence, "whole": first is None, "modebar": modebar,
         "url_names": url_names(COMPARE_PICK)}, heads=cfg.n_heads, mean=True))


def pair(traced_a: Traced, traced_b: Traced, kind: str, layer: int, head: int, start: int,
         page_look: Look) -> SentencePair:
    """A pick (head: view.MEAN_HEAD for the layer's mean) on the two sentences."""
    return SentencePair(traced_a, traced_b, kind, layer, view.as_head(head), start,
                        map_size(page_look))


@view.shared_part
def pair_part(traced_a: Traced, traced_b: Traced, kind: str, layer: int, head: int, start: int,
              page_look: Look) -> dict:
    """One pick's part of the deck: its pictures (the heads mode's builders) and the translations."""
    made = pair(traced_a, traced_b, kind, layer, head, start, page_look)
    return payloads.deck_pick(made.figures(page_look), made.files(), made.texts(page_look.words))


def pick_csv(traced_a: Traced, traced_b: Traced, kind: str, start: int):
    """The CSV of a picture the browser asked for: the whole map (or difference) it shows a window of."""
    cfg = traced_a.model.config

    def make(asked: dict) -> dict:
        layer = min(max(asked["layer"], 0), schema.n_layers(cfg, kind) - 1)
        head = min(max(asked["head"], view.MEAN_HEAD), cfg.n_heads - 1)
        figure = asked.get("figure") if asked.get("figure") in FIGURES else "a"
        made = pair(traced_a, traced_b, kind, layer, head, start, look())
        figure = figure if figure != "order" or made.diff is not None else "a"
        return {"name": made.files()[figure] + ".csv", "text": made.matrix(figure).to_csv()}
    return make


class HeadPair:
    """Head B (or a layer's mean of the heads: head None) against head A on the sidebar's sentence: the two maps and
    B − A through the window `shown` (queries start, stop, keys start, stop: A's, the server's slider), what the
    pictures and their CSVs (the whole maps) are made of."""

    def __init__(self, traced: Traced, kind: str, a: tuple[int, int | None], b: tuple[int, int | None],
                 shown: tuple[int, int, int, int]):
        trace = traced.trace
        self.model_id, self.kind, self.picks = traced.model_id, kind, {"a": a, "b": b}
        self.maps = {"a": head_map(trace, kind, *a), "b": head_map(trace, kind, *b)}
        self.maps["diff"] = self.maps["b"] - self.maps["a"]
        self.rows, self.cols = attention_labels(trace.meta, kind)
        self.shown = slice(*shown[:2]), slice(*shown[2:])

    def files(self) -> dict[str, str]:
        tag = {which: head_tag(self.kind, *pick) for which, pick in self.picks.items()}
        return {"a": safe_filename(f"{self.model_id}-{tag['a']}"), "b": safe_filename(f"{self.model_id}-{tag['b']}"),
                "diff": safe_filename(f"{self.model_id}-{tag['b']}-minus-{tag['a']}")}

    def figure(self, which: str, page_look: Look) -> go.Figure:
        if which == "diff":
            q, k = self.shown
            return difference_map(self.maps["diff"][q, k], self.rows[q], self.cols[k], "B − A", page_look)
        name = head_name(*self.picks[which], page_look.words)
        return half_map(f"{which.upper()}: {name}", self.maps[which], self.rows, self.cols, self.shown, page_look)

    def matrix(self, figure: str):
        return matrix_frame(self.maps[figure], self.rows, self.cols)


def heads_blocks(words: Words) -> list[dict]:
    """The two-heads deck's layout: head B's pickers, the two maps side by side, then B − A beside what it shows."""
    figure = lambda name: {"type": "figure", "id": name, "csv": True}        # noqa: E731
    return [{"type": "pickers", "title": words("compare.head", which="B")},
            {"type": "columns", "columns": [[figure("a")], [figure("b")]]},
            {"type": "columns", "widths": [DIFF_SHARE, 1 - DIFF_SHARE], "columns": [
                [figure("diff")],
                [{"type": "text", "id": "diff-text", "title": words("compare.heads.text"), "size": "body"},
                 {"type": "text", "id": "diff-caption", "title": words("compare.heads.caption")}]]}]


@view.shared_cached
def built_heads_deck(traced: Traced, kind: str, a: tuple[int, int], shown: tuple[int, int, int, int],
                     page_look: Look, modebar: bool, first: tuple[int, int] | None) -> payloads.Body:
    """The browser's data for head A (the server's pick; MEAN_HEAD for a layer's mean): A's map once (the part of
    every pick, ""), and every head B's map and B − A (`first`: only that B, a new sentence's first run)."""
    cfg = traced.model.config
    n_layers = schema.n_layers(cfg, kind)
    picks = ([first] if first is not None else
             [(layer, head) for layer in range(n_layers) for head in (view.MEAN_HEAD, *range(cfg.n_heads))])
    parts = {"": head_a_part(traced, kind, a, shown, page_look)}
    parts.update({f"{layer}:{head}": head_b_part(traced, kind, a, (layer, head), shown, page_look)
                  for layer, head in picks})
    sentence = heads_sig(traced, kind, a, shown, page_look, modebar)
    return payloads.encode(payloads.deck(
        parts, heads_blocks(page_look.words), COMPARE_PICK, {kind: n_layers}, template_spec(go.Figure()),
        page_look.words, {"text_px": page_look.scale.text, "sentence": sentence, "whole": first is None,
                          "modebar": modebar, "url_names": url_names(COMPARE_PICK, B_URLS)},
        heads=cfg.n_heads, mean=True))


def heads_sig(traced: Traced, kind: str, a: tuple[int, int], shown: tuple, page_look: Look, modebar: bool) -> str:
    return payloads.view_sig("compare-heads", (traced.trace_key, kind, a, shown, page_look, modebar))


def head_pair(traced: Traced, kind: str, a: tuple[int, int], b: tuple[int, int], shown: tuple) -> HeadPair:
    return HeadPair(traced, kind, (a[0], view.as_head(a[1])), (b[0], view.as_head(b[1])), shown)


@view.shared_cached
def head_a_part(traced: Traced, kind: str, a: tuple[int, int], shown: tuple, page_look: Look) -> dict:
    """Head A's map: the same in every pick of the deck."""
    made = head_pair(traced, kind, a, a, shown)
    return payloads.deck_pick({"a": made.figure("a", page_look)}, {"a": made.files()["a"]})


@view.shared_part
def head_b_part(traced: Traced, kind: str, a: tuple[int, int], b: tuple[int, int], shown: tuple,
                page_look: Look) -> dict:
    """One head B's part: its map and B − A."""
    made = head_pair(traced, kind, a, b, shown)
    files = made.files()
    return payloads.deck_pick({which: made.figure(which, page_look) for which in ("b", "diff")},
                              {which: files[which] for which in ("b", "diff")})


def heads_csv(traced: Traced, kind: str, a: tuple[int, int], shown: tuple):
    """The CSV of a picture the browser asked for: the whole map (or B − A) it shows a window of."""
    cfg = traced.model.config

    def make(asked: dict) -> dict:
        b = (min(max(asked["layer"], 0), schema.n_layers(cfg, kind) - 1),
             min(max(asked["head"], view.MEAN_HEAD), cfg.n_heads - 1))
        figure = asked.get("figure") if asked.get("figure") in ("a", "b", "diff") else "b"
        made = head_pair(traced, kind, a, b, shown)
        return {"name": made.files()[figure] + ".csv", "text": made.matrix(figure).to_csv()}
    return make


def b_picked(n_layers: int, n_heads: int) -> tuple[int, int]:
    """Head B, from the URL (which the browser's picks write: layer_b, head_b), checked and written back; head 1
    unless the link says otherwise (head 0 of a one-head model)."""
    layer = view.read(view.LAYER_B, hi=n_layers - 1)
    head = view.read(view.HEAD_B, default=1 if n_heads > 1 else 0, lo=view.MEAN_HEAD, hi=n_heads - 1)
    view.write_url({view.LAYER_B: layer, view.HEAD_B: head})
    return layer, head


def compare_heads(ctx, kind: str, n_layers: int, picture=None) -> None:
    """Head A picked on the server (its select boxes), head B in the browser (a deck of every B against A).
    picture: as compare_sentences'."""
    trace, cfg = ctx.trace, ctx.model.config
    c1, _ = st.columns(2)
    with c1:
        st.caption(t("compare.head", which="A"))
        layer, head = layer_head_pickers(n_layers, cfg.n_heads, key=view.key(COMPARE, kind))
    a = (layer, view.MEAN_HEAD if head is None else head)
    b = b_picked(n_layers, cfg.n_heads)
    q, k = shown_tokens(kind, head_map(trace, kind, layer, head))
    shown = (q.start, q.stop, k.start, k.stop)
    page_look, modebar = look(), plotly_config("")["displayModeBar"]
    sentence = heads_sig(ctx.traced, kind, a, shown, page_look, modebar)
    whole = whole_asked(sentence, HEADS_DECK)
    body = built_heads_deck(ctx.traced, kind, a, shown, page_look, modebar, None if whole else b)
    with picture if picture is not None else st.container():
        browser_view(HEADS_DECK, COMPARE_PICK, body, {"layer": b[0], "head": b[1]},
                     {"sentence": sentence, "whole": whole}, csv=heads_csv(ctx.traced, kind, a, shown), urls=B_URLS)


def explain_positions() -> None:
    with explained(t("compare.why.title")):
        st.markdown(t("compare.why.text"))
        st.latex(r"x_{pos}=\sqrt{d}\,E[w_{pos}]+PE(pos),\quad PE(pos,2i)=\sin\frac{pos}{10000^{2i/d}},\ "
                 r"PE(pos,2i+1)=\cos\frac{pos}{10000^{2i/d}}")


def render() -> None:
    ctx = need_context()
    st.title(t("compare.title"))
    picture = st.container() if on_phone() else None      # a phone: the maps over the pickers (they filled its screen)
    c1, c2 = st.columns(2)
    mode = c1.radio(t("compare.mode"), list(MODES), horizontal=True,
                    key=view.seeded("compare-mode", view.read(view.MODE, choices=list(MODES))),
                    format_func={m: t(COMPARE_MODE_KEYS[m]) for m in MODES}.get)
    kind = c2.radio(t("compare.kind"), KINDS, horizontal=True, key=view.seeded("compare-kind", view.read(view.KIND, choices=KINDS)),
                    format_func={k: kind_short(k) for k in KINDS}.get,     # words of this run's language
                    help=" · ".join(kind_title(k) for k in KINDS))
    view.write_url({view.MODE: mode, view.KIND: kind})
    n_layers = schema.n_layers(ctx.model.config, kind)
    if mode == "sentences":
        view.write_url({view.LAYER_B: None, view.HEAD_B: None})
        compare_sentences(ctx, kind, n_layers, picture)
    else:
        view.write_url({view.TEXT_B: None})
        compare_heads(ctx, kind, n_layers, picture)
    explain_positions()


if __name__ == "__main__":
    render()
