"""Sharded batch jobs that give every id exactly one answer, on one machine or many.

A job (evaluate a JSONL file of positions, or play self-play games) is cut into N shards by a
deterministic hash of each id. A shard's output is a pure function of the input, the job's
parameters and the shard's index: every position has its own seed, derived from the job's
seed and its id, so the answer does not depend on which worker, node or order computes it.

Why that gives exactly-once output on top of at-least-once execution (Ray, like any task
engine, re-runs a task whose worker or node died):

1. every id belongs to exactly one shard (``shard_of``);
2. a shard is written to a temporary file, flushed to disk, then published with one atomic
   ``os.replace``; its manifest (count and checksum of the published file) is published the
   same way afterwards, and only a shard whose manifest matches its file counts as done;
3. a re-run of a shard, partial or complete, recomputes the same bytes and replaces them
   atomically, and a re-run after completion finds the manifest and does nothing;
4. the merged file is built from the published shards only.

So a shard is either absent or complete, never torn or doubled, and each id appears once in
the merged output whatever failed and was retried on the way.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "hortus.shards/1"


@dataclass(frozen=True)
class Job:
    """What a sharded run computes; stored as ``job.json`` in the output folder so that a
    re-run with other parameters is refused instead of mixing two jobs' answers."""

    kind: str
    """``evaluate`` or ``selfplay``."""
    shards: int
    """N: ids are split into this many shards."""
    seed: int = 0
    """Base seed: each position's seed derives from it and the id (``item_seed``)."""
    iterations: int = 2000
    """Search iterations per position (evaluate) or per decision (selfplay, via ``level``)."""
    max_moves: int = 0
    """Moves per analysis in the output (0 = all)."""
    game: str = ""
    """Default game of input lines without one (evaluate); the game played (selfplay)."""
    level: int = 0
    """Selfplay: the difficulty level playing every seat."""
    players: int = 0
    """Selfplay: seats (0 = the game's minimum)."""
    games: int = 0
    """Selfplay: number of games."""
    input_sha256: str = ""
    """Evaluate: the checksum of the input file (a changed input is a different job)."""

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, **asdict(self)}, sort_keys=True, indent=1) + "\n"


@dataclass
class ShardResult:
    """What running one shard did."""

    shard: int
    count: int
    errors: int
    skipped: bool = False
    """True when the shard was already complete (a re-run or a retried task)."""


@dataclass
class Item:
    """One line of the input: its id and record, or the error that makes it unusable."""

    id: str
    line: int
    record: dict[str, Any] = field(default_factory=dict)
    error: dict[str, str] | None = None


def shard_of(item_id: str, shards: int) -> int:
    """The shard of an id: CRC-32 of its UTF-8 bytes modulo N (the same on every machine)."""
    return zlib.crc32(item_id.encode()) % shards


