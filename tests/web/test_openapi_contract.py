"""The web port's OpenAPI document held to its word against a live server: it passes
openapi-spec-validator, and schemathesis (its CLI, generated requests for every operation,
valid and not) finds no 5xx, no status, content type or body off the schema; every NDJSON
line of the streams matches the documented line schema. Budget kept small (a few examples an
operation, searches capped at 300 iterations / 300 ms): about half a minute here."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")
jsonschema = pytest.importorskip("jsonschema", reason="schemathesis (the test extra) brings jsonschema")

from hortus.server import ServerConfig  # noqa: E402
from hortus.server.openapi import document_json, openapi_document, openapi_json  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

# searches stay short whatever limits the generated requests ask for
CONFIG = ServerConfig(
    default_iterations=100, max_iterations=300, max_time_ms=300, max_threads=1, max_concurrent_searches=2, max_batch_size=4
)
ST = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")
EXAMPLES = int(os.environ.get("HORTUS_SCHEMATHESIS_EXAMPLES", "20"))


@pytest.fixture(scope="module")
def port(serve_module: Servers) -> int:
    server = serve_module(CONFIG, web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    return server.web.port


def test_the_served_document_passes_openapi_spec_validator(port: int) -> None:
    validator = pytest.importorskip("openapi_spec_validator", reason="openapi-spec-validator is in the test extra")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/openapi.json")
    response = conn.getresponse()
    document = json.loads(response.read())
    assert response.status == 200
    validator.validate(document)  # raises on an invalid OpenAPI 3.1 document
    assert document == json.loads(json.dumps(openapi_document()))


def test_the_served_document_is_the_one_the_build_shipped(port: int) -> None:
    """The build made hortus/v1/openapi.json from proto/ (setup.py): the web port serves
    those bytes, and they are what the descriptors of the installed hortus.v1 give (a proto
    changed without a rebuild fails here)."""
    from importlib import resources

    shipped = (resources.files("hortus.v1") / "openapi.json").read_bytes()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/openapi.json")
    assert conn.getresponse().read() == shipped == openapi_json()
    assert shipped == document_json(openapi_document())


@pytest.mark.skipif(ST is None, reason="schemathesis (the test extra) is not installed")
def test_schemathesis_finds_no_server_error_and_no_response_off_the_schema(port: int, tmp_path: Path) -> None:
    assert ST is not None
    checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
    result = subprocess.run(
        [
            ST,
            "run",
            f"http://127.0.0.1:{port}/openapi.json",
            "--checks",
            checks,
            "--phases",
            "examples,fuzzing",
            "--max-examples",
            str(EXAMPLES),
            "--seed",
            "1",
            "--workers",
            "1",
            "--no-color",
            "--request-timeout",
            "30",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1"},
        cwd=tmp_path,  # schemathesis keeps a cache (.schemathesis/) in its working folder
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-8000:]
    cases = re.search(r"(\d+) generated, (\d+) passed", out)
    assert cases and int(cases.group(1)) >= 5 * EXAMPLES and cases.group(1) == cases.group(2), out[-3000:]
    assert "errored" not in out.split("Test cases:")[-1], out[-3000:]
    print(f"schemathesis: {cases.group(1)} cases")  # the figure (pytest -s)


def _post(port: int, path: str, body: bytes, content_type: str = "application/json") -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", path, body, {"Content-Type": content_type})
        response = conn.getresponse()
        return response.status, response.getheader("content-type") or "", response.read()
    finally:
        conn.close()


def test_every_ndjson_line_matches_the_documented_line_schema(port: int) -> None:
    """Schemathesis cannot read NDJSON answers: each line is checked here against the
    document's line schema, for answers that stream results and for ones that end at once."""
    document = openapi_document()
    status, _, body = _post(port, "/hortus.v1.Advisor/NewGame", b'{"game": "botanik", "seed": 3}')
    assert status == 200
    position = json.loads(body)["info"]["position"]
    requests = {
        "Analyze": [
            {"position": position, "limits": {"iterations": 200}, "intervalMs": 1},
            {"position": position, "seeed": 1},
            {"position": {"game": "nope"}},
        ],
        "ReviewGame": [{"start": position, "moves": []}, {"start": position, "moves": [{"id": 99999}]}],
        "EvaluateBatch": [{"positions": [position, position], "limits": {"iterations": 100}}, {"positions": [{}]}],
        "SimulateGames": [{"game": "botanik", "games": 2, "level": 1, "seed": 1}, {"game": "botanik", "games": 0}],
    }
    results = 0
    for method, bodies in requests.items():
        line_schema = document["paths"][f"/hortus.v1.Advisor/{method}"]["post"]["responses"]["200"]["content"][
            "application/x-ndjson"
        ]["schema"]
        validator = jsonschema.Draft202012Validator({**line_schema, "components": document["components"]})
        for request in bodies:
            for content_type in ("application/json", "application/x-ndjson"):
                status, kind, answer = _post(port, f"/hortus.v1.Advisor/{method}", json.dumps(request).encode(), content_type)
                assert status == 200 and kind.startswith("application/x-ndjson"), (method, status, kind, answer[:300])
                lines = [json.loads(line) for line in answer.decode().splitlines()]
                assert lines and "end" in lines[-1] and all("result" in line for line in lines[:-1]), (method, lines)
                for line in lines:
                    errors = sorted(validator.iter_errors(line), key=str)
                    assert not errors, (method, request, line, [e.message for e in errors[:3]])
                results += len(lines) - 1
    assert results >= 2, results


def test_a_body_that_is_not_utf8_is_invalid_argument_on_every_route(port: int) -> None:
    for method in ("ReviewGame", "Analyze", "NewGame"):
        status, kind, answer = _post(port, f"/hortus.v1.Advisor/{method}", b"\xff\xfe")
        if kind.startswith("application/x-ndjson"):
            end = json.loads(answer.decode().splitlines()[-1])["end"]
            assert status == 200 and end["code"] == "invalid_argument" and "UTF-8" in end["message"], end
        else:
            assert status == 400 and json.loads(answer)["code"] == "invalid_argument", (method, status, answer)


def test_an_error_without_a_body_gets_the_error_json(port: int) -> None:
    """A Connect GET without its query (answered 415 with no body by Connect) is the error
    JSON the document promises."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/hortus.v1.Advisor/ListGames")
    response = conn.getresponse()
    body = json.loads(response.read())
    assert response.status == 415 and response.getheader("content-type") == "application/json"
    assert body["code"] == "invalid_argument" and "encoding=json" in body["message"], body
