"""Thin clients of ``hortus.v1.Advisor``: :class:`AdvisorClient` (blocking) and
:class:`AsyncAdvisorClient` (asyncio). Both return frozen dataclasses and raise the typed
exceptions of :mod:`hortus.clients.errors`.

```python
with AdvisorClient("127.0.0.1:50051", timeout=10) as client:
    info = client.new_game("botanik", seed=1)
    hint = client.suggest_move(info.position, iterations=2000)
    info = client.apply_actions(info.position, [hint.action.id])
```

The service's methods are described once, in :class:`AdvisorMethods`: each builds its request
and says how its answer is read. The two clients are shells that run those descriptions, one
blocking (``grpc``), one awaited (``grpc.aio``), so a method is never written twice.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import inspect
import ipaddress
import json
import queue
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

import grpc
import grpc.aio
from google.protobuf.message import Message

from hortus.clients.errors import AdvisorError, UnavailableError, error_from_rpc
from hortus.clients.record import GameRecord, ReviewedMove, ReviewSummary, review_answer
from hortus.clients.simulation import SimulatedGame, SimulationReport, simulation_answer
from hortus.clients.types import (
    Action,
    Analysis,
    AnalysisUpdate,
    ChanceDraw,
    EvaluationError,
    EvaluationItem,
    EvaluationResult,
    GameInfo,
    LegalActions,
    Position,
    PositionInfo,
    Suggestion,
    VersionInfo,
)
from hortus.v1 import advisor_pb2 as pb

__all__ = [
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "ActionLike",
    "AdvisorClient",
    "AdvisorMethods",
    "AsyncAdvisorClient",
    "EvaluationInput",
    "TlsConfig",
    "channel_target",
    "service_config",
]

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 60.0
"""Seconds: the default deadline of every unary call (streams have none unless given)."""
SERVICE = pb.DESCRIPTOR.services_by_name["Advisor"].full_name
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

EvaluationInput = EvaluationItem | tuple[str, Position] | Position
"""A position of a batch: an :class:`EvaluationItem`, an ``(id, position)`` pair, or a bare
position (its id is then its index in the batch, as text)."""

Targets = str | Sequence[str]
"""One gRPC target (``"host:port"``, ``"dns:///svc:50051"``, ``"ipv4:///a:1,b:2"``...) or a
list of ``"host:port"`` addresses (client-side round robin)."""


@dataclass(frozen=True)
class TlsConfig:
    """TLS of a channel: the CA that signed the server (None: the system roots), and for
    mutual TLS the client's key and certificate chain (PEM bytes). ``server_name`` overrides
    the name checked in the server's certificate."""

    root_certificates: bytes | None = None
    private_key: bytes | None = None
    certificate_chain: bytes | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(self.root_certificates, self.private_key, self.certificate_chain)

    def handshake_problem(self, address: str, timeout: float = 2.0) -> str | None:
        """What is wrong with a TLS handshake with the server at `address` (``host:port``),
        tried with Python's ``ssl`` and these settings: e.g. the server requires a client
        certificate and this config has none. None: the handshake works, or the server cannot
        be reached at all (not a TLS problem). gRPC reports a refused handshake only as an
        unreachable server ("Socket closed"), and with wait-for-ready waits for it until the
        deadline."""
        import os
        import socket
        import ssl
        import tempfile

        host, sep, port = address.rpartition(":")
        if not sep or not port.isdigit():
            return None
        host = host.strip("[]")
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if self.root_certificates is not None:
            context.load_verify_locations(cadata=self.root_certificates.decode("ascii", "replace"))
        context.set_alpn_protocols(["h2"])
        with tempfile.TemporaryDirectory(prefix="hortus-tls-") as folder:
            if self.private_key is not None and self.certificate_chain is not None:
                cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
                for path, data in ((cert_path, self.certificate_chain), (key_path, self.private_key)):
                    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                        out.write(data)
                context.load_cert_chain(cert_path, key_path)
            try:
                with socket.create_connection((host, int(port)), timeout=timeout) as raw:
                    with context.wrap_socket(raw, server_hostname=self.server_name or host) as tls:
                        # TLS 1.3: a server that requires a client certificate says so only after
                        # the handshake, in an alert that arrives with its first bytes
                        tls.settimeout(timeout)
                        tls.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
                        if tls.recv(1) == b"":  # closed at once, instead of the server's SETTINGS
                            if self.certificate_chain is None:
                                return (
                                    "the server closed the connection right after the TLS handshake: it requires "
                                    "a client certificate (mutual TLS) and this client has none"
                                )
                            return "the server closed the connection right after the TLS handshake: it does not accept this client's certificate"
            except ssl.SSLError as exc:
                reason = str(getattr(exc, "reason", "") or exc).upper()
                if "CERTIFICATE_REQUIRED" in reason or ("HANDSHAKE_FAILURE" in reason and self.certificate_chain is None):
                    return "the server requires a client certificate (mutual TLS) and this client has none"
                if "CERTIFICATE_VERIFY_FAILED" in reason:
                    return f"the server's certificate is not trusted by the client's root certificates ({exc})"
                if "UNKNOWN_CA" in reason or "BAD_CERTIFICATE" in reason:
                    return f"the server does not accept this client's certificate ({exc})"
                return f"the TLS handshake failed: {exc}"
            except (OSError, ValueError):
                return None  # unreachable, or gone: not a TLS problem
        return None


