"""Fake model servers for the served-model tests, one per protocol, answering in the shapes
pinned in tests/fixtures/served/*.json with numbers from an in-process CausalLM (so a
served pass can be compared with the local one exactly). They run as an
:class:`httpx.MockTransport`: no socket, no network. ``die_after`` makes the server go
away (connection refused) after that many POSTs; ``fail_first`` answers that many
requests with ``fail_status`` first; ``no_prompt_logprobs`` refuses the prompt
log-probability parameter as a server without it does; ``tamper(path, body, reply)``
rewrites a reply before it is sent (the hostile tests: NaN, +inf, wrong shapes).
:func:`on_socket` serves a FakeServer on a real loopback socket (IPv4 or IPv6);
:class:`HostileHandler` is a server that misbehaves at the HTTP level (gzip bomb, endless
reply, drip, redirect, deep nesting, echoed key).

:class:`PinnedTokenizer` and :class:`PinnedClient` replay the recorded start-up of a real
server (its ``setup`` block) for the adapter tests, without the real tokenizer."""
from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

FIXTURES = Path(__file__).parent / "fixtures" / "served"
KINDS = ("vllm", "sglang", "tgi", "llama-cpp-python")


def fixture(kind: str) -> dict:
    return json.loads((FIXTURES / f"{kind}.json").read_text())


