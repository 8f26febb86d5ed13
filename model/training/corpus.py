"""English->Spanish parallel corpus built from two public-domain Bibles.

Origin and licence
------------------
- English: World English Bible, SWORD module ``engWEB2015eb`` (Debian package sword-text-web).
  Public domain ("World English Bible" is a trademark of eBible.org; the text itself is not
  copyrighted).
- Spanish: Reina-Valera 1909, SWORD module ``spaRV1909eb`` (Debian package sword-text-sparv).
  Public domain.
Both are read with pysword from /usr/share/sword; module versions and licence fields are copied
from their mods.d/*.conf into stats.json so every corpus records where it came from.

Pipeline
--------
1. Read every verse of the 66-book (KJV) canon from both modules, raw OSIS markup included.
2. `clean_verse` turns markup into text: notes go with their content, structural tags and
   translator additions become a space (they separate words), word-level tags (<w>, <q>...) are
   unwrapped; RV1909's capitalised chapter openings are undone (`undo_drop_cap`).
3. Pair verses by (book, chapter, verse); drop empty pairs, runs where the Spanish module's verse
   numbers are shifted (`shifted_refs`), Pauline subscriptions, pairs with implausible length
   ratio, over-long and duplicate pairs. `build_corpus` counts every drop by reason.
4. `split_pairs` makes test/dev/train so that no English or Spanish text occurs in two splits.

CLI: ``python -m model.cli data --out data/en-es [--test-copy pretrained/en-es/test.tsv]
[--vocab-size 8000]`` writes train/dev/test.tsv, stats.json and a joint BPE tokenizer.json
trained on the train split only.
"""
from __future__ import annotations

import functools
import html
import random
import re
import statistics
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Collection, Container, Iterable

from model.io.files import MiB, read_text_limited

SWORD_DIR = Path("/usr/share/sword")
EN_MODULE, ES_MODULE = "engWEB2015eb", "spaRV1909eb"
SEED, N_TEST, N_DEV = 1234, 1000, 1000
MAX_CHARS = 400  # longest side; ~95 BPE tokens, keeps padded batches small
# len(es)/len(en) in characters: aligned verses have median 0.96, 1st-99th percentile 0.68-1.37.
# Outside [0.5, 2.0] (62 pairs, 0.2%) we found merged/split verses and omitted clauses, while
# pairs just inside (0.50-0.55: "You shall not murder." / "No matarás.") are still good.
MIN_RATIO, MAX_RATIO = 0.5, 2.0
# RV1909 appends the traditional subscriptions ("Escrita de Roma á los Efesios...") to the last
# verse of Paul's letters; WEB has none, so those final verses are not translations of each other.
SUBSCRIBED_BOOKS = {"Rom", "1Cor", "2Cor", "Gal", "Eph", "Phil", "Col", "1Thess", "2Thess",
                    "1Tim", "2Tim", "Titus", "Phlm", "Heb"}
HEADER = "en\tes"
Ref = tuple[str, int, int]  # (OSIS book, chapter, verse)

# ---------------------------------------------------------------------------------------------
# Cleaning raw OSIS markup
# ---------------------------------------------------------------------------------------------
# Elements dropped with their content: footnotes/cross references, editorial speaker labels
# (Song of Songs), non-canonical titles and other apparatus that is not part of the verse.
_DROP_ELEMENTS = re.compile(
    r"<(note|speaker|figure|index|title(?![^>]*canonical=\"true\"))\b[^>]*(?<!/)>.*?</\1>", re.S)
# Word-level markup whose removal must not introduce a space (<w>God</w>’s): Strong's-number
# words, red-letter quotes, keywords, names, references, emphasis. Every other tag separates
# words, including <transChange> (RV1909's translator additions: `<w>A</w><transChange>esta
# </transChange><w>mujer</w>` is "A esta mujer").
_INLINE_TAGS = {"w", "q", "seg", "name", "reference", "hi", "foreign", "divineName", "abbr",
                "catchWord", "rdg", "mentioned", "inscription"}
