"""The main path in a real browser: type a sentence, see the maps with its tokens, open a head, deep link,
and user text never runs as HTML."""
import csv
import shutil
import urllib.parse

import pytest

from browser_utils import CHROMIUM, axis_labels, wait_for_app
from model.capture.trace import Trace

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM):  # CI installs it (.ci/run); a laptop without it says so loudly
    pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)


def _open(chromium, url):
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.on("dialog", lambda d: (_ for _ in ()).throw(AssertionError(f"a dialog opened: {d.message}")))
    page.goto(url)
    wait_for_app(page)
    page.wait_for_selector(".js-plotly-plot", timeout=240_000)
    return page


def test_type_a_sentence_and_see_its_tokens(chromium, app_url):
    page = _open(chromium, f"{app_url}/explorer?model=toy-reverse")
    box = page.get_by_label("Sentence", exact=True)
    box.fill("c a f e")
    box.press("Control+Enter")
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .xtick text')]"
                           ".some(e => e.textContent === '3 e')", timeout=60_000)
    wait_for_app(page)
    labels = axis_labels(page, "x")
    assert {"0 c", "1 a", "2 f", "3 e", "4 </s>"} <= set(labels)
    assert "e f a c" in page.inner_text('[data-testid="stSidebar"]')    # the translation is shown
    # open one head large: head 2 (of layer 0, the first shown)
    page.get_by_label("Head", exact=True).select_option("2")          # the explorer view's picker (in the browser)
    page.wait_for_function("() => [...document.querySelectorAll('.gtitle')]"
                           ".some(e => e.textContent.includes('head 2'))", timeout=60_000)
    wait_for_url_pick(page, layer="0", head="2")
    # ...or click a thumbnail of the all-heads grid: layer 0, head 1, on its bottom-right cell
    # (5 tokens: 2 cells right of and below the tile's centre), not on the click target itself
    x, y = page.evaluate(CELL_JS, [0, 1, 2])
    page.mouse.click(x, y)
    page.wait_for_function("() => [...document.querySelectorAll('.gtitle')]"
                           ".some(e => e.textContent.includes('layer 0, head 1'))", timeout=60_000)
    wait_for_url_pick(page, layer="0", head="1")
    # the large map's numbers as CSV: token labels on both sides, rows of weights summing to 1
    wait_for_app(page)
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download CSV").first.click()
    rows = list(csv.reader(open(download.value.path(), encoding="utf-8")))
    assert rows[0][1:] == ["0 c", "1 a", "2 f", "3 e", "4 </s>"] and [r[0] for r in rows[1:]] == rows[0][1:]
    assert all(abs(sum(map(float, r[1:])) - 1) < 1e-4 for r in rows[1:])
    assert download.value.suggested_filename.endswith("-L0-H1.csv")
    wait_for_app(page)                                       # the run that made the CSV is over
    # the whole trace from the sidebar: the export format, with this sentence's tokens
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download the whole trace (.npz)").click()
    trace = Trace.load(download.value.path())
    assert trace.meta["src_tokens"] == ["c", "a", "f", "e", "</s>"]
    assert trace["encoder.layers.0.self_attn.hook_pattern"].shape == (4, 5, 5)
    page.close()


def wait_for_url_pick(page, **pick: str) -> None:
    """Until the URL names `pick` (the browser writes it at once; a server's answer to an older pick, still on its
    way, may write that one for a moment before the browser tells the newer one)."""
    page.wait_for_function("(pick) => { const q = new URL(location.href).searchParams;"
                           " return Object.entries(pick).every(([k, v]) => q.get(k) === v); }", arg=pick,
                           timeout=60_000)


# Page coordinates of a point of the all-heads grid: (layer, head)'s click target, moved by `cells`
# cells right and down.
CELL_JS = """([layer, head, cells]) => {
  const gd = document.querySelector('.js-plotly-plot');
  const targets = gd.data[1], full = gd._fullLayout, box = gd.getBoundingClientRect();
  const n = targets.customdata.length;
  const i = [...Array(n).keys()].find(k => targets.customdata[k][0] === layer && targets.customdata[k][1] === head);
  return [box.left + full._size.l + full.xaxis.l2p(targets.x[i] + cells),
          box.top + full._size.t + full.yaxis.l2p(targets.y[i] + cells)];
}"""


