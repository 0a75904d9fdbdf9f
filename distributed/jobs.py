"""The two sharded jobs: evaluating a file of positions, and self-play games.

Each shard function runs in-process on the compiled engine (the search releases the GIL; one
thread per position, so one task per core), is a pure function of (job, shard, input) and
publishes its shard atomically (see ``shards``). The same function runs under ``--shard K/N``
on one machine, in a local process pool, or as a Ray task on a cluster.
"""

from __future__ import annotations

import random
from typing import Any

from hortus import games
from hortus.games import InvalidPositionError, UnknownGameError
from hortus.search import Limits, analyze
from hortus.search.analysis import Analysis
from hortus.search.levels import choose, get_level, level_limits

from hortus.distributed.shards import Item, Job, item_seed, shard_of

MAX_ITERATIONS = 1_000_000
"""Per-line iteration budgets above this are an error record (a typo should not run for days)."""


def _error(item_id: str, code: str, message: str, field_name: str) -> dict[str, Any]:
    return {"id": item_id, "error": {"code": code, "message": message, "field": field_name}}


def _analysis_record(state: games.State, analysis: Analysis, max_moves: int) -> dict[str, Any]:
    """An analysis as plain data, without wall-clock figures, so that the same position and
    seed give the same bytes on any machine."""
    moves = analysis.moves[:max_moves] if max_moves else analysis.moves
    return {
        "seat": analysis.seat,
        "iterations": analysis.iterations,
        "best": {"id": analysis.best.action, "notation": analysis.best.notation},
        "moves": [
            {
                "id": m.action,
                "notation": m.notation,
                "visits": m.visits,
                "win_probability": round(m.win_probability, 9),
                "expected_scores": [round(v, 9) for v in m.expected_scores],
                "principal_variation": list(m.principal_variation_notation),
            }
            for m in moves
        ],
    }


def evaluate_item(item: Item, job: Job) -> dict[str, Any]:
    """One input line's answer: its analysis, or an error record (code, message, field)."""
    if item.error is not None:
        return {"id": item.id, "error": item.error}
    record = item.record
    try:
        game = games.get(str(record.get("game", "")))
    except UnknownGameError as exc:
        return _error(item.id, "INVALID_ARGUMENT", str(exc), "game")
    try:
        data = bytes.fromhex(str(record["position"]))
    except KeyError:
        return _error(item.id, "INVALID_ARGUMENT", f'line {item.line}: no "position"', "position")
    except ValueError as exc:
        return _error(item.id, "INVALID_ARGUMENT", f"line {item.line}: position is not hex ({exc})", "position")
    try:
        state = game.decode(data)
    except InvalidPositionError as exc:
        return _error(item.id, "INVALID_ARGUMENT", f"line {item.line}: {exc}", "position")
    if state.is_terminal() or state.is_chance():
        what = "the game is over" if state.is_terminal() else "a chance node: apply its outcome first"
        return _error(item.id, "INVALID_ARGUMENT", f"line {item.line}: {what}", "position")
    try:
        iterations = int(record.get("iterations", job.iterations))
        seed = int(record["seed"]) if "seed" in record else item_seed(job.seed, item.id)
    except (TypeError, ValueError) as exc:
        return _error(item.id, "INVALID_ARGUMENT", f"line {item.line}: {exc}", "iterations")
    if not 1 <= iterations <= MAX_ITERATIONS:
        return _error(item.id, "INVALID_ARGUMENT", f"line {item.line}: iterations must be in 1..{MAX_ITERATIONS}", "iterations")
    analysis = analyze(state, Limits(iterations=iterations, seed=seed & 0xFFFFFFFFFFFFFFFF, threads=1), detail=job.max_moves)
    return {"id": item.id, "game": game.name, **_analysis_record(state, analysis, job.max_moves)}


def compute_evaluate_shard(job: Job, items: list[Item]) -> list[dict[str, Any]]:
    """The answers of one shard's input lines (pure: the same items give the same records)."""
    return [evaluate_item(i, job) for i in items]


def compute_shard(job: Job, shard: int, items: list[Item]) -> list[dict[str, Any]]:
    """The records of one shard: its input lines' answers, or its self-play games' decisions.
    A pure function of its arguments, so a re-run task returns the same records."""
    if job.kind == "selfplay":
        return compute_selfplay_shard(job, shard)
    return compute_evaluate_shard(job, items)


def shard_error_records(job: Job, shard: int, items: list[Item], message: str) -> list[dict[str, Any]]:
    """Error records for every id of a shard whose task kept crashing its worker."""
    if job.kind == "selfplay":
        ids = [game_id(g) for g in range(job.games) if shard_of(game_id(g), job.shards) == shard]
    else:
        ids = [i.id for i in items]
    return [_error(i, "INTERNAL", message, "shard") for i in ids]


# --- self-play -----------------------------------------------------------------------------
def game_id(number: int) -> str:
    return f"game{number:06d}"


def play_selfplay_game(job: Job, number: int) -> list[dict[str, Any]]:
    """One seeded game at ``job.level`` for every seat: a record per decision with the
    position, the search's statistics there and the move played, and the final result."""
    game = games.get(job.game)
    spec = get_level(job.level)
    seed = item_seed(job.seed, game_id(number))
    rng = random.Random(seed)
    state = game.new_game(players=job.players or game.min_players, seed=seed)
    rows: list[dict[str, Any]] = []
    ply = 0
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        position = state.encode().hex()
        analysis = analyze(state, level_limits(job.level, seed=rng.getrandbits(63)))
        move = choose(analysis, spec.temperature, rng)
        rows.append(
            {
                "id": f"{game_id(number)}/{ply:04d}",
                "game": game.name,
                "position": position,
                "played": {"id": move.action, "notation": move.notation},
                **_analysis_record(state, analysis, job.max_moves),
            }
        )
        state.apply(move.action)
        ply += 1
    scores, returns = state.scores(), state.returns()
    for row in rows:
        row["final_scores"] = scores
        row["final_returns"] = returns
    return rows


def compute_selfplay_shard(job: Job, shard: int) -> list[dict[str, Any]]:
    """The decisions of the games of one shard (pure: seeded by the job and the game number)."""
    rows: list[dict[str, Any]] = []
    for number in range(job.games):
        if shard_of(game_id(number), job.shards) == shard:
            rows.extend(play_selfplay_game(job, number))
    return rows
