"""Live toy training: train a small Transformer in the app and watch its attention take shape. After a training, its
snapshots are drawn in the browser (viz/elements/browser_view.py, a deck of every snapshot, and of every layer and
head of its two maps): the reader scrubs them and picks the maps' layer and head there, with no script run. None of
these picks is written to the URL: a training lives in one server process, a link cannot bring it back."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from model.capture import schema
from viz.figures.attention import attention_heatmap, model_view
from viz.figures.live_training import training_curves
from viz.core.i18n import catalogue_keys, error_text, t, words
from viz.elements.rnn_view import RNN_SCORE_KEYS, accuracy_chart, model_name
from viz.services.models import model_ids
from viz.services.rnn import train_rnns
from viz.services.traces import get_trace
from viz.services.training import (TASKS, TOY_SIZES, TRAINING_THREADS, LiveRun, make_example, parse_symbols, trace_toy,
                                   train_live, trained_lengths_note, training_slot, untrained_snapshot)
from viz.core import view
from viz.core.text import attention_labels, plain, position_labels
from viz.elements.browser_view import SNAPSHOT_PICK, browser_view
from viz.elements.ui import explained, look, matrix_frame, plotly_config, safe_filename, show_figure, type_scale
from viz.figures import browser_view as payloads
from viz.figures.browser_view import template_spec
from viz.figures.style import Look, Words

OWN = view.Own("viz.pages.training")  # this module's own session values
TRAIN_RUNNING = OWN.value("train-running")
TRAIN_REQUESTED = OWN.value("train-requested")
TRAIN_RESULT = OWN.value("train-result")
TRAIN_RNN_RESULT = OWN.value("train-rnn-result")  # the last live RNN training's measurements
TRAIN_DECK = OWN.value("train-deck")              # train-deck-view, -head, -csv: the snapshots' browser view
TRAIN_SNAPSHOT = OWN.value("train-snapshot")      # (the training, the pick the browser last told the server)

# task notes: training.task_note.<task>; task names: training.task.<task>; sizes: training.size.<size>
DEFAULT_EXAMPLE = "a b c d e f g"
STEPS_RANGE = (10, 2000)
PRETRAINED = "toy-{task}"            # the shipped model trained on each task (pretrained/), the goal
GOAL_MAX_TOKENS = 64


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
TRAINING_COL_KEYS = catalogue_keys("training.col", "accuracy", "loss", "lr", "seconds")
TRAINING_SIZE_KEYS = catalogue_keys("training.size", "medium", "small", "tiny")
TRAINING_TASK_KEYS = catalogue_keys("training.task", "copy", "reverse", "sort")
TRAINING_TASK_NOTE_KEYS = catalogue_keys("training.task_note", "copy", "reverse", "sort")


def _request_training() -> None:
    """Button callback: runs before the script, so the button is already disabled when training starts."""
    view.put(TRAIN_RUNNING, True)
    view.put(TRAIN_REQUESTED, True)


def lengths_note(symbols: list[str]) -> str | None:
    """model.training.live.trained_lengths_note, in the page's language."""
    if trained_lengths_note(symbols) is None:
        return None
    lo, hi = trained_lengths()
    return t("training.lengths_note", lo=lo, hi=hi, n=len(symbols))


def trained_lengths(longest: int = 80) -> tuple[int, int]:
    """The sequence lengths the toy trainings show (read from trained_lengths_note: the page asks services; 80
    lengths in 0.04 ms, nothing to keep)."""
    inside = [n for n in range(1, longest + 1) if trained_lengths_note(["a"] * n) is None]
    return (inside[0], inside[-1]) if inside else (0, 0)


def head_name(layer: int, head: int | None, words: Words = t) -> str:
    return words("training.head_name", layer=words("ui.layer_n", i=layer),
                 head=words("ui.head_mean") if head is None else words("ui.head_n", h=head))


