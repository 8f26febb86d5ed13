"""Greedy decoding shared by concurrent sessions (model/inference/shared_greedy.py): every caller gets exactly the ids
it would get alone, whatever else was in its batch."""
import threading

import pytest

from conftest import ROOT
from model.inference.shared_greedy import GreedyBatcher
from model.inference.decode import default_max_len, greedy, greedy_rows
from model.inference.pipeline import encode_text, generate, load_engine, source_text, translate
from model.inference.decode import pad_batch
from model.capture.hooks import capture

TEXTS = ["a b c d e", "b d h", "j i h g f e d c b a", "c", "a a b b c c d", "e e e"]


@pytest.fixture(scope="module")
def toy():
    return load_engine(ROOT / "pretrained" / "toy-reverse", device="cpu")


def alone(bundle, ids, max_len=None):
    return greedy(bundle.model, ids, max_len).ids


def test_greedy_rows_yields_each_row_once_as_it_finishes_with_its_own_limit(toy):
    rows = [encode_text(toy, t).ids for t in TEXTS]
    limits = [default_max_len(toy.model, len(r)) for r in rows]
    limits[2] = 3                                                      # this row is cut by its limit
    out = list(greedy_rows(toy.model, pad_batch(rows, toy.config.pad_id), limits))
    assert sorted(b for b, _ in out) == list(range(len(rows)))
    for b, ids in out:
        assert ids == alone(toy, rows[b], limits[b])
    assert dict(out)[2] == alone(toy, rows[2])[:3]
    lengths = [len(ids) for _, ids in out]
    assert lengths == sorted(lengths)                                 # short rows come out first


class GatedBatcher(GreedyBatcher):
    """Holds its first batch until the test opens the gate, so callers meanwhile must queue."""

    def __init__(self, model, lanes: int = 1, patience_s: float = 0.5):
        super().__init__(model, lanes=lanes, patience_s=patience_s)
        self.gate, self.first_held = threading.Event(), threading.Event()

    def _decode(self, batch):
        if not self.first_held.is_set():
            self.first_held.set()
            assert self.gate.wait(timeout=60)
        super()._decode(batch)


def start_callers(batcher, sentences, results, errors, first_index=0):
    def call(i, ids):
        try:
            results[i] = batcher.greedy(ids, default_max_len(batcher.model, len(ids)))
        except Exception as e:  # noqa: BLE001  collected and asserted on by the tests
            errors.append((i, e))

    threads = [threading.Thread(target=call, args=(first_index + i, ids)) for i, ids in enumerate(sentences)]
    for t in threads:
        t.start()
    return threads


def wait_until(condition, timeout=60.0):
    for _ in range(int(timeout / 0.005)):
        if condition():
            return
        threading.Event().wait(0.005)
    raise AssertionError("timed out")


def run_threads(batcher, sentences):
    """The first sentence is held in the batcher's only lane while the others arrive; then all go on."""
    results, errors = {}, []
    threads = start_callers(batcher, sentences[:1], results, errors)
    wait_until(batcher.first_held.is_set)
    threads += start_callers(batcher, sentences[1:], results, errors, first_index=1)
    wait_until(lambda: len(batcher._pending) == len(sentences) - 1)
    batcher.gate.set()
    for t in threads:
        t.join(timeout=60)
    return results, errors


def test_concurrent_callers_share_one_batch_and_each_gets_its_own_ids(toy):
    sentences = [encode_text(toy, t).ids for t in TEXTS]
    batcher = GatedBatcher(toy.model)
    results, errors = run_threads(batcher, sentences)
    assert not errors
    assert batcher.batch_sizes == [1, len(sentences) - 1]              # the rest waited and went together
    assert [results[i] for i in range(len(sentences))] == [alone(toy, s) for s in sentences]


def test_one_bad_sentence_fails_only_its_own_caller(toy):
    good = [encode_text(toy, t).ids for t in TEXTS[:3]]
    bad = [toy.config.vocab_size + 5, toy.config.eos_id]              # an id outside the vocabulary
    batcher = GatedBatcher(toy.model)
    results, errors = run_threads(batcher, [good[0], good[1], bad, good[2]])
    assert [i for i, _ in errors] == [2]
    assert [results[i] for i in (0, 1, 3)] == [alone(toy, s) for s in good]


def test_a_sentence_kept_waiting_by_a_long_batch_opens_the_second_lane(toy):
    batcher = GatedBatcher(toy.model, lanes=2, patience_s=0.05)
    results, errors = {}, []
    long_ids = encode_text(toy, TEXTS[2]).ids
    long = start_callers(batcher, [long_ids], results, errors)
    wait_until(batcher.first_held.is_set)                             # the long one is held in lane 1
    short = encode_text(toy, TEXTS[3]).ids
    assert batcher.greedy(short, 10) == alone(toy, short, 10)          # lane 2 opens and answers meanwhile
    assert not batcher.gate.is_set() and 0 not in results
    batcher.gate.set()
    long[0].join(timeout=60)
    assert results[0] == alone(toy, long_ids) and not errors


def test_a_batch_decoded_for_others_never_enters_the_callers_trace(toy):
    ids = encode_text(toy, TEXTS[0]).ids
    with capture() as trace:
        out = toy.batcher.greedy(ids, 20)
    assert out == alone(toy, ids, 20)
    assert len(trace.arrays) == 0


def test_pipeline_batches_greedy_but_not_beams_nor_traced_edits(toy):
    toy.batcher.batch_sizes.clear()
    assert translate(toy, "a b c") == "c b a"
    assert toy.batcher.batch_sizes == [1]
    generate(toy, encode_text(toy, "a b c").ids, beam=3)
    with capture(names=[]):                                           # e.g. an ablation's edits
        generate(toy, encode_text(toy, "a b c").ids)
    assert toy.batcher.batch_sizes == [1]


def test_nothing_to_decode_is_refused_at_once(toy):
    with pytest.raises(ValueError, match="nothing to decode"):
        toy.batcher.greedy([], 10)
    with pytest.raises(ValueError, match="nothing to decode"):
        toy.batcher.greedy([3, 2], 0)


def test_the_trained_translator_gives_each_of_concurrent_sessions_its_own_translation():
    """The shipped en-es model, sentences of different lengths padded into one batch: the same ids as alone."""
    bundle = load_engine(ROOT / "pretrained" / "en-es", device="cpu")
    texts = ["The cat sleeps.", "Where is the station?", "I would like two coffees and a glass of water, please.",
             "She reads.", "My brother lives in a small house near the sea.", "Thank you very much!"]
    sentences = [encode_text(bundle, source_text(bundle, t)).ids for t in texts]    # as translate() reads them: <modern> first
    bundle.batcher = GatedBatcher(bundle.model)
    results, errors = run_threads(bundle.batcher, sentences)
    assert not errors and bundle.batcher.batch_sizes == [1, len(texts) - 1]
    assert [results[i] for i in range(len(texts))] == [alone(bundle, s) for s in sentences]
    assert translate(bundle, texts[0]) == bundle.tokenizer.decode(results[0])
