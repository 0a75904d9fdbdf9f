"""``hortus serve --workers N``: N server processes sharing one port (``SO_REUSEPORT``).

The parent creates no gRPC object at all: it reserves the port with a plain socket (when the
address asks for port 0), starts the workers with the ``spawn`` method (fresh interpreters,
so no gRPC state is ever inherited across a fork), waits until each listens, and then only
supervises: a worker that dies is replaced; SIGTERM/SIGINT is passed on to every worker, each
of which turns NOT_SERVING and lets its in-flight calls finish within the grace period.

The kernel spreads *connections* over the workers; a gRPC channel is one connection, so one
client channel talks to one worker. Clients that want every worker (e.g. batch evaluation)
open several channels or streams (``AdvisorClient.evaluate(streams=...)``).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import os
import queue
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import replace
from types import FrameType
from typing import Any, TextIO

from hortus.server.config import ServerConfig
from hortus.server.portlock import PortLock, lock_port

__all__ = ["serve_workers"]

_READY_TIMEOUT_S = 120.0


def _split(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise OSError(f"cannot listen on {address}: expected HOST:PORT")
    return host, int(port)


def _lock_and_reserve(host: str, port: int, locks: list[PortLock]) -> socket.socket:
    """Lock the port (another server holding it: OSError saying so), then reserve it; port 0
    is reserved first, since its number is known only then. The lock goes into `locks`."""
    if port:
        locks.append(lock_port(f"{host}:{port}", port))
    sock = _reserve(host, port)
    if not port:
        try:
            locks.append(lock_port(f"{host}:{sock.getsockname()[1]}", sock.getsockname()[1]))
        except OSError:
            sock.close()
            raise
    return sock


def _reserve(host: str, port: int) -> socket.socket:
    """A bound (not listening) SO_REUSEPORT socket holding the port for the workers."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


def _worker(
    index: int,
    address: str,
    config: ServerConfig,
    tls: Any,
    metrics_port: int | None,
    ready: "multiprocessing.Queue[tuple[int, int]]",
    log_level: str,
    log_format: str,
    web: Any = None,
) -> None:
    """One worker process: a normal server with SO_REUSEPORT (runs in a fresh interpreter)."""
    from hortus.server.app import RunningServer, serve
    from hortus.server.observe import configure_logging

    configure_logging(log_level, log_format, worker=index)

    def on_ready(running: RunningServer) -> None:
        ready.put((index, running.port))

    with open(os.devnull, "w") as quiet:
        serve(address, config, out=quiet, ready=on_ready, tls=tls, metrics_port=metrics_port, web=web)


def serve_workers(
    address: str,
    config: ServerConfig,
    workers: int,
    *,
    tls: Any = None,
    metrics_port: int | None = None,
    out: TextIO | None = None,
    log_level: str = "info",
    log_format: str = "text",
    web: Any = None,
) -> int:
    """Run `workers` server processes on `address` until SIGTERM/SIGINT; returns 0.

    `metrics_port` (if given and not 0) is the first worker's metrics port, the others use the
    next ones (each process serves its own metrics). `web` (``hortus.server.web.WebOptions``):
    every worker also serves the web front door, on one port shared the same way."""
    out = out if out is not None else sys.stdout
    if workers < 1:
        raise ValueError("workers must be >= 1")
    host, port = _split(address)
    # held until this supervisor exits: a second server on these ports fails, while this
    # group's workers (and their replacements) keep sharing them through SO_REUSEPORT
    locks: list[PortLock] = []
    try:
        reservation = _lock_and_reserve(host, port, locks)
    except OSError:
        for lock in locks:
            lock.close()
        raise
    port = reservation.getsockname()[1]
    bound = f"{host}:{port}"
    web_reservation = None
    if web is not None:
        from dataclasses import replace as _replace

        web_host, web_port = _split(web.address)
        try:
            web_reservation = _lock_and_reserve(web_host, web_port, locks)
        except OSError:
            reservation.close()
            for lock in locks:
                lock.close()
            raise
        web = _replace(web, address=f"{web_host}:{web_reservation.getsockname()[1]}")
    # each worker also listens on a unix socket of its own in a private folder, where the
    # others route the continuations of the trees it keeps (hortus.server.routing)
    routes = tempfile.mkdtemp(prefix="hortus-workers-")  # mode 0700
    worker_config = replace(config, reuse_port=True, worker_routes=routes)
    context = multiprocessing.get_context("spawn")
    ready: multiprocessing.Queue[tuple[int, int]] = context.Queue()
    stop = threading.Event()

    def start(index: int) -> multiprocessing.process.BaseProcess:
        metrics = None if metrics_port is None else (metrics_port + index if metrics_port else 0)
        proc = context.Process(
            target=_worker,
            args=(index, bound, replace(worker_config, worker_index=index), tls, metrics, ready, log_level, log_format, web),
            name=f"hortus-worker-{index}",
            daemon=False,
        )
        proc.start()
        return proc

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    procs = {i: start(i) for i in range(workers)}
    try:
        started: set[int] = set()
        limit = time.monotonic() + _READY_TIMEOUT_S
        while len(started) < workers and not stop.is_set():
            try:
                index, _ = ready.get(timeout=0.2)
                started.add(index)
            except queue.Empty:
                dead = [i for i, p in procs.items() if not p.is_alive() and i not in started]
                if dead or time.monotonic() > limit:
                    raise OSError(f"cannot listen on {bound}: worker {dead[0] if dead else '?'} failed to start")
        reservation.close()
        if web_reservation is not None:
            web_reservation.close()
        print(f"hortus advisor listening on {bound}", file=out, flush=True)
        pids = " ".join(str(p.pid) for p in procs.values())
        print(f"hortus advisor: {workers} worker processes (SO_REUSEPORT), pids {pids}", file=out, flush=True)
        if web is not None:
            scheme = "https" if tls is not None and not web.plaintext else "http"
            print(f"hortus web (Connect, gRPC-Web) on {scheme}://{web.address}", file=out, flush=True)
            from hortus.server.web import origins_line  # the web extra is there when web is set

            print(origins_line(tuple(web.cors_origins)), file=out, flush=True)
        while not stop.wait(0.5):
            for index, proc in list(procs.items()):
                if not proc.is_alive() and not stop.is_set():
                    print(f"hortus advisor: worker {index} exited ({proc.exitcode}); restarting", file=out, flush=True)
                    procs[index] = start(index)
        grace = config.grace_seconds
        print(f"hortus advisor shutting down (grace {grace:g} s)", file=out, flush=True)
    finally:
        reservation.close()
        if web_reservation is not None:
            web_reservation.close()
        for proc in procs.values():
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + config.grace_seconds + 10.0
        for proc in procs.values():
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()
        for lock in locks:  # only once no worker of this group serves the ports any more
            lock.close()
        shutil.rmtree(routes, ignore_errors=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