def controls(running: bool) -> tuple[str, str, int, str]:
    """Task, model size and steps in one row; the example and the Train button in a second."""
    c1, c2, c3 = st.columns([3, 3.4, 3.6])
    task = c1.radio(t("training.task"), TASKS, key=view.seeded("train-task", view.read(view.TASK, choices=list(TASKS))),
                    horizontal=True, disabled=running,
                    format_func={k: t(TRAINING_TASK_KEYS[k]) for k in TASKS}.get)
    sizes = list(TOY_SIZES)
    size = c2.radio(t("training.size"), sizes, key=view.seeded("train-size", view.read(view.SIZE, choices=sizes)),
                    horizontal=True, disabled=running, format_func={k: t(TRAINING_SIZE_KEYS[k]) for k in sizes}.get,
                    help=" · ".join(t("training.size.help", size=t(TRAINING_SIZE_KEYS[s]), d=d, heads=h, layers=n)
                                    for s, (d, h, n, _ff) in TOY_SIZES.items()))
    steps = c3.slider(t("training.steps"), *STEPS_RANGE, step=10, disabled=running,
                      key=view.seeded("train-steps", view.read(view.STEPS, default=800, lo=STEPS_RANGE[0],
                                                               hi=STEPS_RANGE[1])))
    c1, c2 = st.columns([5, 1], vertical_alignment="bottom")
    example = c1.text_input(t("training.example"), max_chars=80, disabled=running,
                            key=view.seeded("train-example", view.read(view.EXAMPLE, default=DEFAULT_EXAMPLE)))
    c2.button(t("training.train"), type="primary", on_click=_request_training, disabled=running, key="train-button",
              width="stretch", help=t("training.train.help"))
    view.write_url({view.TASK: task, view.SIZE: size, view.STEPS: steps, view.EXAMPLE: example.strip() or None})
    return task, size, steps, example


def example_symbols(example_text: str) -> list[str]:
    try:
        symbols = parse_symbols(example_text)
    except ValueError as e:
        st.warning(t("training.example.bad", error=plain(error_text(e)), default=DEFAULT_EXAMPLE))
        symbols = parse_symbols(DEFAULT_EXAMPLE)
    note = lengths_note(symbols)
    if note:
        st.caption(note)
    return symbols


def _toy_axes(fig):
    """Cross-attention of a toy task: rows are the answer's tokens, columns the input symbols."""
    fig.layout.xaxis.title.text = t("training.axis.x")     # plain sets: update_*axes parse their arguments
    fig.layout.yaxis.title.text = t("training.axis.y")
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
        title = t("training.before.title", size=t(TRAINING_SIZE_KEYS[size]))
        show_figure(_toy_axes(attention_heatmap(start, tgt, src, look(), title=title, width_px=type_scale().column_px())),
                    f"live-{task}-{size}-step0", matrix_frame(start, tgt, src), key="train-before")
    with c2:
        if goal_id in model_ids():
            trace = get_trace(goal_id, " ".join(symbols), " ".join(example.answer), 1, max_tokens)
            goal = schema.stacked(trace, "cross")[-1].mean(0)                 # last layer, heads averaged
            rows, cols = attention_labels(trace.meta, "cross")
            show_figure(_toy_axes(attention_heatmap(goal, rows, cols, look(),
                                                    title=t("training.goal.title", model=goal_id), width_px=type_scale().column_px())),
                        f"live-{task}-goal", matrix_frame(goal, rows, cols), key="train-goal")
        else:
            st.info(t("training.goal.missing", model=goal_id))
    st.caption(t("training.before.caption", task=t(TRAINING_TASK_KEYS[task]), note=t(TRAINING_TASK_NOTE_KEYS[task])))


# -- the result: the snapshots drawn in the browser (viz/elements/browser_view.py, a deck of every snapshot) --------
# A pick of the deck is a snapshot (step i: the run's i-th, named by its training step) and a layer and head of its
# two maps (or the layer's mean of heads). The part of a step ("3") holds what the layer and head do not change (the
# curve, the grid, the caption), sent once a snapshot; the part of a pick ("3:1:-1") its two maps: the browser takes
# a pick's blocks from its own part, then from its step's (browser_view.js deckPart), and the curve drawn for a step
# serves every layer and head of it. Each made by the builders below (one a picture).
MAPS = ("cross", "encoder")        # the snapshot's two maps: cross-attention, encoder self-attention
MAP_TITLE_KEYS = {"cross": "training.snap.cross", "encoder": "training.snap.encoder"}
CSV_FIGURES = ("curve", *MAPS)     # the pictures with a CSV (the history; a map's matrix); the grid: an image only


