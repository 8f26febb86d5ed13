"""The guided tour's pictures, one per step (viz/tour/steps.py; the multi-head step has two: its heads' grid and
their head view), drawn from one sentence's Trace by the figure builders the pages use. The tour page draws
them in place and the offline lesson (viz/tour/lesson.py) writes them to its file, both through step_pictures: the
same pictures in both.

Each draw(trace, model_dir, look) takes its words and sizes from `look` (Look(viz.core.i18n.words(lang), scale)) when it builds the
figure (viz/locales: fig.tour.*, fig.attention.*, fig.kind.*, fig.loss.*); token labels, the sentence and
the model's translation stay as they are. No Streamlit here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, NamedTuple

import json

import plotly.graph_objects as go

from model.analysis import heads as head_stats
from model.analysis import regularize
from model.analysis import zoo
from model.analysis import zoo_fit
from model.analysis.attention_math import dim_labels, softmax
from model.analysis.norms import layer_norm_stats
from model.analysis.vectors import cosine_similarity
from model.capture import schema
from model.capture.trace import Trace
from model.io.models import model_file_text
from viz.figures import attention_figure, heads_figure, token_labels
from viz.figures.decoding import confidence_bars
from viz.figures.heads import layer_head_heatmap
from viz.figures.layernorm import token_stats_figure
from viz.figures.positional import pe_heatmap
from viz.figures.regularize import ffn_units_figure, smoothing_figure
from viz.figures.step import level_ticks
from viz.figures.style import NORMAL, Labels, Look, TypeScale, colorscale, plotly_text, signed_heatmap
from viz.figures.training import loss_curve, mark_run_ends, read_train_log, run_ends
from viz.figures.vectors import cosine_map
from viz.figures.zoo import gallery
from viz.elements.map_view import head_view_figure
from viz.elements.rnn_view import accuracy_chart
from viz.core.text import position_labels
from viz.tour.steps import TourStep

RNN_METRICS = ("rnn-reverse", "metrics.json")   # beside the model's folder: the shipped RNNs' measurements
RNN_METRICS_LIMIT = 2**20

# About how wide a tour figure's plot area is drawn on a projector (1280x720, sidebar open; the lesson's page
# is wider): dimension labels are thinned for it, d0 d32 d64 … for d_model 256, level (step.level_ticks).
DIMENSION_AXIS_PX = 480

# (trace, model_dir, look) -> the step's picture, several pictures (a tuple, shown in order:
# step_pictures), or None when its data is missing
Draw = Callable[..., "go.Figure | tuple[go.Figure, ...] | None"]


def rnn_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure | None:
    """Before the Transformer: the shipped RNNs' exact accuracy against the input's length, with and without
    attention, as their training measured it (pretrained/rnn-reverse/metrics.json beside the model's folder).
    None when that file is absent or unreadable: a lesson is about the sentence."""
    path = model_dir.parent.joinpath(*RNN_METRICS) if model_dir else None
    if path is None or not path.is_file() or path.stat().st_size > RNN_METRICS_LIMIT:
        return None
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
        tables = {attention: m["accuracy_by_length"] for attention, m in metrics["models"].items()}
        return accuracy_chart(tables, tuple(metrics["train_lengths"]), look, title=look.words("rnn.acc.title"))
    except (ValueError, KeyError, TypeError, AttributeError, StopIteration):
        return None


def embeddings_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """How alike the source tokens' embedding vectors are (cosine, tokens x tokens): a repeated word is 1.00
    with itself at its other place. The [S, d_model] stripe chart read as noise on a projector; it is
    embeddings_matrix_figure, one click away (FULL_FIGURES)."""
    x = trace[schema.embed_name("encoder", "tokens")]                     # [S, D]
    labels = Labels(look.words("fig.tour.embeddings"), look.words("fig.tour.token"), look.words("fig.tour.token"),
                    look.words("step.cosine.value"))
    return cosine_map(cosine_similarity(x), position_labels(trace.meta["src_tokens"]), labels, look,
                      width_px=look.scale.page_px)


def embeddings_matrix_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """Every number of the source tokens' embedding vectors [S, d_model], dimensions thinned to a few labels."""
    x = trace[schema.embed_name("encoder", "tokens")]                     # [S, D]
    dims = dim_labels(x.shape[1])
    labels = Labels(look.words("fig.tour.embeddings_full"), look.words("fig.tour.dimension"), look.words("fig.tour.token"),
                    look.words("fig.tour.value"))
    fig = signed_heatmap(x, position_labels(trace.meta["src_tokens"]), dims, labels, type_scale=look.scale)
    # 256 slanted labels (plotly showed every 6th) ran into each other: every k-th, level
    fig.layout.xaxis.update(level_ticks(plotly_text(dims), DIMENSION_AXIS_PX * look.scale.page_px / NORMAL.page_px,
                                        type_scale=look.scale))
    return fig


def positional_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """How alike the positional vectors added to the sentence are (cosine, positions x positions): each position
    its own vector, neighbours more alike than far ones. The [S, d_model] table read as a moire on a projector;
    it is positional_table_figure, one click away (FULL_FIGURES)."""
    table = trace[schema.embed_name("encoder", "pos")]                    # [S, D]
    positions = [str(p) for p in range(table.shape[0])]
    cos = cosine_similarity(table)
    labels = Labels(look.words("fig.tour.pe_cosine"), look.words("fig.tour.position"), look.words("fig.tour.position"),
                    look.words("step.cosine.value"))
    fig = cosine_map(cos, positions, labels, look, width_px=look.scale.page_px)
    # sinusoidal positions are all alike to some degree (0.7..1 in a short sentence): on the fixed -1..1 scale
    # every cell would be the same dark red; a sequential scale over the range shown lets near vs far show
    low = float(cos.min())
    if low < 1.0:
        # the scale as plotly's checks write it: cosine_map's figure is unchecked, and so is what is set on it
        fig.data[0].update(colorscale=colorscale("Reds"), zmin=low, zmax=1.0)
    return fig


def positional_table_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """Every number of the positional vectors added to the sentence [S, d_model], the sentence boxed."""
    table = trace[schema.embed_name("encoder", "pos")]                    # [S, D]
    n = table.shape[0]
    fig = pe_heatmap(table, look, n_sentence=n, title=look.words("fig.tour.pe"))
    # The table is the sentence, so the box is the whole plot: its label goes just above the box's top right
    # corner, under the title, not in the row under the sentence (there is none here: plotly grew the axis to
    # fit the label there, an empty row "n"), nor over the data.
    fig.layout.yaxis.update(autorange=False, range=[n - 0.5, -0.5])       # reversed: position 0 on top
    for note in fig.layout.annotations:
        note.update(yref="paper", y=1, yanchor="bottom", yshift=2)
    # Two lines above the map, each on its own: the title at the top of the figure, the label on the map's top
    # edge, and a top margin that holds both (at 60 px plotly centres the title where the label sits, and in
    # presenter sizes the two run into each other over the map).
    fig.update_layout(title=dict(yref="container", y=1, yanchor="top", pad=dict(t=6)),
                      margin=dict(t=pe_title_margin(look.scale)))
    return fig


def pe_title_margin(type_scale: TypeScale) -> int:
    """Top margin of the positional map: the title's line, the label's line (about 1.35 x their sizes), gaps."""
    return round(1.35 * (type_scale.title + type_scale.text)) + 16


# The head the one-head step shows, and the one the multi-head step's head view opens on
TOUR_HEAD = 0


def one_head_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    return attention_figure(trace, look, "encoder", layer=0, head=TOUR_HEAD)


def multi_head_figure(trace: Trace, model_dir: Path | None, look: Look) -> tuple[go.Figure, go.Figure]:
    """The first encoder layer's heads twice: as a grid of maps, then as lines (the head view,
    head_lines_figure). The same weights both ways, so a teacher points at a head's map and then at its colour."""
    return (heads_figure(trace, look, "encoder", layer=0),
            head_lines_figure(trace, model_dir, look))


def head_lines_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """The head view of the multi-head step's layer (encoder self-attention, layer 0): a line from each token
    (left) to each token it attends to (right), one colour per head, its opacity the weight; a click on a head
    in the legend shows it alone (plotly's own, so it works in the offline lesson too). The same layer as the
    grid, not cross-attention: the step is about the heads of one layer looking at different places, and the
    lines show where at a glance (down one row: the next token, up: the previous one, fanning in: the end).
    It opens on the previous step's head alone (all eight heads at once are a tangle on a projector); the
    legend shows the others one click away."""
    queries, keys = token_labels(trace, "encoder")
    return head_view_figure(schema.stacked(trace, "encoder")[0], queries, keys, "encoder", 0, look,
                            selected_head=TOUR_HEAD)


def add_norm_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    before = tuple(trace[schema.norm_name("encoder", 0, "norm_attn", h)] for h in ("mean", "std"))
    after = layer_norm_stats(trace[schema.norm_name("encoder", 0, "norm_attn", "normalized")])
    return token_stats_figure(position_labels(trace.meta["src_tokens"]), before, after, look,
                              title=look.words("fig.tour.add_norm"))


def ffn_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """Which hidden units of the first encoder layer's feed-forward network fire for which source token."""
    ff = regularize.feed_forward(trace.arrays, "encoder", 0)
    units = regularize.top_units(ff.hidden, per_token=2, limit=20)
    title = look.words("ffn.units.title", stack=look.words("ffn.stack.encoder"), layer=0, shown=len(units),
                  d_ff=ff.hidden.shape[1])
    return ffn_units_figure(ff.hidden[:, units], position_labels(trace.meta["src_tokens"]), units, look,
                            title=title)


def regularize_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """The first output token: the model's probability of it and of all other tokens together, beside the
    label-smoothed target's (ε = 0.1; the Feed-forward page names the strongest rivals one by one)."""
    gold = trace.meta["tgt_ids"]
    s = regularize.smoothing_losses(trace[schema.LOGITS], gold)
    out = position_labels(trace.meta["tgt_out_tokens"])
    rest = (1.0 - s.probs[0, gold[0]], 1.0 - s.target[0, gold[0]])
    return smoothing_figure([trace.meta["tgt_out_tokens"][0]], [s.probs[0, gold[0]]], [s.target[0, gold[0]]], look,
                            rest=rest, rest_label=look.words("ffn.smooth.rest", n=s.probs.shape[1] - 1),
                            title=look.words("ffn.smooth.title", token=plotly_text([out[0]])[0], eps=s.eps))


def decoder_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """The step explains the causal mask: the decoder's masked self-attention (first layer, mean of the heads),
    its future positions grey; cross-attention is the start page's picture and this step's second link."""
    return attention_figure(trace, look, "decoder", layer=0)


def decoding_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    probs = softmax(trace[schema.LOGITS])                                 # [T, V]
    chosen = probs[range(len(trace.meta["tgt_ids"])), trace.meta["tgt_ids"]]
    return confidence_bars(chosen, position_labels(trace.meta["tgt_out_tokens"]), look,
                           title=look.words("fig.tour.confidence"))


def head_entropy_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    n_layers, n_heads = schema.stacked(trace, "encoder").shape[:2]
    stats = head_stats.trace_head_stats(trace, kinds=("encoder",))
    entropy = head_stats.stat_matrix(stats, "encoder", "entropy", n_layers, n_heads)
    return layer_head_heatmap(entropy, look, look.words("fig.tour.bits"), title=look.words("fig.tour.entropy"))


# The score functions the zoo step compares, and their panel titles in the catalogue: with random weights, and
# with the weights fitted to the head (the model folder's zoo_fit.safetensors, `fit-zoo`) when it has them.
ZOO_SCORES = {"scaled": "fig.tour.zoo.scaled", "general": "fig.tour.zoo.general", "additive": "fig.tour.zoo.additive"}
ZOO_FITTED_TITLES = {"scaled": "fig.tour.zoo.scaled", "general": "fig.tour.zoo.general.fitted",
                     "additive": "fig.tour.zoo.additive.fitted"}


def zoo_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure:
    """Encoder layer 0, head 0 under three scores; general and additive use the weights fitted to that head when
    the model folder has a usable zoo_fit.safetensors (a missing or broken one: random weights, titled so)."""
    q, k = (trace[schema.attn_name("encoder", 0, h)][0] for h in ("q", "k"))   # [S, d_head]
    queries, keys = token_labels(trace, "encoder")
    try:
        fit = zoo_fit.load_fit(model_dir, trace.meta["config"]) if model_dir else None
    except (zoo_fit.ZooFitError, KeyError, TypeError, ValueError):   # a lesson is about the sentence: draw random
        fit = None
    fitted = fit.head("encoder", 0, 0) if fit else None
    weights = [zoo.soft(zoo.scores(score, q, k, weights=fitted)) for score in ZOO_SCORES]
    titles = ZOO_FITTED_TITLES if fit else ZOO_SCORES
    return gallery(weights, [look.words(titles[score]) for score in ZOO_SCORES], queries, keys, look,
                   title=look.words("fig.tour.zoo"))


def training_figure(trace: Trace, model_dir: Path | None, look: Look) -> go.Figure | None:
    """The model's own loss curve, when its folder ships a readable training log (toy models ship none):
    a lesson is about the sentence, so a broken log costs this figure, not the file."""
    try:
        text = model_file_text(model_dir, "train_log.csv") if model_dir else None   # within its size limit
        if text is None:
            return None
        log = read_train_log(text)
    except (ValueError, OSError):   # too big, not a regular file, not a log
        return None
    fig = loss_curve(log, look, title=look.words("fig.loss.title", model=trace.meta["model_id"]))
    return mark_run_ends(fig, run_ends(log), look)


# TourStep.key -> its picture (None when the data for it is missing). A test checks every step has one.
STEP_FIGURES: dict[str, Draw] = {
    "rnn": rnn_figure, "tokens": embeddings_figure, "positional": positional_figure, "one_head": one_head_figure,
    "multi_head": multi_head_figure, "add_norm": add_norm_figure, "ffn": ffn_figure, "decoder": decoder_figure,
    "decoding": decoding_figure, "heads": head_entropy_figure, "zoo": zoo_figure, "learn": training_figure,
    "regularize": regularize_figure,
}
# TourStep.key -> the reading lines of its pictures after the first (the first's is tour.<key>.reading)
MORE_READINGS: dict[str, tuple[str, ...]] = {"multi_head": ("tour.multi_head.reading_lines",)}


class Picture(NamedTuple):
    """One of a step's pictures: the figure, the catalogue key of its reading line, and whether it is drawn
    narrow with its reading beside it (a head view: lines across the whole page lie too flat to follow)."""
    figure: go.Figure
    reading: str
    narrow: bool = False


def step_pictures(step: TourStep, trace: Trace, model_dir: Path | None, look: Look) -> list[Picture]:
    """A step's pictures in order, each with the catalogue key of its reading line: what the tour page and the
    offline lesson both show for the step. [] when its data is missing (STEP_FIGURES gave None). The first is
    the step's main picture; the others (the multi-head step's head view) are drawn narrow."""
    drawn = STEP_FIGURES[step.key](trace, model_dir, look)
    if drawn is None:
        return []
    figures = list(drawn) if isinstance(drawn, (tuple, list)) else [drawn]
    readings = (step.message_key("reading"), *MORE_READINGS.get(step.key, ()))
    if len(readings) != len(figures):
        raise ValueError(f"step {step.key!r} drew {len(figures)} pictures for {len(readings)} reading lines")
    return [Picture(fig, reading, narrow=i > 0) for i, (fig, reading) in enumerate(zip(figures, readings))]


# TourStep.key -> the full matrix behind a step's teaching picture, one click away (the tour's expander)
FULL_FIGURES: dict[str, Draw] = {"tokens": embeddings_matrix_figure, "positional": positional_table_figure}
