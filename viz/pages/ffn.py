"""Feed-forward, label smoothing and dropout on the reader's sentence: which FFN hidden
units fire for which tokens and what the FFN adds to the residual stream; the model's distribution beside
the label-smoothed target with the loss with and without smoothing; attention with dropout on beside off.
The feed-forward view is drawn in the browser (viz/elements/browser_view.py, a deck): the stack and layer are
picked there without a script run; the page reads the pick from the URL (stack=, layer=) and sends each
sentence's pictures for every stack and layer once. The dropout view is a deck too: its kind, layer and head are
picked in the browser (kind=, layer=, head=), every kind x layer x head sent once for the window its server slider
chose. The smoothing view is the server's."""
from __future__ import annotations


import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from model.analysis import regularize as rg
from model.analysis.attention_math import future_mask
from model.capture import schema
from viz.figures.regularize import (dropout_figure, ffn_add_figure, ffn_units_figure, loss_figure, rows_that_fit,
                                   smoothing_figure)
from viz.figures import browser_view as payloads
from viz.figures.attention import source_window, window_from
from viz.figures.browser_view import template_spec
from viz.figures.style import Look, Words, plotly_text
from viz.core.i18n import catalogue_keys, t
from viz.core import view
from viz.core.context import Traced
from viz.core.text import attention_labels, position_labels
from viz.elements.browser_view import STACK_PICK, STACK_URL, ZOO_PICK, browser_view, url_names, whole_asked
from viz.elements.ui import (explained, look, matrix_frame, need_context, plotly_config, safe_filename, show_figure,
                             token_window, type_scale)

OWN = view.Own("viz.pages.ffn")  # this module's own session values
FFN_DECK = OWN.value("ffn-deck")  # ffn-deck-view, -whole, -csv: the feed-forward view's browser view
DROP_DECK = OWN.value("drop-deck")  # drop-deck-view, -head, -whole, -csv: the dropout view's browser view
DROP_PICK = ZOO_PICK                # the dropout view picks a kind, a layer and a head (no mean: dropout acts per head)

VIEWS = ["ffn", "smoothing", "dropout"]
VIEW_KEYS = catalogue_keys("ffn.view", "ffn", "smoothing", "dropout")
STACKS = ["encoder", "decoder"]
STACK_KEYS = catalogue_keys("ffn.stack", "encoder", "decoder")
KINDS = list(schema.KINDS)
# FeedForward.direction -> the words under the "what the FFN adds" chart
DIRECTION_KEYS = catalogue_keys("ffn.add.cos", "new", "along", "against", "mixed")
SAMPLES = 3
DROP_WINDOW = 14     # tokens a dropout panel shows (the explorer's half-page window): a longer sentence through a
                     # window of them (four panels of 128 tokens: its deck was 2.7 MB gzipped, the labels unreadable)
SEED = 0
FFN_FORMULA = r"\mathrm{FFN}(x)=\max(0,\ xW_1+b_1)\,W_2+b_2"
SMOOTH_FORMULA = (r"q_v=(1-\varepsilon)\,[v=y]+\frac{\varepsilon}{V},\qquad "
                  r"\mathcal{L}_{\varepsilon}=-\sum_{v}q_v\log p_v=(1-\varepsilon)(-\log p_y)"
                  r"+\varepsilon\cdot\frac1V\sum_v(-\log p_v)")
DROPOUT_FORMULA = r"\tilde a_{ij}=\frac{m_{ij}}{1-p}\,a_{ij},\qquad m_{ij}\sim\mathrm{Bernoulli}(1-p)"


FIRING_LISTED = 24     # tokens the caption names where the strongest unit fires (the CSV has them all)

def _view_changed() -> None:
    view.forget_url(view.STACK, view.LAYER, view.TOKEN, view.KIND, view.HEAD)


def toy_note(cfg) -> None:
    if rg.trained_plainly(cfg):
        st.info(t("ffn.toy_note", p=rg.PAPER_DROPOUT, eps=rg.TRAINING_SMOOTHING))


