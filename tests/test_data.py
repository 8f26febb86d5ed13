"""Tests for the English->Spanish corpus builder (model/data.py)."""
import random
from pathlib import Path

import pytest

from model.training.corpus import (camel_glued, clean_verse, enclitic_joins, read_module, read_tsv,
                        shifted_refs, split_glued, split_pairs, undo_drop_cap, write_tsv)

SWORD_TEXTS = Path("/usr/share/sword/modules/texts/ztext")


# -- clean_verse ----------------------------------------------------------------------------------
def test_note_removed_with_content_and_words_kept_apart():
    raw = ('<w lemma="strong:H0430">In</w> <w lemma="strong:H0853">the</w> beginning, '
           '<w lemma="strong:H0430">God</w><note placement="foot"><reference type="annotateRef">'
           '1:1 </reference>The Hebrew word rendered “God” is “אֱלֹהִ֑ים” (Elohim).</note>'
           '<w lemma="strong:H1254">created</w> the heavens. <div eID="gen25" type="x-p"/>')
    assert clean_verse(raw) == "In the beginning, God created the heavens."


def test_removed_note_leaves_no_space_before_punctuation():
    raw = ('her offspring,<note type="crossReference"><reference>Gen 3:15</reference></note> '
           'who keep “his word.<note placement="foot">or, seed</note>” Then<note n="a">x</note>)')
    assert clean_verse(raw) == 'her offspring, who keep "his word." Then)'


def test_structural_tags_separate_words_and_word_markup_is_unwrapped():
    raw = ('<div type="x-milestone" subType="x-preverse" sID="pv1"/><title canonical="true" '
           'type="psalm">A Psalm by David.</title><lg sID="g1"/><l level="1" sID="g2"/>'
           'Yahweh, how'
           '<l eID="g2" level="1"/><l level="2" sID="g3"/>many <q marker="" who="Jesus">are</q> '
           '<w lemma="strong:H1">God</w>’s<l eID="g3"/><speaker>Beloved</speaker>!')
    assert clean_verse(raw) == "A Psalm by David. Yahweh, how many are God's!"


def test_translator_additions_are_separate_words():
    raw = ('<w lemma="strong:H1">animales</w><transChange type="added">silvestres</transChange>'
           '<w lemma="strong:H2">según</w> <w>A</w><transChange type="added">esta</transChange>'
           '<w>mujer</w>')
    assert clean_verse(raw) == "animales silvestres según A esta mujer"
    assert camel_glued([clean_verse(raw)]) == []


def test_enclitic_pronoun_joined_only_when_the_text_spells_it_so():
    raws = ['y <w>díjo</w><transChange type="added">le</transChange><w>Dios</w>:',
            '<w>Josué</w><transChange type="added">los</transChange> <w>circuncidó</w>',
            '<w>sáca</w><transChange type="added">lo</transChange> de aquí',
            '<w>Josué</w> vino; <w>sácalo</w>; y <w>sáca</w> agua']
    joins = enclitic_joins(raws)
    assert joins == {"díjole", "sácalo"}  # díjo never stands alone; sácalo is attested
    assert clean_verse(raws[0], joins) == "y díjole Dios:"
    assert clean_verse(raws[1], joins) == "Josué los circuncidó"
    assert clean_verse(raws[0]) == "y díjo le Dios:"  # default: every tag boundary separates


def test_quotes_markers_and_whitespace_normalised():
    raw = "“Who touched me?’ ”\t¶ he said,\n  ‘‘Come’’\u200b now  "
    assert clean_verse(raw) == "\"Who touched me?'\" he said, ''Come'' now"


def test_back_matter_after_book_end_is_cut():
    raw = ('Amen. <chapter eID="Rev.22"/> <div canonical="true" eID="g9" osisID="Rev" '
           'type="book"/> <div sID="g10" type="glossary"/> <title type="main">Glossary</title> '
           'Abaddon is ...')
    assert clean_verse(raw) == "Amen."


def test_drop_cap_undone():
    casing = {"fueron": "fueron", "jehová": "Jehová", "ti": "ti", "oh": "oh"}
    assert undo_drop_cap("EN el principio", casing) == "En el principio"
    assert undo_drop_cap("Y FUERON acabados", casing) == "Y fueron acabados"
    assert undo_drop_cap("Y JEHOVÁ dijo", casing) == "Y Jehová dijo"
    psalm = "Salmo de David. A TI, oh Jehová"
    assert undo_drop_cap(psalm, casing) == "Salmo de David. A ti, oh Jehová"
    assert undo_drop_cap("ALEPH. BIENAVENTURADOS los", casing) == "ALEPH. Bienaventurados los"


def test_glue_checks_detect_both_kinds():
    vocab = {"God", "created", "only", "born", "Son"}
    texts = ["Godcreated the", "only bornSon"]
    assert camel_glued(texts) == ["bornSon"]
    assert split_glued(texts, vocab) == ["Godcreated", "bornSon"]
    assert split_glued(["God created the only born Son"], vocab) == []


