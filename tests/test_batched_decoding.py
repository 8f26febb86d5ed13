"""Decoding many sentences in batches gives what decoding them one by one gives: batched beam search
(decode.beam_search_batch), translate_many, and the translate / evaluate command lines that use them."""
import json
import random
import sys

import pytest
import torch

from conftest import ROOT, tiny_config
from model.cli.evaluate import main as evaluate_main
from model.cli.translate import main as translate_main
from model.inference.batch_translate import length_batches, translate_many
from model.inference.decode import beam_search, beam_search_batch, default_max_len, pad_batch
from model.inference.pipeline import encode_text, translate
from model.io.checkpoint import load_checkpoint
from model.nn.transformer import Transformer

EN_ES = ["The man went to the house.", "God said: let there be light.", "And the king spoke to his servants.",
         "Where are you going?", "I am the way, the truth and the life."]


@pytest.fixture(scope="module")
def toy():
    return load_checkpoint(ROOT / "pretrained" / "toy-reverse", device="cpu")


@pytest.fixture(scope="module")
def en_es():
    return load_checkpoint(ROOT / "pretrained" / "en-es", device="cpu")


def toy_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 12))) for _ in range(n)]


def batched_and_alone(model, sources: list[list[int]], beam: int, **kw):
    max_lens = [default_max_len(model, len(s)) for s in sources]
    batched = beam_search_batch(model, pad_batch(sources).to(model.device), max_lens, beam, **kw)
    alone = [beam_search(model, s, beam, **kw) for s in sources]
    return batched, alone


@pytest.mark.parametrize("beam", [2, 4])
def test_batched_beam_search_equals_one_by_one_on_toy_reverse(toy, beam):
    sources = [encode_text(toy, t).ids for t in toy_texts(24)]
    batched, alone = batched_and_alone(toy.model, sources, beam)
    for b, a in zip(batched, alone):
        assert [h.ids for h in b] == [h.ids for h in a]          # every finished hypothesis, same order
        assert [h.score for h in b] == pytest.approx([h.score for h in a], abs=1e-4)
        assert b[0].step_logprobs == pytest.approx(a[0].step_logprobs, abs=1e-4)


def test_batched_beam_search_equals_one_by_one_on_en_es(en_es):
    sources = [encode_text(en_es, t).ids for t in EN_ES]
    batched, alone = batched_and_alone(en_es.model, sources, 4)
    assert [b[0].ids for b in batched] == [a[0].ids for a in alone]


def test_batched_beam_search_without_cache_and_with_short_limits(toy):
    """Full-prefix decoding (what a trace needs) and rows that hit their own length limit first."""
    sources = [encode_text(toy, t).ids for t in toy_texts(6, seed=1)]
    cached = beam_search_batch(toy.model, pad_batch(sources), [3, 1, 5, 2, 8, 4], 3)
    full = beam_search_batch(toy.model, pad_batch(sources), [3, 1, 5, 2, 8, 4], 3, use_cache=False)
    for limit, c, f, s in zip([3, 1, 5, 2, 8, 4], cached, full, sources):
        assert [h.ids for h in c] == [h.ids for h in f]
        assert c[0].ids == beam_search(toy.model, s, 3, max_len=limit)[0].ids
        assert len(c[0].ids) <= limit


def test_beam_of_one_row_and_an_untrained_model():
    """An untrained model rarely ends a sentence: every row runs to its limit, and still agrees."""
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    sources = [[3, 4, 5, 2], [6, 2], [7, 8, 9, 10, 11, 2]]
    batched, alone = batched_and_alone(model, sources, 3)
    assert [b[0].ids for b in batched] == [a[0].ids for a in alone]
    single, = beam_search_batch(model, pad_batch(sources[:1]), [default_max_len(model, 4)], 3)
    assert single[0].ids == alone[0][0].ids


def test_length_batches_cover_everything_within_the_budget():
    lengths = {i: n for i, n in enumerate([5, 30, 7, 7, 12, 3, 60, 8])}
    batches = length_batches(lengths, 40)
    assert sorted(i for b in batches for i in b) == list(range(8))
    for batch in batches:
        widths = [lengths[i] for i in batch]
        assert widths == sorted(widths)
        assert len(batch) == 1 or max(widths) * len(batch) <= 40
    assert length_batches({}, 40) == []


@pytest.mark.parametrize("beam", [1, 3])
def test_translate_many_keeps_order_and_blank_lines(toy, beam):
    texts = toy_texts(10, seed=2)
    texts[3], texts[7] = "", "   "
    got = translate_many(toy, texts, beam=beam, batch_tokens=40)
    assert got == [translate(toy, t, beam=beam) if t.strip() else "" for t in texts]


def test_translate_cli_reads_a_file_in_batches(toy, tmp_path, capsys):
    texts = toy_texts(5, seed=3) + [""]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert translate_main(["--model", str(ROOT / "pretrained" / "toy-reverse"), "--input", str(tmp_path / "in.txt"),
                           "--beam", "2", "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [translate(toy, t, beam=2) if t else "" for t in texts]


def test_translate_cli_with_a_missing_file_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    from model.cli.__main__ import main as cli                     # where every command's mistakes are said
    monkeypatch.setattr(sys, "argv", ["transformer-viz"])
    code = cli(["translate", "--model", str(ROOT / "pretrained" / "toy-reverse"), "--input", str(tmp_path / "nope.txt")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"error: {tmp_path / 'nope.txt'}: no such file"


@pytest.mark.slow          # the evaluate command on en-es, beam 2, twice
def test_evaluate_cli_batched_equals_one_by_one(tmp_path):
    common = ["--model", str(ROOT / "pretrained" / "en-es"), "--test", str(ROOT / "pretrained" / "en-es" / "test.tsv"),
              "--limit", "6", "--beam", "2", "--device", "cpu"]
    batched = evaluate_main(common + ["--out", str(tmp_path / "a.json")])
    alone = evaluate_main(common + ["--out", str(tmp_path / "b.json"), "--one-by-one"])
    assert batched["beam2"]["bleu"] == alone["beam2"]["bleu"]
    assert json.loads((tmp_path / "a.json").read_text())["pairs"] == 6
