"""The HTTP side of a served model: an async client with a bounded number of requests in
flight, retries with backoff on 429 / 5xx / a dropped connection, and one clear error
after the last try.

:meth:`ServerClient.post_all` is the one door: the caller hands it every request of a
call (all answers of a batch, both conditions of each), they run concurrently with at
most ``in_flight`` open at once, and the replies come back in order. The pipeline is
synchronous; each call runs its own event loop.
"""
from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from franq.errors import FranqError

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


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


class ServerClient:
    """Requests to one server. ``transport`` (an :class:`httpx.AsyncBaseTransport`) replaces
    the network, for tests."""

    def __init__(self, base_url: str, *, api_key_env: str | None = None, in_flight: int = 4,
                 timeout: float = 120.0, max_retries: int = 4, backoff: float = 0.5, transport=None):
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.in_flight = in_flight
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.transport = transport
        self.requests_sent = 0
        """Every HTTP request sent, retries included (what the benchmark and the tests count)."""
        self.blocked_seconds = 0.0
        """Wall time spent waiting on the server (the benchmark's overhead = the rest)."""

    def _headers(self) -> dict:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

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
                                     headers=self._headers(),
                                     limits=httpx.Limits(max_connections=self.in_flight)) as http:
            tasks = [asyncio.ensure_future(self._one(http, gate, r)) for r in requests]
            try:
                return await asyncio.gather(*tasks)
            except BaseException:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise

    async def _one(self, http: httpx.AsyncClient, gate: asyncio.Semaphore, r: Request):
        last, hint = "", None
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self._delay(attempt, hint))
            async with gate:
                self.requests_sent += 1
                try:
                    resp = await http.request(r.method, r.path, json=r.payload)
                except httpx.TransportError as exc:
                    last, hint = (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__), None
                    continue
            if resp.status_code in RETRY_STATUS:
                last = f"HTTP {resp.status_code}: {_snippet(resp)}"
                hint = resp.headers.get("retry-after") if resp.status_code == 429 else None
                continue
            if resp.status_code >= 400:
                raise ServedModelError(f"model.server {self.base_url}{r.path}: HTTP {resp.status_code}: "
                                       f"{_snippet(resp)}")
            try:
                return resp.json()
            except ValueError:
                raise ServedModelError(f"model.server {self.base_url}{r.path}: the reply is not JSON: "
                                       f"{_snippet(resp)}") from None
        raise ServerUnavailable(f"model.server {self.base_url}{r.path}: no answer after {self.max_retries + 1} "
                                f"tries ({last}); check that the server is up, then rerun (a batch run "
                                f"resumes where it stopped)")

    def _delay(self, attempt: int, hint: str | None) -> float:
        """Exponential backoff with jitter; a 429's ``Retry-After`` (seconds, at most 60) is honoured."""
        wait = self.backoff * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
        if hint and hint.strip().isdigit():
            wait = max(wait, min(float(hint), 60.0))
        return wait


def _snippet(resp: httpx.Response) -> str:
    text = " ".join(resp.text.split())
    return text[:200] + ("..." if len(text) > 200 else "")
