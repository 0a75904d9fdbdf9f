"""Load: N concurrent clients for T seconds against a ``hortus serve`` process on loopback.

Starts ``hortus serve --address 127.0.0.1:0 --workers W`` itself (a subprocess; nothing but
loopback is ever contacted), warms it up, then runs N clients (asyncio, one channel and so one
connection each) for T seconds. Each client loops without think time over a weighted mix of
every RPC on positions of every registered game: ListGames, GetVersion, NewGame, LegalActions,
ApplyActions, ViewPosition, SuggestMove (small budgets; levels; a long budget under a short
deadline, which must come back as a partial answer), RankMoves, Analyze (streaming; most calls
cancelled by the client after a few partial results) and EvaluatePositions (small batches,
every id checked to come back exactly once). A client told RESOURCE_EXHAUSTED waits the
RetryInfo delay the server sent, as a well-behaved client does.

Reported: answers per method by status code (a client's own cancel is counted as
``CANCELLED_BY_CLIENT``, not an error), latency percentiles per method (all answers, ms), the
batch positions' answers, and the server processes' resident memory (VmRSS of
/proc/PID/status) at start, after the warm-up and at the end, plus their peak (VmHWM).
The warm-up first sweeps every RPC of the mix on a position of every game from several
connections at once (so that each server process sees each, whatever the kernel's spread of
connections), retrying a refused search until it runs, then runs the mix for --warmup seconds:
the baseline is taken with every code path, game and buffer already used.
Hostile traffic is mixed in: malformed request bytes (a string field holding invalid
UTF-8, a truncated message, random bytes that the request type cannot parse) sent to every
RPC, a batch with a malformed message in its middle, and batches whose positions' budgets far
exceed the call's deadline. Malformed calls must end INVALID_ARGUMENT (or RESOURCE_EXHAUSTED);
the deadline batches must end OK with every position answered (DEADLINE_EXCEEDED inside an
answer is an answer).

Reported besides: answers per code over everything, p50/p99 per RPC, and the deadline misses:
calls that ended DEADLINE_EXCEEDED (gRPC ends a call so when its answer has not arrived by the
deadline) and batch positions left unanswered — target 0, like INTERNAL and UNKNOWN.
Target: no status other than OK, RESOURCE_EXHAUSTED, the clients' own
cancels and, for malformed bytes, INVALID_ARGUMENT; no deadline miss; memory after the run
within 10% of memory after the warm-up.

The web port: ``--transport connect`` runs the same mix against the server's web
port instead, the clients taking turns at Connect JSON, Connect binary and gRPC-Web (the
official ``connectrpc`` client, one HTTP/1.1 connection pool each); ``--transport both`` makes
every other client a gRPC one, so both ports load one server (and its one admission control)
at once. Over HTTP/1.1 there is no client stream: a web client's batches are
``EvaluateBatch`` (a server stream; every position checked to come back exactly once), its
"malformed batch" is a batch holding one position whose bytes are not a position (that one
answered ``INVALID_ARGUMENT`` inside its answer, the others analysed, the call OK), and its
malformed bytes go through each protocol's own framing (for Connect JSON: invalid UTF-8, cut
JSON, a field of the wrong type, random bytes). Everything is reported per transport.

``--attack`` runs, in another process beside the measured load, what a hostile client does to
the web port: ``--slow-connections`` slowloris connections (a request head sent one header
line every 2 s and never ended, reconnecting once closed), hostile HTTP requests one after
another (bytes that are not HTTP, a null byte in the path, a name over 255 bytes, a 20 KB and
a 200 KB URL, Content-Length with Transfer-Encoding, native gRPC, gRPC-Web text, a foreign
Host, envelope framing mistakes, cut JSON), and probes every second (gRPC health on a new
connection, the web port's ``/readyz``). Target besides: every probe answered OK, every hostile
request answered as designed (its 4xx, or ``invalid_argument``), no slow connection held
longer than 15 s (the request timeout is 10 s).

    python bench/load.py [--clients 48] [--seconds 60] [--workers 2] [--warmup 10]
                         [--transport grpc|connect|both] [--attack [--slow-connections 200]]
                         [--seed 1] [--server-arg=--max-concurrent-searches=2 ...]
                         [--server-env MALLOC_ARENA_MAX=2 ...]

Prints a table per aspect, then one JSON line with everything.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import grpc  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped, unused-ignore]  # noqa: E402

from _common import machine, random_decision, table, write_result  # noqa: E402
from hortus import games  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc  # noqa: E402

try:  # the web extra: only --transport connect|both needs it
    from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
    from connectrpc.errors import ConnectError
    from connectrpc.protocol import ProtocolType
    from pyqwest import Client as HTTPClient
    from pyqwest import HTTPTransport

    from hortus.v1.advisor_connect import AdvisorClient
except ImportError:  # pragma: no cover - reported by main() when a web transport is asked for
    AdvisorClient = None

MAX_CLIENTS = 512
MAX_SECONDS = 600.0
CALL_TIMEOUT_S = 30.0
CLIENT_GRACE_S = 5.0  # a web call unanswered this long after its deadline: the client gives up
EXPECTED = {"OK", "RESOURCE_EXHAUSTED", "CANCELLED_BY_CLIENT"}
EXPECTED_MALFORMED = {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"}  # the answer to bytes that do not parse
UNARY_METHODS = ("ListGames", "GetVersion", "NewGame", "LegalActions", "ApplyActions", "SuggestMove", "RankMoves", "ViewPosition")

# (operation, weight): cheap calls dominate, as at a table of players asking for hints
MIX = (
    ("ListGames", 1),
    ("GetVersion", 1),
    ("NewGame", 2),
    ("LegalActions", 3),
    ("ApplyActions", 3),
    ("ViewPosition", 1),
    ("SuggestMove", 2),
    ("SuggestMove(level)", 1),
    ("SuggestMove(deadline)", 1),
    ("RankMoves", 2),
    ("Analyze", 1),
    ("EvaluatePositions", 1),
    ("EvaluatePositions(deadline)", 1),
    ("Malformed", 2),
    ("EvaluatePositions(malformed)", 1),
)


WEB_KINDS = ("connect-json", "connect-proto", "grpc-web")
TRANSPORTS = {
    "grpc": ("grpc",),
    "connect": WEB_KINDS,
    # every other client on gRPC, the rest taking turns at the web protocols
    "both": ("grpc", "connect-json", "grpc", "connect-proto", "grpc", "grpc-web"),
}


def expected(method: str) -> set[str]:
    return EXPECTED_MALFORMED if method.startswith("Malformed") or method.endswith("(malformed)") else EXPECTED


def request_class(method: str) -> Any:
    return getattr(pb, f"{method}Request")


def malformed_bytes(rng: random.Random, method: str) -> tuple[str, bytes]:
    """(kind, bytes) that `method`'s request type cannot parse."""
    cls = request_class(method)
    while True:
        kind = rng.choice(("utf8", "truncated", "random"))
        if kind == "utf8":
            data = b"\x0a\x02\xff\xfe"  # field 1 as a string of invalid UTF-8
        elif kind == "truncated":
            data = b"\x0a\x40" + bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 60)))
        else:
            data = rng.randbytes(64)
        try:
            cls.FromString(data)
        except Exception:  # noqa: BLE001 - DecodeError: what we want
            return kind, data


