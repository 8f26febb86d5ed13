"""Attention zoo: the score functions and weightings of attention's history, on one real head or a toy."""
import numpy as np
import pandas as pd
import streamlit as st

from model.analysis import zoo
from model.analysis.attention_math import causal_mask
from model.capture import schema
from viz.figures.attention import map_window
from viz.figures.style import Labels, symmetric_range
from viz.figures.zoo import gallery, mark_centres, step_heatmap
from viz.core.i18n import catalogue_keys, t
from viz.services.analyses import fitted_zoo
from viz.core.context import current
from viz.core import view
from viz.core.text import attention_labels
from viz.elements.ui import (attention_window, explained, layer_head_pickers, look, matrix_frame, on_phone, show_figure,
                             token_window, type_scale)

OWN = view.Own("viz.pages.zoo")  # this module's own session values
ZOO = OWN.value("zoo")  # zoo-<kind>-layer/head: the layer and head pickers

# The pickers' options and their words (the order is the radio's)
SOURCES = {"model": "zoo.source.model", "toy": "zoo.source.toy"}
KINDS = {"encoder": "zoo.kind.encoder", "decoder": "zoo.kind.decoder", "cross": "zoo.kind.cross"}
SCORE_OPTIONS = {"dot": "zoo.score.dot", "scaled": "zoo.score.scaled", "general": "zoo.score.general",
                 "additive": "zoo.score.additive", "cosine": "zoo.score.cosine"}
WEIGHTING_OPTIONS = {"soft": "zoo.weight.soft", "hard": "zoo.weight.hard", "local": "zoo.weight.local"}
# words: zoo.score.<name> (radio), zoo.score_name.<name> (titles), zoo.score_history.<name>; likewise weight
SCORE_FORMULAS = {
    "dot": r"\mathrm{score}(q,k)=q^\top k",
    "scaled": r"\mathrm{score}(q,k)=\frac{q^\top k}{\sqrt{d}}",
    "general": r"\mathrm{score}(q,k)=q^\top W k",
    "additive": r"\mathrm{score}(q,k)=v^\top \tanh(W_1 q + W_2 k)",
    "cosine": r"\mathrm{score}(q,k)=\frac{q^\top k}{\lVert q\rVert\,\lVert k\rVert}",
}
WEIGHT_FORMULAS = {
    "soft": r"a_{ts}=\frac{\exp \mathrm{score}(q_t,k_s)}{\sum_{s'}\exp \mathrm{score}(q_t,k_{s'})}",
    "hard": r"a_{ts}=\begin{cases}1 & s=\arg\max_{s'}\mathrm{score}(q_t,k_{s'})\\0&\text{otherwise}\end{cases}",
    "local": r"a_{ts}=\mathrm{softmax}_{|s'-p_t|\le D}\big(\mathrm{score}(q_t,k_{s'})\big)_s\,"
             r"\exp\!\Big(-\frac{(s-p_t)^2}{2\sigma^2}\Big)",
}
CENTRES = ("argmax", "monotonic")                # words: zoo.centre.<centre>
TOY_QUERIES = pd.DataFrame([[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.5, 3.0]],
                           columns=["d0", "d1", "d2", "d3"])
