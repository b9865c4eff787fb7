"""`franq serve`'s sockets and doors under attack (issue 47 items 3 and 7, issue 46.6), each
through real sockets against a real uvicorn server running franq's bounded protocol
(franq.apps.serve_sockets), or through the real ``franq serve`` command: 300 half-open
connections, a head that never ends, every connection busy, log floods, repeated JSON
keys, a missing or wrong token, a service bound beyond loopback without one, /openapi.json
schemas, /health without paths, text that is not English. No case measures time: a
timeout is tested by the 408 it sends."""
from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import socket
import time

import httpx
import pytest

from conftest import make_franq, run_cli
from franq.apps import serve_sockets
from franq.apps.serve import create_app
from servers import serve_in_thread

HTTP = httpx.Client(timeout=30)
EXAMPLE = {"question": "When was the Eiffel Tower built?",
           "passages": ["The Eiffel Tower was built from 1887 to 1889 in Paris."],
           "answer": "The Eiffel Tower was built from 1887 to 1889."}
TOKEN = "s3cret-token-0123456789"


@contextlib.contextmanager
def bounded(app, **bounds):
    """``app`` served with franq's bounded protocol (``header_timeout``, ``max_connections``, ``budget``)."""
    with serve_in_thread(app, http=serve_sockets.protocol(**bounds)) as base:
        yield base


def _half_open(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)))
    s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never ends its headers
    return s


def _read_all(s: socket.socket) -> bytes:
    s.settimeout(30)  # a safety net against a hang, not a measurement
    out = b""
    while chunk := s.recv(4096):
        out += chunk
    return out


# ---------------------------------------------------------------------------- sockets
def test_health_answers_under_300_half_open_connections(tiny_lm, caplog):
    budget = serve_sockets.LogBudget(burst=10, window=3600)
    held = []
    with caplog.at_level(logging.WARNING, logger="franq.serve"), \
            bounded(create_app(make_franq(tiny_lm)), header_timeout=600, max_connections=16, budget=budget) as base:
        try:
            held = [_half_open(base) for _ in range(300)]
            r = HTTP.get(f"{base}/health")
        finally:
            for s in held:
                s.close()
    assert r.status_code == 200 and r.json()["status"] == "ok"
    lines = [x for x in caplog.records if x.name == "franq.serve"]
    assert 1 <= len(lines) <= 10 and budget.held >= 270  # one line per connection closed, the flood held back
    assert "closed the oldest connection without a request" in lines[0].getMessage()


def test_a_head_that_never_ends_gets_408_and_is_closed(tiny_lm, caplog):
    with caplog.at_level(logging.WARNING, logger="franq.serve"), \
            bounded(create_app(make_franq(tiny_lm)), header_timeout=0.3) as base:
        got = _read_all(_half_open(base))
    assert got.startswith(b"HTTP/1.1 408") and b"--header-timeout" in got
    assert any("sent no whole request head in 0.3 s" in x.getMessage() for x in caplog.records)


def test_a_kept_alive_connection_has_the_same_head_timeout_for_its_next_request(tiny_lm):
    # 2 s, not 0.3: the FIRST head must arrive within it. A busy machine can stall this
    # thread between connect and send for longer than that, so a first 408 (the stall, not
    # the server) starts the exchange again on a new connection, up to 5 times; the
    # second head never ends, so its 408 comes whatever the value
    with bounded(create_app(make_franq(tiny_lm)), header_timeout=2) as base:
        host, port = base.removeprefix("http://").split(":")
        for _ in range(5):
            s = socket.create_connection((host, int(port)))
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            first = s.recv(65536)
            if not first.startswith(b"HTTP/1.1 408"):
                break
            s.close()
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the second head never ends
        rest = _read_all(s)
    assert first.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408" in first + rest


def test_when_every_connection_is_busy_a_new_one_gets_503(tiny_lm):
    with bounded(create_app(make_franq(tiny_lm)), header_timeout=600, max_connections=2) as base:
        host, port = base.removeprefix("http://").split(":")
        busy = []
        for _ in range(2):  # heads complete, bodies pending: requests in progress, not idle
            s = socket.create_connection((host, int(port)))
            s.sendall(b"POST /score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n")
            s.settimeout(30)  # a safety net against a hang, not a measurement
            # the server read the head and its handler asks for the body: the request is in progress
            # (a connection without a head would be evicted, not busy), however busy the machine is
            assert s.recv(64).startswith(b"HTTP/1.1 100")
            s.sendall(b"{")
            busy.append(s)
        try:
            late = socket.create_connection((host, int(port)))
            got = _read_all(late)
        finally:
            for s in busy:
                s.close()
    assert got.startswith(b"HTTP/1.1 503") and b"--max-connections" in got


def test_log_budget_holds_back_a_flood_and_counts_it(caplog):
    now = [0.0]
    budget = serve_sockets.LogBudget(burst=3, window=10, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="franq.serve"):
        said = [budget.warn("refused %d", i) for i in range(100)]
        now[0] = 11.0
        budget.warn("refused again")
    assert sum(said) == 3 and caplog.records[-1].getMessage() == "refused again (97 similar lines held back)"


