"""deploy/: two supervised Streamlit workers behind nginx on loopback. Sessions speak Streamlit's own
websocket protocol (as bench/load_server.py does): each opens the explorer with its sentence and must
get back charts labelled with that sentence, every time from the same worker (X-Upstream names it)."""
import html
import http.client
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
from harness import NGINX, START_TIMEOUT, Deployment, get, worker_healthy  # noqa: E402
from nginx_conf import COOKIE, max_upload_mb, render  # noqa: E402

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx binary not found (CI: apt-get install -y nginx)")

MODEL = "toy-reverse"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    deployment = Deployment(workers=2, run_dir=tmp_path_factory.mktemp("deploy"))
    with deployment:
        yield deployment


def upstream_of(deployment, cookie: str) -> str:
    return get(deployment.base + "/healthz", cookie)[1].get("X-Upstream", "")


def cookies_on_two_workers(deployment) -> tuple[str, str]:
    """Two random browser cookies that nginx's consistent hash sends to different workers."""
    first = secrets.token_hex(16)
    for _ in range(40):
        other = secrets.token_hex(16)
        if upstream_of(deployment, other) != upstream_of(deployment, first):
            return first, other
    raise AssertionError("40 random cookies all hashed to one worker")


def rerun(ws, text: str, sentence_box: str | None = None) -> tuple[list[str], str | None]:
    """Open the explorer with `text` in the link, or, given the sidebar's sentence box id, type `text`
    into it as the browser would (a rerun carrying the box's new value). Returns the charts' x labels
    and the sentence box's id."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    message = BackMsg()
    link_text = text if sentence_box is None else "a"
    message.rerun_script.query_string = urllib.parse.urlencode({"model": MODEL, "text": link_text})
    message.rerun_script.page_name = "explorer"
    if sentence_box:
        typed = message.rerun_script.widget_states.widgets.add()
        typed.id, typed.string_value = sentence_box, text
    ws.send(message.SerializeToString())
    return read_run(ws)


def read_run(ws) -> tuple[list[str], str | None]:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    labels, sentence_box, deadline = [], None, time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        forward = ForwardMsg()
        forward.ParseFromString(ws.recv(timeout=RUN_TIMEOUT))
        kind = forward.WhichOneof("type")
        if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
            element = forward.delta.new_element
            assert element.WhichOneof("type") != "exception", element.exception.message
            if element.WhichOneof("type") == "plotly_chart":
                for trace in json.loads(element.plotly_chart.spec).get("data", []):
                    labels += [html.unescape(x) for x in trace.get("x") or [] if isinstance(x, str)]
            elif element.WhichOneof("type") == "text_area" and element.text_area.label == "Sentence":
                sentence_box = element.text_area.id
        elif kind == "script_finished":
            assert forward.script_finished == 0, f"script ended with status {forward.script_finished}"
            return labels, sentence_box
    raise AssertionError(f"no script_finished in {RUN_TIMEOUT} s")


def open_session(deployment, cookie: str):
    from websockets.sync.client import connect
    return connect(deployment.base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                   origin=deployment.base, additional_headers={"Cookie": f"{COOKIE}={cookie}"},
                   max_size=2**28, open_timeout=20)


def expected_labels(text: str) -> set[str]:
    tokens = text.split() + ["</s>"]
    return {f"{i} {t}" for i, t in enumerate(tokens)}


def student(deployment, cookie: str, sentences: list[str], seen: dict) -> None:
    """One browser: open a page with a sentence in the link and type another into the sidebar; then
    reconnect (a new websocket, the same cookie) and do it again."""
    try:
        for linked, typed in (sentences[:2], sentences[2:]):
            with open_session(deployment, cookie) as ws:
                seen["upstreams"].append(ws.response.headers.get("X-Upstream"))
                labels, box = rerun(ws, linked)
                seen["labels"].append((linked, labels))
                seen["labels"].append((typed, rerun(ws, typed, box)[0]))
        seen["upstreams"].append(upstream_of(deployment, cookie))      # its plain HTTP requests too
    except Exception as e:  # reported by the test thread below, not lost in this one
        seen["error"] = repr(e)


def test_rendered_config_is_valid_and_follows_the_app_limits(tmp_path):
    path = render(["127.0.0.1:1", "127.0.0.1:2"], "127.0.0.1:3", tmp_path)
    text = path.read_text()
    check = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(path), "-e", str(tmp_path / "logs/error.log")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    assert f"client_max_body_size {max_upload_mb() * 1024 + 64}k;" in text
    directives = [line.split("#")[0].strip() for line in text.splitlines()]
    assert "hash $client_key consistent;" in directives and not any(d.startswith("ip_hash") for d in directives)
    assert not any("/var/" in d or "/run/" in d for d in directives) and "daemon off;" in directives


def test_health_answers_through_nginx_with_security_headers(deployment):
    status, headers, body = get(deployment.base + "/healthz")
    assert (status, body) == (200, b"ok")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "SAMEORIGIN" and "frame-ancestors" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"]


def test_first_response_sets_the_cookie_that_keeps_its_worker(deployment):
    status, headers, _ = get(deployment.base + "/")
    assert status == 200
    cookie = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    assert len(cookie) >= 16
    assert all(upstream_of(deployment, cookie) == headers["X-Upstream"] for _ in range(5))


def test_two_students_draw_their_own_sentences_each_on_its_own_worker(deployment):
    cookies = cookies_on_two_workers(deployment)
    plans = [["c a f e", "a b c", "j i h g", "d d"], ["b d g h", "e e d", "f a c e d", "g"]]
    seen = [{"upstreams": [], "labels": []} for _ in cookies]
    threads = [threading.Thread(target=student, args=(deployment, c, p, s)) for c, p, s in zip(cookies, plans, seen)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(4 * RUN_TIMEOUT)
    for record in seen:
        assert "error" not in record, record.get("error")
        assert len(record["labels"]) == 4
        for text, labels in record["labels"]:
            assert labels, f"no chart for {text!r}"
            assert set(labels) == expected_labels(text), (text, sorted(set(labels)))   # nothing from the other
        assert len(set(record["upstreams"])) == 1, f"session moved between workers: {record['upstreams']}"
    assert seen[0]["upstreams"][0] != seen[1]["upstreams"][0]


def test_body_over_the_upload_limit_is_refused_with_413(deployment):
    too_big = (max_upload_mb() + 1) * 2**20
    assert put_upload(deployment, too_big, send_body=False)[0] == 413
    for size in (1000, 100_000):        # nginx buffers a body over 16 KiB to its temp folder first
        status, upstream = put_upload(deployment, size, send_body=True)
        assert status == 403 and upstream, f"a {size}-byte upload reaches Streamlit, which wants its XSRF token"


def put_upload(deployment, size: int, send_body: bool) -> tuple[int, str | None]:
    """nginx refuses on Content-Length alone, before reading a byte of the body."""
    connection = http.client.HTTPConnection("127.0.0.1", deployment.port, timeout=10)
    try:
        connection.putrequest("PUT", "/_stcore/upload_file/session/file")
        connection.putheader("Content-Length", str(size))
        connection.endheaders()
        if send_body:
            connection.send(b"x" * size)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("X-Upstream")
    finally:
        connection.close()


def test_a_dead_worker_is_restarted(deployment):
    victim = deployment.state()["workers"][0]
    os.kill(victim["pid"], signal.SIGKILL)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        now = next(w for w in deployment.state()["workers"] if w["port"] == victim["port"])
        if now["pid"] != victim["pid"] and worker_healthy(victim["port"]):
            break
        assert get(deployment.base + "/healthz")[0] == 200, "nginx must route around the dead worker"
        time.sleep(0.5)
    else:
        raise AssertionError(f"worker not restarted\n{deployment.log()}")
    assert now["restarts"] == 1


def test_term_stops_nginx_and_every_worker(deployment):
    pids = deployment.stop()
    assert deployment.proc.returncode == 0, deployment.log()
    assert get(deployment.base + "/healthz")[0] == 0, "nginx still answers"
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text(), pid
