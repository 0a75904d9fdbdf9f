"""mkdocs hook: a package tree griffe can read statically.

setup.py maps ``hortus.<pkg>`` onto top-level folders (``package_dir``: ``hortus.search`` =
``search/``, ...), which a static reader cannot follow. At startup this mirrors the mapped
folders under ``build/docs_include/hortus`` with symbolic links, as setup.py's
``build/cython_include`` does, so the API pages build from a fresh clone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAPPED = ["_ext", "games", "search", "server", "clients", "training", "distributed"]


def on_startup(**_: Any) -> None:
    pkg = ROOT / "build" / "docs_include" / "hortus"
    pkg.mkdir(parents=True, exist_ok=True)
    links = {"__init__.py": ROOT / "src" / "hortus" / "__init__.py"}
    links.update({name: ROOT / name for name in MAPPED})
    for name, target in links.items():
        link = pkg / name
        if link.is_symlink() or link.exists():
            if link.resolve() == target.resolve():
                continue
            link.unlink()
        os.symlink(os.path.relpath(target, pkg), link)
