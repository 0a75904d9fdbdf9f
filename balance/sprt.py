"""A generalized sequential probability ratio test (GSPRT) on paired outcomes, as fishtest
runs on game pairs: each pair (same seeds with and without a change) gives one difference in
[-1, 1]; the log-likelihood ratio of mean difference ``mu1`` against ``mu0`` is the normal
approximation ``n (mu1 - mu0) (2 mean - mu0 - mu1) / (2 var)``, and the test stops once it
leaves ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SprtResult", "gsprt"]


@dataclass(frozen=True)
class SprtResult:
    llr: float
    lower: float
    upper: float
    decision: str
    """"H1" (the effect is at least mu1), "H0" (at most mu0) or "continue"."""


def gsprt(differences: Sequence[float], mu0: float, mu1: float, alpha: float = 0.05, beta: float = 0.05) -> SprtResult:
    """The GSPRT of paired differences: H0 mean = `mu0` against H1 mean = `mu1` (mu1 > mu0)."""
    if not mu1 > mu0:
        raise ValueError(f"mu1 ({mu1}) must be above mu0 ({mu0})")
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must be in (0, 1)")
    lower = math.log(beta / (1 - alpha))
    upper = math.log((1 - beta) / alpha)
    n = len(differences)
    if n < 2:
        return SprtResult(0.0, lower, upper, "continue")
    mean = statistics.fmean(differences)
    # a floor on the variance: identical pairs would otherwise divide by zero (and a run of
    # identical differences says little about the spread yet)
    var = max(statistics.pvariance(differences, mean), 1e-3)
    llr = n * (mu1 - mu0) * (2 * mean - mu0 - mu1) / (2 * var)
    decision = "H1" if llr >= upper else "H0" if llr <= lower else "continue"
    return SprtResult(llr, lower, upper, decision)
