"""Head analysis and Compare pages with AppTest on the toy-reverse model."""

import json

import numpy as np
import pytest

from apptest_utils import browser_says, browser_view_sent, figure, first_chart, no_exceptions, run_page, texts, z_of
from test_page_ffn import arr
from conftest import ROOT
from model.analysis import ablation, flow, heads
from model.capture import schema
from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence

TEXT = "a b c d e f"


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse", device="cpu")


def metric(at, label_start: str):
    return next(m for m in at.metric if m.label.startswith(label_start))


# -- Head analysis --------------------------------------------------------------------------------------
STATS = "hs-deck"          # the statistics' browser view (viz/pages/heads.py: a deck of every kind)


def stats_deck(at) -> tuple[dict, dict]:
    """What the statistics' view was sent: its head (the pick) and its body (every kind's picture)."""
    return browser_view_sent(at, STATS)


def test_heads_default_view_shows_the_real_statistics(toy):
    """Every kind's layer x head picture is in the browser at once, each the statistic of the real trace."""
    at = run_page("heads.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert "Head analysis" in texts(at)
    assert at.selectbox(key="heads-stat").value == "entropy_norm"
    head, body = stats_deck(at)
    assert head["pick"] == {"kind": "encoder"} and head["whole"] and body["names"] == ["kind"]
    stats = heads.trace_head_stats(trace_sentence(toy, TEXT, names="*.hook_pattern"))
    for kind in schema.KINDS:
        expected = heads.stat_matrix(stats, kind, "entropy_norm", 2, 4)
        np.testing.assert_allclose(arr(body["picks"][kind]["figures"]["stat"]["data"][0]["z"]), expected, atol=1e-5)
    assert len(at.dataframe[0].value) == 4 * (2 + 2 + 2)
    chart, words = first_chart(at)                                 # the picture first, the explanation after
    assert chart.key == f"{STATS}-view" and words <= 25


def test_heads_deep_links_reproduce_the_view():
    at = run_page("heads.py", model="toy-reverse", text=TEXT, stat="prev", kind="decoder")
    no_exceptions(at)
    assert at.selectbox(key="heads-stat").value == "prev"
    assert stats_deck(at)[0]["pick"] == {"kind": "decoder"}
    assert "previous-token head" in texts(at)

    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="ablation", kind="decoder", abl_mode="mean",
                  ablate="decoder:0:3")
    no_exceptions(at)
    assert at.checkbox(key="abl-decoder-0-3").value is True
    assert at.checkbox(key="abl-decoder-0-2").value is False
    assert at.checkbox(key="abl-decoder-0-2").label == "H2"
    assert at.radio(key="heads-abl-mode").value == "mean"
    assert float(metric(at, "log P, 1 head off").value) < float(metric(at, "log P, all heads on").value) - 1
    assert at.query_params["ablate"] == "decoder:0:3"


def test_a_kind_picked_in_the_browser_rebuilds_nothing_and_its_picture_is_the_builders():
    """A kind picked in the browser (a teacher's: told the server) is written to the URL, and the view's message is
    the same bytes (the browser holds every kind); each kind's picture is the page's one builder's (stat_figure)."""
    from viz.core.i18n import words
    from viz.figures.browser_view import figure_spec
    from viz.figures.style import Look
    from viz.pages.heads import stat_figure
    from apptest_utils import browser_view
    at = run_page("heads.py", model="toy-reverse", text=TEXT, stat="self")
    no_exceptions(at)
    sent = browser_view(at, f"{STATS}-view").proto.bytes
    browser_says(at, state={"pick": {"kind": "cross"}}, where=STATS)
    no_exceptions(at)
    assert at.query_params["kind"] == "cross" and stats_deck(at)[0]["pick"] == {"kind": "cross"}
    assert browser_view(at, f"{STATS}-view").proto.bytes == sent
    body = stats_deck(at)[1]
    z = arr(body["picks"]["cross"]["figures"]["stat"]["data"][0]["z"])
    built = figure_spec(stat_figure(z, "cross", "self", Look(words("en"))))
    assert body["picks"]["cross"]["figures"]["stat"] == json.loads(json.dumps(built))
    assert body["picks"]["cross"]["files"] == {"stat": "toy-reverse-cross-self"}


