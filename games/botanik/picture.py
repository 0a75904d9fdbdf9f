"""Botanik as a seat sees it, in SVG: the Registry (the viewing seat's side row nearest to it),
the arrival zone and pending tiles, and both machines with their pipes drawn.

Drawn from ``state.view(seat)`` and the tile table only; the moves come from the public
notation (``build red gear at 1,0 pipes E,W``, ``red gear* to side 3``, ``exchange ... on stack 2``,
``first purple loop``), so the picture survives changes inside the kernel. The last turn's
moves mark the Registry space or machine cell they filled.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from hortus.games.base import State
from hortus.games.botanik.game import COMPONENTS, EMPTY, N_COLOURED, SOURCE_ID, tile_name
from hortus.games.svg import Last, Moves, Svg, colour, who

CELL = 60
SHORT = {"covered_cross": "cov. cross", "open_cross": "open cross", "meca_botanist": "meca"}
_BUILD = re.compile(r"^build (.+) at (-?\d+),(-?\d+)\b")  # then the rotation (r1 or pipes N,E)
_PLACE = re.compile(r"^(.+) to (side|stack) (\d)$")
_EXCHANGE = re.compile(r"^exchange (.+) for (.+) on stack (\d)$")
_FIRST = re.compile(r"^first (.+)$")
# Side k's pipe end, from the centre of a cell of size 1.
_END = {0: (0.5, 0.0), 1: (1.0, 0.5), 2: (0.5, 1.0), 3: (0.0, 0.5)}


def _conduits(tile: int, rotation: int) -> tuple[tuple[int, ...], ...]:
    """The tile's pipes at `rotation` quarter turns clockwise: side s turns to (s + r) % 4."""
    if tile >= SOURCE_ID:
        base = COMPONENTS.source_conduits
    else:
        base = COMPONENTS.tile_types[COMPONENTS.tile(tile)[1]].conduits
    return tuple(tuple((s + rotation) % 4 for s in conduit) for conduit in base)


def _tile(svg: Svg, x: float, y: float, tile: int, rotation: int = 0, size: float = CELL, pipes: bool = True) -> None:
    """One tile: its colour, its type in words, flowers as dots, pipes as lines."""
    if tile >= SOURCE_ID:
        svg.rect(x, y, size, size, fill="#d8d3c4", stroke="#333")
        label, flowers = "Source", 0
    else:
        c, type_index, copy = COMPONENTS.tile(tile)
        tt = COMPONENTS.tile_types[type_index]
        svg.rect(x, y, size, size, fill=colour(COMPONENTS.colours[c]), stroke="#333")
        label, flowers = SHORT.get(tt.name, tt.name.replace("_", "-")), tt.flowers[copy]
    if pipes:
        for n, conduit in enumerate(_conduits(tile, rotation)):
            # A second conduit (the covered cross) is drawn narrower: it passes under the first.
            width = 7 if n == 0 else 4
            stroke = "#4b4b4b" if n == 0 else "#8a8a8a"
            cx, cy = x + size / 2, y + size / 2
            for side in conduit:
                ex, ey = _END[side]
                svg.line(cx, cy, x + ex * size, y + ey * size, stroke=stroke, width=width, extra=' stroke-linecap="butt"')
    svg.rect(x + 3, y + size - 15, size - 6, 12, fill="#ffffffcc", stroke="none", rx=2)
    svg.text(x + size / 2, y + size - 5, label, cls="small", anchor="middle")
    for f in range(flowers):
        svg.circle(x + 8 + 9 * f, y + 8, 4, fill="#fff6", stroke="#b0307a")


