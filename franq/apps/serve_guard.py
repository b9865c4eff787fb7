"""What stands between the network and ``franq serve``'s handlers (issues 28 and 29).

- :class:`Guard`, an ASGI middleware, runs before any handler: the ``Host`` header must
  name this service (loopback names, the address the connection came in on, or an
  ``--allow-host``), so a DNS-rebinding page cannot reach it under its own name; a
  request carrying an ``Origin`` must come from this service's own origin (or an
  ``--allow-origin``), so a page on another site can neither trigger nor read scoring;
  every POST must say ``Content-Type: application/json`` (415 otherwise), so no
  cross-site "simple request" (``text/plain``, a form) reaches a handler without a CORS
  preflight, which this service never grants. The body is then read whole, under the
  ``body_bytes`` limit (413) and the ``--read-timeout`` (408: a client that declares
  more bytes than it sends does not hold the connection); a client that goes away
  mid-upload is logged as one line. With a token (``--token`` / ``FRANQ_SERVE_TOKEN``),
  every route but the page ``GET /`` needs ``Authorization: Bearer <token>`` (401
  otherwise), compared with :func:`hmac.compare_digest` (constant time).
- :func:`load_json` parses a body: nesting over the ``json_depth`` limit, ``NaN``,
  ``Infinity``, a number that overflows to infinity (``1e999``) or a key repeated in one
  object anywhere, ``meta`` included, are a 400 naming the problem, never a 500.
- :class:`Work` runs the CPU-bound part of each request (parsing, validation, scoring,
  rendering) in a daemon thread, never on the event loop, under a time budget
  (``--request-timeout``). The budget is cooperative: :func:`checkpoint` raises
  :class:`Refused` once the request's deadline has passed or the service is stopping,
  and it runs while waiting for the model, before scoring starts, and at every forward
  pass of the causal LM (a forward pre-hook on ``pipeline.lm.model``: every scoring pass
  and every generated token), so the model is released within one forward pass of the
  deadline or of SIGTERM.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import re
import threading
import time
import weakref

import numpy as np

log = logging.getLogger("franq.serve")
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class Refused(Exception):
    """A request refused with an HTTP status and a one-line ``detail``."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status = status
        self.detail = detail


