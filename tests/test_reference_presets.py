"""Teacher forcing without the sidebar (issue 26, item 4): an example verse from the test split brings its
reference, and the Decoding page has its own reference box (with the test split's reference a click away)."""
from apptest_utils import no_exceptions, run_page, texts
from viz.services.presets import reference_of, split_references

VERSE = "Of Dan: Ahiezer the son of Ammishaddai."
REFERENCE = "De Dan, Ahiezer hijo de Ammisaddai."


def test_references_come_from_the_test_split():
    assert reference_of("en-es", VERSE) == REFERENCE and reference_of("en-es", f"  {VERSE} ") == REFERENCE
    assert reference_of("en-es", "The man went to the house.") is None
    assert "en" not in split_references("en-es")                        # the header is not a pair
    assert split_references("toy-reverse") == {}


def test_an_example_verse_brings_its_reference_and_another_example_clears_it():
    at = run_page("explorer.py", model="en-es")
    no_exceptions(at)
    at.selectbox(key="preset").select(VERSE).run()
    no_exceptions(at)
    assert at.text_area(key="text").value == VERSE
    assert at.text_input(key="target").value == REFERENCE and at.query_params["target"] == REFERENCE
    assert "teacher-forced on your reference" in texts(at)
    at.selectbox(key="preset").select("The man went to the house.").run()
    no_exceptions(at)
    assert at.text_input(key="target").value == "" and "target" not in at.query_params


def test_the_decoding_pages_own_reference_box_teacher_forces():
    at = run_page("decoding.py", model="toy-reverse", text="a b c d", method="greedy")
    no_exceptions(at)
    assert "Type a reference translation here" in texts(at)
    assert "decoding-use-test" not in [b.key for b in at.button]       # the toy model ships no test split
    at.text_input(key="decoding-reference").input("d c b a").run()
    no_exceptions(at)
    assert at.text_input(key="target").value == "d c b a" and at.query_params["target"] == "d c b a"
    assert "reference Σ log p =" in texts(at) and "Type a reference translation here" not in texts(at)
    assert at.text_input(key="decoding-reference").value == "d c b a"


def test_the_decoding_page_offers_the_test_splits_reference_in_chinese():
    at = run_page("decoding.py", model="en-es", text=VERSE, method="greedy", lang="zh")
    no_exceptions(at)
    button = at.button(key="decoding-use-test")
    assert button.label == "使用测试集的参考译文"
    button.click().run()
    no_exceptions(at)
    assert at.text_input(key="target").value == REFERENCE
    assert at.text_input(key="decoding-reference").value == REFERENCE
    assert "decoding-use-test" not in [b.key for b in at.button]
