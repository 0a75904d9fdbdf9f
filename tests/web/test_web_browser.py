"""A real browser: a page on another origin calls RankMoves and an Analyze stream through the
TypeScript client (bundled with esbuild), over Connect and gRPC-Web, in Debian's chromium
driven by playwright (``executable_path``: no browser download). .ci/run installs chromium."""

from __future__ import annotations

from paths import REPO
import functools
import http.server
import json
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402
from node_tools import NPM, TS, ensure_node_modules, node_major  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

PAGE = """<!doctype html>
<meta charset="utf-8">
<title>hortus from another origin</title>
<pre id="out"></pre>
<script type="module">
import { AdvisorClient } from "./hortus-client.js";

const api = decodeURIComponent(location.hash.slice(1));
const results = {};
try {
  for (const protocol of ["connect", "grpc-web"]) {
    const advisor = new AdvisorClient({ baseUrl: api, protocol, timeoutMs: 20000 });
    const info = await advisor.newGame("botanik", { seed: 1 });
    const hints = await advisor.rankMoves(info.position, { iterations: 200, seed: 3, maxMoves: 3 });
    const updates = [];
    for await (const update of advisor.analyze(info.position, { timeMs: 300, intervalMs: 50, maxMoves: 2 })) {
      updates.push({ final: update.final, moves: update.analysis.moves.length });
    }
    // leaving an analysis early: the loop's break cancels the call
    let left = 0;
    for await (const update of advisor.analyze(info.position, { timeMs: 10000, intervalMs: 50 })) {
      left += 1;
      break;
    }
    results[protocol] = {
      best: hints.moves[0].action.notation,
      moves: hints.moves.length,
      updates,
      left,
    };
  }
  document.getElementById("out").textContent = JSON.stringify(results);
  document.body.dataset.done = "1";
} catch (error) {
  document.getElementById("out").textContent = String(error && error.stack || error);
  document.body.dataset.done = "error";
}
</script>
"""


WEB_PAGE_DOC = REPO / "docs" / "service" / "web.md"
"""The docs page holding the full page example (the README links to it)."""


def readme_page() -> str:
    """The page of the web port's docs ("From a web page"), as a user pastes it."""
    found = re.search(r"<!-- web-page-example -->\s*```html\n(.*?)```", WEB_PAGE_DOC.read_text(), re.S)
    assert found, "docs/service/web.md lost its web page example"
    return found.group(1)


@pytest.fixture(scope="module")
def bundle() -> Path:
    if NPM is None or node_major() < 20:
        pytest.skip("node 20+ and npm are needed to bundle the TypeScript client")
    ensure_node_modules()
    result = subprocess.run([NPM, "run", "bundle"], cwd=TS, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return TS / "dist" / "hortus-client.js"


@pytest.fixture(scope="module")
def page_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("page")


@pytest.fixture(scope="module")
def page_site(page_folder: Path, bundle: Path) -> Iterator[str]:
    """The page's own origin: a plain static server on another port."""
    folder = page_folder
    (folder / "index.html").write_text(PAGE)
    shutil.copy(bundle, folder / "hortus-client.js")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign, assignment]
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{site.server_address[1]}"
    site.shutdown()
    site.server_close()


@pytest.fixture(scope="module")
def api(page_site: str, serve_module: Servers) -> RunningServer:
    return serve_module(
        ServerConfig(max_concurrent_searches=2, max_threads=1), web=WebOptions("127.0.0.1:0", cors_origins=(page_site,))
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if CHROMIUM is None:
        pytest.skip("no chromium: apt-get install -y chromium (.ci/run does)")
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield launched
        launched.close()


def settled(api: RunningServer) -> bool:
    end = time.monotonic() + 10.0
    while api.servicer.searches_in_flight and time.monotonic() < end:
        time.sleep(0.01)
    return api.servicer.searches_in_flight == 0


def test_page_on_another_origin_ranks_and_streams(browser: Any, page_site: str, api: RunningServer) -> None:
    assert api.web is not None
    api_url = f"http://127.0.0.1:{api.web.port}"
    page = browser.new_page()
    try:
        page.goto(f"{page_site}/index.html#{api_url}")
        page.wait_for_selector("body[data-done]", state="attached", timeout=120_000)
        done = page.evaluate("document.body.dataset.done")
        text = page.inner_text("#out")
    finally:
        page.close()
    assert done == "1", text
    results = json.loads(text)
    assert set(results) == {"connect", "grpc-web"}
    for protocol, result in results.items():
        assert 1 <= result["moves"] <= 3, protocol
        assert [u["final"] for u in result["updates"]].count(True) == 1, protocol
        assert result["updates"][-1]["final"], protocol
        assert result["left"] == 1, protocol
    assert results["connect"]["best"] == results["grpc-web"]["best"]  # same seed, same hint
    assert settled(api)  # the analyses the page left were cancelled


def test_the_readme_page_works_as_pasted(browser: Any, page_folder: Path, page_site: str, api: RunningServer) -> None:
    """Its Hint, Analyze and Stop buttons, against the API on another origin (the README's
    address replaced by this test server's). Served from the loopback site like a user's
    `python3 -m http.server`: chromium lets a loopback page call a loopback API."""
    assert api.web is not None
    (page_folder / "readme.html").write_text(readme_page().replace("http://127.0.0.1:8080", f"http://127.0.0.1:{api.web.port}"))
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{page_site}/readme.html")
        page.wait_for_function("document.getElementById('out').textContent !== 'starting...'", timeout=60_000)
        page.click("#hint")
        page.wait_for_function("document.getElementById('out').textContent.includes('%')", timeout=60_000)
        assert re.search(r"\d+%", page.inner_text("#out")), page.inner_text("#out")
        page.click("#analyze")
        page.wait_for_function("document.getElementById('out').textContent.startsWith('so far')", timeout=60_000)
        assert api.servicer.searches_in_flight == 1
        page.click("#stop")
        assert settled(api), "Stop did not stop the search"
        assert page.inner_text("#out").startswith("so far")  # cancelled, so no final update
    finally:
        page.close()
    assert not errors, errors
