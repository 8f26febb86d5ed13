"""Head analysis: what each head does (statistics), what it is worth (ablation), where information flows."""
import hashlib

import numpy as np
import streamlit as st

from model.analysis import ablation, flow, heads
from model.capture import schema
from viz.figures.attention import KIND_TITLES
from viz.figures.heads import head_label, importance_bars, layer_head_heatmap
from viz.figures.zoo import step_heatmap
from viz.services import ablated_translation, corpus_head_stats, rank_heads, reference_logprob
from viz.state import qp_choice, qp_str, session_memo, set_query
from viz.text import plain, position_labels
from viz.ui import matrix_frame, need_context, show_figure
from viz.upload import UploadError, parse_upload

MAX_AGGREGATE = 200
UNIT_STATS = {"entropy_norm", "self", "prev", "next", "eos", "bos", "punct", "max_weight"}  # in [0, 1]
TABS = {"stats": "Statistics", "ablation": "Ablation", "rollout": "Rollout & flow"}
KINDS = list(schema.KINDS)
KIND_SHORT = {"encoder": "encoder self", "decoder": "decoder self", "cross": "cross"}

def intro(cfg) -> None:
    with st.expander("What this page shows"):
        st.markdown(
            f"This model has {cfg.n_heads} heads in each of its {cfg.n_encoder_layers} encoder and "
            f"{cfg.n_decoder_layers} decoder layers, and each decoder layer has two kinds (masked self-attention and "
            "cross-attention). What does each head do, and does the model need it? **Statistics** describe a head's "
            "attention pattern, **Ablation** switches heads off and measures the damage, **Rollout & flow** follow "
            "attention through all encoder layers.")


def kind_radio(key: str) -> str:
    default = qp_choice("kind", KINDS, "encoder")
    kind = st.radio("Attention", KINDS, index=KINDS.index(default), horizontal=True, key=key,
                    format_func=KIND_SHORT.get, help=" · ".join(KIND_TITLES.values()))
    set_query(kind=kind)
    return kind


# -- Statistics -------------------------------------------------------------------------------------
STAT_HELP = {
    "entropy": "**Entropy** $H_i=-\\sum_j a_{ij}\\log_2 a_{ij}$ (bits), averaged over queries $i$. Low: the head "
               "looks at one or two tokens (a sharp, pointer-like head). High: it spreads its attention and "
               "averages (a bag-of-words head).",
    "entropy_norm": "**Normalised entropy** $H_i/\\log_2 n_i$, $n_i$ = keys query $i$ may see (all for the encoder, "
                    "$i+1$ under the decoder's causal mask). 0 = one key, 1 = perfectly uniform.",
    "distance": "**Mean distance** $\\sum_j a_{ij}\\,|i-j|$ in tokens: small = local head, large = long-range. "
                "For cross-attention, $i$ is first stretched to the source length, so this measures distance "
                "from a straight diagonal alignment (0 = monotone translation; reversal gives a large value).",
    "self": "**Share on itself** ($j=i$): the head mostly keeps the token's own information.",
    "prev": "**Share on the previous token** ($j=i-1$): a *previous-token head*. It copies the left neighbour "
            "into each position, which is how the model builds local word order (bigrams).",
    "next": "**Share on the next token** ($j=i+1$): only possible in the encoder; the decoder's mask forbids it.",
    "eos": "**Share on </s>**: heads often 'park' on the end-of-sentence token when they have nothing to do for "
           "a query (a near no-op), so a high share can mean a head is idle for this input.",
    "bos": "**Share on <s>**: the decoder's start token plays the same parking role in decoder self-attention.",
    "punct": "**Share on punctuation**: attention to commas, full stops etc.; another common resting place, or "
             "a head that tracks clause boundaries.",
    "max_weight": "**Mean row maximum** $\\max_j a_{ij}$ averaged over queries: 1 = every query puts all its "
                  "weight on a single key.",
}


