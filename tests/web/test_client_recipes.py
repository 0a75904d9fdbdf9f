"""The recipe pages for Unity, Godot and PHP (docs/clients/) give the exact request bodies of
each call in a table: every body, with a real position where the page abbreviates it as
``{...}``, is parsed strictly into its request message (a misspelt or mistyped field fails)
and sent to a real web port, which answers 200."""

from __future__ import annotations

import http.client
import json
import re
from typing import Any

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from google.protobuf import json_format  # noqa: E402

from hortus.server import ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from paths import REPO  # noqa: E402
from servers import Servers  # noqa: E402

PAGES = ["unity", "godot", "php"]
ROW = re.compile(r"^\| (\w+)(?: \([^)]*\))? \| `(\{.*?\})`(.*)\|$", re.M)


@pytest.fixture(scope="module")
def port(serve_module: Servers) -> int:
    server = serve_module(ServerConfig(default_iterations=100, max_threads=1), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    return server.web.port


def post(port: int, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", f"/hortus.v1.Advisor/{method}", json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def rows(page: str) -> list[tuple[str, str, list[str]]]:
    """(method, body, the alternatives the row names in backticks) of the page's table."""
    text = (REPO / "docs" / "clients" / f"{page}.md").read_text()
    return [(m, body, re.findall(r"`(\{.*?\})`", rest)) for m, body, rest in ROW.findall(text)]


def test_the_three_recipes_give_the_same_requests() -> None:
    tables = {page: rows(page) for page in PAGES}
    assert [m for m, _, _ in tables["unity"]] == ["NewGame", "LegalActions", "ApplyActions", "SuggestMove", "RankMoves"]
    assert tables["unity"] == tables["godot"] == tables["php"]


@pytest.mark.parametrize("page", PAGES)
def test_every_request_of_the_recipe_is_answered(port: int, page: str) -> None:
    status, answer = post(port, "NewGame", {"game": "botanik", "players": 2, "seed": 7})
    assert status == 200, answer
    decision = answer["info"]["position"]  # botanik with a seed is dealt: a decision
    for method, body, alternatives in rows(page):
        request_class = getattr(pb, f"{method}Request")
        position = json.dumps(decision)
        text = body.replace("{...}", position)
        request = json.loads(text)
        json_format.Parse(text, request_class(), ignore_unknown_fields=False)  # the page's fields, strictly
        if method == "ApplyActions":
            # the page's id stands for any legal one: the first legal action here
            _, legal = post(port, "LegalActions", {"position": decision})
            request["actions"] = [{"id": legal["actions"][0].get("id", 0)}]
            for alternative in alternatives:  # {"notation": "..."}, {"drawSeed": "5"}
                json_format.Parse(json.dumps({"actions": [json.loads(alternative)]}), pb.ApplyActionsRequest())
        status, answer = post(port, method, request)
        assert status == 200, (page, method, answer)
