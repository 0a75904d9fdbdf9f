"""The ``hortus`` command line through ``main([...])``, stdin driven line by line."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from hortus import games
from hortus.clients import AdvisorClient, Position
from hortus.cli import main
from hortus.cli.play import EXACT_MARK
from hortus.search.arena import play_match, wilson_interval
from hortus.server import ServerConfig, create_server
from servers import Servers

GAME = "botanik"


@pytest.fixture(scope="module")
def target(serve_module: Servers) -> str:
    return f"127.0.0.1:{serve_module(ServerConfig(default_iterations=100)).port}"


def feed(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


# --- play ------------------------------------------------------------------------------------
def test_play_to_the_end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    feed(monkeypatch, "1\n" * 5000)
    assert main(["play", GAME, "--seed", "3", "--iterations", "30"]) == 0
    out = capsys.readouterr().out
    assert "you are seat 0, seed 3" in out
    assert "You play:" in out and "AI seat 1 (AI) plays:" in out and "Chance:" in out
    assert "Game over." in out and "Final scores:" in out
    assert "seat 0 (you):" in out and "seat 1 (AI):" in out
    assert "Winner:" in out or "Tie between" in out


def test_play_is_reproducible(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str) -> None:
    outputs = []
    for _ in range(2):
        feed(monkeypatch, "2\n" * 5000)
        assert main(["play", GAME, "--seed", "8", "--seat", "1", "--iterations", "20", "--target", target]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert "you are seat 1" in outputs[0] and "Final scores:" in outputs[0]


def test_play_continues_the_ais_own_turn(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Botanical Lab's turns are several decisions long: when the AI moves again in the same
    turn, play passes its previous suggestion's token (SuggestMove continue_from), each once;
    a token the server no longer keeps means a fresh search, and the game goes on."""
    calls: list[str] = []
    original = AdvisorClient.suggest_move

    def spy(self: AdvisorClient, position: Position, **kwargs: Any) -> Any:
        calls.append(kwargs.get("continue_from", ""))
        return original(self, position, **kwargs)

    monkeypatch.setattr(AdvisorClient, "suggest_move", spy)
    argv = ["play", "botanical_lab", "--seed", "4", "--iterations", "40", "--target", target]
    feed(monkeypatch, "1\n" * 40)  # the human's first 40 decisions, then the input ends
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "AI seat 1 (AI) plays:" in out and "Bye." in out
    tokens = [c for c in calls if c]
    assert len(tokens) >= 5 and len(set(tokens)) == len(tokens), (len(calls), len(tokens))

    # the server forgot every token (as after its idle expiry): each continuation is refused
    # NOT_FOUND and asked afresh, and the game is the one played without continuations
    forgotten: list[str] = []

    def forgetful(self: AdvisorClient, position: Position, **kwargs: Any) -> Any:
        if kwargs.get("continue_from"):
            forgotten.append(kwargs["continue_from"])
            kwargs["continue_from"] = "0000.forgotten"  # NOT_FOUND (another server process)
        return original(self, position, **kwargs)

    def never(self: AdvisorClient, position: Position, **kwargs: Any) -> Any:
        return original(self, position, **{**kwargs, "continue_from": ""})

    games_played = []
    for suggest in (forgetful, never):
        monkeypatch.setattr(AdvisorClient, "suggest_move", suggest)
        feed(monkeypatch, "1\n" * 40)
        assert main(argv) == 0
        games_played.append(capsys.readouterr().out)
    assert forgotten and games_played[0] == games_played[1]


def test_play_by_notation_hints_and_quit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    state = games.get(GAME).new_game(seed=5)
    notation = state.action_to_string(state.legal_actions()[-1])
    feed(monkeypatch, f"\n?\n999\nnonsense\n{notation.upper()}\nquit\n")
    assert main(["play", GAME, "--seed", "5", "--iterations", "20", "--target", target]) == 0
    out = capsys.readouterr().out
    assert "principal variation" in out  # the hints table
    assert "there is no move 999 here" in out
    assert "'nonsense' is not a legal move here" in out
    assert f"You play: {notation}" in out
    assert out.rstrip().endswith("Bye.")
    assert "Final scores" not in out


