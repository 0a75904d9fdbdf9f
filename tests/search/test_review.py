"""Game review (``ReviewGame``, ``AdvisorClient.review``): one answer per decision in move
order, labels by the game's thresholds, bad records refused naming the move before any
search, seeded determinism whatever the parallelism, the deadline, and no leak: the review of
a seat's decision is the same across re-deals of what that seat cannot see."""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hortus import games
from hortus.clients import (
    AdvisorClient,
    DeadlineExceededError,
    GameRecord,
    InvalidArgumentError,
    RecordedAction,
    RecordError,
    ReviewedMove,
    ReviewSummary,
)
from hortus.cli import main
from hortus.search import Limits, analyze, settings_for
from hortus.server import ServerConfig, create_server
from servers import Servers

GAME = "botanik"
ITERATIONS = 200


def self_play(name: str, seed: int, players: int = 2, blunder_share: float = 0.3) -> GameRecord:
    """A seeded self-play game (a small search, with some random moves for mistakes). The
    search's constant is spelled out so the record stays the same game when a game's default
    changes (Botanik's 0.35 made seed 11 a game where no move loses more than 8 points)."""
    game = games.get(name)
    state = game.new_game(players=players, seed=seed)
    rng = random.Random(seed)
    moves: list[RecordedAction] = []
    while not state.is_terminal():
        if state.is_chance():
            outcomes = state.chance_outcomes()
            action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
            seat = -1
        else:
            seat = state.current_player
            if rng.random() < blunder_share:
                action = rng.choice(state.legal_actions())
            else:
                action = analyze(
                    state, Limits(iterations=30, seed=rng.getrandbits(32)), settings=settings_for(state, exploration=0.7)
                ).best.action
        moves.append(RecordedAction(action, state.action_to_string(action), seat))
        state.apply(action)
    return GameRecord(name, players, seed=seed, moves=tuple(moves))


def decisions_of(record: GameRecord) -> list[int]:
    return [k for k, m in enumerate(record.moves) if m.seat != -1]


