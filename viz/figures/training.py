"""About-page builders as pure functions: training log, parameter groups, the paper's cost table (Table 1)."""
from __future__ import annotations

import io
from typing import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.figures.style import LINE_COLORS, Look, TypeScale, Words, legend_under_title, typeset, vline, wrapped

LOG_COLUMNS = ["step", "epoch", "train_loss", "dev_loss", "lr", "tokens_per_s"]  # model/training/train.py's train_log.csv
PARTS = {"src_embed": "embeddings", "tgt_embed": "embeddings", "encoder": "encoder", "decoder": "decoder",
         "generator": "generator"}


def read_train_log(text: str) -> pd.DataFrame:
    """train_log.csv's text (as model/io/models.model_file_text reads it) as clean_train_log's numbers; ValueError
    (pandas' parser errors included) when it is not such a log."""
    return clean_train_log(pd.read_csv(io.StringIO(text)))


def clean_train_log(log: pd.DataFrame) -> pd.DataFrame:
    """The trainer's CSV log as numbers, sorted by step; dev loss is NaN where it was not evaluated."""
    missing = [c for c in LOG_COLUMNS if c not in log.columns]
    if missing:
        raise ValueError(f"train_log.csv lacks the column(s) {', '.join(missing)}")
    if log.empty:
        raise ValueError("train_log.csv has no rows yet")
    log = log[LOG_COLUMNS].apply(pd.to_numeric, errors="coerce")
    log = log.dropna(subset=["step", "train_loss"]).sort_values("step").reset_index(drop=True)
    if log.empty:
        raise ValueError("train_log.csv has no rows with a step and a training loss")
    return log


def loss_curve(log: pd.DataFrame, look: Look, title: str = "") -> go.Figure:
    """Training loss at every logged step; dev loss only where it was evaluated."""
    train_name, dev_name = look.words("fig.loss.train"), look.words("fig.loss.dev")
    x_title, y_title = look.words("fig.loss.step"), look.words("fig.loss.loss")
    dev = log.dropna(subset=["dev_loss"])
    lines = [go.Scatter(x=log["step"].tolist(), y=log["train_loss"].tolist(), name=train_name,
                        mode="lines", line=dict(color=LINE_COLORS[0], width=2)),
             go.Scatter(x=dev["step"].tolist(), y=dev["dev_loss"].tolist(), name=dev_name,
                        mode="lines+markers", line=dict(color=LINE_COLORS[1], width=3))]
    # built in one go, go.Figure(data, layout), not with update_* calls (see style.token_axes)
    return go.Figure(lines, layout=typeset(legend_under_title(dict(
        title=dict(text=title), height=420, xaxis=dict(title=dict(text=x_title)),
        yaxis=dict(title=dict(text=y_title)), margin=dict(l=10, r=10, t=60, b=10)),
        [line.name for line in lines], look.scale), look.scale))


def run_ends(log: pd.DataFrame) -> list[int]:
    """The last logged step of each training run that another run went on from (fine-tuning, `train --init-from`:
    a fresh optimizer): there the learning rate falls to under half its last value, its warmup starting again, or,
    after a run that ended at a low rate, jumps to over three times it (a warmup to a higher peak). A resumed run
    (`--resume`) goes on at its rate; 1/sqrt(step) never halves between two log lines, and a warmup at most doubles
    its rate from one log line to the next (its first two: 50 and 100 steps in)."""
    lr, steps = log["lr"].to_numpy(dtype=float), log["step"].to_numpy()
    return [int(steps[i - 1]) for i in range(1, len(lr)) if not 0.5 * lr[i - 1] <= lr[i] <= 3 * lr[i - 1]]


