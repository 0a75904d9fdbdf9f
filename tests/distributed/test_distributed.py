"""Sharded batch jobs (hortus.distributed): every id answered exactly once, byte-identical
whatever the split, resumable, and on a two-node Ray cluster even when a node dies mid-run."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hortus import games
from hortus.cli import main
from hortus.distributed import Job, run
from hortus.distributed.shards import Output, file_sha256

GAME = "botanik"


def _write_input(path: Path, count: int) -> list[str]:
    lines = []
    for i in range(count):
        state = games.get(GAME).new_game(seed=i + 1)
        lines.append(json.dumps({"id": f"p{i:03d}", "game": GAME, "position": state.encode().hex()}))
    lines.append("not json at all")
    lines.append(json.dumps({"id": "short", "game": GAME, "position": "00ff"}))
    lines.append(json.dumps({"id": "nogame", "game": "chess", "position": "00"}))
    lines.append(json.dumps({"id": "p000", "game": GAME, "position": "00"}))  # a repeated id
    path.write_text("\n".join(lines) + "\n")
    return [f"p{i:03d}" for i in range(count)]


def _ids(path: Path) -> list[str]:
    return [str(json.loads(line)["id"]) for line in path.read_text().splitlines()]


def _job(path: Path, shards: int, iterations: int = 60) -> Job:
    return Job(kind="evaluate", shards=shards, iterations=iterations, seed=5, input_sha256=file_sha256(path))


def test_every_id_once_whatever_the_split(tmp_path: Path) -> None:
    """One process, a pool of two, and shard by shard (--shard K/N as an array job would)
    give the same merged bytes; bad lines are error records, not a crashed job."""
    source = tmp_path / "in.jsonl"
    ids = _write_input(source, 24)
    single, pooled = tmp_path / "single", tmp_path / "pooled"
    run(_job(source, 6), single, source)
    run(_job(source, 6), pooled, source, workers=2)
    merged = (single / "merged.jsonl").read_bytes()
    assert merged == (pooled / "merged.jsonl").read_bytes()
    every = _ids(single / "merged.jsonl")
    assert len(every) == len(set(every)) == len(ids) + 4
    records = {str(json.loads(line)["id"]): json.loads(line) for line in merged.splitlines()}
    assert records["short"]["error"]["field"] == "position"
    assert records["nogame"]["error"]["field"] == "game"
    assert records["line25"]["error"]["field"] == "line"
    assert records["p000#line28"]["error"]["field"] == "id"
    assert records["p003"]["iterations"] == 60 and records["p003"]["moves"]

    by_hand = tmp_path / "by_hand"
    for k in range(6):
        argv = [
            "evaluate",
            str(source),
            "-o",
            str(by_hand),
            "--shard",
            f"{k}/6",
            "--iterations",
            "60",
            "--search-seed",
            "5",
            "--no-progress",
        ]
        assert main(argv) == 0
    assert (by_hand / "merged.jsonl").read_bytes() == merged


def test_rerun_skips_finished_shards_and_redoes_damaged_ones(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    _write_input(source, 12)
    folder = tmp_path / "out"
    first = run(_job(source, 4), folder, source)
    assert first.shards_done == 4
    again = run(_job(source, 4), folder, source)
    assert again.shards_done == 0 and again.shards_skipped == 4
    # a torn shard (a crash while a non-atomic writer would have been writing): redone
    output = Output(folder, _job(source, 4))
    shard = output.shard_path(2)
    shard.write_bytes(shard.read_bytes()[:-40])
    fixed = run(_job(source, 4), folder, source)
    assert fixed.shards_done == 1 and fixed.shards_skipped == 3
    assert len(_ids(folder / "merged.jsonl")) == len(set(_ids(folder / "merged.jsonl"))) == 16


def test_a_folder_of_another_job_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    _write_input(source, 4)
    folder = tmp_path / "out"
    run(_job(source, 2), folder, source)
    with pytest.raises(ValueError, match="holds a different job"):
        run(_job(source, 2, iterations=61), folder, source)
    argv = ["evaluate", str(source), "-o", str(folder), "--shard", "0/3", "--no-progress"]
    assert main(argv) == 2
    assert "different job" in capsys.readouterr().err


def test_selfplay_is_seeded_and_resumable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["selfplay", "--game", GAME, "--level", "1", "--games", "3", "--seed", "4", "--shards", "3", "--no-progress"]
    assert main([*argv, "-o", str(tmp_path / "a")]) == 0
    assert main([*argv, "-o", str(tmp_path / "b"), "--workers", "2"]) == 0
    merged = (tmp_path / "a" / "merged.jsonl").read_bytes()
    assert merged == (tmp_path / "b" / "merged.jsonl").read_bytes()
    rows = [json.loads(line) for line in merged.splitlines()]
    assert {r["id"].split("/")[0] for r in rows} == {"game000000", "game000001", "game000002"}
    first = rows[0]
    assert first["played"]["id"] in [m["id"] for m in first["moves"]]
    state = games.get(GAME).decode(bytes.fromhex(first["position"]))
    assert first["played"]["id"] in state.legal_actions()
    assert len(first["final_scores"]) == 2 and first["iterations"] == 32
    capsys.readouterr()
    assert main([*argv, "-o", str(tmp_path / "a")]) == 0
    assert "0 shards computed, 3 already done" in capsys.readouterr().err


# --- a two-node Ray cluster on this machine --------------------------------------------------
from ray_cluster import two_node_cluster  # noqa: E402  (sets Ray's loopback setting first)

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'hortus[ray]')")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with two_node_cluster() as running:
        yield running


def test_two_nodes_give_the_local_answer_byte_for_byte(tmp_path: Path, cluster: Any) -> None:
    source = tmp_path / "in.jsonl"
    _write_input(source, 16)
    local, distributed = tmp_path / "local", tmp_path / "ray"
    run(_job(source, 8), local, source)
    summary = run(_job(source, 8), distributed, source, use_ray=True)
    assert summary.shards_done == 8 and summary.shards_failed == 0
    assert (distributed / "merged.jsonl").read_bytes() == (local / "merged.jsonl").read_bytes()
    again = run(_job(source, 8), distributed, source, use_ray=True)
    assert again.shards_done == 0 and again.shards_skipped == 8


def test_a_node_dies_mid_run_and_every_id_is_still_answered_once(tmp_path: Path, cluster: Any) -> None:
    """The worker node is removed after the first shard lands: Ray re-runs its tasks on the
    head (max_retries), and the published output is still every id exactly once, equal to a
    local run."""
    source = tmp_path / "in.jsonl"
    ids = _write_input(source, 24)
    job = _job(source, 12, iterations=400)
    worker = next(n for n in cluster.worker_nodes)
    killed = threading.Event()

    def kill_after_first(_: object) -> None:
        if not killed.is_set():
            killed.set()
            threading.Thread(target=cluster.remove_node, args=(worker,), kwargs={"allow_graceful": False}).start()

    folder = tmp_path / "ray"
    summary = run(job, folder, source, use_ray=True, on_shard=kill_after_first)
    assert killed.is_set()
    every = _ids(folder / "merged.jsonl")
    assert len(every) == len(set(every)) == len(ids) + 4
    local = tmp_path / "local"
    run(job, local, source)
    assert summary.shards_failed == 0  # retried on the surviving node, not given up
    assert (folder / "merged.jsonl").read_bytes() == (local / "merged.jsonl").read_bytes()
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1", object_store_memory=80 * 1024 * 1024)
