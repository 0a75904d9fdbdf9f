"""Playing and asking at the table: ``play`` (a terminal game against the AI), ``review``,
``suggest``, ``hints`` and ``games``, all through the advisor service."""

from __future__ import annotations

import argparse
import difflib
import random
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hortus.clients.client import ActionLike, AdvisorClient
from hortus.clients.errors import InvalidArgumentError, NotFoundError
from hortus.clients.record import (
    GameRecord,
    RecordError,
    ReviewedMove,
    ReviewSummary,
    record_moves,
)
from hortus.clients.types import (
    Action,
    Analysis,
    AnalysisUpdate,
    ChanceDraw,
    LegalActions,
    Position,
    PositionInfo,
    Suggestion,
)

if TYPE_CHECKING:  # only for annotations: the engine is imported lazily
    pass


from hortus.cli.common import (
    HINT_WORDS,
    QUIT_WORDS,
    CliError,
    add_connection,
    add_game_setup,
    add_search_arguments,
    advisor,
    format_scores,
    non_negative_int,
    normalize,
    parse_options,
    percent,
    positive_int,
    print_json,
    read_line,
    say,
)

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
    wanted = normalize(text)
    for action in actions:
        if normalize(action.notation) == wanted:
            return action
    return None


def _why_not(text: str, actions: Sequence[Action]) -> str:
    """Why a typed line picks no move, and what it may have meant."""
    if text.isdigit():
        return f"there is no move {text} here: type 1-{len(actions)}, a notation, or 'help'"
    close = difflib.get_close_matches(normalize(text), [normalize(a.notation) for a in actions], n=3, cutoff=0.5)
    by_normal = {normalize(a.notation): a for a in actions}
    hint = "; did you mean " + " or ".join(repr(by_normal[c].notation) for c in close) if close else ""
    return f"{text!r} is not a legal move here{hint} (type 1-{len(actions)}, a notation, or 'help')"


def _print_actions(actions: Sequence[Action]) -> None:
    width = len(str(len(actions)))
    for i, action in enumerate(actions, 1):
        say(f"  {i:>{width}}. {action.notation}")


EXACT_MARK = "*"
"""Marks a win % that is exact (``MoveHint.exact``) in the hint table."""


def _hints_table(analysis: Analysis, numbers: Mapping[int, int] | None = None) -> list[str]:
    """The ranked moves as text rows: move number (as in the move list when `numbers` maps
    action ids to it, else the rank), move, visits, win % (marked ``EXACT_MARK`` where the
    rest of the game was solved), expected scores, PV; then each move's reason."""

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
                f"{100.0 * m.win_probability:.1f}" + (EXACT_MARK if m.exact else ""),
                format_scores(m.expected_scores),
                " -> ".join(a.notation for a in m.principal_variation),
            ]
        )
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    right = {0, 2, 3}

    def fmt(row: Sequence[str]) -> str:
        cells = [cell.rjust(widths[c]) if c in right else cell.ljust(widths[c]) for c, cell in enumerate(row)]
        return "  ".join(cells).rstrip()

    reasons = [f"  {number(i, m.action)}. {m.notation}: {m.reason}" for i, m in enumerate(analysis.moves, 1) if m.reason]
    legend = [f"{EXACT_MARK} exact: the rest of the game solved"] if any(m.exact for m in analysis.moves) else []
    return [fmt(headers), *(fmt(r) for r in rows), *legend, *(["Why:", *reasons] if reasons else [])]


def _picture(info: PositionInfo, seat: int) -> str:
    """What `seat` sees (its own hand too); the public picture for chance or the end."""
    if 0 <= seat < len(info.seat_rendered):
        return info.seat_rendered[seat]
    return info.rendered


def _analysis_summary(analysis: Analysis) -> str:
    flag = " (partial)" if analysis.partial else ""
    return f"{analysis.iterations} iterations in {analysis.elapsed_ms:.0f} ms, {analysis.nodes} nodes{flag}"


