"""Serve a lecture hall: N Streamlit workers on loopback, supervised, behind one nginx.

    deploy/serve.sh --workers 2 --port 8080 [--host 0.0.0.0] [--upstreams other:8501,...] [--redis URL]
                    [--public-url https://class.example.edu/]

Worker i listens on 127.0.0.1:(PORT+i) (or --worker-port-base+i-1); a worker that dies is started
again after a backoff (1 s, doubling to 30 s; reset once it has stayed up a minute). nginx runs in
the foreground as a child too, with everything it writes in the run folder (--run-dir, default a
fresh temp folder). Ctrl-C or TERM stops nginx and every worker. The run folder's state.json names
the workers' ports and current pids (bench/load_deploy.py kills one from there) and the routing
cookie's name. The run folder and its logs are its owner's alone (0700, files 0600), and nginx logs each
request's path, never its query string or Referer (deploy/nginx.conf.template).

Each worker is told, in its environment, whom to trust and where it is reached: TRANSFORMER_VIZ_TRUSTED_PROXIES
(the local nginx's addresses: only a request from there may name the student's address in X-Real-IP) and, with
--public-url, TRANSFORMER_VIZ_PUBLIC_URL (the address students open: the class's join link and QR code).

The workers keep their live classes in one Redis (viz/classroom/redis_store.py), named to them by
TRANSFORMER_VIZ_REDIS: by default a redis-server this supervisor runs and restarts like a worker, on a
Unix socket in RUN/redis with a random password and its append-only file there (--redis-dir: reuse it to
keep classes across a restart of serve.sh); --redis URL uses a Redis that runs elsewhere instead (the one
that workers on several machines share). It is stopped last, after the workers' last writes.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import redis_local
from nginx_conf import ROOT, cookie_name, parse_upstreams, render

sys.path.insert(0, str(ROOT))
from viz.classroom.store import PUBLIC_URL_ENV, REDIS_URL_ENV, TRUSTED_PROXIES_ENV

BACKOFF_FIRST, BACKOFF_MAX, STABLE_AFTER = 1.0, 30.0, 60.0
POLL_SECONDS = 0.5
STOP_GRACE = 10.0
NGINX_SETTLE = 10.0
REDIS_READY_S = 30.0          # a big append-only file takes a while to load
SOCKET_PATH_MAX = 100         # a Unix socket's path has at most 107 bytes on Linux
LOCAL_PROXIES = "127.0.0.1,::1"   # the workers listen on loopback: every request comes from the local nginx


@dataclass
class Child:
    """One supervised process: how to start it, and its restart bookkeeping."""
    name: str
    command: list[str]
    log_path: Path
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    backoff: float = BACKOFF_FIRST
    restart_at: float | None = None
    restarts: int = 0
    extra: dict = field(default_factory=dict)
    env: dict | None = None                      # the supervisor's environment when None

    def start(self) -> None:
        log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")   # private
        # A process group of its own: a Ctrl-C in the terminal reaches only the supervisor, which
        # then stops children in order (nginx first, so no request reaches a dying worker).
        self.proc = subprocess.Popen(self.command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                     stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=die_with_parent)
        log.close()
        self.started_at, self.restart_at = time.monotonic(), None

    def check(self, now: float) -> None:
        """Schedule a restart when it has died; start it when its backoff is over."""
        if self.restart_at is not None:
            if now >= self.restart_at:
                self.restarts += 1
                say(f"{self.name}: restarting (restart {self.restarts})")
                self.start()
            return
        if self.proc.poll() is None:
            return
        if now - self.started_at > STABLE_AFTER:
            self.backoff = BACKOFF_FIRST
        say(f"{self.name}: exited with {self.proc.returncode}; restart in {self.backoff:.0f} s")
        self.restart_at = now + self.backoff
        self.backoff = min(BACKOFF_MAX, self.backoff * 2)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()

    def wait_stopped(self, deadline: float) -> None:
        if not self.proc:
            return
        try:
            self.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def die_with_parent() -> None:
    """Linux: the child gets TERM if the supervisor itself is killed (SIGKILL, OOM) and cannot stop it,
    so no worker is left holding its port."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def say(message: str) -> None:
    print(f"[serve {time.strftime('%H:%M:%S')}] {message}", flush=True)