# --- positions --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    """A decision position of one game and one legal action there."""

    game: str
    encoded: bytes
    action: int
    notation: str


def samples(per_game: int, seed: int) -> list[Sample]:
    """Decision positions of every registered game, reached by seeded random play."""
    rng = random.Random(seed)
    found: list[Sample] = []
    for name in games.names():
        game = games.get(name)
        count = 0
        while count < per_game:
            players = rng.randint(game.min_players, game.max_players)
            state = random_decision(game, players, rng.getrandbits(32), rng.randrange(0, 40), rng)
            if state is None:
                continue
            action = rng.choice(state.legal_actions())
            found.append(Sample(name, state.encode(), action, state.action_to_string(action)))
            count += 1
    return found


# --- the server -------------------------------------------------------------------------------
class Server:
    """``hortus serve --workers W`` on a free loopback port (and, with `web`, its web port's
    URL); knows its processes' pids."""

    def __init__(self, workers: int, extra: list[str], environment: dict[str, str] | None = None, web: bool = False) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(environment or {}))
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hortus.cli",
                "serve",
                "--address",
                "127.0.0.1:0",
                "--workers",
                str(workers),
                "--log-level",
                "error",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.stop()
            raise RuntimeError(f"server did not start: {line!r}")
        self.target = line.split("listening on ", 1)[1].strip()
        self.pids = [self.proc.pid]
        if workers > 1:
            line = self.proc.stdout.readline()
            self.pids = [int(p) for p in line.rsplit("pids", 1)[1].split()]
        self.supervisor = self.proc.pid if workers > 1 else None
        self.web: str | None = None
        if web:  # the web port's line comes next (a free port, as --address has port 0)
            line = self.proc.stdout.readline()
            if "hortus web" not in line:
                self.stop()
                raise RuntimeError(f"the server has no web port (pip install 'hortus[web]'?): {line!r}")
            self.web = line.rsplit(" on ", 1)[1].strip()

    def memory(self) -> dict[str, int]:
        """VmRSS and VmHWM (kB) summed over the serving processes."""
        totals = {"rss_kb": 0, "hwm_kb": 0}
        for pid in self.pids:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        totals["rss_kb"] += int(line.split()[1])
                    elif line.startswith("VmHWM:"):
                        totals["hwm_kb"] += int(line.split()[1])
        return totals

    def alive(self) -> bool:
        return self.proc.poll() is None and all(os.path.exists(f"/proc/{pid}") for pid in self.pids)

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


# --- statistics -------------------------------------------------------------------------------
@dataclass
class Stats:
    codes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    latency_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    batch_answers: Counter[str] = field(default_factory=Counter)
    batch_lost: int = 0
    batch_duplicated: int = 0
    partial_by_deadline: int = 0
    analyze_finals: Counter[int] = field(default_factory=Counter)
    error_samples: Counter[str] = field(default_factory=Counter)
    timeline: list[tuple[float, float]] = field(default_factory=list)
    deadline_misses: int = 0  # calls ended DEADLINE_EXCEEDED: no answer by the deadline
    late_seen_by_client: int = 0  # OK, but the client's event loop saw it after the deadline
    malformed_batch_answered_before: int = 0
    bad_position_answers: Counter[str] = field(default_factory=Counter)  # web: the not-a-position one

    def record(self, method: str, code: str, started: float, detail: str = "", timeout: float | None = None) -> None:
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        self.codes[method][code] += 1
        self.latency_ms[method].append(elapsed_ms)
        if code == "DEADLINE_EXCEEDED":
            self.deadline_misses += 1
        elif code == "OK" and timeout is not None and elapsed_ms > timeout * 1000.0:
            self.late_seen_by_client += 1
        if code not in expected(method) and len(self.error_samples) < 50:
            self.error_samples[f"{method}: {code} {detail}"[:300]] += 1