def _final(info: PositionInfo, labels: Sequence[str]) -> None:
    say("Game over.")
    say("Final scores:")
    for seat, score in enumerate(info.scores):
        say(f"  seat {seat} ({labels[seat]}): {score:g}")
    if info.returns:
        best = max(info.returns)
        winners = [s for s, v in enumerate(info.returns) if v == best and v > 0]
        if len(winners) == 1:
            say(f"Winner: seat {winners[0]} ({labels[winners[0]]})")
        elif winners:
            say("Tie between " + ", ".join(f"seat {s} ({labels[s]})" for s in winners))


def _cmd_play(args: argparse.Namespace) -> int:
    """A game against the AI. Everything printed is what the human's seat may know: the
    position is asked for that seat, chance outcomes it cannot see are drawn by the server
    and never named, and another seat's options are never listed."""
    options = parse_options(args.option)
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    transcript = _Transcript()
    try:
        return _play(args, options, seed, transcript)
    finally:
        # --record: the game so far, also after 'quit' (a review of part of a game is useful)
        if args.record and transcript.seats:
            GameRecord(args.game, transcript.seats, args.variant, options, seed, moves=record_moves(transcript.taken)).save(
                args.record
            )
            say(f"Game record written to {args.record} (review it with: hortus review {args.record})")


class _Transcript:
    """What ``play --record`` writes: the seat count and every action taken (seat, or -1 for a
    chance outcome, with the action), chance outcomes the human could not see included."""

    def __init__(self) -> None:
        self.seats = 0
        self.taken: list[tuple[int, Action]] = []


def _play(args: argparse.Namespace, options: dict[str, str], seed: int, transcript: _Transcript) -> int:
    rng = random.Random(seed)
    taken = transcript.taken
    with advisor(args.target, args.timeout) as client:
        info = client.new_game(args.game, args.players, seed=seed, variant=args.variant, options=options)
        seats = len(info.scores)
        if not 0 <= args.seat < seats:
            raise CliError(f"--seat must be in 0..{seats - 1}")
        transcript.seats = seats
        labels = ["you" if s == args.seat else "AI" for s in range(seats)]
        say(f"hortus: {args.game}, {seats} players, you are seat {args.seat}, seed {seed}")
        say("Type a move's number or notation; '?' for hints, 'help' for commands, 'quit' to leave.")
        position = info.position
        shown: Position | None = None  # the position last pictured
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
                    say("Bye.")
                    return 0
                try:
                    info = client.apply_actions(position, [outcome])
                except InvalidArgumentError as error:
                    # At a physical table an outcome typed in may contradict what the
                    # service dealt where the seat cannot see: say so, and ask again.
                    say(f"that outcome cannot happen in this position: {error.message}")
                    continue
                drawn = info.applied[-1] if info.applied else None
                if drawn is not None:
                    taken.append((-1, drawn))
                visible = {o.action.id for o in legal.chance_outcomes}
                # A draw the human's seat cannot see (into an AI's hand) is never named.
                say(
                    f"Chance: {drawn.notation}"
                    if drawn is not None and drawn.id in visible
                    else "Chance: an outcome hidden from you"
                )
                position = info.position
                continue
            seat = legal.current_player
            who = f"seat {seat} ({labels[seat]})"
            if seat == args.seat:
                if shown != position:
                    say(_picture(info, args.seat))
                    shown = position
                if len(legal.actions) == 1:
                    action = legal.actions[0]
                    say(f"You have exactly one legal move: {action.notation} (played automatically)")
                else:
                    chosen = _ask_human(client, position, legal, args, info)
                    if chosen is None:
                        say("Bye.")
                        return 0
                    action = chosen
                    say(f"You play: {action.notation}")
            else:
                continue_from = turn[1] if turn is not None and turn[0] == position else ""
                suggestion = _suggest_in_turn(client, position, args, rng.getrandbits(63), continue_from)
                action = suggestion.action
                best = suggestion.analysis.best
                say(f"AI {who} plays: {action.notation} (win {percent(best.win_probability)})")
            info = client.apply_actions(position, [action.id])
            taken.append((seat, action))
            turn = None
            if seat != args.seat and suggestion.continuation:
                turn = (info.position, suggestion.continuation)
            position = info.position
        say(_picture(info, args.seat))
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
            position,
            iterations=args.iterations,
            time_ms=args.time_ms,
            seed=seed,
            threads=args.threads,
            continue_from=token,
            level=getattr(args, "level", 0),
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
    say("Chance outcomes:")
    width = len(str(len(outcomes)))
    for i, o in enumerate(legal.chance_outcomes, 1):
        say(f"  {i:>{width}}. {o.action.notation}  ({percent(o.probability)})")
    if legal.hidden_probability > 0:
        say(f"  (and outcomes hidden from you, {percent(legal.hidden_probability)} in all)")
    while True:
        line = read_line("outcome (number or notation, empty = draw at random)> ")
        if line is None or line.lower() in QUIT_WORDS:
            return None
        if not line:
            return draw
        picked = _match(line, outcomes)
        if picked is not None:
            return picked
        say(f"not an outcome: type 1-{len(outcomes)}, a notation, or nothing to draw at random")


