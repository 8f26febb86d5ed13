"""Where a live class lives: the view the teacher publishes, who follows it, the questions and their answers.

One interface, two backends: `MemoryStore` (the default: one process, nothing else installed) and the Redis
store (the lecture hall's workers share one Redis). Plain data only (no Streamlit): a view travels as its page
and its URL query, which each student's screen checks again (viz.view.View.from_query) before showing it.

Only the teacher drives: publishing, asking, revealing and ending take the class's teacher secret, which the
store keeps as a hash. A class and everything in it is deleted when the teacher ends it or after IDLE_S without
the teacher.
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
CODE_LENGTH = 6               # 31**6 ≈ 8.9e8 codes: with JOIN_TRIES_PER_MINUTE a client finds a live one by chance
                              # about once in a million years of guessing per hundred classes
SECRET_BYTES = 24             # 192 bits (the issue asks for at least 128)
IDLE_S = 4 * 3600             # a class without its teacher for this long ends, and its data goes
PRESENT_S = 10.0              # a student counts as present while their screen checked in this recently
JOIN_TRIES_PER_MINUTE = 20    # class-code lookups per client (a wrong code costs one)
MAX_CHOICES = 64              # a question's choices are the sentence's tokens or the model's heads
RATE_WINDOW_S = 60.0          # allow(..., per_minute) counts tries in a window this long
REDIS_URL_ENV = "TRANSFORMER_VIZ_REDIS"   # set (redis:// or unix:// URL): classes live in that Redis, else here


class ClassGone(Exception):
    """The class ended (the teacher's click, or idle too long) or never existed."""


class NotTeacher(Exception):
    """The teacher's secret did not match: only the teacher publishes, asks, reveals and ends."""


class StoreDown(Exception):
    """The store cannot be reached (Redis down): every page still works on its own."""


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
    def check_in(self, code: str, student: str, following: bool) -> None:
        """A student's screen says it is there, following or exploring on their own."""
    def presence(self, code: str) -> Presence: ...
    def ask(self, code: str, secret: str, question: Question) -> Question:
        """Open `question` (closing the one before); returns it with its id."""
    def question(self, code: str) -> Question | None:
        """The open or last revealed question."""
    def answer(self, code: str, question_id: str, student: str, choice: int) -> bool:
        """Count a student's answer once: False when they already answered, the choice is not one of the
        question's, or the question is not the open one or was revealed."""
    def tally(self, code: str, question_id: str) -> list[int]: ...
    def reveal(self, code: str, secret: str, question_id: str) -> None: ...
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
    answers: dict[str, dict[str, int]] = field(default_factory=dict)       # question id -> student -> choice


class MemoryStore:
    """Classes in this process's memory (`streamlit run app.py` alone): one lock, nothing outlives the process."""

    def __init__(self, clock=time.monotonic, idle_s: float = IDLE_S, rate_window_s: float = RATE_WINDOW_S):
        self._clock = clock
        self._idle_s, self._rate_window_s = idle_s, rate_window_s
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

    def check_in(self, code: str, student: str, following: bool) -> None:
        with self._lock:
            self._get(code).seen[student] = (self._clock(), bool(following))

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
            asked = replace(question, id=f"q{len(found.questions) + 1}", revealed=False)
            found.questions.append(asked)
            found.answers[asked.id] = {}
            return asked

    def question(self, code: str) -> Question | None:
        with self._lock:
            found = self._get(code)
            return found.questions[-1] if found.questions else None

    def answer(self, code: str, question_id: str, student: str, choice: int) -> bool:
        with self._lock:
            found = self._get(code)
            if not found.questions:
                return False
            open_one = found.questions[-1]
            if open_one.id != question_id or open_one.revealed or not valid_choice(open_one, choice):
                return False
            votes = found.answers[question_id]
            if student in votes:
                return False
            votes[student] = choice
            return True

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
