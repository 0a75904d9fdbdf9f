"""The OpenSpiel adapter (runs only with the extra: pip install 'hortus[openspiel]')."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from hortus import games  # noqa: E402
from hortus.games import openspiel  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    openspiel.register_all()


@pytest.mark.parametrize("name", games.names())
def test_openspiel_random_simulation(name: str) -> None:
    game = pyspiel.load_game(openspiel.PREFIX + name)
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)


@pytest.mark.parametrize("name", games.names())
def test_every_seat_count_loads(name: str) -> None:
    hortus_game = games.get(name)
    for players in range(hortus_game.min_players, hortus_game.max_players + 1):
        game = pyspiel.load_game(openspiel.PREFIX + name, {"players": players})
        assert game.num_players() == players
        state = game.new_initial_state()
        assert state.is_chance_node()


@pytest.mark.parametrize("name", games.names())
def test_resample_keeps_the_information_state(name: str) -> None:
    game = pyspiel.load_game(openspiel.PREFIX + name)
    rng = np.random.RandomState(3)
    state = game.new_initial_state()
    for _ in range(40):
        if state.is_terminal():
            break
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
            continue
        player = state.current_player()
        sampled = state.resample_from_infostate(player, lambda: rng.uniform())
        assert sampled.information_state_string(player) == state.information_state_string(player)
        assert sampled.legal_actions() == state.legal_actions()
        state.apply_action(int(rng.choice(state.legal_actions())))


def test_openspiel_ismcts_plays_a_hortus_game() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("hortus_botanik")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 20, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert bot.step(state) in state.legal_actions()