def retry_delay(error: grpc.aio.AioRpcError) -> float:
    """The RetryInfo delay of a RESOURCE_EXHAUSTED answer (seconds; 0.1 if none)."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return float(info.retry_delay.ToNanoseconds()) / 1e9
    return 0.1


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --- one client ------------------------------------------------------------------------------
class Client:
    def __init__(self, index: int, target: str, pool: list[Sample], seed: int) -> None:
        # a channel option unique to this client: its own connection (the kernel spreads
        # connections over the worker processes)
        options = [("grpc.use_local_subchannel_pool", 1), ("hortus.load.client", index)]
        self.channel = grpc.aio.insecure_channel(target, options=options)
        self.stub: Any = advisor_pb2_grpc.AdvisorStub(self.channel)  # type: ignore[no-untyped-call, unused-ignore]
        self.pool = pool
        self.rng = random.Random(seed)
        self.index = index
        self.batches = 0

    def position(self, sample: Sample) -> pb.Position:
        return pb.Position(game=sample.game, encoded=sample.encoded)

    kind = "grpc"

    async def close(self) -> None:
        await self.channel.close()

    async def unary(self, stats: Stats, method: str, rpc: str, request: Any, timeout: float) -> Any:
        """Call `rpc` (e.g. "ListGames"), counted as `method`; the answer, or None."""
        call = getattr(self.stub, rpc)
        started = time.perf_counter()
        try:
            response = await call(request, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
            stats.record(method, code, started, exc.details() or "", timeout)
            if code == "RESOURCE_EXHAUSTED":
                await asyncio.sleep(retry_delay(exc))
            return None
        stats.record(method, "OK", started, timeout=timeout)
        return response

    async def malformed(self, stats: Stats) -> None:
        """Bytes the request type cannot parse, to a random RPC (Analyze too)."""
        method = self.rng.choice(UNARY_METHODS + ("Analyze",))
        kind, data = malformed_bytes(self.rng, method)
        path = f"/hortus.v1.Advisor/{method}"
        label = f"Malformed({kind})"
        started = time.perf_counter()
        try:
            if method == "Analyze":
                async for _ in self.channel.unary_stream(path)(data, timeout=10):
                    pass
            else:
                await self.channel.unary_unary(path)(data, timeout=10)
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
            stats.record(label, code, started, exc.details() or "", 10)
            if code == "RESOURCE_EXHAUSTED":
                await asyncio.sleep(retry_delay(exc))
            return
        stats.record(label, "OK", started, f"{method} accepted malformed bytes", 10)

    async def analyze(self, stats: Stats, sample: Sample | None = None) -> None:
        sample = sample or self.rng.choice(self.pool)
        cancel_after = self.rng.choice((1, 2, 3, None))  # None: read to the final result
        request = pb.AnalyzeRequest(
            position=self.position(sample),
            limits=pb.SearchLimits(time_ms=300, seed=self.rng.getrandbits(32)),
            interval_ms=50,
            max_moves=3,
        )
        started = time.perf_counter()
        call = self.stub.Analyze(request, timeout=CALL_TIMEOUT_S)
        seen = finals = 0
        try:
            async for response in call:
                seen += 1
                finals += int(response.final)
                if cancel_after is not None and seen >= cancel_after and not response.final:
                    call.cancel()
                    stats.record("Analyze", "CANCELLED_BY_CLIENT", started)
                    return
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
            stats.record("Analyze", code, started, exc.details() or "")
            if code == "RESOURCE_EXHAUSTED":
                await asyncio.sleep(retry_delay(exc))
            return
        except asyncio.CancelledError:
            if call.cancelled():
                stats.record("Analyze", "CANCELLED_BY_CLIENT", started)
                return
            raise
        stats.analyze_finals[finals] += 1
        stats.record("Analyze", "OK" if finals == 1 else "NO_SINGLE_FINAL", started)

    async def evaluate(self, stats: Stats, kind: str = "") -> None:
        """A batch of 3-8 positions. `kind` "deadline": each position's time budget (2 s) far
        over the call's deadline (1.5 s), so most positions wait for a slot the deadline does
        not leave: each must still be answered (DEADLINE_EXCEEDED inside the answer) and the
        call end OK. "malformed": a message that does not parse after the first positions:
        those are answered, then the call ends INVALID_ARGUMENT."""
        self.batches += 1
        size = self.rng.randint(3, 8)
        ids = [f"c{self.index}b{self.batches}p{i}" for i in range(size)]
        method = f"EvaluatePositions({kind})" if kind else "EvaluatePositions"
        if kind == "deadline":
            limits = [pb.SearchLimits(time_ms=2000, seed=n) for n in range(size)]
            timeout = 1.5
        else:
            limits = [pb.SearchLimits(iterations=self.rng.choice((20, 50, 100)), seed=n) for n in range(size)]
            timeout = CALL_TIMEOUT_S * 2
        requests: list[Any] = [
            pb.EvaluateRequest(id=i, position=self.position(self.rng.choice(self.pool)), limits=limits[n], max_moves=1)
            for n, i in enumerate(ids)
        ]
        if kind == "malformed":
            cut = self.rng.randint(1, size - 1)
            requests = [r.SerializeToString() for r in requests]
            requests.insert(cut, malformed_bytes(self.rng, "Evaluate")[1])
            ids = ids[:cut]  # only those before it are answered
            call = self.channel.stream_stream(
                "/hortus.v1.Advisor/EvaluatePositions", response_deserializer=pb.EvaluateResponse.FromString
            )(iter(requests), timeout=timeout)
        else:
            call = self.stub.EvaluatePositions(iter(requests), timeout=timeout)
        started = time.perf_counter()
        answered: Counter[str] = Counter()
        code, detail = "OK", ""
        try:
            async for answer in call:
                answered[answer.id] += 1
                stats.batch_answers["OK" if answer.WhichOneof("result") == "analysis" else answer.error.code] += 1
        except grpc.aio.AioRpcError as exc:
            code, detail = exc.code().name, exc.details() or ""
        if code == "RESOURCE_EXHAUSTED":  # refused before any position was accepted
            stats.record(method, code, started, detail, timeout)
            await asyncio.sleep(0.1)
            return
        if kind == "malformed" and code == "INVALID_ARGUMENT":
            stats.malformed_batch_answered_before += len(answered)
        lost = sum(1 for i in ids if answered[i] == 0)
        stats.batch_lost += lost
        if lost:
            stats.error_samples[f"{method}: {lost} position(s) unanswered, call {code}"] += 1
        stats.batch_duplicated += sum(n - 1 for n in answered.values() if n > 1)
        stats.record(method, code, started, detail, timeout)

    async def step(self, stats: Stats, op: str, sample: Sample | None = None) -> None:
        """One call of `op`, on `sample` (a random position if None)."""
        rng = self.rng
        sample = sample or rng.choice(self.pool)
        request: Any  # one message type per branch
        if op == "ListGames":
            await self.unary(stats, op, "ListGames", pb.ListGamesRequest(), 10)
        elif op == "GetVersion":
            await self.unary(stats, op, "GetVersion", pb.GetVersionRequest(), 10)
        elif op == "NewGame":
            game = games.get(sample.game)
            request = pb.NewGameRequest(
                game=game.name, players=rng.randint(game.min_players, game.max_players), seed=rng.getrandbits(32)
            )
            await self.unary(stats, op, "NewGame", request, 10)
        elif op == "LegalActions":
            await self.unary(stats, op, "LegalActions", pb.LegalActionsRequest(position=self.position(sample)), 10)
        elif op == "ApplyActions":
            ref = pb.ActionRef(id=sample.action) if rng.random() < 0.5 else pb.ActionRef(notation=sample.notation)
            request = pb.ApplyActionsRequest(position=self.position(sample), actions=[ref])
            await self.unary(stats, op, "ApplyActions", request, 10)
        elif op == "ViewPosition":
            request = pb.ViewPositionRequest(position=self.position(sample), seat=0)
            await self.unary(stats, op, "ViewPosition", request, 10)
        elif op == "SuggestMove":
            limits = pb.SearchLimits(iterations=rng.choice((50, 100, 200)), seed=rng.getrandbits(32))
            await self.unary(
                stats, op, "SuggestMove", pb.SuggestMoveRequest(position=self.position(sample), limits=limits), CALL_TIMEOUT_S
            )
        elif op == "SuggestMove(level)":
            request = pb.SuggestMoveRequest(
                position=self.position(sample), level=rng.choice((1, 2)), limits=pb.SearchLimits(seed=rng.getrandbits(32))
            )
            await self.unary(stats, op, "SuggestMove", request, CALL_TIMEOUT_S)
        elif op == "SuggestMove(deadline)":
            # far more iterations than fit: the deadline cuts the search, the answer is partial
            limits = pb.SearchLimits(iterations=10**6, seed=rng.getrandbits(32))
            response = await self.unary(
                stats, op, "SuggestMove", pb.SuggestMoveRequest(position=self.position(sample), limits=limits), 1.0
            )
            if response is not None and response.analysis.partial:
                stats.partial_by_deadline += 1
        elif op == "RankMoves":
            limits = pb.SearchLimits(iterations=rng.choice((50, 100)), seed=rng.getrandbits(32))
            request = pb.RankMovesRequest(position=self.position(sample), limits=limits, max_moves=5)
            await self.unary(stats, op, "RankMoves", request, CALL_TIMEOUT_S)
        elif op == "Analyze":
            await self.analyze(stats, sample)
        elif op == "EvaluatePositions":
            await self.evaluate(stats)
        elif op == "EvaluatePositions(deadline)":
            await self.evaluate(stats, "deadline")
        elif op == "EvaluatePositions(malformed)":
            await self.evaluate(stats, "malformed")
        elif op == "Malformed":
            await self.malformed(stats)
        else:  # pragma: no cover
            raise AssertionError(op)

    async def run(self, stats: Stats, until: float) -> None:
        ops = [op for op, _ in MIX]
        weights = [w for _, w in MIX]
        while time.monotonic() < until:
            await self.step(stats, self.rng.choices(ops, weights)[0])


def connect_code(error: Any) -> str:
    """The gRPC name of a ``ConnectError``'s code (Connect spells CANCELLED "canceled")."""
    return "CANCELLED" if error.code.name == "CANCELED" else str(error.code.name)


