"""Faults during load through deploy/ (issue 20): a 20-session load (bench/load_server.py's protocol
sessions) on 2 workers behind nginx, measured without a fault and then with each of

  1. a model folder corrupted while serving (the workers read a temporary copy of pretrained/ through
     TRANSFORMER_VIZ_MODELS; toy-reverse's model.safetensors is truncated and toy-sort's config.json
     given bad values during the load),
  2. one client opening 500 websockets through nginx with one cookie, held during the load,
  3. one client sending a 200 MiB websocket message to /_stcore/stream and a 200 MiB PUT to the upload
     endpoint, through nginx, during the load.

    python bench/faults.py [--sessions 20] [--per-session 3] [--flood 500] [--write]

Everything goes to 127.0.0.1 only; every loop is bounded in count and time. --write puts the section
into docs/deploy.md (between its bench:deploy_faults markers).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import html
import os
import re
import select
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

from common import (DEPLOY_DOC, ROOT, Check, Section, SentenceMaker, log, median, percentile, report, rss_bytes, secs,
                    table, write_deploy_section)
from load_server import explorer_run, session
from viz.figures.browser_view import VIEW_ELEMENT

sys.path.insert(0, str(ROOT / "deploy"))
from harness import NGINX, Deployment, get

MODEL = "en-es"                      # the load's model (a copy of it, in the temporary models folder)
BROKEN_WEIGHTS, BROKEN_CONFIG = "toy-reverse", "toy-sort"
N_TOKENS = 16
FLOOD_HOLD_MAX_S = 30                # the flood's connections are closed after this at the latest
FLOOD_OPEN_TIMEOUT_S = 10
BIG_BYTES = 200 * 2**20              # 200 MiB (Streamlit's maxMessageSize is 200 MB = 200e6 bytes)
UNDER_LIMIT = 199 * 10**6             # just under Streamlit's limit
BIG_TIMEOUT_S = 60
CHUNK = 2**20
PROBE_TIMEOUT_S = 60


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--per-session", type=int, default=3)
    parser.add_argument("--flood", type=int, default=500, help="connections opened by the one flooding client")
    parser.add_argument("--big-mib", type=int, default=200, help="size of the big websocket message and upload")
    parser.add_argument("--write", action="store_true")
    return parser.parse_args(argv)


# -- one protocol probe: everything a new page session shows -------------------------------------------
async def probe(base: str, model_id: str, text: str | None = None, cookie: str | None = None) -> dict:
    """Open /explorer?model=… as a new session and collect its alerts (st.error/warning/info text),
    exceptions and charts until script_finished; 'upstream' is the worker nginx chose (X-Upstream)."""
    query = {"model": model_id, **({"text": text} if text else {})}
    out = {"alerts": [], "exceptions": [], "charts": 0, "status": None, "upstream": None, "seconds": None}
    headers = {"Cookie": cookie} if cookie else None          # cookie: 'name=value'
    start = time.perf_counter()
    async with asyncio.timeout(PROBE_TIMEOUT_S):
        async for what, value in explorer_run(base, query, headers):
            if what == "connected":
                out["upstream"] = value.get("X-Upstream") or base.rsplit(":", 1)[1]
            elif what == "finished":
                out["status"] = value
            elif value.WhichOneof("type") == "alert":
                out["alerts"].append(html.unescape(value.alert.body))
            elif value.WhichOneof("type") == "exception":
                out["exceptions"].append(value.exception.message[:200])
            elif value.WhichOneof("type") == "plotly_chart" or (
                    value.WhichOneof("type") == "bidi_component"
                    and value.bidi_component.component_name == VIEW_ELEMENT):      # the explorer's browser-side view
                out["charts"] += 1
    out["seconds"] = time.perf_counter() - start
    return out


def probe_text(p: dict) -> str:
    cannot = [unmark(a) for a in p["alerts"] if "cannot be loaded" in a]
    if cannot:
        return "; ".join(dict.fromkeys(cannot))
    if p["exceptions"]:
        return f"exception: {p['exceptions'][0]}"
    return f"page drawn normally ({p['charts']} charts)" if p["charts"] else f"no charts; alerts: {p['alerts'][:2]}"


def unmark(text: str) -> str:
    """As the browser shows it: without viz.core.text.plain's markdown escapes and word joiners."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


