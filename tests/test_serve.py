"""`franq serve`: the service loads the pipeline once and answers JSON requests
that match the Python API; bad input is a 4xx naming the field; request size and the
number of waiting requests are bounded; it binds to loopback. Servers run on a free
loopback port (a thread for the app around a tiny pipeline; a subprocess for the CLI)."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import httpx
import pytest
from conftest import make_franq
from servers import free_port, serve_in_thread

from franq.apps.serve import create_app

# one client for the module, without httpx's default 5 s timeout: a busy machine only makes a
# request slower, never a failure
HTTP = httpx.Client(timeout=None)

EXAMPLE = {"question": "When was the Eiffel Tower built?",
           "passages": [{"title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889."}],
           "answer": "The Eiffel Tower was built from 1887 to 1889. It is made of gold."}


@pytest.fixture(scope="module")
def url(tiny_lm):
    with serve_in_thread(create_app(make_franq(tiny_lm), max_body_bytes=4096)) as base:
        yield base


def test_health_and_score_match_the_python_api(url, tiny_lm):
    health = HTTP.get(f"{url}/health").json()
    assert health["status"] == "ok" and health["components"]["long"]["faithfulness"] == "lexical-v1"
    r = HTTP.post(f"{url}/score", json={**EXAMPLE, "id": "q1", "meta": {"request": 7}, "threshold": 0.5})
    assert r.status_code == 200, r.text
    record = r.json()
    direct = make_franq(tiny_lm).score(EXAMPLE["question"], EXAMPLE["passages"], EXAMPLE["answer"])
    assert [c["claim"]["text"] for c in record["claims"]] == [c.claim.text for c in direct.claims]
    assert [c["p_true_raw"] for c in record["claims"]] == pytest.approx([c.p_true_raw for c in direct.claims])
    assert record["id"] == "q1" and record["meta"] == {"request": 7}
    assert record["passages"] == EXAMPLE["passages"]
    assert {c["verdict"] for c in record["claims"]} <= {"likely_true", "likely_false"}


def test_score_many_and_render(url):
    r = HTTP.post(f"{url}/score_many", json={"examples": [EXAMPLE, {**EXAMPLE, "id": 2}]})
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert len(results) == 2 and results[1]["id"] == "2"
    view = HTTP.post(f"{url}/render", json=results[0]).json()["html"]
    assert view.count('class="claim pb') >= 2 and "Closest passage window" in view
    bad = {**results[0], "claims": [{**results[0]["claims"][0], "status": "ok"}]}
    r = HTTP.post(f"{url}/render", json=bad)  # read back with franq.read_results: the field is named
    assert r.status_code == 400 and r.json()["detail"].startswith("body: 'claims[0].status' must be one of")
    page = HTTP.get(url)
    assert page.status_code == 200 and 'id="score-form"' in page.text


def test_answer_generates_and_scores(url):
    r = HTTP.post(f"{url}/answer", json={"question": EXAMPLE["question"], "passages": EXAMPLE["passages"],
                                         "max_new_tokens": 12})
    assert r.status_code in (200, 422), r.text  # a random tiny model may generate an empty answer (422)
    if r.status_code == 200:
        assert r.json()["answer"] and r.json()["passages"] == EXAMPLE["passages"]
    else:
        assert "empty answer" in r.json()["detail"]


@pytest.mark.parametrize("path, body, status, detail", [
    ("/score", {"question": "q", "passages": ["p"]}, 400, "missing field 'answer'"),
    ("/score", {**EXAMPLE, "passages": "one"}, 400, "'passages' must be a list"),
    ("/score", {**EXAMPLE, "user_input": "q"}, 400, "'user_input' and 'question' both given"),
    ("/score", {**EXAMPLE, "meta": [1]}, 400, "'meta' must be a JSON object"),
    ("/score", {**EXAMPLE, "threshold": 2}, 400, "'threshold' must be a number in [0, 1]"),
    ("/score", {**EXAMPLE, "mode": "medium"}, 400, "'mode' must be one of 'long', 'short', 'auto', 'fast', 'chat', got 'medium'"),
    ("/score", [EXAMPLE], 422, "expected a JSON object, got list"),
    ("/score_many", {"examples": [EXAMPLE, {**EXAMPLE, "answer": ""}]}, 400, "examples[1]: 'answer' is empty"),
    ("/score_many", {"examples": []}, 400, "'examples' must be a non-empty list"),
    ("/answer", {"passages": ["p"]}, 400, "missing field 'question'"),
    ("/answer", {"question": "q", "passages": ["p"], "max_new_tokens": 0}, 400, "'max_new_tokens' must be"),
    ("/render", {"answer": 1}, 400, "expected a result record"),
])
def test_bad_requests_are_4xx_naming_the_field(url, path, body, status, detail):
    r = HTTP.post(f"{url}{path}", json=body)
    assert r.status_code == status, r.text
    assert detail in r.json()["detail"]


def test_invalid_json_and_oversized_bodies(url):
    r = HTTP.post(f"{url}/score", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
    big = {**EXAMPLE, "passages": ["x" * 5000]}
    r = HTTP.post(f"{url}/score", json=big)
    assert r.status_code == 413 and "over the limit of 4096 bytes" in r.json()["detail"]

    def chunks():  # no content-length: the limit holds on the bytes read
        yield json.dumps(big).encode()

    r = HTTP.post(f"{url}/score", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


class BlockingPipeline:
    """A pipeline double whose scoring waits until released: to fill the queue."""

    def __init__(self, inner):
        self.inner, self.lm, self.config, self.components = inner, inner.lm, inner.config, inner.components
        self.entered, self.release = threading.Event(), threading.Event()

    def score_many(self, examples, mode=None):
        self.entered.set()
        self.release.wait()
        return self.inner.score_many(examples, mode=mode)


def test_waiting_requests_are_bounded_and_health_stays_up(tiny_lm):
    pipeline = BlockingPipeline(make_franq(tiny_lm))
    with serve_in_thread(create_app(pipeline, max_pending=1)) as base:
        first: dict = {}
        worker = threading.Thread(target=lambda: first.update(r=HTTP.post(f"{base}/score", json=EXAMPLE)))
        worker.start()
        pipeline.entered.wait()
        assert HTTP.get(f"{base}/health").status_code == 200  # not blocked by the scoring request
        busy = HTTP.post(f"{base}/score", json=EXAMPLE)
        assert busy.status_code == 503 and "busy" in busy.json()["detail"]
        pipeline.release.set()
        worker.join()
        assert first["r"].status_code == 200


def test_serve_without_fastapi_says_which_extra_to_install(monkeypatch):
    import importlib.util

    from click.testing import CliRunner

    from franq.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    res = CliRunner().invoke(main, ["serve"])
    assert res.exit_code != 0 and "uvicorn missing): pip install 'franq[serve]'" in res.output


def test_a_busy_port_fails_before_the_model_loads():
    import socket

    from click.testing import CliRunner

    from franq.cli import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = CliRunner().invoke(main, ["serve", "--port", str(port), "--model", "/nonexistent/model"])
    assert res.exit_code != 0 and f"cannot listen on 127.0.0.1:{port}" in res.output


def test_franq_serve_command_binds_loopback_and_serves(tiny_lm_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "franq", "serve", "--model", str(tiny_lm_path), "--port",
                             str(port), "--faithfulness", "lexical", "--calibrator", "none", "--threshold", "0.5"],
                            stderr=subprocess.PIPE, text=True)
    try:
        while True:  # until it listens (or dies: then its stderr says why)
            if proc.poll() is not None:
                pytest.fail(f"franq serve exited with {proc.returncode}: {proc.stderr.read()}")
            try:
                health = HTTP.get(f"http://127.0.0.1:{port}/health")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert health.json()["model"] == tiny_lm_path.name  # the name, never the absolute path
        assert str(tiny_lm_path) not in health.text
        record = HTTP.post(f"http://127.0.0.1:{port}/score", json=EXAMPLE).json()
        assert {c["verdict"] for c in record["claims"]} <= {"likely_true", "likely_false"}
        assert None not in {c["verdict"] for c in record["claims"] if c["status"] == "scored"}
    finally:
        proc.terminate()
        proc.wait()
    assert f"on http://127.0.0.1:{port}/" in proc.stderr.read()
