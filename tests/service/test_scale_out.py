"""Real server processes: ``hortus serve --workers 2`` on one port, a round-robin client over
two servers with one killed in the middle of a batch (every position still answered exactly
once), and the SIGTERM drain (NOT_SERVING, in-flight calls finish, exit)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest
from grpc_health.v1 import health_pb2

from hortus.clients import AdvisorClient, EvaluationItem

GAME = "botanik"


@contextmanager
def serve_process(*extra: str) -> Iterator[tuple[subprocess.Popen[str], int, list[str]]]:
    """A ``hortus serve`` process on a free port; yields it, its port and its first lines."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve", "--address", "127.0.0.1:0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line, line
        lines = [line]
        if "--workers" in extra and extra[extra.index("--workers") + 1] != "1":
            lines.append(proc.stdout.readline())
        yield proc, int(line.rsplit(":", 1)[1]), lines
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def health(channel: grpc.Channel) -> int:
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        health_pb2.HealthCheckRequest.SerializeToString,
        health_pb2.HealthCheckResponse.FromString,
    )
    status: int = check(health_pb2.HealthCheckRequest(), timeout=10).status
    return status


def test_workers_share_one_port() -> None:
    with serve_process("--workers", "2", "--grace-seconds", "2") as (proc, port, lines):
        assert "2 worker processes" in lines[1]
        pids = [int(p) for p in lines[1].rsplit("pids", 1)[1].split()]
        assert len(pids) == 2 and proc.pid not in pids
        # separate channels (separate connections) reach the workers; all answer
        for i in range(8):
            options = [("grpc.use_local_subchannel_pool", 1), ("hortus.test.channel", i)]
            with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as ch:
                assert health(ch) == health_pb2.HealthCheckResponse.SERVING
            with AdvisorClient(f"127.0.0.1:{port}", timeout=30) as client:
                assert client.get_version().protocol == "hortus.v1"
        # a killed worker is replaced
        os.kill(pids[0], signal.SIGKILL)
        restarted = None
        limit = time.monotonic() + 60
        while restarted is None and time.monotonic() < limit:
            line = proc.stdout.readline() if proc.stdout else ""
            if "restarting" in line:
                restarted = line
        assert restarted is not None and "worker 0" in restarted
        with AdvisorClient(f"127.0.0.1:{port}", timeout=30, wait_for_ready=True) as client:
            answered = False
            while not answered and time.monotonic() < limit:
                try:
                    answered = bool(client.get_version().protocol)
                except Exception:  # noqa: BLE001 - a connection to the killed worker
                    time.sleep(0.1)
        assert answered
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        for pid in pids[1:]:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def test_round_robin_batch_survives_a_killed_server() -> None:
    with (
        serve_process("--workers", "1", "--max-concurrent-searches", "1") as (first, port1, _),
        serve_process("--workers", "1", "--max-concurrent-searches", "1") as (second, port2, _),
    ):
        with AdvisorClient([f"127.0.0.1:{port1}", f"127.0.0.1:{port2}"], timeout=60, wait_for_ready=True) as client:
            position = client.new_game(GAME, seed=1).position
            items = [EvaluationItem(f"pos{i}", position, iterations=1500, seed=i) for i in range(30)]
            answered: list[str] = []
            killed = threading.Event()
            for result in client.evaluate(items, streams=2, window=2, retries=5, timeout=120):
                assert result.ok, result.error
                answered.append(result.id)
                if len(answered) == 5:
                    second.kill()  # in the middle of the batch: its in-flight positions are lost
                    killed.set()
            assert killed.is_set()
            assert sorted(answered) == sorted(item.id for item in items)  # each exactly once


def test_sigterm_drains_in_flight_calls() -> None:
    with serve_process("--workers", "1", "--grace-seconds", "10") as (proc, port, _):
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            watch = ch.unary_stream(
                "/grpc.health.v1.Health/Watch",
                health_pb2.HealthCheckRequest.SerializeToString,
                health_pb2.HealthCheckResponse.FromString,
            )(health_pb2.HealthCheckRequest(), timeout=30)
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
            with AdvisorClient(f"127.0.0.1:{port}", timeout=30) as client:
                position = client.new_game(GAME, seed=2).position
                outcome: dict[str, object] = {}

                def search() -> None:
                    try:
                        outcome["answer"] = client.rank_moves(position, time_ms=1500)
                    except Exception as exc:  # noqa: BLE001 - reported below
                        outcome["error"] = exc

                worker = threading.Thread(target=search)
                worker.start()
                time.sleep(0.4)  # the search is running
                proc.send_signal(signal.SIGTERM)
                assert next(watch).status == health_pb2.HealthCheckResponse.NOT_SERVING
                watch.cancel()
                worker.join(30)
                assert "error" not in outcome, outcome.get("error")
                answer = outcome["answer"]
                assert not answer.partial  # type: ignore[attr-defined]  # ran its full time
                # new calls are refused once draining
                with pytest.raises(Exception):
                    client.get_version(timeout=2)
        assert proc.wait(timeout=30) == 0