# ---------------------------------------------------------------------------- JSON bodies
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text, outside strings (linear, without
    recursion: a body nested 100,000 deep is measured, never parsed)."""
    bare = np.frombuffer(_STRING.sub(b"", data), np.uint8)
    steps = np.isin(bare, _OPEN).astype(np.int64) - np.isin(bare, _CLOSE)
    return int(np.cumsum(steps).max(initial=0))


def _no_constant(name: str):
    raise Refused(400, f"body: {name} is not a number JSON allows (no NaN or infinity)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Refused(400, f"body: the number {text[:40]} overflows to infinity (no NaN or infinity)")
    return value


def load_json(data: bytes, *, max_depth: int):
    """``data`` parsed as JSON, refusing what cannot mean anything: nesting over
    ``max_depth`` (the ``json_depth`` limit), NaN, Infinity and numbers that overflow."""
    depth = json_depth(data)
    if depth > max_depth:
        raise Refused(400, f"body: nested {depth} levels deep, over the limit of {max_depth} levels (nesting "
                           f"depth of any JSON value; raise it with --limit json_depth=N)")
    from franq.io import DuplicateKeyError, no_duplicate_keys

    try:
        return json.loads(data, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=no_duplicate_keys)
    except DuplicateKeyError as exc:
        raise Refused(400, f"body: {exc}; give each field once") from None
    except RecursionError:
        raise Refused(400, "body: nested too deep") from None
    except ValueError as exc:  # broken JSON, invalid UTF-8, an integer of more than 4300 digits
        raise Refused(400, f"body: not valid JSON ({str(exc)[:200]})") from None


# ---------------------------------------------------------------------------- the middleware
def host_name(value: str) -> str:
    """The host of a ``Host`` header value or an origin's authority, lowercased, without the
    port and brackets: ``"[::1]:8000"`` -> ``"::1"``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """ASGI middleware: Host, Origin and Content-Type checks, then the whole body read
    under a size limit and a read timeout (see the module docstring)."""

    def __init__(self, app, *, body_bytes: int, read_timeout: float, allow_hosts=(), allow_origins=(),
                 token: str | None = None):
        self.app = app
        self.token = token.encode() if token else None
        self.body_bytes = body_bytes
        self.read_timeout = read_timeout
        self.hosts = {host_name(h) for h in allow_hosts}
        self.origins = {o.strip().lower().rstrip("/") for o in allow_origins}

    def host_ok(self, host: str, scope) -> bool:
        if "*" in self.hosts:
            return True
        name = host_name(host)
        server = (scope.get("server") or ("",))[0] or ""
        return name in LOOPBACK or name in self.hosts or (name != "" and name == host_name(server))

    def origin_ok(self, origin: str, host: str) -> bool:
        origin = origin.strip().lower().rstrip("/")
        return ("*" in self.origins or origin in self.origins
                or origin in (f"http://{host.strip().lower()}", f"https://{host.strip().lower()}"))

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}
        host, origin = headers.get(b"host", ""), headers.get(b"origin")
        where = f"{scope.get('method')} {scope.get('path')}"
        if not self.host_ok(host, scope):
            return await reply(send, 400, f"Host {host!r} is not an address of this service (allow it with "
                                          f"--allow-host NAME)")
        if origin is not None and not self.origin_ok(origin, host):
            return await reply(send, 403, f"Origin {origin!r} is not this service's own; requests from other "
                                          f"sites are refused (allow one with --allow-origin URL)")
        if self.token is not None and not (scope.get("method") in ("GET", "HEAD") and scope.get("path") == "/"):
            scheme, _, given = headers.get(b"authorization", "").strip().partition(" ")
            if not (scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("latin-1"), self.token)):
                return await reply(send, 401, "missing or wrong token: send 'Authorization: Bearer <token>' (the "
                                              "service was started with --token or FRANQ_SERVE_TOKEN)",
                                   extra=[(b"www-authenticate", b"Bearer")])
        if scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        kind = headers.get(b"content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return await reply(send, 415, f"Content-Type must be application/json, got {kind or 'none'!r}")
        declared = headers.get(b"content-length", "")
        if declared.isdigit() and int(declared) > self.body_bytes:
            return await reply(send, 413, too_large(int(declared), self.body_bytes))
        body = await self.read_body(receive, send, where, declared)
        if body is None:
            return
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        await self.app(scope, replay, send)

    async def read_body(self, receive, send, where: str, declared: str) -> bytes | None:
        data = bytearray()
        deadline = time.monotonic() + self.read_timeout
        expected = f"/{declared}" if declared else ""
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                log.warning("%s: the client sent %d%s bytes in %g s (--read-timeout); closed", where, len(data),
                            expected, self.read_timeout)
                await reply(send, 408, f"the request body did not arrive within {self.read_timeout:g} s "
                                       f"(--read-timeout)", close=True)
                return None
            if message["type"] == "http.disconnect":
                log.warning("%s: the client went away after %d%s bytes of the body", where, len(data), expected)
                return None
            data += message.get("body", b"")
            if len(data) > self.body_bytes:
                await reply(send, 413, too_large(len(data), self.body_bytes), close=True)
                return None
            if not message.get("more_body", False):
                return bytes(data)


def too_large(n: int, limit: int) -> str:
    return (f"request body of {n} bytes or more, over the limit of {limit} bytes (bytes per HTTP request body; "
            f"raise it with --limit body_bytes=N)")


async def reply(send, status: int, detail: str, *, close: bool = False, extra=()) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# ---------------------------------------------------------------------------- work off the event loop
_CURRENT = threading.local()  # the Job of the request this worker thread runs, if any
_HOOKED: weakref.WeakSet = weakref.WeakSet()


def checkpoint() -> None:
    """Raise :class:`Refused` when the current thread's request is past its time budget or
    the service is stopping; nothing in a thread that runs no request."""
    job = getattr(_CURRENT, "job", None)
    if job is not None:
        job.check()


def hook_model(module) -> None:
    """A forward pre-hook on a torch module (the causal LM) that calls :func:`checkpoint`
    before every forward pass; once per module."""
    if module is None or not hasattr(module, "register_forward_pre_hook") or module in _HOOKED:
        return
    module.register_forward_pre_hook(lambda _module, _args: checkpoint())
    _HOOKED.add(module)


class Job:
    def __init__(self, work: Work):
        self.work = work
        self.deadline = time.monotonic() + work.timeout

    def check(self) -> None:
        if self.work.stopping.is_set():
            raise Refused(503, "the service is shutting down; the request was stopped")
        if time.monotonic() > self.deadline:
            raise Refused(504, f"over the time budget of {self.work.timeout:g} s per request (--request-timeout); "
                               f"the model was released")


class Work:
    """Runs each request's work in a daemon thread under a time budget; at most ``slots``
    requests of one kind at a time (the rest get a 503); the model lock is taken in the
    worker, with the budget checked while waiting."""

    def __init__(self, *, timeout: float, slots: int):
        self.timeout = timeout
        self.slots = slots
        self.stopping = threading.Event()
        self.model_lock = threading.Lock()
        self.busy = {"model": 0, "render": 0}
        self.threads: set[threading.Thread] = set()

    def with_model(self, fn):
        """``fn`` wrapped to run holding the model lock (waiting for it within the budget)."""
        def locked(*args):
            while not self.model_lock.acquire(timeout=0.05):
                checkpoint()
            try:
                checkpoint()
                return fn(*args)
            finally:
                self.model_lock.release()
        return locked

    async def run(self, kind: str, fn, *args):
        """``fn(*args)`` in a worker thread; its result, or :class:`Refused` (busy, over the
        budget, stopping); an exception of ``fn`` is raised here."""
        if self.stopping.is_set():
            raise Refused(503, "the service is shutting down")
        if self.busy[kind] >= self.slots:
            raise Refused(503, f"busy: {self.slots} requests are already in progress or waiting (--max-pending); "
                               f"retry later")
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        job = Job(self)

        def settle(result, error):
            if not done.done():
                done.set_exception(error) if error is not None else done.set_result(result)

        def target():
            _CURRENT.job = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the request's task
                result, error = None, exc
            finally:
                _CURRENT.job = None
                self.threads.discard(threading.current_thread())
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:  # the loop closed (shutdown): nobody waits for this answer
                pass

        thread = threading.Thread(target=target, name=f"franq-serve-{kind}", daemon=True)
        self.busy[kind] += 1
        self.threads.add(thread)
        thread.start()
        try:  # the worker stops itself at its next checkpoint; this answers even if it is stuck
            return await asyncio.wait_for(asyncio.shield(done), timeout=self.timeout + 1.0)
        except asyncio.TimeoutError:
            raise Refused(504, f"over the time budget of {self.timeout:g} s per request (--request-timeout); "
                               f"the work stops at its next model step") from None
        finally:
            self.busy[kind] -= 1

    def stop(self) -> None:
        """SIGTERM: every request in progress stops at its next checkpoint; new ones get 503."""
        self.stopping.set()

    def wait(self, timeout: float) -> bool:
        """Whether every worker thread ended within ``timeout`` seconds."""
        end = time.monotonic() + timeout
        for thread in list(self.threads):
            thread.join(max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in list(self.threads))
