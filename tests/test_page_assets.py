"""The page's built assets (src/hortus/static, shipped in the Python package so that
`pip install .` serves the page without node) are up to date with their sources in web/:
the bundle's banner records a hash of the sources (web/build.mjs), recomputed here; when node
and esbuild are installed (cd web && npm ci), the bundle is also rebuilt and compared byte
for byte."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
STATIC = ROOT / "src" / "hortus" / "static"


def source_hash() -> str:
    """The same hash as web/build.mjs: sorted names, each name and content NUL-terminated."""
    names = sorted(["index.html", "style.css"] + [f"src/{p.name}" for p in (WEB / "src").iterdir() if p.is_file()])
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode() + b"\0" + (WEB / name).read_bytes() + b"\0")
    return h.hexdigest()


def test_shipped_bundle_was_built_from_these_sources() -> None:
    first = (STATIC / "app.js").read_text(encoding="utf-8").splitlines()[0]
    found = re.search(r"sources sha256 ([0-9a-f]{64})", first)
    assert found, "app.js has no source hash banner: build it with node web/build.mjs"
    assert found.group(1) == source_hash(), "src/hortus/static is older than web/: run node web/build.mjs"
    for name in ("index.html", "style.css"):
        assert (STATIC / name).read_bytes() == (WEB / name).read_bytes(), f"{name}: run node web/build.mjs"


def test_page_loads_only_its_own_assets() -> None:
    """No external network requests: every URL in the page is relative (served by hortus)."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    bundle = (STATIC / "app.js").read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert not re.search(r"fetch\(\s*[\"'`]https?:", bundle)


@pytest.mark.skipif(shutil.which("node") is None or not (WEB / "node_modules" / "esbuild").is_dir(),
                    reason="node and esbuild (cd web && npm ci) rebuild the bundle to compare it")
def test_rebuilding_gives_the_shipped_bytes() -> None:
    result = subprocess.run(["node", str(WEB / "build.mjs"), "--check"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
