"""A client generated from the served /openapi.json alone (clients/openapi: openapi-typescript
7 types, openapi-fetch calls) type-checks with tsc, rejects a misspelt field at compile time,
and plays a whole Botanik game against a live web port: what a frontend with any OpenAPI
generator gets. Its dependencies come from its package-lock.json (``npm ci``) the first time."""

from __future__ import annotations

import http.client
import json
import subprocess

import pytest

from node_tools import NODE, NPM, OPENAPI_CLIENT, ensure_node_modules, node_major

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.server import ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

pytestmark = pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not installed (node 20+)")
BIN = OPENAPI_CLIENT / "node_modules" / ".bin"


@pytest.fixture(scope="module")
def url(serve_module: Servers) -> str:
    server = serve_module(ServerConfig(max_threads=1), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    return f"http://127.0.0.1:{server.web.port}"


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), cwd=OPENAPI_CLIENT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(url: str) -> None:
    """src/api.d.ts generated from the live server's document, then compiled by tsc."""
    assert node_major() >= 20, "the generated client needs node 20 or newer"
    ensure_node_modules(OPENAPI_CLIENT)
    conn = http.client.HTTPConnection(url.removeprefix("http://").split(":")[0], int(url.rsplit(":", 1)[1]), timeout=30)
    conn.request("GET", "/openapi.json")
    (OPENAPI_CLIENT / "openapi.json").write_bytes(conn.getresponse().read())
    generated = _run(str(BIN / "openapi-typescript"), "openapi.json", "-o", "src/api.d.ts")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    compiled = _run(str(BIN / "tsc"), "-p", "tsconfig.json")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr


def test_the_generated_types_reject_a_wrong_type_and_a_misspelt_field(built: None) -> None:
    wrong = OPENAPI_CLIENT / "src" / "misspelt.ts"
    wrong.write_text(
        'import createClient from "openapi-fetch";\nimport type { paths } from "./api.js";\n'
        'const client = createClient<paths>({ baseUrl: "http://127.0.0.1:1" });\n'
        'void client.POST("/hortus.v1.Advisor/NewGame", { body: { game: 7 } });\n'
        'const { data } = await client.POST("/hortus.v1.Advisor/NewGame", { body: { game: "botanik" } });\n'
        "console.log(data?.info?.scroes);\n"
    )
    try:
        checked = _run(str(BIN / "tsc"), "-p", "tsconfig.json", "--noEmit")
    finally:
        wrong.unlink()
    out = checked.stdout + checked.stderr
    assert checked.returncode != 0, out
    assert "misspelt.ts(4," in out and "'number' is not assignable to type 'string'" in out, out
    assert "misspelt.ts(6," in out and "scroes" in out, out


def test_the_generated_client_plays_a_whole_botanik_game(built: None, url: str) -> None:
    assert NODE is not None
    played = _run(NODE, "dist/play.js", url)
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    result = json.loads(played.stdout.strip().splitlines()[-1])
    assert result["moves"] >= 20 and result["draws"] >= 10, result
    assert len(result["scores"]) == 2 and abs(sum(result["returns"]) - 1) < 1e-9, result
    assert result["streamLines"] >= 2  # at least one result line and the end line
    assert result["error"] == {"code": "invalid_argument", "status": 400}, result
