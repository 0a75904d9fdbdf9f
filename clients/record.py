"""Game records and their review (``ReviewGame``): what ``hortus play --record`` writes and
``hortus review`` reads, and the dataclasses of a review's answers.

A record is a JSONL file: the first line is the setup, every other line one action in order,
chance outcomes included::

    {"game": "botanik", "players": 2, "variant": null, "options": {}, "seed": 17}
    {"seat": 0, "action": 12, "notation": "..."}
    {"seat": -1, "action": 40, "notation": "..."}

The setup gives the setup ``seed`` (the game is set up as ``NewGame`` with that seed does) or
the first ``position`` (``State.encode()`` bytes in hex, hidden parts included), or neither (the
record then starts at the setup chance node). An action line gives its ``action`` id or, when
the id is absent, its ``notation``; ``seat`` (-1 = chance) is informative only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hortus.clients.types import Action
from hortus.v1 import advisor_pb2 as pb

__all__ = ["GameRecord", "RecordError", "RecordedAction", "ReviewSummary", "ReviewThresholds", "ReviewedMove", "SeatReview"]


class RecordError(ValueError):
    """A record file that cannot be read: ``line`` (1-based) and what is wrong there."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class RecordedAction:
    """One action of a record: its id (or, if None, its notation) and the seat that took it
    (-1 = a chance outcome; informative only)."""

    action: int | None
    notation: str = ""
    seat: int | None = None

    def to_proto(self) -> pb.RecordedMove:
        if self.action is not None:
            return pb.RecordedMove(action=pb.ActionRef(id=self.action))
        return pb.RecordedMove(action=pb.ActionRef(notation=self.notation))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.seat is not None:
            data["seat"] = self.seat
        if self.action is not None:
            data["action"] = self.action
        if self.notation:
            data["notation"] = self.notation
        return data


