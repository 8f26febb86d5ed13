"""Tokenizer wrapper around the `tokenizers` package.

Two kinds share one interface and one file format (tokenizer.json):
- byte-level BPE for natural language: every input, emoji and CJK included, maps to known tokens,
  so there is never an <unk>;
- word-level: a fixed symbol set for the toy tasks ("3 1 4" -> three tokens), or the word vocabulary of
  a model trained elsewhere (model/io/importer.py), whose unknown words read as <unk>.
Special tokens have fixed ids so the model config can name them: <pad>=0, <s>=1, </s>=2.

A tokenizer.json is code as much as data: its normalizer and pre-tokenizer may carry regular expressions,
which the Rust library runs on every sentence a visitor types. `(a+)+$` in a Replace normalizer held a
worker 42.5 s on 3,601 a's (the GIL held: every other session froze) and panicked on 24 a's and a b. So a
tokenizer JSON is read only when each of its parts is one of READABLE_PARTS (checked before the library
parses it): a token table (WordLevel, BPE, WordPiece), Unicode normalization, lower-casing, whitespace and
punctuation splitting, the byte-level mapping with its fixed GPT-2 pattern, and Replace/Split only with a
literal string. Every one of them runs in time linear in the text, and the text is at most MAX_ENCODE_CHARS.
"""
from __future__ import annotations

import json
import re

from pathlib import Path
from typing import Iterable

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

from model.errors import InputError

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = [PAD, BOS, EOS]
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
# A model trained on two kinds of Spanish reads which one to write from a first source token.
STYLE_TOKENS = {"modern": "<modern>", "bible": "<bible>"}
_MANY_SPACES = re.compile(r" {2,}")
DEFAULT_STYLE = "modern"          # a two-style model writes today's Spanish unless asked (app and command line)
# 10x the app's text box (5,000 characters) and far past the 512 tokens a model reads: tokenizing the most that is
# read takes milliseconds with READABLE_PARTS (tests/test_tokenizer_safety.py measures it).
MAX_ENCODE_CHARS = 50_000
# The parts of a tokenizers JSON this app reads, by the part's "type"; any other part (a Regex pattern, a
# Unigram model, a custom component) is refused with its name.
READABLE_PARTS = {
    "model": {"WordLevel", "BPE", "WordPiece"},
    "normalizer": {"Sequence", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "Strip", "StripAccents",
                   "BertNormalizer", "Replace", "Prepend"},
    "pre_tokenizer": {"Sequence", "Whitespace", "WhitespaceSplit", "ByteLevel", "BertPreTokenizer", "Punctuation",
                      "Digits", "Metaspace", "Split"},
    "post_processor": {"TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel"},
    "decoder": {"Sequence", "ByteLevel", "WordPiece", "Metaspace", "BPEDecoder", "Strip", "Fuse", "Replace",
                "ByteFallback"},
}


