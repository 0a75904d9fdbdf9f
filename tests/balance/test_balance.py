"""The balance lab: figures from seeded games, the same for any jobs, and planted truths found."""

from __future__ import annotations

import json
from pathlib import Path

from hortus.balance.cli import run
from hortus.balance.report import balance_report, quantiles, seat_report
from hortus.cli import build_parser
from hortus.search.arena import GameRecord


def _record(index: int, scores: tuple[float, ...]) -> GameRecord:
    best = max(scores)
    winners = [s for s, v in enumerate(scores) if v == best]
    returns = tuple(1.0 / len(winners) if s in winners else 0.0 for s in range(len(scores)))
    return GameRecord(index, index, tuple(range(len(scores))), scores, returns, 10 + index)


def test_quantiles_interpolate() -> None:
    assert quantiles([0.0, 10.0], (0.1, 0.5, 0.9)) == [1.0, 5.0, 9.0]
    assert quantiles([], (0.5,)) == [0.0]


def test_handicap_for_seat_zero_is_flagged() -> None:
    # planted truth: seat 0 gets 5 points more than an otherwise even game (alternating winners)
    fair = [(10.0, 12.0) if i % 2 else (12.0, 10.0) for i in range(60)]
    even = seat_report(2, [_record(i, s) for i, s in enumerate(fair)])
    low, high = even.seat_interval[0]
    assert low < 0.5 < high
    rigged = seat_report(2, [_record(i, (a + 5.0, b)) for i, (a, b) in enumerate(fair)])
    low, high = rigged.seat_interval[0]
    assert low > 0.5
    assert rigged.first_player_gap == 0.5
    assert rigged.margin[1] > even.margin[1]


def test_report_is_the_same_for_any_jobs() -> None:
    one = balance_report("botanik", [2], "random", 6, seed=3, jobs=1)
    two = balance_report("botanik", [2], "random", 6, seed=3, jobs=2)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    seats = one["seat_counts"][0]
    assert seats["games"] == 6
    assert abs(sum(seats["seat_share"]) - 1.0) < 1e-9


def test_cli_writes_json_and_html(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["balance", "--game", "botanik", "--players", "2", "--bots", "random", "--games", "4", "-o", str(tmp_path)]
    )
    assert run(args) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["seat_counts"][0]["players"] == 2
    assert "<table" in (tmp_path / "report.html").read_text()


def test_cli_bad_option_is_a_usage_error(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["balance", "--game", "botanik", "--bots", "random", "--games", "1", "--variant", "nonsense=1", "-o", str(tmp_path)]
    )
    assert run(args) == 2


def test_paired_option_effect_is_paired_and_seat_zero_centred() -> None:
    from hortus.balance.paired import paired_option_effect

    # planted null: changing nothing gives identical pairs, a difference of exactly 0
    same = paired_option_effect("botanik", 2, "random", 6, seed=5, change={"first_player": "0"}, batch=3)
    assert same["share_difference"] == 0.0
    assert same["points_difference"] == 0.0
    # whole batches of pairs, at most the games asked for (the sequential test may stop after
    # the first batch: identical pairs decide at once)
    assert same["pairs"] in (3, 6)


def test_botanik_first_player_flips_the_seat_advantage() -> None:
    # K-S5: first_player=1 hands the Meca pawn to seat 1, so seat 0's edge changes sign
    start = balance_report("botanik", [2], "greedy", 40, seed=7)["seat_counts"][0]["first_player_gap"]
    flipped = balance_report("botanik", [2], "greedy", 40, seed=7, options={"first_player": "1"})["seat_counts"][0][
        "first_player_gap"
    ]
    assert start * flipped < 0