class FakeServer:
    def __init__(self, kind: str, lm, *, die_after: int | None = None, fail_first: int = 0, fail_status: int = 503,
                 no_prompt_logprobs: bool = False, adds_bos: bool = False, tamper=None):
        self.kind, self.lm = kind, lm
        self.tamper = tamper
        self.bos_id = lm.tokenizer.convert_tokens_to_ids("<|im_start|>")
        """llama-cpp-python: the GGUF's BOS token (SmolLM2's is <|im_start|>, which starts its chat prompts)."""
        self.adds_bos = adds_bos
        """llama-cpp-python: the GGUF says add_bos_token (the server puts BOS before every prompt)."""
        self.die_after, self.fail_first, self.fail_status = die_after, fail_first, fail_status
        self.no_prompt_logprobs = no_prompt_logprobs
        self.info = fixture(kind).get("info", {})
        """GET route -> reply (the engine's informational routes, as pinned)."""
        self.posts = 0
        self.seen: list[tuple[str, dict]] = []
        self.open = self.max_open = 0

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        try:
            for _ in range(3):  # let the other requests in flight arrive
                await asyncio.sleep(0)
            return self._answer(request)
        finally:
            self.open -= 1

    def _answer(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "GET":
            info = self.info
            return httpx.Response(200, json=info[path]) if path in info else httpx.Response(404, json={"detail": "Not Found"})
        self.posts += 1
        if self.die_after is not None and self.posts > self.die_after:
            raise httpx.ConnectError("connection refused", request=request)
        if self.posts <= self.fail_first:
            return httpx.Response(self.fail_status, headers={"retry-after": "0"}, json={"error": "overloaded"})
        body = json.loads(request.content)
        self.seen.append((path, body))
        try:
            reply = getattr(self, "_" + self.kind.replace("-", "_"))(path, body)
            if self.tamper is not None:
                reply = self.tamper(path, body, reply)
            return httpx.Response(200, content=json.dumps(reply).encode(),  # NaN / Infinity written as is
                                  headers={"content-type": "application/json"})
        except _Reply as r:
            return httpx.Response(r.status, json=r.body)

    # ------------------------------------------------------------------ helpers
    def _lps(self, ids, start):
        """log p(ids[t] | ids[:t]) for t >= start (start >= 1)."""
        return list(self.lm.continuation_logprobs([(ids[:start], ids[start:])])[0]) if len(ids) > start else []

    def _draws(self, ids, n, temperature, max_tokens, seed):
        s = self.lm.sample(ids, n, temperature=temperature, max_new_tokens=max_tokens, stop_at_newline=False,
                           seed=seed)
        return [(x.token_ids, x.token_logprobs, self.lm.tokenizer.decode(list(x.token_ids)), x.stop) for x in s.samples]

    def _piece(self, i):
        return self.lm.tokenizer.decode([i])

    # ------------------------------------------------------------------ protocols
    def _vllm(self, path, body):
        ids = body["prompt"]
        if "prompt_logprobs" in body:
            if self.no_prompt_logprobs:
                raise _Reply(400, {"object": "error", "message": "extra fields not permitted: prompt_logprobs"})
            lps = self._lps(ids, 1)
            rows = [None] + [{str(i): {"logprob": lp, "rank": 1, "decoded_token": self._piece(i)}}
                             for i, lp in zip(ids[1:], lps)]
            return {"id": "cmpl-1", "object": "text_completion", "model": "tiny", "choices": [
                {"index": 0, "text": "x", "logprobs": None, "finish_reason": "length", "prompt_logprobs": rows,
                 "prompt_token_ids": ids}], "usage": {"prompt_tokens": len(ids)}}
        choices = []
        for k, (tok, lps, text, stop) in enumerate(self._draws(ids, body["n"], body["temperature"], body["max_tokens"],
                                                               body.get("seed"))):
            choices.append({"index": k, "text": text, "finish_reason": "length" if stop == "length" else "stop",
                            "logprobs": {"tokens": [f"token_id:{i}" for i in tok], "token_logprobs": list(lps),
                                         "text_offset": list(range(len(tok))), "top_logprobs": None}})
        return {"id": "cmpl-2", "object": "text_completion", "model": "tiny", "choices": choices}

    def _sglang(self, path, body):
        ids, sp = body["input_ids"], body["sampling_params"]
        if "logprob_start_len" in body:
            if self.no_prompt_logprobs:
                raise _Reply(400, {"error": "logprob_start_len not supported"})
            s = body["logprob_start_len"]
            lps = ([None] if s == 0 else []) + self._lps(ids, max(s, 1))
            rows = [[lp, i, None] for lp, i in zip(lps, ids[s:])]
            return {"text": "x", "meta_info": {"id": "r1", "prompt_tokens": len(ids), "completion_tokens": 1,
                                               "input_token_logprobs": rows,
                                               "output_token_logprobs": [[-0.1, 5, None]],
                                               "finish_reason": {"type": "length", "length": 1}}}
        out = []
        for tok, lps, text, stop in self._draws(ids, sp["n"], sp["temperature"], sp["max_new_tokens"],
                                                sp.get("sampling_seed")):
            out.append({"text": text, "meta_info": {
                "output_token_logprobs": [[lp, i, self._piece(i)] for lp, i in zip(lps, tok)],
                "finish_reason": {"type": "length", "length": len(tok)} if stop == "length" else
                {"type": "stop", "matched": self.lm.tokenizer.eos_token_id}}})
        return out if sp["n"] > 1 else out[0]

    def _tgi(self, path, body):
        ids, p = self.lm.encode(body["inputs"]), body["parameters"]
        if p.get("decoder_input_details"):
            if self.no_prompt_logprobs:
                raise _Reply(422, {"error": "decoder_input_details not supported", "error_type": "validation"})
            lps = [None] + self._lps(ids, 1)
            prefill = [{"id": i, "text": self._piece(i), "logprob": lp} for i, lp in zip(ids, lps)]
            return {"generated_text": "x", "details": {"finish_reason": "length", "generated_tokens": 1,
                                                       "seed": None, "prefill": prefill,
                                                       "tokens": [{"id": 5, "text": "x", "logprob": -0.1,
                                                                   "special": False}]}}
        temp = p.get("temperature", 1.0) if p.get("do_sample") else 0.0
        tok, lps, text, stop = self._draws(ids, 1, temp, p["max_new_tokens"], p.get("seed"))[0]
        return {"generated_text": text, "details": {
            "finish_reason": "length" if stop == "length" else "eos_token", "generated_tokens": len(tok),
            "seed": p.get("seed"), "prefill": [],
            "tokens": [{"id": i, "text": self._piece(i), "logprob": lp, "special": False} for i, lp in zip(tok, lps)]}}

    def _llama_cpp_python(self, path, body):
        """As llama-cpp-python 0.3's server answers (llama.py ``_create_completion``; the real
        replies are pinned in the fixture): the echo entries are the prompt's tokens with a
        leading BOS dropped and every other BOS skipped, then the generated one; entry i's
        log-probability is read at position i of the prompt *with* its BOS, so without a
        leading BOS every entry is one token off and the generated token falls out."""
        bos = self.bos_id
        if path == "/extras/tokenize":
            return {"tokens": ([bos] if self.adds_bos else []) + self.lm.encode(body["input"])}
        prompt = body["prompt"]
        ids = ([bos] if self.adds_bos else []) + self.lm.encode(prompt)
        if body.get("echo"):
            if self.no_prompt_logprobs:
                raise _Reply(500, {"error": "logits_all must be True to return prompt logprobs"})
            eos = self.lm.tokenizer.eos_token_id
            gen = int(self.lm.next_token_logprobs([ids], list(range(len(self.lm.tokenizer))))[0].argmax())
            made = [] if gen == eos else [gen]
            if ids[0] == bos:  # entry i = token i + 1, read at position i: its own log-probability
                tokens = ids[1:] + made
                lps = self._lps(ids + made, 1)
            else:  # entry i = token i, read at position i (the next token's distribution)
                tokens = ids
                lps = [float(self.lm.next_token_logprobs([ids[:t + 1]], [ids[t]])[0, 0]) for t in range(len(ids))]
            keep = [t for t, i in enumerate(tokens) if i != bos]
            pieces = [self._piece(tokens[t]) for t in keep]
            offsets = [len(self.lm.tokenizer.decode(tokens[:t], skip_special_tokens=True)) for t in keep]
            lps = [None] + [lps[t] for t in keep[1:]]
            return {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m.gguf", "choices": [
                {"text": prompt + "".join(self._piece(i) for i in made), "index": 0, "logprobs": {
                    "text_offset": offsets, "token_logprobs": lps, "tokens": pieces,
                    "top_logprobs": [None] + [{p: lp} for p, lp in zip(pieces[1:], lps[1:])]},
                 "finish_reason": "length" if made else "stop"}],
                "usage": {"prompt_tokens": len(ids), "completion_tokens": len(made), "total_tokens": len(ids) + len(made)}}
        tok, lps, text, stop = self._draws(ids, 1, body["temperature"], body["max_tokens"], body.get("seed"))[0]
        pieces = [self._piece(i) for i in tok]
        return {"id": "cmpl-2", "object": "text_completion", "created": 1, "model": "m.gguf", "choices": [
            {"text": text, "index": 0, "logprobs": {
                "text_offset": [len(prompt) + sum(len(x) for x in pieces[:t]) for t in range(len(tok))],
                "token_logprobs": list(lps), "tokens": pieces, "top_logprobs": [{x: lp} for x, lp in zip(pieces, lps)]},
             "finish_reason": "length" if stop == "length" else "stop"}],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(tok), "total_tokens": len(ids) + len(tok)}}


