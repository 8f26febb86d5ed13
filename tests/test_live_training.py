"""Live toy training without the app: curves figure, example parsing, snapshots, the training slot, threads."""
import threading

import numpy as np
import pytest
import torch

from viz.figures.style import Look
from viz.figures.live_training import training_curves
from model.training.live import (TRAINING_SLOT, LiveRun, eval_interval, make_example, parse_symbols, train_live,
                               training_slot)
from viz.tour.steps import TOUR, lesson_stops
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

HISTORY = [dict(step=50, loss=2.0, accuracy=0.1), dict(step=100, loss=0.5, accuracy=0.75)]


def test_training_curves_loss_left_log_accuracy_right_percent():
    fig = training_curves(HISTORY, Look(EN), total_steps=800, marker_step=100)
    loss, acc = fig.data
    assert list(loss.x) == [50, 100] and list(loss.y) == [2.0, 0.5] and loss.yaxis in (None, "y")
    assert acc.yaxis == "y2" and list(acc.y) == [10.0, 75.0]
    assert fig.layout.yaxis.type == "log" and tuple(fig.layout.xaxis.range) == (0, 800)
    assert any(s.x0 == 100 for s in fig.layout.shapes)
    with pytest.raises(ValueError, match="lacks"):
        training_curves([dict(step=1, loss=1.0)], Look(EN))


def test_parse_symbols_accepts_toy_vocabulary_only():
    assert parse_symbols("  a b  j ") == ["a", "b", "j"]
    for bad, message in [("", "type a few"), ("a b <script>", "only the symbols"), ("a " * 17, "at most 16")]:
        with pytest.raises(ValueError, match=message):
            parse_symbols(bad)


def test_example_is_teacher_forced_on_the_right_answer():
    ex = make_example("reverse", ["a", "b", "c"])
    assert ex.answer == ["c", "b", "a"]
    assert ex.src_tokens == ["a", "b", "c", "</s>"] and ex.tgt_out_tokens == ["c", "b", "a", "</s>"]
    assert ex.tgt_in[0, 0].item() == 1 and ex.tgt_in.shape == ex.src.shape == (1, 4)


def test_eval_interval_gives_a_smooth_curve_at_bounded_cost():
    assert eval_interval(800) == 50 and eval_interval(20) == 5 and eval_interval(2000) == 50


def test_train_live_snapshots_every_eval_and_restores_threads():
    threads = torch.get_num_threads()
    seen = []
    run = train_live(LiveRun("copy", "tiny", 10, make_example("copy", ["a", "b", "c"])),
                     on_progress=lambda record, snap: seen.append((record["step"], torch.get_num_threads())))
    assert [s.step for s in run.snapshots] == [5, 10] and [s for s, _ in seen] == [5, 10]
    assert all(n == 1 for _, n in seen)                    # trains on one thread ...
    assert torch.get_num_threads() == threads              # ... and puts the old count back
    snap = run.snapshots[-1]
    assert snap.cross.shape == (1, 2, 4, 4) and snap.encoder.shape == (1, 2, 4, 4)   # [L,H,T,S], [L,H,S,S]
    np.testing.assert_allclose(snap.encoder.sum(-1), 1.0, atol=1e-5)
    assert run.bundle().model_id == "live-copy-tiny"


def test_training_slot_makes_a_second_trainer_wait():
    waits = []
    assert TRAINING_SLOT.acquire(blocking=False)           # someone else is training
    released = threading.Timer(0.3, TRAINING_SLOT.release)
    released.start()
    with training_slot(on_wait=waits.append, poll_seconds=0.1):
        assert waits and waits[0] == 0                     # told at once, then waited until it was free
    released.join()
    assert TRAINING_SLOT.acquire(blocking=False)           # and gave the slot back
    TRAINING_SLOT.release()


def test_presenter_order_follows_the_tour_and_keeps_other_pages():
    pages = ["home.py", "explorer.py", "step_through.py", "positional.py", "compare.py", "tour.py", "about.py"]
    assert [(stop.page, stop.params.get("kind")) for stop in lesson_stops(pages)] == [
        ("home.py", None), ("tour.py", None), ("step_through.py", "encoder"), ("explorer.py", "encoder"),
        ("positional.py", None), ("explorer.py", "decoder"), ("compare.py", None), ("about.py", None)]


def test_every_tour_link_names_a_page_of_the_app():
    from apptest_utils import url_path
    for step in TOUR:
        assert step.links and step.formula
        for link in step.links:
            assert url_path(link.page)                     # raises if app.py's PAGES lacks the file
