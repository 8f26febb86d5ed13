"""Decoding figures: next-token candidates, one step's attention rows, the source-target alignment.

numpy + labels in, plotly out (no torch, no streamlit). Token labels are escaped with style.plotly_text
(plotly would read "<s>" as markup); attention_heatmap escapes its own, so they reach it raw.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.analysis.attention_math import future_mask
from viz.figures.attention import SLANTED_EM, UPRIGHT_EM, attention_heatmap, keys_that_fit, labels_that_fit, map_row_px
from viz.figures.style import (ATTENTION_SCALE, LINE_COLORS, NORMAL, Look, TypeScale, mask_legend, mask_overlay,
                               masked_z, plotly_text, subplot_axes, subplot_layout, typeset, update_axes)

CHOSEN_COLOR = "#d62728"     # the token the decoder appended
OTHER_COLOR = "#9ecae1"      # its competitors
AVERAGE_COLOR = "#08519c"


def _signed(value: float) -> str:
    """Two decimals without a "-0.00" for log-probabilities that round to zero."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _vector(x, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {x.shape}")
    return x


def next_token_bars(probs, labels: list[str], ranks: list[int], look: Look, chosen: int | None = None,
                    title: str = "") -> go.Figure:
    """Horizontal bars of p(token | prefix, source), most likely on top, the chosen token in red."""
    probs = _vector(probs, "probs")
    if not (len(probs) == len(labels) == len(ranks)):
        raise ValueError(f"{len(probs)} probabilities, {len(labels)} labels and {len(ranks)} ranks differ in length")
    if len(probs) == 0:
        raise ValueError("no candidates to draw")
    if np.any(probs < 0) or np.any(probs > 1 + 1e-6):
        raise ValueError("probabilities must lie in [0, 1]")
    names = [f"#{r}  {lab}" for r, lab in zip(ranks, plotly_text(labels))]
    colors = [CHOSEN_COLOR if i == chosen else OTHER_COLOR for i in range(len(probs))]
    bars = go.Bar(x=probs, y=names, orientation="h", marker_color=colors, text=[f"{p:.3f}" for p in probs],
                  textposition="outside", constraintext="none", cliponaxis=False, textfont=look.scale.font("cell"),
                  hovertemplate="%{y}<br>p = %{x:.5f}<extra></extra>")
    # built in one go, as every figure here (see style.token_axes): update_* calls cost more than the figure
    return go.Figure(bars, layout=typeset(dict(
        xaxis=dict(title=dict(text=look.words("decoding.col.probability")), range=[0, 1.12],
                   tickvals=[0, 0.25, 0.5, 0.75, 1]),
        yaxis=dict(autorange="reversed", type="category", automargin=True, tickfont=look.scale.font("tick")),
        title=dict(text=title), height=max(300, 90 + 34 * len(probs)),
        margin=dict(l=10, r=30, t=60, b=10), showlegend=False), look.scale))


def heads_row_heatmap(rows, key_labels: list[str], look: Look, title: str = "",
                      width_px: float | None = None) -> go.Figure:
    """One decoding step's attention in every head: [H, K] -> heads as rows, the decoder's input so far as
    columns, fixed 0-1 scale. width_px: about how wide it is drawn (half the page in one of two columns), for
    its cell numbers to show only where they fit."""
    rows = np.asarray(rows, dtype=float)
    if rows.ndim != 2:
        raise ValueError(f"expected [head, key], got shape {rows.shape}")
    heads = [look.words("ui.head_n", h=h) for h in range(rows.shape[0])]
    fig = attention_heatmap(rows, heads, key_labels, look, title=title, width_px=width_px)
    # plain assignments: half the cost of update_xaxes/update_yaxes/update_layout
    fig.layout.xaxis.title.text, fig.layout.yaxis.title.text = look.words("decoding.self.x"), ""
    fig.layout.height = int(max(260, 150 + max(34, 1.9 * look.scale.tick) * len(heads)))
    return fig


CROSS_HEAD_PX = 140                  # a head's panel of bars; the average's is 1.4 times as tall
CROSS_MARGIN = {"t": 80, "b": 10}


def cross_tokens(type_scale: TypeScale = NORMAL) -> int:
    """How many source tokens `cross_attention_multiples`' average labels across the page: slanted, or upright on a
    phone (slanted, 10 of a 9-word sentence's 12 fitted its column)."""
    return keys_that_fit(type_scale.page_px, type_scale, em=UPRIGHT_EM if type_scale.narrow else SLANTED_EM)


