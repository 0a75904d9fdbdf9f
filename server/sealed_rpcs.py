"""Sealed positions in the RPCs: opening ``Position.sealed`` where every position is decoded,
handing positions out sealed for one seat (its *audience*), and keeping every answer about a
sealed position to what that seat may see.

The rules (each closes a way for the holder of a blob to learn what its seat cannot see):

* ``NewGame`` / ``ApplyActions`` with ``seal_for_seat``, or ``ApplyActions`` of a sealed
  position, answer the position sealed and the audience's view; the rest of ``PositionInfo``
  is computed from a re-deal of that view, so it cannot depend on the hidden part.
* A deal or a draw of a sealed game uses a seed keyed with the sealing key: a client that
  chose the seed (``NewGameRequest.seed``, ``draw_seed``) cannot replay the deal locally.
* ``ApplyActions`` of a sealed position takes the audience's own decisions and server draws
  only: whether another seat's move, or a chance outcome named by the client, is legal would
  tell the other seat's hand or the deck. Another seat's move is played by ``SuggestMove``,
  which answers the next position sealed, stripped of the ranked moves (they would tell the
  mover's hand); drawn outcomes the audience cannot tell apart are answered as id -1.
* ``LegalActions`` / ``ViewPosition`` answer for the audience only; ``RankMoves``,
  ``Analyze`` and batch positions only when the audience is to move.
"""

from __future__ import annotations

import functools
from typing import Any

import grpc
from hortus.games import CHANCE, State
from hortus.server.errors import RequestError
from hortus.server.messages import position_info
from hortus.server.requests import Budget, ServicerCore, unary_rpc
from hortus.server.sealing import FIELD, Sealed, SealError, Sealer, load_sealer
from hortus.v1 import advisor_pb2 as pb
from hortus.views import view_to_structured

__all__ = ["SealedRpcs"]

HIDDEN_ACTION = -1
"""``Action.id`` of a drawn outcome the audience cannot tell apart (its notation is "")."""


