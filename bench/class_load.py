"""Load on a live class in the lecture hall: deploy/serve.py (nginx, 2 workers, its Redis), a teacher and 60 then
200 students, each a client speaking Streamlit's websocket protocol as the browser's frontend does (nothing drawn):
it keeps nginx's and Streamlit's cookies, runs each `run_every` fragment on the interval the server asked for (a
fragment rerun is the frontend's job: an AutoRerun message names the fragment, and the browser sends a rerun
with that fragment id every interval), clicks buttons, and reconnects through nginx when its worker dies.

Measured: the time from the teacher's publish (the store's version changing) to each student's redraw (the new
view's first chart received), for page and head changes; the workers' CPU per following student while nothing
changes; answers sent and answers counted (each student once, plus second-tab attempts, against the store's
tally); and the same after one worker is SIGKILLed mid-class.

    python bench/class_load.py [--quick] [--students 60,200] [--no-kill] [--write]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import signal
import sys
import time
import urllib.parse

from common import ROOT, Check, Section, cpu_seconds, log, machine_line, median, percentile, report, secs, table

sys.path.insert(0, str(ROOT / "deploy"))
from harness import NGINX, Deployment, get, worker_healthy

from viz.classroom.browser import BUSY_MAX_S
from viz.classroom.store import WRONG_CODES_PER_ADDRESS
from viz.figures.browser_view import HEAD_ELEMENT   # a view's pick, drawn in a student's poll: no whole run

FOLLOW_GOAL_S = 2.0           # the issue: a student's screen follows within 2 s of the teacher's change
XSRF_COOKIE = "_streamlit_xsrf"
VIEW_KEY = "explorer-view"       # the explorer's browser-side view: a teacher's pick is its state (viz/elements/browser_view.py)
START_KEY = "class-ask-start"
ASK_KEY = "class-ask-go"
RECONNECT_EVERY_S = 0.5
FORGOTTEN_KEPT = 64             # messages aged out of a tab's cache, kept for a reference already on its way
MAX_CACHED_AGE = 2               # Streamlit's global.maxCachedMessageAge: the frontend's cache forgets after it
NAT_STUDENTS = 30
CHANGES = (("head", 1), ("page", "multihead"), ("page", "explorer"), ("head", 2))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 students, short idle window")
    parser.add_argument("--students", default="60,200")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of an idle class for its CPU")
    parser.add_argument("--no-kill", action="store_true")
    parser.add_argument("--no-busy-guard", action="store_true",
                        help="the students' browsers beat while a run is under way (the heartbeat before 2026-11-29)")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--text", default="", help="the teacher's sentence (default: the sidebar's first example)")
    args = parser.parse_args(argv)
    if args.quick:
        args.students, args.idle = "10", 10.0
    args.students = [int(n) for n in args.students.split(",")]
    return args


class Tab:
    """One browser tab on the app over Streamlit's websocket protocol, doing what the frontend does for a class.
    `jar` (cookies) is the browser's: two tabs of one browser share it, so Streamlit sees the same XSRF cookie."""
    guard = True          # no beat while a run is under way, as the browser's heartbeat (False: as before 2026-11-29)

    def __init__(self, base: str, jar: dict, name: str, address: str | None = None):
        self.base, self.jar, self.name, self.address = base, jar, name, address
        self.ws = None
        self.page_hash, self.query, self.page_name = "", "", ""
        self.pages: dict[str, str] = {}            # url path -> page script hash (from the navigation message)
        self.timers: dict[str, asyncio.Task] = {}  # fragment id -> its run_every task
        self.intervals: dict[str, float] = {}      # fragment id -> its timer's interval
        self.busy_since = 0.0                      # a run under way holds the beats (viz/classroom/browser.py)
        self.widgets: dict[str, tuple] = {}        # user key -> (widget id, fragment id, element)
        self.codes: list[str] = []                 # st.code texts (the class links)
        self.draws: list[tuple[float, str, str]] = []      # (when the run's first chart came, page hash, query)
        self.finished = asyncio.Event()
        self.runs_finished = 0
        self.run_started = 0.0
        self.drawn_this_run = False
        self.reconnects = 0
        self.errors: list[str] = []                # exceptions the app showed this tab
        self.polls: list[float] = []               # when each fragment run began (new_session)
        self.closed = False
        self.reader: asyncio.Task | None = None
        self.cache: dict[str, list] = {}           # the browser's message cache: hash -> [payload, run, fragment]
        self.forgotten: dict[str, list] = {}       # aged out of it, no longer named in a rerun (see _take)
        self.run_count = 0
        self.run_fragments: set[str] = set()       # the fragments the run now in progress runs (none: whole)

    # -- connection ------------------------------------------------------------------------------------
    async def open(self, page_name: str, query: dict) -> None:
        self.page_name, self.query = page_name, urllib.parse.urlencode(query)
        await self._connect()
        self.rerun()
        self.reader = asyncio.create_task(self._read())

    async def _connect(self) -> None:
        import websockets
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.jar.items())}
        if self.address:                   # the student's own address, as a trusted front proxy names it
            headers["X-Forwarded-For"] = self.address
        self.ws = await websockets.connect(
            self.base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"], origin=self.base,
            max_size=2**28, additional_headers=headers, open_timeout=30,
            ping_interval=None)            # a browser sends no pings (a busy server's late pong closed the socket)
        for line in self.ws.response.headers.get_all("Set-Cookie"):
            name, _, rest = line.partition("=")
            self.jar[name.strip()] = rest.split(";")[0]

    async def _read(self) -> None:
        import websockets
        while not self.closed:
            try:
                async for payload in self.ws:
                    try:
                        self._take(payload)
                    except Exception as error:  # noqa: BLE001 - said with the tab's errors, and read on
                        self.errors.append(f"bench: {error!r}")
            except websockets.ConnectionClosed:
                pass
            if self.closed:
                return
            await self._reconnect()

    async def _reconnect(self) -> None:
        """As the frontend: retry until a worker answers (nginx picks one), then rerun the page it was on."""
        while not self.closed:
            await asyncio.sleep(RECONNECT_EVERY_S)
            try:
                await self._connect()
            except Exception:  # noqa: BLE001 - a refused or dropped connection: try again
                continue
            self.reconnects += 1
            self.rerun()
            return

    async def close(self) -> None:
        self.closed = True
        for task in self.timers.values():
            task.cancel()
        if self.ws is not None:
            await self.ws.close()
        if self.reader:
            await asyncio.gather(self.reader, return_exceptions=True)

    # -- messages --------------------------------------------------------------------------------------
    def _take(self, payload: bytes) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":                         # a message this browser holds: taken from its cache
            # a reference the server sent for a rerun that named it, after a run ended meanwhile aged it out:
            # taken from what was forgotten (a bench that lost it stopped reading its socket, silently)
            entry = self.cache.get(msg.ref_hash) or self.forgotten.pop(msg.ref_hash)
            self.cache[msg.ref_hash] = entry
            entry[1] = self.run_count
            metadata, msg = msg.metadata, ForwardMsg.FromString(entry[0])
            msg.metadata.CopyFrom(metadata)
            kind = msg.WhichOneof("type")
        elif msg.metadata.cacheable:
            self.cache[msg.hash] = [payload, self.run_count, msg.delta.fragment_id]
        if kind == "new_session":
            self._new_session(msg)
        elif kind == "navigation":                     # the page now (new_session names the main script's)
            self.pages.update({p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages})
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            self._auto_rerun(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "script_finished":
            self.runs_finished += 1
            self._age_cache()
            self.finished.set()

    def _age_cache(self) -> None:
        """As 1.67's frontend after each run: messages not used for MAX_CACHED_AGE runs are forgotten (a fragment's
        run ages only that fragment's messages)."""
        self.run_count += 1
        for key, (_, used, fragment) in list(self.cache.items()):
            if self.run_fragments and fragment not in self.run_fragments:
                continue
            if self.run_count - used > MAX_CACHED_AGE:
                self.forgotten[key] = self.cache.pop(key)
        for key in list(self.forgotten)[:-FORGOTTEN_KEPT]:
            del self.forgotten[key]

    def _new_session(self, msg) -> None:
        rerun = set(msg.metadata.run.fragment_ids)
        self.run_fragments = rerun
        if rerun:
            self.polls.append(time.perf_counter())
        else:                                  # a full run: the frontend drops its fragment timers
            for task in self.timers.values():
                task.cancel()
            self.timers.clear()
            self.intervals.clear()
            self.run_started, self.drawn_this_run = time.perf_counter(), False
        # what this run draws replaces the widgets it drew before (the whole page, or its fragments)
        self.widgets = {k: w for k, w in self.widgets.items() if rerun and w[1] not in rerun}
        self.finished.clear()

    def _element(self, element, fragment_id: str) -> None:
        kind = element.WhichOneof("type")
        name = element.bidi_component.component_name if kind == "bidi_component" else ""
        if name.startswith("tviz_"):             # the class's own hidden elements: no picture of the page
            self._class_element(name, json.loads(element.bidi_component.json or "{}"), fragment_id)
        elif kind in ("plotly_chart", "bidi_component") and not fragment_id and not self.drawn_this_run:
            self.drawn_this_run = True
            self.draws.append((time.perf_counter(), self.page_hash, self.query))
        elif kind == "bidi_component" and fragment_id and element.bidi_component.component_name == HEAD_ELEMENT:
            self.draws.append((time.perf_counter(), self.page_hash, self.query))    # a pick the view draws itself
        elif kind == "code":
            self.codes.append(element.code.code_text)
        elif kind == "exception":
            self.errors.append(f"{element.exception.type}: {element.exception.message[:200]}")
        widget = getattr(element, kind, None)
        widget_id = getattr(widget, "id", "") if widget is not None else ""
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):
            self.widgets[widget_id.split("-", 2)[2]] = (widget_id, fragment_id, widget)

    def _class_element(self, name: str, data: dict, fragment_id: str) -> None:
        """As viz/classroom/browser.py's JavaScript: the heartbeat (a student's poll asks for its fragment's rerun
        every every_ms), no beat from the start of a whole run (the watchdog) or a beat until its run is done, and
        the class's cookies (the browser sends them with its next connection: a reconnect is the same student)."""
        if name == "tviz_heartbeat" and data.get("beats", True):
            self._auto_rerun(fragment_id, data.get("every_ms", 1000) / 1000)
        elif name == "tviz_watchdog":
            self.busy_since = time.perf_counter()
        elif name == "tviz_done":
            self.busy_since = 0.0
        elif name == "tviz_cookies":           # the class's cookies, which its JavaScript writes (browser.remember)
            for cookie, value in data.get("cookies", {}).items():
                if value is None:
                    self.jar.pop(cookie, None)
                else:
                    self.jar[cookie] = value

    def busy(self) -> bool:
        return self.guard and time.perf_counter() - self.busy_since < BUSY_MAX_S

    def _auto_rerun(self, fragment_id: str, interval: float) -> None:
        """As 1.67's frontend: a running timer of the same interval is kept as it is, another one replaced."""
        if not fragment_id or self.intervals.get(fragment_id) == interval:
            return
        if fragment_id in self.timers:
            self.timers.pop(fragment_id).cancel()

        async def tick():
            while True:
                await asyncio.sleep(interval)
                if not self.busy():
                    self.busy_since = time.perf_counter()
                    self.rerun(fragment_id=fragment_id, auto=True)
        self.timers[fragment_id] = asyncio.create_task(tick())
        self.intervals[fragment_id] = interval

    # -- what the frontend sends -----------------------------------------------------------------------
    def rerun(self, fragment_id: str = "", auto: bool = False, widget=None, page_hash: str | None = None) -> None:
        """BackMsg.rerun_script as the frontend's sendRerunBackMsg builds it, with the hashes of the messages its
        cache holds (the server sends those as references)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string = self.query
        rerun.page_script_hash = page_hash or self.page_hash
        if not rerun.page_script_hash:
            rerun.page_name = self.page_name
        if fragment_id:
            rerun.fragment_id = fragment_id
        rerun.is_auto_rerun = auto
        rerun.cached_message_hashes.extend(self.cache)
        if widget is not None:
            rerun.widget_states.widgets.append(widget)
        if self.ws is not None:
            asyncio.create_task(self._send(msg.SerializeToString()))

    async def _send(self, data: bytes) -> None:
        try:
            await self.ws.send(data)
        except Exception:  # noqa: BLE001 - a closed socket: the reader reconnects
            pass

    def click(self, key: str) -> bool:
        from streamlit.proto.WidgetStates_pb2 import WidgetState
        if key not in self.widgets:
            return False
        widget_id, fragment_id, _ = self.widgets[key]
        self.rerun(fragment_id=fragment_id, widget=WidgetState(id=widget_id, trigger_value=True))
        return True

    def choose(self, key: str, index: int) -> None:
        from streamlit.proto.WidgetStates_pb2 import WidgetState
        widget_id, fragment_id, box = self.widgets[key]
        self.rerun(fragment_id=fragment_id, widget=WidgetState(id=widget_id, string_value=box.options[index]))

    def pick_in_view(self, head: int) -> None:
        """A pick in the explorer's browser-side view, as its JS reports a teacher's (setStateValue)."""
        import json
        from streamlit.proto.WidgetStates_pb2 import WidgetState
        widget_id, fragment_id, _ = self.widgets[VIEW_KEY]
        pick = {"pick": {"kind": "encoder", "layer": 0, "head": head}}
        self.rerun(fragment_id=fragment_id, widget=WidgetState(id=widget_id, json_value=json.dumps(pick)))

    def go(self, url_path: str) -> None:
        """The sidebar's page link: a rerun of another page (its hash from the navigation message)."""
        self.rerun(page_hash=self.pages[url_path])

    def answer_keys(self, question_id: str) -> list[str]:
        prefix = f"class-ask-{question_id}-"
        return sorted((k for k in self.widgets if k.startswith(prefix)), key=lambda k: int(k.rsplit("-", 1)[1]))


