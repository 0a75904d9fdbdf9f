"""The Python client's parity with the TypeScript one: ``suggest_move(level=…)`` and
``target_elo``; ``hortus play --level``; and ``new_game("botanists")`` deals a table of 2
(its solo game only when asked for with players=1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hortus.cli import build_parser
from hortus.clients.client import AdvisorClient
from hortus.clients.types import ChanceDraw
from hortus.clients.errors import InvalidArgumentError
from hortus.server import ServerConfig
from servers import Servers


@pytest.fixture(scope="module")
def client(serve_module: Servers) -> Iterator[AdvisorClient]:
    server = serve_module(ServerConfig(default_iterations=100, max_threads=1))
    with AdvisorClient(f"127.0.0.1:{server.port}", timeout=120) as c:
        yield c


def _decision(client: AdvisorClient, game: str, seed: int):  # type: ignore[no-untyped-def]
    info = client.new_game(game, 2, seed=seed)
    while client.legal_actions(info.position).is_chance:
        info = client.apply_actions(info.position, [ChanceDraw(1)])
    return info.position


def test_suggest_move_at_a_level_is_suggest_level(client: AdvisorClient) -> None:
    position = _decision(client, "botanik", 3)
    by_level = client.suggest_move(position, level=2, seed=9)
    assert by_level.action == client.suggest_level(position, 2, seed=9).action
    by_elo = client.suggest_move(position, target_elo=0.0, seed=9)
    assert by_elo.action == client.suggest_elo(position, 0.0, seed=9).action
    with pytest.raises(InvalidArgumentError) as error:
        client.suggest_move(position, level=2, iterations=50)
    assert any("limits" in f or "level" in f for f in error.value.fields), error.value.fields


def test_botanists_deals_two_seats_by_default(client: AdvisorClient) -> None:
    assert len(client.new_game("botanists", seed=1).scores) == 2
    assert len(client.new_game("botanists", 1, seed=1).scores) == 1
    assert len(client.new_game("botanik", seed=1).scores) == 2


def test_play_takes_a_level() -> None:
    args = build_parser().parse_args(["play", "botanik", "--level", "3"])
    assert args.level == 3
    assert build_parser().parse_args(["play", "botanik"]).level == 0
