"""Issue 24: the everyday corpus (WordNet examples + Apertium), the word list, style tokens, the vocabulary
grown for them, and the judge's everyday rule."""
import shutil
from dataclasses import replace

import pytest
import torch

from model.capture.trace import Trace  # noqa: F401 (the trace type trace_sentence returns)
from model.cli.data import main as data_main
from model.cli.train import main as train_main
from model.inference.decode import greedy
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint, save_checkpoint
from model.io.tokenizer import STYLE_TOKENS, Tokenizer
from model.training.corpus import read_tsv
from model.training.everyday import (as_sentence, build_everyday, clean_target, drop_reason, mix_corpora)
from model.training.judge import everyday_rules
from model.training.wordlist import is_clean
from test_judge import BASELINE
from test_train_translation import args, tiny_corpus

# -- the corpus ------------------------------------------------------------------------------------
def test_everyday_corpus_from_a_slice_of_wordnet(tmp_path):
    pairs, stats = build_everyday(limit=400)
    assert 100 < len(pairs) < 400 and stats["examples"] <= 400
    assert sum(stats["dropped"].values()) + len(pairs) == stats["examples"]
    assert all(en[0].isupper() and en[-1] in ".?!" for en, _ in pairs)                # sentences
    assert not any("*" in es or "#" in es for _, es in pairs)                          # no Apertium marks
    assert len({en for en, _ in pairs}) == len(pairs)                                   # deduplicated
    assert all(is_clean(en) and is_clean(es) for en, es in pairs)
    # deterministic, and the command writes the same splits twice
    for name in ("a", "b"):
        data_main(["--source", "everyday", "--limit", "400", "--out", str(tmp_path / name)])
    for split in ("train", "dev", "test"):
        assert (tmp_path / "a" / f"{split}.tsv").read_bytes() == (tmp_path / "b" / f"{split}.tsv").read_bytes()
    splits = {s: read_tsv(tmp_path / "a" / f"{s}.tsv") for s in ("train", "dev", "test")}
    assert sum(map(len, splits.values())) == len(pairs)
    assert not {en for en, _ in splits["test"]} & {en for en, _ in splits["train"]}


def test_apertium_translates_and_marks_what_it_does_not_know():
    from model.training.everyday import translate_apertium
    out = translate_apertium(["The cat is sleeping.", "The intussuscepted gut."])
    assert out[0].startswith("El gato") and "*intussuscepted" in out[1]


def test_a_name_apertium_does_not_know_is_kept_a_common_word_is_not():
    assert drop_reason("John visited Paris in the spring.", "*John visitó París en la primavera.") is None
    assert drop_reason("The intussuscepted gut.", "El *intussuscepted tripa.") == "unknown_word"
    assert clean_target("*John visitó París?") == "¿John visitó París?"
    assert drop_reason("Bid farewell.", "Despedirse.") == "too_short"


def test_examples_become_sentences():
    assert as_sentence("the children  were bussed to school") == "The children were bussed to school."
    assert as_sentence("did you catch the thief?") == "Did you catch the thief?"


# -- the word list ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, clean", [
    ("The children are playing in the garden.", True),
    ("What the hell is this shit?", False),          # a listed word
    ("Shitting bricks.", False),                     # a listed prefix (shit*)
    ("A sextant and a cocktail.", True),             # whole words only: sex and cock are not prefixes
    ("La mujer era una RAMERA.", False),             # Spanish, any case
])
def test_the_word_list_filter(text, clean):
    assert is_clean(text) is clean


def test_the_mix_tags_sources_and_leaves_listed_training_pairs_out():
    tok = Tokenizer.train_bpe(["the man went home", "el hombre fue a casa"], 300).with_styles()
    bible = {"train": [("the man went home", "el hombre fue a casa"), ("the whore went home", "la ramera fue")],
             "dev": [("a", "b")], "test": [("c", "d")]}
    everyday = {"train": [("the dog runs", "el perro corre")], "dev": [("e", "f")], "test": [("g", "h")]}
    mix = mix_corpora(bible, everyday, tok, repeat_everyday=2)
    assert mix["train"] == [("<bible> the man went home", "el hombre fue a casa")] + \
        [("<modern> the dog runs", "el perro corre")] * 2
    assert mix["test"] == [("<bible> c", "d"), ("<modern> g", "h")]


