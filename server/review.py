"""Game review (``ReviewGame``): a game record replayed, every decision analysed from the
mover's own view, each played move labelled by its loss against the search's best move.

Game-agnostic: the record is replayed through ``State.apply``, the thresholds come from the
game (``Game.review_thresholds``), and every search is ``hortus.search.analyze`` on the
position as it stood, the same path as ``SuggestMove``/``RankMoves``: the search samples again,
on every iteration, everything the mover could not see, so a decision's review depends only
on the mover's view (tests/test_review.py re-deals the rest and compares).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from hortus.games import CHANCE, TERMINAL, IllegalActionError, ReviewThresholds, State
from hortus.search import Analysis, Limits, MoveInfo, SearchHandle, analyze
from hortus.server.errors import RequestError
from hortus.v1 import advisor_pb2 as pb

__all__ = ["Decision", "decision_seed", "replay", "review_decision", "summary"]

MAX_RECORD_MOVES = 20_000
"""Cap of ``ReviewGameRequest.moves`` (the longest random games of the four games are under a
few thousand actions; max_message_bytes bounds the request as well)."""
MAX_NOTATION_BYTES = 256  # as ActionRef.notation elsewhere

_SEED_STRIDE = 0x9E3779B97F4A7C15
_COMPARISON_SALT = 0xD1B54A32D192ED03
_MASK = 0xFFFFFFFFFFFFFFFF

# lichess's move accuracy from a loss in win-percentage points (its "accuracy" page), and the
# loss its blunder threshold stands for: a game's losses are scaled so that its own blunder
# threshold counts as this many points, which keeps one accuracy scale for every game.
_ACCURACY_A, _ACCURACY_K, _ACCURACY_B = 103.1668, 0.04354, 3.1669
_LICHESS_BLUNDER_POINTS = 15.0


@dataclass(frozen=True)
class Decision:
    """A decision of the record: the position before it (the whole position; the search
    samples what the mover cannot see) and the move played."""

    index: int  # index in ReviewGameRequest.moves
    seat: int
    state: State
    played: int
    forced: bool  # the only legal move


def decision_seed(seed: int, index: int) -> int:
    """The search seed of the decision at `index`: a function of the request's seed and the
    index alone, so a review is the same whatever order its decisions ran in."""
    return (seed * _SEED_STRIDE + (index + 1) * _COMPARISON_SALT) & _MASK


def _action(state: State, ref: pb.ActionRef, field: str) -> int:
    """The action a record's entry names (id or notation), checked legal at `state`."""
    kind = ref.WhichOneof("kind")
    if kind == "id":
        action = int(ref.id)
        if state.is_chance():
            legal = {a for a, _ in state.chance_outcomes()}
        else:
            legal = set(state.legal_actions())
        if action not in legal:
            what = "chance outcome" if state.is_chance() else "legal move"
            raise RequestError(field, f"action {action} is not a {what} at this point of the game")
        return action
    if kind == "notation":
        if len(ref.notation.encode()) > MAX_NOTATION_BYTES:
            raise RequestError(f"{field}.notation", f"exceeds the server cap MAX_NOTATION_BYTES={MAX_NOTATION_BYTES}")
        try:
            return state.parse_action(ref.notation)
        except IllegalActionError as exc:
            raise RequestError(field, str(exc)) from exc
    if kind == "draw_seed":
        raise RequestError(f"{field}.draw_seed", "a record gives each chance outcome as it came (an id or a notation)")
    raise RequestError(field, "give an action id or a notation")


def replay(start: State, moves: Sequence[pb.RecordedMove]) -> list[Decision]:
    """Every decision of the record, after replaying and checking all of it: RequestError
    naming ``moves[k].action`` for the first action that is not legal where it stands (or
    comes after the end of the game). Chance outcomes are replayed, not reviewed."""
    if len(moves) > MAX_RECORD_MOVES:
        raise RequestError("moves", f"{len(moves)} moves exceed the server cap MAX_RECORD_MOVES={MAX_RECORD_MOVES}")
    state = start.clone()
    decisions: list[Decision] = []
    for k, move in enumerate(moves):
        field = f"moves[{k}].action"
        player = state.current_player
        if player == TERMINAL:
            raise RequestError(field, "the game is over: no action can follow")
        action = _action(state, move.action, field)
        if player != CHANCE:
            forced = len(state.legal_actions()) == 1
            decisions.append(Decision(index=k, seat=player, state=state.clone(), played=action, forced=forced))
        try:
            state.apply(action)
        except IllegalActionError as exc:  # checked above; kept so a kernel refusal is a bad move too
            raise RequestError(field, str(exc)) from exc
    return decisions


@dataclass(frozen=True)
class DecisionReview:
    """The review of one decision (the fields of ``ReviewedMove``)."""

    decision: Decision
    best: MoveInfo
    best_value: tuple[float, float]  # (win probability, expected points) of the mover
    played_value: tuple[float, float]
    label: str
    partial: bool
    iterations: int
    exact: bool = False  # both win probabilities are exact (MoveInfo.exact)

    @property
    def win_probability_loss(self) -> float:
        return max(0.0, self.best_value[0] - self.played_value[0])

    @property
    def points_loss(self) -> float:
        return max(0.0, self.best_value[1] - self.played_value[1])

    def message(self) -> pb.ReviewedMove:
        d = self.decision
        state = d.state
        pv = list(self.best.principal_variation) or [self.best.action]
        line: list[pb.Action] = []
        replay_state = state.clone()
        for action in pv:
            line.append(pb.Action(id=action, notation=replay_state.action_to_string(action)))
            replay_state.apply(action)
        return pb.ReviewedMove(
            index=d.index,
            seat=d.seat,
            played=pb.Action(id=d.played, notation=state.action_to_string(d.played)),
            best=pb.Action(id=self.best.action, notation=self.best.notation),
            best_line=line,
            best_win_probability=self.best_value[0],
            played_win_probability=self.played_value[0],
            best_expected_points=self.best_value[1],
            played_expected_points=self.played_value[1],
            win_probability_loss=self.win_probability_loss,
            points_loss=self.points_loss,
            label=self.label,
            forced=d.forced,
            partial=self.partial,
            iterations=self.iterations,
            exact=self.exact,
        )


