"""Instruction counts of a callgrind profile per line of a Cython source (.pyx).

    python bench/pyx_lines.py PROFILE.out games/war_of_the_posies/kernel.c [--top 60]

callgrind counts instructions per line of the generated C file; Cython writes a comment
naming the .pyx line above the C code of each statement, so every C line's count goes to the
.pyx line named last above it (inlined helpers from headers are left out). Prints the top
lines with their share of the profile's total.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from pathlib import Path

MARK = re.compile(r'/\* "([^"]+\.(?:pyx|pxd|pxi))":(\d+)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile")
    parser.add_argument("c_file")
    parser.add_argument("--top", type=int, default=60)
    args = parser.parse_args()
    c_lines = Path(args.c_file).read_text().splitlines()
    owner: list[tuple[str, int] | None] = []
    current: tuple[str, int] | None = None
    for line in c_lines:
        m = MARK.search(line)
        if m:
            current = (m.group(1), int(m.group(2)))
        owner.append(current)
    out = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--show-percs=no", "--threshold=100", "--context=0", args.profile, args.c_file],
        capture_output=True,
        text=True,
    ).stdout
    # `callgrind_annotate FILE` annotates the named source: lines "count  source", with
    # "-- line N" markers giving the C line numbers.
    counts: Counter[tuple[str, int]] = Counter()
    total = 0
    lineno = None
    for text in out.splitlines():
        m = re.match(r"-- line (\d+) -+", text)
        if m:
            lineno = int(m.group(1))
            continue
        if lineno is None:
            mt = re.match(r"\s*([\d,]+)\s+PROGRAM TOTALS", text)
            if mt:
                total = int(mt.group(1).replace(",", ""))
            continue
        if "=>" in text or "events annotated" in text:  # a call's inclusive cost, a total
            continue
        if text.startswith("-----"):
            break  # the end of the file's annotation
        m = re.match(r"\s*([\d,]+|\.)\s", text)
        if m:
            if m.group(1) != "." and 0 < lineno <= len(owner) and owner[lineno - 1] is not None:
                counts[owner[lineno - 1]] += int(m.group(1).replace(",", ""))  # type: ignore[index]
            lineno += 1
    pyx_cache: dict[str, list[str]] = {}
    for (pyx, n), count in counts.most_common(args.top):
        if pyx not in pyx_cache:
            path = Path(pyx)
            pyx_cache[pyx] = path.read_text().splitlines() if path.exists() else []
        src = pyx_cache[pyx][n - 1].strip() if n <= len(pyx_cache[pyx]) else ""
        print(f"{count:>12,} {100 * count / max(total, 1):5.1f}%  {Path(pyx).name}:{n:<5} {src[:90]}")


if __name__ == "__main__":
    main()
