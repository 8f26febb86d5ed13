"""Attention zoo: the score functions and weightings of attention's history, on one real head or a toy.

One head of the model: its pictures are drawn in the browser (viz/elements/browser_view.py, a deck): the kind, layer
and head are picked there with no script run, written to the URL (kind=, layer=, head=); for the score function,
weighting, local window and token window the server's widgets chose, the page sends every kind x layer x head's
pictures once (the same builders draw them as the toy's). The toy example stays the server's."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from model.analysis import zoo
from model.analysis.attention_math import causal_mask
from model.capture import schema
from viz.figures import browser_view as payloads
from viz.figures.attention import map_window, source_window, window_from
from viz.figures.browser_view import template_spec
from viz.figures.style import Labels, Look, Words, symmetric_range
from viz.figures.zoo import gallery, mark_centres, step_heatmap
from viz.core.i18n import catalogue_keys, t
from viz.services.analyses import fitted_zoo
from viz.core.context import Traced, current
from viz.core import view
from viz.core.text import attention_labels
from viz.elements.browser_view import ZOO_PICK, browser_view, url_names, whole_asked
from viz.elements.ui import (explained, look, matrix_frame, on_phone, plotly_config, safe_filename, show_figure,
                             token_window)

OWN = view.Own("viz.pages.zoo")  # this module's own session values
ZOO_DECK = OWN.value("zoo-deck")  # zoo-deck-view, -head, -whole, -csv: one head's pictures' browser view

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


def panel_title(name: str, data: dict, words: Words = t) -> str:
    """A gallery panel's title: the score's, and for a fitted general W that is I/sqrt(d), that it is the scaled
    dot product (the two panels look alike, and that is the point)."""
    if name == "general" and copies_scaled_dot(data):
        return words("zoo.score_name.fitted_scaled", name=score_name(name, words))
    return score_title(name, data, words)


def score_name(name: str, words: Words = t) -> str:
    return words(ZOO_SCORE_NAME_KEYS[name])


def score_title(name: str, data: dict, words: Words = t) -> str:
    """The score's name; the general and additive ones say whether their weights are fitted or random."""
    if name not in WEIGHTED:
        return score_name(name, words)
    return words("zoo.score_name.fitted" if data["weights"] is not None else "zoo.score_name.random",
                 name=score_name(name, words))


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


def weight_name(name: str, words: Words = t) -> str:
    return words(ZOO_WEIGHT_NAME_KEYS[name])


def weighting_title(weighting: str, half_width: int, words: Words = t) -> str:
    """A weighting's one-line title (local: its window)."""
    return weight_name(weighting, words) if weighting != "local" else words("zoo.local_d", d=half_width)


def pick(label: str, options: dict[str, str], value: view.Value, key: str, horizontal: bool = True,
         help: str | None = None) -> str:
    """A radio seeded from the view's `value` in the URL and written back to it; options: each option's catalogue
    key."""
    keys = list(options)
    # the options' words made in the run (a lambda calling t() later, outside a run, spoke English)
    choice = st.radio(label, keys, key=view.seeded(key, view.read(value, choices=keys)),
                      format_func={o: t(options[o]) for o in keys}.get, horizontal=horizontal, help=help)
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


def model_inputs(traced: Traced, kind: str, layer: int, head: int) -> dict:
    """Q, K, V of one head from the sidebar sentence's trace; decoder rows: the token each position predicts."""
    trace = traced.trace
    q, k, v = (trace[schema.attn_name(kind, layer, x)][head] for x in "qkv")   # [T,Dh], [S,Dh], [S,Dh]
    rows, cols = attention_labels(trace.meta, kind)
    mask = causal_mask(len(rows)) if kind == "decoder" else None
    fit, problem = fitted_zoo(traced.model_id)     # (None, None): no fitted weights in this model's folder
    return dict(q=q, k=k, v=v, q_labels=rows, k_labels=cols, v_labels=[str(i) for i in range(v.shape[1])],
                mask=mask, pattern=trace[schema.pattern_name(kind, layer)][head],
                name=f"{traced.model_id}-{kind}-L{layer}-H{head}", kind=kind,
                weights=fit.head(kind, layer, head) if fit else None,
                fit=(fit, fit.report(kind, layer, head)) if fit else None, fit_problem=problem)