def connect_retry_delay(error: Any) -> float:
    """The RetryInfo delay of a RESOURCE_EXHAUSTED ``ConnectError`` (seconds; 0.1 if none)."""
    for detail in error.details:
        if detail.type_name == "google.rpc.RetryInfo":
            info = error_details_pb2.RetryInfo.FromString(detail.message_bytes)
            return float(info.retry_delay.ToNanoseconds()) / 1e9
    return 0.1


class RawCodec:
    """A connectrpc codec that sends ``bytes`` as they are (the malformed requests) and
    encodes and decodes messages with `base` (JSON or binary)."""

    def __init__(self, base: Any) -> None:
        self.base = base

    def name(self) -> str:
        return str(self.base.name())

    def encode(self, message: Any) -> bytes:
        return bytes(message) if isinstance(message, (bytes, bytearray)) else bytes(self.base.encode(message))

    def decode(self, data: bytes | bytearray, message_class: Any) -> Any:
        return self.base.decode(data, message_class)


def malformed_json(rng: random.Random, rpc: str, sample: Sample) -> tuple[str, bytes]:
    """(kind, bytes) that `rpc`'s request type cannot take as JSON. (Unknown fields are ignored
    by the protobuf JSON mapping, so a field of the wrong type must be one the request has: the
    empty requests of ListGames and GetVersion get the other kinds.)"""
    wrong_type = {
        "NewGame": b'{"players": "many"}',
        "EvaluateBatch": b'{"positions": 5}',
        "ListGames": b"",
        "GetVersion": b"",
    }.get(rpc, b'{"position": 5}')
    kind = rng.choice(("utf8", "truncated", "type", "random") if wrong_type else ("utf8", "truncated", "random"))
    if kind == "utf8":
        return kind, b'{"game": "\xff\xfe"}'
    if kind == "truncated":
        text = json.dumps({"position": {"game": sample.game, "encoded": sample.encoded.hex()}}).encode()
        return kind, text[: rng.randrange(1, len(text) - 1)]
    if kind == "type":
        return kind, wrong_type
    while True:
        data = rng.randbytes(64)
        try:
            json.loads(data)
        except ValueError:
            return kind, data


class WebClient(Client):
    """The same mix on the web port through connectrpc's client: Connect JSON, Connect binary
    (``connect-proto``) or gRPC-Web, over a connection pool of its own (one connection at a
    time, as the client waits for each answer)."""

    def __init__(self, index: int, url: str, pool: list[Sample], seed: int, kind: str) -> None:
        if AdvisorClient is None:
            raise RuntimeError("--transport connect|both needs the web extra: pip install 'hortus[web]'")
        self.kind = kind
        self.http = HTTPClient(HTTPTransport())
        base = google_protobuf_json_codec() if kind == "connect-json" else google_protobuf_binary_codec()
        protocol = ProtocolType.GRPC_WEB if kind == "grpc-web" else ProtocolType.CONNECT
        self.web: Any = AdvisorClient(url, codec=RawCodec(base), protocol=protocol, http_client=self.http, send_compression=None)
        self.pool = pool
        self.rng = random.Random(seed)
        self.index = index
        self.batches = 0

    async def close(self) -> None:
        await self.web.close()

    def _method(self, rpc: str) -> Any:
        return getattr(self.web, re.sub(r"(?<!^)(?=[A-Z])", "_", rpc).lower())

    def _deadline(self, seconds: float) -> dict[str, str]:
        """The call's deadline as the server reads it (``Connect-Timeout-Ms``, gRPC-Web's
        ``grpc-timeout``). The client does not enforce it itself: its timer runs on this
        process's event loop, shared by every client, which under load looks at an answer that
        came in time only after the deadline. The server ends a call at its deadline
        (DEADLINE_EXCEEDED, a miss); an OK the loop saw late is counted apart, as for gRPC,
        and a call still unanswered ``CLIENT_GRACE_S`` after its deadline ends here."""
        ms = int(seconds * 1000)
        return {"grpc-timeout": f"{ms}m"} if self.kind == "grpc-web" else {"connect-timeout-ms": str(ms)}

    async def _refused(self, stats: Stats, method: str, started: float, exc: BaseException, timeout: float | None) -> None:
        """Count a call that ended in an error; wait the RetryInfo delay if refused."""
        if isinstance(exc, ConnectError):
            code = connect_code(exc)
            stats.record(method, code, started, exc.message or "", timeout)
            if code == "RESOURCE_EXHAUSTED":
                await asyncio.sleep(connect_retry_delay(exc))
        elif isinstance(exc, TimeoutError):  # nothing from the server CLIENT_GRACE_S after the deadline
            stats.record(method, "DEADLINE_EXCEEDED", started, "no answer from the server", timeout)
        else:  # the HTTP client's own failure (connection reset...): never designed
            stats.record(method, f"CLIENT_{type(exc).__name__}", started, str(exc), timeout)

    async def unary(self, stats: Stats, method: str, rpc: str, request: Any, timeout: float) -> Any:
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(
                self._method(rpc)(request, headers=self._deadline(timeout)), timeout + CLIENT_GRACE_S
            )
        except Exception as exc:  # noqa: BLE001 - counted by code
            await self._refused(stats, method, started, exc, timeout)
            return None
        stats.record(method, "OK", started, timeout=timeout)
        return response

    async def malformed(self, stats: Stats) -> None:
        """Bytes the request type cannot parse, in the protocol's own framing, to a random RPC
        (Analyze and EvaluateBatch, the server streams, too)."""
        rpc = self.rng.choice(UNARY_METHODS + ("Analyze", "EvaluateBatch"))
        if self.kind == "connect-json":
            kind, data = malformed_json(self.rng, rpc, self.rng.choice(self.pool))
        else:
            kind, data = malformed_bytes(self.rng, "Evaluate" if rpc == "EvaluateBatch" else rpc)
        label = f"Malformed({kind})"
        started = time.perf_counter()
        try:
            async with asyncio.timeout(10 + CLIENT_GRACE_S):
                if rpc in ("Analyze", "EvaluateBatch"):
                    async for _ in self._method(rpc)(data, headers=self._deadline(10)):
                        pass
                else:
                    await self._method(rpc)(data, headers=self._deadline(10))
        except Exception as exc:  # noqa: BLE001 - counted by code
            await self._refused(stats, label, started, exc, 10)
            return
        stats.record(label, "OK", started, f"{rpc} accepted malformed bytes", 10)

    async def analyze(self, stats: Stats, sample: Sample | None = None) -> None:
        sample = sample or self.rng.choice(self.pool)
        cancel_after = self.rng.choice((1, 2, 3, None))  # None: read to the final result
        request = pb.AnalyzeRequest(
            position=self.position(sample),
            limits=pb.SearchLimits(time_ms=300, seed=self.rng.getrandbits(32)),
            interval_ms=50,
            max_moves=3,
        )
        started = time.perf_counter()
        stream = self.web.analyze(request, headers=self._deadline(CALL_TIMEOUT_S))
        seen = finals = 0
        left = False
        try:
            async with asyncio.timeout(CALL_TIMEOUT_S + CLIENT_GRACE_S):
                async for response in stream:
                    seen += 1
                    finals += int(response.final)
                    if cancel_after is not None and seen >= cancel_after and not response.final:
                        left = True
                        break  # leaving the stream: closing it drops the connection, the server cancels
        except Exception as exc:  # noqa: BLE001 - counted by code
            await self._refused(stats, "Analyze", started, exc, None)
            return
        finally:
            await stream.aclose()
        if left:
            stats.record("Analyze", "CANCELLED_BY_CLIENT", started)
            return
        stats.analyze_finals[finals] += 1
        stats.record("Analyze", "OK" if finals == 1 else "NO_SINGLE_FINAL", started)

    async def evaluate(self, stats: Stats, kind: str = "") -> None:
        """``EvaluateBatch`` of 3-8 positions (no client stream over HTTP/1.1). `kind`
        "deadline": as for gRPC, 2 s per position under a 1.5 s deadline; "malformed": one more
        position whose bytes are not a position, answered INVALID_ARGUMENT inside its answer
        while the others are analysed and the call ends OK."""
        self.batches += 1
        size = self.rng.randint(3, 8)
        ids = [f"c{self.index}b{self.batches}p{i}" for i in range(size)]
        method = {"": "EvaluateBatch", "deadline": "EvaluateBatch(deadline)", "malformed": "EvaluateBatch(bad position)"}[kind]
        if kind == "deadline":
            limits = [pb.SearchLimits(time_ms=2000, seed=n) for n in range(size)]
            timeout = 1.5
        else:
            limits = [pb.SearchLimits(iterations=self.rng.choice((20, 50, 100)), seed=n) for n in range(size)]
            timeout = CALL_TIMEOUT_S * 2
        requests = [
            pb.EvaluateRequest(id=i, position=self.position(self.rng.choice(self.pool)), limits=limits[n], max_moves=1)
            for n, i in enumerate(ids)
        ]
        bad = ""
        if kind == "malformed":
            bad = f"c{self.index}b{self.batches}bad"
            garbage = pb.Position(game=self.rng.choice(self.pool).game, encoded=self.rng.randbytes(12))
            requests.insert(self.rng.randint(0, size), pb.EvaluateRequest(id=bad, position=garbage, max_moves=1))
            ids.append(bad)
        started = time.perf_counter()
        answered: Counter[str] = Counter()
        error: Exception | None = None
        stream = self.web.evaluate_batch(pb.EvaluateBatchRequest(positions=requests), headers=self._deadline(timeout))
        try:
            async with asyncio.timeout(timeout + CLIENT_GRACE_S):
                async for answer in stream:
                    answered[answer.id] += 1
                    code = "OK" if answer.WhichOneof("result") == "analysis" else answer.error.code
                    if answer.id == bad:
                        stats.bad_position_answers[code] += 1
                    else:
                        stats.batch_answers[code] += 1
        except Exception as exc:  # noqa: BLE001 - counted by code
            error = exc
        finally:
            await stream.aclose()
        if isinstance(error, ConnectError) and connect_code(error) == "RESOURCE_EXHAUSTED":  # before any position
            await self._refused(stats, method, started, error, timeout)
            return
        lost = sum(1 for i in ids if answered[i] == 0)
        stats.batch_lost += lost
        if lost:
            stats.error_samples[f"{method}: {lost} position(s) unanswered, call {error!r}"[:300]] += 1
        stats.batch_duplicated += sum(n - 1 for n in answered.values() if n > 1)
        if error is None:
            stats.record(method, "OK", started, timeout=timeout)
        else:
            await self._refused(stats, method, started, error, timeout)


