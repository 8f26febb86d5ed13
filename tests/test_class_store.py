"""The live class's store: the same contract for both backends, MemoryStore (one process) and RedisStore (a real
Debian redis-server on a Unix socket with a password, started here), then what only Redis has: every key
expiring with its class, persistence across a restart, and StoreDown when Redis is down or hung."""
from __future__ import annotations

import hashlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
import redis_local  # noqa: E402
from redis_utils import RedisServer  # noqa: E402
from viz.classroom.backend import open_store  # noqa: E402
from viz.classroom.redis_store import PREFIX, RedisStore  # noqa: E402
from viz.classroom.store import (CODE_ALPHABET, CODE_LENGTH, ENROL_WINDOW_S, HANDOFF_S, IDLE_S,  # noqa: E402
                                 MAX_CHOICES, NEW_STUDENTS_PER_ADDRESS, PRESENT_S, REDIS_URL_ENV, SECRET_BYTES,
                                 WRONG_CODES_PER_ADDRESS, WRONG_CODES_PER_BROWSER, ClassGone, MemoryStore,
                                 NotTeacher, Presence, Question, StoreDown, TooMany, normal_code)

needs_redis = pytest.mark.skipif(redis_local.REDIS_SERVER is None,
                                 reason="redis-server not found (CI: apt-get install -y redis-server)")


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    if redis_local.REDIS_SERVER is None:
        pytest.skip("redis-server not found (CI: apt-get install -y redis-server)")
    server = RedisServer(tmp_path_factory.mktemp("redis"), persist=False)
    yield server
    server.stop()


class Backend:
    """Makes stores of one kind on one fake clock; wait() lets time pass for them (Redis expires keys in real
    time, so there it also sleeps: the tests that wait give the store windows of about a second)."""

    def __init__(self, kind: str, server: RedisServer | None = None):
        self.kind, self.server, self.clock = kind, server, FakeClock()

    def store(self, **kwargs):
        if self.kind == "memory":
            return MemoryStore(clock=self.clock, **kwargs)
        return RedisStore(self.server.url, clock=self.clock, **kwargs)

    def wait(self, seconds: float) -> None:
        self.clock.now += seconds
        if self.kind == "redis":
            time.sleep(seconds)

    def leftover(self, store, code: str) -> list[str]:
        """What the store still holds of class `code`."""
        if self.kind == "memory":
            return [code] if code in store._classes else []
        return list(self.server.client().scan_iter(match=f"{PREFIX}{code}:*"))


@pytest.fixture(params=["memory", pytest.param("redis", marks=needs_redis)])
def backend(request):
    if request.param == "memory":
        return Backend("memory")
    server = request.getfixturevalue("redis_server")
    server.client().flushall()
    return Backend("redis", server)


@pytest.fixture
def store(backend):
    return backend.store()


def enrol(store, code: str, *names: str) -> dict[str, str]:
    """Students of class `code`, each with the id the store issued them (from addresses of their own)."""
    return {name: store.enrol(code, f"10.1.0.{k}") for k, name in enumerate(names)}


def question(n_choices: int = 3, answer: int = 1) -> Question:
    tokens = ("la", "casa", "es", "roja", "</s>")
    return Question("class.q.attends", {"word": "casa", "layer": 2}, tokens[:n_choices], answer, "explorer",
                    {"text": "the house is red", "layer": "2"})


def test_create_gives_an_unguessable_code_and_a_secret_only_its_teacher_holds(store):
    code, secret = store.create()
    other_code, other_secret = store.create()
    assert normal_code(code) == code and code != other_code and secret != other_secret
    assert len(secret) >= SECRET_BYTES * 4 // 3 and SECRET_BYTES * 8 >= 128
    assert store.exists(code) and not store.exists("ZZZZZZ") and not store.exists("not a code")
    assert store.is_teacher(code, secret) and not store.is_teacher(code, other_secret)
    assert not store.is_teacher(code, "") and not store.is_teacher("ZZZZZZ", secret)


