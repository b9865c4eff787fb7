"""Bounded work in `franq serve`: the span segmentation of /render is
O(n log n) (operations counted, not timed); parsing, scoring and rendering run off the
event loop, so /health answers while they work; a request over its time budget gets a
504 and releases the model at the next forward pass; a client that declares more bytes
than it sends gets a 408; a client that goes away is one log line, never a traceback;
SIGTERM with a request in progress stops it and the process exits."""
from __future__ import annotations

import json
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import httpx
import pytest
from conftest import make_franq
from servers import free_port, serve_in_thread

from franq.apps import serve, spans
from franq.apps.serve import create_app

HTTP = httpx.Client(timeout=None)
EXAMPLE = {"question": "When was the Eiffel Tower built?",
           "passages": [{"title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889."}],
           "answer": "The Eiffel Tower was built from 1887 to 1889. It is made of gold."}


def _poll(condition, what: str, tries: int = 3000):
    """Wait for ``condition()`` (0.05 s between tries; the cap only turns a hang into a failure)."""
    for _ in range(tries):
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"never happened: {what}")


# ---------------------------------------------------------------------------- O(n log n) spans
class Counted(int):
    """An int that counts its comparisons (every comparison the segmentation makes)."""

    count = 0

    def _cmp(op):  # noqa: N805
        def method(self, other):
            Counted.count += 1
            return getattr(int, op)(self, other)
        return method

    __lt__, __le__, __gt__, __ge__ = _cmp("__lt__"), _cmp("__le__"), _cmp("__gt__"), _cmp("__ge__")
    __hash__ = int.__hash__


def _comparisons(n: int) -> int:
    """Comparisons to segment an answer with n spans: n claims of one sentence each, every
    fifth with a second span overlapping the next claim (as atomic claims overlap)."""
    claims = []
    for k in range(n):
        char_spans = [(Counted(10 * k), Counted(10 * k + 8))]
        if k % 5 == 0:
            char_spans.append((Counted(10 * k + 5), Counted(10 * k + 14)))
        claims.append(SimpleNamespace(claim=SimpleNamespace(char_spans=char_spans)))
    Counted.count = 0
    pieces = spans.segments("x" * (10 * n + 20), claims)
    assert len(pieces) >= 2 * n and all(ks for a, b, ks in pieces if a < 10 * n and (a % 10) < 8)
    return Counted.count


def test_span_segmentation_is_n_log_n_not_quadratic():
    small, large = _comparisons(400), _comparisons(4_000)
    # n log n: 10x the spans costs ~13x the comparisons; the quadratic sweep cost 100x
    assert large / small < 20, (small, large)


def test_segments_are_the_same_as_the_definition():
    """Against the quadratic definition: a piece is covered by every span containing it."""
    import random

    rng = random.Random(7)
    answer = "y" * 300
    claims = [SimpleNamespace(claim=SimpleNamespace(char_spans=[tuple(sorted(rng.sample(range(-5, 310), 2)))
                                                                for _ in range(rng.randint(0, 3))]))
              for _ in range(40)]
    got = spans.segments(answer, claims)
    valid = [(k, s, e) for k, c in enumerate(claims) for s, e in c.claim.char_spans if 0 <= s < e <= len(answer)]
    assert [a for a, _, _ in got] == sorted({0, *(s for _, s, _ in valid), *(e for _, _, e in valid)} - {300})
    for a, b, ks in got:
        assert ks == tuple(sorted({k for k, s, e in valid if s <= a and b <= e}))


