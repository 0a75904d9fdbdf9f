"""The balance lab's games: seeded, seats rotated, each one recording what the report needs
(points, win shares, decisions, rounds, why it ended, which cards each seat bought or played,
how much the draw decided), played here, in local processes or as Ray tasks.

Reproducible: game ``i`` of a run with seed ``S`` draws its setup, its chance events and every
bot's choices from seeds derived from ``(S, i)`` alone (the arena's derivation, so a paired
arm replays the same deals), and results are put back in task order: a report is the same
whatever ran the games.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hortus import games
from hortus._ext.engine import draw_dependence
from hortus.games import CHANCE, TERMINAL, Game
from hortus.search.bots import make_bot

__all__ = ["Change", "GameRecord", "GameTask", "Stopped", "derive_seed", "play_one", "run_games"]

MAX_DECISIONS = 100_000
"""A game that has not ended after this many decisions is a bug in its rules."""
DRAW_WORLDS = 16
"""Worlds sampled to measure how much the draw decides a decision (``draw_share``)."""
DRAW_PLAYOUTS = 3
_CHANCE_SALT = 0x43484E43  # the arena's salt of the chance draws
_DRAW_SALT = 0x44524157


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers (the arena's derivation: stable across runs, platforms)."""
    return random.Random(":".join(str(p) for p in parts)).getrandbits(63)


@dataclass(frozen=True)
class Change:
    """What one arm of a comparison changes in the game: rule options, a designer's
    components file, cards removed from the supply, cards swapped (A's copies for B's)."""

    options: tuple[tuple[str, str], ...] = ()
    components: str | None = None
    remove: tuple[str, ...] = ()
    swap: tuple[tuple[str, str], ...] = ()

    def is_components(self) -> bool:
        return self.components is not None or bool(self.remove) or bool(self.swap)

    def game(self, name: str) -> Game:
        """The registered game with this change's components (rule options go to new_game)."""
        game = games.get(name)
        if not self.is_components():
            return game
        return game.with_components(
            Path(self.components) if self.components is not None else None, remove=self.remove, swap=dict(self.swap)
        )

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.options:
            out["options"] = dict(self.options)
        if self.components is not None:
            out["components"] = Path(self.components).name
        if self.remove:
            out["ablate"] = list(self.remove)
        if self.swap:
            out["swap"] = {a: b for a, b in self.swap}
        return out


@dataclass(frozen=True)
class GameTask:
    """Everything a worker needs to play one game (picklable)."""

    key: tuple[int, ...]
    """Where the record goes back (records come back sorted by key)."""
    game: str
    bots: tuple[str, ...]
    """Seat ``s`` of game ``index`` is played by ``bots[(s + index) % len(bots)]``."""
    players: int
    seed: int
    index: int
    change: Change = field(default_factory=Change)
    draw_every: int = 0
    """Measure the draw's share at every this-many-th decision (0: never)."""


@dataclass(frozen=True)
class GameRecord:
    key: tuple[int, ...]
    index: int
    seats: tuple[int, ...]
    """The bot (index into the task's bots) of each seat."""
    scores: tuple[float, ...]
    returns: tuple[float, ...]
    decisions: int
    rounds: int | None
    """Rounds played as the game counts them (None: the game keeps no count)."""
    turns: int
    """Runs of consecutive decisions by one seat."""
    end_reason: str | None
    cards: tuple[tuple[str, ...], ...]
    """Per seat, the supply cards it bought, played or planted (sorted, each once)."""
    draw_shares: tuple[float, ...]
    """The draw's share of the outcome's variance at the measured decisions."""


class Stopped(Exception):
    """A game given up before its end (``play_one``'s `stop` said so)."""


