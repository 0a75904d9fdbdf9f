"""Position RPCs: the games, new games, legal actions, applying actions, views, version."""

from __future__ import annotations


import grpc
from hortus.games import (
    IllegalActionError,
)
from hortus.server.errors import (
    RequestError,
)
from hortus.server.messages import action_message, game_info, position_info
from hortus.server.pictures import last_moves
from hortus.server.requests import (
    MAX_NOTATION_BYTES,
    PROTOCOL,
    ServicerCore,
    check_bytes,
    unary_rpc,
)
from hortus.v1 import advisor_pb2 as pb

import hortus
from hortus import games
from hortus.views import ViewError, view_to_structured


class PositionRpcs(ServicerCore):
    """ListGames, NewGame, LegalActions, ApplyActions, ViewPosition, GetVersion."""

    @unary_rpc
    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=[game_info(games.get(name)) for name in games.names()])

    @unary_rpc
    def NewGame(self, request: pb.NewGameRequest, context: grpc.ServicerContext) -> pb.NewGameResponse:
        seed = int(request.seed) if request.HasField("seed") else None
        state = self._new_state(request.game, request.players, request.variant, request.options, seed)
        return pb.NewGameResponse(info=position_info(state))

    @unary_rpc
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
            picture = state.picture(request.for_seat, list(request.highlight), last_moves(request, state.num_players))
        if request.HasField("for_seat"):
            # Only what `seat` may know (see the proto): its own decisions, the outcomes it
            # can tell apart with odds given its view, the rest as one total.
            visible, hidden_total = state.chance_outcomes_seen_by(seat)
            return pb.LegalActionsResponse(
                current_player=state.current_player,
                actions=[action_message(state, a) for a in state.legal_actions()] if state.current_player == seat else [],
                chance_outcomes=[
                    pb.ChanceOutcome(action=pb.Action(id=a, notation=text), probability=p) for a, p, text in visible
                ],
                terminal=state.is_terminal(),
                hidden_probability=hidden_total,
                picture=picture,
            )
        return pb.LegalActionsResponse(
            current_player=state.current_player,
            actions=[action_message(state, a) for a in state.legal_actions()],
            chance_outcomes=[
                pb.ChanceOutcome(action=action_message(state, a), probability=p) for a, p in state.chance_outcomes()
            ],
            terminal=state.is_terminal(),
            picture=picture,
        )

    @unary_rpc
    def ApplyActions(self, request: pb.ApplyActionsRequest, context: grpc.ServicerContext) -> pb.ApplyActionsResponse:
        cap = self.config.max_actions_per_request
        if len(request.actions) > cap:
            raise RequestError("actions", f"{len(request.actions)} actions exceed the server cap max_actions_per_request={cap}")
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
                    check_bytes(f"{field}.notation", ref.notation, MAX_NOTATION_BYTES, "MAX_NOTATION_BYTES")
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

    @unary_rpc
    def ViewPosition(self, request: pb.ViewPositionRequest, context: grpc.ServicerContext) -> pb.ViewPositionResponse:
        state = self._decode(request.position)
        if not 0 <= request.seat < state.num_players:
            raise RequestError("seat", f"must be in 0..{state.num_players - 1}")
        try:
            structured = view_to_structured(state.game.name, state.view(request.seat))
        except ViewError as exc:
            raise RequestError("position.game", str(exc)) from exc
        return pb.ViewPositionResponse(structured=structured)

    @unary_rpc
    def GetVersion(self, request: pb.GetVersionRequest, context: grpc.ServicerContext) -> pb.GetVersionResponse:
        return pb.GetVersionResponse(
            version=hortus.__version__,
            protocol=PROTOCOL,
            games=[game_info(games.get(name)) for name in games.names()],
        )
