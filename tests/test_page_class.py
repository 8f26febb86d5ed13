"""A live class in the app (AppTest): the teacher starts a class and publishes their view; students (separate
sessions sharing the process's MemoryStore) follow it in their own language, explore and follow again, answer,
and see the reveal; bad links, an ended class and a store that is down give notices, never a traceback."""
from __future__ import annotations

import json


import pytest

from apptest_utils import browser_says, browser_view, browser_view_sent, explorer_drawn, no_exceptions, run_page, texts
from class_utils import Browser, checked, cookie_jars, fresh_store  # noqa: F401 - fixtures
from viz.core import view
from viz.classroom import browser, panel
from viz.classroom.live import address_of, class_store
from viz.classroom.store import StoreDown
from viz.classroom.teacher import history_csv, spreadsheet_safe
from viz.core.i18n import message


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


def tallies(at) -> list:
    return [c for c in at.get("plotly_chart") if "class-ask-tally" in str(c.proto.id)]


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
    secret = teacher.session_state["class-secret"]
    assert f"/?class={code}" in shown and secret not in shown          # the join link; the secret nowhere
    assert secret not in str(dict(teacher.query_params))
    assert message("en", "class.loopback").split(":")[0] in shown       # a localhost QR: said
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



def test_the_multihead_page_is_built_once_for_a_class_and_its_students_follow_a_pick(monkeypatch):
    """The multi-head page's view (drawn in the browser, issue 44): the students drawing the teacher's view are sent
    the body the teacher's run built (the same bytes, no figure built again); the teacher's pick in the browser is
    reported, written to the URL and published, and a student's next poll shows it."""
    import viz.figures.multihead as multihead
    builds = []
    real = multihead.head_patterns
    monkeypatch.setattr(multihead, "head_patterns", lambda *a, **k: builds.append(1) or real(*a, **k))
    monkeypatch.setattr(view, "_shared", type(view._shared)())
    teacher, code = start_class("multi_head.py")
    assert len(builds) == 1
    students = [join(code), join(code)]
    for student in students:
        assert dict(student.query_params).get("kind") == "encoder"
        assert browser_view(student, "mh-view").proto.bytes == browser_view(teacher, "mh-view").proto.bytes
    assert len(builds) == 1
    head = browser_view_sent(teacher, "mh")[0]
    assert head["teach"]                                     # the view reports a teaching session's every pick
    browser_says(teacher, state={"pick": {"kind": "decoder", "layer": 1}}, where="mh")
    no_exceptions(teacher)
    assert browser_view_sent(teacher, "mh")[0]["pick"] == {"kind": "decoder", "layer": 1}
    for student in students:
        follow(student)
        assert browser_view_sent(student, "mh")[0]["pick"] == {"kind": "decoder", "layer": 1}
        assert dict(student.query_params).get("layer") == "1"


def test_the_step_through_page_is_built_once_for_a_class_and_its_students_follow_a_step(monkeypatch):
    """The step-through page's heads and their nine steps (drawn in the browser, issue 44): the students drawing the
    teacher's view are sent the deck the teacher's run built (the same bytes); the teacher's step, then another
    layer and head, picked in the browser are reported, written to the URL and published, and a student's next poll
    shows each with no switch (no run of the page's builders: they are the view's own picks); another query is a
    switch (a new deck)."""
    import viz.classroom.student as student_side
    monkeypatch.setattr(view, "_shared", type(view._shared)())
    teacher, code = start_class("step_through.py")
    students = [join(code), join(code)]
    for student in students:
        assert browser_view(student, "step-view").proto.bytes == browser_view(teacher, "step-view").proto.bytes
    assert browser_view_sent(teacher, "step")[0]["teach"]
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    for pick in ({"layer": 0, "head": 0, "step": 6}, {"layer": 1, "head": 3, "step": 6}):
        browser_says(teacher, state={"pick": pick}, where="step")
        no_exceptions(teacher)
        assert browser_view_sent(teacher, "step")[0]["pick"] == pick
        for student in students:
            follow(student)
            assert browser_view_sent(student, "step")[0]["pick"] == pick
            assert {name: dict(student.query_params).get(name) for name in pick} == {k: str(v) for k, v in pick.items()}
    assert switches == []
    teacher.selectbox(key="step-query-encoder").set_value(2).run()
    no_exceptions(teacher)
    follow(students[0])
    assert switches and dict(students[0].query_params).get("query") == "2"
    assert browser_view_sent(students[0], "step")[0]["pick"] == {"layer": 1, "head": 3, "step": 6}


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


