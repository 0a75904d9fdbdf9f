"""Service overhead and batch throughput.

1. ``SuggestMove`` latency (p50/p99) at a small fixed budget through gRPC against a
   ``hortus serve`` process on loopback, and the same search called in-process
   (``analyze``), measured alternately in one run; the difference of the medians is the
   service overhead (target <= 2 ms at p50). The same call as Connect JSON on the web port
   (``--web-address``, HTTP/1.1 keep-alive, JSON encoded and decoded by the caller as a page
   does) is measured in the same rotation (target <= 3 ms over in-process at p50).
2. ``EvaluatePositions`` throughput (positions/s) against ``hortus serve --workers 1`` and
   ``--workers 2``, each worker allowed one search at a time, so the ratio is what a second
   process adds (target >= 1.8x on 2 cores); plus one process running 2 searches on threads
   (searches release the GIL) for comparison. Scaling needs idle cores: the 1-minute load
   average is printed beside each figure (other work on the machine makes the ratio ~1).

4. The answer cache: ``SuggestMove`` and ``RankMoves`` through gRPC, each request
   sent twice in a row: the first is a miss (searched, then stored), the second a hit (the
   stored answer); hits and misses side by side in one run (target: a hit <= 1 ms at p50).

5. ``Analyze`` continued (``continue_from``): N iterations, then N more continued from its
   token, against one fresh ``Analyze`` of 2N, on the same positions in one run: what a hint
   asked twice costs (the increment only, not the whole deeper search again).

3. ``Analyze`` cancel latency from the TypeScript client (clients/typescript/bench/cancel.mjs,
   needs node and ``npm run build`` there): from the client leaving its loop (aborting the
   fetch) to the server's search stopping (the servicer's search listener, same clock), and to
   a new search being admitted (target <= 50 ms to the search stopping).

    python bench/service.py [--calls 300] [--iterations 200] [--positions 600]
                            [--batch-iterations 2000] [--repeats 3] [--streams 6] [--window 4]
                            [--skip-latency] [--skip-throughput] [--skip-cache] [--skip-continue]
                            [--continue-iterations 2000] [--continue-trials 20] [--cancel-trials 20]
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import shutil
import threading
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, random_decision, report  # noqa: E402

from hortus import games  # noqa: E402
from hortus.clients import AdvisorClient, EvaluationItem, Position  # noqa: E402
from hortus.search import Limits, analyze  # noqa: E402

GAME = "botanik"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Server:
    """A ``hortus serve`` process on a free loopback port."""

    def __init__(self, *args: str, web: bool = False) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if not web:
            args = (*args, "--web-address", "off")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hortus.cli", "serve", "--address", "127.0.0.1:0", "--log-level", "warning", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError(f"server did not start: {line!r}")
        self.target = line.split("listening on ", 1)[1].strip()
        self.web = ""
        while web and not self.web:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the web port did not start (is hortus[web] installed?)")
            if line.startswith("hortus web"):
                self.web = line.rsplit(" ", 1)[1].strip()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def positions(count: int, seed: int = 1) -> list[games.State]:
    """Decision positions reached by random play from seeded openings."""
    rng = random.Random(seed)
    game = games.get(GAME)
    found: list[games.State] = []
    while len(found) < count:
        state = random_decision(game, None, rng.getrandbits(32), rng.randrange(0, 30), rng)
        if state is not None:
            found.append(state)
    return found


class ConnectJson:
    """SuggestMove as Connect JSON over one keep-alive HTTP/1.1 connection, the way a page's
    fetch sends it: the caller encodes the JSON request and decodes the JSON answer."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)

    def suggest_move(self, state: games.State, iterations: int, seed: int) -> str:
        body = json.dumps(
            {
                "position": {"game": GAME, "encoded": base64.b64encode(state.encode()).decode()},
                "limits": {"iterations": str(iterations), "seed": str(seed)},
            }
        )
        self.conn.request("POST", "/hortus.v1.Advisor/SuggestMove", body, {"Content-Type": "application/json"})
        response = self.conn.getresponse()
        answer = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError(f"Connect JSON SuggestMove failed: {answer}")
        return str(answer["action"]["notation"])

    def close(self) -> None:
        self.conn.close()


