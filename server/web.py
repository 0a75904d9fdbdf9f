"""The web front door: Connect (JSON and binary) and gRPC-Web for browsers, beside the native
gRPC port, around the **same** ``AdvisorServicer`` (``hortus serve --web-address``).

Why this shape:

* ``connectrpc`` (the official Connect for Python) generates an ASGI application from
  ``advisor.proto`` (``hortus/v1/advisor_connect.py``, made at build time by setup.py). Its
  handlers are async; ``_Bridge`` runs the servicer's methods, unchanged, in a thread pool of
  the gRPC pool's size, through ``_WebContext``, which offers the three things the servicer
  asks of a ``grpc.ServicerContext``: ``time_remaining`` (from ``Connect-Timeout-Ms`` or
  ``grpc-timeout``), ``add_callback`` (run when the call ends) and ``abort_with_status`` (a
  ``ConnectError`` with the same code and the same ``google.rpc`` details, which Connect puts
  in its error JSON and gRPC-Web in its trailers). No RPC logic is written twice: caps,
  deadlines, search slots, drain and the metrics listeners are the servicer's, and calls are
  admitted by the gRPC port's ``AdmissionControl``: one budget of ``rpc_limit`` work calls
  over both ports, so overload is RESOURCE_EXHAUSTED with the same details on either, and
  the drain waits for the web calls too.
* ASGI under uvicorn rather than WSGI: the ASGI app watches ``receive()`` for the client's
  disconnect while a handler runs and cancels it at once; the bridge then runs the call's
  callbacks, which cancel the search. Under WSGI a disconnect is only seen at the next write,
  i.e. the next partial result (0.1-0.4 s in the experiment; the target is 50 ms).
* uvicorn runs in a thread of the server process, on a socket bound here (``SO_REUSEPORT``
  for the worker group), so every worker process serves both ports with one servicer.
* CORS: only the origins given (``--cors-origin``, repeatable; ``*`` only when asked).
* Static files: ``GET`` of any other path is served from a folder (``WebOptions.static_dir``;
  default: the package's ``hortus/static`` when it holds an ``index.html``), so a web page
  and the API share one origin.

HTTP/1.1 cannot carry client or bidirectional streams from a browser: ``EvaluatePositions``
answers UNIMPLEMENTED here and ``EvaluateBatch`` (a server stream) does its work.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import logging
import math
import mimetypes
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import grpc
import uvicorn
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from google.rpc import status_pb2  # type: ignore[import-untyped, unused-ignore]
from protobuf.wkt import Any as WireAny

from hortus.server.admission import AdmissionControl
from hortus.server.drain import BacklogRefuser
from hortus.server.errors import status_for
from hortus.server.http_json import PlainHttp, strict_codecs, with_error_debug, with_get_caching
from hortus.server.service import AdvisorServicer
from hortus.server.web_observe import ConnectObserver, code_name, current_call, observed_rpc, report
from hortus.v1 import advisor_pb2 as pb
from hortus.v1.advisor_connect import AdvisorASGIApplication

__all__ = ["DEFAULT_WEB_ADDRESS", "WebOptions", "WebServer", "connect_error", "start_web"]

log = logging.getLogger("hortus.web")

DEFAULT_WEB_ADDRESS = "127.0.0.1:8080"
RPC_PREFIX = "/hortus.v1.Advisor/"

# What a browser may send and read across origins (connect-web's and grpc-web's headers).
ALLOWED_HEADERS = (
    "Content-Type, Connect-Protocol-Version, Connect-Timeout-Ms, Connect-Accept-Encoding, "
    "Connect-Content-Encoding, Grpc-Timeout, X-Grpc-Web, X-User-Agent, Accept-Encoding"
)
EXPOSED_HEADERS = "Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin, Content-Encoding, Connect-Content-Encoding"
PREFLIGHT_MAX_AGE_S = 7200

Observer = Callable[[str, str, float, Any], None]
"""A call observer of ``hortus.server.observe`` (access log, metrics)."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def default_static_dir() -> Path | None:
    """The package's ``hortus/static`` folder if it holds a page (``index.html``)."""
    folder = Path(str(importlib.resources.files("hortus"))) / "static"
    return folder if (folder / "index.html").is_file() else None


