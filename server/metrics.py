"""Optional Prometheus metrics (``hortus serve --metrics-port``; needs ``prometheus_client``).

Exported, per server process:

* ``hortus_requests_total{method, code}``: finished calls by method and status code name;
* ``hortus_request_seconds{method}``: call latency histogram (seconds, whole call for streams);
* ``hortus_searches_in_flight``: searches running now;
* ``hortus_search_iterations_total`` and ``hortus_search_seconds_total``: ISMCTS iterations and
  wall-clock search seconds, so ``rate(iterations) / rate(seconds)`` is iterations per second;
* ``hortus_search_iterations_per_second``: histogram of each search's own rate;
* ``hortus_answer_cache_hits_total`` / ``hortus_answer_cache_misses_total``: requests answered
  from the answer cache, and cacheable requests that were not;
  ``hortus_answer_cache_bytes`` / ``hortus_answer_cache_entries``: what it holds now;
* ``hortus_kept_analyses`` / ``hortus_kept_analyses_bytes``: ``Analyze`` trees kept for
  ``continue_from`` and their memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hortus.search import Analysis
from hortus.server.service import AdvisorServicer

__all__ = ["Metrics", "start_metrics"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_RATE_BUCKETS = (1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6)


class _CacheCollector(Collector):
    """The answer cache's counts and the kept analyses, read when scraped (the servicer
    keeps them itself)."""

    def __init__(self, servicer: AdvisorServicer) -> None:
        self._servicer = servicer

    def collect(self) -> Iterator[Metric]:
        cache = self._servicer.cache
        kept = self._servicer.kept
        kept.sweep()
        yield GaugeMetricFamily("hortus_kept_analyses", "Analyze trees kept for continue_from", value=len(kept))
        yield GaugeMetricFamily("hortus_kept_analyses_bytes", "Memory of the kept Analyze trees (bytes)", value=kept.bytes)
        yield CounterMetricFamily("hortus_answer_cache_hits", "Requests answered from the answer cache", value=cache.hits)
        yield CounterMetricFamily(
            "hortus_answer_cache_misses", "Cacheable requests not found in the answer cache", value=cache.misses
        )
        yield GaugeMetricFamily("hortus_answer_cache_bytes", "Memory held by the answer cache (bytes)", value=cache.bytes)
        yield GaugeMetricFamily("hortus_answer_cache_entries", "Answers held by the answer cache", value=len(cache))


class Metrics:
    """The Prometheus collectors of one server and the observers that feed them."""

    def __init__(self, registry: CollectorRegistry, servicer: AdvisorServicer) -> None:
        self.registry = registry
        self.port = 0
        """The port of the ``/metrics`` endpoint (see :func:`start_metrics`)."""
        self.http_server: Any = None
        self.requests = Counter(
            "hortus_requests", "Finished calls by method and status code", ["method", "code"], registry=registry
        )
        self.latency = Histogram(
            "hortus_request_seconds", "Call latency in seconds", ["method"], buckets=_LATENCY_BUCKETS, registry=registry
        )
        in_flight = Gauge("hortus_searches_in_flight", "Searches running now", registry=registry)
        in_flight.set_function(lambda: float(servicer.searches_in_flight))
        self.iterations = Counter("hortus_search_iterations", "ISMCTS iterations", registry=registry)
        self.search_seconds = Counter("hortus_search_seconds", "Wall-clock search seconds", registry=registry)
        self.rate = Histogram(
            "hortus_search_iterations_per_second",
            "Iterations per second of each search",
            buckets=_RATE_BUCKETS,
            registry=registry,
        )
        registry.register(_CacheCollector(servicer))
        servicer.listeners.append(self._on_search)

    def _on_search(self, method: str, analysis: Analysis, cancelled: bool) -> None:
        self.iterations.inc(analysis.iterations)
        seconds = analysis.elapsed_ms / 1000.0
        self.search_seconds.inc(seconds)
        if seconds > 0:
            self.rate.observe(analysis.iterations / seconds)

    def observe_call(self, method: str, code: str, seconds: float, context: grpc.ServicerContext) -> None:
        """A :data:`hortus.server.observe.CallObserver`."""
        self.requests.labels(method, code).inc()
        self.latency.labels(method).observe(seconds)


def start_metrics(port: int, servicer: AdvisorServicer, address: str = "127.0.0.1") -> Metrics:
    """Serve ``/metrics`` on `address`:`port` (0: any free port, see ``Metrics.port``); feed
    it by adding ``metrics.observe_call`` to the server's call observers."""
    registry = CollectorRegistry()
    metrics = Metrics(registry, servicer)
    started: Any = start_http_server(port, addr=address, registry=registry)
    http_server = started[0] if isinstance(started, tuple) else None
    metrics.port = int(http_server.server_port) if http_server is not None else port
    metrics.http_server = http_server
    return metrics
