"""deploy/: two supervised Streamlit workers behind nginx on loopback. Sessions speak Streamlit's own
websocket protocol (as bench/load_server.py does): each opens the explorer with its sentence and must
get back charts labelled with that sentence, every time from the same worker (X-Upstream names it).
A Browser keeps cookies as a browser does: every Set-Cookie, websocket handshakes' included, updates it."""
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
from harness import NGINX, START_TIMEOUT, Deployment, get, set_cookie, worker_healthy  # noqa: E402
from nginx_conf import LIMIT_KEY_BYTES, Limits, cookie_name, max_upload_mb, render  # noqa: E402
from viz.figures.browser_view import VIEW_ELEMENT, drawn_labels  # noqa: E402

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx binary not found (CI: apt-get install -y nginx)")

MODEL = "toy-reverse"
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    deployment = Deployment(workers=2, run_dir=tmp_path_factory.mktemp("deploy"))
    with deployment:
        yield deployment


class Browser:
    """One browser's cookies for nginx's address."""

    def __init__(self, deployment):
        self.deployment, self.jar = deployment, {}

    def header(self) -> str | None:
        return "; ".join(f"{k}={v}" for k, v in self.jar.items()) or None

    def take(self, set_cookies: list[str]) -> None:
        for line in set_cookies:
            name, _, rest = line.partition("=")
            self.jar[name.strip()] = rest.split(";")[0]

    @property
    def route(self) -> str | None:
        return self.jar.get(self.deployment.cookie)

    def get(self, path: str) -> tuple[int, dict, bytes]:
        status, headers, body = get(self.deployment.base + path, self.header())
        self.take(headers.get("Set-Cookie", []))
        return status, headers, body

    def connect(self):
        ws = open_session(self.deployment, self.header())
        self.take(ws.response.headers.get_all("Set-Cookie"))
        return ws


def upstream_of(deployment, cookie: str | None) -> str:
    """The worker a request with this Cookie header ('name=value') reaches."""
    return get(deployment.base + "/healthz", cookie)[1].get("X-Upstream", "")


def browsers_on_two_workers(deployment) -> tuple[Browser, Browser]:
    """Two new browsers that nginx pinned to different workers (each by its first response's cookie)."""
    first = Browser(deployment)
    first.get("/healthz")
    for _ in range(40):
        other = Browser(deployment)
        if other.get("/healthz")[1]["X-Upstream"] != upstream_of(deployment, first.header()):
            return first, other
    raise AssertionError("40 new browsers all pinned to one worker")


def rerun(ws, text: str, sentence_box: str | None = None, found: dict | None = None,
          page: str = "explorer") -> tuple[list[str], str | None]:
    """Open `page` (the explorer) with `text` in the link, or, given the sidebar's sentence box id, type `text`
    into it as the browser would (a rerun carrying the box's new value). Returns the charts' x labels
    and the sentence box's id."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    message = BackMsg()
    link_text = text if sentence_box is None else "a"
    message.rerun_script.query_string = urllib.parse.urlencode({"model": MODEL, "text": link_text})
    message.rerun_script.page_name = page
    if sentence_box:
        typed = message.rerun_script.widget_states.widgets.add()
        typed.id, typed.string_value = sentence_box, text
    ws.send(message.SerializeToString())
    return read_run(ws, found)


def read_run(ws, found: dict | None = None) -> tuple[list[str], str | None]:
    """The run's chart labels and sentence box id; `found` collects the session id, download URLs, the
    sidebar uploader's id and the selectboxes' labels."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    labels, sentence_box, deadline = [], None, time.monotonic() + RUN_TIMEOUT
    found = {} if found is None else found
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
            elif element.WhichOneof("type") == "bidi_component" and element.bidi_component.component_name == VIEW_ELEMENT:
                labels += [html.unescape(x) for x in drawn_labels(element.bidi_component.bytes)]   # the explorer's view
            elif element.WhichOneof("type") == "text_area" and element.text_area.label == "Sentence":
                sentence_box = element.text_area.id
            elif element.WhichOneof("type") == "download_button" and element.download_button.url:
                found.setdefault("downloads", []).append(element.download_button.url)
            elif element.WhichOneof("type") == "file_uploader" and element.file_uploader.label.startswith("…or pick"):
                found["uploader"] = element.file_uploader.id
            elif element.WhichOneof("type") == "selectbox":
                found.setdefault("selectboxes", []).append(element.selectbox.label)
        elif kind == "new_session":
            found["session_id"] = forward.new_session.initialize.session_id
        elif kind == "script_finished":
            assert forward.script_finished == 0, f"script ended with status {forward.script_finished}"
            return labels, sentence_box
    raise AssertionError(f"no script_finished in {RUN_TIMEOUT} s")


