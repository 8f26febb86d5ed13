"""LayerNorm & residual: one norm's statistics, its gain and bias, LN vs BN, and the residual stream's size.
The norm's pictures are drawn in the browser (viz/elements/browser_view.py, a deck): the layer is picked there with
no script run, written to the URL (layer=); for the stack, norm and token the server's pickers chose, the page sends
every layer's pictures once. The residual stream's picture (every layer at once) and the explanation stay the
server's."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from model.analysis.norms import batch_norm_drift, batch_norm_stats, layer_norm_stats, residual_stages
from model.capture import schema
from viz.figures import browser_view as payloads
from viz.figures.browser_view import template_spec
from viz.figures.layernorm import (drift_figure, feature_histogram, gain_bias_figure, ln_vs_bn_figure,
                                   residual_norm_figure, token_stats_figure, tokens_that_fit)
from viz.figures.style import Look, Words, plotly_text
from viz.core.folder_text import code_span
from viz.core.i18n import t
from viz.core import view
from viz.core.context import Traced
from viz.core.text import position_labels
from viz.elements.browser_view import LAYER_PICK, browser_view, url_names, whole_asked
from viz.elements.ui import (look, matrix_frame, need_context, plotly_config, safe_filename, show_figure,
                             token_window, type_scale)

OWN = view.Own("viz.pages.layernorm")  # this module's own session values
LN_DECK = OWN.value("ln-deck")  # ln-deck-view, -head, -whole, -csv: the norm's pictures' browser view

STACKS = ["encoder", "decoder"]
NORMS = ("norm_attn", "norm_cross", "norm_ff")   # where each sits: layernorm.place.<after|before>.<norm> in viz/locales
LN_FORMULA = (r"\mathrm{LN}(x)=\gamma\odot\frac{x-\mu}{\sigma}+\beta,\quad \mu=\frac1d\sum_{j=1}^{d}x_j,\quad "
              r"\sigma=\sqrt{\frac1d\sum_{j=1}^{d}(x_j-\mu)^2+\epsilon}")
POST_PRE_FORMULA = (r"\begin{aligned}\text{%(post)s:}&\ \ "
                    r"x\leftarrow\mathrm{LN}\big(x+\mathrm{Sublayer}(x)\big)\\ "
                    r"\text{%(pre)s:}&\ \ x\leftarrow x+\mathrm{Sublayer}\big(\mathrm{LN}(x)\big)\end{aligned}")


STAGE_WORDS = {"enc": "layernorm.stage.enc", "dec": "layernorm.stage.dec", "embedding": "layernorm.stage.embedding",
               "+attn": "layernorm.stage.attn", "+cross": "layernorm.stage.cross", "+ff": "layernorm.stage.ff"}


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
LAYERNORM_STACK_KEYS = {"decoder": "layernorm.stack.decoder", "encoder": "layernorm.stack.encoder"}


def stack_name(stack: str, words: Words = t) -> str:
    return words(LAYERNORM_STACK_KEYS[stack])


def stage_label(label: str) -> str:
    """A residual_stages label ("enc L0 +attn") in the page's language; layer names (L0) stay."""
    return " ".join(t(STAGE_WORDS[w]) if w in STAGE_WORDS else w for w in label.split(" "))


NORM_PLACES = {  # (pre-norm?, norm) -> where the LayerNorm sits, in the catalogue
    (False, "norm_attn"): "layernorm.place.after.norm_attn", (False, "norm_cross"): "layernorm.place.after.norm_cross",
    (False, "norm_ff"): "layernorm.place.after.norm_ff", (True, "norm_attn"): "layernorm.place.before.norm_attn",
    (True, "norm_cross"): "layernorm.place.before.norm_cross", (True, "norm_ff"): "layernorm.place.before.norm_ff",
}


def norm_place(norm: str, pre_norm: bool, words: Words = t) -> str:
    return words(NORM_PLACES[bool(pre_norm), norm])


def _stack_changed() -> None:
    """Layer, norm and token belong to the old stack: let the new one start from its defaults."""
    view.forget_url(view.LAYER, view.NORM, view.TOKEN)