@dataclass(frozen=True)
class WebOptions:
    """The web front door of a server: where it listens, which origins may call it from a
    page, and the folder of static files served at ``/`` (None: ``default_static_dir()``)."""

    address: str = DEFAULT_WEB_ADDRESS
    cors_origins: tuple[str, ...] = ()
    static_dir: Path | None = None
    reuse_port: bool = False
    grace_seconds: float = 5.0
    observers: list[Observer] = field(default_factory=list, compare=False)
    tls: Any = None
    """``hortus.server.app.ServerTls``: serve HTTPS with it (mutual TLS when it has a client CA);
    ``build_server`` sets the gRPC port's own unless ``plaintext``."""
    trusted_proxies: tuple[str, ...] = ()
    """Peers whose ``X-Forwarded-For``/``X-Forwarded-Proto`` are believed (``--trusted-proxy``:
    IP addresses or networks); none by default, so a local process cannot pose as any client."""
    plaintext: bool = False
    max_connections: int | None = None
    """Connections the web port keeps open at once; more are closed at accept (None:
    ``hortus.server.guard.default_max_connections()``, well below the descriptor limit)."""
    request_timeout: float = 10.0
    """Seconds a client has to send a whole request on a new or idle connection."""
    """Plaintext HTTP even beside a TLS gRPC port (``--web-plaintext``; a warning is logged)."""


# --- errors ----------------------------------------------------------------------------------
def _connect_code(code: grpc.StatusCode) -> Code:
    name = "CANCELED" if code == grpc.StatusCode.CANCELLED else code.name
    return Code[name] if name in Code.__members__ else Code.UNKNOWN


def connect_error(status: grpc.Status) -> ConnectError:
    """The Connect form of a gRPC status: the same code, message and ``google.rpc`` details
    (repacked from ``grpc-status-details-bin``)."""
    details: list[ErrorDetail] = []
    for key, value in status.trailing_metadata or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                details.append(ErrorDetail(WireAny(type_url=detail.type_url, value=detail.value)))
    return ConnectError(_connect_code(status.code), status.details, details)


def _code_name(exc: BaseException | None) -> str:
    """The gRPC name of how a call ended, for the access log and metrics."""
    if exc is None:
        return "OK"
    if isinstance(exc, ConnectError):
        return "CANCELLED" if exc.code == Code.CANCELED else exc.code.name
    if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
        return "CANCELLED"
    return "INTERNAL"


# --- the servicer's context ------------------------------------------------------------------
class _WebContext:
    """What ``AdvisorServicer`` uses of a ``grpc.ServicerContext``, for one web call."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._ended = False
        self._code: grpc.StatusCode | None = None

    def time_remaining(self) -> float | None:
        ms = self._ctx.timeout_ms
        return None if ms is None else max(0.0, ms / 1000.0)

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """Run `callback` when the call ends; False (not registered) if it already has."""
        with self._lock:
            if self._ended:
                return False
            self._callbacks.append(callback)
            return True

    def end(self) -> None:
        """The call is over (answered, failed, cancelled, past its deadline): run the
        callbacks once, as gRPC does; a search still running stops at once."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failing callback must not skip the others
                log.exception("call-end callback failed")

    def is_active(self) -> bool:
        return not self._ended

    def abort_with_status(self, status: grpc.Status) -> NoReturn:
        self._code = status.code
        raise connect_error(status)

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        self._code = code
        raise ConnectError(_connect_code(code), details)

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def peer(self) -> str:
        return f"web:{self._ctx.client_address or '?'}"

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._ctx.request_headers.allitems())

    def set_trailing_metadata(self, metadata: Any) -> None:  # grpcio-only headers: nothing to send
        pass