def file_stats(ctx):
    """Statistics averaged over an uploaded file; computed on request, kept for this session."""
    upload = st.file_uploader(f"Sentences (.txt, one per line, or .csv with a 'text' column; the first "
                              f"{MAX_AGGREGATE} are used)", type=["txt", "csv"], key="heads-upload")
    if upload is None:
        st.info("Upload a file of sentences to average every head's statistics over all of them.")
        return None
    data = upload.getvalue()
    try:
        sentences = parse_upload(upload.name, data)[:MAX_AGGREGATE]
    except UploadError as e:
        st.warning(f"{plain(upload.name)}: {e}")
        return None
    key = (ctx.model_id, hashlib.sha256(data).hexdigest(), ctx.max_tokens)
    result = session_memo("heads-aggregate", key)
    if result is None:
        if not st.button(f"Compute statistics over {len(sentences)} sentences", type="primary", key="heads-agg-go"):
            return None
        bar = st.progress(0.0, text="Running the model on each sentence…")
        progress = lambda i, n: bar.progress(i / n, text=f"Sentence {i} of {n}")  # noqa: E731
        try:
            result = session_memo("heads-aggregate", key, lambda: corpus_head_stats(
                ctx.model_id, sentences, ctx.max_tokens, progress))
        except ValueError as e:
            st.warning(str(e))
            return None
        bar.empty()
    frame, problems = result
    st.caption(f"Averaged over {int(frame['n_sentences'].max())} sentences of {plain(upload.name)}, each on the "
               "model's own translation.")
    if problems:
        st.warning(f"{len(problems)} line{' was' if len(problems) == 1 else 's were'} skipped, e.g. "
                   f"{plain(problems[0])}")
    return frame


def statistics_tab(ctx, n_layers: dict) -> None:
    cfg = ctx.bundle.config
    c1, c2, c3 = st.columns([1, 1.3, 1.2])
    source = c1.radio("Statistics of", ["sentence", "file"], key="heads-source",
                      format_func={"sentence": "this sentence", "file": "many sentences (file)"}.get)
    with c2:
        kind = kind_radio("heads-stat-kind")
    stat_default = qp_choice("stat", list(heads.STATS), "entropy_norm")
    stat = c3.selectbox("Statistic", list(heads.STATS), index=list(heads.STATS).index(stat_default),
                        format_func=heads.STATS.get, key="heads-stat")
    set_query(stat=stat)
    frame = heads.trace_head_stats(ctx.trace) if source == "sentence" else file_stats(ctx)
    if frame is None:
        return
    matrix = heads.stat_matrix(frame, kind, stat, n_layers[kind], cfg.n_heads)
    fig = layer_head_heatmap(matrix, title=f"{KIND_TITLES[kind]}: {heads.STATS[stat]}", value_name=stat.replace("_", " "),
                             zmax=1.0 if stat in UNIT_STATS else None)
    show_figure(fig, f"{ctx.model_id}-{kind}-{stat}", matrix_frame(
        matrix, [f"layer {i}" for i in range(n_layers[kind])], [f"head {h}" for h in range(cfg.n_heads)]),
        key="heads-stat-grid")
    st.markdown(STAT_HELP[stat])
    st.subheader("Every head (click a column to sort)")
    columns = {s: st.column_config.NumberColumn(label, format="%.3f") for s, label in heads.STATS.items()}
    st.dataframe(frame, hide_index=True, column_config=columns, key="heads-table", placeholder="n/a")
    st.caption("n/a: the relation cannot exist there (cross-attention has no 'itself'; the decoder's mask hides "
               "the next token).")
    with st.expander("What the other statistics mean"):
        for s in heads.STATS:
            if s != stat:
                st.markdown(STAT_HELP[s])


# -- Ablation -------------------------------------------------------------------------------------------
def parse_heads(raw: str | None, cfg) -> set:
    """URL `ablate=encoder:0:1,cross:1:2`; anything unreadable is dropped with a warning."""
    if not raw:
        return set()
    heads, bad = set(), []
    for item in raw.split(","):
        parts = item.strip().split(":")
        try:
            if len(parts) != 3:
                raise ValueError("not kind:layer:head")
            heads.update(ablation.check_heads(cfg, [(parts[0], int(parts[1]), int(parts[2]))]))
        except ValueError:
            bad.append(item)
    if bad:
        st.warning(f"URL parameter ablate: {plain(', '.join(bad)[:80])} is not kind:layer:head of this model; "
                   "ignored.")
    return heads


def _clear_ablation() -> None:
    st.session_state["heads-ablated"] = set()
    for key in [k for k in st.session_state if str(k).startswith("abl-")]:
        del st.session_state[key]


def head_grid(kind: str, chosen: set, n_layers: int, n_heads: int) -> set:
    """Checkboxes layer x head for one kind; heads of the other kinds stay as they were."""
    for layer in range(n_layers):
        cols = st.columns(n_heads + 1, vertical_alignment="center")
        cols[0].markdown(f"**layer {layer}**")
        for h in range(n_heads):
            cols[h + 1].checkbox(f"H{h}", value=(kind, layer, h) in chosen, key=f"abl-{kind}-{layer}-{h}")
    ticked = {(kind, layer, h) for layer in range(n_layers) for h in range(n_heads)
              if st.session_state.get(f"abl-{kind}-{layer}-{h}")}
    return {x for x in chosen if x[0] != kind} | ticked


