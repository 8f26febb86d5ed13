"""A student's side of a class: their screen follows the teacher's view (in their own language and presenter
setting), or they explore on their own; they answer the teacher's question and see the model's answer.

Who a student is: the id the store gave them when they joined (store.enrol), kept in the session and in their
browser (viz/classroom/browser.py): a reload or a second tab is the same student. A join while the store cannot be
reached waits: the poll tries again until it can.

How a student's screen follows: a fragment reruns every poll_every_s() seconds (0.5-2 s, from the class's size;
only the fragment, not the page; its timer is the browser's: browser.heartbeat): it reads the teacher's view
version and the open question from the store (and checks in, for the teacher's count, every CHECK_IN_EVERY_S), and when the version changed it
switches to the teacher's view right there (no run of the old page first). That one run draws the page with the
teacher's values in every picker (view.follow drops the widgets' own values; each is seeded from the view:
view.seeded), after checking it got there (live.arrived). A change the page's browser-side view makes itself (the
explorer's layer, head, kind) needs no run of the page: the poll hands the pick to the view (show). Nothing a
student does is written anywhere but their own answers.
"""
from __future__ import annotations

import time

import streamlit as st

from viz.core import view
from viz.core.catalogue import LANGS
from viz.elements.browser_view import hand_pick, pick_change
from viz.classroom import browser
from viz.classroom.live import arrived, class_store, client_address, go_to, personal_params, say
from viz.classroom.store import ClassGone, Published, Question, StoreDown, TooMany
from viz.classroom.teacher import choice_label, prompt_text
from viz.core.i18n import t
from viz.core.text import plain
from viz.elements.ui import on_phone

OWN = view.Own("viz.classroom.student")  # this module's own session values
CLASS_STUDENT = OWN.value("class-student")        # the id the store gave this student (also in a cookie)
CLASS_CHECKED_IN = OWN.value("class-checked-in")  # (when, following) last told the store
CLASS_POLL_EVERY = OWN.value("class-poll-every")  # this screen's poll interval, s (from the class's size)
CLASS_ANSWERED = OWN.value("class-answered")      # {question id: choice} answered here

CLASS_POLLS_PER_S = 100       # a class's follow polls in all, a second: its screens poll as often as this allows
FOLLOW_EVERY_S = (0.5, 2.0)   # a screen's poll, at the fastest and the slowest; the teacher's change reaches it
                              # within about this, plus a redraw (60 students: every 0.6 s; 200: every 2 s)
CHECK_IN_EVERY_S = 3.0        # presence counts a screen seen in the last store.PRESENT_S (10 s)


def join(code: str, student: str | None = None) -> None:
    """This session follows class `code` as `student` (None: the store gives an id at the next poll that reaches
    it; a forged or stale id from a cookie is checked there too)."""
    view.put(view.CLASS_CODE, code)
    view.put(view.CLASS_FOLLOWING, True)
    view.pop(view.CLASS_VERSION)
    if student is None:
        view.pop(CLASS_STUDENT)
    else:
        view.put(CLASS_STUDENT, student)
    enrol(code)


def enrol(code: str) -> str | None:
    """This session's student id in `code`, asked of the store once (None while it cannot be reached)."""
    me = view.get(CLASS_STUDENT)
    if me is not None:
        return me
    try:
        me = class_store().enrol(code, client_address())
    except StoreDown:
        return None
    except TooMany:
        _leave(t("class.too_many_students"))
        return None
    except ClassGone:
        _leave(t("class.ended"))
        return None
    view.put(CLASS_STUDENT, me)
    return me


def _leave(notice: str) -> None:
    for value in (view.CLASS_CODE, view.CLASS_FOLLOWING, view.CLASS_VERSION, CLASS_STUDENT):
        view.pop(value)
    view.forget_url(view.CLASS)
    say(notice)


def _explore() -> None:
    view.put(view.CLASS_FOLLOWING, False)


def _follow_again() -> None:
    view.put(view.CLASS_FOLLOWING, True)
    view.pop(view.CLASS_VERSION)              # the teacher's view now, whatever its version


def _other_language() -> None:
    lang = view.get(view.LANG)
    view.put(view.LANG, next(code for code in LANGS if code != lang))


def language_button(where) -> None:
    """The other language in one click (English ↔ 中文), where a phone shows it on its first screen."""
    other = next(name for lang, name in LANGS.items() if lang != view.get(view.LANG))
    where.button(other, key=view.key(view.CLASS_ASK, "lang"), on_click=_other_language, icon=":material/translate:")


def bar(code: str, extra=None) -> None:
    """Over the page: following or exploring, one click to switch, the other language (a phone's sidebar is
    folded away), and the teacher's question. `extra(row)`: more controls for the row (the lesson's download)."""
    view.write_url({view.CLASS: code})   # a reload stays in the class
    me = view.get(CLASS_STUDENT)
    if me is not None:
        browser.remember({browser.STUDENT_COOKIE: (code, me)})
    following = view.get(view.CLASS_FOLLOWING, default=True)
    with st.container(key="class-student", border=True):
        row = st.container(horizontal=True, vertical_alignment="center")
        if on_phone():                         # the short words: the buttons fit beside them on a phone
            row.markdown(t("class.following.short" if following else "class.exploring.short", code=code))
        else:
            row.markdown(t("class.following" if following else "class.exploring", code=code))
        if following:
            row.button(t("class.explore"), key=view.key(view.CLASS_ASK, "explore"), on_click=_explore,
                       icon=":material/explore:")
        else:
            row.button(t("class.follow"), key=view.key(view.CLASS_ASK, "follow"), on_click=_follow_again,
                       icon=":material/sync:", type="primary")
        language_button(row)
        if extra is not None:
            extra(row)
        _follow(code)


