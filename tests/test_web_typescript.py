"""The TypeScript client (clients/typescript) under node's own test runner, against a real
``hortus serve`` that the node test starts with this interpreter: so ``pytest`` (and .ci/run)
runs it. Its dependencies come from package-lock.json (``npm ci``) the first time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

TS = Path(__file__).resolve().parent.parent / "clients" / "typescript"
NODE = shutil.which("node")
NPM = shutil.which("npm")


def node_major() -> int:
    if NODE is None:
        return 0
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=30).stdout
    return int(out.strip().lstrip("v").split(".")[0] or 0)


def ensure_node_modules() -> None:
    """``npm ci`` when node_modules is missing or older than package-lock.json."""
    assert NPM is not None
    marker = TS / "node_modules" / ".package-lock.json"
    lock = TS / "package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return
    result = subprocess.run(
        [NPM, "ci", "--no-audit", "--no-fund"], cwd=TS, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not installed: the TypeScript client's tests need node 20+")
def test_typescript_client_against_hortus_serve() -> None:
    assert node_major() >= 20, "the TypeScript client needs node 20 or newer"
    ensure_node_modules()
    env = dict(os.environ, HORTUS_PYTHON=sys.executable)
    result = subprocess.run([NPM, "test"], cwd=TS, capture_output=True, text=True, timeout=900, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "# fail 0" in output and "# pass 0" not in output, output[-3000:]
