"""Suite-wide settings.

Some tests need tools outside Python (Debian's chromium, node and npm, the bundler in
web/node_modules) and skip with the reason when they are missing, so that the suite runs on a
developer's machine without them. CI must not lose them silently: `.ci/run` installs them and
sets HORTUS_REQUIRE_EVERY_TEST=1, which turns every skip into a failure except those of the
optional extras CI does not install (ALLOWED_SKIPS).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from servers import Servers

ALLOWED_SKIPS = ("pyspiel",)
"""Skip reasons that stay skips in CI: the OpenSpiel extra is optional and not installed there."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if os.environ.get("HORTUS_REQUIRE_EVERY_TEST") != "1":
        return
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if not any(allowed in reason for allowed in ALLOWED_SKIPS):
            report.outcome = "failed"
            report.longrepr = f"skipped in CI, where every test must run: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """The same for a whole module skipped while it is collected (``pytest.importorskip`` at
    module level), which never reaches ``pytest_runtest_makereport``."""
    outcome = yield
    if os.environ.get("HORTUS_REQUIRE_EVERY_TEST") != "1":
        return
    report = outcome.get_result()
    if report.skipped:
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if not any(allowed in reason for allowed in ALLOWED_SKIPS):
            report.outcome = "failed"
            report.longrepr = f"skipped in CI, where every test must run: {reason}"


# --- in-process servers ----------------------------------------------------------------------
@pytest.fixture
def serve() -> Iterator[Servers]:
    """Servers that live for one test."""
    servers = Servers()
    yield servers
    servers.stop_all()


@pytest.fixture(scope="module")
def serve_module() -> Iterator[Servers]:
    """Servers shared by the tests of a module."""
    servers = Servers()
    yield servers
    servers.stop_all()


# --- benchmark scripts ------------------------------------------------------------------------
@pytest.fixture(autouse=True, scope="session")
def bench_results_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The bench scripts a test runs write their raw JSON to a temporary folder, not to the
    clone's bench/results/ (bench/_common.py reads HORTUS_BENCH_RESULTS)."""
    previous = os.environ.get("HORTUS_BENCH_RESULTS")
    os.environ["HORTUS_BENCH_RESULTS"] = str(tmp_path_factory.mktemp("bench-results"))
    yield
    if previous is None:
        del os.environ["HORTUS_BENCH_RESULTS"]
    else:
        os.environ["HORTUS_BENCH_RESULTS"] = previous