_TAG = re.compile(r"</?([A-Za-z]+)\b[^>]*>")
# WEB appends its glossary to Rev 22:21 after the book's end marker: not verse text.
_BOOK_END = re.compile(r"<div\b[^>]*\beID=[^>]*\btype=\"book\"[^>]*/>.*", re.S)
# An added pronoun right after a word may be an enclitic (díjo<transChange>le</transChange> =
# "díjole") or a separate word (Josué<transChange>los</transChange> circuncidó): see
# enclitic_joins.
_ENCLITIC = re.compile(r"(?<![^\W\d_])([^\W\d_]++)(</w>)?<transChange\b[^>]*>"
                       r"(me|te|se|le|lo|la|nos|os|les|los|las)</transChange>")
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "″": '"',
                         "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "´": "'"})
# print-only marks (pilcrow, section sign) and invisible format characters (soft hyphen,
# zero-width space/joiners, direction marks, BOM)
_MARKERS = re.compile("[¶§\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_CAMEL = re.compile(r"[a-zà-ÿ][A-ZÀ-Þ]")


def clean_verse(raw: str, joins: Collection[str] = frozenset()) -> str:
    """Plain text of one verse of OSIS markup (both modules use OSIS).

    `joins`: lower-case words such as "díjole" that an added enclitic pronoun forms with the word
    before it (from `enclitic_joins`); any other tag boundary is a word break.
    """
    text = _BOOK_END.sub("", raw)
    text = _DROP_ELEMENTS.sub(" ", text)
    if joins and "<transChange" in text:  # (cheap test first: the regex is slow-ish)
        text = _ENCLITIC.sub(lambda m: _join_enclitic(m, joins), text)
    text = _TAG.sub(lambda m: "" if m.group(1) in _INLINE_TAGS else " ", text)
    return normalize_text(html.unescape(text))


def _join_enclitic(m: re.Match, joins: Container[str]) -> str:
    host, _, pronoun = m.groups()
    if (host + pronoun).lower() in joins:
        return host + pronoun + " "  # the closing </transChange> still ends the word
    return m.group(0)  # left to the general rule: transChange separates words


def enclitic_joins(raws: Iterable[str]) -> set[str]:
    """Host+pronoun words to write joined, decided by the text's own spelling.

    Join when the joined word is spelt that way elsewhere in the text ("sácalo"), or when the
    host never stands alone there ("díjo", "hécho": 1909 spelling accents them only because a
    pronoun follows). Otherwise ("Josué los", "no lo") the pronoun is a separate word.
    """
    raws = list(raws)
    pairs = {(m.group(1), m.group(3)) for r in raws for m in _ENCLITIC.finditer(r)}
    attested = {w.lower() for w in reference_vocab(raws)}
    alone = {w.lower() for w in reference_vocab(_ENCLITIC.sub(" ", r) for r in raws)}
    return {(h + p).lower() for h, p in pairs
            if (h + p).lower() in attested or h.lower() not in alone}


def normalize_text(text: str) -> str:
    """Unicode/quote/whitespace normalisation shared by cleaning and tests."""
    text = _MARKERS.sub(" ", unicodedata.normalize("NFC", text))
    text = re.sub(r"\s+", " ", text)  # also removes tabs/newlines, so TSV needs no quoting
    # A tag turned into a space may sit before closing / after opening punctuation; curly
    # quotes still tell opening from closing here, so fix spacing before straightening them.
    text = re.sub(r" +([,.;:!?)\]”’»])", r"\1", text)
    text = re.sub(r"([(\[“‘«¿¡]) +", r"\1", text)
    return text.translate(_QUOTES).strip()


def undo_drop_cap(text: str, casing: dict[str, str] | None = None) -> str:
    """RV1909 prints a chapter's opening words in capitals: "EN el principio", "Y FUERON",
    "DE SIETE años", "Salmo de David. A TI, oh Jehová".

    The run of capitalised words starting at the first all-caps word (not one followed by '.':
    Ps 119:1 "ALEPH. BIENAVENTURADOS") takes each word's usual spelling in the text (`casing`,
    from `usual_casing`: "fueron", but "Jehová"), capitalised where a sentence starts.
    """
    m = next((m for m in re.finditer(r"[^\W\d_]{2,}", text)
              if m.group(0).isupper() and not text.startswith(".", m.end())), None)
    if m is None:
        return text
    end = m.end()
    while (nxt := re.match(r" ([^\W\d_]+)\b", text[end:])) and nxt.group(1).isupper():
        end += nxt.end()
    words = text[m.start():end].split(" ")
    fixed = [(casing or {}).get(w.lower(), w.lower()) for w in words]
    if re.search(r"(^|[.!?])[\s¡¿(\"']*$", text[:m.start()]):  # sentence start
        fixed[0] = fixed[0][0].upper() + fixed[0][1:]
    return text[:m.start()] + " ".join(fixed) + text[end:]


def usual_casing(texts: Iterable[str]) -> dict[str, str]:
    """Lower-case word -> its most frequent non-all-caps spelling in `texts`."""
    counts = Counter(w for t in texts for w in _words(t) if not w.isupper())
    casing: dict[str, str] = {}
    for word, _ in counts.most_common():
        casing.setdefault(word.lower(), word)
    return casing


# ---------------------------------------------------------------------------------------------
# Glued-word check (reported, not used for filtering)
# ---------------------------------------------------------------------------------------------
def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text)


