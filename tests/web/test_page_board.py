"""The page's board as a player reads it, in a real browser (Debian's chromium via
playwright): Botanical Lab's breeds drawn as the rulebook's symbols, each named, with a
legend; Botanists' face-down tiles showing their colour, which is public, taken from the
viewing seat's view; and in every game the last turn's moves marked on the board."""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (the test extra)")
pytest.importorskip("connectrpc", reason="the page needs the web front door: pip install 'hortus[web]'")

from hortus import games  # noqa: E402
from hortus.games.botanical_lab.game import COMPONENTS as LAB, SPACE_BREEDS, SPACE_NAMES  # noqa: E402
from hortus.games.botanists.game import COLOURS, EMPTY  # noqa: E402
from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

CHROMIUM = os.environ.get("HORTUS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install chromium (.ci/run does)")
CONFIG = ServerConfig(default_iterations=100, max_iterations=10**6, max_time_ms=60_000)
READY = (
    "() => document.body.dataset.busy === '0' && (document.querySelector('#picture svg [data-action]')"
    " || !document.querySelector('#final').hidden)"
)


@pytest.fixture(scope="module")
def server(serve_module: Servers) -> RunningServer:
    return serve_module(CONFIG, web=WebOptions("127.0.0.1:0"))


@pytest.fixture(scope="module")
def url(server: RunningServer) -> str:
    assert server.web is not None
    return f"http://127.0.0.1:{server.web.port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.set_default_timeout(60_000)
    yield page
    context.close()
    assert not errors, errors


# LC1: 1 circle, 2 triangle, 3 square, 4 hexagon, 5 diamond (components.toml's [[breeds]] order)
SHAPES = {
    "circle": ["circle", 0],
    "triangle": ["polygon", 3],
    "square": ["rect", 0],
    "hexagon": ["polygon", 6],
    "diamond": ["polygon", 4],
}


def test_botanical_lab_breeds_are_drawn_as_the_rulebooks_shapes(page: Any, url: str) -> None:
    page.goto(f"{url}/?game=botanical_lab&players=2&level=1&seed=3")
    page.wait_for_function(READY)
    spaces = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#picture svg [data-space]')].map(
      (space) => [space.dataset.space, [...space.querySelectorAll('.breed')].map((g) => {
        const shape = [...g.children].find((c) => c.tagName !== 'title');
        return [g.dataset.breed, shape.tagName, shape.tagName === 'polygon' ? shape.points.numberOfItems : 0,
                g.querySelector('title').textContent];
      })]))""")
    assert set(spaces) == set(SPACE_NAMES)
    for s, name in enumerate(SPACE_NAMES):
        # the accepted breeds first, then the plant's (none at the start)
        accepted = spaces[name][: len(SPACE_BREEDS[s])]
        assert [b[0] for b in accepted] == [LAB.breeds[b - 1].name for b in SPACE_BREEDS[s]], name
        for breed, tag, points, title in spaces[name]:
            assert [tag, points] == SHAPES[breed], (name, breed, tag, points)
            assert title.endswith(breed), title
    legend = page.evaluate("""() => {
      const legend = document.querySelector('#picture svg .legend');
      return {breeds: [...legend.querySelectorAll('.breed')].map((g) => g.dataset.breed), text: legend.textContent};
    }""")
    assert legend["breeds"] == list(SHAPES)
    assert all(name in legend["text"] for name in SHAPES), legend["text"]


def _face_down_position(players: int) -> tuple[str, list[list[str]]]:
    """A Botanists position where seat 0 decides and some land holds face-down tiles, and the
    colours seat 0's view gives each seat's face-down tiles (seat 0 first, as drawn)."""
    game = games.get("botanists")
    for seed in range(50):
        rng = random.Random(seed)
        state = game.new_game(players=players, seed=seed)
        for _ in range(400):
            if state.is_terminal():
                break
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            view = state.view(0)
            down = [
                [
                    COLOURS[view["land_colour"][w][k]]
                    for k in range(view["land_filled"][w])
                    if view["land_colour"][w][k] != EMPTY and view["land_down"][w][k]
                ]
                for w in range(players)
            ]
            if state.current_player == 0 and sum(map(len, down)) >= 4 and len({c for d in down for c in d}) >= 2:
                return state.encode().hex(), down
            state.apply(rng.choice(state.legal_actions()))
    raise AssertionError("no Botanists position with face-down tiles in 50 random games")


def test_botanists_face_down_tiles_show_their_public_colour(page: Any, url: str) -> None:
    hexed, down = _face_down_position(2)
    page.goto(f"{url}/?game=botanists&players=2&level=1&ai=1&position={hexed}")
    page.wait_for_function("() => document.body.dataset.busy === '0' && document.querySelector('#picture svg [data-action]')")
    drawn = page.evaluate("""() => [...document.querySelectorAll('#picture svg .tile[data-face="down"]')].map(
      (t) => ({colour: t.dataset.colour, title: t.querySelector('title').textContent, text: t.textContent}))""")
    assert [d["colour"] for d in drawn] == [c for seat in down for c in seat]
    for d in drawn:
        assert d["colour"] in d["title"] and d["colour"] in d["text"], d


def _last_turn(log: list[str]) -> tuple[int, list[str]]:
    """The seat of the log's last decision and its moves in a row (draws between them skipped)."""
    seat, moves = -1, []
    for line in reversed(log):
        m = re.match(r"^seat (\d+)(?: \(AI\))?: (.*)$", line)
        if not m:
            continue  # a draw
        if seat not in (-1, int(m.group(1))):
            break
        seat = int(m.group(1))
        moves.append(m.group(2))
    return seat, moves[::-1]


@pytest.mark.parametrize("name,players", [("botanik", 2), ("botanists", 2), ("botanical_lab", 2), ("war_of_the_posies", 2)])
def test_the_last_move_is_marked_on_the_board(page: Any, url: str, name: str, players: int) -> None:
    """The human (seat 0) plays its first move each time; after every turn the picture's marked
    elements (class "last") are the last turn's moves, named by data-last, and within a few
    turns the AI's own moves are marked where they changed the board."""
    page.goto(f"{url}/?game={name}&players={players}&level=1&seed=5&ai=1")
    page.wait_for_function(READY)
    ai_marked = 0
    for _ in range(12):
        if page.locator("#final").is_visible():
            break
        count = page.locator("#log li").count()
        page.locator("#picture svg [data-action]").first.click()
        if page.locator("#chooser").is_visible():
            page.locator("#chooser-list button").first.click()
        page.wait_for_function("(n) => document.querySelectorAll('#log li').length > n", arg=count)
        page.wait_for_function(READY)
        log = page.locator("#log li").all_inner_texts()
        marks = page.evaluate("() => [...document.querySelectorAll('#picture svg .last')].map((e) => e.dataset.last)")
        seat, moves = _last_turn(log)
        assert seat >= 0, log
        assert set(marks) <= set(moves), (marks, moves)
        if seat == 1 and marks:
            ai_marked += 1
            if ai_marked >= 2:
                break
    assert ai_marked >= 1, f"{name}: the AI's moves were never marked"
