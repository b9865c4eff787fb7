"""A served model that sends what it should not (issue 47, items 1, 2 and 7): every reply of
the four engines checked at the boundary, through real loopback sockets (served_fakes.on_socket
serves the protocol fakes, HostileHandler misbehaves at the HTTP level) and the real
``franq score`` command. Each case names what a server once did to franq: +7.5 or +inf made
every claim certain, -inf reached the output as a bare token, NaN crashed or scored 0, a
gzip bomb, an endless reply, a deep nesting, a redirect, a drip past the timeout, an echoed
short key. No case measures time: a deadline is tested by the error it raises."""
from __future__ import annotations

import contextlib
import json
import math
import socket

import numpy as np
import pytest

from conftest import run_cli
from franq.errors import InputError
from franq.lm.served import connect
from franq.lm.served.client import Request, ServedModelError, ServerClient, ServerUnavailable
import test_served
from served_fakes import KINDS, FakeServer, gzip_bomb, hostile, on_socket

QUESTION = "What is the capital of France?"
PASSAGES = ["Paris is the capital of France."]
ANSWER = "Paris is the capital of France."
bos_lm_path, bos_lm, served_config = test_served.bos_lm_path, test_served.bos_lm, test_served.served_config
ODD = {"+7.5": 7.5, "+inf": math.inf, "-inf": -math.inf, "nan": math.nan}
FIELDS = {"vllm": "prompt_logprobs[0].logprob", "sglang": "input_token_logprobs[0]",
          "tgi": "details.prefill[0].logprob", "llama-cpp-python": "token_logprobs["}


def _every_logprob(value):
    """A tamper that sets every log-probability of a reply (any engine's shape) to ``value``."""
    def walk(node, key=None):
        if isinstance(node, dict):
            return {k: (value if k == "logprob" and v is not None else walk(v, k)) for k, v in node.items()}
        if isinstance(node, list):
            if key == "token_logprobs":
                return [value if v is not None else None for v in node]
            if key in ("input_token_logprobs", "output_token_logprobs"):
                return [[value if r[0] is not None else None, *r[1:]] for r in node]
            return [walk(v, key) for v in node]
        return node
    return lambda path, body, reply: walk(reply)


def _connect(url, path, kind, **model):
    return connect(served_config(path, kind, model={"server": url, **model}).model, backoff=0)


def _item(lm):
    return lm.encode(f"Question: {QUESTION}\nAnswer:"), lm.encode(" Paris is the capital.")


# ---------------------------------------------------------------------------- log-probabilities
@contextlib.contextmanager
def tampered(kind, lm, path, tamper):
    """A served model of ``kind`` on a real socket, whose replies ``tamper`` rewrites after
    the start-up probe; yields the connected ServedLM."""
    fake = FakeServer(kind, lm)
    with on_socket(fake) as url:
        served = _connect(url, path, kind)
        fake.tamper = tamper
        yield served


@pytest.mark.parametrize("odd", list(ODD))
@pytest.mark.parametrize("kind", KINDS)
def test_non_finite_or_positive_logprob_is_refused_naming_engine_field_and_position(kind, odd, bos_lm, bos_lm_path):
    with tampered(kind, bos_lm, bos_lm_path, _every_logprob(ODD[odd])) as lm, \
            pytest.raises(ServedModelError) as err:
        lm.continuation_logprobs([_item(bos_lm)])
    msg = str(err.value)
    assert f"model.engine {kind}:" in msg and FIELDS[kind] in msg and "\n" not in msg
    assert ("7.5" if odd == "+7.5" else odd.lstrip("+")) in msg


@pytest.mark.parametrize("kind", KINDS)
def test_logprob_a_rounding_above_zero_reads_as_zero(kind, bos_lm, bos_lm_path):
    with tampered(kind, bos_lm, bos_lm_path, _every_logprob(5e-5)) as lm:
        got = lm.continuation_logprobs([_item(bos_lm)])[0]
    assert len(got) and np.all(got == 0.0)