def test_a_publish_gets_a_new_version_only_when_the_view_changes(store):
    code, secret = store.create()
    assert store.followed(code) is None
    first = store.publish(code, secret, "explorer", {"text": "a b", "layer": "1"})
    assert store.publish(code, secret, "explorer", {"layer": "1", "text": "a b"}) == first    # the same view
    second = store.publish(code, secret, "explorer", {"text": "a b", "layer": "2"})
    third = store.publish(code, secret, "decoding", {"text": "a b", "layer": "2"})
    assert first < second < third
    followed = store.followed(code)
    assert (followed.version, followed.page, followed.query) == (third, "decoding", {"text": "a b", "layer": "2"})


def test_only_the_teachers_secret_publishes_asks_reveals_reads_history_and_ends(store):
    code, secret = store.create()
    version = store.publish(code, secret, "explorer", {"text": "a"})
    asked = store.ask(code, secret, question())
    wrong = "x" + secret
    for call in (lambda: store.publish(code, wrong, "heads", {}), lambda: store.ask(code, wrong, question()),
                 lambda: store.reveal(code, wrong, asked.id), lambda: store.history(code, wrong),
                 lambda: store.end(code, wrong)):
        with pytest.raises(NotTeacher):
            call()
    assert store.exists(code) and store.followed(code).version == version
    assert store.question(code) == asked and not store.question(code).revealed


def test_every_call_on_an_ended_class_says_it_is_gone(store):
    code, secret = store.create()
    me = store.enrol(code, "10.0.0.1")
    asked = store.ask(code, secret, question())
    token = store.handoff(code, secret)
    store.end(code, secret)
    for call in (lambda: store.followed(code), lambda: store.check_in(code, "s", True),
                 lambda: store.presence(code), lambda: store.question(code), lambda: store.tally(code, asked.id),
                 lambda: store.answer(code, asked.id, "s", 0), lambda: store.publish(code, secret, "x", {}),
                 lambda: store.ask(code, secret, question()), lambda: store.reveal(code, secret, asked.id),
                 lambda: store.history(code, secret), lambda: store.end(code, secret),
                 lambda: store.enrol(code, "10.0.0.1"), lambda: store.enrolled(code, me),
                 lambda: store.answer_of(code, asked.id, me), lambda: store.close(code, secret, asked.id),
                 lambda: store.handoff(code, secret)):
        with pytest.raises(ClassGone):
            call()
    assert not store.exists(code) and not store.is_teacher(code, secret) and store.redeem(code, token) is None


def test_a_student_is_counted_once_per_question(store):
    code, secret = store.create()
    ids = enrol(store, code, "student-1", "student-2")
    asked = store.ask(code, secret, question())
    assert store.answer(code, asked.id, ids["student-1"], 2)
    assert not store.answer(code, asked.id, ids["student-1"], 2)        # a reload
    assert not store.answer(code, asked.id, ids["student-1"], 0)        # a second tab, another choice
    assert store.answer(code, asked.id, ids["student-2"], 0)
    assert store.tally(code, asked.id) == [1, 0, 1]
    assert store.answer_of(code, asked.id, ids["student-1"]) == 2 and store.answer_of(code, asked.id, ids["student-2"]) == 0


@pytest.mark.parametrize("choice", [-1, 3, 64, True, False, "0", 1.0, None])
def test_an_answer_outside_the_questions_choices_is_refused(store, choice):
    code, secret = store.create()
    me = store.enrol(code, "10.0.0.1")
    asked = store.ask(code, secret, question(n_choices=3))
    assert not store.answer(code, asked.id, me, choice)
    assert store.tally(code, asked.id) == [0, 0, 0] and store.answer_of(code, asked.id, me) is None
    assert store.answer(code, asked.id, me, 0), "a refused answer used up the student's vote"