def open_session(deployment, cookie: str | None):
    """A websocket to /_stcore/stream; `cookie` is the Cookie header."""
    from websockets.sync.client import connect
    return connect(deployment.base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                   origin=deployment.base, additional_headers={"Cookie": cookie} if cookie else {},
                   max_size=2**28, open_timeout=20)


def expected_labels(text: str) -> set[str]:
    tokens = text.split() + ["</s>"]
    return {f"{i} {t}" for i, t in enumerate(tokens)}


def student(browser: Browser, sentences: list[str], seen: dict) -> None:
    """One browser: open a page with a sentence in the link and type another into the sidebar; then
    reconnect (a new websocket, the same cookie) and do it again."""
    try:
        for linked, typed in (sentences[:2], sentences[2:]):
            with browser.connect() as ws:
                seen["upstreams"].append(ws.response.headers.get("X-Upstream"))
                labels, box = rerun(ws, linked)
                seen["labels"].append((linked, labels))
                seen["labels"].append((typed, rerun(ws, typed, box)[0]))
        seen["upstreams"].append(browser.get("/healthz")[1]["X-Upstream"])      # its plain HTTP requests too
    except Exception as e:  # noqa: BLE001 - reported by the test thread below, not lost in this one
        seen["error"] = repr(e)


def test_rendered_config_is_valid_and_follows_the_app_limits(tmp_path):
    path = render(["127.0.0.1:1", "127.0.0.1:2"], "127.0.0.1:3", tmp_path)
    text = path.read_text()
    check = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(path), "-e", str(tmp_path / "logs/error.log")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    assert f"client_max_body_size {max_upload_mb() * 1024 + 64}k;" in text
    directives = [line.split("#")[0].strip() for line in text.splitlines()]
    assert not any(d.startswith(("ip_hash", "hash ")) for d in directives)
    assert not any("/var/" in d or "/run/" in d for d in directives) and "daemon off;" in directives


def test_nginx_logs_no_query_string_and_no_referer(tmp_path):
    """Issue 43: a teacher link's secret was written to access.log 69 times per load (the request and Referers).
    Every access_log uses a format built from none of the variables that hold the query or the Referer."""
    text = render(["127.0.0.1:1"], "127.0.0.1:3", tmp_path).read_text()
    access_logs = [line.split("#")[0].split() for line in text.splitlines() if line.strip().startswith("access_log")]
    assert access_logs and all(len(words) == 3 and words[2] != "combined;" for words in access_logs), access_logs
    formats = " ".join(text.split("log_format")[1:]).split(";")[0] if "log_format" in text else ""
    assert "$uri" in formats, formats
    for leaky in ("$request ", "$request\"", "$request_uri", "$args", "$query_string", "$is_args", "$arg_",
                  "$http_referer", "$request_body", "$http_cookie", "$cookie_"):
        assert leaky not in formats, leaky


