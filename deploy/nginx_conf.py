"""Render deploy/nginx.conf.template for a list of Streamlit workers.

    python deploy/nginx_conf.py --port 8080 --upstreams 127.0.0.1:8601,127.0.0.1:8602 --run-dir /tmp/tv

writes RUN_DIR/nginx.conf (and the log and temp folders nginx needs there); deploy/serve.py calls
render() itself. The request-body limit follows .streamlit/config.toml, so the two cannot drift apart.

Routing (docs/deploy.md, "Sticky by browser"): each render draws, for every upstream, a pool of secret
random tokens. The cookie holds one token; nginx knows which upstream each token belongs to and sends the
request there (the other upstreams are that group's backups). Every response sets the cookie to a token of
the upstream that actually answered, so after a failover the browser's plain requests follow its websocket.
A value nginx did not issue names no upstream (such requests go round-robin), and the per-browser limits
key by the cookie's first 64 bytes, so any key fits nginx's 255-byte limit.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import secrets
import socket
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
STREAMLIT_CONFIG = ROOT / ".streamlit" / "config.toml"
COOKIE = "tv_route"               # the cookie's name is this plus a tag of the listen address and upstreams
TOKENS_PER_UPSTREAM = 2000        # split_clients steps of 0.05%; browsers that draw one token share its limits
LIMIT_KEY_BYTES = 64              # the per-browser limits' key: at most this much of the cookie (nginx: <= 255)
COOKIE_ATTRIBUTES = "Path=/; HttpOnly; SameSite=Lax; Max-Age=43200"
MULTIPART_ROOM_KB = 64           # boundary lines and part headers around an uploaded file
TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
PROXY_HEADERS = """\
            proxy_set_header Host $http_host;      # Streamlit's websocket compares Origin with Host
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;"""


@dataclass
class Limits:
    client_connections: int = 16      # one browser: a websocket per tab plus a few parallel fetches
    client_rate: int = 20             # requests per second per browser, after the burst
    client_burst: int = 200           # a first page load fetches ~40 static files at once
    address_connections: int = 1000   # a whole lecture hall behind one NAT address
    address_rate: int = 500
    address_burst: int = 5000


def max_upload_mb(config_path: Path = STREAMLIT_CONFIG) -> int:
    """server.maxUploadSize in MB (Streamlit's default is 200 when the file does not set it)."""
    try:
        return int(tomllib.loads(config_path.read_text(encoding="utf-8")).get("server", {}).get("maxUploadSize", 200))
    except (OSError, tomllib.TOMLDecodeError):
        return 200


def max_body(config_path: Path = STREAMLIT_CONFIG) -> str:
    return f"{max_upload_mb(config_path) * 1024 + MULTIPART_ROOM_KB}k"


def parse_upstreams(text: str) -> list[str]:
    """'host:port,host:port' -> ['host:port', ...]; a bad entry is an error naming it."""
    upstreams = [u.strip() for u in text.split(",") if u.strip()]
    for upstream in upstreams:
        host, _, port = upstream.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"upstream {upstream!r}: expected host:port")
    return upstreams


def real_ip_block(trusted: list[str]) -> str:
    """Behind another proxy (the front machine of a multi-machine setup), limit by the student's
    address from X-Forwarded-For, not by the front proxy's."""
    if not trusted:
        return ""
    lines = [f"    set_real_ip_from {address};" for address in trusted]
    return "\n".join(lines + ["    real_ip_header X-Forwarded-For;", "    real_ip_recursive on;", ""])


def cookie_name(listen: str, upstreams: list[str]) -> str:
    """tv_route_<tag>: a front machine and the machines behind it (docs/deploy.md) each set their own
    cookie, as each honours only the tokens it issued."""
    return f"{COOKIE}_{hashlib.sha256((listen + ' ' + ','.join(upstreams)).encode()).hexdigest()[:8]}"