@pytest.fixture(scope="module")
def client(serve_module: Servers) -> Iterator[AdvisorClient]:
    port = serve_module(ServerConfig(max_concurrent_searches=2)).port
    with AdvisorClient(f"127.0.0.1:{port}", timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def record() -> GameRecord:
    return self_play(GAME, seed=11)


@pytest.fixture(scope="module")
def reviewed(client: AdvisorClient, record: GameRecord) -> list[ReviewedMove | ReviewSummary]:
    return list(client.review(record, iterations=ITERATIONS, seed=4))


def test_one_answer_per_decision_in_move_order_then_the_summary(
    record: GameRecord, reviewed: list[ReviewedMove | ReviewSummary]
) -> None:
    *moves, summary = reviewed
    assert isinstance(summary, ReviewSummary)
    assert all(isinstance(m, ReviewedMove) for m in moves)
    decisions = decisions_of(record)
    assert [m.index for m in moves if isinstance(m, ReviewedMove)] == decisions
    for m in moves:
        assert isinstance(m, ReviewedMove)
        recorded = record.moves[m.index]
        assert m.seat == recorded.seat
        assert m.played.id == recorded.action and m.played.notation == recorded.notation
        assert m.best_line and m.best_line[0] == m.best
        assert not m.partial and m.iterations >= ITERATIONS
    assert summary.decisions == len(decisions)


def test_labels_follow_the_thresholds(reviewed: list[ReviewedMove | ReviewSummary]) -> None:
    *moves, summary = reviewed
    assert isinstance(summary, ReviewSummary)
    t = summary.thresholds
    assert t.unit == "win_probability" and 0 < t.inaccuracy < t.mistake < t.blunder
    labels = set()
    for m in moves:
        assert isinstance(m, ReviewedMove)
        assert m.win_probability_loss >= 0 and m.points_loss >= 0
        assert m.win_probability_loss == pytest.approx(max(0.0, m.best_win_probability - m.played_win_probability))
        if m.played.id == m.best.id:
            # The best move played loses nothing.
            assert m.label == "best" and m.win_probability_loss == 0 and m.points_loss == 0
            continue
        loss = m.win_probability_loss
        expected = (
            "blunder"
            if loss >= t.blunder
            else "mistake"
            if loss >= t.mistake
            else "inaccuracy"
            if loss >= t.inaccuracy
            else "good"
        )
        assert m.label == expected
        labels.add(m.label)
    assert {"good", "blunder"} <= labels  # the random moves of the record are caught
    # The summary counts what was streamed, per seat (forced moves apart).
    for seat in summary.seats:
        mine = [m for m in moves if isinstance(m, ReviewedMove) and m.seat == seat.seat and not m.forced]
        counts = {label: sum(m.label == label for m in mine) for label in ("best", "good", "inaccuracy", "mistake", "blunder")}
        assert (seat.best, seat.good, seat.inaccuracies, seat.mistakes, seat.blunders) == tuple(counts.values())
        assert seat.decisions == len(mine)
        assert seat.mean_win_probability_loss == pytest.approx(sum(m.win_probability_loss for m in mine) / len(mine))
        assert 0 <= seat.accuracy <= 100


def test_the_best_move_played_is_labelled_best(
    client: AdvisorClient, record: GameRecord, reviewed: list[ReviewedMove | ReviewSummary]
) -> None:
    """Playing the move the review calls best, at a decision where another was played: the
    same position and seed give the same search, and that move loses nothing."""
    changed = [m for m in reviewed if isinstance(m, ReviewedMove) and m.label in ("mistake", "blunder")]
    assert changed
    target = changed[0]
    moves = (*record.moves[: target.index], RecordedAction(target.best.id))
    again = list(
        client.review(GameRecord(record.game, record.players, seed=record.seed, moves=moves), iterations=ITERATIONS, seed=4)
    )
    last = again[-2]
    assert isinstance(last, ReviewedMove) and last.index == target.index
    assert last.label == "best" and last.win_probability_loss == 0 and last.points_loss == 0
    assert last.best == target.best


def test_deterministic_whatever_the_parallelism(record: GameRecord, reviewed: list[ReviewedMove | ReviewSummary]) -> None:
    """Same seed + iterations + 1 thread => the same review, with 1 search slot or 2."""
    server, port = create_server("127.0.0.1:0", ServerConfig(max_concurrent_searches=1))
    try:
        with AdvisorClient(f"127.0.0.1:{port}", timeout=120) as c:
            serial = list(c.review(record, iterations=ITERATIONS, seed=4))
    finally:
        server.stop(0)
    assert serial[:-1] == reviewed[:-1]
    first, second = serial[-1], reviewed[-1]
    assert isinstance(first, ReviewSummary) and isinstance(second, ReviewSummary)
    assert first.seats == second.seats


def test_an_illegal_move_names_its_index_before_any_search(client: AdvisorClient, record: GameRecord) -> None:
    k = decisions_of(record)[17]
    moves = list(record.moves)
    moves[k] = RecordedAction(10_000)
    with pytest.raises(InvalidArgumentError) as caught:
        # nothing is streamed: the whole record is checked first
        assert list(client.review(GameRecord(GAME, 2, seed=record.seed, moves=tuple(moves)), iterations=ITERATIONS)) == []
    assert caught.value.fields == (f"moves[{k}].action",)
    # a notation that is not legal there, and a chance outcome that cannot come
    moves[k] = RecordedAction(None, "no such move")
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(GameRecord(GAME, 2, seed=record.seed, moves=tuple(moves))))
    assert caught.value.fields == (f"moves[{k}].action",)
    chance = next(i for i, m in enumerate(record.moves) if m.seat == -1 and i > 3)
    moves = list(record.moves)
    moves[chance] = RecordedAction(record.moves[chance + 1].action if record.moves[chance + 1].seat != -1 else 10_000)
    state = games.get(GAME).new_game(seed=record.seed)
    for m in record.moves[:chance]:
        assert m.action is not None
        state.apply(m.action)
    if moves[chance].action in {a for a, _ in state.chance_outcomes()}:
        moves[chance] = RecordedAction(10_000)
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(GameRecord(GAME, 2, seed=record.seed, moves=tuple(moves))))
    assert caught.value.fields == (f"moves[{chance}].action",)
    # an action after the end of the game
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(GameRecord(GAME, 2, seed=record.seed, moves=(*record.moves, record.moves[-1]))))
    assert caught.value.fields == (f"moves[{len(record.moves)}].action",)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"game": "botanic"}, "game"),
        ({"players": 3}, "players"),
        ({"variant": "nope"}, "variant"),
        ({"options": {"nope": "1"}}, "options[nope]"),
        ({"position": b"HRTS\x01garbage"}, "position"),
        ({"position": b"x", "seed": None, "options": {"a": "b"}}, "options"),
    ],
)
def test_bad_setups_name_the_field(client: AdvisorClient, record: GameRecord, change: dict[str, object], field: str) -> None:
    data: dict[str, object] = {"game": GAME, "players": 2, "seed": record.seed, "moves": record.moves[:5]}
    data.update(change)
    bad = GameRecord(**data)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(bad))
    assert caught.value.fields == (field,)


