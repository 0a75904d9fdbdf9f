"""Search RPCs: SuggestMove, RankMoves and Analyze, and the continuations (``continue_from``) of
the trees they keep."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import replace

import grpc
from hortus.games import (
    State,
)
from hortus.search import (
    Analysis,
    Limits,
    SearchHandle,
    SearchTrees,
    analyze_stream,
)
from hortus.search.levels import LEVELS, Level, choose, elo_level
from hortus.server.cache_scope import cache_scope, client_identity
from hortus.server.continuation import MAX_TOKEN_BYTES, TokenError
from hortus.server.errors import (
    CapacityError,
    ContinuationError,
    RequestError,
    status_for,
)
from hortus.server.messages import analysis_message, turn_message
from hortus.server.requests import (
    CONTINUE_WAIT_S,
    DRAW_RESERVE_MS,
    NO_DEADLINE_S,
    Budget,
    ServicerCore,
    unary_rpc,
)
from hortus.v1 import advisor_pb2 as pb


class SearchRpcs(ServicerCore):
    """SuggestMove, RankMoves, Analyze."""

    @unary_rpc
    def SuggestMove(self, request: pb.SuggestMoveRequest, context: grpc.ServicerContext) -> pb.SuggestMoveResponse:
        if request.continue_from and self.routes is not None:
            owner = self.routes.owner(request.continue_from)
            if owner is not None:  # another worker keeps the subtree: it answers
                answer: pb.SuggestMoveResponse = self.routes.unary(
                    owner, "SuggestMove", request, pb.SuggestMoveResponse, context, client_identity(context)
                )
                return answer
        # One preparation: the position decoded once (the level's Elo scale is its game's),
        # the limits checked, and the deadline cut once, after any wait for kept trees.
        state = self._decode(request.position)
        self._check_decision(state)
        limits, level = self._suggest_limits(request, state)
        checked = self._checked_limits(limits, state)  # validated before the cache
        key: bytes | None = None
        if request.continue_from:
            # the kept subtree's answer depends on the chain of calls, not the request's bytes:
            # never looked up nor stored in the answer cache
            trees = self._take_kept(request.continue_from, "SuggestMove", context)
            try:
                budget = self._cut_by_deadline(checked, context)  # after the wait for the trees
                trees = self._continued_turn(request.continue_from, trees, state, budget.limits)
            except Exception:
                self.kept.keep(request.continue_from, trees, "SuggestMove")  # the token keeps its trees
                raise
        else:
            budget = self._cut_by_deadline(checked, context)
            key = self._cache_key("SuggestMove", request, request.limits, scope=cache_scope(state, context))
            if (cached := self._cached(key, pb.SuggestMoveResponse)) is not None:
                return cached
            trees = SearchTrees.start(state, budget.limits)
        try:
            analysis, partial = self._search_trees("SuggestMove", state, budget, context, trees)
        except CapacityError:
            if request.continue_from:  # refused before searching: the token keeps its trees
                self.kept.keep(request.continue_from, trees, "SuggestMove")
            raise
        if level is None:
            chosen = analysis.best
        else:
            chosen = choose(analysis, level.temperature, random.Random(int(request.limits.seed)))
        response = pb.SuggestMoveResponse(
            action=pb.Action(id=chosen.action, notation=chosen.notation),
            turn=turn_message(state, chosen),
            analysis=analysis_message(state, analysis, partial),
            # (a caller that left gets no answer: nothing to keep for it)
            continuation=self._keep_turn(state, chosen.action, trees) if context.is_active() else "",
        )
        if not response.continuation:
            # An answer with a token is not stored: the token continues once, and an answer
            # without it would make the seat's next search depend on what the cache held.
            self._cache_put(key, response, response.analysis)
        return response

    def _keep_turn(self, state: State, action: int, trees: SearchTrees) -> str:
        """The token under which the subtree of `action` is kept for the seat's next decision,
        when `action` leads straight to it (``SearchTrees.follow``: no chance event, no other
        seat in between); "" otherwise or when the server keeps no trees."""
        if not self.kept.enabled:
            return ""
        after = state.clone()
        after.apply(action)
        followed = trees.follow(state, action, after)
        return "" if followed is None else self.kept.store(followed, "SuggestMove")

    def _suggest_limits(self, request: pb.SuggestMoveRequest, state: State) -> tuple[pb.SearchLimits, Level | None]:
        """The search limits of a ``SuggestMove`` and the difficulty level it plays at (None:
        the best move of ``request.limits``): ``level``, or ``target_elo`` (strength by rating:
        a budget interpolated between the levels on the game's scale)."""
        by_elo = request.HasField("target_elo")
        if not request.level and not by_elo:
            return request.limits, None
        if by_elo:
            if request.level:
                raise RequestError("target_elo", "give a difficulty level or a target Elo, not both")
            game = state.game.name
            try:
                level = elo_level(game, request.target_elo)
            except ValueError as exc:
                raise RequestError("target_elo", str(exc)) from exc
            field = "target_elo"
        else:
            found = LEVELS.get(request.level)
            if found is None:
                raise RequestError("level", f"difficulty level must be 1..{len(LEVELS)} (0 = use limits), not {request.level}")
            level, field = found, "level"
        if request.limits.iterations or request.limits.time_ms:
            raise RequestError(
                "limits", f"give a {'target Elo' if by_elo else 'difficulty level'} or an iteration/time budget, not both"
            )
        if level.iterations > self.config.max_iterations:
            raise RequestError(
                field,
                f"{level.name if by_elo else f'level {level.level}'} searches {level.iterations} iterations, "
                f"over the server cap max_iterations={self.config.max_iterations}",
            )
        limits = pb.SearchLimits()
        limits.CopyFrom(request.limits)
        limits.iterations = level.iterations
        return limits, level

    def _hint_budget(self, budget: Budget, context: grpc.ServicerContext) -> Budget:
        """A hint's budget also measures how much the top moves depend on the draw, when the
        call's deadline leaves time for that after the search (it takes milliseconds)."""
        until = None
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < NO_DEADLINE_S:
            until = time.perf_counter() + remaining_s - DRAW_RESERVE_MS / 1000.0
        return replace(budget, draw_worlds=self.config.draw_worlds, draw_deadline=until)

    @unary_rpc
    def RankMoves(self, request: pb.RankMovesRequest, context: grpc.ServicerContext) -> pb.RankMovesResponse:
        state, budget = self._prepare(request.position, request.limits, context)  # validated before the cache
        draws = self._hint_draws(context)
        key = self._cache_key("RankMoves", request, request.limits, draws=draws, scope=cache_scope(state, context))
        if (cached := self._cached(key, pb.RankMovesResponse)) is not None:
            return cached
        budget = self._hint_budget(budget, context)
        analysis, partial = self._search("RankMoves", state, budget, context, request.max_moves)
        response = pb.RankMovesResponse(analysis=analysis_message(state, analysis, partial, request.max_moves))
        self._cache_put(key, response, response.analysis, draws=draws)
        return response

    def Analyze(self, request: pb.AnalyzeRequest, context: grpc.ServicerContext) -> Iterator[pb.AnalyzeResponse]:
        """Partial analyses every ``interval_ms`` of search, then exactly one final one; each
        carries the token that continues this analysis in a later call (``continue_from``:
        ``_continued``), under which its trees are kept when the call ends. A ``continue_from``
        of another worker of the group is answered by that worker (``hortus.server.routing``)."""
        if request.continue_from and self.routes is not None:
            owner = self.routes.owner(request.continue_from)
            if owner is not None:
                try:
                    self.check_accepting()
                    yield from self.routes.stream(
                        owner, "Analyze", request, pb.AnalyzeResponse, context, client_identity(context)
                    )
                except Exception as exc:  # noqa: BLE001 - mapped to a status right here
                    context.abort_with_status(status_for(exc, "Analyze"))
                return
        trees: SearchTrees | None = None
        try:
            self.check_accepting()
            self.check_size(request)
            interval = request.interval_ms
            if interval and interval < self.config.min_interval_ms:
                raise RequestError(
                    "interval_ms", f"{interval} is under the server cap min_interval_ms={self.config.min_interval_ms:g}"
                )
            state, budget = self._prepare(request.position, request.limits, context)
            if request.continue_from:
                trees = self._continued(request.continue_from, state, budget.limits, context)
                # again: waiting for the call it continues may have taken some of the deadline
                budget = self._budget(request.limits, context, state=state)
            else:
                trees = SearchTrees.start(state, budget.limits)
            budget = self._hint_budget(budget, context)
            who, waited_s = self._acquire_slot(context)
            budget = self._after_wait(budget, waited_s)
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            if trees is not None and request.continue_from:  # refused after all: the token keeps its trees
                self.kept.keep(request.continue_from, trees)
            context.abort_with_status(status_for(exc, "Analyze"))
        assert trees is not None
        before = trees.iterations  # what the kept trees held: the metrics count this call's own
        token = self.kept.issue() if self.kept.enabled else ""
        self._searching(+1)
        handle = SearchHandle()
        last: Analysis | None = None
        released = False
        failed = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._searching(-1)
                self._slots.release(batch=False, who=who)
                if last is not None:
                    self._notify("Analyze", replace(last, iterations=last.iterations - before), handle.cancelled)

        try:
            if not context.add_callback(handle.cancel):
                handle.cancel()
            for analysis, final in analyze_stream(
                state,
                budget.limits,
                handle,
                float(interval),
                detail=request.max_moves,
                trees=trees,
                draw_worlds=budget.draw_worlds,
                draw_deadline=budget.draw_deadline,
            ):
                last = analysis
                if final:
                    release()
                partial = budget.partial(analysis, handle.cancelled) if final else True
                yield pb.AnalyzeResponse(
                    analysis=analysis_message(state, analysis, partial, request.max_moves),
                    final=final,
                    continuation=token,
                )
        except GeneratorExit:  # the call ended (cancelled) while a partial result was being sent;
            handle.cancel()  # the search is paused during a send, so it stops right here
            raise
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            failed = True
            context.abort_with_status(status_for(exc, "Analyze"))
        finally:
            release()
            if token:
                # Kept even when cancelled (a caller that stopped early continues from there:
                # the trees are whole after every iteration); not after a failure.
                if failed:
                    self.kept.release(token)
                else:
                    self.kept.keep(token, trees)

    def _take_kept(self, token: str, kind: str, context: grpc.ServicerContext) -> SearchTrees:
        """The trees kept under `token` for a call of `kind` (Analyze, SuggestMove), now the
        caller's. ``ContinuationError`` when nothing is kept under it (NOT_FOUND) or its call
        still runs past a short wait (FAILED_PRECONDITION); INVALID_ARGUMENT for a token that
        is not one, or one kept for the other method (it stays kept then)."""
        field = "continue_from"
        if len(token.encode()) > MAX_TOKEN_BYTES:
            raise RequestError(field, f"{len(token.encode())} bytes: not a token of this server (at most {MAX_TOKEN_BYTES})")
        if not self.kept.enabled:
            raise ContinuationError(field, "CONTINUATION_OFF", "this server keeps no analyses (continue_trees = 0); start afresh")
        wait_s = CONTINUE_WAIT_S
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < NO_DEADLINE_S:
            wait_s = min(wait_s, remaining_s / 4.0)
        try:
            return self.kept.take(token, wait_s, kind)
        except TokenError as exc:
            if exc.reason == "other_kind":
                raise RequestError(field, exc.message) from exc
            raise ContinuationError(
                field, f"CONTINUATION_{exc.reason.upper()}", exc.message, in_use=exc.reason == "in_use"
            ) from exc

    def _continued(self, token: str, state: State, limits: Limits, context: grpc.ServicerContext) -> SearchTrees:
        """The kept trees `token` names, checked to continue `state` with `limits`: the same
        position bytes (so the same seat and view: the trees only know what that seat sees) and
        the same seed, threads and constraints (``_take_kept`` for the token's own errors);
        INVALID_ARGUMENT for a token that continues something else (the trees stay kept
        under the token then)."""
        field = "continue_from"
        trees = self._take_kept(token, "Analyze", context)
        problem: tuple[str, str] | None = None
        if trees.position != state.encode():
            problem = (
                field,
                "continues the analysis of another position (other position bytes); send that position, or start afresh",
            )
        else:
            for name in ("seed", "threads", "allow_actions", "avoid_actions"):
                mine, kept = getattr(limits, name), getattr(trees.limits, name)
                if name.endswith("_actions"):  # the same root moves in any order
                    mine, kept = sorted(set(mine)), sorted(set(kept))
                if mine != kept:
                    problem = (
                        f"limits.{name}",
                        f"{mine} differs from the analysis continue_from continues ({kept}): it goes on with the same trees",
                    )
                    break
            if problem is None and not trees.continues(state, limits):
                problem = (field, "continues an analysis searched with other settings; start afresh")
        if problem is not None:
            self.kept.keep(token, trees)
            raise RequestError(*problem)
        return trees

    def _continued_turn(self, token: str, trees: SearchTrees, state: State, limits: Limits) -> SearchTrees:
        """The subtree a SuggestMove kept under `token` (its suggested move's), checked to
        continue `state` with `limits`: exactly the position that move led to (the seat's own
        next decision: the subtree only knows what that seat saw, and nothing was revealed
        since) and the same threads (one tree each); no root constraints (the subtree's root
        moves were expanded without them). The seed may differ: the trees go on with their
        own random stream. Returned as trees of this call's limits; on INVALID_ARGUMENT the
        caller keeps them under the token."""
        field = "continue_from"
        problem: tuple[str, str] | None = None
        if trees.position != state.encode():
            problem = (
                field,
                "continues the AI's turn at another position: send the position its suggested move "
                "led to, or ask afresh without continue_from",
            )
        elif limits.threads != trees.limits.threads:
            problem = (
                "limits.threads",
                f"{limits.threads} differs from the search continue_from continues ({trees.limits.threads} trees)",
            )
        else:
            for name in ("allow_actions", "avoid_actions"):
                if getattr(limits, name):
                    problem = (
                        f"limits.{name}",
                        "a continued turn searches the kept subtree, whose moves were "
                        "expanded without constraints: ask afresh to constrain them",
                    )
                    break
        if problem is None:
            # the kept trees' limits are their first call's (its seed, its root's constraints):
            # they continue with this call's, which must grow the same trees but for those
            own = replace(trees.limits, seed=limits.seed, allow_actions=(), avoid_actions=())
            continued = replace(trees, limits=own)
            if continued.continues(state, limits):
                return replace(trees, limits=limits)
            problem = (field, "continues a search with other settings; ask afresh without continue_from")
        raise RequestError(*problem)  # the caller keeps the trees under the token
