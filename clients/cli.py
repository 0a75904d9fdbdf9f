"""The ``hortus`` command line: a real frontend of the advisor service.

``play``, ``suggest``, ``hints`` and ``games`` talk gRPC to ``--target``, or to an embedded
server started on a free local port when no target is given; ``serve`` and ``arena`` import the
engine lazily, so importing this module stays thin (grpc, protobuf, ``hortus.v1``, stdlib).

    hortus serve [--address 127.0.0.1:50051] [--workers N] [--tls-cert C --tls-key K] [--max-iterations N ...]
    hortus play botanik [--players 2] [--seat 0] [--seed N] [--iterations N | --time-ms MS]
    hortus suggest --game botanik --seed 1 [--json]
    hortus hints --game botanik --position-hex 4852... [--max-moves 5] [--json]
    hortus play botanik --record game.jsonl; hortus review game.jsonl [--iterations 2000] [--json]
    hortus evaluate positions.jsonl -o results.jsonl [--iterations N] [--streams 2]
    hortus arena --game botanik --bots mcts:200 random --games 20 --seed 1 [--jobs 2] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import random
import string
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hortus.clients.client import ActionLike, AdvisorClient
from hortus.clients.errors import AdvisorError, InvalidArgumentError, NotFoundError
from hortus.clients.record import GameRecord, RecordError, ReviewedMove, ReviewSummary, record_moves
from hortus.clients.types import Action, Analysis, AnalysisUpdate, ChanceDraw, LegalActions, Position, PositionInfo, Suggestion

if TYPE_CHECKING:  # only for annotations: the engine is imported lazily
    from hortus.search.arena import MatchResult

__all__ = ["build_parser", "main"]

QUIT_WORDS = frozenset({"q", "quit", "exit"})
HINT_WORDS = frozenset({"?", "hint", "hints"})


class CliError(Exception):
    """A usage problem found after parsing (bad file, bad option...): exit status 2."""


# --- output helpers --------------------------------------------------------------------------
def _out() -> TextIO:
    return sys.stdout


def _say(*parts: object) -> None:
    print(*parts, file=_out(), flush=True)


def _read_line(prompt: str) -> str | None:
    """One line of standard input (read line by line, so a pipe can drive a game), or None at
    end of input."""
    out = _out()
    out.write(prompt)
    out.flush()
    line = sys.stdin.readline()
    if not line:
        out.write("\n")
        return None
    return line.strip()


def _pct(value: float) -> str:
    return f"{100.0 * value:.1f}%"


def _scores(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


def _json(data: Any) -> None:
    _say(json.dumps(data, indent=2, sort_keys=False))


def _normalize(text: str) -> str:
    return " ".join(text.lower().split())


# --- connection ------------------------------------------------------------------------------
@contextlib.contextmanager
def _advisor(target: str | None, timeout: float | None) -> Iterator[AdvisorClient]:
    """A client of `target`, or of an embedded server on a free local port."""
    if target:
        with AdvisorClient(target, timeout) as client:
            yield client
        return
    from hortus.server import create_server  # lazy: the engine loads only when embedded

    server, port = create_server("127.0.0.1:0")
    try:
        with AdvisorClient(f"127.0.0.1:{port}", timeout) as client:
            yield client
    finally:
        server.stop(None)


def _parse_options(items: Sequence[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--option expects NAME=VALUE, not {item!r}")
        options[name.strip()] = value.strip()
    return options


# --- play ------------------------------------------------------------------------------------
PLAY_HELP = """Commands:
  NUMBER or NOTATION  play that move (the number of the move list; hints use the same numbers)
  ? / hint            ranked hints for this position (again: the same search, deeper)
  board               show the position again
  moves               show the move list again
  help                this text
  quit                leave the game"""


def _match(text: str, actions: Sequence[Action]) -> Action | None:
    """The action a typed line picks: a 1-based number or a notation."""
    if text.isdigit():
        n = int(text)
        return actions[n - 1] if 1 <= n <= len(actions) else None
    wanted = _normalize(text)
    for action in actions:
        if _normalize(action.notation) == wanted:
            return action
    return None


def _why_not(text: str, actions: Sequence[Action]) -> str:
    """Why a typed line picks no move, and what it may have meant."""
    if text.isdigit():
        return f"there is no move {text} here: type 1-{len(actions)}, a notation, or 'help'"
    close = difflib.get_close_matches(_normalize(text), [_normalize(a.notation) for a in actions], n=3, cutoff=0.5)
    by_normal = {_normalize(a.notation): a for a in actions}
    hint = "; did you mean " + " or ".join(repr(by_normal[c].notation) for c in close) if close else ""
    return f"{text!r} is not a legal move here{hint} (type 1-{len(actions)}, a notation, or 'help')"


def _print_actions(actions: Sequence[Action]) -> None:
    width = len(str(len(actions)))
    for i, action in enumerate(actions, 1):
        _say(f"  {i:>{width}}. {action.notation}")


def _hints_table(analysis: Analysis, numbers: Mapping[int, int] | None = None) -> list[str]:
    """The ranked moves as text rows: move number (as in the move list when `numbers` maps
    action ids to it, else the rank), move, visits, win %, expected scores, PV; then each
    move's reason."""
    def number(rank: int, action: int) -> str:
        return str(numbers[action]) if numbers is not None and action in numbers else str(rank)

    headers = ["#" if numbers is None else "move #", "move", "visits", "win %", "exp. scores", "principal variation"]
    rows = []
    for i, m in enumerate(analysis.moves, 1):
        rows.append(
            [
                number(i, m.action),
                m.notation,
                str(m.visits),
                f"{100.0 * m.win_probability:.1f}",
                _scores(m.expected_scores),
                " -> ".join(a.notation for a in m.principal_variation),
            ]
        )
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    right = {0, 2, 3}

    def fmt(row: Sequence[str]) -> str:
        cells = [cell.rjust(widths[c]) if c in right else cell.ljust(widths[c]) for c, cell in enumerate(row)]
        return "  ".join(cells).rstrip()

    reasons = [f"  {number(i, m.action)}. {m.notation}: {m.reason}" for i, m in enumerate(analysis.moves, 1) if m.reason]
    return [fmt(headers), *(fmt(r) for r in rows), *(["Why:", *reasons] if reasons else [])]