def mark_run_ends(fig: go.Figure, ends: list[int], look: Look) -> go.Figure:
    """A loss curve (loss_curve) with a dashed line after each of `ends` (run_ends), said to its left at the top.
    The loss lines break there: the next run reads new data and measures on a new dev set, so the jump is not the
    model getting worse, and the two sides are no one curve. Lines closer than a note is wide share one note that
    names each of their steps (five runs' notes ran into one another)."""
    steps = [step for line in fig.data for step in line.x]
    low, high = (min(steps), max(steps)) if steps else (0, 1)
    plot_px = (fig.layout.width or look.scale.page_px) - 90               # less the loss axis's numbers and title
    role = "tick" if look.scale.narrow else "text"
    ends, span = sorted(ends), max(high - low, 1)
    for end in ends:
        for line in fig.data:
            x, y = list(line.x), list(line.y)
            cut = next((i for i, step in enumerate(x) if step > end), len(x))
            line.update(x=x[:cut] + [end + 0.5] + x[cut:], y=y[:cut] + [None] + y[cut:])
        fig.add_shape(vline(end + 0.5, dict(color="#555555", width=2, dash="dash")))
    if not ends:
        return fig
    # lines closer than half a one-step note is wide share one note (wrapped into less room, it is a column of a
    # word or two a line)
    groups = run_groups(ends, note_px(run_end_note(ends[:1], look.words), look.scale, role) / 2 / plot_px * span)
    for i, group in enumerate(groups):
        note = run_end_note(group, look.words)
        width_px = note_px(note, look.scale, role)
        # said left of the first line, or right of the last where the left has no room, in lines as wide as the room
        # up to the next group's line holds (a phone's column: one ran over the loss axis's title; two ran into
        # each other)
        before = groups[i - 1][-1] if i else low
        after = groups[i + 1][0] if i + 1 < len(groups) else high
        room_left, room_right = ((group[0] - before) / span * plot_px - 14, (after - group[-1]) / span * plot_px - 14)
        left = room_left >= width_px or room_left >= room_right
        room = room_left if left else room_right
        if width_px > room:
            note = "<br>".join(wrapped(note.replace("<br>", " "), look.scale, room, role))
        fig.add_annotation(x=(group[0] if left else group[-1]) + 0.5, xref="x", y=1, yref="y domain",
                           xanchor="right" if left else "left", yanchor="top", xshift=-6 if left else 6, text=note,
                           showarrow=False, align="right" if left else "left",
                           font=look.scale.font(role, color="#333333"), bgcolor="rgba(255,255,255,0.85)")
    return fig


def run_end_note(group: list[int], words: Words) -> str:
    """What a dashed line says: the step the next run began at, or each of a group's."""
    if len(group) == 1:
        return words("fig.loss.fine_tune", step=f"{group[0] + 1:,}")
    return words("fig.loss.fine_tunes", steps=" / ".join(f"{end + 1:,}" for end in group))


def run_groups(ends: list[int], min_gap: float) -> list[list[int]]:
    """Sorted `ends` in groups: an end less than min_gap steps after the one before joins its group."""
    groups: list[list[int]] = []
    for end in ends:
        if groups and end - groups[-1][-1] < min_gap:
            groups[-1].append(end)
        else:
            groups.append([end])
    return groups


def note_px(note: str, type_scale: TypeScale, role: str) -> float:
    """About how wide a note of <br>-separated lines is drawn: its widest line."""
    return max(type_scale.text_px(line, role) for line in note.split("<br>"))


def lr_curve(log: pd.DataFrame, look: Look) -> go.Figure:
    """Learning rate (left axis) and throughput (right axis) against the step."""
    title, lr_name = look.words("fig.lr.title"), look.words("fig.lr.lr")
    throughput_name, x_title = look.words("fig.lr.throughput"), look.words("fig.lr.step")
    lines = [go.Scatter(x=log["step"].tolist(), y=log["lr"].tolist(), name=lr_name, yaxis="y",
                        line=dict(color=LINE_COLORS[2], width=3)),
             go.Scatter(x=log["step"].tolist(), y=log["tokens_per_s"].tolist(), name=throughput_name,
                        yaxis="y2", line=dict(color=LINE_COLORS[7], width=1))]
    return go.Figure(lines, layout=typeset(legend_under_title(dict(
        title=dict(text=title), height=360, xaxis=dict(title=dict(text=x_title)),
        # 2e-4, not plotly's SI "200µ"; the throughput axis with round ticks of its own, not synced to the left
        yaxis=dict(title=dict(text=lr_name), exponentformat="e", showexponent="all", rangemode="tozero"),
        margin=dict(l=10, r=10, t=60, b=10),
        yaxis2=dict(title=dict(text=throughput_name), overlaying="y", side="right", showgrid=False,
                    tickmode="auto", nticks=5, rangemode="tozero")),
        [line.name for line in lines], look.scale), look.scale))