class SealedRpcs(ServicerCore):
    """The sealing layer over the RPC families (first in ``AdvisorServicer``'s bases)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        path = self.config.seal_key_file
        self.sealer: Sealer | None = load_sealer(path) if path else None
        """Seals with the key file's newest key, opens with any (None: no key)."""

    # --- opening --------------------------------------------------------------------------
    def _sealer(self, field: str) -> Sealer:
        if self.sealer is None:
            raise RequestError(field, "this server has no sealing key (hortus serve --seal-key FILE)")
        return self.sealer

    def _open(self, position: pb.Position) -> Sealed:
        """The contents of a sealed position, checked against the message's other fields."""
        sealer = self._sealer(FIELD)
        if position.encoded or position.HasField("structured"):
            raise RequestError("position", "give sealed bytes, encoded bytes or a structured view: only one")
        try:
            opened = sealer.open(position.sealed)
        except SealError as exc:
            raise RequestError(exc.field, exc.reason) from exc
        if position.game and position.game != opened.game:
            raise RequestError("position.game", f"{position.game!r} differs from the sealed position's game {opened.game!r}")
        return opened

    def _audience(self, position: pb.Position) -> int | None:
        """The seat a sealed position is sealed for; None for a plain one."""
        return self._open(position).seat if position.sealed else None

    def _decode(self, position: pb.Position) -> State:
        if position.sealed:
            opened = self._open(position)
            # sealed by this service from a valid state: decoding cannot fail but for a bug
            return self._game(opened.game, "position.game").decode(opened.encoded)
        if self.config.require_sealed and not position.HasField("structured"):
            raise RequestError(
                FIELD,
                "this server takes sealed positions only (--require-sealed): send the position as it was "
                "handed out (NewGame seal_for_seat), or a seat's structured view",
            )
        return super()._decode(position)

    def _prepare(self, position: pb.Position, limits: pb.SearchLimits, context: grpc.ServicerContext) -> tuple[State, Budget]:
        # RankMoves, Analyze and batch positions rank every move of the seat to move: of a
        # sealed position only when that seat is its audience (its own hand).
        audience = self._audience(position)
        if audience is not None:
            state = self._decode(position)
            if state.current_player >= 0 and state.current_player != audience:
                raise RequestError(
                    FIELD,
                    f"sealed for seat {audience}: analyses only of that seat's own decisions "
                    f"(seat {state.current_player} is to move)",
                )
        return super()._prepare(position, limits, context)

    def _plain(self, name: str) -> Any:
        """The next implementation of RPC `name` without its status mapping (``unary_rpc``'s
        outer wrapper), so that its errors reach this layer as exceptions."""
        method = getattr(super(), name)
        return functools.partial(method.__wrapped__, self)

    # --- handing out ------------------------------------------------------------------------
    def _sealed_info(self, state: State, audience: int, field: str) -> pb.PositionInfo:
        """``PositionInfo`` of `state` for `audience`: the position sealed, the audience's view,
        and every other figure from a re-deal of that view (a function of the view alone),
        but the final scores and returns of a finished game (announced at the table)."""
        if not 0 <= audience < state.num_players:
            raise RequestError(field, f"seat {audience} is not in 0..{state.num_players - 1}")
        sealer = self._sealer(field)
        view = state.view(audience)
        redeal = state.game.from_view(view, seed=0)
        info = position_info(redeal)
        info.position.CopyFrom(pb.Position(game=state.game.name, sealed=sealer.seal(state.game.name, state.encode(), audience)))
        del info.seat_rendered[:]
        info.seat_rendered.extend(text if seat == audience else "" for seat, text in enumerate(position_info_seats(redeal)))
        info.view.CopyFrom(view_to_structured(state.game.name, view))
        if state.is_terminal():
            del info.scores[:]
            info.scores.extend(state.scores())
            del info.returns[:]
            info.returns.extend(state.returns())
        return info

    @unary_rpc
    def NewGame(self, request: pb.NewGameRequest, context: grpc.ServicerContext) -> pb.NewGameResponse:
        if not request.HasField("seal_for_seat"):
            if self.config.require_sealed:
                raise RequestError("seal_for_seat", "this server hands out sealed positions only (--require-sealed): set it")
            return self._plain("NewGame")(request, context)  # type: ignore[no-any-return]
        sealer = self._sealer("seal_for_seat")
        seed = None
        if request.HasField("seed"):
            seed = sealer.derive_seed(b"deal", int(request.seed).to_bytes(8, "little"))
        state = self._new_state(request.game, request.players, request.variant, request.options, seed)
        return pb.NewGameResponse(info=self._sealed_info(state, request.seal_for_seat, "seal_for_seat"))

    @unary_rpc
    def ApplyActions(self, request: pb.ApplyActionsRequest, context: grpc.ServicerContext) -> pb.ApplyActionsResponse:
        if not request.position.sealed:
            response: pb.ApplyActionsResponse = self._plain("ApplyActions")(request, context)
            if request.HasField("seal_for_seat"):
                after = self._decode(response.info.position)
                response.info.CopyFrom(self._sealed_info(after, request.seal_for_seat, "seal_for_seat"))
            return response
        opened = self._open(request.position)
        audience = opened.seat
        if request.HasField("seal_for_seat") and request.seal_for_seat != audience:
            raise RequestError("seal_for_seat", f"the position is sealed for seat {audience}, not {request.seal_for_seat}")
        cap = self.config.max_actions_per_request
        if len(request.actions) > cap:
            raise RequestError("actions", f"{len(request.actions)} actions exceed the server cap max_actions_per_request={cap}")
        sealer = self._sealer(FIELD)
        current = self._decode(request.position)
        applied: list[pb.Action] = []
        for i, ref in enumerate(request.actions):
            field = f"actions[{i}]"
            kind = ref.WhichOneof("kind")
            player = current.current_player
            if current.is_terminal():
                raise RequestError(field, "the game is over: no action can follow")
            if player == CHANCE:
                if kind != "draw_seed":
                    raise RequestError(field, f"sealed for seat {audience}: chance outcomes are drawn by the server (draw_seed)")
                # keyed: the client chose draw_seed, and must not be able to replay the draw
                data = opened.encoded + i.to_bytes(4, "little") + ref.draw_seed.to_bytes(8, "little")
                visible, _ = current.chance_outcomes_seen_by(audience)
                seen = {a for a, _, _ in visible}
                action = current.draw_chance(sealer.derive_seed(b"draw", data, opened.key_id))
                notation = current.action_to_string(action)
                current.apply(action)
                applied.append(pb.Action(id=action, notation=notation) if action in seen else pb.Action(id=HIDDEN_ACTION))
                continue
            if player != audience:
                raise RequestError(
                    field, f"sealed for seat {audience}: seat {player} decides here; its move is played by SuggestMove"
                )
            # the audience's own decision: checked and applied by the one implementation
            one = pb.ApplyActionsRequest(position=pb.Position(game=current.game.name, encoded=current.encode()))
            one.actions.add().CopyFrom(ref)
            try:
                answer = self._plain("ApplyActions")(one, context)
            except RequestError as exc:
                raise RequestError(exc.field.replace("actions[0]", field, 1), exc.description) from exc
            applied.extend(answer.applied)
            current = self._decode(answer.info.position)
        return pb.ApplyActionsResponse(info=self._sealed_info(current, audience, FIELD), applied=applied)

    # --- answers for the audience only -----------------------------------------------------
    @unary_rpc
    def LegalActions(self, request: pb.LegalActionsRequest, context: grpc.ServicerContext) -> pb.LegalActionsResponse:
        audience = self._audience(request.position)
        if audience is not None:
            if request.HasField("for_seat") and request.for_seat != audience:
                raise RequestError("for_seat", f"the position is sealed for seat {audience}: only that seat's view")
            if not request.HasField("for_seat"):
                own = pb.LegalActionsRequest()
                own.CopyFrom(request)
                own.for_seat = audience
                request = own
        return self._plain("LegalActions")(request, context)  # type: ignore[no-any-return]

    @unary_rpc
    def ViewPosition(self, request: pb.ViewPositionRequest, context: grpc.ServicerContext) -> pb.ViewPositionResponse:
        audience = self._audience(request.position)
        if audience is not None and request.seat != audience:
            raise RequestError("seat", f"the position is sealed for seat {audience}: only that seat's view")
        return self._plain("ViewPosition")(request, context)  # type: ignore[no-any-return]

    @unary_rpc
    def SuggestMove(self, request: pb.SuggestMoveRequest, context: grpc.ServicerContext) -> pb.SuggestMoveResponse:
        audience = self._audience(request.position)
        response: pb.SuggestMoveResponse = self._plain("SuggestMove")(request, context)
        if audience is None:
            return response
        state = self._decode(request.position)
        if state.current_player != audience:
            # what the audience sees of another seat's move: the move (played openly), nothing
            # of the options it was chosen from
            analysis = response.analysis
            response = pb.SuggestMoveResponse(
                action=response.action,
                turn=[response.action],
                analysis=pb.Analysis(seat=analysis.seat, iterations=analysis.iterations, partial=analysis.partial),
                continuation=response.continuation,
            )
        after = state.clone()
        after.apply(response.action.id)
        response.info.CopyFrom(self._sealed_info(after, audience, FIELD))
        return response

    @unary_rpc
    def GetVersion(self, request: pb.GetVersionRequest, context: grpc.ServicerContext) -> pb.GetVersionResponse:
        response: pb.GetVersionResponse = self._plain("GetVersion")(request, context)
        response.sealing = self.sealer is not None
        response.require_sealed = self.config.require_sealed
        return response


def position_info_seats(state: State) -> list[str]:
    """Every seat's picture of `state` (``PositionInfo.seat_rendered``)."""
    return [state.render(seat) for seat in range(state.num_players)]
