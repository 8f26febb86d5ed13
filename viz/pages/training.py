"""Live toy training: train a small Transformer in the app and watch its attention take shape."""
import streamlit as st

from model.capture import schema
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.live_training import training_curves
from viz.services import (TASKS, TOY_SIZES, TRAINING_THREADS, LiveRun, get_trace, make_example, model_ids,
                          parse_symbols, trace_toy, train_live, trained_lengths_note, training_slot,
                          untrained_snapshot)
from viz.state import qp_choice, qp_int, qp_str, set_query
from viz.text import attention_labels, plain, position_labels
from viz.ui import matrix_frame, show_figure

TASK_NOTES = {
    "reverse": "output the symbols in reverse order: the cross-attention should become an anti-diagonal",
    "sort": "output the symbols sorted: each output step must find the next-smallest symbol wherever it is",
    "copy": "output the symbols unchanged: the cross-attention should become a diagonal",
}
DEFAULT_EXAMPLE = "a b c d e f g"
STEPS_RANGE = (10, 2000)
RUNNING, REQUESTED, RESULT = "train-running", "train-requested", "train-result"
PRETRAINED = "toy-{task}"            # the shipped model trained on each task (pretrained/), the goal
GOAL_MAX_TOKENS = 64


def _request_training() -> None:
    """Button callback: runs before the script, so the button is already disabled when training starts."""
    st.session_state[RUNNING] = True
    st.session_state[REQUESTED] = True


def controls(running: bool) -> tuple[str, str, int, str]:
    """Task, model size and steps in one row; the example and the Train button in a second."""
    c1, c2, c3 = st.columns([3, 3.4, 3.6])
    task = c1.radio("Task", TASKS, index=TASKS.index(qp_choice("task", list(TASKS), "reverse")), key="train-task",
                    horizontal=True, disabled=running)
    sizes = list(TOY_SIZES)
    size = c2.radio("Model size", sizes, index=sizes.index(qp_choice("size", sizes, "small")), key="train-size",
                    horizontal=True, disabled=running,
                    help=" · ".join(f"{s}: d={d}, {h} heads, {n} layers" for s, (d, h, n, _ff) in TOY_SIZES.items()))
    steps = c3.slider("Training steps (batches of 64)", *STEPS_RANGE, qp_int("steps", 800, *STEPS_RANGE), step=10,
                      key="train-steps", disabled=running)
    c1, c2 = st.columns([5, 1], vertical_alignment="bottom")
    example = c1.text_input("Example watched during training (symbols a–j separated by spaces)",
                            qp_str("example", DEFAULT_EXAMPLE, 80), key="train-example", max_chars=80,
                            disabled=running)
    c2.button("Train", type="primary", on_click=_request_training, disabled=running, key="train-button",
              width="stretch",
              help="One training at a time per browser session (and per server: a second one waits).")
    set_query(task=task, size=size, steps=steps, example=example.strip() or None)
    return task, size, steps, example


def example_symbols(example_text: str) -> list[str]:
    try:
        symbols = parse_symbols(example_text)
    except ValueError as e:
        st.warning(f"The example cannot be used: {plain(str(e))}. Using '{DEFAULT_EXAMPLE}' instead.")
        symbols = parse_symbols(DEFAULT_EXAMPLE)
    note = trained_lengths_note(symbols)
    if note:
        st.caption(note)
    return symbols


def _toy_axes(fig):
    """Cross-attention of a toy task: rows are the answer's tokens, columns the input symbols."""
    fig.layout.xaxis.title.text = "input symbol"          # plain sets: update_*axes parse their arguments
    fig.layout.yaxis.title.text = "answer token predicted"
    return fig