def service_config(retries: int = 4, wait_for_ready: bool = False) -> str:
    """The channel's service config (JSON): round robin over every address of the target, and
    for every Advisor method up to `retries` attempts on UNAVAILABLE with exponential back-off
    (gRPC retries only calls that got no response yet), and optionally wait-for-ready (a call
    waits for a server to be reachable, until its deadline, instead of failing UNAVAILABLE)."""
    method: dict[str, object] = {"name": [{"service": SERVICE}], "waitForReady": wait_for_ready}
    if retries > 1:
        method["retryPolicy"] = {
            "maxAttempts": min(retries, 5),
            "initialBackoff": "0.1s",
            "maxBackoff": "2s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        }
    return json.dumps({"loadBalancingConfig": [{"round_robin": {}}], "methodConfig": [method]})


def _resolve(address: str) -> list[str]:
    """``host:port`` as literal ``ip:port`` addresses (IPv6 bracketed)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"a target in a list must be HOST:PORT, not {address!r}")
    host = host.strip("[]")
    try:
        ipaddress.ip_address(host)
        literal = [host]
    except ValueError:
        found = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        literal = list(dict.fromkeys(str(info[4][0]) for info in found))
    return [f"[{h}]:{port}" if ":" in h else f"{h}:{port}" for h in literal]


def channel_target(targets: Targets) -> str:
    """The gRPC target for one target or a list of ``host:port`` addresses: a list becomes an
    ``ipv4:///`` (or ``ipv6:///``) address list that the round-robin policy spreads calls over
    (host names are resolved once, here; for a DNS name whose addresses change, such as a
    Kubernetes headless service, pass ``"dns:///name:port"`` instead)."""
    if isinstance(targets, str):
        return targets
    addresses = [a for t in targets for a in _resolve(t)]
    if not addresses:
        raise ValueError("no target given")
    v4 = [a for a in addresses if not a.startswith("[")]
    if v4:
        return "ipv4:///" + ",".join(v4)
    return "ipv6:///" + ",".join(addresses)


ActionLike = int | str | Action | ChanceDraw
"""An action in a request: its id, its notation, an :class:`Action` (its id is sent), or at a
chance node a :class:`ChanceDraw` (the server draws the outcome)."""

_Req = TypeVar("_Req", bound=Message)
_Resp = TypeVar("_Resp", bound=Message)
_T = TypeVar("_T")
_P = ParamSpec("_P")


def _channel_options(
    max_message_bytes: int, retries: int = 4, tls: TlsConfig | None = None, wait_for_ready: bool = False
) -> list[tuple[str, int | str]]:
    options: list[tuple[str, int | str]] = [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.service_config", service_config(retries, wait_for_ready)),
        ("grpc.enable_retries", 1),
    ]
    if tls is not None and tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return options


# --- requests ----------------------------------------------------------------------------------
def _action_ref(action: ActionLike) -> pb.ActionRef:
    if isinstance(action, Action):
        return pb.ActionRef(id=action.id)
    if isinstance(action, ChanceDraw):
        return pb.ActionRef(draw_seed=action.seed & 0xFFFFFFFFFFFFFFFF)
    if isinstance(action, bool):
        raise TypeError("an action is an int id, a notation string or an Action, not a bool")
    if isinstance(action, int):
        return pb.ActionRef(id=action)
    if isinstance(action, str):
        return pb.ActionRef(notation=action)
    raise TypeError(f"an action is an int id, a notation string or an Action, not {type(action).__name__}")


def _limits(
    iterations: int,
    time_ms: float,
    seed: int,
    threads: int,
    allow: Iterable[ActionLike] = (),
    avoid: Iterable[ActionLike] = (),
) -> pb.SearchLimits:
    """Search limits; `allow` / `avoid`: the what-if constraints at the root (ids or notations)."""
    return pb.SearchLimits(
        iterations=iterations,
        time_ms=time_ms,
        seed=seed,
        threads=threads,
        allow_actions=[_action_ref(a) for a in allow],
        avoid_actions=[_action_ref(a) for a in avoid],
    )


def _evaluate_request(
    item: EvaluationInput, index: int, defaults: pb.SearchLimits, max_moves: int
) -> tuple[str, pb.EvaluateRequest]:
    """The caller's id and the wire request (its id set later)."""
    if isinstance(item, EvaluationItem):
        limits = pb.SearchLimits(
            iterations=item.iterations or defaults.iterations,
            time_ms=item.time_ms or defaults.time_ms,
            seed=item.seed or defaults.seed,
            threads=item.threads or defaults.threads,
        )
        return item.id, pb.EvaluateRequest(position=item.position.to_proto(), limits=limits, max_moves=max_moves)
    if isinstance(item, Position):
        return str(index), pb.EvaluateRequest(position=item.to_proto(), limits=defaults, max_moves=max_moves)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Position):
        return str(item[0]), pb.EvaluateRequest(position=item[1].to_proto(), limits=defaults, max_moves=max_moves)
    raise TypeError(f"a batch holds EvaluationItem, (id, Position) or Position, not {type(item).__name__}")


def _path(name: str) -> str:
    """The path of one method of the service: ``/hortus.v1.Advisor/Name``."""
    return f"/{SERVICE}/{name}"


# --- what a call is: the one description both clients run ------------------------------------------
@dataclass(frozen=True)
class _Method(Generic[_Req, _Resp]):
    """One RPC of the service: its name and its message types."""

    name: str
    request: type[_Req]
    response: type[_Resp]

    @property
    def path(self) -> str:
        return _path(self.name)


_LIST_GAMES = _Method("ListGames", pb.ListGamesRequest, pb.ListGamesResponse)
_NEW_GAME = _Method("NewGame", pb.NewGameRequest, pb.NewGameResponse)
_LEGAL_ACTIONS = _Method("LegalActions", pb.LegalActionsRequest, pb.LegalActionsResponse)
_APPLY_ACTIONS = _Method("ApplyActions", pb.ApplyActionsRequest, pb.ApplyActionsResponse)
_SUGGEST_MOVE = _Method("SuggestMove", pb.SuggestMoveRequest, pb.SuggestMoveResponse)
_RANK_MOVES = _Method("RankMoves", pb.RankMovesRequest, pb.RankMovesResponse)
_GET_VERSION = _Method("GetVersion", pb.GetVersionRequest, pb.GetVersionResponse)
_VIEW_POSITION = _Method("ViewPosition", pb.ViewPositionRequest, pb.ViewPositionResponse)
_ANALYZE = _Method("Analyze", pb.AnalyzeRequest, pb.AnalyzeResponse)
_REVIEW_GAME = _Method("ReviewGame", pb.ReviewGameRequest, pb.ReviewGameResponse)
_SIMULATE_GAMES = _Method("SimulateGames", pb.SimulateGamesRequest, pb.SimulateGamesResponse)
_EVALUATE_POSITIONS = _Method("EvaluatePositions", pb.EvaluateRequest, pb.EvaluateResponse)


