"""The game registry: every game hortus plays, by name.

Adding a game is a new folder under ``games/`` and one line in ``_REGISTRY``.
"""

from __future__ import annotations

import importlib

from hortus.games.base import (
    CHANCE,
    TERMINAL,
    Game,
    IllegalActionError,
    InvalidPositionError,
    ReviewThresholds,
    RuleOption,
    State,
    UnknownGameError,
)

__all__ = [
    "CHANCE",
    "TERMINAL",
    "Game",
    "IllegalActionError",
    "InvalidPositionError",
    "ReviewThresholds",
    "RuleOption",
    "State",
    "UnknownGameError",
    "get",
    "names",
]

# name -> "module:class"; modules are imported on first use.
_REGISTRY: dict[str, str] = {
    "botanical_lab": "hortus.games.botanical_lab.game:BotanicalLabGame",
    "botanik": "hortus.games.botanik.game:BotanikGame",
    "botanists": "hortus.games.botanists.game:BotanistsGame",
    "war_of_the_posies": "hortus.games.war_of_the_posies.game:WarOfThePosiesGame",
}
_LOADED: dict[str, Game] = {}


def names() -> list[str]:
    """Registered game names, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> Game:
    """The game registered as `name`; UnknownGameError for anything else."""
    if not isinstance(name, str) or name not in _REGISTRY:
        raise UnknownGameError(f"unknown game {name!r}; known games: {', '.join(names())}")
    if name not in _LOADED:
        module_name, class_name = _REGISTRY[name].split(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        _LOADED[name] = cls()
    return _LOADED[name]
