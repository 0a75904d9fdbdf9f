"""``hortus evaluate positions.jsonl -o results.jsonl``: every line answered once, errors as
answers, resumable after an interruption (a torn last line included)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hortus import games
from hortus.cli import main
from hortus.server import ServerConfig
from servers import Servers

GAME = "botanik"


@pytest.fixture(scope="module")
def target(serve_module: Servers) -> str:
    return f"127.0.0.1:{serve_module(ServerConfig(default_iterations=40)).port}"


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


def test_evaluate_keeps_every_valid_line_of_a_damaged_output(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line damaged in the middle and a repeated id are moved aside and reported; every
    valid line stays, and only the damaged ones are evaluated again."""
    source, output = tmp_path / "positions.jsonl", tmp_path / "results.jsonl"
    _positions(source, 8)
    argv = ["evaluate", str(source), "-o", str(output), "--target", target, "--no-progress"]
    assert main(argv) == 0
    lines = output.read_text().splitlines(keepends=True)
    damaged = lines[:3] + ['{"id": "g', *lines[3:5], lines[1], *lines[5:]]  # a torn line mid-file, a repeat
    damaged_id = json.loads(lines[3])["id"]
    output.write_text("".join(damaged[:3]) + damaged[3] + "\n" + "".join(damaged[4:]))
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "2 unreadable or repeated line(s)" in err and "0 evaluated" in err
    records = _records(output)
    ids = [str(r["id"]) for r in records]
    assert len(ids) == len(set(ids)) == len(lines)
    assert damaged_id in ids
    assert len((tmp_path / "results.jsonl.rejected").read_text().splitlines()) == 2


def test_evaluate_output_is_locked(target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second run on the same output fails with a clear message instead of writing ids twice."""
    import fcntl

    source, output = tmp_path / "positions.jsonl", tmp_path / "results.jsonl"
    _positions(source, 2)
    with (tmp_path / "results.jsonl.lock").open("a+") as held:
        held.write("pid 4242\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["evaluate", str(source), "-o", str(output), "--target", target, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "being written by another hortus evaluate (pid 4242)" in err
    assert not output.exists()
    assert main(["evaluate", str(source), "-o", str(output), "--target", target, "--no-progress"]) == 0


def test_evaluate_interrupted_prints_a_summary(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C: one line saying what is done (the unreadable input line and two answers),
    what remains and where the results are."""
    from hortus.clients.client import AdvisorClient

    source, output = tmp_path / "positions.jsonl", tmp_path / "results.jsonl"
    _positions(source, 6)
    real = AdvisorClient.evaluate

    def interrupted(self: AdvisorClient, *args: object, **kwargs: object) -> Iterator[object]:
        for n, result in enumerate(real(self, *args, **kwargs)):  # type: ignore[arg-type]
            if n == 2:
                raise KeyboardInterrupt
            yield result

    monkeypatch.setattr(AdvisorClient, "evaluate", interrupted)
    assert main(["evaluate", str(source), "-o", str(output), "--target", target, "--no-progress"]) == 130
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == f"hortus evaluate: interrupted: 3 of 8 done, 5 remaining, results in {output} (the same command resumes)"
