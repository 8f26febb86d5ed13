"""Attention zoo, live toy training and guided tour pages, run through app.py with AppTest."""
import base64
import json
import re
import shutil

import numpy as np

from apptest_utils import browser_says, browser_view_sent, first_chart, no_exceptions, run_page, texts
from model.analysis import zoo, zoo_fit
from model.capture import schema
from model.io.checkpoint import load_checkpoint
from model.inference.pipeline import trace_sentence
from viz import ROOT
from viz.core.i18n import catalogue
from viz.pages.zoo import two_figures


def _warnings(at) -> str:
    """Warning texts with Markdown escapes removed (URL values are shown escaped)."""
    return " ".join(w.value for w in at.warning).replace("\\", "")


def _widget(at, kind: str, key: str):
    return next(w for w in at.get(kind) if w.key == key)


def column_of(at, key: str):
    """The st.columns column holding the element with this key (None when it is full width)."""
    def walk(node, column):
        for child in getattr(node, "children", {}).values():
            if getattr(child, "key", None) == key:
                return column
            found = walk(child, child if child.type == "column" else column)
            if found is not None:
                return found
        return None
    return walk(at.main, None)


# -- zoo ------------------------------------------------------------------------------------------
# One head of the model: its pictures and the words that change with the head are the deck's (the browser picks the
# kind, layer and head: tests/test_page_zoo_deck.py); a first screen's body holds the picked head's part alone.
def zoo_part(at) -> dict:
    """The picked head's part of the zoo's deck: its figures (plotly JSON) and texts."""
    head, body = browser_view_sent(at, "zoo-deck")
    return body["picks"][":".join(str(head["pick"][name]) for name in ("kind", "layer", "head"))]


def zoo_texts(at) -> str:
    """The page's words and the picked head's words in the deck."""
    return texts(at) + " " + " ".join(zoo_part(at)["texts"].values())


def test_zoo_default_uses_the_model_head_and_reproduces_its_pattern():
    at = run_page("zoo.py", model="toy-reverse", text="a b c d")
    no_exceptions(at)
    out = texts(at)
    assert "Attention zoo" in out and "Vaswani" in out and "Bahdanau" in out and "Xu et al." in out
    assert _widget(at, "radio", "zoo-source").value == "model"
    assert _widget(at, "radio", "zoo-score").value == "scaled"
    # scaled dot + softmax on the captured Q, K equals the model's own pattern: the page says so, with the gap
    check = zoo_part(at)["texts"]["check"]
    gap = float(check.rsplit("difference ", 1)[1].rstrip(")."))
    assert gap < 1e-5
    # the weights CSV is the real head's pattern (encoder, layer 0, head 0)
    trace = trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), "a b c d")
    q, k = trace["encoder.layers.0.self_attn.hook_q"][0], trace["encoder.layers.0.self_attn.hook_k"][0]
    np.testing.assert_allclose(zoo.soft(zoo.scores("scaled", q, k)),
                               trace["encoder.layers.0.self_attn.hook_pattern"][0], atol=1e-5)
    # the picture first: scores and weights right under the controls, half the page each (a third made them
    # thin strips that dropped key labels), every key labelled
    _, body = browser_view_sent(at, "zoo-deck")
    assert body["blocks"][0] == {"type": "columns", "columns": [[{"type": "figure", "id": "scores", "csv": True}],
                                                                [{"type": "figure", "id": "weights", "csv": True}]]}
    assert not at.get("plotly_chart")                       # none of the server's: the deck draws them
    for key in ("scores", "weights"):
        assert zoo_part(at)["figures"][key]["layout"]["xaxis"]["dtick"] == 1


def test_zoo_deep_link_restores_the_view():
    at = run_page("zoo.py", model="toy-reverse", text="a b c d e", kind="cross", layer=1, head=2, score="additive",
                  weighting="local", window=2, centre="monotonic")
    no_exceptions(at)
    assert browser_view_sent(at, "zoo-deck")[0]["pick"] == {"kind": "cross", "layer": 1, "head": 2}
    assert _widget(at, "radio", "zoo-score").value == "additive"
    assert _widget(at, "radio", "zoo-weighting").value == "local"
    assert _widget(at, "slider", "zoo-window").value == 2
    assert _widget(at, "radio", "zoo-centre").value == "monotonic"
    out = zoo_texts(at)
    assert "random, fixed" in out and "monotonic" in out and "Luong" in out