def test_log_budget_window_starts_at_the_first_line_not_at_start_up(caplog):
    """A flood that begins just before ``window`` seconds after start-up is one window, not two."""
    now = [0.0]
    budget = serve_sockets.LogBudget(burst=3, window=10, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="franq.serve"):
        said = []
        for i in range(20):
            now[0] = 9.9 + 0.01 * i  # 9.9 s .. 10.09 s after the budget was made
            said.append(budget.warn("refused %d", i))
    assert sum(said) == 3


def test_connection_cap_fits_the_open_file_limit(monkeypatch, caplog):
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda kind: (100, 100))
    monkeypatch.setattr(resource, "setrlimit", lambda kind, value: None)
    with caplog.at_level(logging.WARNING, logger="franq.serve"):
        assert serve_sockets.connection_cap(500) == 100 - serve_sockets.SPARE_FILES
        assert serve_sockets.connection_cap(8) == 8
    assert "lowered to 68 (open-file limit 100)" in caplog.text


# ---------------------------------------------------------------------------- repeated keys
@pytest.mark.parametrize("path, body", [
    ("/score", '{"question": "a", "question": "b", "passages": ["p"], "answer": "x"}'),
    ("/score", '{"question": "a", "passages": ["p"], "answer": "x", "meta": {"k": 1, "k": 2}}'),
    ("/score_many", '{"examples": [{"question": "a", "passages": ["p"], "answer": "x", "answer": "y"}]}'),
    ("/answer", '{"question": "a", "passages": ["p"], "passages": ["q"]}'),
    ("/render", '{"answer": "x", "claims": [], "claims": []}'),
])
def test_repeated_json_keys_are_400_naming_the_key(tiny_lm, path, body):
    with bounded(create_app(make_franq(tiny_lm))) as base:
        r = HTTP.post(f"{base}{path}", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and re.search(r"key '\w+' appears twice in one object", r.json()["detail"])


# ---------------------------------------------------------------------------- the token
@pytest.fixture(scope="module")
def token_url(tiny_lm):
    with bounded(create_app(make_franq(tiny_lm), token=TOKEN, docs=True)) as base:
        yield base


@pytest.mark.parametrize("method, path", [("GET", "/health"), ("POST", "/score"), ("POST", "/score_many"),
                                          ("POST", "/answer"), ("POST", "/render"), ("GET", "/openapi.json"),
                                          ("GET", "/docs")])
@pytest.mark.parametrize("auth", [None, "Bearer wrong-token-0123456789", f"Basic {TOKEN}", f"Bearer {TOKEN}x"])
def test_every_route_needs_the_token(token_url, method, path, auth):
    headers = {"content-type": "application/json", **({"authorization": auth} if auth else {})}
    r = HTTP.request(method, f"{token_url}{path}", content=json.dumps(EXAMPLE), headers=headers)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "Bearer <token>" in r.json()["detail"] and TOKEN not in r.text


def test_the_right_token_gets_in_and_the_page_needs_none(token_url, monkeypatch):
    import franq.apps.serve_guard as guard

    calls = []
    real = guard.hmac.compare_digest
    monkeypatch.setattr(guard.hmac, "compare_digest", lambda a, b: calls.append(1) or real(a, b))
    r = HTTP.post(f"{token_url}/score", json=EXAMPLE, headers={"authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200 and calls  # compared in constant time
    assert HTTP.get(f"{token_url}/").status_code == 200 and 'id="token"' in HTTP.get(f"{token_url}/").text


@pytest.mark.parametrize("args, env, detail", [
    (["--host", "0.0.0.0"], {}, "--host 0.0.0.0: binding beyond loopback needs a token"),
    (["--host", "::"], {}, "--host ::: binding beyond loopback needs a token"),
    (["--host", "0.0.0.0"], {"FRANQ_SERVE_TOKEN": "short"}, "--token: expected 16 or more printable"),
    (["--token", "has a space in it 0123"], {}, "--token: expected 16 or more printable"),
])
def test_serve_refuses_to_start_unprotected(args, env, detail, monkeypatch):
    pytest.importorskip("uvicorn")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    res = run_cli("serve", *args, "--port", "0")
    assert res.exit_code != 0 and f"Error: {detail}" in res.output and len(res.output.strip().splitlines()) == 1
    assert "has a space" not in res.output and "short" not in res.output.replace("expected", "")


# ---------------------------------------------------------------------------- what it says about itself
def test_openapi_has_request_and_response_schemas_for_every_route(tiny_lm):
    with bounded(create_app(make_franq(tiny_lm), docs=True)) as base:
        schema = HTTP.get(f"{base}/openapi.json").json()
    paths, found = schema["paths"], schema["components"]["schemas"]
    for path in ("/score", "/score_many", "/answer", "/render"):
        op = paths[path]["post"]
        body = op["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        reply = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert found[body]["properties"] and found[reply]["properties"] and "400" in op["responses"]
    assert {"question", "passages", "answer"} <= set(found["ScoreRequest"]["required"])
    assert '"fast"' in json.dumps(found["ScoreRequest"]["properties"]["mode"])  # a request may ask for the fast mode
    assert paths["/health"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Health")
    assert "claims" in found["ResultRecord"]["properties"] and "detail" in found["Error"]["properties"]


def test_health_shows_names_and_sha256_never_a_path(tiny_lm, tmp_path, monkeypatch):
    from franq.pipeline import Franq

    cal = tmp_path / "calibrators" / "mine.json"
    cal.parent.mkdir()
    cal.write_text("{}")
    fake = {"long": {"calibrator": str(cal), "faithfulness": f"nli:{tmp_path}/models/deberta", "evidence": "passes"}}
    monkeypatch.setattr(Franq, "components", property(lambda self: fake))
    with bounded(create_app(make_franq(tiny_lm))) as base:
        r = HTTP.get(f"{base}/health")
    assert r.status_code == 200 and str(tmp_path) not in r.text and "/tmp" not in r.text
    comp = r.json()["components"]["long"]
    assert comp["calibrator"]["name"] == "mine.json" and re.fullmatch(r"[0-9a-f]{16}", comp["calibrator"]["sha256"])
    assert comp["faithfulness"] == "nli:deberta" and comp["evidence"] == "passes"


FRENCH = {"question": "Quand la tour Eiffel a-t-elle été construite ?",
          "passages": ["La tour Eiffel a été construite de 1887 à 1889 à Paris pour l'Exposition universelle."],
          "answer": "La tour Eiffel a été construite de 1887 à 1889 par les ouvriers de la société de Gustave Eiffel."}
RUSSIAN = {**EXAMPLE, "answer": "Эйфелева башня была построена в 1887-1889 годах в Париже."}


@pytest.mark.parametrize("example, multilingual, said", [
    (FRENCH, False, "'answer' looks French"), (RUSSIAN, False, "'answer' looks cyrillic script"),
    (EXAMPLE, False, None), (FRENCH, True, None)])
def test_text_that_is_not_english_is_flagged(tiny_lm, example, multilingual, said):
    with bounded(create_app(make_franq(tiny_lm, {"model": {"multilingual": multilingual}}))) as base:
        r = HTTP.post(f"{base}/score", json=example)
    assert r.status_code == 200, r.text
    flagged = [w for w in r.json()["warnings"] if "English-only" in w]
    assert (said in flagged[0]) if said else flagged == []


def test_a_non_finite_number_in_a_result_is_one_line_never_a_bare_token(tiny_lm, monkeypatch):
    import franq

    real = franq.result_record
    monkeypatch.setattr(franq, "result_record", lambda *a: {**real(*a), "odd": [0.5, math.inf]})
    with bounded(create_app(make_franq(tiny_lm))) as base:
        r = HTTP.post(f"{base}/score", json=EXAMPLE)
    assert r.status_code == 500 and "non-finite number at 'odd[1]'" in r.json()["detail"]


def test_the_real_command_with_a_token_and_a_crowd_of_half_open_connections(tiny_lm_path):
    import os
    import subprocess
    import sys

    from servers import free_port

    port, base = free_port(), None
    env = {**os.environ, "FRANQ_SERVE_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "franq", "serve", "--model", str(tiny_lm_path), "--port", str(port),
                             "--faithfulness", "lexical", "--calibrator", "none", "--max-connections", "4",
                             "--header-timeout", "600"], stderr=subprocess.PIPE, text=True, env=env)
    held = []
    try:
        while True:  # until it listens (or dies: then its stderr says why)
            if proc.poll() is not None:
                pytest.fail(f"franq serve exited with {proc.returncode}: {proc.stderr.read()}")
            try:
                assert HTTP.get(f"http://127.0.0.1:{port}/health").status_code == 401  # the token from the env
                break
            except httpx.TransportError:
                time.sleep(0.1)
        base = f"http://127.0.0.1:{port}"
        began = time.monotonic()
        held = [_half_open(base) for _ in range(50)]
        r = HTTP.get(f"{base}/health", headers={"authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and r.json()["status"] == "ok"
        # the log budget allows LOG_BURST lines per window: bound by the windows the flood
        # actually spanned, so a slow machine is not a failure (no assumption on speed)
        windows = 1 + int((time.monotonic() - began) // serve_sockets.LOG_WINDOW) + 1
    finally:
        for s in held:
            s.close()
        proc.terminate()
        proc.wait()
    log = proc.stderr.read()
    closed = log.count("closed the oldest connection without a request")
    assert TOKEN not in log and 1 <= closed <= serve_sockets.LOG_BURST * windows
    assert "Too many open files" not in log and "Traceback" not in log