@pytest.mark.parametrize("odd", ["nan", "+inf"])
@pytest.mark.parametrize("kind", KINDS)
def test_non_finite_sample_logprob_is_refused(kind, odd, bos_lm, bos_lm_path):
    with tampered(kind, bos_lm, bos_lm_path, _every_logprob(ODD[odd])) as lm, \
            pytest.raises(ServedModelError, match=rf"model.engine {kind}: .*\[0\].*{odd.lstrip('+')}"):
        lm.sample(bos_lm.encode("Question: where?\nAnswer:"), 2, temperature=1.0, max_new_tokens=3)


WRONG_SHAPES = {
    "vllm": lambda r: {**r, "choices": [{**r["choices"][0], "logprobs": [-0.5, -0.25]}]},
    "sglang": lambda r: [{**x, "meta_info": {**x["meta_info"], "output_token_logprobs": [7]}} for x in r],
    "tgi": lambda r: {**r, "details": {**r["details"], "tokens": [["id", 5]]}},
    "llama-cpp-python": lambda r: {**r, "choices": [{**r["choices"][0], "logprobs": {"tokens": ["a"],
                                                                                       "token_logprobs": []}}]},
}


@pytest.mark.parametrize("kind", KINDS)
def test_sample_reply_of_the_wrong_shape_is_one_line(kind, bos_lm, bos_lm_path):
    with tampered(kind, bos_lm, bos_lm_path, lambda path, body, reply: WRONG_SHAPES[kind](reply)) as lm, \
            pytest.raises(ServedModelError) as err:
        lm.sample(bos_lm.encode("Question: where?\nAnswer:"), 2, temperature=1.0, max_new_tokens=3)
    assert str(err.value).startswith(f"model.engine {kind}: ") and "\n" not in str(err.value)


def test_sample_count_other_than_asked_is_refused(bos_lm, bos_lm_path):
    fake = FakeServer("vllm", bos_lm)
    with on_socket(fake) as url:
        lm = _connect(url, bos_lm_path, "vllm")
        fake.tamper = lambda path, body, reply: {**reply, "choices": reply["choices"][:1]}
        with pytest.raises(ServedModelError, match="asked for 3 samples, the server returned 1"):
            lm.sample(bos_lm.encode("Question: where?\nAnswer:"), 3, temperature=1.0, max_new_tokens=3)
        fake.tamper = lambda path, body, reply: {**reply, "choices": []}
        with pytest.raises(ServedModelError, match="asked for 1 generated answer, the server returned 0"):
            lm.generate(bos_lm.encode("Question: where?\nAnswer:"), max_new_tokens=3)


def _score_command(bos_lm, bos_lm_path, tmp_path, tamper):
    fake = FakeServer("vllm", bos_lm)
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": QUESTION, "passages": PASSAGES, "answer": answer}) + "\n"
                           for i, answer in (("a", ANSWER), ("b", "Lyon is the capital of France."))))
    with on_socket(fake) as url:
        cfg = tmp_path / "cfg.json"
        cfg.write_text(json.dumps({"model": {"server": url, "engine": "vllm", "tokenizer": str(bos_lm_path)},
                                   "faithfulness": {"name": "lexical"}, "calibration": {"calibrator": "none"}}))
        fake.tamper = tamper
        res = run_cli("score", src, "-o", out, "--config", cfg, "--quiet")
    errors = tmp_path / "out.jsonl.errors.jsonl"
    return res, out.read_text() if out.exists() else "", errors.read_text() if errors.exists() else ""


def test_score_command_refuses_a_server_sending_infinity_at_start_up(bos_lm, bos_lm_path, tmp_path):
    res, written, _ = _score_command(bos_lm, bos_lm_path, tmp_path, _every_logprob(-math.inf))
    assert res.exit_code != 0 and written == ""
    assert res.output.startswith("Error: model.engine vllm: prompt_logprobs[0].logprob: the server sent -inf")
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_score_command_reports_the_bad_answer_and_writes_no_infinity(bos_lm, bos_lm_path, tmp_path):
    def lyon_only(path, body, reply):  # -inf for the answer naming Lyon, after the start-up probe
        lyon = "Lyon" in bos_lm.tokenizer.decode(body.get("prompt", []))
        return _every_logprob(-math.inf)(path, body, reply) if lyon and "prompt_logprobs" in body else reply
    res, written, errors = _score_command(bos_lm, bos_lm_path, tmp_path, lyon_only)
    assert "Infinity" not in written and "NaN" not in written
    assert [json.loads(x)["id"] for x in written.splitlines()] == ["a"]
    assert '"id": "b"' in errors and "model.engine vllm" in errors and "-inf" in errors
    assert "Traceback" not in res.output, res.output[-3000:]