def test_deep_link_reproduces_the_view(chromium, app_url):
    query = urllib.parse.urlencode({"model": "toy-reverse", "text": "b d h", "kind": "cross", "layer": 1, "head": 3})
    page = _open(chromium, f"{app_url}/explorer?{query}")
    page.wait_for_function("() => [...document.querySelectorAll('.gtitle')]"
                           ".some(e => e.textContent.includes('Cross-attention') && e.textContent.includes('head 3'))",
                           timeout=60_000)
    assert {"0 b", "1 d", "2 h"} <= set(axis_labels(page, "x"))
    assert {"0 h", "1 d", "2 b"} <= set(axis_labels(page, "y"))           # rows: predicted tokens
    page.close()


def test_switching_to_chinese_keeps_the_view(chromium, app_url):
    query = urllib.parse.urlencode({"model": "toy-reverse", "text": "b d h", "kind": "cross", "layer": 1, "head": 3})
    page = _open(chromium, f"{app_url}/explorer?{query}")
    page.locator('[data-testid="stSidebar"]').get_by_text("中文", exact=True).click()
    page.wait_for_function("() => document.querySelector('h1') && document.querySelector('h1').innerText"
                           ".includes('注意力浏览器')", timeout=60_000)
    wait_for_app(page)
    assert "lang=zh" in page.url and "kind=cross" in page.url and "head=3" in page.url
    assert {"0 b", "1 d", "2 h"} <= set(axis_labels(page, "x"))         # the same map, tokens untranslated
    assert page.get_by_label("句子", exact=True).input_value() == "b d h"
    page.close()


def test_html_in_the_sentence_is_shown_not_run(chromium, app_url):
    payload = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.on("dialog", lambda d: (_ for _ in ()).throw(AssertionError(f"a dialog opened: {d.message}")))
    page.goto(f"{app_url}/explorer?" + urllib.parse.urlencode({"model": "toy-reverse", "text": payload}))
    wait_for_app(page)
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('<img')",
                           timeout=240_000)
    wait_for_app(page)
    assert page.title() != "pwned"
    assert page.locator("img[src=x]").count() == 0 and page.locator("script:text('pwned')").count() == 0
    assert "<img" in page.inner_text('[data-testid="stMain"]')          # quoted as the characters typed
    page.close()


def test_shortcodes_in_url_parameters_stay_text(chromium, app_url):
    """`:-1:` and `:material/delete:` in a parameter are quoted in the warning, not drawn as 👎 or an icon."""
    page = chromium.new_page(viewport={"width": 1500, "height": 1000})
    page.goto(f"{app_url}/heads?" + urllib.parse.urlencode(
        {"model": "toy-reverse", "text": "a b", "tab": "ablation", "ablate": "cross:-1:0"}))
    wait_for_app(page)
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('ablate')",
                           timeout=240_000)
    shown = page.inner_text('[data-testid="stMain"]').replace("\u2060", "")
    assert "cross:-1:0" in shown and "👎" not in shown
    page.close()


def test_uploaded_file_name_and_content_are_shown_not_run(chromium, app_url):
    """HTML in an uploaded file's name and in its sentences stays text; the 1 MB limit is announced."""
    page = _open(chromium, f"{app_url}/explorer?model=toy-reverse")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert page.evaluate(UPLOADER_WORDS_JS) == ["Upload", "1MB per file • TXT, CSV"]   # config.toml maxUploadSize
    uploader = '[data-testid="stSidebar"] input[type=file]'
    evil_name = "<img src=x onerror=document.title='pwned'>.txt"          # (Chromium turns '"' into %22)
    page.set_input_files(uploader, files=[{"name": evil_name, "mimeType": "text/plain", "buffer": b"\x00\x01bin"}])
    page.wait_for_function("() => document.querySelector('[data-testid=\"stSidebar\"]').innerText"
                           ".includes('looks like a binary file')", timeout=120_000)
    assert evil_name in sidebar.inner_text()                             # the name, quoted as it is
    payload = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
    page.set_input_files(uploader, files=[{"name": "<b>list</b>.txt", "mimeType": "text/plain",
                                           "buffer": f"c a f e\n{payload}\n".encode()}])
    page.wait_for_function("() => document.querySelector('[data-testid=\"stSidebar\"]').innerText"
                           ".includes('2 sentences in the file')", timeout=120_000)
    box = page.get_by_label("2 sentences in the file")
    box.click()                                                          # the first click opens it (it did not)
    page.get_by_role("option").first.wait_for(timeout=10_000)
    assert page.get_by_role("option").count() == 2
    box.press("ArrowDown")                                               # the second line: the payload
    box.press("ArrowDown")
    box.press("Enter")
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                           ".includes('could not read')", timeout=120_000)
    wait_for_app(page)
    assert page.get_by_label("Sentence", exact=True).input_value() == payload
    assert "'<img', 'src=x'" in page.inner_text('[data-testid="stMain"]')  # quoted in the warning, as typed
    assert "<b>list</b>.txt" in sidebar.inner_text()
    assert page.title() != "pwned"
    assert page.locator("img[src=x]").count() == 0 and page.locator("b:text('list')").count() == 0
    page.close()