def controls(cfg, labels: dict[str, list[str]]) -> tuple[str, str, int]:
    """Stack, norm and token in one row (the server's: the norms and tokens are the stack's); the options say what
    they are (their words made in the run: a test's client formats the options after it, in no session).
    The layer is the browser view's pick (picked())."""
    c1, c2, c3 = st.columns([1.5, 4.0, 1.7], vertical_alignment="center")
    stacks = {stack: stack_name(stack) for stack in STACKS}
    stack = c1.radio(t("layernorm.stack"), STACKS, horizontal=True,
                     key=view.seeded("ln-stack", view.read(view.STACK, choices=STACKS)), on_change=_stack_changed,
                     label_visibility="collapsed", format_func=stacks.__getitem__)
    norms = {k: t("layernorm.norm_option", place=norm_place(k, cfg.norm_first))
             for k in NORMS if stack == "decoder" or k != "norm_cross"}
    norm = c2.radio(t("layernorm.norm"), list(norms), horizontal=True,
                    key=view.seeded(f"ln-norm-{stack}", view.read(view.NORM, choices=list(norms))),
                    format_func=norms.__getitem__, label_visibility="collapsed")
    tokens = [t("layernorm.token.option", token=token) for token in labels[stack]]
    token = c3.selectbox(t("layernorm.token.pick"), list(range(len(tokens))),
                         key=view.seeded(f"ln-token-{stack}", view.read(view.TOKEN, hi=len(tokens) - 1)),
                         format_func=tokens.__getitem__, label_visibility="collapsed")
    return stack, norm, token


def picked(cfg, stack: str) -> int:
    """The layer the norm's pictures show, from the URL (which the browser's picks write), checked against the
    stack."""
    return view.read(view.LAYER, hi=schema.n_layers(cfg, stack) - 1)


def explain(ctx) -> None:
    st.header(t("layernorm.explain.header"))
    st.markdown(t("layernorm.explain.text"))
    st.latex(LN_FORMULA)
    st.latex(POST_PRE_FORMULA % {"post": t("layernorm.formula.post"), "pre": t("layernorm.formula.pre")})
    cfg = ctx.model.config
    if cfg.norm_first:
        said = [t("layernorm.explain.pre_norm", model=code_span(ctx.model_id))]
    else:
        said = [t("layernorm.explain.post_norm", model=code_span(ctx.model_id))]
        said += [t("layernorm.explain.final_norm")] if cfg.has_final_norm else []
    said += [t("layernorm.explain.ln_kind")] if cfg.ln_kind == "annotated" else []
    st.info(" ".join(said))


FILES = {"stats": "stats", "hist": "token", "gain": "gain-bias", "bn": "ln-vs-bn", "drift": "bn-drift"}
NORM_FIGURES = ("stats", "gain", "bn", "drift")         # the norm's (a layer's): the same for every token
TOKEN_FIGURES = ("hist",)                               # the token's, in that norm