def _ask_human(
    client: AdvisorClient, position: Position, legal: LegalActions, args: argparse.Namespace, info: PositionInfo
) -> Action | None:
    say(f"Your move (seat {legal.current_player}):")
    _print_actions(legal.actions)
    numbers = {a.id: i for i, a in enumerate(legal.actions, 1)}
    # The token of this position's last hint (Analyze continue_from): '?' again goes on with
    # that search. It lives only as long as this position: a new position asks afresh.
    hint_token = ""
    while True:
        line = read_line("> ")
        if line is None or line.lower() in QUIT_WORDS:
            return None
        if not line:
            continue
        command = line.lower()
        if command in HINT_WORDS:
            update, deeper = _hint(client, position, args, hint_token)
            hint_token = update.continuation
            for row in _hints_table(update.analysis, numbers):
                say(row)
            if deeper:
                say(f"(deeper: {update.analysis.iterations} iterations in all)")
            continue
        if command in ("help", "h"):
            say(PLAY_HELP)
            continue
        if command == "board":
            say(_picture(info, args.seat))
            continue
        if command == "moves":
            _print_actions(legal.actions)
            continue
        picked = _match(line, legal.actions)
        if picked is not None:
            return picked
        say(_why_not(line, legal.actions))


HINT_SEED = 0  # every hint of a position: a continuation must send the first ask's seed
HINT_MOVES = 5  # rows of the hints table


def _hint(client: AdvisorClient, position: Position, args: argparse.Namespace, continue_from: str) -> tuple[AnalysisUpdate, bool]:
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
            position,
            iterations=args.iterations,
            time_ms=args.time_ms,
            seed=HINT_SEED,
            threads=args.threads,
            interval_ms=0,
            max_moves=HINT_MOVES,
            timeout=args.timeout,
            continue_from=token,
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
        if m.exact:
            label += " (exact)"
        rows.append(
            [
                str(m.index),
                str(m.seat),
                m.played.notation,
                "" if m.best.id == m.played.id else m.best.notation,
                f"{100.0 * m.win_probability_loss:.1f}",
                f"{m.points_loss:.2f}",
                label,
            ]
        )
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
    with advisor(args.target, None) as client:
        answers = client.review(
            record,
            iterations=args.iterations,
            time_ms=args.time_ms,
            seed=args.search_seed,
            threads=args.threads,
            timeout=args.timeout,
        )
        try:
            for answer in answers:
                if isinstance(answer, ReviewSummary):
                    summary = answer
                else:
                    moves.append(answer)
        finally:
            if args.json:
                print_json(
                    {
                        "record": args.record,
                        "moves": [m.to_dict() for m in moves],
                        "summary": summary.to_dict() if summary is not None else None,
                    }
                )
            elif moves or summary is not None:
                say(
                    f"Review of {args.record} ({record.game}): win loss in win-% points of the mover, "
                    "points loss in expected final points; best is left empty when it was played"
                )
                for row in _review_rows(moves):
                    say(row)
                if summary is not None:
                    for row in _summary_rows(summary):
                        say(row)
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
    options = parse_options(args.option)
    return client.new_game(args.game, args.players, seed=seed, variant=args.variant, options=options)


def _action_args(values: list[str] | None) -> list[int | str]:
    """``--only`` / ``--avoid`` values: an integer is an action id, anything else a notation."""
    out: list[int | str] = []
    for value in values or []:
        text = value.strip()
        out.append(int(text) if text.lstrip("-").isdigit() else text)
    return out