def picked(cfg) -> tuple[str, int]:
    """The stack and layer the feed-forward view shows, from the URL (which the browser's picks write), checked
    against the model, and written back."""
    stack = view.read(view.STACK, choices=STACKS)
    layer = view.read(view.LAYER, hi=schema.n_layers(cfg, stack) - 1)
    view.write_url({view.STACK: stack, view.LAYER: layer})
    return stack, layer


def window_start(trace, size: int) -> int:
    """Where a long sentence's window starts: one slider over the longer stack's tokens (each stack keeps its
    window inside its own: attention.window_from), drawn only when needed."""
    n_longest = max(len(schema.stack_tokens(trace.meta, stack)) for stack in STACKS)
    return token_window(n_longest, size, "ffn-window").start


class FeedForwardPick:
    """The real numbers of one stack and layer's FFN, through the page's window (the captions and the CSVs: the
    whole sentence): what its two pictures, their captions and CSVs are made of."""

    def __init__(self, traced, stack: str, layer: int, size: int, start: int, type_scale_name: str):
        self.cfg, self.stack, self.layer = traced.model.config, stack, layer
        self.ff = ff = rg.feed_forward(traced.trace.arrays, stack, layer, self.cfg.norm_first)
        self.tokens = position_labels(schema.stack_tokens(traced.trace.meta, stack))
        self.shown = window_from(start, len(self.tokens), size)
        self.units = rg.top_units(ff.hidden[self.shown], per_token=2,
                                  limit=20 if type_scale_name == "presenter" else 24)
        self.tag = f"{traced.model_id}-{stack}-L{layer}-ffn"

    def files(self) -> dict[str, str]:
        return {name: safe_filename(f"{self.tag}-{suffix}") for name, suffix in FILES.items()}

    def figures(self, page_look) -> dict:
        """The pick's two pictures, as the builders draw them."""
        ff, shown, units, words = self.ff, self.shown, self.units, page_look.words
        return {
            "units": ffn_units_figure(ff.hidden[shown][:, units], self.tokens[shown], units, page_look,
                                      title=words("ffn.units.title", stack=words(STACK_KEYS[self.stack]),
                                                  layer=self.layer, shown=len(units), d_ff=self.cfg.d_ff)),
            "adds": ffn_add_figure(self.tokens[shown], ff.resid_norm[shown], ff.out_norm[shown], ff.cosine[shown],
                                   page_look, title=words("ffn.add.title")),
        }

    def texts(self, page_look) -> dict[str, str]:
        """The captions under the pictures (set as text in the browser: the tokens as they are)."""
        ff, tokens, words = self.ff, self.tokens, page_look.words
        strongest = int(ff.hidden.max(1).argmax())
        unit = int(ff.hidden[strongest].argmax())
        firing = [tokens[i] for i in np.flatnonzero(ff.hidden[:, unit] > 0)]
        firing = firing[:FIRING_LISTED] + (["…"] if len(firing) > FIRING_LISTED else [])   # 512 tokens: lines of them
        ratio = ff.out_norm / np.maximum(ff.resid_norm, 1e-12)
        return {
            "units-caption": words("ffn.units.caption", active=f"{100 * ff.active.mean():.0f}",
                                   low=f"{100 * ff.active.min():.0f}", high=f"{100 * ff.active.max():.0f}",
                                   d_ff=self.cfg.d_ff, unit=unit, token=tokens[strongest],
                                   value=f"{ff.hidden[strongest, unit]:.2f}", tokens=", ".join(firing) or "—"),
            "adds-caption": words("ffn.add.caption", low=f"{ratio.min():.2f}", high=f"{ratio.max():.2f}",
                                  cos_low=f"{ff.cosine.min():.2f}", cos_high=f"{ff.cosine.max():.2f}",
                                  reading=words(DIRECTION_KEYS[ff.direction])),
        }

    def matrix(self, figure: str) -> pd.DataFrame:
        """The numbers a picture shows, of every token (its CSV)."""
        ff, tokens = self.ff, self.tokens
        if figure == "units":
            return matrix_frame(ff.hidden[:, self.units], tokens, [f"#{u}" for u in self.units])
        return matrix_frame(np.stack([ff.resid_norm, ff.out_norm, ff.cosine], 1), tokens,
                            [t("ffn.add.resid"), t("ffn.add.out"), t("ffn.add.cosine")])

    def part(self, page_look) -> dict:
        """The pick's part of the view's deck (viz/figures/browser_view.py)."""
        return payloads.deck_pick(self.figures(page_look), self.files(), self.texts(page_look))