# ---------------------------------------------------------------------------- off the event loop
def test_health_answers_while_render_works(tiny_lm, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    real = serve.view_html

    def slow_view(line, limits):
        entered.set()
        release.wait(120)  # the cap only ends a hang: /health must answer long before
        return real(line, limits)
    monkeypatch.setattr(serve, "view_html", slow_view)
    with serve_in_thread(create_app(make_franq(tiny_lm))) as base:
        record = HTTP.post(f"{base}/score", json=EXAMPLE).json()
        out: dict = {}
        worker = threading.Thread(target=lambda: out.update(r=HTTP.post(f"{base}/render", json=record)))
        worker.start()
        entered.wait()
        health = HTTP.get(f"{base}/health")
        answered_while_rendering = not release.is_set()
        release.set()
        worker.join()
    assert health.status_code == 200 and answered_while_rendering
    assert health.json()["in_progress"]["render"] == 1
    assert out["r"].status_code == 200 and "claim pb" in out["r"].json()["html"]


class EndlessPipeline:
    """Scoring that runs real forward passes of the tiny model until something stops it."""

    def __init__(self, inner):
        self.lm, self.config, self.components = inner.lm, inner.config, inner.components
        self.entered, self.stopped = threading.Event(), threading.Event()
        self.passes = 0

    def score_many(self, examples, mode=None):
        import torch

        self.entered.set()
        try:
            ids = torch.tensor([[1, 2, 3, 4]])
            while True:
                with torch.no_grad():
                    self.lm.model(ids)
                self.passes += 1
        finally:
            self.stopped.set()


def test_a_request_over_its_time_budget_is_504_and_releases_the_model(tiny_lm):
    pipeline = EndlessPipeline(make_franq(tiny_lm))
    with serve_in_thread(create_app(pipeline, request_timeout=1.0)) as base:
        out: dict = {}
        worker = threading.Thread(target=lambda: out.update(r=HTTP.post(f"{base}/score", json=EXAMPLE)))
        worker.start()
        pipeline.entered.wait()
        health = HTTP.get(f"{base}/health").json()  # answers while the model works
        assert health["in_progress"]["model"] == 1
        worker.join()
        assert out["r"].status_code == 504 and "--request-timeout" in out["r"].json()["detail"]
        pipeline.stopped.wait()  # the worker left scoring: stopped at a forward pass
        passes = pipeline.passes
        _poll(lambda: HTTP.get(f"{base}/health").json()["in_progress"]["model"] == 0, "the model released")
        assert pipeline.passes == passes and passes > 0


# ---------------------------------------------------------------------------- slow and vanishing clients
def _raw(port: int, head: bytes, body: bytes, *, read: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(head + body)
        if not read:
            return b""
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        return data


def _head(path: str, length: int) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def test_a_client_that_declares_more_than_it_sends_gets_408(tiny_lm, caplog):
    with serve_in_thread(create_app(make_franq(tiny_lm), read_timeout=0.5)) as base:
        port = int(base.rsplit(":", 1)[1])
        reply = _raw(port, _head("/score", 1000), b'{"question": ')  # then silence, the socket open
        assert reply.startswith(b"HTTP/1.1 408") and b"--read-timeout" in reply
        assert HTTP.get(f"{base}/health").status_code == 200
    lines = [r for r in caplog.records if r.name == "franq.serve"]
    assert len(lines) == 1 and "sent 13/1000 bytes" in lines[0].getMessage() and not lines[0].exc_info


def test_clients_that_go_away_mid_upload_are_one_line_each(tiny_lm, caplog):
    caplog.set_level(logging.INFO)
    with serve_in_thread(create_app(make_franq(tiny_lm))) as base:
        port = int(base.rsplit(":", 1)[1])
        for _ in range(5):
            _raw(port, _head("/render", 5000), b'{"answer": "x", ', read=False)
        _poll(lambda: len([r for r in caplog.records if r.name == "franq.serve"]) >= 5, "five lines logged")
        assert HTTP.get(f"{base}/health").status_code == 200
    gone = [r for r in caplog.records if r.name == "franq.serve"]
    assert len(gone) == 5 and all("went away after 16/5000 bytes" in r.getMessage() for r in gone)
    assert not any(r.exc_info for r in caplog.records) and "Traceback" not in caplog.text


# ---------------------------------------------------------------------------- SIGTERM
def test_sigterm_with_a_request_in_progress_stops_it_and_exits(tiny_lm_path, tmp_path):
    """64 short-form examples with 100 samples of up to 200 tokens each: minutes of work on
    the tiny model. SIGTERM arrives while it runs; the process must exit (the bound below
    is generous: the point is that it exits at all, the old service waited for the whole
    request)."""
    config = tmp_path / "slow.json"
    config.write_text(json.dumps({"mode": "short", "uq": {"n_samples": 100, "max_sample_tokens": 200}}))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "franq", "serve", "--model", str(tiny_lm_path), "--port", str(port),
                             "--config", str(config), "--faithfulness", "lexical", "--calibrator", "none",
                             "--shutdown-timeout", "5"], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        def up():
            if proc.poll() is not None:
                pytest.fail(f"franq serve exited with {proc.returncode}: {proc.stderr.read()}")
            try:
                return HTTP.get(f"{url}/health").status_code == 200
            except httpx.TransportError:
                return False
        _poll(up, "franq serve listening", tries=6000)
        out: dict = {}

        def post():
            try:
                out["r"] = HTTP.post(f"{url}/score_many", json={"examples": [{**EXAMPLE, "answer": "In 1889."}] * 64})
            except httpx.TransportError as exc:
                out["error"] = exc
        worker = threading.Thread(target=post)
        worker.start()
        _poll(lambda: HTTP.get(f"{url}/health").json()["in_progress"]["model"] == 1, "the request in progress")
        proc.send_signal(signal.SIGTERM)
        _poll(lambda: proc.poll() is not None, "franq serve exited after SIGTERM", tries=2400)  # 120 s
        worker.join()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    err = proc.stderr.read()
    assert proc.returncode in (0, -signal.SIGTERM), err  # uvicorn re-raises the signal once it has stopped
    assert "signal 15: stopping" in err and "Traceback" not in err
    assert "r" in out, out  # the request was answered before the connection closed
    assert out["r"].status_code == 503 and "shutting down" in out["r"].json()["detail"]
