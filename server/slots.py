"""The search slots of one process, shared fairly between clients.

``capacity`` searches run at once (one per core). Batch positions wait for a slot and may hold
every one of them, so that a batch keeps all cores busy; while they hold slots, one more
interactive search than the capacity is admitted, so a hint asked during a long batch is
served at once (on a core shared with the batch).

Interactive searches (unary calls, ``Analyze``) are shared between *clients* (a client
identity: ``hortus.server.cache_scope.client_identity``), so that one client cannot starve the
others by holding every slot with huge searches:

* **One extra slot for a client that holds none.** When every slot is taken, a search of a
  client that holds no slot is admitted beyond the capacity (one such search at a time): two
  20-second ``RankMoves`` of one client fill both slots of a 2-core worker, and another
  client's hint still runs at once, on a core shared with them.
* **A short fair queue.** A search that finds no slot waits (at most ``QUEUE_WAIT_S``, and
  never more than a quarter of its call's remaining time, not at all under
  ``QUEUE_MIN_DEADLINE_S`` left; the caller's search budget is shortened
  by the wait, so the answer still comes before the deadline) instead of being refused at
  once. When a slot frees, the waiting search of the client holding the fewest slots goes
  first (the earliest among equals): a client's burst queues behind its own searches, not in
  front of another client's. A search still waiting at its limit is refused
  ``RESOURCE_EXHAUSTED`` with a ``RetryInfo``, as before.

Nothing else queues: batch positions, bounded by the calls' windows, wait as before.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

__all__ = ["QUEUE_DEADLINE_SHARE", "QUEUE_MIN_DEADLINE_S", "QUEUE_WAIT_S", "SearchSlots"]

QUEUE_WAIT_S = 2.0
"""The longest an interactive search waits for a slot."""
QUEUE_MIN_DEADLINE_S = 2.0
"""A search whose call has less time left than this does not wait: refused at once."""
QUEUE_DEADLINE_SHARE = 0.25
"""... and at most this share of its call's time left: a search that waited half of a short
deadline on a loaded machine answered after it (a quarter keeps the answers in time)."""

_POLL_S = 0.05  # a waiting search re-checks this often whether its call ended


class SearchSlots:
    """The search slots of one process (thread-safe); see the module."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._changed = threading.Condition(threading.Lock())
        self._interactive = 0
        self._batch = 0
        self._held: Counter[str] = Counter()  # interactive slots per client
        self._waiting: list[tuple[str, object]] = []  # (client, ticket), in arrival order

    # --- interactive searches --------------------------------------------------------
    def _grantable(self, who: str) -> bool:
        """Whether a search of client `who` may take a slot now (lock held)."""
        total = self._interactive + self._batch
        limit = self.capacity + (1 if self._batch else 0)
        if total < limit:
            return True
        # Every slot taken: one search more for a client holding none, while others hold them.
        return self._held[who] == 0 and total < limit + 1

    def _turn(self) -> object | None:
        """The ticket of the waiting search that goes next, if any may go (lock held): of the
        client holding the fewest slots, the earliest among equals."""
        best: tuple[int, int, object] | None = None
        for index, (who, ticket) in enumerate(self._waiting):
            if self._grantable(who):
                rank = (self._held[who], index, ticket)
                if best is None or rank[:2] < best[:2]:
                    best = rank
        return None if best is None else best[2]

    def acquire(self, who: str = "", timeout: float = 0.0, stop: Callable[[], bool] | None = None) -> float | None:
        """Take a slot for an interactive search of client `who`, waiting at most `timeout`
        seconds in the fair queue (or until `stop()` says its call ended): the seconds it
        waited (0.0: a slot was free at once), None when it got none."""
        ticket = object()
        started = time.monotonic()
        limit = started + max(0.0, timeout)
        waited = False
        with self._changed:
            self._waiting.append((who, ticket))
            try:
                while True:
                    if self._turn() is ticket:
                        self._interactive += 1
                        self._held[who] += 1
                        return time.monotonic() - started if waited else 0.0
                    left = limit - time.monotonic()
                    if left <= 0 or (stop is not None and stop()):
                        return None
                    waited = True
                    self._changed.wait(min(left, _POLL_S))
            finally:
                self._waiting.remove((who, ticket))
                self._changed.notify_all()  # the next in line may go now

    def try_interactive(self, who: str = "") -> bool:
        """Take a slot for an interactive search if there is room now (no waiting)."""
        return self.acquire(who, 0.0) is not None

    def held_by(self, who: str) -> int:
        """Interactive slots client `who` holds now."""
        with self._changed:
            return self._held[who]

    # --- batch positions -------------------------------------------------------------
    def acquire_batch(self, timeout: float) -> bool:
        """Take a slot for a batch position, waiting at most `timeout` seconds for one; never
        ahead of a waiting interactive search."""
        with self._changed:
            if not self._changed.wait_for(
                lambda: self._interactive + self._batch < self.capacity and self._turn() is None, timeout
            ):
                return False
            self._batch += 1
            return True

    def release(self, batch: bool, who: str = "") -> None:
        with self._changed:
            if batch:
                assert self._batch > 0, "released a batch slot that was not held"
                self._batch -= 1
            else:
                assert self._interactive > 0 and self._held[who] > 0, "released an interactive slot that was not held"
                self._interactive -= 1
                self._held[who] -= 1
                if not self._held[who]:
                    del self._held[who]
            self._changed.notify_all()
