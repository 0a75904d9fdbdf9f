"""``npm pack`` of the TypeScript client builds a tarball that installs and runs outside the
repo: a fresh package in a temporary folder installs it (its three runtime dependencies
from npm's cache or registry) and imports it; a call to a port nothing listens on is an
UnavailableError and answers' bigint counts go through ``stringify``; the TypeScript examples
of the README and of the client's docs page type-check against the installed package, as a
user would paste them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from node_tools import NODE, NPM, TS, ensure_node_modules, node_major
from paths import REPO

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

    # the docs' examples, each a module of its own, type-check against what was installed
    examples = [
        block
        for page in (REPO / "README.md", REPO / "docs" / "clients" / "typescript.md")
        for block in re.findall(r"```ts\n(.*?)```", page.read_text(), re.S)
        if '"@hortus/client"' in block
    ]
    assert len(examples) >= 2, examples
    for number, block in enumerate(examples):
        (user / f"example{number}.ts").write_text(block)
    config = {
        "compilerOptions": {
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "strict": True,
            "noEmit": True,
            "skipLibCheck": True,
            "types": [],
            "lib": ["es2022", "dom"],
        },
        "include": ["example*.ts"],
    }
    (user / "tsconfig.json").write_text(json.dumps(config))
    checked = subprocess.run(
        [NODE, str(TS / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "."],
        cwd=user,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
