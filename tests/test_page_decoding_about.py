"""Decoding and About pages through AppTest, with the toy models (plus the decoding data they draw)."""
import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from apptest_utils import (browser_says, browser_view, browser_view_sent, browser_view_whole, html_bodies,
                           no_exceptions, run_page, texts)
from model.io.checkpoint import load_checkpoint
from model.inference.decode import greedy
from model.inference.pipeline import encode_text, trace_sentence
from model.analysis.decoding import run_decoding
from viz.core.i18n import catalogue, words
from viz.core.text import position_labels
from viz.figures.browser_view import figure_spec
from viz.figures.decoding import cross_attention_multiples, cross_tokens, next_token_bars
from viz.figures.attention import source_window
from viz.figures.style import NORMAL, Look
from model.analysis.decoding import top_k_view

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "pretrained" / "toy-reverse"


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(TOY, device="cpu")


# -- the data behind the page ------------------------------------------------------------------------------
def test_step_rows_equal_the_teacher_forced_pass_over_the_same_output(toy):
    """Causal mask: step t of autoregressive decoding computes row t of one teacher-forced pass."""
    dec = run_decoding(toy, "a b c d e", "greedy", 1, 128)
    trace = trace_sentence(toy, "a b c d e")               # no target: forced on the model's own greedy output
    assert dec.out_ids == trace.meta["tgt_ids"] and dec.in_tokens == trace.meta["tgt_in_tokens"]
    for layer in range(toy.config.n_decoder_layers):
        cross = trace[f"decoder.layers.{layer}.cross_attn.hook_pattern"]              # [H, T, S]
        np.testing.assert_allclose(dec.cross_rows[:, layer], cross.transpose(1, 0, 2), atol=1e-5)
        self_attn = trace[f"decoder.layers.{layer}.self_attn.hook_pattern"]
        for t, rows in enumerate(dec.self_rows):
            np.testing.assert_allclose(rows[layer], self_attn[:, t, : t + 1], atol=1e-5)
    assert dec.chosen_logprob.sum() == pytest.approx(trace.meta["tgt_logprob"], abs=1e-4)
    assert (dec.chosen_rank == 1).all()                    # greedy always appends the favourite


def test_beam_decoding_lists_hypotheses_best_first(toy):
    dec = run_decoding(toy, "a b c d", "beam", 3, 128)
    scores = [h["normalized"] for h in dec.hypotheses]
    assert len(scores) >= 3 and scores == sorted(scores, reverse=True)
    assert dec.hypotheses[0]["output"] == dec.translation == "d c b a"
    with pytest.raises(ValueError, match="method"):
        run_decoding(toy, "a b c d", "sampling", 1, 128)


# -- the Decoding page ----------------------------------------------------------------------------------------
# The step's pictures are drawn in the browser (issue 44: a deck of every step, viz/figures/browser_view.py); what
# the page sends it:
def deck(at, whole: bool = False) -> tuple[dict, dict]:
    """The decoding view's head (the pick...) and body (every step's figures and words)."""
    return browser_view_sent(browser_view_whole(at, "decoding") if whole else at, "decoding")


def step_part(at, step: int) -> dict:
    return deck(at)[1]["picks"][str(step)]


def block_titles(blocks: list[dict]) -> list[str]:
    found = []
    for block in blocks:
        found += [block["title"]] if "title" in block else []
        for column in block.get("columns", []):
            found += block_titles(column)
    return found


