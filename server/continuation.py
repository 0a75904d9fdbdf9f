"""Kept analyses (``Analyze.continue_from``): the search trees of finished
``Analyze`` calls, kept for a while so that the caller can continue one, and the tokens that
name them. ``SuggestMove.continue_from`` keeps its trees here too: the subtree of the
suggested move, for the same seat's next decision.

A token is issued when an ``Analyze`` call starts and sent in each of its updates
(``AnalyzeResponse.continuation``); when the call ends (final answer or cancelled) its trees
are kept under that token. A later ``Analyze`` with ``continue_from`` = the token takes them
(a token continues once: the continuing call's updates carry a new token). The token stands in
for "the same connection": it is unguessable (128 random bits), so only a caller that received
the analysis can continue it; it is known only to the server process that issued it (the tree
lives there), whose instance id it starts with: in a ``--workers N`` group the id names the
worker (``w<index>-``), and another worker routes the call to it (``hortus.server.routing``);
a process that restarted, or another server, says the tree is not here.

Bounded: at most ``max_trees`` trees and ``max_bytes`` of them (the least recently kept are
dropped first), each dropped after ``idle_s`` seconds unused: by a timer (a thread started when
the first tree is kept, waking every quarter of ``idle_s``, at most ``SWEEP_MAX_S``), so an
idle server gives their memory back without waiting for its next call. Game-agnostic: the trees come
from ``hortus.search.SearchTrees``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from hortus.search import SearchTrees

__all__ = ["KeptAnalyses", "TokenError", "MAX_TOKEN_BYTES"]

SWEEP_MAX_S = 30.0
"""The longest the timer sleeps between sweeps of the expired trees."""

MAX_TOKEN_BYTES = 64
"""A longer ``continue_from`` is INVALID_ARGUMENT (a token the server issued is ~32 bytes)."""


class TokenError(Exception):
    """``continue_from`` names no kept analysis (``reason``: ``"unknown"``, ``"other_process"``,
    ``"in_use"``), or one kept for another method (``"other_kind"``: the token stays kept);
    the message says why and what to do."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass
class _Kept:
    trees: SearchTrees | None  # None while the call that owns the token is still running
    bytes: int
    used: float  # clock time of the last use
    kind: str = "Analyze"  # the method that continues it (Analyze, SuggestMove)


