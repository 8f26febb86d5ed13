"""Reading a file that a person or a model folder names, without trusting it.

Only a regular file is read (a FIFO would block the reader, /dev/zero never ends, /dev/stdin waits), and
only when stat() says it is at most `limit` bytes; the read itself stops one byte past the limit, so a
file that grows after the check is refused too. The file is opened non-blocking and checked with fstat()
on the open descriptor, so a path swapped for a FIFO between a check and the open cannot block either.

Refusals are ValueErrors naming the file, its size and the limit (one line for a command, a sentence for
a page); a missing file stays a FileNotFoundError.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

MiB = 2 ** 20


def describe_kind(mode: int) -> str:
    """What a stat() mode is, in words: 'a file', 'a folder', 'a pipe (FIFO)', 'a device', 'a socket'."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size_line(path, size: int, limit: int, why: str) -> str:
    return f"{path}: {size:,} bytes, more than the {limit:,} read here{f' ({why})' if why else ''}; not read"


def read_bytes_limited(path: str | Path, limit: int, why: str = "") -> bytes:
    """The bytes of a regular file of at most `limit` bytes; ValueError for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, not a file; not read") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: {describe_kind(info.st_mode)}, not a regular file; not read")
        if info.st_size > limit:
            raise ValueError(_size_line(path, info.st_size, limit, why))
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
        if len(data) > limit:                      # it grew after the check
            raise ValueError(_size_line(path, len(data), limit, why))
        return data
    finally:
        os.close(fd)


def read_text_limited(path: str | Path, limit: int, why: str = "", errors: str = "strict") -> str:
    """UTF-8 text of a regular file of at most `limit` bytes (universal newlines, as open() reads text).
    errors='strict' raises UnicodeDecodeError on a bad byte; 'replace' keeps going."""
    data = read_bytes_limited(path, limit, why)
    text = data.decode("utf-8", errors=errors)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_regular_file(path: str | Path, limit: int, why: str = "") -> int:
    """stat() only, nothing read: the size of a regular file of at most `limit` bytes; ValueError else
    (for files a library opens itself, e.g. the weights)."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path}: {describe_kind(info.st_mode)}, not a regular file; not read")
    if info.st_size > limit:
        raise ValueError(_size_line(path, info.st_size, limit, why))
    return info.st_size
