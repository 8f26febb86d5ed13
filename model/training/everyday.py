"""Everyday English->Spanish pairs: WordNet's example sentences translated by Apertium.

Origin and licence
------------------
- English: the quoted usage examples of WordNet 3.0 (Debian package wordnet-base,
  /usr/share/wordnet/data.{noun,verb,adj,adv}, after the `|` of each synset line). WordNet 3.0
  licence (Princeton University): use, copy, modify and distribute for any purpose, with the
  copyright notice kept; see the model card.
- Spanish: machine translation by Apertium's rule-based en->es pair (Debian package apertium-en-es,
  `apertium eng-spa`). The targets are synthetic: a standard technique (a rule-based system teaching
  a neural one), said plainly wherever the model is described. Apertium's output is data, not a work
  of the package.

Pipeline: read the examples; normalise them (a sentence starts with a capital and ends with a stop);
translate them in one Apertium call that marks unknown words (`*word`); keep a pair when every
unknown word is a name or a number (a name is copied through, which is right), drop it otherwise;
add the Spanish opening ¿ / ¡ Apertium leaves out; drop what the word list forbids, too short or too
long, and duplicates; split test/dev/train with `corpus.split_pairs` (no text in two splits).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

from model.training.corpus import split_pairs
from model.training.wordlist import is_clean

WORDNET_DIR = Path("/usr/share/wordnet")
POS_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
APERTIUM_MODE = "eng-spa"
SEED, N_TEST, N_DEV = 4321, 1000, 1000
MIN_WORDS, MAX_WORDS = 3, 30
_QUOTED = re.compile(r'"([^"]+)"')
_UNKNOWN = re.compile(r"[*#@](\S+)")        # Apertium: *unknown, #no generation, @no transfer


def read_examples(wordnet_dir: Path = WORDNET_DIR) -> list[str]:
    """WordNet's quoted examples in file order (a phrase or a sentence each), first occurrence kept."""
    missing = [f for f in POS_FILES if not (wordnet_dir / f).is_file()]
    if missing:
        raise ValueError(f"WordNet's data files are missing in {wordnet_dir} ({', '.join(missing)}): "
                         "apt-get install wordnet-base")
    examples = []
    for name in POS_FILES:
        for line in (wordnet_dir / name).read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "|" not in line:     # licence header lines start with spaces
                continue
            examples += [q.strip() for q in _QUOTED.findall(line.split("|", 1)[1])]
    return list(dict.fromkeys(e for e in examples if e))


def as_sentence(text: str) -> str:
    """'the children were bussed to school' -> 'The children were bussed to school.' (a class types
    sentences; WordNet writes most examples lower-case without a stop)."""
    text = " ".join(text.split())
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".?!" else text + "."


def translate_apertium(lines: list[str], mode: str = APERTIUM_MODE) -> list[str]:
    """One Apertium run over all lines (marking unknown words); raises when it is not installed."""
    if shutil.which("apertium") is None:
        raise ValueError("apertium is not installed: apt-get install apertium-en-es")
    if any("\n" in line for line in lines):
        raise ValueError("a line to translate holds a newline")
    out = subprocess.run(["apertium", mode], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    out = [line.strip() for line in out[:len(lines)]]
    if len(out) != len(lines):
        raise ValueError(f"apertium returned {len(out)} lines for {len(lines)}")
    return out


def unknown_words(spanish: str) -> list[str]:
    return _UNKNOWN.findall(spanish)


def usable_unknown(word: str) -> bool:
    """A word Apertium did not know that copying through translates right: a name or a number."""
    return word[:1].isupper() or word.strip(".,;:!?'\"").isdigit()


def spanish_punctuation(spanish: str) -> str:
    """Apertium leaves out the opening ¿ and ¡ that Spanish requires."""
    if spanish.endswith("?") and "¿" not in spanish:
        return "¿" + spanish
    if spanish.endswith("!") and "¡" not in spanish:
        return "¡" + spanish
    return spanish


def drop_reason(en: str, es: str, min_words: int = MIN_WORDS, max_words: int = MAX_WORDS) -> str | None:
    n = len(en.split())
    if n < min_words:
        return "too_short"
    if n > max_words:
        return "too_long"
    if "\t" in en + es:
        return "tab"
    if not (is_clean(en) and is_clean(es)):
        return "word_list"
    unknown = unknown_words(es)
    if unknown and not all(usable_unknown(w) for w in unknown):
        return "unknown_word"
    return None


def clean_target(es: str) -> str:
    return spanish_punctuation(_UNKNOWN.sub(r"\1", es))


def build_everyday(wordnet_dir: Path = WORDNET_DIR, limit: int | None = None) -> tuple[list[tuple[str, str]], dict]:
    """Kept (en, es) pairs in WordNet's order, and counts of what was dropped and why."""
    english = [as_sentence(e) for e in read_examples(wordnet_dir)[:limit]]
    english = list(dict.fromkeys(english))           # one pair per English sentence: no duplicate pairs later
    spanish = translate_apertium(english)
    dropped, pairs = Counter[str](), []
    for en, es in zip(english, spanish):
        reason = drop_reason(en, es)
        if reason:
            dropped[reason] += 1
        else:
            pairs.append((en, clean_target(es)))
    stats = {"examples": len(english), "pairs": len(pairs), "dropped": dict(dropped),
             "origin": "WordNet 3.0 usage examples (Debian wordnet-base; WordNet licence, Princeton "
                       "University) translated by Apertium eng-spa (Debian apertium-en-es): synthetic "
                       "Spanish targets",
             "filters": {"words": [MIN_WORDS, MAX_WORDS], "unknown_words": "names and numbers only",
                         "word_list": "model/training/wordlist.txt"}}
    return pairs, stats


def split_everyday(pairs: list[tuple[str, str]], seed: int = SEED) -> dict[str, list[tuple[str, str]]]:
    n_test = min(N_TEST, len(pairs) // 10)
    return split_pairs(pairs, seed, n_test=n_test, n_dev=n_test)


def mix_corpora(bible: dict[str, list[tuple[str, str]]], everyday: dict[str, list[tuple[str, str]]],
                tokenizer, repeat_everyday: int = 2, dev_each: int = 500) -> dict[str, list[tuple[str, str]]]:
    """One training corpus for a model that writes both kinds of Spanish: each English source starts
    with its style token (<bible> / <modern>, `tokenizer` must know them); training pairs the word list
    forbids are left out; the everyday pairs are repeated (there are fewer of them, and they are what
    a class types). Dev keeps `dev_each` pairs of each corpus (the trainer's dev loss); test all."""
    def tagged(pairs, style):
        return [(tokenizer.styled(en, style), es) for en, es in pairs]

    train_bible = [p for p in bible["train"] if is_clean(p[0]) and is_clean(p[1])]
    return {"train": tagged(train_bible, "bible") + tagged(everyday["train"], "modern") * repeat_everyday,
            "dev": tagged(bible["dev"][:dev_each], "bible") + tagged(everyday["dev"][:dev_each], "modern"),
            "test": tagged(bible["test"], "bible") + tagged(everyday["test"], "modern")}
