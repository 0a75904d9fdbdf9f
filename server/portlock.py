"""One hortus server per port: an exclusive lock the supervising process holds for each TCP
port it serves.

``hortus serve --workers N`` binds its ports with ``SO_REUSEPORT`` so that its own workers share
them; the kernel lets any other process of the same user do the same, so a second server on
the same address used to print "listening" and silently take half the connections. The parent
of a worker group therefore takes this lock before it reserves a port, and a second server
fails with a clear message while the group's own workers keep sharing.

On Linux the lock is a unix socket bound in the abstract namespace, named after the port: the
kernel refuses a second bind of the name (``EADDRINUSE``) and drops the name when its process
dies, so a crashed server never leaves a stale lock. Elsewhere it is ``flock`` on a file in the
temporary folder, also released at process death.

The lock is per port number, whatever the host: ``0.0.0.0:P`` and ``127.0.0.1:P`` overlap, and
``SO_REUSEPORT`` lets them be bound together."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from typing import IO

__all__ = ["PortLock", "lock_port"]


class PortLock:
    """A held lock on one port; ``close`` (or process death) releases it."""

    def __init__(self, port: int, sock: socket.socket | None = None, file: IO[bytes] | None = None) -> None:
        self.port = port
        self._sock = sock
        self._file = file

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._file is not None:
            self._file.close()  # closing the file drops its flock
            self._file = None

    def __enter__(self) -> PortLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _message(address: str) -> str:
    return (
        f"cannot listen on {address}: another hortus server already serves port {address.rpartition(':')[2]} "
        "(its workers share it through SO_REUSEPORT; a second server would silently split its traffic). "
        "Stop it or choose another port."
    )


def lock_port(address: str, port: int) -> PortLock:
    """The lock of TCP `port` (`address` names it in the error), or OSError (EADDRINUSE) when
    another live process holds it."""
    if sys.platform.startswith("linux"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            # abstract namespace (leading NUL): no file, gone when the process is
            sock.bind(f"\0hortus-tcp-port-{port}")
        except OSError as exc:
            sock.close()
            raise OSError(_message(address)) from exc
        return PortLock(port, sock=sock)
    import fcntl

    path = os.path.join(tempfile.gettempdir(), f"hortus-tcp-port-{port}.lock")
    file = open(path, "ab")  # noqa: SIM115 - held open as the lock
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        file.close()
        raise OSError(_message(address)) from exc
    return PortLock(port, file=file)
