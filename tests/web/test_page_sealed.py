"""The page against a sealing server (``hortus serve --seal-key``), in a real browser (Debian's
chromium via playwright): every response body the page receives is recorded, and nothing the
browser gets -- the Position box, the share link, the exported JSON, any body -- tells what
the human's seat cannot see.

Two checks: the same position re-dealt so that only the hidden part differs gives the same
recorded bodies, box, link and export (modulo the sealed blobs' fresh nonces); and through a
game played on, every request the page made is replayed against a re-deal of its position
and answers the same, but where the answer is the hidden part revealed by the rules (a draw,
the other seat's move)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (the test extra)")
pytest.importorskip("connectrpc", reason="the page needs the web front door: pip install 'hortus[web]'")
pytest.importorskip("cryptography", reason="sealing needs the seal extra: pip install 'hortus[seal]'")

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from hortus import games  # noqa: E402
from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.sealing import Sealer, load_sealer  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc, positions_pb2  # noqa: E402
from positions import midgame  # noqa: E402
from servers import Servers  # noqa: E402

CHROMIUM = os.environ.get("HORTUS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install chromium (.ci/run does)")
HIDDEN_GAMES = ["botanical_lab", "botanists", "war_of_the_posies"]  # games whose views hide something
KEY = base64.b64encode(bytes(range(7, 39))).decode()
SERVICE = "/hortus.v1.Advisor/"
# fields that differ between two identical requests: fresh ciphertext, timings, tokens
VOLATILE = {"sealed", "elapsedMs", "continuation", "continueFrom"}
READY = "() => document.body.dataset.busy === '0' && document.querySelector('#picture svg [data-action]')"


class Sealing:
    """A sealing server with its web port, the key file's sealer, and a gRPC stub of it."""

    def __init__(self, key_file: Path, serve: Servers) -> None:
        config = ServerConfig(
            default_iterations=100, max_iterations=10**5, max_time_ms=60_000, max_threads=1, seal_key_file=str(key_file)
        )
        self.running: RunningServer = serve(config, web=WebOptions("127.0.0.1:0"))
        assert self.running.web is not None
        self.url = f"http://127.0.0.1:{self.running.web.port}"
        self.sealer: Sealer = load_sealer(key_file)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.running.port}")
        self.stub = advisor_pb2_grpc.AdvisorStub(self.channel)


@pytest.fixture(scope="module")
def sealing(tmp_path_factory: pytest.TempPathFactory, serve_module: Servers) -> Iterator[Sealing]:
    key_file = tmp_path_factory.mktemp("seal") / "seal.keys"
    key_file.write_text(f"k1 {KEY}\n")
    served = Sealing(key_file, serve_module)
    yield served
    served.channel.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


class Recorded:
    """One page's exchanges with the server: (method, request JSON, response messages)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.responses: list[Any] = []
        self.errors: list[str] = []
        page.on("response", lambda response: self.responses.append(response))
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def exchanges(self) -> list[tuple[str, Any, list[Any]]]:
        out = []
        for response in self.responses:
            path = urllib.parse.urlparse(response.url).path
            if not path.startswith(SERVICE):
                continue
            sent = response.request
            request = messages(sent.headers.get("content-type", ""), sent.post_data_buffer or b"{}")[0]
            out.append((path[len(SERVICE) :], request, messages(response.headers.get("content-type", ""), response.body())))
        return out


def messages(content_type: str, body: bytes) -> list[Any]:
    """The JSON messages of a Connect body (a stream's body is enveloped:
    flags byte, big-endian length, message; the end-of-stream envelope carries no message)."""
    if "connect+json" not in content_type:
        return [json.loads(body)]
    out, at = [], 0
    while at < len(body):
        flags, length = struct.unpack(">BI", body[at : at + 5])
        data = json.loads(body[at + 5 : at + 5 + length])
        at += 5 + length
        if flags & 0x02:  # end of stream: an error would be here
            assert "error" not in data, data
        else:
            out.append(data)
    return out


def blobs(value: Any) -> list[bytes]:
    """Every sealed blob in a JSON message."""
    if isinstance(value, dict):
        return [base64.b64decode(v) for k, v in value.items() if k == "sealed"] + [
            b for k, v in value.items() if k != "sealed" for b in blobs(v)
        ]
    if isinstance(value, list):
        return [b for v in value for b in blobs(v)]
    return []


def stable(value: Any) -> Any:
    """A JSON message without its volatile fields (VOLATILE)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def no_plaintext(sealer: Sealer, blob: bytes) -> None:
    """A blob the page held: it opens with the key, for seat 0, and holds its position's bytes
    only encrypted."""
    opened = sealer.open(blob)
    assert opened.seat == 0
    assert opened.encoded not in blob and opened.encoded.hex().encode() not in blob
    assert opened.game.encode() not in blob


