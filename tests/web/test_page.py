"""The web page at / of the web port, in a real browser: Debian's chromium driven by
playwright (``executable_path``, no browser download). For every game: open it from a link,
play moves by clicking the picture, ask for a hint, start and stop an analysis, and let the AI
finish a late position at level 1, checking the final scores shown against the engine's.
A screenshot per game goes to tests/artifacts/ (kept by CI, ignored by git). Any console error,
failed request or empty picture fails the test."""

from __future__ import annotations

from paths import TESTS
import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (the test extra)")
pytest.importorskip("connectrpc", reason="the page needs the web front door: pip install 'hortus[web]'")
pytest.importorskip("hortus.server.web", reason="the page needs the web front door (hortus serve --web-address)")

from hortus import games  # noqa: E402
from hortus.server import ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

CHROMIUM = os.environ.get("HORTUS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = TESTS / "artifacts"
GAMES = [("botanik", 2), ("botanists", 3), ("botanical_lab", 2), ("war_of_the_posies", 2)]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install chromium (.ci/run does)")


@pytest.fixture(scope="module")
def url(serve_module: Servers) -> str:
    config = ServerConfig(default_iterations=200, max_iterations=10**6, max_time_ms=60_000)
    server = serve_module(config, web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    return f"http://127.0.0.1:{server.web.port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    """A fresh page whose console errors, uncaught exceptions and failed requests fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "requestfailed", lambda r: problems.append(f"request failed: {r.url}") if "Analyze" not in r.url else None
    )  # a stopped analysis is an aborted request
    page.on(
        "request",
        lambda r: (
            problems.append(f"external request: {r.url}") if not r.url.startswith(url) and not r.url.startswith("data:") else None
        ),
    )
    page.set_default_timeout(30_000)
    page.problems = problems  # a test expecting an error response removes it from here
    yield page
    context.close()
    assert not problems, problems


def _picture_ok(page: Any) -> None:
    rects = page.locator("#picture svg rect").count()
    assert rects > 5, "the picture is empty"


def _wait_human_turn(page: Any) -> None:
    page.wait_for_function(
        "() => document.body.dataset.busy === '0' && (document.querySelector('#picture svg [data-action]')"
        " || !document.getElementById('final').hidden)"
    )


def _late_position(name: str, players: int, seed: int, remaining: int = 12) -> tuple[str, Any]:
    """A position a few decisions before the end of a random game (hex), for a quick finish."""
    game = games.get(name)
    rng = random.Random(seed)
    state = game.new_game(players=players, seed=seed)
    trail = [state.clone()]
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
            trail.append(state.clone())
    start = trail[max(len(trail) - remaining, 0)]
    return start.encode().hex(), game


def _hint_iterations(page: Any) -> int:
    """The iteration count of the hint table's caption ("Hints: N iterations")."""
    caption = page.locator("#hints caption").inner_text()
    match = re.search(r"Hints: (\d+) iterations", caption)
    assert match, caption
    return int(match.group(1))


@pytest.mark.parametrize("name,players", GAMES)
def test_play_hint_analyse_and_finish(page: Any, url: str, name: str, players: int) -> None:
    # Seat 0 is the human; the others are the AI at level 1.
    page.goto(f"{url}/?game={name}&players={players}&level=1&seed=7")
    _wait_human_turn(page)
    _picture_ok(page)
    assert page.locator("#game").input_value() == name

    # Play three moves by clicking the picture (a chooser opens when an element stands for
    # several moves, e.g. a tile's rotations).
    for _ in range(3):
        _wait_human_turn(page)
        if not page.locator("#final").is_hidden():
            break
        before = page.locator("#position-hex").input_value()
        page.locator("#picture svg [data-action]").first.click()
        if page.locator("#chooser").is_visible():
            page.locator("#chooser-list button").first.click()
        page.wait_for_function("(b) => document.getElementById('position-hex').value !== b", arg=before)
    _wait_human_turn(page)

    # A hint: ranked moves with win %, expected scores and reasons; the best one highlighted.
    page.locator("#hint").click()
    page.wait_for_selector("#hints tr.best")
    assert "%" in page.locator("#hints tr.best").inner_text()
    assert page.locator("#picture .hint, #moves button.hint").count() >= 1

    # Pressed again, the hint goes deeper (Analyze continue_from): more iterations, not a repeat.
    first = _hint_iterations(page)
    page.locator("#hint").click()
    page.wait_for_function(
        "(n) => Number((document.querySelector('#hints caption')?.textContent || '').match(/Hints: (\\d+)/)?.[1]) > n",
        arg=first,
    )
    assert _hint_iterations(page) > first

    # An analysis streams partial results until stopped.
    page.locator("#analyse").click()
    page.wait_for_function("() => /Analysing: [1-9]/.test(document.querySelector('#hints caption')?.textContent || '')")
    page.locator("#analyse").click()
    page.wait_for_function("() => document.getElementById('analysis-state').textContent === 'Analysis stopped.'")
    assert page.locator("#analyse").get_attribute("aria-pressed") == "false"

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"page_{name}.png"))

    # A late position, every seat played by the AI at level 1, to the end: the final scores
    # shown are the engine's for the final position the page holds.
    hexed, game = _late_position(name, players, seed=3)
    ai = ",".join(str(p) for p in range(players))
    page.goto(f"{url}/?game={name}&players={players}&level=1&seed=5&ai={ai}&position={hexed}")
    page.wait_for_selector("#final:not([hidden])", timeout=120_000)
    shown = json.loads(page.locator("#final").get_attribute("data-scores") or "[]")
    final = game.decode(bytes.fromhex(page.locator("#position-hex").input_value()))
    assert final.is_terminal()
    assert shown == pytest.approx(final.scores())
    assert "Game over" in page.locator("#final").inner_text()