class NormPick:
    """The real numbers of one norm (stack, layer, norm), and one token's through it: what its pictures, their
    captions and CSVs are made of (the captions and CSVs: every token; the token charts: the window `shown`)."""

    def __init__(self, traced, stack: str, layer: int, norm: str):
        self.cfg, self.model_id, self.meta = traced.model.config, traced.model_id, traced.trace.meta
        self.stack, self.layer, self.norm = stack, layer, norm
        arrays = traced.trace.arrays
        name = lambda hook: arrays[schema.norm_name(stack, layer, norm, hook)]      # noqa: E731
        self.x_in, self.x_norm, self.x_out = name("in"), name("normalized"), name("out")   # [T, D]
        self.gain, self.bias = name("gain"), name("bias")                                  # [D]
        self.mean_in, self.std_in = name("mean"), name("std")                              # [T]
        self.mean_after, self.std_after = layer_norm_stats(self.x_norm)                    # [T]
        self.tokens = position_labels(schema.stack_tokens(self.meta, stack))
        self.tag = f"{self.model_id}-{stack}-L{layer}-{norm}"

    def files(self, token: int) -> dict[str, str]:
        return {figure: safe_filename(f"{self.tag}-{suffix}{token if figure == 'hist' else ''}")
                for figure, suffix in FILES.items()}

    def series(self, token: int, words: Words) -> dict[str, np.ndarray]:
        return {words("layernorm.token.input"): self.x_in[token], words("layernorm.token.normalized"): self.x_norm[token],
                words("layernorm.token.output"): self.x_out[token]}

    def drift(self) -> np.ndarray:
        return batch_norm_drift(self.x_in, 0, self.cfg.ln_eps)

    def norm_figures(self, page_look: Look, shown: slice) -> dict:
        """The norm's pictures, as the builders draw them."""
        words, cfg, tokens = page_look.words, self.cfg, self.tokens
        input_is = words("layernorm.stats.input_pre") if cfg.norm_first else "x + Sublayer(x)"
        place = norm_place(self.norm, cfg.norm_first, words)
        return {
            "stats": token_stats_figure(tokens[shown], (self.mean_in[shown], self.std_in[shown]),
                                        (self.mean_after[shown], self.std_after[shown]), page_look,
                                        title=words("layernorm.stats.title", stack=stack_name(self.stack, words),
                                                    layer=self.layer, norm=place, input=input_is)),
            "gain": gain_bias_figure(self.gain, self.bias, page_look, title=words("layernorm.gain.title", norm=place)),
            "bn": ln_vs_bn_figure(self.x_in, tokens, page_look, title=words("layernorm.bn.title"), shown=shown),
            "drift": drift_figure(self.drift(), page_look, 0,
                                  title=words("layernorm.drift.title", token=plotly_text(tokens[:1])[0])),
        }

    def norm_texts(self, words: Words) -> dict[str, str]:
        """The captions under the norm's pictures (set as text in the browser: the tokens as they are)."""
        cfg, tokens = self.cfg, self.tokens
        decoder = ""
        if self.stack == "decoder":
            decoder = " " + words("layernorm.stats.decoder", tokens=words("layernorm.stats.teacher_forced")
                                  if self.meta["teacher_forced"] else words("layernorm.stats.own_output"))
        _bn_mean, bn_std = batch_norm_stats(self.x_in)
        return {
            "stats-caption": words("layernorm.stats.caption", mean_low=f"{self.mean_in.min():.3f}",
                                   mean_high=f"{self.mean_in.max():.3f}", std_low=f"{self.std_in.min():.3f}",
                                   std_high=f"{self.std_in.max():.3f}",
                                   largest=f"{np.abs(self.mean_after).max():.1e}",
                                   after_low=f"{self.std_after.min():.6f}", after_high=f"{self.std_after.max():.6f}",
                                   eps=f"{cfg.ln_eps:g}") + decoder,
            "bn-caption": words("layernorm.bn.caption", tokens=len(tokens), features=bn_std.size,
                                low=f"{bn_std.min():.3f}", high=f"{bn_std.max():.3f}"),
            "drift-caption": words("layernorm.drift.caption", token=tokens[0], change=f"{self.drift()[0]:.2f}"),
        }

    def token_figures(self, page_look: Look, token: int) -> dict:
        words = page_look.words
        chosen = plotly_text([self.tokens[token]])[0]
        return {"hist": feature_histogram(self.series(token, words), page_look,
                                          title=words("layernorm.token.title", features=self.x_in.shape[1],
                                                      token=chosen),
                                          width_px=page_look.scale.column_px())}

    def token_texts(self, words: Words, token: int) -> dict[str, str]:
        return {"hist-caption": words("layernorm.token.caption", token=self.tokens[token],
                                      mean_in=f"{self.mean_in[token]:.4f}", std_in=f"{self.std_in[token]:.4f}",
                                      mean_after=f"{self.mean_after[token]:.1e}",
                                      std_after=f"{self.std_after[token]:.4f}")}

    def matrix(self, figure: str, token: int, words: Words) -> pd.DataFrame:
        """The numbers a picture shows, of every token (its CSV)."""
        tokens, features = self.tokens, list(range(self.x_in.shape[1]))
        if figure == "stats":
            return matrix_frame(np.stack([self.mean_in, self.std_in, self.mean_after, self.std_after], axis=1), tokens,
                                [words("layernorm.stats.col_mean_before"), words("layernorm.stats.col_std_before"),
                                 words("layernorm.stats.col_mean_after"), words("layernorm.stats.col_std_after")])
        if figure == "hist":
            series = self.series(token, words)
            return matrix_frame(np.stack(list(series.values()), axis=1), features, list(series))
        if figure == "gain":
            return matrix_frame(np.stack([self.gain, self.bias], axis=1), features,
                                [words("layernorm.gain"), words("layernorm.bias")])
        if figure == "bn":
            return matrix_frame(self.x_in, tokens, features)
        drift = self.drift()
        return matrix_frame(drift[:, None], list(range(1, drift.size + 1)), [words("layernorm.drift.change")])


