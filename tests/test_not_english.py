"""Input that is not English (issue 47, item 7): Chinese or emoji typed into en-es came out as Spanish nonsense with no
word said. The model library tells (model/io/language.py, pure, no torch); the command line and the page say that
the model reads English, and translate anyway."""
import sys

import pytest

from model.io.language import not_english


@pytest.mark.parametrize("text, kind", [
    ("The man went to the house.", None), ("Él está aquí, señor.", None), ("I love 猫", None), ("123 !?", None),
    ("", None), ("我爱猫", "cjk"), ("猫が好きです", "cjk"), ("안녕하세요", "cjk"), ("🐱🐶", "emoji"),
    ("Привет, мир", "other"), ("مرحبا", "other"),
])
def test_the_writing_of_a_sentence_is_told_from_its_letters(text, kind):
    assert not_english(text) == kind


def test_the_command_line_notes_it_and_translates(capsys, monkeypatch):
    from model.cli.__main__ import main
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    assert main(["translate", "我爱猫"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() and err == ("note: the model reads English; this is mostly Chinese, Japanese or Korean "
                                   "characters, translated anyway (expect nonsense)\n")
    assert main(["translate", "The cat sat on the mat."]) == 0 and capsys.readouterr().err == ""
    assert main(["translate", "--model", "toy-reverse", "a b c"]) == 0 and capsys.readouterr().err == ""


def test_a_file_gets_one_note(tmp_path, capsys, monkeypatch):
    from model.cli.__main__ import main
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    (tmp_path / "in.txt").write_text("Hello.\n🐱🐶\n我爱猫\n")
    assert main(["translate", "--input", str(tmp_path / "in.txt")]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 3 and err.startswith("note: 2 of 3 lines are not English, the first line 2: ")


@pytest.mark.parametrize("lang, said", [("en", "The model reads English; this sentence is mostly emoji."),
                                        ("zh", "这个模型读的是英文；这句话大多是表情符号（emoji）。")])
def test_the_page_says_it_above_the_translation(lang, said):
    from apptest_utils import no_exceptions, run_page
    at = run_page("home.py", text="🐱🐶 🐱", lang=lang)
    no_exceptions(at)
    shown = [w.value.replace("\\", "") for w in at.warning]           # plain() escapes markdown
    assert any(said in w for w in shown), shown
    english = run_page("home.py", text="The cat sat on the mat.", lang=lang)
    assert not any("English" in w.value or "英文" in w.value for w in english.warning)


def test_the_page_has_words_for_every_kind():
    from model.io.language import KINDS
    from viz.frame.sidebar import NOT_ENGLISH_KEYS
    assert tuple(NOT_ENGLISH_KEYS) == KINDS
