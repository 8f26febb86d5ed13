"""A live class on the lecture hall's store (a real redis-server, as deploy/serve.py runs it), in the app
(AppTest): Redis down, every page works on its own with a notice; Redis restarted with its append-only file, the
class goes on; restarted without it, the page says plainly that the class ended. Never a traceback."""
from __future__ import annotations

import pytest

from apptest_utils import browser_says, browser_view_sent, explorer_drawn, no_exceptions, run_page, texts
from redis_utils import RedisServer, redis_local
from viz.classroom import backend
from viz.classroom.live import class_store
from viz.classroom.store import REDIS_URL_ENV
from viz.core.i18n import message

pytestmark = pytest.mark.skipif(redis_local.REDIS_SERVER is None, reason="redis-server not installed")


@pytest.fixture
def hall(monkeypatch, tmp_path, request):
    """A Redis the app's class_store() opens (TRANSFORMER_VIZ_REDIS), persistence as the test's param says."""
    server = RedisServer(tmp_path / "redis", persist=request.param)
    monkeypatch.setenv(REDIS_URL_ENV, server.url)
    monkeypatch.setattr(backend, "_opened", {})
    class_store.clear()
    yield server
    class_store.clear()
    server.stop()


def head(at) -> int:
    """The head the explorer's view is told to show (its pickers are in the browser)."""
    return browser_view_sent(at)[0]["pick"]["head"]


def pick_head(teacher, head: int) -> None:
    """The teacher picks a head in the explorer's view, which reports a teaching session's every pick."""
    browser_says(teacher, state={"pick": {"kind": "encoder", "layer": 0, "head": head}})


def warnings(at) -> str:
    return " ".join(w.value for w in at.warning).replace("\\", "").replace("\u2060", "")


def class_started():
    teacher = run_page("explorer.py")
    teacher.button(key="class-ask-start").click().run()
    no_exceptions(teacher)
    code = teacher.session_state["class-code"]
    student = run_page(None, **{"class": code})
    no_exceptions(student)
    assert message("en", "class.following", code=code) in texts(student)
    return teacher, student, code


@pytest.mark.parametrize("hall", [True], indirect=True)
def test_redis_down_every_page_works_alone_and_after_its_restart_the_class_goes_on(hall):
    teacher, student, code = class_started()
    hall.stop()
    student.run()
    no_exceptions(student)
    assert message("en", "class.store_down") in texts(student) and explorer_drawn(student)
    teacher.run()
    no_exceptions(teacher)
    assert message("en", "class.unreachable", code=code) in [e.value for e in teacher.error]   # large, on top
    assert explorer_drawn(teacher)
    newcomer = run_page(None, **{"class": code})                   # the join link while Redis is down
    no_exceptions(newcomer)
    assert message("en", "class.store_down") in texts(newcomer) and newcomer.get("plotly_chart")

    hall.start()                                                   # the same append-only file
    pick_head(teacher, 1)
    no_exceptions(teacher)
    student.run()                                                  # the poll's switch draws the teacher's view
    no_exceptions(student)
    assert head(student) == 1 and message("en", "class.following", code=code) in texts(student)
    newcomer.run()                                                 # joined during the outage: enrolled now
    no_exceptions(newcomer)
    assert newcomer.session_state["class-student"] and head(newcomer) == 1
    assert class_store().presence(code).following == 2
    teacher.run()
    assert not teacher.error                                       # the large notice is gone


@pytest.mark.parametrize("hall", [False], indirect=True)
def test_after_a_restart_that_lost_the_class_the_page_says_it_ended(hall):
    teacher, student, code = class_started()
    hall.stop()
    hall.start()                                                   # no append-only file: every class is gone
    student.run()
    no_exceptions(student)
    assert message("en", "class.ended") in warnings(student) and explorer_drawn(student)
    assert "class" not in dict(student.query_params)
    pick_head(teacher, 1)       # its publish finds the class gone
    no_exceptions(teacher)
    assert "class-code" not in teacher.session_state               # no longer teaching, and told so
    assert message("en", "class.ended") in warnings(teacher)