def addresses(upstream: str) -> list[str]:
    """'host:port' as nginx writes it in $upstream_addr: a name is resolved (as nginx does at start)."""
    host, _, port = upstream.rpartition(":")
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host.strip("[]"), int(port), socket.AF_INET,
                                                           socket.SOCK_STREAM)}
    except OSError:
        found = set()
    return sorted({upstream} | {f"{a}:{port}" for a in found})


def route_tokens(upstreams: list[str], per_upstream: int = TOKENS_PER_UPSTREAM) -> list[list[str]]:
    """A fresh pool of secret tokens per upstream (32 hex digits each, drawn anew at every render)."""
    return [[secrets.token_hex(16) for _ in range(per_upstream)] for _ in upstreams]


def routing_block(upstreams: list[str], cookie: str, tokens: list[list[str]]) -> str:
    """The maps, split_clients and upstream groups that route by an issued token (module docstring)."""
    var = f"$cookie_{cookie}"
    groups = [f"tv_worker_{i}" for i in range(len(upstreams))]
    percent = 100 / len(tokens[0])
    out = ["    # The route: a token nginx issued names its upstream's group; anything else goes round-robin.",
           "    map_hash_max_size 65536;", "    map_hash_bucket_size 128;",
           f"    map {var} $route_group {{", "        default tv_any;"]
    out += [f"        {t} {g};" for g, pool in zip(groups, tokens) for t in pool]
    out += ["    }", "",
            "    # Per-browser limits key by the cookie (an issued token: 32 bytes), cut to "
            f"{LIMIT_KEY_BYTES} bytes: a key always fits.",
            f"    map {var} $client_key {{", '        ""  $request_id;',
            f'        "~^(?<tv_limit_key>.{{1,{LIMIT_KEY_BYTES}}})"  $tv_limit_key;', "    }", "",
            "    # Which group's upstream answered: the last address nginx tried.",
            "    map $upstream_addr $answered_group {", '        default "";']
    for group, upstream in zip(groups, upstreams):
        out += [rf'        "~(^|\s){re.escape(a)}$" {group};' for a in addresses(upstream)]
    out += ["    }"]
    for group, pool in zip(groups, tokens):
        out += [f'    split_clients "$request_id" $fresh_{group} {{']
        out += [f"        {percent:.2f}% {t};" for t in pool[:-1]] + [f"        * {pool[-1]};", "    }"]
    out += ["", "    # The token the response sets: the one sent when its upstream answered, else a fresh one of the",
            "    # upstream that did (after a failover, a restart, or for a new browser); none when nginx answered.",
            '    map "$route_group>$answered_group" $route_token {', '        default "";']
    for group in groups:
        out += [f'        "{group}>{group}" {var};', f'        "~>{group}$" $fresh_{group};']
    out += ["    }", "    map $route_token $route_set_cookie {", '        "" "";',
            f'        default "{cookie}=$route_token; {COOKIE_ATTRIBUTES}";', "    }"]
    return "\n".join(out)


# Idle connections to a worker are closed by nginx before the worker closes them (Streamlit's uvicorn: after 5 s):
# a request sent on a connection the worker had just closed failed, and counted as that worker's failure.
UPSTREAM_KEEPALIVE_TIMEOUT = "4s"


def upstream_groups(upstreams: list[str]) -> str:
    """tv_any (round-robin, for requests without an issued token) and one group per upstream: its own server
    first, the others as backups (they take its browsers while it is down; the cookie then follows). A group's
    own server is never marked down (max_fails=0): each request tries it first, so one failed request cannot
    send the next ones to a backup that is dead ("no live upstreams" while the own worker was alive)."""
    def server(u: str, backup: bool = False, never_down: bool = False) -> str:
        fails = "max_fails=0" if never_down else "max_fails=1 fail_timeout=5s"
        return f"        server {u} {fails}{' backup' if backup else ''};"

    def pool(size: int) -> list[str]:
        return [f"        keepalive {size};", f"        keepalive_timeout {UPSTREAM_KEEPALIVE_TIMEOUT};", "    }"]
    blocks = ["    upstream tv_any {", *(server(u) for u in upstreams), *pool(32)]
    for i, own in enumerate(upstreams):
        blocks += [f"    upstream tv_worker_{i} {{", server(own, never_down=True),
                   *(server(u, backup=True) for u in upstreams if u != own), *pool(16)]
    return "\n".join(blocks)


