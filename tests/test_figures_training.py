"""About-page builders as pure functions: training log, parameter groups, the paper's cost table."""
import numpy as np
import pandas as pd
import pytest

from viz.figures.style import Look
from viz.figures.training import (clean_train_log, complexity_figure, conv_path_length, layer_costs, loss_curve,
                                  lr_curve, parameter_groups)
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

LOG = pd.DataFrame({"step": [100, 50, 150], "epoch": [1, 1, 2], "train_loss": [4.0, 5.0, 3.5],
                    "dev_loss": ["", "", "3.9"], "lr": [1e-4, 5e-5, 1.5e-4], "tokens_per_s": [900, 800, 950]})


def test_clean_train_log_sorts_and_keeps_empty_dev_loss_as_nan():
    log = clean_train_log(LOG)
    assert list(log["step"]) == [50, 100, 150]
    assert log["dev_loss"].isna().tolist() == [True, True, False]
    assert log["dev_loss"].iloc[2] == pytest.approx(3.9)


def test_clean_train_log_rejects_missing_columns_and_empty_logs():
    with pytest.raises(ValueError, match="dev_loss"):
        clean_train_log(LOG.drop(columns="dev_loss"))
    with pytest.raises(ValueError, match="no rows"):
        clean_train_log(LOG.iloc[:0])


def test_loss_curve_plots_dev_only_where_evaluated():
    fig = loss_curve(clean_train_log(LOG), Look(EN))
    train, dev = fig.data
    assert list(train.x) == [50, 100, 150] and list(train.y) == [5.0, 4.0, 3.5]
    assert list(dev.x) == [150] and list(dev.y) == [pytest.approx(3.9)]


def test_lr_curve_puts_throughput_on_a_second_axis():
    fig = lr_curve(clean_train_log(LOG), Look(EN))
    assert fig.data[0].name == "learning rate" and fig.data[0].yaxis == "y"
    assert fig.data[1].name == "tokens / s" and fig.data[1].yaxis == "y2"


def test_parameter_groups_sums_each_part():
    named = [("src_embed.token.weight", 100), ("encoder.layers.0.ff.w1.weight", 40), ("encoder.x", 2),
             ("decoder.layers.0.w", 50), ("generator.proj.bias", 8)]
    table = parameter_groups(named)
    assert table.loc["embeddings", "parameters"] == 100
    assert table.loc["encoder", "parameters"] == 42
    assert table.loc["total", "parameters"] == 200
    assert table.loc["decoder", "share"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="no known part"):
        parameter_groups([("mystery.weight", 3)])


def test_layer_costs_match_the_papers_formulas():
    table = layer_costs(n=10, d=64, k=3)
    ops = table["operations"]
    assert ops["attention"] == 10 * 10 * 64
    assert ops["recurrent"] == 10 * 64 * 64
    assert ops["conv"] == 3 * 10 * 64 * 64
    assert table.loc["recurrent", "steps"] == 10
    assert table.loc["attention", "path_length"] == 1
    assert table.loc["conv", "path_length"] == 3        # 3**2 = 9 < 10 <= 27
    assert table.loc["attention", "complexity"] == "O(n²·d)"
    with pytest.raises(ValueError, match="need n >= 1"):
        layer_costs(0, 64)


def test_conv_path_length_is_exact_at_powers_of_k():
    assert [conv_path_length(n, 3) for n in (1, 3, 4, 9, 10, 27, 28)] == [1, 1, 2, 2, 3, 3, 4]


def test_complexity_figure_marks_the_users_n_and_crosses_at_n_equals_d():
    fig = complexity_figure(12, 64, Look(EN))
    attn, rnn = fig.data[0], fig.data[2]
    x = np.asarray(attn.x)
    assert x.min() == 1 and x.max() >= 128
    cheaper = np.asarray(attn.y) < np.asarray(rnn.y)
    assert cheaper[x < 64].all() and not cheaper[x >= 64].any()     # n²d < nd² exactly when n < d
    assert any(s.x0 == 12 for s in fig.layout.shapes)


@pytest.mark.parametrize("n, d", [(12, 64), (9, 256), (300, 256)])
def test_complexity_marks_sit_inside_the_log_axis(n, d):
    """On a log axis plotly reads an annotation's x and the axis range as log10(x), a shape's x as x: the
    labels at plain x = 256 sat at 10^256 and stretched the About page's axis to 10^261. Lines at n and d,
    labels at their log10, all within the curves' range."""
    fig = complexity_figure(n, d, Look(EN))
    lo, hi = fig.layout.xaxis.range
    x = np.asarray(fig.data[0].x)
    assert (lo, hi) == (pytest.approx(np.log10(x.min())), pytest.approx(np.log10(x.max())))
    assert sorted(s.x0 for s in fig.layout.shapes) == sorted({n, d}) and all(s.x0 == s.x1 for s in fig.layout.shapes)
    assert sorted(a.x for a in fig.layout.annotations) == pytest.approx(sorted(np.log10([n, d])))
    assert all(10 ** lo <= s.x0 <= 10 ** hi for s in fig.layout.shapes)
    assert all(lo <= a.x <= hi for a in fig.layout.annotations)


