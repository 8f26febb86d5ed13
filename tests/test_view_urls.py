"""Every existing URL still opens the same view: the links the README and docs show, the ones the app writes
itself (the tour's steps, the map's blocks) and every deep link the tests open (run_page(...) and the browser
tests' addresses), collected from the files, read through the view's declarations; the app's own and the
documented ones also opened in AppTest."""
from __future__ import annotations

import ast
import re
import urllib.parse
from pathlib import Path

import pytest

from apptest_utils import no_exceptions, run_page, url_path
from conftest import ROOT
from viz.core import view
from viz.figures.model_map import all_cells
from viz.elements.nav import PAGES, block_target
from viz.tour.steps import TOUR
from viz.core.view import View

PAGE_FILES = {p.url: Path(p.file).name for p in PAGES}
DOCUMENTED = re.compile(r"`(?:https?://[\w.:]+)?/?([a-z_]*)\?([^`\s]*)`")


def documented_urls() -> list[tuple[str, dict[str, str]]]:
    """(page url, query) of every link written in the README and docs/ (`/explorer?model=en-es`)."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for page, query in DOCUMENTED.findall(path.read_text(encoding="utf-8")):
            found.append((page or "home", dict(urllib.parse.parse_qsl(query, keep_blank_values=True))))
    return found


def app_urls() -> list[tuple[str, dict[str, str]]]:
    """The links the app writes itself: each tour step's links and each block of the model map."""
    links = [(url_path(link.page), dict(link.params)) for step in TOUR for link in step.links]
    for cell in all_cells(3, 3):
        page, own = block_target(cell)
        links.append((url_path(page), own))
    return links


def _literal(node) -> str | None:
    try:
        return str(ast.literal_eval(node))
    except ValueError:
        return None


def urls_in_tests() -> list[tuple[str, dict[str, str | None]]]:
    """(page url, query) of every run_page(...) of the tests (a value that is not a literal: None) and of every
    address the browser tests open."""
    found = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_page" and node.args:
                page = _literal(node.args[0])
                if page and page.endswith(".py"):
                    found.append((url_path(page), {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg}))
        for page, query in re.findall(r'app_url\}/([a-z_]*)\?([a-z_]+=[^"{]*)"', source):
            found.append((page or "home", dict(urllib.parse.parse_qsl(query, keep_blank_values=True))))
    return found




def test_the_collectors_find_the_urls():
    assert ("explorer", {"model": "en-es"}) in documented_urls()
    assert len(app_urls()) > 40 and len(urls_in_tests()) > 140


@pytest.mark.parametrize("page, query", documented_urls() + app_urls() + urls_in_tests())
def test_every_url_parameter_is_a_declared_value_of_the_view(page, query):
    """No link says something the view does not read: each parameter is declared (type, default, bounds)."""
    assert page in PAGE_FILES, page
    assert set(query) <= set(view.DECLARED), set(query) - set(view.DECLARED)


READABLE_DOCUMENTED = [u for u in documented_urls() if "../" not in str(u)]     # not the refused ?model=../../etc


@pytest.mark.parametrize("page, query", app_urls() + READABLE_DOCUMENTED)
def test_the_apps_links_are_read_as_written(page, query):
    """The tour's and the map's links, and the documented ones, read without a notice, as the values written."""
    notices: list[str] = []
    seen = View.from_query(page, query, notices)
    if "…" in str(query) or "" in query.values():   # docs write an elided or empty value to show the shape
        return
    assert notices == [] and seen.query() == query


@pytest.mark.parametrize("page, query", app_urls()[::4] + [u for u in READABLE_DOCUMENTED if "…" not in str(u)])
def test_a_link_opens_the_view_it_says(page, query):
    """Opened in the app (the en-es model, a sentence), the page writes back every value the link gave."""
    params = {"model": "en-es", "text": "The man went to the house.", **query}
    at = run_page(PAGE_FILES[page], **params)
    no_exceptions(at)
    after = {k: at.query_params[k] for k in at.query_params}
    asked = View.from_query(page, params, [])
    shown = View.from_query(page, after, [])
    for name, value in asked.values:
        if name in after:
            assert shown.get(view.DECLARED[name]) == value, name
    assert shown.get(view.TEXT) == asked.get(view.TEXT) and shown.get(view.MODEL) == asked.get(view.MODEL)