def draw(state: State, seat: int, highlight: Sequence[int] = (), last: Last | None = None) -> str:
    v: dict[str, Any] = state.view(seat)
    moves = Moves(state, seat, highlight, last)
    scores = state.scores()  # machines are public: the same for every seat
    other = 1 - seat
    svg = Svg("botanik", seat, f"Botanik - you are seat {seat} - phase {min(v['phase'] + 1, 20)}/20 - {who(state)}")
    seen = (
        sum(1 for t in v["top"] + v["side"][0] + v["side"][1] + v["arrival"] if t != EMPTY)
        + sum(len(q) for q in v["queue"])
        + sum(len(m) - 1 for m in v["machines"])
        + len(v["buried"])
        + len(v["removed"])
    )
    svg.text(
        10,
        50,
        f"Meca pawn: seat {v['holder']}.  Points: you {scores[seat]:.0f}, "
        f"seat {other} {scores[other]:.0f}.  Tiles still to draw: {N_COLOURED - seen}.",
    )

    placements = [(a, _PLACE.match(t)) for a, t in moves.notation.items()]
    exchanges = [(a, _EXCHANGE.match(t)) for a, t in moves.notation.items()]

    # The Registry: the opponent's side row, the central stacks, the viewing seat's side row.
    top_y = 66
    svg.text(10, top_y + 12, "Registry", cls="title")
    rows = (
        (f"seat {other} side", v["side"][other], None),
        ("central stacks", v["top"], "stack"),
        ("your side", v["side"][seat], "side"),
    )
    for r, (label, row, kind) in enumerate(rows):
        y = top_y + 22 + r * (CELL + 8)
        svg.text(10, y + CELL / 2 + 4, label)
        for c in range(5):
            x = 120 + c * (CELL + 8)
            targets = [a for a, m in placements if m and kind and m.group(2) == kind and int(m.group(3)) == c + 1]
            if kind == "stack":
                targets += [a for a, m in exchanges if m and int(m.group(3)) == c + 1]
            owner = {0: other, 2: seat}.get(r)  # whose side row (None: the central stacks)

            row_kind = "side" if owner is not None else "stack"

            def filled(t: str, row_kind: str = row_kind, c: int = c) -> bool:
                m, x = _PLACE.match(t), _EXCHANGE.match(t)
                if m and m.group(2) == row_kind and int(m.group(3)) == c + 1:
                    return True
                return bool(x and row_kind == "stack" and int(x.group(3)) == c + 1)

            changed = moves.was_last(filled, seat=owner)  # K-T1: a tile goes on its placer's own side
            svg.open(moves.attrs(targets, last=changed), title=f"{label}, column {c + 1}")
            svg.rect(x - 3, y - 3, CELL + 6, CELL + 6, fill="#f3efe2", stroke="#9a927a")
            if row[c] != EMPTY:
                _tile(svg, x, y, row[c])
            svg.close()
            if r == 0:
                svg.text(x + CELL / 2, top_y + 14, f"column {c + 1}", cls="small", anchor="middle")

    # The arrival zone and the pending items of each seat.
    y = top_y + 22 + 3 * (CELL + 8) + 10
    svg.text(10, y + CELL / 2 + 4, "arrival")
    for i, t in enumerate(v["arrival"]):
        x = 120 + i * (CELL + 8)
        if t == EMPTY:
            svg.rect(x, y, CELL, CELL, fill="none", stroke="#ccc")
            continue
        name = tile_name(t)
        mine = [a for a, m in placements if m and m.group(1) == name]
        svg.open(moves.attrs(mine), title=name)
        svg.rect(x - 2, y - 2, CELL + 4, CELL + 4, fill="none", stroke="none")
        _tile(svg, x, y, t)
        svg.close()
    x = 120 + 3 * (CELL + 8) + 20
    for p in (seat, other):
        queue = v["queue"][p]
        if not queue:
            continue
        svg.text(x, y - 4, "your pending" if p == seat else f"seat {p} pending", cls="small")
        for i, t in enumerate(queue):
            name = tile_name(t)
            firsts = [a for a, text in moves.notation.items() if text == f"first {name}"] if p == seat else []
            svg.open(moves.attrs(firsts), title=name)
            svg.rect(x - 2, y - 2, CELL + 4, CELL + 4, fill="none", stroke="none")
            _tile(svg, x, y, t)
            svg.close()
            x += CELL + 8
        x += 20

    # Both machines, the viewing seat's first; its empty neighbour cells are build targets.
    builds: dict[tuple[int, int], list[int]] = {}
    for a, text in moves.notation.items():
        m = _BUILD.match(text)
        if m:
            builds.setdefault((int(m.group(2)), int(m.group(3))), []).append(a)
    y0 = y + CELL + 24
    x0 = 10.0
    for p in (seat, other):
        machine = v["machines"][p]
        cells = {(tx, ty) for _, tx, ty, _ in machine}
        spots = builds if p == seat else {}
        everything = cells | set(spots)
        xs = [c[0] for c in everything]
        ys = [c[1] for c in everything]
        size = 44
        svg.text(x0, y0 + 12, f"{'Your machine' if p == seat else f'Machine of seat {p}'}: {scores[p]:.0f} points", cls="title")
        ox, oy = x0 - min(xs) * size, y0 + 22 - min(ys) * size
        for t, tx, ty, r in machine:
            built = moves.was_last(
                lambda text: bool((m := _BUILD.match(text)) and (int(m.group(2)), int(m.group(3))) == (tx, ty)), seat=p
            )
            svg.open(moves.attrs([], last=built), title=f"{tile_name(t) if t < SOURCE_ID else 'Source'} at {tx},{ty}")
            svg.rect(ox + tx * size, oy + ty * size, size, size, fill="none", stroke="none")  # the frame .last strokes
            _tile(svg, ox + tx * size, oy + ty * size, t, r, size=size)
            svg.close()
        for (tx, ty), ids in sorted(spots.items()):
            svg.open(moves.attrs(ids), title=f"build at {tx},{ty}")
            svg.rect(ox + tx * size + 2, oy + ty * size + 2, size - 4, size - 4, fill="#eaf6e6")
            svg.text(ox + tx * size + size / 2, oy + ty * size + size / 2 + 4, f"{tx},{ty}", cls="small", anchor="middle")
            svg.close()
        x0 = x0 + max((max(xs) - min(xs) + 1) * size + 40, 280)
    svg.text(
        10,
        svg.height + 14,
        "Pipes: dark lines; a lighter line passes under (covered cross). "
        "x grows right, y grows down; dots are flowers; dashed: your possible moves.",
        cls="small",
    )
    svg.moves_strip(moves)
    return svg.finish()
