"""Running a sharded job: one shard here (``--shard K/N``), every shard in a local process
pool, or every shard as a Ray task (``--ray [ADDRESS]``).

Workers only compute: a shard's records travel back to the driver, which alone publishes
them (atomically, see ``shards``). So the nodes of a cluster need hortus installed but no
shared disk, and a task that Ray re-runs after a worker or node died returns the same records
and publishes nothing twice.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hortus.distributed.jobs import compute_shard, shard_error_records
from hortus.distributed.shards import Item, Job, Output, ShardResult, read_items, shard_of

RAY_TASK_RETRIES = 3
"""Ray re-runs a shard whose worker or node died this many times, then its ids get error
records (the job finishes; a re-run of the command tries those shards again)."""


@dataclass
class Summary:
    """What a run did, for the driver's last line."""

    shards_done: int = 0
    shards_skipped: int = 0
    records: int = 0
    errors: int = 0
    shards_failed: int = 0
    seconds: float = 0.0


def shard_items(job: Job, input_path: Path | None) -> dict[int, list[Item]]:
    """The input lines of every shard (empty lists for self-play)."""
    by_shard: dict[int, list[Item]] = {k: [] for k in range(job.shards)}
    if job.kind == "evaluate" and input_path is not None:
        for item in read_items(input_path, job.game):
            by_shard[shard_of(item.id, job.shards)].append(item)
    return by_shard


def _compute(job: Job, shard: int, items: list[Item]) -> tuple[int, list[dict[str, Any]]]:
    return shard, compute_shard(job, shard, items)


def run(
    job: Job,
    folder: Path,
    input_path: Path | None = None,
    *,
    only: Iterable[int] | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    use_ray: bool = False,
    on_shard: Callable[[ShardResult], None] | None = None,
) -> Summary:
    """Run the shards of `job` not yet published in `folder` (all, or `only` those), publish
    each as it completes, and merge when every shard is done."""
    started = time.perf_counter()
    output = Output(folder, job)
    output.prepare()
    items = shard_items(job, input_path)
    wanted = sorted(set(only) if only is not None else range(job.shards))
    summary = Summary()
    todo = []
    for k in wanted:
        if output.is_done(k):
            summary.shards_skipped += 1
            if on_shard is not None:
                on_shard(ShardResult(k, len(items[k]), 0, skipped=True))
        else:
            todo.append(k)

    def publish(shard: int, records: list[dict[str, Any]], failed: bool = False) -> None:
        count, errors = output.publish_shard(shard, records)
        summary.shards_done += 1
        summary.shards_failed += int(failed)
        summary.records += count
        summary.errors += errors
        if on_shard is not None:
            on_shard(ShardResult(shard, count, errors))

    if use_ray:
        _run_on_ray(job, todo, items, ray_address, publish)
    elif workers <= 1 or len(todo) <= 1:
        for k in todo:
            publish(k, compute_shard(job, k, items[k]))
    else:
        _run_in_pool(job, todo, items, workers, publish)
    if all(output.is_done(k) for k in range(job.shards)):
        output.merge()
    summary.seconds = time.perf_counter() - started
    return summary


def _run_in_pool(
    job: Job,
    todo: list[int],
    items: dict[int, list[Item]],
    workers: int,
    publish: Callable[[int, list[dict[str, Any]]], None],
) -> None:
    # Processes, not threads: ranking and notation hold the GIL between the searches.
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: set[Future[tuple[int, list[dict[str, Any]]]]] = {pool.submit(_compute, job, k, items[k]) for k in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                shard, records = future.result()
                publish(shard, records)


def _run_on_ray(
    job: Job,
    todo: list[int],
    items: dict[int, list[Item]],
    address: str | None,
    publish: Callable[..., None],
) -> None:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("--ray needs the optional extra: pip install 'hortus[ray]'") from exc

    started_here = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            # A local cluster of this machine's cores, dashboard off, loopback only.
            ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
        started_here = True
    try:
        # One task per core (num_cpus=1) and one search thread per position: no nested
        # parallelism. max_retries re-runs a task whose worker or node died.
        task = ray.remote(num_cpus=1, max_retries=RAY_TASK_RETRIES)(_compute)
        job_ref = ray.put(job)
        pending = {task.remote(job_ref, k, items[k]): k for k in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                shard = pending.pop(ref)
                try:
                    _, records = ray.get(ref)
                except (
                    ray.exceptions.WorkerCrashedError,
                    ray.exceptions.NodeDiedError,
                    ray.exceptions.RayTaskError,
                    ray.exceptions.TaskUnschedulableError,
                ) as exc:
                    message = f"shard {shard}: its task failed {RAY_TASK_RETRIES + 1} times ({type(exc).__name__})"
                    publish(shard, shard_error_records(job, shard, items[shard], message), True)
                    continue
                publish(shard, records)
    finally:
        if started_here:
            ray.shutdown()


def default_shards(count: int) -> int:
    """Shards for a job of `count` ids: about 25 ids each (small enough to balance a cluster
    and lose little to a dead node, large enough to amortise a task), at most 4096."""
    return max(1, min(4096, (count + 24) // 25))