_END = object()


def _next(iterator: Iterator[Any]) -> Any:
    return next(iterator, _END)


def _close(generator: Any) -> None:
    try:
        generator.close()
    except Exception:  # noqa: BLE001 - the call is over either way
        log.exception("closing a stream handler failed")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class _Bridge:
    """The async ``Advisor`` the generated ASGI app calls: every method is the servicer's
    own, run in `pool`, admitted by the gRPC port's ``AdmissionControl`` (calls over
    ``rpc_limit`` on both ports together are RESOURCE_EXHAUSTED, as on gRPC)."""

    def __init__(
        self,
        servicer: AdvisorServicer,
        pool: futures.ThreadPoolExecutor,
        observers: list[Observer],
        admission: AdmissionControl,
    ) -> None:
        self._servicer = servicer
        self._pool = pool
        self._observers = observers
        self._admission = admission
        self._methods: dict[str, Callable[..., Any]] = {}
        for method in pb.DESCRIPTOR.services_by_name["Advisor"].methods:
            if method.client_streaming:
                handler: Callable[..., Any] = self._not_over_http1(method.name)
            elif method.server_streaming:
                handler = self._streaming(method.name)
            else:
                handler = self._unary(method.name)
            self._methods[_snake(method.name)] = handler

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return self._methods[name]
        except KeyError:
            raise AttributeError(name) from None

    def _admit(self, name: str) -> bool:
        """Admission control shared with the gRPC port (``AdmissionControl``): the same work
        budget (``rpc_limit`` calls over both ports at once), probes (GetVersion) never refused
        for load, UNAVAILABLE while draining. Whether the call counts as a probe."""
        method = RPC_PREFIX + name
        probe, refusal = self._admission.admit(method)
        if refusal is not None:
            raise connect_error(status_for(refusal, method))
        return probe

    def _done(self, method: str, probe: bool, started: float, error: BaseException | None, context: _WebContext) -> None:
        self._admission.release(probe)
        record = current_call()
        if record is not None and record.observed:
            return  # a Connect call: ``ConnectObserver`` reports it with the code its client got
        if record is not None:
            record.observed = True
        code = _code_name(error)
        if code == "CANCELLED" and error is not None and not isinstance(error, ConnectError):
            # asyncio cancels the call both when the client goes away and when its deadline
            # passes: the remaining time tells them apart
            remaining = context.time_remaining()
            if remaining is not None and remaining <= 0:
                code = "DEADLINE_EXCEEDED"
        report(self._observers, method, code, time.perf_counter() - started, context)

    def observe_refused(self, method: str, error: ConnectError, started: float, context: Any) -> None:
        """Report a call refused before it reached a handler (plain HTTP's bad JSON)."""
        record = current_call()
        if record is not None:
            if record.observed:
                return
            record.observed = True
        report(self._observers, method, code_name(error), time.perf_counter() - started, _WebContext(context))

    @staticmethod
    def _started() -> None:
        record = current_call()
        if record is not None:
            record.handler_started = True  # errors from here on are not the request's framing

    def _unary(self, name: str) -> Callable[[Any, Any], Awaitable[Any]]:
        target = getattr(self._servicer, name)

        async def call(request: Any, ctx: Any) -> Any:
            started = time.perf_counter()
            self._started()
            probe = self._admit(name)
            context = _WebContext(ctx)
            error: BaseException | None = None
            try:
                return await asyncio.wrap_future(self._pool.submit(target, request, context))
            except BaseException as exc:
                error = exc
                if isinstance(exc, (ConnectError, asyncio.CancelledError)):
                    raise
                log.error("internal error in %s", name, exc_info=exc)
                raise ConnectError(Code.INTERNAL, "internal error") from None
            finally:
                context.end()  # after a disconnect or the deadline: stops the search now
                self._done(name, probe, started, error, context)

        return call

    def _streaming(self, name: str) -> Callable[[Any, Any], AsyncIterator[Any]]:
        target = getattr(self._servicer, name)

        async def call(request: Any, ctx: Any) -> AsyncIterator[Any]:
            started = time.perf_counter()
            self._started()
            probe = self._admit(name)
            context = _WebContext(ctx)
            generator = target(request, context)
            pending: futures.Future[Any] | None = None
            error: BaseException | None = None
            try:
                while True:
                    pending = self._pool.submit(_next, generator)
                    item = await asyncio.wrap_future(pending)
                    pending = None
                    if item is _END:
                        return
                    yield item
            except BaseException as exc:
                error = exc
                if isinstance(exc, (ConnectError, asyncio.CancelledError, GeneratorExit)):
                    raise
                log.error("internal error in %s", name, exc_info=exc)
                raise ConnectError(Code.INTERNAL, "internal error") from None
            finally:
                # Cancelled (client gone, deadline) while the servicer was searching: the
                # callbacks cancel the search at once, and the generator is closed as soon as
                # its thread is out of it (a running generator cannot be closed).
                context.end()
                if pending is None:
                    _close(generator)
                else:
                    pending.add_done_callback(lambda _: _close(generator))
                self._done(name, probe, started, error, context)

        return call

    def _not_over_http1(self, name: str) -> Callable[[Any, Any], AsyncIterator[Any]]:
        async def call(request: Any, ctx: Any) -> AsyncIterator[Any]:
            self._started()
            raise ConnectError(
                Code.UNIMPLEMENTED,
                f"{name} streams requests, which HTTP/1.1 and browsers cannot do: use EvaluateBatch here, or the gRPC port",
            )
            yield  # an async generator, as the endpoint expects

        return call


