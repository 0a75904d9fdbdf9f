"""Typed client exceptions, built from a failed call's rich status (``google.rpc.Status``)."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

__all__ = [
    "AdvisorError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "FieldViolation",
    "InvalidArgumentError",
    "NotFoundError",
    "QuotaViolation",
    "ResourceExhaustedError",
    "UnavailableError",
    "error_from_rpc",
]


@dataclass(frozen=True)
class FieldViolation:
    """A bad request field (``"position.game_id"``, ``"actions[2]"``, ``"limits.iterations"``)."""

    field: str
    description: str


@dataclass(frozen=True)
class QuotaViolation:
    """A server capacity that was exceeded."""

    subject: str
    description: str


class AdvisorError(RuntimeError):
    """A call to the advisor failed. ``code`` is the gRPC status code, ``message`` the
    server's message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class InvalidArgumentError(AdvisorError, ValueError):
    """The request was wrong: bad position bytes, unknown game, illegal action, over a cap.
    ``violations`` name the fields."""

    def __init__(self, code: grpc.StatusCode, message: str, violations: tuple[FieldViolation, ...] = ()) -> None:
        super().__init__(code, message)
        self.violations = violations

    @property
    def fields(self) -> tuple[str, ...]:
        """The names of the offending fields."""
        return tuple(v.field for v in self.violations)


class ResourceExhaustedError(AdvisorError):
    """The server is at capacity (e.g. concurrent searches); retry after ``retry_delay``
    seconds (from the status's ``google.rpc.RetryInfo``; None if the server gave none)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        violations: tuple[QuotaViolation, ...] = (),
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(code, message)
        self.violations = violations
        self.retry_delay = retry_delay


class DeadlineExceededError(AdvisorError):
    """The call's deadline passed before any answer (searches answer partially instead when
    they can)."""


class UnavailableError(AdvisorError):
    """The server could not be reached."""


class _StateError(AdvisorError):
    """A request named state the server keeps, from its ``google.rpc.ErrorInfo``: ``reason``
    (e.g. ``"CONTINUATION_UNKNOWN"``) and ``field`` (e.g. ``"continue_from"``)."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "", field: str = "") -> None:
        super().__init__(code, message)
        self.reason = reason
        self.field = field


class NotFoundError(_StateError):
    """What the request names is not kept (anymore), e.g. an ``analyze(continue_from=...)``
    token that expired or was used: start afresh without it."""


class FailedPreconditionError(_StateError):
    """What the request names is busy, e.g. the analysis a ``continue_from`` token continues
    is still running: retry after it ended."""


def _rich_status(call: object) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` a failed call carries in its trailers, if any.

    Works for sync errors (``grpc.Call``) and asyncio ones (``grpc.aio.AioRpcError``), which both
    offer ``code()``, ``details()`` and ``trailing_metadata()``."""
    try:
        return rpc_status.from_call(call)  # type: ignore[arg-type]
    except (ValueError, AttributeError, TypeError):  # mismatched or unreadable trailers
        return None


def error_from_rpc(error: grpc.RpcError) -> AdvisorError:
    """The typed exception for a failed call."""
    code_method = getattr(error, "code", None)
    code = code_method() if callable(code_method) else grpc.StatusCode.UNKNOWN
    if not isinstance(code, grpc.StatusCode):
        code = grpc.StatusCode.UNKNOWN
    details_method = getattr(error, "details", None)
    message = str(details_method() if callable(details_method) else error) or code.name.lower()
    status = _rich_status(error)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        violations: list[FieldViolation] = []
        if status is not None:
            for detail in status.details:
                if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    violations.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
        return InvalidArgumentError(code, message, tuple(violations))
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        quotas: list[QuotaViolation] = []
        delay: float | None = None
        if status is not None:
            for detail in status.details:
                if detail.Is(error_details_pb2.QuotaFailure.DESCRIPTOR):
                    failure = error_details_pb2.QuotaFailure()
                    detail.Unpack(failure)
                    quotas.extend(QuotaViolation(v.subject, v.description) for v in failure.violations)
                elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    retry = error_details_pb2.RetryInfo()
                    detail.Unpack(retry)
                    delay = retry.retry_delay.ToNanoseconds() / 1e9
        return ResourceExhaustedError(code, message, tuple(quotas), delay)
    if code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION):
        reason = field = ""
        if status is not None:
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    reason, field = info.reason, info.metadata.get("field", "")
        kind = NotFoundError if code == grpc.StatusCode.NOT_FOUND else FailedPreconditionError
        return kind(code, message, reason, field)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return DeadlineExceededError(code, message)
    if code == grpc.StatusCode.UNAVAILABLE:
        return UnavailableError(code, message)
    return AdvisorError(code, message)
