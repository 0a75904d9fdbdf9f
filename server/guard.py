"""The web port's connection guard: bounded connections and bounded time to send a request.

uvicorn's h11 protocol has no timeout for a request's head or body, and no cap on
connections but ``limit_concurrency`` (which still accepts, reads the whole head and answers
503). Slow clients (one header line every few seconds) could hold connections open without end
until the process ran out of file descriptors, and then the gRPC port stopped accepting too.
``GuardedH11Protocol`` is uvicorn's own protocol with two additions:

* a connection beyond ``max_connections`` is closed as soon as it is accepted (its descriptor
  is given back at once), so the process keeps descriptors for the gRPC port and its probes;
* from the moment a connection is accepted, and again each time a response is complete (an
  idle keep-alive connection), the client has ``request_timeout`` seconds to send a whole
  request, head and body; a connection still short of one then is closed.

Such closings are logged at most once per interval (``RateLimitedLog``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import threading
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from hortus.server.drain import LINGER_S

__all__ = [
    "GuardedH11Protocol",
    "RateLimitedLog",
    "RateLimitedRecords",
    "default_max_connections",
    "guarded_protocol",
    "limit_third_party_logs",
]

log = logging.getLogger("hortus.web")

REQUEST_TIMEOUT_S = 10.0
"""Seconds a client has to send a whole request (head and body) on a new or idle connection."""
FD_SHARE = 4
"""The web port takes at most 1/FD_SHARE of the process's descriptors (RLIMIT_NOFILE): the
rest stay for the gRPC port, its probes, the metrics port, logs and the search."""
MAX_CONNECTIONS = 1024


LOG_INTERVAL_S = 10.0
"""Third-party loggers that log once per hostile connection log at most once per this long."""


class RateLimitedRecords(logging.Filter):
    """A filter letting through at most one record per message (its template, ``record.msg``)
    per `interval` seconds, the next one saying how many were left out. For loggers that log
    once per connection and that hortus does not write: uvicorn's "Invalid HTTP request
    received." (any bytes that are not HTTP: one line per request), asyncio's "socket.accept()
    out of system resource" (once per accept attempt: 100,291 lines in 12 s at the descriptor
    limit)."""

    MAX_KINDS = 1024  # preformatted messages are all different: the table is bounded anyway

    def __init__(self, interval: float = LOG_INTERVAL_S) -> None:
        super().__init__()
        self.interval = interval
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        kind = str(record.msg)
        now = time.monotonic()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.interval:
                self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
                return False
            if len(self._last) >= self.MAX_KINDS:
                self._last.clear()
                self._suppressed.clear()
            self._last[kind] = now
            suppressed = self._suppressed.pop(kind, 0)
        if suppressed:
            record.msg = f"{record.msg} ({suppressed} more like it not logged in the last {self.interval:g} s)"
        return True


RATE_LIMITED_LOGGERS = ("uvicorn.error", "asyncio")


def limit_third_party_logs(interval: float = LOG_INTERVAL_S) -> None:
    """Rate-limit ``RATE_LIMITED_LOGGERS`` (once per process)."""
    for name in RATE_LIMITED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimitedRecords) for f in logger.filters):
            logger.addFilter(RateLimitedRecords(interval))


def default_max_connections() -> int:
    """The web port's connection cap: ``MAX_CONNECTIONS``, at most a quarter of the
    process's soft descriptor limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft // FD_SHARE))


class RateLimitedLog:
    """Logs a warning per kind at most once per `interval` seconds, with the count of events
    since the last line (a flood of hostile connections must not become a flood of lines)."""

    def __init__(self, logger: logging.Logger, interval: float = 10.0) -> None:
        self.logger = logger
        self.interval = interval
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def warning(self, kind: str, message: str, *args: object) -> bool:
        """Log `message` unless `kind` was logged within the interval; whether it was."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.interval:
                self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
                return False
            self._last[kind] = now
            suppressed = self._suppressed.pop(kind, 0)
        if suppressed:
            message += " (%d more since the last such line)"
            args = (*args, suppressed)
        self.logger.warning(message, *args)
        return True


EVENTS = RateLimitedLog(log)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and a request read timeout (see the
    module's docstring); ``guarded_protocol`` makes a subclass with the numbers."""

    max_connections: int = MAX_CONNECTIONS
    request_timeout: float = REQUEST_TIMEOUT_S
    events: RateLimitedLog = EVENTS
    _read_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            self.events.warning(
                "cap",
                "web port: %d connections open, the cap; closing new ones (others keep their answers)",
                self.max_connections,
            )
            transport.abort()  # no answer to write: the descriptor goes back now
            return
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(self.request_timeout, self._read_expired)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_expired(self) -> None:
        self._read_timer = None
        if self.conn.their_state is h11.DONE or self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete and self.conn.their_state is h11.SEND_BODY:
            kind = "body"
        elif self.conn.their_state is h11.IDLE and self.cycle is not None and self.cycle.response_complete:
            kind = "idle"
        else:
            kind = "head"
        if kind != "idle":
            self.events.warning(
                kind,
                "web port: closed a connection from %s that sent no whole request %s within %g s",
                _peer(self.client),
                kind,
                self.request_timeout,
            )
        self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is h11.DONE:
            self._disarm()  # the whole request is in: the rest is the call's own deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is not h11.DONE:
            self._arm()  # idle keep-alive, or the next request's head

    _lingering = False

    def shutdown(self) -> None:
        """The server stops: an idle connection gets ``LINGER_S`` for a request on its way
        (answered: UNAVAILABLE while draining, with ``Connection: close``), then is half-closed
        and read until the client closes; uvicorn closed it at once, and a request arriving
        then was answered with a TCP reset (``hortus.server.drain``)."""
        if self.cycle is None or self.cycle.response_complete:
            self._disarm()
            self.loop.call_later(LINGER_S, self._half_close)
        else:
            super().shutdown()

    def _half_close(self) -> None:
        if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
            if self.cycle is not None and not self.cycle.response_complete:
                self.cycle.keep_alive = False  # a request came meanwhile: closed after its answer
            return
        self._lingering = True
        with contextlib.suppress(h11.LocalProtocolError):
            self.conn.send(h11.ConnectionClosed())
        if self.transport.can_write_eof():
            self.transport.write_eof()  # FIN; what the client still sends is read and dropped
            self.loop.call_later(LINGER_S, self.transport.close)
        else:
            self.transport.close()  # TLS: close_notify

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # after the server's FIN: read (so never unread at close) and dropped
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def _peer(client: Any) -> str:
    return f"{client[0]}:{client[1]}" if client else "?"


def guarded_protocol(max_connections: int | None = None, request_timeout: float = REQUEST_TIMEOUT_S) -> type[GuardedH11Protocol]:
    """A ``GuardedH11Protocol`` class with these numbers (uvicorn's ``http=`` takes a class)."""
    cap = max_connections if max_connections is not None else default_max_connections()
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"max_connections": cap, "request_timeout": request_timeout})