def check_readable(data) -> None:
    """ValueError naming the first part of a parsed tokenizer JSON outside READABLE_PARTS (a pattern only as a
    literal String, never a Regex)."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise ValueError("not a usable tokenizer (a tokenizers JSON has a model)")
    for part, kinds in READABLE_PARTS.items():
        if data.get(part) is not None or part == "model":
            _check_part(part, data[part], kinds)


def _check_part(part: str, value, kinds: set[str]) -> None:
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in kinds:
        raise ValueError(f"its {part} is {str(kind)[:40]!r}, which this app does not run (it reads "
                         f"{', '.join(sorted(kinds))})")
    pattern = value.get("pattern")
    if pattern is not None and not (isinstance(pattern, dict) and set(pattern) == {"String"}):
        raise ValueError(f"its {part} {kind} has a regular expression ({str(pattern)[:60]}); only a literal "
                         "String pattern is run (a pattern such as (a+)+$ can hold a worker for minutes)")
    for inner in value.get("normalizers") or value.get("pretokenizers") or value.get("decoders") or []:
        _check_part(part, inner, kinds)


def is_panic(error: BaseException) -> bool:
    """A Rust panic inside the tokenizers library (pyo3's PanicException derives from BaseException, so
    `except Exception` lets it kill the thread)."""
    return type(error).__name__ == "PanicException"


class Tokenizer:
    def __init__(self, backend: HFTokenizer):
        self.backend = backend
        for i, tok in enumerate(SPECIAL_TOKENS):
            if backend.token_to_id(tok) != i:
                raise ValueError(f"tokenizer must map {tok!r} to id {i}")
        self.byte_level = isinstance(backend.decoder, decoders.ByteLevel)
        self.closed = isinstance(backend.model, models.WordLevel) and backend.token_to_id(backend.model.unk_token) is None

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def train_bpe(cls, texts: Iterable[str], vocab_size: int = 8000) -> "Tokenizer":
        backend = HFTokenizer(models.BPE())
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        backend.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=SPECIAL_TOKENS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # all 256 bytes: no <unk> ever
            show_progress=False,
        )
        backend.train_from_iterator(texts, trainer=trainer)
        return cls(backend)

    @classmethod
    def word_level(cls, symbols: list[str], words: bool = False) -> "Tokenizer":
        """Ids in order: <pad> <s> </s>, then the symbols. words=False: a closed toy alphabet read between
        spaces. words=True: a word vocabulary with <unk> among the symbols, punctuation split from words
        ("house." -> "house", ".") as the spaCy tokenizers those vocabularies come from mostly do."""
        vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + list(symbols))}
        backend = HFTokenizer(models.WordLevel(vocab, unk_token=UNK if words else None))
        backend.pre_tokenizer = pre_tokenizers.Whitespace() if words else pre_tokenizers.WhitespaceSplit()
        backend.decoder = decoders.WordPiece(prefix="##")  # joins word-level tokens with spaces
        if words:              # typed as text, <s> reads as one token, not "<", "s", ">"
            backend.add_special_tokens(SPECIAL_TOKENS)
        return cls(backend)

    @classmethod
    def from_json(cls, text: str) -> "Tokenizer":
        """A tokenizer.json's text, its parts checked (check_readable) before the library parses it."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise ValueError(f"not a usable tokenizer (not JSON: {str(e)[:100] or 'nested too deeply'})") from None
        try:
            check_readable(data)
        except RecursionError:
            raise ValueError("its parts are nested too deeply") from None
        return cls(HFTokenizer.from_str(text))

    @classmethod
    def load(cls, path: str | Path) -> "Tokenizer":
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def save(self, path: str | Path) -> None:
        self.backend.save(str(path))

    def with_styles(self) -> "Tokenizer":
        """A copy that also knows the style tokens (new ids after the vocabulary, one token each)."""
        backend = HFTokenizer.from_str(self.backend.to_str())
        backend.add_special_tokens([t for t in STYLE_TOKENS.values() if backend.token_to_id(t) is None])
        return Tokenizer(backend)

    # -- styles ---------------------------------------------------------------------------------
    @property
    def styles(self) -> list[str]:
        """The styles this vocabulary has a token for ([] for a one-style model)."""
        return [name for name, tok in STYLE_TOKENS.items() if self.backend.token_to_id(tok) is not None]

    @property
    def default_style(self) -> str | None:
        """The style written when none is asked: DEFAULT_STYLE, or the only one a model knows; None: one style."""
        styles = self.styles
        return None if not styles else DEFAULT_STYLE if DEFAULT_STYLE in styles else styles[0]

    def styled(self, text: str, style: str | None) -> str:
        """`text` as the model reads it in `style`: the style token first, when the model has styles.
        A one-style model, no style asked, or a text that already starts with a style token reads as it is."""
        if style is None or not self.styles or text.split(maxsplit=1)[:1] in ([t] for t in STYLE_TOKENS.values()):
            return text
        if style not in self.styles:
            raise ValueError(f"unknown style {style!r}; this model knows {', '.join(self.styles)}")
        return f"{STYLE_TOKENS[style]} {text}"

    # -- use ------------------------------------------------------------------------------------
    @property
    def reads_english(self) -> bool:
        """A model this project trained on text (byte-level BPE, learned from English sources: en-es) reads English;
        a toy's closed alphabet or an imported word vocabulary reads whatever its own tokens are."""
        return self.byte_level

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size()

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        """Token ids of `text` (no BOS; EOS appended), as the encoder input expects."""
        if len(text) > MAX_ENCODE_CHARS:
            raise InputError("too_long", f"at most {MAX_ENCODE_CHARS:,} characters are read, got {len(text):,}",
                             limit=f"{MAX_ENCODE_CHARS:,}", n=f"{len(text):,}")
        if self.closed:
            self._check_symbols(text)
        try:
            ids = self.backend.encode(text, add_special_tokens=False).ids
        except BaseException as e:      # a panic would kill the session's thread; it is this text's failure
            if not is_panic(e):
                raise
            raise InputError("tokenizer_failed", f"this model's tokenizer failed on the text ({str(e)[:80]})") from None
        return ids + [EOS_ID] if add_eos else ids

    def _check_symbols(self, text: str) -> None:
        """A closed (toy) vocabulary has no <unk>: name what it cannot read."""
        vocab = self.backend.get_vocab()
        unknown = [w for w in text.split() if w not in vocab or w in SPECIAL_TOKENS]
        if unknown:
            known = " ".join(t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if t not in SPECIAL_TOKENS)
            shown = ", ".join(repr(w[:20]) for w in unknown[:5])
            raise InputError("toy_symbols", f"this toy model only reads the symbols {known} separated by "
                             f"spaces; it cannot read {shown}", known=known, shown=shown)

    def decode(self, ids: Iterable[int]) -> str:
        """The text of `ids`, with one space between words: en-es learned lone space tokens from references
        with doubled spaces (Apertium's, where it dropped a word), and wrote '¿Puede  me ayudas?'."""
        ids = [int(i) for i in ids if int(i) not in (PAD_ID, BOS_ID, EOS_ID)]
        return _MANY_SPACES.sub(" ", self.backend.decode(ids)).strip()

    def token_strings(self, ids: Iterable[int]) -> list[str]:
        """Readable label per token: a leading space shows as '▁', partial UTF-8 bytes as <0x..>."""
        return [self._label(int(i)) for i in ids]

    def _label(self, token_id: int) -> str:
        token = self.backend.id_to_token(token_id)
        if token is None:
            return f"<{token_id}>"
        if token in SPECIAL_TOKENS or token in STYLE_TOKENS.values() or not self.byte_level:
            return token
        byte_decoder = _byte_decoder()
        raw = bytes(byte_decoder[ch] for ch in token)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:  # a piece of a multi-byte character (emoji, CJK)
            return "".join(f"<0x{b:02X}>" for b in raw)
        return _visible(text)


def _visible(text: str) -> str:
    """Make spaces and invisible characters visible in axis labels."""
    out = []
    for ch in text:
        if ch == " ":
            out.append("▁")
        elif ch == "\n":
            out.append("↵")
        elif ch == "\t":
            out.append("⇥")
        elif not ch.isprintable():
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    return "".join(out)


_BYTE_DECODER: dict[str, int] | None = None


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte<->unicode table, inverted (the alphabet ByteLevel uses)."""
    global _BYTE_DECODER
    if _BYTE_DECODER is None:
        printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                     + list(range(ord("®"), ord("ÿ") + 1)))
        chars = printable[:]
        n = 0
        for b in range(256):
            if b not in printable:
                printable.append(b)
                chars.append(256 + n)
                n += 1
        _BYTE_DECODER = {chr(c): b for b, c in zip(printable, chars)}
    return _BYTE_DECODER
