"""The Python client page's examples (docs/clients/python.md), run against a live server, so
that the page cannot drift from the client."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from paths import REPO
from servers import Servers

from hortus.server import ServerConfig

PAGE = REPO / "docs" / "clients" / "python.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def examples() -> list[str]:
    return BLOCK.findall(PAGE.read_text())


def test_the_page_has_examples() -> None:
    assert len(examples()) >= 2


@pytest.mark.parametrize("index", range(len(examples())))
def test_an_example_runs(serve_module: Servers, index: int) -> None:
    server = serve_module(ServerConfig(max_concurrent_searches=2, max_threads=1))
    code = examples()[index]
    assert "127.0.0.1:50051" in code  # the documented default port, pointed at the test's server
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.replace("127.0.0.1:50051", f"127.0.0.1:{server.port}"), f"{PAGE.name}[{index}]", "exec"), {})
    assert printed.getvalue().strip(), "the example prints what it got"
