"""Thin clients of ``hortus.v1.Advisor``: :class:`AdvisorClient` (blocking) and
:class:`AsyncAdvisorClient` (asyncio). Both return frozen dataclasses and raise the typed
exceptions of :mod:`hortus.clients.errors`.

```python
with AdvisorClient("127.0.0.1:50051", timeout=10) as client:
    info = client.new_game("botanik", seed=1)
    hint = client.suggest_move(info.position, iterations=2000)
    info = client.apply_actions(info.position, [hint.action.id])
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import TypeVar

import grpc
import grpc.aio

from hortus.clients.errors import error_from_rpc
from hortus.clients.types import (
    Action,
    Analysis,
    GameInfo,
    LegalActions,
    Position,
    PositionInfo,
    Suggestion,
    VersionInfo,
)
from hortus.v1 import advisor_pb2 as pb

__all__ = ["DEFAULT_TARGET", "ActionLike", "AdvisorClient", "AsyncAdvisorClient"]

DEFAULT_TARGET = "127.0.0.1:50051"
SERVICE = pb.DESCRIPTOR.services_by_name["Advisor"].full_name
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

ActionLike = int | str | Action
"""An action in a request: its id, its notation, or an :class:`Action` (its id is sent)."""

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


def _channel_options(max_message_bytes: int) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
    ]


def _action_ref(action: ActionLike) -> pb.ActionRef:
    if isinstance(action, Action):
        return pb.ActionRef(id=action.id)
    if isinstance(action, bool):
        raise TypeError("an action is an int id, a notation string or an Action, not a bool")
    if isinstance(action, int):
        return pb.ActionRef(id=action)
    if isinstance(action, str):
        return pb.ActionRef(notation=action)
    raise TypeError(f"an action is an int id, a notation string or an Action, not {type(action).__name__}")


def _limits(iterations: int, time_ms: float, seed: int, threads: int) -> pb.SearchLimits:
    return pb.SearchLimits(iterations=iterations, time_ms=time_ms, seed=seed, threads=threads)


def _new_game_request(
    game: str, players: int, seed: int | None, variant: str | None, options: Mapping[str, str] | None
) -> pb.NewGameRequest:
    request = pb.NewGameRequest(game=game, players=players, variant=variant or "", options=dict(options or {}))
    if seed is not None:
        request.seed = seed
    return request


def _apply_result(response: pb.ApplyActionsResponse) -> PositionInfo:
    return PositionInfo.from_proto(response.info, tuple(Action.from_proto(a) for a in response.applied))


def _path(name: str) -> str:
    """The path of one method of the service: ``/hortus.v1.Advisor/Name``."""
    return f"/{SERVICE}/{name}"


class AdvisorClient:
    """A blocking client. ``timeout`` (seconds) is the default deadline of every call; each
    method also takes ``timeout=`` for that call. A search answers before its deadline with
    what it has (``Analysis.partial``) rather than failing.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        timeout: float | None = None,
        *,
        channel: grpc.Channel | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self._own_channel = channel is None
        self._channel = channel if channel is not None else grpc.insecure_channel(
            target, options=_channel_options(max_message_bytes)
        )
        path = _path
        ch = self._channel
        self._list_games = ch.unary_unary(
            path("ListGames"), pb.ListGamesRequest.SerializeToString, pb.ListGamesResponse.FromString
        )
        self._new_game = ch.unary_unary(
            path("NewGame"), pb.NewGameRequest.SerializeToString, pb.NewGameResponse.FromString
        )
        self._legal_actions = ch.unary_unary(
            path("LegalActions"), pb.LegalActionsRequest.SerializeToString, pb.LegalActionsResponse.FromString
        )
        self._apply_actions = ch.unary_unary(
            path("ApplyActions"), pb.ApplyActionsRequest.SerializeToString, pb.ApplyActionsResponse.FromString
        )
        self._suggest_move = ch.unary_unary(
            path("SuggestMove"), pb.SuggestMoveRequest.SerializeToString, pb.SuggestMoveResponse.FromString
        )
        self._rank_moves = ch.unary_unary(
            path("RankMoves"), pb.RankMovesRequest.SerializeToString, pb.RankMovesResponse.FromString
        )
        self._get_version = ch.unary_unary(
            path("GetVersion"), pb.GetVersionRequest.SerializeToString, pb.GetVersionResponse.FromString
        )

    # --- plumbing ------------------------------------------------------------------------
    def _call(self, method: grpc.UnaryUnaryMultiCallable[_Req, _Resp], request: _Req, timeout: float | None) -> _Resp:
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from None

    def close(self) -> None:
        """Close the channel (if this client created it)."""
        if self._own_channel:
            self._channel.close()

    def __enter__(self) -> "AdvisorClient":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- the service ---------------------------------------------------------------------
    def list_games(self, *, timeout: float | None = None) -> list[GameInfo]:
        """The games the server plays."""
        response = self._call(self._list_games, pb.ListGamesRequest(), timeout)
        return [GameInfo.from_proto(g) for g in response.games]

    def new_game(
        self,
        game: str,
        players: int = 0,
        seed: int | None = None,
        variant: str | None = None,
        options: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> PositionInfo:
        """A new game (``players`` 0 = the game's minimum). With a seed the setup's chance
        events are drawn; without, the position waits at the setup chance node."""
        request = _new_game_request(game, players, seed, variant, options)
        return PositionInfo.from_proto(self._call(self._new_game, request, timeout).info)

    def legal_actions(self, position: Position, *, timeout: float | None = None) -> LegalActions:
        """Legal decisions (or chance outcomes) with notation."""
        request = pb.LegalActionsRequest(position=position.to_proto())
        return LegalActions.from_proto(self._call(self._legal_actions, request, timeout))

    def apply_actions(
        self, position: Position, actions: Iterable[ActionLike], *, timeout: float | None = None
    ) -> PositionInfo:
        """Apply actions (ids, notations or Actions; chance outcomes included) in order."""
        request = pb.ApplyActionsRequest(position=position.to_proto(), actions=[_action_ref(a) for a in actions])
        return _apply_result(self._call(self._apply_actions, request, timeout))

    def suggest_move(
        self,
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        timeout: float | None = None,
    ) -> Suggestion:
        """The decision to play now and the turn it starts. ``iterations`` 0 = the server's
        default (or, with only ``time_ms``, as many as fit in that time)."""
        request = pb.SuggestMoveRequest(position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads))
        return Suggestion.from_proto(self._call(self._suggest_move, request, timeout))

    def rank_moves(
        self,
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        max_moves: int = 0,
        timeout: float | None = None,
    ) -> Analysis:
        """Every searched move, most visited first (the first ``max_moves``; 0 = all)."""
        request = pb.RankMovesRequest(
            position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads), max_moves=max_moves
        )
        return Analysis.from_proto(self._call(self._rank_moves, request, timeout).analysis)

    def get_version(self, *, timeout: float | None = None) -> VersionInfo:
        """The server's version, protocol and games."""
        return VersionInfo.from_proto(self._call(self._get_version, pb.GetVersionRequest(), timeout))


