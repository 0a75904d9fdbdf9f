"""Balance lab: seeded, seat-rotated self-play that measures a game's balance (seat advantage,
game length, winning margins, how much luck decides), game-agnostic."""

from hortus.balance.report import SeatReport, balance_report, seat_report

__all__ = ["SeatReport", "balance_report", "seat_report"]
