"""The balance lab: figures from seeded games, the same for any jobs, and planted truths found."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from hortus.balance.cli import run
from hortus.balance.play import Change, GameRecord, GameTask, play_one, run_games
from hortus.balance.report import balance_report, quantiles, seat_report
from hortus.cli import build_parser
from hortus.games import State
from hortus.games.botanik.game import BotanikGame
from hortus.games.war_of_the_posies.components import DEFAULT_PATH, ComponentDataError

SHIPPED = DEFAULT_PATH.read_text()


def _record(index: int, scores: tuple[float, ...]) -> GameRecord:
    best = max(scores)
    winners = [s for s, v in enumerate(scores) if v == best]
    returns = tuple(1.0 / len(winners) if s in winners else 0.0 for s in range(len(scores)))
    return GameRecord((index,), index, tuple(range(len(scores))), scores, returns, 10 + index, 3, 6, "trigger", ((),) * 2, ())


def _card(text: str, name: str, **fields: str) -> str:
    """The components text with `name`'s fields replaced (a line per field; "" removes it)."""
    start = text.index(f'name = "{name}"')
    end = text.index("[[", start)
    block = text[start:end]
    for key, value in fields.items():
        block = re.sub(rf"^{key} = .*\n", "" if value == "" else f"{key} = {value}\n", block, flags=re.M)
    return text[:start] + block + text[end:]


def test_quantiles_interpolate() -> None:
    assert quantiles([0.0, 10.0], (0.1, 0.5, 0.9)) == [1.0, 5.0, 9.0]
    assert quantiles([], (0.5,)) == [0.0]


def test_seat_report_counts_rounds_and_ends() -> None:
    records = [_record(i, (10.0, 12.0) if i % 2 else (12.0, 10.0)) for i in range(10)]
    report = seat_report(2, records)
    assert report.rounds == (3.0, 3.0, 3.0) and report.rounds_counted == "rounds"
    assert report.end_share == {"trigger": 1.0, "supply": 0.0, "safety": 0.0}
    assert report.draw_share is None


class _HandicapState(State):
    """Seat 0 gets 5 points more at the end (ties shared, no tie-breaks)."""

    __slots__ = ()

    def scores(self) -> list[float]:
        points = super().scores()
        return [points[0] + 5.0, *points[1:]]

    def returns(self) -> list[float]:
        points = self.scores()
        best = [s for s, v in enumerate(points) if v == max(points)]
        return [1.0 / len(best) if s in best else 0.0 for s in range(len(points))]


class _HandicapBotanik(BotanikGame):
    def new_game(
        self, players: int = 2, seed: int | None = None, variant: str | None = None, options: Mapping[str, str] | None = None
    ) -> State:
        state = super().new_game(players, seed, variant, options)
        return _HandicapState(self, state.kernel_state, state.num_players, state.variant_code)


def test_a_handicap_for_seat_zero_is_flagged() -> None:
    # planted truth: the same games, seat 0 given 5 points: its interval leaves the fair share
    tasks = [GameTask((i,), "botanik", ("greedy",), 2, 11, i) for i in range(40)]
    fair = seat_report(2, run_games(tasks))
    rigged = seat_report(2, run_games(tasks, game=_HandicapBotanik()))
    assert rigged.seat_interval[0][0] > 0.5
    assert rigged.seat_share[0] > fair.seat_share[0]
    assert rigged.decisions == fair.decisions  # the same deals, the same play


def test_report_is_the_same_for_any_jobs() -> None:
    one = balance_report("botanists", [2, 3], "random", 4, seed=3, jobs=1)
    two = balance_report("botanists", [2, 3], "random", 4, seed=3, jobs=2)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    seats = one["seat_counts"][0]
    assert seats["games"] == 4
    assert abs(sum(seats["seat_share"]) - 1.0) < 1e-9
    assert seats["rounds_p10_p50_p90"] == [3.0, 3.0, 3.0]  # three rounds, the rule's end
    assert seats["end_share"]["trigger"] == 1.0
    assert 0.0 <= seats["draw_share_mean"] <= 1.0 and seats["draw_share_decisions"] > 0


def test_each_game_says_how_it_ended() -> None:
    expected = {"botanik": "supply", "botanists": "trigger", "botanical_lab": "trigger"}
    for game, reason in expected.items():
        record = play_one(GameTask((0,), game, ("random",), 2, 5, 0))
        assert record.end_reason == reason
    lab = play_one(GameTask((0,), "botanical_lab", ("random",), 2, 5, 0))
    assert lab.rounds is None and lab.turns > 0  # its state keeps no round count
    war = play_one(GameTask((0,), "war_of_the_posies", ("random",), 2, 5, 0))
    assert war.end_reason in ("trigger", "safety") and war.rounds is not None and 1 <= war.rounds <= 40
    assert any(war.cards)  # random seats buy cards


def test_cli_writes_json_and_html(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["balance", "--game", "botanik", "--players", "2", "--bots", "random", "--games", "4", "-o", str(tmp_path)]
    )
    assert run(args) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["seat_counts"][0]["players"] == 2
    assert report["seat_counts"][0]["end_share"]["supply"] == 1.0
    assert "<table" in (tmp_path / "report.html").read_text()


