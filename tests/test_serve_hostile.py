"""Hostile requests to `franq serve`, each through a real HTTP client
against a real uvicorn server: cross-site and DNS-rebinding requests (Content-Type, Host,
Origin), /render records with wrong types and impossible values, bodies nested 100,000
deep or with NaN / 1e999 anywhere, inputs over the limits of franq.limits, /docs. Every
case ends in the 4xx it names, never a 500; the bodies a client sent are echoed nowhere.
Count: the parametrized cases below (`pytest --collect-only -q tests/test_serve_hostile.py`)."""
from __future__ import annotations

import copy
import json

import httpx
import pytest
from conftest import make_franq
from servers import serve_in_thread

from franq.apps.serve import create_app

HTTP = httpx.Client(timeout=None)
EXAMPLE = {"question": "When was the Eiffel Tower built?",
           "passages": [{"title": "Eiffel Tower", "text": "The Eiffel Tower was built from 1887 to 1889."}],
           "answer": "The Eiffel Tower was built from 1887 to 1889. It is made of gold."}
ROUTES = ("/score", "/score_many", "/answer", "/render")
DEEP = 100_000


@pytest.fixture(scope="module")
def url(tiny_lm):
    with serve_in_thread(create_app(make_franq(tiny_lm), allow_origins=["http://intranet.example:3000"])) as base:
        yield base


@pytest.fixture(scope="module")
def record(url):
    r = HTTP.post(f"{url}/score", json=EXAMPLE)
    assert r.status_code == 200, r.text
    return r.json()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _valid_body(path: str, record: dict) -> dict:
    return {"/score": EXAMPLE, "/score_many": {"examples": [EXAMPLE]},
            "/answer": {"question": EXAMPLE["question"], "passages": EXAMPLE["passages"], "max_new_tokens": 4},
            "/render": record}[path]


# ---------------------------------------------------------------------------- cross-site
@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize("content_type", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", None, "application/jsonp"])
def test_a_post_that_is_not_json_is_refused_415(url, record, path, content_type):
    """A cross-site "simple request" (no CORS preflight) cannot be JSON: refused before any work."""
    headers = {} if content_type is None else {"content-type": content_type}
    r = HTTP.post(f"{url}{path}", content=json.dumps(_valid_body(path, record)).encode(), headers=headers)
    assert r.status_code == 415 and "Content-Type must be application/json" in r.json()["detail"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}",
                                  "localhost.evil.example", "192.0.2.7:{port}", "", "[::2]:{port}"])
@pytest.mark.parametrize("method, path", [("GET", "/health"), ("POST", "/score"), ("GET", "/")])
def test_a_host_that_is_not_this_service_is_refused(url, host, method, path):
    """DNS rebinding: a page at evil.example resolved to 127.0.0.1 sends its own name as Host."""
    r = HTTP.request(method, f"{url}{path}", json=EXAMPLE if method == "POST" else None,
                     headers={"host": host.format(port=_port(url))})
    assert r.status_code == 400 and "is not an address of this service" in r.json()["detail"]


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}",
                                  "127.0.0.1"])
def test_loopback_names_are_this_service(url, host):
    assert HTTP.get(f"{url}/health", headers={"host": host.format(port=_port(url))}).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:{other}", "http://localhost:{other}",
                                    "null", "https://evil.example:{port}", "http://127.0.0.1",
                                    "http://intranet.example:3001"])
@pytest.mark.parametrize("method, path", [("POST", "/score"), ("POST", "/render"), ("GET", "/health")])
def test_an_origin_of_another_site_is_refused_403(url, record, origin, method, path):
    origin = origin.format(port=_port(url), other=_port(url) + 1)
    r = HTTP.request(method, f"{url}{path}", json=_valid_body(path, record) if method == "POST" else None,
                     headers={"origin": origin})
    assert r.status_code == 403 and "requests from other sites are refused" in r.json()["detail"]


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://intranet.example:3000",
                                    "http://INTRANET.example:3000/"])
def test_the_service_own_origin_and_allowed_origins_get_in(url, record, origin):
    r = HTTP.post(f"{url}/render", json=record, headers={"origin": origin.format(port=_port(url))})
    assert r.status_code == 200, r.text


# ---------------------------------------------------------------------------- /render
def _claim(record: dict, **changes) -> dict:
    bad = copy.deepcopy(record)
    bad["claims"][0].update(changes)
    return bad


