"""``hortus.v1.Advisor``: the gRPC servicer. Game-agnostic: every game is reached through the
``hortus.games`` registry, every search through ``hortus.search.analyze``.

Stateless: each request carries its position (``Position.encoded`` = ``State.encode()`` bytes),
decoded and validated before any compiled code reads it.
"""

from __future__ import annotations

import functools
import math
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent import futures
from dataclasses import dataclass, replace
from typing import TypeVar

import grpc
from google.protobuf.message import Message

import hortus
from hortus import games
from hortus.clients.views import ViewError, structured_to_view, view_to_structured
from hortus.games import (
    CHANCE,
    TERMINAL,
    Game,
    IllegalActionError,
    InvalidPositionError,
    ReviewThresholds,
    State,
    UnknownGameError,
)
from hortus.search import (
    Analysis,
    ConstraintError,
    Limits,
    MoveInfo,
    SearchHandle,
    SearchTrees,
    analyze,
    analyze_stream,
)
from hortus.search.analysis import root_actions
from hortus.search.levels import LEVELS, Level, choose, elo_level
from hortus.server import review
from hortus.server.cache import AnswerCache
from hortus.server.config import ServerConfig
from hortus.server.continuation import MAX_TOKEN_BYTES, KeptAnalyses, TokenError
from hortus.server.errors import (
    CapacityError,
    ContinuationError,
    NoAnswerError,
    RequestError,
    ShuttingDownError,
    error_answer,
    rpc_errors,
    status_for,
)
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc

PROTOCOL = "hortus.v1"
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Advisor"].full_name

_NO_DEADLINE_S = 1e9  # time_remaining() of a call without deadline is ~infinite
_DEADLINE_SHARE = 0.15  # a search also stops this share of the time left before the deadline
# (8% let 5% of 1 s-deadline answers arrive late under bench/load.py at a load average of
# 11-18 on 2 cores: the answer waits for the GIL behind the other calls' threads)
_GIVE_UP_SHARE = 0.2  # a batch call answers its unsearched positions this share of its time early
_CONTINUE_WAIT_S = 1.0  # continue_from waits this long (at most) for the call it continues to end
_DRAW_RESERVE_MS = 250.0  # the draw is measured only this long before the deadline (it takes ms)
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
class _Budget:
    """The limits a search runs with, and whether the caller's budget is time alone."""

    limits: Limits
    time_only: bool  # the caller gave a time budget and no iteration budget
    time_cut: bool  # the deadline (or max_time_ms) shortened the caller's time budget

    def partial(self, analysis: Analysis, cancelled: bool) -> bool:
        """Whether `analysis` was cut short: a time-only budget run to its end is complete."""
        if self.time_only and not self.time_cut:
            return cancelled
        return analysis.partial or cancelled


def _check_bytes(field: str, value: str | bytes, cap: int, what: str) -> None:
    """RequestError naming `field` and `what` (the cap) when `value` is over `cap` bytes."""
    size = len(value.encode() if isinstance(value, str) else value)
    if size > cap:
        raise RequestError(field, f"{size} bytes exceed the server cap {what}={cap}")


_Request = TypeVar("_Request", bound=Message)
_Response = TypeVar("_Response")
_Answer = TypeVar("_Answer", bound=Message)


def _unary(
    method: Callable[["AdvisorServicer", _Request, grpc.ServicerContext], _Response],
) -> Callable[["AdvisorServicer", _Request, grpc.ServicerContext], _Response]:
    """A unary RPC: refused UNAVAILABLE while the server drains, the request's size checked
    first, and any exception turned into a status."""

    @functools.wraps(method)
    def checked(self: "AdvisorServicer", request: _Request, context: grpc.ServicerContext) -> _Response:
        self.check_accepting()
        self.check_size(request)
        return method(self, request, context)

    return rpc_errors(checked)


def _action(state: State, action: int) -> pb.Action:
    return pb.Action(id=action, notation=state.action_to_string(action))


def game_info(game: Game) -> pb.GameInfo:
    """``GameInfo`` of a registered game."""
    return pb.GameInfo(
        name=game.name,
        min_players=game.min_players,
        max_players=game.max_players,
        variants=list(game.variants),
        options=[
            pb.RuleOption(name=o.name, default_value=o.default, choices=list(o.choices), doc=o.doc)
            for o in game.options.values()
        ],
        num_distinct_actions=game.num_distinct_actions,
    )


def position_info(state: State) -> pb.PositionInfo:
    """What a frontend needs after every change of `state`."""
    terminal = state.is_terminal()
    return pb.PositionInfo(
        position=pb.Position(game=state.game.name, encoded=state.encode()),
        current_player=state.current_player,
        terminal=terminal,
        scores=state.scores(),
        returns=state.returns() if terminal else [],
        rendered=state.render(),
        seat_rendered=[state.render(seat) for seat in range(state.num_players)],
    )