FILES = {"units": "units", "adds": "adds"}
# the view's layout, every pick alike: each picture with its CSV, its caption under it
BLOCKS = [{"type": "figure", "id": "units", "csv": True}, {"type": "text", "id": "units-caption"},
          {"type": "figure", "id": "adds", "csv": True}, {"type": "text", "id": "adds-caption"}]


def body_key(ctx, size: int, start: int) -> tuple:
    """What the view's deck is built for (built_deck's arguments but `first`): the sentence (trace), the window,
    the look (words and type scale), the modebar."""
    return ctx.trace_key, size, start, look(), plotly_config("")["displayModeBar"]


def sentence_sig(at) -> str:
    return payloads.view_sig("ffn", at)


def deck_body(ctx, size: int, start: int, first: tuple[str, int] | None) -> payloads.Body:
    """The browser's data for this sentence and view: built once, for every session of the worker. `first` (stack,
    layer): only that pick (a new sentence's first run); the view asks for the rest once it has drawn it."""
    return built_deck(ctx.traced, size, start, look(), plotly_config("")["displayModeBar"], first)


@view.shared_cached
def built_deck(traced: Traced, size: int, start: int, page_look: Look, modebar: bool,
               first: tuple[str, int] | None) -> payloads.Body:
    cfg, words = traced.model.config, page_look.words
    layers = {stack: schema.n_layers(cfg, stack) for stack in STACKS}
    picks = [(stack, layer) for stack in STACKS for layer in range(layers[stack])] if first is None else [first]
    parts = {f"{stack}:{layer}": stack_part(traced, stack, layer, size, start, page_look) for stack, layer in picks}
    sentence = sentence_sig((traced.trace_key, size, start, page_look, modebar))     # body_key
    return payloads.encode(payloads.deck(
        parts, BLOCKS, STACK_PICK, layers, template_spec(go.Figure()), words,
        {"text_px": page_look.scale.text, "sentence": sentence, "whole": first is None, "modebar": modebar,
         "url_names": url_names(STACK_PICK, STACK_URL)},
        said={"kind": words("ffn.stack"), "kind_names": {stack: words(STACK_KEYS[stack]) for stack in STACKS}}))


@view.shared_part
def stack_part(traced: Traced, stack: str, layer: int, size: int, start: int, page_look: Look) -> dict:
    """One pick's part of the deck (its pictures drawn in `page_look`)."""
    return FeedForwardPick(traced, stack, layer, size, start, page_look.scale.name).part(page_look)


def pick_csv(ctx, size: int, start: int):
    """The CSV of a picture the browser asked for: the numbers it shows, of every token."""
    cfg = ctx.model.config

    def make(pick: dict) -> dict:
        stack = pick["kind"] if pick["kind"] in STACKS else STACKS[0]
        layer = min(max(pick["layer"], 0), schema.n_layers(cfg, stack) - 1)
        figure = pick.get("figure") if pick.get("figure") in FILES else "units"
        numbers = FeedForwardPick(ctx.traced, stack, layer, size, start, type_scale().name)
        return {"name": numbers.files()[figure] + ".csv", "text": numbers.matrix(figure).to_csv()}
    return make