class KeptAnalyses:
    """The kept trees of one server process (thread-safe)."""

    def __init__(
        self,
        max_trees: int,
        max_bytes: int,
        idle_s: float,
        clock: Callable[[], float] = time.monotonic,
        prefix: str = "",
    ) -> None:
        self.max_trees = max_trees
        self.max_bytes = max_bytes
        self.idle_s = idle_s
        self._clock = clock
        self._instance = prefix + secrets.token_hex(4)  # prefix: the worker's (hortus.server.routing)
        self._entries: OrderedDict[str, _Kept] = OrderedDict()
        self._changed = threading.Condition(threading.Lock())
        self.bytes = 0
        """Memory of the kept trees now (``SearchTrees.memory_bytes``)."""
        self.dropped = 0
        """Trees dropped for room or idleness (not counting those continued)."""
        self._closed = threading.Event()
        self._sweeper: threading.Thread | None = None

    def _start_sweeper(self) -> None:
        """The timer that drops idle trees (lock held; once)."""
        if self._sweeper is not None or self._closed.is_set():
            return
        interval = min(max(self.idle_s / 4.0, 0.05), SWEEP_MAX_S)

        def sweep() -> None:
            while not self._closed.wait(interval):
                self.sweep()

        self._sweeper = threading.Thread(target=sweep, name="hortus-kept-sweeper", daemon=True)
        self._sweeper.start()

    def close(self) -> None:
        """Stop the timer (the server stopped)."""
        self._closed.set()

    @property
    def enabled(self) -> bool:
        return self.max_trees > 0 and self.max_bytes > 0

    def issue(self) -> str:
        """A new token for a starting call: reserved (``take`` waits for it) until ``keep``
        stores the call's trees or ``release`` gives the token up."""
        token = f"{self._instance}.{secrets.token_urlsafe(16)}"
        with self._changed:
            self._expire()
            self._entries[token] = _Kept(None, 0, self._clock())
        return token

    def keep(self, token: str, trees: SearchTrees, kind: str = "Analyze") -> None:
        """Keep the trees of the call that was issued `token` (it ended), to be continued by
        a call of `kind` (the method: an Analyze token continues an analysis, a SuggestMove
        token the AI's turn)."""
        size = trees.memory_bytes
        with self._changed:
            self._entries.pop(token, None)
            if size <= self.max_bytes:
                self._entries[token] = _Kept(trees, size, self._clock(), kind)
                self.bytes += size
                self._trim()
                self._start_sweeper()
            else:
                self.dropped += 1
            self._changed.notify_all()

    def release(self, token: str) -> None:
        """Give up a token whose call kept nothing (it failed)."""
        with self._changed:
            self._entries.pop(token, None)
            self._changed.notify_all()

    def take(self, token: str, wait_s: float, kind: str = "Analyze") -> SearchTrees:
        """The trees kept under `token`, now the caller's (the token is used up); waits up to
        `wait_s` for the call that holds the token to end (a caller that left a stream early
        and continues at once). TokenError when there is nothing to take, or (``other_kind``,
        the token stays kept) when they were kept for a method other than `kind`."""
        instance = token.partition(".")[0]
        deadline = self._clock() + wait_s
        with self._changed:
            self._expire()
            while True:
                entry = self._entries.get(token)
                if entry is None:
                    if instance != self._instance:
                        raise TokenError(
                            "other_process",
                            "the analysis it continues was kept by another server, or by a server process "
                            "that has restarted since: start afresh without continue_from",
                        )
                    raise TokenError(
                        "unknown",
                        f"no kept analysis has this token: it expired ({self.idle_s:g} s unused), was "
                        "dropped for room, or was continued already; start afresh without continue_from",
                    )
                if entry.trees is not None:
                    if entry.kind != kind:
                        raise TokenError(
                            "other_kind",
                            f"the token continues a {entry.kind} call, not {kind}: pass it to {entry.kind}",
                        )
                    del self._entries[token]
                    self.bytes -= entry.bytes
                    return entry.trees
                left = deadline - self._clock()
                if left <= 0:
                    raise TokenError("in_use", "the analysis it continues is still running: continue from it after it ends")
                self._changed.wait(left)

    def put_back(self, token: str, trees: SearchTrees, kind: str = "Analyze") -> None:
        """Return trees taken by a call that was then refused (the token stays usable)."""
        self.keep(token, trees, kind)

    def store(self, trees: SearchTrees, kind: str) -> str:
        """Keep finished trees under a new token (for a call of `kind`), returned; "" when
        this store keeps nothing."""
        if not self.enabled:
            return ""
        token = self.issue()
        self.keep(token, trees, kind)
        return token

    def _expire(self) -> None:
        """Drop kept trees unused for ``idle_s`` (called with the lock held)."""
        now = self._clock()
        for token in [t for t, e in self._entries.items() if e.trees is not None and now - e.used > self.idle_s]:
            self.bytes -= self._entries.pop(token).bytes
            self.dropped += 1

    def _trim(self) -> None:
        """Drop the least recently kept trees while over a bound (lock held)."""
        self._expire()
        while self.bytes > self.max_bytes or self._kept() > self.max_trees:
            token = next((t for t, e in self._entries.items() if e.trees is not None), None)
            if token is None:
                break
            self.bytes -= self._entries.pop(token).bytes
            self.dropped += 1

    def _kept(self) -> int:
        return sum(1 for e in self._entries.values() if e.trees is not None)

    def __len__(self) -> int:
        """Trees kept now."""
        with self._changed:
            return self._kept()

    def sweep(self) -> None:
        """Drop the expired trees now (they are otherwise dropped at the next use)."""
        with self._changed:
            self._expire()
