"""What a class types first: WordNet's lemmas and glosses through Apertium, the fixes of Apertium's known
literal errors, the split by lemma, long pairs joined from consecutive ones, their place in the mix, and
decoding that blocks repeated n-grams."""
from collections import Counter

import pytest
import torch

from model.cli.data import main as data_main
from model.inference.batch_translate import decode_batch
from model.inference.decode import beam_search_batch, block_repeats, greedy, greedy_rows, repeated_ngram_ends
from model.io.tokenizer import Tokenizer
from model.training.corpus import read_tsv, write_tsv
from model.training.learner import (BANDS, FIRST_LESSON, apply_fixes, capitalised_unknown, first_lesson, fix_pairs,
                                    join_consecutive, length_bands, read_glosses, read_lemmas,
                                    split_by_lemma, translate_phrases)

SYNSETS = [
    "06632511 10 n 05 hello 0 hullo 0 hi 0 howdy 0 how-do-you-do 0 001 @ 06630017 n 0000 | an expression of "
    'greeting; "every morning they exchanged polite hellos"',
    "06632671 10 n 02 good_morning 0 morning 0 002 @ 06630017 n 0000 | a conventional expression of greeting",
    "03728437 06 n 01 mat 0 001 @ 04118021 n 0000 | a small rug (often at a door)",
    "09044862 15 n 02 United_States 0 U.S.A. 0 000 | North American republic",
    "01234567 00 n 01 carbon_dioxide_gas_x 0 000 | four words is too long a lemma",
]


@pytest.fixture
def wordnet(tmp_path):
    for name in ("data.noun", "data.verb", "data.adj", "data.adv"):
        lines = ["  1 This software and database is being provided"] + (SYNSETS if name == "data.noun" else [])
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="latin-1")
    return tmp_path


def test_lemmas_are_common_words_of_one_to_three_words(wordnet):
    assert read_lemmas(wordnet) == ["hello", "hullo", "hi", "howdy", "how-do-you-do", "good morning", "morning", "mat"]


def test_glosses_are_first_definitions_without_asides_or_examples(wordnet):
    assert read_glosses(wordnet) == ["an expression of greeting", "a conventional expression of greeting",
                                     "a small rug", "North American republic",
                                     "four words is too long a lemma"]


def test_bare_words_are_translated_one_by_one_not_joined_to_the_next_line():
    # Apertium reads a newline as a space: "mat" then "keys" came back as "tonos mates" and a blank
    out = translate_phrases(["mat", "keys", "good morning", "Hello."])
    assert out[2] == "buenos días" and out[3] == "Hola."
    assert all(o and " " not in o for o in out[:2]) and out[0][0].islower()


def test_a_lemma_capitalised_by_its_sentence_form_is_no_name():
    assert capitalised_unknown("Congener.", "*Congener.")
    assert capitalised_unknown("congener", "*Congener")
    assert not capitalised_unknown("a city in France", "una ciudad en *France")


@pytest.mark.parametrize("en, apertium, fixed, rule", [
    ("I would like a cup of coffee, please.", "Me gustaría una taza de café, complacer.",
     "Me gustaría una taza de café, por favor.", "please_politeness"),
    ("Please.", "Complacer.", "Por favor.", "please_politeness"),
    ("Please sit down.", "Complacer sentar.", None, "please_imperative"),
    ("The children are playing in the garden.", "Los niños están tocando en el jardín.",
     "Los niños están jugando en el jardín.", "play_a_game"),
    ("They played football.", "Tocaron fútbol.", "Jugaron fútbol.", "play_a_game"),
    ("I forgot my keys at home.", "Olvidé mis tonos en casa.", "Olvidé mis llaves en casa.", "house_keys"),
    ("I lost the keys to the car.", "Perdí los tonos al coche.", "Perdí las llaves al coche.", "house_keys"),
    ("Good night.", "Noche buena.", "Buenas noches.", "greetings"),
    ("the act of acquiring something", "la ley de adquirir algo", "el acto de adquirir algo", "act_of"),
    ("Cup.", "Copa.", "Taza.", "drink_cup"),
    ("He drank two cups of tea.", "Bebió dos copas de té.", "Bebió dos tazas de té.", "drink_cup"),
    ("mat", "mate", "estera", "floor_mat"),
    ("The cat sat on the mat.", "El gato sentado en el mate.", "El gato sentado en la estera.", "floor_mat"),
])
def test_each_fix_corrects_apertiums_literal_error(en, apertium, fixed, rule):
    assert apply_fixes(en, apertium) == (fixed, [rule])


