"""A live class around every page: viz/frame/presenter.run_page calls `prepare(page)`, then `before_page(extra)` before
the page and `after_page()` after it.

prepare: the link's class= (join) or handoff= (a teacher's other device) is read once per value, and, once a
session, the browser's class cookies (viz/classroom/browser.py): a teacher's reload, a killed worker or a restarted
Redis resumes teaching on the class's view; a student's resumes their place. before_page: the teacher's bar
(viz/classroom/teacher.py) or the student's (viz/classroom/student.py), or the sidebar's "start a class" and the
"join a class" box. after_page: a teacher's session publishes its view (language and presenter mode left out)
whenever it changed (the store keeps one version per change).

Limits (the store's constants): wrong class codes are counted per address (WRONG_CODES_PER_ADDRESS a minute: a
room behind one address mistyping still gets in) and per session (WRONG_CODES_PER_BROWSER); a right code is never
counted; over either, no code is looked up (a guesser learns nothing).
"""
from __future__ import annotations

import streamlit as st

from viz.core import view
from viz.classroom import browser, student, teacher
from viz.classroom.live import class_store, client_address, say
from viz.classroom.store import (WRONG_CODES_PER_ADDRESS, WRONG_CODES_PER_BROWSER, ClassGone, NotTeacher,
                                 StoreDown, normal_code)
from viz.core.i18n import t
from viz.elements.nav import PAGES
from viz.elements.ui import on_phone
from viz.core.text import plain

OWN = view.Own("viz.classroom.panel")  # this module's own session values
CLASS_JOIN = OWN.value("class-join")              # class-join-<where>: a "join a class" box's code
CLASS_LINK_READ = OWN.value("class-link-read")    # the class= / teach= of this link was looked up


def prepare(page) -> None:
    """Before anything of the page is drawn: which class this session is in, and as whom."""
    view.put(view.PAGE, page.url_path)
    view.put(CLASS_JOIN, page.url_path in ("", PAGES[0].url), "on-start-page")
    _resume_from_browser()              # first: a teacher opening their own class's join link stays the teacher
    _read_link()


def active() -> bool:
    """This session teaches or follows a class (its bar takes the lesson's download into its row)."""
    return bool(view.get(view.CLASS_CODE))


def before_page(extra=None) -> None:
    """The class's part over the page. `extra(row)`: controls for the class bar's row (the lesson's download)."""
    for notice in view.pop(view.CLASS_NOTICE, default=[]):
        st.warning(plain(notice, limit=300))       # may quote the link's text
    code, secret = view.get(view.CLASS_CODE), view.get(view.CLASS_SECRET)
    if code:
        browser.watchdog()
    if code and secret:
        browser.remember({browser.TEACHER_COOKIE: (code, secret), browser.STUDENT_COOKIE: None})
        teacher.sidebar_panel(code, secret)
        teacher.bar(code, secret, extra)
    elif code:
        student.catch_up(code)          # a changed view is switched to before the page draws
        student.bar(code, extra)
    else:
        _forget_cookies()
        if view.get(CLASS_JOIN, "on-start-page"):
            with st.container(key="class-join-box", border=True):
                join_box(st, "home")
                if on_phone():                 # a phone's sidebar, and its language switch, start folded away
                    student.language_button(st)
        with st.sidebar.expander(t("class.sidebar")):
            join_box(st, "sidebar")
            st.divider()
            teacher.start_panel()


LIVENESS_EVERY_S = 5.0


def _watch_worker() -> None:
    """Outside a class too: a page whose worker died and whose browser reconnected to another one gets a whole run
    (browser.heartbeat's watchdog), so its downloads, which only the worker that drew them serves, work again
    (they answered 404 there until something reran the page)."""
    browser.watchdog()

    @st.fragment(run_every=LIVENESS_EVERY_S)
    def alive() -> None:
        browser.heartbeat(LIVENESS_EVERY_S, beats=False)

    alive()


def after_page() -> None:
    code, secret = view.get(view.CLASS_CODE), view.get(view.CLASS_SECRET)
    if not code:
        _watch_worker()                 # under the page: nothing of it comes before the page's own picture
    else:
        browser.run_done("page")              # the whole run is done: the poll may beat again
    if not (code and secret):
        return
    shown = view.shared_view()
    try:
        class_store().publish(code, secret, shown.page, shown.query())
    except (ClassGone, NotTeacher):
        teacher.forget(t("class.ended"))
    except StoreDown:
        pass                            # the class bar says so, in large type, at the top