async def until(condition, what: str, timeout: float, every: float = 0.05) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(every)


# -- the class ------------------------------------------------------------------------------------------------
class Hall:
    """The lecture hall under test: the deployment, its store, the teacher, the students."""

    def __init__(self, deployment: Deployment):
        from viz.classroom.redis_store import RedisStore
        self.deployment = deployment
        self.store = RedisStore(deployment.redis_url())
        self.teacher: Tab | None = None
        self.code = ""
        self.students: list[Tab] = []
        self.second_tabs: list[Tab] = []
        self.answers_sent: dict[str, list[int]] = collections.defaultdict(list)   # question -> first choices
        self.attempts: collections.Counter = collections.Counter()                # question -> every click

    def new_browser(self) -> dict:
        from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string
        return {XSRF_COOKIE: generate_xsrf_token_string()}

    async def start_class(self, text: str = "") -> None:
        self.teacher = Tab(self.deployment.base, self.new_browser(), "teacher")
        await self.teacher.open("explorer", {"text": text} if text else {})
        await until(lambda: START_KEY in self.teacher.widgets and self.teacher.finished.is_set(),
                    "the teacher's page never finished", 240)
        self.teacher.click(START_KEY)
        await until(lambda: any("?class=" in c and "teach=" not in c for c in self.teacher.codes),
                    "no join link on the teacher's page", 120)
        link = next(c for c in self.teacher.codes if "?class=" in c and "teach=" not in c)
        self.code = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["class"][0]
        await until(lambda: self._version() > 0, "the teacher's view was never published", 60)

    def _version(self) -> int:
        published = self.store.followed(self.code)
        return published.version if published else 0

    async def join(self, n: int, stagger_s: float = 0.05) -> None:
        """n more students open the join link (a few a second, as a class does), each in its own browser."""
        for _ in range(n):
            k = len(self.students)
            tab = Tab(self.deployment.base, self.new_browser(), f"student{k}", address=f"10.32.{k // 250}.{k % 250 + 1}")
            self.students.append(tab)
            await tab.open("", {"class": self.code})
            await asyncio.sleep(stagger_s)
        await until(lambda: self.store.presence(self.code).following >= len(self.students),
                    f"not all {len(self.students)} students follow", 60 + 2 * n)

    async def change(self, what: str, value) -> dict:
        """The teacher changes the view; returns each student's delay from the publish to their redraw."""
        before = self._version()
        if what == "head":
            self.teacher.pick_in_view(value)
        else:
            self.teacher.go(value)
        await until(lambda: self._version() != before, f"the teacher's {what} change was never published", 60,
                    every=0.005)
        published = time.perf_counter()
        shown = self.store.followed(self.code)
        want_hash = self.teacher.pages[shown.page]
        want_query = {k: str(v) for k, v in shown.query.items()}

        def redraw(tab: Tab) -> float | None:
            for when, page_hash, query in tab.draws:
                got = dict(urllib.parse.parse_qsl(query))
                if when >= published and page_hash == want_hash and all(got.get(k) == v for k, v in
                                                                         want_query.items() if k in ("head", "layer")):
                    return when - published
            return None
        try:
            await until(lambda: all(redraw(t) is not None for t in self.students), "not every student redrew",
                        30 + len(self.students) * 0.5)
        except TimeoutError:
            pass
        delays = [redraw(t) for t in self.students]
        for tab, delay in zip(self.students, delays):
            if delay is None:
                log(f"class_load: {tab.name} did not redraw: {tab.reconnects} reconnects, {len(tab.timers)} timers, "
                    f"connected {tab.ws is not None and tab.ws.state.name}, running {not tab.finished.is_set()}, "
                    f"errors {tab.errors[-2:]}, polls answered in the last 10 s "
                    f"{sum(t > time.perf_counter() - 10 for t in tab.polls)}, last draws "
                    f"{[(round(w - published, 2), h[:6], q[-30:]) for w, h, q in tab.draws[-2:]]}")
        return {"what": f"{what} → {value}", "delays": [d for d in delays if d is not None],
                "missed": sum(d is None for d in delays)}

    async def join_from_one_address(self, n: int) -> dict:
        """n more browsers join from one address (a lecture hall behind one NAT address): how many get in."""
        before = self.store.presence(self.code).following
        tabs = [Tab(self.deployment.base, self.new_browser(), f"nat{k}") for k in range(n)]
        for tab in tabs:
            await tab.open("", {"class": self.code})
            await asyncio.sleep(0.05)
        try:
            await until(lambda: self.store.presence(self.code).following >= before + n, "", 30)
        except TimeoutError:
            pass
        joined = self.store.presence(self.code).following - before
        await asyncio.gather(*(t.close() for t in tabs))
        return {"tried": n, "joined": joined}

    async def ask_and_answer(self, second_tab_every: int = 4, during=None) -> dict:
        """The teacher asks; every student clicks a choice once; every `second_tab_every`-th student's browser
        opens a second tab that clicks too (the store must refuse it). `during` runs beside (the worker kill)."""
        asked_before = self.store.question(self.code)
        await until(lambda: ASK_KEY in self.teacher.widgets, "no ask button on the teacher's page", 60)
        self.teacher.click(ASK_KEY)
        await until(lambda: (q := self.store.question(self.code)) is not None and q != asked_before,
                    "the question was never asked", 60)
        question = self.store.question(self.code)
        rng = random.Random(len(self.students))
        side = asyncio.create_task(during()) if during else None
        done: set[str] = set()
        first: dict[str, int] = {}

        async def student(tab: Tab) -> None:
            deadline = time.perf_counter() + 120 + len(self.students)
            while time.perf_counter() < deadline:
                keys = tab.answer_keys(question.id)
                if len(keys) == len(question.choices) and tab.finished.is_set():   # this session has not answered
                    choice = first.setdefault(tab.name, rng.randrange(len(keys)))
                    runs = tab.runs_finished
                    if tab.click(keys[choice]):
                        self.attempts[question.id] += 1
                    try:                                   # the click's run, or (worker gone) a reconnect's
                        await until(lambda: tab.runs_finished > runs and tab.finished.is_set(), "", 10)  # noqa: B023 - awaited here
                    except TimeoutError:
                        pass
                    continue
                if tab.name in first and self._counted(question.id, tab):
                    done.add(tab.name)
                    return
                await asyncio.sleep(0.2)

        await asyncio.gather(*(student(t) for t in self.students))
        killed = await side if side else None
        seconds = [t for k, t in enumerate(self.students) if k % second_tab_every == 0]
        for tab in seconds:                                # a second tab of the same browser, same question
            other = Tab(self.deployment.base, tab.jar, tab.name + "-2", tab.address)
            self.second_tabs.append(other)
            await other.open("", {"class": self.code})
        await asyncio.gather(*(self._second_click(t, question) for t in self.second_tabs[-len(seconds):]))
        self.answers_sent[question.id] = list(first.values())
        tally = self.store.tally(self.code, question.id)
        expected = collections.Counter(first.values())
        return {"question": question.id, "students": len(self.students), "answered": len(done),
                "attempts": self.attempts[question.id], "tally": tally,
                "exact": tally == [expected.get(i, 0) for i in range(len(tally))]
                and sum(tally) == len(self.students), "kill": killed}

    def _counted(self, question_id: str, tab: Tab) -> bool:
        """The student's screen shows the question answered (no buttons after a finished fragment run)."""
        return tab.finished.is_set() and not tab.answer_keys(question_id)

    async def _second_click(self, tab: Tab, question) -> None:
        try:
            await until(lambda: tab.answer_keys(question.id), "the second tab shows no choices", 60)
        except TimeoutError:
            return
        if tab.click(tab.answer_keys(question.id)[0]):
            self.attempts[question.id] += 1
        await asyncio.sleep(2)

    def workers_cpu(self) -> float:
        return sum(cpu_seconds(w["pid"]) for w in self.deployment.state()["workers"])

    async def idle_cpu(self, seconds: float) -> dict:
        """The workers' and Redis's CPU while every student follows and nothing changes."""
        redis_pid = self.deployment.state()["redis"]["pid"]
        workers, redis, machine, own = self.workers_cpu(), cpu_seconds(redis_pid), cpu_seconds(), cpu_seconds(os.getpid())
        start = time.perf_counter()
        await asyncio.sleep(seconds)
        wall = time.perf_counter() - start
        n = len(self.students)
        used = self.workers_cpu() - workers
        return {"students": n, "wall": wall, "workers": used, "redis": cpu_seconds(redis_pid) - redis,
                "machine": cpu_seconds() - machine, "clients": cpu_seconds(os.getpid()) - own,
                "per_student_minute": used / n / (wall / 60)}

    async def close(self) -> None:
        await asyncio.gather(*(t.close() for t in [self.teacher, *self.students, *self.second_tabs] if t))
        self.store.disconnect()


