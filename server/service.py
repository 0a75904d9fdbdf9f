"""``hortus.v1.Advisor``: the gRPC servicer. Game-agnostic: every game is reached through the
``hortus.games`` registry, every search through ``hortus.search.analyze``.

Stateless: each request carries its position (``Position.encoded`` = ``State.encode()`` bytes),
decoded and validated before any compiled code reads it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import grpc

import hortus
from hortus import games
from hortus.games import CHANCE, TERMINAL, Game, IllegalActionError, State, UnknownGameError
from hortus.search import Analysis, Limits, MoveInfo, SearchHandle, analyze
from hortus.server.config import ServerConfig
from hortus.server.errors import CapacityError, NoAnswerError, RequestError, rpc_errors
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc

PROTOCOL = "hortus.v1"
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Advisor"].full_name

_NO_DEADLINE_S = 1e9  # time_remaining() of a call without deadline is ~infinite


@dataclass(frozen=True)
class _Budget:
    """The limits a search runs with, and whether the caller's budget is time alone."""

    limits: Limits
    time_only: bool  # the caller gave a time budget and no iteration budget
    time_cut: bool  # the deadline (or max_time_ms) shortened the caller's time budget


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
            )
            for m in moves
        ],
        iterations=analysis.iterations,
        partial=partial,
        elapsed_ms=analysis.elapsed_ms,
        nodes=analysis.nodes,
    )


class AdvisorServicer(advisor_pb2_grpc.AdvisorServicer):
    """Implements ``hortus.v1.Advisor`` (see ``proto/hortus/v1/advisor.proto``)."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config if config is not None else ServerConfig()
        self._search_slots = threading.BoundedSemaphore(self.config.max_concurrent_searches)

    # --- decoding and validation ---------------------------------------------------------
    @staticmethod
    def _game(name: str, field: str) -> Game:
        try:
            return games.get(name)
        except UnknownGameError as exc:
            raise RequestError(field, str(exc)) from exc

    def _decode(self, position: pb.Position) -> State:
        """The state of a request's position (InvalidPositionError names the bad field)."""
        game = self._game(position.game, "position.game")
        return game.decode(position.encoded)

    @staticmethod
    def _check_decision(state: State) -> None:
        player = state.current_player
        if player == TERMINAL:
            raise RequestError("position", "the game is over: there is no move to search")
        if player == CHANCE:
            raise RequestError("position", "chance node: apply the chance outcome first (see LegalActions)")

    def _budget(self, request: pb.SearchLimits, context: grpc.ServicerContext) -> _Budget:
        """Limits from a request, checked against the caps and cut by the call's deadline."""
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
            deadline_ms = remaining_ms - cfg.deadline_margin_ms
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
        return _Budget(limits=limits, time_only=time_only, time_cut=time_cut)

    def _search(
        self, position: pb.Position, limits: pb.SearchLimits, context: grpc.ServicerContext
    ) -> tuple[State, Analysis, bool]:
        """Decode, validate, search within the caps; returns the state, analysis and the
        partial flag (cut short by the deadline, a cap or cancellation)."""
        state = self._decode(position)
        self._check_decision(state)
        budget = self._budget(limits, context)
        if not self._search_slots.acquire(blocking=False):
            raise CapacityError(
                "max_concurrent_searches",
                "the server is running as many searches as it allows "
                f"(max_concurrent_searches={self.config.max_concurrent_searches}); retry later",
            )
        try:
            handle = SearchHandle()
            if not context.add_callback(handle.cancel):  # the call already ended
                handle.cancel()
            analysis = analyze(state, budget.limits, handle)
        finally:
            self._search_slots.release()
        if budget.time_only and not budget.time_cut:
            # The caller's budget is time alone: stopping at that time is a complete answer.
            partial = handle.cancelled
        else:
            partial = analysis.partial or handle.cancelled
        return state, analysis, partial

    # --- RPCs ----------------------------------------------------------------------------
    @rpc_errors
    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=[game_info(games.get(name)) for name in games.names()])

    @rpc_errors
    def NewGame(self, request: pb.NewGameRequest, context: grpc.ServicerContext) -> pb.NewGameResponse:
        game = self._game(request.game, "game")
        players = request.players or game.min_players
        if not game.min_players <= players <= game.max_players:
            raise RequestError(
                "players", f"{game.name} takes {game.min_players}-{game.max_players} players, not {players}"
            )
        variant = request.variant or None
        if variant is not None and variant not in game.variants:
            raise RequestError("variant", f"unknown variant {variant!r} for {game.name}; known: {list(game.variants)}")
        options: Mapping[str, str] = dict(request.options)
        for name, value in options.items():
            if name not in game.options:
                raise RequestError(
                    f"options[{name}]", f"unknown option {name!r} for {game.name}; known: {sorted(game.options)}"
                )
            if value not in game.options[name].choices:
                raise RequestError(
                    f"options[{name}]", f"{value!r} is not one of {list(game.options[name].choices)}"
                )
        seed = int(request.seed) if request.HasField("seed") else None
        state = game.new_game(players=players, seed=seed, variant=variant, options=options)
        return pb.NewGameResponse(info=position_info(state))

    @rpc_errors
    def LegalActions(self, request: pb.LegalActionsRequest, context: grpc.ServicerContext) -> pb.LegalActionsResponse:
        state = self._decode(request.position)
        return pb.LegalActionsResponse(
            current_player=state.current_player,
            actions=[_action(state, a) for a in state.legal_actions()],
            chance_outcomes=[
                pb.ChanceOutcome(action=_action(state, a), probability=p) for a, p in state.chance_outcomes()
            ],
            terminal=state.is_terminal(),
        )

    @rpc_errors
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
                    action = state.parse_action(ref.notation)
                else:
                    raise RequestError(field, "neither an id nor a notation")
                notation = state.action_to_string(action)
                state.apply(action)
            except IllegalActionError as exc:
                raise RequestError(field, str(exc)) from exc
            applied.append(pb.Action(id=action, notation=notation))
        return pb.ApplyActionsResponse(info=position_info(state), applied=applied)

    @rpc_errors
    def SuggestMove(self, request: pb.SuggestMoveRequest, context: grpc.ServicerContext) -> pb.SuggestMoveResponse:
        state, analysis, partial = self._search(request.position, request.limits, context)
        best = analysis.best
        return pb.SuggestMoveResponse(
            action=pb.Action(id=best.action, notation=best.notation),
            turn=_principal_variation(state, best),
            analysis=analysis_message(state, analysis, partial),
        )

    @rpc_errors
    def RankMoves(self, request: pb.RankMovesRequest, context: grpc.ServicerContext) -> pb.RankMovesResponse:
        state, analysis, partial = self._search(request.position, request.limits, context)
        return pb.RankMovesResponse(analysis=analysis_message(state, analysis, partial, request.max_moves))

    @rpc_errors
    def GetVersion(self, request: pb.GetVersionRequest, context: grpc.ServicerContext) -> pb.GetVersionResponse:
        return pb.GetVersionResponse(
            version=hortus.__version__,
            protocol=PROTOCOL,
            games=[game_info(games.get(name)) for name in games.names()],
        )
