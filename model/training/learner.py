"""What a class types first: single words and set phrases, short definitions, and long inputs.

- Short utterances: WordNet's lemmas and collocations ("mat", "good morning", "thank you"), common words
  only (lower-case, 1-3 words), each as typed bare ("good morning") and as a sentence ("Good morning.").
- Short definitions: WordNet's glosses ("a small rug"), 3-12 words, as phrases.
- A few greetings a first lesson has that WordNet has not (CLASS_PHRASES).
- Long inputs: 2 or 3 consecutive pairs of a split joined into one (30-90 English words for training).

The Spanish is Apertium's (model/training/everyday.py: the same unknown-word and word-list rules), with
its known literal errors corrected where the English makes the meaning clear (FIXES), or the pair
dropped. Apertium reads a newline as a space, so a bare word would be translated together with the
next line's ("mat" + "keys" -> "tonos mates"): every line is sent as a sentence and brought back.

Short utterances are split by lemma (`split_by_lemma`): a lemma's two forms, and lemmas Apertium
translates alike ("hello", "hi" -> "hola"), stay in one split.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from model.training.corpus import split_pairs
from model.training.everyday import (POS_FILES, WORDNET_DIR, as_sentence, clean_target, drop_reason,
                                     translate_apertium, unknown_words)

Pair = tuple[str, str]
SHORT_WORDS = (1, 3)
GLOSS_WORDS = (3, 12)
JOINED_WORDS = (30, 90)
N_SHORT_TEST, N_SHORT_DEV = 400, 300          # lemmas (each gives up to two pairs)
BANDS = {"le30": (1, 30), "31-60": (31, 60), "61-90": (61, 90)}
_LEMMA = re.compile(r"^[a-z][a-z'-]*(?: [a-z][a-z'-]*){0,2}$")
_ADJ_MARKER = re.compile(r"\((?:a|p|ip)\)$")    # WordNet's adjective position markers: "galore(ip)"

# Lemmas a class types first ("Hello."): always in training, never held out for the short test.
FIRST_LESSON = frozenset({"hello", "hi", "good morning", "good afternoon", "good night", "goodbye", "thank you",
                          "thanks", "please", "yes", "welcome", "cat", "dog", "mat", "coffee", "cup", "water",
                          "house", "book", "key", "friend", "teacher", "school"})

# A first lesson's phrases that WordNet has no lemma for, with a textbook's Spanish (Apertium is right
# on the first; the others it gets wrong: "How are you?" -> "¿Cómo eres?", "You're welcome." -> "Eres
# bienvenido.", "Excuse me." -> "Me me disculpo.").
CLASS_PHRASES: tuple[Pair, ...] = (
    ("Thank you very much.", "Muchas gracias."),
    ("How are you?", "¿Cómo estás?"),
    ("You're welcome.", "De nada."),
    ("Excuse me.", "Disculpe."),
    ("Nice to meet you.", "Mucho gusto."),
    ("See you tomorrow.", "Hasta mañana."),
    ("Good evening.", "Buenas noches."),
    ("A cup of tea, please.", "Una taza de té, por favor."),     # Apertium: "..., complacer."
    ("a cup of coffee", "una taza de café"),       # the drink, not a Bible "copa"
    # A traveller's first phrases: where something is (estar, not ser), how one feels (tener hambre), a
    # wish (feliz). The shipped model wrote "¿Dónde es la estrellación?", "Yo soy famoso.", "Hapía de tapón."
    ("Where is the train station?", "¿Dónde está la estación de tren?"),
    ("Where is the bathroom?", "¿Dónde está el baño?"),
    ("I am hungry.", "Tengo hambre."),
    ("I am thirsty.", "Tengo sed."),
    ("I am tired.", "Estoy cansado."),
    ("Happy birthday.", "Feliz cumpleaños."),
    ("Happy new year.", "Feliz año nuevo."),
)

CLASS_REPEAT = 20       # a handful of pairs among tens of thousands: each seen this often an epoch


# -- WordNet ----------------------------------------------------------------------------------------
def _synset_lines(wordnet_dir: Path):
    missing = [f for f in POS_FILES if not (wordnet_dir / f).is_file()]
    if missing:
        raise ValueError(f"WordNet's data files are missing in {wordnet_dir} ({', '.join(missing)}): "
                         "apt-get install wordnet-base")
    for name in POS_FILES:
        for line in (wordnet_dir / name).read_text(encoding="latin-1").splitlines():
            if not line.startswith("  ") and "|" in line:    # licence header lines start with spaces
                yield line


def read_lemmas(wordnet_dir: Path = WORDNET_DIR) -> list[str]:
    """WordNet's common-word lemmas of 1-3 words in file order, first occurrence kept ("good morning").
    Capitalised lemmas (names) and ones with digits or dots are left out."""
    lemmas = []
    for line in _synset_lines(wordnet_dir):
        fields = line.split()
        for word in fields[4:4 + 2 * int(fields[3], 16):2]:
            lemma = _ADJ_MARKER.sub("", word).replace("_", " ")
            if _LEMMA.match(lemma):
                lemmas.append(lemma)
    return list(dict.fromkeys(lemmas))


def read_glosses(wordnet_dir: Path = WORDNET_DIR, words: tuple[int, int] = GLOSS_WORDS) -> list[str]:
    """Each synset's first definition, without its parenthesised asides and examples ("a small rug")."""
    glosses = []
    for line in _synset_lines(wordnet_dir):
        gloss = line.split("|", 1)[1].split(";")[0].split('"')[0]
        gloss = " ".join(re.sub(r"\([^)]*\)", " ", gloss).split()).strip(" ,:")
        if gloss and words[0] <= len(gloss.split()) <= words[1]:
            glosses.append(gloss)
    return list(dict.fromkeys(glosses))


