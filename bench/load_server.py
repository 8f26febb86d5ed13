"""Load on the server alone: N concurrent sessions that speak Streamlit's own protocol (websocket +
protobuf, as the browser's frontend does) and draw nothing, each submitting its own sentences at the
same time. The same work as bench/load.py on the server's side, without 20 Chromium renderers
drawing on the server's two cores, as in a classroom where every browser runs on its own machine.

    python bench/load_server.py [--quick] [--write]
"""
from __future__ import annotations

import asyncio
import html
import json
import os
import time
import urllib.parse

from common import Section, SentenceMaker, Server, app_models, cpu_seconds, log, report
from load import load_args, tally
from viz.figures.browser_view import VIEW_ELEMENT, drawn_labels


async def explorer_run(base: str, query: dict, headers: dict | None = None):
    """Open /explorer?<query> as a new page session over Streamlit's websocket protocol. Yields
    ("connected", response headers) once, then ("element", element) for every new element, and last
    ("finished", script status)."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    msg = BackMsg()
    msg.rerun_script.query_string = urllib.parse.urlencode(query)
    msg.rerun_script.page_name = "explorer"
    async with websockets.connect(base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                  origin=base, max_size=2**28, additional_headers=headers) as ws:
        yield "connected", ws.response.headers
        await ws.send(msg.SerializeToString())
        while True:
            forward = ForwardMsg()
            forward.ParseFromString(await ws.recv())
            kind = forward.WhichOneof("type")
            if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                yield "element", forward.delta.new_element
            elif kind == "script_finished":
                yield "finished", forward.script_finished
                return


async def submit(base: str, model_id: str, text: str) -> tuple[float, list[str], str | None]:
    """Open /explorer?model=…&text=… as a new session; seconds until the script finished, the x tick
    labels of every chart it sent, and an error (None when the run finished cleanly)."""
    labels: list[str] = []
    start = time.perf_counter()
    async for what, value in explorer_run(base, {"model": model_id, "text": text}):
        if what == "connected":
            start = time.perf_counter()
        elif what == "element" and value.WhichOneof("type") == "exception":
            return time.perf_counter() - start, labels, f"exception: {value.exception.message[:120]}"
        elif what == "element" and value.WhichOneof("type") == "plotly_chart":
            for trace in json.loads(value.plotly_chart.spec).get("data", []):
                # labels travel escaped for plotly (viz.figures.style.plotly_text); the browser shows them plain
                labels += [html.unescape(x) for x in trace.get("x") or [] if isinstance(x, str)]
        elif (what == "element" and value.WhichOneof("type") == "bidi_component"
              and value.bidi_component.component_name == VIEW_ELEMENT):     # the explorer drawn in the browser
            labels += [html.unescape(x) for x in drawn_labels(value.bidi_component.bytes)]
        elif what == "finished":
            error = None if value == 0 else f"script ended with status {value}"
            return time.perf_counter() - start, labels, error


async def session(base: str, model_id: str, sentences: list[str], maker: SentenceMaker, gate: asyncio.Event,
                  result: dict) -> None:
    await gate.wait()
    for text in sentences:
        try:
            seconds, labels, error = await submit(base, model_id, text)
        except Exception as e:  # noqa: BLE001 - counted, not raised: one failing session must not hide the others
            result["errors"].append(f"{type(e).__name__}: {str(e)[:160]}")
            continue
        result["times"].append(seconds)
        if error:
            result["errors"].append(error)
        own = set(maker.labels(text))
        if not labels:
            result["errors"].append("no chart labels received")
        foreign = [label for label in labels if label not in own]
        if foreign:
            result["foreign"].append(foreign[:3])


async def run_load(n_sessions: int, per_session: int, n_tokens: int):
    maker = SentenceMaker(seed=5)
    plans = [[maker.sentence(n_tokens) for _ in range(per_session)] for _ in range(n_sessions)]
    with app_models() as (env, model_id, description), Server(env) as server:
        await submit(server.url, model_id, maker.sentence(n_tokens))              # model loaded, caches warm
        gate = asyncio.Event()
        results = [{"times": [], "errors": [], "foreign": []} for _ in range(n_sessions)]
        tasks = [asyncio.create_task(session(server.url, model_id, plan, maker, gate, res))
                 for plan, res in zip(plans, results)]
        log(f"load_server: {n_sessions} protocol sessions; go")
        start, server_cpu, machine_cpu = time.perf_counter(), cpu_seconds(server.proc.pid), cpu_seconds()
        gate.set()
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - start
        cpu = {"server": cpu_seconds(server.proc.pid) - server_cpu, "machine": cpu_seconds() - machine_cpu}
    return results, wall, cpu, description


def main(argv=None) -> Section:
    n_sessions, per_session, n_tokens, _ = load_args(argv, __doc__)  # no control run here: nothing is drawn
    results, wall, cpu, description = asyncio.run(run_load(n_sessions, per_session, n_tokens))
    times, results_table, checks, errors_line = tally(results, n_sessions, per_session, wall,
                                                     scope=", server only (no browsers drawing on its cores)")
    body = "\n".join([
        f"{n_sessions} concurrent sessions on one `streamlit run app.py`, model: {description}, each a client that "
        "speaks Streamlit's websocket protocol (protobuf messages, as the browser's frontend does) and draws "
        f"nothing. At the same moment every session starts submitting {per_session} new {n_tokens}-token sentences, "
        "one after the other; each submission opens `/explorer?text=…` as a new session (a deep link), so the "
        "server runs the page from scratch: tokenize, greedy decoding, full capture, figures, messages. Latency: "
        "request sent to the script's `script_finished` message, with every chart received. Cross-talk: every x "
        "label of every chart received must belong to the session's own sentence. The browsers' drawing, which "
        "bench/load.py puts on the same two cores, is left out: in a classroom it runs on each student's machine.",
        "",
        results_table,
        "",
        f"CPU while the submissions ran ({wall:.1f} s × {os.cpu_count()} cores): the server used "
        f"{cpu['server']:.1f} s ({cpu['server'] / max(1, len(times)):.2f} s per submission), the machine "
        f"{cpu['machine']:.1f} s.",
    ] + errors_line)
    return Section("load_server", "Load on the server alone: concurrent protocol sessions", body, checks)


if __name__ == "__main__":
    import sys
    report(main(sys.argv[1:]), "--write" in sys.argv[1:])