# -- the load (bench/load_server.py's sessions through nginx) ---------------------------------------------
async def load(base: str, maker: SentenceMaker, n_sessions: int, per_session: int, during=None) -> dict:
    gate = asyncio.Event()
    results = [{"times": [], "errors": [], "foreign": []} for _ in range(n_sessions)]
    plans = [[maker.sentence(N_TOKENS) for _ in range(per_session)] for _ in range(n_sessions)]
    tasks = [asyncio.create_task(session(base, MODEL, plan, maker, gate, result))
             for plan, result in zip(plans, results)]
    side = asyncio.create_task(during(results)) if during else None
    start = time.perf_counter()
    gate.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - start
    outcome = {"times": [t for r in results for t in r["times"]], "errors": [e for r in results for e in r["errors"]],
               "foreign": [f for r in results for f in r["foreign"]], "expected": n_sessions * per_session,
               "wall": wall, "side": None}
    if side:
        outcome["side"] = await side
    return outcome


def done_count(results) -> int:
    return sum(len(r["times"]) + len(r["errors"]) for r in results)


async def wait_fraction(results, expected: int, fraction: float, limit_s: float = 120) -> None:
    deadline = time.perf_counter() + limit_s
    while done_count(results) < fraction * expected and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)


def worker_pids(deployment: Deployment) -> dict:
    return {w["port"]: w["pid"] for w in deployment.state()["workers"]}


def rss_mib(deployment: Deployment) -> dict:
    return {port: rss_bytes(pid, children=False) / 2**20 for port, pid in worker_pids(deployment).items()}


