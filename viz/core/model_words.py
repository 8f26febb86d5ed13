"""What the pages say about a model in words: what it learned from (the start page and About). Read from
the catalogue in a given language, so it can be called outside a page."""
from __future__ import annotations

from viz.core.i18n import DEFAULT_LANG, catalogue
from viz.core.text import plain

KNOWS = {"en-es": "about.knows.en-es"}   # models with their own paragraph in viz/locales
TASKS = {"reverse": "about.task.reverse", "copy": "about.task.copy", "sort": "about.task.sort"}   # toy tasks' names


def task_name(task, lang: str) -> str:
    task = str(task)
    return catalogue(lang)[TASKS[task]] if task in TASKS else plain(task, limit=80)   # a folder's own word, as written


def what_the_model_knows(model_id: str, metrics, lang: str = DEFAULT_LANG) -> str | None:
    """One plain paragraph on what the model learned from, and so where it goes wrong; None if unknown.
    lang: the catalogue's language (callable outside a page: it reads the catalogue, not the session)."""
    messages = catalogue(lang)
    if model_id in KNOWS:
        return messages[KNOWS[model_id]]
    if isinstance(metrics, dict) and "task" in metrics:
        return messages["about.knows.toy"].format(task=task_name(metrics["task"], lang))
    return None