TOY_KEYS = pd.DataFrame([[1.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                         [0.0, 0.0, 1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0, -1.0, 0.0],
                         [1.0, 1.0, 0.0, 0.0, 0.0, -1.0]], columns=["d0", "d1", "d2", "d3", "v0", "v1"])
MAX_TOY_ROWS = 12
# A map of up to this many tokens is drawn whole (a short sentence: its labels fit a half-page map); a longer
# sentence's maps show a window of as many as fit, a 70-token map smeared its key labels into one another
WHOLE_MAP = 12


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
ZOO_SCORE_NAME_KEYS = catalogue_keys("zoo.score_name", "additive", "cosine", "dot", "general", "scaled")
ZOO_WEIGHT_NAME_KEYS = catalogue_keys("zoo.weight_name", "hard", "local", "soft")
ZOO_SCORE_HISTORY_KEYS = catalogue_keys("zoo.score_history", "additive", "cosine", "dot", "general", "scaled")
ZOO_WEIGHT_HISTORY_KEYS = catalogue_keys("zoo.weight_history", "hard", "local", "soft")
ZOO_TABLE_EMPTY_KEYS = catalogue_keys("zoo.table.empty", "key", "query")
ZOO_TABLE_BLANK_KEYS = catalogue_keys("zoo.table.blank", "key", "query")
ZOO_TABLE_CUT_KEYS = catalogue_keys("zoo.table.cut", "key", "query")
ZOO_CENTRE_KEYS = catalogue_keys("zoo.centre", "argmax", "monotonic")
# The general and additive scores' weights: fitted to the chosen head (the model folder's zoo_fit.safetensors) or
# random (toy example, a model without the file); their titles and the info box under the picture say which.
WEIGHTED = ("general", "additive")
ZOO_FITTED_KEYS = catalogue_keys("zoo.fitted", "general", "additive")


def copies_scaled_dot(data: dict) -> bool:
    """The general score's weights are fitted to this head and are (nearly) I/sqrt(d): the scaled dot product."""
    return data["fit"] is not None and data["fit"][1].scaled_dot


def panel_title(name: str, data: dict) -> str:
    """A gallery panel's title: the score's, and for a fitted general W that is I/sqrt(d), that it is the scaled
    dot product (the two panels look alike, and that is the point)."""
    if name == "general" and copies_scaled_dot(data):
        return t("zoo.score_name.fitted_scaled", name=score_name(name))
    return score_title(name, data)


def score_name(name: str) -> str:
    return t(ZOO_SCORE_NAME_KEYS[name])


def score_title(name: str, data: dict) -> str:
    """The score's name; the general and additive ones say whether their weights are fitted or random."""
    if name not in WEIGHTED:
        return score_name(name)
    return t("zoo.score_name.fitted" if data["weights"] is not None else "zoo.score_name.random", name=score_name(name))




def nats(x: float) -> str:
    return f"{x:.1e}" if x < 1e-3 else f"{x:.3f}"


def two_figures(x: float) -> str:
    """x to 2 significant figures, so a small one still reads: 0.67, 0.0075, 4.5e-5 (not 0.000)."""
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    if abs(x) < 1e-3:
        mantissa, exponent = f"{x:.1e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{x:.2g}" if abs(x) < 100 else f"{x:.0f}"


def weight_name(name: str) -> str:
    return t(ZOO_WEIGHT_NAME_KEYS[name])


def pick(label: str, options: dict[str, str], value: view.Value, key: str, horizontal: bool = True,
         help: str | None = None) -> str:
    """A radio seeded from the view's `value` in the URL and written back to it; options: each option's catalogue
    key."""
    keys = list(options)
    choice = st.radio(label, keys, key=view.seeded(key, view.read(value, choices=keys)),
                      format_func=lambda o: t(options[o]), horizontal=horizontal, help=help)
    view.write_url({value: choice})
    return choice


def clean_table(edited: pd.DataFrame, columns: list[str], name: str, default: pd.DataFrame) -> np.ndarray:
    """Edited cells as a float matrix: blanks count as 0, too many rows are cut, none falls back."""
    table = edited.reindex(columns=columns).apply(pd.to_numeric, errors="coerce")
    table = table.dropna(how="all")
    if table.empty:
        st.warning(t(ZOO_TABLE_EMPTY_KEYS[name]))
        return default[columns].to_numpy(float)
    if table.isna().any().any():
        st.warning(t(ZOO_TABLE_BLANK_KEYS[name]))
    if len(table) > MAX_TOY_ROWS:
        st.warning(t(ZOO_TABLE_CUT_KEYS[name], n=MAX_TOY_ROWS))
    values = table.fillna(0.0).to_numpy(float)[:MAX_TOY_ROWS]
    return np.clip(values, -100, 100)


def toy_inputs() -> dict:
    st.markdown(t("zoo.toy"))
    c1, c2 = st.columns([2, 3])
    with c1:
        st.markdown(t("zoo.toy.queries"))
        queries = st.data_editor(TOY_QUERIES, num_rows="dynamic", key="zoo-queries", width="stretch")
    with c2:
        st.markdown(t("zoo.toy.keys"))
        keys = st.data_editor(TOY_KEYS, num_rows="dynamic", key="zoo-keys", width="stretch")
    dims = list(TOY_QUERIES.columns)
    q = clean_table(queries, dims, "query", TOY_QUERIES)
    kv = clean_table(keys, list(TOY_KEYS.columns), "key", TOY_KEYS)
    k, v = kv[:, :len(dims)], kv[:, len(dims):]
    return dict(q=q, k=k, v=v, q_labels=[f"q{i}" for i in range(len(q))], k_labels=[f"k{i}" for i in range(len(k))],
                v_labels=["v0", "v1"], mask=None, pattern=None, name="toy", kind=None, weights=None, fit=None,
                fit_problem=None)


def model_inputs(ctx, kind: str, layer: int, head: int) -> dict:
    """Q, K, V of one head from the sidebar sentence's trace; decoder rows: the token each position predicts."""
    trace = ctx.trace
    q, k, v = (trace[schema.attn_name(kind, layer, x)][head] for x in "qkv")   # [T,Dh], [S,Dh], [S,Dh]
    rows, cols = attention_labels(trace.meta, kind)
    mask = causal_mask(len(rows)) if kind == "decoder" else None
    fit, problem = fitted_zoo(ctx.model_id)        # (None, None): no fitted weights in this model's folder
    return dict(q=q, k=k, v=v, q_labels=rows, k_labels=cols, v_labels=[str(i) for i in range(v.shape[1])],
                mask=mask, pattern=trace[schema.pattern_name(kind, layer)][head],
                name=f"{ctx.model_id}-{kind}-L{layer}-H{head}", kind=kind,
                weights=fit.head(kind, layer, head) if fit else None,
                fit=(fit, fit.report(kind, layer, head)) if fit else None, fit_problem=problem)


def masked_scores(name: str, data: dict) -> np.ndarray:
    """Scores with keys a query may not see (causal mask) set to NaN: blank in the figure, never weighted."""
    s = zoo.scores(name, data["q"], data["k"], weights=data["weights"])
    return s if data["mask"] is None else np.where(data["mask"], s, np.nan)


def weigh(s, data: dict, weighting: str, half_width: int, centre: str) -> np.ndarray:
    return zoo.weigh(np.nan_to_num(s, nan=-np.inf), weighting, data["mask"], half_width, centre)


def source_controls(ctx) -> tuple[str, tuple[str, int, int] | None]:
    """First row: where Q and K come from and, for the model, which head. Returns (source, (kind, layer, head))."""
    c1, c2, c3 = st.columns([1.15, 1.75, 1.3])
    with c1:
        source = pick(t("zoo.source"), SOURCES, view.SOURCE, "zoo-source", horizontal=False)
    if source == "model" and (ctx is None or ctx.trace is None):
        st.info(t("zoo.no_sentence"))
        source = "toy"
    if source != "model":
        view.write_url({view.KIND: None, view.LAYER: None, view.HEAD: None})
        return source, None
    cfg = ctx.model.config
    with c2:
        kind = pick(t("zoo.kind"), KINDS, view.KIND, "zoo-kind", help=t("zoo.kind.help"))
    with c3:
        layer, head = layer_head_pickers(schema.n_layers(cfg, kind), cfg.n_heads, key=view.key(ZOO, kind),
                                         allow_mean=False)
    return source, (kind, layer, head)


def method_controls() -> tuple[str, str, int, str]:
    """Second row: score function and weighting; local weighting adds its window and centre."""
    c1, c2 = st.columns([3, 2])
    with c1:
        score = pick(t("zoo.score"), SCORE_OPTIONS, view.SCORE, "zoo-score")
    with c2:
        weighting = pick(t("zoo.weighting"), WEIGHTING_OPTIONS, view.WEIGHTING, "zoo-weighting")
    half_width = view.read(view.WINDOW)
    centre = view.read(view.CENTRE, choices=list(CENTRES))
    if weighting == "local":
        c1, c2 = st.columns([2, 3])
        half_width = c1.slider(t("zoo.window"), 0, 10, key=view.seeded("zoo-window", half_width))
        centre = c2.radio(t("zoo.centre"), list(CENTRES), key=view.seeded("zoo-centre", centre),
                          format_func={c: t(ZOO_CENTRE_KEYS[c]) for c in CENTRES}.get, horizontal=True)
        view.write_url({view.WINDOW: half_width, view.CENTRE: centre})
    else:
        view.write_url({view.WINDOW: None, view.CENTRE: None})
    return score, weighting, half_width, centre


def shown_tokens(data: dict) -> tuple[slice, slice]:
    """The queries and keys the maps show: all of a short sentence's; of a longer one, a window of the queries
    the reader picks (a slider) and the keys they look at (self-attention: the same tokens). The scores and
    weights are computed on the whole sentence."""
    n_queries, n_keys = len(data["q_labels"]), len(data["k_labels"])
    size = max(WHOLE_MAP, map_window(type_scale().column_px(), type_scale()))
    if data["kind"] in ("encoder", "decoder") or data["kind"] == "cross" and data["pattern"] is not None:
        return attention_window(data["kind"], n_queries, data["pattern"], size, "zoo-tokens")
    return token_window(n_queries, size, "zoo-tokens"), slice(0, n_keys)          # the toy's few keys


def windowed(data: dict, queries: slice, keys: slice) -> dict:
    """The page's data as the maps show it: the window's labels and mask (the name keeps the window apart)."""
    mask = None if data["mask"] is None else data["mask"][queries, keys]
    name = data["name"] + (f"-q{queries.start}-k{keys.start}" if queries.start or keys.start else "")
    return {**data, "q_labels": data["q_labels"][queries], "k_labels": data["k_labels"][keys], "mask": mask,
            "name": name}


def window_centres(centres, queries: slice, keys: slice):
    """Local attention's centres of the window's queries, as (row, column) in the window; a centre outside the
    window's keys is not marked."""
    if centres is None:
        return None
    rows = [(row, int(c) - keys.start) for row, c in enumerate(np.asarray(centres)[queries])
            if keys.start <= c < keys.stop]
    return rows


def main_picture(data: dict, scores: np.ndarray, weights: np.ndarray, output: np.ndarray, score: str,
                 weighting: str, half_width: int, centres) -> None:
    """Scores and weights side by side (half the page each: every key label fits), the output under them;
    centres: local attention's (row, column) in the maps."""
    rows, cols = data["q_labels"], data["k_labels"]
    tag = f"{data['name']}-{score}-{weighting}"
    grey = mask_options(data)
    col_s, col_w = st.columns(2)
    with col_s:
        labels = Labels(t("zoo.fig.scores", name=score_title(score, data)), t("fig.attention.key"),
                        t("fig.attention.query"), t("zoo.fig.score"))
        fig = step_heatmap(scores, rows, cols, labels, look(), **grey)
        show_figure(fig, f"zoo-scores-{tag}", matrix_frame(scores, rows, cols), key="zoo-scores")
    with col_w:
        name = weight_name(weighting) if weighting != "local" else t("zoo.local_d", d=half_width)   # one title line
        labels = Labels(t("zoo.fig.weights", name=name), t("fig.attention.key"), t("fig.attention.query"),
                        t("fig.attention.weight"))
        fig = step_heatmap(weights, rows, cols, labels, look(), zrange=(0.0, 1.0), **grey)
        if centres:
            marked, columns = zip(*centres)
            mark_centres(fig, columns, [rows[r] for r in marked], cols, look())
        show_figure(fig, f"zoo-weights-{tag}", matrix_frame(weights, rows, cols), key="zoo-weights")
    st.caption(t("zoo.read_row") + (t("zoo.read_row.mask") if data["mask"] is not None else ""))
    v_labels = data["v_labels"]
    narrow = len(v_labels) <= 12                 # a few value dimensions: half the page, cells stay square
    with st.columns(2)[0] if narrow else st.container():
        labels = Labels(t("zoo.fig.output"), t("zoo.fig.value_dim"), t("fig.attention.query"),
                        t("zoo.fig.output_value"))
        zmax = symmetric_range(data["v"])
        fig = step_heatmap(output, rows, v_labels, labels, look(), zrange=(-zmax, zmax),
                           width_px=type_scale().page_px / (2 if narrow else 1), every_label=len(v_labels) <= 24)
        show_figure(fig, f"zoo-output-{tag}", matrix_frame(output, rows, v_labels), key="zoo-output")


def weights_note(data: dict, score: str) -> None:
    """Where the general or additive score's weights come from: fitted to this head (how close they get to its
    own attention on held-out sentences, and for general how close W is to I/sqrt(d)), or random."""
    if data["fit"] is None:
        if data["fit_problem"]:
            st.warning(t("zoo.fit_unusable", problem=data["fit_problem"]))
        st.info(t("zoo.random", name=score_name(score), seed=zoo.DEFAULT_SEED))
        return
    fit, report = data["fit"]
    kl = report.kl
    random_left = not report.scaled_dot
    st.info(t(ZOO_FITTED_KEYS[score], n=fit.sentences, dev=fit.dev_sentences, fitted=nats(kl[score]),
              random=nats(kl[f"random_{score}"]), general=nats(kl["general"]), h=fit.dims.d_head,
              dist=two_figures(report.w_distance), random_dist=f"{report.random_w_distance:.2f}",
              rest=t("zoo.fitted.general.rest") if random_left else "").strip())


def explain(data: dict, score: str, weighting: str, half_width: int, centre: str, all_scores: dict) -> None:
    f1, f2 = st.columns(2)
    f1.latex(SCORE_FORMULAS[score])
    f2.latex(WEIGHT_FORMULAS[weighting])
    f1.caption(t(ZOO_SCORE_HISTORY_KEYS[score]))
    f2.caption(t(ZOO_WEIGHT_HISTORY_KEYS[weighting]))
    if weighting == "local":
        st.caption(t("zoo.local.caption", centre=t(ZOO_CENTRE_KEYS[centre]), sigma=f"{half_width / 2:g}"))
    if data["kind"] == "decoder":
        st.caption(t("zoo.causal"))
    if data["kind"] in ("decoder", "cross"):
        st.caption(t("zoo.decoder_rows"))
    if data["pattern"] is not None:
        mine = weigh(all_scores["scaled"], data, "soft", half_width, centre)
        gap = float(np.abs(mine - data["pattern"]).max())
        st.caption(t("zoo.check", gap=f"{gap:.1e}"))
    with explained(t("zoo.what.title")):
        st.markdown(t("zoo.what.text"))
        st.latex(r"\text{output}_t=\sum_s a_{ts}\,v_s,\qquad a_{t\cdot}=\text{weighting}\big(\mathrm{score}(q_t,k_1),"
                 r"\dots,\mathrm{score}(q_t,k_S)\big)")


def mask_options(data: dict) -> dict:
    """The builders' mask argument: decoder self-attention's hidden keys (grey, named in the legend)."""
    masked = None if data["mask"] is None else ~np.asarray(data["mask"], dtype=bool)
    return dict(masked=masked)


def galleries(data: dict, score: str, weighting: str, half_width: int, centre: str, all_scores: dict,
              shown: tuple[slice, slice]) -> None:
    """Every score function, then every weighting, each weighed on the whole sentence and shown in the window."""
    queries, keys = shown
    rows, cols = data["q_labels"][queries], data["k_labels"][keys]
    tag = f"{windowed(data, queries, keys)['name']}-{score}-{weighting}"
    grey = mask_options(windowed(data, queries, keys))
    st.subheader(t("zoo.all_scores", weighting=weight_name(weighting)))
    every_score = [weigh(all_scores[name], data, weighting, half_width, centre)[queries, keys] for name in zoo.SCORES]
    show_figure(gallery(every_score, [panel_title(n, data) for n in zoo.SCORES], rows, cols, look(), **grey),
                f"zoo-scores-all-{tag}", key="zoo-gallery-scores")
    if data["fit"] is not None:
        report = data["fit"][1]
        st.caption(t("zoo.gallery.fitted", dist=two_figures(report.w_distance),
                     random_dist=f"{report.random_w_distance:.2f}")
                   + (" " + t("zoo.gallery.fitted.scaled") if report.scaled_dot else ""))
    st.markdown("\n".join("- " + t("zoo.list_item", name=score_name(n), text=t(ZOO_SCORE_HISTORY_KEYS[n]))
                           for n in zoo.SCORES))
    st.subheader(t("zoo.all_weightings", score=score_title(score, data)))
    every_weighting = [weigh(all_scores[score], data, w, half_width, centre)[queries, keys] for w in zoo.WEIGHTINGS]
    titles = [weight_name(w) if w != "local" else t("zoo.local_d", d=half_width) for w in zoo.WEIGHTINGS]
    show_figure(gallery(every_weighting, titles, rows, cols, look(), **grey), f"zoo-weightings-all-{tag}",
                key="zoo-gallery-weightings")
    st.markdown("\n".join("- " + t("zoo.list_item", name=weight_name(w), text=t(ZOO_WEIGHT_HISTORY_KEYS[w]))
                           for w in zoo.WEIGHTINGS))


def render() -> None:
    st.title(t("zoo.title"))
    ctx = current()
    # drawn first on the page, computed after the toy tables below it; on a phone over the pickers too (they
    # filled its whole first screen)
    picture = st.container() if on_phone() else None
    source, chosen = source_controls(ctx)
    score, weighting, half_width, centre = method_controls()
    picture = picture if picture is not None else st.container()
    data = model_inputs(ctx, *chosen) if source == "model" else toy_inputs()
    all_scores = {name: masked_scores(name, data) for name in zoo.SCORES}
    scores = all_scores[score]
    weights = weigh(scores, data, weighting, half_width, centre)
    output = zoo.attend(weights, data["v"])
    with picture:
        queries, keys = shown_tokens(data)
        centres = (zoo.local_centres(np.nan_to_num(scores, nan=-np.inf), centre, data["mask"])
                   if weighting == "local" else None)
        main_picture(windowed(data, queries, keys), scores[queries, keys], weights[queries, keys], output[queries],
                     score, weighting, half_width, window_centres(centres, queries, keys))
        if score in WEIGHTED:
            weights_note(data, score)
    explain(data, score, weighting, half_width, centre, all_scores)     # under the toy tables, when shown
    galleries(data, score, weighting, half_width, centre, all_scores, (queries, keys))


if __name__ == "__main__":
    render()
