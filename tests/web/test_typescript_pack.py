"""``npm pack`` of the TypeScript client builds a tarball that installs and runs outside the
repo: a fresh package in a temporary folder installs it (its three runtime dependencies
from npm's cache or registry) and imports it; a call to a port nothing listens on is an
UnavailableError and answers' bigint counts go through ``stringify``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from node_tools import NODE, NPM, TS, ensure_node_modules, node_major

SCRIPT = """
import { AdvisorClient, UnavailableError, stringify } from "@hortus/client";
const client = new AdvisorClient({ baseUrl: "http://127.0.0.1:1" });
try { await client.listGames(); console.log("no error"); }
catch (error) { console.log(error instanceof UnavailableError ? "unavailable" : `other ${error}`); }
console.log(stringify({ visits: 12n }));
"""


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not installed: the TypeScript client needs node 20+")
def test_npm_pack_installs_outside_the_repo(tmp_path: Path) -> None:
    assert node_major() >= 20, "the TypeScript client needs node 20 or newer"
    ensure_node_modules()
    packed = subprocess.run(
        [NPM, "pack", "--json", "--pack-destination", str(tmp_path)], cwd=TS, capture_output=True, text=True, timeout=600
    )
    assert packed.returncode == 0, packed.stderr[-4000:]
    listing = json.loads(packed.stdout[packed.stdout.index("[") :])
    tarball = tmp_path / listing[0]["filename"]
    files = {f["path"] for f in listing[0]["files"]}
    assert {"dist/index.js", "dist/index.d.ts", "package.json"} <= files, sorted(files)
    assert not any(f.startswith("src/") for f in files), sorted(files)
    user = tmp_path / "user"
    user.mkdir()
    (user / "package.json").write_text(json.dumps({"name": "user", "private": True, "type": "module"}))
    installed = subprocess.run(
        [NPM, "install", "--prefer-offline", "--no-audit", "--no-fund", str(tarball)],
        cwd=user,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-4000:]
    (user / "run.mjs").write_text(SCRIPT)
    ran = subprocess.run([NODE, "run.mjs"], cwd=user, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert ran.stdout.split() == ["unavailable", '{"visits":12}'], ran.stdout