def poll_every_ms(at) -> int:
    """How often the student's browser asks for its poll (the heartbeat's timer, viz/classroom/browser.py)."""
    (beat,) = [node for node in at._tree if getattr(node, "key", None) == "class-heartbeat-timer"]
    return json.loads(beat.proto.json)["every_ms"]


def test_a_students_poll_is_as_frequent_as_the_class_size_allows(monkeypatch):
    """Issue 44: a teacher's change reaches a small class's screens sooner (a 1 s poll bounded the follow at p95
    1.0 s); a lecture hall's polls stay within CLASS_POLLS_PER_S in all."""
    from viz.classroom import student as student_side
    from viz.classroom.store import Presence
    teacher, code = start_class()
    student = join(code)
    student.run().run()
    assert poll_every_ms(student) == 500                  # one student: the fastest poll
    monkeypatch.setattr(student_side, "CHECK_IN_EVERY_S", 0.0)
    for present, every_ms in ((60, 600), (150, 1500), (400, 2000)):
        monkeypatch.setattr(class_store(), "presence", lambda code, n=present: Presence(n - 5, 5))
        student.run().run()                               # the poll checks in, the next one's timer takes it
        assert poll_every_ms(student) == every_ms, present


def test_a_students_runs_say_when_they_are_done_so_no_beat_comes_during_one():
    """The browser holds its poll's beats from the top of a whole run (the watchdog) to its end (run_done, after
    the page) and from a beat to the end of its fragment run: a beat during a switch left the new page undrawn or
    took the screen back (viz/classroom/browser.py). Each run's end sends a new number (the browser sees each)."""
    teacher, code = start_class()
    student = join(code)
    keys = [getattr(node, "key", None) for node in student._tree]
    order = [k for k in keys if k in ("class-watchdog-trigger", "class-heartbeat-timer", "class-run-done-poll",
                                      "explorer-view", "class-run-done-page")]
    assert order == ["class-watchdog-trigger", "class-heartbeat-timer", "class-run-done-poll", "explorer-view",
                     "class-run-done-page"]
    numbers = []
    for _ in range(2):
        student.run()
        (done,) = [node for node in student._tree if getattr(node, "key", None) == "class-run-done-page"]
        numbers.append(json.loads(done.proto.json)["run"])
    assert numbers[1] > numbers[0]