class PinnedTokenizer:
    """The few tokenizer answers an adapter's ``setup`` and checks ask, from a fixture's ``setup`` block."""

    def __init__(self, setup: dict):
        self.bos_token, self.bos_token_id = setup["bos_token"], setup["bos_token_id"]
        self._encode, self._pieces = setup["encode"], setup["pieces"]

    def encode(self, text, add_special_tokens=False):
        return list(self._encode[text])

    def decode(self, ids, **_):
        return "".join(self._pieces[str(i)] for i in ids)


class PinnedClient:
    """Answers the fixture's pinned requests with its pinned replies."""

    def __init__(self, *pinned: dict):
        self.pinned = pinned

    def try_post(self, request):
        for p in self.pinned:
            if (request.method, request.path, request.payload) == (p["request"]["method"], p["request"]["path"],
                                                                   p["request"]["payload"]):
                return p["response"], None
        return None, f"no pinned reply to {request.path}"


@contextlib.contextmanager
def on_socket(fake: FakeServer, host: str = "127.0.0.1"):
    """``fake`` answering on a real socket at ``host`` (``"::1"``: IPv6); yields its URL.
    One request at a time reaches the fake (its in-process model is not thread-safe)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self):
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = httpx.Request(self.command, f"http://fake{self.path}", content=data)
            try:
                with lock:
                    resp = asyncio.run(fake.handle(request))
            except httpx.ConnectError:
                self.close_connection = True
                return
            self.send_response(resp.status_code)
            for k, v in resp.headers.items():
                if k.lower() not in ("content-length", "transfer-encoding"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(resp.content)))
            self.end_headers()
            self.wfile.write(resp.content)
        do_GET = do_POST = answer

    with _serving(Handler, host) as srv:
        yield srv.url


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):  # a client hanging up is no error
            super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


@contextlib.contextmanager
def _serving(handler, host: str = "127.0.0.1", **attrs):
    srv = (_Server6 if ":" in host else _Server)((host, 0), handler)
    srv.hits, srv.sent = [], 0
    for k, v in attrs.items():
        setattr(srv, k, v)
    shown = f"[{host}]" if ":" in host else host
    srv.url = f"http://{shown}:{srv.server_address[1]}"
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def gzip_bomb(inflated: int = 1536 << 20) -> bytes:
    """A gzip stream of about ``inflated / 1000`` bytes (1.5 MB) that inflates to ``inflated``
    zero bytes (1.5 GB): the same 16 MiB block, compressed once, repeated."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(16 << 20)
    first = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    return first + again * (inflated // len(block) - 1) + c.flush()


class HostileHandler(BaseHTTPRequestHandler):
    """A server that misbehaves at the HTTP level, by ``server.script``: ``"bomb"`` (a 1.5 MB
    gzip reply inflating to 1.5 GB), ``"endless"`` (1 MiB chunks without end; ``server.sent``
    counts the bytes it got out), ``"drip"`` (one byte every ``server.every`` s, default 1), ``"redirect"`` (302 to
    ``server.location``), ``"deep"`` (JSON nested 100,000 deep), ``"echo"`` (401 echoing the
    Authorization header), ``"json"`` (``server.payload`` as is). Every request is kept in
    ``server.hits``."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.hits.append((self.path, dict(self.headers)))
        script = self.server.script
        try:
            getattr(self, f"_{script}")()
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST

    def _head(self, status: int, length: int | None, **headers) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if length is not None:
            self.send_header("Content-Length", str(length))
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()

    def _bomb(self):
        data = self.server.bomb
        self._head(200, len(data), Content_Encoding="gzip")
        self.wfile.write(data)

    def _endless(self):
        chunk = b" " * (1 << 20)
        self._head(200, 1536 << 20)
        while self.server.sent < (1536 << 20):
            self.wfile.write(chunk)
            self.server.sent += len(chunk)

    def _drip(self):
        self._head(200, 64)
        for _ in range(64):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(getattr(self.server, "every", 1.0))

    def _redirect(self):
        self._head(302, 2, Location=self.server.location)
        self.wfile.write(b"{}")

    def _deep(self):
        data = b"[" * 100_000 + b"]" * 100_000
        self._head(200, len(data))
        self.wfile.write(data)

    def _echo(self):
        data = json.dumps({"error": f"invalid credentials: {self.headers.get('Authorization')}"}).encode()
        self._head(401, len(data))
        self.wfile.write(data)

    def _json(self):
        data = self.server.payload
        self._head(200, len(data))
        self.wfile.write(data)


@contextlib.contextmanager
def hostile(script: str, **attrs):
    """A :class:`HostileHandler` server on a loopback port; yields it (``.url``, ``.hits``, ``.sent``)."""
    with _serving(HostileHandler, script=script, **attrs) as srv:
        yield srv


class _Reply(Exception):
    def __init__(self, status, body):
        self.status, self.body = status, body