def _picture(info: PositionInfo, seat: int) -> str:
    """What `seat` sees (its own hand too); the public picture for chance or the end."""
    if 0 <= seat < len(info.seat_rendered):
        return info.seat_rendered[seat]
    return info.rendered


def _analysis_summary(analysis: Analysis) -> str:
    flag = " (partial)" if analysis.partial else ""
    return f"{analysis.iterations} iterations in {analysis.elapsed_ms:.0f} ms, {analysis.nodes} nodes{flag}"


def _final(info: PositionInfo, labels: Sequence[str]) -> None:
    _say("Game over.")
    _say("Final scores:")
    for seat, score in enumerate(info.scores):
        _say(f"  seat {seat} ({labels[seat]}): {score:g}")
    if info.returns:
        best = max(info.returns)
        winners = [s for s, v in enumerate(info.returns) if v == best and v > 0]
        if len(winners) == 1:
            _say(f"Winner: seat {winners[0]} ({labels[winners[0]]})")
        elif winners:
            _say("Tie between " + ", ".join(f"seat {s} ({labels[s]})" for s in winners))


def _cmd_play(args: argparse.Namespace) -> int:
    """A game against the AI. Everything printed is what the human's seat may know: the
    position is asked for that seat, chance outcomes it cannot see are drawn by the server
    and never named, and another seat's options are never listed."""
    options = _parse_options(args.option)
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    transcript = _Transcript()
    try:
        return _play(args, options, seed, transcript)
    finally:
        # --record: the game so far, also after 'quit' (a review of part of a game is useful)
        if args.record and transcript.seats:
            GameRecord(
                args.game, transcript.seats, args.variant, options, seed, moves=record_moves(transcript.taken)
            ).save(args.record)
            _say(f"Game record written to {args.record} (review it with: hortus review {args.record})")


class _Transcript:
    """What ``play --record`` writes: the seat count and every action taken (seat, or -1 for a
    chance outcome, with the action), chance outcomes the human could not see included."""

    def __init__(self) -> None:
        self.seats = 0
        self.taken: list[tuple[int, Action]] = []


def _play(args: argparse.Namespace, options: dict[str, str], seed: int, transcript: _Transcript) -> int:
    rng = random.Random(seed)
    taken = transcript.taken
    with _advisor(args.target, args.timeout) as client:
        info = client.new_game(args.game, args.players, seed=seed, variant=args.variant, options=options)
        seats = len(info.scores)
        if not 0 <= args.seat < seats:
            raise CliError(f"--seat must be in 0..{seats - 1}")
        transcript.seats = seats
        labels = ["you" if s == args.seat else "AI" for s in range(seats)]
        _say(f"hortus: {args.game}, {seats} players, you are seat {args.seat}, seed {seed}")
        _say("Type a move's number or notation; '?' for hints, 'help' for commands, 'quit' to leave.")
        position = info.position
        shown: Position | None = None   # the position last pictured
        # The AI's own turn (SuggestMove continue_from): the position its last move led to and
        # the token that continues that search there, when the move led straight to its next
        # decision; used (once) only if the AI decides at exactly that position.
        turn: tuple[Position, str] | None = None
        while True:
            legal = client.legal_actions(position, for_seat=args.seat)
            if legal.terminal:
                break
            if legal.is_chance:
                outcome = _choose_chance(legal, rng, args.manual_chance)
                if outcome is None:
                    _say("Bye.")
                    return 0
                try:
                    info = client.apply_actions(position, [outcome])
                except InvalidArgumentError as error:
                    # At a physical table an outcome typed in may contradict what the
                    # service dealt where the seat cannot see: say so, and ask again.
                    _say(f"that outcome cannot happen in this position: {error.message}")
                    continue
                drawn = info.applied[-1] if info.applied else None
                if drawn is not None:
                    taken.append((-1, drawn))
                visible = {o.action.id for o in legal.chance_outcomes}
                # A draw the human's seat cannot see (into an AI's hand) is never named.
                _say(f"Chance: {drawn.notation}" if drawn is not None and drawn.id in visible
                     else "Chance: an outcome hidden from you")
                position = info.position
                continue
            seat = legal.current_player
            who = f"seat {seat} ({labels[seat]})"
            if seat == args.seat:
                if shown != position:
                    _say(_picture(info, args.seat))
                    shown = position
                if len(legal.actions) == 1:
                    action = legal.actions[0]
                    _say(f"You have exactly one legal move: {action.notation} (played automatically)")
                else:
                    chosen = _ask_human(client, position, legal, args, info)
                    if chosen is None:
                        _say("Bye.")
                        return 0
                    action = chosen
                    _say(f"You play: {action.notation}")
            else:
                continue_from = turn[1] if turn is not None and turn[0] == position else ""
                suggestion = _suggest_in_turn(client, position, args, rng.getrandbits(63), continue_from)
                action = suggestion.action
                best = suggestion.analysis.best
                _say(f"AI {who} plays: {action.notation} (win {_pct(best.win_probability)})")
            info = client.apply_actions(position, [action.id])
            taken.append((seat, action))
            turn = None
            if seat != args.seat and suggestion.continuation:
                turn = (info.position, suggestion.continuation)
            position = info.position
        _say(_picture(info, args.seat))
        _final(info, labels)
    return 0


def _suggest_in_turn(
    client: AdvisorClient, position: Position, args: argparse.Namespace, seed: int, continue_from: str
) -> Suggestion:
    """The AI's move; `continue_from` (its previous suggestion's token, when it moves again in
    the same turn) continues that search. A token the server no longer keeps (expired, dropped
    for room, another server process) means a fresh search."""
    def ask(token: str) -> Suggestion:
        return client.suggest_move(
            position, iterations=args.iterations, time_ms=args.time_ms, seed=seed, threads=args.threads,
            continue_from=token,
        )

    if not continue_from:
        return ask("")
    try:
        return ask(continue_from)
    except NotFoundError as error:
        if error.field != "continue_from":
            raise
        return ask("")


