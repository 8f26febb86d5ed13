"""A live class under AppTest: each student or teacher is a browser (its cookie jar) and its sessions (AppTests).
AppTest cannot send cookies, so viz/classroom/browser.py's two doors are swapped for the jar of the browser whose
session runs: remembered() reads it, remember() writes it (what the component's JavaScript does in Chromium;
tests/test_browser_class*.py check the real one)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from apptest_utils import no_exceptions, run_page
from viz.classroom import backend, browser
from viz.classroom.live import class_store

_running: list[dict | None] = [None]   # the jar of the browser whose session runs now (None: a cookie-less client)


@dataclass
class Browser:
    """One browser: its cookies, shared by every tab (session) it opens."""
    cookies: dict = field(default_factory=dict)

    def open(self, page: str | None = None, **params):
        _running[0] = self.cookies
        try:
            return run_page(page, **params)
        finally:
            _running[0] = None

    def run(self, at, action=None):
        """Run `at` (a tab of this browser), or an action of it (`widget.click().run`, as a callable)."""
        _running[0] = self.cookies
        try:
            return (action or at.run)()
        finally:
            _running[0] = None


@pytest.fixture(autouse=True)
def cookie_jars(monkeypatch):
    def remembered(name):
        raw = (_running[0] or {}).get(name)
        return None if raw is None else tuple(raw.split(":", 1))

    real = browser.remember

    def remember(cookies):
        real(cookies)
        if _running[0] is None:
            return
        for name, value in cookies.items():
            if value is None:
                _running[0].pop(name, None)
            else:
                _running[0][name] = f"{value[0]}:{value[1]}"

    monkeypatch.setattr(browser, "remembered", remembered)
    monkeypatch.setattr(browser, "remember", remember)
    _running[0] = None
    yield


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch):
    monkeypatch.setattr(backend, "_opened", {})
    class_store.clear()          # a new store: no classes or rate-limit counts from another test
    yield
    class_store.clear()


def checked(at):
    no_exceptions(at)
    return at