def test_seed_and_position_together_and_draw_seeds_are_refused(client: AdvisorClient, record: GameRecord) -> None:
    state = games.get(GAME).new_game(seed=record.seed)
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(GameRecord(GAME, seed=1, position=state.encode())))
    assert caught.value.fields == ("position",)
    request = GameRecord(GAME, seed=record.seed, moves=record.moves[:3]).to_proto()
    request.moves[1].action.draw_seed = 5
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(_Raw(request)))  # type: ignore[arg-type]
    assert caught.value.fields == ("moves[1].action.draw_seed",)
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.review(record, iterations=10**9))
    assert caught.value.fields == ("limits.iterations",)


class _Raw:
    """A record already in its wire form (for fields GameRecord never writes)."""

    def __init__(self, request: object) -> None:
        self._request = request

    def to_proto(self) -> object:
        return self._request


def test_a_first_position_instead_of_the_seed(
    client: AdvisorClient, record: GameRecord, reviewed: list[ReviewedMove | ReviewSummary]
) -> None:
    """A record may start at any position (its bytes); an empty seed starts at the setup."""
    state = games.get(GAME).new_game(seed=record.seed)
    from_position = list(
        client.review(GameRecord(GAME, position=state.encode(), moves=record.moves), iterations=ITERATIONS, seed=4)
    )
    assert from_position[:-1] == reviewed[:-1]


def test_the_deadline_ends_the_review_after_the_moves_done(client: AdvisorClient, record: GameRecord) -> None:
    seen: list[int] = []
    with pytest.raises(DeadlineExceededError):
        for answer in client.review(record, iterations=2_000_000, timeout=1.5):
            assert isinstance(answer, ReviewedMove)  # never the summary
            seen.append(answer.index)
    assert seen == sorted(set(seen))  # each at most once, in move order
    assert set(seen) <= set(decisions_of(record))


@pytest.mark.parametrize("name", [n for n in games.names() if n != "botanik"])  # Botanik hides nothing
def test_no_leak_a_decision_is_reviewed_the_same_across_redeals(client: AdvisorClient, name: str) -> None:
    """Each seat's decision, reviewed from the position as it stood and from re-deals of what
    that seat cannot see (``from_view`` with other seeds, the kernel's ``determinize``), with
    a move that is not the best (the two-move comparison runs too): identical answers."""
    game = games.get(name)
    state = game.new_game(players=2, seed=21)
    rng = random.Random(21)
    compared = differing = 0
    step = 0
    while not state.is_terminal() and compared < 8:
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        step += 1
        if step % 13 == 0:
            seat = state.current_player
            played = rng.choice(state.legal_actions())
            worlds = [game.from_view(state.view(seat), seed=k) for k in (1, 2)]
            redealt = state.clone()
            redealt.kernel_state.determinize(seat, 3 + step)
            answers = []
            for world in [state, *worlds, redealt]:
                differing += world.encode() != state.encode()
                single = GameRecord(name, position=world.encode(), moves=(RecordedAction(played),))
                *moves, summary = client.review(single, iterations=150, seed=step)
                assert isinstance(summary, ReviewSummary)
                answers.append((moves, summary.seats))  # all but the elapsed time
            assert all(a == answers[0] for a in answers[1:]), f"{name}: seat {seat} step {step}"
            compared += 1
        state.apply(rng.choice(state.legal_actions()))
    assert compared >= 4 and differing > 0


def test_record_files_round_trip_and_bad_lines_are_named(record: GameRecord) -> None:
    assert GameRecord.from_jsonl(record.to_jsonl()) == record
    with pytest.raises(RecordError) as caught:
        GameRecord.from_jsonl(record.to_jsonl() + '{"seat": 0}\n')
    assert caught.value.line == len(record.moves) + 2
    with pytest.raises(RecordError) as caught:
        GameRecord.from_jsonl("not json\n")
    assert caught.value.line == 1