def camel_glued(texts: list[str]) -> list[str]:
    """Tokens with lower-then-upper case inside ("bornSon"): a tag removed between two words."""
    return [w for t in texts for w in _words(t) if _CAMEL.search(w)]


def split_glued(texts: list[str], vocab: set[str]) -> list[str]:
    """Tokens unknown to `vocab` that are two known words run together ("Godcreated").

    `vocab` comes from the raw text with *every* tag replaced by a space, which over-splits but
    can never glue, so it does not depend on any cleaner's choices: for a cleaner's output, a
    count of 0 means no token spans a tag boundary (bar declared enclitic joins).
    """
    vocab = {v.lower() for v in vocab}  # case-blind: "Salido" (a fixed drop cap) is no glue

    def is_glue(w: str) -> bool:
        w = w.lower()
        return w not in vocab and any(w[:i] in vocab and w[i:] in vocab
                                      for i in range(2, len(w) - 1))
    return [w for t in texts for w in _words(t) if is_glue(w)]


def reference_vocab(raws: Iterable[str]) -> set[str]:
    return {w for raw in raws for w in _words(_TAG.sub(" ", _DROP_ELEMENTS.sub(" ", raw)))}


def glue_report(raws: list[str], ours: list[str], joins: Container[str] = frozenset()) -> dict:
    """Glued-word counts for pysword's own cleaner (before) and `clean_verse` (after).

    Deliberate enclitic joins ("díjole", see `enclitic_joins`) are counted apart, not as glue.
    """
    from pysword.cleaner import OSISCleaner
    cleaner = OSISCleaner()
    theirs = [normalize_text(cleaner.clean(r)) for r in raws]
    vocab = reference_vocab(raws)
    report = {}
    for name, texts in (("before", theirs), ("after", ours)):
        split = split_glued(texts, vocab)
        glued = [w for w in split if w.lower() not in joins]
        camel = camel_glued(texts)
        report[name] = {"camel_case": len(camel), "two_known_words": len(glued),
                        "enclitic_joins": len(split) - len(glued),
                        "examples": sorted(set(camel + glued))[:12]}
    return report


# ---------------------------------------------------------------------------------------------
# Reading the SWORD modules
# ---------------------------------------------------------------------------------------------
SWORD_PACKAGES = "sword-text-web sword-text-sparv"     # Debian's packages of EN_MODULE and ES_MODULE


def sword_modules(sword_dir: Path = SWORD_DIR):
    """(pysword SwordModules, their mods.d confs by name) with both Bibles installed; else a ValueError that
    says what to install (pysword's own error is a KeyError naming the module, or a missing mods.d)."""
    from pysword.modules import SwordModules
    modules = SwordModules(str(sword_dir))
    try:
        confs = modules.parse_modules()
    except FileNotFoundError:               # no mods.d: no SWORD module at all
        confs = {}
    missing = [name for name in (EN_MODULE, ES_MODULE) if name not in confs]
    if missing:
        raise ValueError(f"the SWORD Bible module{'s' * (len(missing) > 1)} {' and '.join(missing)} "
                         f"{'are' if len(missing) > 1 else 'is'} not installed in {sword_dir}; install them "
                         f"with: apt-get install {SWORD_PACKAGES}")
    return modules, confs


