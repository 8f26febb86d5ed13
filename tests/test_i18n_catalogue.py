"""The message catalogue (viz/locales): every key is used and every key the code uses exists, plural messages
have the forms each language needs, and a gap shows English (logged) instead of breaking a page.

Keys are found where the code writes them: string literals (t("...")), the enumerations declared with
catalogue_keys("prefix", "option", ...) (prefix.option each), the plural bases given to tn()/plural_message(), the
tour steps' keys (viz/tour/steps.py) and the input errors' keys (model.errors.InputError("key", ...) is shown as
input.<key>). No key is built from pieces the test cannot read.
"""
from __future__ import annotations

import ast
import functools
import logging
import re
from pathlib import Path

import pytest

from conftest import ROOT
from viz.core.i18n import LANGS, PLURAL_FORM, catalogue, message, placeholders, plural_message
from viz.tour.steps import TOUR

CODE = sorted([*(ROOT / "viz").rglob("*.py"), *(ROOT / "transformer_viz").rglob("*.py"), *ROOT.glob("*.py")])
PLURAL_CALLS = {"tn", "plural_message"}


@functools.cache                 # parsed once a run: every finder below walks these trees (read only)
def trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in CODE]


def call_name(node: ast.Call) -> str | None:
    return getattr(node.func, "id", None) or getattr(node.func, "attr", None)


def literals() -> set[str]:
    return {n.value for _, tree in trees() for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}


def plural_bases() -> set[str]:
    """The keys given to tn() / plural_message() (its key is the second argument), outside viz/core/i18n.py."""
    found = set()
    for path, tree in trees():
        if path.name == "i18n.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and call_name(node) in PLURAL_CALLS:
                arg = node.args[0 if call_name(node) == "tn" else 1]
                assert isinstance(arg, ast.Constant), f"line {node.lineno}: a plural key must be written out"
                found.add(arg.value)
    return found


def declared_enumerations() -> dict[str, set[str]]:
    """prefix -> its keys, from every catalogue_keys(prefix, *options) call: literal strings only."""
    found: dict[str, set[str]] = {}
    for path, tree in trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and call_name(node) == "catalogue_keys":
                args = node.args
                assert args and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args), \
                    f"{path.name} line {node.lineno}: catalogue_keys takes its prefix and options written out"
                found.setdefault(args[0].value, set()).update(f"{args[0].value}.{a.value}" for a in args[1:])
    return found


def declared_keys() -> set[str]:
    return {key for keys in declared_enumerations().values() for key in keys}


