"""What the clients return: frozen dataclasses, not protobuf messages.

Units and perspective (the same as ``proto/hortus/v1/advisor.proto``):

* seats are numbered from 0; ``current_player`` is a seat, ``CHANCE`` (-1) or ``TERMINAL`` (-4);
* ``visits``: search iterations that went through a move (all threads);
* ``win_probability``: mean win share of the seat to move (``Analysis.seat``), in [0, 1]
  (a k-way tie counts 1/k);
* ``expected_scores``: mean final points of every seat (index = seat), in the game's points;
* ``scores``: points per seat now (final at the end); ``returns``: win share per seat at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hortus.views import structured_to_view, view_to_structured
from hortus.v1 import advisor_pb2 as pb

__all__ = [
    "CHANCE",
    "TERMINAL",
    "Action",
    "Analysis",
    "AnalysisUpdate",
    "ChanceDraw",
    "ChanceOutcome",
    "EvaluationError",
    "EvaluationItem",
    "EvaluationResult",
    "GameInfo",
    "LegalActions",
    "MoveHint",
    "Position",
    "PositionInfo",
    "RuleOption",
    "Suggestion",
    "VersionInfo",
]

CHANCE = -1
"""``current_player`` at a chance node."""
TERMINAL = -4
"""``current_player`` once the game is over."""


@dataclass(frozen=True)
class Position:
    """A position of one game: its registered name and its encoded bytes (opaque to clients),
    or a seat's structured view (``view``, a dictionary shaped like ``State.view(seat)``; see
    :meth:`from_view`), which the server completes by sampling hidden parts with ``seed``."""

    game: str
    encoded: bytes = b""
    view: Mapping[str, Any] | None = field(default=None, compare=False)
    seed: int = 0

    def hex(self) -> str:
        """The encoded bytes as hex text (e.g. for ``hortus suggest --position-hex``)."""
        return self.encoded.hex()

    @classmethod
    def from_hex(cls, game: str, text: str) -> "Position":
        return cls(game, bytes.fromhex("".join(text.split())))

    @classmethod
    def from_view(cls, game: str, view: Mapping[str, Any], seed: int = 0) -> "Position":
        """A position given as a seat's view (see ``proto/hortus/v1/positions.proto``)."""
        return cls(game, b"", dict(view), seed)

    def to_proto(self) -> pb.Position:
        if self.view is not None:
            return pb.Position(game=self.game, structured=view_to_structured(self.game, self.view, self.seed))
        return pb.Position(game=self.game, encoded=self.encoded)

    @classmethod
    def from_proto(cls, msg: pb.Position) -> "Position":
        if msg.HasField("structured"):
            game, view = structured_to_view(msg.structured)
            return cls(msg.game or game, bytes(msg.encoded), view, msg.structured.seed)
        return cls(msg.game, bytes(msg.encoded))


@dataclass(frozen=True)
class RuleOption:
    """A rule option of a game, its default and allowed values."""

    name: str
    default: str
    choices: tuple[str, ...]
    doc: str

    @classmethod
    def from_proto(cls, msg: pb.RuleOption) -> "RuleOption":
        return cls(msg.name, msg.default_value, tuple(msg.choices), msg.doc)


@dataclass(frozen=True)
class GameInfo:
    """A game the server plays."""

    name: str
    min_players: int
    max_players: int
    variants: tuple[str, ...]
    options: tuple[RuleOption, ...]
    num_distinct_actions: int

    @classmethod
    def from_proto(cls, msg: pb.GameInfo) -> "GameInfo":
        return cls(
            name=msg.name,
            min_players=msg.min_players,
            max_players=msg.max_players,
            variants=tuple(msg.variants),
            options=tuple(RuleOption.from_proto(o) for o in msg.options),
            num_distinct_actions=msg.num_distinct_actions,
        )


@dataclass(frozen=True)
class Action:
    """An action id and its notation (readable at the table)."""

    id: int
    notation: str

    def __str__(self) -> str:
        return self.notation

    @classmethod
    def from_proto(cls, msg: pb.Action) -> "Action":
        return cls(msg.id, msg.notation)


@dataclass(frozen=True)
class ChanceDraw:
    """In ``apply_actions``: let the server draw this chance node's outcome with the
    position's own odds, from ``seed`` (same position and seed, same outcome)."""

    seed: int


@dataclass(frozen=True)
class ChanceOutcome:
    """One outcome of a chance node and its probability, in (0, 1]."""

    action: Action
    probability: float
    hidden: bool = False
    """Always False: asked ``for_seat``, the outcomes that seat cannot tell apart are not
    listed (their total is ``LegalActions.hidden_probability``)."""

    @classmethod
    def from_proto(cls, msg: pb.ChanceOutcome) -> "ChanceOutcome":
        return cls(Action.from_proto(msg.action), msg.probability, msg.hidden)