def test_a_switch_draws_the_teachers_view_in_one_run_and_sets_the_browsers_pickers(monkeypatch):
    import viz.classroom.live as live
    """The run a switch asks for draws the page (no blank run first), and gives each picker its value through
    the session: Streamlit then sends it with set_value, which makes the browser's widget of the same key take
    it (a default alone loses to what the browser's widget holds: a student's head picker showed head 0 while the
    map showed the teacher's head 1)."""
    teacher, code = start_class()
    student = join(code)
    teacher.text_area(key="text").input("The zebra sat on the mat.").run()
    switches = []
    real = live.st.switch_page
    monkeypatch.setattr(live.st, "switch_page", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    follow(student)
    assert student.text_area(key="text").value == "The zebra sat on the mat."     # the box takes the view's
    assert explorer_drawn(student)                                     # drawn in that run, the new sentence's
    assert browser_view_sent(student)[0]["sentence"] == browser_view_sent(teacher)[0]["sentence"]
    assert switches == ["viz/pages/explorer.py"]                       # one switch, not a blank run and a redraw


def test_a_pick_in_the_teachers_view_is_no_switch_for_a_follower(monkeypatch):
    """The explorer's layer, head and kind are picked in the browser: a follower's screen takes the teacher's
    pick into its URL and view with no switch (a switch is one more whole run of the page); a change of anything
    else is a switch. (The poll's own path, which hands the pick to the view with no run of the page, is in
    tests/test_browser_class.py.)"""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class()
    student = join(code)
    switches.clear()
    browser_says(teacher, state={"pick": {"kind": "decoder", "layer": 1, "head": 3}})
    follow(student)
    assert switches == []
    assert browser_view_sent(student)[0]["pick"] == {"kind": "decoder", "layer": 1, "head": 3}
    assert {k: dict(student.query_params)[k] for k in ("kind", "layer", "head")} == {
        "kind": "decoder", "layer": "1", "head": "3"}
    assert student.session_state["class-version"] == class_store().followed(code).version
    teacher.switch_page("viz/pages/multi_head.py").run()
    follow(student)
    assert switches == ["multihead"]
    browser_says(teacher, state={"pick": {"kind": "cross", "layer": 2}}, where="mh")    # the multi-head page's view
    follow(student)
    assert switches == ["multihead"]
    assert browser_view_sent(student, "mh")[0]["pick"] == {"kind": "cross", "layer": 2}


def test_the_ffn_pages_browser_picks_are_no_switch_for_a_follower_but_its_view_is(monkeypatch):
    """The feed-forward view's stack and layer are picked in the browser (issue 44): a follower takes the teacher's
    into its URL (`stack`, not `kind`) and view with no switch. A change of the page's view is a switch; the dropout
    view's kind, layer and head are its deck's picks (the URL's `kind`, `layer` and `head`: no switch), and a
    follower's own head is taken back by the teacher's the same way."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("ffn.py")
    student = join(code)
    assert browser_view_sent(student, "ffn-deck")[0]["pick"] == {"kind": "encoder", "layer": 0}
    switches.clear()
    browser_says(teacher, state={"pick": {"kind": "decoder", "layer": 1}}, where="ffn-deck")
    no_exceptions(teacher)
    assert {k: class_store().followed(code).query.get(k) for k in ("stack", "layer", "kind")} == {
        "stack": "decoder", "layer": "1", "kind": None}
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "ffn-deck")[0]["pick"] == {"kind": "decoder", "layer": 1}
    assert {k: dict(student.query_params).get(k) for k in ("stack", "layer")} == {"stack": "decoder", "layer": "1"}
    teacher.radio(key="ffn-view").set_value("dropout").run()
    no_exceptions(teacher)
    follow(student)
    assert switches == ["ffn"] and student.radio(key="ffn-view").value == "dropout"
    assert browser_view_sent(student, "drop-deck")[0]["pick"] == {"kind": "cross", "layer": 0, "head": 0}
    browser_says(teacher, state={"pick": {"kind": "encoder", "layer": 1, "head": 2}}, where="drop-deck")
    no_exceptions(teacher)
    assert {k: class_store().followed(code).query.get(k) for k in ("kind", "layer", "head")} == {
        "kind": "encoder", "layer": "1", "head": "2"}
    follow(student)
    assert switches == ["ffn"]                                                  # no switch: handed to the view
    assert browser_view_sent(student, "drop-deck")[0]["pick"] == {"kind": "encoder", "layer": 1, "head": 2}
    assert {k: dict(student.query_params).get(k) for k in ("kind", "layer", "head")} == {
        "kind": "encoder", "layer": "1", "head": "2"}
    # a student's own clicks while following: the view (its stack x layer drawn last), then a head in the dropout
    # view's deck; the teacher's next view differs from theirs in the head alone: handed to the view, no switch
    teacher.radio(key="ffn-view").set_value("ffn").run()
    follow(student)
    assert switches == ["ffn", "ffn"]
    student.radio(key="ffn-view").set_value("dropout").run()
    browser_says(student, state={"pick": {"kind": "cross", "layer": 0, "head": 1}}, where="drop-deck")
    no_exceptions(student)
    assert dict(student.query_params).get("head") == "1"
    teacher.radio(key="ffn-view").set_value("dropout").run()
    follow(student)
    assert switches == ["ffn", "ffn"]
    assert browser_view_sent(student, "drop-deck")[0]["pick"] == {"kind": "cross", "layer": 0, "head": 0}
    assert dict(student.query_params).get("head") == "0"


def test_the_layernorm_pages_layer_is_no_switch_for_a_follower_but_its_stack_is(monkeypatch):
    """The LayerNorm page's layer is picked in the browser (issue 44, a deck with no kind): a follower takes the
    teacher's into its URL and view with no switch; the stack, a server-side radio, is a switch."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("layernorm.py")
    student = join(code)
    assert browser_view_sent(student, "ln-deck")[0]["pick"] == {"layer": 0}
    switches.clear()
    browser_says(teacher, state={"pick": {"layer": 1}}, where="ln-deck")
    no_exceptions(teacher)
    assert class_store().followed(code).query.get("layer") == "1"
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "ln-deck")[0]["pick"] == {"layer": 1}
    assert dict(student.query_params).get("layer") == "1"
    teacher.radio(key="ln-stack").set_value("decoder").run()
    no_exceptions(teacher)
    follow(student)
    assert len(switches) == 1 and student.radio(key="ln-stack").value == "decoder"


