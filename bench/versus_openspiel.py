"""hortus ISMCTS next to OpenSpiel's, in one run on one machine (needs 'hortus[openspiel]').

    python bench/versus_openspiel.py [--game NAME ...] [--strength [--no-speed] [--games 100] [--ms 100] [--jobs 2]]
    python bench/versus_openspiel.py --per-decision [--game NAME ...] [--iterations 10000] [--repeats 5]

Speed: nanoseconds per simulated decision (a simulation's decisions from the root to the
end, tree work included) of
  * hortus ISMCTS on each hortus game (one thread),
  * OpenSpiel's Python ISMCTS on the same hortus game through the adapter,
  * OpenSpiel's C++ ISMCTS on hearts and euchre (its own games: a C++ reference point).
Per decision (--per-decision): CPU time per simulated decision, both engines counted the same
way: a simulation's decisions are every decision (forced ones included, chance events not)
from the search's root to the end of the game. hortus counts them in the search itself
(``Search.decisions_done``: the game's default search with full playouts, one thread, from the
opening of each seat count after its chance events); OpenSpiel's C++ ISMCTS plays its rollouts
uniformly at random, so its count is the mean over uniform random games from its root (hearts
and euchre after the deal). Repeats alternate the engines, so a change of the machine's load
hits both alike; medians of the repeats; ratio = hortus / the mean of the two C++ games.
Strength (--strength): hortus ISMCTS vs OpenSpiel's ISMCTSBot on each hortus game at equal
wall time per decision (OpenSpiel's simulation budget re-fitted after each of its decisions to
take that time), seeded games, seats alternated, win rate with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import report  # noqa: E402

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from hortus import games  # noqa: E402
from hortus._ext.engine import random_playouts  # noqa: E402
from hortus.games import openspiel  # noqa: E402
from hortus.search import Limits, analyze  # noqa: E402


def opening(name: str, players: int, seed: int = 1) -> games.State:
    return games.get(name).new_game(players=players, seed=seed)


def hortus_ns_per_decision(state: games.State, iterations: int, repeats: int) -> tuple[float, float]:
    decisions, _, _ = random_playouts(state.kernel_state, 300, 3, True)
    per_sim = decisions / 300
    rates = []
    for r in range(repeats):
        a = analyze(state, Limits(iterations=iterations, seed=r))
        rates.append(a.iterations / (a.elapsed_ms / 1000))
    rate = statistics.median(rates)
    return 1e9 / (rate * per_sim), rate


def spiel_decisions_per_sim(state: pyspiel.State, sims: int = 100) -> float:
    rng = random.Random(0)
    total = 0
    for _ in range(sims):
        s = state.clone()
        while not s.is_terminal():
            if s.is_chance_node():
                actions, probs = zip(*s.chance_outcomes())
                s.apply_action(rng.choices(actions, probs)[0])
            else:
                s.apply_action(rng.choice(s.legal_actions()))
                total += 1
    return total / sims


def python_ismcts_bot(game: pyspiel.Game, sims: int, seed: int) -> ismcts.ISMCTSBot:
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    return ismcts.ISMCTSBot(game, evaluator, 2.0, sims, random_state=np.random.RandomState(seed))


def timed_step(bot: pyspiel.Bot, state: pyspiel.State) -> float:
    started = time.perf_counter()
    bot.step(state)
    return time.perf_counter() - started


def cpp_reference(name: str, sims: int) -> dict[str, object]:
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node() or len(state.legal_actions()) == 1:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            state.apply_action(state.legal_actions()[0])
    per_sim = spiel_decisions_per_sim(state, 200)
    seconds = []
    for r in range(3):
        bot = pyspiel.ISMCTSBot(
            r, pyspiel.RandomRolloutEvaluator(1, r), 2.0, sims, -1, pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False
        )
        seconds.append(timed_step(bot, state))
    t = statistics.median(seconds)
    return {
        "engine": "OpenSpiel C++ ISMCTS",
        "game": name,
        "ns_per_decision": t / sims / per_sim * 1e9,
        "simulations_per_s": sims / t,
        "decisions_per_simulation": per_sim,
    }


def cpp_cpu_ns(name: str, sims: int, seed: int) -> tuple[float, float]:
    """OpenSpiel C++ ISMCTS on its own game: (CPU ns per simulated decision, decisions per
    simulation), one bot step of `sims` simulations from the first real decision."""
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node() or len(state.legal_actions()) == 1:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            state.apply_action(state.legal_actions()[0])
    per_sim = spiel_decisions_per_sim(state, 400)
    bot = pyspiel.ISMCTSBot(
        seed, pyspiel.RandomRolloutEvaluator(1, seed), 2.0, sims, -1, pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False
    )
    started = time.process_time()
    bot.step(state)
    cpu = time.process_time() - started
    return cpu * 1e9 / (sims * per_sim), per_sim


def hortus_cpu_ns(name: str, players: int, iterations: int, seed: int) -> tuple[float, float]:
    """hortus: (CPU ns per simulated decision, decisions per iteration) of one seeded search with
    the game's settings and full playouts of the kernel's playout policy, decisions counted by
    the search."""
    from hortus.search.analysis import _search_options, _searches
    from hortus.search.settings import settings_for

    state = games.get(name).new_game(players=players, seed=1)
    rng = random.Random(0)
    while state.is_chance():
        state.resolve_chance(rng)
    # The kernel's own policy even where a game's settings play out with the baseline's
    # (Botanists at 2 seats, before its model's cut): the row measures the kernel's playout path.
    settings = settings_for(state, evaluation="playout", baseline_playout=False)
    searches, eval_plies = _searches(state, Limits(iterations=iterations, seed=seed), settings)
    search = searches[0]
    started = time.process_time()
    search.run(iterations=iterations, seed=seed, eval_plies=eval_plies, **_search_options(settings))
    cpu = time.process_time() - started
    decisions = int(search.decisions_done)
    return cpu * 1e9 / decisions, decisions / iterations


def per_decision(names: list[str], iterations: int, repeats: int) -> list[dict[str, object]]:
    cpp_sims = {"hearts": 2000, "euchre": 4000}
    seats = [(name, p) for name in names for p in (2, 4) if games.get(name).min_players <= p <= games.get(name).max_players]
    cpp: dict[str, list[float]] = {g: [] for g in cpp_sims}
    cpp_count: dict[str, float] = {}
    ours: dict[tuple[str, int], list[float]] = {k: [] for k in seats}
    our_count: dict[tuple[str, int], float] = {}
    for r in range(repeats):
        for g, sims in cpp_sims.items():  # interleaved: every repeat measures every engine once
            ns, cpp_count[g] = cpp_cpu_ns(g, sims, r)
            cpp[g].append(ns)
        for key in seats:
            ns, our_count[key] = hortus_cpu_ns(key[0], key[1], iterations, r + 1)
            ours[key].append(ns)
    reference = statistics.mean(statistics.median(v) for v in cpp.values())
    rows: list[dict[str, object]] = [
        {
            "engine": "OpenSpiel C++ ISMCTS",
            "game": g,
            "players": 4,
            "decisions_per_simulation": cpp_count[g],
            "cpu_ns_per_decision": statistics.median(v),
        }
        for g, v in cpp.items()
    ]
    for (name, players), v in ours.items():
        rows.append(
            {
                "engine": "hortus ISMCTS",
                "game": name,
                "players": players,
                "decisions_per_simulation": our_count[(name, players)],
                "cpu_ns_per_decision": statistics.median(v),
                "vs_cpp": statistics.median(v) / reference,
            }
        )
    return rows


def speed(names: list[str]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    cpp = [cpp_reference("hearts", 2000), cpp_reference("euchre", 4000)]
    cpp_ns = statistics.mean(float(r["ns_per_decision"]) for r in cpp)  # type: ignore[arg-type]
    for name in names:
        game = games.get(name)
        players = max(2, game.min_players)
        state = opening(name, players)
        ns, rate = hortus_ns_per_decision(state, 10000, 3)
        spiel_game = pyspiel.load_game(openspiel.PREFIX + name, {"players": players})
        spiel_state = openspiel.HortusSpielState(spiel_game, state.clone())
        per_sim = spiel_decisions_per_sim(spiel_state, 50)
        sims = 30
        py_t = statistics.median(timed_step(python_ismcts_bot(spiel_game, sims, r), spiel_state) for r in range(2))
        py_ns = py_t / sims / per_sim * 1e9
        rows.append(
            {
                "engine": "hortus ISMCTS",
                "game": name,
                "ns_per_decision": ns,
                "simulations_per_s": rate,
                "vs_cpp": ns / cpp_ns,
                "python_over_hortus": py_ns / ns,
            }
        )
        rows.append(
            {
                "engine": "OpenSpiel Python ISMCTS (adapter)",
                "game": name,
                "ns_per_decision": py_ns,
                "simulations_per_s": sims / py_t,
            }
        )
    return cpp + rows


class TimedSpielBot:
    """OpenSpiel's Python ISMCTSBot held to a wall-time budget per decision.

    The bot only takes a simulation budget, so the budget is re-fitted after every decision from
    its measured simulations per second: its time per decision tracks ``ms`` even when the
    machine's load changes during a long run (a single calibration at the start would not)."""

    def __init__(self, game: pyspiel.Game, ms: float, seed: int) -> None:
        self.game, self.ms, self.seed = game, ms, seed
        self.sims_per_s = 200.0
        self.decisions = 0
        self.seconds = 0.0
        self.simulations = 0

    def step(self, state: pyspiel.State) -> int:
        sims = max(2, int(self.sims_per_s * self.ms / 1000))
        bot = python_ismcts_bot(self.game, sims, self.seed * 100003 + self.decisions)
        started = time.perf_counter()
        action = int(bot.step(state))
        elapsed = time.perf_counter() - started
        self.sims_per_s = 0.7 * self.sims_per_s + 0.3 * (sims / max(elapsed, 1e-6))
        self.decisions += 1
        self.seconds += elapsed
        self.simulations += sims
        return action


