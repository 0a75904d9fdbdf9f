"""ISMCTS iterations per second from the opening, and nanoseconds per simulated decision
(tree work included), with 1 and 2 threads, per game.

    python bench/search.py [--iterations N] [--repeats R] [--game NAME ...]
    python bench/search.py --against REV [--threads 1] ...

--against REV: the same measurement, side by side, of this tree and of git revision REV (e.g.
``--against pre-rebuild``, the tag before the search settings became data, to show the
playout path did not slow down). REV is checked out as a git worktree under
build/bench-against/ and its extensions are built there once; then every repeat runs in a
fresh process, alternating this tree and REV so that a change of the machine's load hits
both alike, and the table gives both rates and their ratio (this / REV).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, report  # noqa: E402

from hortus import games  # noqa: E402
from hortus._ext.engine import random_playouts  # noqa: E402
from hortus.search import Limits, analyze  # noqa: E402


ROOT = Path(__file__).resolve().parent.parent


def _worker(name: str, players: int, threads: int, iterations: int, repeat: int) -> None:
    """One repeat in this process (whichever hortus the path gives): JSON on stdout."""
    import dataclasses

    game = games.get(name)
    opening = game.new_game(players=players, seed=1)
    decisions, _, _ = random_playouts(opening.kernel_state, 200, 7, True)
    # the same search in both trees: playouts to the end, no widening, UCT's 0.7, uniform
    # expansion, mean values, the frozen baseline's playout policy (a game's default may have
    # turned those on or changed since; the playout path is what is compared). A tree whose
    # Limits still held the search settings takes them there; a newer one as SearchSettings.
    limit_fields = {f.name for f in dataclasses.fields(Limits)}
    extra: dict[str, object] = {
        "widening": 0.0,
        "exploration": 0.7,
        "evaluation": "playout",
        "expansion_policy": False,
        "turn_max": False,
        "baseline_playout": True,
        "solve_endgames": False,  # the playout path alone: no tree tries an exact solve here
    }
    budget = Limits(iterations=iterations, seed=repeat, threads=threads)
    if "exploration" in limit_fields:
        kept = {key: value for key, value in extra.items() if key in limit_fields}
        a = analyze(opening, dataclasses.replace(budget, **kept))  # type: ignore[arg-type]
    else:
        from hortus.search.settings import SearchSettings, settings_for

        known = {f.name for f in dataclasses.fields(SearchSettings)}  # a tree takes the ones it has
        a = analyze(opening, budget, settings=settings_for(opening, **{k: v for k, v in extra.items() if k in known}))
    print(json.dumps({"rate": a.iterations / (a.elapsed_ms / 1000.0), "per_game": decisions / 200}))


def _baseline_tree(rev: str) -> Path:
    """REV's worktree with its extensions built (once); returns the folder to put on the path."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    tree = ROOT / "build" / "bench-against" / commit
    if not tree.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True)
    if not (tree / ".built").exists():
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, check=True)
        (tree / ".built").touch()
    return tree / "build" / "cython_include"


def _run_worker(path: Path | None, args: list[str]) -> dict[str, float]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)  # ahead of the editable install's finder
    out = subprocess.run(
        [sys.executable, __file__, "--worker", *args], env=env, check=True, capture_output=True, text=True
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def against(rev: str, names: list[str], threads_list: list[int], iterations: int, repeats: int) -> None:
    path = _baseline_tree(rev)
    rows = []
    for name in names:
        game = games.get(name)
        for players in sorted({game.min_players, max(2, game.min_players), game.max_players}):
            for threads in threads_list:
                this, base = [], []
                for r in range(repeats):
                    args = [name, str(players), str(threads), str(iterations), str(r)]
                    this.append(_run_worker(None, args)["rate"])
                    base.append(_run_worker(path, args)["rate"])
                rows.append(
                    {
                        "game": name,
                        "players": players,
                        "threads": threads,
                        "this_per_s": median(this),
                        f"{rev}_per_s": median(base),
                        "ratio": median(this) / median(base),
                    }
                )
    report(
        f"search: iterations per second from the opening, this tree against {rev} (median of repeats)",
        rows,
        ["game", "players", "threads", "this_per_s", f"{rev}_per_s", "ratio"],
    )


def main() -> None:
    if len(sys.argv) == 7 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=20000, help="per thread and repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--game", action="append", help="default: every registered game")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--against", metavar="REV", help="side by side with git revision REV")
    args = parser.parse_args()
    if args.against:
        against(args.against, args.game or games.names(), args.threads, args.iterations, args.repeats)
        return
    rows = []
    for name in args.game or games.names():
        game = games.get(name)
        for players in sorted({game.min_players, max(2, game.min_players), game.max_players}):
            opening = game.new_game(players=players, seed=1)
            # Decisions per simulated game, to express the speed per simulated decision.
            decisions, _, _ = random_playouts(opening.kernel_state, 200, 7, True)
            per_game = decisions / 200
            for threads in args.threads:
                rates = []
                for r in range(args.repeats):
                    a = analyze(opening, Limits(iterations=args.iterations, seed=r, threads=threads))
                    rates.append(a.iterations / (a.elapsed_ms / 1000.0))
                rate = median(rates)
                rows.append(
                    {
                        "game": name,
                        "players": players,
                        "threads": threads,
                        "iterations_per_s": rate,
                        "ns_per_simulated_decision": 1e9 / (rate * per_game),
                        "decisions_per_iteration": per_game,
                    }
                )
    report(
        "search: ISMCTS from the opening (median of repeats)",
        rows,
        ["game", "players", "threads", "iterations_per_s", "ns_per_simulated_decision"],
    )


if __name__ == "__main__":
    main()