def test_the_zoos_kind_layer_and_head_are_no_switch_for_a_follower_but_its_score_is(monkeypatch):
    """The attention zoo's kind, layer and head are picked in the browser (issue 44, a deck with a head picker): a
    follower takes the teacher's into its URL and view with no switch; the score function, a server-side radio, is
    a switch."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("zoo.py")
    student = join(code)
    assert browser_view_sent(student, "zoo-deck")[0]["pick"] == {"kind": "encoder", "layer": 0, "head": 0}
    switches.clear()
    browser_says(teacher, state={"pick": {"kind": "cross", "layer": 1, "head": 3}}, where="zoo-deck")
    no_exceptions(teacher)
    assert {k: class_store().followed(code).query.get(k) for k in ("kind", "layer", "head")} == {
        "kind": "cross", "layer": "1", "head": "3"}
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "zoo-deck")[0]["pick"] == {"kind": "cross", "layer": 1, "head": 3}
    assert {k: dict(student.query_params).get(k) for k in ("kind", "layer", "head")} == {
        "kind": "cross", "layer": "1", "head": "3"}
    teacher.radio(key="zoo-score").set_value("dot").run()
    no_exceptions(teacher)
    follow(student)
    assert len(switches) == 1 and student.radio(key="zoo-score").value == "dot"
    assert browser_view_sent(student, "zoo-deck")[0]["pick"] == {"kind": "cross", "layer": 1, "head": 3}


def test_the_compare_pages_layer_and_head_are_no_switch_for_a_follower_but_its_kind_is(monkeypatch):
    """The compare page's two sentences: the layer and head (the mean too) are picked in the browser (issue 44): a
    follower takes the teacher's with no switch; the kind, a server-side radio, is a switch."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("compare.py")
    student = join(code)
    assert browser_view_sent(student, "cmp-deck")[0]["pick"] == {"layer": 0, "head": 0}
    switches.clear()
    browser_says(teacher, state={"pick": {"layer": 1, "head": -1}}, where="cmp-deck")
    no_exceptions(teacher)
    assert {k: class_store().followed(code).query.get(k) for k in ("layer", "head")} == {"layer": "1", "head": "-1"}
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "cmp-deck")[0]["pick"] == {"layer": 1, "head": -1}
    teacher.radio(key="compare-kind").set_value("cross").run()
    no_exceptions(teacher)
    follow(student)
    assert len(switches) == 1 and student.radio(key="compare-kind").value == "cross"