def cross_attention_multiples(rows, src_labels: list[str], look: Look, title: str = "", max_cols: int = 4) -> go.Figure:
    """The average over heads full width (every source label readable), then one small panel per head."""
    rows = np.asarray(rows, dtype=float)
    if rows.ndim != 2 or rows.shape[1] != len(src_labels):
        raise ValueError(f"expected [head, {len(src_labels)} source tokens], got shape {rows.shape}")
    src_labels = plotly_text(src_labels)
    n_heads = rows.shape[0]
    n_cols = min(max_cols, n_heads)
    head_rows = -(-n_heads // n_cols)
    specs = [[{"colspan": n_cols}] + [None] * (n_cols - 1)] + [[{}] * n_cols for _ in range(head_rows)]
    # the heads' panels label their bars while the labels fit a panel apart (12 at presenter size ran into one
    # another); else the average's labels carry the order the heads repeat
    small_labels = labels_that_fit(look.scale.page_px / n_cols - 40, look.scale, SLANTED_EM) >= len(src_labels)
    # between two rows: the slanted source labels under the upper one and the panel titles of the next (a fixed
    # 130 px put a 40-word sentence's presenter-size labels over the heads' titles)
    longest = max((look.scale.text_px(label, "tick") for label in src_labels), default=0)
    gap_px = 0.71 * (longest + look.scale.tick) + 12 + 1.6 * look.scale.text
    plot_px = CROSS_HEAD_PX * (1.4 + head_rows) + gap_px * head_rows
    height = int(plot_px + CROSS_MARGIN["t"] + CROSS_MARGIN["b"])
    average_name, head_names = look.words("decoding.average"), [look.words("ui.head_n", h=h) for h in range(n_heads)]
    layout = subplot_layout([look.words("ui.head_mean")] + head_names, rows=1 + head_rows,
                            cols=n_cols, specs=specs, shared_yaxes=True, row_heights=[1.4] + [1] * head_rows,
                            horizontal_spacing=0.03, vertical_spacing=gap_px / plot_px)
    mean = rows.mean(0)                                                              # [S]
    bars = [go.Bar(x=src_labels, y=mean, marker_color=AVERAGE_COLOR, name=average_name,
                   text=[f"{v:.2f}" for v in mean] if len(src_labels) <= 24 else None,
                   textposition="outside", constraintext="none", cliponaxis=False, textfont=look.scale.font("cell"), **subplot_axes(0),
                   hovertemplate=f"{average_name}<br>%{{x}}: %{{y:.3f}}<extra></extra>")]
    bars += [go.Bar(x=src_labels, y=rows[h], marker_color=LINE_COLORS[0], name=head_names[h],
                    **subplot_axes(1 + h),
                    hovertemplate=f"{head_names[h]}<br>%{{x}}: %{{y:.3f}}<extra></extra>")
             for h in range(n_heads)]
    update_axes(layout, "y", range=[0, 1.15], tickvals=[0, 0.5, 1])
    # every label named (tickvals): plotly's own spacing drew every second source token under the small panels
    update_axes(layout, "x", type="category", tickangle=-60, tickfont=look.scale.font("tick"), showticklabels=small_labels,
                tickvals=src_labels)
    layout["xaxis"].update(tickfont=look.scale.font("tick"), tickangle=-90 if look.scale.narrow else -45,
                           showticklabels=True)
    layout.update(title=dict(text=title), showlegend=False, height=height, margin=dict(l=10, r=10, **CROSS_MARGIN))
    return go.Figure(bars, layout=typeset(layout, look.scale))


def alignment_heatmap(weights, out_labels: list[str], src_labels: list[str], look: Look, step: int | None = None,
                      title: str = "") -> go.Figure:
    """Source-target alignment: row t = where step t looked in the source while producing token t."""
    fig = attention_heatmap(weights, out_labels, src_labels, look, title=title, highlight_row=step)
    fig.layout.xaxis.title.text = look.words("decoding.alignment.x")
    fig.layout.yaxis.title.text = look.words("decoding.alignment.y")
    return fig


def bar_numbers_fit(numbers: list[str], slot_px: float, type_scale: TypeScale = NORMAL) -> bool:
    """Whether numbers written on upright bars `slot_px` apart stay apart at the cell size (two near-zero
    log-probabilities side by side ran together into "0.000.000.00")."""
    return all(type_scale.text_px(n, "cell") + 4 <= slot_px for n in numbers)


def logprob_comparison(series: list[tuple[str, np.ndarray, list[str], np.ndarray]], look: Look, title: str = "",
                       width_px: float | None = None) -> go.Figure:
    """Per-token log-probabilities of several outputs side by side; each panel's title gives the sum.
    series: (name, log-probabilities, token labels, probabilities for the hover) per output. A panel writes its
    numbers on the bars only where they fit a bar's slot of a figure about width_px wide (default: the scale's
    page width); hover always has them."""
    if not series:
        raise ValueError("nothing to compare")
    for name, lp, labels, _ in series:
        if len(_vector(lp, name)) != len(labels):
            raise ValueError(f"{name}: {len(lp)} log-probabilities for {len(labels)} tokens")
    low = min(float(np.min(lp)) if len(lp) else 0.0 for _, lp, _, _ in series)
    layout = subplot_layout([f"{name}: Σ log p = {_signed(np.sum(lp))}" for name, lp, _, _ in series], rows=1,
                            cols=len(series), shared_yaxes=True, horizontal_spacing=0.06)
    bars = []
    panel_px = ((width_px or look.scale.page_px) - 80) / len(series)
    for i, (name, lp, labels, probs) in enumerate(series):
        lp = np.asarray(lp, dtype=float)
        numbers = [_signed(v) for v in lp]
        bars.append(go.Bar(x=plotly_text(labels), y=lp, marker_color=LINE_COLORS[i % len(LINE_COLORS)], name=name,
                           customdata=np.asarray(probs, dtype=float),
                           text=numbers if bar_numbers_fit(numbers, panel_px / max(len(lp), 1), look.scale) else None,
                           textposition="outside", constraintext="none", cliponaxis=False, textfont=look.scale.font("cell"), **subplot_axes(i),
                           hovertemplate="%{x}<br>log p = %{y:.3f}<br>p = %{customdata:.3f}<extra></extra>"))
    layout["yaxis"].update(range=[min(low * 1.15, -0.5), 0.3], title=dict(text=look.words("decoding.lp.y")))
    update_axes(layout, "x", type="category", tickangle=-45, automargin=True, tickfont=look.scale.font("tick"))
    layout.update(title=dict(text=title), showlegend=False, height=420,
                  margin=dict(l=10, r=10, t=90, b=10))
    return go.Figure(bars, layout=typeset(layout, look.scale))


def confidence_bars(probs, labels: list[str], look: Look, step: int | None = None, title: str = "") -> go.Figure:
    """p(chosen token) at every step, the current step outlined: how sure the model was as it went."""
    probs = _vector(probs, "probs")
    if len(probs) != len(labels):
        raise ValueError(f"{len(probs)} probabilities for {len(labels)} tokens")
    colors = [CHOSEN_COLOR if i == step else LINE_COLORS[0] for i in range(len(probs))]
    bars = go.Bar(x=plotly_text(labels), y=probs, marker_color=colors, text=[f"{p:.2f}" for p in probs],
                  textposition="outside", constraintext="none", cliponaxis=False, textfont=look.scale.font("cell"),
                  hovertemplate="%{x}<br>p = %{y:.4f}<extra></extra>")
    return go.Figure(bars, layout=typeset(dict(
        xaxis=dict(type="category", tickangle=-45, automargin=True, tickfont=look.scale.font("tick")),
        yaxis=dict(title=dict(text=look.words("fig.tour.p_chosen")), range=[0, 1.15], tickvals=[0, 0.5, 1]),
        title=dict(text=title), height=360, margin=dict(l=10, r=10, t=60, b=10)), look.scale))


TF_LOSS_SHARE = 0.3            # of a teacher-forcing picture's width: the bars of each row's loss
PHONE_LOSS_SHARE = 0.2         # the same on a phone: bars without numbers (hover has them), so the map keeps
                               # the width its 12 input labels need (at 0.3, 6 of a 9-word sentence's were left out)


def loss_share(type_scale: TypeScale = NORMAL) -> float:
    return PHONE_LOSS_SHARE if type_scale.narrow else TF_LOSS_SHARE
TF_ROOM = 130                  # px of a teacher-forcing picture's width that are not its map or bars: row labels


def forcing_labels_fit(n: int, width_px: float, type_scale: TypeScale = NORMAL) -> bool:
    """Whether a teacher-forcing picture width_px wide labels each of its n inputs (upright): in half a page, or
    else drawn the page's whole width (plotly leaves every other label out when they are crowded)."""
    return labels_that_fit((width_px - TF_ROOM) * (1 - loss_share(type_scale) - 0.03), type_scale) >= n


def _rows_and_loss(weights, losses, in_labels: list[str], out_labels: list[str], mask, mask_name: str,
                   loss_title: str, look: Look, title: str) -> go.Figure:
    """Rows = decoder positions: left their attention over the decoder's input (mask grey), right each row's
    -log p of the token it predicts, on one row axis. The two pictures of teacher forcing vs generation."""
    weights = np.asarray(weights, dtype=float)
    losses = _vector(losses, "losses")
    n = len(out_labels)
    if weights.shape != (n, len(in_labels)) or len(losses) != n:
        raise ValueError(f"{weights.shape} weights and {len(losses)} losses for {n} rows x {len(in_labels)} inputs")
    rows, cols = plotly_text(out_labels), plotly_text(in_labels)
    layout = subplot_layout(["", loss_title], rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.03,
                            column_widths=[1 - loss_share(look.scale), loss_share(look.scale)])
    numbers = None if look.scale.narrow else [f"{v:.2f}" for v in losses]
    traces = [go.Heatmap(z=masked_z(weights, mask), x=cols, y=rows, zmin=0, zmax=1, colorscale=ATTENTION_SCALE,
                         showscale=False, hoverongaps=False, xgap=1, ygap=1,
                         hovertemplate="%{y} ← %{x}: %{z:.3f}<extra></extra>"),
              mask_overlay(mask, cols, rows, xgap=1, ygap=1), mask_legend(mask_name),
              go.Bar(x=losses, y=rows, orientation="h", marker_color=CHOSEN_COLOR, text=numbers,
                     textposition="outside", constraintext="none", cliponaxis=False, textfont=look.scale.font("cell"),
                     hovertemplate="%{y}: -log p = %{x:.3f}<extra></extra>", showlegend=False, **subplot_axes(1))]
    update_axes(layout, "y", type="category", autorange="reversed", tickfont=look.scale.font("tick"))
    layout["xaxis"].update(type="category", tickangle=-90, tickfont=look.scale.font("tick"), side="top")
    top = max(float(np.max(losses)) if n else 1.0, 1.0)
    layout["xaxis2"].update(range=[0, top * (1.05 if numbers is None else 1.6)], showticklabels=False, zeroline=True,
                            showgrid=False)
    layout["yaxis"].update(title=dict(text=look.words("fig.tf.predicts")))
    longest = max((look.scale.text_px(label, "tick") for label in cols), default=0)
    plot_px = map_row_px(look.scale) * n
    # a phone: the loss panel's title a line above the inputs' (side by side they ran into one another)
    stacked_notes = 1.3 * look.scale.text if look.scale.narrow else 0
    top_px = int(longest + 2.2 * look.scale.text + 1.6 * look.scale.title + 24 + stacked_notes)
    # the title at the figure's top, the inputs' axis title and upright labels under it
    layout.update(title=dict(text=title, yref="container", y=1.0, yanchor="top", pad=dict(t=8)),
                  height=int(plot_px + top_px + 60),
                  margin=dict(l=10, r=10, t=top_px, b=50), bargap=0.25)
    layout["legend"] = dict(orientation="h", yref="container", y=0.0, yanchor="bottom", xanchor="left", x=0.0)
    # over the inputs' upright labels: what the columns are at the left, the loss panel's title at the right (an axis
    # title centred on the map ran into the loss title in half a page)
    for note in layout.get("annotations", []):
        note.update(y=1.0, yanchor="bottom", yshift=longest + 8 + stacked_notes, x=1.0, xanchor="right")
    layout["annotations"] = [*layout.get("annotations", []),
                             dict(text=look.words("fig.tf.inputs"), xref="paper", x=0.0, xanchor="left", yref="paper",
                                  y=1.0, yanchor="bottom", yshift=longest + 8, showarrow=False)]
    return go.Figure(traces, layout=typeset(layout, look.scale))


def teacher_forced_pass(weights, losses, in_labels: list[str], out_labels: list[str], look: Look,
                        title: str = "") -> go.Figure:
    """Training: one forward pass over the target shifted right. weights [T, T]: the decoder's self-attention
    (heads averaged) of that one pass, the causal mask's cells grey; losses [T]: -log p(y_t), every position's
    loss from the same pass."""
    return _rows_and_loss(weights, losses, in_labels, out_labels, future_mask("decoder", len(out_labels), len(in_labels)),
                          look.words("fig.masked"), look.words("fig.tf.loss"), look, title)


def generation_loop(rows, losses, in_labels: list[str], out_labels: list[str], look: Look,
                    title: str = "") -> go.Figure:
    """Inference: one forward pass per token. rows[t] ([T, T], NaN or anything past t): pass t's newest position's
    self-attention (heads averaged) over the t+1 inputs it has (its own earlier outputs fed back); the rest does not
    exist yet (grey); losses[t]: -log p of the token pass t chose."""
    not_yet = future_mask("decoder", len(out_labels), len(in_labels))
    return _rows_and_loss(np.where(not_yet, 0.0, np.nan_to_num(np.asarray(rows, dtype=float))), losses, in_labels,
                          out_labels, not_yet, look.words("fig.tf.not_yet"), look.words("fig.tf.chosen"), look, title)
