"""A live class in the app (AppTest): the teacher starts a class and publishes their view; students (separate
sessions sharing the process's MemoryStore) follow it in their own language, explore and follow again, answer,
and see the reveal; bad links, an ended class and a store that is down give notices, never a traceback."""
from __future__ import annotations

import pytest

from apptest_utils import browser_says, browser_view, browser_view_sent, explorer_drawn, no_exceptions, run_page, texts
from viz import view
from viz.classroom import backend
from viz.classroom.live import class_store
from viz.classroom.store import JOIN_TRIES_PER_MINUTE, StoreDown
from viz.i18n import message


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch):
    monkeypatch.setattr(backend, "_opened", {})
    class_store.clear()          # a new MemoryStore: no classes or rate-limit counts from another test
    yield
    class_store.clear()


def start_class(page: str = "explorer.py"):
    teacher = run_page(page)
    teacher.button(key="class-ask-start").click().run()
    no_exceptions(teacher)
    (code,) = list(class_store()._classes)
    return teacher, code


def warnings(at) -> str:
    """The page's warnings as read (their Markdown escapes taken out: a notice may quote the link's text)."""
    return " ".join(w.value for w in at.warning).replace("\\", "").replace("\u2060", "")


def join(code: str, **params):
    """A student opening the join link: its run switches to the teacher's view and draws it."""
    student = run_page(None, **{"class": code, **params})
    no_exceptions(student)
    return student


def follow(student) -> None:
    """A student's poll after the teacher's change: it switches, and that one run draws the teacher's view."""
    student.run()
    no_exceptions(student)


def widget(at, key):
    return next(w for kind in ("selectbox", "radio") for w in at.get(kind) if w.key == key)


def head_of(at) -> int:
    """The head the explorer's view is told to show (its pickers are in the browser)."""
    return browser_view_sent(at)[0]["pick"]["head"]


def pick_head(teacher, head: int) -> None:
    """The teacher picks a head in the explorer's view: the view reports a teaching session's every pick."""
    assert browser_view_sent(teacher)[0]["teach"]
    browser_says(teacher, state={"pick": {"kind": "encoder", "layer": 0, "head": head}})
    no_exceptions(teacher)


def test_teacher_starts_a_class_and_a_student_follows_page_and_head():
    teacher, code = start_class()
    shown = texts(teacher)
    assert f"/?class={code}" in shown and "teach=" in shown             # the join link and the teacher link
    join_line = next(line for line in shown.splitlines() if line.endswith(f"/?class={code}"))
    assert "teach" not in join_line
    assert f"**{code}**" in shown                                      # the code in large type
    assert teacher.get("imgs") or any("image" in str(e.type) for e in teacher.main)   # the QR code
    published = class_store().followed(code)
    assert published.page == "explorer" and "lang" not in published.query and "present" not in published.query

    student = join(code)                        # the join link opens the start page
    no_exceptions(student)
    assert dict(student.query_params)["class"] == code
    assert head_of(student) == 0          # it went to the teacher's page
    assert message("en", "class.following", code=code) in texts(student)
    assert class_store().presence(code).following == 1

    pick_head(teacher, 1)
    assert class_store().followed(code).query["head"] == "1"
    follow(student)
    assert head_of(student) == 1



def test_students_drawing_the_teachers_view_build_its_figures_once(monkeypatch):
    """The explorer's figures are kept for every session of the worker (view.shared_memo): the class's students
    drawing the teacher's view use the figures the teacher's run built; a student's own sentence is built for
    them, and shown to no one else."""
    import viz.figures.browser_view as browser_view_figures
    builds = []
    real = browser_view_figures.model_view
    monkeypatch.setattr(browser_view_figures, "model_view", lambda *a, **k: builds.append(1) or real(*a, **k))
    monkeypatch.setattr(view, "_shared", type(view._shared)())
    teacher, code = start_class()
    students = [join(code), join(code)]
    pick_head(teacher, 1)
    built = len(builds)
    for student in students:
        follow(student)
        assert head_of(student) == 1
    assert len(builds) == built                   # the teacher's run built the grid the students draw
    charts = browser_view(students[1]).proto.bytes
    loner = students[0]
    loner.button(key="class-ask-explore").click().run()
    loner.text_area(key="text").input("The zebra sat on the mat.").run()
    no_exceptions(loner)
    assert len(builds) == built + 1 and "zebra" in loner.text_area(key="text").value
    students[1].run()
    assert students[1].text_area(key="text").value == teacher.text_area(key="text").value
    assert browser_view(students[1]).proto.bytes == charts



