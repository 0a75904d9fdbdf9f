"""The web port's last moments: no TCP reset for a call that arrives while the server stops.

A connection is reset (RST) when its socket is closed with bytes unread, or when bytes reach
a socket already closed. Stopping uvicorn did both: it closes its listening socket, which
resets the connections the kernel had queued but nobody had accepted yet, and it closes idle
keep-alive connections at once, resetting a client whose request was on its way (about 1% of
the calls racing with a stop, measured). Here:

* ``WebServer`` hands uvicorn a duplicate of the listening socket and keeps the original open
  until the very end: when uvicorn closes its copy, connections still queue, and
  ``BacklogRefuser`` accepts them and answers each ``503`` (``Retry-After``, ``Connection:
  close``; Connect and gRPC-Web clients read it as UNAVAILABLE), then reads what the client
  still sends until it closes, so nothing is left unread;
* ``hortus.server.guard.GuardedH11Protocol.shutdown`` gives an idle connection a moment for
  a request on its way (it is answered, UNAVAILABLE while draining), then half-closes it and
  reads until the client closes;
* while draining every answer says ``Connection: close`` (``hortus.server.web.FrontDoor``),
  so keep-alive clients leave before the end instead of being cut.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import select
import socket
import ssl
import struct
import sys
import threading
import time

__all__ = ["BacklogRefuser", "LINGER_S"]

log = logging.getLogger("hortus.web")

LINGER_S = 0.3
"""How long a closing connection waits for a request on its way, and then for the client to
close after the server's FIN, reading (and dropping) what comes."""
_HEAD_LIMIT = 64 * 1024

_BODY = b"the server is shutting down: send the call elsewhere\n"
_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\n"
    b"connection: close\r\ncontent-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


def _read_until(conn: socket.socket | ssl.SSLSocket, done: bytes | None, limit_s: float) -> None:
    """Read (and drop) from `conn` until `done` was seen (None: until the client closes),
    for at most `limit_s` seconds."""
    end = time.monotonic() + limit_s
    seen = b""
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        if done is not None:
            seen = (seen + chunk)[-_HEAD_LIMIT:]
            if done in seen:
                return


_SO_ATTACH_FILTER = 26  # Linux <asm-generic/socket.h>
# A classic BPF socket filter that drops a TCP segment with SYN set and ACK clear (a new
# connection's first packet) and keeps every other one. A TCP socket's filter sees the segment
# from its TCP header on (offset 13: the flags). Only new connections are stopped: the ACKs
# that complete handshakes already under way, and the data of connections made from the
# socket (they inherit its filter), pass.
_SYN_FILTER = (
    (0x30, 0, 0, 13),  # ldb [13]: the TCP flags
    (0x54, 0, 0, 0x12),  # and #(SYN|ACK)
    (0x15, 0, 1, 0x02),  # jeq #SYN: next (drop), else skip it (keep)
    (0x06, 0, 0, 0),  # ret #0: drop
    (0x06, 0, 0, 0xFFFFFFFF),  # ret #-1: keep the whole segment
)


def _drop_new_connections(sock: socket.socket) -> bool:
    """Make the listening socket drop new connection attempts (Linux: ``_SYN_FILTER``), so
    that its queue stops growing and can be emptied before it is closed: a SYN dropped is sent
    again by the client a second later, which then finds the port closed (refused, not reset).
    Whether it could be done."""
    if not sys.platform.startswith("linux"):
        return False
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *op) for op in _SYN_FILTER))
    fprog = struct.pack("HL", len(_SYN_FILTER), ctypes.addressof(program))  # struct sock_fprog {len, *filter}
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, fprog)
    except OSError:
        return False
    return True


class BacklogRefuser:
    """Answers ``503`` to the connections of a listening socket that uvicorn no longer
    accepts, in a thread, until ``close`` (see the module)."""

    def __init__(self, sock: socket.socket, tls: ssl.SSLContext | None = None) -> None:
        self._socket = sock
        self._tls = tls
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hortus-web-drain", daemon=True)
        self.refused = 0
        """Connections answered 503 here."""

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            pending = self._accept(0.05)
            if pending:
                self._answer(pending)

    def _accept(self, wait_s: float) -> list[socket.socket]:
        """The connections queued now, waiting up to `wait_s` for a first one."""
        accepted: list[socket.socket] = []
        try:
            ready, _, _ = select.select([self._socket], [], [], wait_s)
        except (OSError, ValueError):
            return accepted
        if not ready:
            return accepted
        self._socket.setblocking(False)
        while len(accepted) < 1024:
            try:
                conn, _ = self._socket.accept()
            except OSError:  # none left (BlockingIOError), or uvicorn's copy took it first
                break
            accepted.append(conn)
        return accepted

    def _answer(self, raws: list[socket.socket]) -> None:
        """Answer each of `raws` 503, half-close it and read what it still sends until it
        closes (all together, at most ``LINGER_S``), then close: nothing is left unread."""
        conns: list[socket.socket | ssl.SSLSocket] = []
        for raw in raws:
            conn: socket.socket | ssl.SSLSocket = raw
            try:
                raw.setblocking(True)
                if self._tls is not None:
                    raw.settimeout(LINGER_S)
                    conn = self._tls.wrap_socket(raw, server_side=True)
                _read_until(conn, b"\r\n\r\n", LINGER_S)  # the request's head
                conn.settimeout(LINGER_S)
                conn.sendall(_ANSWER)
                if isinstance(conn, ssl.SSLSocket):
                    conn = conn.unwrap()
                conn.shutdown(socket.SHUT_WR)
                conns.append(conn)
                self.refused += 1
            except (OSError, ValueError):
                with contextlib.suppress(OSError):
                    conn.close()  # the client went away first
        end = time.monotonic() + LINGER_S
        while conns and (left := end - time.monotonic()) > 0:
            try:
                ready, _, _ = select.select(conns, [], [], left)
            except (OSError, ValueError):
                break
            for conn in ready:
                try:
                    conn.setblocking(False)
                    chunk = conn.recv(65536)  # its body; b"" once the client closed
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    conns.remove(conn)
                    with contextlib.suppress(OSError):
                        conn.close()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()

    def close(self) -> None:
        """Stop the thread, take no new connection, answer those still queued, then close the
        listening socket (with nothing queued: no reset)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        _drop_new_connections(self._socket)
        self._answer(self._accept(0.02))
        with contextlib.suppress(OSError):
            self._socket.close()
        if self.refused:
            log.info("web port: answered %d connection(s) 503 while stopping", self.refused)