def latency(calls: int, iterations: int) -> list[dict[str, object]]:
    state = positions(1)[0]
    position = Position(GAME, state.encode())
    service: list[float] = []
    web: list[float] = []
    local: list[float] = []
    with Server("--workers", "1", web=True) as server, AdvisorClient(server.target, timeout=30) as client:
        connect = ConnectJson(server.web)
        for i in range(30):  # warm up every path
            client.suggest_move(position, iterations=iterations, seed=i)
            connect.suggest_move(state, iterations, i)
            analyze(state, Limits(iterations=iterations, seed=i))
        for i in range(calls):  # one rotation: the machine's load changes alike for all three
            started = time.perf_counter()
            client.suggest_move(position, iterations=iterations, seed=i)
            service.append((time.perf_counter() - started) * 1000.0)
            started = time.perf_counter()
            connect.suggest_move(state, iterations, i)
            web.append((time.perf_counter() - started) * 1000.0)
            started = time.perf_counter()
            analyze(state, Limits(iterations=iterations, seed=i))
            local.append((time.perf_counter() - started) * 1000.0)
        connect.close()
    rows: list[dict[str, object]] = []
    for path, values in (("SuggestMove via gRPC", service), ("SuggestMove via Connect JSON", web), ("analyze in-process", local)):
        rows.append(
            {"what": path, "iterations": iterations, "calls": calls, "p50_ms": median(values), "p99_ms": percentile(values, 0.99)}
        )
    for path, values in (("gRPC overhead (p50 difference)", service), ("Connect JSON overhead (p50 difference)", web)):
        rows.append(
            {
                "what": path,
                "iterations": iterations,
                "calls": calls,
                "p50_ms": median(values) - median(local),
                "p99_ms": percentile(values, 0.99) - percentile(local, 0.99),
            }
        )
    for row in rows:
        row["load_avg_1min"] = os.getloadavg()[0]
    return rows


def cache_latency(calls: int, iterations: int) -> list[dict[str, object]]:
    """Cache misses and hits of SuggestMove and RankMoves through gRPC, alternately: each
    seed's request is sent twice, the first a miss (a search), the second a hit."""
    state = positions(1)[0]
    position = Position(GAME, state.encode())
    times: dict[tuple[str, str], list[float]] = {}
    with Server("--workers", "1") as server, AdvisorClient(server.target, timeout=30) as client:
        methods = (("SuggestMove", client.suggest_move), ("RankMoves", client.rank_moves))
        for i in range(calls + 30):  # the first 30 warm every path up
            for name, call in methods:
                for kind in ("miss", "hit"):
                    started = time.perf_counter()
                    call(position, iterations=iterations, seed=1_000_000 + i)
                    if i >= 30:
                        times.setdefault((name, kind), []).append((time.perf_counter() - started) * 1000.0)
    return [
        {
            "what": f"{name} cache {kind}",
            "iterations": iterations,
            "calls": len(values),
            "p50_ms": median(values),
            "p99_ms": percentile(values, 0.99),
            "load_avg_1min": os.getloadavg()[0],
        }
        for (name, kind), values in times.items()
    ]


def continue_latency(iterations: int, trials: int) -> list[dict[str, object]]:
    """Analyze of `iterations`, then `iterations` more continued from its token, then one fresh
    Analyze of twice as many, per position (all through gRPC, interval 0: only the final)."""
    times: dict[str, list[float]] = {}
    checked = 0
    with Server("--workers", "1") as server, AdvisorClient(server.target, timeout=120) as client:
        for i, state in enumerate(positions(trials + 2, seed=5)):
            position = Position(GAME, state.encode())

            def run(what: str, budget: int, token: str = "") -> tuple[int, str]:
                started = time.perf_counter()
                last = list(client.analyze(position, iterations=budget, seed=i, interval_ms=0, continue_from=token))[-1]
                if i >= 2:  # the first two warm up
                    times.setdefault(what, []).append((time.perf_counter() - started) * 1000.0)
                return last.analysis.iterations, last.continuation

            _, token = run(f"Analyze {iterations} (fresh)", iterations)
            done, _ = run(f"Analyze +{iterations} continued ({2 * iterations} total)", iterations, token)
            fresh, _ = run(f"Analyze {2 * iterations} (fresh)", 2 * iterations)
            assert done == fresh == 2 * iterations
            checked += 1
    return [
        {
            "what": what,
            "calls": len(values),
            "p50_ms": median(values),
            "p99_ms": percentile(values, 0.99),
            "load_avg_1min": os.getloadavg()[0],
        }
        for what, values in times.items()
    ]


def throughput(count: int, iterations: int, repeats: int, streams: int = 6, window: int = 4) -> list[dict[str, object]]:
    """Positions per second of one batch of `count` positions through `streams` calls (one
    connection each) with `window` positions in flight per call. ``slots_busy`` is the share
    of the wall time the server's search slots spent searching (the searches' own elapsed
    times, summed): CPU contention from other jobs slows the searches but leaves it near 1,
    while idle slots (a batch that cannot keep every slot fed, e.g. the end of a batch on
    processes that got unequal numbers of connections) lower it."""
    states = positions(count, seed=2)
    items = [EvaluationItem(f"p{i}", Position(GAME, s.encode()), iterations=iterations, seed=i) for i, s in enumerate(states)]
    rows: list[dict[str, object]] = []
    setups = (
        ("1 process, 1 search at a time", 1, ("--workers", "1", "--max-concurrent-searches", "1")),
        ("2 processes, 1 search each", 2, ("--workers", "2", "--max-concurrent-searches", "1")),
        ("1 process, 2 searches on threads", 2, ("--workers", "1", "--max-concurrent-searches", "2")),
    )
    base = 0.0
    for label, slots, args in setups:
        rates = []
        busy = []
        with Server(*args) as server, AdvisorClient(server.target, timeout=120) as client:
            list(client.evaluate(items[:8], streams=4))  # warm up every connection
            for _ in range(repeats):
                started = time.perf_counter()
                searched_ms = 0.0
                answered = 0
                for result in client.evaluate(items, streams=streams, window=window, max_moves=1):
                    assert result.analysis is not None
                    searched_ms += result.analysis.elapsed_ms
                    answered += 1
                elapsed = time.perf_counter() - started
                assert answered == len(items)
                rates.append(answered / elapsed)
                busy.append(searched_ms / (elapsed * 1000.0 * slots))
        rate = median(rates)
        base = base or rate
        rows.append(
            {
                "setup": label,
                "positions": count,
                "iterations": iterations,
                "positions_per_s": rate,
                "vs_1_process": rate / base,
                "slots_busy": median(busy),
                "load_avg_1min": os.getloadavg()[0],
            }
        )
    return rows