@dataclass(frozen=True)
class LegalActions:
    """What can happen next: decisions of ``current_player`` or, at a chance node, outcomes."""

    current_player: int
    actions: tuple[Action, ...]
    chance_outcomes: tuple[ChanceOutcome, ...]
    terminal: bool
    picture: str = ""
    """With ``picture=True``: the SVG of what ``for_seat`` sees (moves carry ``data-action``)."""
    hidden_probability: float = 0.0
    """Asked ``for_seat``: the total odds of the chance outcomes that seat cannot tell apart
    (not listed in ``chance_outcomes``)."""

    @property
    def is_chance(self) -> bool:
        return self.current_player == CHANCE

    @classmethod
    def from_proto(cls, msg: pb.LegalActionsResponse) -> "LegalActions":
        return cls(
            current_player=msg.current_player,
            actions=tuple(Action.from_proto(a) for a in msg.actions),
            chance_outcomes=tuple(ChanceOutcome.from_proto(c) for c in msg.chance_outcomes),
            terminal=msg.terminal,
            picture=msg.picture,
            hidden_probability=msg.hidden_probability,
        )


@dataclass(frozen=True)
class PositionInfo:
    """A position after a change, as a frontend shows it.

    ``applied`` lists the actions ``apply_actions`` applied (empty after ``new_game``)."""

    position: Position
    current_player: int
    terminal: bool
    scores: tuple[float, ...]
    returns: tuple[float, ...]
    rendered: str
    """The public picture (hidden parts as counts)."""
    applied: tuple[Action, ...] = ()
    seat_rendered: tuple[str, ...] = ()
    """Per seat, the picture that seat sees (its own hand included)."""

    @classmethod
    def from_proto(cls, msg: pb.PositionInfo, applied: tuple[Action, ...] = ()) -> "PositionInfo":
        return cls(
            position=Position.from_proto(msg.position),
            current_player=msg.current_player,
            terminal=msg.terminal,
            scores=tuple(msg.scores),
            returns=tuple(msg.returns),
            rendered=msg.rendered,
            applied=applied,
            seat_rendered=tuple(msg.seat_rendered),
        )


@dataclass(frozen=True)
class MoveHint:
    """One candidate decision at the root of a search, with its statistics."""

    action: int
    """The action id."""
    notation: str
    """The action's notation."""
    visits: int
    """Search iterations through this move."""
    win_probability: float
    """Mean win share of the seat to move after this move, in [0, 1]."""
    expected_scores: tuple[float, ...]
    """Mean final points per seat (index = seat)."""
    principal_variation: tuple[Action, ...] = field(default=())
    """This move, then the most visited continuation by the same seat (to the end of its turn)."""
    reason: str = ""
    """A short explanation from measured statistics, for a person."""
    value_spread: float = 0.0
    """Standard deviation of the mover's search reward over the simulated futures."""
    draw_share: float | None = None
    """Share of the result's variance that the draw alone explains (None = not measured)."""
    draw_spread: float | None = None
    """Standard deviation of the win probability over the draw (None = not measured)."""
    draw_points_spread: float | None = None
    """Standard deviation of the mover's final points over the draw (None = not measured)."""
    exact: bool = False
    """``win_probability`` is exact: the rest of the game was solved (every chance outcome with
    its odds, every seat playing its best); the other statistics are the search's."""

    @classmethod
    def from_proto(cls, msg: pb.MoveAnalysis) -> "MoveHint":
        return cls(
            action=msg.action.id,
            notation=msg.action.notation,
            visits=msg.visits,
            win_probability=msg.win_probability,
            expected_scores=tuple(msg.expected_scores),
            principal_variation=tuple(Action.from_proto(a) for a in msg.principal_variation),
            reason=msg.reason,
            value_spread=msg.value_spread,
            draw_share=msg.draw_share if msg.HasField("draw_share") else None,
            draw_spread=msg.draw_spread if msg.HasField("draw_spread") else None,
            draw_points_spread=msg.draw_points_spread if msg.HasField("draw_points_spread") else None,
            exact=msg.exact,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "notation": self.notation,
            "visits": self.visits,
            "win_probability": self.win_probability,
            "expected_scores": list(self.expected_scores),
            "principal_variation": [{"id": a.id, "notation": a.notation} for a in self.principal_variation],
            "reason": self.reason,
            "value_spread": self.value_spread,
            "draw_share": self.draw_share,
            "draw_spread": self.draw_spread,
            "draw_points_spread": self.draw_points_spread,
            "exact": self.exact,
        }


