"""The app's attention figures from a Trace in one call, for notebooks, scripts and the offline lesson.

The builders in the modules below take arrays and labels; these functions do the slicing (hook names and
token labels from model/capture/schema.py), so a caller never indexes a [layer, head, query, key] array:

    from model import load_checkpoint, trace_sentence
    from viz.figures import Look, attention_figure
    from viz.core.i18n import words
    trace = trace_sentence(load_checkpoint("pretrained/en-es"), "The man went to the house.")
    attention_figure(trace, Look(words("en")), "cross", layer=2).show()

Kinds: "encoder", "decoder" (masked self-attention), "cross" (decoder -> encoder). Each returns a
plotly Figure: .show() in a notebook, .write_html("map.html") anywhere. Their words (title, axes, hover) come
from the look's words, the message catalogue (viz/locales) in the reader's language: viz.core.i18n.words("zh");
their text sizes from its type scale (Look(words("zh"), PRESENTER) for a projector).

Words and sizes reach every builder one way: a `look` (style.Look: a `words` object, style.Words, built for the
reader's language by the viz layer, viz.core.i18n.words, and a type scale), passed in. A builder asks its words
for the catalogue keys it draws, so its signature holds data and a few options, no English copy of the catalogue
lives in Python, and the figures stay free of Streamlit and of the session: whoever calls them decides the
language and the sizes.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.analysis.attention_math import future_mask
from model.capture import schema
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.multihead import head_patterns
from viz.figures.style import Look
from viz.core.text import attention_labels

__all__ = ["Look", "attention_figure", "heads_figure", "model_view_figure", "token_labels"]


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


def attention_figure(trace, look: Look, kind: str = "encoder", layer: int = 0, head: int | None = None) -> go.Figure:
    """One head's attention map, or the mean of the layer's heads when head is None; decoder self-attention's
    masked cells grey."""
    patterns = _patterns(trace, kind, layer)                                     # [H, Q, K]
    if head is not None and not 0 <= head < len(patterns):
        raise ValueError(f"head {head} does not exist: this model has heads 0–{len(patterns) - 1}")
    if head is None:
        weights, title = patterns.mean(0), look.words("fig.tour.mean_heads", kind=look.words.kind(kind), layer=layer)
    else:
        weights, title = patterns[head], look.words("fig.tour.one_head", kind=look.words.kind(kind), layer=layer, head=head)
    queries, keys = token_labels(trace, kind)
    return attention_heatmap(weights, queries, keys, look, title=title, masked=future_mask(kind, *weights.shape))


def heads_figure(trace, look: Look, kind: str = "encoder", layer: int = 0) -> go.Figure:
    """Every head of one layer side by side (decoder self-attention's masked cells grey)."""
    queries, keys = token_labels(trace, kind)
    return head_patterns(_patterns(trace, kind, layer), queries, keys, look,
                         masked=future_mask(kind, len(queries), len(keys)),
                         title=look.words("fig.tour.every_head", kind=look.words.kind(kind), layer=layer))


def model_view_figure(trace, look: Look, kind: str = "encoder") -> go.Figure:
    """Every layer (rows) x head (columns) as thumbnails, as on the explorer page."""
    patterns = _patterns(trace, kind)
    return model_view(patterns, look, title=look.words("fig.every_layer_head", kind=look.words.kind(kind)),
                      masked=future_mask(kind, *patterns.shape[-2:]))
