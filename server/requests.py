"""What every RPC of the servicer shares: decoding and checking a request once (its position,
its caps, its what-if constraints), the search budget cut by the call's deadline, search slots,
the answer cache and the listeners."""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent import futures
from dataclasses import dataclass, replace
from typing import TypeVar

import grpc
from google.protobuf.message import Message
from hortus.games import (
    CHANCE,
    TERMINAL,
    Game,
    IllegalActionError,
    InvalidPositionError,
    State,
    UnknownGameError,
)
from hortus.search import (
    Analysis,
    ConstraintError,
    Limits,
    SearchHandle,
    SearchTrees,
    analyze,
    analyze_stream,
)
from hortus.search.analysis import root_actions
from hortus.server.batch_call import BatchCall, deadline_error
from hortus.server.cache import AnswerCache
from hortus.server.cache_scope import client_identity
from hortus.server.slots import QUEUE_DEADLINE_SHARE, QUEUE_MIN_DEADLINE_S, QUEUE_WAIT_S, SearchSlots
from hortus.server.config import ServerConfig
from hortus.server.continuation import KeptAnalyses
from hortus.server.routing import WorkerRoutes, worker_prefix
from hortus.server.errors import (
    CapacityError,
    NoAnswerError,
    RequestError,
    ShuttingDownError,
    rpc_errors,
)
from hortus.v1 import advisor_pb2 as pb

import hortus
from hortus import games
from hortus.views import ViewError, structured_to_view

PROTOCOL = "hortus.v1"
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Advisor"].full_name

NO_DEADLINE_S = 1e9  # time_remaining() of a call without deadline is ~infinite
DEADLINE_SHARE = 0.15  # a search also stops this share of the time left before the deadline
# (8% let 5% of 1 s-deadline answers arrive late under bench/load.py at a load average of
# 11-18 on 2 cores: the answer waits for the GIL behind the other calls' threads)
GIVE_UP_SHARE = 0.2  # a batch call answers its unsearched positions this share of its time early
CONTINUE_WAIT_S = 1.0  # continue_from waits this long (at most) for the call it continues to end
DRAW_RESERVE_MS = 250.0  # the draw is measured only this long before the deadline (it takes ms)
# Caps on the sizes a request controls, beyond those of ServerConfig (max_message_bytes,
# max_actions_per_request, max_batch_size, ...). Each is checked before anything else reads
# the field; going over one is INVALID_ARGUMENT naming the field and the cap.
MAX_ID_BYTES = 256  # EvaluateRequest.id
MAX_NAME_BYTES = 64  # game and variant names, rule option names and values (UTF-8)
MAX_OPTIONS = 64  # NewGameRequest.options entries
MAX_NOTATION_BYTES = 256  # ActionRef.notation (UTF-8)
MAX_POSITION_BYTES = 64 * 1024  # Position.encoded, and Position.structured serialized

SearchListener = Callable[[str, Analysis, bool], None]
"""Called after every search with (method, analysis, cancelled); e.g. for metrics."""


@dataclass(frozen=True)
class CheckedLimits:
    """A request's limits checked against the caps, before the call's deadline cuts them."""

    limits: Limits  # time_ms: the caller's, or max_time_ms
    time_only: bool  # the caller gave a time budget and no iteration budget
    requested_ms: float  # the caller's time budget (0: none)


@dataclass(frozen=True)
class Budget:
    """The limits a search runs with, and whether the caller's budget is time alone."""

    limits: Limits
    time_only: bool  # the caller gave a time budget and no iteration budget
    time_cut: bool  # the deadline (or max_time_ms) shortened the caller's time budget
    draw_worlds: int = 0  # hints measure the draw dependence of their top moves (analyze's)
    draw_deadline: float | None = None  # ... unless perf_counter() is past this instant

    def partial(self, analysis: Analysis, cancelled: bool) -> bool:
        """Whether `analysis` was cut short: a time-only budget run to its end is complete."""
        if self.time_only and not self.time_cut:
            return cancelled
        return analysis.partial or cancelled


def check_bytes(field: str, value: str | bytes, cap: int, what: str) -> None:
    """RequestError naming `field` and `what` (the cap) when `value` is over `cap` bytes."""
    size = len(value.encode() if isinstance(value, str) else value)
    if size > cap:
        raise RequestError(field, f"{size} bytes exceed the server cap {what}={cap}")


_Request = TypeVar("_Request", bound=Message)
_Response = TypeVar("_Response")
_Answer = TypeVar("_Answer", bound=Message)


