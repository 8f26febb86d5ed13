"""Head analysis: what each head does (statistics), what it is worth (ablation), where information flows. The
statistics' picture (a layer x head grid of one kind) is drawn in the browser (viz/elements/browser_view.py, a deck
over the kinds): the kind is picked there with no script run and written to the URL (kind=); the source and the
statistic stay server widgets (a change rebuilds the deck)."""
from __future__ import annotations

import hashlib

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from model.analysis import ablation, flow, heads
from model.capture import schema
from viz.figures import browser_view as payloads
from viz.figures.browser_view import template_spec
from viz.figures.heads import head_label, importance_bars, layer_head_heatmap
from viz.figures.style import Labels, Look
from viz.figures.zoo import step_heatmap
from viz.core.i18n import catalogue_keys, error_text, kind_short, kind_title, kind_word, t, tn
from viz.services.analyses import ablated_translation, corpus_head_stats, rank_heads, reference_logprob
from viz.core import view
from viz.core.view import session_memo, whole_number
from viz.core.context import Traced
from viz.core.text import plain, position_labels
from viz.elements.browser_view import KIND_PICK, browser_view, url_names
from viz.elements.ui import (data_table, explained, look, matrix_frame, need_context, plotly_config, safe_filename,
                             show_figure)
from viz.core.upload import UploadError, parse_upload

OWN = view.Own("viz.pages.heads")  # this module's own session values
HEADS_ABLATED = OWN.value("heads-ablated")        # the heads the last ablation run took out
ABLATE_BOX = OWN.value("abl")                     # abl-<kind>-<layer>-<head>: one head's check box
HEADS_TAB = OWN.value("heads-tab")                # the tab shown
STATS_DECK = OWN.value("hs-deck")                 # hs-deck-view, -head, -csv: the statistics' browser view

MAX_AGGREGATE = 200
UNIT_STATS = {"entropy_norm", "self", "prev", "next", "eos", "bos", "punct", "max_weight"}  # in [0, 1]
TABS = ("stats", "ablation", "rollout")                  # labels: heads.tab.<name>
KINDS = list(schema.KINDS)
HEADER_COLUMNS = ("kind", "layer", "head", "logprob", "delta", "n_sentences")   # heads.col.<name>


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
HEADS_STAT_KEYS = catalogue_keys("heads.stat", "bos", "distance", "entropy", "entropy_norm", "eos", "max_weight",
                                 "next", "prev", "punct", "self")
HEADS_HELP_KEYS = catalogue_keys("heads.help", "bos", "distance", "entropy", "entropy_norm", "eos", "max_weight",
                                 "next", "prev", "punct", "self")
HEADS_TAB_KEYS = catalogue_keys("heads.tab", "ablation", "rollout", "stats")
HEADS_COL_KEYS = catalogue_keys("heads.col", "delta", "head", "kind", "layer", "logprob", "n_sentences")
HEADS_VALUE_KEYS = catalogue_keys("heads.value", "bos", "distance", "entropy", "entropy_norm", "eos", "max_weight",
                                  "next", "prev", "punct", "self")
HEADS_ABL_MODE_KEYS = catalogue_keys("heads.abl.mode", "mean", "zero")
HEADS_SOURCE_KEYS = catalogue_keys("heads.source", "file", "sentence")


def label_of(kind: str, layer: int, head: int) -> str:
    return head_label(kind, layer, head, kind_name=kind_short(kind))


def stat_name(stat: str) -> str:
    """model.analysis.heads.STATS's English column label, in the page's language."""
    return t(HEADS_STAT_KEYS[stat])


def translated_columns(frame, compact: bool = False):
    """The table with its headers (and kind names) in the page's language; compact: each kind in one word (a
    static table on the projector: "编码器自注意力" took three lines a row, and its box held three heads)."""
    frame = frame.copy()
    name = kind_word if compact else kind_short
    if "kind" in frame:
        frame["kind"] = frame["kind"].map(lambda k: name(k) if k in KINDS else k)
    names = {c: stat_name(c) if c in heads.STATS else t(HEADS_COL_KEYS[c]) for c in frame.columns
             if c in heads.STATS or c in HEADER_COLUMNS}
    return frame.rename(columns=names)


def intro(cfg) -> None:
    with explained(t("heads.intro.title")):
        st.markdown(t("heads.intro.text", heads=cfg.n_heads, encoder=cfg.n_encoder_layers,
                      decoder=cfg.n_decoder_layers))