def worker_env(redis_url: str | None, public_url: str | None) -> dict:
    """A worker's environment: the supervisor's, plus the class store, the proxies to trust and the public URL."""
    env = {**os.environ, TRUSTED_PROXIES_ENV: LOCAL_PROXIES}
    if redis_url:
        env[REDIS_URL_ENV] = redis_url
    if public_url:
        env[PUBLIC_URL_ENV] = public_url
    return env


def worker(port: int, logs: Path, redis_url: str | None, public_url: str | None = None) -> Child:
    command = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
               "--server.port", str(port), "--server.address", "127.0.0.1",
               # XSRF on (uploads need the token from the page's cookie). Streamlit then forces
               # enableCORS on too, so the websocket's Origin must match Host: nginx passes Host on.
               "--server.enableXsrfProtection", "true", "--server.headless", "true",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    return Child(f"worker :{port}", command, logs / f"worker-{port}.log", extra={"port": port},
                 env=worker_env(redis_url, public_url))


def redis_server(folder: Path, binary: str | None, logs: Path) -> tuple[Child, str]:
    """The class store's Redis (deploy/redis_local.py) and the URL the workers reach it by."""
    config, url = redis_local.write_config(folder, persist=True)
    return Child("redis", redis_local.command(config, binary), logs / "redis.log",
                 extra={"socket": str(folder / "redis.sock")}), url


def start_redis(child: Child, url: str) -> bool:
    child.start()
    if redis_local.wait_until_answers(url, REDIS_READY_S, alive=lambda: child.proc.poll() is None):
        return True
    lines = child.log_path.read_text(errors="replace").splitlines() if child.log_path.is_file() else []
    say(f"redis-server did not start: {' | '.join(lines[-3:])}")
    child.stop()
    child.wait_stopped(time.monotonic() + STOP_GRACE)
    return False


def nginx(run_dir: Path, binary: str) -> Child:
    command = [binary, "-p", str(run_dir), "-c", str(run_dir / "nginx.conf"), "-e", str(run_dir / "logs/error.log")]
    return Child("nginx", command, run_dir / "logs" / "nginx.out")


def child_state(child: Child) -> dict:
    return {"pid": child.proc.pid if child.proc else None, "restarts": child.restarts,
            "alive": bool(child.proc and child.proc.poll() is None)}


def write_state(run_dir: Path, children: list[Child], listen: str, upstreams: list[str]) -> None:
    """What tests and benchmarks read; never the Redis password."""
    workers = [{"port": c.extra["port"], **child_state(c)} for c in children if "port" in c.extra]
    redis = [{"socket": c.extra["socket"], **child_state(c)} for c in children if "socket" in c.extra]
    state = {"listen": listen, "upstreams": upstreams, "cookie": cookie_name(listen, upstreams), "workers": workers,
             "redis": redis[0] if redis else None, "supervisor_pid": os.getpid()}
    tmp = run_dir / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(run_dir / "state.json")          # readers never see half a file


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="Streamlit workers on this machine (0: only --upstreams)")
    parser.add_argument("--port", type=int, required=True, help="nginx listens here")
    parser.add_argument("--host", default="127.0.0.1", help="nginx's address (0.0.0.0 for the whole network)")
    parser.add_argument("--upstreams", default="", help="more workers elsewhere: host:port,host:port,...")
    parser.add_argument("--worker-port-base", type=int, help="first worker's port (default PORT+1)")
    parser.add_argument("--run-dir", type=Path, help="pid, logs, temp files, state.json (default: a new temp folder)")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    parser.add_argument("--expose-upstream", action="store_true", help="X-Upstream response header (tests, benchmarks)")
    parser.add_argument("--real-ip-from", default="", help="trusted front proxies' addresses, comma-separated")
    parser.add_argument("--redis", metavar="URL", help="the class store's Redis, shared by workers on several "
                        "machines: redis://:PASSWORD@HOST:6379/0 (default: run one here, on a Unix socket)")
    parser.add_argument("--redis-dir", type=Path, help="the Redis this runs: its socket, config and data "
                        "(default RUN/redis; reuse it and a restart keeps the classes)")
    parser.add_argument("--redis-server", default=redis_local.REDIS_SERVER, help="redis-server binary")
    parser.add_argument("--public-url", metavar="URL", help="the address students open, e.g. https://class.example.edu/ "
                        "(the class's join link and QR code; default: the teacher's browser's address)")
    args = parser.parse_args(argv)
    if args.public_url is not None:
        try:
            args.public_url = public_url(args.public_url)
        except ValueError as e:
            parser.error(f"--public-url: {e}")
    if args.workers < 0:
        parser.error("--workers must be 0 or more")
    if args.redis:
        import redis
        try:
            redis.ConnectionPool.from_url(args.redis)
        except ValueError as e:
            parser.error(f"--redis: {e}")
    elif args.workers and not args.redis_server:
        parser.error("redis-server not found (apt-get install -y redis-server), and no --redis URL given")
    return args