def test_the_compare_pages_head_b_is_no_switch_for_a_follower_but_head_a_is(monkeypatch):
    """The compare page's two heads: head B is picked in the browser (issue 44; the URL's layer_b, head_b): a follower
    takes the teacher's with no switch; head A, the server's select boxes, is a switch."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("compare.py")
    teacher.radio(key="compare-mode").set_value("heads").run()
    no_exceptions(teacher)
    student = join(code)
    assert browser_view_sent(student, "cmp-heads-deck")[0]["pick"] == {"layer": 0, "head": 1}
    switches.clear()
    browser_says(teacher, state={"pick": {"layer": 1, "head": -1}}, where="cmp-heads-deck")
    no_exceptions(teacher)
    assert {k: class_store().followed(code).query.get(k) for k in ("layer_b", "head_b")} == {"layer_b": "1",
                                                                                             "head_b": "-1"}
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "cmp-heads-deck")[0]["pick"] == {"layer": 1, "head": -1}
    teacher.selectbox(key="compare-encoder-head").set_value(3).run()
    no_exceptions(teacher)
    follow(student)
    assert len(switches) == 1 and student.selectbox(key="compare-encoder-head").value == 3
    assert browser_view_sent(student, "cmp-heads-deck")[0]["pick"] == {"layer": 1, "head": -1}


def test_the_head_pages_kind_is_no_switch_for_a_follower_but_its_statistic_is(monkeypatch):
    """The head page's statistics: the kind is picked in the browser (issue 44, a deck with no layer select): a
    follower takes the teacher's with no switch; the statistic, a server-side select box, is a switch."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("heads.py")
    student = join(code)
    assert browser_view_sent(student, "hs-deck")[0]["pick"] == {"kind": "encoder"}
    switches.clear()
    browser_says(teacher, state={"pick": {"kind": "decoder"}}, where="hs-deck")
    no_exceptions(teacher)
    assert class_store().followed(code).query.get("kind") == "decoder"
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "hs-deck")[0]["pick"] == {"kind": "decoder"}
    assert dict(student.query_params).get("kind") == "decoder"
    teacher.selectbox(key="heads-stat").set_value("prev").run()
    no_exceptions(teacher)
    follow(student)
    assert len(switches) == 1 and student.selectbox(key="heads-stat").value == "prev"
    assert browser_view_sent(student, "hs-deck")[0]["pick"] == {"kind": "decoder"}


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
    assert not tallies(teacher)                                        # folded to one line: the proof on screen
    assert message("en", "class.revealed.line", answer=question.choices[question.answer], right=0, n=1) in texts(teacher)
    follow(student)
    shown = texts(student)
    assert message("en", "class.you_wrong", answer=question.choices[wrong],
                   right=question.choices[question.answer]) in shown
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
                                         ({"class": "ZZZZZZ", "handoff": "guess"}, "class.bad_handoff")])
def test_a_bad_class_link_says_so(params, key):
    at = run_page(None, **params)
    no_exceptions(at)
    words = message("en", key, code="ZZZZZZ", raw=repr(params["class"])).split(" ")[:3]
    shown = warnings(at)
    assert " ".join(words) in shown
    assert "<b>" not in " ".join(w.value for w in at.warning)                                       # quoted, never HTML
    assert "class" not in dict(at.query_params) and "handoff" not in dict(at.query_params)


def test_an_ended_class_says_so_and_the_student_explores_alone():
    teacher, code = start_class()
    student = join(code)
    teacher.button(key="class-ask-end").click().run()
    assert code not in class_store()._classes
    student.run()
    no_exceptions(student)
    assert message("en", "class.ended") in warnings(student)
    assert "class" not in dict(student.query_params)


def test_a_store_that_is_down_leaves_the_page_working_and_the_teacher_is_told_in_large_type(monkeypatch):
    teacher, code = start_class()
    student = join(code)

    def down(*args, **kwargs):
        raise StoreDown("redis down")

    for method in ("followed", "publish", "presence", "question", "enrol"):
        monkeypatch.setattr(class_store(), method, down)
    student.run()
    no_exceptions(student)
    assert message("en", "class.store_down") in texts(student)
    assert explorer_drawn(student)                                      # the page itself still draws
    teacher.run()
    no_exceptions(teacher)
    outage = [e for e in teacher.error if message("en", "class.unreachable", code=code) == e.value]
    assert outage and explorer_drawn(teacher)                           # the first thing of the class bar
    assert teacher.session_state["class-secret"]                        # still the teacher


def test_a_room_behind_one_address_mistyping_gets_in_and_a_guesser_is_stopped(monkeypatch):
    """Wrong codes count per address and per session; a right code never counts, and is looked up while both
    are under their limits. Over the address's limit nothing is looked up: a guesser learns nothing."""
    monkeypatch.setattr(panel, "WRONG_CODES_PER_ADDRESS", 12)
    code, _ = class_store().create()
    for _ in range(5):                                                  # five students, two typos each
        at = run_page(None)
        for typo in ("ZZZZZZ", code[:5] + "Z"):
            type_code(at, typo)
            assert message("en", "class.unknown", code=typo) in warnings(at)
        type_code(at, code.lower())
        assert message("en", "class.following", code=code) in texts(at)
    for _ in range(2):
        run_page(None, **{"class": "ZZZZZZ"})                           # 12 wrong now
    at = run_page(None, **{"class": code})
    assert message("en", "class.too_many") in warnings(at)