def snapshot_matrix(run: LiveRun, snap, which: str, layer: int, head: int | None) -> tuple[np.ndarray, list, list]:
    """One of the snapshot's maps (MAPS) for a layer and head (None: the layer's mean of heads): its weights
    [rows, columns] and their labels (cross-attention's rows: the answer's tokens, predicted; the encoder's: the
    source's)."""
    src = position_labels(run.example.src_tokens)
    rows = position_labels(run.example.tgt_out_tokens) if which == "cross" else src
    weights = getattr(snap, which)[layer]                                    # [H, rows, S]
    return (weights.mean(0) if head is None else weights[head]), rows, src


def snapshot_maps(run: LiveRun, snap, layer: int, head: int | None, page_look: Look) -> dict:
    """The snapshot's two maps, side by side on the page (half its width each)."""
    name = head_name(layer, head, page_look.words)
    figures = {}
    for which in MAPS:
        weights, rows, cols = snapshot_matrix(run, snap, which, layer, head)
        figures[which] = attention_heatmap(weights, rows, cols, page_look, width_px=page_look.scale.column_px(),
                                           title=page_look.words(MAP_TITLE_KEYS[which], step=snap.step, name=name))
    return figures


def snapshot_curve(run: LiveRun, snap, page_look: Look):
    """The training curve, the snapshot's step marked."""
    return training_curves(run.history, page_look, run.steps, page_look.words("training.curve.title"),
                           marker_step=snap.step)


def snapshot_grid(snap, page_look: Look):
    """The snapshot's cross-attention, every layer x head."""
    return model_view(snap.cross, page_look, title=page_look.words("training.grid.title", step=snap.step))


def snapshot_caption(run: LiveRun, snap, words: Words) -> str:
    return words("training.snap.caption", source=" ".join(run.example.symbols), answer=" ".join(run.example.answer),
                 step=snap.step, accuracy=f"{snap.accuracy:.1%}", loss=f"{snap.loss:.3f}")


def snapshot_files(run: LiveRun, snap, layer: int, head: int | None) -> dict[str, str]:
    """Each picture's file name (PNG/SVG, CSV), as the page named them; a map's names its layer and head."""
    at = f"step{snap.step}-L{layer}-{'avg' if head is None else f'H{head}'}"
    return {name: safe_filename(stem) for name, stem in {
        "curve": f"live-{run.task}-{run.size}-curve", "grid": f"live-{run.task}-grid-step{snap.step}",
        "cross": f"live-{run.task}-cross-{at}", "encoder": f"live-{run.task}-encoder-{at}"}.items()}


def history_frame(run: LiveRun, words: Words):
    """The training's history (the curve's CSV): loss, accuracy, learning rate and seconds at every evaluation."""
    return matrix_frame([[r["loss"], r["accuracy"], r["lr"], r["seconds"]] for r in run.history],
                        [str(r["step"]) for r in run.history],
                        [words(TRAINING_COL_KEYS[c]) for c in ("loss", "accuracy", "lr", "seconds")])


def snapshot_numbers(run: LiveRun, index: int, figure: str, layer: int, head: int | None, words: Words):
    """The numbers a picture shows (its CSV): the history (the curve), a map's matrix."""
    if figure == "curve":
        return history_frame(run, words)
    weights, rows, cols = snapshot_matrix(run, run.snapshots[index], figure, layer, head)
    return matrix_frame(weights, rows, cols)


def deck_blocks() -> list[dict]:
    """How the deck is laid out, every snapshot alike (as the page was): the curve, the caption, the grid, the two
    maps side by side, then their layer and head pickers."""
    figure = lambda name: {"type": "figure", "id": name, "csv": name in CSV_FIGURES}        # noqa: E731
    return [figure("curve"), {"type": "text", "id": "caption"}, figure("grid"),
            {"type": "columns", "columns": [[figure("cross")], [figure("encoder")]]},
            {"type": "pickers", "title": t("training.maps.pick")}]


def step_words(run: LiveRun) -> dict:
    """The deck's step row: the snapshots by their training step, ◀ Previous and Next ▶."""
    return {"step": t("training.scrub"), "step_help": "", "previous": t("step.previous"), "next": t("step.next"),
            "step_names": [str(snap.step) for snap in run.snapshots]}