def test_answers_to_a_revealed_an_older_or_an_unknown_question_are_refused(store):
    code, secret = store.create()
    ids = enrol(store, code, "a", "b", "c")
    first = store.ask(code, secret, question())
    assert store.answer(code, first.id, ids["a"], 1)
    second = store.ask(code, secret, question(n_choices=4, answer=3))
    assert first.id != second.id and store.question(code) == second
    assert not store.answer(code, first.id, ids["b"], 1)                 # the open one is the second now
    assert not store.answer(code, "q99", ids["b"], 1) and not store.answer(code, "", ids["b"], 1)
    assert store.answer(code, second.id, ids["b"], 3)
    store.reveal(code, secret, second.id)
    assert store.question(code).revealed
    assert not store.answer(code, second.id, ids["c"], 3)
    assert store.tally(code, first.id) == [0, 1, 0] and store.tally(code, second.id) == [0, 0, 0, 1]
    assert store.tally(code, "q99") == []


def test_history_lists_every_question_oldest_first_with_its_tally(store):
    code, secret = store.create()
    assert store.history(code, secret) == [] and store.question(code) is None
    ids = enrol(store, code, "a", "b", "c")
    first = store.ask(code, secret, question(n_choices=2, answer=0))
    for student, choice in (("a", 0), ("b", 1), ("c", 1)):
        store.answer(code, first.id, ids[student], choice)
    store.reveal(code, secret, first.id)
    second = store.ask(code, secret, question(n_choices=5, answer=4))
    store.answer(code, second.id, ids["a"], 4)
    history = store.history(code, secret)
    assert [(q.id, q.revealed, counts) for q, counts in history] == [(first.id, True, [1, 2]),
                                                                     (second.id, False, [0, 0, 0, 0, 1])]
    assert history[1][0] == second and history[0][0].choices == ("la", "casa")
    assert history[0][0].fields == {"word": "casa", "layer": 2} and history[0][0].query["layer"] == "2"


@pytest.mark.parametrize("bad", [dict(n_choices=0, answer=0), dict(n_choices=3, answer=3),
                                 dict(n_choices=3, answer=-1)])
def test_a_question_needs_choices_and_its_answer_among_them(store, bad):
    code, secret = store.create()
    with pytest.raises(ValueError):
        store.ask(code, secret, question(**bad))
    with pytest.raises(ValueError):
        store.ask(code, secret, Question("k", {}, tuple(str(i) for i in range(MAX_CHOICES + 1)), 0, "explorer", {}))
    assert store.question(code) is None


def test_presence_counts_screens_seen_in_the_last_present_s_following_or_exploring(backend, store):
    code, _ = store.create()
    assert store.presence(code) == Presence(0, 0)
    a, b, c = enrol(store, code, "a", "b", "c").values()
    store.check_in(code, a, True)
    store.check_in(code, b, False)
    store.check_in(code, c, True)
    store.check_in(code, a, True)                                    # a screen checking in again counts once
    assert store.presence(code) == Presence(2, 1)
    store.check_in(code, c, False)                                   # "explore on my own"
    assert store.presence(code) == Presence(1, 2)
    backend.clock.now += PRESENT_S - 1
    store.check_in(code, b, True)                                    # back to following
    assert store.presence(code) == Presence(2, 1)                    # a and c are still in the window, b moved
    backend.clock.now += 2
    assert store.presence(code) == Presence(1, 0)                    # a and c left the window
    backend.clock.now += PRESENT_S
    assert store.presence(code) == Presence(0, 0)


def busy_class(store) -> tuple[str, str]:
    """A class with something of every kind: a view, a question, an answer, a follower and an explorer."""
    code, secret = store.create()
    store.publish(code, secret, "explorer", {"text": "a"})
    s, t = enrol(store, code, "s", "t").values()
    asked = store.ask(code, secret, question())
    assert store.answer(code, asked.id, s, 1)
    store.check_in(code, s, True)
    store.check_in(code, t, False)
    return code, secret


def test_end_deletes_everything_of_the_class(backend, store):
    other, other_secret = store.create()
    code, secret = busy_class(store)
    store.handoff(code, secret)                                      # one pending handoff, with the secret
    assert backend.leftover(store, code)
    store.end(code, secret)
    assert backend.leftover(store, code) == [] and not store.exists(code)
    assert store.exists(other) and store.is_teacher(other, other_secret)


