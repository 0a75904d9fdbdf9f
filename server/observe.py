"""Watching every call: one interceptor that reports (method, status code name, seconds) of
each finished call to observers (Prometheus metrics, the access log), and the log set-up
(plain text or one JSON object per line)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

__all__ = ["CallObserver", "JsonFormatter", "ObservingInterceptor", "access_logger", "configure_logging"]

CallObserver = Callable[[str, str, float, grpc.ServicerContext], None]
"""Called after every call with (method, status code name, seconds, context)."""


def _code_name(context: grpc.ServicerContext, failed: bool) -> str:
    code: Any = getattr(context, "code")()  # set by abort / set_code; None when the call just returned
    if code is None:
        if not failed:
            return "OK"
        # A call ended with no code set: if the call is no longer active its client went away
        # (a stream cancelled by the client closes the handler's generator) or its deadline
        # passed; only a handler's own failure is UNKNOWN.
        if not context.is_active():
            remaining = context.time_remaining()
            return "DEADLINE_EXCEEDED" if remaining is not None and remaining <= 0 else "CANCELLED"
        return "UNKNOWN"
    return str(getattr(code, "name", code))


class ObservingInterceptor(grpc.ServerInterceptor):
    """Times every call (streams: from start to their last message) and reports its code."""

    def __init__(self, observers: list[CallObserver] | None = None) -> None:
        self.observers: list[CallObserver] = list(observers or [])

    def _done(self, method: str, context: grpc.ServicerContext, started: float, failed: bool) -> None:
        code = _code_name(context, failed)
        seconds = time.perf_counter() - started
        for observer in self.observers:
            observer(method, code, seconds, context)

    def _unary(self, method: str, behavior: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            started = time.perf_counter()
            failed = True
            try:
                response = behavior(request, context)
                failed = False
                return response
            finally:
                self._done(method, context, started, failed)

        return handle

    def _streaming(self, method: str, behavior: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            started = time.perf_counter()
            failed = True
            try:
                yield from behavior(request, context)
                failed = False
            finally:
                self._done(method, context, started, failed)

        return handle

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None or not self.observers:
            return handler
        method = str(getattr(handler_call_details, "method", "")).rsplit("/", 1)[-1]
        return rewrap(handler, lambda b: self._unary(method, b), lambda b: self._streaming(method, b))


def rewrap(
    handler: grpc.RpcMethodHandler[Any, Any],
    single: Callable[[Any], Any],
    streaming: Callable[[Any], Any],
) -> grpc.RpcMethodHandler[Any, Any]:
    """`handler` with its behaviour wrapped, serializers kept: by `single` for the kinds that
    answer once (unary and client streaming), by `streaming` for those that stream answers.
    The one place the interceptors (observing, admission) rebuild a method handler."""
    common: dict[str, Any] = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(single(handler.unary_unary), **common)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(streaming(handler.unary_stream), **common)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(single(handler.stream_unary), **common)
    if handler.stream_stream is not None:
        return grpc.stream_stream_rpc_method_handler(streaming(handler.stream_stream), **common)
    return handler


def access_logger(logger: logging.Logger | None = None) -> CallObserver:
    """An observer writing one INFO record per call to ``hortus.access`` with the fields
    method, code, ms and peer (as ``extra``, so the JSON format shows them as keys)."""
    log = logger if logger is not None else logging.getLogger("hortus.access")

    def observe(method: str, code: str, seconds: float, context: grpc.ServicerContext) -> None:
        if log.isEnabledFor(logging.INFO):
            ms = round(seconds * 1000.0, 3)
            peer = context.peer()
            log.info("%s %s %.1f ms %s", method, code, ms, peer, extra={"method": method, "code": code, "ms": ms, "peer": peer})

    return observe


_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (ISO 8601, UTC), level, logger, message, the record's
    ``extra`` fields, ``worker`` when set, and the traceback as ``exc``."""

    def __init__(self, worker: int | None = None) -> None:
        super().__init__()
        self.worker = worker

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.worker is not None:
            data["worker"] = self.worker
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                data[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data)


def configure_logging(level: str = "info", fmt: str = "text", worker: int | None = None) -> None:
    """Log to stderr at `level`, as text lines or JSON lines (``fmt="json"``)."""
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter(worker))
    else:
        who = f" worker{worker}" if worker is not None else ""
        handler.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s{who} %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
