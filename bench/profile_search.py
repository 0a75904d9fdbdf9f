"""One seeded search from a game's opening, for a profiler to watch (perf record, callgrind).

    python bench/profile_search.py GAME [--players N] [--iterations 10000] [--seed 0]
        [--evaluation playout|default] [--baseline-playout]

The search is the one ``analyze`` runs with the game's settings for the seat count (playouts
to the end by default, as in docs/performance.md). Under callgrind, collect the search alone:

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*Search_17run' \\
        python bench/profile_search.py war_of_the_posies --players 4 --iterations 2000

Prints one JSON line: iterations, decisions simulated per iteration (``Search.decisions_done``
where the extension counts them), CPU seconds of the search and CPU ns per decision.
"""

from __future__ import annotations

import argparse
import json
import time

from hortus import games
from hortus.search import Limits
from hortus.search.settings import settings_for
from hortus.search.analysis import _search_options, _searches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--evaluation", default="playout", choices=["playout", "default"])
    parser.add_argument("--baseline-playout", action="store_true")
    parser.add_argument("--position-seed", type=int, default=1)
    args = parser.parse_args()
    state = games.get(args.game).new_game(players=args.players, seed=args.position_seed)
    while state.is_chance():
        state.resolve_chance(__import__("random").Random(0))
    limits = Limits(iterations=args.iterations, seed=args.seed)
    settings = settings_for(state, evaluation=args.evaluation, baseline_playout=args.baseline_playout)
    searches, eval_plies = _searches(state, limits, settings)
    options = _search_options(settings)
    search = searches[0]
    started = time.process_time()
    search.run(iterations=args.iterations, seed=args.seed, eval_plies=eval_plies, **options)
    cpu = time.process_time() - started
    decisions = int(getattr(search, "decisions_done", 0))
    print(
        json.dumps(
            {
                "game": args.game,
                "players": args.players,
                "iterations": args.iterations,
                "decisions_per_iteration": decisions / args.iterations if decisions else None,
                "cpu_s": cpu,
                "ns_per_decision": cpu * 1e9 / decisions if decisions else None,
                "root_visits": int(search.root_visits()),
                "nodes": int(search.node_count),
            }
        )
    )


if __name__ == "__main__":
    main()
