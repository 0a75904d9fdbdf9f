"""The one place where exceptions become gRPC statuses (the rich status model).

* :class:`RequestError` (a field of the request is wrong), ``InvalidPositionError``,
  ``IllegalActionError`` and ``UnknownGameError`` → ``INVALID_ARGUMENT`` with a
  ``google.rpc.BadRequest`` field violation naming the field;
* :class:`CapacityError` → ``RESOURCE_EXHAUSTED`` with a ``google.rpc.QuotaFailure`` and a
  ``google.rpc.RetryInfo`` (when to try again);
* :class:`ContinuationError` (``Analyze.continue_from`` names no kept analysis) →
  ``NOT_FOUND`` (unknown, expired, used, another process) or ``FAILED_PRECONDITION`` (its call
  still runs), with a ``google.rpc.ErrorInfo`` whose metadata ``field`` names the field;
* :class:`NoAnswerError` → ``DEADLINE_EXCEEDED`` (not even a partial answer exists);
* :class:`ShuttingDownError` → ``UNAVAILABLE`` (the server is draining: send elsewhere);
* a request whose bytes are not a valid message (truncated, a string field holding invalid
  UTF-8, random bytes) → ``INVALID_ARGUMENT`` with a ``BadRequest`` naming ``request``, for
  every RPC of the server (:class:`MalformedRequestGuard`), logged at most once per interval;
* anything else → ``INTERNAL`` with the generic message ``"internal error"``; the traceback is
  logged here, server side, and never sent.

Plain ``ValueError`` s are *not* mapped to ``INVALID_ARGUMENT``: the service validates requests
itself and raises :class:`RequestError` naming the field, so a ``ValueError`` that escapes is a
bug and is reported as ``INTERNAL`` like any other.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any, Callable, TypeVar

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

from hortus.games import IllegalActionError, InvalidPositionError, UnknownGameError

__all__ = [
    "CapacityError",
    "ContinuationError",
    "MalformedRequestGuard",
    "NoAnswerError",
    "RequestError",
    "ShuttingDownError",
    "error_answer",
    "rpc_errors",
    "status_for",
]

log = logging.getLogger("hortus.server")

INTERNAL_MESSAGE = "internal error"


class RequestError(ValueError):
    """A field of the request is invalid. ``field`` is its path in the request message
    (``"limits.iterations"``, ``"actions[3]"``, ``"position.game"``)."""

    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description


class CapacityError(Exception):
    """The server is at capacity for this kind of work (``subject`` names the quota);
    ``retry_after_s`` is the delay sent in the ``google.rpc.RetryInfo`` detail."""

    def __init__(self, subject: str, description: str, retry_after_s: float = 0.1) -> None:
        super().__init__(description)
        self.subject = subject
        self.description = description
        self.retry_after_s = retry_after_s


class ContinuationError(Exception):
    """A token in ``field`` names no state the server keeps. ``reason`` is the
    ``google.rpc.ErrorInfo`` reason (UPPER_SNAKE_CASE); ``in_use``: the state exists but is
    still busy (FAILED_PRECONDITION: retry after it ends), else it is gone (NOT_FOUND: start
    afresh; retrying the same request cannot succeed)."""

    def __init__(self, field: str, reason: str, description: str, in_use: bool = False) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.reason = reason
        self.description = description
        self.in_use = in_use


class NoAnswerError(Exception):
    """The call's deadline leaves no time for even a partial answer."""


class ShuttingDownError(Exception):
    """The server is shutting down and takes no new work (a client retries elsewhere)."""


def _position_field(field: str) -> str:
    """Fields of a decoded position, as paths in the request: ``position`` or ``position.*``."""
    if field == "position" or field.startswith("position.") or field.startswith("position["):
        return field
    return f"position.{field}"


def _with_details(code: grpc.StatusCode, message: str, *details: object) -> grpc.Status:
    proto = status_pb2.Status(code=_CODE_NUMBERS[code], message=message)
    for detail in details:
        packed = any_pb2.Any()
        packed.Pack(detail)  # type: ignore[arg-type]
        proto.details.append(packed)
    return rpc_status.to_status(proto)