def test_a_class_ends_after_idle_s_without_its_teacher_whatever_its_students_do(backend):
    store = backend.store(idle_s=1.5)
    code, secret = store.create()
    s, t = enrol(store, code, "s", "t").values()
    asked = store.ask(code, secret, question())
    backend.wait(0.9)
    assert store.answer(code, asked.id, s, 1)
    store.publish(code, secret, "explorer", {})                      # the teacher is back: 1.5 s again
    backend.wait(0.9)
    assert store.exists(code)
    store.check_in(code, s, True)                                    # students keep nothing alive
    store.enrol(code, "10.9.9.9")
    assert store.answer(code, asked.id, t, 1)
    backend.wait(0.9)
    assert not store.exists(code) and backend.leftover(store, code) == []
    with pytest.raises(ClassGone):
        store.followed(code)


def test_rate_limit_per_client_and_action_in_a_window(backend):
    store = backend.store(rate_window_s=1.0)
    assert [store.allow("10.0.0.7", "join", 3) for _ in range(4)] == [True, True, True, False]
    assert store.allow("10.0.0.8", "join", 3) and store.allow("10.0.0.7", "create", 3)
    backend.wait(1.1)
    assert store.allow("10.0.0.7", "join", 3)


def test_a_look_at_the_rate_limit_counts_nothing(backend):
    store = backend.store()
    assert all(store.allow("10.0.0.9", "join", 2, count=False) for _ in range(5))
    assert [store.allow("10.0.0.9", "join", 2) for _ in range(3)] == [True, True, False]
    assert not store.allow("10.0.0.9", "join", 2, count=False)


