"""What a class keeps in the browser, through public Streamlit only: two small custom components (v2, inline, no
iframe) and `st.context.cookies`.

- `remember()` writes the class's cookies: the teacher's (class code and secret: a reload, a new worker or a
  restarted browser tab resumes teaching, and the secret is never in an address the projector shows) and the
  student's (class code and the id the store gave them: one student however many tabs or reloads). The browser
  sends them with the next page load; `remembered()` reads them there (st.context.cookies).
- `heartbeat()` is a student's poll: a timer in the browser that asks the fragment it sits in to run again
  every `every_s` seconds (a trigger value: only that fragment reruns). The browser keeps time, so a busy
  server cannot lose the timer (Streamlit's own run_every is armed by a message from the server, which a busy
  server dropped: that screen never polled again).
"""
from __future__ import annotations

import re

import streamlit as st

TEACHER_COOKIE = "tviz_teach"          # "CODE:SECRET"
STUDENT_COOKIE = "tviz_student"        # "CODE:ID"
COOKIE_DAYS = 1                        # a class lasts a lesson (the store forgets it after 4 idle hours)
_VALUE = re.compile(r"[A-Za-z0-9_-]{1,80}:[A-Za-z0-9_-]{1,80}")   # what either cookie can hold (a forged one is ignored)

_COOKIE_JS = """
export default function (component) {
  const { data } = component;
  const secure = location.protocol === 'https:' ? '; secure' : '';
  for (const [name, value] of Object.entries(data.cookies)) {
    const now = document.cookie.split('; ').find((c) => c.startsWith(name + '='));
    if (value === null) {
      if (now) document.cookie = name + '=; path=/; max-age=0; samesite=strict' + secure;
    } else if (now !== name + '=' + value) {
      document.cookie = name + '=' + value + '; path=/; max-age=' + data.max_age + '; samesite=strict' + secure;
    }
  }
}
"""

_HEARTBEAT_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const beat = window.__tvizHeartbeat || (window.__tvizHeartbeat = {});
  beat.send = setTriggerValue;                 // the newest mount's: a fragment rerun mounts it again
  if (beat.every !== data.every_ms) {
    clearInterval(beat.timer);
    beat.every = data.every_ms;
    beat.timer = setInterval(() => beat.send('beat', Date.now()), data.every_ms);
  }
  return () => { if (!document.querySelector('.st-key-class-heartbeat')) { clearInterval(beat.timer); beat.every = null; } };
}
"""

HIDDEN_CSS = """<style>.st-key-class-cookies, .st-key-class-heartbeat { display: none !important; }</style>"""   # fixed text

_cookie_writer = st.components.v2.component("tviz_cookies", html="<span hidden></span>", js=_COOKIE_JS)
_heartbeat = st.components.v2.component("tviz_heartbeat", html="<span hidden></span>", js=_HEARTBEAT_JS)


def remembered(name: str) -> tuple[str, str] | None:
    """The (code, value) this browser's cookie `name` holds, from the page load that started this session; None
    when it holds none or something no class wrote."""
    raw = st.context.cookies.get(name)
    if not isinstance(raw, str) or not _VALUE.fullmatch(raw):
        return None
    code, value = raw.split(":", 1)
    return code, value


def remember(cookies: dict[str, tuple[str, str] | None]) -> None:
    """Write (or, for None, delete) the class's cookies in this browser. Drawn on every run that wants them so
    (a component that is not drawn again is removed; writing the same value twice does nothing)."""
    data = {name: None if value is None else f"{value[0]}:{value[1]}" for name, value in cookies.items()}
    st.html(HIDDEN_CSS)
    with st.container(key="class-cookies"):
        _cookie_writer(data={"cookies": data, "max_age": COOKIE_DAYS * 86400}, key="class-cookie-writer")


def heartbeat(every_s: float) -> None:
    """Inside a fragment: rerun that fragment every `every_s` seconds, timed by the browser."""
    st.html(HIDDEN_CSS)
    with st.container(key="class-heartbeat"):
        _heartbeat(data={"every_ms": int(every_s * 1000)}, key="class-heartbeat-timer", on_beat_change=_ignore)


def _ignore() -> None:
    """A beat needs no callback of its own: its rerun is the poll."""