class AsyncAdvisorClient:
    """The asyncio twin of :class:`AdvisorClient` (``grpc.aio``): the same methods, awaited.

    Create it inside a running event loop; use ``async with`` or await :meth:`close`.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        timeout: float | None = None,
        *,
        channel: grpc.aio.Channel | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self._own_channel = channel is None
        self._channel = channel if channel is not None else grpc.aio.insecure_channel(
            target, options=_channel_options(max_message_bytes)
        )
        path = _path
        ch = self._channel
        self._list_games = ch.unary_unary(
            path("ListGames"), pb.ListGamesRequest.SerializeToString, pb.ListGamesResponse.FromString
        )
        self._new_game = ch.unary_unary(
            path("NewGame"), pb.NewGameRequest.SerializeToString, pb.NewGameResponse.FromString
        )
        self._legal_actions = ch.unary_unary(
            path("LegalActions"), pb.LegalActionsRequest.SerializeToString, pb.LegalActionsResponse.FromString
        )
        self._apply_actions = ch.unary_unary(
            path("ApplyActions"), pb.ApplyActionsRequest.SerializeToString, pb.ApplyActionsResponse.FromString
        )
        self._suggest_move = ch.unary_unary(
            path("SuggestMove"), pb.SuggestMoveRequest.SerializeToString, pb.SuggestMoveResponse.FromString
        )
        self._rank_moves = ch.unary_unary(
            path("RankMoves"), pb.RankMovesRequest.SerializeToString, pb.RankMovesResponse.FromString
        )
        self._get_version = ch.unary_unary(
            path("GetVersion"), pb.GetVersionRequest.SerializeToString, pb.GetVersionResponse.FromString
        )

    async def _call(
        self, method: grpc.aio.UnaryUnaryMultiCallable[_Req, _Resp], request: _Req, timeout: float | None
    ) -> _Resp:
        try:
            return await method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc) from None

    async def close(self) -> None:
        """Close the channel (if this client created it)."""
        if self._own_channel:
            await self._channel.close()

    async def __aenter__(self) -> "AsyncAdvisorClient":
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def list_games(self, *, timeout: float | None = None) -> list[GameInfo]:
        response = await self._call(self._list_games, pb.ListGamesRequest(), timeout)
        return [GameInfo.from_proto(g) for g in response.games]

    async def new_game(
        self,
        game: str,
        players: int = 0,
        seed: int | None = None,
        variant: str | None = None,
        options: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> PositionInfo:
        request = _new_game_request(game, players, seed, variant, options)
        return PositionInfo.from_proto((await self._call(self._new_game, request, timeout)).info)

    async def legal_actions(self, position: Position, *, timeout: float | None = None) -> LegalActions:
        request = pb.LegalActionsRequest(position=position.to_proto())
        return LegalActions.from_proto(await self._call(self._legal_actions, request, timeout))

    async def apply_actions(
        self, position: Position, actions: Iterable[ActionLike], *, timeout: float | None = None
    ) -> PositionInfo:
        request = pb.ApplyActionsRequest(position=position.to_proto(), actions=[_action_ref(a) for a in actions])
        return _apply_result(await self._call(self._apply_actions, request, timeout))

    async def suggest_move(
        self,
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        timeout: float | None = None,
    ) -> Suggestion:
        request = pb.SuggestMoveRequest(position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads))
        return Suggestion.from_proto(await self._call(self._suggest_move, request, timeout))

    async def rank_moves(
        self,
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        max_moves: int = 0,
        timeout: float | None = None,
    ) -> Analysis:
        request = pb.RankMovesRequest(
            position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads), max_moves=max_moves
        )
        return Analysis.from_proto((await self._call(self._rank_moves, request, timeout)).analysis)

    async def get_version(self, *, timeout: float | None = None) -> VersionInfo:
        return VersionInfo.from_proto(await self._call(self._get_version, pb.GetVersionRequest(), timeout))