# -- fault 1: a model folder corrupted while serving ------------------------------------------------------
def corrupt(models: Path) -> dict:
    weights = models / BROKEN_WEIGHTS / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "r+b") as f:
        f.truncate(size // 3)
    config = models / BROKEN_CONFIG / "config.json"
    saved_config = config.read_text(encoding="utf-8")
    config.write_text(re.sub(r'"d_model"\s*:\s*\d+', '"d_model": -7', saved_config), encoding="utf-8")
    return {"weights_bytes": size, "weights_cut_to": size // 3, "config": saved_config}


def corruption_fault(deployment: Deployment, models: Path, expected: int, source: Path):
    ports = [w["port"] for w in deployment.state()["workers"]]

    async def run(results) -> dict:
        await wait_fraction(results, expected, 0.3)
        saved = corrupt(models)
        at = done_count(results)
        log(f"faults: corrupted {BROKEN_WEIGHTS}/model.safetensors and {BROKEN_CONFIG}/config.json "
            f"after {at} submissions")
        probes = {}
        # Worker A had loaded toy-reverse before the corruption (st.cache_resource keeps it); B had not.
        for label, port in (("A", ports[0]), ("B", ports[1])):
            probes[f"{BROKEN_WEIGHTS} on worker {label}"] = await probe(f"http://127.0.0.1:{port}", BROKEN_WEIGHTS)
            probes[f"{BROKEN_CONFIG} on worker {label}"] = await probe(f"http://127.0.0.1:{port}", BROKEN_CONFIG)
        probes[f"{BROKEN_WEIGHTS} through nginx (new browser)"] = await probe(deployment.base, BROKEN_WEIGHTS)
        during_at = done_count(results)
        # Put the files back: the next new session loads the model again, no restart needed.
        shutil.copy2(source / BROKEN_WEIGHTS / "model.safetensors", models / BROKEN_WEIGHTS / "model.safetensors")
        (models / BROKEN_CONFIG / "config.json").write_text(saved["config"], encoding="utf-8")
        probes[f"{BROKEN_WEIGHTS} on worker B after the file was restored"] = \
            await probe(f"http://127.0.0.1:{ports[1]}", BROKEN_WEIGHTS)
        return {"probes": probes, "corrupted_after": at, "probes_done_by": during_at, **saved}
    return run


# -- fault 2: one client opening many connections ---------------------------------------------------------
def flood_fault(deployment: Deployment, n: int, holder: dict, cookie: str | None):
    """n websockets to /_stcore/stream through nginx from one address, all with one cookie (or, cookie=None,
    none: a client that drops the cookie), opened at once (50 at a time) as the load starts; those
    accepted are held until the load ends (at most FLOOD_HOLD_MAX_S)."""
    import websockets
    from websockets.exceptions import InvalidStatus
    url = deployment.base.replace("http", "ws", 1) + "/_stcore/stream"
    headers = {"Cookie": f"{deployment.cookie}={cookie}"} if cookie else None
    statuses: collections.Counter = collections.Counter()
    upstreams: collections.Counter = collections.Counter()
    sockets = []
    limit = asyncio.Semaphore(50)

    async def one() -> None:
        async with limit:
            try:
                async with asyncio.timeout(FLOOD_OPEN_TIMEOUT_S):
                    ws = await websockets.connect(url, subprotocols=["streamlit"], origin=deployment.base,
                                                  additional_headers=headers, open_timeout=FLOOD_OPEN_TIMEOUT_S)
                sockets.append(ws)
                statuses[101] += 1
                upstreams[ws.response.headers.get("X-Upstream")] += 1
            except InvalidStatus as e:
                statuses[e.response.status_code] += 1
            except (TimeoutError, asyncio.TimeoutError):
                statuses["timeout"] += 1
            except Exception as e:  # noqa: BLE001 (counted by kind)
                statuses[type(e).__name__] += 1

    async def run(results) -> dict:
        rss_before = rss_mib(deployment)
        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        opened_in = time.perf_counter() - start
        await asyncio.sleep(1)
        rss_held = rss_mib(deployment)
        log(f"faults: flood of {n}: {dict(statuses)} in {opened_in:.1f} s")
        deadline = start + FLOOD_HOLD_MAX_S
        while not holder.get("load_done") and time.perf_counter() < deadline:
            await asyncio.sleep(0.1)
        open_at_end = sum(1 for ws in sockets if ws.state.name == "OPEN")
        held = time.perf_counter() - start
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
        return {"statuses": dict(statuses), "upstreams": dict(upstreams), "opened_in": opened_in,
                "held": held, "open_at_end": open_at_end, "rss_before": rss_before, "rss_held": rss_held}
    return run


# -- fault 3: one client sending 200 MiB -------------------------------------------------------------------
def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.settimeout(10)
    return s


def _read_head(s: socket.socket, deadline: float) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and time.monotonic() < deadline and len(data) < 65536:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _stream_zeros(s: socket.socket, total: int, deadline: float) -> tuple[int, str]:
    """Send `total` zero bytes in 256 KiB pieces of one 1 MiB buffer, stopping as soon as the peer
    answers or closes (small pieces, so its answer is usually read before a reset); (bytes sent, why it stopped)."""
    zeros, sent, piece = bytes(CHUNK), 0, CHUNK // 4
    while sent < total:
        if time.monotonic() > deadline:
            return sent, "time limit"
        readable, _, _ = select.select([s], [], [], 0)
        if readable:
            return sent, "peer answered"
        try:
            sent += s.send(zeros[: min(piece, total - sent)])
        except (BrokenPipeError, ConnectionResetError) as e:
            return sent, type(e).__name__
        except socket.timeout:
            return sent, "send timed out"
    return sent, "all sent"


def _stream_chunked(s: socket.socket, total: int, deadline: float) -> tuple[int, str]:
    chunk = f"{CHUNK:x}\r\n".encode() + bytes(CHUNK) + b"\r\n"
    sent = 0
    while sent < total:
        if time.monotonic() > deadline:
            return sent, "time limit"
        if select.select([s], [], [], 0)[0]:
            return sent, "peer answered"
        try:
            s.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError) as e:
            return sent, type(e).__name__
        except socket.timeout:
            return sent, "send timed out"
        sent += CHUNK
    try:
        s.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    return sent, "all sent"


def big_websocket_message(port: int, size: int, cookie: str) -> dict:
    """One binary websocket frame of `size` bytes (mask key 0, so the payload is plain zeros, streamed)."""
    start = time.monotonic()
    deadline = start + BIG_TIMEOUT_S
    s = _connect(port)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Protocol: streamlit\r\nOrigin: http://127.0.0.1:{port}\r\n"
                   f"Cookie: {cookie}\r\n\r\n").encode())
        head = _read_head(s, deadline)
        status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "none"
        if status != "101":
            return {"handshake": status, "sent": 0, "stopped": "handshake refused", "close": None,
                    "seconds": time.monotonic() - start}
        rest = head.split(b"\r\n\r\n", 1)[1]
        s.sendall(bytes([0x82, 0x80 | 127]) + size.to_bytes(8, "big") + bytes(4))   # FIN+binary, masked, 64-bit len
        sent, stopped = _stream_zeros(s, size, deadline)
        close, data = None, rest
        try:
            while time.monotonic() < deadline and len(data) < 4096:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
                close = _close_code(data)
                if close is not None:
                    break
        except (OSError, socket.timeout) as e:
            stopped += f", then {type(e).__name__}"
        close = _close_code(data)
        return {"handshake": status, "sent": sent, "stopped": stopped, "close": close,
                "seconds": time.monotonic() - start}
    finally:
        s.close()


