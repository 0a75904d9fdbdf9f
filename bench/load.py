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
Target (issue 8): 64 clients for 60 s, no status other than OK, RESOURCE_EXHAUSTED and the
clients' own cancels, memory after the run within 10% of memory after the warm-up.

    python bench/load.py [--clients 64] [--seconds 60] [--workers 2] [--warmup 10]
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

from _common import machine, table  # noqa: E402
from hortus import games  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc  # noqa: E402

MAX_CLIENTS = 512
MAX_SECONDS = 600.0
CALL_TIMEOUT_S = 30.0
EXPECTED = {"OK", "RESOURCE_EXHAUSTED", "CANCELLED_BY_CLIENT"}

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
)


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
            state = game.new_game(players=players, seed=rng.getrandbits(32))
            for _ in range(rng.randrange(0, 40)):
                if state.is_terminal():
                    break
                if state.is_chance():
                    state.resolve_chance(rng)
                else:
                    state.apply(rng.choice(state.legal_actions()))
            while state.is_chance():
                state.resolve_chance(rng)
            if state.is_terminal():
                continue
            action = rng.choice(state.legal_actions())
            found.append(Sample(name, state.encode(), action, state.action_to_string(action)))
            count += 1
    return found


# --- the server -------------------------------------------------------------------------------
class Server:
    """``hortus serve --workers W`` on a free loopback port; knows its processes' pids."""

    def __init__(self, workers: int, extra: list[str], environment: dict[str, str] | None = None) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(environment or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hortus.clients.cli", "serve", "--address", "127.0.0.1:0",
             "--workers", str(workers), "--log-level", "error", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
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

    def record(self, method: str, code: str, started: float, detail: str = "") -> None:
        self.codes[method][code] += 1
        self.latency_ms[method].append((time.perf_counter() - started) * 1000.0)
        if code not in EXPECTED and len(self.error_samples) < 50:
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

    async def unary(self, stats: Stats, method: str, call: Any, request: Any, timeout: float) -> Any:
        started = time.perf_counter()
        try:
            response = await call(request, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
            stats.record(method, code, started, exc.details() or "")
            if code == "RESOURCE_EXHAUSTED":
                await asyncio.sleep(retry_delay(exc))
            return None
        stats.record(method, "OK", started)
        return response

    async def analyze(self, stats: Stats, sample: Sample | None = None) -> None:
        sample = sample or self.rng.choice(self.pool)
        cancel_after = self.rng.choice((1, 2, 3, None))  # None: read to the final result
        request = pb.AnalyzeRequest(
            position=self.position(sample), limits=pb.SearchLimits(time_ms=300, seed=self.rng.getrandbits(32)),
            interval_ms=50, max_moves=3,
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

    async def evaluate(self, stats: Stats) -> None:
        self.batches += 1
        size = self.rng.randint(3, 8)
        ids = [f"c{self.index}b{self.batches}p{i}" for i in range(size)]
        requests = [
            pb.EvaluateRequest(
                id=i, position=self.position(self.rng.choice(self.pool)),
                limits=pb.SearchLimits(iterations=self.rng.choice((20, 50, 100)), seed=n), max_moves=1,
            )
            for n, i in enumerate(ids)
        ]
        started = time.perf_counter()
        answered: Counter[str] = Counter()
        try:
            async for answer in self.stub.EvaluatePositions(iter(requests), timeout=CALL_TIMEOUT_S * 2):
                answered[answer.id] += 1
                stats.batch_answers["OK" if answer.WhichOneof("result") == "analysis" else answer.error.code] += 1
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
            stats.record("EvaluatePositions", code, started, exc.details() or "")
            if code == "RESOURCE_EXHAUSTED":
                await asyncio.sleep(retry_delay(exc))
            return
        stats.batch_lost += sum(1 for i in ids if answered[i] == 0)
        stats.batch_duplicated += sum(n - 1 for n in answered.values() if n > 1)
        stats.record("EvaluatePositions", "OK", started)

    async def step(self, stats: Stats, op: str, sample: Sample | None = None) -> None:
        """One call of `op`, on `sample` (a random position if None)."""
        rng = self.rng
        sample = sample or rng.choice(self.pool)
        s = self.stub
        request: Any  # one message type per branch
        if op == "ListGames":
            await self.unary(stats, op, s.ListGames, pb.ListGamesRequest(), 10)
        elif op == "GetVersion":
            await self.unary(stats, op, s.GetVersion, pb.GetVersionRequest(), 10)
        elif op == "NewGame":
            game = games.get(sample.game)
            request = pb.NewGameRequest(
                game=game.name, players=rng.randint(game.min_players, game.max_players), seed=rng.getrandbits(32)
            )
            await self.unary(stats, op, s.NewGame, request, 10)
        elif op == "LegalActions":
            await self.unary(stats, op, s.LegalActions, pb.LegalActionsRequest(position=self.position(sample)), 10)
        elif op == "ApplyActions":
            ref = pb.ActionRef(id=sample.action) if rng.random() < 0.5 else pb.ActionRef(notation=sample.notation)
            request = pb.ApplyActionsRequest(position=self.position(sample), actions=[ref])
            await self.unary(stats, op, s.ApplyActions, request, 10)
        elif op == "ViewPosition":
            request = pb.ViewPositionRequest(position=self.position(sample), seat=0)
            await self.unary(stats, op, s.ViewPosition, request, 10)
        elif op == "SuggestMove":
            limits = pb.SearchLimits(iterations=rng.choice((50, 100, 200)), seed=rng.getrandbits(32))
            await self.unary(stats, op, s.SuggestMove, pb.SuggestMoveRequest(position=self.position(sample), limits=limits),
                             CALL_TIMEOUT_S)
        elif op == "SuggestMove(level)":
            request = pb.SuggestMoveRequest(
                position=self.position(sample), level=rng.choice((1, 2)), limits=pb.SearchLimits(seed=rng.getrandbits(32))
            )
            await self.unary(stats, op, s.SuggestMove, request, CALL_TIMEOUT_S)
        elif op == "SuggestMove(deadline)":
            # far more iterations than fit: the deadline cuts the search, the answer is partial
            limits = pb.SearchLimits(iterations=10**6, seed=rng.getrandbits(32))
            response = await self.unary(
                stats, op, s.SuggestMove, pb.SuggestMoveRequest(position=self.position(sample), limits=limits), 1.0
            )
            if response is not None and response.analysis.partial:
                stats.partial_by_deadline += 1
        elif op == "RankMoves":
            limits = pb.SearchLimits(iterations=rng.choice((50, 100)), seed=rng.getrandbits(32))
            request = pb.RankMovesRequest(position=self.position(sample), limits=limits, max_moves=5)
            await self.unary(stats, op, s.RankMoves, request, CALL_TIMEOUT_S)
        elif op == "Analyze":
            await self.analyze(stats, sample)
        elif op == "EvaluatePositions":
            await self.evaluate(stats)
        else:  # pragma: no cover
            raise AssertionError(op)

    async def run(self, stats: Stats, until: float) -> None:
        ops = [op for op, _ in MIX]
        weights = [w for _, w in MIX]
        while time.monotonic() < until:
            await self.step(stats, self.rng.choices(ops, weights)[0])


async def sweep(target: str, pool: list[Sample], connections: int, seed: int) -> Stats:
    """Every operation of the mix on a position of every game, from `connections` connections
    at once; a search refused RESOURCE_EXHAUSTED is retried (after its RetryInfo delay) until
    it runs, at most 50 times."""
    stats = Stats()
    firsts = {s.game: s for s in reversed(pool)}  # the first position of each game
    runners = [Client(MAX_CLIENTS + i, target, pool, seed * 100_003 + i) for i in range(connections)]

    async def run(client: Client) -> None:
        for sample in firsts.values():
            for op, _ in MIX:
                for _attempt in range(50):
                    once = Stats()
                    await client.step(once, op, sample)
                    for method, codes in once.codes.items():
                        stats.codes[method].update(codes)
                    if not once.codes[op]["RESOURCE_EXHAUSTED"]:
                        break

    try:
        await asyncio.gather(*(run(c) for c in runners))
    finally:
        await asyncio.gather(*(c.channel.close() for c in runners))
    return stats


async def drive(
    target: str, pool: list[Sample], clients: int, seconds: float, seed: int, server: "Server | None" = None
) -> Stats:
    stats = Stats()
    runners = [Client(i, target, pool, seed * 100_003 + i) for i in range(clients)]
    started = time.monotonic()
    until = started + seconds

    async def sample_memory() -> None:  # the servers' RSS every 5 s: a leak shows as a slope
        while server is not None and time.monotonic() < until:
            stats.timeline.append((round(time.monotonic() - started, 1), round(server.memory()["rss_kb"] / 1024, 1)))
            await asyncio.sleep(5.0)

    try:
        await asyncio.gather(sample_memory(), *(c.run(stats, until) for c in runners))
    finally:
        await asyncio.gather(*(c.channel.close() for c in runners))
    return stats


# --- main -------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients (default 64)")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured duration (default 60)")
    parser.add_argument("--warmup", type=float, default=10.0, help="unmeasured load first (default 10 s)")
    parser.add_argument("--workers", type=int, default=2, help="server processes (default 2)")
    parser.add_argument("--positions", type=int, default=12, help="positions per game (default 12)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server-arg", action="append", default=[], help="extra argument of hortus serve")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment variable of the server, e.g. MALLOC_ARENA_MAX=2")
    args = parser.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS:
        parser.error(f"--clients must be in 1..{MAX_CLIENTS}")
    if not 0 < args.seconds <= MAX_SECONDS or not 0 <= args.warmup <= MAX_SECONDS:
        parser.error(f"--seconds must be in (0, {MAX_SECONDS:g}] and --warmup in [0, {MAX_SECONDS:g}]")
    if not 1 <= args.workers <= 16:
        parser.error("--workers must be in 1..16")

    environment = dict(item.split("=", 1) for item in args.server_env)
    pool = samples(args.positions, args.seed)
    server = Server(args.workers, args.server_arg, environment)
    try:
        time.sleep(1.0)
        memory_start = server.memory()
        warm = asyncio.run(sweep(server.target, pool, min(args.clients, 8), args.seed + 2))
        if args.warmup:
            asyncio.run(drive(server.target, pool, args.clients, args.warmup, args.seed + 1))
        time.sleep(0.5)
        memory_warm = server.memory()
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        stats = asyncio.run(drive(server.target, pool, args.clients, args.seconds, args.seed, server))
        elapsed = time.monotonic() - started
        time.sleep(0.5)
        memory_end = server.memory()
        load_after = os.getloadavg()[0]
        alive = server.alive()
    finally:
        exit_code = server.stop()

    rows: list[dict[str, Any]] = []
    all_codes: Counter[str] = Counter()
    for method in sorted(stats.codes):
        codes = stats.codes[method]
        all_codes.update(codes)
        values = stats.latency_ms[method]
        rows.append({
            "method": method,
            "calls": sum(codes.values()),
            "codes": " ".join(f"{c}={n}" for c, n in sorted(codes.items())),
            "p50_ms": percentile(values, 0.50),
            "p90_ms": percentile(values, 0.90),
            "p99_ms": percentile(values, 0.99),
            "max_ms": max(values) if values else float("nan"),
        })
    calls = sum(all_codes.values())
    unexpected = {c: n for c, n in all_codes.items() if c not in EXPECTED}
    unexpected_batch = {c: n for c, n in stats.batch_answers.items() if c != "OK"}
    growth = memory_end["rss_kb"] / memory_warm["rss_kb"] - 1.0
    summary = {
        "clients": args.clients,
        "seconds": round(elapsed, 1),
        "workers": args.workers,
        "server_env": environment,
        "calls": calls,
        "calls_per_s": calls / elapsed,
        "codes": dict(sorted(all_codes.items())),
        "unexpected_codes": unexpected,
        "batch_positions": dict(stats.batch_answers),
        "batch_lost": stats.batch_lost,
        "batch_duplicated": stats.batch_duplicated,
        "deadline_partial_answers": stats.partial_by_deadline,
        "analyze_final_counts": {str(k): v for k, v in stats.analyze_finals.items()},
        "warmup_sweep_codes": {m: dict(sorted(c.items())) for m, c in sorted(warm.codes.items())},
        "rss_start_mb": memory_start["rss_kb"] / 1024,
        "rss_after_warmup_mb": memory_warm["rss_kb"] / 1024,
        "rss_end_mb": memory_end["rss_kb"] / 1024,
        "rss_peak_mb": memory_end["hwm_kb"] / 1024,
        "rss_growth_after_warmup": growth,
        "rss_timeline_mb": stats.timeline,
        "server_alive_at_end": alive,
        "server_exit_code": exit_code,
        "load_avg_1min": [load_before, load_after],
        "target_met": not unexpected and not unexpected_batch and not stats.batch_lost
        and not stats.batch_duplicated and growth <= 0.10 and alive and exit_code == 0,
    }
    table(f"load: {args.clients} clients x {elapsed:.0f} s, {args.workers} server processes "
          f"({calls} calls, {calls / elapsed:.0f}/s)", rows,
          ["method", "calls", "p50_ms", "p90_ms", "p99_ms", "max_ms", "codes"])
    table("load: batch positions, deadlines, memory (server processes, MB)", [
        {"what": "batch position answers", "value": " ".join(f"{c}={n}" for c, n in sorted(stats.batch_answers.items()))},
        {"what": "batch ids lost / duplicated", "value": f"{stats.batch_lost} / {stats.batch_duplicated}"},
        {"what": "SuggestMove(deadline) partial answers", "value": stats.partial_by_deadline},
        {"what": "warm-up sweep answers", "value": " ".join(
            f"{c}={n}" for c, n in sorted(sum(warm.codes.values(), Counter()).items()))},
        {"what": "RSS at start", "value": summary["rss_start_mb"]},
        {"what": "RSS after warm-up", "value": summary["rss_after_warmup_mb"]},
        {"what": "RSS at end", "value": summary["rss_end_mb"]},
        {"what": "RSS growth after warm-up", "value": f"{growth:+.1%}"},
        {"what": "peak RSS (VmHWM)", "value": summary["rss_peak_mb"]},
        {"what": "RSS every 5 s (s: MB)", "value": " ".join(f"{t:g}:{m:g}" for t, m in stats.timeline)},
        {"what": "server exit code after SIGTERM", "value": exit_code},
        {"what": "1-min load average before/after", "value": f"{load_before:.1f} / {load_after:.1f}"},
        {"what": "target met", "value": summary["target_met"]},
    ], ["what", "value"])
    if stats.error_samples:
        print("unexpected answers (first kinds):")
        for line, count in stats.error_samples.most_common():
            print(f"  {count} x {line}")
    print(json.dumps({"benchmark": "load", "machine": machine(), "summary": summary, "results": rows}))
    return 0 if summary["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
