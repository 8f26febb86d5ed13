"""Sentences from an uploaded file: .txt (one per line) or .csv (a `text` column). Pure, testable."""
from __future__ import annotations

import codecs
import csv
import io

MAX_UPLOAD_BYTES = 1_000_000
MAX_SENTENCES = 5000
TEXT_COLUMNS = ("text", "sentence", "source", "en")


class UploadError(ValueError):
    """The file cannot be used; the message says why in one sentence."""


def parse_upload(filename: str, data: bytes) -> list[str]:
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(f"the file is {len(data) / 1e6:.2f} MB; the limit is {MAX_UPLOAD_BYTES / 1e6:.0f} MB")
    if not data.strip():
        raise UploadError("the file is empty")
    text = _decode(data)
    if filename.lower().endswith(".csv"):
        sentences = _csv_sentences(text)
    else:
        sentences = [line.strip() for line in text.splitlines()]
    sentences = [s for s in sentences if s]
    if not sentences:
        raise UploadError("the file has no sentences")
    return sentences[:MAX_SENTENCES]


def _decode(data: bytes) -> str:
    """UTF-8 (with or without a byte-order mark), or UTF-16 with its byte-order mark (what Windows'
    Notepad and Excel write as "Unicode"); anything else is refused with the reason."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise UploadError("the file says it is UTF-16 but is not; save it as UTF-8 and upload again") from None
    if b"\x00" in data[:4096]:
        raise UploadError("this looks like a binary file, not UTF-8 text; upload plain text (.txt) or .csv")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UploadError("the file is not UTF-8 text; save it as UTF-8 and upload again") from None


def _csv_sentences(text: str) -> list[str]:
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as e:
        raise UploadError(f"the CSV could not be read ({e})") from None
    if not rows:
        raise UploadError("the CSV has no rows")
    columns = {(c or "").strip().lower(): c for c in rows[0].keys()}
    for name in TEXT_COLUMNS:
        if name in columns:
            return [(row.get(columns[name]) or "").strip() for row in rows]
    shown = ", ".join(repr(c) for c in list(columns)[:5])
    raise UploadError(f"the CSV needs a 'text' column; it has {shown}")
