"""A private Redis for the class store: Debian's redis-server on a Unix socket only (no TCP port), with a random
password, its config in a file only its owner reads (a password on the command line would show in `ps`).
deploy/serve.py runs one for its workers; tests/test_class_store.py runs them for the store's tests."""
from __future__ import annotations

import secrets
import shutil
import time
import urllib.parse
from pathlib import Path

REDIS_SERVER = shutil.which("redis-server") or next(
    (p for p in ("/usr/bin/redis-server",) if Path(p).is_file()), None)
PASSWORD_BYTES = 32


def write_config(folder: Path, persist: bool = True, password: str | None = None) -> tuple[Path, str]:
    """Write FOLDER/redis.conf (mode 0600) for a server on FOLDER/redis.sock keeping its data in FOLDER/data;
    returns (the config, the URL clients use). `persist`: append-only file on, synced at every write (a
    restarted or killed server has every class and answer back); off for quick tests."""
    folder = Path(folder).resolve()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / "data").mkdir(mode=0o700, exist_ok=True)
    password = password or secrets.token_urlsafe(PASSWORD_BYTES)
    socket_path = folder / "redis.sock"
    lines = ["port 0",                                  # no TCP: only this machine's processes of this user
             f"unixsocket {socket_path}", "unixsocketperm 700",
             f"requirepass {password}", f"dir {folder / 'data'}",
             "daemonize no", 'logfile ""', 'save ""',     # the append-only file alone persists
             # fsync before answering: a killed Redis (or machine) loses no answer it acknowledged. With
             # everysec a SIGKILL once lost the last writes here (docs/deploy.md, the class store)
             f"appendonly {'yes' if persist else 'no'}", "appendfsync always"]
    config = folder / "redis.conf"
    config.touch(mode=0o600)
    config.chmod(0o600)
    config.write_text("\n".join(lines) + "\n")
    return config, socket_url(socket_path, password)


def socket_url(socket_path: Path, password: str) -> str:
    return f"unix://{socket_path}?" + urllib.parse.urlencode({"password": password})


def command(config: Path, binary: str | None = None) -> list[str]:
    return [binary or REDIS_SERVER or "redis-server", str(config)]


def answers(url: str, timeout: float = 1.0) -> bool:
    import redis
    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def wait_until_answers(url: str, timeout: float = 15.0, alive=lambda: True) -> bool:
    """True once the server answers PING (its data loaded); False after `timeout` or once `alive()` is False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        if answers(url):
            return True
        time.sleep(0.05)
    return False