def run_sig(run: LiveRun) -> tuple:
    """What tells this session's trainings apart (a run lives in its session: LiveRun is no key of a shared cache)."""
    return (id(run), run.task, run.size, run.steps, tuple(run.example.symbols), run.history[-1]["seconds"])


def map_layers(run: LiveRun) -> int:
    """The layers the maps' layer picker offers: the decoder's (cross-attention's; the toy models' encoders have as
    many, and the encoder map shows the same layer)."""
    return run.result.model.cfg.n_decoder_layers


def map_picks(run: LiveRun) -> list[tuple[int, int]]:
    """Every layer and head of the maps (payloads.MEAN: the layer's mean of heads, first in each layer)."""
    return payloads.pick_names(map_layers(run), run.result.model.cfg.n_heads)


def snapshot_parts(run: LiveRun, index: int, page_look: Look) -> dict[str, dict]:
    """A snapshot's parts of the deck: its step's (the curve, the grid, the caption) and each layer and head's (the
    two maps)."""
    snap = run.snapshots[index]
    files = snapshot_files(run, snap, 0, None)
    parts = {str(index): payloads.deck_pick(
        {"curve": snapshot_curve(run, snap, page_look), "grid": snapshot_grid(snap, page_look)},
        {name: files[name] for name in ("curve", "grid")}, {"caption": snapshot_caption(run, snap, page_look.words)})}
    for layer, head in map_picks(run):
        files = snapshot_files(run, snap, layer, view.as_head(head))
        parts[f"{index}:{layer}:{head}"] = payloads.deck_pick(
            snapshot_maps(run, snap, layer, view.as_head(head), page_look), {name: files[name] for name in MAPS})
    return parts


def deck_body(run: LiveRun, page_look: Look, modebar: bool, sentence: str) -> payloads.Body:
    """The browser's data for this training and look: every snapshot, and every layer and head of its maps, at once
    (the default run, tiny, 800 steps: 16 snapshots x 3 picks, ~0.2-0.4 s to build, 38 kB gzipped; medium: 16 x 10,
    ~0.6-0.8 s, 142 kB; bench/training_ab.py prints them). Kept for this session (view.session_memo: a training is
    one reader's)."""
    cfg = run.result.model.cfg
    parts = {key: part for index in range(len(run.snapshots)) for key, part in snapshot_parts(run, index, page_look).items()}
    return payloads.encode(payloads.deck(
        parts, deck_blocks(), SNAPSHOT_PICK, {"decoder": map_layers(run)}, template_spec(go.Figure()),
        page_look.words, {"text_px": page_look.scale.text, "sentence": sentence, "whole": True, "modebar": modebar,
                          "url_names": {}}, steps=len(run.snapshots), said=step_words(run), heads=cfg.n_heads,
        mean=True))


def pick_csv(run: LiveRun):
    """The CSV of a picture the browser asked for: the history, or the map's matrix at that snapshot, layer and head
    (the browser's, checked_pick bounding them)."""
    def make(pick: dict) -> dict:
        pick = {**pick, **checked_pick(run, pick)}
        snap = run.snapshots[pick["step"]]
        figure = pick.get("figure") if pick.get("figure") in CSV_FIGURES else "curve"
        frame = snapshot_numbers(run, pick["step"], figure, pick["layer"], view.as_head(pick["head"]), t)
        return {"name": snapshot_files(run, snap, pick["layer"], view.as_head(pick["head"]))[figure] + ".csv",
                "text": frame.to_csv()}
    return make


def checked_pick(run: LiveRun, pick: dict) -> dict:
    """A pick ({step, layer, head}) within the training's snapshots, layers and heads (the mean: payloads.MEAN)."""
    within = lambda value, lo, hi: min(max(value, lo), hi)                                   # noqa: E731
    return {"step": within(pick["step"], 0, len(run.snapshots) - 1),
            "layer": within(pick["layer"], 0, map_layers(run) - 1),
            "head": within(pick["head"], payloads.MEAN, run.result.model.cfg.n_heads - 1)}


