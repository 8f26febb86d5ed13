"""Render deploy/nginx.conf.template for a list of Streamlit workers.

    python deploy/nginx_conf.py --port 8080 --upstreams 127.0.0.1:8601,127.0.0.1:8602 --run-dir /tmp/tv

writes RUN_DIR/nginx.conf (and the log and temp folders nginx needs there); deploy/serve.py calls
render() itself. The request-body limit follows .streamlit/config.toml, so the two cannot drift apart.
"""
from __future__ import annotations

import argparse
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
STREAMLIT_CONFIG = ROOT / ".streamlit" / "config.toml"
COOKIE = "tv_route"
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


def render(upstreams: list[str], listen: str, run_dir: Path, *, limits: Limits = Limits(),
           expose_upstream: bool = False, trusted_proxies: list[str] = (), nginx_workers: str = "1") -> Path:
    """Write run_dir/nginx.conf and the folders it names; return the config's path."""
    if not upstreams:
        raise ValueError("no upstream workers: give --workers N and/or --upstreams host:port,...")
    run_dir = Path(run_dir).resolve()
    for sub in ["logs", *(f"tmp/{d}" for d in TEMP_DIRS)]:
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    values = {
        "RUN_DIR": str(run_dir), "LISTEN": listen, "COOKIE": COOKIE, "NGINX_WORKERS": nginx_workers,
        "MAX_BODY": max_body(),
        "UPSTREAMS": "\n".join(f"        server {u} max_fails=1 fail_timeout=5s;" for u in upstreams),
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
    path.write_text(text, encoding="utf-8")
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
