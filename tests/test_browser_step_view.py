"""The step-through page's heads and their nine steps drawn in the browser (issue 44), in Chromium: a step picked with
the mouse (Next ▶, ◀ Previous, a step in the row of steps) and with the keyboard (the arrow keys in the row), a layer and
a head with the mouse and the keyboard, in English and 中文, normal and presenter mode; each drawn with no script run and
written to the URL; a link's step= opens that step, the mask's cases drawn as MathML; a step picture's CSV downloads;
a query changed on the server keeps the reader's head and step; the formula block keeps only MathML. The server side:
tests/test_page_step_multihead.py."""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from browser_utils import check_projector_sizes, open_browser_view, view_drew
from test_browser_explorer_view import DRAWN_MS, LOAD_MS, SENTENCE
from viz.core.catalogue import message

pytestmark = pytest.mark.browser

VIEW = ".vz-deck"
MATHML = "http://www.w3.org/1998/Math/MathML"


def open_view(chromium, app_url: str, **params):
    query = urllib.parse.urlencode({"model": "en-es", "text": SENTENCE, **params})
    return open_browser_view(chromium, f"{app_url}/step?{query}", VIEW, LOAD_MS)


def drawn(page, step: int, layer: int = 0, head: int = 0) -> None:
    view_drew(page, VIEW, f"{layer}:{head}:{step}", DRAWN_MS)


def heading(page) -> str:
    return page.locator(f"{VIEW} .vz-text-step-heading").text_content()


def url_step(page) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["step"][0]


def url_pick(page) -> tuple[str, ...]:
    params = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    return tuple(params[name][0] for name in ("layer", "head", "step"))


def size_of(page, selector: str) -> float:
    return page.evaluate("(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)", selector)


@pytest.mark.parametrize("lang, present", [("en", False), ("zh", True)])
def test_a_step_with_the_mouse_and_the_keyboard_is_drawn_with_no_script_run(chromium, app_url, lang, present):
    page, runs = open_view(chromium, app_url, lang=lang, **({"present": 1} if present else {}))
    try:
        assert url_step(page) == "0" and page.locator(f"{VIEW} .vz-previous").is_disabled()
        name = lambda i: message(lang, "step.subheader", number=i + 1, total=9, name="")       # noqa: E731
        assert heading(page).startswith(name(0))
        assert page.locator(f"{VIEW} .vz-step-choice").count() == 9
        before = runs.count
        page.click(f"{VIEW} .vz-next")                                    # the mouse: Next ▶
        drawn(page, 1)
        assert heading(page).startswith(name(1)) and url_step(page) == "1"
        page.click(f"{VIEW} .vz-step-choice >> nth=4")                    # the row: "5 Q·Kᵀ"
        drawn(page, 4)
        assert heading(page).startswith(name(4)) and url_step(page) == "4"
        maths = page.locator(f"{VIEW} .vz-text-step-heading .vz-math")  # $QK^\top$: the server's characters, as text
        assert maths.text_content() == "QK⊤" and maths.locator("sup").text_content() == "⊤"
        assert "\\" not in heading(page) and "$" not in heading(page)
        page.focus(f"{VIEW} .vz-step-choice input:checked")              # the keyboard: the row's arrow keys
        page.keyboard.press("ArrowRight")
        drawn(page, 5)
        assert maths.text_content() == "÷√dk" and maths.locator("sub").text_content() == "k"     # $\div\sqrt{d_k}$
        note = page.locator(f"{VIEW} .vz-note .vz-math").first                 # a check's line: $QK^\top/\sqrt{d_k}$
        assert note.text_content() == "QK⊤/√dk" and note.locator("sup").text_content() == "⊤"
        page.keyboard.press("ArrowRight")
        drawn(page, 6)
        assert url_step(page) == "6" and page.evaluate("() => document.activeElement.value") == "6"
        page.keyboard.press("ArrowLeft")
        drawn(page, 5)
        page.click(f"{VIEW} .vz-previous")                               # ◀ Previous
        drawn(page, 4)
        assert url_step(page) == "4" and page.locator(f"{VIEW} .vz-step-choice input:checked").get_attribute("value") == "4"
        page.wait_for_timeout(300)
        assert runs.count == before                                       # no script run
        text, math = size_of(page, f"{VIEW} .vz-text-step-text"), size_of(page, f"{VIEW} .vz-formula math")
        choice = size_of(page, f"{VIEW} .vz-step-choice")
        assert (text >= 20 and choice >= 20 and math >= 24) if present else (text < 20 and math >= 18), (text, math)
    finally:
        page.close()


