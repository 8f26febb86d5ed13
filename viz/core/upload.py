"""Sentences from an uploaded file: .txt (one per line) or .csv (a `text` column). Pure, testable."""
from __future__ import annotations

import codecs
import csv
import io

from model.errors import InputError
from viz.core.i18n import message

MAX_UPLOAD_BYTES = 1_000_000
MAX_SENTENCES = 5000
TEXT_COLUMNS = ("text", "sentence", "source", "en")


class UploadError(InputError):
    """The file cannot be used; the message says why in one sentence (a catalogue key, so the page can say
    it in the reader's language: viz.core.i18n.error_text; str() is the English)."""

    def __init__(self, key: str, **values):
        super().__init__(key, message("en", key, **values), **values)


def parse_upload(filename: str, data: bytes) -> list[str]:
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError("upload.too_big", size=f"{len(data) / 1e6:.2f}", limit=f"{MAX_UPLOAD_BYTES / 1e6:.0f}")
    if not data.strip():
        raise UploadError("upload.empty")
    text = _decode(data)
    if filename.lower().endswith(".csv"):
        sentences = _csv_sentences(text)
    else:
        sentences = [line.strip() for line in text.splitlines()]
    sentences = [s for s in sentences if s]
    if not sentences:
        raise UploadError("upload.no_sentences")
    return sentences[:MAX_SENTENCES]


def _decode(data: bytes) -> str:
    """UTF-8 (with or without a byte-order mark), or UTF-16 with its byte-order mark (what Windows'
    Notepad and Excel write as "Unicode"); anything else is refused with the reason."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise UploadError("upload.fake_utf16") from None
    if b"\x00" in data[:4096]:
        raise UploadError("upload.binary")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UploadError("upload.not_utf8") from None


def _csv_sentences(text: str) -> list[str]:
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as e:
        raise UploadError("upload.csv_unreadable", error=e) from None
    if not rows:
        raise UploadError("upload.csv_no_rows")
    columns = {(c or "").strip().lower(): c for c in rows[0].keys()}
    for name in TEXT_COLUMNS:
        if name in columns:
            return [(row.get(columns[name]) or "").strip() for row in rows]
    shown = ", ".join(repr(c) for c in list(columns)[:5])
    raise UploadError("upload.csv_no_text", columns=shown)
