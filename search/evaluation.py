"""Learned leaf evaluation: a game's value model, loaded from the small file beside
its ``components.toml`` and handed to the compiled search.

A model maps the game's features of a position from one seat's side (the kernel's optional
``features`` function, computed on the determinized state at the leaf) to that seat's win
probability: ``sigmoid(w2 . tanh(w1 f + b1) + b2)``, or ``sigmoid(w2 . f + b2)`` when it has
no hidden layer. The search normalises the seats' values to sum to 1 (like win shares).

File format (``value_model.json``, JSON, versioned and checksummed): ``format`` =
``"hortus-value-model"``, ``version`` = 1, ``game``, ``features`` (the kernel's feature count),
``hidden`` (0 = linear), ``w1`` (hidden x features), ``b1`` (hidden), ``w2`` (hidden, or
features when linear), ``b2``, ``eval_plies`` (decisions played out before the model scores
the state, 0 = at the new leaf), ``default`` (whether ``SearchSettings(evaluation="default")`` uses
the model: only for games where it won at equal time), optionally ``points_w`` (features) and
``points_b``, a linear head estimating a seat's expected final points from the same features
(the search reports it as the expected points of a playout it cut, where the points so far are
not final), ``training`` (how it was made) and
``sha256``: the SHA-256 of the file's JSON without that key (sorted keys, no spaces).
Anything else (a wrong shape, a bad number, a checksum mismatch) is a
:class:`ValueModelError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hortus.games import Game

FORMAT = "hortus-value-model"
VERSION = 1
FILE_NAME = "value_model.json"
MAX_SIZE = 1 << 20  # 1 MB: models are data shipped in the wheel
MAX_UNITS = 32  # the compiled core's bound on features and hidden units
EVALUATIONS = ("default", "playout", "model")


class ValueModelError(ValueError):
    """A value-model file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class ValueModel:
    game: str
    features: int
    hidden: int
    w1: tuple[tuple[float, ...], ...]
    b1: tuple[float, ...]
    w2: tuple[float, ...]
    b2: float
    eval_plies: int
    default: bool
    path: Path
    points_w: tuple[float, ...] | None = None
    """The expected-final-points head (None: the file has none; a cut then reports the
    points so far)."""
    points_b: float = 0.0

    def value(self, features: list[float]) -> float:
        """The model's win probability for one feature vector (the compiled core's formula)."""
        if self.hidden == 0:
            z = self.b2 + sum(w * f for w, f in zip(self.w2, features))
        else:
            z = self.b2 + sum(
                w * math.tanh(b + sum(a * f for a, f in zip(row, features))) for w, row, b in zip(self.w2, self.w1, self.b1)
            )
        return 1.0 / (1.0 + math.exp(-z))

    def points(self, features: list[float]) -> float | None:
        """The points head's expected final points for one feature vector (the compiled core's
        formula), or None without one."""
        if self.points_w is None:
            return None
        return self.points_b + sum(w * f for w, f in zip(self.points_w, features))


def checksum(payload: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a model's fields (the ``sha256`` key left out)."""
    body = {k: v for k, v in payload.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def model_path(game: Game) -> Path:
    """Where a game's model lives: beside its ``components.toml`` (its package folder)."""
    module = sys.modules[type(game).__module__]
    return Path(module.__file__ or ".").parent / FILE_NAME


def _numbers(path: Path, field: str, value: Any, length: int) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != length:
        raise ValueModelError(f"{path}: {field} must be a list of {length} numbers")
    out = []
    for i, x in enumerate(value):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueModelError(f"{path}: {field}[{i}] must be a finite number, not {x!r}")
        out.append(float(x))
    return tuple(out)


def parse_model(path: Path, raw: bytes, game: str, features: int) -> ValueModel:
    """Validate a model file's bytes for a game whose kernel has `features` features."""
    if len(raw) > MAX_SIZE:
        raise ValueModelError(f"{path}: {len(raw)} bytes, larger than {MAX_SIZE}")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueModelError(f"{path}: not a JSON value model ({error})") from None
    if not isinstance(data, dict):
        raise ValueModelError(f"{path}: not a JSON object")
    if data.get("format") != FORMAT:
        raise ValueModelError(f"{path}: format must be {FORMAT!r}")
    if data.get("version") != VERSION:
        raise ValueModelError(f"{path}: version {data.get('version')!r} is not supported (only {VERSION})")
    if data.get("sha256") != checksum(data):
        raise ValueModelError(f"{path}: sha256 does not match the contents (corrupt or edited file)")
    if data.get("game") != game:
        raise ValueModelError(f"{path}: game is {data.get('game')!r}, not {game!r}")
    if data.get("features") != features:
        raise ValueModelError(f"{path}: features is {data.get('features')!r}; the kernel computes {features}")
    hidden = data.get("hidden")
    if isinstance(hidden, bool) or not isinstance(hidden, int) or not 0 <= hidden <= MAX_UNITS:
        raise ValueModelError(f"{path}: hidden must be an integer in 0..{MAX_UNITS}")
    w1_raw = data.get("w1")
    if not isinstance(w1_raw, list) or len(w1_raw) != hidden:
        raise ValueModelError(f"{path}: w1 must hold {hidden} rows")
    w1 = tuple(_numbers(path, f"w1[{i}]", row, features) for i, row in enumerate(w1_raw))
    b1 = _numbers(path, "b1", data.get("b1"), hidden)
    w2 = _numbers(path, "w2", data.get("w2"), hidden or features)
    (b2,) = _numbers(path, "b2", [data.get("b2")], 1)
    plies = data.get("eval_plies")
    if isinstance(plies, bool) or not isinstance(plies, int) or not 0 <= plies <= 1000:
        raise ValueModelError(f"{path}: eval_plies must be an integer in 0..1000")
    if not isinstance(data.get("default"), bool):
        raise ValueModelError(f"{path}: default must be true or false")
    points_w: tuple[float, ...] | None = None
    points_b = 0.0
    if "points_w" in data or "points_b" in data:
        points_w = _numbers(path, "points_w", data.get("points_w"), features)
        (points_b,) = _numbers(path, "points_b", [data.get("points_b")], 1)
    return ValueModel(game, features, hidden, w1, b1, w2, b2, plies, data["default"], path, points_w, points_b)


@lru_cache(maxsize=None)
def _load(path: Path, game: str, features: int) -> ValueModel | None:
    if not path.exists():
        return None
    return parse_model(path, path.read_bytes(), game, features)


def load_model(game: Game, features: int) -> ValueModel | None:
    """The game's value model, or None when it has none (no file, or no kernel features).
    Read and validated once per process."""
    if features <= 0:
        return None
    return _load(model_path(game), game.name, features)
