"""A live class in Chromium through the lecture hall (deploy/serve.py: nginx, 2 workers, their Redis): a teacher's
projector page (presenter mode) and a student's page on different workers; the student answers the teacher's
question and follows a page change; the student's worker is SIGKILLed in the middle: the student's page reconnects
through nginx to the other worker, is the same student (their cookie), shows the answer that counted and follows the
teacher's next change. Then the teacher's worker is killed: the projector comes back as the teacher, in presenter
mode, on the same view, and the student still follows."""
from __future__ import annotations

import os
import signal
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
from harness import NGINX, Deployment, worker_healthy  # noqa: E402

from viz.core.i18n import message  # noqa: E402

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(NGINX is None, reason="nginx binary not found (CI: apt-get install -y nginx)")]

TIMEOUT_MS = 240_000
FOLLOW_MS = 60_000           # a change reaches a following screen in ~1 s; a loaded 2-core machine takes longer


def en(key: str, **fields) -> str:
    return message("en", key, **fields)


def open_pinned(chromium, hall: Deployment, path: str, avoid: str | None = None):
    """A new browser on `path` through nginx, on any worker but `avoid` (new browsers go round-robin).
    Returns (context, page, the worker that served it)."""
    from browser_utils import wait_for_app
    for _ in range(12):
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        worker = page.goto(hall.base + path).headers.get("x-upstream", "")
        if worker != avoid:
            wait_for_app(page)
            return context, page, worker
        context.close()
    raise AssertionError(f"12 new browsers all pinned to {avoid}")


def path_of(page) -> str:
    return urllib.parse.urlparse(page.url).path.strip("/")


def wait_for(page, condition, what: str, timeout_ms: int = FOLLOW_MS) -> None:
    """Poll `condition` while Playwright hands the page's events over."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not condition():
        assert time.monotonic() < deadline, what
        page.wait_for_timeout(250)


def go(page, url_path: str) -> None:
    """The top navigation: open the Attention section's menu, click the page's link."""
    page.locator('[data-testid="stHeader"]').get_by_text(en("nav.section.Attention"), exact=True).first.click()
    page.locator(f'a[href$="/{url_path}"]').first.click()


def step(what: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {what}", flush=True)


def choices(page):
    return page.locator(".st-key-class-ask-choices button")


def test_a_student_follows_and_answers_once_through_a_worker_kill(tmp_path):
    from browser_utils import browser
    from viz.classroom.redis_store import RedisStore
    from viz.classroom.store import Question
    (tmp_path / "run").mkdir()
    with Deployment(workers=2, run_dir=tmp_path / "run") as hall, browser() as chromium:
        store = RedisStore(hall.redis_url())
        teacher_ctx, teacher, teacher_worker = open_pinned(chromium, hall,
                                                           "/explorer?model=toy-reverse&text=b+a+d+c&present=1")
        step("teacher's page drawn")
        teacher.get_by_test_id("stExpandSidebarButton").click(timeout=TIMEOUT_MS)
        teacher.get_by_text(en("class.sidebar"), exact=True).click(timeout=TIMEOUT_MS)
        teacher.get_by_role("button", name=en("class.start")).click(timeout=TIMEOUT_MS)
        link = teacher.locator("code", has_text="?class=").first
        link.wait_for(state="attached", timeout=TIMEOUT_MS)          # (also in the folded sidebar expander)
        code = urllib.parse.parse_qs(urllib.parse.urlparse(link.text_content().strip()).query)["class"][0]

        step("class started")
        _, student, student_worker = open_pinned(chromium, hall, f"/?class={code}", avoid=teacher_worker)
        wait_for(student, lambda: path_of(student) == "explorer", "the student never reached the teacher's page")
        student.get_by_text(en("class.following", code=code).replace("**", "")).wait_for(timeout=FOLLOW_MS)

        step("student follows; the teacher asks")
        # The teacher's question, as the ask form sends it (the form itself: tests/test_page_class.py; here the
        # bar's polls redraw its popover every second or two, and Playwright never finds it stable to click)
        kept = next(c["value"] for c in teacher_ctx.cookies() if c["name"] == "tviz_teach")   # the teacher's browser
        assert kept.startswith(code + ":") and kept.split(":", 1)[1] not in teacher.url
        secret = kept.split(":", 1)[1]
        store.ask(code, secret, Question("next_token", {"written": "b"}, ("a", "b", "c", "d"), 0, "explorer", {}))
        choices(student).first.wait_for(timeout=FOLLOW_MS)
        choices(student).first.click()
        student.get_by_text("Your answer:").wait_for(timeout=FOLLOW_MS)
        question = store.question(code)
        assert sum(store.tally(code, question.id)) == 1

        step("answered once")
        go(teacher, "multihead")                                                     # a page change
        wait_for(student, lambda: path_of(student) == "multihead", "the student did not follow the page change")

        step("student followed the page change")
        victim = next(w for w in hall.state()["workers"] if f"127.0.0.1:{w['port']}" == student_worker)
        os.kill(victim["pid"], signal.SIGKILL)
        step("student's worker killed")
        go(teacher, "explorer")                                                      # the next change
        wait_for(student, lambda: path_of(student) == "explorer", "after the kill the student did not follow",
                 TIMEOUT_MS)
        # Its new session on the other worker is the same student (the cookie): the answer that counted, no choices
        student.get_by_text("Your answer:").wait_for(timeout=TIMEOUT_MS)
        assert choices(student).count() == 0
        assert sum(store.tally(code, question.id)) == 1, store.tally(code, question.id)
        assert store.presence(code).following == 1
        with student.expect_download(timeout=FOLLOW_MS) as saved:                    # served by this worker now
            student.get_by_role("button", name="Download CSV").first.click()
        assert saved.value.failure() is None and Path(saved.value.path()).read_text().strip()
        wait_for(student, lambda: worker_healthy(victim["port"]), "the killed worker was not restarted", TIMEOUT_MS)

        step("the teacher's worker is killed")
        version = store.followed(code).version
        projector = next(w for w in hall.state()["workers"] if f"127.0.0.1:{w['port']}" == teacher_worker)
        os.kill(projector["pid"], signal.SIGKILL)
        teacher.locator(".st-key-class-teacher").wait_for(timeout=TIMEOUT_MS)
        wait_for(teacher, lambda: f"teaching class {code} again" in teacher.locator("[data-testid=stMain]").inner_text(),
                 "the projector did not say it resumed the class", TIMEOUT_MS)
        assert path_of(teacher) == "explorer" and "present=1" in teacher.url and "class=" not in teacher.url
        assert store.followed(code).version == version                               # nobody was pulled
        go(teacher, "multihead")
        wait_for(student, lambda: path_of(student) == "multihead", "after the teacher's worker died the student "
                 "did not follow the projector", TIMEOUT_MS)
        store.disconnect()