def feed_forward(ctx, cols) -> None:
    """Which hidden units fire for which token and what the FFN adds, for the stack and layer picked in the browser
    (a deck: every stack x layer sent once a sentence, picked there with no script run); the window's slider and
    the explanation stay the server's."""
    cfg = ctx.model.config
    stack, layer = picked(cfg)
    drawn = st.container()
    size = rows_that_fit(type_scale())
    start = window_start(ctx.trace, size)        # the slider under the view: the window is what it is built for
    sentence = sentence_sig(body_key(ctx, size, start))
    whole = whole_asked(sentence, FFN_DECK)
    with drawn:
        body = deck_body(ctx, size, start, None if whole else (stack, layer))
        browser_view(FFN_DECK, STACK_PICK, body, {"kind": stack, "layer": layer},
                     {"sentence": sentence, "whole": whole}, csv=pick_csv(ctx, size, start), urls=STACK_URL)
    with explained(t("ffn.explain.ffn.title")):
        st.latex(FFN_FORMULA)
        st.markdown(t("ffn.explain.ffn.text", d_model=cfg.d_model, d_ff=cfg.d_ff))


def smoothing(ctx, cols) -> None:
    trace, tok = ctx.trace, ctx.model.tokenizer
    gold = np.asarray(trace.meta["tgt_ids"], dtype=int)
    out_tokens = position_labels(trace.meta["tgt_out_tokens"])
    pos = cols[1].selectbox(t("ffn.smooth.pick"), list(range(len(gold))),
                            key=view.seeded("ffn-smooth-token", view.read(view.TOKEN, hi=len(gold) - 1)), format_func=lambda i: out_tokens[i], label_visibility="collapsed")
    view.write_url({view.TOKEN: pos})
    s = rg.smoothing_losses(trace[schema.LOGITS], gold, rg.TRAINING_SMOOTHING)
    vocab = s.probs.shape[1]
    cand = rg.candidates(s.probs[pos], gold[pos], k=5)
    names = tok.token_strings(cand.tolist())
    rest = (1.0 - s.probs[pos, cand].sum(), 1.0 - s.target[pos, cand].sum())
    tag = f"{ctx.model_id}-smoothing-{pos}"
    show_figure(smoothing_figure(names, s.probs[pos, cand], s.target[pos, cand], look(), rest=rest,
                                 rest_label=t("ffn.smooth.rest", n=vocab - len(cand)),
                                 title=t("ffn.smooth.title", token=plotly_text([out_tokens[pos]])[0],
                                         eps=rg.TRAINING_SMOOTHING)),
                tag, matrix_frame(np.stack([s.probs[pos, cand], s.target[pos, cand]], 1), names,
                                  [t("ffn.smooth.model"), t("ffn.smooth.target")]), key="ffn-smooth")
    st.caption(t("ffn.smooth.caption", gold=f"{s.target[pos, gold[pos]]:.5f}", other=f"{s.eps / vocab:.1e}",
                 others=f"{vocab - 1:,}", eps=s.eps, p=f"{s.probs[pos, gold[pos]]:.3f}", nll=f"{s.nll[pos]:.3f}",
                 smoothed=f"{s.smoothed[pos]:.3f}", floor=f"{s.floor[pos]:.3f}"))
    toy_note(ctx.model.config)
    show_figure(loss_figure(out_tokens, s.nll, s.smoothed, s.eps, look(), s.floor, title=t("ffn.loss.title")),
                f"{ctx.model_id}-smoothing-loss", matrix_frame(np.stack([s.nll, s.smoothed, s.floor], 1), out_tokens,
                                                               [t("ffn.loss.plain"), t("ffn.loss.smooth", eps=s.eps),
                                                                t("ffn.loss.floor")]), key="ffn-loss")
    st.caption(t("ffn.loss.caption", nll=f"{s.nll.mean():.3f}", smoothed=f"{s.smoothed.mean():.3f}",
                 floor=f"{s.floor.mean():.3f}"))
    with explained(t("ffn.explain.smooth.title")):
        st.latex(SMOOTH_FORMULA)
        st.markdown(t("ffn.explain.smooth.text", eps=s.eps))