@dataclass(frozen=True)
class Unary(Generic[_Resp, _T]):
    """A unary call: its request, how its response is read, and its deadline in seconds (None:
    the client's default)."""

    method: _Method[Any, _Resp]
    request: Message
    answer: Callable[[_Resp], _T]
    timeout: float | None


@dataclass(frozen=True)
class Stream(Generic[_Resp, _T]):
    """A server stream: its request, how each response is read, and the deadline of the whole
    call in seconds (None: none; the search budget bounds it)."""

    method: _Method[Any, _Resp]
    request: Message
    answer: Callable[[_Resp], _T]
    timeout: float | None


@dataclass(frozen=True)
class Batch:
    """An ``evaluate`` batch: the positions (read lazily), the budget of items that give none,
    `streams` calls at once with at most `window` unanswered positions each, `retries` re-sends
    of a position whose call failed UNAVAILABLE, and the deadline of each call in seconds."""

    positions: Iterable[EvaluationInput]
    defaults: pb.SearchLimits
    max_moves: int
    streams: int
    window: int
    retries: int
    timeout: float | None


def _new_game_request(
    game: str, players: int, seed: int | None, variant: str | None, options: Mapping[str, str] | None
) -> pb.NewGameRequest:
    request = pb.NewGameRequest(game=game, players=players, variant=variant or "", options=dict(options or {}))
    if seed is not None:
        request.seed = seed
    return request


def _games(response: pb.ListGamesResponse) -> list[GameInfo]:
    return [GameInfo.from_proto(g) for g in response.games]


def _new_position(response: pb.NewGameResponse) -> PositionInfo:
    return PositionInfo.from_proto(response.info)


def _applied(response: pb.ApplyActionsResponse) -> PositionInfo:
    return PositionInfo.from_proto(response.info, tuple(Action.from_proto(a) for a in response.applied))


def _ranking(response: pb.RankMovesResponse) -> Analysis:
    return Analysis.from_proto(response.analysis)