@dataclass(frozen=True)
class GameRecord:
    """A whole game: its setup and every action in order (see the module)."""

    game: str
    players: int = 0
    variant: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    seed: int | None = None
    position: bytes | None = None
    moves: tuple[RecordedAction, ...] = ()

    def to_proto(self) -> pb.ReviewGameRequest:
        """The record as a ``ReviewGameRequest`` (without limits)."""
        request = pb.ReviewGameRequest(
            game=self.game,
            players=self.players,
            variant=self.variant or "",
            options=dict(self.options),
            position=self.position or b"",
            moves=[m.to_proto() for m in self.moves],
        )
        if self.seed is not None:
            request.seed = self.seed
        return request

    def to_jsonl(self) -> str:
        setup: dict[str, Any] = {
            "game": self.game,
            "players": self.players,
            "variant": self.variant,
            "options": dict(self.options),
        }
        if self.seed is not None:
            setup["seed"] = self.seed
        if self.position is not None:
            setup["position"] = self.position.hex()
        lines = [json.dumps(setup), *(json.dumps(m.to_dict()) for m in self.moves)]
        return "\n".join(lines) + "\n"

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    @classmethod
    def from_jsonl(cls, text: str) -> "GameRecord":
        """RecordError naming the line for anything malformed (legality is the server's to
        check: it names the move index)."""
        rows: list[tuple[int, Any]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise RecordError(number, f"not JSON: {exc.msg}") from None
        if not rows:
            raise RecordError(1, 'empty record: the first line is the setup ({"game": ...})')
        number, setup = rows[0]
        if not isinstance(setup, dict) or not isinstance(setup.get("game"), str):
            raise RecordError(number, 'the first line is the setup, an object with "game"')

        def integer(value: Any, name: str, line: int, minimum: int = 0) -> int:
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise RecordError(line, f'"{name}" must be an integer >= {minimum}, not {value!r}')
            return value

        players = integer(setup.get("players", 0), "players", number)
        variant = setup.get("variant")
        if variant is not None and not isinstance(variant, str):
            raise RecordError(number, '"variant" must be a string or null')
        options = setup.get("options") or {}
        if not isinstance(options, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in options.items()):
            raise RecordError(number, '"options" must map names to string values')
        seed = setup.get("seed")
        if seed is not None:
            seed = integer(seed, "seed", number)
        position = None
        if setup.get("position") is not None:
            try:
                position = bytes.fromhex(str(setup["position"]))
            except ValueError:
                raise RecordError(number, '"position" must be the hex of the encoded bytes') from None
        moves: list[RecordedAction] = []
        for number, row in rows[1:]:
            if not isinstance(row, dict):
                raise RecordError(number, 'an action line is an object with "action" or "notation"')
            action = row.get("action")
            notation = row.get("notation", "")
            if action is not None:
                action = integer(action, "action", number)
            if not isinstance(notation, str):
                raise RecordError(number, '"notation" must be a string')
            if action is None and not notation:
                raise RecordError(number, 'an action line needs "action" (an id) or "notation"')
            seat = row.get("seat")
            if seat is not None:
                seat = integer(seat, "seat", number, minimum=-1)
            moves.append(RecordedAction(action, notation, seat))
        return cls(setup["game"], players, variant, dict(options), seed, position, tuple(moves))

    @classmethod
    def load(cls, path: str | Path) -> "GameRecord":
        return cls.from_jsonl(Path(path).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ReviewedMove:
    """One reviewed decision (``ReviewedMove`` of the proto): win probabilities are the
    mover's, in [0, 1]; points are the mover's expected final points; losses are best minus
    played, at least 0."""

    index: int
    """Index of the move in the record's actions (chance outcomes counted)."""
    seat: int
    played: Action
    best: Action
    best_line: tuple[Action, ...]
    best_win_probability: float
    played_win_probability: float
    best_expected_points: float
    played_expected_points: float
    win_probability_loss: float
    points_loss: float
    label: str
    """best, good, inaccuracy, mistake or blunder (thresholds: ``ReviewSummary.thresholds``)."""
    forced: bool
    partial: bool
    iterations: int
    exact: bool = False
    """Both win probabilities are exact (the decision was solved), so the label rests on
    exact values."""

    @classmethod
    def from_proto(cls, msg: pb.ReviewedMove) -> "ReviewedMove":
        return cls(
            index=msg.index,
            seat=msg.seat,
            played=Action.from_proto(msg.played),
            best=Action.from_proto(msg.best),
            best_line=tuple(Action.from_proto(a) for a in msg.best_line),
            best_win_probability=msg.best_win_probability,
            played_win_probability=msg.played_win_probability,
            best_expected_points=msg.best_expected_points,
            played_expected_points=msg.played_expected_points,
            win_probability_loss=msg.win_probability_loss,
            points_loss=msg.points_loss,
            label=msg.label,
            forced=msg.forced,
            partial=msg.partial,
            iterations=msg.iterations,
            exact=msg.exact,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "seat": self.seat,
            "played": {"id": self.played.id, "notation": self.played.notation},
            "best": {"id": self.best.id, "notation": self.best.notation},
            "best_line": [a.notation for a in self.best_line],
            "best_win_probability": self.best_win_probability,
            "played_win_probability": self.played_win_probability,
            "best_expected_points": self.best_expected_points,
            "played_expected_points": self.played_expected_points,
            "win_probability_loss": self.win_probability_loss,
            "points_loss": self.points_loss,
            "label": self.label,
            "forced": self.forced,
            "partial": self.partial,
            "iterations": self.iterations,
            "exact": self.exact,
        }


@dataclass(frozen=True)
class ReviewThresholds:
    """A loss at or over ``inaccuracy`` is an inaccuracy, and so on; ``unit``:
    ``win_probability`` (in [0, 1]) or ``points``."""

    unit: str
    inaccuracy: float
    mistake: float
    blunder: float


@dataclass(frozen=True)
class SeatReview:
    """One seat's summary: label counts and mean losses over its unforced decisions, and its
    accuracy in % (lichess's move-accuracy curve, docs/search.md)."""

    seat: int
    decisions: int
    forced: int
    best: int
    good: int
    inaccuracies: int
    mistakes: int
    blunders: int
    mean_win_probability_loss: float
    mean_points_loss: float
    accuracy: float

    @classmethod
    def from_proto(cls, msg: pb.SeatReview) -> "SeatReview":
        return cls(
            msg.seat,
            msg.decisions,
            msg.forced,
            msg.best,
            msg.good,
            msg.inaccuracies,
            msg.mistakes,
            msg.blunders,
            msg.mean_win_probability_loss,
            msg.mean_points_loss,
            msg.accuracy,
        )


@dataclass(frozen=True)
class ReviewSummary:
    """The last answer of a review: per seat, and the thresholds the labels used."""

    seats: tuple[SeatReview, ...]
    thresholds: ReviewThresholds
    decisions: int
    elapsed_ms: float

    @classmethod
    def from_proto(cls, msg: pb.ReviewSummary) -> "ReviewSummary":
        t = msg.thresholds
        return cls(
            tuple(SeatReview.from_proto(s) for s in msg.seats),
            ReviewThresholds(t.unit, t.inaccuracy, t.mistake, t.blunder),
            msg.decisions,
            msg.elapsed_ms,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": [vars(s).copy() for s in self.seats],
            "thresholds": vars(self.thresholds).copy(),
            "decisions": self.decisions,
            "elapsed_ms": self.elapsed_ms,
        }


def review_answer(msg: pb.ReviewGameResponse) -> "ReviewedMove | ReviewSummary":
    """The client form of one ``ReviewGameResponse``."""
    if msg.WhichOneof("item") == "summary":
        return ReviewSummary.from_proto(msg.summary)
    return ReviewedMove.from_proto(msg.move)


def record_moves(actions: Sequence[tuple[int, Action]]) -> tuple[RecordedAction, ...]:
    """(seat, action) pairs as a record's actions."""
    return tuple(RecordedAction(a.id, a.notation, seat) for seat, a in actions)