@dataclass(frozen=True)
class Analysis:
    """A search's result from ``seat``'s point of view; ``moves`` most visited first."""

    seat: int
    moves: tuple[MoveHint, ...]
    iterations: int
    """Iterations performed (all threads)."""
    partial: bool
    """Stopped before its iteration budget (by time_ms, the call's deadline, the server's time
    cap or cancellation); a time-only budget that ran its full time is complete."""
    elapsed_ms: float
    """Wall-clock milliseconds of the search."""
    nodes: int
    """Tree nodes allocated."""
    tree_full: bool = False
    """The server's node arena (``max_nodes``) filled up: the tree stopped growing and the
    search kept playing out from its leaves (weaker; moves may show 0 visits)."""

    @property
    def best(self) -> MoveHint:
        """The most visited move."""
        return self.moves[0]

    @classmethod
    def from_proto(cls, msg: pb.Analysis) -> "Analysis":
        return cls(
            seat=msg.seat,
            moves=tuple(MoveHint.from_proto(m) for m in msg.moves),
            iterations=msg.iterations,
            partial=msg.partial,
            elapsed_ms=msg.elapsed_ms,
            nodes=msg.nodes,
            tree_full=msg.tree_full,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "iterations": self.iterations,
            "partial": self.partial,
            "elapsed_ms": self.elapsed_ms,
            "nodes": self.nodes,
            "tree_full": self.tree_full,
            "moves": [m.to_dict() for m in self.moves],
        }


@dataclass(frozen=True)
class Suggestion:
    """The decision to play now, the whole turn it starts, and the analysis behind it.
    ``continuation``: when ``action`` leads straight to the same seat's next decision, the token
    that continues this search there (``suggest_move(..., continue_from=...)`` of the position
    ``action`` leads to, on this client); "" otherwise."""

    action: Action
    turn: tuple[Action, ...]
    analysis: Analysis
    continuation: str = ""

    @classmethod
    def from_proto(cls, msg: pb.SuggestMoveResponse) -> "Suggestion":
        return cls(
            action=Action.from_proto(msg.action),
            turn=tuple(Action.from_proto(a) for a in msg.turn),
            analysis=Analysis.from_proto(msg.analysis),
            continuation=msg.continuation,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": {"id": self.action.id, "notation": self.action.notation},
            "turn": [{"id": a.id, "notation": a.notation} for a in self.turn],
            "analysis": self.analysis.to_dict(),
            "continuation": self.continuation,
        }


@dataclass(frozen=True)
class VersionInfo:
    """The server's package version, protocol and games."""

    version: str
    protocol: str
    games: tuple[GameInfo, ...]

    @classmethod
    def from_proto(cls, msg: pb.GetVersionResponse) -> "VersionInfo":
        return cls(msg.version, msg.protocol, tuple(GameInfo.from_proto(g) for g in msg.games))


@dataclass(frozen=True)
class AnalysisUpdate:
    """One message of a streamed analysis: the statistics so far, and whether it is the final
    result (exactly one per stream, the last). ``continuation``: the token that continues this
    analysis in a later ``analyze(..., continue_from=...)`` once this stream has ended (the
    same in every update of a stream; "" when the server keeps no analyses)."""

    analysis: Analysis
    final: bool
    continuation: str = ""

    @classmethod
    def from_proto(cls, msg: pb.AnalyzeResponse) -> "AnalysisUpdate":
        return cls(Analysis.from_proto(msg.analysis), msg.final, msg.continuation)


@dataclass(frozen=True)
class EvaluationItem:
    """One position of a batch, with the caller's id and its own budget (0 = the call's
    defaults given to ``evaluate``)."""

    id: str
    position: Position
    iterations: int = 0
    time_ms: float = 0.0
    seed: int = 0
    threads: int = 0


@dataclass(frozen=True)
class EvaluationError:
    """Why one position of a batch has no analysis: a status code name (``"INVALID_ARGUMENT"``),
    the server's message and the offending field (``""`` if none)."""

    code: str
    message: str
    field: str = ""


@dataclass(frozen=True)
class EvaluationResult:
    """The answer for one position of a batch: its analysis or its error (exactly one is set)."""

    id: str
    analysis: Analysis | None = None
    error: EvaluationError | None = None

    @property
    def ok(self) -> bool:
        return self.analysis is not None

    def to_dict(self) -> dict[str, Any]:
        if self.analysis is not None:
            return {"id": self.id, "analysis": self.analysis.to_dict()}
        assert self.error is not None
        return {"id": self.id, "error": {"code": self.error.code, "message": self.error.message, "field": self.error.field}}