# -- Apertium, line by line ------------------------------------------------------------------------
def translate_phrases(phrases: list[str]) -> list[str]:
    """Apertium's Spanish of phrases as typed: each is sent as a sentence (a capital, a stop: Apertium
    would otherwise join it to the next line) and the Spanish given back the phrase's case and ending."""
    return [as_phrase(es, p) for p, es in zip(phrases, translate_apertium([as_sentence(p) for p in phrases]))]


def as_phrase(spanish: str, english: str) -> str:
    """Undo as_sentence on the Spanish: no stop where the English had none, lower case where it began so."""
    if english[-1] not in ".?!" and spanish.endswith("."):
        spanish = spanish[:-1]
    if english[0].islower() and spanish[:1].isupper() and not spanish[1:2].isupper():
        spanish = spanish[0].lower() + spanish[1:]
    return spanish


# -- Apertium's known literal errors ---------------------------------------------------------------
@dataclass(frozen=True)
class Fix:
    """A literal error of Apertium's, corrected where `applies(english)` says the English meant it
    otherwise; `fix(spanish)` returns the corrected Spanish, or None to drop the pair."""
    name: str
    why: str
    applies: Callable[[str], bool]
    fix: Callable[[str], str | None]


def _has(pattern: str) -> Callable[[str], bool]:
    regex = re.compile(pattern, re.I)
    return lambda text: bool(regex.search(text))


def _replace_words(mapping: dict[str, str]) -> Callable[[str], str]:
    """Replace whole words (keeping a leading capital)."""
    regex = re.compile(r"\b(" + "|".join(sorted(mapping, key=len, reverse=True)) + r")\b", re.I)

    def fix(text: str) -> str:
        def one(m: re.Match) -> str:
            new = mapping[m.group(0).lower()]
            return new[0].upper() + new[1:] if m.group(0)[0].isupper() else new
        return regex.sub(one, text)
    return fix


_PLEASE_AS_POLITENESS = _has(r"(^|[,;]\s*)please\s*[.?!]?$|^please\s*[,.!?]")
_PLEASE_BEFORE_A_VERB = _has(r"^please\s+\w")
_GAME = (r"\b(games?|football|soccer|tennis|chess|cards|ball|baseball|basketball|golf|hockey|cricket|"
         r"volleyball|poker|checkers|dominoes|sports?|outside|outdoors|garden|park|yard|playground|toys?|"
         r"hide-and-seek|children|kids|boys|girls|team|match)\b")