def masked_scores(name: str, data: dict) -> np.ndarray:
    """Scores with keys a query may not see (causal mask) set to NaN: blank in the figure, never weighted."""
    s = zoo.scores(name, data["q"], data["k"], weights=data["weights"])
    return s if data["mask"] is None else np.where(data["mask"], s, np.nan)


def weigh(s, data: dict, weighting: str, half_width: int, centre: str) -> np.ndarray:
    return zoo.weigh(np.nan_to_num(s, nan=-np.inf), weighting, data["mask"], half_width, centre)


def source_controls(ctx) -> tuple[str, tuple[str, int, int] | None]:
    """First row: where Q and K come from. Returns (source, (kind, layer, head)): the model's head the URL names
    (the browser's pickers write it there: picked())."""
    source = pick(t("zoo.source"), SOURCES, view.SOURCE, "zoo-source")
    if source == "model" and (ctx is None or ctx.trace is None):
        st.info(t("zoo.no_sentence"))
        source = "toy"
    if source != "model":
        view.write_url({view.KIND: None, view.LAYER: None, view.HEAD: None})
        return source, None
    return source, picked(ctx.model.config)


def picked(cfg) -> tuple[str, int, int]:
    """The kind, layer and head the pictures show, from the URL (which the browser's picks write), checked against
    the model."""
    kind = view.read(view.KIND, choices=list(KINDS))
    return kind, view.read(view.LAYER, hi=schema.n_layers(cfg, kind) - 1), view.read(view.HEAD, lo=0, hi=cfg.n_heads - 1)


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


def map_size(page_look: Look) -> int:
    """How many queries (and keys) a map shows: all of a sentence up to WHOLE_MAP, else as many as fit."""
    return max(WHOLE_MAP, map_window(page_look.scale.column_px(), page_look.scale))


def shown_tokens(data: dict, start: int, size: int) -> tuple[slice, slice]:
    """The queries and keys the maps show: all of a short sentence's; of a longer one, `size` queries from the
    reader's `start` (a slider over the longest rows, kept inside this kind's: attention.window_from) and the keys
    they look at (self-attention: the same tokens; cross-attention: the `size` source tokens those rows look at
    most). The scores and weights are computed on the whole sentence."""
    queries = window_from(start, len(data["q_labels"]), size)
    if data["kind"] in ("encoder", "decoder"):
        return queries, queries
    if data["pattern"] is not None:
        return queries, source_window(data["pattern"], queries, size)
    return queries, slice(0, len(data["k_labels"]))            # the toy's few keys


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


