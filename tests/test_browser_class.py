"""A live class in a real browser: a teacher's projector page and two students' phones (one in 中文, from its
browser's language, typing the code on the start page; one by the link) follow a head change and a page change,
leave and come back, answer (a second tab of the same browser is the same student: it shows the answer that
counted), see the tally and the reveal, after which the proof is on every first screen and the tally is one line;
the teacher closes the question. The lesson's download covers no class control. With
TAKE_SCREENSHOTS=docs/screenshots the run saves the README's pictures (class-*.png, zh/class-*.png)."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from browser_utils import CHROMIUM, wait_for_app
from viz.core.i18n import message

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM):
    pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)

LOAD_MS = 240_000            # a page's first run on a loaded 2-core machine
FOLLOW_MS = 60_000           # a followed change (about 2 s on an idle machine; measured and printed)
PHONE = {"width": 390, "height": 844}
PHONE_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0 "
               "Mobile Safari/537.36")                      # the app plans a phone's charts for its column
HEAD_SELECT = ".vz-head"     # the explorer view's head picker (viz/figures/browser_view.js): its shown option


def shots_dir() -> Path | None:
    folder = os.environ.get("TAKE_SCREENSHOTS")
    return Path(folder) if folder else None


def snap(page, name: str) -> None:
    folder = shots_dir()
    if folder is not None:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(1500)       # plotly's last relayout
        page.screenshot(path=str(folder / name))


def open_page(context, url: str):
    page = context.new_page()
    page.goto(url)
    wait_for_app(page)
    return page


def shows(page, selector: str, text: str, timeout: int = FOLLOW_MS) -> float:
    """Seconds until the element `selector` holds `text`."""
    start = time.time()
    page.wait_for_function("([s, t]) => [...document.querySelectorAll(s)].some(e => e.innerText.includes(t))",
                           arg=[selector, text], timeout=timeout)
    return time.time() - start


def shows_head(page, label: str, timeout: int = FOLLOW_MS) -> float:
    """Seconds until the page's head picker shows `label`."""
    start = time.time()
    page.wait_for_function("([s, v]) => { const box = document.querySelector(s); "
                           "return !!box && box.selectedIndex >= 0 && box.options[box.selectedIndex].text === v; }",
                           arg=[HEAD_SELECT, label], timeout=timeout)
    return time.time() - start


def on_page(page, path: str, timeout: int = FOLLOW_MS) -> None:
    """Wait until `page` shows the app page `path`: Streamlit moves pages with the history API (no navigation
    event for wait_for_url to see), so the address is polled."""
    page.wait_for_function("p => location.pathname.replace(/\\/$/, '').endsWith('/' + p)", arg=path, timeout=timeout)


def pick_head(teacher, head: int) -> None:
    teacher.locator(HEAD_SELECT).select_option(str(head))


def recording(page) -> list:
    """The websocket messages `page` receives from now on (to be opened after this)."""
    frames = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    return frames