def test_the_multihead_page_is_built_once_for_a_class(monkeypatch):
    import viz.figures.multihead as multihead
    builds = []
    real = multihead.head_patterns
    monkeypatch.setattr(multihead, "head_patterns", lambda *a, **k: builds.append(1) or real(*a, **k))
    monkeypatch.setattr(view, "_shared", type(view._shared)())
    teacher, code = start_class("multi_head.py")
    assert len(builds) == 1
    import pandas as pd
    csvs = []
    real_csv = pd.DataFrame.to_csv
    monkeypatch.setattr(pd.DataFrame, "to_csv", lambda self, *a, **k: csvs.append(1) or real_csv(self, *a, **k))
    for _ in range(2):
        student = join(code)
        assert student.get("plotly_chart") and dict(student.query_params).get("kind") == "encoder"
        # the same charts and CSV files as the teacher's, from the figures' kept dict and CSV (ui.show_figure)
        assert [c.proto.spec for c in student.get("plotly_chart")] == [c.proto.spec for c in teacher.get("plotly_chart")]
    assert len(builds) == 1 and not csvs

def test_a_following_screen_checks_in_on_a_change_else_every_few_seconds(monkeypatch):
    teacher, code = start_class()
    calls = []
    real = class_store().check_in
    monkeypatch.setattr(class_store(), "check_in", lambda *a: calls.append(a[2]) or real(*a))
    student = join(code)
    for _ in range(3):
        student.run()
    assert calls == [True]                        # one check-in, not one per poll (presence counts the last 10 s)
    student.button(key="class-ask-explore").click().run()
    assert calls == [True, False] and class_store().presence(code).exploring == 1