class Head:
    """One head's zoo (or the toy's): its data, every score function's scores, the picked score's weights and
    output, the window the maps show: what the pictures, their captions and CSVs are made of."""

    def __init__(self, data: dict, score: str, weighting: str, half_width: int, centre: str, start: int, size: int):
        self.data, self.score, self.weighting, self.half_width, self.centre = data, score, weighting, half_width, centre
        self.all_scores = {name: masked_scores(name, data) for name in zoo.SCORES}
        self.scores = self.all_scores[score]
        self.weights = weigh(self.scores, data, weighting, half_width, centre)
        self.output = zoo.attend(self.weights, data["v"])
        self.queries, self.keys = shown_tokens(data, start, size)
        self.shown = windowed(data, self.queries, self.keys)
        centres = (zoo.local_centres(np.nan_to_num(self.scores, nan=-np.inf), centre, data["mask"])
                   if weighting == "local" else None)
        self.centres = window_centres(centres, self.queries, self.keys)
        self.tag = f"{self.shown['name']}-{score}-{weighting}"

    @property
    def narrow(self) -> bool:
        return len(self.data["v_labels"]) <= 12      # a few value dimensions: half the page, cells stay square

    def files(self) -> dict[str, str]:
        return {figure: safe_filename(f"zoo-{stem}-{self.tag}") for figure, stem in FILES.items()}

    def picture(self, page_look: Look) -> dict[str, go.Figure]:
        """Scores, weights and output, as the builders draw them (the main picture; centres: local attention's
        (row, column) in the maps)."""
        words, shown, q = page_look.words, self.shown, self.queries
        rows, cols, grey = shown["q_labels"], shown["k_labels"], mask_options(shown)
        labels = Labels(words("zoo.fig.scores", name=score_title(self.score, self.data, words)),
                        words("fig.attention.key"), words("fig.attention.query"), words("zoo.fig.score"))
        scores = step_heatmap(self.scores[q, self.keys], rows, cols, labels, page_look, **grey)
        labels = Labels(words("zoo.fig.weights", name=weighting_title(self.weighting, self.half_width, words)),
                        words("fig.attention.key"), words("fig.attention.query"), words("fig.attention.weight"))
        weights = step_heatmap(self.weights[q, self.keys], rows, cols, labels, page_look, zrange=(0.0, 1.0), **grey)
        if self.centres:
            marked, columns = zip(*self.centres)
            mark_centres(weights, columns, [rows[r] for r in marked], cols, page_look)
        v_labels = shown["v_labels"]
        labels = Labels(words("zoo.fig.output"), words("zoo.fig.value_dim"), words("fig.attention.query"),
                        words("zoo.fig.output_value"))
        zmax = symmetric_range(self.data["v"])
        output = step_heatmap(self.output[q], rows, v_labels, labels, page_look, zrange=(-zmax, zmax),
                              width_px=page_look.scale.page_px / (2 if self.narrow else 1),
                              every_label=len(v_labels) <= 24)
        return {"scores": scores, "weights": weights, "output": output}

    def galleries(self, page_look: Look) -> dict[str, go.Figure]:
        """Every score function, then every weighting, each weighed on the whole sentence and shown in the window."""
        words, data, q, k = page_look.words, self.data, self.queries, self.keys
        shown = self.shown
        grey = mask_options(shown)
        every_score = [weigh(self.all_scores[name], data, self.weighting, self.half_width, self.centre)[q, k]
                       for name in zoo.SCORES]
        every_weighting = [weigh(self.scores, data, w, self.half_width, self.centre)[q, k] for w in zoo.WEIGHTINGS]
        return {
            "gallery-scores": gallery(every_score, [panel_title(n, data, words) for n in zoo.SCORES],
                                      shown["q_labels"], shown["k_labels"], page_look, **grey),
            "gallery-weightings": gallery(every_weighting,
                                          [weighting_title(w, self.half_width, words) for w in zoo.WEIGHTINGS],
                                          shown["q_labels"], shown["k_labels"], page_look, **grey),
        }

    def matrix(self, figure: str) -> pd.DataFrame:
        """The numbers a main picture shows (its CSV): the window's."""
        rows, cols, q = self.shown["q_labels"], self.shown["k_labels"], self.queries
        if figure == "output":
            return matrix_frame(self.output[q], rows, self.shown["v_labels"])
        return matrix_frame((self.scores if figure == "scores" else self.weights)[q, self.keys], rows, cols)

    def texts(self, words: Words) -> dict[str, str]:
        """The words beside the pictures that change with the head: how to read a row, where the weights come from
        (a weighted score), the model's check, the kind's notes, the galleries' headings and what fitted means."""
        data = self.data
        said = {"read": words("zoo.read_row") + (words("zoo.read_row.mask") if data["mask"] is not None else ""),
                "all-scores": words("zoo.all_scores", weighting=weight_name(self.weighting, words)),
                "all-weightings": words("zoo.all_weightings", score=score_title(self.score, data, words))}
        if self.score in WEIGHTED:
            said["note"] = weights_words(data, self.score, words)
        if data["pattern"] is not None:
            said["check"] = check_words(self, words)
        said["kind-notes"] = " ".join(kind_words(data, words))
        if data["fit"] is not None:
            said["fitted"] = fitted_words(data, words)
        return said


FILES = {"scores": "scores", "weights": "weights", "output": "output", "gallery-scores": "scores-all",
         "gallery-weightings": "weightings-all"}
CSV_FIGURES = ("scores", "weights", "output")       # the main picture's: each with its CSV


