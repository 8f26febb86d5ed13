"""Attention zoo: the score functions and weightings of attention's history, on one real head or a toy."""
import numpy as np
import pandas as pd
import streamlit as st

from model.analysis import zoo
from model.capture import schema
from viz.figures.attention import KIND_TITLES
from viz.figures.style import symmetric_range
from viz.figures.zoo import PAGE_WIDTH, gallery, mark_centres, step_heatmap
from viz.state import current, qp_choice, qp_int, set_query
from viz.text import attention_labels
from viz.ui import layer_head_pickers, matrix_frame, show_figure

SOURCES = {"model": "one head of the model", "toy": "a toy example you edit"}
KIND_SHORT = {"encoder": "encoder self", "decoder": "decoder self", "cross": "cross"}
SCORE_SHORT = {"dot": "Dot", "scaled": "Scaled dot", "general": "General", "additive": "Additive", "cosine": "Cosine"}
WEIGHT_SHORT = {"soft": "Soft", "hard": "Hard", "local": "Local"}
SCORE_NAMES = {"dot": "Dot", "scaled": "Scaled dot", "general": "General (bilinear)", "additive": "Additive (Bahdanau)",
               "cosine": "Cosine"}
SCORE_FORMULAS = {
    "dot": r"\mathrm{score}(q,k)=q^\top k",
    "scaled": r"\mathrm{score}(q,k)=\frac{q^\top k}{\sqrt{d}}",
    "general": r"\mathrm{score}(q,k)=q^\top W k",
    "additive": r"\mathrm{score}(q,k)=v^\top \tanh(W_1 q + W_2 k)",
    "cosine": r"\mathrm{score}(q,k)=\frac{q^\top k}{\lVert q\rVert\,\lVert k\rVert}",
}
SCORE_HISTORY = {
    "dot": "Luong, Pham & Manning (2015) compared it with 'general' and 'concat' for translation: no parameters, "
           "and it needs queries and keys of the same size.",
    "scaled": "Vaswani et al. (2017), the Transformer: dividing by √d keeps the scores' spread near 1 however large "
              "d is, so the softmax does not saturate. This is the score the model here was trained with.",
    "general": "Luong et al. (2015): a learned matrix W lets the decoder compare its state with encoder states in a "
               "different basis.",
    "additive": "Bahdanau, Cho & Bengio (2015), the first attention for translation: a one-hidden-layer network scores "
                "each (decoder state, encoder state) pair.",
    "cosine": "Graves et al. (2014), Neural Turing Machines, address memory by cosine similarity (times a sharpness "
              "β); on its own it lies in [−1, 1], so the softmax stays flat.",
}
WEIGHT_NAMES = {"soft": "Soft (softmax)", "hard": "Hard (one-hot)", "local": "Local (window + Gaussian)"}
WEIGHT_FORMULAS = {
    "soft": r"a_{ts}=\frac{\exp \mathrm{score}(q_t,k_s)}{\sum_{s'}\exp \mathrm{score}(q_t,k_{s'})}",
    "hard": r"a_{ts}=\begin{cases}1 & s=\arg\max_{s'}\mathrm{score}(q_t,k_{s'})\\0&\text{otherwise}\end{cases}",
    "local": r"a_{ts}=\mathrm{softmax}_{|s'-p_t|\le D}\big(\mathrm{score}(q_t,k_{s'})\big)_s\,"
             r"\exp\!\Big(-\frac{(s-p_t)^2}{2\sigma^2}\Big)",
}
WEIGHT_HISTORY = {
    "soft": "Bahdanau et al. (2015): a differentiable weighted average over every position, trained by ordinary "
            "backpropagation; the Transformer's choice too.",
    "hard": "Xu et al. (2015), Show, Attend and Tell: look at one position only. Picking is not differentiable, so it "
            "was trained by sampling positions (a REINFORCE-style estimator); shown here as the argmax.",
    "local": "Luong et al. (2015): attend only to a window of 2D+1 positions around an aligned centre pₜ, "
             "weighted by a Gaussian; cheaper than global attention on long inputs.",
}
CENTRE_NAMES = {"argmax": "argmax: pₜ = the best-scoring key", "monotonic": "monotonic: pₜ = round(t·S/T)"}
TOY_QUERIES = pd.DataFrame([[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.5, 3.0]],
                           columns=["d0", "d1", "d2", "d3"])