def test_decoding_default_view_opens_where_the_loop_starts(toy):
    """Issue 46, item 3: step 0, <s> alone and the first token (issue 26 opened at the clearest alignment)."""
    at = run_page("decoding.py", model="toy-reverse", text="a b c d")
    no_exceptions(at)
    assert at.radio(key="decoding-method").value == "greedy"
    layer = toy.config.n_decoder_layers - 1
    assert at.selectbox(key="decoding-layer").value == layer
    dec = run_decoding(toy, "a b c d", "greedy", 1, 128)
    step = 0
    head, body = deck(at)
    assert head["pick"] == {"step": step} and at.query_params["step"] == str(step)
    assert list(body["picks"]) == [str(step)] and body["steps"] == dec.n_steps      # a new sentence's first screen
    hyp = greedy(toy.model, encode_text(toy, "a b c d").ids)
    step_text = body["picks"]["0"]["texts"]["step-code"]
    assert f"decoder input : {'  '.join(dec.in_tokens[:step + 1])}\n" in step_text
    assert (f"appends       : {dec.out_tokens[step]}   (p = {np.exp(hyp.step_logprobs[step]):.4f}, rank 1 of 13)"
            in step_text)
    assert "Type a reference translation here" in texts(at)
    # greedy: no beam-size box on the page (a greyed-out "Beam size 4" contradicted the sidebar's 1)
    assert "decoding-beam" not in [n.key for n in at.number_input]
    assert at.number_input(key="beam").value == 1
    # the picture first: the step's candidates first in the view, right under the controls
    assert body["blocks"][0]["columns"][0][0]["id"] == "topk"
    # switching to beam search here also sets the sidebar's beam size (header and other pages follow)
    at.radio(key="decoding-method").set_value("beam").run()
    no_exceptions(at)
    assert at.number_input(key="beam").value == 4 and at.query_params["beam"] == "4"
    assert at.number_input(key="decoding-beam").value == 4
    assert "Beam search hypotheses (beam 4)" in block_titles(deck(at)[1]["blocks"])
    # a different beam size, back to greedy and to beam again: the sidebar follows, the page remembers 3
    at.number_input(key="decoding-beam").set_value(3).run()
    assert at.number_input(key="beam").value == 3
    at.radio(key="decoding-method").set_value("greedy").run()
    no_exceptions(at)
    assert at.number_input(key="beam").value == 1 and "decoding-beam" not in [n.key for n in at.number_input]
    at.radio(key="decoding-method").set_value("beam").run()
    assert at.number_input(key="decoding-beam").value == 3 and at.number_input(key="beam").value == 3


def test_decoding_follows_the_sidebar_beam_size():
    """The page's method is the sidebar's: beam size 1 is greedy, more is beam search of that size."""
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", beam=3)
    no_exceptions(at)
    assert at.radio(key="decoding-method").value == "beam" and at.number_input(key="decoding-beam").value == 3
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", method="beam")     # the sidebar says 1
    no_exceptions(at)
    assert at.radio(key="decoding-method").value == "greedy" and at.number_input(key="beam").value == 1
    at.number_input(key="beam").set_value(2).run()                                    # the sidebar changes
    no_exceptions(at)
    assert at.radio(key="decoding-method").value == "beam" and at.number_input(key="decoding-beam").value == 2


def test_decoding_deep_link_reproduces_the_view():
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", method="beam", beam=3, step=2, layer=0, k=5)
    no_exceptions(at)
    assert at.radio(key="decoding-method").value == "beam"
    assert at.number_input(key="decoding-beam").value == 3
    assert at.number_input(key="beam").value == 3                      # the sidebar agrees
    head, body = deck(at)
    assert head["pick"] == {"step": 2}
    assert at.selectbox(key="decoding-layer").value == 0
    assert at.slider(key="decoding-k").value == 5
    part = body["picks"]["2"]
    assert "decoder input : <s>  d  c\nappends       : b" in part["texts"]["step-code"]
    # counted from 0 like the pictures' labels ("2 b"): the old heading said "output token 3 of 5"
    assert "Step 2 (of steps 0–4): choosing the output token at position 2" in part["texts"]["step-heading"]
    assert "Beam search hypotheses (beam 3)" in block_titles(body["blocks"])
    hypotheses = part["tables"]["hypotheses"]
    assert hypotheses["rows"][0][hypotheses["columns"].index("output")] == "d c b a"
    assert len(part["figures"]["topk"]["data"][0]["y"]) == 5                     # k=5 candidates
    assert not at.warning


def repeated_ngrams(ids: list[int], n: int) -> int:
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return len(grams) - len(set(grams))