@pytest.mark.parametrize("en, apertium", [
    ("She plays the piano in the garden.", "Toca el piano en el jardín."),     # an instrument: tocar is right
    ("Press the keys of the piano.", "Aprieta los tonos del piano."),          # no door, no car
    ("She pleased her mother.", "Complació su madre."),                        # the verb
    ("The act was passed by the senate.", "La ley estuvo pasada por el senado."),
    ("They won the World Cup.", "Ganaron la Copa Mundial."),                 # a trophy: copa is right
    ("Mate.", "Mate."),                                                        # checkmate, not a mat
])
def test_a_fix_leaves_what_the_english_does_not_make_clear(en, apertium):
    assert apply_fixes(en, apertium) == (apertium, [])


def test_fixes_count_the_pairs_they_touch_and_drop():
    counts = Counter()
    kept = fix_pairs([("Please sit down.", "Complacer sentar."), ("Please.", "Complacer."),
                      ("The cat sat.", "El gato sentado.")], counts)
    assert kept == [("Please.", "Por favor."), ("The cat sat.", "El gato sentado.")]
    assert counts == {"please_imperative": 1, "please_politeness": 1}


def test_the_short_split_holds_out_whole_lemmas_and_keeps_the_first_lesson_in_training():
    words = [f"word{i}" for i in range(200)]
    items = [(w, pair) for w in words for pair in ((w, f"palabra{w}"), (w.capitalize() + ".", f"Palabra{w}."))]
    items += [("hello", ("hello", "hola")), ("hi", ("hi", "hola")), ("hullo", ("hullo", "hola"))]
    splits = split_by_lemma(items, seed=1, n_test=60, n_dev=40)
    lemma_of = {pair: lemma for lemma, pair in items}
    homes = {}
    for name, pairs in splits.items():
        for pair in pairs:
            homes.setdefault(lemma_of[pair], set()).add(name)
    assert all(len(h) == 1 for h in homes.values())                 # no lemma in two splits
    assert len(splits["test"]) == 120 and len(splits["dev"]) == 80   # both forms of 60 and 40 lemmas
    assert "hello" in FIRST_LESSON and {("hello", "hola"), ("hi", "hola"), ("hullo", "hola")} <= set(splits["train"])


def test_the_first_lessons_words_are_picked_out_bare_or_as_sentences():
    pairs = [("hello", "hola"), ("Hello.", "Hola."), ("Good morning.", "Buenos días."), ("abstraction", "abstracción")]
    assert first_lesson(pairs) == pairs[:3]


def test_joined_pairs_are_consecutive_pairs_within_the_word_limits():
    pairs = [(" ".join(["w"] * 12) + f" {i}.", f"{i}.") for i in range(30)]
    joined = join_consecutive(pairs, seed=3, words=(30, 90))
    assert joined and all(30 <= len(en.split()) <= 90 for en, _ in joined)
    for en, es in joined:
        numbers = [int(x.rstrip(".")) for x in es.split()]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))) and len(numbers) in (2, 3)
        assert en.endswith(f"{numbers[-1]}.")
    used = [int(x.rstrip(".")) for _, es in join_consecutive(pairs, 3, (1, 90)) for x in es.split()]
    assert len(used) == len(set(used))                               # each pair once
    bands = length_bands(pairs, seed=3)
    assert set(bands) == set(BANDS) and not bands["61-90"] and bands["le30"] and bands["31-60"]


def test_the_learner_corpus_joins_the_mix_tagged(tmp_path):
    bible = {s: [(f"In the beginning {s} verse {i} was long enough to join with the next verse here.",
                  f"En el principio {s} versículo {i}.") for i in range(40)] for s in ("train", "dev", "test")}
    everyday = {s: [(f"The children play football {s} {i}.", f"Los niños tocan fútbol {s} {i}.") for i in range(40)]
                for s in ("train", "dev", "test")}
    for name, corpus in (("bible", bible), ("everyday", everyday)):
        for split, pairs in corpus.items():
            (tmp_path / name).mkdir(exist_ok=True)
            write_tsv(tmp_path / name / f"{split}.tsv", pairs)
    common = ["--bible", str(tmp_path / "bible"), "--everyday", str(tmp_path / "everyday")]
    stats = data_main(["--source", "learner", "--limit", "300", "--out", str(tmp_path / "learner")] + common)
    assert stats["everyday_train_fixes"] == {"play_a_game": 40}
    assert read_tsv(tmp_path / "learner" / "everyday_train.tsv")[0][1].startswith("Los niños juegan")
    short_test = read_tsv(tmp_path / "learner" / "short_test.tsv")
    assert all(1 <= len(en.split()) <= 3 for en, _ in short_test)
    tok = Tokenizer.train_bpe([t for c in (bible, everyday) for p in c["train"] for t in p], 300)
    tok.save(tmp_path / "tok.json")
    data_main(["--source", "mix", "--out", str(tmp_path / "mix"), "--tokenizer", str(tmp_path / "tok.json"),
               "--learner", str(tmp_path / "learner"), "--bible-sample", "10"] + common)
    train = read_tsv(tmp_path / "mix" / "train.tsv")
    assert sum(en.startswith("<bible> In the beginning train verse") and len(en.split()) < 20
               for en, _ in train) == 10
    assert ("<modern> Thank you very much.", "Muchas gracias.") in train
    assert any(en.startswith("<bible>") and len(en.split()) > 30 for en, _ in train)       # joined verses
    assert not any("tocan" in es for en, es in train if en.startswith("<modern>"))