def play_versus(name: str, players: int, g: int, ms: float, seed: int) -> dict[str, float]:
    """One seeded game: hortus ISMCTS in seat ``g % players``, OpenSpiel's bot in the others."""
    openspiel.register_all()
    game = games.get(name)
    spiel_game = pyspiel.load_game(openspiel.PREFIX + name, {"players": players})
    hortus_seat = g % players
    state = game.new_game(players=players, seed=seed + g)
    rng = random.Random(seed * 7919 + g)
    bot = TimedSpielBot(spiel_game, ms, seed + g)
    hortus_seconds, hortus_iterations, hortus_decisions, decision = 0.0, 0, 0, 0
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        if len(state.legal_actions()) == 1:
            state.apply(state.legal_actions()[0])
        elif state.current_player == hortus_seat:
            a = analyze(state, Limits(iterations=None, time_ms=ms, seed=seed + g * 1000 + decision))
            hortus_seconds += a.elapsed_ms / 1000
            hortus_iterations += a.iterations
            hortus_decisions += 1
            state.apply(a.best.action)
        else:
            state.apply(bot.step(openspiel.HortusSpielState(spiel_game, state.clone())))
        decision += 1
    return {
        "win_share": float(state.returns()[hortus_seat]),
        "hortus_ms": 1000 * hortus_seconds / max(1, hortus_decisions),
        "hortus_iterations": hortus_iterations / max(1, hortus_decisions),
        "openspiel_ms": 1000 * bot.seconds / max(1, bot.decisions),
        "openspiel_simulations": bot.simulations / max(1, bot.decisions),
    }