def test_a_kinds_csv_is_its_numbers_and_the_deck_speaks_chinese_in_presenter_mode(toy):
    at = run_page("heads.py", model="toy-reverse", text=TEXT, stat="prev")
    browser_says(at, trigger=("csv", {"kind": "decoder", "figure": "stat"}), where=STATS)
    no_exceptions(at)
    csv = stats_deck(at)[0]["csv"]
    assert csv["name"] == "toy-reverse-decoder-prev.csv"
    rows = [line.split(",") for line in csv["text"].strip().splitlines()]
    expected = heads.stat_matrix(heads.trace_head_stats(trace_sentence(toy, TEXT, names="*.hook_pattern")),
                                 "decoder", "prev", 2, 4)
    assert [row[0] for row in rows[1:]] == ["layer 0", "layer 1"] and len(rows[0]) == 5
    np.testing.assert_allclose(np.array([[float(x) for x in row[1:]] for row in rows[1:]]), expected, atol=1e-6)
    zh = run_page("heads.py", model="toy-reverse", text=TEXT, lang="zh", present="1")
    no_exceptions(zh)
    head, body = stats_deck(zh)
    assert body["words"]["kind_names"]["cross"].startswith("交叉注意力")
    assert "交叉注意力" in body["picks"]["cross"]["figures"]["stat"]["layout"]["title"]["text"]
    assert body["text_px"] >= 20 and body["modebar"] is False and "layer" not in body["words"]
    assert head["pick"] == {"kind": "encoder"}


def test_heads_bad_parameters_warn_without_failing():
    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="nope", stat="beauty", kind="sideways")
    no_exceptions(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "tab=" in warnings and "stat=" in warnings and "kind=" in warnings
    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="ablation", ablate="encoder:9:9,rubbish")
    no_exceptions(at)
    assert "ablate" in " ".join(w.value for w in at.warning)
    assert not any(cb.value for cb in at.checkbox)
    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="ablation", ablate="encoder:0:0:0")
    shown = " ".join(w.value for w in at.warning).replace("\u2060", "")
    assert r"encoder\:0\:0\:0" in shown                               # an extra field is refused, not dropped
    assert not any(cb.value for cb in at.checkbox)


def test_heads_empty_sentence_says_so():
    at = run_page("heads.py", model="toy-reverse", text="")
    no_exceptions(at)
    assert "empty" in texts(at)


def test_ticking_a_head_changes_the_log_prob_and_ranking_lists_every_head(toy):
    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="ablation")
    no_exceptions(at)
    base = metric(at, "log P, all heads on").value
    assert base == f"{ablation.reference_logprob(toy, TEXT, None):.4f}"
    at.checkbox(key="abl-encoder-0-0").check().run()
    no_exceptions(at)
    cut = metric(at, "log P, 1 head off")
    assert cut.value != base
    assert cut.value == f"{ablation.reference_logprob(toy, TEXT, None, [('encoder', 0, 0)]):.4f}"
    assert at.query_params["ablate"] == "encoder:0:0"
    at.button(key="heads-rank-go").click().run()
    no_exceptions(at)
    ranked = at.dataframe[-1].value
    assert len(ranked) == 24 and ranked["delta"].is_monotonic_increasing


def test_rollout_tab_shows_raw_rollout_and_flow(toy):
    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="rollout")
    no_exceptions(at)
    assert len(at.get("plotly_chart")) == 3
    patterns = schema.stacked(trace_sentence(toy, TEXT, names="*.hook_pattern"), "encoder")
    np.testing.assert_allclose(z_of(at, 1), flow.attention_rollout(patterns), atol=1e-5)
    for i in range(3):                                   # two maps a row, every input token labelled
        assert figure(at, i)["layout"]["xaxis"]["dtick"] == 1


# -- Compare --------------------------------------------------------------------------------------------
# One head on two sentences: its pictures are the deck's (the browser picks the layer and head:
# tests/test_page_compare_deck.py); a first screen's body holds the picked head's part alone.
def cmp_part(at) -> dict:
    """The picked head's part of the compare page's deck: its figures (plotly JSON) and texts."""
    head, body = browser_view_sent(at, "cmp-deck")
    return body["picks"][f"{head['pick']['layer']}:{head['pick']['head']}"]


def cmp_z(at, name: str) -> np.ndarray:
    return arr(cmp_part(at)["figures"][name]["data"][0]["z"])


def cmp_words(at) -> str:
    """The deck's words (its blocks' titles, the pick's texts)."""
    from viz.figures.browser_view import every_block
    _, body = browser_view_sent(at, "cmp-deck")
    return " ".join([b["title"] for b in every_block(body["blocks"]) if b.get("title")]
                    + list(cmp_part(at)["texts"].values()))


def test_compare_default_swaps_two_words_and_runs_the_order_test():
    at = run_page("compare.py", model="toy-reverse", text=TEXT)
    no_exceptions(at)
    assert at.text_input[0].value == "f b c d e a"
    assert "The word-order test" in cmp_words(at) and "order-blind" in cmp_words(at)
    assert not at.get("plotly_chart") and set(cmp_part(at)["figures"]) == {"a", "b", "order"}
    diff = cmp_z(at, "order")
    assert diff.shape == (7, 7) and np.abs(diff).max() > 1e-3     # positions make the maps differ
    # the colour scale fits the data, symmetric about 0 (a ±1 scale left a 0.18 difference almost white), and
    # the figure says it
    spec = cmp_part(at)["figures"]["order"]
    trace = spec["data"][0]
    assert trace["zmax"] == pytest.approx(np.abs(diff).max(), rel=1e-6) and trace["zmin"] == -trace["zmax"]
    assert f"±{trace['zmax']:.3g}" in str(trace["colorbar"]["title"]["text"])
    _, body = browser_view_sent(at, "cmp-deck")
    assert body["blocks"][0]["columns"][0] == [{"type": "figure", "id": "a", "csv": True}]    # the picture first