def test_result_writer_refuses_a_non_finite_number_naming_the_field():
    from franq.io import record_json

    assert record_json({"a": [1.0, {"b": 0.5}]}) == '{"a": [1.0, {"b": 0.5}]}'
    with pytest.raises(InputError, match=r"non-finite number at 'claims\[1\]\.p_true'"):
        record_json({"claims": [{"p_true": 0.5}, {"p_true": math.nan}]})
    with pytest.raises(InputError, match=r"at 'u'"):
        record_json({"u": -math.inf})


# ---------------------------------------------------------------------------- the HTTP level
def _client(url, **kw):
    return ServerClient(url, max_retries=0, **kw)


def test_gzip_bomb_is_stopped_at_the_reply_limit_after_decompression():
    bomb = gzip_bomb()
    assert len(bomb) < 2 << 20  # 1.5 MB on the wire, 1.5 GB inflated
    with hostile("bomb", bomb=bomb) as srv, \
            pytest.raises(ServedModelError, match=r"once inflated, over the limit of 67108864 bytes .*reply_bytes"):
        _client(srv.url).post(Request("POST", "/v1/completions", {}))


def test_gzip_reply_within_the_limit_is_read():
    import gzip

    with hostile("bomb", bomb=gzip.compress(b'{"ok": [1, 2]}')) as srv:
        assert _client(srv.url).post(Request("POST", "/x", {})) == {"ok": [1, 2]}


def test_endless_reply_is_never_read_whole():
    with hostile("endless", sent=0) as srv:
        with pytest.raises(ServedModelError, match="reply_bytes"):
            _client(srv.url, limits={"reply_bytes": 4 << 20}).post(Request("POST", "/x", {}))
        assert srv.sent < 256 << 20  # of 1.5 GB: the client hung up at the cap


def test_deeply_nested_reply_is_one_line_not_a_recursion_error():
    with hostile("deep") as srv, pytest.raises(ServedModelError, match="nested too deeply .*json_depth"):
        _client(srv.url).post(Request("POST", "/x", {}))
    with hostile("json", payload=json.dumps({"a": [[[[[[1]]]]]]}).encode()) as srv, \
            pytest.raises(ServedModelError, match="limit of 3 levels"):
        _client(srv.url, limits={"json_depth": 3}).post(Request("POST", "/x", {}))


def test_redirect_to_another_host_is_not_followed():
    with hostile("json", payload=b"{}") as other, hostile("redirect", location=None) as srv:
        srv.location = other.url + "/steal"
        with pytest.raises(ServedModelError, match="HTTP 302 redirects to .*/steal; franq does not follow"):
            _client(srv.url).post(Request("POST", "/v1/completions", {}))
    assert other.hits == []


def test_drip_feeding_server_hits_the_one_deadline():
    with hostile("drip") as srv:
        with pytest.raises(ServerUnavailable, match=r"no complete reply within timeout = 1 s"):
            ServerClient(srv.url, timeout=1, max_retries=3).post(Request("POST", "/x", {}))
        assert len(srv.hits) == 1  # a deadline is not retried past itself


def test_short_api_key_is_never_echoed(monkeypatch):
    monkeypatch.setenv("FRANQ_HOSTILE_KEY", "abc")
    with hostile("echo") as srv, pytest.raises(ServedModelError) as err:
        _client(srv.url, api_key_env="FRANQ_HOSTILE_KEY").post(Request("POST", "/x", {}))
    assert "HTTP 401" in str(err.value) and "abc" not in str(err.value)
    assert "<FRANQ_HOSTILE_KEY redacted>" in str(err.value)


def test_short_key_is_redacted_in_what_franq_writes(monkeypatch):
    from claims.openai_client import redact_key
    from franq.errors import redact

    monkeypatch.setenv("MY_API_KEY", "k3y")
    assert "k3y" not in redact("server said: bad key k3y (Bearer k3y)")
    assert redact("k3yboard") == "k3yboard"  # a word that contains it is not a key
    assert redact_key("401: bad key k3y", "MY_API_KEY") == "401: bad key <MY_API_KEY redacted>"