class AdvisorMethods:
    """The service's methods, each described once: what it sends and how its answer is read.

    Every method here is a method of both clients, with the same arguments: on
    :class:`AdvisorClient` it returns the answer (a :class:`Unary` answers its ``_T``) or an
    iterator of them (:class:`Stream`, :class:`Batch`); on :class:`AsyncAdvisorClient` it is
    awaited, or an async iterator. ``timeout`` is the call's deadline in seconds: for a unary
    call None means the client's default, for a stream no deadline.
    """

    @staticmethod
    def list_games(*, timeout: float | None = None) -> Unary[pb.ListGamesResponse, list[GameInfo]]:
        """The games the server plays."""
        return Unary(_LIST_GAMES, pb.ListGamesRequest(), _games, timeout)

    @staticmethod
    def new_game(
        game: str,
        players: int = 0,
        seed: int | None = None,
        variant: str | None = None,
        options: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> Unary[pb.NewGameResponse, PositionInfo]:
        """A new game (``players`` 0 = the game's minimum). With a seed the setup's chance
        events are drawn; without, the position waits at the setup chance node."""
        return Unary(_NEW_GAME, _new_game_request(game, players, seed, variant, options), _new_position, timeout)

    @staticmethod
    def legal_actions(
        position: Position,
        *,
        for_seat: int | None = None,
        picture: bool = False,
        highlight: Sequence[int] = (),
        timeout: float | None = None,
    ) -> Unary[pb.LegalActionsResponse, LegalActions]:
        """Legal decisions (or chance outcomes) with notation. With `for_seat`, only what that
        seat may know: decisions only when it decides; the chance outcomes it can tell apart,
        with their odds given its view; the rest as ``hidden_probability``. ``picture=True``
        adds the SVG of what `for_seat` sees, `highlight` (a hint, then its principal
        variation) marked in it."""
        request = pb.LegalActionsRequest(
            position=position.to_proto(), for_seat=for_seat, picture=picture, highlight=list(highlight)
        )
        return Unary(_LEGAL_ACTIONS, request, LegalActions.from_proto, timeout)

    @staticmethod
    def apply_actions(
        position: Position, actions: Iterable[ActionLike], *, timeout: float | None = None
    ) -> Unary[pb.ApplyActionsResponse, PositionInfo]:
        """Apply actions (ids, notations or Actions; chance outcomes included) in order."""
        request = pb.ApplyActionsRequest(position=position.to_proto(), actions=[_action_ref(a) for a in actions])
        return Unary(_APPLY_ACTIONS, request, _applied, timeout)

    @staticmethod
    def suggest_move(
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
        level: int = 0,
        target_elo: float | None = None,
    ) -> Unary[pb.SuggestMoveResponse, Suggestion]:
        """The decision to play now and the turn it starts. ``iterations`` 0 = the server's
        default (or, with only ``time_ms``, as many as fit in that time). ``level`` 1-8 plays
        at a difficulty level, ``target_elo`` at a rating on the game's Elo scale (level 1 = 0),
        as the TypeScript client's ``suggestMove({level, targetElo})``: then only ``seed`` and
        ``threads`` of the budget are used, and a level with an iteration/time budget (or with a
        target Elo) is an InvalidArgumentError naming the field.

        `continue_from`: the ``Suggestion.continuation`` of this seat's previous decision in
        the same turn (on this client), for exactly the position its move led to: the search
        goes on with that move's subtree, ``iterations`` / ``time_ms`` more (the same threads;
        no allow/avoid; the seed does not steer it). A token continues once;
        ``NotFoundError`` (``field == "continue_from"``) when the server no longer keeps it:
        ask afresh then."""
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(iterations, time_ms, seed, threads, allow, avoid),
            continue_from=continue_from,
            level=level,
            target_elo=target_elo,
        )
        return Unary(_SUGGEST_MOVE, request, Suggestion.from_proto, timeout)

    @staticmethod
    def rank_moves(
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        max_moves: int = 0,
        timeout: float | None = None,
    ) -> Unary[pb.RankMovesResponse, Analysis]:
        """Every searched move, most visited first (the first ``max_moves``; 0 = all)."""
        request = pb.RankMovesRequest(
            position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads, allow, avoid), max_moves=max_moves
        )
        return Unary(_RANK_MOVES, request, _ranking, timeout)

    @staticmethod
    def get_version(*, timeout: float | None = None) -> Unary[pb.GetVersionResponse, VersionInfo]:
        """The server's version, protocol and games."""
        return Unary(_GET_VERSION, pb.GetVersionRequest(), VersionInfo.from_proto, timeout)

    @staticmethod
    def view_position(position: Position, seat: int, *, timeout: float | None = None) -> Unary[pb.ViewPositionResponse, Position]:
        """The position as `seat`'s structured view (``Position.view``, a dictionary)."""

        def structured(response: pb.ViewPositionResponse) -> Position:
            return Position.from_proto(pb.Position(game=position.game, structured=response.structured))

        return Unary(_VIEW_POSITION, pb.ViewPositionRequest(position=position.to_proto(), seat=seat), structured, timeout)

    @staticmethod
    def suggest_level(
        position: Position,
        level: int,
        *,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Unary[pb.SuggestMoveResponse, Suggestion]:
        """The AI's whole turn at difficulty `level` (1-8), seeded. `continue_from` as for
        ``suggest_move`` (the level's budget is added on top of the kept subtree's visits, so
        the level plays stronger within a turn than its measured Elo: opt-in)."""
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(0, 0.0, seed, threads, allow, avoid),
            level=level,
            continue_from=continue_from,
        )
        return Unary(_SUGGEST_MOVE, request, Suggestion.from_proto, timeout)

    @staticmethod
    def suggest_elo(
        position: Position,
        elo: float,
        *,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Unary[pb.SuggestMoveResponse, Suggestion]:
        """The AI's whole turn at a target Elo on the game's scale (level 1 = 0), seeded: the
        budget and temperature are interpolated between the levels around it. `continue_from`
        as for ``suggest_level``."""
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(0, 0.0, seed, threads, allow, avoid),
            target_elo=elo,
            continue_from=continue_from,
        )
        return Unary(_SUGGEST_MOVE, request, Suggestion.from_proto, timeout)

    @staticmethod
    def analyze(
        position: Position,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        interval_ms: int = 100,
        max_moves: int = 0,
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Stream[pb.AnalyzeResponse, AnalysisUpdate]:
        """A streamed analysis: an update every `interval_ms` of search, the last one final.
        Closing the iterator early (``break``) cancels the call, which stops the search.
        ``timeout`` None: no deadline (the search budget bounds the call).

        `continue_from`: an earlier stream's ``AnalysisUpdate.continuation`` (on this client,
        for this position, with the same seed, threads, allow and avoid): its search goes on,
        `iterations` / `time_ms` more, and the updates count every iteration. A token continues
        once; ``NotFoundError`` (``field == "continue_from"``) when the server no longer keeps
        it: analyse afresh then."""
        request = pb.AnalyzeRequest(
            position=position.to_proto(),
            limits=_limits(iterations, time_ms, seed, threads, allow, avoid),
            interval_ms=interval_ms,
            max_moves=max_moves,
            continue_from=continue_from,
        )
        return Stream(_ANALYZE, request, AnalysisUpdate.from_proto, timeout)

    @staticmethod
    def review(
        record: GameRecord,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        timeout: float | None = None,
    ) -> Stream[pb.ReviewGameResponse, ReviewedMove | ReviewSummary]:
        """Review a game record (``ReviewGame``): one :class:`ReviewedMove` per decision, in move
        order, then one :class:`ReviewSummary`. The budget is per decision (``iterations`` 0 =
        the server's default); ``timeout`` is the deadline of the whole review (None = none):
        past it the moves analysed so far arrive, then DeadlineExceededError. A bad record
        raises InvalidArgumentError naming the field (``moves[17].action``) before any search.
        Closing the iterator early cancels the call."""
        request = record.to_proto()
        request.limits.CopyFrom(_limits(iterations, time_ms, seed, threads))
        return Stream(_REVIEW_GAME, request, review_answer, timeout)

    @staticmethod
    def simulate_games(
        game: str,
        games: int,
        *,
        players: Iterable[int] = (),
        level: int = 0,
        seed: int = 0,
        options: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Stream[pb.SimulateGamesResponse, SimulatedGame | SimulationReport]:
        """A balance report (``SimulateGames``, docs/balance.md): `games` seeded self-play games
        per seat count (``players``, each once; none = the game's minimum), every seat played
        at difficulty ``level`` (0 = 4), with the rule ``options``. Yields one
        :class:`SimulatedGame` per finished game (each ``game_id`` once, in completion order,
        ``games_done`` of ``games_total``), then one :class:`SimulationReport`, the same report
        as ``hortus balance`` for the same arguments and seed. The server's caps: all games
        together at most ``max_batch_size``, the level's iterations at most
        ``max_iterations``; a bad argument raises InvalidArgumentError naming the field
        (``players[1]``) before any game is played. ``timeout`` is the deadline of the whole
        call (None = none): past it the games finished so far arrive, then
        DeadlineExceededError, without a report. Closing the iterator early cancels the call,
        which stops the games."""
        request = pb.SimulateGamesRequest(
            game=game, players=list(players), level=level, games=games, seed=seed, options=dict(options or {})
        )
        return Stream(_SIMULATE_GAMES, request, simulation_answer, timeout)

    @staticmethod
    def evaluate(
        positions: Iterable[EvaluationInput],
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        max_moves: int = 0,
        streams: int = 1,
        window: int = 16,
        retries: int = 3,
        timeout: float | None = None,
    ) -> Batch:
        """Evaluate many positions; yields one result per position, in completion order.

        `positions` is any iterable (read lazily, at most `streams` x `window` ahead of the
        answers); the budget arguments are the defaults of items that give none. `streams`
        calls run at once, each on its own connection (so they spread over the processes of
        a ``--workers N`` server and, with round robin, over several servers); a call that
        fails UNAVAILABLE has its unanswered positions re-sent (up to `retries` times each), so
        every position gets exactly one result. ``timeout``: deadline of each call (None =
        none)."""
        defaults = _limits(iterations, time_ms, seed, threads)
        return Batch(positions, defaults, max_moves, max(1, streams), max(1, window), retries, timeout)


# --- a batch: every position answered exactly once -------------------------------------------------
_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE})
_CONNECT_FAILURES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_DONE = object()


