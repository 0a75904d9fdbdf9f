"""The page's end of a game and its connection problems, in a real browser (Debian's
chromium via playwright): the winner named by the engine's returns where a tie-break decides
on equal points, a lost connection and a refused CORS origin explained on the page, and the
server's log of the refused origin (at most once per interval) and its allowed origins."""

from __future__ import annotations

import io
import logging
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
from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.web import WebOptions, origins_line  # noqa: E402
from servers import Servers  # noqa: E402

CHROMIUM = os.environ.get("HORTUS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install chromium (.ci/run does)")
CONFIG = ServerConfig(default_iterations=100, max_iterations=10**6, max_time_ms=60_000)


def _serve(serve: Servers, cors: tuple[str, ...] = ()) -> RunningServer:
    return serve(CONFIG, web=WebOptions("127.0.0.1:0", cors_origins=cors))


def _url(server: RunningServer) -> str:
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
    page.set_default_timeout(30_000)
    yield page
    context.close()
    assert not errors, errors


def _tie_broken_end(name: str, players: int) -> tuple[str, list[float], list[float]]:
    """A random game's final position (hex) whose top scores are equal but whose returns name
    one winner: the game's tie-break decided."""
    game = games.get(name)
    for seed in range(2000):
        rng = random.Random(seed)
        state = game.new_game(players=players, seed=seed)
        while not state.is_terminal():
            if state.is_chance():
                state.resolve_chance(rng)
            else:
                state.apply(rng.choice(state.legal_actions()))
        scores, returns = list(state.scores()), list(state.returns())
        top = max(scores)
        if scores.count(top) > 1 and sorted(returns)[-1] > sorted(returns)[-2]:
            return state.encode().hex(), scores, returns
    raise AssertionError(f"no tie-broken end in 2000 random {name} games")


@pytest.mark.parametrize("name", ["botanik", "botanists", "botanical_lab", "war_of_the_posies"])
def test_the_banner_names_the_tie_breaks_winner(serve: Servers, page: Any, name: str) -> None:
    hexed, scores, returns = _tie_broken_end(name, 2)
    players = 2
    server = _serve(serve)
    page.goto(f"{_url(server)}/?game={name}&players={players}&position={hexed}")
    page.wait_for_selector("#final:not([hidden])")
    text = page.locator("#final").inner_text()
    winner = returns.index(max(returns))
    assert f"Winner: seat {winner} (on the tie-break)" in text, (text, scores, returns)
    assert " and seat" not in text, text


def test_a_lost_connection_is_explained(serve: Servers, page: Any) -> None:
    server = _serve(serve)
    url = _url(server)
    page.goto(f"{url}/?game=botanik&players=2&level=1&seed=7")
    page.wait_for_function("() => document.body.dataset.busy === '0' && document.querySelector('#picture svg [data-action]')")
    server.stop(0)
    page.locator("#hint").click()
    page.wait_for_selector("#error:not([hidden])")
    text = page.locator("#error").inner_text()
    assert "could not be reached" in text and "connection was lost" in text, text
    assert text.count("could not be reached") == 1, text  # said once, with its cause


def test_a_refused_origin_is_explained_and_logged(serve: Servers, page: Any, caplog: pytest.LogCaptureFixture) -> None:
    home = _serve(serve)  # serves the page
    other = _serve(serve)  # the API it is pointed at, which allows no other origin
    caplog.set_level(logging.WARNING, logger="hortus.server.web")
    page.goto(f"{_url(home)}/?server={_url(other)}&game=botanik&players=2&seed=7")
    page.wait_for_selector("#error:not([hidden])")
    text = page.locator("#error").inner_text()
    origin = _url(home)
    assert "could not be reached" in text and f"--cors-origin {origin}" in text, text
    # a second refused call within the interval is not logged again
    page.reload()
    page.wait_for_selector("#error:not([hidden])")
    refused = [r.getMessage() for r in caplog.records if "refused CORS origin" in r.getMessage()]
    assert len(refused) == 1, refused
    assert origin in refused[0] and "allowed: none" in refused[0], refused


def test_the_allowed_origins_are_printed_at_start() -> None:
    """``hortus serve`` prints the origins whose pages may call its web port."""
    import threading

    from hortus.server.app import serve

    out = io.StringIO()
    stop = threading.Event()
    started = threading.Event()
    web = WebOptions("127.0.0.1:0", cors_origins=("https://b.test", "https://a.test"))
    thread = threading.Thread(
        target=serve,
        args=("127.0.0.1:0", CONFIG),
        kwargs={"out": out, "stop_event": stop, "web": web, "ready": lambda _: started.set()},
    )
    thread.start()
    try:
        assert started.wait(60)
    finally:
        stop.set()
        thread.join(60)
    assert "hortus web CORS origins allowed: https://a.test, https://b.test" in out.getvalue().splitlines()
    assert "none" in origins_line(())