def _cmd_suggest(args: argparse.Namespace) -> int:
    with advisor(args.target, args.timeout) as client:
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
        print_json({"game": args.game, "position": info.position.hex(), **suggestion.to_dict()})
        return 0
    best = suggestion.analysis.best
    say(_picture(info, info.current_player))
    say(f"Seat {suggestion.analysis.seat} to move. Suggested: {suggestion.action.notation} (action {suggestion.action.id})")
    if len(suggestion.turn) > 1:
        say("Whole turn: " + " -> ".join(a.notation for a in suggestion.turn))
    say(f"Win probability {percent(best.win_probability)}, expected scores {format_scores(best.expected_scores)}")
    say(_analysis_summary(suggestion.analysis))
    return 0


def _cmd_hints(args: argparse.Namespace) -> int:
    with advisor(args.target, args.timeout) as client:
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
        print_json({"game": args.game, "position": info.position.hex(), "analysis": analysis.to_dict()})
        return 0
    say(_picture(info, info.current_player))
    say(f"Seat {analysis.seat} to move; win % is seat {analysis.seat}'s, expected scores are per seat.")
    for row in _hints_table(analysis):
        say(row)
    say(_analysis_summary(analysis))
    return 0


def _cmd_games(args: argparse.Namespace) -> int:
    with advisor(args.target, args.timeout) as client:
        found = client.list_games()
    if args.json:
        print_json(
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
        say(f"{g.name}: {g.min_players}-{g.max_players} players{variants}")
        for o in g.options:
            say(f"  option {o.name} = {o.default} (choices: {', '.join(o.choices)})")
    return 0


# --- serve -----------------------------------------------------------------------------------


def add_parsers(sub: Any) -> None:
    """Register play, review, suggest, hints and games."""
    p = sub.add_parser("play", help="play a game against the AI in the terminal")
    p.add_argument("game", help="game name (see 'hortus games')")
    add_game_setup(p)
    p.add_argument("--seat", type=non_negative_int, default=0, help="your seat (default 0)")
    p.add_argument("--seed", type=non_negative_int, default=None, help="seed of the setup, chance draws and AI")
    p.add_argument("--manual-chance", action="store_true", help="type chance outcomes instead of drawing them")
    p.add_argument(
        "--record", default=None, metavar="FILE", help="write the game record (JSONL) here at the end, for 'hortus review'"
    )
    p.add_argument(
        "--level", type=positive_int, default=0, help="the AI plays at this difficulty level (1-8) instead of a budget"
    )
    add_search_arguments(p)
    add_connection(p)
    p.set_defaults(func=_cmd_play)

    p = sub.add_parser("review", help="review a game record: every decision's loss and label, then accuracy per seat")
    p.add_argument("record", help="game record (JSONL, as 'hortus play --record' writes it)")
    add_search_arguments(p)
    p.add_argument("--search-seed", type=non_negative_int, default=0, help="seed of the review's searches (default 0)")
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
        source.add_argument("--seed", type=non_negative_int, default=None, help="a new game with this setup seed")
        add_game_setup(p)
        add_search_arguments(p)
        p.add_argument("--search-seed", type=non_negative_int, default=0, help="seed of the search (default 0)")
        p.add_argument(
            "--only",
            action="append",
            metavar="ACTION",
            help="what-if: consider only this move at the root (id or notation; repeatable)",
        )
        p.add_argument(
            "--avoid",
            action="append",
            metavar="ACTION",
            help="what-if: never consider this move at the root (id or notation; repeatable)",
        )
        if name == "suggest":
            p.add_argument(
                "--elo", type=float, default=None, help="play at this Elo on the game's scale (level 1 = 0) instead of a budget"
            )
        if name == "hints":
            p.add_argument("--max-moves", type=non_negative_int, default=0, help="moves to show (0 = all)")
        p.add_argument("--json", action="store_true", help="print JSON")
        add_connection(p)
        p.set_defaults(func=func)

    p = sub.add_parser("games", help="list the games the server plays")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_connection(p)
    p.set_defaults(func=_cmd_games)