def test_play_hints_are_numbered_as_the_move_list(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """A hint's number is its move's number in the list: typing it plays the hinted move."""
    feed(monkeypatch, "?\nquit\n")
    assert main(["play", GAME, "--seed", "5", "--iterations", "200", "--target", target]) == 0
    out = capsys.readouterr().out
    listed = dict(re.findall(r"^\s+(\d+)\. (.+)$", out.split("> ")[0], flags=re.M))
    table = out.split("principal variation", 1)[1].split("Why:")[0].strip().splitlines()
    assert table
    for row in table:
        cells = [c for c in re.split(r"\s{2,}", row.strip()) if c]
        number, move = cells[0], cells[1]
        assert listed[number] == move


def _hint_tables(out: str) -> list[list[str]]:
    """The rows of every hints table printed, in order."""
    return [
        block.split("\n", 1)[1].split("Why:")[0].split("> ")[0].split("(deeper")[0].strip().splitlines()
        for block in out.split("principal variation")[1:]
    ]


def _visits(table: list[str]) -> int:
    return sum(int([c for c in re.split(r"\s{2,}", row.strip()) if c][2]) for row in table)


def test_play_hint_asked_again_goes_deeper(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """'?' at the same position continues the previous hint's search (Analyze continue_from):
    200 iterations, then 200 more on the same trees, then 200 more; each with the first ask's
    seed and threads. A new position asks afresh."""
    calls: list[str] = []
    original = AdvisorClient.analyze

    def spy(self: AdvisorClient, position: Position, **kwargs: Any) -> Any:
        calls.append(kwargs.get("continue_from", ""))
        return original(self, position, **kwargs)

    monkeypatch.setattr(AdvisorClient, "analyze", spy)
    feed(monkeypatch, "?\n?\nhint\n1\n" + "1\n" * 3 + "?\nquit\n")
    assert main(["play", GAME, "--seed", "5", "--iterations", "200", "--target", target]) == 0
    out = capsys.readouterr().out
    assert "(deeper: 400 iterations in all)" in out and "(deeper: 600 iterations in all)" in out
    assert out.count("(deeper:") == 2  # the first ask and the next position's are fresh
    tables = _hint_tables(out)
    assert len(tables) == 4
    # the same trees grown: the shown moves' visits (the top 5) only add up to more
    assert _visits(tables[0]) < _visits(tables[1]) < _visits(tables[2])
    assert _visits(tables[0]) <= 200 and _visits(tables[2]) <= 600
    assert calls[0] == "" and calls[1] and calls[2] and calls[1] != calls[2] and calls[3] == ""


def test_play_hint_with_a_forgotten_token_is_fresh(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """A token the server no longer keeps (expired, dropped, another process) is NOT_FOUND:
    '?' asks afresh without a word, and the hint is the first one again (same seed)."""
    forgotten: list[str] = []
    original = AdvisorClient.analyze

    def forgetful(self: AdvisorClient, position: Position, **kwargs: Any) -> Any:
        if kwargs.get("continue_from"):
            forgotten.append(kwargs["continue_from"])
            kwargs["continue_from"] = "0000.forgotten"  # NOT_FOUND (another server process)
        return original(self, position, **kwargs)

    monkeypatch.setattr(AdvisorClient, "analyze", forgetful)
    feed(monkeypatch, "?\n?\nquit\n")
    assert main(["play", GAME, "--seed", "5", "--iterations", "200", "--target", target]) == 0
    captured = capsys.readouterr()
    assert forgotten and "(deeper" not in captured.out and not captured.err
    first, second = _hint_tables(captured.out)
    assert first == second and _visits(first) <= 200


def test_play_hints_when_the_server_keeps_no_trees(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--continue-trees 0: the token is empty, so every '?' is a fresh hint."""
    server, port = create_server("127.0.0.1:0", ServerConfig(default_iterations=100, continue_trees=0))
    try:
        feed(monkeypatch, "?\n?\nquit\n")
        assert main(["play", GAME, "--seed", "5", "--target", f"127.0.0.1:{port}"]) == 0
    finally:
        server.stop(0)
    captured = capsys.readouterr()
    assert "(deeper" not in captured.out and not captured.err
    first, second = _hint_tables(captured.out)
    assert first == second and _visits(first) <= 100


def test_play_help_and_reasons(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str) -> None:
    state = games.get(GAME).new_game(seed=5)
    notation = state.action_to_string(state.legal_actions()[0])
    typo = notation[:-1] + ("x" if notation[-1] != "x" else "y")
    feed(monkeypatch, f"help\n{typo}\nquit\n")
    assert main(["play", GAME, "--seed", "5", "--iterations", "20", "--target", target]) == 0
    out = capsys.readouterr().out
    assert "Commands:" in out and "board" in out
    assert "did you mean" in out and repr(notation) in out.split("did you mean", 1)[1].splitlines()[0]


def test_play_pictures_the_board_only_when_the_human_decides(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Chance draws and AI moves print one line each, not the whole board again."""
    feed(monkeypatch, "1\n" * 5000)
    assert main(["play", GAME, "--seed", "3", "--iterations", "10", "--target", target]) == 0
    out = capsys.readouterr().out
    pictures = out.count("Registry")  # one header line per Botanik picture
    assert pictures <= out.count("Your move") + out.count("exactly one legal move") + 1
    assert out.count("Chance:") > pictures


@pytest.mark.parametrize("manual", [False, True])
def test_play_never_names_a_draw_into_the_ai_hand(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str, manual: bool
) -> None:
    """War of the Posies deals cards into hands: a draw into the AI's hand is never named,
    also with --manual-chance and an empty line (a draw at random)."""
    feed(monkeypatch, ("\n" if manual else "") + "1\n\n" * 400)
    argv = ["play", "war_of_the_posies", "--seed", "2", "--seat", "0", "--iterations", "10", "--target", target]
    assert main(argv + (["--manual-chance"] if manual else [])) == 0
    out = capsys.readouterr().out
    # (a draw seat 0 can deduce, from a pile known to hold one kind of card, may be named:
    # tests/test_conformance.py checks that what is listed depends on seat 0's view alone)
    assert out.count("Chance: an outcome hidden from you") >= 3
    if manual:
        listings = out.split("Chance outcomes:")[1:]
        assert all(
            "seat 1 draws" not in block.split("outcome (")[0] or "hidden from you" not in block.split("outcome (")[0]
            for block in listings
        )


def test_play_stops_at_end_of_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str) -> None:
    feed(monkeypatch, "")
    assert main(["play", GAME, "--seed", "1", "--target", target, "--iterations", "10"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("Bye.")


def test_play_manual_chance(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str) -> None:
    # seat 1 is the human; the AI (seat 0) moves first, then chance outcomes are typed (or
    # left empty to draw them) until the input runs out
    feed(monkeypatch, "1\n" * 40)
    assert main(["play", GAME, "--seed", "2", "--seat", "1", "--manual-chance", "--iterations", "10", "--target", target]) == 0
    out = capsys.readouterr().out
    assert "Chance outcomes:" in out and "Chance: " in out


def test_play_bad_seat(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str) -> None:
    feed(monkeypatch, "")
    assert main(["play", GAME, "--seat", "5", "--target", target]) == 2
    assert "--seat" in capsys.readouterr().err


def test_unknown_game_is_reported(capsys: pytest.CaptureFixture[str], target: str) -> None:
    assert main(["play", "chess", "--target", target]) == 1
    err = capsys.readouterr().err
    assert "invalid_argument" in err and "game:" in err


# --- suggest / hints -------------------------------------------------------------------------
def test_suggest_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suggest", "--game", GAME, "--seed", "4", "--iterations", "200", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    state = games.get(GAME).new_game(seed=4)
    assert data["game"] == GAME and bytes.fromhex(data["position"]) == state.encode()
    assert data["action"]["id"] in state.legal_actions()
    assert data["turn"][0] == data["action"]
    assert data["analysis"]["iterations"] == 200 and data["analysis"]["moves"]


def test_suggest_text(capsys: pytest.CaptureFixture[str], target: str) -> None:
    assert main(["suggest", "--game", GAME, "--seed", "4", "--iterations", "100", "--target", target]) == 0
    out = capsys.readouterr().out
    assert "Seat 0 to move. Suggested:" in out and "Win probability" in out and "100 iterations" in out


def test_hints_json_from_position_sources(capsys: pytest.CaptureFixture[str], target: str, tmp_path: Path) -> None:
    state = games.get(GAME).new_game(seed=6)
    raw = tmp_path / "position.bin"
    raw.write_bytes(state.encode())
    hex_file = tmp_path / "position.hex"
    hex_file.write_text(state.encode().hex() + "\n")
    common = ["hints", "--game", GAME, "--iterations", "150", "--max-moves", "4", "--json", "--target", target]
    results = []
    for source in (
        ["--position-file", str(raw)],
        ["--position-file", str(hex_file)],
        ["--position-hex", state.encode().hex()],
        ["--seed", "6"],
    ):
        assert main([*common, *source]) == 0
        results.append(json.loads(capsys.readouterr().out))
    analysis = results[0]["analysis"]
    assert analysis["seat"] == 0 and analysis["iterations"] == 150
    assert len(analysis["moves"]) == 4
    visits = [m["visits"] for m in analysis["moves"]]
    assert visits == sorted(visits, reverse=True)
    move = analysis["moves"][0]
    assert set(move) == {
        "action",
        "notation",
        "visits",
        "win_probability",
        "expected_scores",
        "principal_variation",
        "reason",
        "value_spread",
        "draw_share",
        "draw_spread",
        "draw_points_spread",
        "exact",
    }
    assert move["reason"] and move["draw_share"] is not None  # hints measure the draw
    assert move["exact"] is False  # an opening is searched, not solved
    for other in results[1:]:
        other["analysis"]["elapsed_ms"] = analysis["elapsed_ms"]
        assert other == results[0]  # same position and search seed: the same analysis


def test_hints_table(capsys: pytest.CaptureFixture[str], target: str) -> None:
    assert main(["hints", "--game", GAME, "--seed", "2", "--iterations", "100", "--max-moves", "3", "--target", target]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("#"))
    for column in ("move", "visits", "win %", "exp. scores", "principal variation"):
        assert column in header
    rows = out.split(header, 1)[1].strip().splitlines()
    assert [r.split()[0] for r in rows[:3]] == ["1", "2", "3"]
    assert f"{EXACT_MARK} exact" not in out  # the opening is searched, not solved


def test_hints_table_marks_exact_values(capsys: pytest.CaptureFixture[str], target: str) -> None:
    """Two decisions before the end the rest of a Botanik game is solved: the best move's
    win % is marked exact, and the table says what the mark means."""
    rng = random.Random(2)
    state = games.get(GAME).new_game(players=2, seed=2)
    decisions = []
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        decisions.append(state.encode())
        state.apply(rng.choice(state.legal_actions()))
    args = ["hints", "--game", GAME, "--position-hex", decisions[-2].hex(), "--iterations", "1000", "--target", target]
    assert main(args) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("#"))
    rows = [r for r in out.split(header, 1)[1].splitlines() if r.lstrip()[:1].isdigit()]
    win = header.index("win %") + len("win %")  # the column is right-aligned
    assert rows and rows[0][:win].endswith(EXACT_MARK)
    assert f"{EXACT_MARK} exact" in out


def test_bad_positions(capsys: pytest.CaptureFixture[str], target: str, tmp_path: Path) -> None:
    assert main(["hints", "--game", GAME, "--position-hex", "zz", "--target", target]) == 2
    assert "--position-hex" in capsys.readouterr().err
    assert main(["suggest", "--game", GAME, "--position-hex", "00ff00", "--target", target]) == 1
    assert "position" in capsys.readouterr().err
    assert main(["suggest", "--game", GAME, "--position-file", str(tmp_path / "missing"), "--target", target]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_games(capsys: pytest.CaptureFixture[str], target: str) -> None:
    assert main(["games", "--json", "--target", target]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert GAME in [g["name"] for g in listed]


# --- arena -----------------------------------------------------------------------------------
def test_arena_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["arena", "--game", GAME, "--bots", "random", "random", "--games", "2", "--seed", "1", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["games"] == 2 and data["bots"] == ["random", "random"]
    stats = data["stats"]
    assert [s["label"] for s in stats] == ["random#1", "random#2"]
    assert sum(s["games"] for s in stats) == 4  # two seats per game
    assert sum(s["score_rate"] * s["games"] for s in stats) == pytest.approx(2.0)
    for s in stats:
        assert s["wins"] + s["draws"] + s["losses"] == s["games"] == 2
        low, high = s["interval95"]
        assert 0.0 <= low <= s["score_rate"] <= high <= 1.0
    assert [r["seats"] for r in data["records"]] == [[0, 1], [1, 0]]  # seats alternate
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == data  # seeded: reproducible


def test_arena_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--game", GAME, "--bots", "greedy", "random", "--games", "2", "--seed", "3", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "random" in out and "95% interval" in out and "score rate by seat" in out


def test_arena_bad_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--game", GAME, "--bots", "wizard", "random", "--games", "1"]) == 2
    assert "unknown bot" in capsys.readouterr().err


def test_play_match_is_independent_of_jobs() -> None:
    one = play_match(GAME, ["random", "mcts:20"], 3, seed=5, jobs=1)
    two = play_match(GAME, ["random", "mcts:20"], 3, seed=5, jobs=2)
    assert one == two
    assert one.stats[0].games == one.stats[1].games == 3


def test_wilson_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-3) and high == pytest.approx(0.7634, abs=1e-3)
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == pytest.approx(0.7225, abs=1e-3)


@pytest.mark.parametrize("command", [[], ["serve"], ["play"], ["suggest"], ["hints"], ["games"], ["arena"]])
def test_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: hortus" in capsys.readouterr().out


def test_arena_round_robin_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["arena", "--game", GAME, "--bots", "random", "greedy", "mcts:20", "--games", "2", "--round-robin", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["elo"]) == {"random", "greedy", "mcts:20"} and data["elo"]["random"] == 0.0
    assert len(data["matches"]) == 3


def test_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--game", GAME, "--playouts", "20", "--iterations", "100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["game"] == GAME
    assert rows[0]["random_decisions_per_s"] > 0 and rows[0]["ismcts_iterations_per_s"] > 0


def test_review_table_says_which_labels_rest_on_exact_values() -> None:
    from hortus.cli.play import _review_rows
    from hortus.clients import Action
    from hortus.clients.record import ReviewedMove

    def reviewed(exact: bool) -> ReviewedMove:
        a, b = Action(1, "a"), Action(2, "b")
        return ReviewedMove(3, 0, a, b, (b,), 1.0, 0.5, 4.0, 2.0, 0.5, 2.0, "blunder", False, False, 100, exact)

    solved, searched = _review_rows([reviewed(True), reviewed(False)])[1:]
    assert solved.endswith("blunder?? (exact)")
    assert searched.endswith("blunder??")