# why scaling matters' bars in sight: their heights
BARS_JS = """() => JSON.stringify(document.querySelector('.vz-deck .vz-fig-scaling')._fullData.map((t) => Array.from(t.y)))"""
# whether step 1's picture in sight is the figure it showed when first asked (kept, not drawn again)
SAME_INPUT_JS = """() => { const plot = document.querySelector('.vz-deck .vz-fig-picture-0');
  if (!window.vzInput) window.vzInput = plot.figure;
  return plot.figure === window.vzInput && !!plot._fullLayout; }"""


@pytest.mark.parametrize("lang, present", [("en", True), ("zh", False)])
def test_a_layer_and_a_head_with_the_mouse_and_the_keyboard_are_drawn_with_no_script_run(chromium, app_url, lang,
                                                                                        present):
    """The layer and head selects head the deck, above the steps; a head picked keeps the step; the layer's input
    (step 1) is every head's, its plot not drawn again for another head; why scaling matters is the head's."""
    page, runs = open_view(chromium, app_url, lang=lang, **({"present": 1} if present else {}))
    try:
        page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=LOAD_MS)
        # drawn ahead on step 5: the head's other eight steps (the step picked most), not another head's step 5
        page.click(f"{VIEW} .vz-step-choice >> nth=4")
        drawn(page, 4)
        plots = f"() => document.querySelector('{VIEW} .vz-fig-picture-0').parentNode.querySelectorAll('.vz-plot').length"
        page.wait_for_function(f"({plots})() >= 9", timeout=LOAD_MS)
        page.wait_for_timeout(1000)
        assert page.evaluate(plots) == 9
        page.click(f"{VIEW} .vz-step-choice >> nth=0")
        drawn(page, 0)
        assert page.locator(f"{VIEW} .vz-head option").all_text_contents() == [
            message(lang, "ui.head_n", h=h) for h in range(8)]                   # no mean: a step is one head's
        assert page.locator(f"{VIEW} .vz-layer option").count() == 3
        above = page.evaluate(f"""() => {{ const d = document.querySelector('{VIEW}');
          return d.querySelector('.vz-numbers').getBoundingClientRect().bottom
                 <= d.querySelector('.vz-steps').getBoundingClientRect().top; }}""")
        assert above                                                            # the head, then its steps
        before = runs.count
        assert page.evaluate(SAME_INPUT_JS)
        page.select_option(f"{VIEW} .vz-head", "5")                             # the mouse, on step 1
        drawn(page, 0, head=5)
        assert url_pick(page) == ("0", "5", "0")
        assert page.evaluate(SAME_INPUT_JS)                                     # the layer's input: not drawn again
        page.click(f"{VIEW} .vz-step-choice >> nth=7")                          # softmax of head 5
        drawn(page, 7, head=5)
        bars = page.evaluate(BARS_JS)
        assert [len(y) for y in json.loads(bars)] == [9, 9]          # two softmaxes over 9 keys (<modern> … </s>)
        page.focus(f"{VIEW} .vz-head")                                          # the keyboard
        page.keyboard.press("ArrowDown")
        drawn(page, 7, head=6)
        assert url_pick(page) == ("0", "6", "7") and page.evaluate(BARS_JS) != bars     # head 6's own scaling
        page.select_option(f"{VIEW} .vz-layer", "2")                            # another layer, the head and step kept
        drawn(page, 7, layer=2, head=6)
        assert url_pick(page) == ("2", "6", "7")
        assert heading(page).startswith(message(lang, "step.subheader", number=8, total=9, name=""))
        page.wait_for_timeout(300)
        assert runs.count == before                                             # no script run
        check_projector_sizes(page, f"{VIEW} .vz-head", f"{VIEW} .vz-fig-picture-0 .xtick text", present,
                              f"{VIEW} .vz-layer", f"{VIEW} .vz-text-step-text")
    finally:
        page.close()


def test_a_link_opens_the_mask_step_with_its_cases_as_mathml_and_its_csv_downloads(chromium, app_url):
    page, _ = open_view(chromium, app_url, kind="decoder", query=3, step=6, layer=1, head=2)
    try:
        drawn(page, 6, layer=1, head=2)
        assert heading(page).startswith("Step 7 of 9:")
        math = page.evaluate(f"""() => {{
          const math = document.querySelector('{VIEW} .vz-formula math');
          const table = math.querySelector('mtable');
          return {{ns: math.namespaceURI, table: !!table, rows: table ? table.querySelectorAll('mtr').length : 0,
                  text: math.textContent, tall: math.getBoundingClientRect().height,
                  line: parseFloat(getComputedStyle(math).fontSize)}};
        }}""")
        assert math["ns"] == MATHML and math["table"] and math["rows"] == 2, math
        assert "−∞" in math["text"] and "≤" in math["text"] and math["tall"] > 1.8 * math["line"], math   # two rows
        with page.expect_download(timeout=DRAWN_MS * 2) as download:
            page.click(f"{VIEW} .vz-csv[data-figure='picture-0']")
        assert download.value.suggested_filename == "en-es-decoder-L1-H2-masked.csv"
        lines = open(download.value.path(), encoding="utf-8").read().splitlines()
        assert lines[0].startswith(",0 <s>,1 ") and "-inf" in lines[4]       # row 3 of the masked scores: its future
    finally:
        page.close()


