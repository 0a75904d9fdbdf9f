"""Admission control of every call: a cap on work calls that never refuses a probe, and the
drain on shutdown.

gRPC's own ``maximum_concurrent_rpcs`` counts every call alike, so a busy server refused
``grpc.health.v1.Health/Check`` with ``RESOURCE_EXHAUSTED`` and a Kubernetes or Envoy probe
would have killed it. Here *probes* — health checks, server reflection and ``GetVersion`` —
have a budget of their own (``PROBE_CALLS`` at once, beside the work calls) and the gRPC pool
has a thread for every call admitted (``AdmissionControl.threads``), so a probe is answered
at once however many work calls run; work calls (everything else, ``Health/Watch`` included:
a stream nobody needs to probe with) are capped at ``ServerConfig.rpc_limit`` and refused
beyond with ``RESOURCE_EXHAUSTED``, a ``QuotaFailure`` and a ``RetryInfo``.

While the server drains (``draining`` set), every new call but a health check is answered
``UNAVAILABLE`` (which clients retry elsewhere), and ``wait_idle`` tells the shutdown when the
calls in flight are done and no new one came for a moment: gRPC itself is stopped only then,
since calls that reach a stopping gRPC server before a handler are cancelled (``CANCELLED``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from hortus.server.errors import CapacityError, ShuttingDownError, status_for
from hortus.server.observe import rewrap

__all__ = ["PROBE_CALLS", "AdmissionControl", "is_probe"]

PROBE_CALLS = 8
"""Probe calls (health checks, reflection, GetVersion) in flight at once, beside the work
calls; each takes microseconds, so this is only a bound for a misbehaving client."""

QUIET_SECONDS = 0.1
"""A draining server stops gRPC only once no call arrived for this long (within the grace
period): a call that reaches a stopping gRPC server before a handler took it is cancelled."""

_PROBE_PREFIXES = (
    "/grpc.health.v1.Health/Check",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
    "/hortus.v1.Advisor/GetVersion",
)
_HEALTH_CHECK = "/grpc.health.v1.Health/Check"


def is_probe(method: str) -> bool:
    """Whether the call `method` (``/package.Service/Method``) is a probe, never refused for load."""
    return method.startswith(_PROBE_PREFIXES)


class AdmissionControl(grpc.ServerInterceptor):
    """Counts the calls in flight (from their handler's start to its end), refuses work calls
    over `work_limit` and probes over ``PROBE_CALLS`` (``RESOURCE_EXHAUSTED``), and every call
    but a health check while `draining` is set (``UNAVAILABLE``)."""

    def __init__(self, work_limit: int, draining: threading.Event, retry_after_s: float = 0.1) -> None:
        self.work_limit = work_limit
        self.draining = draining
        self.retry_after_s = retry_after_s
        self._changed = threading.Condition(threading.Lock())
        self._work = 0
        self._probes = 0
        self._last_arrival = 0.0  # time.monotonic() of the last call's start

    @property
    def threads(self) -> int:
        """gRPC pool threads that give every admitted call a thread of its own, and one for a
        refusal besides: a probe never waits behind a work call for a thread."""
        return self.work_limit + PROBE_CALLS + 1

    @property
    def in_flight(self) -> int:
        with self._changed:
            return self._work + self._probes

    def wait_idle(self, timeout: float, quiet: float = QUIET_SECONDS) -> bool:
        """Wait until no call is in flight and none arrived for `quiet` seconds (clients told
        UNAVAILABLE have gone elsewhere), at most `timeout` seconds; whether it is so."""
        limit = time.monotonic() + timeout
        with self._changed:
            while True:
                now = time.monotonic()
                busy = self._work + self._probes > 0
                calm_at = self._last_arrival + quiet
                if not busy and now >= calm_at:
                    return True
                if now >= limit:
                    return False
                self._changed.wait(min(limit, calm_at if not busy else limit) - now)

    def admit(self, method: str) -> tuple[bool, BaseException | None]:
        """(probe, refusal): whether the call `method` (``/package.Service/Method``) counts as
        a probe, and why it is refused (None: admitted and counted; ``release(probe)`` when it
        ends). The web front door admits its calls here too: one budget for both ports."""
        probe = is_probe(method)
        with self._changed:
            self._last_arrival = time.monotonic()
        if self.draining.is_set() and method != _HEALTH_CHECK:
            return probe, ShuttingDownError("the server is shutting down: send the call elsewhere")
        with self._changed:
            if probe:
                if self._probes >= PROBE_CALLS:
                    return probe, CapacityError(
                        "probe_calls", f"{PROBE_CALLS} probe calls are in flight; retry later", self.retry_after_s
                    )
                self._probes += 1
            else:
                if self._work >= self.work_limit:
                    return probe, CapacityError(
                        "max_concurrent_rpcs",
                        f"the server has as many calls in progress as it allows (max_concurrent_rpcs="
                        f"{self.work_limit}); retry later",
                        self.retry_after_s,
                    )
                self._work += 1
        return probe, None

    def release(self, probe: bool) -> None:
        """An admitted call (of kind `probe`) ended."""
        with self._changed:
            if probe:
                self._probes -= 1
            else:
                self._work -= 1
            self._changed.notify_all()

    def _unary(self, method: str, behavior: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            probe, refusal = self.admit(method)
            if refusal is not None:
                context.abort_with_status(status_for(refusal, method))
            try:
                return behavior(request, context)
            finally:
                self.release(probe)

        return handle

    def _streaming(self, method: str, behavior: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            probe, refusal = self.admit(method)
            if refusal is not None:
                context.abort_with_status(status_for(refusal, method))
            try:
                yield from behavior(request, context)
            finally:
                self.release(probe)

        return handle

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = str(getattr(handler_call_details, "method", ""))
        return rewrap(handler, lambda b: self._unary(method, b), lambda b: self._streaming(method, b))