@pytest.mark.parametrize(
    "extra",
    [
        ["--variant", "nonsense=1"],
        ["--players", "3"],
        ["--ablate", "Tulip"],  # Botanik has no editable components
    ],
)
def test_cli_mistakes_are_usage_errors(tmp_path: Path, extra: list[str]) -> None:
    args = build_parser().parse_args(
        ["balance", "--game", "botanik", "--bots", "random", "--games", "1", *extra, "-o", str(tmp_path)]
    )
    assert run(args) == 2
    assert not (tmp_path / "report.json").exists()


def test_a_bad_components_file_names_the_file_and_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "edited.toml"
    bad.write_text(_card(SHIPPED, "Tulip", cost='"four"'))
    args = build_parser().parse_args(
        [
            "balance",
            "--game",
            "war_of_the_posies",
            "--bots",
            "random",
            "--games",
            "1",
            "--components",
            str(bad),
            "-o",
            str(tmp_path),
        ]
    )
    assert run(args) == 2
    message = capsys.readouterr().err
    assert str(bad) in message and "cards[" in message and "(Tulip).cost" in message
    with pytest.raises(ComponentDataError, match="missing.toml"):
        Change(components=str(tmp_path / "missing.toml")).game("war_of_the_posies")
    with pytest.raises(ValueError, match="not a card of the supply"):
        Change(remove=("Red Starter",)).game("war_of_the_posies")


def test_a_variant_changing_nothing_gives_exactly_zero() -> None:
    # planted null: the default option's value given as a change replays identical games
    report = balance_report("botanik", [2], "random", 6, seed=5, variant={"first_player": "0"}, seat_reports=False)
    (effect,) = report["effects"]
    assert effect["share_difference"] == 0.0 and effect["points_difference"] == 0.0
    assert effect["pairs"] in range(1, 7) and effect["change"] == {"options": {"first_player": "0"}}


def test_botanik_first_player_flips_the_seat_advantage() -> None:
    # K-S5: first_player=1 hands the Meca pawn to seat 1, so seat 0's edge changes sign
    start = balance_report("botanik", [2], "greedy", 40, seed=7)["seat_counts"][0]["first_player_gap"]
    flipped = balance_report("botanik", [2], "greedy", 40, seed=7, options={"first_player": "1"})["seat_counts"][0][
        "first_player_gap"
    ]
    assert start * flipped < 0


def test_a_worthless_card_has_no_effect(tmp_path: Path) -> None:
    # planted null: Tulip made a dead card (no symbol, no points, no text): removing it moves
    # nothing for the seats that bought it
    fixture = tmp_path / "worthless.toml"
    fixture.write_text(_card(SHIPPED, "Tulip", points="0", symbol="", play="", plant="", cost="1"))
    report = balance_report(
        "war_of_the_posies", [2], "random", 60, seed=2, base_components=str(fixture), ablate=["Tulip"], seat_reports=False
    )
    (effect,) = report["effects"]
    assert effect["samples"] >= 10
    low, high = effect["share_difference_interval95"]
    assert low <= 0.0 <= high
    assert report["components"] == "worthless.toml"


def test_a_rigged_card_is_found_and_ranked_first(tmp_path: Path) -> None:
    # planted truth: Tulip made an Expedition that costs nothing and is worth 20 points: the
    # ranking of every card of the supply puts it first, its interval above 0
    fixture = tmp_path / "rigged.toml"
    fixture.write_text(_card(SHIPPED, "Tulip", points="20", cost="0", copies="1", symbol="", plant=""))
    report = balance_report(
        "war_of_the_posies", [2], "random", 30, seed=4, base_components=str(fixture), cards=["all"], seat_reports=False
    )
    ranking = report["card_ranking"]
    assert len(ranking) == 39 and [r["rank"] for r in ranking] == list(range(1, 40))
    top = ranking[0]
    assert top["card"] == "Tulip"
    assert top["points_difference_interval95"][0] > 0.0 and top["share_difference"] > 0.0


def test_a_components_file_equal_to_the_shipped_one_changes_nothing(tmp_path: Path) -> None:
    # planted null: the same card data from another file replays the very same games
    copy = tmp_path / "copy.toml"
    copy.write_text(SHIPPED)
    report = balance_report("war_of_the_posies", [2], "random", 4, seed=8, components=str(copy), seat_reports=False)
    (effect,) = report["effects"]
    assert effect["change"] == {"components": "copy.toml"} and effect["pairs"] == 4
    assert effect["share_difference"] == 0.0 and effect["points_difference"] == 0.0


def test_the_shipped_tables_come_back_after_a_changed_game(tmp_path: Path) -> None:
    # a changed file installs its tables in the kernel; the next shipped game installs its own
    rigged = tmp_path / "rigged.toml"
    rigged.write_text(_card(SHIPPED, "Violet", points="9", cost="0"))
    task = GameTask((0,), "war_of_the_posies", ("random",), 2, 3, 0)
    before = play_one(task)
    changed = play_one(GameTask((0,), "war_of_the_posies", ("random",), 2, 3, 0, Change(components=str(rigged))))
    assert changed != before
    assert play_one(task) == before
