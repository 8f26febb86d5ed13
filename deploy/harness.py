"""deploy/serve.py as a child process on free loopback ports, for tests/test_deploy.py and
bench/load_deploy.py: start, wait until every worker and nginx answer, read state.json, stop with TERM
(as Ctrl-C would), bounded in time everywhere."""
from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from nginx_conf import ROOT

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).is_file()), None)
START_TIMEOUT, STOP_TIMEOUT = 180, 30


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_ports(n: int) -> int:
    """First of n consecutive free loopback ports (the workers take base, base+1, ...)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n < 65536 and all(port_is_free(base + i) for i in range(1, n)):
            return base
    raise RuntimeError(f"no run of {n} free ports")


def get(url: str, cookie: str | None = None, timeout: float = 10) -> tuple[int, dict, bytes]:
    """(status, headers, body); status 0 when nothing answered. `cookie` is a Cookie header ('name=value');
    headers are a dict, but every Set-Cookie is kept, under 'Set-Cookie' as a list."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, headers_of(response.headers), response.read()
    except urllib.error.HTTPError as e:
        return e.code, headers_of(e.headers), e.read()
    except OSError:
        return 0, {}, b""


def headers_of(message) -> dict:
    headers = dict(message)
    headers["Set-Cookie"] = message.get_all("Set-Cookie") or []
    return headers


def set_cookie(headers: dict, name: str) -> str | None:
    """The value a response's Set-Cookie headers give cookie `name` (None: not set)."""
    values = headers.get("Set-Cookie") or []
    for line in [values] if isinstance(values, str) else values:
        key, _, rest = line.partition("=")
        if key.strip() == name:
            return rest.split(";")[0]
    return None


def worker_healthy(port: int) -> bool:
    return get(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)[0] == 200


class Deployment:
    """deploy/serve.py with `workers` workers; nginx exposes X-Upstream (which worker answered)."""

    def __init__(self, workers: int = 2, run_dir: Path | None = None, env: dict | None = None, args: tuple = ()):
        self.own_run_dir = run_dir is None              # removed after a clean stop; kept (logs) after a failure
        self.run_dir = Path(run_dir or tempfile.mkdtemp(prefix="deploy-harness-"))
        self.port, self.worker_base = free_ports(1), free_ports(workers)
        self.base = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--workers", str(workers),
                   "--port", str(self.port), "--worker-port-base", str(self.worker_base),
                   "--run-dir", str(self.run_dir), "--expose-upstream", "--nginx", NGINX or "nginx", *args]
        with open(self.run_dir / "serve.log", "wb") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)

    def state(self) -> dict:
        return json.loads((self.run_dir / "state.json").read_text())

    def redis_url(self) -> str:
        """The URL of the Redis serve.py runs for the classes, from its config in the run folder (this user's
        file: the operator's, as the workers' is theirs); state.json never holds the password."""
        import redis_local
        lines = dict(line.split(" ", 1) for line in (self.run_dir / "redis" / "redis.conf").read_text().splitlines())
        return redis_local.socket_url(Path(lines["unixsocket"]), lines["requirepass"])

    @property
    def cookie(self) -> str:
        """The routing cookie's name (deploy/nginx_conf.py cookie_name)."""
        return self.state()["cookie"]

    def ready(self) -> bool:
        if not (self.run_dir / "state.json").is_file():
            return False
        return all(worker_healthy(w["port"]) for w in self.state()["workers"]) and get(self.base + "/healthz")[0] == 200

    def wait_ready(self, timeout: float = START_TIMEOUT) -> "Deployment":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve.py exited with {self.proc.returncode}\n{self.log()}")
            if self.ready():
                return self
            time.sleep(0.5)
        raise RuntimeError(f"deployment not ready in {timeout} s\n{self.log()}")

    def stop(self) -> list[int]:
        """TERM the supervisor; returns the pids of the workers and Redis it had, for checking they are gone."""
        state = self.state() if (self.run_dir / "state.json").is_file() else {"workers": []}
        pids = [w["pid"] for w in state["workers"]] + ([state["redis"]["pid"]] if state.get("redis") else [])
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return pids

    def log(self) -> str:
        return (self.run_dir / "serve.log").read_text(errors="replace")[-3000:]

    def __enter__(self) -> "Deployment":
        try:
            return self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, exc_type, *exc) -> None:
        self.stop()
        if self.own_run_dir and exc_type is None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