def catch_up(code: str) -> None:
    """At the top of a full run of a following student's page: when the teacher's view changed since this screen
    last showed it, switch to it now, before the page itself draws (a switch's own run: checked by arrived)."""
    if arrived() or not view.get(view.CLASS_FOLLOWING, default=True):
        return
    try:
        published = class_store().followed(code)
    except ClassGone:
        _leave(t("class.ended"))
        return
    except StoreDown:
        return
    if published is not None and published.version != view.get(view.CLASS_VERSION):
        show(published, code, poll=False)


def _check_in(code: str, me: str, following: bool) -> None:
    """Tell the store this screen is here (following or exploring): on a change, else every CHECK_IN_EVERY_S."""
    now, last = time.monotonic(), view.get(CLASS_CHECKED_IN)
    if last is not None and last[1] == following and now - last[0] < CHECK_IN_EVERY_S:
        return
    store = class_store()
    store.check_in(code, me, following)
    view.put(CLASS_CHECKED_IN, (now, following))
    present = store.presence(code)
    view.put(CLASS_POLL_EVERY, poll_every_s(present.following + present.exploring))


def poll_every_s(students: int) -> float:
    """How often a student's screen polls the store: as often as the class's polls stay within CLASS_POLLS_PER_S
    in all (each is a fragment run on a worker), within FOLLOW_EVERY_S. A small class follows the teacher faster;
    a lecture hall does not swamp its workers."""
    fastest, slowest = FOLLOW_EVERY_S
    return min(slowest, max(fastest, students / CLASS_POLLS_PER_S))


def _follow(code: str) -> None:
    @st.fragment
    def live() -> None:
        browser.heartbeat(view.get(CLASS_POLL_EVERY, default=1.0), beats=True)
        _poll(code)
        browser.run_done("poll")                    # the next beat may go (a switch never gets here: its page's run says)

    live()


def _poll(code: str) -> None:
    """The poll's work: check in, follow the teacher's view, show the open question."""
    following = view.get(view.CLASS_FOLLOWING, default=True)
    try:
        me = enrol(code)
        if view.get(view.CLASS_CODE) != code:          # refused or ended: the whole page without the class
            st.rerun()
        if me is None:
            raise StoreDown("not enrolled yet")
        _check_in(code, me, following)
        store = class_store()
        published = store.followed(code) if following else None
        question = store.question(code)
    except ClassGone:
        _leave(t("class.ended"))
        st.rerun()
    except StoreDown:
        st.caption(t("class.store_down"))
        return
    if published is not None and published.version != view.get(view.CLASS_VERSION):
        show(published, code, poll=True)
    if question is not None:
        _question(code, me, question)


def show(published: Published, code: str, poll: bool) -> None:
    """Show the teacher's view `published` on this screen: another pick (layer, head, kind) in the page's
    browser-side view is handed to it, with no whole run (in a poll: browser_view.hand_pick); anything else is a
    switch to the view (a whole run)."""
    pick = None
    if published.page == view.get(view.PAGE):
        here, there = view.shared_view().query(), {k: str(v) for k, v in published.query.items()}
        pick = pick_change({name for name in here.keys() | there.keys() if here.get(name) != there.get(name)}, there)
    if pick is None:
        go_to(published.page, published.query, personal_params(code), published.version)
        return
    hand_pick(pick, poll)
    view.put(view.CLASS_VERSION, published.version)


def _question(code: str, me: str, question: Question) -> None:
    answered = _answered(code, me, question)
    mine = plain(choice_label(question, answered), limit=60) if answered is not None and answered >= 0 else None
    if question.revealed:                     # one box: the proof below it stays on a phone's first screen
        right = plain(choice_label(question, question.answer), limit=60)
        on_proof = view.get(view.CLASS_FOLLOWING, default=True) and view.get(view.PAGE) == question.page
        result = (t("class.revealed" if on_proof else "class.revealed.short", answer=right) if mine is None else
                  t("class.you_right" if answered == question.answer else "class.you_wrong", answer=mine, right=right))
        st.success(f"{prompt_text(question)}  \n{result}")
        return
    st.markdown(prompt_text(question))
    if mine is not None:
        st.info(t("class.answered", answer=mine))
        return
    if answered is not None:                  # refused: this id joined after the question opened
        st.info(t("class.answer_refused"))
        return
    row = st.container(horizontal=True, key=view.key(view.CLASS_ASK, "choices"))
    for i in range(len(question.choices)):
        row.button(plain(choice_label(question, i), limit=60), key=view.key(view.CLASS_ASK, question.id, i),
                   on_click=_answer, args=(code, me, question, i))


def _answered(code: str, me: str, question: Question) -> int | None:
    """The choice that counted for this student (asked of the store once per question and session: a reload or
    another tab may have answered), -1 when the store refused it, None before an answer."""
    answers = view.get(CLASS_ANSWERED, default={})
    if question.id not in answers:
        try:
            answers = {**answers, question.id: class_store().answer_of(code, question.id, me)}
            view.put(CLASS_ANSWERED, answers)
        except (ClassGone, StoreDown):
            return None
    return answers.get(question.id)


def _answer(code: str, me: str, question: Question, choice: int) -> None:
    """A choice's click (before the rerun that shows it): counted once per student; refused, the store says
    which answer counted (another tab's), or none (this id joined after the question opened: -1)."""
    try:
        store = class_store()
        counted = choice if store.answer(code, question.id, me, choice) else store.answer_of(code, question.id, me)
    except ClassGone:
        _leave(t("class.ended"))
        return
    except StoreDown:
        say(t("class.store_down"))
        return
    view.put(CLASS_ANSWERED, {**view.get(CLASS_ANSWERED, default={}),
                                   question.id: -1 if counted is None else counted})