def blocks(words: Words, n_tokens: int, n_features: int) -> list[dict]:
    """How the deck is laid out, every layer alike: the statistics first (the page's picture), then one token's
    features beside the norm's gain and bias, then LayerNorm against BatchNorm."""
    figure = lambda name: {"type": "figure", "id": name, "csv": True}        # noqa: E731
    text = lambda name: {"type": "text", "id": name}                        # noqa: E731
    return [
        figure("stats"), text("stats-caption"),
        {"type": "heading", "id": "token-header", "size": "section", "title": words("layernorm.token.header")},
        {"type": "columns", "columns": [[figure("hist"), text("hist-caption")],
                                        [figure("gain"), {"type": "text", "id": "gain-caption",
                                                          "title": words("layernorm.gain.caption")}]]},
        {"type": "heading", "id": "bn-header", "size": "section", "title": words("layernorm.bn.header")},
        {"type": "text", "id": "bn-text", "size": "body",
         "title": words("layernorm.bn.text", tokens=n_tokens, features=n_features)},
        figure("bn"), text("bn-caption"), figure("drift"), text("drift-caption"),
    ]


def body_key(ctx, stack: str, norm: str, token: int, shown: slice) -> tuple:
    """What the deck is built for (built_deck's arguments but `first`): the sentence (trace), the stack, norm and
    token the server's pickers chose, the window, the look (words and type scale), the modebar."""
    return (ctx.trace_key, stack, norm, token, (shown.start, shown.stop), look(),
            plotly_config("")["displayModeBar"])


def sentence_sig(at) -> str:
    return payloads.view_sig("layernorm", at)


def deck_body(ctx, stack: str, norm: str, token: int, shown: slice, first: int | None) -> payloads.Body:
    """The browser's data for this sentence and view: built once, for every session of the worker. `first` (a
    layer): only that layer's pictures (a new sentence's first run); the view asks for the rest once it has drawn
    it."""
    return built_deck(ctx.traced, stack, norm, token, (shown.start, shown.stop), look(),
                      plotly_config("")["displayModeBar"], first)


@view.shared_cached
def built_deck(traced: Traced, stack: str, norm: str, token: int, window: tuple[int, int], page_look: Look,
               modebar: bool, first: int | None) -> payloads.Body:
    words, n_layers = page_look.words, schema.n_layers(traced.model.config, stack)
    picks = range(n_layers) if first is None else [first]
    parts = {str(layer): layer_part(traced, stack, layer, norm, token, window, page_look) for layer in picks}
    sentence = sentence_sig((traced.trace_key, stack, norm, token, window, page_look, modebar))    # body_key
    x_in = traced.trace.arrays[schema.norm_name(stack, 0, norm, "in")]
    return payloads.encode(payloads.deck(
        parts, blocks(words, *x_in.shape), LAYER_PICK, {stack: n_layers}, template_spec(go.Figure()), words,
        {"text_px": page_look.scale.text, "sentence": sentence, "whole": first is None, "modebar": modebar,
         "url_names": url_names(LAYER_PICK)}))


@view.shared_part
def layer_part(traced: Traced, stack: str, layer: int, norm: str, token: int, window: tuple[int, int],
               page_look: Look) -> dict:
    """One layer's part of the deck: the norm's pictures (norm_part: the same for every token) and the token's."""
    shared = norm_part(traced, stack, layer, norm, window, page_look)
    numbers = NormPick(traced, stack, layer, norm)
    mine = payloads.deck_pick(numbers.token_figures(page_look, token), {}, numbers.token_texts(page_look.words, token))
    return {**shared, "figures": {**shared["figures"], **mine["figures"]}, "files": numbers.files(token),
            "texts": {**shared["texts"], **mine["texts"]}}