def kind_radio(key: str) -> str:
    kind = st.radio(t("heads.kind"), KINDS, horizontal=True, key=view.seeded(key, view.read(view.KIND, choices=KINDS)),
                    format_func={k: kind_short(k) for k in KINDS}.get,
                    help=" · ".join(kind_title(k) for k in KINDS))
    view.write_url({view.KIND: kind})
    return kind


# -- Statistics -------------------------------------------------------------------------------------
def stat_help(stat: str) -> str:
    return t(HEADS_HELP_KEYS[stat])


def file_stats(ctx):
    """Statistics averaged over a file of sentences (the sidebar's, else one uploaded here); computed on
    request, kept for this session."""
    upload = view.get(view.UPLOAD)              # the file uploaded in the sidebar, else None
    if upload is not None:
        st.caption(t("heads.upload.sidebar", file=plain(upload.name)))
    else:
        upload = st.file_uploader(t("heads.upload", n=MAX_AGGREGATE), type=["txt", "csv"], key="heads-upload")
    if upload is None:
        st.info(t("heads.upload.info"))
        return None
    data = upload.getvalue()
    try:
        sentences = parse_upload(upload.name, data)[:MAX_AGGREGATE]
    except UploadError as e:
        st.warning(f"{plain(upload.name)}: {plain(error_text(e))}")
        return None
    sentences = [ctx.model.tokenizer.styled(s, ctx.style) for s in sentences]     # in the sidebar's Spanish
    key = (ctx.model_id, hashlib.sha256(data).hexdigest(), ctx.max_tokens, ctx.style)
    result = session_memo("heads-aggregate", key)
    if result is None:
        if not st.button(tn("heads.upload.go", len(sentences)), type="primary", key="heads-agg-go"):
            return None
        bar = st.progress(0.0, text=t("heads.upload.running"))
        progress = lambda i, n: bar.progress(i / n, text=t("heads.upload.progress", i=i, n=n))  # noqa: E731
        try:
            result = session_memo("heads-aggregate", key, lambda: corpus_head_stats(
                ctx.model_id, sentences, ctx.max_tokens, progress))
        except ValueError as e:
            st.warning(str(e))
            return None
        bar.empty()
    frame, problems = result
    st.caption(tn("heads.upload.averaged", int(frame['n_sentences'].max()), file=plain(upload.name)))
    if problems:
        st.warning(tn("heads.upload.skipped", len(problems), example=plain(problems[0])))
    return frame


def stat_figure(matrix: np.ndarray, kind: str, stat: str, page_look: Look) -> go.Figure:
    """One kind's statistic as the layer x head grid (the deck's picture)."""
    words = page_look.words
    return layer_head_heatmap(matrix, page_look, words(HEADS_VALUE_KEYS[stat]),
                              title=words("heads.stat.title", kind=words.kind(kind), stat=words(HEADS_STAT_KEYS[stat])),
                              zmax=1.0 if stat in UNIT_STATS else None)


def stat_file(model_id: str, kind: str, stat: str) -> str:
    return safe_filename(f"{model_id}-{kind}-{stat}")


def stat_csv(frame, kind: str, stat: str, n_layers: int, n_heads: int, words) -> str:
    """The numbers a kind's picture shows (its CSV)."""
    matrix = heads.stat_matrix(frame, kind, stat, n_layers, n_heads)
    return matrix_frame(matrix, [words("ui.layer_n", i=i) for i in range(n_layers)],
                        [words("ui.head_n", h=h) for h in range(n_heads)]).to_csv()


def stats_body(frame, model_id: str, n_layers: dict, n_heads: int, stat: str, page_look: Look, modebar: bool,
               sentence: str) -> payloads.Body:
    """The deck: every kind's picture at once (three small grids, ~2.4 KB gzipped at any sentence length: a first
    screen of one kind would cost a second run for nothing)."""
    parts = {kind: payloads.deck_pick({"stat": stat_figure(heads.stat_matrix(frame, kind, stat, n_layers[kind], n_heads),
                                                           kind, stat, page_look)},
                                      {"stat": stat_file(model_id, kind, stat)}) for kind in KINDS}
    return payloads.encode(payloads.deck(
        parts, [{"type": "figure", "id": "stat", "csv": True}], KIND_PICK, n_layers, template_spec(go.Figure()),
        page_look.words, {"text_px": page_look.scale.text, "sentence": sentence, "whole": True,
                          "modebar": modebar, "url_names": url_names(KIND_PICK)}))


