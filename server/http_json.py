"""Plain HTTP + JSON on the web port, for a frontend in any language: NDJSON and Server-Sent
Events for the server-streaming RPCs, strict JSON decoding, readable error details, and the
load balancer's probes (``/healthz``, ``/readyz``).

Why a module of its own beside ``hortus.server.web``: the Connect app (connectrpc) already
answers unary JSON; what it cannot give a client without a Connect library is a stream (its
streams are enveloped binary frames). ``PlainHttp`` serves those streams through the same
``_Bridge`` call as Connect, so admission control, deadlines, the observers and the
cancel-on-disconnect path are the bridge's, unchanged.

The NDJSON stream (``docs/service/http.md``):

* ``POST /hortus.v1.Advisor/<Method>`` with ``Content-Type: application/x-ndjson`` or
  ``application/json`` (without ``Accept: text/event-stream``); the body is ONE request
  message in the protobuf JSON mapping.
* The answer is ``200`` with ``Content-Type: application/x-ndjson``: one JSON object per line
  (``\\n``-terminated), each ``{"result": <message>}`` in the same mapping Connect's JSON
  codec writes (``json_format.MessageToJson``'s defaults: lowerCamelCase names, default values
  left out), then exactly one last line ``{"end": {"code": "ok"}}`` or
  ``{"end": <Connect error JSON>}`` (``code``, ``message``, ``details`` with ``debug``).
  A stream without its ``end`` line was cut (the server or the network went away).
* Closing the connection stops the search, as a Connect client's cancel does.

Server-Sent Events (``text/event-stream``): ``GET`` with the request as ``?message=<JSON>``
(URL-encoded) or ``POST`` with ``Accept: text/event-stream``; each message is an event
``result`` and the last one an event ``end`` with the same objects as above.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.compat._codec import ProtoJSONCodec
from connectrpc.errors import ConnectError, ErrorDetail
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]  # noqa: F401 - registers the detail types

from protobuf.wkt import Any as WireAny

from hortus.server.openapi import openapi_json
from hortus.v1 import advisor_pb2 as pb

__all__ = [
    "NDJSON",
    "SSE",
    "PlainHttp",
    "StrictJSONCodec",
    "error_json",
    "strict_codecs",
    "with_error_debug",
    "with_get_caching",
]

NDJSON = "application/x-ndjson"
SSE = "text/event-stream"
RPC_PREFIX = "/hortus.v1.Advisor/"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_UNKNOWN_FIELD = re.compile(r'has no field named "([^"]+)"')
# json_format's ParseError says where it was, from the outside in: "Failed to parse limits
# field: Failed to parse iterations field: Value out of range..."
_FIELD_ON_THE_WAY = re.compile(r"Failed to parse ([A-Za-z_]\w*) field")


def _field_path(text: str) -> tuple[str, bool]:
    """The JSON path of the field a ParseError's `text` is about (``limits.iterations``,
    ``limits.iterationz``), and whether that field is unknown; ``""`` when it names none (the
    body is no JSON object)."""
    path = _FIELD_ON_THE_WAY.findall(text)
    unknown = _UNKNOWN_FIELD.search(text)
    if unknown:
        path.append(unknown.group(1))
    return ".".join(path), unknown is not None


# --- strict JSON -----------------------------------------------------------------------------
def decode_json(data: bytes | bytearray, message: Message) -> Message:
    """`data` (protobuf JSON) into `message`; an unknown field or a malformed value is
    INVALID_ARGUMENT naming the field (a ``google.rpc.BadRequest`` detail), never ignored:
    a misspelt ``"seeed"`` must not silently give an undealt position."""
    try:
        # JSON is UTF-8 (RFC 8259): other bytes are the client's mistake, not the server's
        json_format.Parse(bytes(data).decode("utf-8"), message, ignore_unknown_fields=False)
    except (json_format.ParseError, UnicodeDecodeError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            exc = json_format.ParseError(f"the body is not UTF-8 JSON: {exc.reason} at byte {exc.start}")
        text = str(exc).splitlines()[0] if str(exc) else "invalid JSON"
        field, unknown = _field_path(text)
        violation = error_details_pb2.BadRequest.FieldViolation(field=field, description=text)
        raise ConnectError(
            Code.INVALID_ARGUMENT,
            f"unknown field {field!r}: {text}" if unknown else f"invalid {field}: {text}" if field else text,
            # connectrpc's details are its own protobuf-py messages: the google.rpc detail goes
            # in as an Any of its bytes, as hortus.server.web.connect_error does
            [
                ErrorDetail(
                    WireAny(
                        type_url="type.googleapis.com/google.rpc.BadRequest",
                        value=error_details_pb2.BadRequest(field_violations=[violation]).SerializeToString(),
                    )
                )
            ],
        ) from None
    return message


class StrictJSONCodec(ProtoJSONCodec):  # type: ignore[type-arg]
    """Connect's JSON codec (the same ``MessageToJson`` on the way out) that rejects unknown
    fields on the way in (``decode_json``)."""

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        return decode_json(data, message_class())


def strict_codecs() -> list[Codec]:
    """The codecs of the web port's Connect app: binary, and JSON that rejects unknown fields."""
    return [google_protobuf_binary_codec(), StrictJSONCodec()]