def worker_of(hall: Hall, tab: Tab) -> str:
    """The worker nginx sends this tab's browser to (its routing cookie)."""
    cookie = "; ".join(f"{k}={v}" for k, v in tab.jar.items())
    return get(hall.deployment.base + "/healthz", cookie)[1].get("X-Upstream", "")


def killer(hall: Hall, after_answers: float = 0.3):
    """SIGKILL the students' worker that is not the teacher's once `after_answers` of them clicked. (A teacher
    whose worker dies reconnects as a visitor: the teacher link, kept off the address bar, resumes teaching.)"""
    async def run() -> dict:
        question = hall.store.question(hall.code)
        await until(lambda: sum(hall.store.tally(hall.code, question.id)) >= after_answers * len(hall.students),
                    "too few answers before the kill", 120)
        teacher = worker_of(hall, hall.teacher)
        victim = next(w for w in hall.deployment.state()["workers"] if f"127.0.0.1:{w['port']}" != teacher)
        on_victim = sum(worker_of(hall, t) == f"127.0.0.1:{victim['port']}" for t in hall.students)
        os.kill(victim["pid"], signal.SIGKILL)
        killed = time.perf_counter()
        log(f"class_load: killed worker :{victim['port']} (pid {victim['pid']})")
        await until(lambda: next(w for w in hall.deployment.state()["workers"] if w["port"] == victim["port"])
                    ["pid"] != victim["pid"] and worker_healthy(victim["port"]), "the worker was not restarted", 180)
        return {"victim": victim["port"], "on_victim": on_victim, "restarted_after": time.perf_counter() - killed}
    return run


