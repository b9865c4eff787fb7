"""``franq serve``'s connections (issue 47): what uvicorn does not bound.

uvicorn waits for a request's headers as long as a client cares to send them, and accepts
connections until the process runs out of file descriptors; then every ``accept`` fails
with a "Too many open files" traceback (hundreds of MB of log in a minute) and ``/health``
stops answering. :func:`protocol` returns uvicorn's h11 protocol with three bounds:

- a **header-read timeout** (``--header-timeout``): a connection that has not sent a whole
  request head within it (a new one, or a kept-alive one that started another request) gets
  a 408 and is closed;
- a **cap on open connections** (``--max-connections``, lowered to fit the open-file limit):
  over it, the oldest connection still sending its headers (or idle between requests) is
  closed to make room, so a crowd of half-open connections cannot lock out ``/health``;
  when every connection is busy with a request, the new one gets a 503 and is closed;
- **one log line per refused or closed connection**, at most :data:`LOG_BURST` lines per
  :data:`LOG_WINDOW` seconds; the lines held back are counted in the next one.
"""
from __future__ import annotations

import json
import logging
import time

log = logging.getLogger("franq.serve")
HEADER_TIMEOUT = 10.0
MAX_CONNECTIONS = 64
LOG_BURST = 10
LOG_WINDOW = 10.0
SPARE_FILES = 32
"""File descriptors kept free besides the connections (the model's files, logs, sockets)."""


class LogBudget:
    """At most ``burst`` log lines per ``window`` seconds, the window starting at the first
    line (not when the server started, so a flood is never split across two windows by how
    long start-up took); the next line allowed says how many were held back."""

    def __init__(self, burst: int = LOG_BURST, window: float = LOG_WINDOW, clock=time.monotonic):
        self.burst, self.window, self.clock = burst, window, clock
        self.start, self.used, self.held = None, 0, 0

    def warn(self, message: str, *args) -> bool:
        now = self.clock()
        if self.start is None or now - self.start >= self.window:
            self.start, self.used = now, 0
        if self.used >= self.burst:
            self.held += 1
            return False
        self.used += 1
        if self.held:
            message += f" ({self.held} similar lines held back)"
            self.held = 0
        log.warning(message, *args)
        return True


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered (with one log line) so that the connections and :data:`SPARE_FILES`
    fit the process's open-file limit (raised to the hard limit first, where allowed)."""
    try:
        import resource
    except ImportError:  # not on POSIX: no limit to read
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < need:
        fit = max(1, soft - SPARE_FILES)
        log.warning("franq serve: --max-connections %d lowered to %d (open-file limit %d)", wanted, fit, soft)
        return fit
    return wanted


def _raw(status: str, detail: str) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"connection: close\r\n\r\n").encode() + body


def protocol(*, header_timeout: float = HEADER_TIMEOUT, max_connections: int = MAX_CONNECTIONS,
             budget: LogBudget | None = None):
    """uvicorn's h11 protocol class with the bounds of the module docstring (pass it as
    ``uvicorn.Config(http=...)``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    budget = budget or LogBudget()

    class Bounded(H11Protocol):
        def connection_made(self, transport):
            super().connection_made(transport)
            self.dropped, self.seen_cycle, self.timer = False, None, None
            self._waiting()
            live = [c for c in self.connections if not getattr(c, "dropped", True)]
            if len(live) <= max_connections:
                return
            idle = sorted((c for c in live if c is not self and c.waiting_since is not None),
                          key=lambda c: c.waiting_since)
            if idle:
                idle[0].drop("408 Request Timeout", "closed to make room: over --max-connections",
                              f"closed the oldest connection without a request ({len(live)} open, "
                              f"--max-connections {max_connections})")
            else:
                self.drop("503 Service Unavailable", "too many connections (--max-connections); retry later",
                          f"refused a connection: {len(live) - 1} open, all busy (--max-connections "
                          f"{max_connections})")

        def _waiting(self):
            """Start the header clock: a request head must arrive within ``header_timeout``."""
            self.waiting_since = time.monotonic()
            if self.timer is not None:
                self.timer.cancel()
            self.timer = self.loop.call_later(header_timeout, self._late)

        def _late(self):
            self.timer = None
            if self.waiting_since is not None and not self.dropped:
                self.drop("408 Request Timeout", "the request head did not arrive in time (--header-timeout)",
                          f"closed a connection that sent no whole request head in {header_timeout:g} s "
                          f"(--header-timeout)")

        def drop(self, status: str, detail: str, line: str):
            self.dropped = True
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "?"
            budget.warn("franq serve: %s: %s", client, line)
            if not self.transport.is_closing():
                self.transport.write(_raw(status, detail))
                self.transport.close()

        def handle_events(self):
            super().handle_events()
            if self.cycle is not None and self.cycle is not self.seen_cycle:  # a whole request head arrived
                self.seen_cycle, self.waiting_since = self.cycle, None
                if self.timer is not None:
                    self.timer.cancel()
                    self.timer = None

        def on_response_complete(self):
            if not self.transport.is_closing():
                self._waiting()  # kept alive: the next request head has the same time
            super().on_response_complete()  # a pipelined request already here stops the clock again

        def connection_lost(self, exc):
            self.dropped = True
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            super().connection_lost(exc)

    return Bounded
