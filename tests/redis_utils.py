"""A real redis-server for tests, configured by deploy/redis_local.py as deploy/serve.py runs it."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))
import redis_local


class RedisServer:
    """redis-server as a child process, configured by deploy/redis_local.py (as deploy/serve.py runs it)."""

    def __init__(self, folder: Path, persist: bool):
        self.folder = folder
        self.config, self.url = redis_local.write_config(folder, persist=persist)
        self.start()

    def start(self) -> None:
        with open(self.folder / "redis.log", "ab") as log:
            self.proc = subprocess.Popen(redis_local.command(self.config), stdout=log, stderr=subprocess.STDOUT)
        ready = redis_local.wait_until_answers(self.url, alive=lambda: self.proc.poll() is None)
        assert ready, (self.folder / "redis.log").read_text()[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)       # a test may have paused it (SIGSTOP)
            self.proc.terminate()
            self.proc.wait(15)

    def client(self):
        import redis
        return redis.Redis.from_url(self.url, decode_responses=True)

    def __enter__(self) -> "RedisServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