def ablation_tab(ctx, n_layers: dict) -> None:
    trace, cfg = ctx.trace, ctx.bundle.config
    with st.expander("How a head is switched off"):
        st.markdown(
            "Switch heads off and see what the model loses. A head's output $z_h=\\mathrm{softmax}(q_hK_h^\\top/"
            "\\sqrt{d_k})V_h$ is replaced before the heads are concatenated and multiplied by $W^O$: by **0** (*zero*) "
            "or by its **average over positions** (*mean*: the head still adds its usual offset but no longer says "
            "anything about a particular token; on the decoder side the average covers positions up to $t$ only). "
            "The model's weights are never changed; the edit applies on every decoding step.")
        st.latex(r"\mathrm{MultiHead}(x)=\mathrm{Concat}(z_1,\dots,\underbrace{0}_{z_h\ \mathrm{off}},\dots,z_H)\,W^O")
    if "heads-ablated" not in st.session_state:
        st.session_state["heads-ablated"] = parse_heads(qp_str("ablate"), cfg)
    c1, c2 = st.columns(2)
    with c1:
        kind = kind_radio("heads-abl-kind")
    mode_default = qp_choice("abl_mode", list(ablation.ABLATION_MODES), "zero")
    mode = c2.radio("Switch off by", list(ablation.ABLATION_MODES), index=list(ablation.ABLATION_MODES).index(mode_default),
                    horizontal=True, key="heads-abl-mode",
                    format_func={"zero": "zero", "mean": "mean over positions"}.get)
    st.caption(f"Tick the {KIND_TITLES[kind].lower()} heads to switch off:")
    heads = head_grid(kind, st.session_state["heads-ablated"], n_layers[kind], cfg.n_heads)
    st.session_state["heads-ablated"] = heads
    heads = tuple(sorted(heads))
    set_query(ablate=",".join(f"{k}:{lay}:{h}" for k, lay, h in heads) or None,
              abl_mode=None if mode == "zero" else mode)
    if heads:
        st.caption("Off: " + ", ".join(head_label(*x) for x in heads))
        st.button("Switch all heads back on", on_click=_clear_ablation, key="heads-abl-clear")

    meta = trace.meta
    target = tuple(meta["tgt_ids"])
    what = "your reference translation" if meta["teacher_forced"] else "the model's own translation"
    base = reference_logprob(ctx.model_id, meta["src_text"], target, (), mode, ctx.max_tokens)
    cut = reference_logprob(ctx.model_id, meta["src_text"], target, heads, mode, ctx.max_tokens)
    st.markdown(f"Teacher-forced log-probability of {what}, $\\log P(y\\mid x)=\\sum_t \\log p(y_t\\mid "
                "y_{<t},x)$ (0 = certain; more negative = less likely):")
    m1, m2 = st.columns(2)
    m1.metric("log P, all heads on", f"{base:.4f}")
    m2.metric(f"log P, {len(heads)} head{'s' if len(heads) != 1 else ''} off", f"{cut:.4f}",
              delta=f"{cut - base:+.4f}" if heads else None)
    t1, t2 = st.columns(2)
    t1.caption("Translation, all heads on")
    t1.text(meta["translation"] or "(empty output)")
    t2.caption("Translation with the heads off" + (f" (beam {ctx.beam})" if ctx.beam > 1 else " (greedy)"))
    ablated = ablated_translation(ctx.model_id, meta["src_text"], heads, mode, ctx.beam, ctx.max_tokens)
    t2.text(ablated or "(empty output)")
    if heads:
        st.caption("The translation changed." if ablated != meta["translation"] else
                   "The translation did not change: the other heads make up for the missing ones.")
    rank_section(ctx, mode, target, what, n_layers)