def test_decoding_can_block_repeated_ngrams_and_shows_the_models_own_probabilities():
    """en-es loops on a repeated phrase ("El sol, el sol, el sol, ..."): with no_repeat_ngram=3 the search writes no
    3-token group twice, and each step's bars are still the model's own probabilities, so where a token was
    blocked the chosen one is not the model's first choice."""
    bundle = load_checkpoint(ROOT / "pretrained" / "en-es", device="cpu")
    text = "<modern> The sun, the sun, the sun, the sun, the sun."
    free, blocked = (run_decoding(bundle, text, "greedy", 1, 128, n) for n in (0, 3))
    assert repeated_ngrams(free.out_ids, 3) > 0 and repeated_ngrams(blocked.out_ids, 3) == 0
    assert all(rank == 1 for rank in free.chosen_rank) and any(rank > 1 for rank in blocked.chosen_rank)
    beam = run_decoding(bundle, text, "beam", 4, 128, 3)
    assert repeated_ngrams(beam.out_ids, 3) == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_decoding_offers_no_repeats_off_by_default_and_a_link_keeps_it(lang):
    words = catalogue(lang)
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", lang=lang)
    no_exceptions(at)
    toggle = at.toggle(key="decoding-no-repeat")
    assert toggle.value is False and toggle.label == words["decoding.no_repeat"].format(n=3)
    assert "no_repeat" not in at.query_params                          # a class still watches a loop happen
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", lang=lang, no_repeat=3)
    no_exceptions(at)
    assert at.toggle(key="decoding-no-repeat").value is True and at.query_params["no_repeat"] == "3"


def test_decoding_bad_parameters_warn_and_fall_back():
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", method="sampling", step=99, layer=-3, k="x")
    no_exceptions(at)
    warnings = " ".join(w.value for w in at.warning)
    for name in ("method", "step", "layer", "k"):
        assert f"URL parameter {name}=" in warnings
    assert at.radio(key="decoding-method").value == "greedy"
    assert deck(at)[0]["pick"] == {"step": 0}                           # the opening step, as without step=


def test_decoding_empty_sentence_asks_for_one():
    at = run_page("decoding.py", model="toy-reverse", text="")
    no_exceptions(at)
    assert "sentence is empty" in texts(at)
    assert not at.code


def test_decoding_with_reference_compares_teacher_forced_and_generated(toy):
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", target="d b c a")
    no_exceptions(at)
    forced = trace_sentence(toy, "a b c d", target="d b c a")
    own = greedy(toy.model, encode_text(toy, "a b c d").ids)
    caption = texts(at)
    assert f"reference Σ log p = {forced.meta['tgt_logprob']:.2f} and its own output {own.score:.2f}" in caption
    assert "it prefers its own output" in caption


def test_decoding_keeps_a_step_past_a_shorter_output_quietly():
    """Issue 46, item 6: the page's own step= (written at its last run) past a shorter output is clamped without
    a warning about the URL (greedy -> beam at step 10 warned "step='10' is not a whole number from 0 to 8")."""
    at = run_page("decoding.py", model="toy-reverse", text="a b c d e f g h")
    last = deck(at)[1]["steps"] - 1
    browser_says(at, state={"pick": {"step": last}}, where="decoding")     # the browser's step, told the server
    assert at.query_params["step"] == str(last)
    at.text_area(key="text").set_value("a b").run()                   # a shorter output: fewer steps
    no_exceptions(at)
    head, body = deck(at)
    assert body["steps"] - 1 < last and head["pick"] == {"step": body["steps"] - 1}
    assert at.query_params["step"] == str(body["steps"] - 1)
    assert not [w.value for w in at.warning if "URL parameter step=" in w.value]