def _choose_chance(legal: LegalActions, rng: random.Random, manual: bool) -> ActionLike | None:
    """The outcome of a chance node: drawn by the server (seeded by `rng`), or with
    `manual` typed in by the person at the table from the outcomes their seat can see."""
    draw = ChanceDraw(rng.getrandbits(63))
    if not manual or not legal.chance_outcomes:
        return draw
    outcomes = [o.action for o in legal.chance_outcomes]
    _say("Chance outcomes:")
    width = len(str(len(outcomes)))
    for i, o in enumerate(legal.chance_outcomes, 1):
        _say(f"  {i:>{width}}. {o.action.notation}  ({_pct(o.probability)})")
    if legal.hidden_probability > 0:
        _say(f"  (and outcomes hidden from you, {_pct(legal.hidden_probability)} in all)")
    while True:
        line = _read_line("outcome (number or notation, empty = draw at random)> ")
        if line is None or line.lower() in QUIT_WORDS:
            return None
        if not line:
            return draw
        picked = _match(line, outcomes)
        if picked is not None:
            return picked
        _say(f"not an outcome: type 1-{len(outcomes)}, a notation, or nothing to draw at random")


def _ask_human(
    client: AdvisorClient, position: Position, legal: LegalActions, args: argparse.Namespace, info: PositionInfo
) -> Action | None:
    _say(f"Your move (seat {legal.current_player}):")
    _print_actions(legal.actions)
    numbers = {a.id: i for i, a in enumerate(legal.actions, 1)}
    # The token of this position's last hint (Analyze continue_from): '?' again goes on with
    # that search. It lives only as long as this position: a new position asks afresh.
    hint_token = ""
    while True:
        line = _read_line("> ")
        if line is None or line.lower() in QUIT_WORDS:
            return None
        if not line:
            continue
        command = line.lower()
        if command in HINT_WORDS:
            update, deeper = _hint(client, position, args, hint_token)
            hint_token = update.continuation
            for row in _hints_table(update.analysis, numbers):
                _say(row)
            if deeper:
                _say(f"(deeper: {update.analysis.iterations} iterations in all)")
            continue
        if command in ("help", "h"):
            _say(PLAY_HELP)
            continue
        if command == "board":
            _say(_picture(info, args.seat))
            continue
        if command == "moves":
            _print_actions(legal.actions)
            continue
        picked = _match(line, legal.actions)
        if picked is not None:
            return picked
        _say(_why_not(line, legal.actions))


HINT_SEED = 0  # every hint of a position: a continuation must send the first ask's seed
HINT_MOVES = 5  # rows of the hints table


def _hint(
    client: AdvisorClient, position: Position, args: argparse.Namespace, continue_from: str
) -> tuple[AnalysisUpdate, bool]:
    """The hints of `position` (Analyze, final update only) and whether they went on with the
    search of `continue_from` (the previous hint's token at this position: deeper, not
    repeated). The continuation sends what the first ask sent (position, seed, threads,
    budget), as Analyze requires. A token the server no longer keeps (expired, dropped for
    room, another server process) means a fresh hint, silently; "" (the server keeps no trees,
    ``--continue-trees 0``, or the first ask) is always fresh."""
    def ask(token: str) -> AnalysisUpdate:
        final: AnalysisUpdate | None = None
        # interval_ms 0: only the final analysis; read to the end of the stream, so the
        # server has kept the trees under the new token before the next '?'
        for update in client.analyze(
            position, iterations=args.iterations, time_ms=args.time_ms, seed=HINT_SEED, threads=args.threads,
            interval_ms=0, max_moves=HINT_MOVES, timeout=args.timeout, continue_from=token,
        ):
            if update.final:
                final = update
        if final is None:  # the protocol promises exactly one final update
            raise CliError("the hint's analysis ended without a final result")
        return final

    if continue_from:
        try:
            return ask(continue_from), True
        except NotFoundError as error:
            if error.field != "continue_from":
                raise
    return ask(""), False


# --- review ----------------------------------------------------------------------------------
_LABEL_MARKS = {"best": "", "good": "", "inaccuracy": "?!", "mistake": "?", "blunder": "??"}


def _review_rows(moves: Sequence[ReviewedMove]) -> list[str]:
    """The per-move table of a review: index, seat, played, best, losses, label."""
    headers = ["move", "seat", "played", "best", "win loss", "points loss", "label"]
    rows = []
    for m in moves:
        label = m.label + _LABEL_MARKS.get(m.label, "")
        if m.forced:
            label += " (forced)"
        if m.partial:
            label += " (partial)"
        rows.append([
            str(m.index),
            str(m.seat),
            m.played.notation,
            "" if m.best.id == m.played.id else m.best.notation,
            f"{100.0 * m.win_probability_loss:.1f}",
            f"{m.points_loss:.2f}",
            label,
        ])
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    right = {0, 1, 4, 5}

    def fmt(row: Sequence[str]) -> str:
        return "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)).rstrip()

    return [fmt(headers), *(fmt(r) for r in rows)]


def _summary_rows(summary: ReviewSummary) -> list[str]:
    t = summary.thresholds
    scale, unit = (1.0, " points") if t.unit == "points" else (100.0, " win-% points")
    lines = [
        f"Thresholds (loss in{unit}): inaccuracy {scale * t.inaccuracy:g}, mistake {scale * t.mistake:g}, "
        f"blunder {scale * t.blunder:g}",
        "seat  decisions  best  good  inaccuracies  mistakes  blunders  mean win loss  mean points loss  accuracy",
    ]
    for s in summary.seats:
        lines.append(
            f"{s.seat:>4}  {s.decisions:>9}  {s.best:>4}  {s.good:>4}  {s.inaccuracies:>12}  {s.mistakes:>8}  "
            f"{s.blunders:>8}  {100.0 * s.mean_win_probability_loss:>13.1f}  {s.mean_points_loss:>16.2f}  "
            f"{s.accuracy:>7.1f}%" + (f"  ({s.forced} forced)" if s.forced else "")
        )
    return lines


def _cmd_review(args: argparse.Namespace) -> int:
    """Review a game record: one row per decision as it arrives (in move order), then the
    per-seat summary. Past --timeout, the rows done so far and the error (exit status 1)."""
    try:
        record = GameRecord.load(args.record)
    except OSError as exc:
        raise CliError(f"cannot read {args.record}: {exc.strerror or exc}") from None
    except RecordError as exc:
        raise CliError(f"{args.record}: {exc}") from None
    moves: list[ReviewedMove] = []
    summary: ReviewSummary | None = None
    with _advisor(args.target, None) as client:
        answers = client.review(
            record, iterations=args.iterations, time_ms=args.time_ms, seed=args.search_seed,
            threads=args.threads, timeout=args.timeout,
        )
        try:
            for answer in answers:
                if isinstance(answer, ReviewSummary):
                    summary = answer
                else:
                    moves.append(answer)
        finally:
            if args.json:
                _json({"record": args.record, "moves": [m.to_dict() for m in moves],
                       "summary": summary.to_dict() if summary is not None else None})
            elif moves or summary is not None:
                _say(f"Review of {args.record} ({record.game}): win loss in win-% points of the mover, "
                     "points loss in expected final points; best is left empty when it was played")
                for row in _review_rows(moves):
                    _say(row)
                if summary is not None:
                    for row in _summary_rows(summary):
                        _say(row)
    return 0