_MUSIC = (r"\b(piano|guitar|violins?|flute|drums?|music|songs?|tunes?|instruments?|cello|trumpet|records?|"
          r"role|part|trick|jokes?|cd|radio|organ|notes?|chords?|melody|harp|saxophone|clarinet|horn|"
          r"symphony|sonata|concerto|band|fiddle|banjo|lute|bass)\b")
_PLAY = r"\bplay(s|ed|ing)?\b"
_TOCAR_TO_JUGAR = {"tocar": "jugar", "toco": "juego", "tocas": "juegas", "toca": "juega", "tocamos": "jugamos",
                   "tocan": "juegan", "tocaba": "jugaba", "tocabas": "jugabas", "tocábamos": "jugábamos",
                   "tocaban": "jugaban", "toqué": "jugué", "tocaste": "jugaste", "tocó": "jugó",
                   "tocasteis": "jugasteis", "tocaron": "jugaron", "tocado": "jugado", "tocando": "jugando",
                   "tocará": "jugará", "tocarán": "jugarán", "tocaría": "jugaría", "tocarían": "jugarían",
                   "toque": "juegue", "toquen": "jueguen"}
_HOUSE_KEY = (r"\b(doors?|locks?|locked|house|home|car|pocket|lost|forgot|office|room|apartment|flat|"
              r"garage|ring|spare|bunch|safe|drawer|gate)\b")
_MUSIC_KEY = r"\b(piano|keyboard|music|major|minor|computer|typing|type|answer|signature|note|code|cipher)\b"
_KEY_WORDS = {"tono": "llave", "tonos": "llaves", "clave": "llave", "claves": "llaves", "tecla": "llave",
              "teclas": "llaves"}
_FEMININE = {"el": "la", "los": "las", "un": "una", "unos": "unas", "del": "de la", "al": "a la",
             "este": "esta", "estos": "estas", "ese": "esa", "esos": "esas", "nuestro": "nuestra",
             "nuestros": "nuestras", "vuestro": "vuestra", "vuestros": "vuestras"}
_KEY_PHRASE = re.compile(r"\b(?:(" + "|".join(_FEMININE) + r")\s+)?(" + "|".join(_KEY_WORDS) + r")\b", re.I)


def _house_keys(spanish: str) -> str:
    """tono/clave/tecla -> llave, the article before it made feminine ("los tonos" -> "las llaves")."""
    def one(m: re.Match) -> str:
        article, noun = m.group(1), _KEY_WORDS[m.group(2).lower()]
        if m.group(2)[0].isupper():
            noun = noun.capitalize()
        if article is None:
            return noun
        new = _FEMININE[article.lower()]
        return (new.capitalize() if article[0].isupper() else new) + " " + noun
    return _KEY_PHRASE.sub(one, spanish)


_ACT_OF = re.compile(r"\b(la|una) ley de\b", re.I)


def _act_of(spanish: str) -> str:
    """"the act of ..." -> "el acto de ..." (Apertium reads "act" as a law, "la ley de")."""
    def one(m: re.Match) -> str:
        new = {"la": "el acto de", "una": "un acto de"}[m.group(1).lower()]
        return new.capitalize() if m.group(1)[0].isupper() else new
    return _ACT_OF.sub(one, spanish)


_GREETINGS = {"noche buena": "buenas noches", "tarde buena": "buenas tardes"}

# A drinking cup is "taza"; Apertium writes "copa" (a wine glass, a trophy) for every "cup".
_DRINK_CUP = r"^cups?\.?$|\bcups? of (coffee|tea|milk|hot chocolate|chocolate|cocoa|soup|sugar|flour|water)\b|\b(coffee|tea) cups?\b"
_CUP_WORDS = {"copa": "taza", "copas": "tazas"}
# A floor mat is "estera"; Apertium writes "mate" (the drink, or checkmate) for the lemma and most sentences.
_FLOOR_MAT = r"^mats?\.?$|\b(door|floor|bath|yoga|welcome|straw|rubber|exercise)\s?mats?\b|\bon the mat\b"
_MAT_WORDS = {"mate": "estera", "mates": "esteras"}
_MAT_PHRASE = re.compile(r"\b(?:(" + "|".join(_FEMININE) + r")\s+)?(" + "|".join(_MAT_WORDS) + r")\b", re.I)


