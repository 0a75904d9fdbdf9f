"""The manylinux wheel (packaging/build_wheels.sh) installs into a fresh venv with no compiler
(CC=/bin/false: nothing is built at install time) and plays: ``hortus suggest --game botanik
--seed 7 --json``. Building the wheel takes minutes (the Cython kernels), so the test uses a
wheel already in wheelhouse/ for the running Python (HORTUS_WHEELHOUSE elsewhere), and builds
it for this interpreter only when HORTUS_BUILD_WHEEL=1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path(os.environ.get("HORTUS_WHEELHOUSE", ROOT / "wheelhouse"))
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


def wheel() -> Path:
    found = sorted(WHEELHOUSE.glob(f"hortus-*-{TAG}-{TAG}-manylinux*.whl"))
    if not found and os.environ.get("HORTUS_BUILD_WHEEL") == "1":
        env = dict(os.environ, WHEELHOUSE=str(WHEELHOUSE))
        subprocess.run([str(ROOT / "packaging" / "build_wheels.sh"), sys.executable], check=True, env=env)
        found = sorted(WHEELHOUSE.glob(f"hortus-*-{TAG}-{TAG}-manylinux*.whl"))
    if not found:
        pytest.skip(f"no {TAG} manylinux wheel in {WHEELHOUSE}: packaging/build_wheels.sh (or HORTUS_BUILD_WHEEL=1)")
    return found[-1]


def test_the_wheel_installs_without_a_compiler_and_suggests(tmp_path: Path) -> None:
    built = wheel()
    with zipfile.ZipFile(built) as archive:
        names = set(archive.namelist())
    # what the build makes beside the kernels: the OpenAPI document (from proto/) and the page
    assert {"hortus/v1/openapi.json", "hortus/v1/advisor_pb2.py", "hortus/static/index.html"} <= names
    assert any(name.startswith("hortus/_ext/mcts.cpython-") and name.endswith(".so") for name in names)
    venv.create(tmp_path / "v", with_pip=True)
    python = tmp_path / "v" / "bin" / "python"
    env = dict(os.environ, CC="/bin/false", CXX="/bin/false")
    env.pop("PYTHONPATH", None)
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(built)], check=True, env=env)
    out = subprocess.run(
        [str(tmp_path / "v" / "bin" / "hortus"), "suggest", "--game", "botanik", "--seed", "7", "--json"],
        check=True,
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout
    answer = json.loads(out)
    assert answer, out
    # the installed package, not the work tree
    where = subprocess.run(
        [str(python), "-c", "import hortus; print(hortus.__file__)"],
        check=True,
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout
    assert str(tmp_path) in where, where
    # the shipped OpenAPI document, as the web port serves it
    document = subprocess.run(
        [
            str(python),
            "-c",
            "import sys; from hortus.server.openapi import openapi_json; sys.stdout.buffer.write(openapi_json())",
        ],
        check=True,
        env=env,
        capture_output=True,
        cwd=tmp_path,
    ).stdout
    assert json.loads(document)["openapi"] == "3.1.0"