class DropoutPick:
    """The real numbers of one kind, layer and head's attention with dropout off and on (SAMPLES seeded samples):
    what its picture, its caption and its CSV are made of."""

    def __init__(self, traced, kind: str, layer: int, head: int, start: int = 0):
        cfg, trace = traced.model.config, traced.trace
        self.cfg, self.kind, self.layer, self.head = cfg, kind, layer, head
        self.weights = np.asarray(trace[schema.pattern_name(kind, layer)][head], dtype=np.float64)        # [T, S]
        self.p = rg.shown_dropout(cfg)
        self.samples = rg.attention_dropout(self.weights, self.p, SAMPLES, seed=SEED)                  # [n, T, S]
        self.rows, self.cols = attention_labels(trace.meta, kind)
        self.mask = future_mask(kind, len(self.rows), len(self.cols))
        self.tag = f"{traced.model_id}-{kind}-L{layer}-H{head}-dropout"
        # what the picture shows: DROP_WINDOW queries from `start` (the page's slider, kept inside these rows) and
        # the keys they look at (self-attention: the same tokens); the caption's numbers and the CSV: every token
        queries = window_from(start, len(self.rows), DROP_WINDOW)
        self.shown = (queries, queries if kind != "cross" else source_window(self.weights, queries, DROP_WINDOW))

    def dropped(self) -> float:
        """The share of the weights dropout could touch (non-zero, not masked) that the samples zeroed."""
        live = self.weights > 0 if self.mask is None else (self.weights > 0) & ~self.mask
        return float(((self.samples == 0) & live).sum() / max(1, live.sum() * SAMPLES))

    def figure(self, page_look: Look):
        words = page_look.words
        titles = [words("ffn.drop.off")] + [words("ffn.drop.sample", i=i + 1) for i in range(SAMPLES)]
        q, k = self.shown
        return dropout_figure([m[q, k] for m in (self.weights, *self.samples)], titles, self.rows[q], self.cols[k],
                              page_look, mask=None if self.mask is None else self.mask[q, k],
                              title=words("ffn.drop.title", kind=words.kind(self.kind), layer=self.layer,
                                          head=self.head, p=self.p))

    def caption(self, words: Words) -> str:
        sums, p = self.samples.sum(-1), self.p
        return words("ffn.drop.caption", p=p, dropped=f"{100 * self.dropped():.0f}", scale=f"{1 / (1 - p):.3f}",
                     low=f"{sums.min():.2f}", high=f"{sums.max():.2f}", seed=SEED)

    def matrix(self) -> pd.DataFrame:
        """The numbers its CSV holds: the first sample with dropout on, as the page's CSV always had it."""
        return matrix_frame(self.samples[0], self.rows, self.cols)

    def part(self, page_look: Look) -> dict:
        """The pick's part of the dropout view's deck."""
        return payloads.deck_pick({"drop": self.figure(page_look)}, {"drop": safe_filename(self.tag)},
                                  {"drop-caption": self.caption(page_look.words)})


DROP_BLOCKS = [{"type": "figure", "id": "drop", "csv": True}, {"type": "text", "id": "drop-caption"}]


def dropout_picked(cfg) -> tuple[str, int, int]:
    """The kind, layer and head the dropout view shows, from the URL (which the browser's picks write), checked
    against the model, and written back; a cross-attention head unless the link says otherwise."""
    kind = view.read(view.KIND, choices=KINDS, default="cross")
    layer = view.read(view.LAYER, hi=schema.n_layers(cfg, kind) - 1)
    head = view.read(view.HEAD, lo=0, hi=cfg.n_heads - 1)
    view.write_url({view.KIND: kind, view.LAYER: layer, view.HEAD: head})
    return kind, layer, head


def drop_body_key(ctx, start: int) -> tuple:
    """What the dropout view's deck is built for (built_drop_deck's arguments but `first`): the sentence (trace),
    the window's start, the look (words and type scale), the modebar."""
    return ctx.trace_key, start, look(), plotly_config("")["displayModeBar"]


def drop_sentence_sig(at) -> str:
    return payloads.view_sig("ffn-dropout", at)