def test_the_run_folder_is_private_its_log_keeps_no_secret_and_workers_learn_the_public_url(tmp_path):
    """A --run-dir made 0755 under umask 022: nginx's, Redis's and the workers' logs were 0644 in it. Now the
    folder is 0700 and every log 0600; a teacher link's query and a Referer reach no log; the workers' environment
    names the proxy to trust and the --public-url."""
    from viz.classroom.store import PUBLIC_URL_ENV, TRUSTED_PROXIES_ENV
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o755)
    umask = os.umask(0o022)
    try:
        deployment = Deployment(workers=1, run_dir=run, args=("--public-url", "https://class.example.edu/hall/"))
    finally:
        os.umask(umask)
    secret, referer = secrets.token_urlsafe(24), secrets.token_urlsafe(12)
    with deployment:
        for path in (f"/?class=ABCDEF&teach={secret}", f"/healthz?teach={secret}", "/nowhere?" + secret):
            conn = http.client.HTTPConnection("127.0.0.1", deployment.port, timeout=30)
            conn.request("GET", path, headers={"Referer": f"{deployment.base}/explorer?teach={referer}"})
            conn.getresponse().read()
            conn.close()
        env = worker_environment(deployment.state()["workers"][0]["pid"])
        logs = {p.name: p for p in (run / "logs").iterdir()}
        access = (run / "logs" / "access.log").read_text()
    assert env[TRUSTED_PROXIES_ENV] == "127.0.0.1,::1" and env[PUBLIC_URL_ENV] == "https://class.example.edu/hall"
    assert secret not in access and referer not in access and "teach" not in access, access
    assert '"GET / HTTP/1.1" 200' in access and '"GET /healthz HTTP/1.1" 200' in access, access
    assert (run.stat().st_mode & 0o777, (run / "logs").stat().st_mode & 0o777) == (0o700, 0o700)
    assert {"access.log", "error.log", "redis.log", "nginx.out"} <= set(logs), logs
    assert {name: p.stat().st_mode & 0o777 for name, p in logs.items()} == {name: 0o600 for name in logs}
    refused = subprocess.run([sys.executable, str(ROOT / "deploy" / "serve.py"), "--port", "1", "--public-url",
                              "http://class.example.edu/?teach=x"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--public-url:" in refused.stderr, refused.stderr


class FlakyWorker:
    """A stand-in worker on loopback: it drops the connection of its first `drops` requests without an answer (as
    a keep-alive connection the worker has just closed looks to nginx), then answers 200."""

    def __init__(self, drops: int = 1):
        import http.server
        left = [drops]

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                if left[0] > 0:
                    left[0] -= 1
                    self.close_connection = True
                    return                                   # no status line: nginx sees the connection closed
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_one_failed_request_does_not_send_a_workers_browsers_to_a_dead_backup(tmp_path):
    """Issue 35, item 16: after the other worker died, one failed request on a browser's own (live) worker marked
    it down for 5 s (max_fails=1), so the next requests went to the dead backup: 502, 'no live upstreams' in the
    group whose own worker was alive. Now the group's own worker is always tried first."""
    from harness import free_ports, port_is_free
    live, dead = FlakyWorker(drops=1), f"127.0.0.1:{free_ports(1)}"     # nothing listens on the dead one
    port = free_ports(1)
    listen, upstreams = f"127.0.0.1:{port}", [dead, live.address]
    path = render(upstreams, listen, tmp_path, expose_upstream=True, tokens=[["d" * 32], ["a" * 32]])
    nginx = subprocess.Popen([NGINX, "-p", str(tmp_path), "-c", str(path), "-e", str(tmp_path / "logs/error.log")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cookie = f"{cookie_name(listen, upstreams)}={'a' * 32}"                 # a browser pinned to the live worker
    try:
        wait_until(lambda: not port_is_free(port), "nginx did not start", 30)       # no request: the drop is kept
        first = get(f"http://{listen}/page", cookie)[0]                     # dropped by its worker, the backup dead
        after = [get(f"http://{listen}/page", cookie) for _ in range(3)]
    finally:
        nginx.terminate()
        nginx.wait(10)
        live.server.shutdown()
    assert first == 502
    log = (tmp_path / "logs" / "error.log").read_text()
    assert [(status, headers.get("X-Upstream")) for status, headers, _ in after] == [(200, live.address)] * 3, log
    assert "no live upstreams" not in log, log


def test_idle_connections_to_a_worker_close_in_nginx_before_the_worker_closes_them(tmp_path):
    """The other half of item 16's 502s: a request sent on a keep-alive connection the worker had just closed
    fails. nginx's idle timeout for worker connections must be below the worker's (uvicorn's keep-alive)."""
    import re
    import uvicorn
    text = render(["127.0.0.1:1", "127.0.0.1:2"], "127.0.0.1:3", tmp_path).read_text()
    worker_idle_s = uvicorn.Config(app=None).timeout_keep_alive
    timeouts = re.findall(r"keepalive_timeout (\d+)s;", text.split("server {")[0])
    assert len(timeouts) == 3 and all(int(t) < worker_idle_s for t in timeouts), (timeouts, worker_idle_s)


def test_health_answers_through_nginx_with_security_headers(deployment):
    status, headers, body = get(deployment.base + "/healthz")
    assert (status, body) == (200, b"ok")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "SAMEORIGIN" and "frame-ancestors" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"]


def test_first_response_sets_the_cookie_that_keeps_its_worker(deployment):
    browser = Browser(deployment)
    status, headers, _ = browser.get("/")
    assert status == 200
    assert len(browser.route) == 32
    assert all(browser.get("/healthz")[1]["X-Upstream"] == headers["X-Upstream"] for _ in range(5))


def test_two_students_draw_their_own_sentences_each_on_its_own_worker(deployment):
    browsers = browsers_on_two_workers(deployment)
    plans = [["c a f e", "a b c", "j i h g", "d d"], ["b d g h", "e e d", "f a c e d", "g"]]
    seen = [{"upstreams": [], "labels": []} for _ in browsers]
    threads = [threading.Thread(target=student, args=(b, p, s)) for b, p, s in zip(browsers, plans, seen)]
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


def test_each_render_draws_new_secret_tokens_each_naming_one_upstream(tmp_path):
    upstreams = ["127.0.0.1:1", "127.0.0.1:2"]
    first, second = (render(upstreams, "127.0.0.1:3", tmp_path / d).read_text() for d in "ab")
    cookie = cookie_name("127.0.0.1:3", upstreams)
    assert cookie.startswith("tv_route_") and cookie != cookie_name("0.0.0.0:3", upstreams)

    def tokens(text: str) -> dict[str, str]:
        block = text.split(f"map $cookie_{cookie} $route_group {{")[1].split("}")[0]
        return dict(line.strip().rstrip(";").split() for line in block.splitlines()[2:] if line.strip())
    one, two = tokens(first), tokens(second)
    assert len(one) == 2 * 2000 and sorted(set(one.values())) == ["tv_worker_0", "tv_worker_1"]
    assert not set(one) & set(two), "a render reused another's tokens"
    assert (tmp_path / "a" / "nginx.conf").stat().st_mode & 0o077 == 0, "the tokens are readable by others"


def forged_cookies(deployment, issued: str) -> dict[str, str]:
    flipped = issued[:-1] + ("0" if issued[-1] != "0" else "1")
    return {"random token": secrets.token_hex(16), "issued token, one digit changed": flipped,
            "300 bytes": "x" * 300, "issued token + 300 bytes": issued + "x" * 300}


def test_a_cookie_nginx_did_not_issue_chooses_no_worker(deployment):
    """Issue 27 finding 7: a value of the client's own is routed round-robin (both workers answer it) and
    the response replaces it with an issued token; nginx never logs a limit key too long to hold."""
    browser = Browser(deployment)
    browser.get("/healthz")
    for what, value in forged_cookies(deployment, browser.route).items():
        header = f"{deployment.cookie}={value}"
        answers = [get(deployment.base + "/healthz", header) for _ in range(6)]
        assert all(status == 200 for status, _, _ in answers), what
        assert len({h["X-Upstream"] for _, h, _ in answers}) == 2, f"{what}: always sent to one worker"
        for _, h, _ in answers:
            issued = set_cookie(h, deployment.cookie)
            assert issued != value and len(issued) == 32, what
            assert upstream_of(deployment, f"{deployment.cookie}={issued}") == h["X-Upstream"], what
    log = (deployment.run_dir / "logs" / "error.log").read_text(errors="replace")
    assert "key is more than" not in log, log[-2000:]


def test_a_300_byte_cookie_gets_no_more_websockets_than_any_browser(deployment):
    """Issue 27 finding 7: 60 websockets with one 300-byte cookie all connected (nginx: "key is more than
    255 bytes"). The per-browser limit keys by the first 64 bytes: 16 connect, the rest get 429."""
    from websockets.exceptions import InvalidStatus
    header = f"{deployment.cookie}={'y' * 300}"
    opened, refused = [], []
    try:
        for _ in range(Limits().client_connections + 8):
            try:
                opened.append(open_session(deployment, header))
            except InvalidStatus as e:
                refused.append(e.response.status_code)
    finally:
        for ws in opened:
            ws.close()
    assert len(opened) == Limits().client_connections and set(refused) == {429}, (len(opened), refused)
    assert LIMIT_KEY_BYTES < 256


def upload_file(browser: Browser, session_id: str, name: str, data: bytes) -> tuple[int, str, str]:
    """PUT one file to the session's upload URL as Streamlit's frontend does (multipart, the XSRF token of
    the _streamlit_xsrf cookie in X-Xsrftoken). Returns (status, file id, X-Upstream)."""
    from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string
    browser.jar.setdefault("_streamlit_xsrf", generate_xsrf_token_string())
    file_id, boundary = secrets.token_hex(8), secrets.token_hex(12)
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: text/plain\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    connection = http.client.HTTPConnection("127.0.0.1", browser.deployment.port, timeout=30)
    try:
        connection.request("PUT", f"/_stcore/upload_file/{session_id}/{file_id}", body=body, headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "Cookie": browser.header(),
            "X-Xsrftoken": browser.jar["_streamlit_xsrf"], "Origin": browser.deployment.base})
        response = connection.getresponse()
        response.read()
        browser.take(response.headers.get_all("Set-Cookie") or [])
        return response.status, file_id, response.getheader("X-Upstream")
    finally:
        connection.close()


def rerun_with_upload(ws, uploader: str, file_id: str, name: str, size: int, found: dict) -> None:
    """The rerun the browser sends once the upload is done: the uploader's state names the file."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    message = BackMsg()
    message.rerun_script.query_string = urllib.parse.urlencode({"model": MODEL, "text": "a b"})
    message.rerun_script.page_name = "explorer"
    state = message.rerun_script.widget_states.widgets.add()
    state.id = uploader
    info = state.file_uploader_state_value.uploaded_file_info.add()
    info.file_id, info.name, info.size = file_id, name, size
    ws.send(message.SerializeToString())
    read_run(ws, found)


def wait_until(condition, what: str, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def test_after_its_worker_dies_a_session_downloads_and_uploads_where_it_reconnected(deployment):
    """Issue 27 finding 6: a session moved to the other worker while its own was down must keep its CSV
    downloads and uploads on the worker that now holds it, also once its old worker is back (they got 404
    and 400 there: the cookie still named the old worker)."""
    browser, sentence = Browser(deployment), "b a d c"
    browser.get("/")
    old_route, own = browser.route, upstream_of(deployment, browser.header())
    with browser.connect() as ws:
        assert ws.response.headers["X-Upstream"] == own
        rerun(ws, sentence)
    victim = next(w for w in deployment.state()["workers"] if f"127.0.0.1:{w['port']}" == own)
    os.kill(victim["pid"], signal.SIGKILL)
    with browser.connect() as ws:                        # Streamlit's reconnect: the same page, a new session
        moved_to = ws.response.headers["X-Upstream"].split(", ")[-1]
        assert moved_to != own
        found = {}
        # the positional page's CSV files are served by URL (a browser view's deck makes its CSV in the run that
        # asks for it: the step-through page's are, since its scaling section moved into its deck)
        labels, _ = rerun(ws, sentence, found=found, page="positional")
        assert expected_labels(sentence) <= set(labels) and found.get("downloads"), found
        old_cookie = f"{deployment.cookie}={old_route}"
        wait_until(lambda: worker_healthy(victim["port"]) and upstream_of(deployment, old_cookie) == own,
                   f"the killed worker {own} is not back\n{deployment.log()}")
        # Its old worker is back, and the old cookie would go there; this browser's cookie follows its session.
        bodies = []
        for url in found["downloads"]:
            status, headers, body = browser.get(url)
            assert (status, headers["X-Upstream"]) == (200, moved_to), (url, status, headers.get("X-Upstream"))
            bodies.append(body.decode())
        assert any(body.startswith(",") and "\n0 b," in body for body in bodies), [b[:100] for b in bodies]   # the norms
        text = "d c b a\nc c a\n".encode()
        status, file_id, upstream = upload_file(browser, found["session_id"], "mine.txt", text)
        assert (status, upstream) == (204, moved_to)
        after = {}
        rerun_with_upload(ws, found["uploader"], file_id, "mine.txt", len(text), after)
        assert "2 sentences in the file" in after.get("selectboxes", []), after


def open_in_chromium(chromium, deployment, want: str | None, avoid: str | None = None):
    """A new browser (its own cookies) on the explorer through nginx, pinned to worker `want` (or any but
    `avoid`): new browsers go round-robin, so a few are opened until one lands there. Returns (context, page,
    worker, responses), where responses collects (status, method, path, X-Upstream) of every response."""
    from browser_utils import wait_for_app
    url = deployment.base + "/explorer?" + urllib.parse.urlencode({"model": MODEL, "text": "b a d c"})
    for _ in range(12):
        context = chromium.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        page = context.new_page()
        worker = page.goto(url).headers.get("x-upstream", "")
        if (want is None or worker == want) and worker != avoid:
            responses = []
            page.on("response", lambda r, responses=responses: responses.append(
                (r.status, r.request.method, urllib.parse.urlparse(r.url).path, r.headers.get("x-upstream"))))
            wait_for_app(page)
            page.wait_for_selector(".js-plotly-plot", timeout=240_000)
            return context, page, worker, responses
        context.close()
    raise AssertionError(f"12 new browsers, none pinned to {want or 'another worker than ' + str(avoid)}")


def wait_for_page(page, condition, what: str, timeout: float = 240) -> None:
    """wait_until for a Playwright page: its events are handed over only while Playwright waits."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        page.wait_for_timeout(300)


def kill_and_use_right_after(deployment, page, worker: str, responses: list, tmp_path) -> str:
    """SIGKILL the page's worker; once the page has reconnected to the other one, download a CSV and upload a
    file at once, as a student would. Returns the worker the page moved to."""
    from browser_utils import wait_for_app
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    finished = []

    def watch(ws):                                      # the session's runs, as the server reports them
        ws.on("framereceived", lambda payload: isinstance(payload, bytes) and
              ForwardMsg.FromString(payload).WhichOneof("type") == "script_finished" and finished.append(ws))
    page.on("websocket", watch)
    victim = next(w for w in deployment.state()["workers"] if f"127.0.0.1:{w['port']}" == worker)
    os.kill(victim["pid"], signal.SIGKILL)
    killed = len(responses)
    # Streamlit's frontend polls health and host-config and reopens its websocket; the student types a sentence
    wait_for_page(page, lambda: any(path == "/_stcore/host-config" and status == 200
                                    for status, _m, path, _u in responses[killed:]), "the page never reconnected")
    box = page.locator('[data-testid="stSidebar"] textarea').first
    box.fill("c a b d")
    box.press("Control+Enter")
    wait_for_page(page, lambda: finished, "the page never ran again after the kill")
    wait_for_app(page)
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download CSV").first.click()
    saved = tmp_path / f"after-kill-{victim['port']}.csv"
    download.value.save_as(saved)
    assert saved.read_text().startswith((",0 c,", ",0 b,")), saved.read_text()[:200]    # the chart's matrix
    upload = tmp_path / "mine.txt"
    upload.write_text("d c b a\nc c a\n")
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(upload))
    page.get_by_text("2 sentences in the file").wait_for(timeout=60_000)
    after = responses[killed:]
    failed = [r for r in after if r[0] >= 500]
    assert not failed, f"{failed}\n{(deployment.run_dir / 'logs' / 'error.log').read_text()[-2000:]}"
    puts = [r for r in after if r[1] == "PUT" and "/_stcore/upload_file/" in r[2]]
    media = [r for r in after if r[2].startswith("/media/")]
    assert puts and all(r[0] == 204 for r in puts) and all(r[0] == 200 for r in media), (puts, media)
    moved_to = puts[-1][3].split(", ")[-1]                 # (a download is the browser's, not the page's response)
    assert moved_to != worker and all(r[3].split(", ")[-1] == moved_to for r in puts + media), after
    return moved_to


@pytest.mark.browser
def test_in_a_real_browser_downloads_and_uploads_work_right_after_either_worker_dies(deployment, tmp_path):
    """Issue 35, item 16: after SIGKILL of the page's worker, Chromium's CSV download and upload right after the
    page reconnected got 502 (nginx tried the dead worker, then 'no live upstreams' in the group whose own
    worker was alive), and host-config too. Both directions: kill the first worker, then the second, each
    time with a browser pinned to it; no response of 500 or more after the kill."""
    from browser_utils import browser
    workers = [f"127.0.0.1:{w['port']}" for w in deployment.state()["workers"]]
    with browser() as chromium:
        for victim in workers:
            wait_until(lambda: all(worker_healthy(int(w.rsplit(":", 1)[1])) for w in workers),
                       f"a worker is not back\n{deployment.log()}")
            context, page, worker, responses = open_in_chromium(chromium, deployment, want=victim)
            try:
                kill_and_use_right_after(deployment, page, worker, responses, tmp_path)
            finally:
                context.close()


def test_a_dead_worker_is_restarted(deployment):
    victim = deployment.state()["workers"][0]
    restarts = victim["restarts"]
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
    assert now["restarts"] == restarts + 1


def worker_environment(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(pair.decode(errors="replace").partition("=")[::2] for pair in pairs if pair)


def test_the_supervisor_runs_the_class_stores_redis_names_it_to_every_worker_and_restarts_it(deployment):
    """Issue 32: one Redis for the workers' classes, on a Unix socket only its user may open, with a password;
    killed, it is started again with every class and answer back (append-only file)."""
    from viz.classroom.redis_store import RedisStore
    from viz.classroom.store import REDIS_URL_ENV, Question, StoreDown
    redis = deployment.state()["redis"]
    socket_path = Path(redis["socket"])
    assert redis["alive"] and socket_path.parent == deployment.run_dir / "redis"
    assert socket_path.stat().st_mode & 0o077 == 0 and (socket_path.parent / "redis.conf").stat().st_mode & 0o077 == 0
    urls = {worker_environment(w["pid"]).get(REDIS_URL_ENV) for w in deployment.state()["workers"]}
    assert len(urls) == 1 and next(iter(urls)).startswith(f"unix://{socket_path}?password="), urls
    url = urls.pop()
    assert "password" not in (deployment.run_dir / "state.json").read_text()
    store = RedisStore(url)
    code, secret = store.create()
    student = store.enrol(code, "10.0.0.1")
    asked = store.ask(code, secret, Question("k", {}, ("a", "b"), 0, "explorer", {}))
    assert store.answer(code, asked.id, student, 1)
    os.kill(redis["pid"], signal.SIGKILL)

    def back() -> bool:
        now = deployment.state()["redis"]
        try:
            return now["pid"] != redis["pid"] and now["alive"] and store.exists(code)
        except StoreDown:                                  # down until the supervisor's restart
            return False
    wait_until(back, f"redis not restarted with its classes\n{deployment.log()}", 30)
    assert deployment.state()["redis"]["restarts"] == redis["restarts"] + 1
    assert store.tally(code, asked.id) == [0, 1] and not store.answer(code, asked.id, student, 0)


def test_workers_trust_only_the_local_nginx_and_have_no_public_url_unless_given(deployment):
    """live.py trusts X-Real-IP only from TRANSFORMER_VIZ_TRUSTED_PROXIES (unset under a bare `streamlit run`)."""
    from viz.classroom.store import PUBLIC_URL_ENV, TRUSTED_PROXIES_ENV
    for worker in deployment.state()["workers"]:
        env = worker_environment(worker["pid"])
        assert env.get(TRUSTED_PROXIES_ENV) == "127.0.0.1,::1" and PUBLIC_URL_ENV not in env


def test_with_redis_url_the_workers_use_that_redis_and_none_is_started(tmp_path):
    """Workers on several machines share one Redis: --redis names it, and the supervisor starts none."""
    from redis_utils import RedisServer
    from viz.classroom.store import REDIS_URL_ENV
    shared = RedisServer(tmp_path / "shared", persist=False)
    (tmp_path / "run").mkdir()
    try:
        with Deployment(workers=1, run_dir=tmp_path / "run", args=("--redis", shared.url)) as deployment:
            state = deployment.state()
            assert state["redis"] is None and not (deployment.run_dir / "redis").exists()
            assert worker_environment(state["workers"][0]["pid"])[REDIS_URL_ENV] == shared.url
    finally:
        shared.stop()
    refused = subprocess.run([sys.executable, str(ROOT / "deploy" / "serve.py"), "--port", "1", "--redis", "http://x"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--redis: Redis URL must specify one of" in refused.stderr, refused.stderr


def test_term_stops_nginx_and_every_worker(deployment):
    pids = deployment.stop()
    assert deployment.proc.returncode == 0, deployment.log()
    assert len(pids) == 3, "two workers and the class store's Redis"
    assert not (deployment.run_dir / "redis" / "redis.sock").exists(), "Redis still listens"
    assert get(deployment.base + "/healthz")[0] == 0, "nginx still answers"
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text(), pid