def module_info(sword_dir: Path = SWORD_DIR) -> dict[str, dict]:
    """Origin/licence fields of both modules, from their mods.d/*.conf."""
    _, confs = sword_modules(sword_dir)
    keys = ("description", "version", "swordversiondate", "versification", "distributionlicense",
            "copyright")
    return {name: {k: confs[name].get(k) for k in keys} | {"licence": "public domain"}
            for name in (EN_MODULE, ES_MODULE)}


def read_module(name: str, sword_dir: Path = SWORD_DIR, books: Container[str] | None = None,
                ) -> dict[Ref, str]:
    """Raw OSIS text of every verse of the 66-book canon (or of `books`, OSIS names)."""
    from pysword.canons import canons
    modules, _ = sword_modules(sword_dir)  # reads mods.d/*.conf: driver, versification, markup of each module
    bible = modules.get_bible_from_module(name)
    # pysword decompresses the whole book block for every single verse; cache the last block.
    bible._decompressed_text = functools.lru_cache(maxsize=2)(bible._decompressed_text)
    structure = bible.get_structure()
    verses: dict[Ref, str] = {}
    for testament in ("ot", "nt"):
        for _, osis, _, _ in canons["kjv"][testament]:  # the 66-book canon, in order
            if books is not None and osis not in books:
                continue
            # the module's own versification says how many verses each chapter holds
            lengths = structure.find_book(osis)[1].chapter_lengths
            refs = [(osis, c, v) for c, n in enumerate(lengths, 1) for v in range(1, n + 1)]
            texts = list(bible.get_iter(books=[osis], clean=False))
            assert len(texts) == len(refs), (name, osis)
            verses.update(zip(refs, texts))
    return verses


# ---------------------------------------------------------------------------------------------
# Finding verse-number shifts
# ---------------------------------------------------------------------------------------------
def shifted_refs(refs: list[Ref], en: dict[Ref, str], es: dict[Ref, str], max_shift: int = 5,
                 penalty: float = 1.5) -> set[Ref]:
    """Verses whose Spanish text belongs to a neighbouring verse number.

    spaRV1909eb keeps KJV numbers but in places follows Hebrew verse division (Num 13, Job 39-40,
    Jonah 2...), offsetting whole runs of verses by 1-5: lengths stay plausible, content does not.
    Each English verse is scored against the Spanish verses around it by word-translation overlap
    (table learnt from the corpus itself); a Viterbi pass picks one offset per verse and pays
    `penalty` per change, so only consistent runs count as shifted. The module merges or splits
    verses where a run starts and resynchronises at the next chapter, so from the verse before a
    run to the end of its chapter everything is reported.
    """
    words_en = _content_words([en[r] for r in refs])
    words_es = _content_words([es[r] for r in refs])
    table = translation_table(words_en, words_es)

    def overlap(i: int, j: int) -> float:
        known = [w for w in words_en[i] if w in table]
        if not (0 <= j < len(refs)) or not known:
            return 0.0
        return sum(1 for w in known if table[w] & words_es[j]) / len(known)

    offsets = _viterbi(len(refs), range(-max_shift, max_shift + 1), overlap, penalty)
    bad, chapter = set(), None
    for i, r in enumerate(refs):
        if offsets[i] != 0 and i > 0 and offsets[i - 1] == 0 and refs[i - 1][:2] == r[:2]:
            bad.add(refs[i - 1])  # the verse where the run starts is usually split or merged
        if offsets[i] != 0:
            chapter = r[:2]
        if r[:2] == chapter:
            bad.add(r)
    return bad


def _content_words(texts: list[str], n_stop: int = 100) -> list[set[str]]:
    """Lower-case words of 3+ letters minus the `n_stop` most frequent (function words)."""
    sets = [{w for w in _words(t.lower()) if len(w) >= 3} for t in texts]
    stop = {w for w, _ in Counter(w for s in sets for w in s).most_common(n_stop)}
    return [s - stop for s in sets]