@functools.cache
def input_error_keys() -> set[str]:
    found = set()
    for path in [*(ROOT / "model").rglob("*.py"), *(ROOT / "viz").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and call_name(node) == "InputError" and node.args:
                if isinstance(node.args[0], ast.Constant):
                    found.add(f"input.{node.args[0].value}")
    return found


def tour_keys() -> set[str]:
    parts = lambda step: ["title", "text", "reading"] + [f"link{i}" for i in range(len(step.links))]  # noqa: E731
    return {step.message_key(part) for step in TOUR for part in parts(step)}


def plural_keys(base: str, lang: str) -> set[str]:
    return {f"{base}.{form}" for form in forms(lang)}


def forms(lang: str) -> set[str]:
    return {PLURAL_FORM[lang](n) for n in range(0, 200)}


def used_keys() -> set[str]:
    en = catalogue("en")
    used = {s for s in literals() if s in en} | tour_keys() | input_error_keys() | declared_keys()
    return used | {key for base in plural_bases() for key in plural_keys(base, "en")}


def test_every_key_is_used():
    unused = sorted(set(catalogue("en")) - used_keys())
    assert unused == [], f"{len(unused)} keys no code reads: {unused[:20]}"


def test_every_key_the_code_names_exists():
    en = catalogue("en")
    namespaces = {key.split(".")[0] for key in en}
    looks_like_key = re.compile(r"[a-z_]+(\.[A-Za-z0-9_\-]+)+")
    named = {s for s in literals() if looks_like_key.fullmatch(s) and s.split(".")[0] in namespaces
             and not s.endswith((".py", ".json", ".csv", ".txt", ".html", ".npz"))}
    named -= plural_bases() | set(declared_enumerations())
    missing = sorted((named | tour_keys() | input_error_keys() | declared_keys()) - set(en))
    assert missing == []
    for base in plural_bases():
        for lang in LANGS:
            assert plural_keys(base, lang) <= set(catalogue(lang)), (lang, base)


def test_the_key_finder_reads_the_declared_enumerations():
    from viz.pages import heads
    assert set(heads.HEADS_TAB_KEYS.values()) == declared_enumerations()["heads.tab"] == {
        "heads.tab.ablation", "heads.tab.rollout", "heads.tab.stats"}
    assert heads.HEADS_TAB_KEYS["rollout"] == "heads.tab.rollout" and list(heads.HEADS_TAB_KEYS)[0] == "ablation"


def test_the_languages_have_the_same_keys_but_their_own_plural_forms():
    bases = plural_bases()
    plain_keys = {lang: {k for k in catalogue(lang) if k.rsplit(".", 1)[0] not in bases} for lang in LANGS}
    assert plain_keys["zh"] == plain_keys["en"]
    for lang in LANGS:
        plural = {k for k in catalogue(lang) if k.rsplit(".", 1)[0] in bases}
        assert plural == {key for base in bases for key in plural_keys(base, lang)}, lang
    en, zh = catalogue("en"), catalogue("zh")
    for key in plain_keys["en"]:
        assert placeholders(en[key]) == placeholders(zh[key]), key
    for base in bases:                                        # every form of a message fills the same blanks
        shapes = {frozenset(placeholders(catalogue(lang)[key])) for lang in LANGS for key in plural_keys(base, lang)}
        assert len(shapes) == 1 and "n" in next(iter(shapes)), base


def test_plural_forms():
    assert plural_message("en", "heads.abl.n_off", 1) == "log P, 1 head off"
    assert plural_message("en", "heads.abl.n_off", 3) == "log P, 3 heads off"
    assert plural_message("en", "heads.abl.n_off", 0) == "log P, 0 heads off"
    assert plural_message("zh", "heads.abl.n_off", 1) == catalogue("zh")["heads.abl.n_off.other"].format(n=1)


def test_a_missing_message_shows_english_and_is_logged(monkeypatch, caplog):
    real = catalogue
    from viz.core import catalogue as catalogues
    monkeypatch.setattr(catalogues, "catalogue", lambda lang: {k: v for k, v in real(lang).items() if lang == "en"
                                                               or k != "tour.title"})
    monkeypatch.setattr(catalogues, "_said_missing", set())
    with caplog.at_level(logging.WARNING, logger="viz.core.catalogue"):
        assert message("zh", "tour.title") == real("en")["tour.title"]
        assert message("zh", "tour.title") == real("en")["tour.title"]
        assert message("en", "no.such.key") == "no.such.key"
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and "tour.title" in said[0] and "zh" in said[0] and "no.such.key" in said[1]


def test_the_zoo_pickers_offer_every_option():
    from model.analysis import zoo
    from viz.pages import zoo as page
    assert list(page.SCORE_OPTIONS) == list(zoo.SCORES) and list(page.WEIGHTING_OPTIONS) == list(zoo.WEIGHTINGS)
    from model.capture import schema
    assert list(page.KINDS) == list(schema.KINDS)


@pytest.mark.parametrize("lang", list(LANGS))
def test_every_language_has_a_plural_rule(lang):
    assert "other" in forms(lang)


def test_chinese_says_mask_and_inverted_dropout_one_way():
    """The legend said 已遮盖 where the text says 掩码 (the glossary's mask): 掩码 throughout; inverted dropout is
    倒置 Dropout (it was 反向缩放的 Dropout)."""
    zh = catalogue("zh")
    assert [key for key, text in zh.items() if re.search("遮盖|遮罩|反向缩放", text)] == []
    assert "掩码" in zh["fig.masked"] and "掩码" in zh["step.why.masked"]
    assert "倒置 Dropout" in zh["ffn.drop.caption"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_bold_in_the_catalogue_renders_bold(lang):
    """Markdown's ** closes only where the rules of flanking allow: after a full-width colon and before a Chinese
    character it does not ("**问题：**解码器…" showed its asterisks). Each message, its placeholders filled with a
    word, rendered by CommonMark, has no ** left."""
    from markdown_it import MarkdownIt
    parser = MarkdownIt("commonmark")
    broken = [key for key, text in catalogue(lang).items()
              if "**" in text and "**" in parser.render(re.sub(r"\{[^{}]*\}", "词" if lang == "zh" else "word", text))]
    assert not broken, broken