def test_decoding_sends_every_step_once_as_the_builders_draw_it_then_a_step_rebuilds_nothing(toy):
    """Issue 44: the view asks for the rest after drawing the first step; every step is then in the body, each
    step's pictures the builders' own for that step; a step the browser reports (a teacher's) writes the URL with
    the same body (nothing rebuilt, not resent)."""
    at = run_page("decoding.py", model="toy-reverse", text="a b c d e", step=1, k=4)
    no_exceptions(at)
    head, body = deck(at, whole=True)
    dec = run_decoding(toy, "a b c d e", "greedy", 1, 128)
    layer = toy.config.n_decoder_layers - 1
    assert head["whole"] and list(body["picks"]) == [str(s) for s in range(dec.n_steps)]
    assert body["names"] == ["step"] and body["url_names"] == {"step": "step"} and body["steps"] == dec.n_steps
    look = Look(words("en"), NORMAL)
    src = position_labels(dec.src_tokens)
    for step in range(dec.n_steps):
        figures = body["picks"][str(step)]["figures"]
        assert set(figures) == {"topk", "self", "cross", "confidence", "alignment"}
        ids, probs, ranks, chosen = top_k_view(dec.top_ids[step], dec.top_logprobs[step], 4, dec.out_ids[step],
                                               float(dec.chosen_logprob[step]), int(dec.chosen_rank[step]))
        topk = next_token_bars(probs, toy.tokenizer.token_strings(ids), ranks, look, chosen,
                               title=look.words("decoding.topk.title", step=step, k=4))
        cross = dec.cross_rows[step, layer]
        shown = source_window(cross.mean(0)[None], slice(0, 1), cross_tokens(NORMAL))
        made = cross_attention_multiples(cross[:, shown], src[shown], look,
                                         title=look.words("decoding.cross.title", step=step, layer=layer))
        for name, fig in (("topk", topk), ("cross", made)):
            assert_same_figure(figures[name], figure_spec(fig))
    sent = browser_view(at, "decoding-view").proto.bytes
    browser_says(at, state={"pick": {"step": 3}}, where="decoding")
    no_exceptions(at)
    assert at.query_params["step"] in ("3", ["3"]) and deck(at)[0]["pick"] == {"step": 3}
    assert browser_view(at, "decoding-view").proto.bytes == sent        # the same message: the browser has it


def assert_same_figure(sent, made) -> None:
    """The same figure: every word and setting equal, every float array to float32's precision (the test's own
    decoding run differs from the page's in the last bits)."""
    if isinstance(made, dict) and "bdata" in made:
        np.testing.assert_allclose(plotly_array(sent), plotly_array(made), rtol=1e-5, atol=1e-6)
    elif isinstance(made, dict):
        assert sorted(sent) == sorted(made)
        for key in made:
            assert_same_figure(sent[key], made[key])
    elif isinstance(made, list):
        assert len(sent) == len(made)
        for one, other in zip(sent, made):
            assert_same_figure(one, other)
    elif isinstance(made, float):
        assert sent == pytest.approx(made, rel=1e-5, abs=1e-6)
    else:
        assert sent == made


@pytest.mark.parametrize("figure, numbers", [("cross", 4 + 1), ("topk", 4)])
def test_decoding_a_step_pictures_csv_is_its_numbers(toy, figure, numbers):
    at = run_page("decoding.py", model="toy-reverse", text="a b c d e", k=4)
    browser_says(at, trigger=("csv", {"step": 2, "figure": figure}), where="decoding")
    no_exceptions(at)
    csv = deck(at)[0]["csv"]
    assert csv["name"].endswith(f"-decoding-step2-{figure}{'-L1' if figure == 'cross' else ''}.csv")
    assert len(csv["text"].strip().splitlines()) == 1 + numbers         # a header, a row a head (and the average)
    assert at.query_params["step"] in ("2", ["2"])                      # the step shown