@view.shared_cached
def sentence_deck(traced: Traced, stat: str, page_look: Look, modebar: bool, sentence: str) -> payloads.Body:
    """The deck of one sentence's statistics: built once, for every session of the worker."""
    cfg = traced.model.config
    return stats_body(heads.trace_head_stats(traced.trace), traced.model_id,
                      {kind: schema.n_layers(cfg, kind) for kind in KINDS}, cfg.n_heads, stat, page_look, modebar,
                      sentence)


def stats_view(ctx, frame, source_key, stat: str, n_layers: dict) -> None:
    """The statistic's picture for the kind picked in the browser (a deck of every kind; its CSVs the server's)."""
    cfg = ctx.model.config
    kind = view.read(view.KIND, choices=KINDS)
    view.write_url({view.KIND: kind})
    modebar = plotly_config("")["displayModeBar"]
    sentence = payloads.view_sig("heads", (source_key, stat, look(), modebar))
    if source_key[0] == "sentence":
        body = sentence_deck(ctx.traced, stat, look(), modebar, sentence)
    else:                       # a file's statistics: this session's
        body = stats_body(frame, ctx.model_id, n_layers, cfg.n_heads, stat, look(), modebar, sentence)

    def csv(pick: dict) -> dict:
        chosen = pick["kind"] if pick.get("kind") in KINDS else kind
        return {"name": stat_file(ctx.model_id, chosen, stat) + ".csv",
                "text": stat_csv(frame, chosen, stat, n_layers[chosen], cfg.n_heads, t)}
    browser_view(STATS_DECK, KIND_PICK, body, {"kind": kind}, {"sentence": sentence, "whole": True}, csv=csv)


def statistics_tab(ctx, n_layers: dict) -> None:
    c1, c3 = st.columns([1, 1.2])
    source = c1.radio(t("heads.source"), ["sentence", "file"], key="heads-source",
                      format_func={s: t(HEADS_SOURCE_KEYS[s]) for s in ("sentence", "file")}.get)
    stat = c3.selectbox(t("heads.stat"), list(heads.STATS), format_func={s: stat_name(s) for s in heads.STATS}.get,
                        key=view.seeded("heads-stat", view.read(view.STAT, choices=list(heads.STATS))))
    view.write_url({view.STAT: stat})
    frame = heads.trace_head_stats(ctx.trace) if source == "sentence" else file_stats(ctx)
    if frame is None:
        return
    source_key = (("sentence", ctx.trace_key) if source == "sentence"
                  else ("file", frame_sig(frame)))
    stats_view(ctx, frame, source_key, stat, n_layers)
    st.markdown(stat_help(stat))
    presenting = view.get(view.PRESENT)           # a static table: it does not sort
    st.subheader(t("heads.table.static") if presenting else t("heads.table"))
    columns = {stat_name(s): st.column_config.NumberColumn(format="%.3f") for s in heads.STATS}
    with st.container(key="heads-all"):
        data_table(translated_columns(frame, compact=presenting), missing=t("heads.na"), hide_index=True,
                   column_config=columns, key="heads-table", placeholder=t("heads.na"))
    st.caption(t("heads.na.caption"))
    with st.expander(t("heads.others")):
        for s in heads.STATS:
            if s != stat:
                st.markdown(stat_help(s))


def frame_sig(frame) -> str:
    """A file's statistics named by their numbers (the deck's sentence: another file, another body)."""
    return hashlib.blake2b(frame.to_csv().encode("utf-8"), digest_size=8).hexdigest()


# -- Ablation -------------------------------------------------------------------------------------------
def parse_heads(raw: str | None, cfg) -> set:
    """URL `ablate=encoder:0:1,cross:1:2`; anything unreadable is dropped with a warning."""
    if not raw:
        return set()
    heads, bad = set(), []
    for item in raw.split(","):
        parts = item.strip().split(":")
        try:
            numbers = [whole_number(p) for p in parts[1:]]     # the app's one URL-number reader
            if len(parts) != 3 or None in numbers:
                raise ValueError("not kind:layer:head")
            heads.update(ablation.check_heads(cfg, [(parts[0], *numbers)]))
        except ValueError:
            bad.append(item)
    if bad:
        st.warning(t("heads.ablate.bad", items=plain(', '.join(bad)[:80])))
    return heads


def _clear_ablation() -> None:
    view.put(HEADS_ABLATED, set())
    view.drop_all(ABLATE_BOX)