def main_picture(head: Head) -> None:
    """Scores and weights side by side (half the page each: every key label fits), the output under them (the toy's,
    drawn by the server; the model's head: the deck)."""
    figures, files = head.picture(look()), head.files()
    col_s, col_w = st.columns(2)
    with col_s:
        show_figure(figures["scores"], files["scores"], head.matrix("scores"), key="zoo-scores")
    with col_w:
        show_figure(figures["weights"], files["weights"], head.matrix("weights"), key="zoo-weights")
    st.caption(head.texts(t)["read"])
    with st.columns(2)[0] if head.narrow else st.container():
        show_figure(figures["output"], files["output"], head.matrix("output"), key="zoo-output")


def weights_words(data: dict, score: str, words: Words = t) -> str:
    """Where the general or additive score's weights come from: fitted to this head (how close they get to its
    own attention on held-out sentences, and for general how close W is to I/sqrt(d)), or random."""
    if data["fit"] is None:
        return words("zoo.random", name=score_name(score, words), seed=zoo.DEFAULT_SEED)
    fit, report = data["fit"]
    kl = report.kl
    random_left = not report.scaled_dot
    return words(ZOO_FITTED_KEYS[score], n=fit.sentences, dev=fit.dev_sentences, fitted=nats(kl[score]),
                 random=nats(kl[f"random_{score}"]), general=nats(kl["general"]), h=fit.dims.d_head,
                 dist=two_figures(report.w_distance), random_dist=f"{report.random_w_distance:.2f}",
                 rest=words("zoo.fitted.general.rest") if random_left else "").strip()


def weights_note(data: dict, score: str) -> None:
    if data["fit"] is None and data["fit_problem"]:
        st.warning(t("zoo.fit_unusable", problem=data["fit_problem"]))
    st.info(weights_words(data, score))


def check_words(head: Head, words: Words = t) -> str:
    """The scaled dot product and softmax on the head's Q and K against the model's own attention."""
    mine = weigh(head.all_scores["scaled"], head.data, "soft", head.half_width, head.centre)
    return words("zoo.check", gap=f"{float(np.abs(mine - head.data['pattern']).max()):.1e}")


def kind_words(data: dict, words: Words = t) -> list[str]:
    """What the kind of attention changes: decoder self-attention's mask, the decoder's rows."""
    said = [words("zoo.causal")] if data["kind"] == "decoder" else []
    return said + ([words("zoo.decoder_rows")] if data["kind"] in ("decoder", "cross") else [])


def fitted_words(data: dict, words: Words = t) -> str:
    report = data["fit"][1]
    return (words("zoo.gallery.fitted", dist=two_figures(report.w_distance),
                  random_dist=f"{report.random_w_distance:.2f}")
            + (" " + words("zoo.gallery.fitted.scaled") if report.scaled_dot else ""))


def formulas(score: str, weighting: str, half_width: int, centre: str) -> None:
    """The score's and the weighting's formulas and history (the server's widgets': the same for every head)."""
    f1, f2 = st.columns(2)
    f1.latex(SCORE_FORMULAS[score])
    f2.latex(WEIGHT_FORMULAS[weighting])
    f1.caption(t(ZOO_SCORE_HISTORY_KEYS[score]))
    f2.caption(t(ZOO_WEIGHT_HISTORY_KEYS[weighting]))
    if weighting == "local":
        st.caption(t("zoo.local.caption", centre=t(ZOO_CENTRE_KEYS[centre]), sigma=f"{half_width / 2:g}"))


def what(score: str) -> None:
    with explained(t("zoo.what.title")):
        st.markdown(t("zoo.what.text"))
        st.latex(r"\text{output}_t=\sum_s a_{ts}\,v_s,\qquad a_{t\cdot}=\text{weighting}\big(\mathrm{score}(q_t,k_1),"
                 r"\dots,\mathrm{score}(q_t,k_S)\big)")


def explain(head: Head) -> None:
    formulas(head.score, head.weighting, head.half_width, head.centre)
    for said in kind_words(head.data):
        st.caption(said)
    what(head.score)


