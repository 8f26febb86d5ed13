"""What one hostile client can do to a live class in the lecture hall: deploy/serve.py (nginx, 2 workers, its Redis),
a teacher, and scripted clients that speak Streamlit's websocket protocol (bench/class_load.py's `Tab`: nothing
drawn, no JavaScript run). Every client comes through nginx with an X-Forwarded-For address that nginx trusts
(`--real-ip-from 127.0.0.1`), so "one address" is one address to the app, as a lecture hall's NAT is.

Measured (numbers printed, nothing asserted):

1. **Answers one client adds to one question per minute.** The teacher asks; for `--window` seconds one client at
   one address opens `--parallel` sessions at a time on the join link, clicks the first choice once a session
   shows the choices, and closes it, again and again. Three ways of being a new student each time: a fresh
   `_streamlit_xsrf` cookie (a new browser), no cookie at all, and fresh sessions of one browser (its cookies
   kept). Counted: the store's tally for that question (what the teacher's bar shows).
2. **Scripted sessions counted as followers.** `--scripted` sessions (fresh cookies, one address) open the join
   link and keep polling as a browser would; counted: the store's presence, `following`.
3. **A room behind one address while one of them floods wrong codes.** `--room` honest clients share one address;
   each types the code wrongly twice (two valid-looking codes of no class), then rightly, one after the other
   as a student retypes; meanwhile a hostile client at the same address sends wrong codes from `--parallel`
   cookie-less sessions as fast as the server answers. Counted: how many honest clients are in the class within
   60 s of their first try (the student's bar drawn), how many saw "too many codes", and the flood's rate.
4. **Classmates behind the stuffing client's address, after it.** 5 honest clients at the address measurement 1
   used join as in 3 (no flood): whether a hostile student who used up the address's new students locks out
   the rest of their room.

Each client types a code through the join link's `?class=` (all the UI has today); `--code-field KEY` types it
into the text box of that widget key instead (a join field on the page).

    python bench/class_hostile.py [--window 60] [--parallel 8] [--scripted 12] [--room 60] [--write]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import time
import urllib.parse

from class_load import Hall, Tab, until
from common import ROOT, Section, log, machine_line, report, table

sys.path.insert(0, str(ROOT / "deploy"))
from harness import NGINX, Deployment

from viz.classroom.store import CODE_ALPHABET, CODE_LENGTH

HOSTILE_ADDRESS = "198.51.100.66"     # the hostile client's own address (measurement 1, then 4)
SCRIPTED_ADDRESS = "198.51.100.67"    # measurement 2's: an address nothing else used
WARM_ADDRESS = "198.51.100.1"         # the warm-up's students
ROOM_ADDRESS = "198.51.100.77"        # the lecture hall's NAT address (measurement 3: the room and the flooder)
JOINED_KEYS = ("class-ask-explore", "class-ask-follow")    # the student's bar: in the class
SHOWN_S = 40.0                        # a session that shows no choices by then is given up
ROOM_DEADLINE_S = 60.0                # an honest student should be in within this of their first try
ROOM_ARRIVAL_S = 20.0                 # the room's students start over this long (they arrive)
CODES_PER_FLOOD_SESSION = 20
AFTER_STUFFING = 5                    # measurement 4: classmates behind the stuffing client's address, after it
TOO_MANY_KEY = "class.too_many"       # the catalogue's notice for a client over the wrong-code limit
MODES = ("fresh cookies", "no cookies", "fresh sessions")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=60.0, help="seconds each answer-stuffing mode runs")
    parser.add_argument("--parallel", type=int, default=8, help="sessions the hostile client keeps open at once")
    parser.add_argument("--scripted", type=int, default=12, help="scripted sessions for the follower count")
    parser.add_argument("--room", type=int, default=60, help="honest students behind one address")
    parser.add_argument("--code-field", default="", help="widget key of a join field to type codes into")
    parser.add_argument("--skip", default="", help="comma-separated: answers,followers,room,after")
    parser.add_argument("--write", action="store_true", help="replace this section of docs/performance.md")
    return parser.parse_args(argv)


class Client(Tab):
    """A bench/class_load.py Tab that also keeps the notices the app showed it (st.warning, st.info, ...)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.notices: list[str] = []

    def _element(self, element, fragment_id: str) -> None:
        if element.WhichOneof("type") == "alert":
            self.notices.append(element.alert.body)
        super()._element(element, fragment_id)

    def joined(self) -> bool:
        return self.finished.is_set() and any(k in self.widgets for k in JOINED_KEYS)

    def type_code(self, text: str, field: str) -> None:
        """Type `text` as the class code: into the join field `field`, or (no field) through the join link."""
        if field:
            from streamlit.proto.WidgetStates_pb2 import WidgetState
            widget_id, fragment_id, _ = self.widgets[field]
            self.rerun(fragment_id=fragment_id, widget=WidgetState(id=widget_id, string_value=text))
        else:
            self.query = urllib.parse.urlencode({"class": text})
            self.rerun()

    async def run_done(self, runs_before: int, timeout: float) -> bool:
        try:
            await until(lambda: self.runs_finished > runs_before and self.finished.is_set(), "", timeout)
            return True
        except TimeoutError:
            return False


