"""In-process servers for tests: one way to start them, one place that stops them (the
``serve`` and ``serve_module`` fixtures of conftest.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hortus.server import RunningServer, ServerConfig


class Servers:
    """Starts in-process servers on free local ports, ``serve(config, tls=..., web=...,
    metrics_port=...)`` (the arguments of ``hortus.server.build_server``), and stops every one
    it started when its fixture's scope ends: the one way tests get a server."""

    def __init__(self) -> None:
        self._running: list[RunningServer] = []

    def __call__(self, config: ServerConfig | None = None, **options: Any) -> RunningServer:
        from hortus.server import build_server

        server = build_server("127.0.0.1:0", config, **options)
        self._running.append(server)
        return server

    def stop_all(self) -> None:
        while self._running:
            self._running.pop().stop(0)