# --- suggest / hints -------------------------------------------------------------------------
def _read_position(args: argparse.Namespace, client: AdvisorClient) -> PositionInfo:
    """The position of a suggest/hints command, with its rendering."""
    if args.position_file is not None:
        try:
            data = Path(args.position_file).read_bytes()
        except OSError as exc:
            raise CliError(f"cannot read {args.position_file}: {exc.strerror or exc}") from exc
        text = data.strip()
        if text and all(chr(b) in string.hexdigits or chr(b).isspace() for b in text):
            data = bytes.fromhex(text.decode("ascii"))  # a file of hex text
        return client.apply_actions(Position(args.game, data), [])
    if args.position_hex is not None:
        try:
            position = Position.from_hex(args.game, args.position_hex)
        except ValueError as exc:
            raise CliError(f"--position-hex is not hexadecimal: {exc}") from exc
        return client.apply_actions(position, [])
    seed = args.seed if args.seed is not None else 0
    options = _parse_options(args.option)
    return client.new_game(args.game, args.players, seed=seed, variant=args.variant, options=options)


def _action_args(values: list[str] | None) -> list[int | str]:
    """``--only`` / ``--avoid`` values: an integer is an action id, anything else a notation."""
    out: list[int | str] = []
    for value in values or []:
        text = value.strip()
        out.append(int(text) if text.lstrip("-").isdigit() else text)
    return out


def _cmd_suggest(args: argparse.Namespace) -> int:
    with _advisor(args.target, args.timeout) as client:
        info = _read_position(args, client)
        if args.elo is not None:
            if args.iterations or args.time_ms:
                raise CliError("give --elo or --iterations/--time-ms, not both")
            suggestion = client.suggest_elo(
                info.position,
                args.elo,
                seed=args.search_seed,
                threads=args.threads,
                allow=_action_args(args.only),
                avoid=_action_args(args.avoid),
            )
        else:
            suggestion = client.suggest_move(
                info.position,
                iterations=args.iterations,
                time_ms=args.time_ms,
                seed=args.search_seed,
                threads=args.threads,
                allow=_action_args(args.only),
                avoid=_action_args(args.avoid),
            )
    if args.json:
        _json({"game": args.game, "position": info.position.hex(), **suggestion.to_dict()})
        return 0
    best = suggestion.analysis.best
    _say(_picture(info, info.current_player))
    _say(f"Seat {suggestion.analysis.seat} to move. Suggested: {suggestion.action.notation} (action {suggestion.action.id})")
    if len(suggestion.turn) > 1:
        _say("Whole turn: " + " -> ".join(a.notation for a in suggestion.turn))
    _say(f"Win probability {_pct(best.win_probability)}, expected scores {_scores(best.expected_scores)}")
    _say(_analysis_summary(suggestion.analysis))
    return 0


def _cmd_hints(args: argparse.Namespace) -> int:
    with _advisor(args.target, args.timeout) as client:
        info = _read_position(args, client)
        analysis = client.rank_moves(
            info.position,
            iterations=args.iterations,
            time_ms=args.time_ms,
            seed=args.search_seed,
            threads=args.threads,
            max_moves=args.max_moves,
            allow=_action_args(args.only),
            avoid=_action_args(args.avoid),
        )
    if args.json:
        _json({"game": args.game, "position": info.position.hex(), "analysis": analysis.to_dict()})
        return 0
    _say(_picture(info, info.current_player))
    _say(f"Seat {analysis.seat} to move; win % is seat {analysis.seat}'s, expected scores are per seat.")
    for row in _hints_table(analysis):
        _say(row)
    _say(_analysis_summary(analysis))
    return 0


def _cmd_games(args: argparse.Namespace) -> int:
    with _advisor(args.target, args.timeout) as client:
        found = client.list_games()
    if args.json:
        _json(
            [
                {
                    "name": g.name,
                    "min_players": g.min_players,
                    "max_players": g.max_players,
                    "variants": list(g.variants),
                    "options": {o.name: {"default": o.default, "choices": list(o.choices)} for o in g.options},
                    "num_distinct_actions": g.num_distinct_actions,
                }
                for g in found
            ]
        )
        return 0
    for g in found:
        variants = f", variants: {', '.join(g.variants)}" if g.variants else ""
        _say(f"{g.name}: {g.min_players}-{g.max_players} players{variants}")
        for o in g.options:
            _say(f"  option {o.name} = {o.default} (choices: {', '.join(o.choices)})")
    return 0


# --- serve -----------------------------------------------------------------------------------
_CAPS = (
    ("default_iterations", int, "iterations when a request gives no budget"),
    ("max_iterations", int, "cap of SearchLimits.iterations"),
    ("max_time_ms", float, "cap of SearchLimits.time_ms (ms)"),
    ("max_threads", int, "cap of SearchLimits.threads"),
    ("max_concurrent_searches", int, "searches at once; more are RESOURCE_EXHAUSTED"),
    ("max_message_bytes", int, "largest message (bytes)"),
    ("max_actions_per_request", int, "cap of ApplyActions actions"),
    ("max_nodes", int, "tree nodes per search thread"),
    ("deadline_margin_ms", float, "stop this long before a call's deadline (ms)"),
    ("grace_seconds", float, "shutdown grace period (s)"),
    ("max_batch_size", int, "positions per EvaluatePositions call"),
    ("batch_window", int, "unanswered positions per EvaluatePositions call (0 = 2 x searches)"),
    ("min_interval_ms", float, "smallest Analyze interval_ms (ms)"),
    ("retry_after_ms", float, "retry delay suggested with RESOURCE_EXHAUSTED (ms)"),
    ("max_concurrent_rpcs", int, "calls admitted at once (0 = 4 x gRPC threads); more are RESOURCE_EXHAUSTED"),
    ("cache_bytes", int, "memory of the cache of deterministic answers (bytes, 0 = off; default 64 MiB)"),
    ("continue_trees", int, "Analyze trees kept for continue_from (0 = off; default 32)"),
    ("continue_bytes", int, "memory of the kept Analyze trees (bytes; default 256 MiB)"),
    ("continue_idle_s", float, "a kept Analyze tree is dropped after this long unused (s; default 300)"),
)


