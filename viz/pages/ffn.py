"""Feed-forward, label smoothing and dropout on the reader's sentence: which FFN hidden
units fire for which tokens and what the FFN adds to the residual stream; the model's distribution beside
the label-smoothed target with the loss with and without smoothing; attention with dropout on beside off."""
from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis import regularize as rg
from model.analysis.attention_math import future_mask
from model.capture import schema
from viz.figures.regularize import (dropout_figure, ffn_add_figure, ffn_units_figure, loss_figure, rows_that_fit,
                                   smoothing_figure)
from viz.figures.style import plotly_text
from viz.core.i18n import catalogue_keys, kind_short, kind_title, t
from viz.core import view
from viz.core.text import attention_labels, plain, position_labels
from viz.elements.ui import explained, look, matrix_frame, need_context, show_figure, token_window, type_scale

VIEWS = ["ffn", "smoothing", "dropout"]
VIEW_KEYS = catalogue_keys("ffn.view", "ffn", "smoothing", "dropout")
STACKS = ["encoder", "decoder"]
STACK_KEYS = catalogue_keys("ffn.stack", "encoder", "decoder")
KINDS = list(schema.KINDS)
# FeedForward.direction -> the words under the "what the FFN adds" chart
DIRECTION_KEYS = catalogue_keys("ffn.add.cos", "new", "along", "against", "mixed")
SAMPLES = 3
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


def feed_forward(ctx, cols) -> None:
    cfg, arrays = ctx.model.config, ctx.trace.arrays
    stack = cols[1].radio(t("ffn.stack"), STACKS, horizontal=True, label_visibility="collapsed",
                          key=view.seeded("ffn-stack", view.read(view.STACK, choices=STACKS)),
                          format_func=lambda s: t(STACK_KEYS[s]))
    n = schema.n_layers(cfg, stack)
    layer = cols[2].selectbox(t("ui.layer"), list(range(n)),
                              key=view.seeded(f"ffn-layer-{stack}", view.read(view.LAYER, hi=n - 1)), format_func=lambda i: t("ui.layer_n", i=i),
                              label_visibility="collapsed")
    view.write_url({view.STACK: stack, view.LAYER: layer})
    ff = rg.feed_forward(arrays, stack, layer, cfg.norm_first)
    tokens = position_labels(schema.stack_tokens(ctx.trace.meta, stack))
    # a long sentence: the tokens in a window and the units they fire most (the captions: the whole sentence)
    shown = token_window(len(tokens), rows_that_fit(type_scale()), "ffn-window")
    units = rg.top_units(ff.hidden[shown], per_token=2, limit=20 if type_scale().name == "presenter" else 24)
    tag = f"{ctx.model_id}-{stack}-L{layer}-ffn"
    show_figure(ffn_units_figure(ff.hidden[shown][:, units], tokens[shown], units,
                                 look(), title=t("ffn.units.title", stack=t(STACK_KEYS[stack]), layer=layer,
                                                  shown=len(units), d_ff=cfg.d_ff)),
                f"{tag}-units", matrix_frame(ff.hidden[:, units], tokens, [f"#{u}" for u in units]), key="ffn-units")
    strongest = int(ff.hidden.max(1).argmax())
    unit = int(ff.hidden[strongest].argmax())
    firing = [plain(tokens[i]) for i in np.flatnonzero(ff.hidden[:, unit] > 0)]
    firing = firing[:FIRING_LISTED] + (["…"] if len(firing) > FIRING_LISTED else [])   # 512 tokens: lines of them
    st.caption(t("ffn.units.caption", active=f"{100 * ff.active.mean():.0f}", low=f"{100 * ff.active.min():.0f}",
                 high=f"{100 * ff.active.max():.0f}", d_ff=cfg.d_ff, unit=unit, token=plain(tokens[strongest]),
                 value=f"{ff.hidden[strongest, unit]:.2f}", tokens=", ".join(firing) or "—"))
    ratio = ff.out_norm / np.maximum(ff.resid_norm, 1e-12)
    show_figure(ffn_add_figure(tokens[shown], ff.resid_norm[shown], ff.out_norm[shown], ff.cosine[shown], look(),
                               title=t("ffn.add.title")),
                f"{tag}-adds", matrix_frame(np.stack([ff.resid_norm, ff.out_norm, ff.cosine], 1), tokens,
                                            [t("ffn.add.resid"), t("ffn.add.out"), t("ffn.add.cosine")]),
                key="ffn-add")
    st.caption(t("ffn.add.caption", low=f"{ratio.min():.2f}", high=f"{ratio.max():.2f}",
                 cos_low=f"{ff.cosine.min():.2f}", cos_high=f"{ff.cosine.max():.2f}",
                 reading=t(DIRECTION_KEYS[ff.direction])))
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


def dropout(ctx, cols) -> None:
    cfg, trace = ctx.model.config, ctx.trace
    kind = cols[1].selectbox(t("ffn.kind"), KINDS,
                             key=view.seeded("ffn-kind", view.read(view.KIND, choices=KINDS, default="cross")),
                             label_visibility="collapsed", format_func=kind_short)
    n = schema.n_layers(cfg, kind)
    layer = cols[2].selectbox(t("ui.layer"), list(range(n)),
                              key=view.seeded(f"ffn-dlayer-{kind}", view.read(view.LAYER, hi=n - 1)), format_func=lambda i: t("ui.layer_n", i=i),
                              label_visibility="collapsed")
    head = cols[3].selectbox(t("ui.head"), list(range(cfg.n_heads)),
                             key=view.seeded("ffn-head", view.read(view.HEAD, lo=0, hi=cfg.n_heads - 1)),
                             format_func=lambda h: t("ui.head_n", h=h), label_visibility="collapsed")
    view.write_url({view.KIND: kind, view.LAYER: layer, view.HEAD: head})
    weights = np.asarray(trace[schema.pattern_name(kind, layer)][head], dtype=np.float64)        # [T, S]
    p = rg.shown_dropout(cfg)
    samples = rg.attention_dropout(weights, p, SAMPLES, seed=SEED)                               # [n, T, S]
    rows, cols_ = attention_labels(trace.meta, kind)
    mask = future_mask(kind, len(rows), len(cols_))
    titles = [t("ffn.drop.off")] + [t("ffn.drop.sample", i=i + 1) for i in range(SAMPLES)]
    show_figure(dropout_figure([weights, *samples], titles, rows, cols_, look(), mask=mask,
                               title=t("ffn.drop.title", kind=kind_title(kind), layer=layer, head=head, p=p)),
                f"{ctx.model_id}-{kind}-L{layer}-H{head}-dropout",
                matrix_frame(samples[0], rows, cols_), key="ffn-drop")
    live = weights > 0 if mask is None else (weights > 0) & ~mask
    dropped = float(((samples == 0) & live).sum() / max(1, live.sum() * SAMPLES))
    sums = samples.sum(-1)
    st.caption(t("ffn.drop.caption", p=p, dropped=f"{100 * dropped:.0f}", scale=f"{1 / (1 - p):.3f}",
                 low=f"{sums.min():.2f}", high=f"{sums.max():.2f}", seed=SEED))
    toy_note(cfg)
    with explained(t("ffn.explain.drop.title")):
        st.latex(DROPOUT_FORMULA)
        st.markdown(t("ffn.explain.drop.text", p=p))


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
