"""Every ``hortus serve`` flag can be set as a ``HORTUS_*`` environment variable; the flag wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hortus.cli import build_parser, main


def _serve_args(argv: list[str]) -> object:
    return build_parser().parse_args(["serve", *argv])


def test_environment_sets_what_no_flag_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HORTUS_MAX_ITERATIONS", "777")
    monkeypatch.setenv("HORTUS_ACCESS_LOG", "yes")
    monkeypatch.setenv("HORTUS_CORS_ORIGIN", "https://a.example, https://b.example")
    monkeypatch.setenv("HORTUS_ADDRESS", "127.0.0.1:50999")
    args = _serve_args([])
    assert args.max_iterations == 777  # converted by the option's own type
    assert args.access_log is True
    assert args.cors_origin == ["https://a.example", "https://b.example"]
    assert args.address == "127.0.0.1:50999"


def test_the_flag_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HORTUS_MAX_ITERATIONS", "777")
    monkeypatch.setenv("HORTUS_ACCESS_LOG", "0")
    args = _serve_args(["--max-iterations", "5", "--access-log"])
    assert args.max_iterations == 5
    assert args.access_log is True


def test_every_serve_flag_has_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = build_parser()
    serve = next(a for a in parser._actions if a.dest == "command").choices["serve"]  # type: ignore[union-attr]
    flags = [o for a in serve._actions for o in a.option_strings if o.startswith("--") and o != "--help"]
    assert len(flags) > 10
    for action in serve._actions:
        longs = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
        if longs:
            name = "HORTUS_" + longs[0][2:].replace("-", "_").upper()
            assert name in (action.help or ""), (longs[0], action.help)


def test_a_bad_value_is_a_usage_error_naming_the_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HORTUS_MAX_ITERATIONS", "many")
    with pytest.raises(SystemExit) as info:
        _serve_args([])
    assert info.value.code == 2
    assert "--max-iterations" in capsys.readouterr().err
    monkeypatch.delenv("HORTUS_MAX_ITERATIONS")
    monkeypatch.setenv("HORTUS_ACCESS_LOG", "perhaps")
    assert main(["serve"]) == 2
    assert "HORTUS_ACCESS_LOG" in capsys.readouterr().err


def test_a_real_server_takes_its_address_from_the_environment() -> None:
    env = dict(os.environ, HORTUS_ADDRESS="127.0.0.1:0", HORTUS_WEB_ADDRESS="off", HORTUS_WORKERS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("hortus advisor listening on 127.0.0.1:"), line
        assert not line.rstrip().endswith(":0")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "hortus.cli", "--version"], capture_output=True, text=True, timeout=60)
    import hortus

    assert out.returncode == 0 and out.stdout.strip() == f"hortus {hortus.__version__}"