# --- error JSON with decoded details ---------------------------------------------------------
def _debug(type_name: str, value: bytes) -> dict[str, Any] | None:
    """A detail's message as JSON (Connect's ``debug`` field), if its type is known here."""
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(type_name)
    except KeyError:
        return None
    message = message_factory.GetMessageClass(descriptor)()
    message.ParseFromString(value)
    result: dict[str, Any] = json_format.MessageToDict(message)
    return result


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode().rstrip("=")  # Connect: base64 without padding


def error_json(error: ConnectError) -> dict[str, Any]:
    """Connect's error JSON for `error`, each detail with its ``debug`` form."""
    body: dict[str, Any] = {"code": error.code.value}
    if error.message:
        body["message"] = error.message
    details = []
    for detail in error.details:
        entry: dict[str, Any] = {"type": detail.type_name, "value": _b64(detail.message_bytes)}
        debug = _debug(detail.type_name, detail.message_bytes)
        if debug is not None:
            entry["debug"] = debug
        details.append(entry)
    if details:
        body["details"] = details
    return body


def add_debug(body: dict[str, Any]) -> dict[str, Any]:
    """The Connect error JSON `body` with a ``debug`` member on every detail it can decode."""
    for entry in body.get("details", ()) or ():
        if isinstance(entry, dict) and "debug" not in entry and isinstance(entry.get("value"), str):
            raw = entry["value"]
            try:
                value = base64.b64decode(raw + "=" * (-len(raw) % 4))
                debug = _debug(str(entry.get("type", "")), value)
            except Exception:  # noqa: BLE001 - a detail we cannot read stays as it is
                continue
            if debug is not None:
                entry["debug"] = debug
    return body


