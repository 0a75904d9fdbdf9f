"""bench/hints.py (the hint yardstick): its per-position records (`--details`) are the
figures' own data: the agreement and regrets of the table are those of the records."""

from __future__ import annotations

from paths import REPO
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = REPO / "bench" / "hints.py"


def test_the_details_records_add_up_to_the_table(tmp_path: Path) -> None:
    details = tmp_path / "details.jsonl"
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--game",
            "botanik",
            "--per-game",
            "4",
            "--budget",
            "40",
            "--factor",
            "4",
            "--engine",
            "default",
            "base",
            "--values",
            "dedicated",
            "--details",
            str(details),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = {r["engine"]: r for r in json.loads(out.stdout.strip().splitlines()[-1])["results"]}
    records = [json.loads(line) for line in details.read_text().splitlines()]
    assert sorted(rows) == ["base", "default"] and len(records) == 8
    for engine, row in rows.items():
        mine = [r for r in records if r["engine"] == engine]
        assert [r["position"] for r in mine] == [0, 1, 2, 3]
        assert all(r["id"].startswith("botanik/") for r in mine) and len({r["id"] for r in mine}) == 4
        assert row["agreement"] == sum(r["agrees"] for r in mine) / 4
        assert abs(row["mean_regret"] - sum(r["regret"] for r in mine) / 4) < 0.01
        for r in mine:
            # the regret is the reference's best value minus the hint's, both named in `values`
            assert r["hint"] in r["values"] and r["reference_best"] in r["values"]
            assert abs(r["regret"] - max(0.0, r["values"][r["reference_best"]] - r["values"][r["hint"]])) < 0.02
            assert r["agrees"] == (r["regret"] <= 0.5) and r["hint_iterations"] == 40


def test_skip_judges_the_positions_that_follow() -> None:
    """`--per-game 60 --skip 60` judges draws 61-120, those a `--per-game 120` run adds to a
    `--per-game 60` run's, so a second batch of positions is one command of the README."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import hints
    finally:
        sys.path.remove(str(SCRIPT.parent))
    items = [json.loads(line) for line in hints.POSITIONS.read_text().splitlines() if line.strip()]
    for game in ("botanik", "war_of_the_posies"):
        first, following, both = (hints.chosen(items, game, n, skip) for n, skip in ((60, 0), (60, 60), (120, 0)))
        assert len(first) == len(following) == 60
        assert [i["id"] for i in first + following] == [i["id"] for i in both]
        assert all(i["game"] == game for i in following)
    out = subprocess.run([sys.executable, str(SCRIPT), "--skip", "-1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--skip must be >= 0" in out.stderr