def _result(caller_id: str, response: pb.EvaluateResponse) -> EvaluationResult:
    if response.WhichOneof("result") == "analysis":
        return EvaluationResult(caller_id, analysis=Analysis.from_proto(response.analysis))
    error = response.error
    return EvaluationResult(caller_id, error=EvaluationError(error.code, error.message, error.field))


def _over_the_cap(code: grpc.StatusCode, details: str) -> bool:
    """The server's cap on positions per call (``max_batch_size``): go on with a new call."""
    return code == grpc.StatusCode.INVALID_ARGUMENT and "max_batch_size" in details


class _Ledger:
    """What a batch has sent and what it owes: positions are pulled from the caller's iterable
    one at a time and given wire ids; a call that fails hands its unanswered positions back,
    to be re-sent (a re-sent one goes first) or answered with the call's error, so that each
    position is answered exactly once. Not thread-safe: the blocking client holds a lock."""

    def __init__(self, batch: Batch) -> None:
        self._source = iter(batch.positions)
        self._batch = batch
        self._retry: collections.deque[pb.EvaluateRequest] = collections.deque()
        self._ids: dict[str, tuple[str, int]] = {}  # wire id -> (caller id, attempts)
        self._count = 0
        self._exhausted = False
        self.stopped = False
        """The caller left: no more positions are read."""
        self.source_error: BaseException | None = None
        """What reading the caller's iterable raised (re-raised after the answers)."""

    @property
    def finished(self) -> bool:
        """Every position was read and none waits to be re-sent."""
        return self._exhausted and not self._retry

    def take(self) -> pb.EvaluateRequest | None:
        """The next request to send (a re-sent one first); None when there is none."""
        if self._retry:
            return self._retry.popleft()
        if self._exhausted or self.stopped:
            return None
        try:
            item = next(self._source)
            caller_id, request = _evaluate_request(item, self._count, self._batch.defaults, self._batch.max_moves)
        except StopIteration:
            self._exhausted = True
            return None
        except BaseException as exc:  # noqa: BLE001 - re-raised to the caller
            self._exhausted = True
            self.source_error = exc
            return None
        request.id = str(self._count)
        self._ids[request.id] = (caller_id, 0)
        self._count += 1
        return request

    def answer(self, response: pb.EvaluateResponse) -> EvaluationResult:
        caller_id, _ = self._ids.pop(response.id, (response.id, 0))
        return _result(caller_id, response)

    def put_back(self, requests: Iterable[pb.EvaluateRequest]) -> None:
        """Send these again on a new call (not an attempt: the call ended before answering)."""
        self._retry.extend(requests)

    def failed(
        self, requests: Iterable[pb.EvaluateRequest], code: grpc.StatusCode, details: str, retryable: bool
    ) -> list[EvaluationResult]:
        """A call failed with these unanswered: re-send each (if `retryable`, up to the batch's
        retries) or answer it with the error."""
        errors = []
        for request in requests:
            caller_id, attempts = self._ids.get(request.id, (request.id, 0))
            if retryable and attempts < self._batch.retries and not self.stopped:
                self._ids[request.id] = (caller_id, attempts + 1)
                self._retry.append(request)
            else:
                self._ids.pop(request.id, None)
                errors.append(EvaluationResult(caller_id, error=EvaluationError(code.name, details or code.name)))
        return errors


class _BlockingBatch:
    """``evaluate`` on the blocking client: a thread per call, each feeding its call from the
    ledger (at most `window` unanswered) and reading its answers; the caller reads them from a
    bounded queue."""

    def __init__(self, channels: Sequence[grpc.Channel], batch: Batch) -> None:
        self._methods = [
            channel.stream_stream(_EVALUATE_POSITIONS.path, pb.EvaluateRequest.SerializeToString, pb.EvaluateResponse.FromString)
            for channel in channels
        ]
        self._batch = batch
        self._ledger = _Ledger(batch)
        self._lock = threading.Lock()
        self._results: queue.Queue[object] = queue.Queue(maxsize=batch.streams * batch.window + batch.streams)
        self._stop = threading.Event()
        self._calls: list[grpc.RpcContext] = []

    def _put(self, item: object) -> None:
        while not self._stop.is_set():
            try:
                self._results.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _work(self, stream: int) -> None:
        method = self._methods[stream % len(self._methods)]
        ledger = self._ledger
        try:
            while not self._stop.is_set():
                window = threading.Semaphore(self._batch.window)
                inflight: dict[str, pb.EvaluateRequest] = {}
                ended = threading.Event()

                def requests() -> Iterator[pb.EvaluateRequest]:
                    while True:
                        while not window.acquire(timeout=0.1):
                            if ended.is_set() or self._stop.is_set():
                                return
                        with self._lock:  # taken and registered at once: a failing call
                            if ended.is_set():  # re-sends exactly what it had taken
                                return
                            request = ledger.take()
                            if request is None:
                                return
                            inflight[request.id] = request
                        yield request

                call = method(requests(), timeout=self._batch.timeout)
                with self._lock:
                    self._calls.append(call)
                try:
                    for response in call:
                        with self._lock:
                            known = inflight.pop(response.id, None) is not None
                            result = ledger.answer(response) if known else None
                        if result is not None:
                            window.release()
                            self._put(result)
                    with self._lock:
                        ended.set()
                        ledger.put_back(inflight.values())  # (not expected: an early end)
                        inflight.clear()
                except grpc.RpcError as exc:
                    code = exc.code() if callable(getattr(exc, "code", None)) else grpc.StatusCode.UNKNOWN
                    details = exc.details() if callable(getattr(exc, "details", None)) else str(exc)
                    with self._lock:
                        ended.set()
                        leftovers = list(inflight.values())
                        inflight.clear()
                        if _over_the_cap(code, str(details)):
                            ledger.put_back(leftovers)
                            continue
                        errors = ledger.failed(leftovers, code, str(details or ""), code in _RETRYABLE)
                    for error in errors:
                        self._put(error)
                    if code in _RETRYABLE:
                        time.sleep(0.05)
                finally:
                    ended.set()
                    with self._lock:
                        self._calls.remove(call)
                with self._lock:
                    if ledger.finished:
                        return
        finally:
            self._results.put(_DONE)

    def results(self) -> Iterator[EvaluationResult]:
        workers = [
            threading.Thread(target=self._work, args=(i,), daemon=True, name="hortus-evaluate")
            for i in range(self._batch.streams)
        ]
        for w in workers:
            w.start()
        running = len(workers)
        try:
            while running:
                item = self._results.get()
                if item is _DONE:
                    running -= 1
                    continue
                assert isinstance(item, EvaluationResult)
                yield item
            if self._ledger.source_error is not None:
                raise self._ledger.source_error
        finally:
            self._stop.set()
            with self._lock:
                self._ledger.stopped = True
                calls = list(self._calls)
            for call in calls:
                call.cancel()
            while True:  # unblock the workers
                try:
                    self._results.get_nowait()
                except queue.Empty:
                    break


