"""Presenter mode's one way forward (issue 26, item 5): on the guided tour its own Previous/Next, leading to
the pages around the tour from its first and last steps; elsewhere the Previous/Next page buttons. And the
offline lesson's download at the top of every page, not under it."""
import html
import json
import re

import pytest

from apptest_utils import browser_view_sent, no_exceptions, run_page
from viz.elements.nav import PAGE_BLOCKS


def _buttons(at) -> dict:
    return {b.key: b for b in at.get("button")}


def _links(at) -> list[tuple[str, str]]:
    return [(link.proto.label, link.proto.page) for link in at.get("page_link")]


def _forward(at) -> list[str]:
    """Every control on the page that moves on: the tour's Next and any 'next page' link."""
    found = [b.key for b in at.get("button") if b.key == "tour-next" and not b.disabled]
    found += [label for label, _ in _links(at) if "Next page" in label or "下一页" in label]
    return found


def test_tour_in_presenter_mode_has_one_way_forward():
    at = run_page("tour.py", model="toy-reverse", text="a b c d", present=1, tour_step=5)
    no_exceptions(at)
    assert _forward(at) == ["tour-next"]
    assert not any("page" in label.lower() for label, _ in _links(at) if label.startswith("←"))
    _buttons(at)["tour-next"].click()
    at.run()
    assert at.query_params["tour_step"] == "6" and _forward(at) == ["tour-next"]


def test_tour_first_and_last_steps_lead_to_the_pages_around_it_in_presenter_mode():
    at = run_page("tour.py", model="toy-reverse", text="a b c d", present=1, tour_step=13)
    no_exceptions(at)
    assert "tour-next" not in _buttons(at)
    assert _forward(at) == ["Next page →"]
    nxt = next(link.proto for link in at.get("page_link") if link.proto.label == "Next page →")
    assert nxt.page == "rnn" and "present=1" in nxt.query_string and "text=a+b+c+d" in nxt.query_string
    at = run_page("tour.py", model="toy-reverse", text="a b c d", present=1, tour_step=1, lang="zh")
    no_exceptions(at)
    assert "tour-prev" not in _buttons(at)
    assert ("← 上一页", "") in _links(at) and _forward(at) == ["tour-next"]      # home is served at /


def test_tour_outside_presenter_mode_keeps_its_own_buttons_only():
    at = run_page("tour.py", model="toy-reverse", text="a b c d", tour_step=13)
    no_exceptions(at)
    assert _buttons(at)["tour-next"].disabled and _buttons(at)["tour-prev"].disabled is False
    assert not any("page" in label for label, _ in _links(at))


def _order(at) -> list[str]:
    """The main area's elements top to bottom (style-only HTML left out)."""
    seen = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            kind = child.type
            if kind not in ("vertical", "horizontal", "column", "html", "element_container", "flex_container"):
                seen.append("lesson" if getattr(child, "key", None) == "lesson-download" else kind)
            walk(child)
    walk(at.main)
    return seen


def test_lesson_download_is_the_first_thing_on_the_page():
    for page, params in (("explorer.py", {}), ("layernorm.py", {"present": 1}), ("tour.py", {"present": 1})):
        at = run_page(page, model="toy-reverse", text="a b c d", **params)
        no_exceptions(at)
        order = _order(at)
        assert order[0] == "lesson", (page, order[:5])
        picture = "bidi_component" if page == "explorer.py" else "plotly_chart"   # the explorer's browser-side view
        assert order.index("title") < order.index(picture) and order.count("lesson") == 1


def test_no_lesson_download_without_a_sentence():
    at = run_page("explorer.py", model="toy-reverse", text="   ", present=1)
    no_exceptions(at)
    assert "lesson" not in _order(at)


