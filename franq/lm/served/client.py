"""The HTTP side of a served model: an async client with a bounded number of requests in
flight, retries with backoff on 429 / 5xx / a dropped connection, and one clear error
after the last try.

:meth:`ServerClient.post_all` is the one door: the caller hands it every request of a
call (all answers of a batch, both conditions of each), they run concurrently with at
most ``in_flight`` open at once, and the replies come back in order. The pipeline is
synchronous; each call runs its own event loop.

Nothing a server sends is trusted (issue 47): ``timeout`` is one deadline per request
(connecting, every retry and its wait, and reading the whole reply; a server that drips
a byte a second does not hold franq past it); a reply is read under the ``reply_bytes``
limit before and after decompression (gzip / deflate only) and parsed under the
``json_depth`` limit; a redirect is an error, never followed; retries and the wait
between them are capped (``retries``, ``retry_wait_seconds``); the API key is masked in
every message built from a reply, whatever its length. The numbers in a reply are
checked by the engine adapters (:func:`franq.lm.served.base.logprob`).
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import random
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from franq.errors import FranqError, InputError
from franq.limits import LIMITS

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 32 + zlib.MAX_WBITS}
"""The content encodings franq asks for and inflates itself, under the byte cap (wbits for zlib)."""
CHUNK = 1 << 16


class ServedModelError(FranqError):
    """The served model answered with something franq cannot use (a 4xx, a malformed body)."""


class ServerUnavailable(ServedModelError):
    """The server could not be reached or kept failing after the last retry. It stops a batch
    run (``stops_run``) instead of marking every remaining record bad: what was written stays,
    and the rerun resumes from there."""

    stops_run = True


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    payload: dict | None = None


def server_url(url, where: str = "config 'model.server'") -> str:
    """``url`` checked and normalised, parsed once: ``http(s)://host[:port][/path]``, the
    host a name, an IPv4 address or a bracketed IPv6 one (``http://[::1]:8000``), the port
    in 1-65535, no user or password (the key goes in ``api_key_env``), no query or
    fragment. A one-line :class:`InputError` naming ``where`` otherwise."""
    def bad(why: str) -> InputError:
        return InputError(f"{where}: {why}; expected a URL such as 'http://127.0.0.1:8000' or "
                          f"'http://[::1]:8000', got {str(url)[:200]!r}")
    if not isinstance(url, str) or not url or any(c.isspace() for c in url):
        raise bad("not a URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # "Port out of range 0-65535", "Invalid IPv6 URL"
        raise bad(str(exc).lower()) from None
    if parts.scheme not in ("http", "https"):
        raise bad(f"the scheme must be http or https, not {parts.scheme or 'none'!r}")
    if parts.username is not None or parts.password is not None:
        raise bad("no user or password in the URL (put the key in an environment variable named by api_key_env)")
    if not parts.hostname:
        raise bad("no host")
    if parts.query or parts.fragment:
        raise bad("no query or fragment")
    if port == 0:
        raise bad("port 0 is not a server's port")
    host = parts.hostname
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"{host!r} is not an IPv6 address") from None
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{f':{port}' if port is not None else ''}{parts.path.rstrip('/')}"


def _limit(limits, name: str) -> int:
    return int((limits or {}).get(name, LIMITS[name].default))


class ServerClient:
    """Requests to one server. ``transport`` (an :class:`httpx.AsyncBaseTransport`) replaces
    the network, for tests; ``limits``: franq's limits in force (``reply_bytes``,
    ``json_depth``, ``retries``, ``retry_wait_seconds``; the defaults otherwise)."""

    def __init__(self, base_url: str, *, api_key_env: str | None = None, in_flight: int = 4,
                 timeout: float = 120.0, max_retries: int = 4, backoff: float = 0.5, transport=None, limits=None):
        self.base_url = server_url(base_url)
        self.api_key_env = api_key_env
        self.in_flight = in_flight
        check_timeout(timeout, "timeout")
        self.timeout = float(timeout)
        retries = _limit(limits, "retries")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or not 0 <= max_retries <= retries:
            raise InputError(f"config 'model.max_retries': expected a whole number in [0, {retries}] (the limit "
                             f"retries; raise it with [limits] retries = N), got {max_retries!r}")
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = float(_limit(limits, "retry_wait_seconds"))
        self.reply_bytes = _limit(limits, "reply_bytes")
        self.json_depth = _limit(limits, "json_depth")
        self.transport = transport
        self.requests_sent = 0
        """Every HTTP request sent, retries included (what the benchmark and the tests count)."""
        self.blocked_seconds = 0.0
        """Wall time spent waiting on the server (the benchmark's overhead = the rest)."""

    def _key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None if self.api_key_env else None

    def _headers(self) -> dict:
        key = self._key()
        headers = {"Accept-Encoding": ", ".join(k for k in DECODERS if k != "x-gzip")}
        return {**headers, "Authorization": f"Bearer {key}"} if key else headers

    def _masked(self, text: str) -> str:
        """``text`` with the API key masked, whatever its length (a server may echo it)."""
        key = self._key()
        return text.replace(key, f"<{self.api_key_env} redacted>") if key else text

    def post_all(self, requests: Sequence[Request]) -> list:
        """The JSON reply of each request, in order; raises on the first that fails for good."""
        if not requests:
            return []
        started = time.perf_counter()
        try:
            return asyncio.run(self._all(list(requests)))
        finally:
            self.blocked_seconds += time.perf_counter() - started

    def post(self, request: Request):
        return self.post_all([request])[0]

    def try_post(self, request: Request) -> tuple[object | None, str | None]:
        """``(reply, None)`` or ``(None, why)``: for the capability probe, which expects refusals."""
        try:
            return self.post(request), None
        except ServedModelError as exc:
            return None, str(exc)

    async def _all(self, requests: list[Request]) -> list:
        gate = asyncio.Semaphore(self.in_flight)
        async with httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout, transport=self.transport,
                                     headers=self._headers(), follow_redirects=False, trust_env=False,
                                     limits=httpx.Limits(max_connections=self.in_flight)) as http:
            tasks = [asyncio.ensure_future(self._one(http, gate, r)) for r in requests]
            try:
                return await asyncio.gather(*tasks)
            except BaseException:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise

    def _where(self, r: Request) -> str:
        return f"model.server {self.base_url}{r.path}"

    async def _one(self, http: httpx.AsyncClient, gate: asyncio.Semaphore, r: Request):
        last, hint, deadline, tries = "", None, None, 0
        for attempt in range(self.max_retries + 1):
            if attempt:
                wait = self._delay(attempt, hint)
                if time.monotonic() + wait >= deadline:
                    break
                await asyncio.sleep(wait)
            async with gate:
                deadline = deadline or time.monotonic() + self.timeout  # from the first send, not the queue
                self.requests_sent += 1
                tries += 1
                left = deadline - time.monotonic()
                try:
                    status, retry_after, data = await asyncio.wait_for(self._fetch(http, r), max(left, 0.001))
                except (TimeoutError, httpx.TimeoutException):
                    raise ServerUnavailable(f"{self._where(r)}: no complete reply within timeout = {self.timeout:g} s "
                                            f"(one deadline per request, retries included: [model] timeout)") from None
                except httpx.TransportError as exc:
                    last, hint = (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__), None
                    continue
            if status in RETRY_STATUS:
                last = f"HTTP {status}: {self._snippet(data)}"
                hint = retry_after if status == 429 else None
                continue
            if status >= 400:
                raise ServedModelError(f"{self._where(r)}: HTTP {status}: {self._snippet(data)}")
            return self._json(data, r)
        raise ServerUnavailable(f"{self._where(r)}: no answer after {tries} tries ({last}); check that the "
                                f"server is up, then rerun (a batch run resumes where it stopped)")

    async def _fetch(self, http: httpx.AsyncClient, r: Request) -> tuple[int, str | None, bytes]:
        """One HTTP exchange: the status, a 429's Retry-After and the body, read under the
        byte cap before and after decompression; a redirect is an error."""
        async with http.stream(r.method, r.path, json=r.payload) as resp:
            if 300 <= resp.status_code < 400:
                to = self._masked(resp.headers.get("location", "?"))[:200]
                raise ServedModelError(f"{self._where(r)}: HTTP {resp.status_code} redirects to {to}; franq does "
                                       f"not follow redirects: set [model] server to the URL that answers")
            encoding = resp.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity") and encoding not in DECODERS:
                raise ServedModelError(f"{self._where(r)}: the reply is encoded as {encoding[:40]!r}; franq reads "
                                       f"gzip, deflate or plain replies")
            if resp.is_stream_consumed:  # an in-memory transport (the tests' fake servers) read it already
                if len(resp.content) > self.reply_bytes:
                    raise self._too_large(r, f"{len(resp.content)} bytes")
                return resp.status_code, resp.headers.get("retry-after"), resp.content
            inflate = zlib.decompressobj(DECODERS[encoding]) if encoding in DECODERS else None
            out, raw = bytearray(), 0
            async for chunk in resp.aiter_raw(CHUNK):
                raw += len(chunk)
                if raw > self.reply_bytes:
                    raise self._too_large(r, f"{raw} bytes or more")
                while chunk:
                    if inflate is None:
                        out += chunk
                        chunk = b""
                    else:
                        try:
                            out += inflate.decompress(chunk, self.reply_bytes + 1 - len(out))
                        except zlib.error as exc:
                            raise ServedModelError(f"{self._where(r)}: the {encoding} reply does not inflate "
                                                   f"({exc})") from None
                        chunk = inflate.unconsumed_tail
                    if len(out) > self.reply_bytes:
                        raise self._too_large(r, f"{len(out)} bytes or more once inflated")
            return resp.status_code, resp.headers.get("retry-after"), bytes(out)

    def _too_large(self, r: Request, size: str) -> ServedModelError:
        return ServedModelError(f"{self._where(r)}: the reply is {size}, over the limit of {self.reply_bytes} bytes "
                                f"(bytes of one reply of a served model; raise it with [limits] reply_bytes = N)")

    def _json(self, data: bytes, r: Request):
        """The reply parsed, nested at most ``json_depth`` levels; NaN and infinities are kept
        for the adapter to name where they are."""
        from franq.files import check_depth

        deep = (f"{self._where(r)}: the reply is nested too deeply (over the limit of {self.json_depth} levels; "
                f"raise it with [limits] json_depth = N)")
        try:
            body = json.loads(data)
        except RecursionError:
            raise ServedModelError(deep) from None
        except ValueError:
            raise ServedModelError(f"{self._where(r)}: the reply is not JSON: {self._snippet(data)}") from None
        try:
            return check_depth(body, limits={"json_depth": self.json_depth})
        except FranqError:
            raise ServedModelError(deep) from None

    def _delay(self, attempt: int, hint: str | None) -> float:
        """Exponential backoff with jitter; a 429's ``Retry-After`` (seconds) is honoured; never
        more than the ``retry_wait_seconds`` limit."""
        wait = self.backoff * 2 ** min(attempt - 1, 30) * (0.5 + random.random() / 2)
        if hint and hint.strip().isdigit():
            wait = max(wait, float(hint.strip()[:6]))
        return min(wait, self.max_wait)

    def _snippet(self, data: bytes) -> str:
        text = " ".join(self._masked(data[:4000].decode("utf-8", "replace")).split())
        return text[:200] + ("..." if len(text) > 200 else "")


def check_timeout(value, key: str, where: str = "config 'model.{key}'") -> float:
    """A timeout in seconds: a finite number > 0 (``inf`` and NaN refused: a bound that bounds)."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{where.format(key=key)}: expected a finite number of seconds > 0, got {value!r}")
    return float(value)