# -- alignment --------------------------------------------------------------------------------
def test_shifted_run_found_to_end_of_chapter():
    rng = random.Random(0)
    word = lambda letters: "".join(rng.choices(letters, k=6))  # noqa: E731
    content = [word("abcdefghij") for _ in range(300)]
    filler = " ".join(word("klmnopqrst") for _ in range(100))  # frequent words: ignored
    refs = [("Bk", c, v) for c in (1, 2, 3) for v in range(1, 41)]
    en = {r: " ".join(rng.sample(content, 6)) + " " + filler for r in refs}
    es = {r: " ".join(w[::-1] + "z" for w in en[r].split()) for r in refs}  # a "translation"
    shifted = dict(es)
    shifted[("Bk", 2, 10)] = ""  # like spaRV1909eb: one empty verse, the rest one verse late
    for v in range(11, 41):
        shifted[("Bk", 2, v)] = es[("Bk", 2, v - 1)]
    assert shifted_refs(refs, en, es) == set()
    assert shifted_refs(refs, en, shifted) == {("Bk", 2, v) for v in range(9, 41)}


# -- split_pairs ------------------------------------------------------------------------------
def _synthetic_pairs() -> list[tuple[str, str]]:
    pairs = [(f"english {i}", f"español {i}") for i in range(300)]
    pairs += pairs[:10]  # exact duplicates
    pairs += [(f"english {i}", f"otra traducción {i}") for i in range(10, 20)]  # shared English
    pairs += [(f"another english {i}", f"español {i}") for i in range(20, 30)]  # shared Spanish
    pairs += [("english 5", "español 40")]  # links two groups
    return pairs


def test_split_sizes_and_deterministic():
    pairs = _synthetic_pairs()
    splits = split_pairs(pairs, seed=1234, n_test=25, n_dev=30)
    assert {k: len(v) for k, v in splits.items()} == {"train": 266, "dev": 30, "test": 25}
    assert split_pairs(pairs, seed=1234, n_test=25, n_dev=30) == splits
    shuffled = random.Random(5).sample(pairs, len(pairs))
    again = split_pairs(shuffled, seed=1234, n_test=25, n_dev=30)
    assert {k: set(v) for k, v in again.items()} == {k: set(v) for k, v in splits.items()}
    other = split_pairs(pairs, seed=99, n_test=25, n_dev=30)
    assert set(other["test"]) != set(splits["test"])


def test_split_shares_no_text_and_keeps_every_unique_pair():
    pairs = _synthetic_pairs()
    splits = split_pairs(pairs, seed=1234, n_test=25, n_dev=30)
    for side in (0, 1):
        texts = [{p[side] for p in split} for split in splits.values()]
        assert not (texts[0] & texts[1] or texts[0] & texts[2] or texts[1] & texts[2])
    kept = [p for split in splits.values() for p in split]
    assert sorted(kept) == sorted(set(pairs))


# -- files ------------------------------------------------------------------------------------
def test_tsv_round_trip(tmp_path):
    pairs = [("He said, \"Go.\"", "Dijo: ¿Irás?"), ("It's 'fine'", "«Sí» — ñandú")]
    path = tmp_path / "x.tsv"
    write_tsv(path, pairs)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "en\tes"
    assert read_tsv(path) == pairs
    with pytest.raises(ValueError):
        write_tsv(path, [("a\tb", "c")])


def test_read_tsv_rejects_missing_header(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("hello\thola\n", encoding="utf-8")
    with pytest.raises(ValueError):
        read_tsv(path)


# -- the real modules -------------------------------------------------------------------------
@pytest.mark.skipif(not SWORD_TEXTS.is_dir(), reason=f"SWORD modules not installed ({SWORD_TEXTS})")
def test_real_modules_genesis_1_1_clean_and_aligned():
    en = read_module("engWEB2015eb", books={"Gen", "John"})
    es = read_module("spaRV1909eb", books={"Gen", "John"})
    en_gen_1_1 = clean_verse(en[("Gen", 1, 1)])
    assert en_gen_1_1 == "In the beginning, God created the heavens and the earth."
    es_gen_1_1 = undo_drop_cap(clean_verse(es[("Gen", 1, 1)]))
    assert es_gen_1_1 == "En el principio crió Dios los cielos y la tierra."
    assert "his only born Son, that whoever" in clean_verse(en[("John", 3, 16)])
    assert clean_verse(es[("John", 3, 16)]).startswith("Porque de tal manera amó Dios al mundo")
    sample = [r for r in en if r[0] == "John" or r[1] <= 3]  # John and Genesis 1-3: < 1 s
    cleaned = [clean_verse(verses[r]) for verses in (en, es) for r in sample if r in verses]
    assert camel_glued(cleaned) == []
    assert not any("<" in t or ">" in t or "  " in t for t in cleaned)