CHECKED_JS = """() => [...document.querySelectorAll('[data-testid="stRadio"], .vz-kind-buttons')].map(g =>
    [...g.querySelectorAll('label')].filter(l => l.querySelector('input:checked')).map(l => l.innerText).join('|'))"""


def test_a_file_in_the_sidebar_says_pick_a_sentence_and_feeds_head_analysis(chromium, app_url):
    """After an upload nothing changed and nothing said why; Head analysis' "many sentences (file)" asked for
    the file again."""
    page = _open(chromium, f"{app_url}/heads?model=toy-reverse&text=c+a+f+e")
    sidebar = page.locator('[data-testid="stSidebar"]')
    page.set_input_files('[data-testid="stSidebar"] input[type=file]',
                         files=[{"name": "toy.txt", "mimeType": "text/plain", "buffer": b"a b c\nd e f\n"}])
    page.get_by_text("Pick a sentence from the file above").wait_for(timeout=120_000)
    assert "2 sentences in the file" in sidebar.inner_text()
    page.get_by_text("many sentences (file)").click()
    page.get_by_text("the file uploaded in the sidebar").wait_for(timeout=120_000)
    main = page.locator('[data-testid="stMain"]')
    assert "toy.txt" in main.inner_text() and main.locator("input[type=file]").count() == 0
    page.get_by_role("button", name="Compute statistics over 2 sentences").click(timeout=120_000)
    page.get_by_text("Averaged over 2 sentences of toy.txt").wait_for(timeout=120_000)
    page.close()


def test_switching_to_chinese_keeps_each_radio_choice(chromium, app_url):
    """Issue 27, finding 5: the radio groups showed no selection after 中文 (Streamlit keeps a radio's choice as
    its label's text); each keeps its choice, in its Chinese label."""
    query = urllib.parse.urlencode({"model": "toy-reverse", "text": "b d h"})
    page = _open(chromium, f"{app_url}/explorer?{query}")
    page.get_by_text("Cross-attention (decoder → encoder)", exact=True).first.click()
    page.wait_for_function("() => location.href.includes('kind=cross')", timeout=60_000)
    wait_for_app(page)
    page.locator('[data-testid="stSidebar"]').get_by_text("中文", exact=True).click()
    page.wait_for_function("() => location.href.includes('lang=zh')", timeout=60_000)
    page.wait_for_function("() => document.querySelector('h1') && document.querySelector('h1').innerText"
                           ".includes('注意力浏览器')", timeout=60_000)
    wait_for_app(page)
    # the explorer's view keeps its pick (the server ran for the language with the pick it last knew: the view
    # tells it the pick, one run, then shows it in Chinese)
    # the view draws the Chinese body a moment after the run (it unzips it): wait for its kind radios in Chinese
    page.wait_for_function("""() => [...document.querySelectorAll('.vz-kind-buttons label')]
        .some((l) => l.querySelector('input:checked') && l.innerText === '交叉注意力（解码器 → 编码器）')""",
                           timeout=20_000)
    page.wait_for_function("() => ((document.querySelector('.vz-explorer') || {dataset: {}}).dataset.drawnPick || '')"
                           ".startsWith('cross')", timeout=60_000)
    checked = page.evaluate(CHECKED_JS)
    assert "交叉注意力（解码器 → 编码器）" in checked and "" not in checked, checked
    assert page.evaluate(UPLOADER_WORDS_JS) == ["上传", "每个文件不超过 1MB • TXT、CSV"]   # issue 26.6
    page.close()


# What the sidebar uploader shows: the button's and the limits' text as drawn (a zero-size text shows its ::after)
UPLOADER_WORDS_JS = """() => [
    '[data-testid=stFileUploaderDropzone] button [data-testid=stMarkdownContainer] p',
    '[data-testid=stFileUploaderDropzoneInstructions] span'].map(sel => {
        const el = document.querySelector('[data-testid="stSidebar"] ' + sel);
        const after = getComputedStyle(el, '::after').content;
        return getComputedStyle(el).fontSize === '0px' ? JSON.parse(after) : el.innerText; })"""