def with_error_debug(app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """An ASGI wrapper that adds ``debug`` to the details of Connect's unary error JSON (an
    answer of status >= 400 and ``application/json``): a client without protobuf reads the
    field, the description and the retry delay without decoding base64 protobuf."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        held: MutableMapping[str, Any] | None = None
        bare = False  # an error answered without a body (a 415, 405...): given the error JSON
        chunks: list[bytes] = []

        async def intercept(message: MutableMapping[str, Any]) -> None:
            nonlocal held, bare
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", ())}
                if (
                    message["status"] >= 400
                    and headers.get(b"content-type", b"").startswith(b"application/json")
                    and b"content-encoding" not in headers
                ):
                    held = message
                    return
                if message["status"] >= 400 and b"content-type" not in headers and scope.get("method") != "HEAD":
                    held, bare = message, True
                    return
            elif message["type"] == "http.response.body" and held is not None:
                chunks.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                body = b"".join(chunks)
                if bare:
                    if body:  # not empty after all: passed on as it was
                        await send(held)
                        await send({"type": "http.response.body", "body": body, "more_body": False})
                        return
                    body = json.dumps(_bare_error(held["status"])).encode()
                    held = {**held, "headers": [*held.get("headers", ()), (b"content-type", b"application/json")]}
                with contextlib.suppress(ValueError):
                    parsed = json.loads(body)
                    if isinstance(parsed, dict):
                        body = json.dumps(add_debug(parsed), separators=(",", ":")).encode()
                kept = [(k, v) for k, v in held.get("headers", ()) if k.lower() != b"content-length"]
                kept.append((b"content-length", str(len(body)).encode()))
                await send({**held, "headers": kept})
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            await send(message)

        await app(scope, receive, intercept)

    return wrapped


def _bare_error(status: int) -> dict[str, Any]:
    """The Connect error JSON for an error the Connect app answers with a status alone (so
    every error of the web port is the error JSON its OpenAPI document describes): the code
    by Connect's HTTP mapping, the message saying what a request needs."""
    if status == 415:
        return {
            "code": "invalid_argument",
            "message": (
                "unsupported media type: POST with Content-Type application/json (a unary call; a stream "
                "answers NDJSON), or GET with ?connect=v1&encoding=json&message=<JSON> (read-only calls)"
            ),
        }
    if status == 405:
        return {"code": "unimplemented", "message": "method not allowed: POST, or GET for the read-only calls"}
    if status == 413:
        return {"code": "resource_exhausted", "message": "the request is over the server's size cap"}
    if status == 404:
        return {"code": "unimplemented", "message": "no such procedure"}
    return {"code": "unknown", "message": f"HTTP {status}"}


# --- HTTP caching of the read-only calls ---------------------------------------------------
# How long a shared cache may serve a Connect GET answer: the answer of a NO_SIDE_EFFECTS call
# is a function of its request (the URL) and of the server's version, which a deploy changes.
GET_MAX_AGE_S = 300


def with_get_caching(app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """An ASGI wrapper that lets HTTP caches serve the Connect GET answers of the read-only
    calls (``idempotency_level = NO_SIDE_EFFECTS``): ``Cache-Control: public, max-age=300``
    on a 200, ``no-store`` on an error (an overloaded server's refusal must not be replayed).
    The CORS headers beside it come with ``Vary: Origin`` (``FrontDoor``)."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET" or not str(scope.get("path", "")).startswith(RPC_PREFIX):
            await app(scope, receive, send)
            return

        async def intercept(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                policy = f"public, max-age={GET_MAX_AGE_S}".encode() if message["status"] == 200 else b"no-store"
                kept = [(k, v) for k, v in message.get("headers", ()) if k.lower() != b"cache-control"]
                message = {**message, "headers": [*kept, (b"cache-control", policy)]}
            await send(message)

        await app(scope, receive, intercept)

    return wrapped


# --- NDJSON and SSE streams ------------------------------------------------------------------
class _Headers:
    """The request headers as the bridge's context reads them (``allitems()``)."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._items = items

    def allitems(self) -> list[tuple[str, str]]:
        return list(self._items)


class _PlainCtx:
    """What ``_WebContext`` reads of connectrpc's request context."""

    def __init__(self, headers: list[tuple[str, str]], client: Any) -> None:
        self.request_headers = _Headers(headers)
        self.client_address = f"{client[0]}:{client[1]}" if client else None
        self.timeout_ms: float | None = None
        for key, value in headers:
            if key == "connect-timeout-ms" and value.isdigit():
                self.timeout_ms = float(value)


def _line(obj: dict[str, Any]) -> bytes:
    # json.dumps never writes a raw newline: one message is one line
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _event(kind: str, obj: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: ".encode() + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class PlainHttp:
    """The plain-HTTP side of the web port: NDJSON and SSE streams of the server-streaming
    RPCs (through `bridge`, the Connect app's own ``_Bridge``), ``/healthz`` and ``/readyz``."""

    def __init__(self, bridge: Any, ready: Callable[[], bool], read_max_bytes: int) -> None:
        self._bridge = bridge
        self._ready = ready
        self._limit = read_max_bytes
        # the OpenAPI document the build shipped: read at start, so an install without it
        # fails here, saying so, rather than on a client's GET
        self._openapi = openapi_json()
        self.streams: dict[str, tuple[str, type[Message]]] = {}
        for method in pb.DESCRIPTOR.services_by_name["Advisor"].methods:
            if method.server_streaming and not method.client_streaming:
                snake = re.sub(r"(?<!^)(?=[A-Z])", "_", method.name).lower()
                self.streams[method.name] = (snake, message_factory.GetMessageClass(method.input_type))

    async def handle(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], cors: list[tuple[bytes, bytes]]
    ) -> bool:
        """Serve the request if it is plain HTTP's (True), else leave it to the Connect app."""
        path: str = scope["path"]
        method: str = scope["method"]
        if path in ("/healthz", "/readyz") and method in ("GET", "HEAD"):
            ok = path == "/healthz" or self._ready()
            body = b"ok\n" if ok else b"draining\n"
            await _plain(send, 200 if ok else 503, cors, b"" if method == "HEAD" else body, len(body))
            return True
        if path == "/openapi.json" and method in ("GET", "HEAD"):
            document = self._openapi
            await _plain(send, 200, cors, b"" if method == "HEAD" else document, len(document), b"application/json")
            return True
        if not path.startswith(RPC_PREFIX) or path[len(RPC_PREFIX) :] not in self.streams:
            return False
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        accept = headers.get("accept", "").lower()
        # A stream asked for as plain JSON (no Accept: text/event-stream) is NDJSON: what a
        # plain HTTP client or an OpenAPI client posting application/json can read.
        if method == "POST" and (content_type == NDJSON or (content_type == "application/json" and SSE not in accept)):
            kind = NDJSON
        elif (method == "POST" and content_type in ("application/json", NDJSON, "") and SSE in accept) or (
            method == "GET" and (SSE in accept or NDJSON in accept or b"message=" in scope.get("query_string", b""))
        ):
            kind = SSE if SSE in accept or NDJSON not in accept else NDJSON
        else:
            return False
        await self._stream(path[len(RPC_PREFIX) :], kind, scope, receive, send, cors)
        return True

    async def _read(self, scope: Scope, receive: Receive) -> bytes:
        if scope["method"] == "GET":
            params = parse_qs(scope.get("query_string", b"").decode("utf-8", "replace"), keep_blank_values=True)
            query_message: str = params.get("message", ["{}"])[0]
            return query_message.encode()
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise asyncio.CancelledError
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._limit:
                raise ConnectError(Code.RESOURCE_EXHAUSTED, f"request is over {self._limit} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _stream(
        self, name: str, kind: str, scope: Scope, receive: Receive, send: Send, cors: list[tuple[bytes, bytes]]
    ) -> None:
        snake, request_class = self.streams[name]

        def frame(name: str, obj: dict[str, Any]) -> bytes:
            return _line({name: obj}) if kind == NDJSON else _event(name, obj)

        headers = [
            (b"content-type", kind.encode()),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),  # a proxy must pass each line on as it comes
            *cors,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        request_headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", ())]
        context = _PlainCtx(request_headers, scope.get("client"))

        async def finish(end: dict[str, Any]) -> None:
            await send({"type": "http.response.body", "body": frame("end", end), "more_body": False})

        started = time.perf_counter()
        try:
            body = await self._read(scope, receive)
            request = decode_json(body or b"{}", request_class())
        except ConnectError as exc:
            # refused before the bridge's call: the access log and metrics still see it
            self._bridge.observe_refused(name, exc, started, context)
            await finish(error_json(exc))
            return

        async def pump() -> None:
            end: dict[str, Any] = {"code": "ok"}
            try:
                async for item in getattr(self._bridge, snake)(request, context):
                    result = json_format.MessageToDict(item)
                    await send({"type": "http.response.body", "body": frame("result", result), "more_body": True})
            except ConnectError as exc:
                end = error_json(exc)
            await finish(end)

        async def gone() -> None:
            # once the body is read, receive() gives http.disconnect when the client closes
            while (await receive())["type"] != "http.disconnect":
                pass

        await _race(asyncio.ensure_future(pump()), asyncio.ensure_future(gone()))


async def _race(task: asyncio.Future[None], watch: asyncio.Future[None]) -> None:
    done, _ = await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        watch.cancel()
        task.result()
        return
    # the client went away: cancelling the bridge's generator ends the call, which cancels
    # the search (the same path as a Connect client's disconnect)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _plain(
    send: Send, status: int, cors: list[tuple[bytes, bytes]], body: bytes, length: int, kind: bytes = b"text/plain; charset=utf-8"
) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(length).encode()), (b"cache-control", b"no-store"), *cors]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