def _bad_request(field: str, description: str) -> grpc.Status:
    violation = error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
    return _with_details(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"invalid {field}: {description}",
        error_details_pb2.BadRequest(field_violations=[violation]),
    )


_CODE_NUMBERS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: code_pb2.INVALID_ARGUMENT,
    grpc.StatusCode.RESOURCE_EXHAUSTED: code_pb2.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED: code_pb2.DEADLINE_EXCEEDED,
    grpc.StatusCode.INTERNAL: code_pb2.INTERNAL,
    grpc.StatusCode.UNAVAILABLE: code_pb2.UNAVAILABLE,
    grpc.StatusCode.NOT_FOUND: code_pb2.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION: code_pb2.FAILED_PRECONDITION,
}


class ForwardedError(Exception):
    """A call forwarded to another worker of the group (``hortus.server.routing``) failed
    there: answered with the same status (code, message, details)."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.status = status


def status_for(exc: BaseException, method: str = "") -> grpc.Status:
    """The status answering a call whose handler raised `exc`."""
    if isinstance(exc, ForwardedError):
        return exc.status
    if isinstance(exc, RequestError):
        return _bad_request(exc.field, exc.description)
    if isinstance(exc, InvalidPositionError):
        return _bad_request(_position_field(exc.field), exc.reason)
    if isinstance(exc, IllegalActionError):
        return _bad_request(str(getattr(exc, "field", "actions")), str(exc))
    if isinstance(exc, UnknownGameError):
        return _bad_request(str(getattr(exc, "field", "game")), str(exc))
    if isinstance(exc, CapacityError):
        violation = error_details_pb2.QuotaFailure.Violation(subject=exc.subject, description=exc.description)
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(max(0, int(exc.retry_after_s * 1e9)))
        return _with_details(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            exc.description,
            error_details_pb2.QuotaFailure(violations=[violation]),
            error_details_pb2.RetryInfo(retry_delay=delay),
        )
    if isinstance(exc, ContinuationError):
        code = grpc.StatusCode.FAILED_PRECONDITION if exc.in_use else grpc.StatusCode.NOT_FOUND
        info = error_details_pb2.ErrorInfo(reason=exc.reason, domain="hortus.v1", metadata={"field": exc.field})
        return _with_details(code, f"{exc.field}: {exc.description}", info)
    if isinstance(exc, ShuttingDownError):
        return _with_details(grpc.StatusCode.UNAVAILABLE, str(exc) or "the server is shutting down")
    if isinstance(exc, NoAnswerError):
        return _with_details(grpc.StatusCode.DEADLINE_EXCEEDED, str(exc) or "deadline exceeded")
    log.error("internal error in %s", method or "a call", exc_info=exc)
    return _with_details(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)


def error_answer(exc: BaseException, method: str = "") -> tuple[grpc.StatusCode, str, str]:
    """The status code, message and offending field (``""`` if none) answering `exc`: the
    same mapping as :func:`status_for`, for answers carried inside a message (a failed position
    of a batch)."""
    status = status_for(exc, method)
    field = ""
    for key, value in status.trailing_metadata:
        if key != "grpc-status-details-bin" or not isinstance(value, bytes):
            continue
        for detail in status_pb2.Status.FromString(value).details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                if bad.field_violations:
                    field = bad.field_violations[0].field
    return status.code, status.details, field


_Self = TypeVar("_Self")
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")
_Handler = Callable[[_Self, _Request, grpc.ServicerContext], _Response]


def rpc_errors(method: _Handler[_Self, _Request, _Response]) -> _Handler[_Self, _Request, _Response]:
    """Decorate a unary servicer method: any exception aborts the call with `status_for`."""

    @functools.wraps(method)
    def wrapper(self: _Self, request: _Request, context: grpc.ServicerContext) -> _Response:
        try:
            return method(self, request, context)
        except Exception as exc:  # noqa: BLE001 - mapped to a status right below
            status = status_for(exc, method.__name__)
        context.abort_with_status(status)

    return wrapper


class _Malformed:
    """What the guarded deserializer returns for bytes that are not a valid request."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _RateLimitedLog:
    """At most one record per `interval_s`, counting the ones left out in between: a client
    sending garbage must not be able to flood the log (one traceback per call did)."""

    def __init__(self, logger: logging.Logger, interval_s: float) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._next = 0.0
        self._suppressed = 0

    def warning(self, message: str, *args: object) -> None:
        with self._lock:
            now = time.monotonic()
            if now < self._next:
                self._suppressed += 1
                return
            suppressed, self._suppressed = self._suppressed, 0
            self._next = now + self.interval_s
        self.logger.warning(message + " (%d more like it not logged in the last %g s)", *args, suppressed, self.interval_s)