async def _awaited_batch_call(
    method: grpc.aio.StreamStreamMultiCallable[Message, pb.EvaluateResponse],
    ledger: _Ledger,
    batch: Batch,
    results: asyncio.Queue[object],
) -> None:
    """One call of ``evaluate`` on the asyncio client, re-opened until the ledger is finished:
    it writes up to `window` unanswered positions and reads their answers."""
    while True:
        inflight: dict[str, pb.EvaluateRequest] = {}
        call = method(timeout=batch.timeout)
        progress = 0  # answers read on this call
        write_failed = False
        try:
            while True:
                while len(inflight) < batch.window and not write_failed:
                    request = ledger.take()
                    if request is None:
                        break
                    inflight[request.id] = request
                    try:
                        await call.write(request)
                    except grpc.aio.AioRpcError:
                        write_failed = True  # the call is over: read what it still has
                if not inflight:
                    await call.done_writing()
                    while await call.read() is not grpc.aio.EOF:  # the call's end (and status)
                        pass
                    break
                response = await call.read()
                if response is grpc.aio.EOF:
                    break
                assert isinstance(response, pb.EvaluateResponse)
                if inflight.pop(response.id, None) is not None:
                    progress += 1
                    await results.put(ledger.answer(response))
            ledger.put_back(inflight.values())  # (not expected: the call ended early)
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
            # a write racing the call's end sees only a generic error: after answers, that is
            # the server's cap per call too
            if _over_the_cap(code, details) or (write_failed and progress > 0):
                ledger.put_back(inflight.values())
                continue
            for error in ledger.failed(inflight.values(), code, details, code in _RETRYABLE or write_failed):
                await results.put(error)
            if code in _RETRYABLE:
                await asyncio.sleep(0.05)
        finally:
            call.cancel()
        if ledger.finished:
            return


# --- TLS: a refused handshake said as such ---------------------------------------------------------
class _TlsWatch:
    """gRPC reports a refused TLS handshake only as an unreachable server ("Socket closed"),
    and with wait-for-ready waits for it until the deadline. Until a first call succeeds, a
    connection failure is checked with a direct handshake (``TlsConfig.handshake_problem``)
    and, if that is the cause, raised as UNAVAILABLE saying what is wrong."""

    def __init__(self, tls: TlsConfig, target: str, wait_for_ready: bool) -> None:
        self._tls = tls
        self._address = target.split(":///", 1)[-1].split(",", 1)[0]  # the (first) server
        self.wait_for_ready = wait_for_ready
        self.verified = False
        """A call got through: a failure is no longer the handshake's."""

    def problem(self) -> AdvisorError | None:
        """The handshake's problem with the (first) server, as the error to raise, if any
        (blocking: it connects)."""
        problem = self._tls.handshake_problem(self._address)
        return None if problem is None else UnavailableError(grpc.StatusCode.UNAVAILABLE, f"TLS: {problem}")

    def suspects(self, error: AdvisorError) -> bool:
        """Whether a failed call may have failed in the handshake: no call got through yet and
        it could not connect."""
        return not self.verified and error.code in _CONNECT_FAILURES

    def precheck(self, deadline: float | None) -> float | None:
        """With wait-for-ready, before the first call: how long to wait for the channel to
        connect (a second at most) before trying the handshake directly; None: no check."""
        if not self.wait_for_ready or self.verified:
            return None
        return min(1.0, deadline or 1.0)


# --- the two shells ----------------------------------------------------------------------------------
def _method_of(describe: Callable[..., object], method: Callable[..., object], owner: str, answers: str) -> None:
    """Name a client method after its description, with its signature and docstring;
    `answers` formats what it returns from what the description's call answers."""
    functools.update_wrapper(method, describe, assigned=("__module__", "__name__", "__doc__"))
    method.__qualname__ = f"{owner}.{describe.__name__}"
    signature = inspect.signature(describe)
    described = str(signature.return_annotation)  # "Unary[pb.SuggestMoveResponse, Suggestion]"
    answer = described.partition(",")[2].removesuffix("]").strip() or "EvaluationResult"
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *signature.parameters.values()]
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=answers.format(answer)
    )