def _principal_variation(state: State, move: MoveInfo) -> list[pb.Action]:
    """The move's principal variation as actions with notation (replayed if not given)."""
    pv = list(move.principal_variation) or [move.action]
    notation = list(move.principal_variation_notation)
    if len(notation) != len(pv):
        notation = []
        replay = state.clone()
        for action in pv:
            notation.append(replay.action_to_string(action))
            replay.apply(action)
    return [pb.Action(id=a, notation=n) for a, n in zip(pv, notation)]


def analysis_message(state: State, analysis: Analysis, partial: bool, max_moves: int = 0) -> pb.Analysis:
    """The wire form of `analysis`, keeping the first `max_moves` moves (0 = all)."""
    moves = analysis.moves[:max_moves] if max_moves else analysis.moves
    return pb.Analysis(
        seat=analysis.seat,
        moves=[
            pb.MoveAnalysis(
                action=pb.Action(id=m.action, notation=m.notation),
                visits=m.visits,
                win_probability=m.win_probability,
                expected_scores=list(m.expected_scores),
                principal_variation=_principal_variation(state, m),
                reason=m.reason,
                value_spread=m.value_spread,
                draw_share=m.draw_share,
                draw_spread=m.draw_spread,
                draw_points_spread=m.draw_points_spread,
            )
            for m in moves
        ],
        iterations=analysis.iterations,
        partial=partial,
        elapsed_ms=analysis.elapsed_ms,
        nodes=analysis.nodes,
        tree_full=analysis.tree_full,
    )


class SearchSlots:
    """The search slots of one process: ``capacity`` searches at once (one per core).

    Batch positions wait for a slot and may hold every one of them, so that a batch keeps all
    cores busy. An interactive search (unary, ``Analyze``) takes a free slot at once or is
    refused; while batch positions hold slots, one more interactive search than the capacity
    is admitted, so a hint or a move asked during a long batch is served at once (on a core
    shared with the batch) rather than refused. Batch positions then take no freed slot until
    the total is back under the capacity. Nothing queues but batch positions, whose number is
    bounded by the calls' windows."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._changed = threading.Condition(threading.Lock())
        self._interactive = 0
        self._batch = 0

    def try_interactive(self) -> bool:
        """Take a slot for an interactive search if there is room (see the class)."""
        with self._changed:
            limit = self.capacity + (1 if self._batch else 0)
            if self._interactive + self._batch >= limit:
                return False
            self._interactive += 1
            return True

    def acquire_batch(self, timeout: float) -> bool:
        """Take a slot for a batch position, waiting at most `timeout` seconds for one."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._interactive + self._batch < self.capacity, timeout):
                return False
            self._batch += 1
            return True

    def release(self, batch: bool) -> None:
        with self._changed:
            if batch:
                assert self._batch > 0, "released a batch slot that was not held"
                self._batch -= 1
            else:
                assert self._interactive > 0, "released an interactive slot that was not held"
                self._interactive -= 1
            self._changed.notify()


