"""What models trained elsewhere need, as configuration (docs/byo-model.md), each on a tiny model: separate
source and target vocabularies, the output bias, a final LayerNorm on each stack, the Annotated
Transformer's LayerNorm, a source led by <s>; and the paper-faithful default left exactly as it was."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from conftest import tiny_config
from model.capture.hooks import capture
from model.errors import CheckpointError
from model.inference.pipeline import encode_text, forced_pass, translate
from model.io.checkpoint import SOURCE_TOKENIZER, Bundle, load_checkpoint, save_checkpoint
from model.io.tokenizer import Tokenizer
from model.nn.config import TransformerConfig, parameter_count
from model.nn.layers import LayerNorm
from model.nn.transformer import Transformer

ROOT = Path(__file__).resolve().parents[1]
SRC, TGT = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]]), torch.tensor([[1, 6, 5, 4], [1, 8, 7, 0]])


def model(**overrides) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config(**overrides)).eval()


def test_source_and_target_vocabularies_have_their_own_sizes():
    m = model(share_embeddings=False, src_vocab_size=9, vocab_size=21)
    assert m.src_embed.token.weight.shape == (9, 32) and m.tgt_embed.token.weight.shape == (21, 32)
    assert m(SRC, TGT).shape == (2, 4, 21)
    with pytest.raises(IndexError):
        m(torch.tensor([[9, 2]]), TGT[:1])                     # 9 is beyond the source vocabulary
    assert parameter_count(m.cfg) == m.num_parameters()
    with pytest.raises(ValueError, match="src_vocab_size=9: a separate source vocabulary cannot share"):
        tiny_config(src_vocab_size=9)
    with pytest.raises(ValueError, match="eos_id=2: must be a token id, 0 <= id < src_vocab_size=2"):
        tiny_config(share_embeddings=False, src_vocab_size=2)


@torch.no_grad()
def test_the_output_bias_shifts_its_logit():
    m = model(share_embeddings=False)
    before = m(SRC, TGT)
    m.generator.proj.bias[5] += 3.0
    shift = m(SRC, TGT) - before
    assert torch.allclose(shift[..., 5], torch.full_like(shift[..., 5], 3.0)) and not shift[..., :5].any()


@torch.no_grad()
def test_a_final_norm_after_a_post_norm_stack():
    plain, normed = model(), model(final_norm=True)
    assert isinstance(normed.decoder.norm, LayerNorm) and isinstance(plain.decoder.norm, torch.nn.Identity)
    assert not model(norm_first=True, final_norm=False).cfg.has_final_norm and model(norm_first=True).cfg.has_final_norm
    with capture(["decoder.layers.1.hook_resid_post", "decoder.hook_out"]) as trace:
        normed(SRC, TGT)
    last = torch.as_tensor(trace["decoder.layers.1.hook_resid_post"])
    assert torch.allclose(torch.as_tensor(trace["decoder.hook_out"]), normed.decoder.norm(last), atol=1e-6)
    assert parameter_count(normed.cfg) == normed.num_parameters() == plain.num_parameters() + 4 * 32


@torch.no_grad()
def test_the_annotated_layernorm_divides_by_bessel_corrected_std_plus_eps():
    torch.manual_seed(1)
    x = torch.randn(2, 5, 32) * 3 + 1
    norm = LayerNorm(32, eps=1e-6, kind="annotated")
    norm.weight.uniform_(0.5, 1.5)
    norm.bias.uniform_(-1, 1)
    expected = norm.weight * (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-6) + norm.bias
    assert torch.allclose(norm(x), expected, atol=1e-6)
    standard = LayerNorm(32, eps=1e-6)
    standard.load_state_dict(norm.state_dict())
    assert (standard(x) - norm(x)).abs().max() > 1e-3             # sqrt(D/(D-1)) apart: a different function
    m = model(norm_first=True, ln_kind="annotated", ln_eps=1e-6)
    with capture("encoder.layers.1.norm_ff.*") as trace:                  # what the LayerNorm page shows
        m(SRC, TGT)
    x_in, x_out = (torch.as_tensor(trace[f"encoder.layers.1.norm_ff.hook_{h}"]) for h in ("in", "out"))
    assert torch.allclose(torch.as_tensor(trace["encoder.layers.1.norm_ff.hook_std"]), x_in.std(-1) + 1e-6, atol=1e-6)
    assert torch.allclose(x_out, (x_in - x_in.mean(-1, keepdim=True)) / (x_in.std(-1, keepdim=True) + 1e-6), atol=1e-5)


@torch.no_grad()
def test_capture_on_and_off_agree_for_the_imported_shapes():
    for overrides in (dict(final_norm=True, share_embeddings=False, src_vocab_size=9),
                      dict(norm_first=True, ln_kind="annotated", ln_eps=1e-6, share_embeddings=False)):
        m = model(**overrides)
        fast = m(SRC, TGT)
        with capture() as trace:
            slow = m(SRC, TGT)
        assert torch.allclose(fast, slow, atol=1e-5)
        assert "encoder.norm.hook_std" in trace.arrays


def test_the_source_can_start_with_bos():
    tok = Tokenizer.word_level(list("abcd"))
    plain = Bundle(model(vocab_size=7), tok, tiny_config(vocab_size=7), Path("plain"))
    led = Bundle(model(vocab_size=7, src_bos=True), tok, tiny_config(vocab_size=7, src_bos=True), Path("led"))
    assert encode_text(plain, "a b").ids == [3, 4, 2] and encode_text(led, "a b").ids == [1, 3, 4, 2]
    assert encode_text(led, "a b", target=True).ids == [3, 4, 2]          # a target sentence is not led by <s>


@pytest.mark.parametrize("field, value, why", [("ln_kind", "rms", "must be one of"), ("final_norm", "yes", "true or false"),
                                               ("src_vocab_size", 0, "positive"), ("src_vocab_size", True, "integer"),
                                               ("src_bos", 1, "true or false")])
def test_the_new_fields_are_validated(field, value, why):
    with pytest.raises(ValueError, match=f"{field}=.*{why}"):
        tiny_config(share_embeddings=False, **{field: value})


def test_a_folder_with_its_own_source_vocabulary_loads_and_says_what_is_wrong(tmp_path):
    src_tok, tgt_tok = Tokenizer.word_level(list("abcdef")), Tokenizer.word_level(list("xyz"))
    m = model(share_embeddings=False, src_vocab_size=9, vocab_size=6)
    folder = save_checkpoint(m, tgt_tok, tmp_path / "two", source_tokenizer=src_tok)
    bundle = load_checkpoint(folder)
    assert bundle.source_tokenizer.vocab_size == 9 and bundle.tokenizer.vocab_size == 6
    assert encode_text(bundle, "f e").ids == [8, 7, 2] and isinstance(translate(bundle, "a b"), str)
    (folder / SOURCE_TOKENIZER).unlink()
    with pytest.raises(CheckpointError, match="source_tokenizer.json: file missing"):
        load_checkpoint(folder)
    tgt_tok.save(folder / SOURCE_TOKENIZER)
    with pytest.raises(CheckpointError, match="vocabulary of 6 tokens, but config.json says src_vocab_size=9"):
        load_checkpoint(folder)
    joint = save_checkpoint(model(vocab_size=6), tgt_tok, tmp_path / "one")
    shutil.copy(folder / SOURCE_TOKENIZER, joint / SOURCE_TOKENIZER)
    with pytest.raises(CheckpointError, match="a source vocabulary, but config.json gives no src_vocab_size"):
        load_checkpoint(joint)


@torch.no_grad()
def test_the_shipped_en_es_model_gives_the_same_outputs_as_before():
    """The default path is untouched by the options above: logits of the shipped weights, measured before the options
    existed (commit 8918d97) and again with the same code each time the weights changed (the learner model, 2026-11-26;
    step 4 of the card, trained on a lent H200, 2026-11-28)."""
    bundle = load_checkpoint(ROOT / "pretrained/en-es", device="cpu")
    assert bundle.config == TransformerConfig.from_dict({**bundle.config.to_dict()})
    assert (bundle.config.src_vocab_size, bundle.config.final_norm, bundle.config.ln_kind, bundle.config.src_bos) == \
        (None, None, "standard", False)
    src = encode_text(bundle, "<modern> The man went to the house.").ids
    assert src == [8000, 371, 436, 781, 294, 268, 660, 16, 2]
    assert translate(bundle, "<modern> The man went to the house.") == "El hombre fue a la casa."
    _, logits = forced_pass(bundle, src, [5, 17, 300, 2], names=[])
    before = torch.tensor([[0.20877, -1.77201, 0.98938, -1.65966, 0.04384, 0.20955],
                           [-1.12944, -3.37125, 0.38042, -3.29277, -0.45278, -1.12964],
                           [-0.95754, -2.3905, 0.86929, -2.64303, 0.59079, -0.95799],
                           [-1.0653, -1.34379, 0.13527, -2.63112, -1.24844, -1.06556]])
    assert (logits[0, :, :6] - before).abs().max() < 1e-4
    whole = logits[0].double()
    # float32 sums over 32,000 logits differ in their last bits between processors (AVX-512 or not, threads):
    # 0.056 in 218,620 on the AMD EPYC of 2026-11-28; a changed path moves them by far more than one in a million
    assert abs(float(whole.sum()) - -56337.54515544884) < 1e-6 * 56337
    assert abs(float((whole ** 2).sum()) - 190500.71838357564) < 1e-6 * 190500