def head_grid(kind: str, chosen: set, n_layers: int, n_heads: int) -> set:
    """Checkboxes layer x head for one kind; heads of the other kinds stay as they were."""
    for layer in range(n_layers):
        cols = st.columns(n_heads + 1, vertical_alignment="center")
        cols[0].markdown(f"**{t('ui.layer_n', i=layer)}**")
        for h in range(n_heads):
            cols[h + 1].checkbox(t("fig.grid.head", h=h),
                                 key=view.seed(ABLATE_BOX, (kind, layer, h) in chosen, kind, layer, h))
    ticked = {(kind, layer, h) for layer in range(n_layers) for h in range(n_heads)
              if view.get(ABLATE_BOX, kind, layer, h)}
    return {x for x in chosen if x[0] != kind} | ticked


def ablation_tab(ctx, n_layers: dict) -> None:
    trace, cfg = ctx.trace, ctx.model.config
    with explained(t("heads.abl.how.title")):
        st.markdown(t("heads.abl.how.text"))
        st.latex(r"\mathrm{MultiHead}(x)=\mathrm{Concat}(z_1,\dots,\underbrace{0}_{z_h\ \mathrm{off}},\dots,z_H)\,W^O")
    if not view.has(HEADS_ABLATED):
        view.put(HEADS_ABLATED, parse_heads(view.read(view.ABLATE), cfg))
    c1, c2 = st.columns(2)
    with c1:
        kind = kind_radio("heads-abl-kind")
    mode = c2.radio(t("heads.abl.mode"), list(ablation.ABLATION_MODES), horizontal=True,
                    key=view.seeded("heads-abl-mode", view.read(view.ABL_MODE, choices=list(ablation.ABLATION_MODES))),
                    format_func={m: t(HEADS_ABL_MODE_KEYS[m]) for m in ablation.ABLATION_MODES}.get)
    st.caption(t("heads.abl.tick", kind=kind_title(kind)))
    heads = head_grid(kind, view.get(HEADS_ABLATED), n_layers[kind], cfg.n_heads)
    view.put(HEADS_ABLATED, heads)
    heads = tuple(sorted(heads))
    view.write_url({view.ABLATE: ",".join(f"{k}:{lay}:{h}" for k, lay, h in heads) or None,
                    view.ABL_MODE: None if mode == "zero" else mode})
    if heads:
        st.caption(t("heads.abl.off", heads=", ".join(label_of(*x) for x in heads)))
        st.button(t("heads.abl.clear"), on_click=_clear_ablation, key="heads-abl-clear")

    meta = trace.meta
    target = tuple(meta["tgt_ids"])
    what = t("heads.what.reference") if meta["teacher_forced"] else t("heads.what.own")
    base = reference_logprob(ctx.model_id, meta["src_text"], target, (), mode, ctx.max_tokens)
    cut = reference_logprob(ctx.model_id, meta["src_text"], target, heads, mode, ctx.max_tokens)
    st.markdown(t("heads.abl.logp", what=what))
    m1, m2 = st.columns(2)
    m1.metric(t("heads.abl.all_on"), f"{base:.4f}")
    m2.metric(tn("heads.abl.n_off", len(heads)), f"{cut:.4f}",
              delta=f"{cut - base:+.4f}" if heads else None)
    c1, c2 = st.columns(2)
    c1.caption(t("heads.abl.translation"))
    c1.text(meta["translation"] or t("heads.empty_output"))
    c2.caption(t("heads.abl.translation_off.beam", beam=ctx.beam) if ctx.beam > 1 else t("heads.abl.translation_off"))
    ablated = ablated_translation(ctx.model_id, meta["src_text"], heads, mode, ctx.beam, ctx.max_tokens)
    c2.text(ablated or t("heads.empty_output"))
    if heads:
        st.caption(t("heads.abl.changed") if ablated != meta["translation"] else t("heads.abl.unchanged"))
    rank_section(ctx, mode, target, what, n_layers)


