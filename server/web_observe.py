"""Every web call observed once, with the code its client saw: the access log and the metrics
of the web port.

The bridge (``hortus.server.web._Bridge``) sees only the calls that reach a handler. Many
hostile requests never do: connectrpc refuses them while it negotiates the protocol (an
unknown content type: 415), decodes the body (bad JSON, a bad envelope) or counts the
request's messages, and the front door refuses others itself (native gRPC, gRPC-Web text
mode). So the observation is made around the Connect app instead:

* ``ConnectObserver`` is a connectrpc *metadata interceptor*: its ``on_end`` runs for every
  call whose protocol was negotiated, with the error connectrpc answers (its own, the
  handler's, ``CANCELED`` when the client went away, ``DEADLINE_EXCEEDED`` when its timeout
  fired), so the log says what the client was told.
* ``observed_rpc`` wraps the whole RPC path of the front door: a request answered without a
  call being observed (refused before the protocol was known) is reported with a code made
  from its HTTP status.

The interceptor also corrects the code of a client's framing mistakes: connectrpc answers a
message flagged compressed on a call that named no encoding ``internal`` and a unary request
(a server stream's too) of zero or two envelopes ``unimplemented``. Both are the request's
fault, found before any handler ran: ``invalid_argument``, with connectrpc's description.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError

from hortus.v1 import advisor_pb2 as pb

__all__ = ["CallRecord", "ConnectObserver", "code_name", "current_call", "observed_rpc", "report"]

Observer = Callable[[str, str, float, Any], None]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

RPC_PREFIX = "/hortus.v1.Advisor/"
_METHODS = frozenset(m.name for m in pb.DESCRIPTOR.services_by_name["Advisor"].methods)


@dataclass
class CallRecord:
    """One web request on the RPC path: whether it was observed already, and whether a
    servicer handler started (errors before that are the request's framing)."""

    observed: bool = False
    handler_started: bool = False


_CALL: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar("hortus_web_call", default=None)


def current_call() -> CallRecord | None:
    """The record of the web request being served in this task (None outside the Connect app)."""
    return _CALL.get()


def code_name(error: BaseException | None) -> str:
    """The gRPC name of how a Connect call ended."""
    if error is None:
        return "OK"
    if isinstance(error, ConnectError):
        return "CANCELLED" if error.code == Code.CANCELED else error.code.name
    return "INTERNAL"


class _Peer:
    """What the observers read of a call's context: its peer."""

    def __init__(self, client: str | None) -> None:
        self._peer = f"web:{client or '?'}"

    def peer(self) -> str:
        return self._peer


def report(observers: list[Observer], method: str, code: str, seconds: float, context: Any) -> None:
    import logging

    for observer in observers:
        try:
            observer(method, code, seconds, context)
        except Exception:  # noqa: BLE001 - an observer must not fail the call
            logging.getLogger("hortus.web").exception("call observer failed")


# Codes connectrpc gives a request it could not read before any handler ran: the request's
# framing, so the client's mistake (INVALID_ARGUMENT), not the server's.
_FRAMING_CODES = (Code.INTERNAL, Code.UNIMPLEMENTED, Code.UNKNOWN)


class ConnectObserver:
    """A connectrpc metadata interceptor (first in the list: it runs before the request is
    read) reporting every call to the observers and correcting framing errors' codes."""

    def __init__(self, observers: list[Observer]) -> None:
        self.observers = observers

    async def on_start(self, ctx: Any) -> float:
        record = _CALL.get()
        if record is not None:
            record.observed = True
        return time.perf_counter()

    async def on_end(self, started: float, ctx: Any, error: Exception | None, /) -> None:
        record = _CALL.get()
        corrected: ConnectError | None = None
        if (
            isinstance(error, ConnectError)
            and error.code in _FRAMING_CODES
            and record is not None
            and not record.handler_started
            # an encoding the server lacks stays UNIMPLEMENTED (the Connect and gRPC specs' code)
            and not error.message.startswith("unknown compression")
        ):
            # a message flagged compressed without an encoding, zero or two envelopes on a
            # unary-request call, a cut envelope: the request's bytes are wrong
            corrected = ConnectError(Code.INVALID_ARGUMENT, f"request framing: {error.message}")
            error = corrected
        method = str(getattr(getattr(ctx, "method", None), "name", "?"))
        seconds = time.perf_counter() - started
        report(self.observers, method, code_name(error), seconds, _Peer(getattr(ctx, "client_address", None)))
        if corrected is not None:
            raise corrected  # replaces connectrpc's error in the answer


def _status_code(status: int) -> str:
    """The code of a request refused with HTTP `status` before its protocol was known."""
    if status < 400:
        return "OK"
    if status == 404:
        return "UNIMPLEMENTED"  # no such method
    if status == 413 or status == 429:
        return "RESOURCE_EXHAUSTED"
    if status == 503:
        return "UNAVAILABLE"
    if status < 500:
        return "INVALID_ARGUMENT"  # 400, 405, 415, 421: the request's own mistake
    return "INTERNAL"


async def observed_rpc(
    app: Callable[[Scope, Receive, Send], Awaitable[None]],
    observers: list[Observer],
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    """Run `app` on a request of the RPC path under a fresh ``CallRecord``; when nothing
    observed it (refused before a protocol was negotiated), report it from its HTTP status."""
    started = time.perf_counter()
    record = CallRecord()
    token = _CALL.set(record)
    status = 0

    async def watching(message: MutableMapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        await send(message)

    try:
        await app(scope, receive, watching)
    finally:
        _CALL.reset(token)
        if not record.observed and observers:
            path: str = scope.get("path", "")
            method = path[len(RPC_PREFIX) :]
            if method not in _METHODS:
                method = "(unknown)"  # a label per invented name would grow the metrics without bound
            client = scope.get("client")
            peer = f"{client[0]}:{client[1]}" if client else None
            code = _status_code(status) if status else "CANCELLED"
            report(observers, method, code, time.perf_counter() - started, _Peer(peer))