def test_axes_read_plainly_on_a_projector():
    """Learning rates as 2e-4 (plotly's SI default wrote "200µ"), throughput with round ticks of its own
    (synced to the left axis it showed 260 / 1640 / 3020), the cost chart's log axis at powers of ten only,
    and its line labels beside their lines rather than on them."""
    log = clean_train_log(pd.DataFrame({"step": [50, 100, 150], "epoch": [1, 1, 2], "train_loss": [5.0, 4.0, 3.5],
                                        "dev_loss": [np.nan, 4.2, np.nan], "lr": [1e-4, 2e-4, 1.9e-4],
                                        "tokens_per_s": [1200, 4400, 4300]}))
    layout = lr_curve(log, Look(EN)).layout
    assert layout.yaxis.exponentformat == "e" and layout.yaxis2.tickmode == "auto"
    cost = complexity_figure(8, 256, Look(EN)).layout
    assert cost.xaxis.dtick == 1
    assert [a.xshift for a in cost.annotations] == [6, -6]


def test_the_fine_tuning_is_marked_where_the_loss_jumps():
    """Tour step 11: en-es's loss jumps at ~8.5k steps, where the Bible model's fine-tuning on both kinds of Spanish
    began (new data, a new dev set: pretrained/en-es/README.md), at ~15.2k, where the learner's fine-tuning began, and
    where later runs went on from the one before; nothing said so. Each run's end is found in the log (the learning
    rate warming up again, from a higher or a lower rate), marked with a dashed line, named in a note, and the lines
    break there. Lines too close for a note each share one (five notes ran into one another)."""
    from pathlib import Path
    from model import load_checkpoint, trace_sentence
    from viz.figures.training import run_ends
    from viz.core.i18n import words
    from viz.figures.style import NORMAL, PRESENTER
    from viz.tour.pictures import training_figure
    folder = Path(__file__).resolve().parents[1] / "pretrained" / "en-es"
    log = clean_train_log(pd.read_csv(folder / "train_log.csv"))
    ends = [8540, 15190, 17473, 18608, 21658]      # the card's steps 2, 3 and 4, and runs 4 and 5 of step 3 and call 2 of 4
    assert run_ends(log) == ends
    resumed = pd.DataFrame({"step": [1, 2, 3], "epoch": 1, "train_loss": [3.0, 2.0, 1.0], "dev_loss": np.nan,
                            "lr": [1e-3, 9e-4, 8e-4], "tokens_per_s": 1})
    assert run_ends(resumed) == []
    warming = resumed.assign(step=[50, 100, 150], lr=[5e-5, 1e-4, 1.5e-4])          # a warmup doubles at most
    assert run_ends(warming) == []
    higher = resumed.assign(step=[50, 100, 150], lr=[1e-5, 9e-6, 7.5e-5])           # a new run's warmup to a higher peak
    assert run_ends(higher) == [100]
    trace = trace_sentence(load_checkpoint(folder), "<modern> The house.")
    for lang in ("en", "zh"):
        for scale in (NORMAL, PRESENTER):
            fig = training_figure(trace, folder, Look(words(lang), scale))
            notes = " ".join(a.text.replace("<br>", " ") for a in fig.layout.annotations if a.text)
            assert all(notes.count(f"{end + 1:,}") == 1 for end in ends), notes
            assert [s.x0 for s in fig.layout.shapes if s.line.dash == "dash"] == [end + 0.5 for end in ends]
            for line in fig.data:                                             # train and dev: no line across the jumps
                x, y = list(line.x), list(line.y)
                assert all(y[x.index(end + 0.5)] is None for end in ends) and x == sorted(x)


def test_the_tours_loss_curve_reads_the_log_as_the_about_page_does(tmp_path):
    """The tour and the lesson read train_log.csv through the one reader of a model folder's files
    (model/io/models.model_file_text): a log linked from outside the folder, or over its size limit, is not drawn."""
    import os
    from types import SimpleNamespace
    from model.io.models import MODEL_FILE_LIMITS
    from viz.tour.pictures import training_figure
    log = "step,epoch,train_loss,dev_loss,lr,tokens_per_s\n1,1,3.0,,0.001,1\n2,1,2.0,2.5,0.001,1\n"
    trace = SimpleNamespace(meta={"model_id": "m"})                     # the figure reads the model's name only
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "train_log.csv").write_text(log)
    assert training_figure(trace, tmp_path / "own", Look(words("en"))) is not None
    (tmp_path / "outside.csv").write_text(log)
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "train_log.csv").symlink_to(tmp_path / "outside.csv")
    assert training_figure(trace, tmp_path / "linked", Look(words("en"))) is None
    (tmp_path / "big").mkdir()
    with open(tmp_path / "big" / "train_log.csv", "w") as f:
        f.write(log)
        f.truncate(MODEL_FILE_LIMITS["train_log.csv"] + 1)
    assert os.path.getsize(tmp_path / "big" / "train_log.csv") > MODEL_FILE_LIMITS["train_log.csv"]
    assert training_figure(trace, tmp_path / "big", Look(words("en"))) is None