def test_presenter_mode_enlarges_the_decoding_steps_code_lines():
    """Seen on the decoding page in presenter mode at 1280x720: the step's 'decoder input / appends / output
    so far' lines (st.code) stayed at 14 px among 21 px text. The presenter styles size code blocks too, and
    the page still draws them in presenter mode."""
    import re
    from viz.frame.presenter import PRESENTER_CSS
    rule = re.search(r'\[data-testid="stCode"\] code \{ font-size: ([\d.]+)rem', PRESENTER_CSS)
    assert rule and float(rule.group(1)) >= 1.15
    # and the tables (About's configuration, the model card's examples) stayed at 14-16 px
    rule = re.search(r'table td, \.stMainBlockContainer table th \{ font-size: ([\d.]+)rem', PRESENTER_CSS)
    assert rule and float(rule.group(1)) >= 1.15
    at = run_page("decoding.py", model="toy-reverse", text="c a f e", present="1")
    no_exceptions(at)
    head, body = browser_view_sent(at, "decoding")          # drawn in the browser at the text's size (>= 20 px)
    assert body["picks"][str(head["pick"]["step"])]["texts"]["step-code"] and body["text_px"] >= 20


def _map(at) -> dict | None:
    chart = next((c for c in at.get("plotly_chart") if c.key == "presenter-map"), None)
    return None if chart is None else json.loads(chart.proto.spec)


def test_presenter_mode_shows_where_a_page_is_in_the_model():
    """Issue 26, item 9: the live map as 'you are here' in presenter mode too: under a page about one part of the
    model, the whole model on the sentence with the page's blocks framed in red, every block a link that keeps
    presenter mode; in normal mode, and on pages about the whole model, none."""
    at = run_page("layernorm.py", model="toy-reverse", text="a b c d", present=1, lang="zh")
    no_exceptions(at)
    fig = _map(at)
    red = [s for s in fig["layout"]["shapes"] if s.get("line", {}).get("color") == "#d62728"]
    assert len(red) == len(PAGE_BLOCKS["layernorm"]) == 5                         # every Add & Norm
    assert not any("<a href=" in a["text"] for a in fig["layout"]["annotations"])    # clicked, not followed
    cells = next(trace for trace in fig["data"] if trace.get("name") == "cells")["customdata"]
    assert "norm.encoder.norm_attn#0" in cells
    links = [link.proto.query_string for link in at.get("page_link")]
    assert links and all("present=1" in link and "lang=zh" in link for link in links)
    assert any("本页在模型中的位置" in m.value for m in at.markdown)
    assert _map(run_page("layernorm.py", model="toy-reverse", text="a b c d")) is None           # normal mode
    for page in ("about.py", "training.py", "tour.py"):
        assert _map(run_page(page, model="toy-reverse", text="a b c d", present=1)) is None


def _framed_links(fig: dict) -> set[tuple[str, str | None]]:
    """(page, kind) that a click opens on every map block inside a red frame: what the map says this view is
    about. The live map has no hrefs; each cell's invisible point carries its cell id, and nav.block_target
    says which page and view a click on it opens."""
    from viz.elements.nav import PAGES, block_target
    red = [s for s in fig["layout"]["shapes"] if s.get("line", {}).get("color") == "#d62728"]
    url_of = {page.file.rsplit("/", 1)[-1]: page.url for page in PAGES}
    found = set()
    for trace in fig["data"]:
        for x, y, cell in zip(trace.get("x") or [], trace.get("y") or [], trace.get("customdata") or []):
            if isinstance(cell, str) and any(s["x0"] <= x <= s["x1"] and s["y0"] <= y <= s["y1"] for s in red):
                page, params = block_target(cell)
                found.add((url_of[page], params.get("kind")))
    return found


def test_the_map_frames_the_view_the_feed_forward_page_shows():
    """The feed-forward page's label smoothing is about the output softmax, its dropout view about one kind of
    attention: the map framed the FFN blocks during both."""
    framed = {}
    for view, kind in (("ffn", None), ("smoothing", None), ("dropout", "decoder")):
        at = run_page("ffn.py", model="toy-reverse", text="a b c d", present=1, view=view, **({"kind": kind} if kind else {}))
        no_exceptions(at)
        framed[view] = _framed_links(_map(at))
    assert {page for page, _ in framed["ffn"]} == {"ffn"}
    assert framed["smoothing"] == {("decoding", None)}
    assert framed["dropout"] == {("explorer", "decoder")}


def test_the_start_page_has_a_next_page_in_presenter_mode():
    """The start page is served at / (url path ""): it found no place in the presenting order and drew no buttons."""
    at = run_page("home.py", model="toy-reverse", text="a b c d", present=1)
    no_exceptions(at)
    nxt = [link.proto for link in at.get("page_link") if link.proto.label.startswith("Next page")]
    assert [link.page for link in nxt] == ["tour"] and "present=1" in nxt[0].query_string