def translation_table(src: list[set[str]], tgt: list[set[str]], min_dice: float = 0.3,
                      ) -> dict[str, set[str]]:
    """Word -> likely translations: Dice coefficient of co-occurrence in paired texts.

    Most pairs are aligned, so true translations co-occur far above chance even though some
    pairs are shifted.
    """
    df_src, df_tgt = Counter(w for s in src for w in s), Counter(w for t in tgt for w in t)
    both = Counter((a, b) for s, t in zip(src, tgt) for a in s for b in t)
    table: dict[str, set[str]] = {}
    for (a, b), n in both.items():
        if n >= 2 and 2 * n / (df_src[a] + df_tgt[b]) >= min_dice:
            table.setdefault(a, set()).add(b)
    return table


def _viterbi(n: int, states: Iterable[int], score, penalty: float) -> list[int]:
    """Best state per position maximising sum of score(i, i + state) - penalty per change."""
    states = list(states)
    total = {d: 0.0 if d == 0 else -penalty for d in states}
    back = []
    for i in range(n):
        best = max(states, key=lambda d: total[d])  # staying beats jumping unless best leads by > penalty
        prev = {d: d if total[d] >= total[best] - penalty else best for d in states}
        total = {d: total[p] - (p != d) * penalty + score(i, i + d) for d, p in prev.items()}
        back.append(prev)
    state = max(states, key=lambda d: total[d])
    path = []
    for pointers in reversed(back):
        path.append(state)
        state = pointers[state]
    return path[::-1]


# ---------------------------------------------------------------------------------------------
# Building and splitting the corpus
# ---------------------------------------------------------------------------------------------
def drop_reason(en: str, es: str, max_chars: int = MAX_CHARS) -> str | None:
    """Why a verse pair is unusable on its own, or None. First failing check counts."""
    if not en or not es:
        return "empty"
    if not MIN_RATIO <= len(es) / len(en) <= MAX_RATIO:
        return "length_ratio"
    if max(len(en), len(es)) > max_chars:
        return "too_long"
    return None


def misaligned(refs: list[Ref], en: dict[Ref, str], es: dict[Ref, str]) -> dict[Ref, str]:
    """Verses paired by number that do not translate each other: shifted runs, subscriptions."""
    bad = dict.fromkeys(shifted_refs(refs, en, es), "shifted")
    last_verse = {r[0]: r for r in refs}  # refs are in canon order
    bad.update({r: "subscription" for b, r in last_verse.items() if b in SUBSCRIBED_BOOKS})
    return bad


def build_corpus(sword_dir: Path = SWORD_DIR, max_chars: int = MAX_CHARS,
                 ) -> tuple[list[tuple[str, str]], dict]:
    """Aligned, cleaned, filtered (en, es) verse pairs in canon order, plus statistics."""
    raw_en, raw_es = read_module(EN_MODULE, sword_dir), read_module(ES_MODULE, sword_dir)
    refs = [r for r in raw_en if r in raw_es]  # English canon order
    joins = {"en": enclitic_joins(raw_en.values()), "es": enclitic_joins(raw_es.values())}
    en = {r: clean_verse(raw_en[r], joins["en"]) for r in refs}
    es = {r: clean_verse(raw_es[r], joins["es"]) for r in refs}
    casing = usual_casing(es.values())
    es = {r: undo_drop_cap(t, casing) if r[2] == 1 else t for r, t in es.items()}
    bad = misaligned(refs, en, es)
    dropped = Counter({"unpaired_reference": len(raw_en.keys() ^ raw_es.keys())})
    pairs, seen = [], set()
    for r in refs:
        pair = (en[r], es[r])
        # precedence: empty, misaligned, length ratio, too long, duplicate
        reason = "empty" if not all(pair) else bad.get(r) or drop_reason(*pair, max_chars)
        reason = reason or ("duplicate" if pair in seen else None)
        if reason:
            dropped[reason] += 1
        else:
            seen.add(pair)
            pairs.append(pair)
    glue = {"en": glue_report([raw_en[r] for r in refs], list(en.values()), joins["en"]),
            "es": glue_report([raw_es[r] for r in refs], list(es.values()), joins["es"])}
    stats = {"verses": {"en": len(raw_en), "es": len(raw_es), "paired_refs": len(refs)},
             "pairs": len(pairs), "dropped": dict(dropped), "glued_words": glue,
             "enclitic_joins": sorted(joins["es"]),
             "filters": {"max_chars": max_chars, "es_en_char_ratio": [MIN_RATIO, MAX_RATIO]},
             "origin": "World English Bible (en) and Reina-Valera 1909 (es), SWORD modules from "
                       "Debian packages sword-text-web and sword-text-sparv; both public domain",
             "sources": module_info(sword_dir)}
    return pairs, stats


