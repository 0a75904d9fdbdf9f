"""The TypeScript client (clients/typescript) under node's own test runner, against a real
``hortus serve`` that the node test starts with this interpreter: so ``pytest`` (and .ci/run)
runs it. Its dependencies come from package-lock.json (``npm ci``) the first time."""

from __future__ import annotations

from node_tools import NODE, NPM, TS, ensure_node_modules, node_major
import os
import subprocess
import sys

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")


@pytest.mark.skipif(
    NODE is None or NPM is None, reason="node and npm are not installed: the TypeScript client's tests need node 20+"
)
def test_typescript_client_against_hortus_serve() -> None:
    assert node_major() >= 20, "the TypeScript client needs node 20 or newer"
    ensure_node_modules()
    env = dict(os.environ, HORTUS_PYTHON=sys.executable)
    result = subprocess.run([NPM, "test"], cwd=TS, capture_output=True, text=True, timeout=900, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "# fail 0" in output and "# pass 0" not in output, output[-3000:]