def _blocking(describe: Callable[_P, Unary[Any, _T]]) -> Callable[Concatenate[AdvisorClient, _P], _T]:
    def method(self: AdvisorClient, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return self._unary(describe(*args, **kwargs))

    _method_of(describe, method, "AdvisorClient", "{}")
    return method


def _iterating(describe: Callable[_P, Stream[Any, _T]]) -> Callable[Concatenate[AdvisorClient, _P], Iterator[_T]]:
    def method(self: AdvisorClient, /, *args: _P.args, **kwargs: _P.kwargs) -> Iterator[_T]:
        return self._stream(lambda: describe(*args, **kwargs))  # described when first read

    _method_of(describe, method, "AdvisorClient", "Iterator[{}]")
    return method


def _batching(describe: Callable[_P, Batch]) -> Callable[Concatenate[AdvisorClient, _P], Iterator[EvaluationResult]]:
    def method(self: AdvisorClient, /, *args: _P.args, **kwargs: _P.kwargs) -> Iterator[EvaluationResult]:
        return self._batch(lambda: describe(*args, **kwargs))

    _method_of(describe, method, "AdvisorClient", "Iterator[{}]")
    return method


def _awaited(
    describe: Callable[_P, Unary[Any, _T]],
) -> Callable[Concatenate[AsyncAdvisorClient, _P], Coroutine[Any, Any, _T]]:
    async def method(self: AsyncAdvisorClient, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return await self._unary(describe(*args, **kwargs))

    _method_of(describe, method, "AsyncAdvisorClient", "{}")
    return method


def _async_iterating(
    describe: Callable[_P, Stream[Any, _T]],
) -> Callable[Concatenate[AsyncAdvisorClient, _P], AsyncIterator[_T]]:
    def method(self: AsyncAdvisorClient, /, *args: _P.args, **kwargs: _P.kwargs) -> AsyncIterator[_T]:
        return self._stream(lambda: describe(*args, **kwargs))

    _method_of(describe, method, "AsyncAdvisorClient", "AsyncIterator[{}]")
    return method


def _async_batching(
    describe: Callable[_P, Batch],
) -> Callable[Concatenate[AsyncAdvisorClient, _P], AsyncIterator[EvaluationResult]]:
    def method(self: AsyncAdvisorClient, /, *args: _P.args, **kwargs: _P.kwargs) -> AsyncIterator[EvaluationResult]:
        return self._batch(lambda: describe(*args, **kwargs))

    _method_of(describe, method, "AsyncAdvisorClient", "AsyncIterator[{}]")
    return method


class AdvisorClient:
    """A blocking client. ``timeout`` (seconds) is the default deadline of every unary call
    (None: no deadline); each method also takes ``timeout=`` for that call. A search answers
    before its deadline with what it has (``Analysis.partial``) rather than failing.

    ``target`` is one gRPC target or a list of ``host:port`` addresses, spread over with
    client-side round robin. Calls are retried on UNAVAILABLE (``retries`` attempts, via the
    service config); ``wait_for_ready`` makes calls wait for a server instead of failing fast;
    ``tls`` turns on TLS (and mutual TLS with a client key and certificate).

    Its methods are those of :class:`AdvisorMethods`, answered (streams as iterators; closing
    one early cancels its call). Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        target: Targets = DEFAULT_TARGET,
        timeout: float | None = DEFAULT_TIMEOUT,
        *,
        channel: grpc.Channel | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        tls: TlsConfig | None = None,
        retries: int = 4,
        wait_for_ready: bool = False,
    ) -> None:
        self.target = channel_target(target)
        self.timeout = timeout
        self._own_channel = channel is None
        options = _channel_options(max_message_bytes, retries, tls, wait_for_ready)
        self._tls = _TlsWatch(tls, self.target, wait_for_ready) if tls is not None and channel is None else None

        def make_channel(own_connection: bool = False) -> grpc.Channel:
            extra: list[tuple[str, int | str]] = [("grpc.use_local_subchannel_pool", 1)] if own_connection else []
            if tls is not None:
                return grpc.secure_channel(self.target, tls.credentials(), options=options + extra)
            return grpc.insecure_channel(self.target, options=options + extra)

        self._make_channel: Callable[[bool], grpc.Channel] | None = None if channel is not None else make_channel
        self._channel = channel if channel is not None else make_channel(False)
        self._unary_stubs: dict[str, grpc.UnaryUnaryMultiCallable[Any, Any]] = {}

    def _unary(self, call: Unary[Any, _T]) -> _T:
        deadline = self.timeout if call.timeout is None else call.timeout
        tls = self._tls
        wait = tls.precheck(deadline) if tls is not None else None
        if tls is not None and wait is not None:
            try:
                grpc.channel_ready_future(self._channel).result(timeout=wait)
                tls.verified = True
            except grpc.FutureTimeoutError:
                problem = tls.problem()
                if problem is not None:
                    raise problem from None
        method = call.method
        stub = self._unary_stubs.get(method.path)
        if stub is None:
            stub = self._channel.unary_unary(method.path, method.request.SerializeToString, method.response.FromString)
            self._unary_stubs[method.path] = stub
        try:
            response = stub(call.request, timeout=deadline)
        except grpc.RpcError as exc:
            error = error_from_rpc(exc)
            if tls is not None and tls.suspects(error):
                error = tls.problem() or error
            raise error from None
        if tls is not None:
            tls.verified = True
        return call.answer(response)

    def _stream(self, describe: Callable[[], Stream[Any, _T]]) -> Iterator[_T]:
        stream = describe()
        method = stream.method
        stub = self._channel.unary_stream(method.path, method.request.SerializeToString, method.response.FromString)
        call = stub(stream.request, timeout=stream.timeout)
        try:
            for response in call:
                yield stream.answer(response)
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from None
        finally:
            call.cancel()

    def _batch(self, describe: Callable[[], Batch]) -> Iterator[EvaluationResult]:
        batch = describe()
        own: list[grpc.Channel] = []
        if batch.streams > 1 and self._make_channel is not None:
            own = [self._make_channel(True) for _ in range(batch.streams)]
        try:
            yield from _BlockingBatch(own or [self._channel], batch).results()
        finally:
            for channel in own:
                channel.close()

    def close(self) -> None:
        """Close the channel (if this client created it)."""
        if self._own_channel:
            self._channel.close()

    def __enter__(self) -> AdvisorClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    list_games = _blocking(AdvisorMethods.list_games)
    new_game = _blocking(AdvisorMethods.new_game)
    legal_actions = _blocking(AdvisorMethods.legal_actions)
    apply_actions = _blocking(AdvisorMethods.apply_actions)
    suggest_move = _blocking(AdvisorMethods.suggest_move)
    rank_moves = _blocking(AdvisorMethods.rank_moves)
    get_version = _blocking(AdvisorMethods.get_version)
    view_position = _blocking(AdvisorMethods.view_position)
    suggest_level = _blocking(AdvisorMethods.suggest_level)
    suggest_elo = _blocking(AdvisorMethods.suggest_elo)
    analyze = _iterating(AdvisorMethods.analyze)
    review = _iterating(AdvisorMethods.review)
    simulate_games = _iterating(AdvisorMethods.simulate_games)
    evaluate = _batching(AdvisorMethods.evaluate)


class AsyncAdvisorClient:
    """The asyncio twin of :class:`AdvisorClient` (``grpc.aio``): the same arguments, the same
    methods (those of :class:`AdvisorMethods`) awaited, streams as async iterators.

    Create it inside a running event loop; use ``async with`` or await :meth:`close`.
    """

    def __init__(
        self,
        target: Targets = DEFAULT_TARGET,
        timeout: float | None = DEFAULT_TIMEOUT,
        *,
        channel: grpc.aio.Channel | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        tls: TlsConfig | None = None,
        retries: int = 4,
        wait_for_ready: bool = False,
    ) -> None:
        self.target = channel_target(target)
        self.timeout = timeout
        self._own_channel = channel is None
        options = _channel_options(max_message_bytes, retries, tls, wait_for_ready)
        self._tls = _TlsWatch(tls, self.target, wait_for_ready) if tls is not None and channel is None else None

        def make_channel(own_connection: bool = False) -> grpc.aio.Channel:
            extra: list[tuple[str, int | str]] = [("grpc.use_local_subchannel_pool", 1)] if own_connection else []
            if tls is not None:
                return grpc.aio.secure_channel(self.target, tls.credentials(), options=options + extra)
            return grpc.aio.insecure_channel(self.target, options=options + extra)

        self._make_channel: Callable[[bool], grpc.aio.Channel] | None = None if channel is not None else make_channel
        self._channel = channel if channel is not None else make_channel(False)
        self._unary_stubs: dict[str, grpc.aio.UnaryUnaryMultiCallable[Any, Any]] = {}

    async def _unary(self, call: Unary[Any, _T]) -> _T:
        deadline = self.timeout if call.timeout is None else call.timeout
        tls = self._tls
        wait = tls.precheck(deadline) if tls is not None else None
        if tls is not None and wait is not None:
            try:
                await asyncio.wait_for(self._channel.channel_ready(), wait)
                tls.verified = True
            except asyncio.TimeoutError:
                problem = await asyncio.to_thread(tls.problem)
                if problem is not None:
                    raise problem from None
        method = call.method
        stub = self._unary_stubs.get(method.path)
        if stub is None:
            stub = self._channel.unary_unary(method.path, method.request.SerializeToString, method.response.FromString)
            self._unary_stubs[method.path] = stub
        try:
            response = await stub(call.request, timeout=deadline)
        except grpc.aio.AioRpcError as exc:
            error = error_from_rpc(exc)
            if tls is not None and tls.suspects(error):
                problem = await asyncio.to_thread(tls.problem)
                error = problem or error
            raise error from None
        if tls is not None:
            tls.verified = True
        return call.answer(response)

    async def _stream(self, describe: Callable[[], Stream[Any, _T]]) -> AsyncIterator[_T]:
        stream = describe()
        method = stream.method
        stub = self._channel.unary_stream(method.path, method.request.SerializeToString, method.response.FromString)
        call = stub(stream.request, timeout=stream.timeout)
        try:
            async for response in call:
                yield stream.answer(response)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc) from None
        finally:
            call.cancel()

    async def _batch(self, describe: Callable[[], Batch]) -> AsyncIterator[EvaluationResult]:
        batch = describe()
        own: list[grpc.aio.Channel] = []
        if batch.streams > 1 and self._make_channel is not None:
            own = [self._make_channel(True) for _ in range(batch.streams)]
        methods = [
            channel.stream_stream(_EVALUATE_POSITIONS.path, pb.EvaluateRequest.SerializeToString, pb.EvaluateResponse.FromString)
            for channel in own or [self._channel]
        ]
        ledger = _Ledger(batch)
        results: asyncio.Queue[object] = asyncio.Queue(maxsize=batch.streams * batch.window + batch.streams)

        async def work(stream: int) -> None:
            try:
                await _awaited_batch_call(methods[stream % len(methods)], ledger, batch, results)
            except Exception as exc:  # noqa: BLE001 - raised to the caller
                if not ledger.stopped:
                    await results.put(exc)
            finally:
                if not ledger.stopped:  # (a worker cancelled as the caller left puts nothing)
                    await results.put(_DONE)

        workers = [asyncio.ensure_future(work(i)) for i in range(batch.streams)]
        running = len(workers)
        try:
            while running:
                item = await results.get()
                if item is _DONE:
                    running -= 1
                    continue
                if isinstance(item, Exception):
                    raise item
                assert isinstance(item, EvaluationResult)
                yield item
            if ledger.source_error is not None:
                raise ledger.source_error
        finally:
            ledger.stopped = True
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            for channel in own:
                await channel.close()

    async def close(self) -> None:
        """Close the channel (if this client created it)."""
        if self._own_channel:
            await self._channel.close()

    async def __aenter__(self) -> AsyncAdvisorClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    list_games = _awaited(AdvisorMethods.list_games)
    new_game = _awaited(AdvisorMethods.new_game)
    legal_actions = _awaited(AdvisorMethods.legal_actions)
    apply_actions = _awaited(AdvisorMethods.apply_actions)
    suggest_move = _awaited(AdvisorMethods.suggest_move)
    rank_moves = _awaited(AdvisorMethods.rank_moves)
    get_version = _awaited(AdvisorMethods.get_version)
    view_position = _awaited(AdvisorMethods.view_position)
    suggest_level = _awaited(AdvisorMethods.suggest_level)
    suggest_elo = _awaited(AdvisorMethods.suggest_elo)
    analyze = _async_iterating(AdvisorMethods.analyze)
    review = _async_iterating(AdvisorMethods.review)
    simulate_games = _async_iterating(AdvisorMethods.simulate_games)
    evaluate = _async_batching(AdvisorMethods.evaluate)