def rank_section(ctx, mode: str, target: tuple, what: str, n_layers: dict) -> None:
    trace, cfg = ctx.trace, ctx.bundle.config
    st.subheader("Which heads matter for this sentence?")
    st.markdown(f"Switch each head off alone ({mode} ablation) and measure how much less likely {what} "
                "becomes. A large drop means the model relies on that head here; near 0 means it can do without.")
    key = (ctx.model_id, trace.meta["src_text"], target, mode, ctx.max_tokens)
    if st.button("Rank heads by importance", key="heads-rank-go"):
        n = sum(n_layers.values()) * cfg.n_heads
        bar = st.progress(0.0, text=f"Switching off each of {n} heads…")
        progress = lambda i, total: bar.progress(i / total, text=f"Head {i} of {total}")  # noqa: E731
        session_memo("heads-rank", key, lambda: rank_heads(ctx.model_id, trace.meta["src_text"], list(target), mode,
                                                           ctx.max_tokens, progress))
        bar.empty()
    ranked = session_memo("heads-rank", key)
    if ranked is None:
        return
    labels = [head_label(k, lay, h) for k, lay, h in ranked[heads.ID_COLUMNS].itertuples(index=False)]
    shown = f"top 24 of {len(labels)} heads" if len(labels) > 24 else f"all {len(labels)} heads"
    fig = importance_bars(labels, ranked["delta"].to_numpy(),
                          title=f"Change in log P when one head is off ({mode}); {shown}")
    show_figure(fig, f"{ctx.model_id}-head-importance-{mode}", key="heads-rank-bars")
    st.dataframe(ranked, hide_index=True, key="heads-rank-table", column_config={
        "logprob": st.column_config.NumberColumn("log P with the head off", format="%.4f"),
        "delta": st.column_config.NumberColumn("change", format="%+.4f")})


# -- Rollout & flow ---------------------------------------------------------------------------------------
def flow_matrix(ctx, patterns: np.ndarray) -> np.ndarray:
    """Flow for this sentence, computed once per sentence (it solves one max-flow per token pair)."""
    key = (ctx.model_id, tuple(ctx.trace.meta["src_ids"]))
    flows = session_memo("heads-flow", key)
    if flows is None:
        n = patterns.shape[-1]
        bar = st.progress(0.0, text=f"Solving {n * n} max-flow problems…")
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
    maps = [("raw", f"Raw: layer {len(patterns) - 1}, heads averaged", raw),
            ("rollout", "Rollout", rollout)]
    n = len(labels)
    if n <= flow.MAX_FLOW_TOKENS:
        maps.append(("flow", "Flow", flow_matrix(ctx, patterns)))
    else:
        st.info(f"Flow is computed for inputs of at most {flow.MAX_FLOW_TOKENS} tokens (this one has {n}): it "
                "solves one max-flow problem per pair of tokens. Shorten the sentence to see it.")
    columns = st.columns(2) + st.columns(2)          # two a row: every token label fits, cells stay square
    for col, (name, title, m) in zip(columns, maps):
        with col:
            fig = step_heatmap(m, labels, labels, title, "input token", value_name="share", signed=False,
                               y_title="position after the last layer" if name != "raw" else "query")
            show_figure(fig, f"{ctx.model_id}-encoder-{name}", matrix_frame(m, labels, labels),
                        key=f"heads-{name}")
    columns[len(maps)].caption(
        "Row i: how much of each input token has reached position i after all encoder layers (rollout, flow), "
        "against what the last layer alone mixes (raw). Rows sum to 1.")
    with st.expander("How rollout and flow are computed"):
        st.markdown(
            "Raw attention of the last encoder layer says which *layer inputs* a position mixes, but those inputs "
            "are already mixtures of the sentence. **Rollout** (Abnar & Zuidema, 2020) follows the mixing back to "
            "the input tokens: average the heads of each layer, add the residual connection as an identity (half "
            "and half), renormalise the rows, and multiply through the layers.")
        st.latex(r"\hat A_\ell=\tfrac12\,\bar A_\ell+\tfrac12 I\ (\text{rows renormalised}),\qquad "
                 r"\tilde A=\hat A_L\,\hat A_{L-1}\cdots\hat A_1")
        st.markdown(
            "**Flow** treats the layers as a network of pipes whose capacities are the $\\hat A_\\ell$ weights "
            "and asks how much can flow from input token $j$ to position $i$ at the top (a maximum flow; each row "
            "then scaled to sum to 1). Rollout multiplies weights along every path; flow is limited by the "
            "narrowest pipes, so it is usually less peaked.")


def render() -> None:
    ctx = need_context()
    cfg = ctx.bundle.config
    n_layers = {kind: schema.n_layers(cfg, kind) for kind in KINDS}
    st.title("Head analysis")
    tab_default = qp_choice("tab", list(TABS), "stats")
    tabs = st.tabs(list(TABS.values()), default=TABS[tab_default], key="heads-tab", on_change="rerun")
    active = {label: name for name, label in TABS.items()}.get(st.session_state.get("heads-tab"), tab_default)
    set_query(tab=None if active == "stats" else active)
    views = (lambda: statistics_tab(ctx, n_layers), lambda: ablation_tab(ctx, n_layers), lambda: rollout_tab(ctx))
    for tab, view in zip(tabs, views):
        with tab:
            if tab.open is not False:  # only the open tab runs (the others are not computed)
                view()
    intro(cfg)


if __name__ == "__main__":
    render()