def snapshot_pick(run: LiveRun) -> dict:
    """The pick shown: the last the browser told the server of in this training (a reader's pick is told when a run
    they did not cause by it comes back: the language changed, a CSV asked for; browser_view's callbacks write it to
    the URL's step=, layer=, head=, taken out again here: a training lives in this server process, so a link cannot
    bring it back), else the last snapshot, the last layer's mean of heads."""
    told = (view.STEP, view.LAYER, view.HEAD)
    if view.in_url(view.STEP):
        pick = {value.name: view.read(value, [], default=0) for value in told}
        view.put(TRAIN_SNAPSHOT, (run_sig(run), checked_pick(run, pick)))
        view.forget_url(*told)
    kept = view.get(TRAIN_SNAPSHOT)
    if kept and kept[0] == run_sig(run):
        return kept[1]
    return {"step": len(run.snapshots) - 1, "layer": map_layers(run) - 1, "head": payloads.MEAN}


def snapshot_view(run: LiveRun) -> None:
    """The snapshots drawn in the browser: the reader scrubs there and picks the maps' layer and head, with no
    script run."""
    page_look, modebar = look(), plotly_config("")["displayModeBar"]
    sentence = payloads.view_sig("training", (run_sig(run), page_look, modebar))
    body = view.session_memo("train-deck", sentence, lambda: deck_body(run, page_look, modebar, sentence))
    browser_view(TRAIN_DECK, SNAPSHOT_PICK, body, snapshot_pick(run), {"sentence": sentence, "whole": True},
                 csv=pick_csv(run))


def train_now(run: LiveRun) -> None:
    """Train with a live progress bar, curve and attention grid; every update is a Streamlit call, so
    leaving the page or touching the sidebar stops the run cleanly (the finally below)."""
    waiting = st.empty()
    progress = st.progress(0.0, text=t("training.starting"))
    curve_slot, grid_slot = st.empty(), st.empty()
    history: list[dict] = []

    def on_wait(seconds: int) -> None:
        waiting.info(t("training.waiting", seconds=seconds))

    def on_progress(record: dict, snap) -> None:
        history.append(record)
        progress.progress(record["step"] / run.steps,
                          text=t("training.progress", step=record['step'], steps=run.steps,
                                 loss=f"{record['loss']:.3f}", accuracy=f"{record['accuracy']:.1%}",
                                 seconds=f"{record['seconds']:.0f}"))
        curve_slot.plotly_chart(training_curves(history, look(), run.steps, t("training.curve.live")),
                                key=f"live-curve-{record['step']}")
        grid_slot.plotly_chart(model_view(snap.cross, look(), title=t("training.grid.title", step=record['step'])),
                               key=f"live-grid-{record['step']}")

    with training_slot(on_wait):
        waiting.empty()
        train_live(run, on_progress)


def show_result(run: LiveRun) -> None:
    """The training's result, then its snapshots (the browser's deck: the curve first, the two maps and their layer
    and head pickers last)."""
    final = run.history[-1]
    st.markdown(t("training.result", task=t(TRAINING_TASK_KEYS[run.task]), size=t(TRAINING_SIZE_KEYS[run.size]),
                  steps=run.steps, params=f"{run.result.model.num_parameters():,}", seconds=f"{final['seconds']:.1f}",
                  accuracy=f"{final['accuracy']:.1%}", loss=f"{final['loss']:.4f}"))
    snapshot_view(run)


def try_model(run: LiveRun) -> None:
    """The trained model on a typed input: its greedy output and final cross-attention."""
    st.subheader(t("training.try"))
    mine = st.text_input(t("training.try.input"), " ".join(run.example.symbols), max_chars=80, key="train-try")
    try:
        symbols = parse_symbols(mine)
    except ValueError as e:
        st.warning(t("training.try.bad", error=plain(error_text(e))))
        return
    trace = trace_toy(run, " ".join(symbols))
    expected = " ".join(make_example(run.task, symbols).answer)
    got = trace.meta["translation"]
    st.text(t("training.try.text", input=' '.join(symbols), output=got or t("training.empty_output"),
              expected=expected))
    if got == expected:
        st.success(t("training.try.right"))
    else:
        st.error(t("training.try.wrong"))
    note = lengths_note(symbols)
    if note:
        st.caption(note)
    rows, cols = attention_labels(trace.meta, "cross")
    last = schema.n_layers(run.result.model.cfg, "cross") - 1
    weights = trace[schema.pattern_name("cross", last)].mean(0)
    fig = attention_heatmap(weights, rows, cols, look(), title=t("training.try.title", layer=last), width_px=type_scale().page_px * 0.6)
    with st.columns([3, 2])[0]:   # a toy matrix is small: keep its cells square-ish
        show_figure(fig, f"live-{run.task}-try", matrix_frame(weights, rows, cols), key="train-try-fig")
        st.caption(t("training.try.caption"))


