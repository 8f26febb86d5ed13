"""The app's attention figures from a Trace in one call, for notebooks, scripts and the offline lesson.

The builders in the modules below take arrays and labels; these functions do the slicing (hook names and
token labels from model/capture/schema.py), so a caller never indexes a [layer, head, query, key] array:

    from model import load_checkpoint, trace_sentence
    from viz.figures import attention_figure
    from viz.core.i18n import words
    trace = trace_sentence(load_checkpoint("pretrained/en-es"), "The man went to the house.")
    attention_figure(trace, words("en"), "cross", layer=2).show()

Kinds: "encoder", "decoder" (masked self-attention), "cross" (decoder -> encoder). Each returns a
plotly Figure: .show() in a notebook, .write_html("map.html") anywhere. Their words (title, axes, hover) come
from `words`, the message catalogue (viz/locales) in the reader's language: viz.core.i18n.words("zh").

Words reach every builder one way: a `words` object (style.Words), built for the reader's language by the viz
layer (viz.core.i18n.words) and passed in. A builder asks it for the catalogue keys it draws, so its signature holds
data and a few options, no English copy of the catalogue lives in Python, and the figures stay free of
Streamlit and of the session: whoever calls them decides the language.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.analysis.attention_math import future_mask
from model.capture import schema
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.multihead import head_patterns
from viz.figures.style import NORMAL, TypeScale, Words
from viz.core.text import attention_labels

__all__ = ["attention_figure", "heads_figure", "model_view_figure", "token_labels"]


def _patterns(trace, kind: str, layer: int | None = None) -> np.ndarray:
    """[L,H,Q,K] of one kind, or [H,Q,K] of one layer, with a clear error for a layer that is not there."""
    patterns = schema.stacked(trace, kind)
    if layer is None:
        return patterns
    if not 0 <= layer < len(patterns):
        raise ValueError(f"layer {layer} does not exist: the {kind} attention has layers 0–{len(patterns) - 1}")
    return patterns[layer]


def token_labels(trace, kind: str) -> tuple[list[str], list[str]]:
    """(row labels, column labels) of one kind's maps, position-prefixed so repeated tokens stay apart."""
    return attention_labels(trace.meta, kind)


def attention_figure(trace, words: Words, kind: str = "encoder", layer: int = 0, head: int | None = None,
                     type_scale: TypeScale = NORMAL) -> go.Figure:
    """One head's attention map, or the mean of the layer's heads when head is None; decoder self-attention's
    masked cells grey. type_scale: chart text sizes (PRESENTER for a projector)."""
    patterns = _patterns(trace, kind, layer)                                     # [H, Q, K]
    if head is not None and not 0 <= head < len(patterns):
        raise ValueError(f"head {head} does not exist: this model has heads 0–{len(patterns) - 1}")
    if head is None:
        weights, title = patterns.mean(0), words("fig.tour.mean_heads", kind=words.kind(kind), layer=layer)
    else:
        weights, title = patterns[head], words("fig.tour.one_head", kind=words.kind(kind), layer=layer, head=head)
    queries, keys = token_labels(trace, kind)
    return attention_heatmap(weights, queries, keys, words, title=title, masked=future_mask(kind, *weights.shape),
                             type_scale=type_scale)


def heads_figure(trace, words: Words, kind: str = "encoder", layer: int = 0,
                 type_scale: TypeScale = NORMAL) -> go.Figure:
    """Every head of one layer side by side (decoder self-attention's masked cells grey)."""
    queries, keys = token_labels(trace, kind)
    return head_patterns(_patterns(trace, kind, layer), queries, keys, words, type_scale=type_scale,
                         masked=future_mask(kind, len(queries), len(keys)),
                         title=words("fig.tour.every_head", kind=words.kind(kind), layer=layer))


def model_view_figure(trace, words: Words, kind: str = "encoder", type_scale: TypeScale = NORMAL) -> go.Figure:
    """Every layer (rows) x head (columns) as thumbnails, as on the explorer page."""
    patterns = _patterns(trace, kind)
    return model_view(patterns, words, title=words("fig.every_layer_head", kind=words.kind(kind)),
                      masked=future_mask(kind, *patterns.shape[-2:]), type_scale=type_scale)