def make_client(index: int, server: "Server", pool: list[Sample], seed: int, kinds: tuple[str, ...]) -> Client:
    """Client `index`: a gRPC client or a web one, taking turns over `kinds`."""
    kind = kinds[index % len(kinds)]
    if kind == "grpc":
        return Client(index, server.target, pool, seed)
    assert server.web is not None
    return WebClient(index, server.web, pool, seed, kind)


async def sweep(server: "Server", pool: list[Sample], connections: int, seed: int, kinds: tuple[str, ...]) -> Stats:
    """Every operation of the mix on a position of every game, from `connections` connections
    at once (of every transport of `kinds`); a search refused RESOURCE_EXHAUSTED is retried
    (after its RetryInfo delay) until it runs, at most 50 times."""
    stats = Stats()
    firsts = {s.game: s for s in reversed(pool)}  # the first position of each game
    connections = max(connections, len(kinds))
    runners = [make_client(MAX_CLIENTS + i, server, pool, seed * 100_003 + i, kinds) for i in range(connections)]

    async def run(client: Client) -> None:
        for sample in firsts.values():
            for op, _ in MIX:
                for _attempt in range(50):
                    once = Stats()
                    await client.step(once, op, sample)
                    for method, codes in once.codes.items():
                        stats.codes[method].update(codes)
                    stats.error_samples.update(once.error_samples)
                    if not any(codes["RESOURCE_EXHAUSTED"] for codes in once.codes.values()):
                        break

    try:
        await asyncio.gather(*(run(c) for c in runners))
    finally:
        await asyncio.gather(*(c.close() for c in runners))
    return stats


async def drive(
    server: "Server",
    pool: list[Sample],
    clients: int,
    seconds: float,
    seed: int,
    kinds: tuple[str, ...],
    memory: bool = False,
) -> dict[str, Stats]:
    """`clients` clients over `kinds` for `seconds`: the statistics per transport (the
    servers' memory timeline, with `memory`, in the first transport's)."""
    by_kind = {kind: Stats() for kind in kinds}
    stats = by_kind[kinds[0]]
    runners = [make_client(i, server, pool, seed * 100_003 + i, kinds) for i in range(clients)]
    started = time.monotonic()
    until = started + seconds

    async def sample_memory() -> None:  # the servers' RSS every 5 s: a leak shows as a slope
        while memory and time.monotonic() < until:
            stats.timeline.append((round(time.monotonic() - started, 1), round(server.memory()["rss_kb"] / 1024, 1)))
            await asyncio.sleep(5.0)

    try:
        await asyncio.gather(sample_memory(), *(c.run(by_kind[c.kind], until) for c in runners))
    finally:
        await asyncio.gather(*(c.close() for c in runners))
    return by_kind


# --- the attack beside the load (--attack) ---------------------------------------------------
SLOW_LINE_S = 2.0  # a slow connection sends one header line this often, and never ends its head
PROBE_EVERY_S = 1.0
PROBE_TIMEOUT_S = 5.0
SLOW_HELD_LIMIT_S = 15.0  # the web port's request timeout (10 s) and some slack on a loaded machine
WEB_HOSTILE_PAUSE_S = 0.02


RESET = b"(connection reset)"  # a right answer to a request too large to read