def item_seed(base_seed: int, item_id: str) -> int:
    """A position's own seed (63 bits) from the job's seed and its id, so its answer does not
    depend on where or in which order it is computed."""
    digest = hashlib.sha256(f"{base_seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFFFFFFFFFFFFFF


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` (0-based K) as (K, N); ValueError with the reason otherwise."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ValueError(f"--shard expects K/N (e.g. 0/4), not {text!r}") from None
    if not (n >= 1 and 0 <= k < n):
        raise ValueError(f"--shard {text}: K must be in 0..N-1 and N >= 1")
    return k, n


def read_items(path: Path, default_game: str = "") -> list[Item]:
    """Every non-empty input line as an Item; a malformed line is an Item with an error
    (code, message, field), never an exception: it becomes that id's answer. An id given
    twice is an error for its second line (under ``<id>#line<N>``), so ids stay unique."""
    items: list[Item] = []
    seen: set[str] = set()
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            record: Any = None
            try:
                record = json.loads(raw)
            except ValueError as exc:
                items.append(
                    Item(f"line{number}", number, error=_error("INVALID_ARGUMENT", f"line {number}: not JSON ({exc})", "line"))
                )
                continue
            if not isinstance(record, dict):
                items.append(
                    Item(f"line{number}", number, error=_error("INVALID_ARGUMENT", f"line {number}: not a JSON object", "line"))
                )
                continue
            item_id = str(record.get("id", f"line{number}"))
            if item_id in seen:
                items.append(
                    Item(
                        f"{item_id}#line{number}",
                        number,
                        error=_error("INVALID_ARGUMENT", f"line {number}: id {item_id!r} appears twice", "id"),
                    )
                )
                continue
            seen.add(item_id)
            if default_game and "game" not in record:
                record["game"] = default_game
            items.append(Item(item_id, number, record=record))
    return items


def _error(code: str, message: str, field_name: str) -> dict[str, str]:
    return {"code": code, "message": message, "field": field_name}


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Output:
    """The output folder of a job: ``job.json``, ``shard-KKKKK-of-NNNNN.jsonl`` with a
    ``.manifest.json`` each, and ``merged.jsonl``."""

    def __init__(self, folder: Path, job: Job) -> None:
        self.folder = folder
        self.job = job

    def prepare(self) -> None:
        """Create the folder and record the job; refuse a folder holding another job."""
        self.folder.mkdir(parents=True, exist_ok=True)
        stored = self.folder / "job.json"
        if stored.exists():
            if stored.read_text() != self.job.to_json():
                raise ValueError(
                    f"{self.folder} holds a different job (see its job.json): use another output folder, "
                    "or the same parameters and input to resume"
                )
            return
        publish(stored, self.job.to_json().encode())

    def shard_path(self, shard: int) -> Path:
        return self.folder / f"shard-{shard:05d}-of-{self.job.shards:05d}.jsonl"

    def manifest_path(self, shard: int) -> Path:
        return self.folder / f"shard-{shard:05d}-of-{self.job.shards:05d}.manifest.json"

    def is_done(self, shard: int) -> bool:
        """The shard is published and its manifest matches its bytes."""
        data, manifest = self.shard_path(shard), self.manifest_path(shard)
        if not (data.exists() and manifest.exists()):
            return False
        try:
            recorded = json.loads(manifest.read_text())
        except ValueError:
            return False
        return bool(recorded.get("sha256") == file_sha256(data) and recorded.get("job") == self.job.to_json())

    def publish_shard(self, shard: int, records: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
        """Write the shard's records (sorted by id) and then its manifest, each atomically;
        returns (records, errors)."""
        rows = sorted(records, key=lambda r: str(r["id"]))
        data = b"".join(json.dumps(r, sort_keys=True, separators=(",", ":")).encode() + b"\n" for r in rows)
        publish(self.shard_path(shard), data)
        errors = sum(1 for r in rows if "error" in r)
        manifest = {
            "shard": shard,
            "shards": self.job.shards,
            "count": len(rows),
            "errors": errors,
            "sha256": hashlib.sha256(data).hexdigest(),
            "job": self.job.to_json(),
        }
        publish(self.manifest_path(shard), (json.dumps(manifest, sort_keys=True) + "\n").encode())
        return len(rows), errors

    def merge(self) -> Path:
        """``merged.jsonl``: every published shard's records, sorted by id (atomic)."""
        missing = [k for k in range(self.job.shards) if not self.is_done(k)]
        if missing:
            raise ValueError(f"shards not done yet: {missing[:10]}{' ...' if len(missing) > 10 else ''}")
        lines: list[tuple[str, bytes]] = []
        for k in range(self.job.shards):
            for line in self.shard_path(k).read_bytes().splitlines(keepends=True):
                lines.append((str(json.loads(line)["id"]), line))
        lines.sort(key=lambda pair: pair[0])
        merged = self.folder / "merged.jsonl"
        publish(merged, b"".join(line for _, line in lines))
        return merged


def publish(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically: a temporary file in the same folder, flushed to
    disk, then renamed over `path` (readers see the old file or the new one, never a part)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


ShardFunction = Callable[[Job, int, Path], ShardResult]
