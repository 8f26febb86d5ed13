"""A tokenizer.json is code as much as data (issue 47, item 9): a Replace normalizer with the regex (a+)+$, imported
with a model, held a worker 42.5 s on a visitor's 3,601 a's with the GIL held, and 24 a's and a b raised a Rust
PanicException (a BaseException) that killed the session's script thread. Only READABLE_PARTS are read, tokenizing
is bounded, and a panic is the text's error."""
import json
import shutil
import time

import pytest
from tokenizers import Regex
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import normalizers

from conftest import ROOT
from model.errors import CheckpointError, InputError
from model.io.checkpoint import load_checkpoint
from model.io.tokenizer import MAX_ENCODE_CHARS, Tokenizer

TOY = ROOT / "pretrained" / "toy-reverse"
EN_ES = ROOT / "pretrained" / "en-es" / "tokenizer.json"
FREEZER = {"type": "Replace", "pattern": {"Regex": "(a+)+$"}, "content": "x"}


def test_a_model_folder_whose_tokenizer_runs_a_regex_is_refused(tmp_path):
    """Dropped into the models folder (or imported before this fix), the folder does not load."""
    folder = tmp_path / "toy-freezer"
    shutil.copytree(TOY, folder)
    data = json.loads((folder / "tokenizer.json").read_text())
    data["normalizer"] = FREEZER
    (folder / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match=r"tokenizer\.json: its normalizer Replace has a regular expression"):
        load_checkpoint(folder, device="cpu")


@pytest.mark.parametrize("part, value, message", [
    ("pre_tokenizer", {"type": "Split", "pattern": {"Regex": "(x+x+)+y"}, "behavior": "Isolated", "invert": False},
     "its pre_tokenizer Split has a regular expression"),
    ("normalizer", {"type": "Sequence", "normalizers": [{"type": "NFC"}, FREEZER]}, "its normalizer Replace"),
    ("decoder", {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"}]},
     "its decoder Replace has a regular expression"),
    ("post_processor", {"type": "Sequence", "processors": []}, "its post_processor is 'Sequence'"),
    ("normalizer", {"type": "Sequence", "normalizers": "abc"}, "its normalizer is 'None'"),
])
def test_only_the_parts_the_app_runs_are_read(part, value, message):
    data = json.loads(EN_ES.read_text())
    data[part] = value
    with pytest.raises(ValueError, match=message):
        Tokenizer.from_json(json.dumps(data))


def test_every_shipped_tokenizer_is_readable():
    for path in sorted(ROOT.glob("pretrained/*/*tokenizer.json")):
        assert Tokenizer.from_json(path.read_text(encoding="utf-8")).vocab_size > 3, path


def test_a_literal_replace_is_read():
    data = json.loads(EN_ES.read_text())
    data["normalizer"] = {"type": "Replace", "pattern": {"String": "``"}, "content": '"'}
    assert Tokenizer.from_json(json.dumps(data)).encode("a ``b``") == Tokenizer.load(EN_ES).encode('a "b"')


def test_a_panic_inside_the_tokenizer_is_the_texts_error_not_the_threads():
    """Built around the check (as a tokenizer made in Python could be): the panic becomes an InputError."""
    backend = HFTokenizer.from_str(EN_ES.read_text())
    backend.normalizer = normalizers.Replace(Regex("(a+)+$"), "x")
    with pytest.raises(InputError, match="tokenizer failed") as failed:
        Tokenizer(backend).encode("a" * 24 + "b")
    assert failed.value.key == "tokenizer_failed"


def test_tokenizing_is_bounded():
    """At most MAX_ENCODE_CHARS characters are read; the most that is read tokenizes in well under a second."""
    tokenizer = Tokenizer.load(EN_ES)
    with pytest.raises(InputError, match=f"at most {MAX_ENCODE_CHARS:,} characters") as refused:
        tokenizer.encode("a" * (MAX_ENCODE_CHARS + 1))
    assert refused.value.key == "too_long"
    for text in ("a" * MAX_ENCODE_CHARS, ("a" * 24 + "b ") * (MAX_ENCODE_CHARS // 26), "的" * MAX_ENCODE_CHARS):
        start = time.perf_counter()
        tokenizer.encode(text)
        assert time.perf_counter() - start < 1.0
