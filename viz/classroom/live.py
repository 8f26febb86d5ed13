"""What a class needs from Streamlit: the store this server shares between sessions, where a request comes from,
the links a class is joined by, and the QR code of the join link. Public Streamlit only (tests/test_architecture.py
and tests/test_streamlit_contract.py): what a browser keeps is in viz/classroom/browser.py.

The store: viz.classroom.backend.open_store(), cached per process (st.cache_resource): one `MemoryStore`, the
default of `streamlit run app.py`, or the lecture hall's Redis that every worker shares (TRANSFORMER_VIZ_REDIS).

Who a student is: the id the store gave them when they joined (store.enrol), kept in their browser's cookie
(browser.STUDENT_COOKIE), so a reload and a second tab are the same student; an id the store never gave is no one.
"""
from __future__ import annotations

import io
import ipaddress
import os
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

from viz.core import view
from viz.core.catalogue import DEFAULT_LANG
from viz.elements.nav import PAGES
from viz.classroom.backend import open_store
from viz.classroom.store import ClassStore

OWN = view.Own("viz.classroom.live")  # this module's own session values
CLASS_SWITCH = OWN.value("class-switch")          # a student: the run a switch to the teacher's view asked for

TRUSTED_PROXIES_ENV = "TRANSFORMER_VIZ_TRUSTED_PROXIES"   # deploy/serve.py: its nginx's addresses (comma-separated)
PUBLIC_URL_ENV = "TRANSFORMER_VIZ_PUBLIC_URL"             # deploy/serve.py --public-url: the address students open


@st.cache_resource(show_spinner=False)
def class_store() -> ClassStore:
    """The class store every session of this process shares (in Redis, every worker's sessions). A URL that
    cannot be a Redis raises StoreDown (not cached): the caller's page goes on without the class."""
    return open_store()


def trusted_proxies(env=None) -> set[str]:
    """The addresses whose X-Real-IP is believed: none unless the deployment names its proxy (a bare `streamlit
    run` believes no header: anyone could send one)."""
    raw = (os.environ if env is None else env).get(TRUSTED_PROXIES_ENV, "")
    return {part.strip() for part in raw.split(",") if part.strip()}


def client_address() -> str:
    """Who asks, for the rate limits (address_of)."""
    return address_of(st.context.ip_address, _header("X-Real-Ip"), trusted_proxies())


def address_of(connection: str | None, real_ip: str | None, trusted: set[str]) -> str:
    """The connection's address, or, from a trusted proxy, the address it saw (X-Real-IP, which
    deploy/nginx_conf.py sets, overwriting a client's own). Streamlit gives no address for a connection from this
    machine: that is 127.0.0.1 here."""
    address = connection if isinstance(connection, str) and connection else "127.0.0.1"
    if address in trusted and real_ip:
        address = real_ip
    return address


def _header(name: str) -> str | None:
    value = st.context.headers.get(name)
    return value if isinstance(value, str) else None


def base_url() -> str:
    """The address students open: the deployment's public one (PUBLIC_URL_ENV), else the app's own as the
    teacher's browser reached it (behind nginx: nginx's), without the page's path."""
    public = os.environ.get(PUBLIC_URL_ENV, "").strip().rstrip("/")
    if public:
        return public
    url = st.context.url
    if not isinstance(url, str) or not url:
        host = _header("Host") or f"localhost:{st.get_option('server.port')}"
        return f"http://{host}"
    page = view.get(view.PAGE) or ""
    url = url.rstrip("/")
    return url[: -len(page) - 1] if page and url.endswith("/" + page) else url


def join_link(code: str) -> str:
    return f"{base_url()}/?{urlencode({view.CLASS.name: code})}"


def handoff_link(code: str, token: str) -> str:
    """The teacher's link for another device: a single-use token (store.handoff), never the secret itself."""
    return f"{base_url()}/?{urlencode({view.CLASS.name: code, view.HANDOFF.name: token})}"


def is_loopback(url: str) -> bool:
    """True for an address only this machine can open (localhost, 127.x, ::1): a phone cannot join by it."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
        view.put(CLASS_SWITCH, (version, shown, dict(personal), tries))
    view.follow(shown)
    st.switch_page(file, query_params={**shown.query(), **personal})


MAX_SWITCH_TRIES = 3


def arrived() -> bool:
    """At the top of the run a student's switch asked for, before the page draws: True when the switch is done
    (the teacher's view and its version now shown), False when this run is no switch's. Streamlit merges a poll
    that reaches it just after the switch into the switch's rerun, and the poll's page, URL and widget values
    (the old view's) win: such a run switches again (at most MAX_SWITCH_TRIES times: then the view shown counts)."""
    switch = view.pop(CLASS_SWITCH)
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