TOY_KEYS = pd.DataFrame([[1.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                         [0.0, 0.0, 1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0, -1.0, 0.0],
                         [1.0, 1.0, 0.0, 0.0, 0.0, -1.0]], columns=["d0", "d1", "d2", "d3", "v0", "v1"])
MAX_TOY_ROWS = 12


def pick(label: str, options: dict, param: str, default: str, key: str, horizontal: bool = True,
         labels: dict | None = None, help: str | None = None) -> str:
    """A radio seeded from the URL parameter `param` and written back to it."""
    keys = list(options)
    start = keys.index(qp_choice(param, keys, default))
    value = st.radio(label, keys, index=start, key=key, format_func=(labels or options).get, horizontal=horizontal,
                     help=help)
    set_query(**{param: value})
    return value


def clean_table(edited: pd.DataFrame, columns: list[str], name: str, default: pd.DataFrame) -> np.ndarray:
    """Edited cells as a float matrix: blanks count as 0, too many rows are cut, none falls back."""
    table = edited.reindex(columns=columns).apply(pd.to_numeric, errors="coerce")
    table = table.dropna(how="all")
    if table.empty:
        st.warning(f"The {name} table is empty; using the starting example.")
        return default[columns].to_numpy(float)
    if table.isna().any().any():
        st.warning(f"Some {name} cells are blank or not numbers; they count as 0.")
    if len(table) > MAX_TOY_ROWS:
        st.warning(f"Only the first {MAX_TOY_ROWS} {name} are used.")
    values = table.fillna(0.0).to_numpy(float)[:MAX_TOY_ROWS]
    return np.clip(values, -100, 100)


def toy_inputs() -> dict:
    st.markdown("**The toy example.** Edit any number; add or delete rows. Keys carry their value vector (v0, v1) "
                "beside them.")
    c1, c2 = st.columns([2, 3])
    with c1:
        st.markdown("**Queries** (one per row)")
        queries = st.data_editor(TOY_QUERIES, num_rows="dynamic", key="zoo-queries", width="stretch")
    with c2:
        st.markdown("**Keys and their values**")
        keys = st.data_editor(TOY_KEYS, num_rows="dynamic", key="zoo-keys", width="stretch")
    dims = list(TOY_QUERIES.columns)
    q = clean_table(queries, dims, "query", TOY_QUERIES)
    kv = clean_table(keys, list(TOY_KEYS.columns), "key", TOY_KEYS)
    k, v = kv[:, :len(dims)], kv[:, len(dims):]
    return dict(q=q, k=k, v=v, q_labels=[f"q{i}" for i in range(len(q))], k_labels=[f"k{i}" for i in range(len(k))],
                v_labels=["v0", "v1"], mask=None, pattern=None, name="toy", kind=None)


def model_inputs(ctx, kind: str, layer: int, head: int) -> dict:
    """Q, K, V of one head from the sidebar sentence's trace; decoder rows: the token each position predicts."""
    trace = ctx.trace
    q, k, v = (trace[schema.attn_name(kind, layer, x)][head] for x in "qkv")   # [T,Dh], [S,Dh], [S,Dh]
    rows, cols = attention_labels(trace.meta, kind)
    mask = zoo.causal_mask(len(rows)) if kind == "decoder" else None
    return dict(q=q, k=k, v=v, q_labels=rows, k_labels=cols, v_labels=[str(i) for i in range(v.shape[1])],
                mask=mask, pattern=trace[schema.pattern_name(kind, layer)][head],
                name=f"{ctx.model_id}-{kind}-L{layer}-H{head}", kind=kind)


def masked_scores(name: str, data: dict) -> np.ndarray:
    """Scores with keys a query may not see (causal mask) set to NaN: blank in the figure, never weighted."""
    s = zoo.scores(name, data["q"], data["k"])
    return s if data["mask"] is None else np.where(data["mask"], s, np.nan)


def weigh(s, data: dict, weighting: str, half_width: int, centre: str) -> np.ndarray:
    return zoo.weigh(np.nan_to_num(s, nan=-np.inf), weighting, data["mask"], half_width, centre)


def source_controls(ctx) -> tuple[str, tuple[str, int, int] | None]:
    """First row: where Q and K come from and, for the model, which head. Returns (source, (kind, layer, head))."""
    c1, c2, c3 = st.columns([1.15, 1.75, 1.3])
    with c1:
        source = pick("Queries and keys from", SOURCES, "source", "model", "zoo-source", horizontal=False)
    if source == "model" and (ctx is None or ctx.trace is None):
        st.info("There is no sentence in the sidebar, so the toy example is shown. Type a sentence to use the "
                "model's own queries and keys.")
        source = "toy"
    if source != "model":
        set_query(kind=None, layer=None, head=None)
        return source, None
    cfg = ctx.bundle.config
    with c2:
        kind = pick("Attention", KIND_TITLES, "kind", "encoder", "zoo-kind", labels=KIND_SHORT,
                    help="Encoder self-attention, decoder (masked) self-attention, or cross-attention "
                         "(decoder queries, encoder keys).")
    with c3:
        layer, head = layer_head_pickers(schema.n_layers(cfg, kind), cfg.n_heads, key=f"zoo-{kind}",
                                         allow_mean=False)
    return source, (kind, layer, head)


def method_controls() -> tuple[str, str, int, str]:
    """Second row: score function and weighting; local weighting adds its window and centre."""
    c1, c2 = st.columns([3, 2])
    with c1:
        score = pick("Score function", SCORE_NAMES, "score", "scaled", "zoo-score", labels=SCORE_SHORT)
    with c2:
        weighting = pick("Weighting", WEIGHT_NAMES, "weighting", "soft", "zoo-weighting", labels=WEIGHT_SHORT)
    half_width = qp_int("window", 1, 0, 10)
    centre = qp_choice("centre", list(CENTRE_NAMES), "argmax")
    if weighting == "local":
        c1, c2 = st.columns([2, 3])
        half_width = c1.slider("Window half-width D (the window has 2D+1 positions)", 0, 10, half_width,
                               key="zoo-window")
        centre = c2.radio("Centre pₜ", list(CENTRE_NAMES), index=list(CENTRE_NAMES).index(centre), key="zoo-centre",
                          format_func=CENTRE_NAMES.get, horizontal=True)
        set_query(window=half_width, centre=centre)
    else:
        set_query(window=None, centre=None)
    return score, weighting, half_width, centre


def main_picture(data: dict, scores: np.ndarray, weights: np.ndarray, output: np.ndarray, score: str,
                 weighting: str, half_width: int, centre: str) -> None:
    """Scores and weights side by side (half the page each: every key label fits), the output under them."""
    rows, cols = data["q_labels"], data["k_labels"]
    tag = f"{data['name']}-{score}-{weighting}"
    col_s, col_w = st.columns(2)
    with col_s:
        fig = step_heatmap(scores, rows, cols, f"1. Scores: {SCORE_NAMES[score]}", "key", value_name="score")
        show_figure(fig, f"zoo-scores-{tag}", matrix_frame(scores, rows, cols), key="zoo-scores")
    with col_w:
        name = WEIGHT_NAMES[weighting] if weighting != "local" else f"Local, D={half_width}"   # one title line
        fig = step_heatmap(weights, rows, cols, f"2. Weights: {name}", "key", value_name="weight", signed=False)
        if weighting == "local":
            mark_centres(fig, zoo.local_centres(np.nan_to_num(scores, nan=-np.inf), centre, data["mask"]), rows, cols)
        show_figure(fig, f"zoo-weights-{tag}", matrix_frame(weights, rows, cols), key="zoo-weights")
    st.caption("Read one row: query t's score for every key (left) becomes its weights (right, on a 0–1 scale); "
               "its output below is those weights times the values V."
               + (" Blank cells: keys the causal mask hides." if data["mask"] is not None else ""))
    v_labels = data["v_labels"]
    narrow = len(v_labels) <= 12                 # a few value dimensions: half the page, cells stay square
    with st.columns(2)[0] if narrow else st.container():
        fig = step_heatmap(output, rows, v_labels, "3. Output = weights · V, one row per query", "value dimension",
                           value_name="output", zmax=symmetric_range(data["v"]),
                           width_px=PAGE_WIDTH / 2 if narrow else PAGE_WIDTH, every_label=len(v_labels) <= 24)
        show_figure(fig, f"zoo-output-{tag}", matrix_frame(output, rows, v_labels), key="zoo-output")


def explain(data: dict, score: str, weighting: str, half_width: int, centre: str, all_scores: dict) -> None:
    f1, f2 = st.columns(2)
    f1.latex(SCORE_FORMULAS[score])
    f2.latex(WEIGHT_FORMULAS[weighting])
    f1.caption(SCORE_HISTORY[score])
    f2.caption(WEIGHT_HISTORY[weighting])
    if weighting == "local":
        st.caption(f"Here pₜ is chosen by **{CENTRE_NAMES[centre]}** and σ = D/2 = {half_width / 2:g}. Weights are "
                   "zero outside the window, and rows sum to less than 1 because the Gaussian scales the in-window "
                   "softmax down (as in Luong's local-p). Red rings mark pₜ.")
    if data["kind"] == "decoder":
        st.caption("Decoder self-attention is causal: every variant may only look at keys up to its own position.")
    if data["kind"] in ("decoder", "cross"):
        st.caption("Row t is the decoder step that reads ⟨s⟩ y₁…yₜ₋₁ and predicts yₜ (the row label).")
    if data["pattern"] is not None:
        mine = weigh(all_scores["scaled"], data, "soft", half_width, centre)
        gap = float(np.abs(mine - data["pattern"]).max())
        st.caption(f"Check: scaled dot + softmax on these Q and K reproduces the model's own attention pattern for "
                   f"this head (largest difference {gap:.1e}).")
    with st.expander("What every attention mechanism does", expanded=False):
        st.markdown(
            "Every attention mechanism does two things: a **score function** rates how well a query matches each "
            "key, and a **weighting** turns the scores of one query into weights over the keys. The output is "
            "always the weighted sum of the values. This page runs the same queries and keys through the score "
            "functions and weightings that appeared between 2014 and 2017: on one real head of the model, or on "
            "a toy example.")
        st.latex(r"\text{output}_t=\sum_s a_{ts}\,v_s,\qquad a_{t\cdot}=\text{weighting}\big(\mathrm{score}(q_t,k_1),"
                 r"\dots,\mathrm{score}(q_t,k_S)\big)")


def galleries(data: dict, score: str, weighting: str, half_width: int, centre: str, all_scores: dict) -> None:
    rows, cols = data["q_labels"], data["k_labels"]
    tag = f"{data['name']}-{score}-{weighting}"
    st.subheader(f"All five score functions, weighting: {WEIGHT_NAMES[weighting]}")
    every_score = [weigh(all_scores[name], data, weighting, half_width, centre) for name in zoo.SCORES]
    show_figure(gallery(every_score, [SCORE_NAMES[n] for n in zoo.SCORES], rows, cols), f"zoo-scores-all-{tag}",
                key="zoo-gallery-scores")
    st.markdown("\n".join(f"- **{SCORE_NAMES[n]}**: {SCORE_HISTORY[n]}" for n in zoo.SCORES))
    st.subheader(f"Soft, hard and local weighting, score: {SCORE_NAMES[score]}")
    every_weighting = [weigh(all_scores[score], data, w, half_width, centre) for w in zoo.WEIGHTINGS]
    titles = [WEIGHT_NAMES[w] + (f", D={half_width}" if w == "local" else "") for w in zoo.WEIGHTINGS]
    show_figure(gallery(every_weighting, titles, rows, cols), f"zoo-weightings-all-{tag}",
                key="zoo-gallery-weightings")
    st.markdown("\n".join(f"- **{WEIGHT_NAMES[w]}**: {WEIGHT_HISTORY[w]}" for w in zoo.WEIGHTINGS))


def render() -> None:
    st.title("Attention zoo")
    ctx = current()
    source, chosen = source_controls(ctx)
    score, weighting, half_width, centre = method_controls()
    picture = st.container()          # drawn first on the page, computed after the toy tables below it
    data = model_inputs(ctx, *chosen) if source == "model" else toy_inputs()
    all_scores = {name: masked_scores(name, data) for name in zoo.SCORES}
    scores = all_scores[score]
    weights = weigh(scores, data, weighting, half_width, centre)
    output = zoo.attend(weights, data["v"])
    with picture:
        main_picture(data, scores, weights, output, score, weighting, half_width, centre)
        if score in ("general", "additive"):
            st.info(f"The {SCORE_NAMES[score]} score needs weight matrices this model never learned. They are "
                    f"**random, fixed** (NumPy seed {zoo.DEFAULT_SEED}, variance 1/d), not trained: they show the "
                    "shape of the computation, not what a trained scorer of this kind would pick.")
    explain(data, score, weighting, half_width, centre, all_scores)     # under the toy tables, when shown
    galleries(data, score, weighting, half_width, centre, all_scores)


if __name__ == "__main__":
    render()
