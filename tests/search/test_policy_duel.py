"""bench/policy_duel.py (the cheap screen of a playout policy): it runs, prints a table
and JSON, and tells a changed policy from an unchanged one."""

from __future__ import annotations

from paths import REPO
import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = REPO / "bench" / "policy_duel.py"


def duel(*args: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=True)
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("policy duel")
    row: dict[str, float] = json.loads(lines[-1])["results"][0]
    return row


def test_a_changed_policy_beats_its_baseline_and_an_unchanged_one_does_not() -> None:
    lab = duel("--game", "botanical_lab", "--games", "200", "--seed", "3")
    assert lab["games"] == 200 and lab["ci_low"] > 0.6  # Lab's policy (92% over 3,000)
    same = duel("--game", "war_of_the_posies", "--games", "200", "--seed", "3")
    assert same["ci_low"] < 0.5 < same["ci_high"]  # War has no baseline policy of its own: a coin


def test_seat_counts_outside_the_game_are_refused() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--game", "botanik", "--players", "3"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and "--players" in out.stderr


def test_its_raw_json_is_written_under_the_results_folder(tmp_path: Path) -> None:
    """bench/_common.report writes the document it prints to the results folder (bench/results/
    unless HORTUS_BENCH_RESULTS says otherwise), named after the script and the run."""
    env = {**os.environ, "HORTUS_BENCH_RESULTS": str(tmp_path / "results")}
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--game", "botanik", "--games", "20", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    )
    written = sorted((tmp_path / "results").glob("policy_duel-*.json"))
    assert len(written) == 1
    printed = json.loads(out.stdout.strip().splitlines()[-1])
    assert json.loads(written[0].read_text()) == printed
    assert printed["script"] == "policy_duel" and printed["argv"] == ["--game", "botanik", "--games", "20", "--seed", "3"]