RENDER_CASES = [
    ("answer as int", lambda r: {**r, "answer": 1}, "expected a result record"),
    ("claims as string", lambda r: {**r, "claims": "a claim"}, "expected a result record"),
    ("claims as ints", lambda r: {**r, "claims": [1, 2]}, "'claims[0]' must be an object"),
    ("claims as lists", lambda r: {**r, "claims": [[0, 5]]}, "'claims[0]' must be an object"),
    ("claim as string", lambda r: _claim(r, claim="text"), "must be an object"),
    ("char_spans as string", lambda r: _claim(r, claim={"text": "x", "char_spans": "0-5"}), "char_spans"),
    ("char_spans of strings", lambda r: _claim(r, claim={"text": "x", "char_spans": [[0, "5"]]}), "char_spans[0]"),
    ("char_spans of triples", lambda r: _claim(r, claim={"text": "x", "char_spans": [[0, 1, 2]]}), "char_spans[0]"),
    ("p_true above 1", lambda r: _claim(r, p_true_raw=1.5), "'claims[0].p_true_raw' must be a probability"),
    ("p_true below 0", lambda r: _claim(r, p_true_raw=-0.25), "'claims[0].p_true_raw' must be a probability"),
    ("calibrated above 1", lambda r: _claim(r, p_true_calibrated=7), "p_true_calibrated' must be a probability"),
    ("p_faithful above 1", lambda r: _claim(r, p_faithful=2), "p_faithful' must be a probability"),
    ("p_true as string", lambda r: _claim(r, p_true_raw="0.5"), "p_true_raw"),
    ("p_true as list", lambda r: _claim(r, p_true_raw=[0.5]), "p_true_raw"),
    ("huge p_true", lambda r: _claim(r, p_true_raw=10**300), "must be a probability"),
    ("status unknown", lambda r: _claim(r, status="ok"), "'claims[0].status' must be one of"),
    ("signals as list", lambda r: _claim(r, signals=[1]), "signals"),
    ("question as int", lambda r: {**r, "question": 5}, "question"),
    ("passages as int", lambda r: {**r, "passages": 5}, "passages"),
    ("meta as string", lambda r: {**r, "meta": "x"}, "meta"),
    ("id as list", lambda r: {**r, "id": [1]}, "'id'"),
    ("warnings as int", lambda r: {**r, "warnings": 3}, "warnings"),
]


@pytest.mark.parametrize("name, change, detail", RENDER_CASES, ids=[c[0] for c in RENDER_CASES])
def test_render_validates_the_record_like_score(url, record, name, change, detail):
    r = HTTP.post(f"{url}/render", json=change(record))
    assert r.status_code == 400, (name, r.status_code, r.text)
    assert detail in r.json()["detail"]


def test_render_over_the_span_limit_is_413(url, record):
    bad = _claim(record, claim={**record["claims"][0]["claim"], "char_spans": [[0, 1]] * 10_001})
    r = HTTP.post(f"{url}/render", json=bad)
    assert r.status_code == 413 and "over the limit of 10000 (char_spans per /render request" in r.json()["detail"]


def test_render_of_spans_nested_too_deep_is_refused(url, record):
    """1,000 claims each covering the whole answer, cut into 9,000 pieces: the view would
    mark millions of claim-piece pairs; refused instead."""
    answer = "x" * 9_000
    claims = [{"claim": {"text": "x", "char_spans": [[0, 9_000]] + [[8 * k + i, 8 * k + i + 1] for i in range(8)]},
               "status": "not_check_worthy"} for k in range(1_000)]
    r = HTTP.post(f"{url}/render", json={**record, "answer": answer, "claims": claims})
    assert r.status_code == 400 and "overlap so much" in r.json()["detail"]