def play_one(task: GameTask, game: Game | None = None, stop: Callable[[], bool] | None = None) -> GameRecord:
    """Play `task`'s game (`game` overrides the registry's, for a test's planted rules);
    `stop` is asked before every decision and raises Stopped once it says so."""
    game = game if game is not None else task.change.game(task.game)
    game_seed = derive_seed(task.seed, task.index)
    seating = tuple((s + task.index) % len(task.bots) for s in range(task.players))
    bots = [make_bot(task.bots[b], seed=derive_seed(task.seed, task.index, s)) for s, b in enumerate(seating)]
    state = game.new_game(players=task.players, seed=game_seed, options=dict(task.change.options) or None)
    rng = random.Random(derive_seed(game_seed, _CHANCE_SALT))
    decisions = turns = 0
    last_seat = None
    cards: list[set[str]] = [set() for _ in range(task.players)]
    shares: list[float] = []
    while True:
        player = state.current_player
        if player == TERMINAL:
            break
        if player == CHANCE:
            state.resolve_chance(rng)
            continue
        if stop is not None and stop():
            raise Stopped(f"game {task.index} given up after {decisions} decisions")
        if decisions >= MAX_DECISIONS:
            raise RuntimeError(f"{game.name}: no end after {MAX_DECISIONS} decisions (seed {game_seed})")
        action = bots[player].choose(state)
        if task.draw_every and decisions % task.draw_every == 0 and len(state.legal_actions()) > 1:
            shares.append(_draw_share(state.kernel_state, player, action, derive_seed(game_seed, _DRAW_SALT, decisions)))
        card = game.card_of_action(state, action)
        if card is not None:
            cards[player].add(card)
        if player != last_seat:
            turns += 1
            last_seat = player
        state.apply(action)
        decisions += 1
    return GameRecord(
        key=task.key,
        index=task.index,
        seats=seating,
        scores=tuple(state.scores()),
        returns=tuple(state.returns()),
        decisions=decisions,
        rounds=state.round_number(),
        turns=turns,
        end_reason=state.end_reason(),
        cards=tuple(tuple(sorted(c)) for c in cards),
        draw_shares=tuple(shares),
    )


def _draw_share(kernel_state: Any, seat: int, action: int, seed: int) -> float:
    """How much of the chosen move's outcome the draw decides: the share of its variance
    (win share over sampled worlds and playouts) that lies between the worlds the seat
    cannot tell apart, as ``MoveInfo.draw_share``."""
    ((_, between, within, _, _, _),) = draw_dependence(kernel_state, seat, [action], DRAW_WORLDS, DRAW_PLAYOUTS, seed)
    total = between + within
    return between / total if total > 1e-12 else 0.0


def _ray_tasks(tasks: Sequence[GameTask], address: str) -> Iterator[GameRecord]:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("--ray needs the optional extra: pip install 'hortus[ray]'") from exc
    started = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    try:
        # one game per task, one core each (a search runs one thread): no nested parallelism
        remote = ray.remote(num_cpus=1, max_retries=3)(play_one)
        pending = [remote.remote(task) for task in tasks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield ray.get(ref)
    finally:
        if started:
            ray.shutdown()


def run_games(
    tasks: Sequence[GameTask],
    *,
    jobs: int = 1,
    ray_address: str | None = None,
    progress: Callable[[GameRecord], None] | None = None,
    game: Game | None = None,
) -> list[GameRecord]:
    """Play every task (here, in `jobs` processes, or as Ray tasks on the cluster at
    `ray_address`, ``"local"`` for a cluster of this machine) and return the records sorted
    by key. `progress` is called after each game, in order of completion. `game` (here
    only) replaces the registry's game, for a test's planted rules."""
    if jobs < 1:
        raise ValueError("jobs must be >= 1")
    if game is not None and (jobs > 1 or ray_address):
        raise ValueError("a game object plays here only (jobs=1, no Ray)")
    records: list[GameRecord] = []

    def done(record: GameRecord) -> None:
        records.append(record)
        if progress is not None:
            progress(record)

    if ray_address:
        for record in _ray_tasks(tasks, ray_address):
            done(record)
    elif jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            done(play_one(task, game))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for future in as_completed([pool.submit(play_one, task) for task in tasks]):
                done(future.result())
    records.sort(key=lambda r: r.key)
    return records


def options_change(options: Mapping[str, str] | None) -> Change:
    return Change(options=tuple(sorted((options or {}).items())))