def test_one_session_mistyping_too_often_is_stopped_before_the_address_is():
    code, _ = class_store().create()
    at = run_page(None)
    for _ in range(panel.WRONG_CODES_PER_BROWSER):
        type_code(at, "ZZZZZZ")
    type_code(at, code)
    assert message("en", "class.too_many") in warnings(at)
    assert class_store().allow("127.0.0.1", "join", panel.WRONG_CODES_PER_ADDRESS, count=False)


def type_code(at, typed: str, place: str = "home") -> None:
    at.text_input(key=f"class-join-{place}").input(typed)
    next(b for b in at.button if b.proto.is_form_submitter and f"class-join-{place}" in b.proto.form_id).click().run()
    no_exceptions(at)


def test_a_code_typed_in_the_start_page_box_or_the_sidebar_joins_in_any_case_and_spacing():
    teacher, code = start_class()
    phone = run_page(None, lang="zh")
    assert phone.text_input(key="class-join-home").label == message("zh", "class.join.label")
    type_code(phone, f" {code[:3].lower()} {code[3:]} ")
    assert message("zh", "class.following", code=code) in texts(phone)
    assert dict(phone.query_params)["class"] == code
    laptop = run_page("explorer.py")
    type_code(laptop, code.lower(), "sidebar")
    assert message("en", "class.following", code=code) in texts(laptop)
    nonsense = run_page(None)
    type_code(nonsense, "<b>1</b>")
    assert message("en", "class.bad_code", raw=repr("<b>1</b>")).split(",")[0].replace("\\", "") in warnings(nonsense)


def test_a_students_language_comes_from_their_browser_unless_they_pick_one():
    teacher, code = start_class("home.py")
    at = AppTest_with_locale("zh-CN", **{"class": code})
    assert message("zh", "class.following", code=code) in texts(at)
    at.button(key="class-ask-lang").click().run()                      # the switch on the first screen
    no_exceptions(at)
    assert message("en", "class.following", code=code) in texts(at)


def AppTest_with_locale(locale: str, **params):
    from streamlit.testing.v1 import AppTest
    from apptest_utils import APP, TIMEOUT
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.context["locale"] = locale
    for key, value in params.items():
        at.query_params[key] = str(value)
    return checked(at.run())


# -- who counts: ids the store gave, once, before the question ------------------------------------------------
def ask(teacher, kind: str = "next_token"):
    widget(teacher, "class-ask-kind").select(kind).run()
    teacher.button(key="class-ask-go").click().run()
    no_exceptions(teacher)
    return class_store().question(teacher.session_state["class-code"])


def choices(at, question):
    return [b for b in at.button if b.key and b.key.startswith(f"class-ask-{question.id}-")]


def test_a_second_tab_and_a_reload_are_the_same_student_and_see_the_answer_that_counted():
    teacher, code = start_class()
    phone = Browser()
    first = phone.open(None, **{"class": code})
    question = ask(teacher)
    phone.run(first)
    phone.run(first, choices(first, question)[2].click().run)
    second = phone.open(None, **{"class": code})                        # another tab, or a reload
    assert second.session_state["class-student"] == first.session_state["class-student"]
    shown = texts(second)
    assert message("en", "class.answered", answer=question.choices[2]) in shown and not choices(second, question)
    assert class_store().tally(code, question.id)[2] == 1 and sum(class_store().tally(code, question.id)) == 1
    assert class_store().presence(code).following == 1


def test_a_forged_or_missing_cookie_is_not_a_student_and_a_late_id_cannot_answer():
    teacher, code = start_class()
    question = ask(teacher)
    forged = Browser({browser.STUDENT_COOKIE: f"{code}:forged-id"})
    late = forged.open(None, **{"class": code})
    assert late.session_state["class-student"] != "forged-id"          # the store gave a new one
    forged.run(late, choices(late, question)[0].click().run)
    assert message("en", "class.answer_refused") in texts(late)          # joined after the question opened
    assert sum(class_store().tally(code, question.id)) == 0
    assert not class_store().answer(code, question.id, "forged-id", 0)


