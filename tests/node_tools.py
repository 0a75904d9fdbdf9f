"""node and npm for the TypeScript client's tests (clients/typescript)."""

from __future__ import annotations

import shutil
import subprocess

from paths import REPO

TS = REPO / "clients" / "typescript"
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