def before_training(task: str, size: str, symbols: list[str], max_tokens: int) -> None:
    """The picture before Train is pressed: the example's cross-attention in the model training starts from,
    next to the shipped model already trained on the task (the goal)."""
    example = make_example(task, symbols)
    src, tgt = position_labels(example.src_tokens), position_labels(example.tgt_out_tokens)
    start = untrained_snapshot(task, size, tuple(symbols)).cross
    start = start[-1].mean(0)                                                   # last layer, heads averaged
    goal_id = PRETRAINED.format(task=task)
    c1, c2 = st.columns(2)
    with c1:
        show_figure(_toy_axes(attention_heatmap(start, tgt, src, title=f"Before training: {size} model, step 0")),
                    f"live-{task}-{size}-step0", matrix_frame(start, tgt, src), key="train-before")
    with c2:
        if goal_id in model_ids():
            trace = get_trace(goal_id, " ".join(symbols), " ".join(example.answer), 1, max_tokens)
            goal = schema.stacked(trace, "cross")[-1].mean(0)                 # last layer, heads averaged
            rows, cols = attention_labels(trace.meta, "cross")
            show_figure(_toy_axes(attention_heatmap(goal, rows, cols, title=f"Goal: the shipped {goal_id} model")),
                        f"live-{task}-goal", matrix_frame(goal, rows, cols), key="train-goal")
        else:
            st.info(f"No pretrained {goal_id} model on this server to show the goal.")
    st.caption(f"Cross-attention on the example, last layer, heads averaged: rows are the answer tokens being "
               f"predicted (teacher-forced on the right answer), columns the input symbols. Task **{task}**: "
               f"{TASK_NOTES[task]}. Press **Train** to watch the left map turn into the right one.")


def snapshot_figures(run: LiveRun, snap, layer: int, head: int | None, key: str) -> None:
    src = position_labels(run.example.src_tokens)
    tgt = position_labels(run.example.tgt_out_tokens)
    pick = (lambda a: a[layer].mean(0)) if head is None else (lambda a: a[layer, head])
    name = f"layer {layer}, " + ("average of heads" if head is None else f"head {head}")
    c1, c2 = st.columns(2)
    with c1:
        cross = pick(snap.cross)
        show_figure(attention_heatmap(cross, tgt, src, title=f"Cross-attention at step {snap.step}<br>{name}"),
                    f"live-{run.task}-cross-step{snap.step}", matrix_frame(cross, tgt, src), key=f"{key}-cross")
    with c2:
        enc = pick(snap.encoder)
        show_figure(attention_heatmap(enc, src, src, title=f"Encoder self-attention at step {snap.step}<br>{name}"),
                    f"live-{run.task}-encoder-step{snap.step}", matrix_frame(enc, src, src), key=f"{key}-enc")


def train_now(run: LiveRun) -> None:
    """Train with a live progress bar, curve and attention grid; every update is a Streamlit call, so
    leaving the page or touching the sidebar stops the run cleanly (the finally below)."""
    waiting = st.empty()
    progress = st.progress(0.0, text="Starting…")
    curve_slot, grid_slot = st.empty(), st.empty()
    history: list[dict] = []

    def on_wait(seconds: int) -> None:
        waiting.info(f"Another class member is training a model on this server; waiting for them to finish "
                     f"({seconds} s). Only one training runs at a time so that each one stays fast.")

    def on_progress(record: dict, snap) -> None:
        history.append(record)
        progress.progress(record["step"] / run.steps,
                          text=f"step {record['step']} / {run.steps} · loss {record['loss']:.3f} · accuracy "
                               f"{record['accuracy']:.1%} · {record['seconds']:.0f} s")
        curve_slot.plotly_chart(training_curves(history, run.steps, "Training (live)"),
                                key=f"live-curve-{record['step']}")
        grid_slot.plotly_chart(model_view(snap.cross, title=f"Step {record['step']}: cross-attention, "
                                                            "every layer × head"),
                               key=f"live-grid-{record['step']}")

    with training_slot(on_wait):
        waiting.empty()
        train_live(run, on_progress)


def show_result(run: LiveRun) -> None:
    final = run.history[-1]
    st.markdown(f"**Result: {run.task}, {run.size} model, {run.steps} steps.** "
                f"{run.result.model.num_parameters():,} parameters trained in {final['seconds']:.1f} s; exact-match "
                f"accuracy on 200 held-out sequences: **{final['accuracy']:.1%}** (final training loss "
                f"{final['loss']:.4f}).")
    steps_seen = [s.step for s in run.snapshots]
    chosen = st.select_slider("Scrub through training: attention on the example at step", steps_seen,
                              value=steps_seen[-1], key="train-snapshot") if len(steps_seen) > 1 else steps_seen[0]
    snap = run.snapshots[steps_seen.index(chosen)]
    history_frame = matrix_frame([[r["loss"], r["accuracy"], r["lr"], r["seconds"]] for r in run.history],
                                 [str(r["step"]) for r in run.history], ["loss", "accuracy", "lr", "seconds"])
    show_figure(training_curves(run.history, run.steps, "Loss and accuracy during training", marker_step=snap.step),
                f"live-{run.task}-{run.size}-curve", history_frame, key="train-curve")
    st.caption(f"Example: {' '.join(run.example.symbols)} → {' '.join(run.example.answer)}. Step {snap.step}: "
               f"accuracy {snap.accuracy:.1%}, loss {snap.loss:.3f}. Rows are the target tokens being predicted "
               "(teacher-forced on the right answer), columns the source tokens.")
    show_figure(model_view(snap.cross, title=f"Step {snap.step}: cross-attention, every layer × head"),
                f"live-{run.task}-grid-step{snap.step}", key="train-grid")
    cfg = run.result.model.cfg
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(cfg.n_decoder_layers), index=cfg.n_decoder_layers - 1, key="train-layer",
                         format_func=lambda i: f"layer {i}")
    head = c2.selectbox("Head", [-1] + list(range(cfg.n_heads)), key="train-head",
                        format_func=lambda h: "average of heads" if h == -1 else f"head {h}")
    snapshot_figures(run, snap, layer, None if head == -1 else head, key="train-snap")


