"""What a class needs from Streamlit: the store this server shares between sessions, who a student is, where a
request comes from, the links a class is joined and resumed by, and the QR code of the join link.

The store: viz.classroom.backend.open_store(), cached per process (st.cache_resource): one `MemoryStore`, the
default of `streamlit run app.py`, or the lecture hall's Redis that every worker shares (TRANSFORMER_VIZ_REDIS).

A student's identity: Streamlit's XSRF cookie (`_streamlit_xsrf`, set once per browser and sent by every tab).
Tornado masks it afresh in each page load ("2|mask|masked token|time"); the token under the mask is the
browser's, so a reload and a second tab give the same id. It is hashed with the class code (a student's id says
nothing outside their class). Where a browser sends no such cookie (XSRF protection off, cookies blocked, a
test client) the fallback is a random id kept in the session: a reload there counts as a new student.
"""
from __future__ import annotations

import binascii
import hashlib
import io
import secrets
from urllib.parse import urlencode

import segno
import streamlit as st

from viz import view
from viz.catalogue import DEFAULT_LANG
from viz.nav import PAGES
from viz.classroom.backend import open_store
from viz.classroom.store import ClassStore

XSRF_COOKIE = "_streamlit_xsrf"
PROXIES = {None, "127.0.0.1", "::1"}     # a request from here came through the local nginx (or is local)


@st.cache_resource(show_spinner=False)
def class_store() -> ClassStore:
    """The class store every session of this process shares (in Redis, every worker's sessions). A URL that
    cannot be a Redis raises StoreDown (not cached): the caller's page goes on without the class."""
    return open_store()


def browser_token(cookie: str | None) -> str | None:
    """The stable part of Tornado's XSRF cookie: version 2 is '2|<mask hex>|<masked token hex>|<time>' with the
    token XOR the 4-byte mask (a new mask each page load, the same token); version 1 is the token in hex."""
    if not cookie or not isinstance(cookie, str):
        return None
    try:
        parts = cookie.split("|")
        if len(parts) == 4 and parts[0] == "2":
            mask, masked = binascii.unhexlify(parts[1]), binascii.unhexlify(parts[2])
            if len(mask) != 4 or not masked:
                return None
            return bytes(b ^ mask[i % 4] for i, b in enumerate(masked)).hex()
        token = binascii.unhexlify(cookie)
        return token.hex() if token else None
    except (binascii.Error, ValueError):
        return None


def student_id(code: str) -> str:
    """This browser's id in class `code` (the same in every tab and after a reload; see the module's note)."""
    token = browser_token(st.context.cookies.get(XSRF_COOKIE))
    if token is None:
        token = view.get(view.CLASS_STUDENT)
        if token is None:
            token = secrets.token_hex(16)
            view.put(view.CLASS_STUDENT, token)
    return hashlib.sha256(f"{code}:{token}".encode()).hexdigest()[:24]


def client_address() -> str:
    """Who asks, for the rate limit: the connection's address, or, from the local proxy, the address nginx
    saw (X-Real-IP, which deploy/nginx_conf.py sets; a client's own X-Real-IP is overwritten there)."""
    address = st.context.ip_address
    if address in PROXIES:
        address = _header("X-Real-Ip") or address
    return address if isinstance(address, str) and address else "local"


def _header(name: str) -> str | None:
    value = st.context.headers.get(name)
    return value if isinstance(value, str) else None


def base_url() -> str:
    """The app's own address as the browser reached it (behind nginx: nginx's), without the page's path."""
    url = st.context.url
    if not isinstance(url, str) or not url:
        host = _header("Host") or f"localhost:{st.get_option('server.port')}"
        return f"http://{host}"
    page = view.get(view.PAGE) or ""
    url = url.rstrip("/")
    return url[: -len(page) - 1] if page and url.endswith("/" + page) else url


def join_link(code: str) -> str:
    return f"{base_url()}/?{urlencode({view.CLASS.name: code})}"


def teacher_link(code: str, secret: str) -> str:
    return f"{base_url()}/?{urlencode({view.CLASS.name: code, view.TEACH.name: secret})}"


def qr_png(text: str, scale: int = 12) -> bytes:
    """The QR code of `text` as a PNG (drawn here: no network)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=scale, border=2)
    return out.getvalue()


def say(text: str) -> None:
    """A notice for the top of the page (this run's, or after a callback the next run's)."""
    view.put(view.CLASS_NOTICE, [*view.get(view.CLASS_NOTICE, default=[]), text])


def page_file(url_path: str) -> str | None:
    """The file of the page served at `url_path` ("" or "home": the start page), None for no page of the app."""
    for page in PAGES:
        if page.url == url_path or (not url_path and page is PAGES[0]):
            return page.file
    return None


def go_to(page: str, query: dict, personal: dict, version: int | None = None, tries: int = 0) -> None:
    """Show the view `page` + `query` (checked again here) on this screen, from its next run: its sidebar values,
    its page, its layer, head, step... from the URL; `personal`: what this screen keeps its own (language,
    presenter mode, the class). A student's switch to the teacher's view `version` is checked by the run it asks
    for (arrived())."""
    file = page_file(page)
    if file is None:
        return
    shown = view.View.from_query(page, {k: str(v) for k, v in query.items()})
    if version is not None:
        view.put(view.CLASS_SWITCH, (version, shown, dict(personal), tries))
    view.follow(shown)
    st.switch_page(file, query_params={**shown.query(), **personal})


MAX_SWITCH_TRIES = 3


def arrived() -> bool:
    """At the top of the run a student's switch asked for, before the page draws: True when the switch is done
    (the teacher's view and its version now shown), False when this run is no switch's. Streamlit merges a poll
    that reaches it just after the switch into the switch's rerun, and the poll's page, URL and widget values
    (the old view's) win: such a run switches again (at most MAX_SWITCH_TRIES times: then the view shown counts)."""
    switch = view.pop(view.CLASS_SWITCH)
    if switch is None:
        return False
    version, shown, personal, tries = switch
    if (view.get(view.PAGE) != shown.page or view.shared_view().query() != shown.query()) and tries < MAX_SWITCH_TRIES:
        go_to(shown.page, shown.query(), personal, version, tries + 1)
    view.put(view.CLASS_VERSION, version)
    return True


def personal_params(code: str | None = None) -> dict:
    """The URL values this screen keeps its own: its language, presenter mode and (a student) the class."""
    lang = view.get(view.LANG)
    params = {view.LANG.name: lang if lang and lang != DEFAULT_LANG else None,
              view.PRESENT.name: "1" if view.get(view.PRESENT) else None, view.CLASS.name: code}
    return {k: v for k, v in params.items() if v}