# -- runs and report ------------------------------------------------------------------------------------------
async def run_all(args) -> dict:
    results = {"sizes": [], "kill": None, "nat": None}
    # Each student on an address of their own (campus Wi-Fi without NAT, behind a front proxy that nginx trusts):
    # wrong class codes are counted per address (WRONG_CODES_PER_ADDRESS); new student ids per address too.
    with Deployment(2, env={**os.environ}, args=("--real-ip-from", "127.0.0.1")) as deployment:
        hall = Hall(deployment)
        try:
            log("class_load: the teacher starts a class")
            await hall.start_class(args.text)
            for n in args.students:
                log(f"class_load: {n} students join")
                await hall.join(n - len(hall.students))
                await asyncio.sleep(3)
                idle = await hall.idle_cpu(args.idle)
                changes = []
                for what, value in CHANGES:
                    log(f"class_load: {n} students, the teacher's {what} → {value}")
                    changes.append(await hall.change(what, value))
                    await asyncio.sleep(2)
                answers = await hall.ask_and_answer()
                results["sizes"].append({"students": n, "idle": idle, "changes": changes, "answers": answers})
                if n == args.students[0] and not args.no_kill:
                    results["kill"] = await kill_run(hall)
            log("class_load: browsers join from one address")
            results["nat"] = await hall.join_from_one_address(NAT_STUDENTS)
        finally:
            await hall.close()
    return results


