"""Example sentences chosen by measuring (model/training/examples.py) and read back by the app."""
from conftest import ROOT
from model.inference.pipeline import load_engine
from model.training.examples import Measured, choose, measure, presets_text, repeats_a_word
from viz.services import presets


def test_a_word_three_times_in_a_row_is_a_repeat():
    assert repeats_a_word("Mi hermana ley ley ley le ley.")
    assert not repeats_a_word("ley, y la ley de la ley")


def test_measure_on_a_model_that_knows_its_task():
    toy = load_engine(ROOT / "pretrained" / "toy-reverse", device="cpu")
    m = measure(toy, "a b c d", reference="d c b a")
    assert m.output == "d c b a" and m.chrf == 100.0 and 0.5 < m.confidence <= 1.0 and not m.repeats


def test_choose_keeps_the_best_held_out_and_the_worst_everyday():
    well = [Measured(f"w{i}", "", 0.9, False, float(i)) for i in range(10)]
    everyday = [Measured(f"e{i}", "", 0.1 * i, i == 7, None) for i in range(10)]
    chosen = choose(well, everyday, n=3)
    assert [m.source for m in chosen["well"]] == ["w9", "w8", "w7"]
    assert [m.source for m in chosen["struggles"]] == ["e7", "e0", "e1"]        # a repeat first, then least sure


def test_the_app_reads_the_groups_back(tmp_path, monkeypatch):
    chosen = {"well": [Measured("good one", "", 1, False, 90)], "struggles": [Measured("hard one", "", .2, True, None)]}
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "presets.txt").write_text(presets_text(chosen, start="The man went to the house."))
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(tmp_path))
    assert presets.preset_groups("m") == {"start": ["The man went to the house."], "well": ["good one"],
                                           "struggles": ["hard one"]}
    assert presets.presets("m")[0] == "The man went to the house."


def test_the_shipped_examples_come_in_both_groups():
    groups = presets.preset_groups("en-es")
    assert groups["start"] == ["The man went to the house."] and len(groups["well"]) >= 3 and len(groups["struggles"]) >= 3


def test_everyday_sentences_with_references_make_a_group_of_their_own_and_listed_words_none():
    well = [Measured("Moses spoke.", "Moisés habló.", 0.9, False, 80.0), Measured("The whore went.", "", 0.9, False, 99.0)]
    everyday = [Measured(f"Sentence {i}.", "Frase.", 0.1 * i, False, float(i)) for i in range(6)]
    everyday.append(Measured("What the hell is this shit?", "", 0.01, True, 1.0))
    chosen = choose(well, everyday, n=2)
    assert [m.source for m in chosen["everyday"]] == ["Sentence 5.", "Sentence 4."]        # best chrF
    assert [m.source for m in chosen["well"]] == ["Moses spoke."]                          # the listed verse left out
    assert [m.source for m in chosen["struggles"]] == ["Sentence 0.", "Sentence 1."]        # not in two groups