def _read_file(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc


def _web_options(args: argparse.Namespace) -> Any:
    """The web front door of ``hortus serve`` (None: off). On by default at 127.0.0.1:8080 (a
    free port when --address asks for port 0, so that test servers never collide); without
    the web extra, the default quietly becomes off (a note on stderr) and an explicit
    --web-address is an error."""
    import importlib.util

    explicit = args.web_address is not None
    address = args.web_address if explicit else "127.0.0.1:8080"
    if address in ("off", "none", ""):
        return None
    if not explicit and args.address.rpartition(":")[2] == "0":
        address = "127.0.0.1:0"
    missing = [m for m in ("connectrpc", "uvicorn", "hortus.v1.advisor_connect") if importlib.util.find_spec(m) is None]
    if missing:
        if explicit or args.cors_origin or args.web_static:
            raise CliError(f"--web-address needs the web extra: pip install 'hortus[web]' (missing: {', '.join(missing)})")
        print("hortus: web front door off (pip install 'hortus[web]' to serve browsers)", file=sys.stderr)
        return None
    from hortus.server.web import WebOptions

    static = Path(args.web_static) if args.web_static else None
    if static is not None and not static.is_dir():
        raise CliError(f"--web-static {args.web_static}: not a folder")
    return WebOptions(address=address, cors_origins=tuple(args.cors_origin or ()), static_dir=static)


def _cmd_serve(args: argparse.Namespace) -> int:
    import os

    from hortus.server import ServerConfig, ServerTls, serve  # lazy: the engine loads only here
    from hortus.server.observe import configure_logging

    configure_logging(args.log_level, args.log_format)
    settings = {name: getattr(args, name) for name, _, _ in _CAPS if getattr(args, name) is not None}
    if args.access_log:
        settings["access_log"] = True
    if args.rpc_threads is not None:
        settings["workers"] = args.rpc_threads
    cores = max(1, os.cpu_count() or 1)
    # Each process keeps the default max_concurrent_searches (one per core): the kernel spreads
    # connections, not calls, so one busy client may reach a single worker.
    processes = args.workers if args.workers is not None else cores
    try:
        config = ServerConfig(**settings)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    tls = None
    if args.tls_cert or args.tls_key or args.tls_client_ca:
        cert = _read_file(args.tls_cert, "--tls-cert")
        key = _read_file(args.tls_key, "--tls-key")
        if cert is None or key is None:
            raise CliError("TLS needs both --tls-cert and --tls-key")
        tls = ServerTls(cert, key, _read_file(args.tls_client_ca, "--tls-client-ca"))
        try:
            tls.check()  # say what is wrong (gRPC would only fail to bind), before any worker starts
        except ValueError as exc:
            raise CliError(f"--tls-cert/--tls-key/--tls-client-ca: {exc}") from exc
    if args.metrics_port is not None:
        try:
            import prometheus_client  # noqa: F401
        except ImportError as exc:
            raise CliError("--metrics-port needs the prometheus_client package (pip install prometheus_client)") from exc
    web = _web_options(args)
    try:
        if processes > 1:
            from hortus.server.workers import serve_workers

            status: int = serve_workers(
                args.address,
                config,
                processes,
                tls=tls,
                metrics_port=args.metrics_port,
                log_level=args.log_level,
                log_format=args.log_format,
                web=web,
            )
            return status
        return serve(args.address, config, tls=tls, metrics_port=args.metrics_port, web=web)
    except OSError as exc:  # the address cannot be bound
        raise CliError(str(exc)) from exc


# --- evaluate --------------------------------------------------------------------------------
class _Progress:
    """A progress bar on stderr: tqdm when installed, else a plain counter line."""

    def __init__(self, total: int, initial: int, enabled: bool) -> None:
        self._bar: Any = None
        self._done = initial
        self._total = total
        self._enabled = enabled
        self._last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]  # optional
        except ImportError:
            return
        self._bar = tqdm(total=total, initial=initial, unit="pos", file=sys.stderr, dynamic_ncols=True)

    @property
    def done(self) -> int:
        """Positions answered so far, those of earlier runs included."""
        return self._done

    def update(self) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
            return
        if not self._enabled:
            return
        import time

        now = time.monotonic()
        if now - self._last >= 0.5 or self._done == self._total:
            self._last = now
            print(f"\revaluated {self._done}/{self._total}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._enabled:
            print(file=sys.stderr, flush=True)
        self._enabled = False


def _answered_ids(path: Path) -> set[str]:
    """Ids already answered in an output file, keeping every valid line.

    A line that is not a complete JSON record with an id (a torn last line from an
    interrupted run, or one damaged in the middle), and a repeat of an id already answered,
    is moved to ``<output>.rejected`` and reported; the file is rewritten atomically with the
    valid lines only, so no good result is lost and none is computed twice."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    ids: set[str] = set()
    kept: list[bytes] = []
    rejected: list[tuple[int, bytes]] = []
    for number, line in enumerate(data.splitlines(keepends=True), 1):
        if not line.strip():
            continue
        try:
            if not line.endswith(b"\n"):
                raise ValueError("torn line")
            record = json.loads(line)
            item_id = str(record["id"])
            if item_id in ids:
                raise ValueError("repeated id")
        except (ValueError, KeyError, TypeError):
            rejected.append((number, line))
            continue
        ids.add(item_id)
        kept.append(line)
    if rejected:
        side = path.with_name(path.name + ".rejected")
        with side.open("ab") as f:
            for _, line in rejected:
                f.write(line if line.endswith(b"\n") else line + b"\n")
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(b"".join(kept))
        os.replace(temporary, path)
        numbers = ", ".join(str(n) for n, _ in rejected[:10]) + (" ..." if len(rejected) > 10 else "")
        print(
            f"hortus evaluate: {len(rejected)} unreadable or repeated line(s) of {path} (line {numbers}) "
            f"moved to {side}; their positions are evaluated again",
            file=sys.stderr,
        )
    return ids


@contextlib.contextmanager
def _exclusive(output: Path) -> Iterator[None]:
    """Hold an exclusive lock on `output` (a ``.lock`` file beside it) for the whole run: a
    second ``hortus evaluate`` on the same output fails at once instead of writing the same
    ids twice."""
    import fcntl

    lock_path = output.with_name(output.name + ".lock")
    try:
        handle = lock_path.open("a+")
    except OSError as exc:
        raise CliError(f"cannot create {lock_path}: {exc.strerror or exc}") from exc
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise CliError(f"{output} is being written by another hortus evaluate ({holder}); wait for it or choose another -o")
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    if args.shard is not None or args.ray is not None or args.shards:
        return _run_sharded(args, "evaluate")
    try:
        lines = Path(args.positions).read_text().splitlines()
    except OSError as exc:
        raise CliError(f"cannot read {args.positions}: {exc.strerror or exc}") from exc
    output = Path(args.output)
    with _exclusive(output):
        return _evaluate_locked(args, lines, output)


def _evaluate_locked(args: argparse.Namespace, lines: list[str], output: Path) -> int:
    from hortus.clients.types import EvaluationError, EvaluationItem, EvaluationResult

    done = _answered_ids(output)
    items: list[EvaluationItem] = []
    local: list[EvaluationResult] = []
    seen: set[str] = set()
    every: set[str] = set()  # every id of the input, bad lines included
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record: Any = None
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            item_id = str(record.get("id", number))
            game = str(record.get("game", args.game or ""))
            if not game:
                raise ValueError('no "game" (or --game)')
            position = Position.from_hex(game, str(record["position"]))
            item = EvaluationItem(
                item_id,
                position,
                iterations=int(record.get("iterations", 0)),
                time_ms=float(record.get("time_ms", 0.0)),
                seed=int(record.get("seed", 0)),
                threads=int(record.get("threads", 0)),
            )
        except (ValueError, KeyError, TypeError) as exc:
            item_id = str(record.get("id", number)) if isinstance(record, dict) else str(number)
            every.add(item_id)
            if item_id not in done:
                local.append(EvaluationResult(item_id, error=EvaluationError("INVALID_ARGUMENT", f"line {number}: {exc}", "line")))
            continue
        if item_id in seen:
            raise CliError(f"{args.positions}:{number}: id {item_id!r} appears twice")
        seen.add(item_id)
        every.add(item_id)
        if item_id not in done:
            items.append(item)
    skipped = len(done & every)
    total = len(every)
    progress = _Progress(total, skipped, not args.no_progress)
    errors = 0
    evaluated = 0
    try:
        with output.open("a") as out, _advisor(args.target, args.timeout) as client:
            for result in local:
                out.write(json.dumps(result.to_dict()) + "\n")
                out.flush()
                errors += 1
                progress.update()
            for result in client.evaluate(
                items,
                iterations=args.iterations,
                time_ms=args.time_ms,
                seed=args.search_seed,
                threads=args.threads,
                max_moves=args.max_moves,
                streams=args.streams,
            ):
                out.write(json.dumps(result.to_dict()) + "\n")
                out.flush()
                evaluated += 1
                errors += 0 if result.ok else 1
                progress.update()
    except KeyboardInterrupt:
        progress.close()
        finished = progress.done
        print(
            f"hortus evaluate: interrupted: {finished} of {total} done, {total - finished} remaining, "
            f"results in {output} (the same command resumes)",
            file=sys.stderr,
        )
        return 130
    finally:
        progress.close()
    print(
        f"hortus evaluate: {evaluated} evaluated, {errors} errors, {skipped} already in {output} (of {total})",
        file=sys.stderr,
    )
    return 0


# --- sharded jobs (hortus.distributed: --shard K/N, --ray, selfplay) ------------------------
def _run_sharded(args: argparse.Namespace, kind: str) -> int:
    """A sharded job run in-process on the engine (imported lazily): one shard, every shard
    in a local process pool, or every shard on a Ray cluster; results in the folder -o."""
    from hortus.distributed import Job, default_shards, parse_shard, run
    from hortus.distributed.shards import file_sha256, read_items

    folder = Path(args.output)
    only: list[int] | None = None
    input_path: Path | None = None
    if kind == "evaluate":
        input_path = Path(args.positions)
        try:
            count = len(read_items(input_path))
            checksum = file_sha256(input_path)
        except OSError as exc:
            raise CliError(f"cannot read {args.positions}: {exc.strerror or exc}") from exc
    else:
        count = args.games
        checksum = ""
    shards = args.shards or default_shards(count)
    if args.shard is not None:
        try:
            k, n = parse_shard(args.shard)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        if args.shards and args.shards != n:
            raise CliError(f"--shard {args.shard} and --shards {args.shards} disagree")
        shards, only = n, [k]
    job = Job(
        kind=kind,
        shards=shards,
        seed=args.search_seed if kind == "evaluate" else args.seed,
        iterations=(args.iterations or 2000) if kind == "evaluate" else 0,
        max_moves=args.max_moves,
        game=args.game or "",
        level=getattr(args, "level", 0),
        players=getattr(args, "players", 0),
        games=count if kind == "selfplay" else 0,
        input_sha256=checksum,
    )
    total = len(only) if only is not None else shards
    progress = _Progress(total, 0, not args.no_progress)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with _exclusive(folder / "run"):  # run.lock: one driver per folder
            summary = run(
                job, folder, input_path, only=only, workers=args.workers,
                use_ray=args.ray is not None, ray_address=args.ray or None,
                on_shard=lambda _: progress.update(),
            )
    except KeyboardInterrupt:
        progress.close()
        print(f"hortus {kind}: interrupted: {progress.done} of {total} shards done, results in {folder} "
              "(the same command resumes)", file=sys.stderr)
        return 130
    except (ValueError, RuntimeError) as exc:
        progress.close()
        raise CliError(str(exc)) from exc
    progress.close()
    merged = folder / "merged.jsonl"
    tail = f", merged into {merged}" if merged.exists() and only is None else ""
    print(
        f"hortus {kind}: {summary.shards_done} shards computed, {summary.shards_skipped} already done "
        f"(of {total}), {summary.records} records, {summary.errors} errors, {summary.seconds:.1f} s{tail}",
        file=sys.stderr,
    )
    return 0


def _cmd_selfplay(args: argparse.Namespace) -> int:
    if not args.game:
        raise CliError("--game is required")
    return _run_sharded(args, "selfplay")


# --- arena -----------------------------------------------------------------------------------
def _print_match(result: "MatchResult") -> None:
    _say(f"{result.game}: {' vs '.join(result.bots)}, {result.games} games, {result.players} seats, seed {result.seed}")
    headers = ["bot", "games", "wins", "draws", "losses", "score", "95% interval", "mean points"]
    rows = [
        [
            s.label,
            str(s.games),
            str(s.wins),
            str(s.draws),
            str(s.losses),
            _pct(s.score_rate),
            f"[{_pct(s.interval[0])}, {_pct(s.interval[1])}]",
            f"{s.mean_score:.2f}",
        ]
        for s in result.stats
    ]
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    for row in [headers, *rows]:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(widths[c]) for c, cell in enumerate(row) if c]
        _say("  ".join(cells))
    rates = ", ".join(f"seat {s}: {_pct(v)}" for s, v in enumerate(result.seat_score_rates()))
    _say(f"score rate by seat: {rates}")
    _say("score = mean win share (a win counts 1, a k-way tie 1/k)")


def _cmd_arena(args: argparse.Namespace) -> int:
    from hortus.search.arena import play_match, round_robin  # lazy: the engine loads only here

    total = args.games * (len(args.bots) * (len(args.bots) - 1) // 2 if args.round_robin else 1)
    progress = _Progress(total, 0, enabled=sys.stderr.isatty())
    try:
        if args.round_robin:
            rr = round_robin(args.game, args.bots, args.games, args.seed, jobs=args.jobs,
                             progress=lambda record: progress.update())
        else:
            result = play_match(
                args.game,
                args.bots,
                args.games,
                args.seed,
                jobs=args.jobs,
                players=args.players or None,
                variant=args.variant,
                options=_parse_options(args.option),
                progress=lambda record: progress.update(),
            )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    finally:
        progress.close()
    if args.round_robin:
        if args.json:
            _json(rr.to_dict())
        else:
            for match in rr.matches:
                _print_match(match)
            _say("Elo (first bot = 0):")
            for bot, elo in sorted(zip(rr.bots, rr.elo), key=lambda item: -item[1]):
                _say(f"  {bot:<16} {elo:+7.0f}")
        return 0
    if args.json:
        _json(result.to_dict())
    else:
        _print_match(result)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    """Quick speed check of every game: random playouts and ISMCTS from the opening."""
    from hortus import games  # lazy: the engine loads only here
    from hortus._ext.engine import random_playouts
    from hortus.search import Limits, analyze

    rows = []
    for name in args.game or games.names():
        game = games.get(name)
        state = game.new_game(players=max(2, game.min_players), seed=1)
        decisions, _, seconds = random_playouts(state.kernel_state, args.playouts, 1, False)
        analysis = analyze(state, Limits(iterations=args.iterations, seed=1, threads=args.threads))
        rows.append({
            "game": name,
            "random_decisions_per_s": decisions / seconds,
            "ismcts_iterations_per_s": analysis.iterations / (analysis.elapsed_ms / 1000.0),
        })
    if args.json:
        _json(rows)
    else:
        _say(f"{'game':<20}{'random decisions/s':>20}{'ISMCTS iterations/s':>22}")
        for row in rows:
            _say(f"{row['game']:<20}{row['random_decisions_per_s']:>20,.0f}{row['ismcts_iterations_per_s']:>22,.0f}")
    return 0


# --- parser ----------------------------------------------------------------------------------
def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not >= 0")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number >= 0")
    return value


def _add_connection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", help="HOST:PORT of a hortus server (default: an embedded server on a free port)")
    p.add_argument("--timeout", type=float, default=None, help="deadline of each call, in seconds")


def _add_search(p: argparse.ArgumentParser) -> None:
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=_non_negative_int, default=0, help="search iterations (0 = server default)")
    budget.add_argument("--time-ms", type=_non_negative_float, default=0.0, help="search time budget in milliseconds")
    p.add_argument("--threads", type=_non_negative_int, default=0, help="root-parallel search threads (0 = 1)")


def _add_sharding(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sharded run (in-process; -o is then a folder)")
    g.add_argument("--shard", default=None, metavar="K/N", help="compute only shard K of N (0-based), e.g. one array job")
    g.add_argument("--shards", type=_non_negative_int, default=0, help="number of shards (default: ~25 ids each)")
    g.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run the shards as Ray tasks: on the cluster at ADDRESS ('auto' = a running one), "
                        "or a local one when none is given (needs hortus[ray])")
    g.add_argument("--workers", type=_positive_int, default=1, help="local processes for the shards (without --shard or --ray)")


def _add_game_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("--players", type=_non_negative_int, default=0, help="number of seats (0 = the game's minimum)")
    p.add_argument("--variant", default=None, help="game variant")
    p.add_argument("--option", action="append", metavar="NAME=VALUE", help="rule option (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hortus", description="AI opponent and move advisor for botany board games")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("serve", help="run the gRPC advisor service")
    p.add_argument("--address", default="127.0.0.1:50051", help="HOST:PORT to listen on (default %(default)s)")
    p.add_argument(
        "--workers", type=_positive_int, default=None, help="server processes on the port (SO_REUSEPORT; default: cores)"
    )
    p.add_argument("--rpc-threads", type=_non_negative_int, default=None, help="gRPC threads per process (0 = searches + 32)")
    for name, kind, text in _CAPS:
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=None, help=text)
    p.add_argument("--tls-cert", help="PEM certificate chain of the server (turns TLS on)")
    p.add_argument("--tls-key", help="PEM private key of the server")
    p.add_argument("--tls-client-ca", help="PEM CA of client certificates (turns mutual TLS on)")
    p.add_argument("--metrics-port", type=_non_negative_int, default=None, help="Prometheus /metrics port (needs prometheus_client)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default="text", choices=["text", "json"], help="log lines as text or JSON objects")
    p.add_argument("--access-log", action="store_true", help="log every call: method, code, ms, peer")
    p.add_argument(
        "--web-address",
        default=None,
        help="HOST:PORT of the browser front door, Connect and gRPC-Web (default 127.0.0.1:8080, a free "
        "port when --address has port 0; 'off' turns it off; needs hortus[web])",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="a page origin allowed to call the web port, e.g. https://play.example (repeatable; '*' = any)",
    )
    p.add_argument("--web-static", default=None, metavar="DIR", help="folder served at / of the web port (default: the bundled page)")
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser("play", help="play a game against the AI in the terminal")
    p.add_argument("game", help="game name (see 'hortus games')")
    _add_game_setup(p)
    p.add_argument("--seat", type=_non_negative_int, default=0, help="your seat (default 0)")
    p.add_argument("--seed", type=_non_negative_int, default=None, help="seed of the setup, chance draws and AI")
    p.add_argument("--manual-chance", action="store_true", help="type chance outcomes instead of drawing them")
    p.add_argument("--record", default=None, metavar="FILE", help="write the game record (JSONL) here at the end, for 'hortus review'")
    _add_search(p)
    _add_connection(p)
    p.set_defaults(func=_cmd_play)

    p = sub.add_parser("review", help="review a game record: every decision's loss and label, then accuracy per seat")
    p.add_argument("record", help="game record (JSONL, as 'hortus play --record' writes it)")
    _add_search(p)
    p.add_argument("--search-seed", type=_non_negative_int, default=0, help="seed of the review's searches (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--target", help="HOST:PORT of a hortus server (default: an embedded server on a free port)")
    p.add_argument("--timeout", type=float, default=None, help="deadline of the whole review, in seconds")
    p.set_defaults(func=_cmd_review)

    for name, func, text in (
        ("suggest", _cmd_suggest, "the move (and whole turn) the AI would play"),
        ("hints", _cmd_hints, "the ranked moves: visits, win %%, expected scores, principal variation"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--game", required=True, help="game name")
        source = p.add_mutually_exclusive_group()
        source.add_argument("--position-file", help="file holding a position's encoded bytes (raw or hex)")
        source.add_argument("--position-hex", help="a position's encoded bytes in hex")
        source.add_argument("--seed", type=_non_negative_int, default=None, help="a new game with this setup seed")
        _add_game_setup(p)
        _add_search(p)
        p.add_argument("--search-seed", type=_non_negative_int, default=0, help="seed of the search (default 0)")
        p.add_argument("--only", action="append", metavar="ACTION",
                       help="what-if: consider only this move at the root (id or notation; repeatable)")
        p.add_argument("--avoid", action="append", metavar="ACTION",
                       help="what-if: never consider this move at the root (id or notation; repeatable)")
        if name == "suggest":
            p.add_argument("--elo", type=float, default=None,
                           help="play at this Elo on the game's scale (level 1 = 0) instead of a budget")
        if name == "hints":
            p.add_argument("--max-moves", type=_non_negative_int, default=0, help="moves to show (0 = all)")
        p.add_argument("--json", action="store_true", help="print JSON")
        _add_connection(p)
        p.set_defaults(func=func)

    p = sub.add_parser("evaluate", help="evaluate a JSONL file of positions (resumable)")
    p.add_argument("positions", help='JSONL: {"id", "game", "position" (hex), optional "iterations", "time_ms", "seed", "threads"}')
    p.add_argument("-o", "--output", required=True, help="JSONL results; ids already there are skipped")
    p.add_argument("--game", default=None, help="game of lines that give none")
    _add_search(p)
    p.add_argument("--search-seed", type=_non_negative_int, default=0, help="seed of lines that give none")
    p.add_argument("--max-moves", type=_non_negative_int, default=0, help="moves per analysis (0 = all)")
    p.add_argument("--streams", type=_positive_int, default=2, help="concurrent streams (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_sharding(p)
    _add_connection(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("selfplay", help="self-play games at a level, every decision with its search statistics")
    p.add_argument("--game", required=True, help="game name")
    p.add_argument("--level", type=_positive_int, default=4, help="difficulty level of every seat (default 4)")
    p.add_argument("--games", type=_positive_int, default=10, help="number of games (default 10)")
    p.add_argument("--players", type=_non_negative_int, default=0, help="number of seats (0 = the game's minimum)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="base seed (each game's seed derives from it)")
    p.add_argument("-o", "--output", required=True, help="output folder (shards, manifests, merged.jsonl)")
    p.add_argument("--max-moves", type=_non_negative_int, default=0, help="moves per analysis kept (0 = all)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_sharding(p)
    p.set_defaults(func=_cmd_selfplay)

    p = sub.add_parser("games", help="list the games the server plays")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_connection(p)
    p.set_defaults(func=_cmd_games)

    p = sub.add_parser("arena", help="play seeded games between bots (random, greedy, mcts, mcts:N)")
    p.add_argument("--game", required=True, help="game name")
    p.add_argument("--bots", nargs="+", required=True, metavar="BOT", help="bot specs, e.g. mcts:500 random")
    p.add_argument("--games", type=_non_negative_int, default=10, help="number of games (default 10)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="match seed (default 0)")
    p.add_argument("--jobs", type=_positive_int, default=1, help="games played at once (worker processes)")
    p.add_argument("--round-robin", action="store_true", help="every pair of bots head to head, 2 seats, with Elo")
    _add_game_setup(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_arena)

    p = sub.add_parser("bench", help="quick speed check of every game (random playouts, ISMCTS)")
    p.add_argument("--game", action="append", help="a game (repeatable; default: all)")
    p.add_argument("--playouts", type=_positive_int, default=500, help="random playouts per game")
    p.add_argument("--iterations", type=_positive_int, default=5000, help="ISMCTS iterations per game")
    p.add_argument("--threads", type=_positive_int, default=1, help="search threads")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("train", help="train a game's value model (search-labelled self-play, numpy)")
    from hortus.training.cli import add_arguments, run as run_training

    add_arguments(p)
    p.set_defaults(func=run_training)

    from hortus.balance.cli import add_parser as add_balance_parser

    add_balance_parser(sub)
    return parser


def _report(error: AdvisorError) -> None:
    print(f"hortus: {error.code.name.lower()}: {error.message}", file=sys.stderr)
    if isinstance(error, InvalidArgumentError):
        for v in error.violations:
            print(f"  {v.field}: {v.description}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 service error, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except CliError as exc:
        print(f"hortus: {exc}", file=sys.stderr)
        return 2
    except AdvisorError as exc:
        _report(exc)
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
