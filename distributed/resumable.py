"""A resumable JSONL output: one record per line, appended as each answer arrives, and
read back on the next run so that ids already answered are not computed again.

Used by ``hortus evaluate`` for an unsharded run (its results come in completion order, so
they are appended, not published as a whole like a shard, see ``shards``); its lock also
guards the output folder of a sharded run, so that one driver at a time writes there.

A run can die mid-line. Reading the file back keeps every complete record and moves the rest
(a torn last line, a line damaged in the middle, a repeated id) to ``<output>.rejected``,
rewriting the output atomically with the good lines only: no good result is lost and none is
computed twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any


class OutputLockError(RuntimeError):
    """The output's lock file cannot be made."""


class OutputBusy(OutputLockError):
    """The output is being written by another process."""


@dataclass
class Resumed:
    """What reading an output back found."""

    ids: set[str] = field(default_factory=set)
    """Ids answered by a complete record."""
    rejected_lines: list[int] = field(default_factory=list)
    """1-based numbers of the lines moved to ``rejected_path``."""
    rejected_path: Path | None = None


def rejected_path(output: Path) -> Path:
    return output.with_name(output.name + ".rejected")


def answered_ids(output: Path) -> Resumed:
    """The ids already answered in `output` (absent: none), after moving every line that is
    not a complete JSON record with a new id to ``<output>.rejected``."""
    if not output.exists():
        return Resumed()
    resumed = Resumed()
    kept: list[bytes] = []
    rejected: list[bytes] = []
    for number, line in enumerate(output.read_bytes().splitlines(keepends=True), 1):
        if not line.strip():
            continue
        try:
            if not line.endswith(b"\n"):
                raise ValueError("torn line")
            item_id = str(json.loads(line)["id"])
            if item_id in resumed.ids:
                raise ValueError("repeated id")
        except (ValueError, KeyError, TypeError):
            resumed.rejected_lines.append(number)
            rejected.append(line if line.endswith(b"\n") else line + b"\n")
            continue
        resumed.ids.add(item_id)
        kept.append(line)
    if rejected:
        side = rejected_path(output)
        with side.open("ab") as f:
            f.writelines(rejected)
        temporary = output.with_name(output.name + ".tmp")
        temporary.write_bytes(b"".join(kept))
        os.replace(temporary, output)
        resumed.rejected_path = side
    return resumed


class Appender:
    """Appends one record a line (``json.dumps`` as is), flushed at once so that an
    interrupted run leaves at most one torn line."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle

    def write(self, record: Mapping[str, Any]) -> None:
        self._handle.write(json.dumps(record) + "\n")
        self._handle.flush()


@contextlib.contextmanager
def appending(output: Path) -> Iterator[Appender]:
    """An Appender on `output` (created when absent), closed on exit."""
    with output.open("a") as handle:
        yield Appender(handle)


@contextlib.contextmanager
def exclusive(output: Path, writer: str) -> Iterator[None]:
    """Hold an exclusive lock on `output` (a ``.lock`` file beside it, holding the owner's
    pid) for the whole run: a second `writer` on the same output fails at once with
    OutputBusy instead of writing the same ids twice."""
    lock_path = output.with_name(output.name + ".lock")
    try:
        handle = lock_path.open("a+")
    except OSError as exc:
        raise OutputLockError(f"cannot create {lock_path}: {exc.strerror or exc}") from exc
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise OutputBusy(f"{output} is being written by another {writer} ({holder})") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
