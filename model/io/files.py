"""Reading a file that a person or a model folder names, without trusting it.

Only a regular file is read (a FIFO would block the reader, /dev/zero never ends, /dev/stdin waits), and
only when stat() says it is at most `limit` bytes; the read itself stops one byte past the limit, so a
file that grows after the check is refused too. The file is opened non-blocking and checked with fstat()
on the open descriptor, so a path swapped for a FIFO between a check and the open cannot block either.

A file read from a folder (`within`: a model folder, a training run) must be that folder's own: a symbolic
link is refused (opened with O_NOFOLLOW, so a link swapped in after the check is refused too), and so is a
path whose real location is outside the folder. Anyone who can drop a folder into the models folder could
otherwise show every viewer a server file (README.md -> /etc/shadow as the model card).

Refusals are ValueErrors naming the file, its size and the limit (one line for a command, a sentence for
a page); a missing file stays a FileNotFoundError.

A file a command writes (write_replacing) never goes through a symbolic link: it is written beside its name
and renamed onto it, so a link at that name is replaced, not followed (`lesson --out ~/x.html` where x.html ->
~/.bashrc overwrote .bashrc).
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
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


def _link_line(path) -> str:
    return f"{path}: a symbolic link, not a file of its folder itself; not read"


def check_within(path: str | Path, folder: str | Path | None) -> None:
    """ValueError unless `path` is `folder`'s own: not a symbolic link, and really inside the folder (a linked
    subfolder such as last/ counts as outside when it leads elsewhere). No check when folder is None."""
    if folder is None:
        return
    if os.path.islink(path):
        raise ValueError(_link_line(path))
    real, home = os.path.realpath(path), os.path.realpath(folder)
    if os.path.commonpath([real, home]) != home:
        raise ValueError(f"{path}: lies outside its folder {folder} (through a linked folder); not read")


def read_bytes_limited(path: str | Path, limit: int, why: str = "", within: str | Path | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (and `within`'s own, see above); ValueError for
    anything else."""
    check_within(path, within)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | (os.O_NOFOLLOW if within is not None else 0))
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, not a file; not read") from None
    except OSError as e:
        if e.errno == errno.ELOOP and within is not None:       # a link swapped in after the check
            raise ValueError(_link_line(path)) from None
        raise
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


def read_text_limited(path: str | Path, limit: int, why: str = "", errors: str = "strict",
                      within: str | Path | None = None) -> str:
    """UTF-8 text of a regular file of at most `limit` bytes (universal newlines, as open() reads text).
    errors='strict' raises UnicodeDecodeError on a bad byte; 'replace' keeps going."""
    data = read_bytes_limited(path, limit, why, within)
    text = data.decode("utf-8", errors=errors)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_regular_file(path: str | Path, limit: int, why: str = "", within: str | Path | None = None) -> int:
    """stat() only, nothing read: the size of a regular file of at most `limit` bytes (and `within`'s own);
    ValueError else (for files a library opens itself, e.g. the weights)."""
    check_within(path, within)
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path}: {describe_kind(info.st_mode)}, not a regular file; not read")
    if info.st_size > limit:
        raise ValueError(_size_line(path, info.st_size, limit, why))
    return info.st_size


def write_replacing(path: str | Path, data: bytes | str) -> Path:
    """Write `data` (str as UTF-8) to `path` through a new file beside it, renamed onto the name: a symbolic link
    there is replaced, never followed, and a reader never sees half a file. Permissions as open() would give."""
    path = Path(path)
    fd, staging = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o666 & ~umask)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return path