# -- style tokens through the model ---------------------------------------------------------------------------
def test_a_style_token_is_one_token_that_the_trace_shows_first(tmp_path):
    shipped = load_checkpoint("pretrained/en-es")
    tok = Tokenizer.load("pretrained/en-es/tokenizer.json")
    if tok.styles:                                   # the shipped model already has styles
        styled_tok, model = tok, shipped.model
    else:
        styled_tok = tok.with_styles()
        model = shipped.model.with_vocab(styled_tok.vocab_size)
    assert set(styled_tok.styles) == set(STYLE_TOKENS)
    ids = styled_tok.encode(styled_tok.styled("The children play.", "modern"))
    assert ids[0] == styled_tok.backend.token_to_id("<modern>") and ids[1:] == tok.encode("The children play.")
    assert tok.styled("Hello.", "modern") == ("<modern> Hello." if tok.styles else "Hello.")  # one-style: as typed
    with pytest.raises(ValueError, match="unknown style"):
        styled_tok.styled("Hello.", "pirate")
    save_checkpoint(model, styled_tok, tmp_path / "styled")
    bundle = load_checkpoint(tmp_path / "styled")
    trace = trace_sentence(bundle, styled_tok.styled("The man went to the house.", "bible"))
    assert trace.meta["src_tokens"][0] == "<bible>"
    assert trace["encoder.layers.0.self_attn.hook_pattern"].shape[-1] == len(trace.meta["src_tokens"])
    out = greedy(bundle.model, torch.tensor([ids]), max_len=20).ids
    assert out and max(out) < tok.vocab_size          # a style token is read, never written


def test_a_grown_vocabulary_keeps_every_old_prediction(tiny_model):
    grown = tiny_model.with_vocab(tiny_model.cfg.vocab_size + 2).eval()
    src = torch.tensor([[3, 4, 5, 6, 2]])
    old, new = greedy(tiny_model, src, max_len=12), greedy(grown, src, max_len=12)
    assert old.ids == new.ids               # the new tokens start with the lowest bias: never chosen
    assert torch.equal(grown.src_embed.token.weight[:-2], tiny_model.src_embed.token.weight)
    with pytest.raises(ValueError, match="shrink"):
        tiny_model.with_vocab(5)


def test_init_from_grows_the_vocabulary_to_the_datas_tokenizer(tmp_path):
    data = tiny_corpus(tmp_path / "data")
    train_main(args(data, tmp_path / "first", 1))
    styled = tmp_path / "styled"
    shutil.copytree(data, styled)
    Tokenizer.load(data / "tokenizer.json").with_styles().save(styled / "tokenizer.json")
    train_main(args(styled, tmp_path / "second", 1) + ["--init-from", str(tmp_path / "first" / "last")])
    second = load_checkpoint(tmp_path / "second" / "last")
    first = load_checkpoint(tmp_path / "first" / "last")
    assert second.config.vocab_size == first.config.vocab_size + 2 == second.tokenizer.vocab_size
    assert second.tokenizer.styles == list(STYLE_TOKENS)


# -- the judge's everyday rule ------------------------------------------------------------------------------
EVERYDAY_BETTER = replace(BASELINE, everyday={"bleu": 20.0, "chrf": 40.0}, repeats=1,
                          test={"bleu": 30.4, "chrf": 51.8}, modern={"bleu": 30.0, "chrf": 55.0})
EVERYDAY_BASE = replace(BASELINE, modern={"bleu": 10.0, "chrf": 40.0})


def test_the_everyday_rule_ships_a_model_far_better_on_everyday_sentences():
    assert all(everyday_rules(EVERYDAY_BETTER, EVERYDAY_BASE).values())


@pytest.mark.parametrize("change, broken", [
    (dict(everyday={"bleu": 20.0, "chrf": 34.9}), "everyday sentences"),
    (dict(modern={"bleu": 30.0, "chrf": 49.9}), "everyday corpus"),
    (dict(test={"bleu": 30.2, "chrf": 52.0}), "Bible test"),
    (dict(repeats=4), "repeats itself less"),
])
def test_each_everyday_rule_alone_keeps_the_shipped_model(change, broken):
    verdict = everyday_rules(replace(EVERYDAY_BETTER, **change), EVERYDAY_BASE)
    assert [rule for rule, holds in verdict.items() if not holds] == [r for r in verdict if r.startswith(broken)]


def test_the_commands_read_a_two_style_model_as_modern_unless_told():
    """pipeline.source_text: what the commands and the Python API give the model."""
    from types import SimpleNamespace
    from model.inference.pipeline import source_text
    plain_tok = Tokenizer.load("pretrained/en-es/tokenizer.json")
    two = SimpleNamespace(tokenizer=plain_tok if plain_tok.styles else plain_tok.with_styles())
    assert source_text(two, "Hello.", None) == "<modern> Hello."
    assert source_text(two, "Hello.", "bible") == "<bible> Hello."
    assert source_text(two, "<bible> Hello.", None) == "<bible> Hello."     # a text's own style token stays
    one = SimpleNamespace(tokenizer=Tokenizer.word_level(["a", "b"]))
    assert source_text(one, "a b", "bible") == "a b"             # a one-style model reads the text as typed
