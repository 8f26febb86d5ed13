"""The app's attention figures from a Trace in one call, for notebooks, scripts and the offline lesson.

The builders in the modules below take arrays and labels; these functions do the slicing (hook names and
token labels from model/capture/schema.py), so a caller never indexes a [layer, head, query, key] array:

    from model import load_checkpoint, trace_sentence
    from viz.figures import attention_figure
    trace = trace_sentence(load_checkpoint("pretrained/en-es"), "The man went to the house.")
    attention_figure(trace, "cross", layer=2).show()

Kinds: "encoder", "decoder" (masked self-attention), "cross" (decoder -> encoder). Each returns a
plotly Figure: .show() in a notebook, .write_html("map.html") anywhere. Their words (title, axes, hover)
come from the message catalogue (viz/locales) in `lang`, English by default: attention_figure(..., lang="zh").
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.capture import schema
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.multihead import head_patterns
from viz.figures.style import NORMAL, TypeScale, causal_mask
from viz.i18n import DEFAULT_LANG, KIND_KEYS, message
from viz.text import attention_labels

__all__ = ["attention_figure", "heads_figure", "model_view_figure", "token_labels"]


def _patterns(trace, kind: str, layer: int | None = None) -> np.ndarray:
    """[L,H,Q,K] of one kind, or [H,Q,K] of one layer, with a clear error for a layer that is not there."""
    patterns = schema.stacked(trace, kind)
    if layer is None:
        return patterns
    if not 0 <= layer < len(patterns):
        raise ValueError(f"layer {layer} does not exist: the {kind} attention has layers 0–{len(patterns) - 1}")
    return patterns[layer]


def future_mask(kind: str, n_queries: int, n_keys: int) -> np.ndarray | None:
    """Decoder self-attention's masked cells (every key after the query), which the figures draw grey;
    None for the encoder and cross-attention."""
    return causal_mask(n_queries, n_keys) if kind == "decoder" else None


def token_labels(trace, kind: str) -> tuple[list[str], list[str]]:
    """(row labels, column labels) of one kind's maps, position-prefixed so repeated tokens stay apart."""
    return attention_labels(trace.meta, kind)


def attention_figure(trace, kind: str = "encoder", layer: int = 0, head: int | None = None,
                     lang: str = DEFAULT_LANG, type_scale: TypeScale = NORMAL) -> go.Figure:
    """One head's attention map, or the mean of the layer's heads when head is None; decoder self-attention's
    masked cells grey. type_scale: chart text sizes (PRESENTER for a projector)."""
    patterns = _patterns(trace, kind, layer)                                     # [H, Q, K]
    if head is not None and not 0 <= head < len(patterns):
        raise ValueError(f"head {head} does not exist: this model has heads 0–{len(patterns) - 1}")
    kind_name = message(lang, KIND_KEYS[kind])
    if head is None:
        weights, title = patterns.mean(0), message(lang, "fig.tour.mean_heads", kind=kind_name, layer=layer)
    else:
        weights, title = patterns[head], message(lang, "fig.tour.one_head", kind=kind_name, layer=layer, head=head)
    queries, keys = token_labels(trace, kind)
    return attention_heatmap(weights, queries, keys, title=title, value_name=message(lang, "fig.attention.weight"),
                             x_title=message(lang, "fig.attention.x"), y_title=message(lang, "fig.attention.y"),
                             hover_query=message(lang, "fig.attention.query"),
                             hover_key=message(lang, "fig.attention.key"), masked=future_mask(kind, *weights.shape),
                             masked_label=message(lang, "fig.masked"), type_scale=type_scale)


def heads_figure(trace, kind: str = "encoder", layer: int = 0, lang: str = DEFAULT_LANG,
                 type_scale: TypeScale = NORMAL) -> go.Figure:
    """Every head of one layer side by side (decoder self-attention's masked cells grey)."""
    queries, keys = token_labels(trace, kind)
    return head_patterns(_patterns(trace, kind, layer), queries, keys, type_scale=type_scale,
                         masked=future_mask(kind, len(queries), len(keys)), masked_label=message(lang, "fig.masked"),
                         title=message(lang, "fig.tour.every_head", kind=message(lang, KIND_KEYS[kind]), layer=layer),
                         head_name=message(lang, "multihead.head"), hover_query=message(lang, "fig.attention.query"),
                         hover_key=message(lang, "fig.attention.key"), value_name=message(lang, "fig.attention.weight"))


def model_view_figure(trace, kind: str = "encoder", lang: str = DEFAULT_LANG,
                      type_scale: TypeScale = NORMAL) -> go.Figure:
    """Every layer (rows) x head (columns) as thumbnails, as on the explorer page."""
    title = message(lang, "fig.every_layer_head", kind=message(lang, KIND_KEYS[kind]))
    patterns = _patterns(trace, kind)
    return model_view(patterns, title=title, value_name=message(lang, "fig.attention.weight"),
                      head_label=message(lang, "fig.grid.head", h="{h}"),
                      layer_label=message(lang, "fig.grid.layer", i="{i}"),
                      click_hint=message(lang, "fig.grid.hover"), masked=future_mask(kind, *patterns.shape[-2:]),
                      masked_label=message(lang, "fig.masked"), type_scale=type_scale)
