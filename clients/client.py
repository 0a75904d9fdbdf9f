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

import collections
import ipaddress
import json
import queue
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

import grpc
import grpc.aio

from hortus.clients.errors import UnavailableError, error_from_rpc
from hortus.clients.record import GameRecord, ReviewedMove, ReviewSummary, review_answer
from hortus.clients.types import (
    Action,
    Analysis,
    ChanceDraw,
    AnalysisUpdate,
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

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


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


def _result(caller_id: str, response: pb.EvaluateResponse) -> EvaluationResult:
    if response.WhichOneof("result") == "analysis":
        return EvaluationResult(caller_id, analysis=Analysis.from_proto(response.analysis))
    error = response.error
    return EvaluationResult(caller_id, error=EvaluationError(error.code, error.message, error.field))


_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE})
_CONNECT_FAILURES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_DONE = object()


class _Batch:
    """The client side of ``evaluate``: `streams` calls pull positions from one shared source,
    at most `window` unanswered per call; a call that fails UNAVAILABLE (a server went away)
    puts its unanswered positions back for another call, so each is answered exactly once."""

    def __init__(
        self,
        channels: Sequence[grpc.Channel],
        items: Iterable[EvaluationInput],
        defaults: pb.SearchLimits,
        max_moves: int,
        streams: int,
        window: int,
        timeout: float | None,
        retries: int,
    ) -> None:
        self._methods = [
            channel.stream_stream(
                _path("EvaluatePositions"), pb.EvaluateRequest.SerializeToString, pb.EvaluateResponse.FromString
            )
            for channel in channels
        ]
        self._source = iter(items)
        self._defaults = defaults
        self._max_moves = max_moves
        self._streams = max(1, streams)
        self._window = max(1, window)
        self._timeout = timeout
        self._retries = retries
        self._lock = threading.Lock()
        self._retry: collections.deque[pb.EvaluateRequest] = collections.deque()
        self._ids: dict[str, tuple[str, int]] = {}  # wire id -> (caller id, attempts)
        self._count = 0
        self._exhausted = False
        self._source_error: BaseException | None = None
        self._results: queue.Queue[object] = queue.Queue(maxsize=self._streams * self._window + self._streams)
        self._stop = threading.Event()
        self._calls: list[grpc.RpcContext] = []

    def _next(self) -> pb.EvaluateRequest | None:
        """The next request to send (a re-sent one first); call with ``_lock`` held."""
        if self._retry:
            return self._retry.popleft()
        if self._exhausted or self._stop.is_set():
            return None
        try:
            item = next(self._source)
            caller_id, request = _evaluate_request(item, self._count, self._defaults, self._max_moves)
        except StopIteration:
            self._exhausted = True
            return None
        except BaseException as exc:  # noqa: BLE001 - re-raised to the caller
            self._exhausted = True
            self._source_error = exc
            return None
        request.id = str(self._count)
        self._ids[request.id] = (caller_id, 0)
        self._count += 1
        return request

    def _put(self, item: object) -> None:
        while not self._stop.is_set():
            try:
                self._results.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _answer(self, wire_id: str, response: pb.EvaluateResponse | None, error: EvaluationError | None) -> None:
        with self._lock:
            caller_id, _ = self._ids.pop(wire_id, (wire_id, 0))
        if response is not None:
            self._put(_result(caller_id, response))
        else:
            self._put(EvaluationResult(caller_id, error=error))

    def _work(self, stream: int) -> None:
        method = self._methods[stream % len(self._methods)]
        try:
            while not self._stop.is_set():
                window = threading.Semaphore(self._window)
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
                            request = self._next()
                            if request is None:
                                return
                            inflight[request.id] = request
                        yield request

                call = method(requests(), timeout=self._timeout)
                with self._lock:
                    self._calls.append(call)
                try:
                    for response in call:
                        with self._lock:
                            known = inflight.pop(response.id, None) is not None
                        if known:
                            window.release()
                            self._answer(response.id, response, None)
                    with self._lock:
                        ended.set()
                        self._retry.extend(inflight.values())  # (not expected: an early end)
                        inflight.clear()
                except grpc.RpcError as exc:
                    code = exc.code() if callable(getattr(exc, "code", None)) else grpc.StatusCode.UNKNOWN
                    with self._lock:
                        ended.set()
                        leftovers = list(inflight.values())
                        inflight.clear()
                    details = exc.details() if callable(getattr(exc, "details", None)) else str(exc)
                    if code == grpc.StatusCode.INVALID_ARGUMENT and "max_batch_size" in str(details):
                        # the server's cap on positions per call: go on with a new call
                        with self._lock:
                            self._retry.extend(leftovers)
                        continue
                    for request in leftovers:
                        caller_id, attempts = self._ids.get(request.id, (request.id, 0))
                        if code in _RETRYABLE and attempts < self._retries and not self._stop.is_set():
                            with self._lock:
                                self._ids[request.id] = (caller_id, attempts + 1)
                                self._retry.append(request)
                        else:
                            self._answer(request.id, None, EvaluationError(code.name, str(details or code.name)))
                    if code in _RETRYABLE:
                        time.sleep(0.05)
                finally:
                    ended.set()
                    with self._lock:
                        self._calls.remove(call)
                with self._lock:
                    if self._exhausted and not self._retry:
                        return
        finally:
            self._results.put(_DONE)

    def results(self) -> Iterator[EvaluationResult]:
        workers = [
            threading.Thread(target=self._work, args=(i,), daemon=True, name="hortus-evaluate") for i in range(self._streams)
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
            if self._source_error is not None:
                raise self._source_error
        finally:
            self._stop.set()
            with self._lock:
                calls = list(self._calls)
            for call in calls:
                call.cancel()
            while True:  # unblock the workers
                try:
                    self._results.get_nowait()
                except queue.Empty:
                    break


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
    """A blocking client. ``timeout`` (seconds) is the default deadline of every unary call
    (None: no deadline); each method also takes ``timeout=`` for that call. A search answers
    before its deadline with what it has (``Analysis.partial``) rather than failing.

    ``target`` is one gRPC target or a list of ``host:port`` addresses, spread over with
    client-side round robin. Calls are retried on UNAVAILABLE (``retries`` attempts, via the
    service config); ``wait_for_ready`` makes calls wait for a server instead of failing fast;
    ``tls`` turns on TLS (and mutual TLS with a client key and certificate).

    Use as a context manager, or call :meth:`close`.
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
        self._tls = tls if channel is None else None
        self._wait_for_ready = wait_for_ready
        self._tls_verified = False  # a connection was made: a failure is not the handshake's

        def make_channel(own_connection: bool = False) -> grpc.Channel:
            extra: list[tuple[str, int | str]] = [("grpc.use_local_subchannel_pool", 1)] if own_connection else []
            if tls is not None:
                return grpc.secure_channel(self.target, tls.credentials(), options=options + extra)
            return grpc.insecure_channel(self.target, options=options + extra)

        self._make_channel: Callable[[bool], grpc.Channel] | None = None if channel is not None else make_channel
        self._channel = channel if channel is not None else make_channel(False)
        path = _path
        ch = self._channel
        self._list_games = ch.unary_unary(
            path("ListGames"), pb.ListGamesRequest.SerializeToString, pb.ListGamesResponse.FromString
        )
        self._new_game = ch.unary_unary(path("NewGame"), pb.NewGameRequest.SerializeToString, pb.NewGameResponse.FromString)
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
        self._analyze = ch.unary_stream(path("Analyze"), pb.AnalyzeRequest.SerializeToString, pb.AnalyzeResponse.FromString)
        self._review_game = ch.unary_stream(
            path("ReviewGame"), pb.ReviewGameRequest.SerializeToString, pb.ReviewGameResponse.FromString
        )
        self._view_position = ch.unary_unary(
            path("ViewPosition"), pb.ViewPositionRequest.SerializeToString, pb.ViewPositionResponse.FromString
        )

    # --- plumbing ------------------------------------------------------------------------
    def _call(self, method: grpc.UnaryUnaryMultiCallable[_Req, _Resp], request: _Req, timeout: float | None) -> _Resp:
        deadline = self.timeout if timeout is None else timeout
        if self._tls is not None and self._wait_for_ready and not self._tls_verified:
            self._check_tls(deadline)
        try:
            response = method(request, timeout=deadline)
        except grpc.RpcError as exc:
            error = error_from_rpc(exc)
            if self._tls is not None and not self._tls_verified and error.code in _CONNECT_FAILURES:
                problem = self._tls_problem()
                if problem is not None:
                    raise UnavailableError(grpc.StatusCode.UNAVAILABLE, f"TLS: {problem}") from None
            raise error from None
        self._tls_verified = True
        return response

    def _tls_problem(self) -> str | None:
        """What is wrong with the TLS handshake with the (first) server, if anything."""
        assert self._tls is not None
        address = self.target.split(":///", 1)[-1].split(",", 1)[0]
        return self._tls.handshake_problem(address)

    def _check_tls(self, deadline: float | None) -> None:
        """Wait-for-ready over TLS: a server that refuses the handshake (no client certificate
        for mutual TLS, say) looks to gRPC like one that is not up yet, and the call would wait
        until its deadline. Unless the channel connects within a second, try the handshake
        directly and fail at once, saying what is wrong, if it is refused."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=min(1.0, deadline or 1.0))
        except grpc.FutureTimeoutError:
            problem = self._tls_problem()
            if problem is not None:
                raise UnavailableError(grpc.StatusCode.UNAVAILABLE, f"TLS: {problem}") from None
            return
        self._tls_verified = True

    def close(self) -> None:
        """Close the channel (if this client created it)."""
        if self._own_channel:
            self._channel.close()

    def __enter__(self) -> "AdvisorClient":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
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

    def legal_actions(
        self,
        position: Position,
        *,
        for_seat: int | None = None,
        picture: bool = False,
        highlight: Sequence[int] = (),
        timeout: float | None = None,
    ) -> LegalActions:
        """Legal decisions (or chance outcomes) with notation. With `for_seat`, only what that
        seat may know: decisions only when it decides; the chance outcomes it can tell apart,
        with their odds given its view; the rest as ``hidden_probability``. ``picture=True``
        adds the SVG of what `for_seat` sees, `highlight` (a hint, then its principal
        variation) marked in it."""
        request = pb.LegalActionsRequest(
            position=position.to_proto(), for_seat=for_seat, picture=picture, highlight=list(highlight)
        )
        return LegalActions.from_proto(self._call(self._legal_actions, request, timeout))

    def apply_actions(self, position: Position, actions: Iterable[ActionLike], *, timeout: float | None = None) -> PositionInfo:
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
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
        level: int = 0,
        target_elo: float | None = None,
    ) -> Suggestion:
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
        return Suggestion.from_proto(self._call(self._suggest_move, request, timeout))

    def rank_moves(
        self,
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
    ) -> Analysis:
        """Every searched move, most visited first (the first ``max_moves``; 0 = all)."""
        request = pb.RankMovesRequest(
            position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads, allow, avoid), max_moves=max_moves
        )
        return Analysis.from_proto(self._call(self._rank_moves, request, timeout).analysis)

    def get_version(self, *, timeout: float | None = None) -> VersionInfo:
        """The server's version, protocol and games."""
        return VersionInfo.from_proto(self._call(self._get_version, pb.GetVersionRequest(), timeout))

    def view_position(self, position: Position, seat: int, *, timeout: float | None = None) -> Position:
        """The position as `seat`'s structured view (``Position.view``, a dictionary)."""
        request = pb.ViewPositionRequest(position=position.to_proto(), seat=seat)
        structured = self._call(self._view_position, request, timeout).structured
        return Position.from_proto(pb.Position(game=position.game, structured=structured))

    def suggest_level(
        self,
        position: Position,
        level: int,
        *,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Suggestion:
        """The AI's whole turn at difficulty `level` (1-8), seeded. `continue_from` as for
        ``suggest_move`` (the level's budget is added on top of the kept subtree's visits, so
        the level plays stronger within a turn than its measured Elo: opt-in)."""
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(0, 0.0, seed, threads, allow, avoid),
            level=level,
            continue_from=continue_from,
        )
        return Suggestion.from_proto(self._call(self._suggest_move, request, timeout))

    def suggest_elo(
        self,
        position: Position,
        elo: float,
        *,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Suggestion:
        """The AI's whole turn at a target Elo on the game's scale (level 1 = 0), seeded: the
        budget and temperature are interpolated between the levels around it. `continue_from`
        as for ``suggest_level``."""
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(0, 0.0, seed, threads, allow, avoid),
            target_elo=elo,
            continue_from=continue_from,
        )
        return Suggestion.from_proto(self._call(self._suggest_move, request, timeout))

    def analyze(
        self,
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
    ) -> Iterator[AnalysisUpdate]:
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
        call = self._analyze(request, timeout=timeout)
        try:
            for response in call:
                yield AnalysisUpdate.from_proto(response)
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from None
        finally:
            call.cancel()

    def review(
        self,
        record: GameRecord,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        timeout: float | None = None,
    ) -> Iterator[ReviewedMove | ReviewSummary]:
        """Review a game record (``ReviewGame``): one :class:`ReviewedMove` per decision, in move
        order, then one :class:`ReviewSummary`. The budget is per decision (``iterations`` 0 =
        the server's default); ``timeout`` is the deadline of the whole review (None = none):
        past it the moves analysed so far arrive, then DeadlineExceededError. A bad record
        raises InvalidArgumentError naming the field (``moves[17].action``) before any search.
        Closing the iterator early cancels the call."""
        request = record.to_proto()
        request.limits.CopyFrom(_limits(iterations, time_ms, seed, threads))
        call = self._review_game(request, timeout=timeout)
        try:
            for response in call:
                yield review_answer(response)
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from None
        finally:
            call.cancel()

    def evaluate(
        self,
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
    ) -> Iterator[EvaluationResult]:
        """Evaluate many positions; yields one result per position, in completion order.

        `positions` is any iterable (read lazily, at most `streams` x `window` ahead of the
        answers); the budget arguments are the defaults of items that give none. `streams`
        calls run at once, each on its own connection (so they spread over the processes of
        a ``--workers N`` server and, with round robin, over several servers); a call that
        fails UNAVAILABLE has its unanswered positions re-sent (up to `retries` times each), so
        every position gets exactly one result. ``timeout``: deadline of each call (None =
        none)."""
        streams = max(1, streams)
        own: list[grpc.Channel] = []
        if streams > 1 and self._make_channel is not None:
            own = [self._make_channel(True) for _ in range(streams)]
        batch = _Batch(
            own or [self._channel],
            positions,
            _limits(iterations, time_ms, seed, threads),
            max_moves,
            streams,
            window,
            timeout,
            retries,
        )
        try:
            yield from batch.results()
        finally:
            for channel in own:
                channel.close()