def _sentence_line(at) -> str:
    """The sentence line's two texts: the sentence, then the translation."""
    values = [m.value for m in at.markdown]
    i = next(i for i, v in enumerate(values) if v.startswith(("**Sentence:**", "**句子**：")))
    return values[i] + " " + values[i + 1]


def test_every_page_shows_the_sentence_and_its_translation_in_presenter_mode():
    """With the sidebar folded (a projector) only the start page showed them: a line over every page now."""
    for page in ("layernorm.py", "explorer.py", "about.py"):
        at = run_page(page, model="toy-reverse", text="a b c d", present=1, lang="zh")
        no_exceptions(at)
        line = _sentence_line(at)
        assert "a b c d" in line and at.session_state["_ctx"].trace.meta["translation"] in line
    at = run_page("explorer.py", model="toy-reverse", text="a b c d")
    assert not any(m.value.startswith("**Sentence:**") for m in at.markdown)           # normal mode: the sidebar


def test_the_teacher_changes_the_sentence_from_the_line_without_the_sidebar():
    at = run_page("explorer.py", model="toy-reverse", text="a b c d", present=1)
    box = next(a for a in at.text_area if a.key == "presenter-sentence")
    assert box.value == "a b c d"
    box.set_value("e f g").run()
    no_exceptions(at)
    ctx = at.session_state["_ctx"]
    assert ctx.text == "e f g" and ctx.trace.meta["translation"] in _sentence_line(at)
    assert "e f g" in _sentence_line(at) and at.query_params["text"] in ("e f g", ["e f g"])
    sidebar_box = next(a for a in at.sidebar.text_area if a.key != "presenter-sentence")
    assert sidebar_box.value == "e f g"                                               # one sentence, both boxes


def test_data_tables_follow_the_presenter_type_scale():
    """The heads table, step-through's row table and About's parameter table were data frames, drawn on a canvas
    at 12-14 px whatever presenter mode said, the step's 1 x d_head row cut off at the right edge. In presenter
    mode they are static tables that the presenter styles set at the chart floor (20 px), the row on its side."""
    import re
    from viz.frame.presenter import PRESENTER_CSS
    rule = re.search(r'table td, \.stMainBlockContainer table th \{ font-size: ([\d.]+)rem', PRESENTER_CSS)
    assert rule and float(rule.group(1)) * 16 >= 20
    at = run_page("step_through.py", model="toy-reverse", text="a b c d", present=1, step=0)
    no_exceptions(at)
    # the step's row is the deck's (issue 44: drawn in the browser, a static table at the view's text size, 20 px and
    # up in presenter mode): the query's input row x, d_model numbers, on its side
    _, body = browser_view_sent(at, "step")
    row = body["picks"]["0:0:0"]["tables"]["row"]
    assert len(row["columns"]) == 1 and len(row["index"]) > 6 and body["text_px"] >= 20
    # the scaling summary: the head's part of the deck, a static table too (in normal mode as well)
    assert not at.dataframe and len(body["picks"]["0:0"]["tables"]["scaling-summary"]["rows"]) == 2
    for page in ("heads.py", "about.py"):
        shown = run_page(page, model="toy-reverse", text="a b c d", present=1)
        no_exceptions(shown)
        normal = run_page(page, model="toy-reverse", text="a b c d")
        assert len(shown.table) > len(normal.table) and len(shown.dataframe) < len(normal.dataframe), page


def test_the_you_are_here_maps_thumbnails_are_large_enough_to_see_from_the_back():
    """The map under a page drew its attention thumbnails in compact rows, ~100 x 45-60 px on a projector: in
    presenter mode they take the full rows (the map's y is in px)."""
    at = run_page("layernorm.py", model="toy-reverse", text="a b c d", present=1)
    no_exceptions(at)
    thumbs = [tr for tr in _map(at)["data"] if tr.get("type") == "heatmap" and tr.get("name", "").startswith("attn.")]

    def rows(z) -> int:                      # plotly writes a numpy matrix as {"dtype", "bdata", "shape": "6, 6"}
        return int(str(z["shape"]).split(",")[0]) if isinstance(z, dict) else len(z)
    assert thumbs and min(tr["dy"] * rows(tr["z"]) for tr in thumbs) >= 85