def test_the_ai_continues_its_own_turn(page: Any, url: str) -> None:
    """Botanical Lab's turns are several decisions long: the page's AI passes the token of its
    previous suggestion (SuggestMove continue_from) when it moves again in the same turn, each
    token once, and every such request is answered (a refusal would be a failed request)."""
    asked: list[dict[str, Any]] = []

    def on_request(request: Any) -> None:
        if request.url.endswith("/hortus.v1.Advisor/SuggestMove"):
            asked.append(json.loads(request.post_data or "{}"))

    page.on("request", on_request)
    hexed, game = _late_position("botanical_lab", 2, seed=3, remaining=40)
    page.goto(f"{url}/?game=botanical_lab&players=2&level=2&seed=5&ai=0,1&position={hexed}")
    page.wait_for_selector("#final:not([hidden])", timeout=120_000)
    tokens = [a["continueFrom"] for a in asked if a.get("continueFrom")]
    assert len(asked) >= 10 and tokens, f"{len(asked)} suggestions, {len(tokens)} continued"
    assert len(set(tokens)) == len(tokens)  # a token continues once
    assert page.locator("#error").is_hidden()


def test_errors_are_readable_text(page: Any, url: str) -> None:
    page.goto(f"{url}/?game=botanik&players=2&level=1&seed=7&position=48525453ff")
    page.wait_for_selector("#error:not([hidden])")
    text = page.locator("#error").inner_text()
    assert "position" in text and "Traceback" not in text
    # The browser logs the 400 answer itself; that one is expected here.
    page.problems[:] = [p for p in page.problems if "status of 400" not in p]
    assert page.locator("#picture svg").count() == 0


def test_keyboard_and_phone_width(page: Any, url: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{url}/?game=botanists&players=2&level=1&seed=4")
    _wait_human_turn(page)
    # No horizontal scrolling on a phone: the picture scales to the width.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 392
    # A move by keyboard: focus the first move element of the picture, press Enter.
    before = page.locator("#position-hex").input_value()
    page.locator("#picture svg [data-action]").first.focus()
    page.keyboard.press("Enter")
    if page.locator("#chooser").is_visible():
        page.keyboard.press("Enter")  # the chooser focuses its first move
    page.wait_for_function("(b) => document.getElementById('position-hex').value !== b", arg=before)
    # The hint key.
    _wait_human_turn(page)
    page.locator("body").press("h")
    page.wait_for_selector("#hints tr.best")


def _unmarked(svg: str) -> str:
    """A picture without the last turn's marks (class "last", data-last)."""
    svg = re.sub(r' data-last="[^"]*"', "", svg)
    svg = re.sub(r' class="last"', "", svg)
    return re.sub(r' class="([^"]*?) last"', r' class="\1"', svg)


def test_a_seats_view_exported_as_json_loads_back(page: Any, url: str) -> None:
    """Export view as JSON (ViewPosition, the StructuredPosition's protobuf JSON) and load it
    back: the server fills in what that seat cannot see, and the seat's picture is the same."""
    page.goto(f"{url}/?game=botanists&players=3&level=1&seed=9")
    _wait_human_turn(page)
    before = page.locator("#picture svg").inner_html()
    page.locator("#export-view").click()
    page.wait_for_function("() => document.getElementById('position-hex').value.startsWith('{')")
    view = json.loads(page.locator("#position-hex").input_value())
    assert "botanists" in view
    page.locator("#load").click()
    page.wait_for_function("() => !document.getElementById('position-hex').value.startsWith('{')")
    _wait_human_turn(page)
    assert page.locator("#error").is_hidden()
    # the same picture, but for the last turn's marks (a loaded position starts a new log)
    assert _unmarked(page.locator("#picture svg").inner_html()) == _unmarked(before)
    # Not JSON of a view: a readable error naming the position, nothing else changes.
    page.locator("#position-hex").fill('{"botanists": {"no_such_field": 1}}')
    page.locator("#load").click()
    page.wait_for_selector("#error:not([hidden])")
    assert "position" in page.locator("#error").inner_text()