def test_zoo_bad_parameters_warn_and_fall_back():
    at = run_page("zoo.py", model="toy-reverse", text="a b c d", score="quadratic", window="99", weighting="soft")
    no_exceptions(at)
    warnings = _warnings(at)
    assert "score='quadratic'" in warnings and "window='99'" in warnings
    assert _widget(at, "radio", "zoo-score").value == "scaled"


def _chart_z(at, key: str) -> np.ndarray:
    z = zoo_part(at)["figures"][key]["data"][0]["z"]
    if isinstance(z, dict):                        # plotly sends numpy arrays as base64 typed arrays
        shape = [int(n) for n in str(z["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape).astype(float)
    return np.array(z, dtype=float)


def test_zoo_on_en_es_uses_the_weights_fitted_to_the_head():
    """The shipped model's folder has zoo_fit.safetensors: the general score uses the W fitted to the chosen head,
    which lands near I/sqrt(d), so its picture is the head's own attention, unlike the random W's."""
    sentence = "The man went to the house."
    at = run_page("zoo.py", model="en-es", text=sentence, kind="encoder", layer=2, head=5, score="general")
    no_exceptions(at)
    folder = ROOT / "pretrained" / "en-es"
    bundle = load_checkpoint(folder)
    fit = zoo_fit.load_fit(folder, bundle.config)
    report = fit.report("encoder", 2, 5)
    info = zoo_part(at)["texts"]["note"]
    assert "fitted to this head" in info and two_figures(report.w_distance) in info and "I/√d" in info
    assert f"{fit.sentences} training sentences" in info and "random, fixed" not in info
    assert squeeze("General (bilinear), fitted") in squeeze(zoo_part(at)["figures"]["scores"]["layout"]["title"]["text"])
    trace = trace_sentence(bundle, bundle.tokenizer.styled(sentence, "modern"))     # as the page traces it
    q, k = (trace[schema.attn_name("encoder", 2, h)][5] for h in ("q", "k"))
    shown = _chart_z(at, "weights")
    np.testing.assert_allclose(shown, zoo.soft(zoo.scores("general", q, k, weights=fit.head("encoder", 2, 5))),
                               atol=1e-5)
    np.testing.assert_allclose(shown, trace[schema.pattern_name("encoder", 2)][5], atol=0.05)   # the head's own
    assert np.abs(shown - zoo.soft(zoo.scores("general", q, k))).max() > 0.3              # not the random W's
    at = run_page("zoo.py", model="en-es", text=sentence, kind="cross", layer=0, head=1, score="additive", lang="zh")
    no_exceptions(at)
    info = zoo_part(at)["texts"]["note"]
    assert "针对这个注意力头拟合" in info and "tanh" in info


def test_zoo_falls_back_to_random_weights_when_the_fit_file_is_broken(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(ROOT / "pretrained" / "toy-reverse", models / "toy-reverse")
    (models / "toy-reverse" / zoo_fit.FILE).write_bytes(b"not safetensors at all")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    at = run_page("zoo.py", model="toy-reverse", text="a b c d", score="additive")
    no_exceptions(at)
    warning = _warnings(at)
    assert "fitted zoo weights cannot be used" in warning and "not a safetensors file" in warning
    assert str(tmp_path) not in warning
    assert "random, fixed" in zoo_texts(at)
    assert squeeze("Additive (Bahdanau), random W") in squeeze(zoo_part(at)["figures"]["scores"]["layout"]["title"]["text"])


def test_zoo_empty_sentence_falls_back_to_the_toy_example():
    at = run_page("zoo.py", model="toy-reverse", text="", source="model")
    no_exceptions(at)
    assert "toy example is shown" in texts(at)
    assert "layer" not in at.query_params and "zoo-kind" not in [w.key for w in at.radio]


# -- live training --------------------------------------------------------------------------------
def test_training_default_view_and_bad_parameters():
    at = run_page("training.py", model="toy-reverse", text="a b c d", task="shuffle", steps="5",
                  example="a b zz")
    no_exceptions(at)
    warnings = _warnings(at)
    assert "task='shuffle'" in warnings and "steps='5'" in warnings and "'zz'" in warnings
    assert _widget(at, "radio", "train-task").value == "reverse"
    assert _widget(at, "slider", "train-steps").value == 800
    assert not _widget(at, "button", "train-button").disabled
    assert "Press **Train**" in texts(at)


def test_training_draws_the_example_before_train_is_pressed():
    """Not an empty page: the model a training starts from and the shipped trained one, on the example."""
    at = run_page("training.py", model="toy-reverse", text="a b c d", task="reverse", size="small", example="a b c")
    no_exceptions(at)
    chart, words = first_chart(at)
    assert chart.key == "train-before" and words <= 25
    figures = {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert set(figures) == {"train-before", "train-goal"}
    goal = _z(figures["train-goal"])
    shipped = trace_sentence(load_checkpoint(ROOT / "pretrained" / "toy-reverse"), "a b c", target="c b a")
    np.testing.assert_allclose(goal, shipped["decoder.layers.1.cross_attn.hook_pattern"].mean(0), atol=1e-5)
    assert figures["train-before"]["data"][0]["y"] == ["0 c", "1 b", "2 a", "3 &lt;/s&gt;"]   # rows: what is predicted


def _z(fig: dict) -> np.ndarray:
    """The z matrix of a figure's first trace; plotly sends numpy arrays as base64 typed arrays."""
    z = fig["data"][0]["z"]
    if isinstance(z, list):
        return np.array(z, dtype=float)
    shape = [int(n) for n in str(z["shape"]).split(",")]
    return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)


def test_training_trains_in_the_app_and_shows_curve_and_snapshots():
    at = run_page("training.py", model="toy-reverse", text="a b c d", task="copy", size="tiny", steps=20,
                  example="a b c")
    no_exceptions(at)
    assert _widget(at, "radio", "train-size").value == "tiny"          # deep link
    assert _widget(at, "slider", "train-steps").value == 20
    _widget(at, "button", "train-button").click()
    at.run()
    no_exceptions(at)
    out = texts(at)
    assert "Result: copy, tiny model, 20 steps" in out
    # the snapshots: a deck drawn in the browser, its step row the training's steps (tests/test_page_training_view.py)
    head, body = browser_view_sent(at, "train-deck")
    assert body["words"]["step_names"] == ["5", "10", "15", "20"] and head["pick"] == {"step": 3, "layer": 0, "head": -1}
    # no chart title is cut: every line fits half the page (the snapshot maps stand two to a row)
    figures = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    figures += [fig for part in body["picks"].values() for fig in part["figures"].values()]
    for fig in figures:
        title = fig["layout"].get("title", {}).get("text", "")
        assert all(len(line) <= 44 for line in title.split("<br>")), title
    run = at.session_state["train-result"]
    assert [s.step for s in run.snapshots] == [5, 10, 15, 20]
    assert run.snapshots[0].cross.shape == (1, 2, 4, 4)              # [L,H,T,S]: "a b c </s>" both sides
    np.testing.assert_allclose(run.snapshots[-1].cross.sum(-1), 1.0, atol=1e-5)
    assert not at.session_state["train-running"]
    assert not _widget(at, "button", "train-button").disabled
    # scrub back (the browser tells the server its snapshot, with the maps' layer and head): the caption follows
    browser_says(at, state={"pick": {"step": 0, "layer": 0, "head": -1}}, where="train-deck")
    no_exceptions(at)
    head, body = browser_view_sent(at, "train-deck")
    assert head["pick"] == {"step": 0, "layer": 0, "head": -1} and "Step 5:" in body["picks"]["0"]["texts"]["caption"]
    # try the trained model on a typed input; a bad one gets a message
    _widget(at, "text_input", "train-try").input("a b q")
    at.run()
    no_exceptions(at)
    assert "'q'" in _warnings(at)


# -- tour -----------------------------------------------------------------------------------------
def test_tour_default_deep_link_and_bad_step():
    at = run_page("tour.py", model="toy-reverse", text="a b c d")
    no_exceptions(at)
    assert "Step 1 of 13: Why attention: the bottleneck of one vector" in texts(at)
    assert _widget(at, "button", "tour-prev").disabled
    at = run_page("tour.py", model="toy-reverse", text="a b c d", tour_step=4)
    no_exceptions(at)
    assert "Step 4 of 13: Multi-head attention" in texts(at) and at.query_params["tour_step"] == "4"
    links = at.get("page_link")
    assert [link.proto.page for link in links] == ["multihead", "explorer"]
    assert links[0].proto.query_string == "model=toy-reverse&text=a+b+c+d&kind=encoder&layer=0"
    _widget(at, "button", "tour-next").click()
    at.run()
    assert "Step 5 of 13: Tokens become vectors" in texts(at) and at.query_params["tour_step"] == "5"
    at = run_page("tour.py", model="toy-reverse", text="a b c d", tour_step="x")
    no_exceptions(at)
    assert "tour_step='x'" in _warnings(at) and "Step 1 of" in texts(at)


def test_tour_words_write_no_formula_markup_as_plain_text():
    """Screenshot review (tour step 4, en and zh, and the lesson): 'mixed by W^O' showed its caret. The tour's
    words (page and offline lesson) write a symbol as Unicode (Wᴼ) or inside $...$, never as bare markup."""
    import re
    from viz.core.i18n import catalogue
    for lang in ("en", "zh"):
        words = {key: re.sub(r"\$[^$]*\$", "", text) for key, text in catalogue(lang).items()
                 if key.startswith("tour.")}
        assert [key for key, text in words.items() if re.search(r"\w\^\w|\\[a-z]+\{|_\{", text)] == [], lang
        assert "Wᴼ" in words["tour.multi_head.text"]


def test_tour_empty_sentence_and_presenter_mode():
    at = run_page("tour.py", model="toy-reverse", text="", present=1, tour_step=13)
    no_exceptions(at)
    assert "Step 13 of 13: Watch it learn" in texts(at) and "sentence is empty" in texts(at)
    assert _widget(at, "toggle", "presenter").value is True and at.query_params["present"] == "1"
    link = next(link for link in at.get("page_link") if link.proto.page == "training")   # the step's link
    assert "text=" not in link.proto.query_string
    assert "present=1" in link.proto.query_string and "task=reverse" in link.proto.query_string


def test_presenter_mode_adds_page_links_in_tour_order():
    at = run_page("zoo.py", model="toy-reverse", text="a b c d", present=1)
    no_exceptions(at)
    links = {link.proto.label: link.proto for link in at.get("page_link")}
    prev, nxt = links["← Previous page: Before the Transformer"], links["Next page: Step-through: one head →"]
    assert (prev.page, nxt.page) == ("rnn", "step")          # the order of the notes: before the Transformer, then Q, K, V
    assert nxt.query_string == "model=toy-reverse&text=a+b+c+d&present=1&kind=encoder&layer=0&head=0"
    at = run_page("zoo.py", model="toy-reverse", text="a b c d", present="maybe")
    no_exceptions(at)
    assert "present='maybe'" in _warnings(at)
    assert not any("Next page" in link.proto.label for link in at.get("page_link"))


def test_presenter_page_links_stay_when_a_page_stops_early():
    at = run_page("explorer.py", model="toy-reverse", text="   ", present=1)       # empty sentence: st.stop
    no_exceptions(at)
    assert "Type a sentence in the sidebar" in texts(at)
    labels = [link.proto.label for link in at.get("page_link")]
    assert any(label.startswith("Next page:") for label in labels)
    assert any(label.startswith("← Previous page:") for label in labels)


def test_zoo_fitted_w_distance_reads_and_the_random_start_is_said_only_where_it_is_left():
    """Screenshot review: encoder layer 0's fitted W lies under 1e-3 from I/sqrt(d) (head 0: 4.5e-5 then, 8.9e-4 after
    the learner fine-tuning; head 1: 9.0e-5 after step 4), which '.3f' wrote 0.000, beside 'W keeps some of its random
    start'. The distance now has 2 significant figures, and that sentence stays only where at least 1% of the random
    W's distance is left (encoder layer 2, head 7: 1.01, 0.84 after step 4)."""
    fit = zoo_fit.load_fit(ROOT / "pretrained" / "en-es", load_checkpoint(ROOT / "pretrained" / "en-es").config)
    for lang, kept in (("en", "random start"), ("zh", "随机初值")):
        at = run_page("zoo.py", model="en-es", text="The man went to the house.", kind="encoder", layer=0, head=1,
                      score="general", lang=lang)
        no_exceptions(at)
        info = zoo_part(at)["texts"]["note"]
        assert fit.report("encoder", 0, 1).w_distance < 1e-3 and "9.0e-5" in info
        assert "0.000" not in info and kept not in info
        at = run_page("zoo.py", model="en-es", text="The man went to the house.", kind="encoder", layer=2, head=7,
                      score="general", lang=lang)
        no_exceptions(at)
        info = zoo_part(at)["texts"]["note"]
        assert f"{fit.report('encoder', 2, 7).w_distance:.2g}" in info and kept in info     # 2 significant figures


def test_zoo_lists_write_the_language_s_colon():
    """中文 wrote '**点积**: …' with an ASCII colon, hard-coded in the page; the list item is a catalogue message."""
    at = run_page("zoo.py", model="toy-reverse", text="a b c d", lang="zh")
    no_exceptions(at)
    lists = [m.value for m in at.markdown if m.value.startswith("- **")]
    assert len(lists) == 2
    # the bold closes before the colon: '**软注意力（softmax）**的…' would not be bold (CommonMark: a closing ** between
    # punctuation and a letter does not close)
    assert "- **点积的由来**：" in lists[0] and "- **软注意力（softmax）的由来**：" in lists[1]
    assert "**: " not in " ".join(lists)
    at = run_page("zoo.py", model="toy-reverse", text="a b c d")
    assert "- **Dot**: Luong" in " ".join(m.value for m in at.markdown)


def test_zoo_weighting_gallery_names_the_window_in_the_language():
    """The gallery's local panel wrote ', D=1' after the name, hard-coded (an ASCII comma in 中文, wrapped onto a
    line of its own); it is the catalogue's one-line title, as over the main picture."""
    for lang in ("en", "zh"):
        at = run_page("zoo.py", model="toy-reverse", text="a b c d", lang=lang, window=1)
        no_exceptions(at)
        spec = zoo_part(at)["figures"]["gallery-weightings"]
        titles = [a["text"] for a in spec["layout"]["annotations"]]
        assert catalogue(lang)["zoo.local_d"].format(d=1) in titles, titles


def _gallery_titles(at) -> list[str]:
    return [squeeze(a["text"]) for a in zoo_part(at)["figures"]["gallery-scores"]["layout"]["annotations"]]


def squeeze(text: str) -> str:
    """A title without its line breaks and spaces (the gallery wraps titles to its panels)."""
    return re.sub(r"<br>|\s", "", text)


def test_zoo_default_view_says_what_fitted_means_and_that_the_general_score_is_the_scaled_dot():
    """The default view (encoder layer 0, head 0, scaled dot) showed a panel "General (bilinear), fitted" with no
    word on what fitted means, and it looked exactly like the scaled dot product's with nothing saying why. The
    panel now says W ≈ I/√d, and a caption under the gallery what fitted means and that the two are one score;
    a head whose fitted W kept its random start (encoder layer 2, head 7) is not said to be the scaled dot."""
    for lang in ("en", "zh"):
        words = catalogue(lang)
        at = run_page("zoo.py", model="en-es", text="The man went to the house.", lang=lang)
        no_exceptions(at)
        general = words["zoo.score_name.fitted_scaled"].format(name=words["zoo.score_name.general"])
        assert squeeze(general) in _gallery_titles(at)
        shown = zoo_texts(at)
        assert words["zoo.gallery.fitted"].split("{dist}")[0] in shown and words["zoo.gallery.fitted.scaled"] in shown
    at = run_page("zoo.py", model="en-es", text="The man went to the house.", kind="encoder", layer=2, head=7)
    no_exceptions(at)
    assert squeeze("General (bilinear), fitted") in _gallery_titles(at)
    assert "W≈I/√d" not in " ".join(_gallery_titles(at)) and catalogue("en")["zoo.gallery.fitted.scaled"] not in zoo_texts(at)
