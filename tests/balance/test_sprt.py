"""The paired GSPRT accepts a planted effect, rejects a planted null, and waits when unclear."""

from __future__ import annotations

import random

import pytest

from hortus.balance.sprt import gsprt


def _pairs(mean: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [max(-1.0, min(1.0, rng.gauss(mean, 0.5))) for _ in range(n)]


def test_strong_effect_accepts_h1() -> None:
    assert gsprt(_pairs(0.3, 200, 1), mu0=0.0, mu1=0.1).decision == "H1"


def test_no_effect_accepts_h0() -> None:
    assert gsprt(_pairs(0.0, 400, 2), mu0=0.0, mu1=0.1).decision == "H0"


def test_few_pairs_continue() -> None:
    assert gsprt(_pairs(0.05, 5, 3), mu0=0.0, mu1=0.1).decision == "continue"


def test_bad_hypotheses_are_refused() -> None:
    with pytest.raises(ValueError, match="mu1"):
        gsprt([0.0, 1.0], mu0=0.1, mu1=0.0)