# --- HTTP: CORS, static files, the RPC app ---------------------------------------------------
REFUSED_ORIGIN_LOG_INTERVAL_S = 60


def origins_line(origins: tuple[str, ...] | frozenset[str]) -> str:
    """What ``hortus serve`` prints at start: the origins whose pages may call the web port."""
    listed = ", ".join(sorted(origins)) or "none (only pages served by this port; add --cors-origin)"
    return f"hortus web CORS origins allowed: {listed}"


def _same_origin(origin: str, host: str) -> bool:
    """The page served by this port itself (its Origin is this Host): no CORS is involved."""
    return bool(host) and origin.split("://", 1)[-1] == host


class FrontDoor:
    """The ASGI app of the web port: the RPCs under ``/hortus.v1.Advisor/``, CORS for the
    allowed origins, and static files for any other ``GET``."""

    def __init__(
        self, rpc_app: Any, cors_origins: tuple[str, ...], static_dir: Path | None, observers: list[Observer] | None = None
    ) -> None:
        self.rpc_app = rpc_app
        self.observers: list[Observer] = observers if observers is not None else []
        """The access log and metrics: every request on the RPC path reaches them once,
        those refused before a handler too (``hortus.server.web_observe``)."""
        self.cors_origins = frozenset(cors_origins)
        self.static_dir = static_dir.resolve() if static_dir is not None else None
        self.plain: PlainHttp | None = None  # NDJSON/SSE streams and probes (http_json)
        # A refused origin is logged so an operator sees why a page cannot call (the browser
        # only tells its own console), at most once per interval so a busy page cannot flood it.
        self._refused_logged_at = -math.inf
        self.allowed_hosts: frozenset[str] | None = None
        """Host names served (lower case, no port); None: any. Set for a loopback address."""
        self.draining: threading.Event | None = None
        """Set while the server drains: every answer then says ``Connection: close``, so that
        keep-alive clients leave before the end rather than being cut (``hortus.server.drain``)."""

    def _allowed(self, origin: str) -> bool:
        return bool(origin) and ("*" in self.cors_origins or origin in self.cors_origins)

    def _log_refused(self, origin: str) -> None:
        now = time.monotonic()
        if now - self._refused_logged_at < REFUSED_ORIGIN_LOG_INTERVAL_S:
            return
        self._refused_logged_at = now
        allowed = ", ".join(sorted(self.cors_origins)) or "none (--cors-origin)"
        logging.getLogger(__name__).warning(
            "web: refused CORS origin %s (allowed: %s); at most one such line every %d s",
            origin,
            allowed,
            REFUSED_ORIGIN_LOG_INTERVAL_S,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if self.draining is not None and self.draining.is_set():
            send = _closing(send)
        if str(scope.get("path", "")).startswith(RPC_PREFIX):
            await observed_rpc(self._serve, self.observers, scope, receive, send)
        else:
            await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        if self.allowed_hosts is not None and "host" in headers:
            if _host_name(headers["host"]) not in self.allowed_hosts:
                # DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1
                # would otherwise call a loopback server as same-origin
                await _respond(send, 421, [], b"this server answers only to its own host names\n")
                return
        if "content-length" in headers and "transfer-encoding" in headers:
            # RFC 9112 6.1: a request smuggling attempt through a proxy that frames it by the
            # other header; h11 frames by Transfer-Encoding and would serve it
            await _respond(send, 400, [(b"connection", b"close")], b"Content-Length and Transfer-Encoding together\n")
            return
        origin = headers.get("origin", "")
        cors: list[tuple[bytes, bytes]] = []
        if self._allowed(origin):
            cors = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        elif origin and not _same_origin(origin, headers.get("host", "")):
            self._log_refused(origin)
        method = scope["method"]
        if method == "OPTIONS" and "access-control-request-method" in headers:
            if cors:
                cors += [
                    (b"access-control-allow-methods", b"POST, GET"),
                    (b"access-control-allow-headers", ALLOWED_HEADERS.encode()),
                    (b"access-control-max-age", str(PREFLIGHT_MAX_AGE_S).encode()),
                ]
            await _respond(send, 204, cors)
            return
        path: str = scope["path"]
        if self.plain is not None and await self.plain.handle(scope, receive, send, headers, cors):
            return
        if path.startswith(RPC_PREFIX):
            refusal = _refused_content_type(headers.get("content-type", ""))
            if refusal is not None:
                await _respond(send, 415, cors, refusal.encode())
                return
            if cors:
                cors.append((b"access-control-expose-headers", EXPOSED_HEADERS.encode()))

                async def send_with_cors(message: MutableMapping[str, Any]) -> None:
                    if message["type"] == "http.response.start":
                        message = dict(message)
                        message["headers"] = [*message.get("headers", ()), *cors]
                    await send(message)

                await self.rpc_app(scope, receive, send_with_cors)
            else:
                await self.rpc_app(scope, receive, send)
            return
        if method in ("GET", "HEAD"):
            await self._static(path, method == "HEAD", send)
            return
        await _respond(send, 405, [(b"allow", b"GET, HEAD")])

    async def _static(self, path: str, head: bool, send: Send) -> None:
        """A file of the static folder (``index.html`` for a folder); never outside it."""
        if self.static_dir is None:
            await _respond(send, 404, [], b"no web page is installed here: the API is under /hortus.v1.Advisor/\n")
            return
        if "\0" in path:  # a client's mistake, not ours: os calls raise ValueError on it
            await _respond(send, 400, [], b"the path holds a null byte\n")
            return
        try:
            target = (self.static_dir / path.lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_relative_to(self.static_dir) or not target.is_file():
                await _respond(send, 404, [], b"not found\n")
                return
            body = target.read_bytes()
        except (OSError, RuntimeError, ValueError):
            # a name too long (ENAMETOOLONG), a symlink loop (ELOOP; RuntimeError from resolve
            # before Python 3.13), a file that went away: not found, never a 500
            await _respond(send, 404, [], b"not found\n")
            return
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "application/json"):
            kind += "; charset=utf-8"
        headers = [
            (b"content-type", kind.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-cache"),
        ]
        await _respond(send, 200, headers, b"" if head else body)


def _closing(send: Send) -> Send:
    """`send` with ``Connection: close`` on the response (uvicorn then closes the connection
    once the answer is out)."""

    async def closing(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = dict(message)
            message["headers"] = [*message.get("headers", ()), (b"connection", b"close")]
        await send(message)

    return closing


def _host_name(host: str) -> str:
    """The name of a Host header, without its port (``[::1]:8080`` -> ``[::1]``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def loopback_host_names(bound_host: str) -> frozenset[str] | None:
    """The Host names a server bound to `bound_host` answers to: for a loopback address
    localhost, 127.0.0.1, [::1] and the address itself; None (any) for other addresses, where
    the names clients use are not known here."""
    import ipaddress

    name = bound_host.strip("[]").lower()
    try:
        loopback = name == "localhost" or ipaddress.ip_address(name).is_loopback
    except ValueError:
        return None
    if not loopback:
        return None
    own = f"[{name}]" if ":" in name else name
    return frozenset({"localhost", "127.0.0.1", "[::1]", own})


def _refused_content_type(content_type: str) -> str | None:
    """Why a call's content type is refused with 415 before Connect sees it (None: served).
    Native gRPC (HTTP/2 trailers) cannot be answered by an ASGI server; gRPC-Web's text mode
    (base64) is not implemented by connectrpc."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/grpc" or kind.startswith("application/grpc+"):
        return (
            "native gRPC is served on the gRPC port (hortus serve --address), not on the web port; "
            "the web port serves Connect (application/json, application/proto) and gRPC-Web "
            "(application/grpc-web, application/grpc-web+proto)\n"
        )
    if kind.startswith("application/grpc-web-text"):
        return (
            "gRPC-Web text mode (application/grpc-web-text) is not served: use the binary mode "
            "(grpc-web JS client: mode=grpcweb, content type application/grpc-web+proto) or Connect "
            "(application/json, application/proto)\n"
        )
    return None


async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes = b"") -> None:
    if body and not any(k == b"content-type" for k, _ in headers):
        headers = [*headers, (b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


# --- the server ------------------------------------------------------------------------------
def _bind(address: str, reuse_port: bool) -> socket.socket:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise OSError(f"cannot listen on {address}: expected HOST:PORT")
    host = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit TCP_NODELAY: uvicorn writes a response's headers and body
    # separately, and on a keep-alive connection Nagle's algorithm held the body until the
    # client's delayed ACK (~40 ms per call from the second call on, as a page's fetch does).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, int(port)))
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {address} (web): {exc.strerror or exc}") from exc
    return sock


class WebServer:
    """uvicorn serving a ``FrontDoor`` in a thread of this process."""

    def __init__(
        self,
        app: FrontDoor,
        sock: socket.socket,
        pool: futures.ThreadPoolExecutor,
        grace: float,
        tls: Any = None,
        trusted_proxies: tuple[str, ...] = (),
        http: Any = "h11",
    ) -> None:
        self.app = app
        self.socket = sock
        self.port: int = sock.getsockname()[1]
        host = sock.getsockname()[0]
        self.address = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        self._pool = pool
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,  # hortus's own access log covers web calls (--access-log)
            lifespan="off",
            ws="none",
            http=http,  # uvicorn's h11 protocol with a connection cap and a request read timeout
            server_header=False,
            timeout_graceful_shutdown=math.ceil(max(grace, 0.0)),  # whole seconds in uvicorn's API
            # uvicorn believes X-Forwarded-For from 127.0.0.1 by default: any local process could
            # then pose as any client in the access log; only configured proxies are believed
            proxy_headers=bool(trusted_proxies),
            forwarded_allow_ips=list(trusted_proxies) or None,
        )
        self._tls_context: Any = None
        if tls is not None:
            # uvicorn's own context is made from file names; ours from the PEM bytes, with the
            # same certificate and client-certificate rule as the gRPC port. Loaded here, so a
            # bad certificate fails start_web, not the server thread.
            context = self._tls_context = tls.ssl_context()
            config.ssl_context_factory = lambda _config, _default: context
            config.load()
        self.scheme = "https" if tls is not None else "http"
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="hortus-web", daemon=True)
        self._failed: BaseException | None = None
        # uvicorn closes the socket it serves as it stops; the queued connections of a closed
        # listening socket are reset. It gets a copy: this one stays open to the very end, its
        # late connections answered 503 (``hortus.server.drain``).
        self._served = sock.dup()
        self._refuser: BacklogRefuser | None = None

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._served]))
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self._failed = exc

    def start(self, timeout: float = 30.0) -> None:
        self._thread.start()
        limit = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > limit:
                raise OSError(f"the web front door on {self.address} did not start: {self._failed!r}")
            time.sleep(0.01)

    def begin_stop(self) -> None:
        """Stop taking connections (connections that come now are answered 503); calls in
        flight get the grace period."""
        self._server.should_exit = True
        if self._refuser is None:
            self._refuser = BacklogRefuser(self.socket, self._tls_context)
            self._refuser.start()

    def stop(self, timeout: float | None = None) -> None:
        self.begin_stop()
        self._thread.join(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)
        assert self._refuser is not None
        self._refuser.close()  # answers what is still queued, then closes the listening socket
        with contextlib.suppress(OSError):
            self.socket.close()
        with contextlib.suppress(OSError):
            self._served.close()