@pytest.mark.parametrize("name,players", [("botanik", 2), ("botanical_lab", 2), ("war_of_the_posies", 2), ("botanists", 2)])
def test_a_phone_never_scrolls_sideways_and_the_text_is_legible(serve: Servers, browser: Any, name: str, players: int) -> None:
    server = _serve(serve)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{_url(server)}/?game={name}&players={players}&level=1&seed=4")
        page.wait_for_function("() => document.body.dataset.busy === '0' && document.querySelector('#picture svg [data-action]')")
        page.locator("#hint").click()
        page.wait_for_selector("#hints tr.best")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        smallest = page.evaluate("""() => {
          const svg = document.querySelector('#picture svg');
          const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
          return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
        }""")
        assert smallest >= 11 - 1e-6, smallest
        assert page.evaluate(PLAY_BUTTONS_ON_ONE_LINE), "a hint's play button wraps"
        assert page.evaluate(HINTS_TABLE_WHOLE), "the hints table is cut"
    finally:
        context.close()


# each hint's "play" button is one line of text (a squeezed column once broke it letter by letter)
PLAY_BUTTONS_ON_ONE_LINE = """() => [...document.querySelectorAll('#hints button')].every((b) => {
  const range = document.createRange();
  range.selectNodeContents(b);
  return range.getClientRects().length === 1;
})"""


HINTS_TABLE_WHOLE = "() => { const t = document.querySelector('#hints'); return t.scrollWidth <= t.clientWidth; }"


@pytest.mark.parametrize(
    "name,players,width",
    [
        ("botanik", 2, 1280),
        ("botanical_lab", 4, 1280),
        ("war_of_the_posies", 4, 1280),
        ("botanists", 4, 1280),
        ("botanists", 4, 1800),
    ],
)
def test_a_desktop_shows_the_whole_picture_legibly(serve: Servers, browser: Any, name: str, players: int, width: int) -> None:
    """On a desktop the picture is whole (nothing hidden in its box's scroll) with its text at
    11 px or more, under the hints and the record (1280 px) or beside them (1800 px); the hints table is whole."""
    server = _serve(serve)
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{_url(server)}/?game={name}&players={players}&level=1&seed=4")
        page.wait_for_function("() => document.body.dataset.busy === '0' && document.querySelector('#picture svg [data-action]')")
        page.locator("#hint").click()
        page.wait_for_selector("#hints tr.best")
        box = page.evaluate("() => { const p = document.querySelector('#picture'); return [p.scrollWidth, p.clientWidth]; }")
        assert box[0] <= box[1], f"the picture is cut: {box[0]} px wide in a {box[1]} px box"
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        smallest = page.evaluate("""() => {
          const svg = document.querySelector('#picture svg');
          const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
          return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
        }""")
        assert smallest >= 11 - 1e-6, smallest
        assert page.evaluate(PLAY_BUTTONS_ON_ONE_LINE), "a hint's play button wraps"
        assert page.evaluate(HINTS_TABLE_WHOLE), "the hints table is cut"
    finally:
        context.close()


def test_a_log_of_the_moves_played(serve: Servers, page: Any) -> None:
    """The AI's moves and the seat's own, in notation, with the draws it may see; the picture
    marks the last move where the new position still draws its element."""
    server = _serve(serve)
    page.goto(f"{_url(server)}/?game=botanik&players=2&level=1&seed=7")
    ready = "() => document.body.dataset.busy === '0' && document.querySelector('#picture svg [data-action]')"
    page.wait_for_function(ready)
    for _ in range(2):
        count = page.locator("#log li").count()
        page.locator("#picture svg [data-action]").first.click()
        if page.locator("#chooser").is_visible():
            page.locator("#chooser-list button").first.click()
        page.wait_for_function("(n) => document.querySelectorAll('#log li').length > n", arg=count)
        page.wait_for_function(ready)
    lines = page.locator("#log li").all_inner_texts()
    assert any(line.startswith("seat 0: ") for line in lines), lines
    assert any(line.startswith("seat 1 (AI): ") for line in lines), lines
    assert all(re.match(r"^(seat [01]( \(AI\))?|draw): \S", line) for line in lines), lines
    assert any(line.startswith("draw: ") for line in lines), lines
    assert not any(line.startswith("draw: draw ") for line in lines), lines
    assert page.locator("#log li.last").count() == 1


def test_the_games_are_named_as_their_rulebooks_write_them(serve: Servers, page: Any) -> None:
    server = _serve(serve)
    page.goto(f"{_url(server)}/?game=botanik&players=2&seed=7")
    page.wait_for_function("() => document.querySelectorAll('#game option').length === 4")
    names = dict(page.evaluate("() => [...document.querySelectorAll('#game option')].map((o) => [o.value, o.textContent])"))
    assert names == {
        "botanik": "Botanik",
        "botanists": "Botanists",
        "botanical_lab": "Botanical Lab",
        "war_of_the_posies": "Botany: War of the Posies",
    }
