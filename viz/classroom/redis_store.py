"""The lecture hall's class store: the same `ClassStore` over one Redis that every worker shares.

Each change is one Lua script, so it is atomic across workers: a student's answer is checked against the open
question (not revealed, a choice among its choices) and recorded with HSETNX in the same step, so a student is
counted once however many workers or tabs answer at once. A class's keys are

    tviz:class:<code>:meta        hash: secret (its SHA-256), version, page, query (JSON), asked (questions so far)
    tviz:class:<code>:questions   hash: q<n> -> the question (JSON), q<n>:n -> its number of choices,
                                  q<n>:opened -> when it was asked, q<n>:revealed, q<n>:closed
    tviz:class:<code>:answers     hash: q<n>:<student> -> choice
    tviz:class:<code>:tally       hash: q<n>:<choice> -> count
    tviz:class:<code>:following   sorted set: student -> when their screen last checked in
    tviz:class:<code>:exploring   sorted set: the same, for students exploring on their own
    tviz:class:<code>:enrolled    hash: student id (issued by enrol) -> when it was issued
    tviz:class:<code>:enrolments  hash: address (its hash) -> the times of its recent enrolments (JSON list)
    tviz:class:<code>:handoffs    set: the tokens of pending handoffs
    tviz:class:<code>:handoff:<token>   string: the teacher's secret, for one redeem within HANDOFF_S

Every key expires IDLE_S after the teacher's last action (each teacher action sets the expiry of the class's
keys; a key a student creates takes the class's remaining time; a handoff's key lives HANDOFF_S at most), and
end() deletes them all. Times are the server's TIME (or the test's clock), so a question's opening and a
student's enrolment compare on one clock across workers. Rate limits live under
tviz:rate:<action>:<client's hash>, one counter per window. Any Redis error (down, timed out, out of memory,
still loading) raises StoreDown, so a page works on its own with a notice; a class whose keys are gone raises
ClassGone.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import replace
from typing import Callable

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from viz.classroom.store import (ENROL_WINDOW_S, HANDOFF_S, IDLE_S, MAX_CHOICES,
                                 NEW_STUDENTS_PER_ADDRESS, PRESENT_S, ClassGone, NotTeacher, Presence, Published,
                                 Question, StoreDown, TooMany, new_code, new_handoff, new_secret, new_student,
                                 normal_code, secret_hash, valid_choice)

PREFIX = "tviz:class:"
KEY_PARTS = ("meta", "questions", "answers", "tally", "following", "exploring", "enrolled", "enrolments",
             "handoffs")
SOCKET_TIMEOUT_S = 1.0        # a hung Redis costs a page about this long before it says "store down"
RATE_WINDOW_S = 60.0
_HANDOFF_TOKEN = re.compile(rf"[A-Za-z0-9_-]{{{len(new_handoff())}}}")   # what new_handoff() makes

# Shared by every script: KEYS are the class's keys in KEY_PARTS order.
_PRELUDE = """
local meta, questions, answers, tally, following, exploring = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local enrolled, enrolments, handoffs = KEYS[7], KEYS[8], KEYS[9]
local function handoff_key(token) return string.sub(meta, 1, -5) .. 'handoff:' .. token end   -- <code>:handoff:<token>
local function gone() return redis.call('EXISTS', meta) == 0 end
local function check_teacher(hash)   -- nil when the secret's hash matches, else why not
  if gone() then return 'gone' end
  if redis.call('HGET', meta, 'secret') ~= hash then return 'teacher' end
  return nil
end
local function refresh(ms) for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ms) end end
local function inherit(key)          -- a key a student created lives as long as the class
  if redis.call('PTTL', key) == -1 then
    local left = redis.call('PTTL', meta)
    if left > 0 then redis.call('PEXPIRE', key, left) end
  end
