"""Issue 46, item 8: charts planned for a phone's column (viz/figures/style.PHONE, 350 px): every token of a 9-word
sentence (12 tokens) labelled, panels one above the other instead of squeezed side by side, titles and notes in
lines that fit their panel. Pure functions: the figures' JSON, no browser (bench/screen_check.py looks at the pages
in Chromium)."""
import re

import numpy as np
import pandas as pd

from viz.figures import decoding as fdec
from viz.figures import layernorm as fln
from viz.figures import positional as fpos
from viz.figures import step as fstep
from viz.figures import training as ftrain
from viz.figures import zoo as fzoo
from viz.figures.attention import UPRIGHT_EM, attention_heatmap
from viz.figures.style import NORMAL, PHONE, PRESENTER, Look, colorbar, wrapped
from viz.core.i18n import words

EN, ZH = words("en"), words("zh")
# the 9-word sentence's source tokens, as the pages label them
NINE = ["0 <modern>", "1 ▁The", "2 ▁cat", "3 ▁sat", "4 ▁on", "5 ▁the", "6 ▁mat", "7 ▁near", "8 ▁the", "9 ▁door",
        "10 .", "11 </s>"]
RNG = np.random.default_rng(46)
P = RNG.dirichlet(np.ones(12), size=12)


def plain(text: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", line) for line in str(text).split("<br>")]


def test_a_phone_s_colour_bar_is_thin_and_names_itself_along_its_length():
    """'attention weight' over a vertical bar took 110 of a phone column's 350 px; the map then had 167 px for 12
    keys and plotly left out every second label."""
    bar = colorbar("attention weight", PHONE)
    assert bar["thickness"] <= 10 and bar["title"]["side"] == "right" and bar["nticks"] == 2
    assert "side" not in colorbar("attention weight", NORMAL)["title"]          # the projector's bars as they were
    fig = attention_heatmap(P, NINE, NINE, Look(EN, PHONE), title="self-attention", width_px=PHONE.column_px())
    assert fig.data[0].colorbar.thickness <= 10 and list(fig.data[0].x) == [t.replace("<", "&lt;").replace(">", "&gt;")
                                                                            for t in NINE]


def test_a_phone_s_columns_are_the_page_s_width():
    """Streamlit stacks columns on a phone: a map planned for half of 350 px showed 3 of the 12 tokens."""
    assert PHONE.column_px() == PHONE.page_px and NORMAL.column_px() == NORMAL.page_px / 2
    assert PRESENTER.column_px(0.4) == 0.4 * PRESENTER.page_px


def test_scaling_bars_on_a_phone_stand_one_above_the_other_with_every_key_labelled():
    unscaled, scaled = P[0], RNG.dirichlet(np.ones(12))
    fig = fstep.scaling_bars(unscaled, scaled, NINE, 32, Look(EN, PHONE), "why scale").to_plotly_json()
    layout = fig["layout"]
    assert layout["xaxis"]["domain"] == [0.0, 1.0] and layout["xaxis2"]["domain"] == [0.0, 1.0]
    assert layout["yaxis"]["domain"][0] > layout["yaxis2"]["domain"][1]           # two rows
    assert (PHONE.page_px - 60) / len(NINE) >= UPRIGHT_EM * PHONE.tick           # each key its upright label's room
    for note in layout["annotations"]:                                            # panel titles within the column
        assert all(PHONE.text_px(line) <= PHONE.page_px for line in plain(note["text"])), note["text"]
    wide = fstep.scaling_bars(unscaled, scaled, NINE, 32, Look(EN), "why scale").to_plotly_json()["layout"]
    assert wide["xaxis"]["domain"][1] < 0.5                                      # side by side on a projector


def test_layernorm_on_a_phone_labels_all_twelve_tokens_in_stacked_panels():
    assert fln.tokens_that_fit(PHONE) >= len(NINE) and fln.tokens_that_fit(NORMAL) == fln.tokens_that_fit(NORMAL)
    stats = (RNG.normal(size=12), RNG.random(12) + 0.5)
    fig = fln.token_stats_figure(NINE, stats, stats, Look(EN, PHONE), "LayerNorm").to_plotly_json()
    assert fig["layout"]["xaxis"]["domain"] == [0.0, 1.0] and fig["layout"]["xaxis2"]["domain"] == [0.0, 1.0]
    x = RNG.normal(size=(12, 64))
    ln_bn = fln.ln_vs_bn_figure(x, NINE, Look(EN, PHONE), "LN vs BN").to_plotly_json()["layout"]
    assert ln_bn["yaxis"]["domain"][0] > ln_bn["yaxis2"]["domain"][1]
    for note in ln_bn["annotations"]:                                             # "LayerNorm: 12 tokens, each ..."
        assert all(PHONE.text_px(line) <= PHONE.page_px - 20 for line in plain(note["text"])), note["text"]


def test_the_zoo_s_gallery_on_a_phone_gives_each_map_the_column_and_every_key_its_label():
    fig = fzoo.gallery([P, P, P], ["Soft (softmax)", "Hard (one-hot)", "Local (D = 2)"], NINE, NINE, Look(EN, PHONE)).to_plotly_json()["layout"]
    assert fig["xaxis"]["domain"] == [0.0, 1.0] and fig["xaxis3"]["domain"] == [0.0, 1.0]     # one map a row
    assert fig["xaxis"].get("dtick") == 1                                                    # every key named
    projector = fzoo.gallery([P, P, P], ["a", "b", "c"], NINE, NINE, Look(EN)).to_plotly_json()["layout"]
    assert projector["xaxis"]["domain"][1] < 0.4                                             # three a row there


def test_word_order_on_a_phone_stacks_its_three_maps_each_labelling_every_token():
    assert fpos.order_tokens(PHONE) >= len(NINE)
    for lang in (EN, ZH):
        fig = fpos.word_order_figure(P, P.T, NINE, Look(lang, PHONE), "word order").to_plotly_json()["layout"]
        for axis in ("yaxis", "yaxis2", "yaxis3"):
            assert fig[axis]["tickvals"] == [t.replace("<", "&lt;").replace(">", "&gt;") for t in NINE]
        assert fig["yaxis"]["domain"][0] > fig["yaxis2"]["domain"][1] > fig["yaxis3"]["domain"][1] - 1
        assert fig["coloraxis"]["colorbar"].get("orientation") != "h"           # beside the maps, not over titles
        for note in fig["annotations"]:
            assert all(PHONE.text_px(line) <= PHONE.page_px for line in plain(note["text"])), note["text"]


def test_decoding_on_a_phone_labels_the_source_and_keeps_its_two_notes_apart():
    assert fdec.cross_tokens(PHONE) >= len(NINE)
    assert fdec.cross_tokens(NORMAL) == fdec.cross_tokens(NORMAL)
    n = 8
    labels = [f"{i} ▁t{i}" for i in range(n)]
    fig = fdec.teacher_forced_pass(np.tril(np.full((n, n), 1 / n)), RNG.random(n), labels, labels, Look(EN, PHONE), "teacher forcing").to_plotly_json()["layout"]
    shifts = sorted(note["yshift"] for note in fig["annotations"])
    assert shifts[-1] - shifts[0] >= 1.2 * PHONE.text                 # the loss title a line above the inputs'
    assert fig["xaxis"]["domain"][1] >= 0.75                          # the map keeps the width its labels need


def test_run_end_notes_on_a_phone_fit_between_their_lines():
    """The about page's loss chart: 'Fine-tuning from step …' ran over the loss axis's title and over the next
    run's note in a phone's column."""
    steps = np.arange(0, 18_000, 100)
    log = pd.DataFrame({"step": steps, "train_loss": 9 - np.log1p(steps) / 3, "dev_loss": np.nan,
                        "lr": np.where(steps < 8_600, 1e-3, np.where(steps < 15_200, 1e-3, 1e-3))})
    for scale in (PHONE, NORMAL):
        fig = ftrain.mark_run_ends(ftrain.loss_curve(log, Look(EN, scale), "loss"), [8_540, 15_190], Look(EN, scale))
        plot_px = scale.page_px - 90
        notes = sorted(fig.layout.annotations, key=lambda a: a.x)
        spans = []
        for note in notes:
            width = max(scale.text_px(line, "tick" if scale.narrow else "text") for line in plain(note.text))
            x = (note.x - 0) / 17_900 * plot_px
            spans.append((x - width - 6, x - 6) if note.xanchor == "right" else (x + 6, x + width + 6))
        assert spans[0][0] >= -1 and spans[-1][1] <= plot_px + 1, spans            # within the plot
        assert spans[0][1] <= spans[1][0], spans                                      # apart


def test_wrapped_lines_fit_their_room():
    for text in ("Fine-tuning from step 8,541: new data and a new dev set, so the loss jumps up", "位置编码的作用（差异）"):
        assert all(PHONE.text_px(line) <= 100 for line in wrapped(text, PHONE, 100))
