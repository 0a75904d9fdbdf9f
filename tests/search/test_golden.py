"""Seeded analyses, arenas and ``hortus evaluate`` output are those of the golden files
(``tests/golden``, written only by ``python tests/golden/regenerate.py``)."""

from __future__ import annotations

from paths import TESTS
import importlib.util
import json

import pytest

from hortus import games

FOLDER = TESTS / "golden"
_spec = importlib.util.spec_from_file_location("golden_regenerate", FOLDER / "regenerate.py")
assert _spec is not None and _spec.loader is not None
regenerate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regenerate)


def _golden(filename: str) -> dict:
    return json.loads((FOLDER / filename).read_text())


@pytest.mark.parametrize("name", games.names())
def test_seeded_analyses_are_the_golden_ones(name: str) -> None:
    expected = _golden(f"{name}.json")
    assert len(expected["analyses"]) >= 20 * (games.get(name).max_players - games.get(name).min_players + 1)
    assert json.loads(json.dumps(regenerate.analyses(name))) == expected["analyses"]


@pytest.mark.parametrize("name", games.names())
def test_seeded_arena_is_the_golden_one(name: str) -> None:
    assert json.loads(json.dumps(regenerate.arena(name))) == _golden(f"{name}.json")["arena"]


def test_evaluate_output_is_the_golden_one() -> None:
    text = (FOLDER / "evaluate_input.jsonl").read_text()
    assert text == regenerate.evaluate_input()
    assert regenerate.evaluate_output(text) == (FOLDER / "evaluate_output.jsonl").read_text()