class AsyncAdvisorClient:
    """The asyncio twin of :class:`AdvisorClient` (``grpc.aio``): the same methods, awaited.

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
        if channel is not None:
            self._channel = channel
        elif tls is not None:
            self._channel = grpc.aio.secure_channel(self.target, tls.credentials(), options=options)
        else:
            self._channel = grpc.aio.insecure_channel(self.target, options=options)
        path = _path
        ch = self._channel
        self._list_games = ch.unary_unary(
            path("ListGames"), pb.ListGamesRequest.SerializeToString, pb.ListGamesResponse.FromString
        )
        self._new_game = ch.unary_unary(path("NewGame"), pb.NewGameRequest.SerializeToString, pb.NewGameResponse.FromString)
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
        self._analyze = ch.unary_stream(path("Analyze"), pb.AnalyzeRequest.SerializeToString, pb.AnalyzeResponse.FromString)
        self._review_game = ch.unary_stream(
            path("ReviewGame"), pb.ReviewGameRequest.SerializeToString, pb.ReviewGameResponse.FromString
        )
        self._view_position = ch.unary_unary(
            path("ViewPosition"), pb.ViewPositionRequest.SerializeToString, pb.ViewPositionResponse.FromString
        )
        self._evaluate = ch.stream_stream(
            path("EvaluatePositions"), pb.EvaluateRequest.SerializeToString, pb.EvaluateResponse.FromString
        )

    async def _call(self, method: grpc.aio.UnaryUnaryMultiCallable[_Req, _Resp], request: _Req, timeout: float | None) -> _Resp:
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

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
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

    async def legal_actions(
        self,
        position: Position,
        *,
        for_seat: int | None = None,
        picture: bool = False,
        highlight: Sequence[int] = (),
        timeout: float | None = None,
    ) -> LegalActions:
        request = pb.LegalActionsRequest(
            position=position.to_proto(), for_seat=for_seat, picture=picture, highlight=list(highlight)
        )
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
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
        level: int = 0,
        target_elo: float | None = None,
    ) -> Suggestion:
        """See ``AdvisorClient.suggest_move`` (`continue_from` included)."""
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(iterations, time_ms, seed, threads, allow, avoid),
            continue_from=continue_from,
            level=level,
            target_elo=target_elo,
        )
        return Suggestion.from_proto(await self._call(self._suggest_move, request, timeout))

    async def rank_moves(
        self,
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
    ) -> Analysis:
        request = pb.RankMovesRequest(
            position=position.to_proto(), limits=_limits(iterations, time_ms, seed, threads, allow, avoid), max_moves=max_moves
        )
        return Analysis.from_proto((await self._call(self._rank_moves, request, timeout)).analysis)

    async def get_version(self, *, timeout: float | None = None) -> VersionInfo:
        return VersionInfo.from_proto(await self._call(self._get_version, pb.GetVersionRequest(), timeout))

    async def view_position(self, position: Position, seat: int, *, timeout: float | None = None) -> Position:
        request = pb.ViewPositionRequest(position=position.to_proto(), seat=seat)
        structured = (await self._call(self._view_position, request, timeout)).structured
        return Position.from_proto(pb.Position(game=position.game, structured=structured))

    async def suggest_level(
        self,
        position: Position,
        level: int,
        *,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Suggestion:
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(0, 0.0, seed, threads, allow, avoid),
            level=level,
            continue_from=continue_from,
        )
        return Suggestion.from_proto(await self._call(self._suggest_move, request, timeout))

    async def suggest_elo(
        self,
        position: Position,
        elo: float,
        *,
        seed: int = 0,
        threads: int = 0,
        allow: Iterable[ActionLike] = (),
        avoid: Iterable[ActionLike] = (),
        timeout: float | None = None,
        continue_from: str = "",
    ) -> Suggestion:
        request = pb.SuggestMoveRequest(
            position=position.to_proto(),
            limits=_limits(0, 0.0, seed, threads, allow, avoid),
            target_elo=elo,
            continue_from=continue_from,
        )
        return Suggestion.from_proto(await self._call(self._suggest_move, request, timeout))

    async def analyze(
        self,
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
    ) -> AsyncIterator[AnalysisUpdate]:
        """A streamed analysis as an async iterator (see ``AdvisorClient.analyze``)."""
        request = pb.AnalyzeRequest(
            position=position.to_proto(),
            limits=_limits(iterations, time_ms, seed, threads, allow, avoid),
            interval_ms=interval_ms,
            max_moves=max_moves,
            continue_from=continue_from,
        )
        call = self._analyze(request, timeout=timeout)
        try:
            async for response in call:
                yield AnalysisUpdate.from_proto(response)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc) from None
        finally:
            call.cancel()

    async def review(
        self,
        record: GameRecord,
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        timeout: float | None = None,
    ) -> AsyncIterator[ReviewedMove | ReviewSummary]:
        """A game review as an async iterator (see ``AdvisorClient.review``)."""
        request = record.to_proto()
        request.limits.CopyFrom(_limits(iterations, time_ms, seed, threads))
        call = self._review_game(request, timeout=timeout)
        try:
            async for response in call:
                yield review_answer(response)
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc) from None
        finally:
            call.cancel()

    async def evaluate(
        self,
        positions: Iterable[EvaluationInput],
        *,
        iterations: int = 0,
        time_ms: float = 0.0,
        seed: int = 0,
        threads: int = 0,
        max_moves: int = 0,
        window: int = 16,
        retries: int = 3,
        timeout: float | None = None,
    ) -> AsyncIterator[EvaluationResult]:
        """Evaluate many positions on one stream (re-opened, with the unanswered positions, if
        it fails UNAVAILABLE); yields one result per position, in completion order."""
        defaults = _limits(iterations, time_ms, seed, threads)
        source = iter(positions)
        pending: collections.deque[pb.EvaluateRequest] = collections.deque()
        ids: dict[str, tuple[str, int]] = {}
        count = 0
        exhausted = False
        while True:
            inflight: dict[str, pb.EvaluateRequest] = {}
            call = self._evaluate(timeout=timeout)
            progress = 0  # answers read on this call
            write_failed = False
            try:
                while True:
                    while len(inflight) < window and not write_failed:
                        if pending:
                            request = pending.popleft()
                        elif not exhausted:
                            try:
                                item = next(source)
                            except StopIteration:
                                exhausted = True
                                continue
                            caller_id, request = _evaluate_request(item, count, defaults, max_moves)
                            request.id = str(count)
                            ids[request.id] = (caller_id, 0)
                            count += 1
                        else:
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
                        caller_id, _ = ids.pop(response.id)
                        yield _result(caller_id, response)
                pending.extend(inflight.values())  # (not expected: the call ended early)
                if not pending and exhausted:
                    return
            except grpc.aio.AioRpcError as exc:
                code, details = exc.code(), exc.details() or ""
                if (code == grpc.StatusCode.INVALID_ARGUMENT and "max_batch_size" in details) or (write_failed and progress > 0):
                    # the server's cap per call (a write racing the call's end sees only a
                    # generic error): go on with a new call
                    pending.extend(inflight.values())
                    continue
                retryable = code in _RETRYABLE or write_failed
                for request in inflight.values():
                    caller_id, attempts = ids[request.id]
                    if retryable and attempts < retries:
                        ids[request.id] = (caller_id, attempts + 1)
                        pending.append(request)
                    else:
                        ids.pop(request.id)
                        yield EvaluationResult(caller_id, error=EvaluationError(code.name, details))
                if not pending and exhausted:
                    return
            finally:
                call.cancel()