# -- decoding that does not loop --------------------------------------------------------------------
def test_the_tokens_that_would_repeat_an_ngram():
    assert repeated_ngram_ends([5, 6, 7, 5, 6], 3) == [7]
    assert sorted(repeated_ngram_ends([5, 6, 5, 6, 5], 2)) == [6, 6]
    assert repeated_ngram_ends([5, 6, 7], 3) == [] and repeated_ngram_ends([5, 5], 0) == []
    scores = block_repeats(torch.zeros(2, 9), [[5, 6, 7, 5, 6], [1]], 3)
    assert scores[0, 7] == float("-inf") and torch.isfinite(scores[0, :7]).all() and torch.isfinite(scores[1]).all()


def _has_repeat(ids, n):
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return len(grams) != len(set(grams))


def test_blocking_repeats_stops_a_looping_model(tiny_model):
    model = tiny_model.eval()                  # untrained: it writes the same few tokens over and over
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 9, 2, 0]])
    plain = [ids for _, ids in sorted(greedy_rows(model, src, [30, 30]))]
    assert any(_has_repeat(ids, 2) for ids in plain)                                  # it loops
    for n in (2, 3):
        for ids in [ids for _, ids in sorted(greedy_rows(model, src, [30, 30], no_repeat_ngram=n))]:
            assert not _has_repeat(ids, n)
        for hyps in beam_search_batch(model, src, [30, 30], 3, no_repeat_ngram=n):
            assert not _has_repeat(hyps[0].ids, n)
        single = greedy(model, src[:1], max_len=30, no_repeat_ngram=n).ids
        assert single == dict(greedy_rows(model, src[:1], [30], no_repeat_ngram=n))[0]
    assert decode_batch(model, [[3, 4, 5, 6, 2]], beam=3) == decode_batch(model, [[3, 4, 5, 6, 2]], 3, 0)


def test_the_commands_take_no_repeat_ngram_and_refuse_a_negative(capsys):
    from model.cli.evaluate import main as evaluate_main
    from model.cli.translate import main as translate_main
    for main in (translate_main, evaluate_main):
        with pytest.raises(SystemExit) as exit_:
            main(["--model", "pretrained/en-es", "--test", "x.tsv", "--no-repeat-ngram", "-1"] if main is evaluate_main
                 else ["--model", "pretrained/en-es", "--no-repeat-ngram", "-1", "Hello."])
        assert exit_.value.code == 2 and "--no-repeat-ngram: must be 0 or more" in capsys.readouterr().err
    assert translate_main(["--model", "pretrained/en-es", "--no-repeat-ngram", "2", "--beam", "2", "Hello."]) == 0
    assert capsys.readouterr().out.strip()


FIRST_SENTENCES = [("Hello.", ["Hola."]), ("Good morning.", ["Buenos días."]),
                   ("Thank you very much.", ["Muchas gracias."]),
                   ("The cat sat on the mat.", ["gato", "estera"]),
                   ("I would like a cup of coffee, please.", ["taza", "por favor"])]


@pytest.mark.parametrize("beam", [1, 4])
def test_the_shipped_model_writes_a_class_first_sentences_right(beam):
    """What a class types first, in modern Spanish, as the app (greedy) and the command line (beam 4) write it."""
    from model import find_model, load_checkpoint, translate
    bundle = load_checkpoint(find_model("en-es"), device="cpu")
    for english, wanted in FIRST_SENTENCES:
        spanish = translate(bundle, english, beam=beam)
        assert all(word in spanish for word in wanted), (english, spanish)