def test_a_query_changed_on_the_server_keeps_the_readers_step(chromium, app_url):
    """The query is a Streamlit widget: its run builds the deck of the new query and comes back with the pick the
    server last knew; the view keeps the reader's head and step, and never shows another meanwhile."""
    page, _ = open_view(chromium, app_url)
    try:
        page.wait_for_selector(f"{VIEW}[data-whole='1']", timeout=LOAD_MS)
        page.select_option(f"{VIEW} .vz-head", "4")
        drawn(page, 0, head=4)
        for step in (1, 2, 3):
            page.click(f"{VIEW} .vz-next")
            drawn(page, step, head=4)
        sentence = page.locator(VIEW).get_attribute("data-sig")
        page.evaluate(f"""() => {{ window.vzDrawn = [];
          new MutationObserver(() => window.vzDrawn.push(document.querySelector('{VIEW}').dataset.drawnPick))
            .observe(document.querySelector('{VIEW}'), {{attributes: true, attributeFilter: ['data-drawn-pick']}}); }}""")
        page.locator('[data-testid="stSelectbox"]:has-text("Query") [role="combobox"]').first.click()
        page.locator('[role="option"]:has-text("3 ▁sat")').first.click()
        page.wait_for_function("([s, sig]) => document.querySelector(s).dataset.sig !== sig"
                               " && document.querySelector(s).dataset.whole === '1'", arg=[VIEW, sentence],
                               timeout=LOAD_MS)
        drawn(page, 3, head=4)
        assert set(page.evaluate("() => window.vzDrawn")) <= {"0:4:3"}
        assert url_pick(page) == ("0", "4", "3")
        params = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
        assert params["query"] == ["3"]
    finally:
        page.close()


# -- the formula block: only MathML is inserted (browser_view.js mathNode) -------------------------------------------
SANITIZE_JS = """async (source) => {
  const url = URL.createObjectURL(new Blob([source + '\\nexport { mathNode };'], {type: 'text/javascript'}));
  const { mathNode } = await import(url);
  const ns = 'http://www.w3.org/1998/Math/MathML';
  const kept = (text) => { const node = mathNode(text); return node ? node.outerHTML : null; };
  return {
    good: kept(`<math xmlns="${ns}" display="block"><mrow><mi>x</mi><mo stretchy="false">(</mo></mrow></math>`),
    script: kept(`<math xmlns="${ns}"><mi>x</mi><script>window.hit = 1</script><foo>y</foo>` +
                 `<mo onclick="window.hit = 2" href="javascript:x" stretchy="true">+</mo></math>`),
    html: kept(`<math xmlns="${ns}"><mi><img xmlns="http://www.w3.org/1999/xhtml" src="x" onerror="window.hit = 3"/></mi>` +
               `<semantics><annotation-xml encoding="text/html"><b xmlns="http://www.w3.org/1999/xhtml">b</b>` +
               `</annotation-xml></semantics></math>`),
    text: kept(`<math xmlns="${ns}"><mtext>&lt;script&gt;alert(1)&lt;/script&gt;</mtext></math>`),
    bare: kept('<script>window.hit = 4</script>'),
    notMath: kept('<math xmlns="http://www.w3.org/1999/xhtml"><mi>x</mi></math>'),
    broken: kept(`<math xmlns="${ns}"><mi>x</math>`),
    hit: window.hit || 0,
  };
}"""


def test_the_formula_block_keeps_only_mathml(chromium):
    source = (Path(__file__).resolve().parents[1] / "viz" / "figures" / "browser_view.js").read_text(encoding="utf-8")
    page = chromium.new_page()
    try:
        page.set_content("<html><body></body></html>")
        found = page.evaluate(SANITIZE_JS, source)
    finally:
        page.close()
    assert found["good"].startswith("<math") and 'stretchy="false"' in found["good"] and "<mi>x</mi>" in found["good"]
    assert "script" not in found["script"] and "foo" not in found["script"] and "onclick" not in found["script"]
    assert "href" not in found["script"] and 'stretchy="true"' in found["script"]     # kept what is whitelisted
    assert "img" not in found["html"] and "onerror" not in found["html"] and "semantics" not in found["html"]
    assert "&lt;script&gt;" in found["text"] and "<script" not in found["text"]       # text stays text
    assert found["bare"] is None and found["notMath"] is None and found["broken"] is None
    assert found["hit"] == 0                                                        # nothing ran
