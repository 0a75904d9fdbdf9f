"""Cached answers: a bounded, in-memory LRU of serialized responses.

A search with an iteration budget is deterministic (same position, budget, seed, threads,
constraints and options on the same engine and server configuration give the same answer), so
an identical request can be answered from memory. The key is a digest of the method, the
engine version and the request's deterministic serialization (plus what the service adds:
see ``AdvisorServicer._cache_key``); the value the response's bytes, so a hit hands out a fresh
message and nobody can change a stored answer. The cache belongs to one servicer (one process:
with ``--workers N`` each worker has its own), whose configuration is fixed for its life.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

__all__ = ["AnswerCache"]

# Memory counted per entry besides the bytes of its key and value: the two bytes objects'
# headers (33 bytes each on CPython) and the OrderedDict's hash-table slot and linked-list node
# (~100 bytes), rounded up, so that ``bytes`` bounds what the cache really holds.
ENTRY_OVERHEAD = 200


class AnswerCache:
    """At most ``max_bytes`` of answers (keys, values and ``ENTRY_OVERHEAD`` each); 0 = off.
    The least recently used answers are dropped to stay within it. Thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError(f"the answer cache's size must be an integer >= 0 bytes, not {max_bytes!r}")
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Lookups answered from the cache."""
        self.misses = 0
        """Lookups of cacheable requests that found nothing (the search ran)."""
        self.bytes = 0
        """Memory held now (see ``size``), never above ``max_bytes``."""

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    @staticmethod
    def key(*parts: bytes | str) -> bytes:
        """The SHA-256 digest of `parts`, each length-prefixed (no two lists of parts collide
        by moving a boundary)."""
        digest = hashlib.sha256()
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return digest.digest()

    @staticmethod
    def size(key: bytes, value: bytes) -> int:
        """The memory an entry is counted for."""
        return len(key) + len(value) + ENTRY_OVERHEAD

    def get(self, key: bytes) -> bytes | None:
        """The answer stored under `key` (now the most recently used), or None (a miss)."""
        if not self.enabled:
            return None
        with self._lock:
            value = self._entries.get(key)
            if value is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: bytes, value: bytes) -> None:
        """Store an answer as the most recently used, dropping the least recently used ones
        while over ``max_bytes``; one larger than the whole cache is not stored."""
        size = self.size(key, value)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= self.size(key, old)
            self._entries[key] = value
            self.bytes += size
            while self.bytes > self.max_bytes:
                dropped, dropped_value = self._entries.popitem(last=False)
                self.bytes -= self.size(dropped, dropped_value)

    def __len__(self) -> int:
        return len(self._entries)
