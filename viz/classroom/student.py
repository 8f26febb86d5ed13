"""A student's side of a class: their screen follows the teacher's view (in their own language and presenter
setting), or they explore on their own; they answer the teacher's question and see the model's answer.

How a student's screen follows: a fragment reruns every FOLLOW_EVERY_S seconds (only the fragment, not the
page): it reads the teacher's view version and the open question from the store (and checks in, for the
teacher's count, every CHECK_IN_EVERY_S), and when the version changed it switches to the teacher's view right
there (no run of the old page first). That one run draws the page with the teacher's values in every picker
(view.follow drops the widgets' own values; each is seeded from the view: view.seeded), after checking it got
there (live.arrived). Nothing a student does is written anywhere but their own answers.
"""
from __future__ import annotations

import time

import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from viz import view
from viz.classroom.live import arrived, class_store, go_to, personal_params, say, student_id
from viz.classroom.store import ClassGone, Question, StoreDown
from viz.classroom.teacher import choice_label, prompt_text
from viz.i18n import t
from viz.text import plain

FOLLOW_EVERY_S = 1.0          # the teacher's change reaches a following screen within about this, plus a redraw
CHECK_IN_EVERY_S = 3.0        # presence counts a screen seen in the last store.PRESENT_S (10 s)


def join(code: str) -> None:
    view.put(view.CLASS_CODE, code)
    view.put(view.CLASS_FOLLOWING, True)
    view.pop(view.CLASS_VERSION)


def _leave(notice: str) -> None:
    for value in (view.CLASS_CODE, view.CLASS_FOLLOWING, view.CLASS_VERSION):
        view.pop(value)
    view.forget_url(view.CLASS)
    say(notice)


def _explore() -> None:
    view.put(view.CLASS_FOLLOWING, False)


def _follow_again() -> None:
    view.put(view.CLASS_FOLLOWING, True)
    view.pop(view.CLASS_VERSION)              # the teacher's view now, whatever its version


def bar(code: str) -> None:
    """Over the page: following or exploring, one click to switch, and the teacher's question."""
    view.write_url({view.CLASS: code})   # a reload stays in the class
    following = view.get(view.CLASS_FOLLOWING, default=True)
    with st.container(key="class-student", border=True):
        row = st.container(horizontal=True, vertical_alignment="center")
        row.markdown(t("class.following" if following else "class.exploring", code=code))
        if following:
            row.button(t("class.explore"), key=view.key(view.CLASS_ASK, "explore"), on_click=_explore,
                       icon=":material/explore:")
        else:
            row.button(t("class.follow"), key=view.key(view.CLASS_ASK, "follow"), on_click=_follow_again,
                       icon=":material/sync:", type="primary")
        _follow(code)


def _keep_polling() -> None:
    """Arm this poll's timer in the browser again, from the poll itself. Streamlit (1.67) sends the timer's
    AutoRerun message once, in the full run that declares the fragment; when a poll the browser sent before that
    run reached it starts before the message left the server (a busy server: 60 students redrawing at once), the
    server clears its outgoing queue of all but deltas and lifecycle messages, the AutoRerun with it, and that
    student's screen never polls again. A browser already timing the fragment ignores the repeat."""
    ctx = get_script_run_ctx(suppress_warning=True)
    fragment = ThreadState.get().fragment_id
    if ctx is None or not ctx.fragment_ids_this_run or not fragment:
        return                                     # a full run declares the fragment: Streamlit sends it
    msg = ForwardMsg()
    msg.auto_rerun.interval, msg.auto_rerun.fragment_id = FOLLOW_EVERY_S, fragment
    ctx.enqueue(msg)


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
        go_to(published.page, published.query, personal_params(code), published.version)


def _check_in(code: str, me: str, following: bool) -> None:
    """Tell the store this screen is here (following or exploring): on a change, else every CHECK_IN_EVERY_S."""
    now, last = time.monotonic(), view.get(view.CLASS_CHECKED_IN)
    if last is not None and last[1] == following and now - last[0] < CHECK_IN_EVERY_S:
        return
    class_store().check_in(code, me, following)
    view.put(view.CLASS_CHECKED_IN, (now, following))


def _follow(code: str) -> None:
    @st.fragment(run_every=FOLLOW_EVERY_S)
    def live() -> None:
        _keep_polling()
        me = student_id(code)
        following = view.get(view.CLASS_FOLLOWING, default=True)
        try:
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
            go_to(published.page, published.query, personal_params(code), published.version)   # a full run
        if question is not None:
            _question(code, me, question)

    live()


def _question(code: str, me: str, question: Question) -> None:
    st.markdown(prompt_text(question))
    answered = view.get(view.CLASS_ANSWERED, default={}).get(question.id)
    if question.revealed:
        right = choice_label(question, question.answer)
        st.success(t("class.revealed", answer=plain(right, limit=60)))
        if answered is not None and answered >= 0:
            st.caption(t("class.you_right" if answered == question.answer else "class.you_wrong",
                         answer=plain(choice_label(question, answered), limit=60)))
        return
    if answered is not None:
        st.info(t("class.answered", answer=plain(choice_label(question, answered), limit=60)) if answered >= 0
                else t("class.answered_before"))
        return
    row = st.container(horizontal=True, key=view.key(view.CLASS_ASK, "choices"))
    for i in range(len(question.choices)):
        row.button(plain(choice_label(question, i), limit=60), key=view.key(view.CLASS_ASK, question.id, i),
                   on_click=_answer, args=(code, me, question, i))


def _answer(code: str, me: str, question: Question, choice: int) -> None:
    """A choice's click (before the rerun that shows it): counted once per browser."""
    try:
        counted = class_store().answer(code, question.id, me, choice)
    except ClassGone:
        _leave(t("class.ended"))
        return
    except StoreDown:
        say(t("class.store_down"))
        return
    kept = choice if counted else -1          # -1: this browser had answered already (another tab, a reload)
    view.put(view.CLASS_ANSWERED, {**view.get(view.CLASS_ANSWERED, default={}), question.id: kept})
