"""Batch evaluation throughput, side by side in one run: one local process, a local pool of
processes, the gRPC service with worker processes (`hortus serve --workers`), and Ray with one
node and with two nodes (each node one CPU, started on loopback by this script). Also Ray's
start-up time and resident memory per node.

    python bench/distributed.py --positions 400 --iterations 500
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import random_decision, report

# Ray on loopback only (it otherwise advertises the machine's outward address).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


def _positions(path: Path, count: int, game: str) -> None:
    """Seeded positions a few moves into the game (not only openings)."""
    import random

    from hortus import games

    g = games.get(game)
    with path.open("w") as f:
        for i in range(count):
            rng = random.Random(i)
            state = random_decision(g, g.min_players, i, rng.randrange(0, 12), rng)
            if state is None:
                state = g.new_game(players=g.min_players, seed=i)
            f.write(json.dumps({"id": f"p{i:05d}", "game": game, "position": state.encode().hex()}) + "\n")


def _job(source: Path, shards: int, iterations: int) -> Any:
    from hortus.distributed import Job
    from hortus.distributed.shards import file_sha256

    return Job(kind="evaluate", shards=shards, iterations=iterations, seed=1, input_sha256=file_sha256(source))


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def _ray_pids(session_marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if session_marker.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=400)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--game", default="botanik")
    parser.add_argument("--shards", type=int, default=0, help="0 = about 25 positions each")
    parser.add_argument("--skip-ray", action="store_true")
    args = parser.parse_args()

    from hortus.distributed import default_shards, run

    work = Path(tempfile.mkdtemp(prefix="hortus-bench-"))
    source = work / "positions.jsonl"
    _positions(source, args.positions, args.game)
    shards = args.shards or default_shards(args.positions)
    rows: list[dict[str, Any]] = []
    reference: bytes | None = None

    def measure(name: str, **kwargs: Any) -> None:
        nonlocal reference
        folder = work / name.replace(" ", "_")
        started = time.perf_counter()
        run(_job(source, shards, args.iterations), folder, source, **kwargs)
        seconds = time.perf_counter() - started
        merged = (folder / "merged.jsonl").read_bytes()
        if reference is None:
            reference = merged
        rows.append(
            {"runner": name, "seconds": seconds, "positions_per_s": args.positions / seconds, "identical": merged == reference}
        )

    measure("local, 1 process")
    measure("local pool, 2 processes", workers=2)

    # The gRPC service with worker processes, through the Python client's batch call.
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve", "--address", f"127.0.0.1:{port}", "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        from hortus.clients import AdvisorClient, EvaluationItem, Position

        items = []
        for line in source.read_text().splitlines():
            record = json.loads(line)
            items.append(
                EvaluationItem(
                    record["id"], Position.from_hex(record["game"], record["position"]), iterations=args.iterations, seed=1
                )
            )
        with AdvisorClient(f"127.0.0.1:{port}", wait_for_ready=True, timeout=600) as client:
            client.list_games()
            started = time.perf_counter()
            results = list(client.evaluate(items, streams=4))
            answered = sum(1 for r in results if r.ok)
            if answered != len(items):
                first = next(r for r in results if not r.ok)
                print(f"service: {len(items) - answered} errors, e.g. {first.error}", file=sys.stderr)
            seconds = time.perf_counter() - started
        searched = sum(r.analysis.iterations for r in results if r.ok and r.analysis is not None) / max(answered, 1)
        rows.append(
            {
                "runner": "service, --workers 2",
                "seconds": seconds,
                "positions_per_s": answered / seconds,
                "identical": f"n/a (service records; {searched:.0f} iterations per position)",
            }
        )
    finally:
        server.terminate()
        server.wait(30)

    if not args.skip_ray:
        import ray
        from ray.cluster_utils import Cluster

        node = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 100 * 1024 * 1024}
        started = time.perf_counter()
        cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
        head_seconds = time.perf_counter() - started
        ray.init(address=cluster.address, log_to_driver=False)
        session = os.path.basename(cluster.head_node.get_session_dir_path())
        head_mb = _rss_mb(_ray_pids(session))
        try:
            measure("ray, 1 node", use_ray=True)
            started = time.perf_counter()
            cluster.add_node(**node)
            cluster.wait_for_nodes()
            node_seconds = time.perf_counter() - started
            two_mb = _rss_mb(_ray_pids(session))
            measure("ray, 2 nodes", use_ray=True)
        finally:
            ray.shutdown()
            cluster.shutdown()
        rows.append(
            {
                "runner": "ray start-up",
                "seconds": head_seconds,
                "positions_per_s": None,
                "identical": f"head {head_seconds:.1f} s, {head_mb:.0f} MB; second node {node_seconds:.1f} s, "
                f"{two_mb - head_mb:.0f} MB (RSS before any task)",
            }
        )
        one = next(r for r in rows if r["runner"] == "ray, 1 node")
        two = next(r for r in rows if r["runner"] == "ray, 2 nodes")
        pool = next(r for r in rows if r["runner"] == "local pool, 2 processes")
        rows.append(
            {
                "runner": "ratios",
                "seconds": None,
                "positions_per_s": None,
                "identical": f"ray 2 nodes / 1 node = {two['positions_per_s'] / one['positions_per_s']:.2f}x; "
                f"ray 2 nodes / local pool = {two['positions_per_s'] / pool['positions_per_s']:.2f}x",
            }
        )

    report(
        f"batch evaluation, {args.positions} {args.game} positions x {args.iterations} iterations, {shards} shards",
        rows,
        ["runner", "seconds", "positions_per_s", "identical"],
    )


if __name__ == "__main__":
    main()