def test_two_workers_answering_at_once_count_each_student_exactly_once(backend):
    """200 students each answer through two workers at once (a second tab on another worker): 200 counted."""
    workers = [backend.store(), backend.store()] if backend.kind == "redis" else [backend.store()] * 2
    code, secret = workers[0].create()
    ids = [workers[0].enrol(code, f"10.2.{k // 100}.{k % 100}") for k in range(200)]
    asked = workers[0].ask(code, secret, question(n_choices=5))
    counted, start = [[], []], threading.Barrier(2)

    def answer_all(i: int) -> None:
        start.wait()
        for student in range(200):
            counted[i].append(workers[i].answer(code, asked.id, ids[student], (student + i) % 5))
    threads = [threading.Thread(target=answer_all, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sum(counted[0]) + sum(counted[1]) == 200 and len(counted[0]) == len(counted[1]) == 200
    tally = workers[1].tally(code, asked.id)
    assert sum(tally) == 200 and len(tally) == 5


def test_memory_store_forgets_rate_limited_clients_once_their_window_passed():
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    for client in range(100):
        store.allow(f"client-{client}", "join", 5)
    clock.now += 61
    store.allow("latecomer", "join", 5)
    assert list(store._tries) == [("latecomer", "join")]


# -- who counts (issue 43): ids the store issued, enrolled before the question opened ------------------------
def test_enrol_issues_a_fresh_id_that_only_its_class_knows(store):
    code, _ = store.create()
    other, _ = store.create()
    ids = {store.enrol(code, "10.0.0.1") for _ in range(5)}
    assert len(ids) == 5 and all(len(i) >= 24 for i in ids)          # 18 random bytes, URL-safe
    assert all(store.enrolled(code, i) for i in ids)
    mine = next(iter(ids))
    assert not store.enrolled(other, mine) and not store.enrolled(code, "forged-" + mine[7:])
    assert not store.enrolled(code, "") and not store.enrolled(code, mine.upper())
    with pytest.raises(ClassGone):
        store.enrol("ZZZZZZ", "10.0.0.1")
    with pytest.raises(ClassGone):
        store.enrol("not a code", "10.0.0.1")


def test_one_address_enrols_at_most_new_students_per_address_in_a_class_per_window(backend, store):
    code, _ = store.create()
    other, _ = store.create()
    for _ in range(NEW_STUDENTS_PER_ADDRESS):
        store.enrol(code, "203.0.113.9")
    with pytest.raises(TooMany):
        store.enrol(code, "203.0.113.9")
    store.enrol(code, "203.0.113.10")                                # another address
    store.enrol(other, "203.0.113.9")                                # another class
    backend.clock.now += ENROL_WINDOW_S - 1
    with pytest.raises(TooMany):                                     # a refusal is not an enrolment: still full
        store.enrol(code, "203.0.113.9")
    backend.clock.now += 1.5
    store.enrol(code, "203.0.113.9")                                 # the window moved on


def test_only_an_id_enrolled_by_the_time_the_question_opened_may_answer(backend, store):
    code, secret = store.create()
    other, _ = store.create()
    early = store.enrol(code, "10.0.0.1")
    backend.clock.now += 1
    outsider = store.enrol(other, "10.0.0.1")
    at_once = store.enrol(code, "10.0.0.2")                          # on the clock, at the question's opening
    asked = store.ask(code, secret, question())
    backend.clock.now += 1
    late = store.enrol(code, "10.0.0.3")
    for refused in (late, outsider, "forged-id-000000000000", ""):
        assert not store.answer(code, asked.id, refused, 1), refused
        assert store.answer_of(code, asked.id, refused) is None
    assert store.answer(code, asked.id, early, 0) and store.answer(code, asked.id, at_once, 2)
    assert store.tally(code, asked.id) == [1, 0, 1]
    assert store.answer_of(code, asked.id, early) == 0 and store.answer_of(code, asked.id, at_once) == 2
    backend.clock.now += 1
    second = store.ask(code, secret, question())
    assert store.answer(code, second.id, late, 1)                    # enrolled before this one opened
    assert store.answer_of(code, second.id, late) == 1 and store.answer_of(code, "q99", late) is None


def test_presence_counts_only_ids_the_class_issued(store):
    code, _ = store.create()
    other, _ = store.create()
    for forged in ("a", "student-1", "x" * 24, store.enrol(other, "10.0.0.1")):
        store.check_in(code, forged, True)
        store.check_in(code, forged + "e", False)
    assert store.presence(code) == Presence(0, 0)
    store.check_in(code, store.enrol(code, "10.0.0.1"), True)
    assert store.presence(code) == Presence(1, 0)


def test_a_closed_question_takes_no_answer_and_is_no_longer_shown_but_stays_in_history(store):
    code, secret = store.create()
    a, b = enrol(store, code, "a", "b").values()
    asked = store.ask(code, secret, question())
    assert store.answer(code, asked.id, a, 1)
    with pytest.raises(NotTeacher):
        store.close(code, "x" + secret, asked.id)
    assert store.question(code) == asked
    store.close(code, secret, asked.id)
    assert store.question(code) is None
    assert not store.answer(code, asked.id, b, 1)
    assert store.tally(code, asked.id) == [0, 1, 0] and store.answer_of(code, asked.id, a) == 1
    [(kept, counts)] = store.history(code, secret)
    assert kept.id == asked.id and kept.closed and not kept.revealed and counts == [0, 1, 0]
    revealed = store.ask(code, secret, question())
    assert store.question(code) == revealed and not store.question(code).closed
    store.reveal(code, secret, revealed.id)
    store.close(code, secret, revealed.id)                           # the tally folds away after the reveal
    assert store.question(code) is None
    assert [(q.revealed, q.closed) for q, _ in store.history(code, secret)] == [(False, True), (True, True)]


def test_a_handoff_gives_the_teachers_secret_once(store):
    code, secret = store.create()
    other, other_secret = store.create()
    with pytest.raises(NotTeacher):
        store.handoff(code, other_secret)
    token, second = store.handoff(code, secret), store.handoff(code, secret)
    assert token != second and len(token) >= 32 and secret not in token
    assert store.redeem(other, token) is None and store.redeem(code, "x" * len(token)) is None
    assert store.redeem(code, token[:-1]) is None and store.redeem(code, "") is None
    assert store.redeem(code, token) == secret
    assert store.redeem(code, token) is None                         # single use
    assert store.redeem(code, second) == secret and store.redeem(code, second) is None
    assert store.redeem(other, store.handoff(other, other_secret)) == other_secret


def test_a_handoff_expires_after_handoff_s(backend):
    store = backend.store(handoff_s=1.0)
    code, secret = store.create()
    stale = store.handoff(code, secret)
    backend.wait(0.5)
    fresh = store.handoff(code, secret)
    backend.wait(0.7)
    assert store.redeem(code, stale) is None and store.redeem(code, fresh) == secret


def test_the_wrong_code_limits_let_a_room_in_and_make_guessing_a_live_code_take_years():
    """A room of 60 behind one address, each mistyping twice: 120 wrong codes in the minute, under the address's
    limit. One address guessing at its whole allowance hits one live class in 31**6 / 300 minutes on average."""
    assert (WRONG_CODES_PER_ADDRESS, WRONG_CODES_PER_BROWSER) == (300, 20)
    assert 60 * 2 <= WRONG_CODES_PER_ADDRESS // 2 and WRONG_CODES_PER_BROWSER >= 2
    years = len(CODE_ALPHABET) ** CODE_LENGTH / WRONG_CODES_PER_ADDRESS / 60 / 24 / 365
    assert 5.5 < years < 5.7, years                                  # the figure store.py and docs/security.md give
    assert (NEW_STUDENTS_PER_ADDRESS, ENROL_WINDOW_S, HANDOFF_S) == (150, 600, 600)


# -- Redis only -------------------------------------------------------------------------------------------------
@needs_redis
def test_every_redis_key_of_a_class_expires_with_it_and_the_secret_is_kept_only_as_its_hash(redis_server):
    store = RedisStore(redis_server.url)
    code, secret = busy_class(store)
    assert store.presence(code) == Presence(1, 1)                    # by the server's clock
    client = redis_server.client()
    keys = sorted(client.scan_iter(match=f"{PREFIX}{code}:*"))
    assert len(keys) == 8, keys                                      # all but handoffs (none was asked for)
    assert all(0 < client.pttl(k) <= IDLE_S * 1000 for k in keys), {k: client.pttl(k) for k in keys}
    stored = " ".join(str(v) for k in keys for v in (client.hgetall(k) if client.type(k) == "hash" else
                                                     client.zrange(k, 0, -1)))
    assert secret not in stored
    assert client.hget(f"{PREFIX}{code}:meta", "secret") == hashlib.sha256(secret.encode()).hexdigest()


@needs_redis
def test_in_redis_the_secret_itself_lives_only_while_its_handoff_waits(redis_server):
    store = RedisStore(redis_server.url, handoff_s=1.0)
    code, secret = busy_class(store)
    client = redis_server.client()

    def stored() -> str:
        values = []
        for key in client.scan_iter(match=f"{PREFIX}{code}:*"):
            kind = client.type(key)
            values += ([client.get(key)] if kind == "string" else list(client.hgetall(key).items()) if kind == "hash"
                       else list(client.smembers(key)) if kind == "set" else client.zrange(key, 0, -1))
        return repr(values)
    assert secret not in stored()
    redeemed, expired = store.handoff(code, secret), store.handoff(code, secret)
    assert secret in stored() and 0 < client.pttl(f"{PREFIX}{code}:handoff:{expired}") <= 1000
    assert store.redeem(code, redeemed) == secret
    time.sleep(1.2)
    assert secret not in stored() and store.redeem(code, expired) is None
    assert store.redeem(code, "*") is None and store.redeem(code, "../" + redeemed[3:]) is None


@needs_redis
def test_a_class_whose_redis_keys_vanished_is_gone(redis_server):
    store = RedisStore(redis_server.url)
    code, secret = store.create()
    redis_server.client().flushall()
    assert not store.exists(code)
    with pytest.raises(ClassGone):
        store.followed(code)
    with pytest.raises(ClassGone):
        store.publish(code, secret, "explorer", {})
    assert redis_server.client().dbsize() == 0, "a call on a gone class created keys (they would never expire)"


@needs_redis
def test_after_a_redis_restart_with_persistence_the_class_its_version_and_tally_are_back(tmp_path_factory):
    with RedisServer(tmp_path_factory.mktemp("persist"), persist=True) as server:
        store = RedisStore(server.url)
        code, secret = store.create()
        store.publish(code, secret, "explorer", {"text": "a"})
        version = store.publish(code, secret, "heads", {"text": "a"})
        ids = enrol(store, code, "a", "b", "c", "d")
        asked = store.ask(code, secret, question())
        for student, choice in (("a", 0), ("b", 1), ("c", 1)):
            assert store.answer(code, asked.id, ids[student], choice)
        server.stop()
        server.start()
        assert store.followed(code).version == version and store.is_teacher(code, secret)   # the same client
        assert store.tally(code, asked.id) == [1, 2, 0] and store.enrolled(code, ids["d"])
        assert not store.answer(code, asked.id, ids["a"], 2) and store.answer(code, asked.id, ids["d"], 2)
        client = server.client()
        assert all(0 < client.pttl(k) <= IDLE_S * 1000 for k in client.scan_iter(match=f"{PREFIX}{code}:*"))


@needs_redis
def test_after_a_redis_restart_without_persistence_the_class_is_gone_not_an_error(tmp_path_factory):
    with RedisServer(tmp_path_factory.mktemp("volatile"), persist=False) as server:
        store = RedisStore(server.url)
        code, secret = store.create()
        server.stop()
        server.start()
        assert not store.exists(code)
        with pytest.raises(ClassGone):
            store.followed(code)


def timed(call) -> tuple[type, float]:
    start = time.monotonic()
    try:
        call()
        return type(None), time.monotonic() - start
    except Exception as e:  # noqa: BLE001 - the type is what the test checks
        return type(e), time.monotonic() - start


@needs_redis
def test_redis_down_or_hung_raises_store_down_within_seconds(tmp_path_factory):
    with RedisServer(tmp_path_factory.mktemp("down"), persist=False) as server:
        store = RedisStore(server.url)
        code, secret = store.create()
        calls = [store.create, lambda: store.exists(code), lambda: store.followed(code),
                 lambda: store.check_in(code, "s", True), lambda: store.publish(code, secret, "x", {}),
                 lambda: store.answer(code, "q1", "s", 0), lambda: store.allow("c", "join", 5),
                 lambda: store.enrol(code, "10.0.0.1")]
        os.kill(server.proc.pid, signal.SIGSTOP)                      # hung: answers nothing
        hung = [timed(call) for call in calls[:3]]
        os.kill(server.proc.pid, signal.SIGCONT)
        assert store.exists(code), "the store did not recover once Redis answered again"
        server.stop()                                                 # down: nothing listens
        down = [timed(call) for call in calls]
    assert all(kind is StoreDown for kind, _ in hung + down), hung + down
    assert max(s for _, s in hung) < 3.5 and max(s for _, s in down) < 1.0, (hung, down)


@needs_redis
def test_open_store_picks_the_backend_from_the_environment(redis_server):
    memory = open_store({})
    assert isinstance(memory, MemoryStore) and open_store({}) is memory
    shared = open_store({REDIS_URL_ENV: redis_server.url})
    assert isinstance(shared, RedisStore) and open_store({REDIS_URL_ENV: redis_server.url}) is shared
    code, _ = shared.create()
    assert RedisStore(redis_server.url).exists(code)                 # another worker sees the class
    with pytest.raises(StoreDown):
        open_store({REDIS_URL_ENV: "http://127.0.0.1:1/"})


@needs_redis
def test_a_killed_redis_loses_no_answer_it_acknowledged(tmp_path_factory):
    """SIGKILL (a crash, the OOM killer) right after a burst of answers: each answer the store counted is back."""
    with RedisServer(tmp_path_factory.mktemp("killed"), persist=True) as server:
        workers = [RedisStore(server.url), RedisStore(server.url)]
        code, secret = workers[0].create()
        ids = [workers[0].enrol(code, f"10.2.{k // 100}.{k % 100}") for k in range(200)]
        asked = workers[0].ask(code, secret, question(n_choices=5))
        counted = [0, 0]

        def answer_many(i: int) -> None:
            for student in range(i, 200, 2):
                counted[i] += workers[i].answer(code, asked.id, ids[student], student % 5)
                workers[i].check_in(code, ids[student], True)
        threads = [threading.Thread(target=answer_many, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        server.proc.kill()
        server.proc.wait(10)
        server.start()
        assert sum(counted) == 200 and sum(workers[0].tally(code, asked.id)) == 200
