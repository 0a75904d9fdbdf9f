"""The balance report is byte for byte the same with one process, two, and on a two-node Ray
cluster (a head and a worker node on loopback)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hortus.balance.report import balance_report, report_json

from ray_cluster import two_node_cluster  # noqa: E402  (sets Ray's loopback setting first)

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'hortus[ray]')")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with two_node_cluster() as running:
        yield running


def test_jobs_and_a_two_node_cluster_give_the_same_bytes(cluster: Any) -> None:
    def report(**where: Any) -> str:
        # a comparison too: its arms run in the same task lists
        return report_json(balance_report("botanists", [2, 3], "level:1", 4, seed=6, variant={"tiles_per_colour": "25"}, **where))

    one = report(jobs=1)
    assert report(jobs=2) == one
    assert report(ray_address=cluster.address) == one
    assert len(ray.nodes()) == 2
