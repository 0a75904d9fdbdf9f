"""Edges of the compiled extensions covered by a fuzzing corpus, from libFuzzer's
``-print_coverage=1`` output (run_asan_fuzz.sh runs the corpus once with it).

    python tests/fuzz/native_coverage.py LOG [GAME]

libFuzzer's own ``cov:`` figure mixes the kernels' edges with the Python bytecode edges atheris
instruments; this counts the C edges alone, per generated module: all of its functions
(Cython's wrappers, conversions and module setup included) and its ``cdef`` functions alone
(``__pyx_f_*``: the game rules, the search, the engine), which is the figure that matters.
With GAME, only the shared extensions (_ext/) and that game's kernel are listed.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

LINE = re.compile(r"(?:UN)?COVERED_FUNC: hits: \d+ edges: (\d+)/(\d+) (\S+) (\S+):\d+")


def native_edges(lines: list[str], game: str | None = None) -> dict[str, tuple[int, int, int, int]]:
    """Per C source: (covered, total) edges of all functions, then of the cdef functions."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for line in lines:
        match = LINE.match(line)
        if match is None:
            continue
        covered, edges, function, path = match.groups()
        source = path.rsplit("/src/", 1)[-1]
        if game is not None and not (source.startswith("_ext/") or f"/{game}/" in source):
            continue
        row = totals[source]
        row[0] += int(covered)
        row[1] += int(edges)
        if function.startswith("__pyx_f_"):
            row[2] += int(covered)
            row[3] += int(edges)
    return {source: (a, b, c, d) for source, (a, b, c, d) in sorted(totals.items())}


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], errors="replace") as log:
        rows = native_edges(log.readlines(), sys.argv[2] if len(sys.argv) == 3 else None)
    if not rows:
        print("no COVERED_FUNC lines: was the corpus run with -print_coverage=1?", file=sys.stderr)
        return 1
    for source, (covered, edges, cdef_covered, cdef_edges) in rows.items():
        print(
            f"{source}: cdef functions {cdef_covered}/{cdef_edges} edges "
            f"({cdef_covered / max(cdef_edges, 1):.0%}), all functions {covered}/{edges}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