end
local function clock(given)
  if given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function stamp(t) return string.format('%.6f', t) end   -- a time as stored (Lua's own %.14g cuts it)
"""

_CREATE = """
if not gone() then return 0 end
redis.call('HSET', meta, 'secret', ARGV[1], 'version', 0, 'asked', 0)
redis.call('PEXPIRE', meta, tonumber(ARGV[2]))
return 1
"""

_TEACHER = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
refresh(tonumber(ARGV[2]))
return {'ok'}
"""

_PUBLISH = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
local now = redis.call('HMGET', meta, 'version', 'page', 'query')
local version = tonumber(now[1])
if version == 0 or now[2] ~= ARGV[3] or now[3] ~= ARGV[4] then
  version = redis.call('HINCRBY', meta, 'version', 1)
  redis.call('HSET', meta, 'page', ARGV[3], 'query', ARGV[4])
end
refresh(tonumber(ARGV[2]))
return {'ok', version}
"""

_ASK = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
local id = 'q' .. redis.call('HINCRBY', meta, 'asked', 1)
redis.call('HSET', questions, id, ARGV[3], id .. ':n', ARGV[4], id .. ':opened', stamp(clock(ARGV[5])))
refresh(tonumber(ARGV[2]))
return {'ok', id}
"""

_REVEAL = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
if redis.call('HEXISTS', questions, ARGV[3]) == 1 then redis.call('HSET', questions, ARGV[3] .. ':revealed', 1) end
refresh(tonumber(ARGV[2]))
return {'ok'}
"""

_CLOSE = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
if redis.call('HEXISTS', questions, ARGV[3]) == 1 then redis.call('HSET', questions, ARGV[3] .. ':closed', 1) end
refresh(tonumber(ARGV[2]))
return {'ok'}
"""

_END = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
for _, token in ipairs(redis.call('SMEMBERS', handoffs)) do redis.call('DEL', handoff_key(token)) end
redis.call('DEL', unpack(KEYS))
return {'ok'}
"""

_HANDOFF = """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
refresh(tonumber(ARGV[2]))
for _, token in ipairs(redis.call('SMEMBERS', handoffs)) do    -- forget tokens whose key expired
  if redis.call('EXISTS', handoff_key(token)) == 0 then redis.call('SREM', handoffs, token) end
end
local ms = math.min(tonumber(ARGV[5]), redis.call('PTTL', meta))
redis.call('SET', handoff_key(ARGV[3]), ARGV[4], 'PX', ms)
redis.call('SADD', handoffs, ARGV[3])
redis.call('PEXPIRE', handoffs, tonumber(ARGV[2]))
return {'ok'}
"""

_REDEEM = """
if gone() then return '' end
local secret = redis.call('GET', handoff_key(ARGV[1]))
if not secret then return '' end
redis.call('DEL', handoff_key(ARGV[1]))
redis.call('SREM', handoffs, ARGV[1])
return secret
"""

_ENROL = """
if gone() then return 'gone' end
local now, window, limit = clock(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local recent, before = {}, redis.call('HGET', enrolments, ARGV[2])
if before then
  for _, t in ipairs(cjson.decode(before)) do if now - tonumber(t) < window then recent[#recent + 1] = t end end
end
if #recent >= limit then
  redis.call('HSET', enrolments, ARGV[2], cjson.encode(recent))
  return 'toomany'
end
recent[#recent + 1] = stamp(now)
redis.call('HSET', enrolments, ARGV[2], cjson.encode(recent))
redis.call('HSET', enrolled, ARGV[1], stamp(now))
inherit(enrolments)
inherit(enrolled)
return 'ok'
"""

_ENROLLED = """
if gone() then return -1 end
return redis.call('HEXISTS', enrolled, ARGV[1])
"""

_ANSWER_OF = """
if gone() then return {'gone'} end
return {'ok', redis.call('HGET', answers, ARGV[1] .. ':' .. ARGV[2]) or ''}
"""

_ANSWER = """
if gone() then return -1 end
local id, student = ARGV[1], ARGV[2]
if id ~= 'q' .. redis.call('HGET', meta, 'asked') or redis.call('HEXISTS', questions, id .. ':revealed') == 1
   or redis.call('HEXISTS', questions, id .. ':closed') == 1 then
  return 0
end
local choice, n = tonumber(ARGV[3]), tonumber(redis.call('HGET', questions, id .. ':n'))
if not choice or not n or choice < 0 or choice >= n or choice ~= math.floor(choice) then return 0 end
local joined, opened = redis.call('HGET', enrolled, student), redis.call('HGET', questions, id .. ':opened')
if not joined or not opened or tonumber(joined) > tonumber(opened) then return 0 end   -- only ids in the room then
if redis.call('HSETNX', answers, id .. ':' .. student, choice) == 0 then return 0 end
redis.call('HINCRBY', tally, id .. ':' .. choice, 1)
inherit(answers)
inherit(tally)
return 1
"""

_COUNTS = """
local function counts(id)
  local n, out = tonumber(redis.call('HGET', questions, id .. ':n') or 0), {}
  for i = 0, n - 1 do out[#out + 1] = tonumber(redis.call('HGET', tally, id .. ':' .. i) or 0) end
  return out
end
"""

_TALLY = _COUNTS + """
if gone() then return {'gone'} end
return {'ok', counts(ARGV[1])}
"""

_QUESTION = """
if gone() then return {'gone'} end
local id = 'q' .. redis.call('HGET', meta, 'asked')
local text = redis.call('HGET', questions, id)
if not text or redis.call('HEXISTS', questions, id .. ':closed') == 1 then return {'ok'} end
return {'ok', id, text, redis.call('HEXISTS', questions, id .. ':revealed'), 0}
"""

_HISTORY = _COUNTS + """
local bad = check_teacher(ARGV[1]); if bad then return {bad} end
refresh(tonumber(ARGV[2]))
local out = {'ok'}
for i = 1, tonumber(redis.call('HGET', meta, 'asked')) do
  local id = 'q' .. i
  out[#out + 1] = {id, redis.call('HGET', questions, id), redis.call('HEXISTS', questions, id .. ':revealed'),
                   redis.call('HEXISTS', questions, id .. ':closed'), counts(id)}
end
return out
"""

_CHECK_IN = """
if gone() then return -1 end
local now, student = clock(ARGV[3]), ARGV[1]
if redis.call('HEXISTS', enrolled, student) == 0 then return 0 end   -- an id the class did not issue: nobody
local here, there = following, exploring
if ARGV[2] ~= '1' then here, there = exploring, following end
redis.call('ZADD', here, now, student)
redis.call('ZREM', there, student)
for _, key in ipairs({following, exploring}) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - tonumber(ARGV[4])))
  inherit(key)
end
return 1
"""

_PRESENCE = """
if gone() then return {'gone'} end
local since = clock(ARGV[1]) - tonumber(ARGV[2])
return {'ok', redis.call('ZCOUNT', following, since, '+inf'), redis.call('ZCOUNT', exploring, since, '+inf')}
"""

_ALLOW = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1])) end
return n
"""


def _reached(method):
    """Any Redis error becomes StoreDown: the page goes on without the class, never with a Redis traceback."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except redis.RedisError as e:
            raise StoreDown(f"{type(e).__name__}: {e}") from e
    return call


def _question_json(question: Question) -> str:
    try:
        return json.dumps({"key": question.key, "fields": question.fields, "choices": list(question.choices),
                           "answer": question.answer, "page": question.page, "query": question.query},
                          ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise ValueError(f"a question's fields and query must be plain JSON data: {e}") from e


def _question(question_id: str, text: str, revealed, closed) -> Question:
    data = json.loads(text)
    return Question(data["key"], data["fields"], tuple(data["choices"]), data["answer"], data["page"],
                    data["query"], id=question_id, revealed=bool(int(revealed)), closed=bool(int(closed)))


def _client_hash(client: str) -> str:
    """An address or client as Redis keeps it: its hash (no address in the store)."""
    return hashlib.sha256(str(client).encode("utf-8", "replace")).hexdigest()[:32]


def _query_json(query: dict) -> str:
    """One text per query, so the same view gives the same text and keeps its version."""
    return json.dumps(dict(query), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class RedisStore:
    """Classes in a Redis every worker shares. `url`: redis://:password@host:port/db or
    unix:///path/redis.sock?password=...; `clock` (seconds, for tests) replaces the server's TIME for presence;
    `idle_s` and `rate_window_s` are shortened by tests."""

    def __init__(self, url: str, clock: Callable[[], float] | None = None, idle_s: float = IDLE_S,
                 rate_window_s: float = RATE_WINDOW_S, socket_timeout: float = SOCKET_TIMEOUT_S,
                 enrol_window_s: float = ENROL_WINDOW_S, handoff_s: float = HANDOFF_S):
        # No retries, whatever redis-py's default: a hung Redis costs a page one timeout, and a script cut off
        # mid-call is not run twice (a question asked twice). The pool itself replaces a connection that a
        # restarted Redis closed before using it (tested).
        self._redis = redis.Redis.from_url(
            url, decode_responses=True, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout,
            retry=Retry(NoBackoff(), 0))
        self._clock = clock
        self._idle_ms = max(1, int(idle_s * 1000))
        self._rate_window_ms = max(1, int(rate_window_s * 1000))
        self._enrol_window_s, self._handoff_ms = enrol_window_s, max(1, int(handoff_s * 1000))
        self._scripts = {name: self._redis.register_script(_PRELUDE + body) for name, body in (
            ("create", _CREATE), ("teacher", _TEACHER), ("publish", _PUBLISH), ("ask", _ASK), ("reveal", _REVEAL),
            ("close", _CLOSE), ("end", _END), ("answer", _ANSWER), ("answer_of", _ANSWER_OF), ("tally", _TALLY),
            ("question", _QUESTION), ("history", _HISTORY), ("check_in", _CHECK_IN), ("presence", _PRESENCE),
            ("enrol", _ENROL), ("enrolled", _ENROLLED), ("handoff", _HANDOFF), ("redeem", _REDEEM))}
        self._allow = self._redis.register_script(_ALLOW)

    @staticmethod
    def keys(code: str) -> list[str]:
        return [f"{PREFIX}{code}:{part}" for part in KEY_PARTS]

    def _run(self, script: str, code: str, *args) -> object:
        """Run a class's script; a code that cannot be one is a class that does not exist."""
        if normal_code(code) != code:
            raise ClassGone(code)
        return self._scripts[script](keys=self.keys(code), args=[str(a) for a in args])

    def _now(self) -> str:
        return "" if self._clock is None else repr(float(self._clock()))

    def _teacher(self, script: str, code: str, secret: str, *args) -> list:
        reply = self._run(script, code, secret_hash(secret), self._idle_ms, *args)
        if reply[0] == "gone":
            raise ClassGone(code)
        if reply[0] == "teacher":
            raise NotTeacher(code)
        return reply[1:]

    def _student(self, script: str, code: str, *args) -> list:
        reply = self._run(script, code, *args)
        if reply[0] == "gone":
            raise ClassGone(code)
        return reply[1:]

    @_reached
    def create(self) -> tuple[str, str]:
        secret = new_secret()
        while True:
            code = new_code()
            if self._run("create", code, secret_hash(secret), self._idle_ms):
                return code, secret

    @_reached
    def exists(self, code: str) -> bool:
        return normal_code(code) == code and bool(self._redis.exists(self.keys(code)[0]))

    @_reached
    def is_teacher(self, code: str, secret: str) -> bool:
        try:
            self._teacher("teacher", code, secret)
            return True
        except (ClassGone, NotTeacher):
            return False

    @_reached
    def publish(self, code: str, secret: str, page: str, query: dict) -> int:
        return int(self._teacher("publish", code, secret, page, _query_json(query))[0])

    @_reached
    def followed(self, code: str) -> Published | None:
        if normal_code(code) != code:
            raise ClassGone(code)
        version, page, query = self._redis.hmget(self.keys(code)[0], "version", "page", "query")
        if version is None:
            raise ClassGone(code)
        return None if int(version) == 0 else Published(int(version), page, json.loads(query))

    @_reached
    def enrol(self, code: str, address: str) -> str:
        student = new_student()
        reply = self._run("enrol", code, student, _client_hash(address), self._now(), self._enrol_window_s,
                          NEW_STUDENTS_PER_ADDRESS)
        if reply == "gone":
            raise ClassGone(code)
        if reply == "toomany":
            raise TooMany(address)
        return student

    @_reached
    def enrolled(self, code: str, student: str) -> bool:
        found = self._run("enrolled", code, student)
        if found == -1:
            raise ClassGone(code)
        return found == 1

    @_reached
    def check_in(self, code: str, student: str, following: bool) -> None:
        if self._run("check_in", code, student, "1" if following else "0", self._now(), PRESENT_S) == -1:
            raise ClassGone(code)

    @_reached
    def presence(self, code: str) -> Presence:
        following, exploring = self._student("presence", code, self._now(), PRESENT_S)
        return Presence(int(following), int(exploring))

    @_reached
    def ask(self, code: str, secret: str, question: Question) -> Question:
        if not question.choices or len(question.choices) > MAX_CHOICES or not valid_choice(question, question.answer):
            raise ValueError("a question needs 1 to MAX_CHOICES choices and its answer among them")
        asked_id = self._teacher("ask", code, secret, _question_json(question), len(question.choices), self._now())[0]
        return replace(question, id=asked_id, revealed=False, closed=False)

    @_reached
    def question(self, code: str) -> Question | None:
        found = self._student("question", code)
        return _question(*found) if found else None

    @_reached
    def answer(self, code: str, question_id: str, student: str, choice: int) -> bool:
        if not (isinstance(choice, int) and not isinstance(choice, bool) and choice >= 0):
            return False
        counted = self._run("answer", code, question_id, student, choice)
        if counted == -1:
            raise ClassGone(code)
        return counted == 1

    @_reached
    def answer_of(self, code: str, question_id: str, student: str) -> int | None:
        choice = self._student("answer_of", code, question_id, student)[0]
        return int(choice) if choice != "" else None

    @_reached
    def tally(self, code: str, question_id: str) -> list[int]:
        return [int(n) for n in self._student("tally", code, question_id)[0]]

    @_reached
    def reveal(self, code: str, secret: str, question_id: str) -> None:
        self._teacher("reveal", code, secret, question_id)

    @_reached
    def close(self, code: str, secret: str, question_id: str) -> None:
        self._teacher("close", code, secret, question_id)

    @_reached
    def handoff(self, code: str, secret: str) -> str:
        token = new_handoff()
        self._teacher("handoff", code, secret, token, secret, self._handoff_ms)
        return token

    @_reached
    def redeem(self, code: str, token: str) -> str | None:
        if normal_code(code) != code or not _HANDOFF_TOKEN.fullmatch(str(token)):
            return None                                # (a token is part of a key's name: only ours may be)
        return self._run("redeem", code, token) or None

    @_reached
    def history(self, code: str, secret: str) -> list[tuple[Question, list[int]]]:
        return [(_question(qid, text, revealed, closed), [int(n) for n in counts])
                for qid, text, revealed, closed, counts in self._teacher("history", code, secret)]

    @_reached
    def end(self, code: str, secret: str) -> None:
        self._teacher("end", code, secret)

    @_reached
    def allow(self, client: str, action: str, per_minute: int, count: bool = True) -> bool:
        key = f"tviz:rate:{action}:{_client_hash(client)}"
        if not count:
            return int(self._redis.get(key) or 0) < per_minute
        return int(self._allow(keys=[key], args=[self._rate_window_ms])) <= per_minute

    def disconnect(self) -> None:
        """Close this client's connections (close() is the teacher's: it closes a question)."""
        self._redis.close()
