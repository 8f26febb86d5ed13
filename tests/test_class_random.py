"""Random class sessions (AppTest), seeded and reproducible, on both stores: a teacher and three students do what a
class does, in any order — start, change page, picker, sentence (short, 40 words, empty, 5,000 characters), ask each
kind of question, reveal, close, end, reload, resume; join by link or by a typed code (right, wrong, lower case),
answer (twice, from a second tab, after a reload), explore, edit the sentence, follow again, reload — and after every
step: no exception anywhere, the teacher is still the teacher, a following student's poll shows the published view,
and every question counts each student at most once.

CLASS_RANDOM_STEPS (default 200 a store) sets the length: the note of issue 43 gives a run of thousands."""
from __future__ import annotations

import os
import random

import pytest

from apptest_utils import no_exceptions
from class_utils import Browser, cookie_jars, fresh_store  # noqa: F401 - fixtures
from long_text import SENTENCES
from redis_utils import RedisServer, redis_local
from viz.classroom import backend
from viz.classroom.live import class_store
from viz.classroom.store import REDIS_URL_ENV

STEPS = int(os.environ.get("CLASS_RANDOM_STEPS", "200"))
PAGES = ["home.py", "explorer.py", "multi_head.py", "positional.py", "decoding.py", "step_through.py",
         "layernorm.py", "heads.py"]
SENTENCE_CHOICES = ["The cat sat on the mat.", SENTENCES["40"], "", "word " * 1000, "Hello.", "<b>x</b> & ☃ \u202e"]
SIDEBAR_KEYS = {"model", "text", "target", "style", "lang", "preset", "image_format", "presenter"}


@pytest.fixture(params=["memory", "redis"])
def store(request, monkeypatch, tmp_path):
    if request.param == "redis":
        if redis_local.REDIS_SERVER is None:
            pytest.fail("redis-server is missing: apt-get install -y redis-server", pytrace=False)
        server = RedisServer(tmp_path / "redis", persist=False)
        monkeypatch.setenv(REDIS_URL_ENV, server.url)
        monkeypatch.setattr(backend, "_opened", {})
        class_store.clear()
        yield request.param
        class_store.clear()
        server.stop()
    else:
        yield request.param


class Person:
    """A browser and its open tabs (AppTests); `tab` is the one in front."""

    def __init__(self, name: str):
        self.name, self.browser, self.tabs = name, Browser(), []

    @property
    def tab(self):
        return self.tabs[-1] if self.tabs else None

    def open(self, page=None, **params):
        self.tabs.append(self.browser.open(page, **params))
        self.tabs = self.tabs[-2:]                            # two tabs at most: an old one and the front one
        return self.tab

    def act(self, action):
        """Run an AppTest action (a bound `.run` of a clicked/set widget) in this browser."""
        return self.browser.run(self.tab, action)


def state(at, key, default=None):
    return at.session_state[key] if key in at.session_state else default


def page_widgets(at) -> list:
    """The page's own pickers (not the sidebar's, not the class's)."""
    found = []
    for kind in ("selectbox", "slider"):
        for w in at.get(kind):
            key = w.key or ""
            if key and key not in SIDEBAR_KEYS and not key.startswith(("class-", "lang")):
                found.append(w)
    return found


def set_random(rng: random.Random, widget) -> bool:
    """Set a picker to a random value it offers (AppTest's own refusals are not the app's: skipped)."""
    try:
        if widget.type == "selectbox":
            if not widget.options:
                return False
            before = widget.value
            widget.set_value(rng.randrange(len(widget.options)))   # pickers of numbers hold their index
            try:
                _ = widget.index                                   # AppTest can send it (a word picker cannot)
            except ValueError:
                widget.set_value(before)
                return False
        else:
            lo, hi = widget.min, widget.max
            if not isinstance(lo, int):
                return False
            widget.set_value(rng.randint(lo, hi))
        return True
    except (ValueError, TypeError, IndexError, AttributeError):
        return False


