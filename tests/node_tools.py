"""node and npm for the TypeScript client's tests (clients/typescript)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from paths import REPO

TS = REPO / "clients" / "typescript"
OPENAPI_CLIENT = REPO / "clients" / "openapi"  # generated from /openapi.json (openapi-typescript)
NODE = shutil.which("node")
NPM = shutil.which("npm")


def node_major() -> int:
    if NODE is None:
        return 0
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=30).stdout
    return int(out.strip().lstrip("v").split(".")[0] or 0)


def ensure_node_modules(folder: Path = TS) -> None:
    """``npm ci`` in `folder` when node_modules is missing or older than package-lock.json."""
    assert NPM is not None
    marker = folder / "node_modules" / ".package-lock.json"
    lock = folder / "package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return
    result = subprocess.run([NPM, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