def plotly_array(value) -> np.ndarray:
    """A chart's array as plotly sends it: a list, or numpy's base64 typed array."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float)
    return np.array(value, dtype=float)


def chart_spec(at, key: str) -> dict:
    charts = [c for c in at.get("plotly_chart") if c.proto.id and key in c.proto.id]
    assert charts, f"no chart {key}"
    return json.loads(charts[0].proto.spec)


@pytest.mark.parametrize("target", ["", "d b c a"])
def test_decoding_draws_teacher_forcing_beside_the_loop_at_inference(toy, target):
    """Issue 46, item 1: the one teacher-forced pass (the reference, or the model's own output without one) and its
    every position's loss, beside the inference loop's passes, from the real model."""
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", target=target)
    no_exceptions(at)
    forced = trace_sentence(toy, "a b c d", target=target or None)
    losses = -plotly_array(chart_spec(at, "decoding-tf-pass")["data"][3]["x"])
    assert losses.sum() == pytest.approx(forced.meta["tgt_logprob"], abs=1e-4)
    assert len(losses) == len(forced.meta["tgt_out_tokens"])
    dec = run_decoding(toy, "a b c d", "greedy", 1, 128)
    loop = chart_spec(at, "decoding-tf-loop")["data"]
    np.testing.assert_allclose(-plotly_array(loop[3]["x"]), dec.chosen_logprob, atol=1e-5)
    said = texts(at)
    assert ("your reference" if target else "the model's own output") in said


# -- the About page -------------------------------------------------------------------------------------------------
def test_about_toy_model_says_what_is_missing(toy):
    at = run_page("about.py", model="toy-reverse", text="a b c d")
    no_exceptions(at)
    body = texts(at)
    assert "About the model: `toy-reverse`" in body
    assert "no train_log.csv" in body and "Synthetic data" in body and "reverse" in body
    assert "post-norm" in body and "sinusoidal" in body
    frames = [d.value for d in at.dataframe]
    params = next(f for f in frames if "parameters" in f.columns)
    assert params.loc["total", "parameters"] == toy.model.num_parameters()
    metrics = next(f for f in frames if f.index.name == "metric")
    assert metrics.loc["sequence_accuracy", "value"] == "1.0"
    costs = next(f for f in frames if "complexity per layer" in f.columns)
    n = len(encode_text(toy, "a b c d").ids)
    assert costs.loc["self-attention", f"operations (n={n}, d=64)"] == n * n * 64


def test_about_model_with_training_log_and_card(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-logged")
    (models / "toy-logged" / "train_log.csv").write_text(
        "step,epoch,train_loss,dev_loss,lr,tokens_per_s\n"
        "50,1,5.1000,,0.000100,1200\n100,1,4.2000,4.4000,0.000200,1300\n150,2,3.6000,,0.000190,1250\n")
    (models / "toy-logged" / "README.md").write_text("# Toy card\n\nData: generated. Licence: MIT.\n")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    at = run_page("about.py", model="toy-logged", text="a b")
    no_exceptions(at)
    body = texts(at)
    assert "Toy card" in html_bodies(at) and "Licence: MIT" in html_bodies(at)
    assert "3 logged points up to step 150 (epoch 2); last train loss 3.600, last dev loss 4.400." in body
    charts = at.get("plotly_chart")
    assert len(charts) == 3                                   # loss, learning rate, why attention


def test_about_metrics_are_a_score_table_with_nothing_cut(tmp_path, monkeypatch):
    """metrics.json as `evaluate` writes it: one row per decoding (BLEU, chrF, seconds) in the page's
    language, the sacreBLEU signature said once, long notes as text, never raw JSON in a cell."""
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-scored")
    signature = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    score = lambda bleu, seconds: {"bleu": bleu, "chrf": bleu + 20, "bleu_signature": signature,  # noqa: E731
                                   "chrf_signature": "nrefs:1|nc:6", "seconds": seconds}
    note = "epoch016 of runs/en-es (16 epochs), not averaged: averaging scored lower on 200 pairs"
    (models / "toy-scored" / "metrics.json").write_text(json.dumps(
        {"test_file": "test.tsv", "pairs": 1000, "greedy": score(29.46, 42.3), "beam4": score(30.79, 67.5),
         "baseline_after_5_epochs_greedy": score(19.18, 43.1), "checkpoint": note}))
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    for lang, greedy_name, beam_name in (("en", "greedy", "beam search, beam 4"), ("zh", "贪心搜索", "束搜索，束宽 4")):
        at = run_page("about.py", model="toy-scored", text="a b", lang=lang)
        no_exceptions(at)
        frames = [d.value for d in at.dataframe]
        scores = next(f for f in frames if "BLEU" in f.columns)
        assert list(scores.index) == [greedy_name, beam_name, "baseline after 5 epochs greedy"]
        assert scores.loc[beam_name, "BLEU"] == 30.79 and scores.loc[beam_name, "chrF"] == 50.79
        assert scores.shape[1] == 3                                              # BLEU, chrF, seconds
        cells = " ".join(str(v) for f in frames for v in f.to_numpy().ravel())
        assert "{" not in cells and signature not in cells                      # no JSON, no signature in a cell
        body = texts(at).replace("\\", "").replace("\u2060", "")     # the folder's words are Markdown-escaped
        assert signature in body and note in body and "1000" in body


def test_about_shows_each_test_set_in_its_own_table(tmp_path, monkeypatch):
    """A two-style model's metrics.json: the Bible's verses at the top level, the everyday sets by name;
    each set a table of its own under its words, none of it as raw JSON in a cell."""
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-sets")
    score = lambda bleu: {"bleu": bleu, "chrf": bleu + 20, "bleu_signature": "nrefs:1", "chrf_signature": "nc:6"}  # noqa: E731
    (models / "toy-sets" / "metrics.json").write_text(json.dumps(
        {"test_file": "test.tsv", "pairs": 1000, "beam4": score(30.5),
         "everyday_test": {"test_file": "everyday_test.tsv", "pairs": 1000, "greedy": score(30.0), "beam4": score(31.0)},
         "everyday_sentences": {"test_file": "everyday.tsv", "pairs": 30, "beam4": score(25.0)}}))
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    for lang, heading in (("en", "Everyday English"), ("zh", "日常英语")):
        at = run_page("about.py", model="toy-sets", text="a b", lang=lang)
        no_exceptions(at)
        tables = [d.value for d in at.dataframe if "BLEU" in d.value.columns]
        assert [list(f["BLEU"]) for f in tables] == [[30.5], [30.0, 31.0], [25.0]]
        cells = " ".join(str(v) for d in at.dataframe for v in d.value.to_numpy().ravel())
        assert "{" not in cells
        body = texts(at)
        assert heading in body and "everyday_test.tsv" in body.replace("\\", "") and "30" in body


def test_about_shows_the_chinese_card_to_a_chinese_reader(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-cards")
    (models / "toy-cards" / "README.md").write_text("# Toy card\n\nEnglish words.\n")
    (models / "toy-cards" / "README.zh.md").write_text("# 玩具模型卡\n\n中文的说明。\n")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    english, chinese = (html_bodies(run_page("about.py", model="toy-cards", text="a b", lang=lang))
                        for lang in ("en", "zh"))                 # the card is HTML (viz/core/folder_text.card_html)
    assert "English words." in english and "中文的说明" not in english
    assert "中文的说明" in chinese and "English words." not in chinese


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_about_config_meanings_are_whole(toy, lang):
    """Issue 26.6: the configuration's meanings were cut in a fixed-width data frame ("sinusoi"); they are a
    static table, which wraps, every meaning whole in the page's language."""
    at = run_page("about.py", model="toy-reverse", text="a b", lang=lang)
    no_exceptions(at)
    config = next(tab.value for tab in at.table if len(tab.value) == len(toy.config.to_dict()))
    meanings = set(config.iloc[:, -1])
    assert catalogue(lang)["about.config.pe"] in meanings and catalogue(lang)["about.config.norm_first"] in meanings


@pytest.mark.parametrize("card", ["README.md", "README.zh.md"])
def test_the_shipped_model_cards_show_their_commands_as_written(card):
    """Seen on About (en and zh): the model card's command lines, an indented code block, showed '# &lt;modern>'
    (outside fenced code every '<' is escaped, and a list's indented lines cannot be told from code). The cards
    fence their code; the Chinese card's examples table is in Chinese (its header read 'English', its notes
    '(wrong)', '(keys as in music)')."""
    import html
    import re
    from viz.core.folder_text import card_html
    text = (Path(__file__).resolve().parents[1] / "pretrained" / "en-es" / card).read_text(encoding="utf-8")
    code = [html.unescape(block) for block in re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", card_html(text), re.S)]
    assert any('"Where is the train station?"            # <modern>' in block for block in code)
    if card == "README.zh.md":
        table = [line for line in text.splitlines() if line.startswith("| ") and "`<bible>`" in line]
        assert table and "English" not in table[0]
        for note in re.findall(r"\*[（(][^*]*[)）]\*", text):
            assert re.search(r"[\u4e00-\u9fff]", note), note


def test_about_shows_a_metrics_note_in_the_readers_language(tmp_path, monkeypatch):
    """A metrics.json note may carry its translation as "<name>.<lang>" (the shipped en-es model's checkpoint
    note stayed English on the 中文 page); each reader sees one, never both, and English without one."""
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-noted")
    english = "averaged the last two epochs of the run, which scored higher"
    chinese = "平均了这次训练最后两轮的权重；只用最后一轮时，在前二百节测试经文上的得分低零点三，所以发布的是平均后的权重"
    (models / "toy-noted" / "metrics.json").write_text(json.dumps(
        {"checkpoint": english, "checkpoint.zh": chinese}, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    en, zh = (texts(run_page("about.py", model="toy-noted", text="a b", lang=lang)) for lang in ("en", "zh"))
    assert english in en and chinese not in en and "checkpoint.zh" not in en
    assert chinese in zh and english not in zh


def test_decoding_steps_through_at_most_its_token_limit_and_says_so(monkeypatch):
    """Every step keeps its whole trace (memory grows with the cube of the length: 512 tokens ran a server out of
    memory), so the step-through reads the first MAX_STEP_TOKENS source tokens and says so."""
    import model.analysis.decoding as decoding
    monkeypatch.setattr(decoding, "MAX_STEP_TOKENS", 5)
    at = run_page("decoding.py", model="toy-reverse", text="a b c d e f g h")
    no_exceptions(at)
    notice = catalogue("en")["decoding.cut"].format(n=5)
    assert notice in [i.value for i in at.info]
    monkeypatch.setattr(decoding, "MAX_STEP_TOKENS", 100)
    whole = run_page("decoding.py", model="toy-reverse", text="a b c d e f g h")
    assert catalogue("en")["decoding.cut"].split("{n}")[0] not in " ".join(i.value for i in whole.info)
    steps = [deck(page)[1]["steps"] for page in (at, whole)]
    assert steps[0] < steps[1]                                    # fewer steps: the source was cut


@pytest.mark.slow
def test_decoding_every_step_of_a_128_token_sentence_is_under_2_mb():
    """Issue 44: every step's pictures, gzipped, for the longest sentence the sidebar takes at its default limit
    (128 source tokens: 120 steps) stay far under 2 MB (306 KB measured in Chromium)."""
    from long_text import SENTENCES
    at = run_page("decoding.py", text=SENTENCES["max"], present=1)
    no_exceptions(at)
    head, body = deck(at, whole=True)
    assert head["whole"] and len(body["picks"]) == body["steps"] > 100
    assert len(browser_view(at, "decoding-view").proto.bytes) < 2_000_000


@pytest.mark.parametrize("page,where", [("decoding.py", "decoding"), ("multi_head.py", "mh"), ("explorer.py", "explorer"),
                                        ("ffn.py", "ffn-deck")])
def test_a_run_after_the_whole_body_builds_nothing_again(page, where):
    """The browser views' builders are kept for every session (view.shared_cached): a run after the whole body
    finds each of them. The decoding page's were keyed by classes the page defined, which it defines again every
    run: every run of the page rebuilt every step (0.3 s at 9 words)."""
    from viz.core import view
    at = browser_view_whole(run_page(page, model="toy-reverse", text="a b c d e f"), where)
    no_exceptions(at)
    built = list(view._shared)
    at.run()
    no_exceptions(at)
    assert [key for key in view._shared if key not in built] == []


def test_a_whole_body_stopped_midway_keeps_its_parts_and_the_next_run_builds_only_the_rest(monkeypatch):
    """A click that comes in while the whole body is built (Next to another page) stops the run at the next part
    (view.checkpoint: Streamlit stops a run at a read of the session state), not after every step is built; the
    parts built are kept, and the run that next asks for the whole body builds only the others."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from viz.core import view

    text, earlier = "c a b e d g f h", set(view._shared)       # a sentence of its own: nothing cached

    def step_parts() -> set:              # this test's (other tests' stay in the worker's cache)
        return {key for key in view._shared if key[0][1] == "step_part" and key[1][0][0].args[1] == text} - earlier

    at = run_page("decoding.py", model="toy-reverse", text=text)
    first = step_parts()
    checks = []

    def stopped_at_the_fourth() -> None:
        checks.append(1)
        if len(checks) == 4:
            raise StopException()          # what Streamlit raises there when a newer run is asked for
    monkeypatch.setattr(view, "checkpoint", stopped_at_the_fourth)
    browser_view_whole(at, "decoding")
    stopped = step_parts()
    assert len(stopped - first) == 3       # the first screen's step kept (no check), three built, the fourth stopped
    monkeypatch.undo()
    _, body = deck(at.run())
    rest = step_parts() - stopped
    assert len(body["picks"]) == len(first | stopped | rest) > len(stopped)
    assert not rest & stopped