def _floor_mat(spanish: str) -> str:
    """mate -> estera, the article before it made feminine ("el mate" -> "la estera")."""
    def one(m: re.Match) -> str:
        noun = _MAT_WORDS[m.group(2).lower()]
        if m.group(2)[0].isupper():
            noun = noun.capitalize()
        if m.group(1) is None:
            return noun
        new = _FEMININE[m.group(1).lower()]
        return (new.capitalize() if m.group(1)[0].isupper() else new) + " " + noun
    return _MAT_PHRASE.sub(one, spanish)

FIXES: tuple[Fix, ...] = (
    Fix("please_politeness", '"please" as politeness is "por favor", not the verb "complacer"',
        _PLEASE_AS_POLITENESS, _replace_words({"complacer": "por favor"})),
    Fix("please_imperative", '"Please sit down." comes out "Complacer sentar.": the verb is mangled too; dropped',
        lambda en: _PLEASE_BEFORE_A_VERB(en) and not _PLEASE_AS_POLITENESS(en), lambda es: None),
    Fix("play_a_game", 'to play a game or outside is "jugar"; Apertium writes the instrument\'s "tocar"',
        lambda en: _has(_PLAY)(en) and _has(_GAME)(en) and not _has(_MUSIC)(en), _replace_words(_TOCAR_TO_JUGAR)),
    Fix("house_keys", 'the keys of a door or a car are "llaves"; Apertium writes "tonos" (music) or "claves"',
        lambda en: _has(r"\bkeys?\b")(en) and _has(_HOUSE_KEY)(en) and not _has(_MUSIC_KEY)(en), _house_keys),
    Fix("greetings", '"good night" / "good afternoon" are "buenas noches" / "buenas tardes", not "noche buena" '
        '(Christmas Eve) / "tarde buena"', _has(r"\bgood (night|afternoon)\b"), _replace_words(_GREETINGS)),
    Fix("act_of", '"the act of" (WordNet\'s glosses of actions) is "el acto de", not "la ley de" (a law)',
        _has(r"\ban act of\b|\bthe act of\b"), _act_of),
    Fix("drink_cup", 'a cup of coffee or tea, and the word "cup" alone (its first sense), is "taza"; Apertium writes '
        '"copa" (a wine glass)', _has(_DRINK_CUP), _replace_words(_CUP_WORDS)),
    Fix("floor_mat", 'a floor mat, and the word "mat" alone (its first sense), is "estera"; Apertium writes "mate"',
        _has(_FLOOR_MAT), _floor_mat),
)


def apply_fixes(en: str, es: str | None, fixes: tuple[Fix, ...] = FIXES) -> tuple[str | None, list[str]]:
    """The Spanish after every fix that applies and changes it (None: dropped), and those fixes' names."""
    touched = []
    for f in fixes:
        if es is None or not f.applies(en):
            continue
        new = f.fix(es)
        if new != es:
            touched.append(f.name)
            es = new
    return es, touched


def fix_pairs(pairs: list[Pair], counts: Counter) -> list[Pair]:
    """Pairs after FIXES (dropped ones left out); counts[fix name] += pairs each fix touched."""
    kept = []
    for en, es in pairs:
        new, touched = apply_fixes(en, es)
        counts.update(touched)
        if new is not None:
            kept.append((en, new))
    return kept


# -- the corpora ----------------------------------------------------------------------------------
def translated(english: list[str], words: tuple[int, int], dropped: Counter) -> list[Pair]:
    """(en, es) for each phrase Apertium translates under everyday.py's rules; dropped[reason] counted."""
    pairs = []
    for en, es in zip(english, translate_phrases(english)):
        reason = drop_reason(en, es, *words) or ("unknown_word" if capitalised_unknown(en, es) else None)
        if reason:
            dropped[reason] += 1
        else:
            pairs.append((en, clean_target(es)))
    return pairs


def capitalised_unknown(en: str, es: str) -> bool:
    """An unknown word that looks like a name only because a sentence's capital made it one: everyday.py
    copies names through, but "congener" is no name ("Congener." -> "Congener."). Lemmas and glosses are
    lower-case, so a first word's capital is the sentence's, not a name's."""
    typed = set(re.findall(r"[\w'-]+", en[:1].lower() + en[1:]))
    return any(w[:1].isupper() and w not in typed for w in (u.strip(".,;:!?'\"") for u in unknown_words(es)))