def _close_code(data: bytes):
    """The status code of the first close frame (opcode 8) in server frames (unmasked), if any."""
    i = 0
    while i + 2 <= len(data):
        opcode, length = data[i] & 0x0F, data[i + 1] & 0x7F
        j = i + 2
        if length == 126:
            length, j = int.from_bytes(data[j:j + 2], "big"), j + 2
        elif length == 127:
            length, j = int.from_bytes(data[j:j + 8], "big"), j + 8
        if opcode == 8:
            return int.from_bytes(data[j:j + 2], "big") if length >= 2 and j + 2 <= len(data) else "close, no code"
        i = j + length
    return None


def big_upload(port: int, size: int, cookie: str, chunked: bool = False) -> dict:
    """PUT of `size` bytes to the upload endpoint, body streamed: with a declared Content-Length, or
    (chunked) as 1 MiB chunks of Transfer-Encoding: chunked, so nothing tells the proxy the size up front."""
    start = time.monotonic()
    deadline = start + BIG_TIMEOUT_S
    s = _connect(port)
    try:
        length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
        s.sendall((f"PUT /_stcore/upload_file/some-session/some-file HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Content-Type: application/octet-stream\r\n{length}\r\n"
                   f"Cookie: {cookie}\r\n\r\n").encode())
        sent, stopped = (_stream_chunked if chunked else _stream_zeros)(s, size, deadline)
        try:
            head = _read_head(s, deadline)
        except (OSError, socket.timeout) as e:
            head, stopped = b"", stopped + f", then {type(e).__name__}"
        status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "none"
        return {"status": status, "sent": sent, "stopped": stopped, "seconds": time.monotonic() - start}
    finally:
        s.close()


def big_fault(deployment: Deployment, size: int, expected: int):
    port = int(deployment.base.rsplit(":", 1)[1])

    async def run(results) -> dict:
        await wait_fraction(results, expected, 0.1)
        cookie = f"{deployment.cookie}=big-client-1"
        out = {"rss_before": rss_mib(deployment)}
        peak = dict(out["rss_before"])
        sampling = True

        async def sample() -> None:            # the workers' peak RSS while the big messages arrive
            while sampling:
                for port_, mib in rss_mib(deployment).items():
                    peak[port_] = max(peak.get(port_, 0), mib)
                await asyncio.sleep(0.1)
        sampler = asyncio.create_task(sample())
        try:
            out["ws"] = await asyncio.to_thread(big_websocket_message, port, size, cookie)
            log(f"faults: {size / 2**20:.0f} MiB websocket message: {out['ws']}")
            # Streamlit's limit is server.maxMessageSize = 200 MB = 200e6 bytes: just under it is let in.
            out["ws_under"] = await asyncio.to_thread(big_websocket_message, port, UNDER_LIMIT, cookie)
            log(f"faults: {UNDER_LIMIT:,} byte websocket message: {out['ws_under']}")
            out["upload"] = await asyncio.to_thread(big_upload, port, size, cookie)
            log(f"faults: {size / 2**20:.0f} MiB upload: {out['upload']}")
            out["upload_chunked"] = await asyncio.to_thread(big_upload, port, size, cookie, True)
            log(f"faults: {size / 2**20:.0f} MiB chunked upload: {out['upload_chunked']}")
            await asyncio.sleep(1)
        finally:
            sampling = False
            await sampler
        out["rss_peak"], out["rss_after"] = peak, rss_mib(deployment)
        return out
    return run