def _ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6(), reason="no IPv6 loopback on this machine")
def test_ipv6_loopback_server_is_accepted(bos_lm, bos_lm_path):
    fake = FakeServer("tgi", bos_lm)
    with on_socket(fake, host="::1") as url:
        assert url.startswith("http://[::1]:")
        lm = _connect(url, bos_lm_path, "tgi")
        got = lm.continuation_logprobs([_item(bos_lm)])[0]
    assert np.allclose(got, bos_lm.continuation_logprobs([_item(bos_lm)])[0], atol=1e-4)


@pytest.mark.parametrize("url, why", [
    ("http://127.0.0.1:99999", "port out of range"),
    ("http://127.0.0.1:0", "port 0"),
    ("http://[::1:8000", "invalid ipv6"),
    ("ftp://127.0.0.1:21", "the scheme must be http"),
    ("http://user:pw@127.0.0.1:8000", "no user or password"),
    ("http://127.0.0.1:8000/?x=1", "no query"),
])
def test_bad_server_url_is_one_line(url, why, bos_lm_path):
    with pytest.raises(InputError, match=f"config 'model.server': {why}") as err:
        served_config(bos_lm_path, "vllm", model={"server": url})
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------------- bounds that bound
@pytest.mark.parametrize("value", [math.inf, math.nan, 0, -1])
def test_timeout_must_be_finite_and_positive(value, bos_lm_path):
    with pytest.raises(InputError, match="config 'model.timeout': expected a finite number of seconds > 0"):
        served_config(bos_lm_path, "vllm", model={"timeout": value})


def test_openai_client_timeout_retries_and_url_are_bounded():
    from franq.lm.openai_client import openai_client

    for bad, why in (({"timeout": math.inf}, "timeout: expected a finite"), ({"max_retries": 11}, "max_retries"),
                     ({"base_url": "http://127.0.0.1:70000/v1"}, "port out of range")):
        with pytest.raises(InputError, match=f"judge 'm': .*{why}"):
            openai_client(**{"base_url": "http://[::1]:8000/v1", **bad}, where="judge 'm'")
    client = openai_client("http://[::1]:8000/v1", max_retries=10)
    assert client.max_retries == 10 and str(client.base_url).startswith("http://[::1]:8000/v1")
    assert client._client.follow_redirects is False


def test_retries_are_capped_by_the_limits_table(bos_lm_path):
    with pytest.raises(InputError, match=r"'model.max_retries' has 11 retries, over the limit of 10"):
        served_config(bos_lm_path, "vllm", model={"max_retries": 11})
    cfg = served_config(bos_lm_path, "vllm", model={"max_retries": 11}, limits={"retries": 20})
    assert cfg.model.max_retries == 11
    with pytest.raises(InputError, match="retries = N"):
        ServerClient("http://127.0.0.1:9", max_retries=11)


def test_backoff_and_retry_after_wait_at_most_the_limit():
    client = ServerClient("http://127.0.0.1:9", backoff=5.0, limits={"retry_wait_seconds": 7})
    assert client._delay(60, None) <= 7.0
    assert client._delay(1, "999999999") == 7.0
    assert ServerClient("http://127.0.0.1:9")._delay(1, "90") == 60.0


# ---------------------------------------------------------------------------- the OpenAI-compatible clients
def _chat(url, **kw):
    from franq.lm.openai_client import openai_client

    return openai_client(url, max_retries=0, **kw).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Is Paris the capital of France?"}])


@pytest.mark.parametrize("script, attrs, timeout, why", [
    ("drip", {"every": 0.4}, 1, "no complete reply within 1 s"),  # each read is quick: the deadline trips
    ("endless", {"sent": 0}, 300, "the reply is over 67108864 bytes"),
    ("bomb", {"bomb": gzip_bomb(64 << 20)}, 300, "the reply is encoded as 'gzip' though franq asked for none"),
])
def test_openai_client_holds_a_hostile_server_to_its_deadline_and_byte_cap(script, attrs, timeout, why):
    import openai

    with hostile(script, **attrs) as srv, pytest.raises(openai.APIError) as err:
        _chat(srv.url + "/v1", timeout=timeout)
    assert why in str(err.value.__cause__)
    assert getattr(srv, "sent", 0) < 256 << 20  # the endless reply: the client hung up at the cap