def start_web(servicer: AdvisorServicer, options: WebOptions, admission: AdmissionControl | None = None) -> WebServer:
    """Serve `servicer` over Connect and gRPC-Web on ``options.address`` (port 0: a free one).
    `admission`: the gRPC port's admission control, so that both ports share one budget of
    calls (None: one of this port's own, as the servicer's config sets it)."""
    logging.getLogger("uvicorn.error").setLevel(max(logging.WARNING, logging.getLogger().level))
    from hortus.server.guard import limit_third_party_logs

    limit_third_party_logs()  # a client's garbage is not one log line per connection
    if admission is None:
        admission = AdmissionControl(servicer.config.rpc_limit, servicer.draining, servicer.config.retry_after_ms / 1000.0)
    # a thread for every call admitted, as on the gRPC port: an admitted call never queues
    pool = futures.ThreadPoolExecutor(
        max_workers=max(servicer.config.pool_size, admission.threads), thread_name_prefix="hortus-web"
    )
    bridge = _Bridge(servicer, pool, options.observers, admission)
    rpc_app = AdvisorASGIApplication(
        bridge,
        # first: a metadata interceptor ahead of the others runs before the request is read, so
        # it sees (and reports) the calls connectrpc refuses while reading it
        interceptors=[ConnectObserver(options.observers)],
        read_max_bytes=servicer.config.receive_limit,
        codecs=strict_codecs(),
    )
    static = options.static_dir if options.static_dir is not None else default_static_dir()
    app = FrontDoor(with_get_caching(with_error_debug(rpc_app)), options.cors_origins, static, options.observers)
    app.plain = PlainHttp(bridge, lambda: not servicer.draining.is_set(), servicer.config.receive_limit)
    sock = _bind(options.address, options.reuse_port)
    app.allowed_hosts = loopback_host_names(str(sock.getsockname()[0]))
    app.draining = servicer.draining
    try:
        from hortus.server.guard import guarded_protocol

        http = guarded_protocol(options.max_connections, options.request_timeout)
        server = WebServer(app, sock, pool, options.grace_seconds, options.tls, options.trusted_proxies, http)
    except BaseException:
        sock.close()
        raise
    server.start()
    return server