def mask_options(data: dict) -> dict:
    """The builders' mask argument: decoder self-attention's hidden keys (grey, named in the legend)."""
    masked = None if data["mask"] is None else ~np.asarray(data["mask"], dtype=bool)
    return dict(masked=masked)


def score_list() -> None:
    st.markdown("\n".join("- " + t("zoo.list_item", name=score_name(n), text=t(ZOO_SCORE_HISTORY_KEYS[n]))
                           for n in zoo.SCORES))


def weighting_list() -> None:
    st.markdown("\n".join("- " + t("zoo.list_item", name=weight_name(w), text=t(ZOO_WEIGHT_HISTORY_KEYS[w]))
                           for w in zoo.WEIGHTINGS))


def galleries(head: Head) -> None:
    """The toy's galleries, drawn by the server (the model's head: the deck)."""
    figures, files, said = head.galleries(look()), head.files(), head.texts(t)
    st.subheader(said["all-scores"])
    show_figure(figures["gallery-scores"], files["gallery-scores"], key="zoo-gallery-scores")
    score_list()
    st.subheader(said["all-weightings"])
    show_figure(figures["gallery-weightings"], files["gallery-weightings"], key="zoo-gallery-weightings")
    weighting_list()


# -- one head of the model: a deck of every kind x layer x head (viz/figures/browser_view.py) -------------------
def blocks(score: str, narrow: bool) -> list[dict]:
    """How the deck is laid out, every head alike: scores and weights side by side, how to read a row, the output,
    where a weighted score's weights come from, the model's check, then the galleries."""
    figure = lambda name, csv=True: {"type": "figure", "id": name, **({"csv": True} if csv else {})}   # noqa: E731
    text = lambda name: {"type": "text", "id": name}                         # noqa: E731
    output = [figure("output")]
    return [
        {"type": "columns", "columns": [[figure("scores")], [figure("weights")]]},
        text("read"),
        {"type": "columns", "columns": [output, []]} if narrow else output[0],
        *([{"type": "text", "id": "note", "size": "body"}] if score in WEIGHTED else []),
        text("check"), text("kind-notes"),
        {"type": "heading", "id": "all-scores", "size": "section"},
        figure("gallery-scores", csv=False), text("fitted"),
        {"type": "heading", "id": "all-weightings", "size": "section"},
        figure("gallery-weightings", csv=False),
    ]


def method_key(score: str, weighting: str, half_width: int, centre: str) -> tuple:
    """What the server's widgets chose (the window and centre: the weighting gallery's local panel, whatever the
    weighting)."""
    return (score, weighting, half_width, centre)


def body_key(ctx, method: tuple, start: int, page_look: Look) -> tuple:
    """What the deck is built for (built_deck's arguments but `first`): the sentence (trace), the server's score,
    weighting and window, the token window's start, the look (words and type scale), the modebar."""
    return (ctx.trace_key, method, start, page_look, plotly_config("")["displayModeBar"])


def sentence_sig(at) -> str:
    return payloads.view_sig("zoo", at)


@view.shared_cached
def built_deck(traced: Traced, method: tuple, start: int, page_look: Look, modebar: bool,
               first: tuple[str, int, int] | None) -> payloads.Body:
    """The browser's data for this sentence and method: every kind x layer x head's part (`first`: only that one, a
    new sentence's first run; the view asks for the rest once it has drawn it)."""
    cfg, words = traced.model.config, page_look.words
    layers = {kind: schema.n_layers(cfg, kind) for kind in KINDS}
    picks = ([first] if first is not None else
             [(kind, layer, head) for kind in KINDS for layer in range(layers[kind]) for head in range(cfg.n_heads)])
    parts = {payloads.pick_key(dict(zip(ZOO_PICK, pick)), ZOO_PICK): head_part(traced, *pick, method, start, page_look)
             for pick in picks}
    narrow = cfg.d_model // cfg.n_heads <= 12
    sentence = sentence_sig((traced.trace_key, method, start, page_look, modebar))        # body_key
    said = {"kind": words("zoo.kind"), "kind_help": words("zoo.kind.help"),
            "kind_names": {kind: words(KINDS[kind]) for kind in KINDS}}
    return payloads.encode(payloads.deck(
        parts, blocks(method[0], narrow), ZOO_PICK, layers, template_spec(go.Figure()), words,
        {"text_px": page_look.scale.text, "sentence": sentence, "whole": first is None, "modebar": modebar,
         "url_names": url_names(ZOO_PICK)}, said=said, heads=cfg.n_heads))