# ---------------------------------------------------------------------------- JSON itself
def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _with_meta(path: str, record: dict, meta_text: str) -> bytes:
    """The valid body of ``path`` with ``meta`` (or, where the route has none, an extra
    field) holding ``meta_text`` verbatim: NaN, 1e999 and deep nesting are not JSON Python writes."""
    body = dict(_valid_body(path, record))
    body.pop("meta", None)
    text = json.dumps(body)
    return (text[:-1] + f', "meta": {{"x": {meta_text}}}}}').encode()


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize("name, meta, detail", [
    ("nested 100,000 deep", _deep(DEEP), "over the limit of 64 levels"),
    ("nested 65 deep", _deep(65), "over the limit of 64 levels"),
    ("NaN", "NaN", "NaN is not a number JSON allows"),
    ("Infinity", "Infinity", "Infinity is not a number JSON allows"),
    ("-Infinity", "-Infinity", "-Infinity is not a number JSON allows"),
    ("1e999", "1e999", "overflows to infinity"),
    ("-1e999", "[-1e999]", "overflows to infinity"),
    ("an integer of 5,000 digits", "1" * 5000, "not valid JSON"),
])
def test_json_that_means_nothing_is_400_on_every_route(url, record, path, name, meta, detail):
    r = HTTP.post(f"{url}{path}", content=_with_meta(path, record, meta), headers={"content-type": "application/json"})
    assert r.status_code == 400, (name, r.status_code, r.text[:300])
    assert detail in r.json()["detail"]


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize("body, status, detail", [
    (_deep(DEEP).encode(), 400, "over the limit of 64 levels"),
    (b'{"a": "\xff\xfe"}', 400, "not valid JSON"),
    (b"", 400, "not valid JSON"),
    (b"[1, 2]", 422, "expected a JSON object, got list"),
    (b'"text"', 422, "expected a JSON object, got str"),
    (b'{"question": "[[[[[[ not nesting ]]]", "x": "\\" [{["}', 400, ""),  # brackets in strings do not count
])
def test_bodies_that_are_not_a_request_are_4xx(url, path, body, status, detail):
    r = HTTP.post(f"{url}{path}", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert detail in r.json()["detail"]


# ---------------------------------------------------------------------------- limits
LIMIT_CASES = [
    ("/score", {**EXAMPLE, "passages": ["p"] * 2_000}, "2000 passages, over the limit of 1000"),
    ("/score", {**EXAMPLE, "passages": ["x" * 100_001]}, "100001 characters, over the limit of 100000"),
    ("/score", {**EXAMPLE, "passages": ["x" * 90_000] * 23}, "over the limit of 2000000"),
    ("/score", {**EXAMPLE, "answer": "x " * 50_001}, "over the limit of 100000 (characters per answer"),
    ("/score", {**EXAMPLE, "question": "q" * 20_001}, "over the limit of 20000 (characters per question"),
    ("/score", {**EXAMPLE, "claims": ["c"] * 1_001}, "1001 claims, over the limit of 1000"),
    ("/score", {**EXAMPLE, "claims": ["c" * 10_001]}, "over the limit of 10000 (characters per claim"),
    ("/score_many", {"examples": [EXAMPLE] * 65}, "65 examples, over the limit of 64"),
    ("/score_many", {"examples": [EXAMPLE, {**EXAMPLE, "passages": ["p"] * 1_001}]}, "examples[1]: 'passages'"),
    ("/answer", {"question": "q", "passages": ["p"] * 1_001}, "1001 passages, over the limit of 1000"),
    ("/answer", {"question": "q", "passages": ["p"], "max_new_tokens": 10**6}, "over the limit of 8192"),
    ("/render", None, "over the limit of 1000 (claims per answer"),
]


@pytest.mark.parametrize("path, body, detail", LIMIT_CASES)
def test_limits_of_the_one_table_are_413_naming_the_limit(url, record, path, body, detail):
    if body is None:
        body = {**record, "claims": record["claims"] * 1_001}
    r = HTTP.post(f"{url}{path}", json=body)
    assert r.status_code == 413, (r.status_code, r.text[:300])
    assert detail in r.json()["detail"] and "--limit" in r.json()["detail"]


def test_a_body_over_the_byte_limit_is_413_declared_or_not(url):
    big = json.dumps({**EXAMPLE, "passages": ["x" * 99_000] * 22}).encode()  # 2.2 MB: within the other limits
    r = HTTP.post(f"{url}/score", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "over the limit of 2097152 bytes" in r.json()["detail"]
    r = HTTP.post(f"{url}/score", content=iter([big[:1_000_000], big[1_000_000:]]),
                  headers={"content-type": "application/json"})  # chunked: counted as it arrives
    assert r.status_code == 413


def test_limits_are_raised_per_service(tiny_lm):
    with serve_in_thread(create_app(make_franq(tiny_lm), limits={"passages": 2, "json_depth": 3})) as base:
        r = HTTP.post(f"{base}/score", json={**EXAMPLE, "passages": ["a", "b", "c"]})
        assert r.status_code == 413 and "over the limit of 2 (passages per answer" in r.json()["detail"]
        r = HTTP.post(f"{base}/score", json={**EXAMPLE, "meta": {"a": [[1]]}})
        assert r.status_code == 400 and "nested 4 levels deep, over the limit of 3" in r.json()["detail"]


# ---------------------------------------------------------------------------- what is disclosed
@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"])
def test_docs_are_off_by_default(url, path):
    assert HTTP.get(f"{url}{path}").status_code == 404


def test_docs_when_asked_load_nothing_from_a_cdn(tiny_lm):
    with serve_in_thread(create_app(make_franq(tiny_lm), docs=True)) as base:
        page = HTTP.get(f"{base}/docs")
        assert page.status_code == 200 and "/score_many" in page.text
        assert "cdn" not in page.text.lower() and "<script src" not in page.text
        assert "/render" in HTTP.get(f"{base}/openapi.json").json()["paths"]


def test_health_names_the_model_without_its_path(url, tiny_lm):
    health = HTTP.get(f"{url}/health")
    assert tiny_lm.name.startswith("/") and tiny_lm.name not in health.text
    assert health.json()["model"] == tiny_lm.name.rsplit("/", 1)[1]