def build_short(wordnet_dir: Path = WORDNET_DIR, limit: int | None = None) -> tuple[list[tuple[str, Pair]], dict]:
    """(lemma, (en, es)) for each lemma's bare and sentence forms, and stats (drops, fixes)."""
    lemmas = read_lemmas(wordnet_dir)[:limit]
    forms = [(lemma, form) for lemma in lemmas for form in (lemma, as_sentence(lemma))]
    dropped, fixed = Counter[str](), Counter[str]()
    pairs = dict(translated([f for _, f in forms], SHORT_WORDS, dropped))
    fixed_pairs = dict(fix_pairs(list(pairs.items()), fixed))
    dropped["fix"] = len(pairs) - len(fixed_pairs)
    out = [(lemma, (form, fixed_pairs[form])) for lemma, form in forms if form in fixed_pairs]
    return out, {"lemmas": len(lemmas), "pairs": len(out), "dropped": dict(dropped), "fixes": dict(fixed)}


def build_glosses(wordnet_dir: Path = WORDNET_DIR, limit: int | None = None) -> tuple[list[Pair], dict]:
    glosses = read_glosses(wordnet_dir)[:limit]
    dropped, fixed = Counter[str](), Counter[str]()
    pairs = translated(glosses, GLOSS_WORDS, dropped)
    kept = fix_pairs(pairs, fixed)
    dropped["fix"] = len(pairs) - len(kept)
    return kept, {"glosses": len(glosses), "pairs": len(kept), "dropped": dict(dropped), "fixes": dict(fixed)}


def split_by_lemma(items: list[tuple[str, Pair]], seed: int, n_test: int = N_SHORT_TEST,
                   n_dev: int = N_SHORT_DEV, train_only: frozenset[str] = FIRST_LESSON) -> dict[str, list[Pair]]:
    """test/dev/train of the short pairs, no lemma in two splits, nor a bare Spanish shared by two
    lemmas ("hello", "hi" -> "hola"): corpus.split_pairs over (lemma, its first Spanish) links them.
    The `train_only` lemmas, and those translated like them, are trained on, never held out."""
    first: dict[str, str] = {}
    for lemma, (_, es) in items:
        first.setdefault(lemma, es.lower().rstrip(".!?"))
    taught = {first[lemma] for lemma in train_only if lemma in first}
    home = {lemma: "train" for lemma, es in first.items() if es in taught}
    rest = [(lemma, es) for lemma, es in first.items() if lemma not in home]
    for name, split in split_pairs(rest, seed, n_test=n_test, n_dev=n_dev).items():
        home.update((lemma, name) for lemma, _ in split)
    return {name: [pair for lemma, pair in items if home[lemma] == name] for name in ("train", "dev", "test")}


def join_consecutive(pairs: list[Pair], seed: int, words: tuple[int, int] = JOINED_WORDS) -> list[Pair]:
    """Pairs made of 2 or 3 consecutive pairs (a seeded choice), each pair used once, kept when the
    English has `words` words: long inputs from the same kind of text."""
    rng, out, i = random.Random(seed), [], 0
    while i + 1 < len(pairs):
        n = rng.choice((2, 3))
        chunk = pairs[i:i + n]
        en, es = " ".join(p[0] for p in chunk), " ".join(p[1] for p in chunk)
        if words[0] <= len(en.split()) <= words[1]:
            out.append((en, es))
        i += n
    return out


def length_bands(pairs: list[Pair], seed: int) -> dict[str, list[Pair]]:
    """Joined pairs of a test split, by English words: up to 30, 31-60, 61-90."""
    joined = join_consecutive(pairs, seed, (1, max(hi for _, hi in BANDS.values())))
    return {band: [p for p in joined if lo <= len(p[0].split()) <= hi] for band, (lo, hi) in BANDS.items()}


