"""The message catalogues: one per language (viz/locales/<lang>.json, the same keys in both), read without
Streamlit (the offline lesson, the command line, the view's notices). viz/core/i18n.py reads them in the session's
language."""
from __future__ import annotations

import json
import logging
import string
from functools import cache
from pathlib import Path

LANGS = {"en": "English", "zh": "中文"}
DEFAULT_LANG = "en"
LOCALES = Path(__file__).resolve().parents[1] / "locales"
# Which plural form a count takes (CLDR's rules for these languages): a plural message is two keys in English,
# <key>.one and <key>.other, and one in Chinese, <key>.other (no grammatical number). A third language adds its
# rule here and its file under locales/.
PLURAL_FORM = {"en": lambda n: "one" if n == 1 else "other", "zh": lambda n: "other"}
log = logging.getLogger(__name__)
_said_missing: set[tuple[str, str]] = set()


@cache
def catalogue(lang: str) -> dict[str, str]:
    return json.loads((LOCALES / f"{lang}.json").read_text(encoding="utf-8"))


def placeholders(message: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(message) if name}


def message(lang: str, key: str, **values) -> str:
    """The message `key` in `lang`, with {placeholders} filled in. A key the language lacks is shown in English
    (a key English lacks too, as itself) and logged once: a page keeps working with a gap in a catalogue."""
    text = catalogue(lang).get(key)
    if text is None:
        text = catalogue(DEFAULT_LANG).get(key, key)
        if (lang, key) not in _said_missing:
            _said_missing.add((lang, key))
            log.warning("message %r is missing from locales/%s.json; shown %s", key, lang,
                        "in English" if text != key else "as its key")
    return text.format(**values) if values else text


def plural_message(lang: str, key: str, n: int, **values) -> str:
    """The plural message `key` for the count n in `lang` ({n} filled in): <key>.one or <key>.other."""
    return message(lang, f"{key}.{PLURAL_FORM[lang](n)}", n=n, **values)
