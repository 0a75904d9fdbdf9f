"""Server configuration: search defaults, per-request caps and capacity."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field


def _cpu_count() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ServerConfig:
    """What one server process allows. Every cap is checked per request; a request over a cap
    is answered ``INVALID_ARGUMENT`` with a field violation naming the cap.

    default_iterations: ISMCTS iterations per thread when a request gives neither iterations
        nor a time budget (``SearchLimits.iterations == 0`` and ``time_ms == 0``).
    max_iterations: cap of ``SearchLimits.iterations`` (per thread); also the iteration budget
        of a request that gives only a time budget (the time then governs).
    max_time_ms: cap of ``SearchLimits.time_ms`` in milliseconds; every search stops after at
        most this long, whatever it asked for.
    max_threads: cap of ``SearchLimits.threads`` (root-parallel trees of one search).
    max_concurrent_searches: searches running at once in this process; one more is answered
        ``RESOURCE_EXHAUSTED`` at once rather than queued.
    max_message_bytes: largest request or response message, in bytes (gRPC channel options).
    max_actions_per_request: cap of ``ApplyActionsRequest.actions``.
    max_nodes: tree arena bound per search thread (memory), see ``hortus.search.Limits``.
    deadline_margin_ms: a search stops this many milliseconds before the call's deadline, so
        that its answer (flagged partial) still arrives in time.
    workers: threads of the gRPC server pool (searches run in them, without the GIL); must
        exceed ``max_concurrent_searches`` so that cheap calls are served during searches.
    grace_seconds: on shutdown, in-flight calls get this long to finish before cancellation.
    """

    default_iterations: int = 2000
    max_iterations: int = 5_000_000
    max_time_ms: float = 60_000.0
    max_threads: int = field(default_factory=_cpu_count)
    max_concurrent_searches: int = field(default_factory=_cpu_count)
    max_message_bytes: int = 4 * 1024 * 1024
    max_actions_per_request: int = 1000
    max_nodes: int = 1_000_000
    deadline_margin_ms: float = 50.0
    workers: int = 0
    grace_seconds: float = 5.0

    def __post_init__(self) -> None:
        positive_ints = {
            "default_iterations": self.default_iterations,
            "max_iterations": self.max_iterations,
            "max_threads": self.max_threads,
            "max_concurrent_searches": self.max_concurrent_searches,
            "max_message_bytes": self.max_message_bytes,
            "max_actions_per_request": self.max_actions_per_request,
            "max_nodes": self.max_nodes,
        }
        for name, value in positive_ints.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ServerConfig.{name} must be a positive integer, not {value!r}")
        if self.default_iterations > self.max_iterations:
            raise ValueError("ServerConfig.default_iterations must not exceed max_iterations")
        if self.max_threads > 256:
            raise ValueError("ServerConfig.max_threads must be at most 256")
        for name, number in (
            ("max_time_ms", self.max_time_ms),
            ("deadline_margin_ms", self.deadline_margin_ms),
            ("grace_seconds", self.grace_seconds),
        ):
            if not math.isfinite(number) or number < 0:
                raise ValueError(f"ServerConfig.{name} must be a finite number >= 0, not {number!r}")
        if self.max_time_ms <= 0:
            raise ValueError("ServerConfig.max_time_ms must be > 0")
        if self.workers < 0:
            raise ValueError("ServerConfig.workers must be >= 0 (0 = automatic)")
        if self.workers and self.workers <= self.max_concurrent_searches:
            raise ValueError("ServerConfig.workers must exceed max_concurrent_searches")

    @property
    def pool_size(self) -> int:
        """Threads of the gRPC server pool: ``workers``, or searches + 8 when 0."""
        return self.workers or self.max_concurrent_searches + 8

    def grpc_options(self) -> list[tuple[str, int]]:
        """Channel arguments of the server: message size limits, and no SO_REUSEPORT (gRPC's
        default on Linux), so that a second server on a busy port fails instead of silently
        sharing it."""
        return [
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.max_send_message_length", self.max_message_bytes),
            ("grpc.so_reuseport", 0),
        ]