def model_head(traced: Traced, kind: str, layer: int, head: int, method: tuple, start: int, page_look: Look) -> Head:
    return Head(model_inputs(traced, kind, layer, head), *method, start, map_size(page_look))


@view.shared_part
def head_part(traced: Traced, kind: str, layer: int, head: int, method: tuple, start: int, page_look: Look) -> dict:
    """One head's part of the deck: its pictures (the toy's builders) and the words that change with it."""
    numbers = model_head(traced, kind, layer, head, method, start, page_look)
    return payloads.deck_pick({**numbers.picture(page_look), **numbers.galleries(page_look)}, numbers.files(),
                              numbers.texts(page_look.words))


def pick_csv(ctx, method: tuple, start: int):
    """The CSV of a main picture the browser asked for: the numbers it shows."""
    cfg = ctx.model.config

    def make(asked: dict) -> dict:
        kind = asked["kind"] if asked["kind"] in KINDS else "encoder"
        layer = min(max(asked["layer"], 0), schema.n_layers(cfg, kind) - 1)
        head = min(max(asked["head"], 0), cfg.n_heads - 1)
        figure = asked.get("figure") if asked.get("figure") in CSV_FIGURES else "weights"
        numbers = model_head(ctx.traced, kind, layer, head, method, start, look())
        return {"name": numbers.files()[figure] + ".csv", "text": numbers.matrix(figure).to_csv()}
    return make


def query_start(ctx, page_look: Look) -> int:
    """The token window's start (a slider over the longest rows of any kind, the server's): 0 while they fit."""
    longest = max(len(attention_labels(ctx.trace.meta, kind)[0]) for kind in KINDS)
    return token_window(longest, map_size(page_look), "zoo-tokens").start


def model_view(ctx, chosen: tuple[str, int, int], score: str, weighting: str, half_width: int, centre: str) -> None:
    """One head's pictures for the kind, layer and head picked in the browser (a deck: every head sent once for the
    server's method and window; picked there with no script run)."""
    kind, layer, head = chosen
    view.write_url({view.KIND: kind, view.LAYER: layer, view.HEAD: head})
    page_look = look()
    fit, problem = fitted_zoo(ctx.model_id)
    if fit is None and problem and score in WEIGHTED:
        st.warning(t("zoo.fit_unusable", problem=problem))
    start = query_start(ctx, page_look)
    method = method_key(score, weighting, half_width, centre)
    sentence = sentence_sig(body_key(ctx, method, start, page_look))
    whole = whole_asked(sentence, ZOO_DECK)
    body = built_deck(ctx.traced, method, start, page_look, plotly_config("")["displayModeBar"],
                      None if whole else chosen)
    browser_view(ZOO_DECK, ZOO_PICK, body, {"kind": kind, "layer": layer, "head": head},
                 {"sentence": sentence, "whole": whole}, csv=pick_csv(ctx, method, start))


def render() -> None:
    st.title(t("zoo.title"))
    ctx = current()
    # drawn first on the page, computed after the toy tables below it; on a phone over the pickers too (they
    # filled its whole first screen)
    picture = st.container() if on_phone() else None
    source, chosen = source_controls(ctx)
    score, weighting, half_width, centre = method_controls()
    picture = picture if picture is not None else st.container()
    if source == "model":
        with picture:
            model_view(ctx, chosen, score, weighting, half_width, centre)
        formulas(score, weighting, half_width, centre)
        score_list()
        weighting_list()
        what(score)
        return
    data = toy_inputs()
    with picture:
        start = token_window(len(data["q_labels"]), map_size(look()), "zoo-tokens").start
        head = Head(data, score, weighting, half_width, centre, start, map_size(look()))
        main_picture(head)
        if score in WEIGHTED:
            weights_note(data, score)
    explain(head)                      # under the toy tables, when shown
    galleries(head)


if __name__ == "__main__":
    render()