def test_the_teacher_closes_a_question_in_one_click_and_it_leaves_every_screen():
    teacher, code = start_class()
    student = join(code)
    question = ask(teacher)
    student.run()
    assert choices(student, question)
    teacher.button(key="class-ask-close").click().run()
    no_exceptions(teacher)
    assert class_store().question(code) is None and not tallies(teacher)
    student.run()
    assert not choices(student, question) and message("en", "class.question", text="").split(":")[0] not in texts(student)
    assert class_store().history(code, teacher.session_state["class-secret"])[0][0].closed


# -- the teacher cannot get lost --------------------------------------------------------------------------------
def test_a_teacher_reloading_resumes_on_the_class_view_in_presenter_mode_and_pulls_nobody():
    laptop = Browser()
    teacher = laptop.open("explorer.py", present="1")
    laptop.run(teacher, teacher.button(key="class-ask-start").click().run)
    code = teacher.session_state["class-code"]
    laptop.run(teacher, lambda: pick_head(teacher, 3))
    student = join(code)
    version = class_store().followed(code).version
    assert laptop.cookies[browser.TEACHER_COOKIE].startswith(code + ":")
    again = laptop.open(None, present="1")                              # a reload on the start page, a new worker
    no_exceptions(again)
    assert again.session_state["class-secret"] == teacher.session_state["class-secret"]
    assert head_of(again) == 3                                           # the class's view, not the start page
    assert dict(again.query_params).get("present") == "1" and "class" not in dict(again.query_params)
    assert class_store().followed(code).version == version               # nobody pulled anywhere
    assert message("en", "class.resumed", code=code) in warnings(again)
    follow(student)
    assert head_of(student) == 3


def test_an_ended_class_leaves_no_teacher_behind_in_the_browser():
    laptop = Browser()
    teacher = laptop.open("explorer.py")
    laptop.run(teacher, teacher.button(key="class-ask-start").click().run)
    laptop.run(teacher, teacher.button(key="class-ask-end").click().run)
    assert browser.TEACHER_COOKIE not in laptop.cookies
    again = laptop.open(None)
    assert not again.session_state["class-code"] if "class-code" in again.session_state else True


def test_a_teacher_link_for_another_device_works_once_and_holds_no_secret():
    teacher, code = start_class()
    secret = teacher.session_state["class-secret"]
    teacher.button(key="class-ask-handoff").click().run()
    link = next(line for line in texts(teacher).splitlines() if "handoff=" in line)
    assert secret not in link
    token = link.split("handoff=")[1]
    tablet = Browser()
    at = tablet.open(None, **{"class": code, "handoff": token})
    no_exceptions(at)
    assert at.session_state["class-secret"] == secret and "handoff" not in dict(at.query_params)
    assert tablet.cookies[browser.TEACHER_COOKIE] == f"{code}:{secret}"
    thief = run_page(None, **{"class": code, "handoff": token})          # the same link again: used
    assert message("en", "class.bad_handoff", code=code) in warnings(thief)
    assert "class-secret" not in thief.session_state