def join_box(where, place: str) -> None:
    """"Join a class": a box for the code a projector shows (any case, spaces and dashes ignored)."""
    with where.form(key=view.key(CLASS_JOIN, place, "form"), border=False, enter_to_submit=True):
        row = st.container(horizontal=True, vertical_alignment="bottom")
        row.text_input(t("class.join.label"), key=view.key(CLASS_JOIN, place), max_chars=20,
                       placeholder=t("class.join.placeholder"), width=220)
        row.form_submit_button(t("class.join.go"), on_click=_join_typed, args=(place,), icon=":material/login:")


def _join_typed(place: str) -> None:
    raw = view.get(CLASS_JOIN, place) or ""
    if raw.strip():
        _join(raw)


def _forget_cookies() -> None:
    """Outside a class, the cookies of one this browser was in go (drawn only when the page load brought one)."""
    stale = {name: None for name in (browser.TEACHER_COOKIE, browser.STUDENT_COOKIE) if browser.remembered(name)}
    if stale:
        browser.remember(stale)


def _read_link() -> None:
    """The link's class= (and handoff=) are looked up once per value: a student keeps class= in the URL, which
    would otherwise cost a lookup every run."""
    raw, token = view.read(view.CLASS), view.read(view.HANDOFF)
    if not raw or view.get(CLASS_LINK_READ) == (raw, token):
        return
    view.put(CLASS_LINK_READ, (raw, token))
    view.forget_url(view.HANDOFF)                  # single use: it never stays in the address bar
    if normal_code(raw) is not None and normal_code(raw) == view.get(view.CLASS_CODE):
        return                                     # this session is in that class already (a cookie resumed it)
    if token:
        _redeem(raw, token)
    else:
        _join(raw)


def _may_look_up() -> bool:
    """Under both limits of wrong codes (this address's, this session's)."""
    tries = view.get(CLASS_JOIN, "wrong", default=0)
    return tries < WRONG_CODES_PER_BROWSER and class_store().allow(
        client_address(), "join", WRONG_CODES_PER_ADDRESS, count=False)


def _wrong_code() -> None:
    view.put(CLASS_JOIN, view.get(CLASS_JOIN, "wrong", default=0) + 1, "wrong")
    class_store().allow(client_address(), "join", WRONG_CODES_PER_ADDRESS)


def _join(raw: str) -> None:
    """Join the class `raw` names (a link's class= or a typed code), or say plainly why not."""
    code = normal_code(raw)
    if code is None:
        say(t("class.bad_code", raw=repr(str(raw)[:12])))
        view.forget_url(view.CLASS)
        return
    try:
        if not _may_look_up():
            say(t("class.too_many"))
            view.forget_url(view.CLASS)
            return
        if not class_store().exists(code):
            _wrong_code()
            say(t("class.unknown", code=code))
            view.forget_url(view.CLASS)
            return
    except StoreDown:
        student.join(code)                         # the poll enrols once the store answers again
        return
    kept = browser.remembered(browser.STUDENT_COOKIE)
    student.join(code, kept[1] if kept and kept[0] == code and _enrolled(code, kept[1]) else None)


def _enrolled(code: str, student_id: str) -> bool:
    try:
        return class_store().enrolled(code, student_id)
    except (StoreDown, ClassGone):
        return False


def _redeem(raw: str, token: str) -> None:
    """A teacher's link for another device: its single-use token gives this browser the teacher's secret."""
    code = normal_code(raw)
    view.forget_url(view.CLASS)
    try:
        secret = class_store().redeem(code, token) if code and _may_look_up() else None
    except StoreDown:
        say(t("class.store_down"))
        return
    if secret is None:
        if code:
            _wrong_code()
        say(t("class.bad_handoff", code=code or "?"))
        return
    teacher.resume(code, secret)


def _resume_from_browser() -> None:
    """Once a session (a page load): a class this browser was teaching or following goes on. A teacher's cookie
    comes first; a stale one (the class ended) is forgotten (before_page deletes it)."""
    if view.get(view.CLASS_COOKIES_READ) or view.get(view.CLASS_CODE):
        return
    view.put(view.CLASS_COOKIES_READ, True)
    taught = browser.remembered(browser.TEACHER_COOKIE)
    if taught is not None:
        code, secret = taught
        try:
            if not class_store().is_teacher(code, secret):
                return
        except StoreDown:
            pass                                   # teach on: the bar says, in large type, that it cannot reach
        teacher.resume(code, secret)
        return
    followed = browser.remembered(browser.STUDENT_COOKIE)
    link = normal_code(view.read(view.CLASS) or "")
    if followed is not None and link in (None, followed[0]):
        code, student_id = followed
        try:
            if class_store().enrolled(code, student_id):
                student.join(code, student_id)
        except (StoreDown, ClassGone):
            return
