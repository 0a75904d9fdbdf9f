"""Arena: reproducible matches (threads or processes alike), round robins and Elo fitting."""

from __future__ import annotations

import pytest

from hortus.search.arena import fit_elo, play_match, round_robin


def test_processes_give_the_same_games() -> None:
    one = play_match("botanik", ["random", "greedy"], 4, seed=3, jobs=1)
    two = play_match("botanik", ["random", "greedy"], 4, seed=3, jobs=2)
    assert one.records == two.records
    assert [r.seats[0] for r in one.records] == [0, 1, 0, 1]  # seats rotate


def test_fit_elo_orders_and_anchors() -> None:
    ratings = fit_elo(3, [(0, 1, 30, 40), (1, 2, 30, 40), (0, 2, 36, 40)])
    assert ratings[0] == 0.0
    assert ratings[0] > ratings[1] > ratings[2]
    even = fit_elo(2, [(0, 1, 20, 40)])
    assert abs(even[1]) < 1.0


def test_round_robin_plays_every_pair() -> None:
    result = round_robin("botanik", ["random", "greedy", "mcts:30"], 2, seed=1)
    assert [m.bots for m in result.matches] == [("random", "greedy"), ("random", "mcts:30"), ("greedy", "mcts:30")]
    assert len(result.elo) == 3 and result.elo[0] == 0.0
    assert set(result.to_dict()["elo"]) == {"random", "greedy", "mcts:30"}
    with pytest.raises(ValueError):
        round_robin("botanik", ["random"], 2)