def split_pairs(pairs: list[tuple[str, str]], seed: int = SEED, n_test: int = N_TEST,
                n_dev: int = N_DEV) -> dict[str, list[tuple[str, str]]]:
    """Deterministic test/dev/train split in which no English or Spanish text crosses splits.

    Pairs sharing a side (same English with two Spanish renderings, or vice versa) are joined
    into groups and each group goes to one split whole. Exact duplicate pairs are dropped.
    Which split a pair lands in depends only on the set of pairs and the seed; each split keeps
    the input order (canon order for `build_corpus` output).
    """
    pairs = list(dict.fromkeys(pairs))
    groups = _groups_sharing_text(pairs)
    random.Random(seed).shuffle(groups)
    quota = {"test": n_test, "dev": n_dev}
    home = {}
    for group in groups:
        # a group goes where it fits whole, so shared text never straddles two splits
        name = next((s for s in ("test", "dev") if len(group) <= quota[s]), "train")
        quota[name] = quota.get(name, 0) - len(group)
        home.update(dict.fromkeys(group, name))
    return {s: [p for i, p in enumerate(pairs) if home[i] == s] for s in ("train", "dev", "test")}


def _groups_sharing_text(pairs: list[tuple[str, str]]) -> list[list[int]]:
    """Connected components of pair indices linked by an identical English or Spanish side."""
    parent = list(range(len(pairs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_seen: dict[tuple[int, str], int] = {}
    for i, (en, es) in enumerate(pairs):
        for key in ((0, en), (1, es)):
            j = first_seen.setdefault(key, i)
            parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        groups.setdefault(find(i), []).append(i)
    # sort by content, not index, so the shuffle does not depend on input order
    return sorted(groups.values(), key=lambda g: min(pairs[i] for i in g))


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------
def write_tsv(path: str | Path, pairs: list[tuple[str, str]]) -> None:
    lines = [HEADER]
    for en, es in pairs:
        if re.search(r"[\t\n\r]", en + es):
            raise ValueError(f"tab or newline inside pair: {en!r} / {es!r}")
        lines.append(f"{en}\t{es}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


MAX_TSV_BYTES = 256 * MiB   # the en-es train.tsv is 7 MB: far below; /dev/zero or a huge file is refused unread


def read_tsv(path: str | Path) -> list[tuple[str, str]]:
    """Pairs of a two-column `en\\tes` file with header, as written by `write_tsv`. ValueError naming the
    file when it is not a regular file of at most MAX_TSV_BYTES, not UTF-8, lacks the header, has a row
    without two columns or holds no pair."""
    try:
        lines = read_text_limited(path, MAX_TSV_BYTES).split("\n")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start})") from None
    if lines[0] != HEADER:
        raise ValueError(f"{path}: expected the header line {HEADER!r}, got {lines[0][:40]!r}")
    rows = [line.split("\t") for line in lines[1:] if line]
    bad = [r for r in rows if len(r) != 2]
    if bad:
        raise ValueError(f"{path}: {len(bad)} rows without exactly two columns, e.g. {bad[0]}")
    if not rows:
        raise ValueError(f"{path}: no pairs after the header line")
    return [(en, es) for en, es in rows]


def token_stats(tokenizer, splits: dict[str, list[tuple[str, str]]]) -> dict:
    """Mean BPE tokens per side per pair (no EOS), per split."""
    def mean(texts: list[str]) -> float:
        return round(statistics.fmean(len(tokenizer.encode(t, add_eos=False)) for t in texts), 2)
    return {s: {"en": mean([p[0] for p in ps]), "es": mean([p[1] for p in ps])}
            for s, ps in splits.items() if ps}