# -- the named crash: a reveal after a sentence change, on the projector -----------------------------------------
@pytest.mark.slow          # a whole class session, step by step
def test_the_reveal_sequence_that_crashed_the_projector():
    """Seen on the lecture hall, 2 reveals in 5: a 40-word sentence, then short ones from the examples; on the
    positional page a cross-attention question, reveal; a next-token question at step 5, reveal; then every click
    raised AttributeError ('NoneType' object has no attribute 'strip') in the sidebar until a reload. The example
    picker, when it sent an empty choice (None: the reveal's follow had reset it in the browser), put no sentence
    into the view."""
    from long_text import SENTENCES

    def pick_example(i):
        picker = next(w for w in teacher.selectbox if w.key == "preset")
        (picker.select(picker.options[i]) if i is not None else picker.set_value(None)).run()
        no_exceptions(teacher)

    teacher, code = start_class("positional.py")
    student = join(code)
    teacher.text_area(key="text").input(SENTENCES["40"]).run()
    pick_example(1)
    pick_example(None)                                                 # the picker sends an empty choice
    ask(teacher, "cross_look")
    teacher.button(key="class-ask-reveal").click().run()
    no_exceptions(teacher)
    follow(student)
    pick_example(2)
    pick_example(None)
    widget(teacher, "class-ask-kind").select("next_token").run()
    next(w for w in teacher.selectbox if w.key.startswith("class-ask-step")).select(5).run()
    teacher.button(key="class-ask-go").click().run()
    teacher.button(key="class-ask-reveal").click().run()
    no_exceptions(teacher)
    pick_example(None)
    for _ in range(3):
        teacher.run()
        no_exceptions(teacher)
    assert teacher.text_area(key="text").value.strip() and dict(teacher.query_params)["step"] == "5"
    follow(student)
    assert dict(student.query_params)["step"] == "5"


# -- hostile details ---------------------------------------------------------------------------------------------
def test_forwarding_headers_are_believed_only_from_a_configured_proxy(monkeypatch):
    assert address_of(None, "6.6.6.6", set()) == "127.0.0.1"              # a bare streamlit run: no header believed
    assert address_of("10.0.0.9", "6.6.6.6", {"127.0.0.1"}) == "10.0.0.9"
    assert address_of(None, "10.1.2.3", {"127.0.0.1", "::1"}) == "10.1.2.3"   # nginx on this machine
    from viz.classroom.live import trusted_proxies
    assert trusted_proxies({}) == set()
    assert trusted_proxies({"TRANSFORMER_VIZ_TRUSTED_PROXIES": "127.0.0.1, ::1"}) == {"127.0.0.1", "::1"}


def test_the_class_csv_never_holds_a_spreadsheet_formula():
    from viz.classroom.store import Question
    assert [spreadsheet_safe(x) for x in ("+3+4", "=1", "-x", "@a", "casa")] == ["'+3+4", "'=1", "'-x", "'@a", "casa"]
    code, secret = class_store().create()
    class_store().ask(code, secret, Question("cross_look", {"layer": 0, "head": 0, "target": "=A1", "position": 0},
                                             ("+3+4", "casa"), 1, "explorer", {}))
    import csv
    import io
    import streamlit  # noqa: F401 - t() reads the session's language (English outside a run)
    rows = list(csv.DictReader(io.StringIO(history_csv(code, secret).decode())))
    assert [r["choice"] for r in rows] == ["'+3+4", "casa"]


def test_a_phone_has_the_language_switch_on_the_start_pages_first_screen(monkeypatch):
    """A phone's sidebar starts folded, and the language switch with it: beside the start page's join box there
    is one, in and out of a class."""
    from viz.elements import ui
    monkeypatch.setattr(ui, "on_phone", lambda: True)
    monkeypatch.setattr(panel, "on_phone", lambda: True)
    at = run_page(None)
    no_exceptions(at)
    at.button(key="class-ask-lang").click().run()
    no_exceptions(at)
    assert dict(at.query_params).get("lang") == "zh" and at.text_input(key="class-join-home").label == message(
        "zh", "class.join.label")


def test_a_step_in_the_teachers_decoding_view_is_no_switch_for_a_follower(monkeypatch):
    """The decoding page's step is picked in the browser (issue 44): the teacher's step is reported, written to the
    URL and published; a follower's screen takes it into its URL and view with no switch."""
    import viz.classroom.student as student_side
    switches = []
    real = student_side.go_to
    monkeypatch.setattr(student_side, "go_to", lambda *a, **k: switches.append(a[0]) or real(*a, **k))
    teacher, code = start_class("decoding.py")
    student = join(code)
    assert browser_view_sent(student, "decoding")[0]["pick"] == {"step": 0}
    switches.clear()
    browser_says(teacher, state={"pick": {"step": 2}}, where="decoding")
    no_exceptions(teacher)
    assert dict(teacher.query_params).get("step") == "2"
    follow(student)
    assert switches == []
    assert browser_view_sent(student, "decoding")[0]["pick"] == {"step": 2}
    assert dict(student.query_params).get("step") == "2"