def public_url(text: str) -> str:
    """An http(s) address with a host and nothing after its path (a query or fragment would end up in every join
    link), without a trailing slash."""
    parts = urllib.parse.urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{text!r} is not an http:// or https:// address with a host")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{text!r}: no query, fragment or user name, only scheme://host[:port][/path]")
    try:
        _ = parts.port                 # urlsplit checks the port only when asked
    except ValueError as e:
        raise ValueError(f"{text!r}: {e}") from e
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def main(argv=None) -> int:
    args = parse_args(argv)
    run_dir = (args.run_dir or Path(tempfile.mkdtemp(prefix="transformer-viz-serve-"))).resolve()
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    base = args.worker_port_base or args.port + 1
    ports = [base + i for i in range(args.workers)]
    upstreams = [f"127.0.0.1:{p}" for p in ports] + parse_upstreams(args.upstreams)
    listen = f"{args.host}:{args.port}"
    render(upstreams, listen, run_dir, expose_upstream=args.expose_upstream,
           trusted_proxies=[a for a in args.real_ip_from.split(",") if a])
    store, redis_url = [], args.redis
    if args.workers and not redis_url:
        folder = (args.redis_dir or run_dir / "redis").resolve()
        if len(str(folder / "redis.sock")) > SOCKET_PATH_MAX:
            say(f"--redis-dir {folder}: too long a path for a Unix socket; choose a shorter one")
            return 1
        child, redis_url = redis_server(folder, args.redis_server, run_dir / "logs")
        store = [child]
    workers = [worker(p, run_dir / "logs", redis_url, args.public_url) for p in ports]
    children = store + workers + [nginx(run_dir, args.nginx)]

    stopping = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    if store and not start_redis(store[0], redis_url):
        return 1
    for child in workers + children[-1:]:
        child.start()
    say(f"run folder {run_dir}; nginx on http://{listen} -> {', '.join(upstreams)}")
    if redis_url:
        say(f"live classes in Redis at {store[0].extra['socket'] if store else 'the --redis URL'}")
    ok = supervise(children, workers, run_dir, listen, upstreams, stopping)
    shutdown(children)
    return 0 if ok else 1


def nginx_failed_to_start(child: Child, run_dir: Path) -> bool:
    """nginx exiting within seconds of its first start is a configuration or port problem that
    restarting cannot fix (it retries a busy port for ~2.5 s itself): say why, and give up."""
    if child.restarts or child.proc.poll() is None or time.monotonic() - child.started_at > NGINX_SETTLE:
        return False
    lines = [line for path in (run_dir / "logs" / "error.log", child.log_path) if path.is_file()
             for line in path.read_text(errors="replace").splitlines() if line.strip()]
    say(f"nginx exited at once with {child.proc.returncode}: " + " | ".join(lines[-3:]))
    return True


def supervise(children, workers, run_dir, listen, upstreams, stopping) -> bool:
    """Until Ctrl-C/TERM (True), or nginx failing to start at all (False)."""
    announced = False
    while not stopping:
        if nginx_failed_to_start(children[-1], run_dir):
            return False
        now = time.monotonic()
        for child in children:
            child.check(now)
        write_state(run_dir, children, listen, upstreams)
        if not announced and all(healthy(w.extra["port"]) for w in workers):
            say(f"ready: {len(workers)} local worker(s) healthy")
            announced = True
        time.sleep(POLL_SECONDS)
    return True


def shutdown(children: list[Child]) -> None:
    """nginx first (no request reaches a dying worker), then the workers, then Redis (their last writes land)."""
    say("stopping")
    nginx_child = children[-1]
    store = [c for c in children if "socket" in c.extra]
    workers = [c for c in children[:-1] if c not in store]
    for group in ([nginx_child], workers, store):
        for child in group:
            child.stop()
        deadline = time.monotonic() + STOP_GRACE
        for child in group:
            child.wait_stopped(deadline)
    say("stopped")


if __name__ == "__main__":
    sys.exit(main())
