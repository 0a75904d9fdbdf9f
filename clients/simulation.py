"""What ``simulate_games`` (``SimulateGames``) answers: each finished game as it comes
(:class:`SimulatedGame`, the progress), then the balance report (:class:`SimulationReport`),
read from the ``report.json`` text the server sends, byte for byte the one ``hortus balance``
writes (docs/balance.md describes every figure).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hortus.v1 import advisor_pb2 as pb

__all__ = ["SeatCountReport", "SimulatedGame", "SimulationReport", "simulation_answer"]


@dataclass(frozen=True)
class SimulatedGame:
    """One finished game of a simulation: ``game_id`` ("<players>:<number>", sent exactly once
    per call), its final points per seat, and how far the call has come (``games_done`` of
    ``games_total``, this game included)."""

    game_id: str
    players: int
    number: int
    """0-based within its seat count."""
    scores: tuple[float, ...]
    decisions: int
    games_done: int
    games_total: int

    @classmethod
    def from_proto(cls, msg: pb.SimulatedGame) -> "SimulatedGame":
        return cls(
            game_id=msg.game_id,
            players=msg.players,
            number=msg.number,
            scores=tuple(msg.scores),
            decisions=msg.decisions,
            games_done=msg.games_done,
            games_total=msg.games_total,
        )


def _triple(values: Any) -> tuple[float, float, float]:
    low, middle, high = (float(v) for v in values)
    return low, middle, high


@dataclass(frozen=True)
class SeatCountReport:
    """The figures of one seat count (the report's ``seat_counts`` entries, same names)."""

    players: int
    games: int
    seat_share: tuple[float, ...]
    """Mean win share of each seat (ties shared)."""
    seat_interval95: tuple[tuple[float, float], ...]
    """95% Wilson interval of each seat's share."""
    first_player_gap: float
    """Seat 0's share minus the fair share 1/players."""
    decisions_p10_p50_p90: tuple[float, float, float]
    rounds_p10_p50_p90: tuple[float, float, float]
    rounds_counted: str
    """"rounds" as the game counts them, or "turns per seat"."""
    end_share: Mapping[str, float]
    """The share of games that ended each way ("trigger", "supply", "safety", ...)."""
    margin_p10_p50_p90: tuple[float, float, float]
    """The winner's lead over the runner-up, in points."""
    mean_points: tuple[float, ...]
    draw_share_mean: float | None
    """The mean share of a decision's outcome the draw decides (None: none measured)."""
    draw_share_decisions: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SeatCountReport":
        draw = data["draw_share_mean"]
        return cls(
            players=int(data["players"]),
            games=int(data["games"]),
            seat_share=tuple(float(s) for s in data["seat_share"]),
            seat_interval95=tuple((float(low), float(high)) for low, high in data["seat_interval95"]),
            first_player_gap=float(data["first_player_gap"]),
            decisions_p10_p50_p90=_triple(data["decisions_p10_p50_p90"]),
            rounds_p10_p50_p90=_triple(data["rounds_p10_p50_p90"]),
            rounds_counted=str(data["rounds_counted"]),
            end_share={str(k): float(v) for k, v in data["end_share"].items()},
            margin_p10_p50_p90=_triple(data["margin_p10_p50_p90"]),
            mean_points=tuple(float(p) for p in data["mean_points"]),
            draw_share_mean=None if draw is None else float(draw),
            draw_share_decisions=int(data["draw_share_decisions"]),
        )


@dataclass(frozen=True)
class SimulationReport:
    """The last answer of a simulation: the balance report. ``report_json`` is its text as
    the server sent it (write it to a file to have ``hortus balance``'s ``report.json``)."""

    game: str
    bot: str
    """Every seat's bot, e.g. "level:4"."""
    seed: int
    games_per_seat_count: int
    options: Mapping[str, str]
    """The rule options the games were played with, resolved."""
    seat_counts: tuple[SeatCountReport, ...]
    report_json: str

    @classmethod
    def from_json(cls, text: str) -> "SimulationReport":
        data = json.loads(text)
        return cls(
            game=str(data["game"]),
            bot=str(data["bot"]),
            seed=int(data["seed"]),
            games_per_seat_count=int(data["games_per_seat_count"]),
            options={str(k): str(v) for k, v in data["options"].items()},
            seat_counts=tuple(SeatCountReport.from_dict(s) for s in data["seat_counts"]),
            report_json=text,
        )

    def to_dict(self) -> dict[str, Any]:
        """The whole report as JSON data (every field of ``report.json``)."""
        data: dict[str, Any] = json.loads(self.report_json)
        return data


def simulation_answer(msg: pb.SimulateGamesResponse) -> SimulatedGame | SimulationReport:
    """The client form of one ``SimulateGamesResponse``."""
    if msg.WhichOneof("item") == "report_json":
        return SimulationReport.from_json(msg.report_json)
    return SimulatedGame.from_proto(msg.game)
