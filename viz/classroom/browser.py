"""What a class keeps in the browser, through public Streamlit only: small custom components (v2, inline, no
iframe) and `st.context.cookies`.

- `remember()` writes the class's cookies: the teacher's (class code and secret: a reload, a new worker or a
  restarted browser tab resumes teaching, and the secret is never in an address the projector shows) and the
  student's (class code and the id the store gave them: one student however many tabs or reloads). The browser
  sends them with the next page load; `remembered()` reads them there (st.context.cookies).
- `heartbeat()` sits in a class bar's fragment: for a student it is the poll, a timer in the browser that asks its
  fragment to run again every `every_s` seconds (a trigger value: only that fragment reruns; the browser keeps
  time, so a busy server cannot lose the timer, as it lost run_every's, which a message from the server arms).
  For both it is a watchdog: when the fragment has not run for WAKE_AFTER_S, `watchdog()` (outside any fragment)
  asks for a whole run. After a worker dies and its page reconnects to another, that worker knows no fragment
  of the page and drops its reruns; the browser sent no whole run in some reconnects, so the page sat there, its
  teacher no longer teaching: the whole run resumes the class from the cookies.
- No beat while a run is under way: from a beat until its fragment run is done, from the start of a whole run
  (`watchdog()`, at its top) until it is done (`run_done()`, at its end), at most BUSY_MAX_S. Streamlit lets a
  fragment's rerun preempt the run in progress, a whole one too, and folds a rerun asked for meanwhile into a
  pending one with the newer request's page and URL: a beat during a switch to the teacher's page stopped that
  page's run before it drew anything, or took the screen back to the old page (1-8 of 60 screens missed a page
  change at a 0.6 s poll, bench/class_load.py).
"""
from __future__ import annotations

import re

import streamlit as st

from viz.core import view

OWN = view.Own("viz.classroom.browser")  # this module's own session values
CLASS_RUNS = OWN.value("class-runs")              # the class bar's fragment runs (its heartbeat's data)
CLASS_DONE = OWN.value("class-done")              # runs that said they were done (run_done's data)

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
  beat.send = data.beats ? setTriggerValue : null;   // the newest run's (each fragment run draws it again)
  beat.seen = Date.now();
  beat.wake_after = data.wake_after_ms;
  beat.busy_max = data.busy_max_ms;
  if (beat.every !== data.every_ms) {
    clearInterval(beat.timer);
    beat.every = data.every_ms;
    beat.timer = setInterval(() => {
      const busy = Date.now() - (beat.busy_since || 0) < beat.busy_max;    // a run under way (run_done ends it)
      if (Date.now() - beat.seen > beat.wake_after && beat.wake) {
        beat.seen = Date.now();
        beat.wake('wake', Date.now());           // a whole run: this server does not know the fragment
      } else if (beat.send && !busy) {
        beat.busy_since = Date.now();
        beat.send('beat', Date.now());
      }
    }, data.every_ms);
  }
  return () => { if (!document.querySelector('.st-key-class-heartbeat')) { clearInterval(beat.timer); beat.every = null; } };
}
"""

_WATCHDOG_JS = """
export default function (component) {
  const beat = window.__tvizHeartbeat || (window.__tvizHeartbeat = {});
  beat.wake = component.setTriggerValue;
  beat.seen = Date.now();                           // a whole run is drawing: no fragment runs meanwhile
  beat.busy_since = Date.now();                     // ...and no beat until it is done (run_done)
}
"""

_DONE_JS = """
export default function (component) {
  const beat = window.__tvizHeartbeat || (window.__tvizHeartbeat = {});
  beat.busy_since = 0;                              // the run is done: the next beat may go
}
"""

HIDDEN_CSS = """<style>.st-key-class-cookies, .st-key-class-heartbeat, .st-key-class-watchdog, .st-key-class-done-poll, .st-key-class-done-page { display: none !important; }
</style>"""   # fixed text

_cookie_writer = st.components.v2.component("tviz_cookies", html="<span hidden></span>", js=_COOKIE_JS)
_heartbeat = st.components.v2.component("tviz_heartbeat", html="<span hidden></span>", js=_HEARTBEAT_JS)
_watchdog = st.components.v2.component("tviz_watchdog", html="<span hidden></span>", js=_WATCHDOG_JS)
_done = st.components.v2.component("tviz_done", html="<span hidden></span>", js=_DONE_JS)
WAKE_AFTER_S = 15.0           # no fragment run for this long: a whole run (longer than any page's run on a busy worker)
BUSY_MAX_S = 10.0             # the longest a run holds the beats back (one that never says it is done: an error)


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


def heartbeat(every_s: float, beats: bool) -> None:
    """Inside a fragment that runs every `every_s` seconds: with `beats`, the browser's timer runs it (a student's
    poll); in any case a whole run is asked for when it has not run for WAKE_AFTER_S. Each run sends its number
    (new data each run, so the browser sees each one)."""
    run = view.get(CLASS_RUNS, default=0) + 1
    view.put(CLASS_RUNS, run)
    st.html(HIDDEN_CSS)
    with st.container(key="class-heartbeat"):
        _heartbeat(data={"every_ms": int(every_s * 1000), "beats": beats, "run": run,
                         "wake_after_ms": int(WAKE_AFTER_S * 1000), "busy_max_ms": int(BUSY_MAX_S * 1000)},
                   key="class-heartbeat-timer", on_beat_change=_ignore)


def watchdog() -> None:
    """Outside any fragment, on every whole run of a page in a class: what heartbeat() wakes."""
    st.html(HIDDEN_CSS)
    with st.container(key="class-watchdog"):
        _watchdog(key="class-watchdog-trigger", on_wake_change=_ignore)


def run_done(run: str) -> None:
    """At the end of a `run` in a class ("poll": the poll's fragment; "page": a whole run, after its page): the
    browser may beat again. Each sends its number (new data: the browser sees each one)."""
    number = view.get(CLASS_DONE, default=0) + 1
    view.put(CLASS_DONE, number)
    st.html(HIDDEN_CSS)
    with st.container(key=f"class-done-{run}"):
        _done(data={"run": number}, key=f"class-run-done-{run}")


def _ignore() -> None:
    """A beat or a wake needs no callback of its own: its rerun is the point."""