def _value(move: MoveInfo, seat: int) -> tuple[float, float]:
    return (move.win_probability, move.expected_scores[seat])


def _find(analysis: Analysis, action: int) -> MoveInfo | None:
    return next((m for m in analysis.moves if m.action == action and m.visits > 0), None)


def review_decision(
    decision: Decision,
    limits: Limits,
    thresholds: ReviewThresholds,
    handle: SearchHandle,
    comparison_limits: Callable[[], Limits | None] | None = None,
) -> tuple[DecisionReview | None, list[Analysis]]:
    """Search the decision (seeded by ``decision_seed``) and label the move played; returns
    the review (None: no search got an iteration in, e.g. the call's deadline) and the
    analyses run (for the servicer's listeners).

    A played move other than the best is compared in a second search with only the two moves
    allowed: the first search's statistics for a move it rarely visited are few and
    pessimistic, and comparing two moves on visits of the same order is what makes the loss a
    fair measure. `comparison_limits` gives that search's budget when it starts (a call's
    deadline is nearer by then; None from it, or no callable: no comparison, the first search's
    statistics are used if it visited the move); no comparison either once `handle` is
    cancelled."""
    seat = decision.seat
    limits = replace(limits, seed=decision_seed(limits.seed, decision.index))
    main = analyze(decision.state, limits, handle, detail=1)
    analyses = [main]
    if main.iterations == 0 or not main.moves or main.moves[0].visits == 0:
        return None, analyses
    best = main.moves[0]
    partial = main.partial
    iterations = main.iterations
    if best.action == decision.played:
        value = _value(best, seat)
        return DecisionReview(decision, best, value, value, "best", partial, iterations, best.exact), analyses
    best_value = _value(best, seat)
    played = _find(main, decision.played)
    played_value = _value(played, seat) if played is not None else None
    exact = best.exact and played is not None and played.exact
    budget = comparison_limits() if comparison_limits is not None and not handle.cancelled else None
    if budget is not None:
        pair = replace(
            budget,
            seed=(limits.seed ^ _COMPARISON_SALT) & _MASK,
            allow_actions=(best.action, decision.played),
            avoid_actions=(),
        )
        comparison = analyze(decision.state, pair, handle)
        analyses.append(comparison)
        iterations += comparison.iterations
        b, p = _find(comparison, best.action), _find(comparison, decision.played)
        if b is not None and p is not None:
            best_value, played_value = _value(b, seat), _value(p, seat)
            partial = partial or comparison.partial
            exact = b.exact and p.exact
        else:
            partial = True
    if played_value is None:  # never searched and no comparison: no measure of the move
        return None, analyses
    loss = best_value[0] - played_value[0] if thresholds.unit != "points" else best_value[1] - played_value[1]
    review = DecisionReview(
        decision, best, best_value, played_value, thresholds.label(max(0.0, loss)), partial, iterations, exact
    )
    return review, analyses


def thresholds_message(thresholds: ReviewThresholds) -> pb.ReviewThresholds:
    return pb.ReviewThresholds(
        unit=thresholds.unit,
        inaccuracy=thresholds.inaccuracy,
        mistake=thresholds.mistake,
        blunder=thresholds.blunder,
    )


def move_accuracy(loss: float, thresholds: ReviewThresholds) -> float:
    """lichess's accuracy of one move, in % (100 = lost nothing), from its loss in the
    thresholds' unit scaled so that the blunder threshold counts as 15 win-percentage points."""
    points = loss / thresholds.blunder * _LICHESS_BLUNDER_POINTS if thresholds.blunder > 0 else 0.0
    value = _ACCURACY_A * math.exp(-_ACCURACY_K * points) - _ACCURACY_B
    return min(100.0, max(0.0, value))


_COUNTS: Mapping[str, str] = {
    "best": "best",
    "good": "good",
    "inaccuracy": "inaccuracies",
    "mistake": "mistakes",
    "blunder": "blunders",
}


def summary(reviews: Sequence[DecisionReview], players: int, thresholds: ReviewThresholds, elapsed_ms: float) -> pb.ReviewSummary:
    """Per seat: label counts, mean losses and accuracy over its unforced decisions."""
    seats = [pb.SeatReview(seat=s) for s in range(players)]
    losses: list[list[tuple[float, float, float]]] = [[] for _ in range(players)]
    for review in reviews:
        seat = seats[review.decision.seat]
        if review.decision.forced:
            seat.forced += 1
            continue
        seat.decisions += 1
        name = _COUNTS[review.label]
        setattr(seat, name, getattr(seat, name) + 1)
        loss = review.points_loss if thresholds.unit == "points" else review.win_probability_loss
        losses[review.decision.seat].append((review.win_probability_loss, review.points_loss, move_accuracy(loss, thresholds)))
    for seat, rows in zip(seats, losses):
        if rows:
            seat.mean_win_probability_loss = sum(r[0] for r in rows) / len(rows)
            seat.mean_points_loss = sum(r[1] for r in rows) / len(rows)
            seat.accuracy = sum(r[2] for r in rows) / len(rows)
        else:
            seat.accuracy = 100.0
    return pb.ReviewSummary(
        seats=seats,
        thresholds=thresholds_message(thresholds),
        decisions=len(reviews),
        elapsed_ms=elapsed_ms,
    )
