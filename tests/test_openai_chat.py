"""The OpenAI-compatible path against a real HTTP server on 127.0.0.1, through the real
``openai`` client: success, HTTP 500 then success, timeout, malformed content."""
from __future__ import annotations

import json
import time

import pytest
from servers import ChatHandler, chat_completion, chat_server

from claims.chat import ChatError, OpenAIChat
from claims.llm_decompose import LLMDecomposer

ANSWER = "Paris, the capital of France, is known for the Eiffel Tower. The tower was built in 1889."
GOOD = json.dumps(["Paris is the capital of France.", "Paris is known for the Eiffel Tower.",
                   "The Eiffel Tower was built in 1889."])


class _Handler(ChatHandler):
    """Answers from ``server.script``: ("ok", content), ("status", code), ("sleep", seconds),
    ("echo", None); records each request's path, body and Authorization header."""

    def do_POST(self):
        body = self.read_body()
        server = self.server
        with server.lock:
            server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            action = server.script.pop(0) if server.script else ("ok", "[]")
        kind, arg = action
        if kind == "status":
            self.send_json(arg, {"error": {"message": "boom", "type": "server_error"}})
            return
        if kind == "sleep":
            time.sleep(arg)
            arg = "[]"
        if kind == "echo":  # the answer of the request, as the only claim
            text = body["messages"][-1]["content"].rsplit("Text: ", 1)[1].split("\nClaims:")[0]
            arg = json.dumps([text])
        try:
            self.send_json(200, chat_completion(body["model"], arg))
        except (BrokenPipeError, ConnectionResetError):  # the client timed out ("sleep")
            pass


@pytest.fixture
def server():
    with chat_server(_Handler, script=[]) as srv:
        yield srv


def _chat(server, **kw):
    kw.setdefault("backoff", 0.01)
    return OpenAIChat("tiny-chat", base_url=server.base_url, api_key_env="FRANQ_TEST_KEY", **kw)


def test_success_returns_claims_tokens_and_sends_temperature_zero(server, monkeypatch):
    monkeypatch.setenv("FRANQ_TEST_KEY", "sk-test-secret")
    server.script = [("ok", GOOD)]
    dec = LLMDecomposer(_chat(server)).decompose_report(ANSWER)
    assert dec.method == "llm" and dec.warnings == ()
    assert [c.text for c in dec.claims] == json.loads(GOOD)
    assert all(c.char_spans for c in dec.claims)
    assert (dec.usage.calls, dec.usage.prompt_tokens, dec.usage.completion_tokens) == (1, 42, 7)
    [req] = server.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["temperature"] == 0 and req["body"]["model"] == "tiny-chat"
    assert req["auth"] == "Bearer sk-test-secret"


def test_api_key_never_in_name_or_results(server, monkeypatch):
    monkeypatch.setenv("FRANQ_TEST_KEY", "sk-test-secret")
    server.script = [("ok", GOOD)]
    chat = _chat(server)
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    assert "sk-test-secret" not in chat.name and "sk-test-secret" not in repr(dec)


def test_http_500_then_success_is_retried(server):
    server.script = [("status", 500), ("ok", GOOD)]
    dec = LLMDecomposer(_chat(server, max_retries=2)).decompose_report(ANSWER)
    assert dec.method == "llm"
    assert dec.usage.calls == 2 and len(server.requests) == 2


def test_persistent_500_falls_back_with_warning(server):
    server.script = [("status", 500)] * 3
    dec = LLMDecomposer(_chat(server, max_retries=2)).decompose_report(ANSWER)
    assert dec.method == "llm->sentence" and len(server.requests) == 3
    assert "InternalServerError after 3 call(s)" in dec.warnings[0]


def test_timeout_raises_chat_error_then_falls_back(server):
    server.script = [("sleep", 1.5)]
    chat = _chat(server, timeout=0.2, max_retries=0)
    with pytest.raises(ChatError, match="APITimeoutError"):  # the server answers after 1.5 s: only a timeout errs
        chat.complete([{"role": "user", "content": "hi"}], max_tokens=8)
    server.script = [("sleep", 1.5)]
    dec = LLMDecomposer(chat).decompose_report(ANSWER)
    assert dec.method == "llm->sentence" and "APITimeoutError" in dec.warnings[0]


