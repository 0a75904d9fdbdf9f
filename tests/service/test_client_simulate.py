"""``simulate_games`` on both Python clients against an in-process server: each game once as
progress, then the typed report, byte for byte ``hortus balance``'s; a bad field is
InvalidArgumentError naming it; the deadline ends the call after the games done by then;
leaving the iterator early stops the server's games, the running ones included."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest

from hortus.balance.play import GameRecord, GameTask, Stopped
from hortus.balance.report import balance_report, report_json
from hortus.clients import (
    AdvisorClient,
    AsyncAdvisorClient,
    DeadlineExceededError,
    InvalidArgumentError,
    SimulatedGame,
    SimulationReport,
)
from hortus.server import RunningServer, ServerConfig, simulate
from servers import Servers

CONFIG = ServerConfig(max_concurrent_searches=2, max_threads=1, max_batch_size=64)
GAME, GAMES, LEVEL, SEED = "botanik", 4, 1, 5


@pytest.fixture(scope="module")
def server(serve_module: Servers) -> RunningServer:
    return serve_module(CONFIG)


@pytest.fixture(scope="module")
def target(server: RunningServer) -> str:
    return f"127.0.0.1:{server.port}"


@pytest.fixture(scope="module")
def client(target: str) -> Iterator[AdvisorClient]:
    with AdvisorClient(target, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def expected() -> str:
    """The report ``hortus balance --game botanik --players 2 --bots level:1 --games 4 --seed 5``
    writes."""
    return report_json(balance_report(GAME, [2], f"level:{LEVEL}", GAMES, seed=SEED))


def _check(answers: list[SimulatedGame | SimulationReport], expected: str) -> SimulationReport:
    *games, report = answers
    assert all(isinstance(g, SimulatedGame) for g in games) and isinstance(report, SimulationReport)
    progress = [g for g in games if isinstance(g, SimulatedGame)]
    assert sorted(g.game_id for g in progress) == [f"2:{i}" for i in range(GAMES)]  # each exactly once
    assert [g.games_done for g in progress] == list(range(1, GAMES + 1))
    assert {g.games_total for g in progress} == {GAMES}
    assert all(g.players == 2 and len(g.scores) == 2 and g.decisions > 0 for g in progress)
    assert report.report_json == expected
    assert (report.game, report.bot, report.seed, report.games_per_seat_count) == (GAME, f"level:{LEVEL}", SEED, GAMES)
    assert report.to_dict()["seat_counts"][0]["seat_share"] == list(report.seat_counts[0].seat_share)
    (seats,) = report.seat_counts
    assert seats.players == 2 and seats.games == GAMES
    assert sum(seats.seat_share) == pytest.approx(1.0)
    assert all(low <= share <= high for share, (low, high) in zip(seats.seat_share, seats.seat_interval95))
    assert sum(seats.end_share.values()) == pytest.approx(1.0)
    # the points each game sent are the report's means
    for seat in range(2):
        assert seats.mean_points[seat] == pytest.approx(sum(g.scores[seat] for g in progress) / GAMES)
    return report


def test_blocking_progress_then_the_report(client: AdvisorClient, expected: str) -> None:
    _check(list(client.simulate_games(GAME, GAMES, players=[2], level=LEVEL, seed=SEED)), expected)


def test_asyncio_progress_then_the_report(target: str, expected: str) -> None:
    async def run() -> list[SimulatedGame | SimulationReport]:
        async with AsyncAdvisorClient(target, timeout=30) as client:
            return [a async for a in client.simulate_games(GAME, GAMES, level=LEVEL, seed=SEED)]

    _check(asyncio.run(run()), expected)


@pytest.mark.parametrize(
    ("game", "games", "players", "options", "field"),
    [
        ("botanists", 1, [2, 2], {}, "players[1]"),
        ("botanik", 0, [], {}, "games"),
        ("botanik", 1, [], {"first_player": "7"}, "options"),
    ],
)
def test_a_bad_field_is_named_by_both_clients(
    client: AdvisorClient, target: str, game: str, games: int, players: list[int], options: dict[str, str], field: str
) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.simulate_games(game, games, players=players, options=options))
    assert caught.value.fields == (field,)

    async def run() -> None:
        async with AsyncAdvisorClient(target) as aio:
            async for _ in aio.simulate_games(game, games, players=players, options=options):
                pass

    with pytest.raises(InvalidArgumentError) as caught:
        asyncio.run(run())
    assert caught.value.fields == (field,)


def test_the_deadline_ends_the_call_after_the_games_done(client: AdvisorClient) -> None:
    seen: list[str] = []
    with pytest.raises(DeadlineExceededError):
        for answer in client.simulate_games(GAME, 64, level=4, seed=1, timeout=2.0):
            assert isinstance(answer, SimulatedGame)  # never a report
            seen.append(answer.game_id)
    assert len(seen) == len(set(seen)) < 64


def _idle(server: RunningServer, within_s: float = 60.0) -> bool:
    limit = time.monotonic() + within_s
    while server.servicer.searches_in_flight and time.monotonic() < limit:
        time.sleep(0.05)
    return server.servicer.searches_in_flight == 0


@pytest.fixture
def endings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each game the in-process server plays ends: "played" or "stopped" (its call ended
    while it ran)."""
    seen: list[str] = []
    original = simulate.play_one

    def play_one(task: GameTask, stop: Callable[[], bool] | None = None) -> GameRecord:
        try:
            record = original(task, stop=stop)
        except Stopped:
            seen.append("stopped")
            raise
        seen.append("played")
        return record

    monkeypatch.setattr(simulate, "play_one", play_one)
    return seen


@pytest.mark.parametrize("asynchronous", [False, True])
def test_leaving_early_stops_the_games(target: str, server: RunningServer, endings: list[str], asynchronous: bool) -> None:
    # 64 level-7 games (2,048 iterations a decision, seconds a game): the one sent, then
    # leaving the iterator cancels the call, the games running then stop and no other starts
    if asynchronous:

        async def run() -> None:
            async with AsyncAdvisorClient(target) as aio:
                async for answer in aio.simulate_games(GAME, 64, level=7, seed=3):
                    assert isinstance(answer, SimulatedGame)
                    break

        asyncio.run(run())
    else:
        with AdvisorClient(target) as client:
            for answer in client.simulate_games(GAME, 64, level=7, seed=2):
                assert isinstance(answer, SimulatedGame)
                break
    assert _idle(server)
    assert "stopped" in endings and len(endings) < 64, endings