def whole_runs(frames) -> int:
    """How many runs of the whole page `frames` start (a run's new_session names no fragment; a poll's names its
    fragment)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    messages = [ForwardMsg.FromString(f) for f in frames if isinstance(f, bytes)]
    return sum(1 for m in messages if m.WhichOneof("type") == "new_session" and not m.metadata.run.fragment_ids)


def test_a_class_in_three_browsers(chromium, app_url):
    teacher_ctx = chromium.new_context(viewport={"width": 1280, "height": 720})
    teacher = open_page(teacher_ctx, f"{app_url}/explorer?present=1")
    teacher.wait_for_selector(".js-plotly-plot", timeout=LOAD_MS)
    teacher.get_by_test_id("stExpandSidebarButton").click()
    teacher.get_by_text("Live class", exact=True).click()
    teacher.get_by_role("button", name="Start a class").click()
    teacher.wait_for_selector("text=Scan to join", timeout=LOAD_MS)
    teacher.locator("[data-testid=stSidebar]").hover()
    teacher.get_by_test_id("stSidebarCollapseButton").locator("button").click()   # the projector: sidebar folded
    wait_for_app(teacher)
    link = teacher.locator("[data-testid=stMain] code").filter(has_text="?class=").first.inner_text().strip()
    code = link.rsplit("=", 1)[1]
    secret = next(c["value"] for c in teacher_ctx.cookies() if c["name"] == "tviz_teach").split(":", 1)[1]
    assert link.startswith(app_url) and secret not in link and secret not in teacher.url
    assert teacher.locator("[data-testid=stMain] img").first.bounding_box()["width"] >= 400   # the QR code, large
    snap(teacher, "class-teacher.png")

    students = {}
    context = chromium.new_context(viewport=PHONE, user_agent=PHONE_AGENT)
    page = context.new_page()
    frames = recording(page)
    page.goto(link)
    wait_for_app(page)
    students["en"] = (context, page)
    context = chromium.new_context(viewport=PHONE, user_agent=PHONE_AGENT, locale="zh-CN")
    phone = open_page(context, app_url)                                 # the start page, in its browser's language
    box = phone.locator(".st-key-class-join-home input")
    assert box.bounding_box()["y"] < PHONE["height"]                    # on the first screen
    box.fill(f"{code[:3].lower()} {code[3:]}")                          # as typed off a projector
    box.press("Enter")
    students["zh"] = (context, phone)
    en, zh = students["en"][1], students["zh"][1]
    for page in (en, zh):
        page.wait_for_url("**/explorer?**", timeout=LOAD_MS)
        page.wait_for_selector(".js-plotly-plot", timeout=LOAD_MS)
    assert "lang=zh" in zh.url and "present" not in zh.url
    shows(zh, "h1", "注意力浏览器")
    shows(teacher, ".st-key-class-teacher", "following: 2")

    waited = {}
    en.wait_for_selector(".vz-explorer[data-whole='1']", timeout=LOAD_MS)   # its last run of the page is done
    seen = len(frames)
    pick_head(teacher, 1)
    start = time.time()
    shows_head(en, "head 1")
    waited["head en"] = time.time() - start
    shows_head(zh, "头 1")
    waited["head zh"] = time.time() - start
    assert whole_runs(frames[:seen]) > 0         # the join's runs (what the count counts)
    assert whole_runs(frames[seen:]) == 0        # the poll handed the pick to the view: no run of the page
    print("head change followed after (s):", {k: round(v, 1) for k, v in waited.items()})
    start = time.time()
    teacher.get_by_text("Inside a layer", exact=True).first.click()
    teacher.get_by_role("menuitem", name="Positional encoding").click()
    on_page(teacher, "positional")
    on_page(en, "positional")
    waited["page en"] = time.time() - start
    on_page(zh, "positional")
    waited["page zh"] = time.time() - start
    print("follow latency (s, teacher's click to the student's redraw):", {k: round(v, 1) for k, v in waited.items()})
    assert "lang=zh" in zh.url and "class=" in zh.url

    en.get_by_role("button", name="Explore on my own").click()
    shows(teacher, ".st-key-class-teacher", "exploring on their own: 1")
    teacher.get_by_text("Attention", exact=True).first.click()
    teacher.get_by_role("menuitem", name="Attention explorer").click()
    on_page(zh, "explorer")
    en.wait_for_timeout(3000)
    assert "/positional" in en.url                                      # exploring: not taken along
    en.get_by_role("button", name="Follow again").click(timeout=LOAD_MS)   # a loaded machine: the explore run first
    on_page(en, "explorer")
    wait_for_app(teacher)

    teacher.get_by_text("Show the join code", exact=True).click()       # everyone is in: the tally gets the room
    wait_for_app(teacher)
    teacher.get_by_role("button", name="Ask the class").click()
    teacher.get_by_role("button", name="Ask", exact=True).click()
    wait_for_app(teacher)
    teacher.keyboard.press("Escape")                                    # the question form folds away
    shows(en, ".st-key-class-student", "Question:")
    shows(zh, ".st-key-class-student", "问题：")
    en.locator(".st-key-class-ask-choices button").nth(0).click()
    zh.locator(".st-key-class-ask-choices button").nth(1).click()
    shows(en, ".st-key-class-student", "Your answer")
    second_tab = open_page(students["en"][0], link)                    # the same browser: the same student
    shows(second_tab, ".st-key-class-student", "Your answer", timeout=LOAD_MS)   # the one that counted
    assert second_tab.locator(".st-key-class-ask-choices button").count() == 0
    shows(teacher, ".st-key-class-teacher", "Answers: 2")               # two students, two answers
    teacher.locator(".st-key-class-teacher").scroll_into_view_if_needed()
    snap(teacher, "class-tally.png")
    for page, name in ((en, "class-student.png"), (zh, "zh/class-student.png")):
        page.wait_for_selector(".js-plotly-plot", timeout=LOAD_MS)      # a loaded machine: plotly draws late
        box = page.locator(".js-plotly-plot").first.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1, box   # the picture fits a phone
        title = page.locator(".js-plotly-plot .gtitle").first.bounding_box()
        assert title["x"] + title["width"] <= box["x"] + box["width"] + 1, title     # and its title (wrapped)
        snap(page, name)

    laptops = {}                                                        # students at 1366×768, for the reveal's pictures
    for lang in ("en", "zh"):
        context = chromium.new_context(viewport={"width": 1366, "height": 768}, locale="zh-CN" if lang == "zh" else "en-US")
        laptops[lang] = open_page(context, link)
        laptops[lang].wait_for_selector(".js-plotly-plot", timeout=LOAD_MS)
    teacher.get_by_role("button", name="Reveal the model's answer").click()
    shows(en, ".st-key-class-student", "You answered")                  # and whether it was the model's
    shows(zh, ".st-key-class-student", "你的答案是")
    shows(teacher, ".st-key-class-teacher", "The model's answer")
    wait_for_app(teacher)
    for lang, page in laptops.items():
        shows(page, ".st-key-class-student", message(lang, "class.revealed", answer="").split("**")[0])
    everyone = (teacher, en, zh, laptops["en"], laptops["zh"])
    for page in everyone:
        wait_for_app(page)
    snap(teacher, "class-reveal.png")
    snap(en, "class-student-reveal.png")
    snap(zh, "zh/class-student-reveal.png")
    snap(laptops["en"], "class-student-laptop-reveal.png")
    snap(laptops["zh"], "zh/class-student-laptop-reveal.png")
    for page in everyone:                                               # the proof on every first screen
        top = page.locator("[data-testid=stMain] .js-plotly-plot").first.bounding_box()["y"]
        print("after the reveal, the proof's picture starts at y =", round(top), "of", page.viewport_size["height"])
        assert top < page.viewport_size["height"] - (0 if page in (en, zh) else 150), (page.url, top)   # a phone: its pickers first (issue 46)
    assert teacher.locator(".st-key-class-teacher .js-plotly-plot").count() == 0   # the tally folded to a line
    teacher.get_by_role("button", name="Close the question").click()
    for page in (en, zh):
        page.wait_for_function("() => !document.querySelector('.st-key-class-student').innerText.includes('答案')"
                               " && !document.querySelector('.st-key-class-student').innerText.includes('answer')",
                               timeout=FOLLOW_MS)


@pytest.mark.parametrize("width", [390, 1280, 1366])
def test_the_lesson_download_covers_no_class_control(chromium, app_url, width):
    """At the top right it covered "Ask the class" and the end of "Show the join code" / "Follow again": a click
    there downloaded the lesson. In a class it sits in the class bar's row."""
    context = chromium.new_context(viewport={"width": width, "height": 800})
    teacher = open_page(context, f"{app_url}/explorer")
    if width < 640:                                                     # a phone's sidebar starts folded
        teacher.get_by_test_id("stExpandSidebarButton").click(timeout=LOAD_MS)
    teacher.get_by_text("Live class", exact=True).click(timeout=LOAD_MS)
    teacher.get_by_role("button", name="Start a class").click()
    teacher.wait_for_selector("text=Scan to join", timeout=LOAD_MS)
    if width < 640:
        teacher.get_by_test_id("stSidebarCollapseButton").locator("button").click()
    code = teacher.locator("[data-testid=stMain] code").filter(has_text="?class=").first.inner_text().rsplit("=", 1)[1]
    student = open_page(chromium.new_context(viewport={"width": width, "height": 800}), f"{app_url}/?class={code}")
    student.wait_for_selector(".st-key-class-student button", timeout=LOAD_MS)
    for page, bar in ((teacher, ".st-key-class-teacher"), (student, ".st-key-class-student")):
        lesson = page.locator(".st-key-lesson-download button:visible").first
        lesson.wait_for(timeout=LOAD_MS)
        box = lesson.bounding_box()
        for control in page.locator(f"{bar} button, {bar} label").all():
            if "lesson" in (control.get_attribute("class") or "") or not control.is_visible():
                continue
            other = control.bounding_box()
            if other is None or control.inner_text() == lesson.inner_text():
                continue
            overlap = (min(box["x"] + box["width"], other["x"] + other["width"]) - max(box["x"], other["x"]),
                       min(box["y"] + box["height"], other["y"] + other["height"]) - max(box["y"], other["y"]))
            assert overlap[0] <= 0 or overlap[1] <= 0, (width, control.inner_text(), box, other)
