"""Server configuration: search defaults, per-request caps and capacity."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from hortus.search.analysis import MAX_NODES


RECEIVE_SLACK_BYTES = 64 * 1024
"""gRPC's receive limit exceeds ``max_message_bytes`` by this much (see ``receive_limit``)."""


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
    max_concurrent_searches: searches running at once in this process (one more for a client
        that holds none); one more waits briefly in a fair queue, then is answered
        ``RESOURCE_EXHAUSTED`` (``hortus.server.slots``). Batch positions wait for a slot and
        may take every one; while they hold slots, one more unary or ``Analyze`` search is
        admitted, so hints are served during a long batch (see ``SearchSlots``).
    max_message_bytes: largest request or response message, in bytes. A request over it is
        ``INVALID_ARGUMENT`` naming this cap (checked by the servicer); gRPC's own receive
        limit is a little larger (``receive_limit``), so only a message over that one is
        refused by gRPC itself (``RESOURCE_EXHAUSTED``) before it is read.
    max_actions_per_request: cap of ``ApplyActionsRequest.actions``.
    max_nodes: tree arena bound per search thread (memory; at most ``hortus.search.analysis.
        MAX_NODES``), see ``hortus.search.Limits``; an answer says when it filled up
        (``Analysis.tree_full``).
    deadline_margin_ms: a search stops this many milliseconds (or 15% of the time left, if more)
        before the call's deadline, so that its answer (flagged partial) still arrives in time.
    workers: threads of the gRPC server pool (searches run in them, without the GIL); must
        exceed ``max_concurrent_searches`` so that cheap calls are served during searches.
        The pool grows beyond, to a thread per call admitted (``max_concurrent_rpcs``).
    grace_seconds: on shutdown, in-flight calls get this long to finish before cancellation.
    max_batch_size: positions per ``EvaluatePositions`` call; the next one ends the call
        ``INVALID_ARGUMENT`` naming this cap (every accepted position is answered first).
    batch_window: positions of one ``EvaluatePositions`` call accepted but not yet sent back
        (0 = 2 x max_concurrent_searches): the server stops reading a stream whose answers the
        client does not read, so its buffering stays bounded.
    min_interval_ms: smallest ``AnalyzeRequest.interval_ms`` (other than 0).
    retry_after_ms: the delay suggested in the ``google.rpc.RetryInfo`` of a
        ``RESOURCE_EXHAUSTED`` answer.
    max_concurrent_rpcs: work calls in progress (0 = 4 x the pool size); one more is refused
        ``RESOURCE_EXHAUSTED`` with a ``RetryInfo``, so nothing queues without bound
        (streaming calls hold a pool thread for their whole life). Probes (health checks,
        reflection, ``GetVersion``) are not counted and never refused for load; the pool has
        a thread for every call admitted (see ``hortus.server.admission``).
    access_log: log every call (method, code, milliseconds, peer) to ``hortus.access``.
    reuse_port: share the port with other processes (``SO_REUSEPORT``); only the worker group
        of ``hortus serve --workers N`` sets it, so a second accidental server fails to bind.
    draw_worlds: hints (``RankMoves``, ``Analyze``) measure how much their top moves depend on
        the draw over this many sampled worlds (``MoveAnalysis.draw_share``); 0 = off.
    continue_trees, continue_bytes, continue_idle_s: the search trees of finished ``Analyze``
        calls kept for ``continue_from`` (``hortus.server.continuation``): at most this many, this
        many bytes of them, each dropped after this many seconds unused; 0 trees = off.
    seal_key_file: the sealing key file (``hortus.server.sealing``; "" = no key): with it the
        server hands out positions sealed for one seat (``NewGameRequest.seal_for_seat``) and
        opens them (``Position.sealed``); every process reading the same file opens the others'.
    require_sealed: refuse encoded positions (``Position.encoded``): only sealed ones, or a
        seat's view (which holds nothing that seat may not know); needs ``seal_key_file``.
    worker_routes, worker_index: set by ``hortus serve --workers N`` only: the group's private
        folder of unix sockets and this worker's index in it, so that a ``continue_from`` that
        reaches another worker is routed to the one keeping its tree (``hortus.server.routing``);
        "" = a single process.
    cache_bytes: memory of the answer cache (``hortus.server.cache``): a ``SuggestMove`` or
        ``RankMoves`` request identical to an earlier one with an iteration budget (no time
        budget) is answered from it, as the search is deterministic; 0 = off.
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
    max_batch_size: int = 100_000
    batch_window: int = 0
    min_interval_ms: float = 10.0
    retry_after_ms: float = 100.0
    max_concurrent_rpcs: int = 0
    access_log: bool = False
    reuse_port: bool = False
    cache_bytes: int = 64 * 1024 * 1024
    continue_trees: int = 32
    continue_bytes: int = 256 * 1024 * 1024
    continue_idle_s: float = 300.0
    draw_worlds: int = 32
    seal_key_file: str = ""
    require_sealed: bool = False
    worker_routes: str = ""
    worker_index: int = 0

    def __post_init__(self) -> None:
        positive_ints = {
            "default_iterations": self.default_iterations,
            "max_iterations": self.max_iterations,
            "max_threads": self.max_threads,
            "max_concurrent_searches": self.max_concurrent_searches,
            "max_message_bytes": self.max_message_bytes,
            "max_actions_per_request": self.max_actions_per_request,
            "max_nodes": self.max_nodes,
            "max_batch_size": self.max_batch_size,
        }
        for name, value in positive_ints.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ServerConfig.{name} must be a positive integer, not {value!r}")
        if self.max_nodes > MAX_NODES:
            raise ValueError(
                f"ServerConfig.max_nodes must be at most {MAX_NODES} (what the tree arena can index), not {self.max_nodes}"
            )
        if self.default_iterations > self.max_iterations:
            raise ValueError("ServerConfig.default_iterations must not exceed max_iterations")
        if self.max_threads > 256:
            raise ValueError("ServerConfig.max_threads must be at most 256")
        for name, number in (
            ("max_time_ms", self.max_time_ms),
            ("deadline_margin_ms", self.deadline_margin_ms),
            ("grace_seconds", self.grace_seconds),
            ("min_interval_ms", self.min_interval_ms),
            ("retry_after_ms", self.retry_after_ms),
        ):
            if not math.isfinite(number) or number < 0:
                raise ValueError(f"ServerConfig.{name} must be a finite number >= 0, not {number!r}")
        if self.max_time_ms <= 0:
            raise ValueError("ServerConfig.max_time_ms must be > 0")
        if (
            isinstance(self.max_concurrent_rpcs, bool)
            or not isinstance(self.max_concurrent_rpcs, int)
            or self.max_concurrent_rpcs < 0
        ):
            raise ValueError(f"ServerConfig.max_concurrent_rpcs must be an integer >= 0, not {self.max_concurrent_rpcs!r}")
        if isinstance(self.batch_window, bool) or not isinstance(self.batch_window, int) or self.batch_window < 0:
            raise ValueError(f"ServerConfig.batch_window must be an integer >= 0, not {self.batch_window!r}")
        if self.workers < 0:
            raise ValueError("ServerConfig.workers must be >= 0 (0 = automatic)")
        for name, count in (("continue_trees", self.continue_trees), ("continue_bytes", self.continue_bytes)):
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"ServerConfig.{name} must be an integer >= 0 (0 = off), not {count!r}")
        if not math.isfinite(self.continue_idle_s) or self.continue_idle_s <= 0:
            raise ValueError(f"ServerConfig.continue_idle_s must be a finite number > 0, not {self.continue_idle_s!r}")
        if isinstance(self.cache_bytes, bool) or not isinstance(self.cache_bytes, int) or self.cache_bytes < 0:
            raise ValueError(f"ServerConfig.cache_bytes must be an integer >= 0 (0 = off), not {self.cache_bytes!r}")
        if (
            isinstance(self.draw_worlds, bool)
            or not isinstance(self.draw_worlds, int)
            or not (self.draw_worlds == 0 or 2 <= self.draw_worlds <= 4096)
        ):
            raise ValueError(f"ServerConfig.draw_worlds must be 0 (off) or in 2..4096, not {self.draw_worlds!r}")
        if self.require_sealed and not self.seal_key_file:
            raise ValueError("ServerConfig.require_sealed needs seal_key_file (a sealing key)")
        if self.workers and self.workers <= self.max_concurrent_searches:
            raise ValueError("ServerConfig.workers must exceed max_concurrent_searches")

    @property
    def pool_size(self) -> int:
        """Threads of the gRPC server pool: ``workers``, or searches + 32 when 0 (streaming calls
        hold a thread for their whole life, and a call waiting for a thread can miss its
        deadline before it starts: with + 8, 64 busy clients saw waits of ~1 s)."""
        return self.workers or self.max_concurrent_searches + 32

    @property
    def receive_limit(self) -> int:
        """gRPC's receive limit: ``max_message_bytes`` plus 64 KiB of slack, so that a request a
        little over the cap reaches the servicer and is refused naming the cap."""
        return self.max_message_bytes + RECEIVE_SLACK_BYTES

    @property
    def rpc_limit(self) -> int:
        """Calls admitted at once (see ``max_concurrent_rpcs``)."""
        return self.max_concurrent_rpcs or 4 * self.pool_size

    @property
    def window(self) -> int:
        """Positions in flight per ``EvaluatePositions`` call (see ``batch_window``)."""
        return self.batch_window or 2 * self.max_concurrent_searches

    def grpc_options(self) -> list[tuple[str, int]]:
        """Channel arguments of the server: message size limits (receive: ``receive_limit``;
        send: ``max_message_bytes``), and no SO_REUSEPORT (gRPC's
        default on Linux) unless ``reuse_port``, so that a second server on a busy port fails
        instead of silently sharing it."""
        return [
            ("grpc.max_receive_message_length", self.receive_limit),
            ("grpc.max_send_message_length", self.max_message_bytes),
            ("grpc.so_reuseport", 1 if self.reuse_port else 0),
        ]