def build_learner(bible: dict[str, list[Pair]], everyday: dict[str, list[Pair]], seed: int,
                  limit: int | None = None) -> tuple[dict[str, list[Pair]], dict]:
    """Every file of the learner corpus (name -> pairs) and its stats, from WordNet and the Bible and
    everyday corpora's splits. Only test pairs make the length bands; only training pairs are joined."""
    short, short_stats = build_short(limit=limit)
    quota = len({lemma for lemma, _ in short}) // 5         # a small --limit keeps 3/5 of its lemmas to train on
    splits = split_by_lemma(short, seed, min(N_SHORT_TEST, quota), min(N_SHORT_DEV, quota))
    held_out = {en for name in ("dev", "test") for en, _ in splits[name]}
    glosses, gloss_stats = build_glosses(limit=limit)
    glosses = [p for p in glosses if p[0] not in held_out]
    fixed = Counter[str]()
    everyday_train = fix_pairs(everyday["train"], fixed)
    files = {f"short_{name}.tsv": pairs for name, pairs in splits.items()}
    files |= {"gloss_train.tsv": glosses, "class.tsv": list(CLASS_PHRASES), "everyday_train.tsv": everyday_train,
              "joined_bible_train.tsv": join_consecutive(bible["train"], seed),
              "joined_everyday_train.tsv": join_consecutive(everyday_train, seed)}
    for source, corpus in (("bible", bible), ("everyday", everyday)):
        for band, pairs in length_bands(corpus["test"], seed).items():
            files[f"bands/{source}_{band}.tsv"] = pairs
    stats = {"short": short_stats, "glosses": gloss_stats,
             "everyday_train_fixes": dict(fixed), "seed": seed,
             "origin": "WordNet 3.0 lemmas and glosses (Debian wordnet-base) translated by Apertium eng-spa "
                       "(Debian apertium-en-es), Apertium's known errors fixed (model/training/learner.py "
                       "FIXES); a first lesson's greetings (CLASS_PHRASES); joined consecutive pairs"}
    return {name: pairs for name, pairs in files.items() if pairs}, stats     # a file holds a pair or is not


def sample(pairs: list[Pair], n: int | None, seed: int) -> list[Pair]:
    """A seeded sample of n pairs in their order (all when n is None or at least their number)."""
    if n is None or n >= len(pairs):
        return pairs
    keep = set(random.Random(seed).sample(range(len(pairs)), n))
    return [p for i, p in enumerate(pairs) if i in keep]


def first_lesson(pairs: list[Pair]) -> list[Pair]:
    """The short pairs of FIRST_LESSON's lemmas, bare or as a sentence ("hello", "Hello.")."""
    return [p for p in pairs if p[0].lower().rstrip(".") in FIRST_LESSON]


def add_learner(splits: dict[str, list[Pair]], folder: Path, tokenizer, repeat_short: int = 1,
                gloss_sample: int | None = None, joined_sample: int | None = None, seed: int = 0,
                short_sample: int | None = None, repeat_class: int | None = None) -> dict:
    """Add a learner corpus folder's training pairs to a mix's splits (<modern>; joined Bible verses
    <bible>), its short dev pairs to dev. The class's phrases and the first lesson's lemmas are repeated
    `repeat_class` times (default CLASS_REPEAT): a few dozen pairs among thousands would otherwise pass once an epoch. Returns
    how many pairs of each were added."""
    from model.training.corpus import read_tsv

    def tagged(name, style, n=None, repeat=1):
        if not (folder / name).is_file():          # the learner corpus writes no empty file
            return []
        return [(tokenizer.styled(en, style), es) for en, es in sample(read_tsv(folder / name), n, seed)] * repeat

    repeat_class = CLASS_REPEAT if repeat_class is None else repeat_class
    short = tagged("short_train.tsv", "modern")
    added = {"short": sample(short, short_sample, seed) * repeat_short,
             "class": tagged("class.tsv", "modern", repeat=repeat_class),
             "first_lesson": [(tokenizer.styled(en, "modern"), es) for en, es in
                              first_lesson([(en.split(" ", 1)[-1], es) for en, es in short])] * repeat_class,
             "gloss": tagged("gloss_train.tsv", "modern", gloss_sample),
             "joined_bible": tagged("joined_bible_train.tsv", "bible", joined_sample),
             "joined_everyday": tagged("joined_everyday_train.tsv", "modern", joined_sample)}
    for pairs in added.values():
        splits["train"] += pairs
    splits["dev"] += tagged("short_dev.tsv", "modern")
    return {name: len(pairs) for name, pairs in added.items()}