def wrong_code(right: str, rng: random.Random) -> str:
    while (code := "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))) == right:
        pass
    return code


def too_many(notices: list[str]) -> bool:
    """Whether the app said "too many class codes" (the catalogue's English text: the clients send no language)."""
    from viz.core.catalogue import catalogue
    def bare(text: str) -> str:                       # as viz.core.text.plain escaped it for Markdown
        return text.replace("\\", "").replace("\u2060", "")
    said = bare(catalogue("en").get(TOO_MANY_KEY, "Too many"))[:40]
    return any(said in bare(n) for n in notices)


async def start_at_the_code(tab: Client, field: str, code: str) -> None:
    """A new page with `code` typed: the join link with it, or the start page and the code in its join field."""
    if field:
        await tab.open("", {})
        await until(lambda: field in tab.widgets and tab.finished.is_set(), "no join field", 60)
        await enter(tab, code, field)
    else:
        await tab.open("", {"class": code})
        await tab.run_done(0, 30)


async def enter(tab: Client, code: str, field: str) -> bool:
    """Type `code` once the page is still; True when the run it caused finished."""
    await until(lambda: tab.finished.is_set(), "", 30)
    runs = tab.runs_finished
    tab.type_code(code, field)
    return await tab.run_done(runs, 30)


async def ask(hall: Hall) -> str:
    """The teacher asks a question (the form's button): its id."""
    from class_load import ASK_KEY
    before = hall.store.question(hall.code)
    await until(lambda: ASK_KEY in hall.teacher.widgets and hall.teacher.finished.is_set(),
                "no ask button on the teacher's page", 120)
    hall.teacher.click(ASK_KEY)
    await until(lambda: (q := hall.store.question(hall.code)) is not None and q != before, "the question was never asked", 60)
    return hall.store.question(hall.code).id


async def warm_up(hall: Hall) -> None:
    """A student on each worker first, so the first measurement does not pay for the workers' first pages."""
    tabs = [Client(hall.deployment.base, hall.new_browser(), f"warm-{k}", address=WARM_ADDRESS) for k in range(2)]
    for tab in tabs:
        await tab.open("", {"class": hall.code})
    try:
        await until(lambda: all(t.draws and t.finished.is_set() for t in tabs), "", 120)
    except TimeoutError:
        log("class_hostile: the warm-up students drew no chart in 120 s; measuring anyway")
    await asyncio.gather(*(t.close() for t in tabs))


# -- 1. answers one client adds to one question ------------------------------------------------------------------
async def stuff_answers(hall: Hall, mode: str, window: float, parallel: int) -> dict:
    question = await ask(hall)
    start = time.perf_counter()
    stop = start + window
    counts = {"sessions": 0, "showed_choices": 0, "clicks": 0}
    browser = hall.new_browser()                       # "fresh sessions": one browser's cookies, kept

    async def one_session(k: int) -> None:
        jar = hall.new_browser() if mode == "fresh cookies" else {} if mode == "no cookies" else browser
        tab = Client(hall.deployment.base, jar, f"hostile-{k}", address=HOSTILE_ADDRESS)
        counts["sessions"] += 1
        try:
            await tab.open("", {"class": hall.code})
            await until(lambda: tab.answer_keys(question) and tab.finished.is_set(), "",
                        max(1.0, min(SHOWN_S, stop - time.perf_counter())))
            counts["showed_choices"] += 1
            runs = tab.runs_finished
            if tab.click(tab.answer_keys(question)[0]):
                counts["clicks"] += 1
                await tab.run_done(runs, 10)
        except Exception:  # noqa: BLE001 - a refused connection, no choices in time: the next session
            pass
        finally:
            await tab.close()

    async def lane(lane_no: int) -> None:
        k = lane_no
        while time.perf_counter() < stop:
            await one_session(k)
            k += parallel

    await asyncio.gather(*(lane(i) for i in range(parallel)))
    elapsed = time.perf_counter() - start
    counted = sum(hall.store.tally(hall.code, question))
    return {"mode": mode, "question": question, "seconds": elapsed, "counted": counted,
            "per_minute": counted / elapsed * 60, **counts}


# -- 2. scripted sessions as followers ---------------------------------------------------------------------------
async def scripted_followers(hall: Hall, n: int) -> dict:
    before = hall.store.presence(hall.code).following
    tabs = [Client(hall.deployment.base, hall.new_browser(), f"scripted-{k}", address=SCRIPTED_ADDRESS)
            for k in range(n)]
    for tab in tabs:
        await tab.open("", {"class": hall.code})
        await asyncio.sleep(0.1)
    following = 0
    for _ in range(30):                                # 15 s: several polls and check-ins each (every 3 s)
        await asyncio.sleep(0.5)
        following = max(following, hall.store.presence(hall.code).following - before)
    joined = sum(t.joined() for t in tabs)
    await asyncio.gather(*(t.close() for t in tabs))
    return {"sessions": n, "following": following, "bar_drawn": joined}


# -- 3. a room behind one address, and a flood of wrong codes from it ---------------------------------------------
async def room_under_flood(hall: Hall, room: int, parallel: int, field: str, address: str = ROOM_ADDRESS) -> dict:
    """`parallel` 0: the room alone (no flood)."""
    rng = random.Random(43)
    stop = asyncio.Event()
    flood = {"codes": 0, "refused": 0, "sessions": 0}

    async def flooder(k: int) -> None:
        while not stop.is_set():
            tab = Client(hall.deployment.base, {}, f"flood-{k}", address=address)
            flood["sessions"] += 1
            try:
                await start_at_the_code(tab, field, wrong_code(hall.code, rng))
                for _ in range(CODES_PER_FLOOD_SESSION):       # then a fresh (cookie-less) session
                    if stop.is_set() or not await enter(tab, wrong_code(hall.code, rng), field):
                        break
                    flood["codes"] += 1
                    flood["refused"] += too_many(tab.notices)
                    tab.notices.clear()
            except Exception:  # noqa: BLE001 - a refused or dropped connection: the flood goes on
                pass
            finally:
                await tab.close()

    results: list[dict] = []

    async def student(k: int) -> None:
        await asyncio.sleep(k * ROOM_ARRIVAL_S / room)
        tab = Client(hall.deployment.base, hall.new_browser(), f"room-{k}", address=address)
        first_try = time.perf_counter()
        outcome = {"in": None, "too_many": False}
        try:
            await asyncio.wait_for(tries(tab, first_try, outcome), ROOM_DEADLINE_S + 5)
        except Exception:  # noqa: BLE001 - whatever stopped this student, they are not in: counted so
            pass
        finally:
            outcome["too_many"] = outcome["too_many"] or too_many(tab.notices)
            results.append(outcome)
            await tab.close()

    async def tries(tab: Client, first_try: float, outcome: dict) -> None:
        await start_at_the_code(tab, field, wrong_code(hall.code, rng))
        await enter(tab, wrong_code(hall.code, rng), field)
        await enter(tab, hall.code, field)
        while not tab.joined() and time.perf_counter() - first_try < ROOM_DEADLINE_S:
            if too_many(tab.notices):                  # refused: the student tries the right code again
                outcome["too_many"] = True
                tab.notices.clear()
                await asyncio.sleep(5)
                await enter(tab, hall.code, field)
            await asyncio.sleep(0.2)
        if tab.joined():
            outcome["in"] = time.perf_counter() - first_try

    start = time.perf_counter()
    flooders = [asyncio.create_task(flooder(k)) for k in range(parallel)]
    await asyncio.gather(*(student(k) for k in range(room)))
    stop.set()
    elapsed = time.perf_counter() - start
    await asyncio.gather(*flooders, return_exceptions=True)
    times = sorted(r["in"] for r in results if r["in"] is not None)
    return {"room": room, "in_time": sum(t <= ROOM_DEADLINE_S for t in times), "in": len(times),
            "told_too_many": sum(r["too_many"] for r in results), "slowest": times[-1] if times else None,
            "flood_codes": flood["codes"], "flood_refused": flood["refused"], "flood_sessions": flood["sessions"],
            "flood_per_minute": flood["codes"] / elapsed * 60, "seconds": elapsed}


# -- the run and its report --------------------------------------------------------------------------------------
async def run_all(args) -> dict:
    skip = set(filter(None, args.skip.split(",")))
    results = {"answers": [], "followers": None, "room_alone": None, "room": None, "after": None}
    with Deployment(2, env={**os.environ}, args=("--real-ip-from", "127.0.0.1")) as deployment:
        hall = Hall(deployment)
        try:
            log("class_hostile: the teacher starts a class")
            await hall.start_class()
            await warm_up(hall)
            if "answers" not in skip:
                for mode in MODES:
                    log(f"class_hostile: one client stuffs a question for {args.window:g} s ({mode})")
                    results["answers"].append(await stuff_answers(hall, mode, args.window, args.parallel))
                    log(f"class_hostile: {results['answers'][-1]}")
            if "followers" not in skip:
                log(f"class_hostile: {args.scripted} scripted sessions join")
                results["followers"] = await scripted_followers(hall, args.scripted)
                log(f"class_hostile: {results['followers']}")
            if "room" not in skip:
                for flooders, key in ((0, "room_alone"), (args.parallel, "room")):
                    log(f"class_hostile: a room of {args.room} behind one address, {flooders} sessions flooding codes")
                    results[key] = await room_under_flood(hall, args.room, flooders, args.code_field)
                    log(f"class_hostile: {results[key]}")
            if "answers" not in skip and "after" not in skip:
                log(f"class_hostile: {AFTER_STUFFING} classmates join from the stuffing client's address")
                results["after"] = await room_under_flood(hall, AFTER_STUFFING, 0, args.code_field, HOSTILE_ADDRESS)
                log(f"class_hostile: {results['after']}")
        finally:
            await hall.close()
    return results


def slowest(room: dict) -> str:
    return f"{room['slowest']:.1f} s" if room["slowest"] is not None else "—"


def section(results: dict, machine: str, args) -> Section:
    body = [f"deploy/serve.py with `--real-ip-from 127.0.0.1` (nginx, 2 workers, Redis); one Python process of "
            f"scripted clients (bench/class_load.py's websocket `Tab`) on the same machine ({machine}). The hostile "
            f"client keeps {args.parallel} sessions open at a time.", ""]
    if results["answers"]:
        rows = [[a["mode"], f"{a['seconds']:.0f} s", a["sessions"], a["showed_choices"], a["clicks"], a["counted"],
                 f"{a['per_minute']:.0f}"] for a in results["answers"]]
        body += ["**Answers one client adds to one question** (the teacher asked it just before):", "",
                 table(["new student by", "window", "sessions opened", "showed the choices", "clicks", "counted",
                        "counted per minute"], rows), ""]
    if results["followers"]:
        f = results["followers"]
        body += [f"**Scripted sessions as followers**: {f['sessions']} scripted sessions (fresh cookies, one address) "
                 f"drew the student's bar in {f['bar_drawn']}; the teacher's count of followers rose by "
                 f"{f['following']}.", ""]
    if results["room_alone"]:
        r = results["room_alone"]
        body += [f"**A room of {r['room']} behind one address, each mistyping the code twice** (arriving over "
                 f"{ROOM_ARRIVAL_S:.0f} s): {r['in_time']} of {r['room']} were in the class within "
                 f"{ROOM_DEADLINE_S:.0f} s of their first try (the slowest {slowest(r)}); {r['told_too_many']} were "
                 f"told \"too many codes\".", ""]
    if results["room"]:
        r = results["room"]
        body += [f"**The same room while one of them floods wrong codes**: {r['in_time']} of {r['room']} were in the "
                 f"class within {ROOM_DEADLINE_S:.0f} s of their first try (the slowest {slowest(r)}); "
                 f"{r['told_too_many']} were told \"too many codes\". The flood sent {r['flood_codes']} wrong codes "
                 f"from {r['flood_sessions']} cookie-less sessions ({args.parallel} at a time) in {r['seconds']:.0f} s "
                 f"({r['flood_per_minute']:.0f} a minute), {r['flood_refused']} of them answered \"too many\".", ""]
    if results["after"]:
        r = results["after"]
        body += [f"**Classmates behind the stuffing client's address, after it** (measurement 1 used it for "
                 f"{len(results['answers'])} minutes): {r['in_time']} of {r['room']} got in within "
                 f"{ROOM_DEADLINE_S:.0f} s, each mistyping twice first (the slowest {slowest(r)}); "
                 f"{r['told_too_many']} were told \"too many codes\".", ""]
    return Section("class_hostile", "A live class against one hostile client", "\n".join(body), [])


def main(argv=None) -> Section:
    args = parse_args(argv)
    if NGINX is None:
        raise SystemExit("nginx not found: apt-get install -y nginx")
    machine = machine_line("before the run")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))        # stop the lecture hall on the way out
    results = asyncio.run(run_all(args))
    return report(section(results, machine, args), args.write)


if __name__ == "__main__":
    main(sys.argv[1:])
