"""A two-node Ray cluster on this machine, for the tests of what runs on Ray (the distributed
runner, the balance lab). Import `ray` in the test module with ``pytest.importorskip`` first."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Loopback only: Ray otherwise rewrites 127.0.0.1 to the machine's outward address, where a
# node started on loopback cannot be reached (read before ray is imported).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@contextmanager
def two_node_cluster() -> Iterator[Any]:
    """A head and a worker node, one CPU each, on loopback; stopped here (never `ray stop`,
    which would end every Ray process on the machine)."""
    import ray
    from ray.cluster_utils import Cluster

    node_args = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 80 * 1024 * 1024}
    cluster = Cluster(initialize_head=True, head_node_args={**node_args, "include_dashboard": False})
    cluster.add_node(**node_args)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