def cancel_latency(trials: int) -> list[dict[str, object]]:
    """Analyze cancelled from the TypeScript client: abort -> search stopped (server side, the
    servicer's listener) and abort -> a new search admitted (client side)."""
    from hortus.server import ServerConfig, build_server
    from hortus.server.web import WebOptions

    ts = Path(__file__).resolve().parent.parent / "clients" / "typescript"
    node = shutil.which("node")
    if node is None or not (ts / "dist" / "index.js").exists():
        print("cancel latency: skipped (needs node and `npm ci && npm run build` in clients/typescript)")
        return []
    stops: list[float] = []
    lock = threading.Lock()

    def listener(method: str, analysis: object, cancelled: bool) -> None:
        if method == "Analyze" and cancelled:
            with lock:
                stops.append(time.time() * 1000.0)

    running = build_server("127.0.0.1:0", ServerConfig(max_concurrent_searches=1, max_threads=1), web=WebOptions("127.0.0.1:0"))
    running.servicer.listeners.append(listener)
    try:
        assert running.web is not None
        out = subprocess.run(
            [node, str(ts / "bench" / "cancel.mjs"), f"http://127.0.0.1:{running.web.port}", str(trials)],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        ).stdout
    finally:
        running.stop(0)
    samples = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    to_stop = [stop - s["aborted_epoch_ms"] for s, stop in zip(samples, stops)]
    to_free = [float(s["slot_free_ms"]) for s in samples]
    rows: list[dict[str, object]] = []
    for what, values in (("abort -> search stopped (server)", to_stop), ("abort -> next search admitted (client)", to_free)):
        rows.append(
            {
                "what": what,
                "trials": len(values),
                "p50_ms": median(values),
                "max_ms": max(values),
                "load_avg_1min": os.getloadavg()[0],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--iterations", type=int, default=200, help="SuggestMove budget")
    parser.add_argument(
        "--positions", type=int, default=600, help="batch size (a steady batch; small ones weigh their start and end)"
    )
    parser.add_argument("--batch-iterations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--streams", type=int, default=6, help="EvaluatePositions calls at once")
    parser.add_argument("--window", type=int, default=4, help="positions in flight per call")
    parser.add_argument("--skip-latency", action="store_true", help="skip the SuggestMove latency")
    parser.add_argument("--skip-throughput", action="store_true", help="skip the EvaluatePositions throughput")
    parser.add_argument("--skip-cache", action="store_true", help="skip the answer cache's hits and misses")
    parser.add_argument("--skip-continue", action="store_true", help="skip the continued Analyze")
    parser.add_argument("--continue-iterations", type=int, default=2000, help="Analyze budget before and after continuing")
    parser.add_argument("--continue-trials", type=int, default=20, help="positions for the continued Analyze")
    parser.add_argument("--cancel-trials", type=int, default=20, help="Analyze cancels from the TypeScript client (0: skip)")
    args = parser.parse_args()
    if not args.skip_latency:
        report(
            "service: SuggestMove latency, gRPC and Connect JSON vs in-process (ms)",
            latency(args.calls, args.iterations),
            ["what", "iterations", "calls", "p50_ms", "p99_ms", "load_avg_1min"],
        )
    if not args.skip_cache:
        report(
            "service: answer cache, a miss (search) then a hit, through gRPC (ms)",
            cache_latency(args.calls, args.iterations),
            ["what", "iterations", "calls", "p50_ms", "p99_ms", "load_avg_1min"],
        )
    if not args.skip_continue:
        report(
            "service: Analyze continued from its token vs afresh, through gRPC (ms)",
            continue_latency(args.continue_iterations, args.continue_trials),
            ["what", "calls", "p50_ms", "p99_ms", "load_avg_1min"],
        )
    if args.cancel_trials:
        rows = cancel_latency(args.cancel_trials)
        if rows:
            report(
                "service: Analyze cancel from the TypeScript client (ms)",
                rows,
                ["what", "trials", "p50_ms", "max_ms", "load_avg_1min"],
            )
    if args.skip_throughput:
        return
    report(
        "service: EvaluatePositions throughput (median of repeats)",
        throughput(args.positions, args.batch_iterations, args.repeats, args.streams, args.window),
        ["setup", "positions", "iterations", "positions_per_s", "vs_1_process", "slots_busy", "load_avg_1min"],
    )


if __name__ == "__main__":
    main()
