"""The Lua client (clients/lua/hortus.lua) against a real server's web port (in-process on
free ports), run with ``lua5.4``: a whole Botanik game against level 2 with hints, the
unary calls' errors, an Analyze stream read line by line (NDJSON), and a balance report
(SimulateGames) byte for byte ``hortus balance``'s."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.balance.report import balance_report, report_json  # noqa: E402
from hortus.server import ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402
from paths import REPO  # noqa: E402

LUA = shutil.which("lua5.4")
LUA_DIR = REPO / "clients" / "lua"


def _has_lua_modules() -> bool:
    if LUA is None:
        return False
    probe = subprocess.run([LUA, "-e", 'require("socket.http"); require("cjson")'], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(
    not _has_lua_modules(), reason="needs lua5.4 with LuaSocket and lua-cjson (Debian: lua5.4 lua-socket lua-cjson)"
)


@pytest.fixture(scope="module")
def url(serve_module: Servers) -> str:
    server = serve_module(
        ServerConfig(default_iterations=100, max_threads=1, max_concurrent_searches=2), web=WebOptions("127.0.0.1:0")
    )
    assert server.web is not None
    return f"http://127.0.0.1:{server.web.port}"


def lua(script: Path | str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    assert LUA is not None
    if isinstance(script, Path):
        return subprocess.run([LUA, str(script), *args], capture_output=True, text=True, timeout=timeout, cwd=LUA_DIR)
    # "-": the script from standard input, with `arg` set as for a file
    return subprocess.run([LUA, "-", *args], input=script, capture_output=True, text=True, timeout=timeout, cwd=LUA_DIR)


def test_a_whole_botanik_game_against_level_2_with_hints(url: str) -> None:
    result = lua(LUA_DIR / "play_botanik.lua", url, "5")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("botanik, seed 5"), lines[:3]
    plays = [line for line in lines if line.startswith("seat ")]
    assert any(line.startswith("seat 0 plays ") for line in plays)
    assert any(line.startswith("seat 1 plays ") for line in plays)
    assert any(line.startswith("hints: ") for line in lines)
    assert lines[-3].startswith("game over after"), lines[-5:]
    returns = [float(v) for v in lines[-1].removeprefix("returns: ").split()]
    assert len(returns) == 2 and abs(sum(returns) - 1.0) < 1e-9, lines[-1]


PREAMBLE = 'package.path = "./?.lua;" .. package.path; local hortus = require("hortus"); local a = hortus.new(arg[1]);'


def test_errors_are_the_connect_error_json(url: str) -> None:
    script = (
        PREAMBLE
        + """
      local ok, e = pcall(a.new_game, a, "no-such-game", {})
      print(ok, e.code, tostring(e))
      local info = a:new_game("botanik", {players = 2, seed = 1})
      local ok2, e2 = pcall(a.apply_actions, a, info.position, {"not a move"})
      print(ok2, e2.code)
      local dead = hortus.new("http://127.0.0.1:1")
      local ok3, e3 = pcall(dead.list_games, dead)
      print(ok3, e3.code)
    """
    )
    result = lua(script, url)
    assert result.returncode == 0, result.stderr[-3000:]
    first, second, third = result.stdout.splitlines()
    assert first.startswith("false\tinvalid_argument\tinvalid_argument: ") and "game" in first, first
    assert second == "false\tinvalid_argument", second
    assert third == "false\tunavailable", third


def test_suggest_move_at_a_level_is_the_python_clients_move(url: str) -> None:
    """The same request through Lua and through plain JSON gives the same move (seeded)."""
    script = (
        PREAMBLE
        + """
      local info = a:new_game("botanik", {players = 2, seed = 11})
      local legal = a:legal_actions(info.position)
      while legal.currentPlayer < 0 do
        info = a:apply_actions(info.position, {{draw_seed = 1}})
        legal = a:legal_actions(info.position)
      end
      local s = a:suggest_move(info.position, {level = 3, seed = 4})
      print(s.action.id, #legal.actions, require("cjson").encode(info.position))
    """
    )
    result = lua(script, url)
    assert result.returncode == 0, result.stderr[-3000:]
    action_id, count, position = result.stdout.strip().split("\t", 2)
    assert int(float(count)) > 1
    status, answer = _post(url, "SuggestMove", {"position": json.loads(position), "level": 3, "limits": {"seed": 4}})
    assert status == 200, answer
    assert dict(answer.get("action") or {}).get("id", 0) == int(float(action_id)), answer


def _post(
    url: str, method: str, body: dict[str, object], content_type: str = "application/json"
) -> tuple[int, dict[str, object]]:
    host = url.removeprefix("http://")
    connection = http.client.HTTPConnection(host, timeout=60)
    connection.request("POST", f"/hortus.v1.Advisor/{method}", json.dumps(body), {"Content-Type": content_type})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    try:
        if content_type == "application/json":
            return response.status, json.loads(data) if data else {}
        return response.status, json.loads(data.splitlines()[0]) if data else {}
    except (ValueError, IndexError):
        return response.status, {"raw": data.decode("latin-1")}


def test_analyze_stream_read_line_by_line(url: str) -> None:
    result = lua(LUA_DIR / "analyze_stream.lua", url)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    updates = [line for line in lines if line.startswith("update ")]
    assert len(updates) >= 2, lines
    assert sum(", final true," in line for line in updates) == 1 and ", final true," in updates[-1], updates
    assert lines[-1].startswith(f"final after {len(updates)} updates:"), lines[-1]


def test_analyze_stream_errors_end_the_stream(url: str) -> None:
    script = (
        PREAMBLE
        + """
      local info = a:new_game("botanik", {players = 2, seed = 1})
      local ok, e = pcall(a.analyze, a, info.position, {interval_ms = 1}, function() end)
      print(ok, e.code)
    """
    )
    result = lua(script, url)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "false\tinvalid_argument", result.stdout


def test_the_readme_lua_example_runs(url: str) -> None:
    """The quick start's Lua block, as pasted (its URL pointed at this server)."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```lua\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "the README's quick start has one Lua example"
    script = 'package.path = "./?.lua;" .. package.path\n' + blocks[0].replace("http://127.0.0.1:8080", url)
    result = lua(script)
    assert result.returncode == 0, result.stderr[-3000:]
    notation = result.stdout.strip()
    assert notation and "\n" not in notation, result.stdout


def test_simulate_games_is_hortus_balances_report(url: str) -> None:
    """Each game once as it finishes, then the report text byte for byte as ``hortus balance
    --game botanik --players 2 --bots level:1 --games 3 --seed 5`` writes it; a bad seat count
    is invalid_argument naming ``players[0]``."""
    script = (
        PREAMBLE
        + """
      local report, decoded = a:simulate_games("botanik", 3, {players = {2}, level = 1, seed = 5}, function(g)
        print(string.format("game %s %d/%d %d", g.gameId, g.gamesDone, g.gamesTotal, #g.scores))
      end)
      print(string.format("seed %d %s", decoded.seed, decoded.game))
      io.write(report)
      local ok, e = pcall(a.simulate_games, a, "botanik", 3, {players = {9}})
      io.write("\\n", tostring(ok), " ", e.code, " ", e.message, "\\n")
    """
    )
    result = lua(script, url)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.split("\n")
    games = [line for line in lines if line.startswith("game ")]
    assert sorted(line.split()[1] for line in games) == ["2:0", "2:1", "2:2"], games  # each once
    assert [line.split()[2] for line in games] == ["1/3", "2/3", "3/3"], games
    assert all(line.endswith(" 2") for line in games), games  # two seats' scores
    assert lines[3] == "seed 5 botanik", lines[3]
    expected = report_json(balance_report("botanik", [2], "level:1", 3, seed=5))
    error = lines[-2]
    assert "\n".join(lines[4:-2]) == expected
    assert error.startswith("false invalid_argument ") and "players[0]" in error, error
