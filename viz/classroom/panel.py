"""A live class around every page: viz/presenter.run_page calls `before_page(page)` before the page and
`after_page()` after it. Before: the class link is read once (class=CODE joins, class=CODE&teach=SECRET resumes
teaching), then the teacher's bar (viz/classroom/teacher.py) or the student's (viz/classroom/student.py), or
the sidebar's "start a class". After: a teacher's session publishes its view (language and presenter mode left
out) whenever it changed (the store keeps one version per change).
"""
from __future__ import annotations

import streamlit as st

from viz import view
from viz.classroom import student, teacher
from viz.classroom.live import class_store, client_address, say
from viz.classroom.store import JOIN_TRIES_PER_MINUTE, ClassGone, NotTeacher, StoreDown, normal_code
from viz.i18n import t
from viz.text import plain


def before_page(page) -> None:
    """The class's part over the page."""
    view.put(view.PAGE, page.url_path)
    _read_link()
    for notice in view.pop(view.CLASS_NOTICE, default=[]):
        st.warning(plain(notice, limit=300))       # may quote the link's text
    code, secret = view.get(view.CLASS_CODE), view.get(view.CLASS_SECRET)
    if code and not secret:
        student.catch_up(code)          # a changed view is switched to before the page draws
    if code and secret:
        teacher.sidebar_panel(code, secret)
        teacher.bar(code, secret)
    elif code:
        student.bar(code)
    else:
        teacher.start_panel()


def after_page() -> None:
    code, secret = view.get(view.CLASS_CODE), view.get(view.CLASS_SECRET)
    if not (code and secret):
        return
    shown = view.shared_view()
    try:
        class_store().publish(code, secret, shown.page, shown.query())
    except (ClassGone, NotTeacher):
        teacher.forget(t("class.ended"))
    except StoreDown:
        st.warning(t("class.store_down"))


def _read_link() -> None:
    """The link's class= (and teach=) are looked up once per value: a student keeps class= in the URL, which
    would otherwise cost a lookup every run. A wrong code or teacher link counts against the client's rate
    limit, a right one does not (a whole room behind one address joins at once); over the limit, no lookup."""
    raw, secret = view.read(view.CLASS), view.read(view.TEACH)
    if not raw or view.get(view.CLASS_LINK_READ) == (raw, secret):
        return
    view.put(view.CLASS_LINK_READ, (raw, secret))
    view.forget_url(view.TEACH)                    # a teacher's secret never stays in the address bar
    code = normal_code(raw)
    if code is None:
        say(t("class.bad_code", raw=repr(raw[:12])))
        view.forget_url(view.CLASS)
        return
    try:
        store = class_store()
        if not store.allow(client_address(), "join", JOIN_TRIES_PER_MINUTE, count=False):
            say(t("class.too_many"))
            return
        if secret:
            _resume(code, secret)
        elif store.exists(code):
            student.join(code)
        else:
            store.allow(client_address(), "join", JOIN_TRIES_PER_MINUTE)
            say(t("class.unknown", code=code))
            view.forget_url(view.CLASS)
    except StoreDown:
        say(t("class.store_down"))


def _resume(code: str, secret: str) -> None:
    if class_store().is_teacher(code, secret):
        teacher.take(code, secret)
        view.forget_url(view.CLASS)
    else:
        class_store().allow(client_address(), "join", JOIN_TRIES_PER_MINUTE)
        say(t("class.bad_teacher", code=code))
        view.forget_url(view.CLASS)