async def kill_run(hall: Hall) -> dict:
    log(f"class_load: {len(hall.students)} students answer while a worker is killed")
    reconnects = sum(t.reconnects for t in hall.students)
    answers = await hall.ask_and_answer(during=killer(hall))
    moved = sum(t.reconnects for t in hall.students) - reconnects
    change = await hall.change("head", 3)
    return {"answers": answers, "moved": moved, "change": change, "students": len(hall.students)}


def change_cells(n: int, change: dict) -> list:
    d = change["delays"]
    return [n, change["what"], f"{len(d)}/{len(d) + change['missed']}", secs(median(d)) if d else "—",
            secs(percentile(d, 95)) if d else "—", secs(max(d)) if d else "—"]


def section(results: dict, machine: str) -> Section:
    rows, checks, idle_rows, answer_rows = [], [], [], []
    for size in results["sizes"]:
        n, delays = size["students"], [d for c in size["changes"] for d in c["delays"]]
        rows += [change_cells(n, c) for c in size["changes"]]
        missed = sum(c["missed"] for c in size["changes"])
        p95 = percentile(delays, 95) if delays else float("inf")
        checks.append(Check(f"{n} students: p95 publish → redraw" + (f" ≤ {FOLLOW_GOAL_S:g} s" if n <= 60 else ""),
                            f"{secs(p95)} (p50 {secs(median(delays)) if delays else '—'}; {missed} missed)",
                            (p95 <= FOLLOW_GOAL_S and not missed) if n <= 60 else None))
        idle = size["idle"]
        idle_rows.append([n, secs(idle["wall"]), f"{idle['workers']:.1f} s", f"{idle['per_student_minute']:.2f} s",
                          f"{idle['redis']:.1f} s", f"{idle['clients']:.1f} s",
                          f"{idle['machine'] / (idle['wall'] * (os.cpu_count() or 1)):.0%}"])
        checks.append(Check(f"{n} students: CPU of the workers per following student, idle class",
                            f"{idle['per_student_minute']:.2f} s per minute", None))
        a = size["answers"]
        answer_rows.append([n, a["question"], a["answered"], a["attempts"], sum(a["tally"]), "yes" if a["exact"] else "**NO**"])
        checks.append(Check(f"{n} students: answers counted = students answering, each once",
                            f"{sum(a['tally'])} of {a['students']} ({a['attempts']} clicks)", a["exact"]))
    body = [
        f"deploy/serve.py (with `--real-ip-from 127.0.0.1`: each student comes from an address of their own, as "
        "through a trusted front proxy; see below for one NAT address): nginx, 2 Streamlit workers and their Redis, "
        f"on this shared machine ({os.cpu_count()} "
        f"cores; other jobs were running: {machine}). One teacher and N students, each a client that speaks "
        "Streamlit's websocket protocol as the browser's frontend does and draws nothing, all in one Python process "
        "on the same cores: it keeps nginx's routing cookie and the class's cookies (a browser's), keeps the "
        "browser's message cache (the hashes it holds go with each rerun, the server sends those as references, "
        "and a message unused for 2 runs is forgotten, as 1.67's frontend does), reruns each polling fragment on "
        "the interval its heartbeat asks (the student's follow poll: every 0.5-2 s by the class's size, 0.6 s at 60), clicks buttons, and reconnects "
        "through nginx when its worker dies. The model is pretrained/en-es; the teacher is on the explorer.", "",
        "**Follow latency**: from the teacher's publish (the store's version changing, polled every 5 ms) to each "
        "student's redraw: the first chart of the full run that shows the new view, or, for a pick the page's "
        "browser-side view makes (the explorer's head), the poll's message that hands the view the pick.", "",
        table(["students", "teacher's change", "redrawn", "p50", "p95", "max"], rows), "",
        "**An idle class** (everyone following, nothing changes): CPU used during the window; per student per minute "
        "is the workers' CPU / students / minutes.", "",
        table(["students", "window", "workers' CPU", "per student per minute", "Redis", "the clients (this process)",
               "machine busy"], idle_rows), "",
        "**Answers**: the teacher asks (the question form's button); each student clicks one choice; every 4th "
        "student's browser then opens a second tab that clicks again (the same cookies, so the same student: "
        "the store must refuse it). Exact: the store's tally equals the students' first choices, choice by choice.", "",
        table(["students", "question", "saw it answered", "clicks sent", "counted", "exact"], answer_rows),
    ]
    if results["kill"]:
        k = results["kill"]
        a, c = k["answers"], k["change"]
        body += ["", f"**A worker killed mid-class** ({k['students']} students): the worker that is not the teacher's "
                 "SIGKILLed once 30% had "
                 f"answered the next question; {a['kill']['on_victim']} students were on it, and {k['moved']} student "
                 "tabs reconnected through nginx (to the other worker); the supervisor's "
                 f"new worker was healthy {secs(a['kill']['restarted_after'])} after the kill; the answers: {sum(a['tally'])} counted of {a['students']} students, "
                 f"{a['attempts']} clicks (a student whose screen lost its answer clicks again), exact: "
                 f"{'yes' if a['exact'] else '**NO**'}. The teacher's next change (head → 3) reached "
                 f"{len(c['delays'])} of {len(c['delays']) + c['missed']} students, p50 "
                 f"{secs(median(c['delays'])) if c['delays'] else '—'}, p95 "
                 f"{secs(percentile(c['delays'], 95)) if c['delays'] else '—'}."]
        checks.append(Check("worker killed: every answer counted once", f"{sum(a['tally'])} of {a['students']}",
                            a["exact"]))
        checks.append(Check("worker killed: every student follows the next change",
                            f"{len(c['delays'])} of {len(c['delays']) + c['missed']}", not c["missed"]))
    nat = results.get("nat")
    if nat:
        body += ["", f"**One NAT address**: {nat['tried']} more browsers opened the join link from one address (as a "
                 f"lecture hall behind one NAT address reaches a server outside it): {nat['joined']} got in. The class "
                 f"code's lookup allows {WRONG_CODES_PER_ADDRESS} wrong codes per address per minute and does not count a "
                 "right one (viz/classroom/panel.py), so a hall behind one address joins; guessing still meets the limit."]
        checks.append(Check(f"{nat['tried']} browsers join from one address in a minute", f"{nat['joined']} got in",
                            nat["joined"] == nat["tried"]))
    return Section("class_load", "A live class under load: following, idle cost, answers", "\n".join(body), checks)


def main(argv=None) -> Section:
    args = parse_args(argv)
    if NGINX is None:
        raise SystemExit("nginx not found: apt-get install -y nginx")
    machine = machine_line("before the run")
    Tab.guard = not args.no_busy_guard
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))        # stop the lecture hall on the way out
    results = asyncio.run(run_all(args))
    return report(section(results, machine), args.write)


if __name__ == "__main__":
    main(sys.argv[1:])
