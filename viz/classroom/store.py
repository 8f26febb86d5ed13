"""Where a live class lives: the view the teacher publishes, who follows it, the questions and their answers.

One interface, two backends: `MemoryStore` (the default: one process, nothing else installed) and the Redis
store (the lecture hall's workers share one Redis). Plain data only (no Streamlit): a view travels as its page
and its URL query, which each student's screen checks again (viz.core.view.View.from_query) before showing it.

Only the teacher drives: publishing, asking, revealing, closing and ending take the class's teacher secret, which
the store keeps as a hash (and, for at most HANDOFF_S, itself under a single-use token: `handoff`, for the
teacher's other device). A class and everything in it is deleted when the teacher ends it or after IDLE_S
without the teacher.

Who counts: a student is an id the store issued (`enrol`), never one a browser made up. Only an id enrolled at
or before a question opened may answer it, once; presence counts enrolled ids only. One address may enrol at
most NEW_STUDENTS_PER_ADDRESS ids in a class per ENROL_WINDOW_S: a room behind one NAT address joins, while a
script that makes a new student per request runs out, and none of its new ids can answer the question already
open. So one client adds at most NEW_STUDENTS_PER_ADDRESS answers to a question (asked after they enrolled),
not one per request.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Protocol

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"   # no 0/O, 1/I/L: read off a projector and typed on a phone
CODE_LENGTH = 6               # 31**6 = 887,503,681 codes (see WRONG_CODES_PER_ADDRESS for guessing one)
SECRET_BYTES = 24             # 192 bits (the issue asks for at least 128)
IDLE_S = 4 * 3600             # a class without its teacher for this long ends, and its data goes
PRESENT_S = 10.0              # a student counts as present while their screen checked in this recently
# Wrong class codes per minute (a right code never counts, and is never refused while its address is under the
# limit). Per address: loose enough for a room of 60 behind one NAT address that each mistype twice (120), with
# room to spare; per browser: a student mistypes a few times, a script in one browser stops at 20. Guessing at
# an address's whole allowance: each guess hits one of L live classes with probability L / 31**6, so the
# expected time to a hit is 31**6 / (300 * L) minutes: 2,958,346 minutes (about 5.6 years) for one live class,
# about 20.5 days were 100 classes live the whole time (docs/security.md, "The class, round five").
WRONG_CODES_PER_ADDRESS = 300
WRONG_CODES_PER_BROWSER = 20  # one browser's wrong codes per minute (a student mistypes a few times, not twenty)
NEW_STUDENTS_PER_ADDRESS = 150    # ids one address may enrol in one class per ENROL_WINDOW_S: a big hall's worth
ENROL_WINDOW_S = 600.0
HANDOFF_S = 600.0             # a teacher's link for their other device works once, for this long
HANDOFF_BYTES = 24
STUDENT_BYTES = 18            # a student's id: 144 random bits, issued by the store
MAX_CHOICES = 64              # a question's choices are the sentence's tokens or the model's heads
RATE_WINDOW_S = 60.0          # allow(..., per_minute) counts tries in a window this long
REDIS_URL_ENV = "TRANSFORMER_VIZ_REDIS"   # set (redis:// or unix:// URL): classes live in that Redis, else here
# What deploy/serve.py tells each worker besides the store: the proxies whose X-Real-IP names the client (comma-
# separated addresses; unset, as under a bare `streamlit run`: none is trusted), and the address students open.
TRUSTED_PROXIES_ENV = "TRANSFORMER_VIZ_TRUSTED_PROXIES"
PUBLIC_URL_ENV = "TRANSFORMER_VIZ_PUBLIC_URL"


class ClassGone(Exception):
    """The class ended (the teacher's click, or idle too long) or never existed."""


class NotTeacher(Exception):
    """The teacher's secret did not match: only the teacher publishes, asks, reveals and ends."""


class StoreDown(Exception):
    """The store cannot be reached (Redis down): every page still works on its own."""


class TooMany(Exception):
    """A client went over a limit (an address enrolled NEW_STUDENTS_PER_ADDRESS ids in a class recently)."""


@dataclass(frozen=True)
class Question:
    """A question about the view on the screen, made from the real trace. The prompt is a catalogue key and its
    fields, so each student reads it in their own language; the choices are tokens or head names."""
    key: str
    fields: dict
    choices: tuple[str, ...]
    answer: int                       # index into choices: the model's answer
    page: str                         # the view it asks about, shown again with the reveal
    query: dict
    id: str = ""                      # given by the store when asked
    revealed: bool = False
    closed: bool = False              # the teacher closed it: no more answers, and question() no longer shows it


@dataclass(frozen=True)
class Published:
    """The teacher's view now; `version` grows with each publish, so a follower redraws only on a change."""
    version: int
    page: str
    query: dict


@dataclass(frozen=True)
class Presence:
    following: int
    exploring: int


class ClassStore(Protocol):
    def create(self) -> tuple[str, str]:
        """A new class: (its code, the teacher's secret)."""
    def exists(self, code: str) -> bool: ...
    def is_teacher(self, code: str, secret: str) -> bool: ...
    def publish(self, code: str, secret: str, page: str, query: dict) -> int:
        """Set the followed view; returns its version (unchanged when the view is the same)."""
    def followed(self, code: str) -> Published | None:
        """The teacher's view (None before the first publish); raises ClassGone."""
    def enrol(self, code: str, address: str) -> str:
        """A new student of class `code`: an id the store made (kept in their browser), joined now. Raises
        ClassGone, or TooMany when `address` enrolled NEW_STUDENTS_PER_ADDRESS ids here in ENROL_WINDOW_S."""
    def enrolled(self, code: str, student: str) -> bool:
        """Whether `student` is an id this class issued; raises ClassGone."""
    def check_in(self, code: str, student: str, following: bool) -> None:
        """A student's screen says it is there, following or exploring on their own (an id the class did not
        issue is ignored)."""
    def presence(self, code: str) -> Presence: ...
    def ask(self, code: str, secret: str, question: Question) -> Question:
        """Open `question` now (closing the one before); returns it with its id."""
    def question(self, code: str) -> Question | None:
        """The open or last revealed question; None before the first and once the teacher closed the last."""
    def answer(self, code: str, question_id: str, student: str, choice: int) -> bool:
        """Count a student's answer once: False when the id was not enrolled by the time the question opened
        (forged, unknown, or joined later), they already answered, the choice is not one of the question's, or
        the question is not the open one, was revealed or closed."""
    def answer_of(self, code: str, question_id: str, student: str) -> int | None:
        """The choice that counted for `student` (None: none did)."""
    def tally(self, code: str, question_id: str) -> list[int]: ...
    def reveal(self, code: str, secret: str, question_id: str) -> None: ...
    def close(self, code: str, secret: str, question_id: str) -> None:
        """Close the question: no more answers, and question() returns None (history() keeps it, closed)."""
    def handoff(self, code: str, secret: str) -> str:
        """A token that gives the teacher's secret once, within HANDOFF_S (the teacher's other device)."""
    def redeem(self, code: str, token: str) -> str | None:
        """The teacher's secret for a token from handoff(), once (the token is deleted); None for a wrong,
        used or expired token, or a class that ended."""
    def history(self, code: str, secret: str) -> list[tuple[Question, list[int]]]:
        """Every question asked in this class, oldest first, with its tally (the teacher's CSV)."""
    def end(self, code: str, secret: str) -> None:
        """End the class and delete its data."""
    def allow(self, client: str, action: str, per_minute: int, count: bool = True) -> bool:
        """Rate limit: False once `client` did `action` per_minute times in the last minute. `count=False` only
        looks (a room behind one address joins with the right code: only its wrong codes are counted)."""


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def new_student() -> str:
    return secrets.token_urlsafe(STUDENT_BYTES)


def new_handoff() -> str:
    return secrets.token_urlsafe(HANDOFF_BYTES)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def same_secret(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(secret_hash(secret), stored_hash)


def normal_code(text: str) -> str | None:
    """A typed class code as the store keeps it (upper case, spaces and dashes dropped), or None if it cannot be
    one (wrong length or letters outside the alphabet)."""
    code = "".join(ch for ch in str(text).upper() if ch not in " -")
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        return None
    return code


def valid_choice(question: Question, choice: object) -> bool:
    return isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(question.choices)


# -- in one process ---------------------------------------------------------------------------------------------
@dataclass
class _Class:
    secret_hash: str
    touched: float
    published: Published | None = None
    seen: dict[str, tuple[float, bool]] = field(default_factory=dict)      # student -> (when, following)
    questions: list[Question] = field(default_factory=list)
    opened: dict[str, float] = field(default_factory=dict)                 # question id -> when it was asked
    answers: dict[str, dict[str, int]] = field(default_factory=dict)       # question id -> student -> choice
    enrolled: dict[str, float] = field(default_factory=dict)               # student id -> when it was issued
    enrolments: dict[str, list[float]] = field(default_factory=dict)       # address -> its recent enrolments
    handoffs: dict[str, tuple[str, float]] = field(default_factory=dict)   # token -> (the secret, until when)


class MemoryStore:
    """Classes in this process's memory (`streamlit run app.py` alone): one lock, nothing outlives the process."""

    def __init__(self, clock=time.monotonic, idle_s: float = IDLE_S, rate_window_s: float = RATE_WINDOW_S,
                 enrol_window_s: float = ENROL_WINDOW_S, handoff_s: float = HANDOFF_S):
        self._clock = clock
        self._idle_s, self._rate_window_s = idle_s, rate_window_s
        self._enrol_window_s, self._handoff_s = enrol_window_s, handoff_s
        self._lock = threading.Lock()
        self._classes: dict[str, _Class] = {}
        self._tries: dict[tuple[str, str], list[float]] = {}
        self._tries_swept = clock()

    def _sweep(self, now: float) -> None:
        for code in [c for c, k in self._classes.items() if now - k.touched > self._idle_s]:
            del self._classes[code]

    def _get(self, code: str) -> _Class:
        now = self._clock()
        self._sweep(now)
        found = self._classes.get(code)
        if found is None:
            raise ClassGone(code)
        found.handoffs = {t: (s, until) for t, (s, until) in found.handoffs.items() if now < until}   # expired: gone
        return found

    def _teacher(self, code: str, secret: str) -> _Class:
        found = self._get(code)
        if not same_secret(secret, found.secret_hash):
            raise NotTeacher(code)
        found.touched = self._clock()
        return found

    def create(self) -> tuple[str, str]:
        with self._lock:
            self._sweep(self._clock())
            code = new_code()
            while code in self._classes:
                code = new_code()
            secret = new_secret()
            self._classes[code] = _Class(secret_hash(secret), self._clock())
            return code, secret

    def exists(self, code: str) -> bool:
        with self._lock:
            try:
                self._get(code)
                return True
            except ClassGone:
                return False

    def is_teacher(self, code: str, secret: str) -> bool:
        with self._lock:
            try:
                self._teacher(code, secret)
                return True
            except (ClassGone, NotTeacher):
                return False

    def publish(self, code: str, secret: str, page: str, query: dict) -> int:
        with self._lock:
            found = self._teacher(code, secret)
            now = found.published
            if now is not None and now.page == page and now.query == dict(query):
                return now.version
            version = (now.version if now else 0) + 1
            found.published = Published(version, page, dict(query))
            return version

    def followed(self, code: str) -> Published | None:
        with self._lock:
            return self._get(code).published

    def enrol(self, code: str, address: str) -> str:
        with self._lock:
            found, now = self._get(code), self._clock()
            recent = [t for t in found.enrolments.get(address, []) if now - t < self._enrol_window_s]
            if len(recent) >= NEW_STUDENTS_PER_ADDRESS:
                found.enrolments[address] = recent
                raise TooMany(address)
            found.enrolments[address] = [*recent, now]
            student = new_student()
            found.enrolled[student] = now
            return student

    def enrolled(self, code: str, student: str) -> bool:
        with self._lock:
            return student in self._get(code).enrolled

    def check_in(self, code: str, student: str, following: bool) -> None:
        with self._lock:
            found = self._get(code)
            if student in found.enrolled:
                found.seen[student] = (self._clock(), bool(following))

    def presence(self, code: str) -> Presence:
        with self._lock:
            found, now = self._get(code), self._clock()
            found.seen = {s: (when, f) for s, (when, f) in found.seen.items() if now - when <= PRESENT_S}
            live = [f for when, f in found.seen.values()]
            return Presence(sum(live), len(live) - sum(live))

    def ask(self, code: str, secret: str, question: Question) -> Question:
        if not question.choices or len(question.choices) > MAX_CHOICES or not valid_choice(question, question.answer):
            raise ValueError("a question needs 1 to MAX_CHOICES choices and its answer among them")
        with self._lock:
            found = self._teacher(code, secret)
            asked = replace(question, id=f"q{len(found.questions) + 1}", revealed=False, closed=False)
            found.questions.append(asked)
            found.opened[asked.id] = self._clock()
            found.answers[asked.id] = {}
            return asked

    def question(self, code: str) -> Question | None:
        with self._lock:
            found = self._get(code)
            return found.questions[-1] if found.questions and not found.questions[-1].closed else None

    def answer(self, code: str, question_id: str, student: str, choice: int) -> bool:
        with self._lock:
            found = self._get(code)
            if not found.questions:
                return False
            open_one = found.questions[-1]
            if (open_one.id != question_id or open_one.revealed or open_one.closed
                    or not valid_choice(open_one, choice)):
                return False
            joined = found.enrolled.get(student)
            if joined is None or joined > found.opened[question_id]:
                return False
            votes = found.answers[question_id]
            if student in votes:
                return False
            votes[student] = choice
            return True

    def answer_of(self, code: str, question_id: str, student: str) -> int | None:
        with self._lock:
            return self._get(code).answers.get(question_id, {}).get(student)

    def _tally(self, found: _Class, question: Question) -> list[int]:
        counts = [0] * len(question.choices)
        for choice in found.answers.get(question.id, {}).values():
            counts[choice] += 1
        return counts

    def tally(self, code: str, question_id: str) -> list[int]:
        with self._lock:
            found = self._get(code)
            asked = next((q for q in found.questions if q.id == question_id), None)
            return [] if asked is None else self._tally(found, asked)

    def reveal(self, code: str, secret: str, question_id: str) -> None:
        with self._lock:
            found = self._teacher(code, secret)
            found.questions = [replace(q, revealed=True) if q.id == question_id else q for q in found.questions]

    def close(self, code: str, secret: str, question_id: str) -> None:
        with self._lock:
            found = self._teacher(code, secret)
            found.questions = [replace(q, closed=True) if q.id == question_id else q for q in found.questions]

    def handoff(self, code: str, secret: str) -> str:
        with self._lock:
            found = self._teacher(code, secret)
            token = new_handoff()
            found.handoffs[token] = (secret, self._clock() + self._handoff_s)
            return token

    def redeem(self, code: str, token: str) -> str | None:
        with self._lock:
            try:
                found = self._get(code)                   # (its sweep drops expired tokens)
            except ClassGone:
                return None
            secret, _ = found.handoffs.pop(token, (None, 0.0))
            return secret

    def history(self, code: str, secret: str) -> list[tuple[Question, list[int]]]:
        with self._lock:
            found = self._teacher(code, secret)
            return [(q, self._tally(found, q)) for q in found.questions]

    def end(self, code: str, secret: str) -> None:
        with self._lock:
            self._teacher(code, secret)
            del self._classes[code]

    def allow(self, client: str, action: str, per_minute: int, count: bool = True) -> bool:
        with self._lock:
            now = self._clock()
            self._sweep_tries(now)
            recent = [t for t in self._tries.get((client, action), []) if now - t < self._rate_window_s]
            if len(recent) >= per_minute or not count:
                self._tries[(client, action)] = recent
                return len(recent) < per_minute
            self._tries[(client, action)] = [*recent, now]
            return True

    def _sweep_tries(self, now: float) -> None:
        """Forget clients whose tries are all older than the window (once a window, so a long-running app with
        many visitors does not keep one list per client it ever saw)."""
        if now - self._tries_swept < self._rate_window_s:
            return
        self._tries_swept = now
        self._tries = {who: tries for who, tries in self._tries.items() if tries and now - tries[-1] < self._rate_window_s}