def parameter_groups(named_counts: Iterable[tuple[str, int]]) -> pd.DataFrame:
    """Parameters per part of the model (embeddings, encoder, decoder, generator) and their share."""
    totals = {part: 0 for part in dict.fromkeys(PARTS.values())}
    for name, count in named_counts:
        part = PARTS.get(name.split(".", 1)[0])
        if part is None:
            raise ValueError(f"parameter {name!r} belongs to no known part ({', '.join(PARTS)})")
        totals[part] += int(count)
    total = sum(totals.values())
    table = pd.DataFrame({"parameters": list(totals.values()) + [total]}, index=list(totals) + ["total"])
    table["share"] = table["parameters"] / max(total, 1)
    return table


def conv_path_length(n: int, k: int) -> int:
    """Layers of (dilated) convolutions with kernel k before any two of n positions meet: ceil(log_k n), >= 1."""
    layers, reach = 1, k
    while reach < n:
        layers, reach = layers + 1, reach * k
    return layers


def layer_costs(n: int, d: int, k: int = 3) -> pd.DataFrame:
    """The paper's Table 1 for one layer, in symbols and in numbers for this n and d."""
    if n < 1 or d < 1 or k < 1:
        raise ValueError(f"need n >= 1, d >= 1 and k >= 1, got n={n}, d={d}, k={k}")
    return pd.DataFrame({   # columns and rows by name, not in words: a page writes its headers in its language
        "complexity": ["O(n²·d)", "O(n·d²)", "O(k·n·d²)"],
        "sequential": ["O(1)", "O(n)", "O(1)"],
        "path": ["O(1)", "O(n)", "O(log_k n)"],
        "operations": [n * n * d, n * d * d, k * n * d * d],
        "steps": [1, n, 1],
        "path_length": [1, n, conv_path_length(n, k)],
    }, index=["attention", "recurrent", "conv"])


def complexity_figure(n: int, d: int, look: Look, k: int = 3, title: str | None = None) -> go.Figure:
    """Operations per layer against sequence length: self-attention n²d is cheaper than n·d² while n < d.

    Both axes are logarithmic. On a log axis plotly reads an annotation's x (and an axis range) as log10 of
    the value, while shapes take the data value itself: labels placed at plain x = 256 would sit at 10^256
    and stretch the axis to 10^261. So the lines are drawn at n and d, their labels at log10(n) and log10(d),
    and the x range is fixed to the curves'."""
    attention_name, conv_name = look.words("fig.complexity.attention"), look.words("fig.complexity.conv")
    recurrent_name, yours_label = look.words("fig.complexity.recurrent"), look.words("fig.complexity.yours")
    crossing_label = look.words("fig.complexity.crossing")
    x_title, y_title = look.words("fig.complexity.x"), look.words("fig.complexity.y")
    x = np.arange(1, max(128, 2 * d, 2 * n) + 1)
    curves = [(attention_name, x * x * d), (conv_name.format(k=k), k * x * d * d), (recurrent_name, x * d * d)]
    lines = [go.Scatter(x=x.tolist(), y=y.astype(float).tolist(), name=name, mode="lines",
                        line=dict(color=color, width=3))
             for (name, y), color in zip(curves, [LINE_COLORS[0], LINE_COLORS[7], LINE_COLORS[1]])]
    # vertical lines at n and at d, with labels at the top and the bottom, as add_vline draws them
    marks = [(n, dict(color="#d62728", width=2, dash="dash"), yours_label.format(n=n), "top"),
             (d, dict(color="#555555", width=1, dash="dot"), crossing_label.format(d=d), "bottom")]   # its label dark enough to read
    shapes = [vline(at, line) for at, line, _, _ in marks]                      # data x
    # the n = d label sits left of its line, where the plot is empty under the curves: near the right edge
    # a label to the right of it would be cut off (longer still in Chinese)
    labels = [dict(xref="x", x=float(np.log10(at)), yref="y domain", y=1 if edge == "top" else 0,
                   xanchor="left" if edge == "top" else "right", xshift=6 if edge == "top" else -6,
                   yanchor=edge, text=text, showarrow=False,
                   bgcolor="rgba(255,255,255,0.8)", font=dict(color=line["color"])) for at, line, text, edge in marks]
    return go.Figure(lines, layout=typeset(legend_under_title(dict(
        title=dict(text=title), height=420, margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=x_title), type="log", range=[0, float(np.log10(x[-1]))], dtick=1),  # 1, 10, 100
        yaxis=dict(title=dict(text=y_title), type="log"), shapes=shapes, annotations=labels),
        [line.name for line in lines], look.scale), look.scale))
