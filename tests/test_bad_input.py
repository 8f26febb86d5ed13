"""Bad input of every kind gets a clear message and never a traceback: sentences, uploads, URL parameters,
broken model folders. Cheapest layer first: pure functions, then the app in AppTest (the real browser
checks live in test_browser.py)."""
import codecs
import os
import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from apptest_utils import browser_view_sent, explorer_drawn, html_bodies, no_exceptions, run_page, texts
from model.errors import InputError
from model.io.checkpoint import Bundle, CheckpointError, load_checkpoint, save_checkpoint
from model.nn.config import TransformerConfig
from model.inference.pipeline import encode_text, trace_sentence
from model.io.tokenizer import Tokenizer
from model.nn.transformer import Transformer
from viz.services.models import model_ids
from viz.core.text import plain
from viz.core.upload import MAX_UPLOAD_BYTES, UploadError, parse_upload

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "pretrained" / "toy-reverse"

UNUSUAL = {
    "emoji": "I love 🍕 and 👩‍👩‍👧 🇪🇸",
    "CJK": "我喜欢学习语言。日本語もできます",
    "right-to-left": "مرحبا بالعالم שלום עולם",
    "zero-width": "a\u200bb\u200cc\u200dd\ufeffe",
    "bidi override": "abc\u202edef\u202c",
    "control characters": "bell\x07 escape\x1b[31m null-ish\x01 tab\there",
    "combining marks": "e\u0301 n\u0303 Z\u0351\u0352",
}
HTML = '<img src=x onerror="alert(1)"><script>alert(2)</script> [link](javascript:alert(3))'


def _raw_markup(markdown: str) -> list[str]:
    """'<' or '[' not escaped by viz.core.text.plain: Markdown would read them as a tag or a link."""
    return re.findall(r"(?<!\\)[<\[]", markdown)


# -- sentences: tokenizer and pipeline ----------------------------------------------------------
@pytest.fixture(scope="module")
def bpe_bundle() -> Bundle:
    """A byte-level BPE model like en-es (tiny and untrained: shapes and labels are what matter)."""
    corpus = ["the man went to the house", "el hombre fue a la casa", "a small dog in the garden"] * 20
    tokenizer = Tokenizer.train_bpe(corpus, vocab_size=300)
    cfg = TransformerConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_heads=2, n_encoder_layers=1,
                            n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=64)
    torch.manual_seed(0)
    return Bundle(Transformer(cfg).eval(), tokenizer, cfg, Path("bpe-tiny"))


@pytest.mark.parametrize("text", ["", " ", "   \n\t  ", "\u3000"])
def test_empty_or_whitespace_sentence_is_refused_clearly(bpe_bundle, text):
    with pytest.raises(ValueError, match="the sentence is empty"):
        encode_text(bpe_bundle, text)


def test_ten_thousand_characters_are_cut_keeping_the_end_marker(bpe_bundle):
    text = "the man went to the house " * 385                   # 10,010 characters
    encoded = encode_text(bpe_bundle, text, max_tokens=40)
    assert encoded.truncated and encoded.n_total > 1000
    assert len(encoded.ids) == 40 and encoded.ids[-1] == bpe_bundle.config.eos_id
    trace = trace_sentence(bpe_bundle, text, max_tokens=40)
    assert trace.meta["src_truncated"] and len(trace.meta["src_tokens"]) == 40


@pytest.mark.parametrize("kind", list(UNUSUAL))
def test_unusual_characters_trace_with_visible_labels(bpe_bundle, kind):
    """Byte-level BPE reads anything; labels make invisible and direction-changing characters visible."""
    text = UNUSUAL[kind]
    ids = bpe_bundle.tokenizer.encode(text)
    assert bpe_bundle.tokenizer.decode(ids) == text.strip()   # lossless round trip
    trace = trace_sentence(bpe_bundle, text, max_tokens=64)
    labels = trace.meta["src_tokens"]
    assert len(labels) == len(trace["encoder.layers.0.self_attn.hook_pattern"][0])
    assert all(label and label.isprintable() for label in labels), labels   # no ZWSP, RLO, ESC on an axis


def test_html_in_a_sentence_is_just_tokens(bpe_bundle):
    tok = bpe_bundle.tokenizer
    labels = tok.token_strings(tok.encode(HTML))
    assert "".join(labels[:-1]).replace("▁", " ").strip() == HTML and labels[-1] == "</s>"


