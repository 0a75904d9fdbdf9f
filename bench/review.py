"""Game review throughput: a 60-decision Botanik game reviewed through gRPC (target:
<= 15 s at 2,000 iterations per decision on one core).

    python bench/review.py [--decisions 60] [--iterations 2000] [--repeats 3] [--cores 1 2]

The record: a seeded self-play Botanik game (``--level``, default 5 = 512 iterations a move, for
both seats, seed 7), cut after its 60th decision. For each ``--cores N`` the process is pinned to N CPUs (``sched_setaffinity``)
and an in-process server runs with ``max_concurrent_searches=N``, so the review's decisions run
N at a time; one search thread each. Figures: median wall time of ``--repeats`` reviews (from
the request to the summary), per decision, the comparison searches run (played move not the
best), and the load average of the machine before and after (it is shared).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, report  # noqa: E402

from hortus import games  # noqa: E402
from hortus.clients import AdvisorClient, GameRecord, RecordedAction, ReviewedMove, ReviewSummary  # noqa: E402
from hortus.search.levels import LevelBot  # noqa: E402
from hortus.server import ServerConfig, create_server  # noqa: E402


def self_play_record(decisions: int, seed: int = 7, level: int = 5) -> GameRecord:
    """A seeded level-`level` Botanik self-play game, cut after `decisions` decisions."""
    game = games.get("botanik")
    state = game.new_game(players=2, seed=seed)
    rng = random.Random(seed)
    bot = LevelBot(level, seed=seed)
    moves: list[RecordedAction] = []
    made = 0
    while not state.is_terminal() and made < decisions:
        if state.is_chance():
            outcomes = state.chance_outcomes()
            action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
            seat = -1
        else:
            seat = state.current_player
            action = bot.choose(state)
            made += 1
        moves.append(RecordedAction(action, state.action_to_string(action), seat))
        state.apply(action)
    if made < decisions:
        raise SystemExit(f"the game ended after {made} decisions: pick another seed")
    return GameRecord("botanik", 2, seed=seed, moves=tuple(moves))


def run(record: GameRecord, decisions: int, cores: int, iterations: int, repeats: int, level: int) -> dict[str, Any]:
    available = sorted(os.sched_getaffinity(0))
    if cores > len(available):
        raise SystemExit(f"--cores {cores}: only {len(available)} CPUs available")
    before = os.getloadavg()[0]
    os.sched_setaffinity(0, set(available[:cores]))
    server, port = create_server("127.0.0.1:0", ServerConfig(max_concurrent_searches=cores, max_threads=1))
    times: list[float] = []
    compared = 0
    labels: dict[str, int] = {}
    try:
        with AdvisorClient(f"127.0.0.1:{port}", timeout=None) as client:
            for _ in range(repeats):
                started = time.perf_counter()
                answers = list(client.review(record, iterations=iterations, seed=1))
                times.append(time.perf_counter() - started)
                moves = [a for a in answers if isinstance(a, ReviewedMove)]
                assert isinstance(answers[-1], ReviewSummary) and len(moves) == decisions
                compared = sum(m.iterations > iterations for m in moves)
                labels = {}
                for m in moves:
                    labels[m.label] = labels.get(m.label, 0) + 1
    finally:
        server.stop(0)
        os.sched_setaffinity(0, set(available))
    wall = median(times)
    return {
        "cores": cores,
        "decisions": decisions,
        "iterations": iterations,
        "median_s": wall,
        "min_s": min(times),
        "ms_per_decision": 1000.0 * wall / decisions,
        "level": level,
        "comparisons": compared,
        "labels": " ".join(f"{k}={v}" for k, v in sorted(labels.items())),
        "load_before": before,
        "load_after": os.getloadavg()[0],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=60)
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--level", type=int, default=5, help="difficulty level of the self-play game (default 5)")
    args = parser.parse_args()
    record = self_play_record(args.decisions, level=args.level)
    rows = [run(record, args.decisions, cores, args.iterations, args.repeats, args.level) for cores in args.cores]
    report(
        "game review: 60-decision Botanik game through gRPC",
        rows,
        [
            "cores",
            "decisions",
            "level",
            "iterations",
            "median_s",
            "min_s",
            "ms_per_decision",
            "comparisons",
            "labels",
            "load_before",
            "load_after",
        ],
    )