def test_the_heads_table_on_the_projector_names_each_kind_in_a_word_and_promises_no_sorting():
    """Its static table took three lines a row for "编码器自注意力" (its box held three heads) and its heading
    said to click a column to sort, which a static table does not."""
    from viz.core.i18n import KIND_KEYS, message
    shown = run_page("heads.py", present=1, lang="zh")
    no_exceptions(shown)
    table = next(t.value for t in shown.table if "类型" in t.value.columns)
    assert set(table["类型"]) == {message("zh", keys.word) for keys in KIND_KEYS.values()}
    headings = [s.value for s in shown.subheader]
    assert message("zh", "heads.table.static") in headings and message("zh", "heads.table") not in headings
    normal = run_page("heads.py", lang="zh")
    assert message("zh", "heads.table") in [s.value for s in normal.subheader]


# -- one order of the notes (issue 46, item 3): the tour, presenter mode's Next and the lesson file share it ----------
NOTES = ["rnn", "zoo", "one_head", "multi_head", "tokens", "positional", "add_norm", "ffn", "decoder", "decoding",
         "regularize", "heads", "learn"]   # before the Transformer ... teacher forcing vs decoding, label smoothing


def test_the_tour_follows_the_order_of_the_notes():
    from viz.tour.steps import TOUR
    assert [step.key for step in TOUR] == NOTES


def test_presenter_next_walks_the_tours_views_in_its_order():
    """After the start page and the tour, Next walks every view the tour's steps link, in the steps' order."""
    from pathlib import Path
    from viz.elements.nav import PAGES
    from viz.tour.steps import TOUR, lesson_stops
    stops = lesson_stops([Path(p.file).name for p in PAGES])
    assert [s.page for s in stops[:2]] == ["home.py", "tour.py"]
    linked = [link for step in TOUR for link in step.links]
    toured = [s for s in stops if s in linked]
    assert [linked.index(s) for s in toured] == sorted(linked.index(s) for s in toured)
    assert {s.page for s in toured} == {stop.page for stop in linked}
    assert all(a.page != b.page for a, b in zip(toured, toured[1:]))   # one page's views in a row: one stop
    assert {s.page for s in stops} == {Path(p.file).name for p in PAGES}       # every page somewhere


def test_the_lesson_file_follows_the_same_order():
    from model.io.checkpoint import load_checkpoint
    from model.inference.pipeline import trace_sentence
    from viz.core.i18n import catalogue
    from viz.tour.lesson import lesson_html
    trace = trace_sentence(load_checkpoint("pretrained/toy-reverse", device="cpu"), "a b c d")
    headings = re.findall(r'<section id="step-\d+"><h2>([^<]*)</h2>', lesson_html(trace))
    titles = [html.escape(catalogue("en")[f"tour.{key}.title"]) for key in NOTES]
    assert [h.split(": ", 1)[1] for h in headings] == titles


def _next_link(at):
    return next(link.proto for link in at.get("page_link") if link.proto.label.startswith("Next page"))


def _prev_link(at):
    return next(link.proto for link in at.get("page_link") if link.proto.label.startswith("← Previous page"))


def test_presenter_next_goes_from_view_to_view_in_the_notes_order():
    at = run_page("step_through.py", model="toy-reverse", text="a b c d", present=1)
    no_exceptions(at)
    assert _next_link(at).page == "multihead" and _prev_link(at).page == "zoo"
    # the decoder's two views are one stop (a link to the page on view keeps its pickers: Next would not move)
    for kind in ("decoder", "cross"):
        at = run_page("explorer.py", model="toy-reverse", text="a b c d", present=1, kind=kind)
        no_exceptions(at)
        nxt = _next_link(at)
        assert nxt.page == "decoding" and "method=greedy" in nxt.query_string and "present=1" in nxt.query_string
        assert _prev_link(at).page == "ffn"
    at = run_page("ffn.py", model="toy-reverse", text="a b c d", present=1, view="dropout")
    assert _next_link(at).page == "heads" and _prev_link(at).page == "decoding"
    at = run_page("explorer.py", model="toy-reverse", text="a b c d", present=1, kind="encoder")
    assert _next_link(at).page == "positional" and _prev_link(at).page == "multihead"