_Servicer = TypeVar("_Servicer", bound="ServicerCore")


def unary_rpc(
    method: Callable[[_Servicer, _Request, grpc.ServicerContext], _Response],
) -> Callable[[_Servicer, _Request, grpc.ServicerContext], _Response]:
    """A unary RPC: refused UNAVAILABLE while the server drains, the request's size checked
    first, and any exception turned into a status."""

    @functools.wraps(method)
    def checked(self: _Servicer, request: _Request, context: grpc.ServicerContext) -> _Response:
        self.check_accepting()
        self.check_size(request)
        return method(self, request, context)

    return rpc_errors(checked)


class ServicerCore:
    """The state and request preparation the RPC families share (``hortus.server.service``
    composes them into ``AdvisorServicer``)."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config if config is not None else ServerConfig()
        self._slots = SearchSlots(self.config.max_concurrent_searches)
        self._batch_pool = futures.ThreadPoolExecutor(
            max_workers=self.config.max_concurrent_searches, thread_name_prefix="hortus-batch"
        )
        self._lock = threading.Lock()
        self.searches_in_flight = 0
        self.listeners: list[SearchListener] = []
        self.cache = AnswerCache(self.config.cache_bytes)
        """Answers of deterministic requests (``_cache_key``)."""
        self.routes = WorkerRoutes(self.config.worker_routes, self.config.worker_index) if self.config.worker_routes else None
        """The other workers of a ``--workers N`` group, where their kept trees are continued."""
        self.kept = KeptAnalyses(
            self.config.continue_trees,
            self.config.continue_bytes,
            self.config.continue_idle_s,
            prefix=worker_prefix(self.config.worker_index) if self.routes is not None else "",
        )
        """Trees of ended ``Analyze`` calls, for ``continue_from``."""
        self.draining = threading.Event()
        """Set when the server starts shutting down: batch calls accept no new position."""

    def close(self) -> None:
        """Stop the batch pool and the kept trees' timer (after the server stopped)."""
        self._batch_pool.shutdown(wait=False, cancel_futures=True)
        self.kept.close()
        if self.routes is not None:
            self.routes.close()

    # --- decoding and validation ---------------------------------------------------------
    def check_accepting(self) -> None:
        """ShuttingDownError (UNAVAILABLE, which clients retry elsewhere) for a new call while
        the server drains; calls already running are not affected."""
        if self.draining.is_set():
            raise ShuttingDownError("the server is shutting down: send the call elsewhere")

    def check_size(self, request: Message) -> None:
        """The one check of a request message's size against ``max_message_bytes`` (gRPC's
        own receive limit is a little larger, so that this check answers, naming the cap)."""
        cap = self.config.max_message_bytes
        size = request.ByteSize()
        if size > cap:
            raise RequestError("request", f"{size} bytes exceed the server cap max_message_bytes={cap}")

    @staticmethod
    def _game(name: str, field: str) -> Game:
        check_bytes(field, name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        try:
            return games.get(name)
        except UnknownGameError as exc:
            raise RequestError(field, str(exc)) from exc

    def _decode(self, position: pb.Position) -> State:
        """The state of a request's position: its encoded bytes (InvalidPositionError names the
        bad field) or its structured view, completed by sampling the hidden parts."""
        check_bytes("position.encoded", position.encoded, MAX_POSITION_BYTES, "MAX_POSITION_BYTES")
        if not position.HasField("structured"):
            game = self._game(position.game, "position.game")
            try:
                return game.decode(position.encoded)
            except InvalidPositionError as exc:
                # The decoder names a part of the bytes (header fields such as the checksum, or
                # a field of the state): the request's field is position.encoded, the part goes
                # into the description.
                part = exc.field.removeprefix("position.").removeprefix("position")
                detail = f"{part}: {exc.reason}" if part else exc.reason
                raise RequestError("position.encoded", detail) from exc
        if position.encoded:
            raise RequestError("position", "give encoded bytes or a structured view, not both")
        view_bytes = position.structured.ByteSize()
        if view_bytes > MAX_POSITION_BYTES:
            raise RequestError(
                "position.structured", f"{view_bytes} bytes exceed the server cap MAX_POSITION_BYTES={MAX_POSITION_BYTES}"
            )
        try:
            name, view = structured_to_view(position.structured)
        except ViewError as exc:
            raise RequestError(f"position.{exc.field}", exc.description) from exc
        game = self._game(position.game or name, "position.game")
        if game.name != name:
            raise RequestError("position.structured", f"holds a {name} view, not a {game.name} one")
        try:
            return game.from_view(view, seed=int(position.structured.seed))
        except InvalidPositionError as exc:
            raise RequestError(f"position.structured.{name}.{exc.field}", exc.reason) from exc

    @staticmethod
    def _check_decision(state: State) -> None:
        player = state.current_player
        if player == TERMINAL:
            raise RequestError("position", "the game is over: there is no move to search")
        if player == CHANCE:
            raise RequestError("position", "chance node: apply the chance outcome first (see LegalActions)")

    def _constraints(self, state: State, request: pb.SearchLimits) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``limits.allow_actions`` / ``avoid_actions`` (ids or notations) as action ids, each
        checked legal at the root; INVALID_ARGUMENT names the entry (limits.allow_actions[2])."""
        cap = self.config.max_actions_per_request
        out: list[tuple[int, ...]] = []
        for name in ("allow_actions", "avoid_actions"):
            refs = getattr(request, name)
            if len(refs) > cap:
                raise RequestError(f"limits.{name}", f"{len(refs)} actions exceed the server cap max_actions_per_request={cap}")
            ids: list[int] = []
            for i, ref in enumerate(refs):
                field = f"limits.{name}[{i}]"
                kind = ref.WhichOneof("kind")
                if kind == "id":
                    ids.append(int(ref.id))
                elif kind == "notation":
                    check_bytes(f"{field}.notation", ref.notation, MAX_NOTATION_BYTES, "MAX_NOTATION_BYTES")
                    try:
                        ids.append(state.parse_action(ref.notation))
                    except IllegalActionError as exc:
                        raise RequestError(field, str(exc)) from exc
                else:
                    raise RequestError(field, "give an action id or a notation")
            out.append(tuple(ids))
        allow, avoid = out
        try:
            root_actions(state, Limits(allow_actions=allow, avoid_actions=avoid))  # legal, something left
        except ConstraintError as exc:
            raise RequestError(f"limits.{exc.field}", exc.message) from exc
        return allow, avoid

    def _budget(
        self,
        request: pb.SearchLimits,
        context: grpc.ServicerContext,
        reserve_ms: float = 0.0,
        state: State | None = None,
    ) -> Budget:
        """Limits from a request, checked against the caps and cut by the call's deadline;
        with `state`, also its what-if constraints (``_constraints``).

        `reserve_ms` (batch positions): the search also ends this long before the deadline,
        the time the call keeps for answering its other positions (NoAnswerError if that
        leaves no time to search)."""
        return self._cut_by_deadline(self._checked_limits(request, state), context, reserve_ms)

    def _checked_limits(self, request: pb.SearchLimits, state: State | None = None) -> CheckedLimits:
        """A request's limits checked against the caps (and, with `state`, its what-if
        constraints), before the call's deadline cuts them (``_cut_by_deadline``): a call that
        may wait (``continue_from``) checks first and cuts once, after waiting."""
        cfg = self.config
        if request.iterations > cfg.max_iterations:
            raise RequestError(
                "limits.iterations",
                f"{request.iterations} exceeds the server cap max_iterations={cfg.max_iterations}",
            )
        requested_ms = request.time_ms
        if not math.isfinite(requested_ms) or requested_ms < 0:
            raise RequestError("limits.time_ms", f"must be a finite number of milliseconds >= 0, not {requested_ms}")
        if requested_ms > cfg.max_time_ms:
            raise RequestError("limits.time_ms", f"{requested_ms:g} exceeds the server cap max_time_ms={cfg.max_time_ms:g}")
        threads = request.threads or 1
        if threads > cfg.max_threads:
            raise RequestError("limits.threads", f"{threads} exceeds the server cap max_threads={cfg.max_threads}")

        time_only = request.iterations == 0 and requested_ms > 0
        if request.iterations:
            iterations = int(request.iterations)
        else:
            iterations = cfg.max_iterations if time_only else cfg.default_iterations
        limits = Limits(
            iterations=iterations,
            time_ms=requested_ms if requested_ms > 0 else cfg.max_time_ms,
            seed=int(request.seed),
            threads=threads,
            max_nodes=cfg.max_nodes,
        )
        if state is not None:
            allow, avoid = self._constraints(state, request)
            limits = replace(limits, allow_actions=allow, avoid_actions=avoid)
        return CheckedLimits(limits, time_only, requested_ms)

    def _cut_by_deadline(self, checked: CheckedLimits, context: grpc.ServicerContext, reserve_ms: float = 0.0) -> Budget:
        """The budget of `checked` limits with the call's deadline as it stands now."""
        cfg = self.config
        time_ms = checked.limits.time_ms
        assert time_ms is not None  # a checked budget always has a time limit (max_time_ms at most)
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < NO_DEADLINE_S:
            remaining_ms = remaining_s * 1000.0
            # The margin grows with the deadline: the answer's own work (ranking, sending) takes
            # longer on a loaded machine, where a fixed 50 ms was seen to arrive late.
            deadline_ms = remaining_ms - max(cfg.deadline_margin_ms, remaining_ms * DEADLINE_SHARE, reserve_ms)
            if reserve_ms and deadline_ms < 1.0:
                raise NoAnswerError("the call's deadline arrived before this position could be searched")
            if deadline_ms < 1.0:  # a very tight deadline: keep half of what is left
                deadline_ms = remaining_ms / 2.0
            if deadline_ms < 1.0:
                raise NoAnswerError("the deadline leaves no time to search")
            time_ms = min(time_ms, deadline_ms)
        requested_ms = checked.requested_ms
        time_cut = requested_ms > 0 and time_ms < requested_ms
        return Budget(limits=replace(checked.limits, time_ms=time_ms), time_only=checked.time_only, time_cut=time_cut)

    def _acquire_slot(self, context: grpc.ServicerContext) -> tuple[str, float]:
        """A search slot for an interactive search (unary, Analyze) of the calling client:
        at once, or after a short wait in the fair queue (``hortus.server.slots``: at most
        ``QUEUE_WAIT_S`` and a quarter of the call's time left; not at all with under
        ``QUEUE_MIN_DEADLINE_S`` left), else RESOURCE_EXHAUSTED. (Batch
        positions wait for theirs: ``_run_batch``.) The client (to release the slot with)
        and the seconds waited (``_after_wait`` shortens the budget by them)."""
        who = client_identity(context)
        wait_s = QUEUE_WAIT_S
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < NO_DEADLINE_S:
            # a short deadline leaves no room to wait on a loaded machine: refused at once
            wait_s = 0.0 if remaining_s < QUEUE_MIN_DEADLINE_S else min(wait_s, remaining_s * QUEUE_DEADLINE_SHARE)
        waited_s = self._slots.acquire(who, wait_s, stop=lambda: not context.is_active())
        if waited_s is not None:
            return who, waited_s
        raise CapacityError(
            "max_concurrent_searches",
            "the server is running as many searches as it allows "
            f"(max_concurrent_searches={self.config.max_concurrent_searches}); retry later",
            self.config.retry_after_ms / 1000.0,
        )

    @staticmethod
    def _after_wait(budget: Budget, waited_s: float) -> Budget:
        """`budget` shortened by the time its search waited for a slot: it was cut by the
        call's deadline before the wait, and the search must still end in time."""
        time_ms = budget.limits.time_ms
        if waited_s <= 0 or time_ms is None:
            return budget
        time_ms = max(1.0, time_ms - waited_s * 1000.0)
        return replace(budget, limits=replace(budget.limits, time_ms=time_ms), time_cut=budget.time_cut or budget.time_only)

    def _searching(self, delta: int) -> None:
        with self._lock:
            self.searches_in_flight += delta

    def _notify(self, method: str, analysis: Analysis, cancelled: bool) -> None:
        for listener in list(self.listeners):
            listener(method, analysis, cancelled)

    def _prepare(self, position: pb.Position, limits: pb.SearchLimits, context: grpc.ServicerContext) -> tuple[State, Budget]:
        state = self._decode(position)
        self._check_decision(state)
        return state, self._budget(limits, context, state=state)

    def _run(
        self,
        method: str,
        state: State,
        budget: Budget,
        handle: SearchHandle,
        context: grpc.ServicerContext,
        max_moves: int = 0,
    ) -> tuple[Analysis, bool]:
        """One interactive search within a slot; returns the analysis and its partial flag.
        `max_moves` > 0: only the moves the answer keeps get their principal variation and
        reason (the rest are not sent)."""
        who, waited_s = self._acquire_slot(context)
        budget = self._after_wait(budget, waited_s)
        self._searching(+1)
        try:
            analysis = analyze(
                state, budget.limits, handle, detail=max_moves, draw_worlds=budget.draw_worlds, draw_deadline=budget.draw_deadline
            )
        finally:
            self._searching(-1)
            self._slots.release(batch=False, who=who)
        self._notify(method, analysis, handle.cancelled)
        return analysis, budget.partial(analysis, handle.cancelled)

    def _search_trees(
        self, method: str, state: State, budget: Budget, context: grpc.ServicerContext, trees: SearchTrees
    ) -> tuple[Analysis, bool]:
        """``_search`` growing `trees` (fresh, or kept and continued): the same analysis as
        ``_search`` gives for fresh trees (``analyze_stream``'s final one is ``analyze``'s);
        the metrics count this call's iterations only."""
        handle = SearchHandle()
        if not context.add_callback(handle.cancel):  # the call already ended
            handle.cancel()
        who, waited_s = self._acquire_slot(context)
        budget = self._after_wait(budget, waited_s)
        before = trees.iterations
        self._searching(+1)
        try:
            final: Analysis | None = None
            for final, _ in analyze_stream(
                state, budget.limits, handle, 0.0, trees=trees, draw_worlds=budget.draw_worlds, draw_deadline=budget.draw_deadline
            ):
                pass
        finally:
            self._searching(-1)
            self._slots.release(batch=False, who=who)
        assert final is not None  # analyze_stream always ends with its final analysis
        self._notify(method, replace(final, iterations=final.iterations - before), handle.cancelled)
        return final, budget.partial(final, handle.cancelled)

    def _run_batch(
        self,
        state: State,
        request: pb.EvaluateRequest,
        context: grpc.ServicerContext,
        handle: SearchHandle,
        call: "BatchCall",
        token: int,
    ) -> tuple[Analysis, bool] | None:
        """One batch position's search: wait for a slot while the position is still unanswered
        (the call answers it DEADLINE_EXCEEDED itself when its deadline comes close: see
        ``BatchCall.expire``), claim it, and search for what is left of the deadline but the
        call's reserve. None: the position was answered while it waited."""
        while not self._slots.acquire_batch(timeout=0.02):
            if call.stop.is_set():
                raise NoAnswerError("the call ended before a search slot was free")
            if not call.is_pending(token):
                return None
        try:
            if not call.claim(token):
                return None
            budget = self._budget(request.limits, context, reserve_ms=call.reserve_ms, state=state)
            self._searching(+1)
            try:
                analysis = analyze(state, budget.limits, handle, detail=request.max_moves)
            finally:
                self._searching(-1)
        finally:
            self._slots.release(batch=True)
        self._notify("EvaluatePositions", analysis, handle.cancelled)
        if analysis.iterations == 0:  # stopped before one iteration: not even a partial answer
            raise deadline_error()
        return analysis, budget.partial(analysis, handle.cancelled)

    def _search(
        self,
        method: str,
        state: State,
        budget: Budget,
        context: grpc.ServicerContext,
        max_moves: int = 0,
    ) -> tuple[Analysis, bool]:
        """Search a validated request (``_prepare``) within the caps, stopped when the call
        ends; returns the analysis and the partial flag (cut short by the deadline, a cap or
        cancellation)."""
        handle = SearchHandle()
        if not context.add_callback(handle.cancel):  # the call already ended
            handle.cancel()
        return self._run(method, state, budget, handle, context, max_moves=max_moves)

    # --- the answer cache ----------------------------------------------
    @staticmethod
    def _draws_possible(context: grpc.ServicerContext) -> bool:
        """Whether a hint's draw measurement can happen at all within the call's deadline:
        ``_hint_budget`` skips it once less than ``DRAW_RESERVE_MS`` is left."""
        remaining_s = context.time_remaining()
        return remaining_s is None or remaining_s >= NO_DEADLINE_S or remaining_s * 1000.0 > DRAW_RESERVE_MS

    def _cache_key(
        self, method: str, request: Message, limits: pb.SearchLimits, draws: bool | None = None, *, scope: str
    ) -> bytes | None:
        """The answer cache's key of a validated request; None when it is not cacheable.

        Only iteration budgets are cached: a time budget makes the answer depend on the
        machine's speed and load. The request's bytes hold everything else the answer depends
        on (position, iterations, seed, threads, allow/avoid actions, level, target Elo,
        max_moves); the engine version and the server's configuration (fixed for the cache's
        life) the rest. A hint's draw measurement (``draw_share``) also depends on the call's
        deadline: it is taken when the deadline leaves time for it after the search. So the key
        says whether the deadline leaves that time at all (``_draws_possible``), and only
        answers that have it when it was possible are stored (``_cache_put``): a caller whose
        deadline is too short for it never gets it from the cache either, and one whose deadline
        allows it gets the answer the search gives when it finishes in time, which is
        deterministic. (Not caching hints whose measurement depends on the deadline would
        leave every hint uncached: the clients always send a deadline.) `draws`: for hints,
        ``_hint_draws``; None for other answers. `scope`: who may share the answer
        (``hortus.server.cache_scope``: a client identity, unless the game hides nothing)."""
        if not self.cache.enabled or limits.time_ms:
            return None
        parts: list[bytes | str] = [method, hortus.__version__, scope, request.SerializeToString(deterministic=True)]
        if draws is not None:
            parts.append("draws" if draws else "no draws")
        return AnswerCache.key(*parts)

    def _hint_draws(self, context: grpc.ServicerContext) -> bool:
        """Whether a hint answered now can carry the draw measurement (see ``_cache_key``)."""
        return self.config.draw_worlds > 0 and self._draws_possible(context)

    def _cache_put(self, key: bytes | None, response: Message, analysis: pb.Analysis, draws: bool = False) -> None:
        """Store a complete answer: not one cut short (``partial``: a deadline, a cap), nor a
        hint (`draws` True) whose draw measurement the deadline skipped after the search
        although the key allows it (a call with more time measures it)."""
        if key is None or analysis.partial:
            return
        if draws and analysis.moves and not analysis.moves[0].HasField("draw_share"):
            return
        self.cache.put(key, response.SerializeToString(deterministic=True))

    def _cached(self, key: bytes | None, kind: type[_Answer]) -> _Answer | None:
        """The stored answer under `key` as a new message, or None."""
        if key is None:
            return None
        stored = self.cache.get(key)
        return None if stored is None else kind.FromString(stored)

    def _new_state(
        self, name: str, players: int, variant_name: str, request_options: Mapping[str, str], seed: int | None
    ) -> State:
        """A new game from the fields of a request (NewGame, ReviewGame), each checked and
        named (game, players, variant, options[NAME]) when wrong."""
        game = self._game(name, "game")
        players = players or game.default_players or game.min_players
        if not game.min_players <= players <= game.max_players:
            raise RequestError("players", f"{game.name} takes {game.min_players}-{game.max_players} players, not {players}")
        check_bytes("variant", variant_name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        if len(request_options) > MAX_OPTIONS:
            raise RequestError("options", f"{len(request_options)} entries exceed the server cap MAX_OPTIONS={MAX_OPTIONS}")
        for name, value in request_options.items():
            check_bytes("options", name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
            check_bytes(f"options[{name}]", value, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        variant = variant_name or None
        if variant is not None and variant not in game.variants:
            raise RequestError("variant", f"unknown variant {variant!r} for {game.name}; known: {list(game.variants)}")
        options: Mapping[str, str] = dict(request_options)
        for name, value in options.items():
            if name not in game.options:
                raise RequestError(f"options[{name}]", f"unknown option {name!r} for {game.name}; known: {sorted(game.options)}")
            if value not in game.options[name].choices:
                raise RequestError(f"options[{name}]", f"{value!r} is not one of {list(game.options[name].choices)}")
        return game.new_game(players=players, seed=seed, variant=variant, options=options)

    def _batch_call(self, context: grpc.ServicerContext) -> "tuple[BatchCall, float | None]":
        """A batch call's shared state (ended with the RPC) and the ``time.monotonic()`` at which
        its unsearched items are answered DEADLINE_EXCEEDED (None: no deadline)."""
        remaining_s = context.time_remaining()
        reserve_ms = self._give_up_ms(remaining_s)
        give_up_at = None
        if remaining_s is not None and remaining_s < NO_DEADLINE_S:
            give_up_at = time.monotonic() + remaining_s - reserve_ms / 1000.0
        call = BatchCall(self.config.window, reserve_ms)
        if not context.add_callback(call.end):
            call.end()
        return call, give_up_at

    def _give_up_ms(self, remaining_s: float | None) -> float:
        """How long before a batch call's deadline its unsearched positions are answered
        DEADLINE_EXCEEDED: twice the deadline margin, at least 150 ms and 20% of the call's
        time (the sending and thread switches on a loaded machine), at most half of it."""
        give_up = max(2.0 * self.config.deadline_margin_ms, 150.0)
        if remaining_s is not None and remaining_s < NO_DEADLINE_S:
            give_up = min(max(give_up, remaining_s * 1000.0 * GIVE_UP_SHARE), remaining_s * 500.0)
        return give_up
