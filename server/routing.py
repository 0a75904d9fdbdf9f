"""Continuations across the worker processes of one server (``hortus serve --workers N``).

A kept search tree (``hortus.server.continuation``) lives in the process that made it, but the
kernel spreads *connections* over the workers (``SO_REUSEPORT``), and a browser does not pin
one: it opens new connections and closes idle ones after a few seconds. A ``continue_from``
that reaches another worker is therefore routed to the worker that keeps the tree.

How: the supervisor makes a private folder (mode 0700, so only the server's own user can
reach it) and every worker listens there on a unix socket of its own, ``<index>.sock``, beside
its public ports. A worker's tokens start with ``w<index>-`` (``KeptAnalyses(prefix=...)``),
so any worker can tell which one keeps a tree; one that receives another's token forwards the
call, unchanged, to that worker's socket, with the call's remaining deadline, and relays the
answers or the error (code, message and ``google.rpc`` details) as they come. Cancelling the
client's call cancels the forwarded one. The owner serves it like any call: it checks the
request, takes its search slot, and keeps the continued tree under its own new token. The
forwarding worker takes no search slot.

The owner sees the call coming from its unix socket, so the forwarding worker passes the
client's identity (``hortus.server.cache_scope.client_identity``) in ``FORWARDED_CLIENT``
metadata; it is believed only from a unix-socket peer (the private folder's). A worker
replaced after a crash gets the same index and a new instance id: a token of its predecessor
is forwarded to it and answered NOT_FOUND (kept by a process that restarted), as before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import grpc

from hortus.server.errors import ForwardedError

__all__ = ["FORWARDED_CLIENT", "WorkerRoutes", "forwarded_identity", "token_worker", "worker_prefix"]

FORWARDED_CLIENT = "x-hortus-forwarded-client"
"""Metadata of a forwarded call: the identity of the client that made it."""

NO_DEADLINE_S = 24 * 3600.0
"""A ``time_remaining`` this long or longer is taken as no deadline."""


def worker_prefix(index: int) -> str:
    """The start of the instance id of worker `index`'s tokens."""
    return f"w{index}-"


def token_worker(token: str) -> int | None:
    """The worker index a token names (``w<index>-...``), None for a token of no worker."""
    instance = token.partition(".")[0]
    if not instance.startswith("w"):
        return None
    index, dash, _ = instance[1:].partition("-")
    if not dash or not index.isdigit() or len(index) > 4:
        return None
    return int(index)


def forwarded_identity(context: Any) -> str | None:
    """The client identity a forwarding worker passed, when `context` is a call from the
    group's private socket (a unix-socket peer); None otherwise."""
    peer = getattr(context, "peer", None)
    if not callable(peer) or not str(peer()).startswith("unix:"):
        return None
    for key, value in context.invocation_metadata() or ():
        if key == FORWARDED_CLIENT and isinstance(value, str) and value:
            return value
    return None


class _Status(grpc.Status):
    def __init__(self, code: grpc.StatusCode, details: str, trailing_metadata: tuple[tuple[str, str | bytes], ...]) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata


def _status(error: grpc.RpcError) -> grpc.Status:
    """The gRPC status of a failed forwarded call, details and all."""
    call: Any = error  # a failed call is also a grpc.Call: its code, details and trailers
    return _Status(call.code(), call.details() or "", tuple(call.trailing_metadata() or ()))


def _cancelled() -> grpc.Status:
    return _Status(grpc.StatusCode.CANCELLED, "the call was cancelled", ())


class WorkerRoutes:
    """The private sockets of one worker group, seen from worker `index`."""

    def __init__(self, folder: str, index: int) -> None:
        self.folder = folder
        self.index = index
        self._channels: dict[int, grpc.Channel] = {}
        self._lock = threading.Lock()

    def address(self, index: int) -> str:
        """The gRPC address of worker `index`'s private socket."""
        return f"unix:{os.path.join(self.folder, f'{index}.sock')}"

    def owner(self, token: str) -> int | None:
        """The other worker that keeps `token`'s tree, None when it is this one (or none)."""
        index = token_worker(token)
        if index is None or index == self.index:
            return None
        if not os.path.exists(os.path.join(self.folder, f"{index}.sock")):
            return None
        return index

    def _channel(self, index: int) -> grpc.Channel:
        with self._lock:
            channel = self._channels.get(index)
            if channel is None:
                channel = grpc.insecure_channel(
                    self.address(index),
                    options=[("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)],
                )
                self._channels[index] = channel
            return channel

    def close(self) -> None:
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            channel.close()

    def _call_options(self, context: Any, identity: str) -> dict[str, Any]:
        remaining = context.time_remaining()
        options: dict[str, Any] = {"metadata": ((FORWARDED_CLIENT, identity),)}
        if remaining is not None and remaining < NO_DEADLINE_S:
            options["timeout"] = max(0.001, remaining)
        return options

    def unary(self, index: int, method: str, request: Any, response_type: Any, context: Any, identity: str) -> Any:
        """Forward a unary call to worker `index`: its answer, or ``ForwardedError`` with its
        status."""
        call: Any = self._channel(index).unary_unary(
            f"/hortus.v1.Advisor/{method}",
            request_serializer=type(request).SerializeToString,
            response_deserializer=response_type.FromString,
        )
        future = call.future(request, **self._call_options(context, identity))
        if not context.add_callback(future.cancel):
            future.cancel()
        try:
            return future.result()
        except grpc.RpcError as error:
            raise ForwardedError(_status(error)) from None
        except grpc.FutureCancelledError:  # our client left (the call-end callback ran)
            raise ForwardedError(_cancelled()) from None

    def stream(self, index: int, method: str, request: Any, response_type: Any, context: Any, identity: str) -> Iterator[Any]:
        """Forward a server-streaming call to worker `index`: its answers as they come, then
        ``ForwardedError`` with its status if it failed."""
        call: Any = self._channel(index).unary_stream(
            f"/hortus.v1.Advisor/{method}",
            request_serializer=type(request).SerializeToString,
            response_deserializer=response_type.FromString,
        )
        answers = call(request, **self._call_options(context, identity))
        if not context.add_callback(answers.cancel):
            answers.cancel()
        try:
            yield from answers
        except grpc.RpcError as error:
            raise ForwardedError(_status(error)) from None
        finally:
            answers.cancel()