def _envelope(data: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + len(data).to_bytes(4, "big") + data


# (kind, request bytes, what a right answer's status line or body holds)
def _web_hostile(host: str) -> list[tuple[str, bytes, tuple[bytes, ...]]]:
    head = f"Host: {host}\r\n".encode()
    post = b"POST /hortus.v1.Advisor/%s HTTP/1.1\r\n" + head + b"Connection: close\r\n"

    def call(rpc: bytes, content_type: bytes, body: bytes) -> bytes:
        return (post % rpc) + b"Content-Type: " + content_type + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body

    get = b"GET %s HTTP/1.1\r\n" + head + b"Connection: close\r\n\r\n"
    return [
        ("not-http", b"GARBAGE\x00\x01 \r\n\r\n", (b" 400 ",)),
        ("null-byte-path", get % b"/a%00b", (b" 400 ",)),
        ("name-over-255", get % (b"/" + b"n" * 300), (b" 404 ",)),
        ("20kb-url", get % (b"/" + b"/".join([b"d" * 250] * 80)), (b" 404 ",)),
        # over h11's limit: answered 400 and closed unread, which may reach the client as a reset
        ("200kb-url", get % (b"/" + b"d" * 200_000), (b" 400 ", RESET)),
        (
            "content-length-and-chunked",
            (post % b"GetVersion") + b"Content-Type: application/json\r\nContent-Length: 2\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            (b" 400 ",),
        ),
        ("native-grpc", call(b"GetVersion", b"application/grpc", _envelope(b"")), (b" 415 ",)),
        ("grpc-web-text", call(b"GetVersion", b"application/grpc-web-text", b"AAAAAAA="), (b" 415 ",)),
        ("foreign-host", get.replace(head, b"Host: evil.example\r\n") % b"/", (b" 421 ",)),
        ("compressed-flag", call(b"Analyze", b"application/connect+proto", _envelope(b"", 1)), (b"invalid_argument",)),
        ("zero-envelopes", call(b"Analyze", b"application/connect+proto", b""), (b"invalid_argument",)),
        (
            "two-envelopes",
            call(b"Analyze", b"application/grpc-web+proto", _envelope(b"") + _envelope(b"")),
            (b"grpc-status: 3", b"grpc-status:3"),
        ),
        ("bad-json", call(b"NewGame", b"application/json", b'{"game": '), (b" 400 ",)),
    ]


async def _slow_connection(port: int, until: float, seen: dict[str, Any]) -> None:
    """One slowloris connection after another: a request head sent one line per SLOW_LINE_S,
    never ended; how long the server lets each stay open."""
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            seen["refused"] += 1
            await asyncio.sleep(SLOW_LINE_S)
            continue
        seen["opened"] += 1
        opened = time.monotonic()
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while time.monotonic() < until:
                try:
                    await asyncio.wait_for(reader.read(65536), SLOW_LINE_S)
                except TimeoutError:
                    writer.write(b"X-Slow: 1\r\n")
                    await writer.drain()
                    continue
                seen["closed_by_server"] += 1  # EOF (or an answer): the server gave up on it
                seen["held_s"].append(time.monotonic() - opened)
                break
        except OSError:
            seen["closed_by_server"] += 1
            seen["held_s"].append(time.monotonic() - opened)
        finally:
            writer.close()


async def _hostile_web(port: int, until: float, seen: dict[str, Counter[str]]) -> None:
    """Hostile HTTP requests one after another, each checked for its 4xx (or invalid_argument)."""
    cases = _web_hostile(f"127.0.0.1:{port}")
    rng = random.Random(7)
    while time.monotonic() < until:
        kind, data, right = rng.choice(cases)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                writer.write(data)
                await writer.drain()
                answer = await asyncio.wait_for(reader.read(1 << 20), 30)
                while len(answer) < 65536 and (more := await asyncio.wait_for(reader.read(1 << 20), 30)):
                    answer += more
            finally:
                writer.close()
        except (OSError, TimeoutError) as exc:
            reset = isinstance(exc, ConnectionResetError) and RESET in right
            seen[kind]["right" if reset else f"CLIENT_{type(exc).__name__}"] += 1
            continue
        status = answer.split(b"\r\n", 1)[0][9:12].decode(errors="replace") or "none"
        seen[kind]["right" if any(r in answer for r in right) else f"wrong:{status}"] += 1
        await asyncio.sleep(WEB_HOSTILE_PAUSE_S)


def _probe_grpc(target: str) -> str:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    # a new connection per probe, as a load balancer's probe
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            answer = stub.Check(health_pb2.HealthCheckRequest(service="hortus.v1.Advisor"), timeout=PROBE_TIMEOUT_S)
        except grpc.RpcError as exc:
            return exc.code().name  # type: ignore[no-any-return, attr-defined, unused-ignore]
        return "OK" if answer.status == health_pb2.HealthCheckResponse.SERVING else "NOT_SERVING"


def _probe_web(url: str) -> str:
    import http.client

    host, port = url.split("//", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=PROBE_TIMEOUT_S)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        response.read()
        return "OK" if response.status == 200 else f"HTTP_{response.status}"
    except OSError as exc:
        return f"CLIENT_{type(exc).__name__}"
    finally:
        conn.close()


def _attack(target: str, web: str, seconds: float, slow: int, results: Any) -> None:
    """The attack process: `slow` slowloris connections and hostile HTTP requests on the web
    port, and a probe of each port every PROBE_EVERY_S (gRPC health, the web port's /readyz),
    for `seconds`; puts its findings on `results`."""
    import threading

    until = time.monotonic() + seconds
    port = int(web.rsplit(":", 1)[1])
    probes: dict[str, Counter[str]] = {"grpc": Counter(), "web": Counter()}
    probe_ms: dict[str, list[float]] = {"grpc": [], "web": []}

    def probe() -> None:
        while time.monotonic() < until:
            for name, check in (("grpc", lambda: _probe_grpc(target)), ("web", lambda: _probe_web(web))):
                started = time.perf_counter()
                probes[name][check()] += 1
                probe_ms[name].append((time.perf_counter() - started) * 1000.0)
            time.sleep(PROBE_EVERY_S)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    slow_seen: dict[str, Any] = {"opened": 0, "closed_by_server": 0, "refused": 0, "held_s": []}
    hostile: dict[str, Counter[str]] = defaultdict(Counter)

    async def run() -> None:
        await asyncio.gather(*(_slow_connection(port, until, slow_seen) for _ in range(slow)), _hostile_web(port, until, hostile))

    asyncio.run(run())
    prober.join(PROBE_TIMEOUT_S * 2 + PROBE_EVERY_S)
    held = slow_seen.pop("held_s")
    results.put(
        {
            "slow_connections": slow,
            "slow": {**slow_seen, "longest_held_s": round(max(held, default=0.0), 1)},
            "hostile_http": {kind: dict(counts) for kind, counts in sorted(hostile.items())},
            "probes": {name: dict(counts) for name, counts in probes.items()},
            "probe_p99_ms": {name: round(percentile(v, 0.99), 1) for name, v in probe_ms.items()},
            "probe_max_ms": {name: round(max(v, default=0.0), 1) for name, v in probe_ms.items()},
        }
    )


def attack_verdict(found: dict[str, Any]) -> dict[str, Any]:
    """Every probe answered OK, every hostile request answered as designed, every slow
    connection closed within SLOW_HELD_LIMIT_S."""
    probes_failed = sum(n for counts in found["probes"].values() for code, n in counts.items() if code != "OK")
    hostile_wrong = sum(n for counts in found["hostile_http"].values() for what, n in counts.items() if what != "right")
    held = found["slow"]["longest_held_s"]
    return {
        "probes_failed": probes_failed,
        "hostile_http_wrong": hostile_wrong,
        "slow_longest_held_s": held,
        "ok": probes_failed == 0 and hostile_wrong == 0 and held <= SLOW_HELD_LIMIT_S,
    }


# --- main -------------------------------------------------------------------------------------
def merge(parts: list[Stats]) -> Stats:
    """The statistics of every transport together."""
    total = Stats()
    for part in parts:
        for method, codes in part.codes.items():
            total.codes[method].update(codes)
        for method, values in part.latency_ms.items():
            total.latency_ms[method].extend(values)
        total.batch_answers.update(part.batch_answers)
        total.bad_position_answers.update(part.bad_position_answers)
        total.analyze_finals.update(part.analyze_finals)
        total.error_samples.update(part.error_samples)
        total.timeline.extend(part.timeline)
        total.batch_lost += part.batch_lost
        total.batch_duplicated += part.batch_duplicated
        total.partial_by_deadline += part.partial_by_deadline
        total.deadline_misses += part.deadline_misses
        total.late_seen_by_client += part.late_seen_by_client
        total.malformed_batch_answered_before += part.malformed_batch_answered_before
    return total


def verdict(stats: Stats) -> dict[str, Any]:
    """What the target looks at, for one transport or all: codes, unexpected answers (call
    codes outside the designed ones, batch positions' codes but DEADLINE_EXCEEDED, the web's
    not-a-position answers but INVALID_ARGUMENT), INTERNAL/UNKNOWN, deadline misses, lost and
    duplicated batch positions."""
    codes: Counter[str] = sum(stats.codes.values(), Counter())
    unexpected: Counter[str] = Counter()
    for method, counts in stats.codes.items():
        unexpected.update({f"{method}:{c}": n for c, n in counts.items() if c not in expected(method)})
    # a position's answer may be DEADLINE_EXCEEDED in a deadline batch: still an answer in time
    unexpected.update({f"batch position:{c}": n for c, n in stats.batch_answers.items() if c not in ("OK", "DEADLINE_EXCEEDED")})
    unexpected.update({f"bad position:{c}": n for c, n in stats.bad_position_answers.items() if c != "INVALID_ARGUMENT"})
    return {
        "calls": sum(codes.values()),
        "codes": dict(sorted(codes.items())),
        "unexpected_codes": dict(unexpected),
        "internal_or_unknown": codes["INTERNAL"] + codes["UNKNOWN"],
        "deadline_misses": stats.deadline_misses,
        "ok_seen_late_by_the_clients_event_loop": stats.late_seen_by_client,
        "batch_positions": dict(sorted(stats.batch_answers.items())),
        "batch_lost": stats.batch_lost,
        "batch_duplicated": stats.batch_duplicated,
        "ok": not unexpected and not stats.batch_lost and not stats.batch_duplicated and not stats.deadline_misses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=48, help="concurrent clients (default 48)")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured duration (default 60)")
    parser.add_argument("--warmup", type=float, default=10.0, help="unmeasured load first (default 10 s)")
    parser.add_argument("--workers", type=int, default=2, help="server processes (default 2)")
    parser.add_argument("--positions", type=int, default=12, help="positions per game (default 12)")
    parser.add_argument(
        "--transport",
        choices=sorted(TRANSPORTS),
        default="grpc",
        help="grpc: the gRPC port (default); connect: the web port (Connect JSON, Connect "
        "binary, gRPC-Web in turns); both: every other client on each port",
    )
    parser.add_argument(
        "--attack",
        action="store_true",
        help="beside the measured load (needs the web port): --slow-connections slowloris connections and "
        "hostile HTTP requests on the web port, and a probe of each port every second (another process)",
    )
    parser.add_argument("--slow-connections", type=int, default=200, help="slowloris connections of --attack (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server-arg", action="append", default=[], help="extra argument of hortus serve")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable of the server, e.g. MALLOC_ARENA_MAX=2",
    )
    args = parser.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS:
        parser.error(f"--clients must be in 1..{MAX_CLIENTS}")
    if not 0 < args.seconds <= MAX_SECONDS or not 0 <= args.warmup <= MAX_SECONDS:
        parser.error(f"--seconds must be in (0, {MAX_SECONDS:g}] and --warmup in [0, {MAX_SECONDS:g}]")
    if not 1 <= args.workers <= 16:
        parser.error("--workers must be in 1..16")
    kinds = TRANSPORTS[args.transport]
    if args.transport != "grpc" and AdvisorClient is None:
        parser.error(f"--transport {args.transport} needs the web extra: pip install 'hortus[web]'")
    used = tuple(dict.fromkeys(kinds[i % len(kinds)] for i in range(args.clients)))  # kinds with a client

    environment = dict(item.split("=", 1) for item in args.server_env)
    pool = samples(args.positions, args.seed)
    server = Server(args.workers, args.server_arg, environment, web=args.transport != "grpc" or args.attack)
    attacker: Any = None
    attack_results: Any = None
    try:
        time.sleep(1.0)
        memory_start = server.memory()
        warm = asyncio.run(sweep(server, pool, min(args.clients, 8), args.seed + 2, kinds))
        if args.warmup:
            asyncio.run(drive(server, pool, args.clients, args.warmup, args.seed + 1, kinds))
        time.sleep(0.5)
        memory_warm = server.memory()
        load_before = os.getloadavg()[0]
        if args.attack:
            import multiprocessing

            assert server.web is not None
            context = multiprocessing.get_context("spawn")
            attack_results = context.Queue()
            attacker = context.Process(
                target=_attack, args=(server.target, server.web, args.seconds, args.slow_connections, attack_results)
            )
            attacker.start()
        started = time.monotonic()
        by_kind = asyncio.run(drive(server, pool, args.clients, args.seconds, args.seed, kinds, memory=True))
        elapsed = time.monotonic() - started
        attack: dict[str, Any] | None = None
        if attacker is not None:
            attack = attack_results.get(timeout=120)
            attacker.join(30)
        time.sleep(0.5)
        memory_end = server.memory()
        load_after = os.getloadavg()[0]
        alive = server.alive()
    finally:
        if attacker is not None and attacker.is_alive():
            attacker.kill()
        exit_code = server.stop()

    stats = merge([by_kind[kind] for kind in used])
    rows: list[dict[str, Any]] = []
    for kind in used:
        part = by_kind[kind]
        for method in sorted(part.codes):
            codes = part.codes[method]
            values = part.latency_ms[method]
            rows.append(
                {
                    "transport": kind,
                    "method": method,
                    "calls": sum(codes.values()),
                    "codes": " ".join(f"{c}={n}" for c, n in sorted(codes.items())),
                    "p50_ms": percentile(values, 0.50),
                    "p90_ms": percentile(values, 0.90),
                    "p99_ms": percentile(values, 0.99),
                    "max_ms": max(values) if values else float("nan"),
                }
            )
    total = verdict(stats)
    per_transport = {kind: verdict(by_kind[kind]) for kind in used}
    calls = total["calls"]
    all_codes = Counter(total["codes"])
    internal = total["internal_or_unknown"]
    growth = memory_end["rss_kb"] / memory_warm["rss_kb"] - 1.0
    warm_codes: Counter[str] = sum(warm.codes.values(), Counter())
    warm_internal = warm_codes["INTERNAL"] + warm_codes["UNKNOWN"]
    summary = {
        "clients": args.clients,
        "transport": args.transport,
        "clients_per_transport": dict(Counter(kinds[i % len(kinds)] for i in range(args.clients))),
        "seconds": round(elapsed, 1),
        "workers": args.workers,
        "server_env": environment,
        "calls": calls,
        "calls_per_s": calls / elapsed,
        "codes": total["codes"],
        "unexpected_codes": total["unexpected_codes"],
        "internal_or_unknown": internal,
        "deadline_misses": stats.deadline_misses,
        "ok_seen_late_by_the_clients_event_loop": stats.late_seen_by_client,
        "malformed_batch_positions_answered_before_the_bad_message": stats.malformed_batch_answered_before,
        "batch_positions": total["batch_positions"],
        "batch_lost": stats.batch_lost,
        "batch_duplicated": stats.batch_duplicated,
        "bad_position_answers": dict(stats.bad_position_answers),
        "deadline_partial_answers": stats.partial_by_deadline,
        "analyze_final_counts": {str(k): v for k, v in stats.analyze_finals.items()},
        "per_transport": per_transport,
        "warmup_sweep_codes": {m: dict(sorted(c.items())) for m, c in sorted(warm.codes.items())},
        "warmup_internal_or_unknown": warm_internal,
        "warmup_unexpected_answers": dict(warm.error_samples),
        "rss_start_mb": memory_start["rss_kb"] / 1024,
        "rss_after_warmup_mb": memory_warm["rss_kb"] / 1024,
        "rss_end_mb": memory_end["rss_kb"] / 1024,
        "rss_peak_mb": memory_end["hwm_kb"] / 1024,
        "rss_growth_after_warmup": growth,
        "rss_timeline_mb": stats.timeline,
        "server_alive_at_end": alive,
        "server_exit_code": exit_code,
        "load_avg_1min": [load_before, load_after],
        "attack": attack,
        "attack_verdict": attack_verdict(attack) if attack is not None else None,
        "target_met": total["ok"]
        and not internal
        and not warm_internal
        and growth <= 0.10
        and alive
        and exit_code == 0
        and (attack is None or attack_verdict(attack)["ok"]),
    }
    table(
        f"load: {args.clients} clients ({args.transport}) x {elapsed:.0f} s, {args.workers} server processes "
        f"({calls} calls, {calls / elapsed:.0f}/s)",
        rows,
        ["transport", "method", "calls", "p50_ms", "p90_ms", "p99_ms", "max_ms", "codes"],
    )
    if len(used) > 1:
        table(
            "load: per transport",
            [
                {
                    "transport": kind,
                    "calls": v["calls"],
                    "internal_unknown": v["internal_or_unknown"],
                    "deadline_misses": v["deadline_misses"],
                    "batch_lost_dup": f"{v['batch_lost']}/{v['batch_duplicated']}",
                    "unexpected": sum(v["unexpected_codes"].values()),
                    "codes": " ".join(f"{c}={n}" for c, n in v["codes"].items()),
                }
                for kind, v in per_transport.items()
            ],
            ["transport", "calls", "internal_unknown", "deadline_misses", "batch_lost_dup", "unexpected", "codes"],
        )
    table(
        "load: batch positions, deadlines, memory (server processes, MB)",
        [
            {"what": "batch position answers", "value": " ".join(f"{c}={n}" for c, n in sorted(stats.batch_answers.items()))},
            {"what": "batch ids lost / duplicated", "value": f"{stats.batch_lost} / {stats.batch_duplicated}"},
            {
                "what": "web: not-a-position answers in batches",
                "value": " ".join(f"{c}={n}" for c, n in sorted(stats.bad_position_answers.items())) or "-",
            },
            {"what": "answers per code (all calls)", "value": " ".join(f"{c}={n}" for c, n in sorted(all_codes.items()))},
            {"what": "INTERNAL + UNKNOWN", "value": internal},
            {"what": "deadline misses (DEADLINE_EXCEEDED calls)", "value": stats.deadline_misses},
            {"what": "OK answers the client loop saw after the deadline", "value": stats.late_seen_by_client},
            {"what": "positions answered before a malformed message", "value": stats.malformed_batch_answered_before},
            {"what": "SuggestMove(deadline) partial answers", "value": stats.partial_by_deadline},
            {
                "what": "warm-up sweep answers",
                "value": " ".join(f"{c}={n}" for c, n in sorted(sum(warm.codes.values(), Counter()).items())),
            },
            {"what": "RSS at start", "value": summary["rss_start_mb"]},
            {"what": "RSS after warm-up", "value": summary["rss_after_warmup_mb"]},
            {"what": "RSS at end", "value": summary["rss_end_mb"]},
            {"what": "RSS growth after warm-up", "value": f"{growth:+.1%}"},
            {"what": "peak RSS (VmHWM)", "value": summary["rss_peak_mb"]},
            {"what": "RSS every 5 s (s: MB)", "value": " ".join(f"{t:g}:{m:g}" for t, m in stats.timeline)},
            {"what": "server exit code after SIGTERM", "value": exit_code},
            {"what": "1-min load average before/after", "value": f"{load_before:.1f} / {load_after:.1f}"},
            {"what": "target met", "value": summary["target_met"]},
        ],
        ["what", "value"],
    )
    if attack is not None:
        judged = attack_verdict(attack)
        slow = attack["slow"]
        table(
            f"attack beside the load: {attack['slow_connections']} slow connections, hostile HTTP, probes every {PROBE_EVERY_S:g} s",
            [
                {
                    "what": "probes (gRPC health / web /readyz)",
                    "value": f"{attack['probes']['grpc']} / {attack['probes']['web']}",
                },
                {"what": "probe p99 / max ms (gRPC, web)", "value": f"{attack['probe_p99_ms']} / {attack['probe_max_ms']}"},
                {"what": "probes failed", "value": judged["probes_failed"]},
                {
                    "what": "slow connections opened / closed by the server / refused",
                    "value": f"{slow['opened']} / {slow['closed_by_server']} / {slow['refused']}",
                },
                {"what": "longest a slow connection was held (s)", "value": slow["longest_held_s"]},
                {
                    "what": "hostile HTTP requests (right / wrong)",
                    "value": f"{sum(c.get('right', 0) for c in attack['hostile_http'].values())} / {judged['hostile_http_wrong']}",
                },
                *(
                    {"what": f"  {kind}", "value": " ".join(f"{w}={n}" for w, n in sorted(counts.items()))}
                    for kind, counts in attack["hostile_http"].items()
                ),
            ],
            ["what", "value"],
        )
    if warm.error_samples:
        print("unexpected answers in the warm-up sweep (first kinds):")
        for line, count in warm.error_samples.most_common():
            print(f"  {count} x {line}")
    if stats.error_samples:
        print("unexpected answers (first kinds):")
        for line, count in stats.error_samples.most_common():
            print(f"  {count} x {line}")
    document = {"benchmark": "load", "machine": machine(), "summary": summary, "results": rows}
    print(json.dumps(document))
    write_result("load", document)
    return 0 if summary["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