@pytest.mark.parametrize("text, shown", [("a b 🍕", "'🍕'"), ("a <script>", "'<script>'"), ("ab", "'ab'"),
                                         ("a </s>", "'</s>'")])
def test_toy_model_names_what_it_cannot_read(text, shown):
    bundle = load_checkpoint(TOY)
    with pytest.raises(ValueError, match="only reads the symbols a b c d e f g h i j") as info:
        encode_text(bundle, text)
    assert shown in str(info.value)


# -- uploads (viz/core/upload.py) ----------------------------------------------------------------------
@pytest.mark.parametrize("name, data, message", [
    ("empty.txt", b"", "the file is empty"),
    ("blank.txt", b"  \n\r\n\t ", "the file is empty"),
    ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
    ("latin1.txt", "café con leche, señor".encode("latin-1"), "not UTF-8"),
    ("big.txt", b"a b c\n" * (MAX_UPLOAD_BYTES // 6 + 1), "the limit is 1 MB"),
    ("table.csv", b"id,label\n1,x\n2,y\n", "needs a 'text' column; it has 'id', 'label'"),
    ("header-only.csv", b"text\n", "the CSV has no rows"),
    ("blank-cells.csv", b"text,id\n,1\n  ,2\n", "no sentences"),
    ("huge-field.csv", b'text\n"' + b"a" * 200_000 + b'"\n', "could not be read"),
])
def test_bad_uploads_are_refused_with_the_reason(name, data, message):
    with pytest.raises(UploadError, match=message):
        parse_upload(name, data)


def test_utf16_files_with_a_byte_order_mark_are_read():
    text = "The man went to the house.\r\nCafé, señor: 你好\r\n"
    for encoding in ("utf-16", "utf-16-be"):
        data = (codecs.BOM_UTF16_BE if encoding.endswith("be") else b"") + text.encode(encoding)
        assert parse_upload("notepad.txt", data) == ["The man went to the house.", "Café, señor: 你好"]
    with pytest.raises(UploadError, match="not UTF-8"):
        parse_upload("nobom.txt", text.encode("utf-16-le"))                 # no mark: not guessed


def test_plain_neutralises_emoji_and_icon_shortcodes():
    shown = plain("cross:-1:0 and :material/delete: and :thumbsdown:")
    assert not re.search(r":[-\w/]+:", shown.replace("\\", ""))          # no shortcode survives
    assert shown.replace("\u2060", "").replace("\\", "") == "cross:-1:0 and :material/delete: and :thumbsdown:"


def test_good_uploads_keep_text_verbatim():
    assert parse_upload("s.txt", "\ufeffa b c\r\n\n  d e  \n".encode("utf-8")) == ["a b c", "d e"]
    assert parse_upload("s.csv", b"Sentence,id\n\"x, y\",1\nz,2\n") == ["x, y", "z"]
    # HTML is data here; it is only ever shown as plain text (selectbox options, escaped warnings)
    assert parse_upload("<b>x</b>.txt", (HTML + "\n").encode()) == [HTML]
    assert len(parse_upload("many.txt", b"a\n" * 9000)) == 5000


def test_plain_escapes_markdown_and_html():
    shown = plain(HTML)
    assert not _raw_markup(shown)
    assert shown.replace("\\", "").replace("\u2060", "") == HTML


# -- the app: URL parameters, sentences, uploads, broken models (AppTest) ---------------------------
def test_garbage_url_parameters_warn_and_fall_back():
    at = run_page("explorer.py", model="../../etc", text="a b c", layer="-1", head="999", beam="abc",
                  max_tokens="100000", kind="<script>alert(1)</script>")
    no_exceptions(at)
    warnings = "\n".join(w.value for w in at.warning)
    for name in ("model", "layer", "head", "beam", "max_tokens", "kind"):
        assert f"URL parameter {name}=" in warnings.replace("\\", ""), name
    assert not _raw_markup(warnings)                              # escaped before Markdown sees it
    assert at.sidebar.selectbox(key="model").value == model_ids()[0]     # the default, not a path
    assert at.sidebar.number_input(key="beam").value == 1
    assert at.sidebar.number_input(key="max_tokens").value == 128
    assert browser_view_sent(at)[0]["pick"] == {"kind": "encoder", "layer": 0, "head": 0}   # the view's defaults


def test_url_parameter_markdown_is_not_rendered():
    at = run_page("explorer.py", model="toy-reverse", text="a b c", kind="[free](https://evil.example)")
    no_exceptions(at)
    warning = next(w.value for w in at.warning if "URL parameter kind" in w.value)
    assert "](https" not in warning and "\\[free\\]" in warning


@pytest.mark.parametrize("text", ["", "   \n  "])
def test_empty_sentence_shows_a_hint(text):
    at = run_page("explorer.py", model="toy-reverse", text=text)
    no_exceptions(at)
    assert "type one in the sidebar" in texts(at)
    assert not explorer_drawn(at)


def test_ten_thousand_characters_in_the_link_are_cut_with_notices():
    at = run_page("explorer.py", model="toy-reverse", text="a " * 5000)
    no_exceptions(at)
    body = texts(at)
    assert "cut to 5000 characters" in body
    assert "The input has 2501 tokens; only the first 32 are used" in body    # the toy reads 32 at most
    assert explorer_drawn(at)


def test_a_paste_over_the_limit_is_cut_and_said_not_dropped():
    at = run_page("explorer.py", model="toy-reverse", text="a b")
    at.text_area(key="text").input("b " * 3000).run()                  # 6,000 characters typed or pasted
    no_exceptions(at)
    assert at.text_area(key="text").value == ("b " * 3000)[:5000]         # the new sentence, cut; not the old one
    assert "had 6,000 characters; it was cut to the first 5,000" in texts(at)
    assert explorer_drawn(at)


def test_unusual_and_html_sentences_in_the_app():
    at = run_page("explorer.py", model="toy-reverse", text=UNUSUAL["emoji"])
    no_exceptions(at)
    for text in list(UNUSUAL.values())[1:] + [HTML]:
        at.sidebar.text_area(key="text").input(text).run()
        no_exceptions(at)
        warning = "\n".join(w.value for w in at.warning)
        assert "The model could not read this input" in warning, text
        assert not _raw_markup(warning)


def _uploader(at):
    return at.sidebar.get("file_uploader")[0]


def test_uploads_in_the_app():
    at = run_page("explorer.py", model="toy-reverse", text="a b c")
    bad = [('<img src=x onerror="alert(1)">.txt', b"\x00\x01\x02binary", "binary file"),
           ("latin1.txt", "café".encode("latin-1"), "not UTF-8"),
           ("empty.txt", b"", "the file is empty"),
           ("big.txt", b"a\n" * (MAX_UPLOAD_BYTES // 2 + 1), "the limit is 1 MB"),
           ("t.csv", b"a,b\n1,2\n", "needs a 'text' column")]
    for name, data, message in bad:
        _uploader(at).set_value((name, data, "text/plain")).run()
        no_exceptions(at)
        warning = "\n".join(w.value for w in at.sidebar.warning)
        assert message in warning.replace("\\", "").replace("\u2060", ""), name   # shown through plain()
        assert not _raw_markup(warning)
    _uploader(at).set_value(("ok.txt", f"c a f e\n{HTML}\n".encode(), "text/plain")).run()
    no_exceptions(at)
    pick = at.sidebar.selectbox(key="uploaded_sentence")
    assert pick.options == ["c a f e", HTML[:80]]                          # shown cut to 80 characters
    pick.select(HTML).run()
    no_exceptions(at)
    assert at.sidebar.text_area(key="text").value == HTML
    pick = at.sidebar.selectbox(key="uploaded_sentence").select("c a f e").run()
    no_exceptions(at)
    assert "e f a c" in [t.value for t in at.sidebar.text]                  # the translation of the pick


def _damage(folder: Path, how: str) -> None:
    weights = folder / "model.safetensors"
    if how == "missing weights":
        weights.unlink()
    elif how == "truncated weights":
        weights.write_bytes(weights.read_bytes()[:1000])
    elif how == "corrupted weights":
        data = bytearray(weights.read_bytes())
        data[8:40] = b"\xff" * 32                                   # inside the JSON header
        weights.write_bytes(bytes(data))
    elif how == "shape mismatch":
        cfg = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**cfg, "d_ff": cfg["d_ff"] * 2}))
    elif how == "pickle file":
        (folder / "model.pt").write_bytes(b"\x80\x04\x95.")
    elif how == "bad config":
        (folder / "config.json").write_text("{oops")


BROKEN = {"missing weights": "file missing", "truncated weights": "corrupt or truncated",
          "corrupted weights": "corrupt or truncated", "shape mismatch": "config.json implies",
          "pickle file": "refusing to load a folder with pickle files", "bad config": "not valid JSON"}


def test_broken_model_folders_give_a_clear_message(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-reverse")
    for how in BROKEN:
        folder = models / f"broken-{how.replace(' ', '-')}"
        shutil.copytree(TOY, folder)
        _damage(folder, how)
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    at = run_page("explorer.py", model="toy-reverse", text="a b c")
    no_exceptions(at)
    assert explorer_drawn(at)
    for how, message in BROKEN.items():
        at.sidebar.selectbox(key="model").select(f"broken-{how.replace(' ', '-')}").run()
        no_exceptions(at)
        errors = "\n".join(e.value for e in at.sidebar.error).replace("\\", "")   # as shown (Markdown-escaped)
        assert "This model cannot be loaded" in errors and message in errors, (how, errors)
        folder = f"broken-{how.replace(' ', '-')}"
        assert folder in errors and str(models) not in errors, errors              # no server path
        assert "pick another model" in "\n".join(w.value for w in at.main.warning)
        assert "Traceback" not in texts(at)
    about = run_page("about.py", model="broken-bad-config", text="")   # a page that needs no sentence
    no_exceptions(about)
    assert "pick another model" in "\n".join(w.value for w in about.main.warning)
    with pytest.raises(CheckpointError):                     # and the library refuses the same folders
        load_checkpoint(models / "broken-pickle-file")


def test_good_checkpoint_roundtrip_still_loads(tmp_path):
    """The damage helper's baseline: an undamaged copy loads (so the failures above are the damage)."""
    bundle = load_checkpoint(TOY)
    folder = save_checkpoint(bundle.model, bundle.tokenizer, tmp_path / "copy")
    assert load_checkpoint(folder).config == bundle.config


def test_streamlit_config_parses_and_keeps_its_limits():
    """A malformed config.toml (e.g. a table declared twice) silently drops every setting in it."""
    import tomllib
    from pathlib import Path
    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == 1
    assert config["client"]["showErrorDetails"] == "none"          # no tracebacks in the browser
    assert config["runner"] == {"magicEnabled": False, "postScriptGC": False}


def test_upload_refusals_speak_the_readers_language():
    with pytest.raises(UploadError) as refused:
        parse_upload("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "binary file" in str(refused.value)                              # English where no page asks
    at = run_page("about.py", model="toy-reverse", text="a b", lang="zh")
    _uploader(at).set_value(("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "text/plain")).run()
    no_exceptions(at)
    assert "二进制文件" in "\n".join(w.value for w in at.sidebar.warning)


def test_what_the_model_cannot_read_is_said_in_the_readers_language():
    at = run_page("explorer.py", model="toy-reverse", text="hello world", lang="zh")
    no_exceptions(at)
    shown = texts(at).replace("\\", "").replace("\u2060", "")
    assert "模型无法读取此输入" in shown and "这个小模型只认识" in shown and "'hello'" in shown
    at = run_page("explorer.py", model="toy-reverse", text="hello world")
    assert "this toy model only reads the symbols" in texts(at).replace("\\", "").replace("\u2060", "")
    at = run_page("positional.py", model="toy-reverse", text="a b c", lang="zh", dims="0,999")
    no_exceptions(at)
    assert "超出" in " ".join(w.value for w in at.warning).replace("\u2060", "")   # '999 is outside 0…31'


def test_an_uploaded_line_obeys_the_paste_limit():
    line = " ".join(["a"] * 3500)                                          # 6,999 characters
    at = run_page("explorer.py", model="toy-reverse", text="a b")
    _uploader(at).set_value(("long.txt", f"{line}\nc a f e\n".encode(), "text/plain")).run()
    at.sidebar.selectbox(key="uploaded_sentence").select(line).run()
    no_exceptions(at)
    assert at.sidebar.text_area(key="text").value == line[:5000]
    assert "had 6,999 characters; it was cut to the first 5,000" in texts(at)


def test_a_long_reference_in_the_link_is_cut_with_a_notice():
    at = run_page("explorer.py", model="toy-reverse", text="a b", target="a " * 3000)
    no_exceptions(at)
    assert "reference translation in the link was cut to 5000 characters" in texts(at)


@pytest.mark.parametrize("lang, said", [("en", "could not read the reference translation"),
                                        ("zh", "无法读取参考译文")])
def test_an_unreadable_reference_is_named_and_the_sentence_still_shows(lang, said):
    at = run_page("explorer.py", model="toy-reverse", text="a b c", target="abc", lang=lang)
    no_exceptions(at)
    assert said in texts(at) and explorer_drawn(at)
    assert at.sidebar.text_input(key="target").value == "abc"               # kept where it was typed: nothing lost


@pytest.mark.parametrize("lang, said", [("en", "could not read the corrupted sentence"),
                                        ("zh", "无法读取这个被破坏的句子")])
def test_patching_says_what_it_cannot_read_in_the_corrupted_sentence(lang, said):
    at = run_page("attribution.py", model="toy-reverse", text="a b c d", view="patching", corrupt="zz", lang=lang)
    no_exceptions(at)
    assert said in texts(at).replace("\u2060", "")


def test_sentence_b_that_cannot_be_read_is_said_wholly_in_chinese():
    at = run_page("compare.py", model="toy-reverse", text="a b c", text_b="zz", lang="zh")
    no_exceptions(at)
    shown = texts(at).replace("\\", "").replace("\u2060", "")
    assert "这个小模型只认识" in shown and "this toy model" not in shown


def test_tokens_in_the_strongest_links_caption_are_not_markdown():
    """The strongest links go to the browser-side view as plain text, which it sets as text (textContent: no
    Markdown, no HTML): the tokens arrive as typed, not escaped for Markdown."""
    at = run_page("explorer.py", model="en-es", text="`a` $b$ `c` $d$")
    no_exceptions(at)
    caption = browser_view_sent(at)[1]["kinds"]["encoder"]["strongest"][0]
    assert "→" in caption and ("`" in caption or "$" in caption) and "\\" not in caption


def test_url_numbers_are_plain_ascii_digits():
    from viz.core.view import whole_number
    assert [whole_number(s) for s in ("12", " -3 ", "+4")] == [12, -3, 4]
    assert [whole_number(s) for s in ("1_0", "１", "٣", "1.0", "", "0x10")] == [None] * 6
    at = run_page("tour.py", model="toy-reverse", text="a b", tour_step="1_0")
    no_exceptions(at)
    assert "'1_0'" in texts(at).replace("\\", "")


def test_url_numbers_of_any_length_are_refused_not_crashed_on():
    """int() refuses strings of more than 4,300 digits (ValueError): one link kept a page broken."""
    from viz.core.view import MAX_DIGITS, parse_index_list, whole_number
    huge = "9" * 4301
    assert [whole_number(s) for s in (huge, "-" + huge, "+" + huge, "1" * (MAX_DIGITS + 1))] == [None] * 4
    assert whole_number("-" + "9" * MAX_DIGITS) == -int("9" * MAX_DIGITS)
    with pytest.raises(InputError):
        parse_index_list(f"0,{huge}", 0, 10)


@pytest.mark.parametrize("page, name", [("explorer.py", "layer"), ("explorer.py", "head"), ("tour.py", "tour_step"),
                                        ("explorer.py", "beam"), ("decoding.py", "k")])
@pytest.mark.parametrize("sign", ["", "-"])
def test_a_4301_digit_url_number_shows_its_notice(page, name, sign):
    raw = sign + "9" * 4301
    at = run_page(page, model="toy-reverse", text="a b", **{name: raw})
    no_exceptions(at)
    assert f"{name}={raw[:40]!r}" in texts(at).replace("\\", "")


def test_the_ablation_link_reads_its_numbers_like_every_url_number():
    """A full-width digit (int() takes it) and 4,301 nines are both dropped with the warning."""
    at = run_page("heads.py", model="toy-reverse", text="a b", tab="ablation",
                  ablate="encoder:0:\uff10,encoder:0:" + "9" * 4301)
    no_exceptions(at)
    shown = texts(at).replace("\\", "").replace("\u2060", "")
    assert "encoder:0:\uff10, encoder:0:999" in shown


def test_odd_files_beside_the_weights_do_not_break_pages(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-odd")
    (models / "toy-odd" / "presets.txt").write_bytes(b"# start\n\xff\xfe a b c\nc a f e\n")   # not UTF-8
    (models / "toy-odd" / "metrics.json").write_text("[1, 2]")                              # not an object
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    at = run_page("about.py", model="toy-odd", text="a b")
    no_exceptions(at)
    assert "metrics.json is not a JSON object" in texts(at).replace("\\", "")


# -- issue 27, finding 2: every file read from a model folder has a size limit, checked before reading ----------
def _sparse(path: Path, size: int) -> None:
    """A file of `size` bytes that takes no disk (reading it would still cost the time and memory)."""
    with open(path, "wb") as f:
        f.truncate(size)


def test_a_huge_tokenizer_is_refused_before_it_is_read(tmp_path):
    import time
    folder = tmp_path / "toy-huge"
    shutil.copytree(TOY, folder)
    _sparse(folder / "tokenizer.json", 250 * 2**20)                  # the probe's 250 MB
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=r"tokenizer.json: 262,144,000 bytes, more than"):
        load_checkpoint(folder)
    assert time.perf_counter() - start < 2                           # was 17-26 s and +2 GB


def test_every_text_file_of_a_model_folder_has_a_limit(tmp_path, monkeypatch):
    from model.io.models import MODEL_FILE_LIMITS
    from viz.services.models import model_file_text
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-big-files")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    for name, limit in MODEL_FILE_LIMITS.items():
        _sparse(models / "toy-big-files" / name, limit + 1)
        with pytest.raises(ValueError, match=f"{name}: {limit + 1:,} bytes, more than"):
            model_file_text("toy-big-files", name)
    _sparse(models / "toy-big-files" / "metrics.json", 2**20 + 1)
    assert "more than" in load_checkpoint(models / "toy-big-files").extra["metrics"]["error"]
    (models / "toy-big-files" / "presets.txt").unlink()
    os.mkfifo(models / "toy-big-files" / "presets.txt")               # would block a reader
    from viz.services.presets import preset_groups
    assert preset_groups("toy-big-files") == {"start": ["The man went to the house."]}


def test_a_failed_load_is_remembered_until_the_folder_changes(tmp_path, monkeypatch):
    from viz.services import models as services
    models = tmp_path / "models"
    model_id = f"toy-remember-{tmp_path.name}"                        # its own entry in the server-wide caches
    shutil.copytree(TOY, models / model_id)
    _sparse(models / model_id / "tokenizer.json", 250 * 2**20)
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    calls = []
    real = services.load_engine
    monkeypatch.setattr(services, "load_engine", lambda folder: calls.append(folder) or real(folder))
    for _ in range(3):                                                # three sessions
        with pytest.raises(CheckpointError, match="more than"):
            services.load_bundle(model_id)
    assert len(calls) == 1                                            # read once, then remembered
    shutil.copyfile(TOY / "tokenizer.json", models / model_id / "tokenizer.json")   # the folder changed
    assert services.load_bundle(model_id).config.vocab_size == 13 and len(calls) == 2


def test_about_says_which_file_is_too_big_and_shows_the_rest(tmp_path, monkeypatch):
    from model.io.models import MODEL_FILE_LIMITS
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-big-card")
    for name in ("README.md", "train_log.csv"):
        _sparse(models / "toy-big-card" / name, MODEL_FILE_LIMITS[name] + 1)
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    at = run_page("about.py", model="toy-big-card", text="a b")
    no_exceptions(at)
    shown = texts(at).replace("\\", "").replace("\u2060", "")
    assert "README.md: 1,048,577 bytes, more than" in shown and "train_log.csv: 8,388,609 bytes" in shown
    assert at.get("plotly_chart")                                     # the cost chart still draws


# -- finding 3: a model folder's own words show as text: no remote image, no HTML, no shortcode --------------
BEACON = "![i](http://127.0.0.1:9/beacon.png)"


# Each of these made Chromium fetch the beacon through the pattern-based card (issue 35, item 14).
HOSTILE_CARD = (f"# Card\n{BEACON} and ![r][ref]\n\n[ref]: http://127.0.0.1:9/r.png\n"
                ":red[alarm] :material/home: :smile: <img src=http://127.0.0.1:9/x.png> &#60;img src=x&#62;\n\n"
                "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n"
                "see `![x](http://127.0.0.1:9/tick.png)` and ``` ![y](http://127.0.0.1:9/open-fence.png)\n\n"
                "a ~~~ ![z](http://127.0.0.1:9/tilde.png)\n\n[js](javascript:alert(1)) [ok](http://example.org/x)\n"
                "```\n<b>fenced</b> ![f](http://127.0.0.1:9/fenced.png)\n```\n")


def html_tags(markup: str) -> list[tuple[str, dict]]:
    """Every tag an HTML parser (as a browser's) finds in `markup`, with its attributes."""
    from html.parser import HTMLParser
    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))
    Tags().feed(markup)
    return found


def test_the_card_is_parsed_to_html_without_images_raw_html_or_shortcodes():
    from viz.core.folder_text import card_html
    shown = card_html(HOSTILE_CARD)
    tags = html_tags(shown)
    assert {"h1", "table", "td", "code", "pre", "a"} <= {tag for tag, _ in tags}
    assert not [(tag, attrs) for tag, attrs in tags if tag in ("img", "script", "iframe", "b") or "src" in attrs]
    assert "![i](http://127.0.0.1:9/beacon.png)" in shown                   # the image as its characters
    assert "![r](http://127.0.0.1:9/r.png)" in shown and "open-fence.png" in shown and "tilde.png" in shown
    assert "&lt;img src=http://127.0.0.1:9/x.png&gt;" in shown and "&lt;img src=x&gt;" in shown
    assert "javascript:" not in shown.replace("[js](javascript:alert(1))", "")   # an unsafe link is not a link
    assert '<a href="http://example.org/x" target="_blank" rel="noopener noreferrer nofollow">ok</a>' in shown
    assert ":red[alarm]" in shown and "<h1>Card</h1>" in shown and "<td>1</td>" in shown
    assert "&lt;b&gt;fenced&lt;/b&gt;" in shown


@pytest.mark.parametrize("value", ["en-es", "a`b", "``x`", " lead", "x ![i](http:&#47;&#47;h&#47;b.png) :red[x]"])
def test_a_code_span_holds_any_folder_name_exactly(value):
    from markdown_it import MarkdownIt
    from viz.core.folder_text import code_span
    rendered = MarkdownIt("commonmark").renderInline(f"About {code_span(value)}.")
    import html
    assert rendered.startswith("About <code>") and html.unescape(rendered[len("About <code>"):-len("</code>.")]) == value


def test_about_shows_a_folders_readme_and_metrics_without_fetching_or_colouring(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(TOY, models / "toy-card")
    (models / "toy-card" / "README.md").write_text(HOSTILE_CARD, encoding="utf-8")
    (models / "toy-card" / "metrics.json").write_text(json.dumps({
        "task": ":red[boom]", "note": "a long note that goes past forty characters :red[drawn red] " + BEACON,
        "greedy": {"bleu": 1.0, "chrf": 2.0, "bleu_signature": "sig`:red[x]`", "chrf_signature": "c"}}))
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    for page in ("about.py", "home.py"):
        at = run_page(page, model="toy-card", text="a b")
        no_exceptions(at)
        for element in [*at.markdown, *at.caption]:
            source = str(element.value)
            outside_code = re.sub(r"(`+).*?\1", "", source)
            assert ":red[" not in outside_code, source
            assert not re.search(r"(?<!\\)!\[", outside_code) and "<img" not in source, source
        if page == "about.py":
            assert "boom" in texts(at)
            card = html_bodies(at)
            assert "beacon.png" in card and "<img" not in card                       # shown, as text


# -- issue 35, item 13: a model folder's files are its own: no link is followed, nothing outside is read -------
SECRET = "root:x:0:0:SECRET_KEY_xyz"


def _linked_folder(models: Path, name: str, links: dict[str, Path]) -> Path:
    folder = models / name
    shutil.copytree(TOY, folder)
    for file, target in links.items():
        (folder / file).unlink(missing_ok=True)
        (folder / file).symlink_to(target)
    return folder


@pytest.mark.parametrize("file", ["config.json", "tokenizer.json", "model.safetensors"])
def test_a_linked_checkpoint_file_is_refused_by_name(tmp_path, file):
    outside = tmp_path / "elsewhere"
    shutil.copytree(TOY, outside)                        # a perfectly good file, but not this folder's own
    folder = _linked_folder(tmp_path, "toy-linked", {file: outside / file})
    with pytest.raises(CheckpointError, match=f"{file}: a symbolic link, not a file of its folder itself; not read"):
        load_checkpoint(folder)


def test_a_linked_folder_inside_a_model_folder_is_outside_it(tmp_path):
    from model.io.files import read_text_limited
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "state.json").write_text(SECRET)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "last").symlink_to(tmp_path / "secret")
    with pytest.raises(ValueError, match="last/state.json: lies outside its folder"):
        read_text_limited(tmp_path / "run" / "last" / "state.json", 100, within=tmp_path / "run")
    assert read_text_limited(tmp_path / "secret" / "state.json", 100, within=tmp_path / "secret") == SECRET


def test_links_out_of_a_model_folder_show_no_server_file(tmp_path, monkeypatch):
    """The hostile class linked README.md to /etc/shadow, presets.txt to /etc/passwd (its first line became the
    default sentence), metrics.json and a test split to other files: each is refused by name, nothing shown."""
    from viz.services import presets
    from viz.services.models import model_file_text
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    (tmp_path / "secret.json").write_text(json.dumps({"SECRET_KEY_xyz": 1}))
    models = tmp_path / "models"
    model_id = f"toy-links-{tmp_path.name}"
    _linked_folder(models, model_id, {"README.md": secret, "presets.txt": secret, "test.tsv": secret,
                                      "train_log.csv": secret, "metrics.json": tmp_path / "secret.json"})
    (models / "toy-linked-folder").symlink_to(tmp_path / "elsewhere-model")
    shutil.copytree(TOY, tmp_path / "elsewhere-model")
    monkeypatch.setenv("TRANSFORMER_VIZ_MODELS", str(models))
    assert model_ids() == [model_id]                               # a folder linked from outside is not offered
    for name in ("README.md", "presets.txt", "test.tsv", "train_log.csv"):
        with pytest.raises(ValueError, match=f"^{model_id}/{name}: a symbolic link"):
            model_file_text(model_id, name)
    assert presets.preset_groups(model_id) == {"start": ["The man went to the house."]}
    assert presets.presets_refused(model_id).startswith(f"{model_id}/presets.txt: a symbolic link")
    assert "symbolic link" in load_checkpoint(models / model_id).extra["metrics"]["error"]
    for page in ("about.py", "home.py"):
        at = run_page(page, model=model_id)
        no_exceptions(at)
        shown = texts(at) + html_bodies(at)
        assert "SECRET_KEY_xyz" not in shown and "root:x" not in shown
        assert at.sidebar.text_area(key="text").value == "The man went to the house."
        said = texts(at).replace("\\", "").replace("\u2060", "")
        assert "presets.txt: a symbolic link" in said, said
        if page == "about.py":
            assert "README.md: a symbolic link" in said


# -- issue 35, item 17: the weights' header is held against config.json before any tensor is built -------------
def test_a_huge_config_beside_small_weights_is_refused_from_the_header(tmp_path, monkeypatch):
    """A config.json declaring ~940M parameters beside the toy's 700 KB weights took 150 s and 3.9 GB to refuse
    (the model was built first); the header's shapes are compared on the meta device, nothing is allocated."""
    import time
    from model.io import checkpoint
    folder = tmp_path / "toy-huge-config"
    shutil.copytree(TOY, folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(d_model=4096, n_heads=16, d_ff=16384)                    # 939,839,501 parameters
    (folder / "config.json").write_text(json.dumps(cfg))
    built = []
    real = checkpoint.Transformer
    monkeypatch.setattr(checkpoint, "Transformer", lambda config: built.append(
        torch.empty(0).device.type) or real(config))
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=r"model.safetensors: .* has shape \(64,\), config.json implies \(4096,\)"):
        load_checkpoint(folder)
    assert time.perf_counter() - start < 20 and built == ["meta"]        # one model, on the meta device only


# -- finding 4: a number box's value from the browser is checked like a URL value ------------------------------
NUMBER_BOXES = [("explorer.py", {}, "beam", 1, 8, 3), ("explorer.py", {}, "max_tokens", 8, 512, 100),
                ("decoding.py", {"beam": 2}, "decoding-beam", 2, 8, 3),
                ("attribution.py", {"view": "source"}, "attr-steps", 4, 128, 16)]


@pytest.mark.parametrize("page, params, key, lo, hi, good", NUMBER_BOXES, ids=[b[2] for b in NUMBER_BOXES])
def test_a_number_box_refuses_what_no_box_sends(page, params, key, lo, hi, good):
    """NaN or infinity sent for the beam box crashed the page (Streamlit's int()); beam 64 silently became
    greedy while 8 was accepted. Each is now the URL values' notice, and the last good value stays."""
    at = run_page(page, model="toy-reverse", text="a b c", **params)
    box = lambda: next(b for b in at.get("number_input") if b.key == key)          # noqa: E731
    box().set_value(good).run()
    no_exceptions(at)
    for bad in (float("nan"), float("inf"), float("-inf"), hi + 1, 10 ** 30, lo - 1, lo + 0.5) + ((64,) if hi < 64 else ()):
        box().set_value(bad).run()
        no_exceptions(at)
        shown = texts(at).replace("\\", "").replace("\u2060", "")
        assert f"the value sent is not a whole number from {lo} to {hi}; using {good}." in shown, (bad, shown[-300:])
    box().set_value(lo).run()
    no_exceptions(at)
    assert "the value sent is not" not in texts(at)
