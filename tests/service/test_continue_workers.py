"""Continuations across worker processes: ``hortus serve --workers 2``, every call on a new
connection (as a browser that does not pin one), so the kernel spreads the calls over both
workers. An ``Analyze`` then a ``continue_from`` of its token: the continuation reaches the
worker that keeps the tree (routed there by the worker that took the connection), never
NOT_FOUND "kept by another server process"; on the gRPC port and on the web port alike, and
``SuggestMove``'s continuations too."""

from __future__ import annotations

import base64
import http.client
import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from hortus.server.routing import token_worker
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc

PAIRS = 30
LIMITS = pb.SearchLimits(iterations=200, seed=5, threads=1)


@pytest.fixture(scope="module")
def group() -> Iterator[tuple[int, int]]:
    """A two-worker server: (gRPC port, web port)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve", "--address", "127.0.0.1:0", "--workers", "2", "--grace-seconds", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line, line
        grpc_port = int(line.rsplit(":", 1)[1])
        proc.stdout.readline()  # the worker pids
        web = proc.stdout.readline()
        assert "hortus web" in web, web
        yield grpc_port, int(web.rsplit(":", 1)[1])
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _stub(port: int, i: int) -> tuple[grpc.Channel, Any]:
    """A channel of its own (a new connection: the kernel picks the worker)."""
    channel = grpc.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1), ("hortus.test.channel", i)]
    )
    return channel, advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call]


def _analyze_grpc(port: int, i: int, position: pb.Position, token: str) -> tuple[str, str]:
    """(code, continuation token) of one Analyze on a new connection."""
    channel, stub = _stub(port, i)
    try:
        answers = list(stub.Analyze(pb.AnalyzeRequest(position=position, limits=LIMITS, continue_from=token), timeout=60))
        return "OK", answers[-1].continuation
    except grpc.RpcError as error:
        return error.code().name, ""
    finally:
        channel.close()


def _envelope(data: bytes) -> bytes:
    return b"\0" + struct.pack(">I", len(data)) + data


def _analyze_web(port: int, position: pb.Position, token: str) -> tuple[str, str]:
    """(code, continuation token) of one Analyze over Connect (JSON) on a new connection."""
    body: dict[str, Any] = {
        "position": {"game": position.game, "encoded": base64.b64encode(position.encoded).decode()},
        "limits": {"iterations": LIMITS.iterations, "seed": str(LIMITS.seed), "threads": LIMITS.threads},
    }
    if token:
        body["continueFrom"] = token
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(
            "POST",
            "/hortus.v1.Advisor/Analyze",
            body=_envelope(json.dumps(body).encode()),
            headers={"Content-Type": "application/connect+json", "Connection": "close"},
        )
        data = conn.getresponse().read()
    finally:
        conn.close()
    messages = []
    while data:
        flags, size = data[0], struct.unpack(">I", data[1:5])[0]
        messages.append((flags, json.loads(data[5 : 5 + size] or b"{}")))
        data = data[5 + size :]
    flags, end = messages[-1]
    assert flags & 2, messages
    if "error" in end:
        return str(end["error"]["code"]).upper(), ""
    return "OK", str(messages[-2][1]["continuation"])


def _position(port: int) -> pb.Position:
    channel, stub = _stub(port, -1)
    with channel:
        position: pb.Position = stub.NewGame(pb.NewGameRequest(game="botanik", seed=7), timeout=60).info.position
        return position


def _pairs(analyze: Any) -> tuple[list[str], set[int]]:
    """The codes of PAIRS continuations, and the workers that issued the first tokens."""
    codes, workers = [], set()
    for i in range(PAIRS):
        code, token = analyze(2 * i, "")
        assert code == "OK" and token, code
        first = token_worker(token)
        assert first is not None, token
        workers.add(first)
        code, continued = analyze(2 * i + 1, token)
        codes.append(code)
        if code == "OK":  # answered (and kept again) by the worker that keeps the tree
            assert token_worker(continued) == first, (token, continued)
    return codes, workers


def test_grpc_continuations_on_new_connections_reach_their_worker(group: tuple[int, int]) -> None:
    grpc_port, _ = group
    position = _position(grpc_port)
    codes, workers = _pairs(lambda i, token: _analyze_grpc(grpc_port, i, position, token))
    assert workers == {0, 1}  # the calls were spread: some continuations arrived at the other one
    assert codes == ["OK"] * PAIRS, codes


def test_web_continuations_on_new_connections_reach_their_worker(group: tuple[int, int]) -> None:
    grpc_port, web_port = group
    position = _position(grpc_port)
    codes, workers = _pairs(lambda i, token: _analyze_web(web_port, position, token))
    assert workers == {0, 1}
    assert codes == ["OK"] * PAIRS, codes


def test_a_routed_continuation_keeps_its_errors(group: tuple[int, int]) -> None:
    """A token continued twice: the second is NOT_FOUND from the worker that keeps nothing
    under it any more (the forwarded answer's code and field), whichever worker took it."""
    grpc_port, _ = group
    position = _position(grpc_port)
    code, token = _analyze_grpc(grpc_port, 0, position, "")
    assert code == "OK"
    assert _analyze_grpc(grpc_port, 1, position, token)[0] == "OK"
    for i in range(2, 8):
        assert _analyze_grpc(grpc_port, i, position, token)[0] == "NOT_FOUND"


def test_suggest_move_continuations_reach_their_worker(group: tuple[int, int]) -> None:
    """The AI's turn of several decisions, each SuggestMove on a new connection with the
    previous answer's continuation."""
    from hortus import games
    from hortus.games import CHANCE

    grpc_port, _ = group
    codes: list[str] = []
    for seed in range(12):
        state = games.get("botanical_lab").new_game(players=2, seed=seed)
        while state.current_player == CHANCE:
            state.resolve_chance(__import__("random").Random(seed))
        token, seat = "", state.current_player
        for i in range(3):
            channel, stub = _stub(grpc_port, 100 * seed + i)
            request = pb.SuggestMoveRequest(
                position=pb.Position(game="botanical_lab", encoded=state.encode()), limits=LIMITS, continue_from=token
            )
            try:
                answer = stub.SuggestMove(request, timeout=60)
                codes.append("OK")
            except grpc.RpcError as error:
                codes.append(error.code().name)
                break
            finally:
                channel.close()
            state.apply(answer.action.id)
            token = answer.continuation
            if not token or state.current_player != seat:
                break
    assert codes.count("OK") > 12, codes  # some calls continued a turn
    assert set(codes) == {"OK"}, codes


class _Context:
    def __init__(self, peer: str, metadata: tuple[tuple[str, str], ...]) -> None:
        self._peer, self._metadata = peer, metadata

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata


def test_a_forwarded_identity_is_believed_only_from_the_private_socket() -> None:
    from hortus.server.cache_scope import client_identity
    from hortus.server.routing import FORWARDED_CLIENT

    forged = ((FORWARDED_CLIENT, "ip:6.6.6.6"),)
    assert client_identity(_Context("ipv4:127.0.0.1:5000", forged)) == "ip:127.0.0.1"
    assert client_identity(_Context("web:127.0.0.1:5000", forged)) == "ip:127.0.0.1"
    assert client_identity(_Context("unix:/tmp/hortus-workers-x/0.sock", forged)) == "ip:6.6.6.6"


def test_the_private_sockets_are_reachable_by_the_servers_user_only(group: tuple[int, int]) -> None:
    """The workers' unix sockets (no TLS, no client certificate) sit in a folder of mode 0700."""
    try:
        with open("/proc/net/unix") as table:
            paths = [line.split()[-1] for line in table if "/hortus-workers-" in line]
    except OSError:
        pytest.skip("no /proc/net/unix")
    assert paths
    for path in paths:
        folder = os.path.dirname(path)
        if os.path.isdir(folder):
            assert os.stat(folder).st_mode & 0o777 == 0o700, folder
