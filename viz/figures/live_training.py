"""Live-training figures: loss (log scale, left axis) and sequence accuracy (right axis) against the step."""
from __future__ import annotations

import plotly.graph_objects as go

from viz.figures.style import LINE_COLORS, Look, typeset, vline


def training_curves(history: list[dict], look: Look, total_steps: int | None = None, title: str = "",
                    marker_step: int | None = None) -> go.Figure:
    """history: records with step, loss, accuracy (0-1). total_steps fixes the x range so a live chart
    does not rescale as it grows; marker_step draws a vertical line (the snapshot being shown)."""
    loss_name, accuracy_name = look.words("training.curve.loss"), look.words("training.curve.accuracy")
    x_title, loss_axis = look.words("training.curve.step"), look.words("training.curve.loss_axis")
    accuracy_axis, hover_step = look.words("training.curve.accuracy_axis"), look.words("training.curve.hover_step")
    hover_loss, hover_accuracy = look.words("training.curve.hover_loss"), look.words("training.curve.hover_accuracy")
    for record in history:
        missing = {"step", "loss", "accuracy"} - set(record)
        if missing:
            raise ValueError(f"history record {record} lacks {sorted(missing)}")
    steps = [r["step"] for r in history]
    lines = [go.Scatter(x=steps, y=[r["loss"] for r in history], name=loss_name, mode="lines+markers",
                        line=dict(color=LINE_COLORS[0], width=3),
                        hovertemplate=f"{hover_step} %{{x}}<br>{hover_loss} %{{y:.4f}}<extra></extra>"),
             go.Scatter(x=steps, y=[100 * r["accuracy"] for r in history], name=accuracy_name,
                        mode="lines+markers", yaxis="y2", line=dict(color=LINE_COLORS[2], width=3),
                        hovertemplate=f"{hover_step} %{{x}}<br>{hover_accuracy} %{{y:.1f}}%<extra></extra>")]
    # built in one go, go.Figure(data, layout), not with update_* calls (see style.token_axes): this chart
    # is redrawn at every evaluation of a live training
    layout = dict(
        title=dict(text=title, y=0.97, yanchor="top"), height=420,
        margin=dict(l=10, r=10, t=90, b=10),
        xaxis=dict(title=dict(text=x_title), range=[0, total_steps] if total_steps else None),
        yaxis=dict(title=dict(text=loss_axis, font=dict(color=LINE_COLORS[0])), type="log", dtick=1),
        yaxis2=dict(title=dict(text=accuracy_axis, font=dict(color=LINE_COLORS[2])), overlaying="y",
                    side="right", range=[0, 101], showgrid=False, tickmode="array",
                    tickvals=[0, 20, 40, 60, 80, 100]),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),   # under the title, not over it
    )
    if marker_step is not None:
        layout["shapes"] = [vline(marker_step, dict(color="#d62728", width=2, dash="dash"))]
    return go.Figure(lines, layout=typeset(layout, look.scale))