def test_compare_deep_link_two_heads():
    at = run_page("compare.py", model="toy-reverse", text=TEXT, mode="heads", kind="cross", layer=1, head=2,
                  layer_b=0, head_b=3)
    no_exceptions(at)
    assert at.radio(key="compare-mode").value == "heads" and at.radio(key="compare-kind").value == "cross"
    assert at.selectbox(key="compare-cross-layer").value == 1 and at.selectbox(key="compare-cross-head").value == 2
    head, body = browser_view_sent(at, "cmp-heads-deck")                 # head B: the browser's pick (a deck)
    assert head["pick"] == {"layer": 0, "head": 3} and sorted(body["picks"]) == ["", "0:3"]
    a = arr(body["picks"][""]["figures"]["a"]["data"][0]["z"])
    b, diff = (body["picks"]["0:3"]["figures"][name]["data"][0] for name in ("b", "diff"))
    np.testing.assert_allclose(arr(diff["z"]), arr(b["z"]) - a, atol=1e-6)
    assert diff["zmax"] == pytest.approx(np.abs(arr(b["z"]) - a).max(), rel=1e-6) and diff["zmin"] == -diff["zmax"]


def test_compare_bad_parameters_and_empty_sentences():
    at = run_page("compare.py", model="toy-reverse", text=TEXT, mode="sideways", head_b="x", text_b="")
    no_exceptions(at)
    assert "mode=" in " ".join(w.value for w in at.warning)
    assert "Sentence B is empty" in texts(at)
    at = run_page("compare.py", model="toy-reverse", text="")
    no_exceptions(at)
    assert "empty" in texts(at)


def test_ablation_checkboxes_name_heads_in_chinese():
    """Issue 26, item 6: the ablation grid's H0-H3 stayed English in 中文."""
    at = run_page("heads.py", model="toy-reverse", text=TEXT, tab="ablation", kind="decoder", lang="zh")
    no_exceptions(at)
    assert at.checkbox(key="abl-decoder-0-2").label == "头2"


def test_compare_on_a_two_style_model_swaps_words_not_the_style_token():
    """en-es reads '<modern> …': sentence B is the typed words with two swapped, read in the same style, so
    both maps have the same size (the style token once swapped into the sentence made B 16 tokens long)."""
    at = run_page("compare.py", model="en-es", text="The man went to the house.")
    no_exceptions(at)
    assert "<" not in at.text_input[0].value and at.text_input[0].value != "The man went to the house."
    a, b = cmp_z(at, "a"), cmp_z(at, "b")
    assert a.shape == b.shape


@pytest.mark.parametrize("params", [dict(), dict(lang="zh"), dict(present=1)])
def test_compare_word_order_difference_drops_numbers_its_cells_cannot_hold(params):
    """Screenshot review (en and zh, normal, 1280x720): the difference map's signed numbers ran together
    ('-0.01-0.03') in cells ~28 px wide. Nine positions of 5-character numbers do not fit its column: the
    numbers go, hover keeps them, and a value that rounds to zero is never written '-0.00'."""
    at = run_page("compare.py", model="en-es", text="The man went to the house.", **params)
    no_exceptions(at)
    diff = cmp_part(at)["figures"]["order"]["data"][0]
    assert len(diff["x"]) == 9 and not diff.get("texttemplate") and "%{z:.4f}" in diff["hovertemplate"]


# Each chart's title: how far its top lies below the top of the chart's drawing (negative: cut off)
TITLE_TOPS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(p => {
  const svg = p.querySelector('.main-svg').getBoundingClientRect(), title = p.querySelector('.gtitle');
  return title && title.textContent ? title.getBoundingClientRect().top - svg.top : null; }).filter(x => x !== null)"""


@pytest.mark.browser
def test_compare_chart_titles_are_not_cut_off_at_the_top(app_url, chromium):
    """The difference map's title (with its colour scale in words) broke into two lines in its column and plotly
    drew the first above the figure, cut off, in en and zh (-5 px normal, -10 px presenter). Every chart title on
    Compare, both modes, both languages, normal and presenter, now starts inside its figure."""
    from browser_utils import wait_for_app
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    tops = {}
    for mode in ("sentences", "heads"):
        for lang in ("en", "zh"):
            for present in ("", "&present=1"):
                page.goto(f"{app_url}/compare?model=en-es&text=The+man+went+to+the+house.&mode={mode}&lang={lang}{present}")
                page.wait_for_selector("h1", timeout=240_000)
                wait_for_app(page)
                page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .gtitle').length >= 3",
                                       timeout=120_000)
                tops[mode, lang, present] = page.evaluate(TITLE_TOPS_JS)
    page.close()
    assert all(len(found) >= 3 and min(found) >= 0 for found in tops.values()), tops
