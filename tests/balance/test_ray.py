"""The balance report is byte for byte the same with one process, two, and on a two-node Ray
cluster (a head and a worker node on loopback)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from hortus.balance.report import balance_report, report_json

# Loopback only: Ray otherwise rewrites 127.0.0.1 to the machine's outward address, where a
# node started on loopback cannot be reached (read before ray is imported).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'hortus[ray]')")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head and a worker node, one CPU each, on loopback; stopped by the test itself
    (never `ray stop`, which would end every Ray process on the machine)."""
    from ray.cluster_utils import Cluster

    node_args = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 80 * 1024 * 1024}
    c = Cluster(initialize_head=True, head_node_args={**node_args, "include_dashboard": False})
    c.add_node(**node_args)
    ray.init(address=c.address, log_to_driver=False)
    c.wait_for_nodes()
    yield c
    ray.shutdown()
    c.shutdown()


def test_jobs_and_a_two_node_cluster_give_the_same_bytes(cluster: Any) -> None:
    def report(**where: Any) -> str:
        # a comparison too: its arms run in the same task lists
        return report_json(balance_report("botanists", [2, 3], "level:1", 4, seed=6, variant={"tiles_per_colour": "25"}, **where))

    one = report(jobs=1)
    assert report(jobs=2) == one
    assert report(ray_address=cluster.address) == one
    assert len(ray.nodes()) == 2
