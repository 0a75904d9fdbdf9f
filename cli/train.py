"""``hortus train``: a game's value model (the ``training`` package)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for annotations: the engine is imported lazily
    pass


def add_parsers(sub: Any) -> None:
    """Register train."""
    p = sub.add_parser("train", help="train a game's value model (search-labelled self-play, numpy)")
    from hortus.training.cli import add_arguments
    from hortus.training.cli import run as run_training

    add_arguments(p)
    p.set_defaults(func=run_training)