def try_model(run: LiveRun) -> None:
    """The trained model on a typed input: its greedy output and final cross-attention."""
    st.subheader("Try the trained model")
    mine = st.text_input("Your input (symbols a–j separated by spaces)", " ".join(run.example.symbols),
                         max_chars=80, key="train-try")
    try:
        symbols = parse_symbols(mine)
    except ValueError as e:
        st.warning(f"The model cannot read this input: {plain(str(e))}.")
        return
    trace = trace_toy(run, " ".join(symbols))
    expected = " ".join(make_example(run.task, symbols).answer)
    got = trace.meta["translation"]
    st.text(f"input:    {' '.join(symbols)}\nmodel:    {got or '(empty output)'}\nexpected: {expected}")
    if got == expected:
        st.success("Right.")
    else:
        st.error("Not quite: the model's output differs from the right answer.")
    note = trained_lengths_note(symbols)
    if note:
        st.caption(note)
    rows, cols = attention_labels(trace.meta, "cross")
    last = schema.n_layers(run.result.model.cfg, "cross") - 1
    weights = trace[schema.pattern_name("cross", last)].mean(0)
    fig = attention_heatmap(weights, rows, cols, title=f"Trained model: cross-attention<br>layer {last}, average "
                                                       "of heads")
    with st.columns([3, 2])[0]:   # a toy matrix is small: keep its cells square-ish
        show_figure(fig, f"live-{run.task}-try", matrix_frame(weights, rows, cols), key="train-try-fig")
        st.caption("Rows: the tokens the model predicts, each fed its own previous output.")


def explain() -> None:
    st.caption(f"Training runs on this server's CPU with {TRAINING_THREADS} thread, one training at a time per "
               "server (a second one waits its turn): 800 steps of the small model take about 40 s on a quiet "
               "server. Changing anything in the sidebar or leaving the page stops a training.")
    with st.expander("What training does"):
        st.markdown(
            "Train a small Transformer here, now, on a toy task, and watch its attention organise itself. Each "
            "step shows the model a batch of 64 random sequences, compares its predictions with the right answer "
            "(teacher forcing) and nudges every weight against the gradient of the cross-entropy loss (Adam, "
            "learning rate warmed up then decayed). Every few steps it is tested on 200 fresh sequences: the "
            "accuracy counts outputs that are exactly right.")
        st.latex(r"\mathcal{L}=-\frac{1}{T}\sum_{t=1}^{T}\log p_\theta(y_t\mid y_{<t},x),\qquad "
                 r"\theta\leftarrow\theta-\eta_t\,\mathrm{Adam}(\nabla_\theta\mathcal{L})")


def render() -> None:
    st.title("Live toy training")
    running = bool(st.session_state.get(RUNNING))
    task, size, steps, example_text = controls(running)
    symbols = example_symbols(example_text)
    if st.session_state.pop(REQUESTED, False):
        try:
            run = LiveRun(task, size, steps, make_example(task, symbols))
            train_now(run)
            st.session_state[RESULT] = run
        finally:
            st.session_state[RUNNING] = False
        st.rerun()
    elif running:  # a flag left by a run that never reached its finally (e.g. the server restarted)
        st.session_state[RUNNING] = False
        st.rerun()
    run: LiveRun | None = st.session_state.get(RESULT)
    if run is None:
        before_training(task, size, symbols, GOAL_MAX_TOKENS)
        st.info("Press **Train** to start. The curve, the attention snapshots and the trained model appear here.")
    else:
        show_result(run)
        try_model(run)
    explain()


if __name__ == "__main__":
    render()
