"""node and npm for the TypeScript client's tests (clients/typescript)."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tempfile
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
    """``npm ci`` in `folder` unless the last one there finished for today's package-lock.json.

    The marker is written only after ``npm ci`` succeeded and holds the lock file's hash, so an
    interrupted install or a changed lock file (whatever its mtime) installs again."""
    assert NPM is not None
    lock_hash = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    marker = folder / "node_modules" / ".hortus-installed"
    if marker.exists() and marker.read_text() == lock_hash:
        return
    # One install at a time per folder: pytest-xdist workers reaching here together on a fresh
    # clone each ran `npm ci` in the same node_modules, and one failed removing what the other
    # was writing (ENOTEMPTY). The lock lives outside the checkout; the marker is checked again
    # under it, so the later workers find the first one's install.
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"hortus-npm-ci-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text() == lock_hash:
            return
        result = subprocess.run([NPM, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        marker.write_text(lock_hash)