LOG_FILES = ("access.log", "error.log")


def private_file(path: Path) -> None:
    """Create `path` (or keep it) readable by its owner only: nginx opens an existing log as it is (0644 when it
    creates one), so a log made here first stays private."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    os.chmod(path, 0o600)


def private_run_dir(run_dir: Path) -> None:
    """The run folder and its logs for the owner alone (0700, files 0600): the logs name students' addresses,
    and nginx's error log may quote a request's line."""
    for folder in (run_dir, run_dir / "logs"):
        os.chmod(folder, 0o700)
    for name in LOG_FILES:
        private_file(run_dir / "logs" / name)


def render(upstreams: list[str], listen: str, run_dir: Path, *, limits: Limits = Limits(),  # noqa: B008 - frozen
           expose_upstream: bool = False, trusted_proxies: list[str] = (), nginx_workers: str = "1",
           tokens: list[list[str]] | None = None) -> Path:
    """Write run_dir/nginx.conf and the folders it names; return the config's path."""
    if not upstreams:
        raise ValueError("no upstream workers: give --workers N and/or --upstreams host:port,...")
    run_dir = Path(run_dir).resolve()
    for sub in ["logs", *(f"tmp/{d}" for d in TEMP_DIRS)]:
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    private_run_dir(run_dir)
    if len(set(upstreams)) != len(upstreams):
        raise ValueError(f"an upstream is listed twice: {upstreams}")
    cookie = cookie_name(listen, upstreams)
    values = {
        "RUN_DIR": str(run_dir), "LISTEN": listen, "NGINX_WORKERS": nginx_workers,
        "MAX_BODY": max_body(),
        "ROUTING": routing_block(upstreams, cookie, tokens or route_tokens(upstreams)),
        "UPSTREAMS": upstream_groups(upstreams),
        # Names the worker that answered; for tests and load runs only, as it shows internal addresses.
        "UPSTREAM_HEADER": '        add_header X-Upstream $upstream_addr always;' if expose_upstream else "",
        "REAL_IP": real_ip_block(list(trusted_proxies)),
        "PROXY_HEADERS": PROXY_HEADERS,
        "CLIENT_CONNECTIONS": limits.client_connections, "CLIENT_RATE": limits.client_rate,
        "CLIENT_BURST": limits.client_burst, "ADDRESS_CONNECTIONS": limits.address_connections,
        "ADDRESS_RATE": limits.address_rate, "ADDRESS_BURST": limits.address_burst,
    }
    text = TEMPLATE.read_text(encoding="utf-8")
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    left = set(re.findall(r"@[A-Z_]+@", text))
    if left:
        raise ValueError(f"{TEMPLATE.name}: placeholders without a value: {sorted(left)}")
    path = run_dir / "nginx.conf"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)                       # the tokens are secrets: only the owner reads them
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--upstreams", required=True, help="host:port,host:port,...")
    parser.add_argument("--run-dir", required=True, type=Path)
    parser.add_argument("--expose-upstream", action="store_true")
    parser.add_argument("--real-ip-from", default="", help="comma-separated addresses of trusted front proxies")
    args = parser.parse_args(argv)
    path = render(parse_upstreams(args.upstreams), f"{args.host}:{args.port}", args.run_dir,
                  expose_upstream=args.expose_upstream,
                  trusted_proxies=[a for a in args.real_ip_from.split(",") if a])
    print(path)


if __name__ == "__main__":
    main()