def test_a_switch_draws_the_teachers_view_in_one_run_and_sets_the_browsers_pickers(monkeypatch):
    import viz.classroom.live as live
    """The run a switch asks for draws the page (no blank run first), and gives each picker its value through
    the session: Streamlit then sends it with set_value, which makes the browser's widget of the same key take
    it (a default alone loses to what the browser's widget holds: a student's head picker showed head 0 while the
    map showed the teacher's head 1)."""
    teacher, code = start_class()
    student = join(code)
    pick_head(teacher, 2)
    switches = []
    real = live.st.switch_page
    monkeypatch.setattr(live.st, "switch_page", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    follow(student)
    assert head_of(student) == 2                                       # the browser's view is told
    assert explorer_drawn(student) and dict(student.query_params)["head"] == "2"   # drawn in that run
    assert switches == ["viz/pages/explorer.py"]                       # one switch, not a blank run and a redraw


def test_a_student_in_chinese_follows_an_english_teacher_in_chinese():
    teacher, code = start_class()
    student = join(code, lang="zh")
    no_exceptions(student)
    params = dict(student.query_params)
    assert params["lang"] == "zh" and params["class"] == code and params.get("kind") == "encoder"
    assert message("zh", "class.following", code=code) in texts(student)
    assert message("zh", "explorer.title") in [t.value for t in student.title]
    assert "lang" not in class_store().followed(code).query             # the teacher stays English


def test_explore_on_my_own_then_follow_again():
    teacher, code = start_class()
    student = join(code)
    student.button(key="class-ask-explore").click().run()
    assert class_store().presence(code).exploring == 1
    assert message("en", "class.exploring", code=code) in texts(student)
    pick_head(teacher, 1)
    student.run()
    assert head_of(student) == 0          # exploring: the teacher's change waits
    student.button(key="class-ask-follow").click().run()
    follow(student)
    assert head_of(student) == 1
    assert class_store().presence(code).following == 1


def test_ask_answer_tally_reveal_and_csv():
    teacher, code = start_class()
    student = join(code)
    widget(teacher, "class-ask-kind").select("next_token").run()
    teacher.button(key="class-ask-go").click().run()
    no_exceptions(teacher)
    question = class_store().question(code)
    assert question.key == "next_token" and len(question.choices) == 4
    student.run()
    choices = [b for b in student.button if b.key and b.key.startswith(f"class-ask-{question.id}-")]
    assert [b.label for b in choices] == list(question.choices)
    wrong = (question.answer + 1) % 4
    choices[wrong].click().run()
    no_exceptions(student)
    assert class_store().tally(code, question.id)[wrong] == 1
    teacher.run()
    assert teacher.get("plotly_chart")                                 # the tally chart
    teacher.button(key="class-ask-reveal").click().run()
    no_exceptions(teacher)
    assert class_store().question(code).revealed
    assert dict(teacher.query_params).get("step") == str(question.fields["step"])   # the teacher went to the proof
    assert class_store().followed(code).page == "decoding"
    follow(student)
    shown = texts(student)
    assert message("en", "class.revealed", answer=question.choices[question.answer]).split("**")[0] in shown
    assert dict(student.query_params).get("step") == str(question.fields["step"])
    csv = class_store().history(code, teacher.session_state["class-secret"])
    assert csv[0][1][wrong] == 1


def test_the_reveal_sets_the_teachers_own_pickers_to_the_proof():
    """The reveal takes the teacher to the view that proves the answer; the pickers there are told it too (they
    showed the head the teacher had moved to since asking, while the map showed the proof's head)."""
    teacher, code = start_class()
    widget(teacher, "class-ask-kind").select("positional_head").run()
    teacher.button(key="class-ask-go").click().run()
    question = class_store().question(code)
    assert question.page == "explorer" and question.query["head"] == str(question.answer)
    pick_head(teacher, (question.answer + 1) % 8)
    teacher.button(key="class-ask-reveal").click().run()
    no_exceptions(teacher)
    assert head_of(teacher) == question.answer


@pytest.mark.parametrize("params, key", [({"class": "<b>x</b>"}, "class.bad_code"),
                                         ({"class": "ZZZZZZ"}, "class.unknown"),
                                         ({"class": "ZZZZZZ", "teach": "guess"}, "class.bad_teacher")])
def test_a_bad_class_link_says_so(params, key):
    at = run_page(None, **params)
    no_exceptions(at)
    words = message("en", key, code="ZZZZZZ", raw=repr(params["class"])).split(" ")[:3]
    shown = warnings(at)
    assert " ".join(words) in shown
    assert "<b>" not in " ".join(w.value for w in at.warning)                                       # quoted, never HTML
    assert "class" not in dict(at.query_params)


def test_an_ended_class_says_so_and_the_student_explores_alone():
    teacher, code = start_class()
    student = join(code)
    teacher.button(key="class-ask-end").click().run()
    assert code not in class_store()._classes
    student.run()
    no_exceptions(student)
    assert message("en", "class.ended") in warnings(student)
    assert "class" not in dict(student.query_params)


def test_a_store_that_is_down_leaves_the_page_working(monkeypatch):
    teacher, code = start_class()
    student = join(code)

    def down(*args, **kwargs):
        raise StoreDown("redis down")

    monkeypatch.setattr(class_store(), "followed", down)
    monkeypatch.setattr(class_store(), "publish", down)
    student.run()
    no_exceptions(student)
    assert message("en", "class.store_down") in texts(student)
    assert explorer_drawn(student)                                      # the page itself still draws
    teacher.run()
    no_exceptions(teacher)
    assert message("en", "class.store_down") in warnings(teacher)


def test_a_room_behind_one_address_joins_with_the_right_code_and_wrong_codes_are_limited(monkeypatch):
    from viz.classroom import panel
    monkeypatch.setattr(panel, "JOIN_TRIES_PER_MINUTE", 2)
    code, _ = class_store().create()
    for _ in range(4):                                                  # a class from one address
        at = run_page(None, **{"class": code})
        no_exceptions(at)
        assert message("en", "class.too_many") not in warnings(at)
    for _ in range(2):
        run_page(None, **{"class": "ZZZZZZ"})
    at = run_page(None, **{"class": code})
    assert message("en", "class.too_many") in warnings(at)             # a guesser is stopped, right code or not


def test_class_code_lookups_are_rate_limited_per_client():
    for _ in range(JOIN_TRIES_PER_MINUTE):
        assert class_store().allow("local", "join", JOIN_TRIES_PER_MINUTE)
    at = run_page(None, **{"class": "ZZZZZZ"})
    no_exceptions(at)
    assert message("en", "class.too_many") in warnings(at)
