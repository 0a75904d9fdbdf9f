"""One server per port: a second ``hortus serve --workers 2`` on the ports of a running worker
group fails with a clear message instead of silently splitting the traffic through
``SO_REUSEPORT``, while the first group's workers keep sharing their ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest

from hortus.server.portlock import lock_port
from hortus.server.routing import token_worker
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_lock_port_is_exclusive_and_released() -> None:
    port = _free_port()
    first = lock_port(f"127.0.0.1:{port}", port)
    with pytest.raises(OSError, match="another hortus server already serves port"):
        lock_port(f"0.0.0.0:{port}", port)  # whatever the host: the port is the same
    first.close()
    lock_port(f"127.0.0.1:{port}", port).close()  # free again once released


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )


@contextmanager
def _group(grpc_port: int, web_port: int) -> Iterator[subprocess.Popen[str]]:
    proc = _serve("--address", f"127.0.0.1:{grpc_port}", "--web-address", f"127.0.0.1:{web_port}", "--workers", "2")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line + (proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait()


def _second_fails(grpc_port: int, web_port: int) -> str:
    second = _serve("--address", f"127.0.0.1:{grpc_port}", "--web-address", f"127.0.0.1:{web_port}", "--workers", "2")
    try:
        out, err = second.communicate(timeout=120)
    finally:
        if second.poll() is None:
            second.kill()
            second.wait()
    assert second.returncode != 0, out
    assert "listening" not in out, out
    return err


def test_a_second_worker_group_on_the_same_ports_fails() -> None:
    grpc_port, web_port = _free_port(), _free_port()
    with _group(grpc_port, web_port) as first:
        err = _second_fails(grpc_port, web_port)
        assert f"127.0.0.1:{grpc_port}" in err and "another hortus server" in err, err
        # the same web port beside another gRPC port: refused too
        err = _second_fails(_free_port(), web_port)
        assert f"127.0.0.1:{web_port}" in err and "another hortus server" in err, err
        # the first group still serves, both its workers sharing the port: over separate
        # connections, analyses are answered by each (their continuation tokens name it)
        workers: set[int | None] = set()
        for i in range(40):
            options = [("grpc.use_local_subchannel_pool", 1), ("hortus.test.channel", i)]
            with grpc.insecure_channel(f"127.0.0.1:{grpc_port}", options=options) as ch:
                stub = advisor_pb2_grpc.AdvisorStub(ch)  # type: ignore[no-untyped-call]
                if i == 0:
                    position = stub.NewGame(pb.NewGameRequest(game="botanik", seed=1), timeout=30).info.position
                request = pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(iterations=20, seed=1, threads=1))
                workers.add(token_worker(list(stub.Analyze(request, timeout=30))[-1].continuation))
            if workers == {0, 1}:
                break
        assert workers == {0, 1}
        assert first.poll() is None
