"""Game review: ReviewGame, every decision of a record searched, its loss and label."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import replace

import grpc
from hortus.games import (
    InvalidPositionError,
    ReviewThresholds,
    State,
)
from hortus.search import (
    Limits,
    SearchHandle,
)
from hortus.server import review
from hortus.server.batch_call import BatchCall
from hortus.server.errors import (
    NoAnswerError,
    RequestError,
    ShuttingDownError,
    status_for,
)
from hortus.server.requests import (
    MAX_NAME_BYTES,
    MAX_POSITION_BYTES,
    ServicerCore,
    check_bytes,
)
from hortus.v1 import advisor_pb2 as pb


class ReviewRpcs(ServicerCore):
    """ReviewGame."""

    def _review_start(self, request: pb.ReviewGameRequest) -> State:
        """The record's first position: the game set up with its seed (or waiting at the setup
        chance node), or the given position's bytes, checked against the other fields."""
        if not request.position:
            seed = int(request.seed) if request.HasField("seed") else None
            return self._new_state(request.game, request.players, request.variant, request.options, seed)
        if request.HasField("seed"):
            raise RequestError("position", "give the setup seed or the first position, not both")
        if request.options:
            raise RequestError("options", "a position carries its rules: give options only with a seed")
        game = self._game(request.game, "game")
        check_bytes("position", request.position, MAX_POSITION_BYTES, "MAX_POSITION_BYTES")
        try:
            state = game.decode(request.position)
        except InvalidPositionError as exc:
            part = exc.field.removeprefix("position.").removeprefix("position")
            raise RequestError("position", f"{part}: {exc.reason}" if part else exc.reason) from exc
        if request.players and request.players != state.num_players:
            raise RequestError("players", f"the position has {state.num_players} seats, not {request.players}")
        if request.variant:
            check_bytes("variant", request.variant, MAX_NAME_BYTES, "MAX_NAME_BYTES")
            if request.variant not in game.variants:
                raise RequestError(
                    "variant", f"unknown variant {request.variant!r} for {game.name}; known: {list(game.variants)}"
                )
            if game.variant_code(request.variant) != state.variant_code:
                raise RequestError("variant", f"the position is not of variant {request.variant!r}")
        return state

    def _review_one(
        self,
        decision: review.Decision,
        request: pb.ReviewGameRequest,
        context: grpc.ServicerContext,
        call: "BatchCall",
        thresholds: ReviewThresholds,
    ) -> review.DecisionReview | None:
        """One decision of a review, in a batch slot (waited for, like a batch position); None
        when the call ended or its deadline came before a search got anywhere."""
        while not self._slots.acquire_batch(timeout=0.02):
            if call.stop.is_set():
                return None
        try:
            if call.stop.is_set():
                return None
            try:
                budget = self._budget(request.limits, context, reserve_ms=call.reserve_ms)
            except NoAnswerError:
                return None
            handle = SearchHandle()
            call.track(handle)

            def comparison() -> Limits | None:  # its time budget as the deadline stands then
                try:
                    return self._budget(request.limits, context, reserve_ms=call.reserve_ms).limits
                except NoAnswerError:
                    return None

            self._searching(+1)
            try:
                result, analyses = review.review_decision(
                    decision, budget.limits, thresholds, handle, comparison_limits=comparison
                )
            finally:
                self._searching(-1)
                call.untrack(handle)
        finally:
            self._slots.release(batch=True)
        for analysis in analyses:
            self._notify("ReviewGame", analysis, handle.cancelled)
        if result is None:
            return None
        # Partial as for any search: a time-only budget run to its end is complete.
        return replace(result, partial=any(budget.partial(a, handle.cancelled) for a in analyses))

    def ReviewGame(self, request: pb.ReviewGameRequest, context: grpc.ServicerContext) -> Iterator[pb.ReviewGameResponse]:
        """Replay a game record and review every decision (see the proto): the whole record
        is checked first; then the decisions are searched in parallel in the batch slots (at
        most ``window`` ahead of the one to send next) and sent in move order, then the
        summary. At the deadline, what was analysed is sent and the call ends
        DEADLINE_EXCEEDED."""
        started = time.perf_counter()
        try:
            self.check_accepting()
            self.check_size(request)
            state = self._review_start(request)
            for name in ("allow_actions", "avoid_actions"):
                if getattr(request.limits, name):
                    raise RequestError(f"limits.{name}", "a review searches every move of each decision: no constraints")
            self._budget(request.limits, context)  # the caps, before anything is replayed
            decisions = review.replay(state, request.moves)
            thresholds = state.game.review_thresholds(state.num_players)
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "ReviewGame"))
        call, give_up_at = self._batch_call(context)
        window = self.config.window
        pending: dict[int, futures.Future[review.DecisionReview | None]] = {}
        reviews: list[review.DecisionReview] = []
        submitted = 0
        expired = False
        unanswered = 0
        try:
            for k in range(len(decisions)):
                while not expired and submitted < len(decisions) and submitted < k + window:
                    try:
                        pending[submitted] = self._batch_pool.submit(
                            self._review_one, decisions[submitted], request, context, call, thresholds
                        )
                    except RuntimeError:  # the pool is shut down
                        raise ShuttingDownError("the server is shutting down: send the review again") from None
                    submitted += 1
                if k >= submitted:  # expired before this decision was started: never answered
                    unanswered += len(decisions) - k
                    break
                future = pending.pop(k)
                while True:
                    timeout = None if give_up_at is None or expired else max(0.0, give_up_at - time.monotonic())
                    try:
                        result = future.result(timeout=timeout)
                        break
                    except futures.TimeoutError:
                        expired = True  # stop: the running searches answer with what they found
                        call.end()
                    except futures.CancelledError:
                        raise ShuttingDownError("the server is shutting down: send the review again") from None
                if result is None:
                    unanswered += 1
                    continue
                reviews.append(result)
                yield pb.ReviewGameResponse(move=result.message())
            if call.stop.is_set() and not context.is_active():
                return  # the client went away
            if expired or unanswered:
                raise NoAnswerError(
                    f"the call's deadline came before every decision was analysed: {len(reviews)} of {len(decisions)} were"
                )
            elapsed_ms = (time.perf_counter() - started) * 1000.0
            yield pb.ReviewGameResponse(summary=review.summary(reviews, state.num_players, thresholds, elapsed_ms))
        except GeneratorExit:  # the call ended while an answer was being sent
            call.end()
            raise
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "ReviewGame"))
        finally:
            call.end()
            for future in pending.values():
                future.cancel()
