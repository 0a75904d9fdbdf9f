"""``hortus evaluate positions.jsonl -o results.jsonl``: every line answered once, errors as
answers, resumable after an interruption (a torn last line included)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hortus import games
from hortus.clients.cli import main
from hortus.server import ServerConfig, create_server

GAME = "botanik"


@pytest.fixture(scope="module")
def target() -> Iterator[str]:
    server, port = create_server("127.0.0.1:0", ServerConfig(default_iterations=40))
    yield f"127.0.0.1:{port}"
    server.stop(0)


def _positions(path: Path, count: int) -> list[str]:
    lines = []
    for i in range(count):
        state = games.get(GAME).new_game(seed=i + 1)
        record = {"id": f"g{i}", "game": GAME, "position": state.encode().hex()}
        if i % 2:
            record["iterations"] = 25
        lines.append(json.dumps(record))
    lines.append(json.dumps({"id": "broken", "game": GAME, "position": "00ff"}))
    lines.append("this is not json")
    path.write_text("\n".join(lines) + "\n")
    return [f"g{i}" for i in range(count)]


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_evaluate_file_and_resume(target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, output = tmp_path / "positions.jsonl", tmp_path / "results.jsonl"
    ids = _positions(source, 8)
    argv = ["evaluate", str(source), "-o", str(output), "--target", target, "--no-progress", "--streams", "2"]
    assert main(argv) == 0
    records = _records(output)
    assert sorted(str(r["id"]) for r in records) == sorted([*ids, "broken", "10"])
    by_id = {str(r["id"]): r for r in records}
    assert by_id["g1"]["analysis"]["iterations"] == 25  # type: ignore[index]
    assert by_id["g0"]["analysis"]["iterations"] == 40  # type: ignore[index]  # the server default
    assert by_id["broken"]["error"]["code"] == "INVALID_ARGUMENT"  # type: ignore[index]
    assert by_id["10"]["error"]["field"] == "line"  # type: ignore[index]

    # an interrupted run: 4 complete lines and a torn fifth
    lines = output.read_text().splitlines(keepends=True)
    output.write_text("".join(lines[:4]) + lines[4][:10])
    assert main(argv) == 0
    again = _records(output)
    assert sorted(str(r["id"]) for r in again) == sorted(str(r["id"]) for r in records)  # nothing twice
    assert "4 already in" in capsys.readouterr().err
    # a complete output: nothing to do
    assert main(argv) == 0
    assert len(_records(output)) == len(records)


def test_evaluate_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "out.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