@pytest.mark.parametrize("page, title_key", [("decoding.py", "decoding.how.title"), ("zoo.py", "zoo.what.title"),
                                             ("rnn.py", "rnn.explain.title")])
def test_in_presenter_mode_what_a_page_teaches_is_open_on_the_page(page, title_key):
    """Issue 46, item 2: how decoding works, the zoo's and the RNN's formulas needed a click and a scroll in front of
    the class; in presenter mode they are open under a heading, folded in an expander only otherwise."""
    from viz.core.i18n import catalogue
    title = catalogue("en")[title_key]
    folded = run_page(page, model="toy-reverse", text="a b c d")
    no_exceptions(folded)
    assert title in [e.label for e in folded.expander]
    shown = run_page(page, model="toy-reverse", text="a b c d", present=1)
    no_exceptions(shown)
    assert title not in [e.label for e in shown.expander] and title in [h.value for h in shown.subheader]
    assert len(shown.latex) >= len(folded.latex) >= 1       # its formulas drawn on the page


def test_the_lesson_file_is_named_per_language_and_has_a_presenter_size():
    """Issue 46, item 7: the English and the Chinese lesson saved under one name; a lesson for the projector at the
    app's presenter sizes (the normal one's chart text is 13-17 px)."""
    from model.io.checkpoint import load_checkpoint
    from model.inference.pipeline import trace_sentence
    from viz.tour.download import file_name
    from viz.tour.lesson import lesson_html
    names = {file_name("en-es", "The man went.", lang, presenter) for lang in ("en", "zh") for presenter in (0, 1)}
    assert len(names) == 4 and "lesson-en-es-the-man-went-zh.html" in names
    trace = trace_sentence(load_checkpoint("pretrained/toy-reverse", device="cpu"), "a b c d")
    sizes = {presenter: [int(n) for n in re.findall(r'font":\{[^{}]*?"size":(\d+)', lesson_html(trace, presenter=presenter))]
             for presenter in (False, True)}
    assert min(sizes[False]) < 20 <= min(sizes[True])
    assert '<body class="presenter">' in lesson_html(trace, presenter=True)


def test_presenter_mode_keeps_plotlys_toolbar_off_the_titles_and_the_sentence_on_one_line():
    """Issue 46, items 4 and 5: plotly's toolbar (shown while the pointer is over a chart) covered chart titles on the
    projector; a pasted 40-word sentence took four lines over every page. In presenter mode no toolbar, and the
    sentence line keeps to one line (ellipsis; the whole on hover and in the box that changes it)."""
    long = " ".join(["a b c d"] * 10)
    shown = run_page("decoding.py", model="toy-reverse", text=long, present=1)
    no_exceptions(shown)
    configs = [json.loads(c.proto.config) for c in shown.get("plotly_chart")]
    assert configs and not any(c.get("displayModeBar", True) for c in configs)
    i, line = next((i, m) for i, m in enumerate(shown.markdown) if m.value.startswith("**Sentence:**"))
    assert line.proto.wrap is False and long in line.value
    translation = shown.markdown[i + 1]
    assert translation.value.startswith("→") and translation.proto.wrap is False
    normal = run_page("decoding.py", model="toy-reverse", text="a b c d")
    assert all(json.loads(c.proto.config).get("displayModeBar", True) for c in normal.get("plotly_chart"))


def test_presenter_mode_draws_no_table_on_a_canvas():
    """Issue 46, item 6: the beam hypotheses (~14 px) and About's cost, metric and score tables were data frames,
    drawn on a canvas whatever presenter mode said; in presenter mode they are tables at the text's size."""
    shown = run_page("about.py", model="toy-reverse", text="a b c d", present=1)
    no_exceptions(shown)
    assert not shown.dataframe and shown.table
    assert run_page("about.py", model="toy-reverse", text="a b c d").dataframe     # normal mode
    # the decoding page's hypotheses: a static table of the browser-drawn view, at the view's text size
    shown = run_page("decoding.py", model="toy-reverse", text="a b c d", present=1, method="beam", beam=3)
    no_exceptions(shown)
    head, body = browser_view_sent(shown, "decoding")
    assert not shown.dataframe and body["picks"][str(head["pick"]["step"])]["tables"]["hypotheses"]["rows"]