def decision(name: str) -> games.State:
    """A 2-seat mid-game decision of seat 0 whose view has several completions."""
    for seed in range(80):
        state = midgame(name, seed, steps=6 + seed % 9)
        if state.current_player != 0:
            continue
        view = state.view(0)
        if len({state.game.from_view(view, seed=k).encode() for k in (11, 12, 13)}) == 3:
            return state
    raise AssertionError(f"no decision of seat 0 found in {name}")


def seat_zero_turn(browser: Any, sealing: Sealing, world: games.State) -> tuple[list[Any], dict[str, Any]]:
    """Seat 0's turn at `world` as the page plays it (handed the position sealed by a link):
    a hint, the exported view, then its first move. Returns the exchanges up to the first one
    that the rules let depend on the hidden part (a draw, the AI's move), and what the page
    showed: box, link, export, log."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    recorded = Recorded(page)
    blob = sealing.sealer.seal(world.game.name, world.encode(), 0)
    page.goto(f"{sealing.url}/?game={world.game.name}&players=2&level=1&ai=1&seed=5&sealed={blob.hex()}")
    page.wait_for_function(READY)
    shown: dict[str, Any] = {"box": page.locator("#position-hex").input_value(), "link": page.locator("#share").input_value()}
    page.locator("#hint").click()
    page.wait_for_function(
        "() => document.querySelector('#hints').children.length > 0 && !document.querySelector('#hint').disabled"
    )
    shown["hints"] = page.locator("#hints").inner_text()
    page.locator("#export-view").click()
    page.wait_for_function("() => document.querySelector('#position-hex').value.startsWith('{')")
    shown["export"] = json.loads(page.locator("#position-hex").input_value())
    shown["picture"] = page.locator("#picture").inner_html()
    count = page.locator("#log li").count()
    page.locator("#moves button").first.click()
    page.wait_for_function("(n) => document.querySelectorAll('#log li').length > n", arg=count)
    page.wait_for_function("() => document.body.dataset.busy === '0'")
    exchanges = recorded.exchanges()
    context.close()
    assert not recorded.errors, recorded.errors
    kept = []
    for method, request, answers in exchanges:
        if method == "SuggestMove" or (method == "ApplyActions" and any("drawSeed" in a for a in request.get("actions", []))):
            break  # from here on the hidden part may show, as the rules say (the AI's move, a draw)
        kept.append((method, request, answers))
    return kept, shown


@pytest.mark.parametrize("name", HIDDEN_GAMES)
def test_a_re_deal_of_what_the_seat_cannot_see_changes_nothing_the_browser_gets(
    browser: Any, sealing: Sealing, name: str
) -> None:
    state = decision(name)
    other = state.game.from_view(state.view(0), seed=11)
    assert other.view(0) == state.view(0) and other.encode() != state.encode()
    seen = []
    for world in (state, other):
        exchanges, shown = seat_zero_turn(browser, sealing, world)
        methods = [m for m, _, _ in exchanges]
        assert {"ApplyActions", "LegalActions", "Analyze", "ViewPosition"} <= set(methods), methods
        for _, request, answers in exchanges:
            for blob in blobs(request) + [b for a in answers for b in blobs(a)]:
                no_plaintext(sealing.sealer, blob)
            for answer in answers:
                assert "encoded" not in json.dumps(answer), answer  # never the plain position
        # the box and the link hold the position sealed only, the export is seat 0's view
        assert shown["box"].startswith("sealed:")
        no_plaintext(sealing.sealer, bytes.fromhex(shown["box"][len("sealed:") :]))
        query = urllib.parse.parse_qs(urllib.parse.urlparse(shown["link"]).query)
        assert "position" not in query and query["sealed"] == [shown["box"][len("sealed:") :]]
        exported = json_format.ParseDict(shown["export"], positions_pb2.StructuredPosition())
        assert exported.WhichOneof("view") == name and getattr(exported, name).seat == 0, shown["export"]
        shown["box"] = shown["link"] = "sealed"
        seen.append(([(m, stable(q), stable(a)) for m, q, a in exchanges], shown))
    assert seen[0][1] == seen[1][1]
    assert len(seen[0][0]) == len(seen[1][0])
    for one, two in zip(seen[0][0], seen[1][0], strict=True):
        assert one == two


# --- a game played on: each request replayed against a re-deal of its position ---------------
REPLAYED = {
    "ApplyActions": pb.ApplyActionsRequest,
    "LegalActions": pb.LegalActionsRequest,
    "ViewPosition": pb.ViewPositionRequest,
    "RankMoves": pb.RankMovesRequest,
}


def replay(sealing: Sealing, method: str, request: Any, seed: int) -> Any:
    """`request` made again with its sealed position re-dealt (what seat 0 sees kept, the rest
    drawn afresh), answered as JSON."""
    message = json_format.ParseDict(request, REPLAYED[method]())
    opened = sealing.sealer.open(message.position.sealed)
    state = games.get(opened.game).decode(opened.encoded)
    world = state.game.from_view(state.view(opened.seat), seed=seed)
    message.position.sealed = sealing.sealer.seal(opened.game, world.encode(), opened.seat)
    answer = getattr(sealing.stub, method)(message)
    return json_format.MessageToDict(answer)


@pytest.mark.parametrize("name", ["botanists"])
def test_every_answer_through_a_game_is_the_same_for_a_re_deal(browser: Any, sealing: Sealing, name: str) -> None:
    """The page deals a sealed game itself (NewGame seal_for_seat) and seat 0 plays its first
    move for a few turns against the AI; every answer it got but the draws and the AI's
    moves is what the same request gets for a re-deal of its position; the AI's moves come
    without the options it chose from."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    recorded = Recorded(page)
    page.goto(f"{sealing.url}/?game={name}&players=2&level=1&ai=1&seed=5")
    page.wait_for_function(READY)
    for _ in range(4):
        if page.locator("#final").is_visible():
            break
        count = page.locator("#log li").count()
        page.locator("#moves button").first.click()
        page.wait_for_function("(n) => document.querySelectorAll('#log li').length > n", arg=count)
        page.wait_for_function(f"() => !document.querySelector('#final').hidden || ({READY})()")
    exchanges = recorded.exchanges()
    context.close()
    assert not recorded.errors, recorded.errors
    methods = {m for m, _, _ in exchanges}
    assert {"NewGame", "ApplyActions", "LegalActions", "SuggestMove"} <= methods, methods
    replayed = 0
    for method, request, answers in exchanges:
        for blob in blobs(request) + [b for a in answers for b in blobs(a)]:
            no_plaintext(sealing.sealer, blob)
        answer = answers[0] if answers else {}
        assert "encoded" not in json.dumps(answer), (method, answer)
        if method == "SuggestMove":
            opened = sealing.sealer.open(base64.b64decode(request["position"]["sealed"]))
            if games.get(opened.game).decode(opened.encoded).current_player != 0:
                # the AI's move: played openly, nothing of the options it was chosen from
                assert not answer["analysis"].get("moves"), answer["analysis"]
            continue
        if method not in REPLAYED or any("drawSeed" in a for a in request.get("actions", [])):
            continue  # a draw shows what was drawn (as the rules say); the rest holds no position
        for seed in (21, 22):
            assert stable(replay(sealing, method, request, seed)) == stable(answer), method
        replayed += 1
    assert replayed >= 8, replayed
