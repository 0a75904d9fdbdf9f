"""The one place where exceptions become gRPC statuses (the rich status model).

* :class:`RequestError` (a field of the request is wrong), ``InvalidPositionError``,
  ``IllegalActionError`` and ``UnknownGameError`` → ``INVALID_ARGUMENT`` with a
  ``google.rpc.BadRequest`` field violation naming the field;
* :class:`CapacityError` → ``RESOURCE_EXHAUSTED`` with a ``google.rpc.QuotaFailure`` and a
  ``google.rpc.RetryInfo`` (when to try again);
* :class:`NoAnswerError` → ``DEADLINE_EXCEEDED`` (not even a partial answer exists);
* :class:`ShuttingDownError` → ``UNAVAILABLE`` (the server is draining: send elsewhere);
* anything else → ``INTERNAL`` with the generic message ``"internal error"``; the traceback is
  logged here, server side, and never sent.

Plain ``ValueError`` s are *not* mapped to ``INVALID_ARGUMENT``: the service validates requests
itself and raises :class:`RequestError` naming the field, so a ``ValueError`` that escapes is a
bug and is reported as ``INTERNAL`` like any other.
"""

from __future__ import annotations

import functools
import logging
from typing import Callable, TypeVar

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

from hortus.games import IllegalActionError, InvalidPositionError, UnknownGameError

__all__ = [
    "CapacityError",
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
}


def status_for(exc: BaseException, method: str = "") -> grpc.Status:
    """The status answering a call whose handler raised `exc`."""
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