class AdvisorServicer(advisor_pb2_grpc.AdvisorServicer):
    """Implements ``hortus.v1.Advisor`` (see ``proto/hortus/v1/advisor.proto``)."""

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
        self.kept = KeptAnalyses(self.config.continue_trees, self.config.continue_bytes, self.config.continue_idle_s)
        """Trees of ended ``Analyze`` calls, for ``continue_from``."""
        self.draining = threading.Event()
        """Set when the server starts shutting down: batch calls accept no new position."""

    def close(self) -> None:
        """Stop the batch pool (after the server stopped)."""
        self._batch_pool.shutdown(wait=False, cancel_futures=True)

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
        _check_bytes(field, name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        try:
            return games.get(name)
        except UnknownGameError as exc:
            raise RequestError(field, str(exc)) from exc

    def _decode(self, position: pb.Position) -> State:
        """The state of a request's position: its encoded bytes (InvalidPositionError names the
        bad field) or its structured view, completed by sampling the hidden parts."""
        _check_bytes("position.encoded", position.encoded, MAX_POSITION_BYTES, "MAX_POSITION_BYTES")
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
                    _check_bytes(f"{field}.notation", ref.notation, MAX_NOTATION_BYTES, "MAX_NOTATION_BYTES")
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
    ) -> _Budget:
        """Limits from a request, checked against the caps and cut by the call's deadline;
        with `state`, also its what-if constraints (``_constraints``).

        `reserve_ms` (batch positions): the search also ends this long before the deadline,
        the time the call keeps for answering its other positions (NoAnswerError if that
        leaves no time to search)."""
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
            raise RequestError(
                "limits.time_ms", f"{requested_ms:g} exceeds the server cap max_time_ms={cfg.max_time_ms:g}"
            )
        threads = request.threads or 1
        if threads > cfg.max_threads:
            raise RequestError("limits.threads", f"{threads} exceeds the server cap max_threads={cfg.max_threads}")

        time_only = request.iterations == 0 and requested_ms > 0
        if request.iterations:
            iterations = int(request.iterations)
        else:
            iterations = cfg.max_iterations if time_only else cfg.default_iterations

        time_ms = requested_ms if requested_ms > 0 else cfg.max_time_ms
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < _NO_DEADLINE_S:
            remaining_ms = remaining_s * 1000.0
            # The margin grows with the deadline: the answer's own work (ranking, sending) takes
            # longer on a loaded machine, where a fixed 50 ms was seen to arrive late.
            deadline_ms = remaining_ms - max(cfg.deadline_margin_ms, remaining_ms * _DEADLINE_SHARE, reserve_ms)
            if reserve_ms and deadline_ms < 1.0:
                raise NoAnswerError("the call's deadline arrived before this position could be searched")
            if deadline_ms < 1.0:  # a very tight deadline: keep half of what is left
                deadline_ms = remaining_ms / 2.0
            if deadline_ms < 1.0:
                raise NoAnswerError("the deadline leaves no time to search")
            time_ms = min(time_ms, deadline_ms)
        time_cut = requested_ms > 0 and time_ms < requested_ms
        limits = Limits(
            iterations=iterations,
            time_ms=time_ms,
            seed=int(request.seed),
            threads=threads,
            max_nodes=cfg.max_nodes,
        )
        if state is not None:
            allow, avoid = self._constraints(state, request)
            limits = replace(limits, allow_actions=allow, avoid_actions=avoid)
        return _Budget(limits=limits, time_only=time_only, time_cut=time_cut)

    def _acquire_slot(self) -> None:
        """A search slot for an interactive search (unary, Analyze): at once, or
        RESOURCE_EXHAUSTED. (Batch positions wait for theirs: ``_run_batch``.)"""
        if self._slots.try_interactive():
            return
        raise CapacityError(
            "max_concurrent_searches",
            "the server is running as many searches as it allows "
            f"(max_concurrent_searches={self.config.max_concurrent_searches}); retry later",
            self.config.retry_after_ms / 1000.0,
        )

    def _searching(self, delta: int) -> None:
        with self._lock:
            self.searches_in_flight += delta

    def _notify(self, method: str, analysis: Analysis, cancelled: bool) -> None:
        for listener in list(self.listeners):
            listener(method, analysis, cancelled)

    def _prepare(
        self, position: pb.Position, limits: pb.SearchLimits, context: grpc.ServicerContext
    ) -> tuple[State, _Budget]:
        state = self._decode(position)
        self._check_decision(state)
        return state, self._budget(limits, context, state=state)

    def _run(
        self, method: str, state: State, budget: _Budget, handle: SearchHandle, max_moves: int = 0
    ) -> tuple[Analysis, bool]:
        """One interactive search within a slot; returns the analysis and its partial flag.
        `max_moves` > 0: only the moves the answer keeps get their principal variation and
        reason (the rest are not sent)."""
        self._acquire_slot()
        self._searching(+1)
        try:
            analysis = analyze(state, budget.limits, handle, detail=max_moves)
        finally:
            self._searching(-1)
            self._slots.release(batch=False)
        self._notify(method, analysis, handle.cancelled)
        return analysis, budget.partial(analysis, handle.cancelled)

    def _search_trees(
        self, method: str, state: State, budget: _Budget, context: grpc.ServicerContext, trees: SearchTrees
    ) -> tuple[Analysis, bool]:
        """``_search`` growing `trees` (fresh, or kept and continued): the same analysis as
        ``_search`` gives for fresh trees (``analyze_stream``'s final one is ``analyze``'s);
        the metrics count this call's iterations only."""
        handle = SearchHandle()
        if not context.add_callback(handle.cancel):  # the call already ended
            handle.cancel()
        self._acquire_slot()
        before = trees.iterations
        self._searching(+1)
        try:
            final: Analysis | None = None
            for final, _ in analyze_stream(state, budget.limits, handle, 0.0, trees=trees):
                pass
        finally:
            self._searching(-1)
            self._slots.release(batch=False)
        assert final is not None  # analyze_stream always ends with its final analysis
        self._notify(method, replace(final, iterations=final.iterations - before), handle.cancelled)
        return final, budget.partial(final, handle.cancelled)

    def _run_batch(
        self,
        state: State,
        request: pb.EvaluateRequest,
        context: grpc.ServicerContext,
        handle: SearchHandle,
        call: "_BatchCall",
        token: int,
    ) -> tuple[Analysis, bool] | None:
        """One batch position's search: wait for a slot while the position is still unanswered
        (the call answers it DEADLINE_EXCEEDED itself when its deadline comes close: see
        ``_BatchCall.expire``), claim it, and search for what is left of the deadline but the
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
            raise _deadline_error()
        return analysis, budget.partial(analysis, handle.cancelled)

    def _search(
        self,
        method: str,
        state: State,
        budget: _Budget,
        context: grpc.ServicerContext,
        max_moves: int = 0,
    ) -> tuple[Analysis, bool]:
        """Search a validated request (``_prepare``) within the caps, stopped when the call
        ends; returns the analysis and the partial flag (cut short by the deadline, a cap or
        cancellation)."""
        handle = SearchHandle()
        if not context.add_callback(handle.cancel):  # the call already ended
            handle.cancel()
        return self._run(method, state, budget, handle, max_moves=max_moves)

    # --- the answer cache (issue 20 item 3) ----------------------------------------------
    @staticmethod
    def _draws_possible(context: grpc.ServicerContext) -> bool:
        """Whether a hint's draw measurement can happen at all within the call's deadline:
        ``_hint_budget`` skips it once less than ``_DRAW_RESERVE_MS`` is left."""
        remaining_s = context.time_remaining()
        return remaining_s is None or remaining_s >= _NO_DEADLINE_S or remaining_s * 1000.0 > _DRAW_RESERVE_MS

    def _cache_key(
        self, method: str, request: Message, limits: pb.SearchLimits, draws: bool | None = None
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
        ``_hint_draws``; None for other answers."""
        if not self.cache.enabled or limits.time_ms:
            return None
        parts: list[bytes | str] = [method, hortus.__version__, request.SerializeToString(deterministic=True)]
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

    # --- RPCs ----------------------------------------------------------------------------
    @_unary
    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=[game_info(games.get(name)) for name in games.names()])

    @_unary
    def NewGame(self, request: pb.NewGameRequest, context: grpc.ServicerContext) -> pb.NewGameResponse:
        seed = int(request.seed) if request.HasField("seed") else None
        state = self._new_state(request.game, request.players, request.variant, request.options, seed)
        return pb.NewGameResponse(info=position_info(state))

    def _new_state(
        self, name: str, players: int, variant_name: str, request_options: Mapping[str, str], seed: int | None
    ) -> State:
        """A new game from the fields of a request (NewGame, ReviewGame), each checked and
        named (game, players, variant, options[NAME]) when wrong."""
        game = self._game(name, "game")
        players = players or game.default_players or game.min_players
        if not game.min_players <= players <= game.max_players:
            raise RequestError(
                "players", f"{game.name} takes {game.min_players}-{game.max_players} players, not {players}"
            )
        _check_bytes("variant", variant_name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        if len(request_options) > MAX_OPTIONS:
            raise RequestError("options", f"{len(request_options)} entries exceed the server cap MAX_OPTIONS={MAX_OPTIONS}")
        for name, value in request_options.items():
            _check_bytes("options", name, MAX_NAME_BYTES, "MAX_NAME_BYTES")
            _check_bytes(f"options[{name}]", value, MAX_NAME_BYTES, "MAX_NAME_BYTES")
        variant = variant_name or None
        if variant is not None and variant not in game.variants:
            raise RequestError("variant", f"unknown variant {variant!r} for {game.name}; known: {list(game.variants)}")
        options: Mapping[str, str] = dict(request_options)
        for name, value in options.items():
            if name not in game.options:
                raise RequestError(
                    f"options[{name}]", f"unknown option {name!r} for {game.name}; known: {sorted(game.options)}"
                )
            if value not in game.options[name].choices:
                raise RequestError(
                    f"options[{name}]", f"{value!r} is not one of {list(game.options[name].choices)}"
                )
        return game.new_game(players=players, seed=seed, variant=variant, options=options)

    @_unary
    def LegalActions(self, request: pb.LegalActionsRequest, context: grpc.ServicerContext) -> pb.LegalActionsResponse:
        state = self._decode(request.position)
        if request.HasField("for_seat"):
            seat = request.for_seat
            if not 0 <= seat < state.num_players:
                raise RequestError("for_seat", f"seat {seat} is not in 0..{state.num_players - 1}")
        picture = ""
        if request.picture:
            if not request.HasField("for_seat"):
                raise RequestError("for_seat", "a picture shows one seat's view: set for_seat")
            picture = state.picture(request.for_seat, list(request.highlight))
        if request.HasField("for_seat"):
            # Only what `seat` may know (see the proto): its own decisions, the outcomes it
            # can tell apart with odds given its view, the rest as one total.
            visible, hidden_total = state.chance_outcomes_seen_by(seat)
            return pb.LegalActionsResponse(
                current_player=state.current_player,
                actions=[_action(state, a) for a in state.legal_actions()] if state.current_player == seat else [],
                chance_outcomes=[
                    pb.ChanceOutcome(action=pb.Action(id=a, notation=text), probability=p) for a, p, text in visible
                ],
                terminal=state.is_terminal(),
                hidden_probability=hidden_total,
                picture=picture,
            )
        return pb.LegalActionsResponse(
            current_player=state.current_player,
            actions=[_action(state, a) for a in state.legal_actions()],
            chance_outcomes=[
                pb.ChanceOutcome(action=_action(state, a), probability=p) for a, p in state.chance_outcomes()
            ],
            terminal=state.is_terminal(),
            picture=picture,
        )

    @_unary
    def ApplyActions(self, request: pb.ApplyActionsRequest, context: grpc.ServicerContext) -> pb.ApplyActionsResponse:
        cap = self.config.max_actions_per_request
        if len(request.actions) > cap:
            raise RequestError(
                "actions", f"{len(request.actions)} actions exceed the server cap max_actions_per_request={cap}"
            )
        state = self._decode(request.position)
        applied: list[pb.Action] = []
        for i, ref in enumerate(request.actions):
            field = f"actions[{i}]"
            kind = ref.WhichOneof("kind")
            if state.is_terminal():
                raise RequestError(field, "the game is over: no action can follow")
            try:
                if kind == "id":
                    action = ref.id
                elif kind == "notation":
                    _check_bytes(f"{field}.notation", ref.notation, MAX_NOTATION_BYTES, "MAX_NOTATION_BYTES")
                    action = state.parse_action(ref.notation)
                elif kind == "draw_seed":
                    if not state.is_chance():
                        raise RequestError(f"{field}.draw_seed", "not a chance node: only a chance outcome can be drawn")
                    action = state.draw_chance(ref.draw_seed)
                else:
                    raise RequestError(field, "neither an id nor a notation")
                notation = state.action_to_string(action)
                state.apply(action)
            except IllegalActionError as exc:
                raise RequestError(field, str(exc)) from exc
            applied.append(pb.Action(id=action, notation=notation))
        return pb.ApplyActionsResponse(info=position_info(state), applied=applied)

    @_unary
    def SuggestMove(self, request: pb.SuggestMoveRequest, context: grpc.ServicerContext) -> pb.SuggestMoveResponse:
        limits, level = self._suggest_limits(request)
        state, budget = self._prepare(request.position, limits, context)  # validated before the cache
        key: bytes | None = None
        if request.continue_from:
            # the kept subtree's answer depends on the chain of calls, not the request's bytes:
            # never looked up nor stored in the answer cache
            trees = self._continued_turn(request.continue_from, state, budget.limits, context)
            try:
                budget = self._budget(limits, context, state=state)  # taking may have waited
            except Exception:
                self.kept.keep(request.continue_from, trees, "SuggestMove")
                raise
        else:
            key = self._cache_key("SuggestMove", request, request.limits)
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
            turn=_principal_variation(state, chosen),
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

    def _suggest_limits(self, request: pb.SuggestMoveRequest) -> tuple[pb.SearchLimits, Level | None]:
        """The search limits of a ``SuggestMove`` and the difficulty level it plays at (None:
        the best move of ``request.limits``): ``level``, or ``target_elo`` (strength by rating:
        a budget interpolated between the levels on the game's scale)."""
        by_elo = request.HasField("target_elo")
        if not request.level and not by_elo:
            return request.limits, None
        if by_elo:
            if request.level:
                raise RequestError("target_elo", "give a difficulty level or a target Elo, not both")
            game = self._decode(request.position).game.name
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
            raise RequestError("limits", f"give a {'target Elo' if by_elo else 'difficulty level'} or an iteration/time budget, not both")
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

    def _hint_budget(self, budget: _Budget, context: grpc.ServicerContext) -> _Budget:
        """A hint's budget also measures how much the top moves depend on the draw, when the
        call's deadline leaves time for that after the search (it takes milliseconds)."""
        until = None
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < _NO_DEADLINE_S:
            until = time.perf_counter() + remaining_s - _DRAW_RESERVE_MS / 1000.0
        limits = replace(budget.limits, draw_worlds=self.config.draw_worlds, draw_deadline=until)
        return replace(budget, limits=limits)

    @_unary
    def RankMoves(self, request: pb.RankMovesRequest, context: grpc.ServicerContext) -> pb.RankMovesResponse:
        state, budget = self._prepare(request.position, request.limits, context)  # validated before the cache
        draws = self._hint_draws(context)
        key = self._cache_key("RankMoves", request, request.limits, draws=draws)
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
        ``_continued``), under which its trees are kept when the call ends."""
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
            self._acquire_slot()
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
                self._slots.release(batch=False)
                if last is not None:
                    self._notify("Analyze", replace(last, iterations=last.iterations - before), handle.cancelled)

        try:
            if not context.add_callback(handle.cancel):
                handle.cancel()
            for analysis, final in analyze_stream(
                state, budget.limits, handle, float(interval), detail=request.max_moves, trees=trees
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
        wait_s = _CONTINUE_WAIT_S
        remaining_s = context.time_remaining()
        if remaining_s is not None and remaining_s < _NO_DEADLINE_S:
            wait_s = min(wait_s, remaining_s / 4.0)
        try:
            return self.kept.take(token, wait_s, kind)
        except TokenError as exc:
            if exc.reason == "other_kind":
                raise RequestError(field, exc.message) from exc
            raise ContinuationError(field, f"CONTINUATION_{exc.reason.upper()}", exc.message, in_use=exc.reason == "in_use") from exc

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
            problem = (field, "continues the analysis of another position (other position bytes); send that position, or start afresh")
        else:
            for name in ("seed", "threads", "allow_actions", "avoid_actions"):
                mine, kept = getattr(limits, name), getattr(trees.limits, name)
                if name.endswith("_actions"):  # the same root moves in any order
                    mine, kept = sorted(set(mine)), sorted(set(kept))
                if mine != kept:
                    problem = (f"limits.{name}", f"{mine} differs from the analysis continue_from continues ({kept}): it goes on with the same trees")
                    break
            if problem is None and not trees.continues(state, limits):
                problem = (field, "continues an analysis searched with other settings; start afresh")
        if problem is not None:
            self.kept.keep(token, trees)
            raise RequestError(*problem)
        return trees

    def _continued_turn(self, token: str, state: State, limits: Limits, context: grpc.ServicerContext) -> SearchTrees:
        """The subtree a SuggestMove kept under `token` (its suggested move's), checked to
        continue `state` with `limits`: exactly the position that move led to (the seat's own
        next decision: the subtree only knows what that seat saw, and nothing was revealed
        since) and the same threads (one tree each); no root constraints (the subtree's root
        moves were expanded without them). The seed may differ: the trees go on with their
        own random stream. Returned as trees of this call's limits; INVALID_ARGUMENT leaves
        them kept under the token."""
        field = "continue_from"
        trees = self._take_kept(token, "SuggestMove", context)
        problem: tuple[str, str] | None = None
        if trees.position != state.encode():
            problem = (field, "continues the AI's turn at another position: send the position its suggested move "
                              "led to, or ask afresh without continue_from")
        elif limits.threads != trees.limits.threads:
            problem = ("limits.threads", f"{limits.threads} differs from the search continue_from continues "
                                         f"({trees.limits.threads} trees)")
        else:
            for name in ("allow_actions", "avoid_actions"):
                if getattr(limits, name):
                    problem = (f"limits.{name}", "a continued turn searches the kept subtree, whose moves were "
                                                 "expanded without constraints: ask afresh to constrain them")
                    break
        if problem is None:
            # the kept trees' limits are their first call's (its seed, its root's constraints):
            # they continue with this call's, which must grow the same trees but for those
            own = replace(trees.limits, seed=limits.seed, allow_actions=(), avoid_actions=())
            continued = SearchTrees(trees.position, trees.seat, own, trees.searches, trees.eval_plies)
            if continued.continues(state, limits):
                return SearchTrees(trees.position, trees.seat, limits, trees.searches, trees.eval_plies)
            problem = (field, "continues a search with other settings; ask afresh without continue_from")
        self.kept.keep(token, trees, "SuggestMove")
        raise RequestError(*problem)

    def _evaluate_one(
        self, request: pb.EvaluateRequest, context: grpc.ServicerContext, call: "_BatchCall", token: int
    ) -> None:
        """One position of a batch: its analysis, or its error, as its one answer (nothing if
        the call answered it already, DEADLINE_EXCEEDED, while it waited)."""
        if not call.is_pending(token):  # expired while queued: already answered
            return
        try:
            self.check_size(request)
            _check_bytes("id", request.id, MAX_ID_BYTES, "MAX_ID_BYTES")
            state, _ = self._prepare(request.position, request.limits, context)  # validates the limits too
            handle = SearchHandle()
            call.track(handle)
            try:
                searched = self._run_batch(state, request, context, handle, call, token)
            finally:
                call.untrack(handle)
            if searched is None:
                return
            analysis, partial = searched
            answer = pb.EvaluateResponse(
                id=request.id, analysis=analysis_message(state, analysis, partial, request.max_moves)
            )
        except Exception as exc:  # noqa: BLE001 - an error is an answer
            answer = _error_response(request.id, exc)
        call.answer(token, answer)

    def _batch_call(self, context: grpc.ServicerContext) -> "tuple[_BatchCall, float | None]":
        """A batch call's shared state (ended with the RPC) and the ``time.monotonic()`` at which
        its unsearched items are answered DEADLINE_EXCEEDED (None: no deadline)."""
        remaining_s = context.time_remaining()
        reserve_ms = self._give_up_ms(remaining_s)
        give_up_at = None
        if remaining_s is not None and remaining_s < _NO_DEADLINE_S:
            give_up_at = time.monotonic() + remaining_s - reserve_ms / 1000.0
        call = _BatchCall(self.config.window, reserve_ms)
        if not context.add_callback(call.end):
            call.end()
        return call, give_up_at

    def _give_up_ms(self, remaining_s: float | None) -> float:
        """How long before a batch call's deadline its unsearched positions are answered
        DEADLINE_EXCEEDED: twice the deadline margin, at least 150 ms and 20% of the call's
        time (the sending and thread switches on a loaded machine), at most half of it."""
        give_up = max(2.0 * self.config.deadline_margin_ms, 150.0)
        if remaining_s is not None and remaining_s < _NO_DEADLINE_S:
            give_up = min(max(give_up, remaining_s * 1000.0 * _GIVE_UP_SHARE), remaining_s * 500.0)
        return give_up

    def EvaluatePositions(
        self, request_iterator: Iterator[pb.EvaluateRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.EvaluateResponse]:
        """Every accepted position answered exactly once, in completion order, at most
        ``window`` accepted and unanswered at a time (bounded buffering), and before the
        call's deadline: positions still waiting for a search slot (or for a thread of the
        batch pool) when the deadline comes close are answered DEADLINE_EXCEEDED by the call
        itself, searches running then are stopped with what they found, and positions
        arriving later are answered DEADLINE_EXCEEDED at once. While the server drains, no new
        position is accepted: once the accepted ones are answered the call ends UNAVAILABLE,
        and the client sends the rest elsewhere."""
        call, give_up_at = self._batch_call(context)
        cap = self.config.max_batch_size

        def finish(token: int, future: "futures.Future[None]") -> None:
            if future.cancelled() or future.exception() is not None:  # the pool was shut down
                error = ShuttingDownError("the server is shutting down: send this position again")
                call.answer(token, _error_response(call.request_id(token), error))

        def read() -> None:
            accepted = 0
            try:
                for request in request_iterator:
                    while not call.window.acquire(timeout=0.05):
                        if call.stop.is_set():
                            return
                    with call.lock:
                        if call.closed or self.draining.is_set():
                            call.window.release()
                            return
                        if accepted >= cap:
                            call.window.release()
                            call.over_cap = True
                            return
                        accepted += 1
                        token = call.add(request)
                    if token is None:  # the deadline is close: answered DEADLINE_EXCEEDED at once
                        continue
                    try:
                        future = self._batch_pool.submit(self._evaluate_one, request, context, call, token)
                    except RuntimeError:  # the pool is shut down: an answer all the same
                        error = ShuttingDownError("the server is shutting down: send this position again")
                        call.answer(token, _error_response(request.id, error))
                    else:
                        future.add_done_callback(functools.partial(finish, token))
                call.half_closed = True
            except Exception:  # noqa: BLE001 - the client went away while we were reading
                call.end()
            finally:
                call.results.put(_READER_DONE)

        threading.Thread(target=read, name="hortus-batch-reader", daemon=True).start()
        answered = 0
        reader_done = False
        while True:
            with call.lock:
                if answered >= call.submitted and (reader_done or self.draining.is_set()):
                    call.closed = True  # the reader accepts nothing more
                    break
            timeout = 0.1
            if give_up_at is not None and not call.expired:
                left = give_up_at - time.monotonic()
                if left <= 0:
                    call.expire()
                    continue
                timeout = min(timeout, left)
            try:
                item = call.results.get(timeout=timeout)
            except queue.Empty:
                continue
            if item is _READER_DONE:
                reader_done = True
                continue
            answered += 1
            assert isinstance(item, pb.EvaluateResponse)
            yield item
            call.window.release()
        if call.over_cap:
            context.abort_with_status(
                status_for(RequestError("id", f"more positions than the server cap max_batch_size={cap} in one call"))
            )
        if not call.half_closed and self.draining.is_set():
            context.abort_with_status(
                status_for(ShuttingDownError("the server is shutting down: send the unanswered positions again"))
            )

    def EvaluateBatch(
        self, request: pb.EvaluateBatchRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.EvaluateResponse]:
        """``EvaluatePositions`` over a server stream (browsers cannot stream requests): the
        same answers, exactly once each in completion order, the same window and drain. The
        batch cap is checked before any search, since the whole batch is already here."""
        try:
            self.check_accepting()
            self.check_size(request)
            cap = self.config.max_batch_size
            if len(request.positions) > cap:
                raise RequestError(
                    "positions", f"{len(request.positions)} positions exceed the server cap max_batch_size={cap}"
                )
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "EvaluateBatch"))
        yield from self.EvaluatePositions(iter(request.positions), context)

    # --- ReviewGame ------------------------------------------------------------------------
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
        _check_bytes("position", request.position, MAX_POSITION_BYTES, "MAX_POSITION_BYTES")
        try:
            state = game.decode(request.position)
        except InvalidPositionError as exc:
            part = exc.field.removeprefix("position.").removeprefix("position")
            raise RequestError("position", f"{part}: {exc.reason}" if part else exc.reason) from exc
        if request.players and request.players != state.num_players:
            raise RequestError("players", f"the position has {state.num_players} seats, not {request.players}")
        if request.variant:
            _check_bytes("variant", request.variant, MAX_NAME_BYTES, "MAX_NAME_BYTES")
            if request.variant not in game.variants:
                raise RequestError("variant", f"unknown variant {request.variant!r} for {game.name}; known: {list(game.variants)}")
            if game.variant_code(request.variant) != state.variant_code:
                raise RequestError("variant", f"the position is not of variant {request.variant!r}")
        return state

    def _review_one(
        self, decision: review.Decision, request: pb.ReviewGameRequest, context: grpc.ServicerContext,
        call: "_BatchCall", thresholds: ReviewThresholds,
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
                    f"the call's deadline came before every decision was analysed: "
                    f"{len(reviews)} of {len(decisions)} were"
                )
            elapsed_ms = (time.perf_counter() - started) * 1000.0
            yield pb.ReviewGameResponse(
                summary=review.summary(reviews, state.num_players, thresholds, elapsed_ms)
            )
        except GeneratorExit:  # the call ended while an answer was being sent
            call.end()
            raise
        except Exception as exc:  # noqa: BLE001 - mapped to a status right here
            context.abort_with_status(status_for(exc, "ReviewGame"))
        finally:
            call.end()
            for future in pending.values():
                future.cancel()

    @_unary
    def ViewPosition(self, request: pb.ViewPositionRequest, context: grpc.ServicerContext) -> pb.ViewPositionResponse:
        state = self._decode(request.position)
        if not 0 <= request.seat < state.num_players:
            raise RequestError("seat", f"must be in 0..{state.num_players - 1}")
        try:
            structured = view_to_structured(state.game.name, state.view(request.seat))
        except ViewError as exc:
            raise RequestError("position.game", str(exc)) from exc
        return pb.ViewPositionResponse(structured=structured)

    @_unary
    def GetVersion(self, request: pb.GetVersionRequest, context: grpc.ServicerContext) -> pb.GetVersionResponse:
        return pb.GetVersionResponse(
            version=hortus.__version__,
            protocol=PROTOCOL,
            games=[game_info(games.get(name)) for name in games.names()],
        )


_READER_DONE = object()


def _error_response(position_id: str, exc: BaseException) -> pb.EvaluateResponse:
    """A batch position's answer that is an error (code, message, field)."""
    code, message, field = error_answer(exc, "EvaluatePositions")
    return pb.EvaluateResponse(id=position_id, error=pb.EvaluateError(code=code.name, message=message, field=field))


