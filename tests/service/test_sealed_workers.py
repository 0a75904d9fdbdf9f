"""Sealed positions across processes: ``hortus serve --workers 2`` with the key file given as
``HORTUS_SEAL_KEY`` -- every worker opens every other worker's blobs, and so do the workers
started in place of killed ones (a blob outlives the process that sealed it)."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

pytest.importorskip("cryptography", reason="sealing needs the seal extra: pip install 'hortus[seal]'")

from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc  # noqa: E402
from positions import midgame  # noqa: E402

KEY = base64.b64encode(bytes(range(3, 35))).decode()


def stubs(port: int, count: int) -> list[tuple[grpc.Channel, advisor_pb2_grpc.AdvisorStub]]:
    """`count` separate connections (SO_REUSEPORT spreads connections over the workers)."""
    out = []
    for i in range(count):
        options = [("grpc.use_local_subchannel_pool", 1), ("hortus.test.channel", i)]
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=options)
        out.append((channel, advisor_pb2_grpc.AdvisorStub(channel)))
    return out


def opens(stub: advisor_pb2_grpc.AdvisorStub, blob: bytes) -> int:
    """The seat to move of a sealed position, as a worker reads it (wait_for_ready: a worker
    may be restarting)."""
    answer = stub.LegalActions(pb.LegalActionsRequest(position=pb.Position(sealed=blob)), timeout=60, wait_for_ready=True)
    return int(answer.current_player)


def test_workers_and_their_replacements_open_each_others_blobs(tmp_path: Path) -> None:
    key_file = tmp_path / "seal.keys"
    key_file.write_text(f"k1 {KEY}\n")
    env = dict(os.environ, PYTHONUNBUFFERED="1", HORTUS_SEAL_KEY=str(key_file))
    proc = subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve", "--address", "127.0.0.1:0", "--workers", "2", "--grace-seconds", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    connections: list[tuple[grpc.Channel, advisor_pb2_grpc.AdvisorStub]] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line, line
        port = int(line.rsplit(":", 1)[1])
        workers = proc.stdout.readline()
        pids = [int(p) for p in workers.rsplit("pids", 1)[1].split()]
        assert len(pids) == 2, workers
        connections = stubs(port, 6)
        state = midgame("botanists", 3)
        plain = pb.Position(game="botanists", encoded=state.encode())
        blobs = []
        for _, stub in connections:
            version = stub.GetVersion(pb.GetVersionRequest(), timeout=30, wait_for_ready=True)
            assert version.sealing  # the key came from HORTUS_SEAL_KEY
            info = stub.ApplyActions(pb.ApplyActionsRequest(position=plain, seal_for_seat=0), timeout=30).info
            blobs.append(info.position.sealed)
        for _, stub in connections:
            assert {opens(stub, blob) for blob in blobs} == {state.current_player}
        # both workers killed and replaced: the blobs open on processes that never sealed them
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        restarted = 0
        limit = time.monotonic() + 60
        while restarted < 2 and time.monotonic() < limit:
            restarted += "restarting" in proc.stdout.readline()
        assert restarted == 2
        for channel, _ in connections:
            channel.close()
        connections = stubs(port, 2)
        for _, stub in connections:
            assert {opens(stub, blob) for blob in blobs} == {state.current_player}
    finally:
        for channel, _ in connections:
            channel.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