def strength(names: list[str], n_games: int, ms: float, seed: int, jobs: int) -> list[dict[str, object]]:
    from concurrent.futures import ProcessPoolExecutor

    from hortus.search.arena import wilson_interval

    rows: list[dict[str, object]] = []
    for name in names:
        game = games.get(name)
        players = 2 if game.min_players <= 2 <= game.max_players else game.min_players
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(
                pool.map(play_versus, [name] * n_games, [players] * n_games, range(n_games), [ms] * n_games, [seed] * n_games)
            )
        wins = sum(r["win_share"] for r in results)
        low, high = wilson_interval(wins, n_games)
        rows.append(
            {
                "game": name,
                "games": n_games,
                "ms_per_decision": ms,
                "hortus_win_rate": wins / n_games,
                "ci95_low": low,
                "ci95_high": high,
                "hortus_ms": statistics.mean(r["hortus_ms"] for r in results),
                "openspiel_ms": statistics.mean(r["openspiel_ms"] for r in results),
                "hortus_iterations": statistics.mean(r["hortus_iterations"] for r in results),
                "openspiel_simulations": statistics.mean(r["openspiel_simulations"] for r in results),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", action="append")
    parser.add_argument("--strength", action="store_true")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--ms", type=float, default=100.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="strength games in this many processes (each process alternates the two bots, so both see the same load)",
    )
    parser.add_argument("--no-speed", action="store_true", help="skip the speed table")
    parser.add_argument(
        "--per-decision", action="store_true", help="CPU time per decision, counted alike for both engines (no other table)"
    )
    parser.add_argument("--iterations", type=int, default=10000, help="--per-decision: hortus iterations per search")
    parser.add_argument("--repeats", type=int, default=5, help="--per-decision: interleaved repeats")
    args = parser.parse_args()
    openspiel.register_all()
    names = args.game or games.names()
    if args.per_decision:
        load = os.getloadavg()[0]
        rows = per_decision(names, args.iterations, args.repeats)
        report(
            "versus OpenSpiel: CPU ns per simulated decision, decisions counted alike (one thread; "
            f"1-minute load {load:.1f} before, {os.getloadavg()[0]:.1f} after)",
            rows,
            ["engine", "game", "players", "decisions_per_simulation", "cpu_ns_per_decision", "vs_cpp"],
        )
        return
    if not args.no_speed:
        report(
            "versus OpenSpiel: ns per simulated decision (one thread)",
            speed(names),
            ["engine", "game", "ns_per_decision", "simulations_per_s", "vs_cpp", "python_over_hortus"],
        )
    if args.strength:
        report(
            "versus OpenSpiel: hortus ISMCTS vs OpenSpiel ISMCTSBot at equal time",
            strength(names, args.games, args.ms, args.seed, args.jobs),
            [
                "game",
                "games",
                "ms_per_decision",
                "hortus_win_rate",
                "ci95_low",
                "ci95_high",
                "hortus_ms",
                "openspiel_ms",
                "hortus_iterations",
                "openspiel_simulations",
            ],
        )


if __name__ == "__main__":
    main()