class Class:
    """The world: a teacher, students, and the steps that change it."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.teacher = Person("teacher")
        self.students = [Person(f"student{i}") for i in range(3)]
        self.code: str | None = None
        self.log: list[str] = []

    # -- the teacher --------------------------------------------------------------------------------------------
    def teacher_open(self):
        present = self.rng.choice([{}, {"present": "1"}])
        self.teacher.open(self.rng.choice(PAGES), **present)

    def start(self):
        at = self.teacher.tab
        if at is None or not any(b.key == "class-ask-start" for b in at.button):
            return
        self.teacher.act(at.button(key="class-ask-start").click().run)
        self.code = state(at, "class-code")

    def teacher_page(self):
        if self.teacher.tab is not None:
            self.teacher.act(self.teacher.tab.switch_page(f"viz/pages/{self.rng.choice(PAGES)}").run)

    def teacher_picker(self):
        at = self.teacher.tab
        widgets = page_widgets(at) if at is not None else []
        if widgets and set_random(self.rng, self.rng.choice(widgets)):
            self.teacher.act(at.run)

    def teacher_sentence(self):
        at = self.teacher.tab
        if at is not None and any(w.key == "text" for w in at.text_area):
            at.text_area(key="text").input(self.rng.choice(SENTENCE_CHOICES))
            self.teacher.act(at.run)

    def ask(self):
        at = self.teacher.tab
        if at is None or not any(w.key == "class-ask-kind" for w in at.selectbox):
            return
        at.selectbox(key="class-ask-kind").select(self.rng.choice(["cross_look", "next_token", "positional_head"]))
        self.teacher.act(at.run)
        go = [b for b in at.button if b.key == "class-ask-go"]
        if go:
            self.teacher.act(go[0].click().run)

    def teacher_button(self, key):
        at = self.teacher.tab
        found = [b for b in at.button if b.key == key] if at is not None else []
        if found:
            self.teacher.act(found[0].click().run)

    def teacher_reload(self):
        if self.teacher.tab is not None:
            params = dict(self.teacher.tab.query_params)
            self.teacher.open(None, **{k: v[0] if isinstance(v, list) else v for k, v in params.items()})

    # -- the students -------------------------------------------------------------------------------------------
    def student(self) -> Person:
        return self.rng.choice(self.students)

    def join_link(self):
        if self.code:
            self.student().open(None, **{"class": self.rng.choice([self.code, self.code.lower(), "ZZZZZZ"])})

    def join_typed(self):
        if not self.code:
            return
        person = self.student()
        at = person.tab or person.open(None)
        boxes = [w for w in at.text_input if w.key in ("class-join-home", "class-join-sidebar")]
        if not boxes:
            return
        typed = self.rng.choice([self.code, f" {self.code.lower()} ", "ZZZZZZ", "??"])
        boxes[0].input(typed)
        submit = [b for b in at.button if b.proto.is_form_submitter and boxes[0].key in b.proto.form_id]
        if submit:
            person.act(submit[0].click().run)

    def answer(self):
        person = self.student()
        at = person.tab
        if at is None:
            return
        choices = [b for b in at.button if b.key and b.key.startswith("class-ask-q")]
        if choices:
            person.act(self.rng.choice(choices).click().run)

    def second_tab(self):
        person = self.student()
        if person.tab is not None and self.code:
            person.open(None, **{"class": self.code})

    def student_button(self, key):
        person = self.student()
        at = person.tab
        found = [b for b in at.button if b.key == key] if at is not None else []
        if found:
            person.act(found[0].click().run)

    def student_sentence(self):
        person = self.student()
        at = person.tab
        if at is not None and state(at, "class-following") is False and any(w.key == "text" for w in at.text_area):
            at.text_area(key="text").input(self.rng.choice(SENTENCE_CHOICES))
            person.act(at.run)

    def poll(self):
        person = self.student()
        if person.tab is not None:
            person.act(person.tab.run)
            self.check_follower(person)

    # -- one step and the invariants --------------------------------------------------------------------------
    def step(self):
        actions = [(self.teacher_open, 1), (self.start, 2), (self.teacher_page, 3), (self.teacher_picker, 4),
                   (self.teacher_sentence, 2), (self.ask, 3), (lambda: self.teacher_button("class-ask-reveal"), 3),
                   (lambda: self.teacher_button("class-ask-close"), 1), (lambda: self.teacher_button("class-ask-end"), 0.3),
                   (self.teacher_reload, 1), (self.join_link, 2), (self.join_typed, 2), (self.answer, 4),
                   (self.second_tab, 1), (lambda: self.student_button("class-ask-explore"), 1),
                   (lambda: self.student_button("class-ask-follow"), 1), (self.student_sentence, 1), (self.poll, 6)]
        if self.teacher.tab is None:
            action = self.teacher_open
        else:
            action = self.rng.choices([a for a, _ in actions], weights=[w for _, w in actions])[0]
        self.log.append(getattr(action, "__name__", "button"))
        action()
        for person in [self.teacher, *self.students]:
            for at in person.tabs:
                no_exceptions(at)
        self.check_teacher()
        self.check_counts()

    def check_teacher(self):
        at = self.teacher.tab
        if self.code is None or at is None:
            return
        live = class_store().exists(self.code)
        if live:
            assert state(at, "class-code") == self.code and state(at, "class-secret"), "the teacher stopped teaching"
        else:
            self.code = None

    def check_follower(self, person: Person):
        at = person.tab
        if not self.code or state(at, "class-code") != self.code or not state(at, "class-following", True):
            return
        published = class_store().followed(self.code)
        if published is not None and state(at, "class-version") == published.version:
            assert state(at, "page") == published.page, "a following screen shows another page"

    def check_counts(self):
        if not self.code or not class_store().exists(self.code):
            return
        question = class_store().question(self.code)
        if question is not None:
            assert sum(class_store().tally(self.code, question.id)) <= len(self.students), "a student counted twice"


def test_random_class_sessions_raise_nothing_and_keep_their_invariants(store):
    rng = random.Random(f"class-{store}-{STEPS}")
    world = Class(rng)
    for i in range(STEPS):
        try:
            world.step()
        except AssertionError as e:
            raise AssertionError(f"step {i} ({world.log[-1]}), seed class-{store}-{STEPS}; last steps "
                                 f"{world.log[-8:]}: {e}") from e
    assert world.code is None or class_store().exists(world.code)
    done = {name: world.log.count(name) for name in sorted(set(world.log))}
    print(f"{STEPS} steps on the {store} store: {done}")