def explain() -> None:
    st.caption(t("training.cpu", threads=TRAINING_THREADS))
    with explained(t("training.what.title")):
        st.markdown(t("training.what.text"))
        st.latex(r"\mathcal{L}=-\frac{1}{T}\sum_{t=1}^{T}\log p_\theta(y_t\mid y_{<t},x),\qquad "
                 r"\theta\leftarrow\theta-\eta_t\,\mathrm{Adam}(\nabla_\theta\mathcal{L})")


# -- before the Transformer: train the RNNs live (viz/elements/rnn_view.py draws their accuracy) -----------------------
RNN_STEPS = (50, 3000, 600)               # slider: least, most, default


def rnn_live_training(task: str) -> None:
    """The training page's section: train the RNN without attention and one with it on the page's task, then
    their accuracy by input length (the bottleneck, measured on this machine a minute ago)."""
    st.subheader(t("training.rnn.title"))
    c1, c2, c3 = st.columns([3.2, 3, 1.8], vertical_alignment="bottom")
    scores = list(RNN_SCORE_KEYS)
    score = c1.radio(t("rnn.score"), scores, horizontal=True, key="train-rnn-score",
                     format_func={s: t(RNN_SCORE_KEYS[s]) for s in RNN_SCORE_KEYS}.get)
    steps = c2.slider(t("training.steps"), *RNN_STEPS, step=50, key="train-rnn-steps")
    if c3.button(t("training.rnn.train"), key="train-rnn-button", width="stretch"):
        order = ["none", score]
        waiting, progress = st.empty(), st.progress(0.0, text=t("training.starting"))

        def on_progress(attention: str, record: dict) -> None:
            done = (order.index(attention) * steps + record["step"]) / (len(order) * steps)
            progress.progress(done, text=t("training.rnn.progress", model=model_name(attention, words()), step=record["step"],
                                           steps=steps, loss=f"{record['loss']:.3f}",
                                           accuracy=f"{record['accuracy']:.0%}", seconds=f"{record['seconds']:.0f}"))

        result = train_rnns(task, order, steps, on_progress, lambda s: waiting.info(t("training.waiting", seconds=s)))
        view.put(TRAIN_RNN_RESULT, dict(result, task_name=t(TRAINING_TASK_KEYS[task])))
        progress.empty()
    result = view.get(TRAIN_RNN_RESULT)
    if result is None:
        st.caption(t("training.rnn.press"))
        return
    st.plotly_chart(accuracy_chart(result["tables"], result["train_lengths"], look(),
                                   title=t("training.rnn.chart", task=result["task_name"], steps=result["steps"])),
                    key="train-rnn-accuracy")
    times = " · ".join(t("training.rnn.seconds", model=model_name(a, words()), seconds=f"{s:.0f}")
                       for a, s in result["seconds"].items())
    st.caption(t("training.rnn.result", steps=result["steps"], times=times))


def render() -> None:
    st.title(t("training.title"))
    running = bool(view.get(TRAIN_RUNNING))
    task, size, steps, example_text = controls(running)
    symbols = example_symbols(example_text)
    if view.pop(TRAIN_REQUESTED, default=False):
        try:
            run = LiveRun(task, size, steps, make_example(task, symbols))
            train_now(run)
            view.put(TRAIN_RESULT, run)
        finally:
            view.put(TRAIN_RUNNING, False)
        st.rerun()
    elif running:  # a flag left by a run that never reached its finally (e.g. the server restarted)
        view.put(TRAIN_RUNNING, False)
        st.rerun()
    run: LiveRun | None = view.get(TRAIN_RESULT)
    if run is None:
        before_training(task, size, symbols, GOAL_MAX_TOKENS)
        st.info(t("training.press"))
    else:
        show_result(run)
        try_model(run)
    explain()
    rnn_live_training(task)


if __name__ == "__main__":
    render()