MALFORMED_LOG_INTERVAL_S = 10.0


class MalformedRequestGuard(grpc.ServerInterceptor):
    """Every RPC's request bytes are parsed by a deserializer that cannot fail: bytes that are
    not a valid message (gRPC's own handling: ``INTERNAL`` "Exception deserializing
    request!" and an ERROR traceback per call) become ``INVALID_ARGUMENT`` with a
    ``BadRequest`` naming ``request``, and one WARNING per ``MALFORMED_LOG_INTERVAL_S`` at
    most. In a client stream, a malformed message ends the stream there: the handler sees the
    messages before it as the whole stream (so a batch answers those), then the call ends
    ``INVALID_ARGUMENT``. Generic over services: the health service and reflection too."""

    def __init__(self, interval_s: float = MALFORMED_LOG_INTERVAL_S, logger: logging.Logger | None = None) -> None:
        self._log = _RateLimitedLog(logger if logger is not None else log, interval_s)

    @staticmethod
    def _safe(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
        if deserializer is None:
            return None

        def deserialize(data: bytes) -> Any:
            try:
                return deserializer(data)
            except Exception as exc:  # noqa: BLE001 - DecodeError and whatever else a parser raises
                return _Malformed(str(exc) or type(exc).__name__)

        return deserialize

    def _refuse(self, method: str, malformed: _Malformed, context: grpc.ServicerContext) -> None:
        self._log.warning("malformed request to %s from %s: %s", method, context.peer(), malformed.reason)
        context.abort_with_status(_bad_request("request", f"not a valid request message for {method}: {malformed.reason}"))

    def _requests(self, method: str, requests: Iterator[Any], found: list[_Malformed]) -> Iterator[Any]:
        for request in requests:
            if isinstance(request, _Malformed):
                found.append(request)
                return
            yield request

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler
        method = str(getattr(handler_call_details, "method", ""))
        common: dict[str, Any] = {
            "request_deserializer": self._safe(handler.request_deserializer),
            "response_serializer": handler.response_serializer,
        }
        guard = self

        if handler.unary_unary is not None or handler.unary_stream is not None:
            streaming = handler.unary_stream is not None
            behavior: Callable[[Any, grpc.ServicerContext], Any] = (
                handler.unary_stream if handler.unary_stream is not None else handler.unary_unary  # type: ignore[assignment]
            )

            def unary_in(request: Any, context: grpc.ServicerContext) -> Any:
                if isinstance(request, _Malformed):
                    guard._refuse(method, request, context)
                return behavior(request, context)

            if streaming:
                return grpc.unary_stream_rpc_method_handler(unary_in, **common)
            return grpc.unary_unary_rpc_method_handler(unary_in, **common)

        if handler.stream_unary is not None:
            stream_unary = handler.stream_unary

            def stream_in(requests: Iterator[Any], context: grpc.ServicerContext) -> Any:
                found: list[_Malformed] = []
                response = stream_unary(guard._requests(method, requests, found), context)
                if found:
                    guard._refuse(method, found[0], context)
                return response

            return grpc.stream_unary_rpc_method_handler(stream_in, **common)

        if handler.stream_stream is not None:
            stream_stream = handler.stream_stream

            def stream_both(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
                found: list[_Malformed] = []
                yield from stream_stream(guard._requests(method, requests, found), context)
                if found:
                    guard._refuse(method, found[0], context)

            return grpc.stream_stream_rpc_method_handler(stream_both, **common)
        return handler