@view.shared_cached
def norm_part(traced: Traced, stack: str, layer: int, norm: str, window: tuple[int, int], page_look: Look) -> dict:
    """A norm's pictures and captions, whatever the token (another token's histogram rebuilds only its own)."""
    numbers = NormPick(traced, stack, layer, norm)
    return payloads.deck_pick(numbers.norm_figures(page_look, slice(*window)), {}, numbers.norm_texts(page_look.words))


def pick_csv(ctx, stack: str, norm: str, token: int):
    """The CSV of a picture the browser asked for: the numbers it shows, of every token."""
    n_layers = schema.n_layers(ctx.model.config, stack)

    def make(pick: dict) -> dict:
        layer = min(max(pick["layer"], 0), n_layers - 1)
        figure = pick.get("figure") if pick.get("figure") in FILES else "stats"
        numbers = NormPick(ctx.traced, stack, layer, norm)
        return {"name": numbers.files(token)[figure] + ".csv", "text": numbers.matrix(figure, token, t).to_csv()}
    return make


def norm_view(ctx, stack: str, norm: str, token: int, n_tokens: int) -> None:
    """The norm's pictures for the layer picked in the browser (a deck: every layer of the stack sent once for the
    stack, norm and token; picked there with no script run); the window's slider above it (a long sentence's: the
    page is five pictures long, the statistics' window is said above them, as the page said it) stays the server's."""
    layer = picked(ctx.model.config, stack)
    view.write_url({view.STACK: stack, view.LAYER: layer, view.NORM: norm, view.TOKEN: token})
    # a long sentence: the token charts show a window of it (the CSVs and the captions: every token)
    shown = token_window(n_tokens, tokens_that_fit(type_scale()), f"ln-window-{stack}")
    sentence = sentence_sig(body_key(ctx, stack, norm, token, shown))
    whole = whole_asked(sentence, LN_DECK)
    body = deck_body(ctx, stack, norm, token, shown, None if whole else layer)
    browser_view(LN_DECK, LAYER_PICK, body, {"layer": layer}, {"sentence": sentence, "whole": whole},
                 csv=pick_csv(ctx, stack, norm, token))


def residual_stream(ctx, labels: dict[str, list[str]]) -> None:
    cfg, arrays = ctx.model.config, ctx.trace.arrays
    st.header(t("layernorm.resid.header"))
    parts = []
    for s in STACKS:
        stages, norms = residual_stages(arrays, s, schema.n_layers(cfg, s))                         # [stages, T]
        parts.append((stack_name(s), [stage_label(stage) for stage in stages], norms, labels[s]))
    show_figure(residual_norm_figure(parts, look(), title=t("layernorm.resid.title")),
                f"{ctx.model_id}-residual-norms",
                matrix_frame(np.concatenate([p[2].mean(1) for p in parts])[:, None], sum((p[1] for p in parts), []),
                             [t("layernorm.resid.column")]), key="ln-resid")
    enc_norms = parts[0][2]
    if cfg.norm_first:
        st.caption(t("layernorm.resid.pre_norm", first=f"{enc_norms[0].mean():.1f}",
                     last=f"{enc_norms[-1].mean():.1f}"))
    else:
        later = enc_norms[1:].mean(1)                                                                # [stages - 1]
        st.caption(t("layernorm.resid.post_norm", first=f"{enc_norms[0].mean():.1f}", low=f"{later.min():.1f}",
                     high=f"{later.max():.1f}", root=f"{np.sqrt(cfg.d_model):.1f}"))


def render() -> None:
    ctx = need_context()
    labels = {stack: position_labels(schema.stack_tokens(ctx.trace.meta, stack)) for stack in schema.STACKS}
    st.title(t("layernorm.title"))
    stack, norm, token = controls(ctx.model.config, labels)
    norm_view(ctx, stack, norm, token, len(labels[stack]))
    explain(ctx)
    residual_stream(ctx, labels)


if __name__ == "__main__":
    render()
