"""Batch work: ``evaluate`` (a resumable JSONL file of positions) and ``selfplay``, locally,
in shards or on a Ray cluster."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hortus.clients.types import Position

from hortus.cli.common import (
    CliError,
    Progress,
    add_connection,
    add_search_arguments,
    add_sharding,
    advisor,
    non_negative_int,
    positive_int,
)


def _answered_ids(path: Path) -> set[str]:
    """Ids already answered in an output file (hortus.distributed.resumable), saying which
    lines were unreadable or repeated and moved aside."""
    from hortus.distributed.resumable import answered_ids

    resumed = answered_ids(path)
    if resumed.rejected_lines:
        numbers = ", ".join(str(n) for n in resumed.rejected_lines[:10]) + (" ..." if len(resumed.rejected_lines) > 10 else "")
        print(
            f"hortus evaluate: {len(resumed.rejected_lines)} unreadable or repeated line(s) of {path} (line {numbers}) "
            f"moved to {resumed.rejected_path}; their positions are evaluated again",
            file=sys.stderr,
        )
    return resumed.ids


@contextlib.contextmanager
def _exclusive(output: Path, writer: str = "hortus evaluate") -> Iterator[None]:
    """One `writer` at a time on `output` (hortus.distributed.resumable's lock)."""
    from hortus.distributed.resumable import OutputBusy, OutputLockError, exclusive

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(exclusive(output, writer))
        except OutputBusy as exc:
            raise CliError(f"{exc}; wait for it or choose another -o") from None
        except OutputLockError as exc:
            raise CliError(str(exc)) from None
        yield


def _cmd_evaluate(args: argparse.Namespace) -> int:
    if args.shard is not None or args.ray is not None or args.shards:
        return _run_sharded(args, "evaluate")
    try:
        lines = Path(args.positions).read_text().splitlines()
    except OSError as exc:
        raise CliError(f"cannot read {args.positions}: {exc.strerror or exc}") from exc
    output = Path(args.output)
    with _exclusive(output):
        return _evaluate_locked(args, lines, output)


def _evaluate_locked(args: argparse.Namespace, lines: list[str], output: Path) -> int:
    from hortus.clients.types import EvaluationError, EvaluationItem, EvaluationResult
    from hortus.distributed.resumable import appending

    done = _answered_ids(output)
    items: list[EvaluationItem] = []
    local: list[EvaluationResult] = []
    seen: set[str] = set()
    every: set[str] = set()  # every id of the input, bad lines included
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record: Any = None
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            item_id = str(record.get("id", number))
            game = str(record.get("game", args.game or ""))
            if not game:
                raise ValueError('no "game" (or --game)')
            position = Position.from_hex(game, str(record["position"]))
            item = EvaluationItem(
                item_id,
                position,
                iterations=int(record.get("iterations", 0)),
                time_ms=float(record.get("time_ms", 0.0)),
                seed=int(record.get("seed", 0)),
                threads=int(record.get("threads", 0)),
            )
        except (ValueError, KeyError, TypeError) as exc:
            item_id = str(record.get("id", number)) if isinstance(record, dict) else str(number)
            every.add(item_id)
            if item_id not in done:
                local.append(
                    EvaluationResult(item_id, error=EvaluationError("INVALID_ARGUMENT", f"line {number}: {exc}", "line"))
                )
            continue
        if item_id in seen:
            raise CliError(f"{args.positions}:{number}: id {item_id!r} appears twice")
        seen.add(item_id)
        every.add(item_id)
        if item_id not in done:
            items.append(item)
    skipped = len(done & every)
    total = len(every)
    progress = Progress(total, skipped, not args.no_progress)
    errors = 0
    evaluated = 0
    try:
        with appending(output) as out, advisor(args.target, args.timeout) as client:
            for result in local:
                out.write(result.to_dict())
                errors += 1
                progress.update()
            for result in client.evaluate(
                items,
                iterations=args.iterations,
                time_ms=args.time_ms,
                seed=args.search_seed,
                threads=args.threads,
                max_moves=args.max_moves,
                streams=args.streams,
            ):
                out.write(result.to_dict())
                evaluated += 1
                errors += 0 if result.ok else 1
                progress.update()
    except KeyboardInterrupt:
        progress.close()
        finished = progress.done
        print(
            f"hortus evaluate: interrupted: {finished} of {total} done, {total - finished} remaining, "
            f"results in {output} (the same command resumes)",
            file=sys.stderr,
        )
        return 130
    finally:
        progress.close()
    print(
        f"hortus evaluate: {evaluated} evaluated, {errors} errors, {skipped} already in {output} (of {total})",
        file=sys.stderr,
    )
    return 0


# --- sharded jobs (hortus.distributed: --shard K/N, --ray, selfplay) ------------------------
def _run_sharded(args: argparse.Namespace, kind: str) -> int:
    """A sharded job run in-process on the engine (imported lazily): one shard, every shard
    in a local process pool, or every shard on a Ray cluster; results in the folder -o."""
    from hortus.distributed import Job, default_shards, parse_shard, run
    from hortus.distributed.shards import file_sha256, read_items

    folder = Path(args.output)
    only: list[int] | None = None
    input_path: Path | None = None
    if kind == "evaluate":
        input_path = Path(args.positions)
        try:
            count = len(read_items(input_path))
            checksum = file_sha256(input_path)
        except OSError as exc:
            raise CliError(f"cannot read {args.positions}: {exc.strerror or exc}") from exc
    else:
        count = args.games
        checksum = ""
    shards = args.shards or default_shards(count)
    if args.shard is not None:
        try:
            k, n = parse_shard(args.shard)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        if args.shards and args.shards != n:
            raise CliError(f"--shard {args.shard} and --shards {args.shards} disagree")
        shards, only = n, [k]
    job = Job(
        kind=kind,
        shards=shards,
        seed=args.search_seed if kind == "evaluate" else args.seed,
        iterations=(args.iterations or 2000) if kind == "evaluate" else 0,
        max_moves=args.max_moves,
        game=args.game or "",
        level=getattr(args, "level", 0),
        players=getattr(args, "players", 0),
        games=count if kind == "selfplay" else 0,
        input_sha256=checksum,
    )
    total = len(only) if only is not None else shards
    progress = Progress(total, 0, not args.no_progress)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with _exclusive(folder / "run", f"hortus {kind}"):  # run.lock: one driver per folder
            summary = run(
                job,
                folder,
                input_path,
                only=only,
                workers=args.workers,
                use_ray=args.ray is not None,
                ray_address=args.ray or None,
                on_shard=lambda _: progress.update(),
            )
    except KeyboardInterrupt:
        progress.close()
        print(
            f"hortus {kind}: interrupted: {progress.done} of {total} shards done, results in {folder} (the same command resumes)",
            file=sys.stderr,
        )
        return 130
    except (ValueError, RuntimeError) as exc:
        progress.close()
        raise CliError(str(exc)) from exc
    progress.close()
    merged = folder / "merged.jsonl"
    tail = f", merged into {merged}" if merged.exists() and only is None else ""
    print(
        f"hortus {kind}: {summary.shards_done} shards computed, {summary.shards_skipped} already done "
        f"(of {total}), {summary.records} records, {summary.errors} errors, {summary.seconds:.1f} s{tail}",
        file=sys.stderr,
    )
    return 0


def _cmd_selfplay(args: argparse.Namespace) -> int:
    if not args.game:
        raise CliError("--game is required")
    return _run_sharded(args, "selfplay")


# --- arena -----------------------------------------------------------------------------------


def add_parsers(sub: Any) -> None:
    """Register evaluate and selfplay."""
    p = sub.add_parser("evaluate", help="evaluate a JSONL file of positions (resumable)")
    p.add_argument(
        "positions", help='JSONL: {"id", "game", "position" (hex), optional "iterations", "time_ms", "seed", "threads"}'
    )
    p.add_argument("-o", "--output", required=True, help="JSONL results; ids already there are skipped")
    p.add_argument("--game", default=None, help="game of lines that give none")
    add_search_arguments(p)
    p.add_argument("--search-seed", type=non_negative_int, default=0, help="seed of lines that give none")
    p.add_argument("--max-moves", type=non_negative_int, default=0, help="moves per analysis (0 = all)")
    p.add_argument("--streams", type=positive_int, default=2, help="concurrent streams (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_sharding(p)
    add_connection(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("selfplay", help="self-play games at a level, every decision with its search statistics")
    p.add_argument("--game", required=True, help="game name")
    p.add_argument("--level", type=positive_int, default=4, help="difficulty level of every seat (default 4)")
    p.add_argument("--games", type=positive_int, default=10, help="number of games (default 10)")
    p.add_argument("--players", type=non_negative_int, default=0, help="number of seats (0 = the game's minimum)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="base seed (each game's seed derives from it)")
    p.add_argument("-o", "--output", required=True, help="output folder (shards, manifests, merged.jsonl)")
    p.add_argument("--max-moves", type=non_negative_int, default=0, help="moves per analysis kept (0 = all)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_sharding(p)
    p.set_defaults(func=_cmd_selfplay)
