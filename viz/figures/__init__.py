"""The app's attention figures from a Trace in one call, for notebooks, scripts and the offline lesson.

The builders in the modules below take arrays and labels; these functions do the slicing (hook names and
token labels from model/capture/schema.py), so a caller never indexes a [layer, head, query, key] array:

    from model import load_checkpoint, trace_sentence
    from viz.figures import attention_figure
    trace = trace_sentence(load_checkpoint("pretrained/en-es"), "The man went to the house.")
    attention_figure(trace, "cross", layer=2).show()

Kinds: "encoder", "decoder" (masked self-attention), "cross" (decoder -> encoder). Each returns a
plotly Figure: .show() in a notebook, .write_html("map.html") anywhere.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.capture import schema
from viz.figures.attention import KIND_TITLES, attention_heatmap, model_view
from viz.figures.multihead import head_patterns
from viz.text import position_labels

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
    return (position_labels(schema.query_tokens(trace.meta, kind)),
            position_labels(schema.key_tokens(trace.meta, kind)))


def attention_figure(trace, kind: str = "encoder", layer: int = 0, head: int | None = None) -> go.Figure:
    """One head's attention map, or the mean of the layer's heads when head is None."""
    patterns = _patterns(trace, kind, layer)                                     # [H, Q, K]
    if head is not None and not 0 <= head < len(patterns):
        raise ValueError(f"head {head} does not exist: this model has heads 0–{len(patterns) - 1}")
    weights, which = (patterns.mean(0), "mean of the heads") if head is None else (patterns[head], f"head {head}")
    queries, keys = token_labels(trace, kind)
    return attention_heatmap(weights, queries, keys, title=f"{KIND_TITLES[kind]}, layer {layer}, {which}")


def heads_figure(trace, kind: str = "encoder", layer: int = 0) -> go.Figure:
    """Every head of one layer side by side."""
    queries, keys = token_labels(trace, kind)
    return head_patterns(_patterns(trace, kind, layer), queries, keys,
                         title=f"{KIND_TITLES[kind]}, layer {layer}: every head")


def model_view_figure(trace, kind: str = "encoder") -> go.Figure:
    """Every layer (rows) x head (columns) as thumbnails, as on the explorer page."""
    return model_view(_patterns(trace, kind), title=f"{KIND_TITLES[kind]}: every layer × head")