def test_client_error_is_not_retried(server):
    server.script = [("status", 400), ("ok", GOOD)]
    with pytest.raises(ChatError, match="BadRequestError"):
        _chat(server, max_retries=3).complete([{"role": "user", "content": "hi"}], max_tokens=8)
    assert len(server.requests) == 1


def test_malformed_content_is_repaired_or_retried(server):
    server.script = [("ok", "Sure, here are the claims: ```json\n[\"The Eiffel Tower was built in 1889.\",")]
    dec = LLMDecomposer(_chat(server)).decompose_report(ANSWER)
    # the first sentence, which the reply skipped, is scored as a sentence claim (issue 17)
    assert dec.method == "llm" and [c.text for c in dec.claims] == [
        "Paris, the capital of France, is known for the Eiffel Tower.", "The Eiffel Tower was built in 1889."]
    assert any("truncated" in w for w in dec.warnings)
    server.requests.clear()
    server.script = [("ok", "I do not know."), ("ok", GOOD)]
    dec = LLMDecomposer(_chat(server)).decompose_report(ANSWER)
    assert dec.method == "llm" and len(server.requests) == 2
    assert server.requests[1]["body"]["messages"][-2]["content"] == "I do not know."


def test_missing_key_is_an_error_only_for_the_openai_api(monkeypatch):
    monkeypatch.delenv("FRANQ_TEST_KEY", raising=False)
    with pytest.raises(ValueError, match="FRANQ_TEST_KEY"):
        OpenAIChat("gpt-4o-mini", api_key_env="FRANQ_TEST_KEY")


def test_batches_run_with_bounded_concurrency(server):
    answers = [f"Item number {i} weighs {i} kilograms." for i in range(5)]
    server.script = [("echo", None)] * 5
    decs = LLMDecomposer(_chat(server), concurrency=2).decompose_many(answers)
    assert [d.claims[0].text for d in decs] == answers and len(server.requests) == 5


def test_one_client_factory_builds_every_openai_compatible_client():
    """`OpenAI(` appears once in franq and claims: in claims/openai_client.py."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    hits = [str(p.relative_to(root)) for pkg in ("franq", "claims") for p in (root / pkg).rglob("*.py")
            if "OpenAI(" in p.read_text(encoding="utf-8")]
    assert hits == ["claims/openai_client.py"]


def test_client_factory_key_placeholder_errors_and_redaction(monkeypatch):
    from claims.openai_client import NO_KEY, openai_client, redact_key
    from franq.errors import InputError
    from franq.lm.openai_client import openai_client as franq_client

    monkeypatch.delenv("FRANQ_TEST_KEY", raising=False)
    client = openai_client("http://127.0.0.1:9/v1", api_key_env="FRANQ_TEST_KEY", timeout=5, max_retries=1)
    assert client.api_key == NO_KEY and client.max_retries == 1 and client.timeout == 5
    with pytest.raises(ValueError, match="api_key_env: environment variable FRANQ_TEST_KEY is not set"):
        openai_client(None, api_key_env="FRANQ_TEST_KEY")
    with pytest.raises(InputError, match="judge 'm': timeout: expected a finite number"):
        franq_client("http://127.0.0.1:9/v1", timeout=0, where="judge 'm'")
    monkeypatch.setenv("FRANQ_TEST_KEY", "opaque-9f8e7d6c")
    assert openai_client("http://127.0.0.1:9/v1", api_key_env="FRANQ_TEST_KEY").api_key == "opaque-9f8e7d6c"
    assert redact_key("401: bad key opaque-9f8e7d6c", "FRANQ_TEST_KEY") == "401: bad key <FRANQ_TEST_KEY redacted>"
    from franq.errors import redact

    franq_client("http://127.0.0.1:9/v1", api_key_env="FRANQ_TEST_KEY")  # registers the variable as a secret
    assert "opaque-9f8e7d6c" not in redact("failed with opaque-9f8e7d6c")