class _BatchCall:
    """The shared state of one EvaluatePositions call.

    Each accepted position gets a token and stays *pending* until its one answer is put on
    ``results`` (``answer``): by its search, or, for a position that has no search slot yet
    when the deadline comes close, by ``expire``. A position *claims* its slot (``claim``)
    once it holds one, after which only its search answers it."""

    def __init__(self, window: int, reserve_ms: float = 0.0) -> None:
        self.window = threading.Semaphore(window)
        self.reserve_ms = reserve_ms
        self.results: queue.Queue[object] = queue.Queue()  # at most `window` answers + 1 marker
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.submitted = 0
        self.over_cap = False
        self.closed = False  # the answers are done: accept nothing more
        self.half_closed = False  # the client sent its last position
        self.expired = False  # the deadline is close: unsearched positions get DEADLINE_EXCEEDED
        self._pending: dict[int, str] = {}  # token -> the position's id
        self._searching: set[int] = set()  # pending tokens holding a search slot
        self._handles: set[SearchHandle] = set()

    def add(self, request: pb.EvaluateRequest) -> int | None:
        """Accept a position (call with ``lock`` held): its token, or None when the call has
        expired, in which case it is answered DEADLINE_EXCEEDED right here."""
        self.submitted += 1
        if self.expired:
            self.results.put(_error_response(request.id, _deadline_error()))
            return None
        token = self.submitted
        self._pending[token] = request.id
        return token

    def request_id(self, token: int) -> str:
        with self.lock:
            return self._pending.get(token, "")

    def is_pending(self, token: int) -> bool:
        with self.lock:
            return token in self._pending

    def claim(self, token: int) -> bool:
        """The position holds a search slot: only its search answers it from now on (False if
        it was answered meanwhile)."""
        with self.lock:
            if token not in self._pending:
                return False
            self._searching.add(token)
            return True

    def answer(self, token: int, response: pb.EvaluateResponse) -> bool:
        """Put the position's answer, if it has none yet."""
        with self.lock:
            if self._pending.pop(token, None) is None:
                return False
            self._searching.discard(token)
            self.results.put(response)
            return True

    def expire(self) -> None:
        """The call's deadline is close: answer every position without a search slot
        DEADLINE_EXCEEDED now, and stop the running searches (each answers at once with what it
        found; their budgets normally ended already)."""
        with self.lock:
            self.expired = True
            for token in [t for t in self._pending if t not in self._searching]:
                self.results.put(_error_response(self._pending.pop(token), _deadline_error()))
            for handle in self._handles:
                handle.cancel()

    def track(self, handle: SearchHandle) -> None:
        with self.lock:
            self._handles.add(handle)
            if self.stop.is_set():
                handle.cancel()

    def untrack(self, handle: SearchHandle) -> None:
        with self.lock:
            self._handles.discard(handle)

    def end(self) -> None:
        """The call is over (done, cancelled, deadline): stop its searches."""
        with self.lock:
            self.stop.set()
            for handle in self._handles:
                handle.cancel()


def _deadline_error() -> NoAnswerError:
    return NoAnswerError("the call's deadline came before a search slot was free for this position")