def rank_section(ctx, mode: str, target: tuple, what: str, n_layers: dict) -> None:
    trace, cfg = ctx.trace, ctx.model.config
    st.subheader(t("heads.rank"))
    st.markdown(t("heads.rank.text", mode=t(HEADS_ABL_MODE_KEYS[mode]), what=what))
    key = (ctx.model_id, trace.meta["src_text"], target, mode, ctx.max_tokens)
    if st.button(t("heads.rank.go"), key="heads-rank-go"):
        n = sum(n_layers.values()) * cfg.n_heads
        bar = st.progress(0.0, text=t("heads.rank.running", n=n))
        progress = lambda i, total: bar.progress(i / total, text=t("heads.rank.progress", i=i, n=total))  # noqa: E731
        session_memo("heads-rank", key, lambda: rank_heads(ctx.model_id, trace.meta["src_text"], list(target), mode,
                                                           ctx.max_tokens, progress))
        bar.empty()
    ranked = session_memo("heads-rank", key)
    if ranked is None:
        return
    labels = [label_of(k, lay, h) for k, lay, h in ranked[heads.ID_COLUMNS].itertuples(index=False)]
    shown = t("heads.rank.top", n=len(labels)) if len(labels) > 24 else t("heads.rank.all", n=len(labels))
    fig = importance_bars(labels, ranked["delta"].to_numpy(), look(),
                          title=t("heads.rank.title", mode=t(HEADS_ABL_MODE_KEYS[mode]), shown=shown))
    show_figure(fig, f"{ctx.model_id}-head-importance-{mode}", key="heads-rank-bars")
    data_table(translated_columns(ranked), hide_index=True, key="heads-rank-table",
               formats={t("heads.col.logprob"): "{:.4f}", t("heads.col.delta"): "{:+.4f}"}, column_config={
        t("heads.col.logprob"): st.column_config.NumberColumn(t("heads.rank.logprob"), format="%.4f"),
        t("heads.col.delta"): st.column_config.NumberColumn(t("heads.rank.delta"), format="%+.4f")})


# -- Rollout & flow ---------------------------------------------------------------------------------------
def flow_matrix(ctx, patterns: np.ndarray) -> np.ndarray:
    """Flow for this sentence, computed once per sentence (it solves one max-flow per token pair)."""
    key = (ctx.model_id, tuple(ctx.trace.meta["src_ids"]))
    flows = session_memo("heads-flow", key)
    if flows is None:
        n = patterns.shape[-1]
        bar = st.progress(0.0, text=t("heads.flow.running", n=n * n))
        flows = session_memo("heads-flow", key, lambda: flow.attention_flow(
            patterns, progress=lambda i, total: bar.progress(i / total)))
        bar.empty()
    return flows


def rollout_tab(ctx) -> None:
    trace = ctx.trace
    patterns = schema.stacked(trace, "encoder")                             # [L,H,S,S]
    labels = position_labels(trace.meta["src_tokens"])
    raw = patterns[-1].mean(0)                                                   # [S,S]
    rollout = flow.attention_rollout(patterns)
    maps = [("raw", t("heads.raw.title", layer=len(patterns) - 1), raw),
            ("rollout", t("heads.rollout.title"), rollout)]
    n = len(labels)
    if n <= flow.MAX_FLOW_TOKENS:
        maps.append(("flow", t("heads.flow.title"), flow_matrix(ctx, patterns)))
    else:
        st.info(t("heads.flow.too_long", limit=flow.MAX_FLOW_TOKENS, n=n))
    columns = st.columns(2) + st.columns(2)          # two a row: every token label fits, cells stay square
    for col, (name, title, m) in zip(columns, maps):
        with col:
            y_title = t("heads.rollout.y") if name != "raw" else t("fig.attention.query")
            names = Labels(title, t("heads.rollout.x"), y_title, t("heads.rollout.share"))
            fig = step_heatmap(m, labels, labels, names, look(), zrange=(0.0, 1.0))
            show_figure(fig, f"{ctx.model_id}-encoder-{name}", matrix_frame(m, labels, labels),
                        key=f"heads-{name}")
    columns[len(maps)].caption(t("heads.rollout.caption"))
    with explained(t("heads.rollout.how.title")):
        st.markdown(t("heads.rollout.how.text1"))
        st.latex(r"\hat A_\ell=\tfrac12\,\bar A_\ell+\tfrac12 I\ (\text{rows renormalised}),\qquad "
                 r"\tilde A=\hat A_L\,\hat A_{L-1}\cdots\hat A_1")
        st.markdown(t("heads.rollout.how.text2"))


def render() -> None:
    ctx = need_context()
    cfg = ctx.model.config
    n_layers = {kind: schema.n_layers(cfg, kind) for kind in KINDS}
    st.title(t("heads.title"))
    tab_default = view.read(view.TAB, choices=list(TABS))
    labels = {name: t(HEADS_TAB_KEYS[name]) for name in TABS}
    tabs = st.tabs(list(labels.values()), default=labels[tab_default], key=view.key(HEADS_TAB), on_change="rerun")
    active = {label: name for name, label in labels.items()}.get(view.get(HEADS_TAB), tab_default)
    view.write_url({view.TAB: None if active == "stats" else active})
    views = (lambda: statistics_tab(ctx, n_layers), lambda: ablation_tab(ctx, n_layers), lambda: rollout_tab(ctx))
    for tab, draw in zip(tabs, views):
        with tab:
            if tab.open is not False:  # only the open tab runs (the others are not computed)
                draw()
    intro(cfg)


if __name__ == "__main__":
    render()
