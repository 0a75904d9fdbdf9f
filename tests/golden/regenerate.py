"""Write the golden files of seeded analyses, arenas and batch evaluation.

    python tests/golden/regenerate.py            # rewrite tests/golden/*.json
    python tests/golden/regenerate.py --check    # compare, exit 1 on a difference

Only this command writes them: a change of the search's choices is a decision, made by
running it and committing the new files with the reason. The golden test
(``tests/search/test_golden.py``) recomputes every record and compares it byte for byte.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from hortus import games
from hortus.search.analysis import Limits, analyze
from hortus.search.arena import play_match

FOLDER = Path(__file__).resolve().parent
POSITIONS_PER_SEATING = 20
ITERATIONS = 200
ARENA_GAMES = 2
ARENA_BOTS = ("mcts:60", "mcts-base:60")


def _position(name: str, players: int, index: int) -> games.State:
    """A seeded decision position: uniformly random moves into a seeded game."""
    seed = 1000 * players + index
    rng = random.Random(seed)
    state = games.get(name).new_game(players=players, seed=seed)
    for _ in range(3 + 3 * index):
        if state.is_chance():
            state.resolve_chance(rng)
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    while state.is_chance():
        state.resolve_chance(rng)
    return state


def analyses(name: str) -> list[dict[str, Any]]:
    game = games.get(name)
    records = []
    for players in range(game.min_players, game.max_players + 1):
        for index in range(POSITIONS_PER_SEATING):
            state = _position(name, players, index)
            if state.is_terminal():
                continue
            analysis = analyze(state, Limits(iterations=ITERATIONS, seed=index + 1, threads=1))
            records.append(
                {
                    "players": players,
                    "position": state.encode().hex(),
                    "seat": analysis.seat,
                    "iterations": analysis.iterations,
                    "nodes": analysis.nodes,
                    "moves": [
                        {
                            "action": m.action,
                            "notation": m.notation,
                            "visits": m.visits,
                            "win_probability": m.win_probability,
                            "expected_scores": list(m.expected_scores),
                            "principal_variation": list(m.principal_variation),
                            "value_spread": m.value_spread,
                            "reason": m.reason,
                        }
                        for m in analysis.moves
                    ],
                }
            )
    return records


def arena(name: str) -> dict[str, Any]:
    result = play_match(name, ARENA_BOTS, ARENA_GAMES, seed=3)
    return result.to_dict()


def evaluate_input() -> str:
    """The fixed input of ``hortus evaluate``: two positions of every game, one bad line."""
    lines = []
    for name in games.names():
        for index in (2, 5):
            state = _position(name, 2, index)
            lines.append(json.dumps({"id": f"{name}-{index}", "game": name, "position": state.encode().hex(), "seed": index}))
    lines.append(json.dumps({"id": "bad", "game": "botanik", "position": "00ff"}))
    return "\n".join(lines) + "\n"


def evaluate_output(input_text: str) -> str:
    """What ``hortus evaluate`` writes for `input_text` (an embedded server, one stream)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out.jsonl"
        input_path = Path(folder) / "in.jsonl"
        input_path.write_text(input_text)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "hortus.cli",
                "evaluate",
                str(input_path),
                "-o",
                str(output),
                "--iterations",
                "100",
                "--threads",
                "1",
                "--streams",
                "1",
                "--no-progress",
            ],
            check=True,
            capture_output=True,
        )
        records = [json.loads(line) for line in output.read_text().splitlines()]
    for record in records:
        record.pop("elapsed_ms", None)
        record.get("analysis", {}).pop("elapsed_ms", None)
    records.sort(key=lambda r: str(r.get("id")))
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)


def documents() -> dict[str, str]:
    out = {"evaluate_input.jsonl": evaluate_input()}
    out["evaluate_output.jsonl"] = evaluate_output(out["evaluate_input.jsonl"])
    for name in games.names():
        record = {"game": name, "iterations": ITERATIONS, "analyses": analyses(name), "arena": arena(name)}
        out[f"{name}.json"] = json.dumps(record, indent=1, sort_keys=True) + "\n"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    differ = []
    for filename, text in documents().items():
        path = FOLDER / filename
        if args.check:
            if not path.exists() or path.read_text() != text:
                differ.append(filename)
        else:
            path.write_text(text)
    for filename in differ:
        print(f"differs: {filename}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