# -- the runs ----------------------------------------------------------------------------------------------
async def run_all(args) -> dict:
    maker = SentenceMaker(seed=11)
    out = {"loadavg": os.getloadavg(), "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="faults-models-") as tmp:
        models = Path(tmp) / "models"
        shutil.copytree(ROOT / "pretrained", models)
        env = {**os.environ, "TRANSFORMER_VIZ_MODELS": str(models)}
        with Deployment(2, env=env) as deployment:
            ports = [w["port"] for w in deployment.state()["workers"]]
            for port in ports:                                    # each worker loads en-es once
                await probe(f"http://127.0.0.1:{port}", MODEL, maker.sentence(N_TOKENS))
            await probe(f"http://127.0.0.1:{ports[0]}", BROKEN_WEIGHTS)   # worker A has toy-reverse cached
            pids = worker_pids(deployment)
            out["pids_start"] = pids
            expected = args.sessions * args.per_session

            log(f"faults: {args.sessions} sessions, no fault")
            out["baseline"] = await load(deployment.base, maker, args.sessions, args.per_session)

            log(f"faults: {args.sessions} sessions, model folder corrupted")
            out["corrupt"] = await load(deployment.base, maker, args.sessions, args.per_session,
                                        during=corruption_fault(deployment, models, expected, ROOT / "pretrained"))
            out["pids_after_corrupt"] = worker_pids(deployment)

            for key, cookie in (("flood", "flood-client-1"), ("flood_nocookie", None)):
                log(f"faults: {args.sessions} sessions, one client opens {args.flood} connections, cookie {cookie}")
                holder: dict = {}
                flood_side = asyncio.create_task(flood_fault(deployment, args.flood, holder, cookie)(None))
                try:
                    out[key] = await load(deployment.base, maker, args.sessions, args.per_session)
                finally:
                    holder["load_done"] = True
                out[key]["side"] = await flood_side
                await asyncio.sleep(2)
                out[key]["side"]["rss_after"] = rss_mib(deployment)
            out["pids_after_flood"] = worker_pids(deployment)

            log(f"faults: {args.sessions} sessions, one client sends {args.big_mib} MiB twice")
            out["big"] = await load(deployment.base, maker, args.sessions, args.per_session,
                                    during=big_fault(deployment, args.big_mib * 2**20, expected))
            out["pids_after_big"] = worker_pids(deployment)

            log(f"faults: {args.sessions} sessions, no fault (again)")
            out["baseline2"] = await load(deployment.base, maker, args.sessions, args.per_session)
            out["pids_end"] = worker_pids(deployment)
            out["state_end"] = deployment.state()
            out["healthz_end"] = get(deployment.base + "/healthz")[0]
            out["loadavg_end"] = os.getloadavg()
            out["nginx_429"], out["nginx_413"] = access_counts(deployment.run_dir)
            out["nginx_crit"] = crit_lines(deployment.run_dir)
    return out


def crit_lines(run_dir: Path) -> list[str]:
    """nginx's [crit] lines (a temp file it could not open, ...), with the run folder's path cut out."""
    path = run_dir / "logs" / "error.log"
    text = path.read_text(errors="replace") if path.is_file() else ""
    return [re.sub(r"^\S+ \S+ ", "", line).replace(str(run_dir), "RUN")[:220]
            for line in text.splitlines() if "[crit]" in line]


def access_counts(run_dir: Path) -> tuple[int, int]:
    path = run_dir / "logs" / "access.log"
    text = path.read_text(errors="replace") if path.is_file() else ""
    return len(re.findall(r'" 429 ', text)), len(re.findall(r'" 413 ', text))


# -- report ------------------------------------------------------------------------------------------------
def cells(name: str, row: dict) -> list:
    times = row["times"]
    return [name, f"{len(times)}/{row['expected']}", len(row["errors"]), secs(median(times)) if times else "—",
            secs(percentile(times, 95)) if times else "—", secs(row["wall"]), len(row["foreign"])]


def section(out: dict, args) -> Section:
    la = out["loadavg"]
    rows = [("none", out["baseline"]), ("model folder corrupted", out["corrupt"]),
            (f"one client opens {args.flood} websockets (one cookie)", out["flood"]),
            (f"one client opens {args.flood} websockets (no cookie)", out["flood_nocookie"]),
            (f"one client sends {args.big_mib} MiB and 199 MB websocket messages, then two {args.big_mib} MiB "
             "uploads", out["big"]),
            ("none (again, after the faults)", out["baseline2"])]
    body = [
        f"`python bench/faults.py` on {out['started']}: 2 workers behind nginx (deploy/serve.py), "
        f"{args.sessions} sessions as in bench/load_server.py, each submitting {args.per_session} new "
        f"{N_TOKENS}-token en-es sentences (new page sessions, no cookie) while the fault happens; the load "
        f"generator shares the machine's {os.cpu_count()} cores. Load average at the start "
        f"{la[0]:.1f} / {la[1]:.1f} / {la[2]:.1f} (1/5/15 min), at the end {out['loadavg_end'][0]:.1f}.",
        "", table(["fault", "done", "errors", "median", "p95", "wall", "foreign labels"],
                  [cells(n, r) for n, r in rows])]
    for name, row in rows:
        if row["errors"]:
            body.append(f"Errors with fault '{name}': {'; '.join(sorted(set(row['errors']))[:3])}")
    c = out["corrupt"]["side"]
    body += ["", f"**Model folder corrupted.** The workers read a copy of pretrained/ (TRANSFORMER_VIZ_MODELS). "
             f"After {c['corrupted_after']} of the load's submissions, {BROKEN_WEIGHTS}/model.safetensors was cut "
             f"from {c['weights_bytes']:,} to {c['weights_cut_to']:,} bytes and {BROKEN_CONFIG}/config.json given "
             f"`\"d_model\": -7`. Worker A had loaded {BROKEN_WEIGHTS} before (st.cache_resource), worker B had "
             "not. What a new session then received (alerts in the websocket's deltas):", ""]
    body.append(table(["new session", "answered by", "what it shows", "script status", "seconds"],
                      [[k, p["upstream"], probe_text(p), p["status"], secs(p["seconds"])]
                       for k, p in c["probes"].items()]))
    f = out["flood"]["side"]
    body += ["", f"**One client, {args.flood} connections.** {args.flood} websocket upgrades to /_stcore/stream "
             f"through nginx from one address, 50 at a time, started with the load, held until the load ended "
             f"(at most {FLOOD_HOLD_MAX_S} s), then closed:", ""]
    body.append(table(["cookie", "answers", "opened in", "accepted ones on", "held", "open at the end",
                       "workers' RSS before / held / after"],
                      [[label, ", ".join(f"{k}: {v}" for k, v in sorted(s["statuses"].items(), key=str)),
                        secs(s["opened_in"]), ", ".join(f"{u} ({v})" for u, v in s["upstreams"].items()) or "—",
                        secs(s["held"]), s["open_at_end"],
                        ", ".join(f":{p} {s['rss_before'][p]:.0f} / {s['rss_held'].get(p, 0):.0f} / "
                                  f"{s['rss_after'].get(p, 0):.0f} MiB" for p in s["rss_before"])]
                       for label, s in (("one routing cookie", f), ("none", out["flood_nocookie"]["side"]))]))
    b = out["big"]["side"]
    ws, up = b["ws"], b["upload"]
    body += ["", f"**One client, {args.big_mib} MiB.** One after the other, from one client through nginx, each "
             "streamed from one 1 MiB buffer (a websocket message is one masked frame with a zero mask key):", ""]
    body.append(table(["what was sent", "answer", "sent before the answer", "how it ended", "time"], [
        [f"websocket message of {args.big_mib} MiB ({args.big_mib * 2**20:,} bytes) to /_stcore/stream",
         f"handshake {ws['handshake']}, then close code {ws['close']}", f"{ws['sent'] / 2**20:.1f} MiB",
         ws["stopped"], secs(ws["seconds"])],
        [f"websocket message of {UNDER_LIMIT:,} bytes (just under server.maxMessageSize, 200e6 bytes)",
         f"handshake {b['ws_under']['handshake']}, then close code {b['ws_under']['close']}",
         f"{b['ws_under']['sent'] / 2**20:.1f} MiB", b["ws_under"]["stopped"], secs(b["ws_under"]["seconds"])],
        [f"PUT of {args.big_mib} MiB to /_stcore/upload_file/…, Content-Length", f"HTTP {up['status']}",
         f"{up['sent'] / 2**20:.1f} MiB", up["stopped"], secs(up["seconds"])],
        [f"PUT of {args.big_mib} MiB to /_stcore/upload_file/…, chunked", f"HTTP {b['upload_chunked']['status']}",
         f"{b['upload_chunked']['sent'] / 2**20:.1f} MiB", b["upload_chunked"]["stopped"],
         secs(b["upload_chunked"]["seconds"])]]))
    body += ["", "Workers' RSS before / peak (sampled every 0.1 s) / after: " + ", ".join(
        f":{p} {b['rss_before'][p]:.0f} / {b['rss_peak'].get(p, 0):.0f} / {b['rss_after'].get(p, 0):.0f} MiB"
        for p in b["rss_before"]) + "."]
    same = all(out[k] == out["pids_start"] for k in ("pids_after_corrupt", "pids_after_flood", "pids_after_big",
                                                      "pids_end"))
    restarts = sum(w["restarts"] for w in out["state_end"]["workers"])
    body += ["", f"Worker pids at the start {sorted(out['pids_start'].values())}, at the end "
             f"{sorted(out['pids_end'].values())} ({'unchanged' if same else 'CHANGED'}; supervisor restarts: "
             f"{restarts}); /healthz at the end: {out['healthz_end']}. nginx's access log: {out['nginx_429']} "
             f"answers 429, {out['nginx_413']} answers 413."]
    if out["nginx_crit"]:
        body += ["", f"nginx's error log has {len(out['nginx_crit'])} [crit] line(s), the first: "
                 f"`{out['nginx_crit'][0]}`"]
    checks = [Check(f"fault '{n}': no errors, no foreign labels for the other sessions",
                    f"{len(r['errors'])} errors, {len(r['foreign'])} foreign", not r["errors"] and not r["foreign"])
              for n, r in rows]
    broken_b = c["probes"][f"{BROKEN_WEIGHTS} on worker B"]
    checks.append(Check("corrupted weights: a new session gets 'This model cannot be loaded: …'",
                        probe_text(broken_b)[:80], any("cannot be loaded" in a for a in broken_b["alerts"])))
    broken_cfg = c["probes"][f"{BROKEN_CONFIG} on worker B"]
    checks.append(Check("bad config.json: a new session gets 'This model cannot be loaded: …'",
                        probe_text(broken_cfg)[:80], any("cannot be loaded" in a for a in broken_cfg["alerts"])))
    checks.append(Check(f"flood: at most 16 of {args.flood} connections accepted",
                        f"{f['statuses'].get(101, 0)} accepted", f["statuses"].get(101, 0) <= 16))
    checks.append(Check(f"{args.big_mib} MiB websocket message refused",
                        f"close code {ws['close']}" if ws["close"] else f"{ws['stopped']} after {ws['sent'] / 2**20:.1f} MiB",
                        ws["close"] == 1009 or ws["handshake"] != "101"
                        or (ws["sent"] < args.big_mib * 2**20 and "Reset" in ws["stopped"])))
    checks.append(Check(f"{args.big_mib} MiB upload refused with 413", f"HTTP {up['status']}", up["status"] == "413"))
    checks.append(Check(f"{args.big_mib} MiB chunked upload refused with 413", f"HTTP {b['upload_chunked']['status']}",
                        b["upload_chunked"]["status"] == "413"))
    checks.append(Check("no worker crashed (pids unchanged)", "unchanged" if same else "changed", same))
    return Section("deploy_faults", "Faults during load: a corrupted model folder, one client's 500 connections, "
                   "one client's 200 MB messages", "\n".join(body), checks)


def main(argv=None) -> Section:
    args = parse_args(argv)
    if NGINX is None:
        raise SystemExit("nginx not found: apt-get install -y nginx")
    if not (ROOT / "pretrained" / MODEL / "model.safetensors").is_file():
        raise SystemExit(f"pretrained/{MODEL} is needed (the load's model)")
    out = asyncio.run(run_all(args))
    result = report(section(out, args), write=False)
    if args.write:
        write_deploy_section(result)
        print(f"\n(updated {DEPLOY_DOC.relative_to(ROOT)})")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
