"""OpenSpiel interoperability: every hortus game as an OpenSpiel Python game.

    pip install 'hortus[openspiel]'
    import pyspiel
    from hortus.games import openspiel
    openspiel.register_all()                       # "hortus_botanik", ...
    game = pyspiel.load_game("hortus_botanik", {"players": 2})

Actions, chance outcomes and returns are hortus's own (returns = win shares, summing to 1).
Information-state and observation strings are the JSON of ``State.view(player)``; hidden
information is resampled through the kernel's ``determinize`` (``resample_from_infostate``),
so OpenSpiel's ISMCTS sees exactly what a hortus seat sees.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

import numpy as np
import pyspiel  # type: ignore[import-not-found, unused-ignore]

from hortus import games

PREFIX = "hortus_"


def _game_type(game: games.Game) -> Any:
    return pyspiel.GameType(
        short_name=PREFIX + game.name,
        long_name=f"hortus {game.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        # Every hortus game hides something (at least the draw order), and OpenSpiel's ISMCTS
        # only runs on imperfect-information games.
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=game.max_players,
        min_num_players=game.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification={"players": game.min_players},
    )


class HortusSpielGame(pyspiel.Game):  # type: ignore[misc]
    """An OpenSpiel game backed by a hortus game."""

    hortus_name = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.hortus = games.get(self.hortus_name)
        params = dict(params or {})
        players = int(params.get("players", self.hortus.min_players))
        info = pyspiel.GameInfo(
            num_distinct_actions=self.hortus.num_distinct_actions,
            # Chance outcomes share the action id space.
            max_chance_outcomes=self.hortus.num_distinct_actions,
            num_players=players,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=4000,
        )
        super().__init__(_game_type(self.hortus), info, params)
        self.players = players

    def new_initial_state(self) -> "HortusSpielState":
        return HortusSpielState(self, self.hortus.new_game(players=self.players))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> "ViewObserver":
        return ViewObserver()


class HortusSpielState(pyspiel.State):  # type: ignore[misc]
    def __init__(self, game: HortusSpielGame, state: games.State) -> None:
        super().__init__(game)
        self.hortus_game = game
        self.state = state

    def current_player(self) -> int:
        player = self.state.current_player
        if player == games.CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        if player == games.TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        return player

    def _legal_actions(self, player: int) -> list[int]:
        return self.state.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.state.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self.state.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return self.state.action_to_string(int(action))

    def is_terminal(self) -> bool:
        return self.state.is_terminal()

    def returns(self) -> list[float]:
        if not self.state.is_terminal():
            return [0.0] * self.state.num_players
        return self.state.returns()

    def information_state_string(self, player: int | None = None) -> str:
        seat = self.current_player() if player is None else player
        return json.dumps(self.state.view(seat), sort_keys=True)

    def observation_string(self, player: int | None = None) -> str:
        return self.information_state_string(player)

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> "HortusSpielState":
        world = self.state.clone()
        world.kernel_state.determinize(player_id, int(probability_sampler() * 2**63))
        return HortusSpielState(self.hortus_game, world)

    def __deepcopy__(self, memo: dict[int, Any]) -> "HortusSpielState":
        return HortusSpielState(self.hortus_game, self.state.clone())

    def clone(self) -> "HortusSpielState":
        return copy.deepcopy(self)

    def __str__(self) -> str:
        return self.state.render()


class ViewObserver:
    """PyObserver: strings from ``State.view``; no tensor (hortus games are not tensorised)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, Any] = {}

    def set_from(self, state: HortusSpielState, player: int) -> None:
        pass

    def string_from(self, state: HortusSpielState, player: int) -> str:
        return json.dumps(state.state.view(player), sort_keys=True)


_REGISTERED: set[str] = set()


def register_all() -> list[str]:
    """Register every hortus game with OpenSpiel (idempotent); returns the OpenSpiel names."""
    for name in games.names():
        short = PREFIX + name
        if short in _REGISTERED:
            continue
        cls = type(f"Hortus_{name}", (HortusSpielGame,), {"hortus_name": name})
        pyspiel.register_game(_game_type(games.get(name)), cls)
        _REGISTERED.add(short)
    return sorted(PREFIX + n for n in games.names())
