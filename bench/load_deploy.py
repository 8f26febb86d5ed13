"""Load through deploy/ (nginx + supervised workers): the sessions of bench/load_server.py, sent to
nginx in front of 1, 2 (one per core here) and 3 workers, at 20 and 40 concurrent sessions; then one
worker is killed during a 40-session load, counting the submissions lost and the time until the
supervisor's restarted worker serves again.

    python bench/load_deploy.py [--quick] [--workers 1,2,3] [--sessions 20,40] [--no-kill] [--write]
    (faults during load, a corrupted model folder, a connection flood, a 200 MiB message: bench/faults.py)

--write puts the tables into docs/deploy.md (between its bench:load_deploy markers).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time

from common import (DEPLOY_DOC, ROOT, Check, Section, SentenceMaker, app_models, cpu_seconds, log, median, percentile,
                    report, secs, table, write_deploy_section)
from load import P95_TARGET_S
from load_server import session, submit

sys.path.insert(0, str(ROOT / "deploy"))
from harness import NGINX, Deployment, worker_healthy

N_TOKENS = 16
RECOVERY_TIMEOUT = 120


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 and 2 workers, 6 sessions, 2 sentences each")
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--sessions", default="20,40")
    parser.add_argument("--per-session", type=int, default=3)
    parser.add_argument("--kill-sessions", type=int, default=40)
    parser.add_argument("--no-kill", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.workers, args.sessions, args.per_session, args.kill_sessions = "1,2", "6", 2, 6
    args.workers = [int(w) for w in args.workers.split(",")]
    args.sessions = [int(n) for n in args.sessions.split(",")]
    return args


def plans(maker: SentenceMaker, n_sessions: int, per_session: int) -> list[list[str]]:
    return [[maker.sentence(N_TOKENS) for _ in range(per_session)] for _ in range(n_sessions)]


async def warm(deployment: Deployment, model_id: str, maker: SentenceMaker) -> None:
    """Each worker loads the model once, straight at its port (through nginx a cookie-less request
    could land on any worker)."""
    for worker in deployment.state()["workers"]:
        await submit(f"http://127.0.0.1:{worker['port']}", model_id, maker.sentence(N_TOKENS))


async def load(deployment: Deployment, model_id: str, maker: SentenceMaker, n_sessions: int, per_session: int,
               during=None) -> dict:
    """All sessions start at once through nginx; `during(done)` runs beside them (the worker kill)."""
    gate = asyncio.Event()
    results = [{"times": [], "errors": [], "foreign": []} for _ in range(n_sessions)]
    tasks = [asyncio.create_task(session(deployment.base, model_id, plan, maker, gate, result))
             for plan, result in zip(plans(maker, n_sessions, per_session), results)]
    side = asyncio.create_task(during(results)) if during else None
    start, served_cpu, machine_cpu = time.perf_counter(), cpu_seconds(deployment.proc.pid), cpu_seconds()
    gate.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - start
    outcome = {
        "times": [t for r in results for t in r["times"]],
        "errors": [e for r in results for e in r["errors"]],
        "foreign": [f for r in results for f in r["foreign"]],
        "expected": n_sessions * per_session, "wall": wall,
        "cpu_served": cpu_seconds(deployment.proc.pid) - served_cpu, "cpu_machine": cpu_seconds() - machine_cpu,
    }
    if side:
        outcome["kill"] = await side
    return outcome


def killer(deployment: Deployment, model_id: str, maker: SentenceMaker, expected: int, after_fraction: float = 0.3):
    """Kill worker 0 once `after_fraction` of the submissions are done; time its restart and its first
    page served (model loaded again) straight at its port."""
    async def run(results) -> dict:
        while sum(len(r["times"]) + len(r["errors"]) for r in results) < after_fraction * expected:
            await asyncio.sleep(0.05)
        victim = deployment.state()["workers"][0]
        os.kill(victim["pid"], signal.SIGKILL)
        killed_at = time.perf_counter()
        log(f"load_deploy: killed worker :{victim['port']} (pid {victim['pid']})")
        lost_before = count_errors(results)
        restarted = await wait_restarted(deployment, victim)
        healthy_after = time.perf_counter() - killed_at
        lost_while_down = count_errors(results) - lost_before
        await submit(f"http://127.0.0.1:{victim['port']}", model_id, maker.sentence(N_TOKENS))
        return {"restarted": restarted, "healthy_after": healthy_after, "lost_while_down": lost_while_down,
                "lost_before": lost_before, "lost_by_first_page": count_errors(results),
                "serving_after": time.perf_counter() - killed_at}
    return run


def count_errors(results) -> int:
    return sum(len(r["errors"]) for r in results)


async def wait_restarted(deployment: Deployment, victim: dict) -> bool:
    deadline = time.perf_counter() + RECOVERY_TIMEOUT
    while time.perf_counter() < deadline:
        now = next(w for w in deployment.state()["workers"] if w["port"] == victim["port"])
        if now["pid"] != victim["pid"] and await asyncio.to_thread(worker_healthy, victim["port"]):
            return True
        await asyncio.sleep(0.1)
    return False


# -- runs and report -----------------------------------------------------------------------------------
async def run_all(args) -> tuple[list[dict], dict | None, str]:
    maker = SentenceMaker(seed=7)
    rows, kill = [], None
    with app_models() as (env, model_id, description):
        for n_workers in args.workers:
            with Deployment(n_workers, env={**os.environ, **env}) as deployment:
                await warm(deployment, model_id, maker)
                for n_sessions in args.sessions:
                    log(f"load_deploy: {n_workers} worker(s), {n_sessions} sessions")
                    outcome = await load(deployment, model_id, maker, n_sessions, args.per_session)
                    rows.append({"workers": n_workers, "sessions": n_sessions, **outcome})
                if n_workers == 2 and not args.no_kill:
                    kill = await kill_run(deployment, model_id, maker, args)
    return rows, kill, description


async def kill_run(deployment, model_id, maker, args) -> dict:
    log(f"load_deploy: {args.kill_sessions} sessions, one of 2 workers killed")
    expected = args.kill_sessions * args.per_session
    outcome = await load(deployment, model_id, maker, args.kill_sessions, args.per_session,
                         during=killer(deployment, model_id, maker, expected))
    return {"workers": 2, "sessions": args.kill_sessions, **outcome}


def row_cells(row: dict) -> list:
    times = row["times"]
    return [row["workers"], row["sessions"], f"{len(times)}/{row['expected']}", len(row["errors"]),
            secs(median(times)) if times else "—", secs(percentile(times, 95)) if times else "—",
            f"{len(times) / row['wall']:.1f}", secs(row["wall"]), len(row["foreign"]),
            f"{row['cpu_served']:.1f} s ({row['cpu_served'] / max(1, len(times)):.2f} s)",
            f"{row['cpu_machine'] / (row['wall'] * (os.cpu_count() or 1)):.0%}"]


HEADERS = ["workers", "sessions", "done", "errors", "median", "p95", "submissions/s", "wall", "foreign labels",
           "CPU of workers+nginx (per submission)", "machine busy"]


def section(rows: list[dict], kill: dict | None, description: str, per_session: int) -> Section:
    body = [
        f"Sessions as in bench/load_server.py (Streamlit's websocket protocol, nothing drawn), sent to nginx "
        f"(deploy/serve.py) in front of N `streamlit run app.py` workers, model: {description}. Each session "
        f"submits {per_session} new {N_TOKENS}-token sentences one after the other, each a new page session "
        "(no cookie, so nginx spreads them round-robin over the workers). The load generator runs on the same "
        f"{os.cpu_count()} cores.", "", table(HEADERS, [row_cells(r) for r in rows])]
    checks = [Check(f"{r['workers']} worker(s), {r['sessions']} sessions: no errors, no foreign labels",
                    f"{len(r['errors'])} errors, {len(r['foreign'])} foreign", not r["errors"] and not r["foreign"])
              for r in rows]
    checks += [Check(f"p95 ≤ {P95_TARGET_S:g} s, {r['workers']} worker(s), {r['sessions']} sessions",
                     secs(percentile(r["times"], 95)) if r["times"] else "—",
                     bool(r["times"]) and percentile(r["times"], 95) <= P95_TARGET_S) for r in rows]
    body += [f"Errors with {r['workers']} worker(s), {r['sessions']} sessions: {'; '.join(sorted(set(r['errors']))[:3])}"
             for r in rows if r["errors"]]
    if kill:
        body += ["", kill_text(kill)]
        checks.append(Check("killed worker restarted by the supervisor", secs(kill["kill"]["healthy_after"]),
                            kill["kill"]["restarted"]))
    return Section("load_deploy", "Load through nginx and several workers", "\n".join(body), checks)


def kill_text(kill: dict) -> str:
    k, times = kill["kill"], kill["times"]
    errors = sorted(set(kill["errors"]))[:3]
    after_health = k["lost_by_first_page"] - k["lost_while_down"] - k["lost_before"]
    return (f"Worker killed (SIGKILL) during {kill['sessions']} sessions on 2 workers, once 30% of the "
            f"{kill['expected']} submissions were done: {len(kill['errors'])} submissions lost, {len(times)} done, "
            f"p95 {secs(percentile(times, 95)) if times else '—'}, {len(kill['foreign'])} foreign labels. "
            f"Lost while the worker was down: {k['lost_before'] + k['lost_while_down']} (in flight on it: their "
            f"websockets closed); after its health check answered: {after_health}; after it had served its first "
            f"page: {len(kill['errors']) - k['lost_by_first_page']}. The supervisor's new worker answered its health "
            f"check {secs(k['healthy_after'])} after the kill and served its first page (model loaded again) after "
            f"{secs(k['serving_after'])}; meanwhile nginx sent new sessions to the other worker."
            + (f" Lost: {'; '.join(errors)}." if errors else ""))


def main(argv=None) -> Section:
    args = parse_args(argv)
    if NGINX is None:
        raise SystemExit("nginx not found: apt-get install -y nginx")
    rows, kill, description = asyncio.run(run_all(args))
    result = report(section(rows, kill, description, args.per_session), write=False)
    if args.write:
        write_deploy_section(result)
        print(f"\n(updated {DEPLOY_DOC.relative_to(ROOT)})")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