# --- hortus play --record, hortus review -----------------------------------------------------
@pytest.fixture(scope="module")
def target(serve_module: Servers) -> str:
    return f"127.0.0.1:{serve_module(ServerConfig(default_iterations=100, max_concurrent_searches=2)).port}"


def test_play_record_then_review_round_trip(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str, tmp_path: Path
) -> None:
    """A game played in the terminal (stdin scripted) is written as a record that replays to
    the same end, and ``hortus review`` prints a row per decision and the summary."""
    path = tmp_path / "game.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 5000))
    assert main(["play", GAME, "--seed", "3", "--iterations", "20", "--target", target, "--record", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Final scores:" in out and f"Game record written to {path}" in out
    record = GameRecord.load(path)
    assert record.game == GAME and record.players == 2 and record.seed == 3
    state = games.get(GAME).new_game(players=2, seed=3)
    for move in record.moves:
        assert move.action is not None and move.seat == state.current_player
        assert state.action_to_string(move.action) == move.notation
        state.apply(move.action)
    assert state.is_terminal()
    final = out.split("Final scores:")[1]
    for seat, score in enumerate(state.scores()):
        assert f"seat {seat} ({'you' if seat == 0 else 'AI'}): {score:g}" in final

    assert main(["review", str(path), "--iterations", "60", "--target", target]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if re.match(r"^\s*\d+\s+[01]\s", line)]
    assert len(rows) == len(decisions_of(record))
    assert "accuracy" in table and "Thresholds (loss in win-% points): inaccuracy 5, mistake 10, blunder 15" in table

    assert main(["review", str(path), "--iterations", "60", "--target", target, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["index"] for m in data["moves"]] == decisions_of(record)
    assert {m["label"] for m in data["moves"]} <= {"best", "good", "inaccuracy", "mistake", "blunder"}
    assert len(data["summary"]["seats"]) == 2


def test_play_record_after_quit_and_review_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str, tmp_path: Path
) -> None:
    path = tmp_path / "part.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n1\nquit\n"))
    assert main(["play", GAME, "--seed", "4", "--iterations", "20", "--target", target, "--record", str(path)]) == 0
    record = GameRecord.load(path)
    assert 2 <= len(decisions_of(record)) < 10
    capsys.readouterr()
    # an illegal move: exit 1 and the field named; a malformed file: exit 2 and the line named
    lines = path.read_text().splitlines()
    k = decisions_of(record)[1]
    lines[k + 1] = json.dumps({"seat": 0, "action": 10_000})
    path.write_text("\n".join(lines) + "\n")
    assert main(["review", str(path), "--target", target]) == 1
    assert f"moves[{k}].action" in capsys.readouterr().err
    path.write_text(lines[0] + "\n{oops\n")
    assert main(["review", str(path), "--target", target]) == 2
    assert "line 2" in capsys.readouterr().err


def test_a_solo_game_is_labelled_by_points(client: AdvisorClient) -> None:
    """Botanists solo: the win share is always 1, so the labels follow the points lost."""
    record = self_play("botanists", seed=3, players=1)
    record = GameRecord(record.game, 1, seed=record.seed, moves=record.moves[:80])
    *moves, summary = client.review(record, iterations=100, seed=1)
    assert isinstance(summary, ReviewSummary)
    t = summary.thresholds
    assert t.unit == "points" and (t.inaccuracy, t.mistake, t.blunder) == (3.0, 8.0, 15.0)
    for m in moves:
        assert isinstance(m, ReviewedMove) and m.win_probability_loss == 0
        if m.played.id != m.best.id:
            loss = m.points_loss
            assert m.label == ("blunder" if loss >= 15 else "mistake" if loss >= 8 else "inaccuracy" if loss >= 3 else "good")
    assert summary.seats[0].decisions + summary.seats[0].forced == len(moves)


def test_the_asyncio_client_reviews_too(
    client: AdvisorClient, record: GameRecord, reviewed: list[ReviewedMove | ReviewSummary]
) -> None:
    import asyncio

    from hortus.clients import AsyncAdvisorClient

    async def collect() -> list[ReviewedMove | ReviewSummary]:
        async with AsyncAdvisorClient(client.target, timeout=120) as c:
            return [a async for a in c.review(record, iterations=ITERATIONS, seed=4)]

    assert asyncio.run(collect())[:-1] == reviewed[:-1]