@view.shared_cached
def built_drop_deck(traced: Traced, start: int, page_look: Look, modebar: bool,
                    first: tuple[str, int, int] | None) -> payloads.Body:
    """The dropout view's browser data for a sentence and window: every kind x layer x head's picture and caption
    (`first`: that pick only, a new sentence's first run)."""
    cfg = traced.model.config
    layers = {kind: schema.n_layers(cfg, kind) for kind in KINDS}
    picks = ([first] if first is not None else
             [(kind, layer, head) for kind in KINDS for layer in range(layers[kind]) for head in range(cfg.n_heads)])
    parts = {payloads.pick_key(dict(zip(DROP_PICK, pick)), DROP_PICK): drop_part(traced, *pick, start, page_look)
             for pick in picks}
    sentence = drop_sentence_sig((traced.trace_key, start, page_look, modebar))     # drop_body_key
    return payloads.encode(payloads.deck(
        parts, DROP_BLOCKS, DROP_PICK, layers, template_spec(go.Figure()), page_look.words,
        {"text_px": page_look.scale.text, "sentence": sentence, "whole": first is None, "modebar": modebar,
         "url_names": url_names(DROP_PICK)}, heads=cfg.n_heads))


@view.shared_part
def drop_part(traced: Traced, kind: str, layer: int, head: int, start: int, page_look: Look) -> dict:
    """One kind, layer and head's part of the dropout view's deck (its picture drawn in `page_look`, its window from
    `start`)."""
    return DropoutPick(traced, kind, layer, head, start).part(page_look)


def drop_csv(ctx):
    """The CSV of the dropout picture the browser asked for (its kind, layer and head): its first sample's weights,
    every query and key."""
    cfg = ctx.model.config

    def make(pick: dict) -> dict:
        kind = pick["kind"] if pick["kind"] in KINDS else KINDS[0]
        layer = min(max(pick["layer"], 0), schema.n_layers(cfg, kind) - 1)
        head = min(max(pick["head"], 0), cfg.n_heads - 1)
        numbers = DropoutPick(ctx.traced, kind, layer, head)
        return {"name": safe_filename(numbers.tag) + ".csv", "text": numbers.matrix().to_csv()}
    return make


def dropout(ctx, cols) -> None:
    """Attention with dropout off beside three seeded samples with it on, for the kind, layer and head picked in the
    browser (a deck: every kind x layer x head sent once a sentence and window, picked there with no script run);
    the window's slider, the note and the explanation stay the server's."""
    cfg = ctx.model.config
    chosen = dropout_picked(cfg)
    longest = max(len(attention_labels(ctx.trace.meta, k)[0]) for k in KINDS)
    start = token_window(longest, DROP_WINDOW, "drop-tokens").start      # one slider; each kind keeps it inside
    sentence = drop_sentence_sig(drop_body_key(ctx, start))
    whole = whole_asked(sentence, DROP_DECK)
    body = built_drop_deck(ctx.traced, start, look(), plotly_config("")["displayModeBar"], None if whole else chosen)
    browser_view(DROP_DECK, DROP_PICK, body, dict(zip(DROP_PICK, chosen)), {"sentence": sentence, "whole": whole},
                 csv=drop_csv(ctx))
    toy_note(cfg)
    with explained(t("ffn.explain.drop.title")):
        st.latex(DROPOUT_FORMULA)
        st.markdown(t("ffn.explain.drop.text", p=rg.shown_dropout(cfg)))


def render() -> None:
    ctx = need_context()
    st.title(t("ffn.title"))
    cols = st.columns([3.4, 1.8, 1.1, 1.1], vertical_alignment="center")
    part = cols[0].radio(t("ffn.view"), VIEWS, horizontal=True,
                         key=view.seeded("ffn-view", view.read(view.PART, choices=VIEWS)), on_change=_view_changed, label_visibility="collapsed",
                         format_func=lambda v: t(VIEW_KEYS[v]))
    view.write_url({view.PART: part})
    {"ffn": feed_forward, "smoothing": smoothing, "dropout": dropout}[part](ctx, cols)


if __name__ == "__main__":
    render()
