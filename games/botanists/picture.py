"""Botanists as a seat sees it, in SVG: the market grid turned so the viewing seat sits at the
bottom (A15: cards are read from one's own side), the pawns, every board with its sign posts
and its face-up / face-down tiles (a face-down tile shows its withered back with its colour,
which is public: A27, every planted tile was seen when placed), the open and personal orders,
and the viewing seat's hand as card shapes with the highlighted box marked. The last turn's
moves mark the market cell, land space or open order they changed.

Drawn from ``state.view(seat)`` and the component data only; moves are matched by their public
notation (``move c3``, ``card L-a/2``, ``plant red face-up``, ``fulfil open 2`` ...).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from hortus.games.base import State
from hortus.games.botanists.game import COLOURS, COMPONENTS, EMPTY, HELPER, OFF, card_name, orientation, order_name
from hortus.games.svg import Last, Moves, Svg, colour, esc, who

CELL = 46
_CELL_NAME = re.compile(r"(?:^|\s)([a-e][1-5])(?:\s|$)")
_CARD = re.compile(r"^(?:card|discard card|helper card) (\S+)$")
_PLANT = re.compile(r"^plant (\w+) face-(up|down)$")
_LAND = re.compile(r"^(?:plant \w+ face-(?:up|down)|tend \w+)$")  # fills the next land space (P7, T2)
_OPEN = re.compile(r"^(?:fulfil open|bonus: take open order) (\d+)$")
SIDE_NAMES = ("bottom", "left", "top", "right")
PAWN_COLOURS = ("#ffffff", "#222222", "#ff9f1c", "#2ec4b6", "#c0c0c0")


def _screen(cell: int, turn: int) -> tuple[int, int]:
    """Screen (column, row) of a market cell for a seat sitting at side `turn` (0 bottom,
    1 left, 2 top, 3 right): the grid is turned so that side is at the bottom."""
    col, row = cell % 5, cell // 5
    if turn == 1:
        return row, 4 - col
    if turn == 2:
        return 4 - col, 4 - row
    if turn == 3:
        return 4 - row, col
    return col, row


def _card(svg: Svg, x: float, y: float, card: int, size: float = 13) -> None:
    """A market card: its tetromino with the highlighted box filled."""
    shape = COMPONENTS.shapes[card // 4]
    svg.rect(x, y, 4 * size + 12, 4 * size + 26, fill="#fffdf5", stroke="#7a6f55")
    for i, (r, c) in enumerate(shape.cells):
        fill = "#2f6b3a" if i == card % 4 else "#cfe3c8"
        svg.rect(x + 6 + c * size, y + 6 + r * size, size, size, fill=fill, stroke="#2f4f33", rx=1)
    svg.text(x + 2 * size + 6, y + 4 * size + 20, card_name(card), cls="small", anchor="middle")


def draw(state: State, seat: int, highlight: Sequence[int] = (), last: Last | None = None) -> str:
    v: dict[str, Any] = state.view(seat)
    moves = Moves(state, seat, highlight, last)
    n = v["players"]
    solo = n == 1
    turn = orientation(v, seat)
    svg = Svg(
        "botanists",
        seat,
        f"Botanists{' (solo)' if solo else ''} - you are seat {seat} - round {min(v['round'] + 1, 3)}/3 - {who(state)}",
    )
    bag = ", ".join(f"{COLOURS[c]} {v['bag'][c]}" for c in range(5))
    svg.text(
        10,
        50,
        "Scores: "
        + ", ".join(("you" if p == seat else f"seat {p}") + f" {v['score'][p]}" for p in range(n))
        + f".  Bag: {bag}.  Market read from the {SIDE_NAMES[turn]} side (you sit below it).",
    )

    # The market grid, turned for the viewing seat, with the pawns on it.
    by_cell: dict[str, list[int]] = {}
    for action, text in moves.notation.items():
        m = _CELL_NAME.search(text)
        if m:
            by_cell.setdefault(m.group(1), []).append(action)
    pawns: dict[int, list[int]] = {}
    for i, cell in enumerate(v["pawn"]):
        if cell != OFF:
            pawns.setdefault(cell, []).append(i)
    x0, y0 = 20, 66
    svg.text(x0, y0 + 10, "Market", cls="title")
    for cell in range(25):
        sx, sy = _screen(cell, turn)
        x, y = x0 + sx * (CELL + 4), y0 + 18 + sy * (CELL + 4)
        name = "abcde"[cell % 5] + str(cell // 5 + 1)
        moved = moves.was_last(lambda t: bool((m := _CELL_NAME.search(t)) and m.group(1) == name))
        svg.open(moves.attrs(by_cell.get(name, []), last=moved), title=f"market {name}")
        tile = v["market"][cell]
        svg.rect(x, y, CELL, CELL, fill=colour(COLOURS[tile]) if tile < 5 else "#eee9da", stroke="#7a6f55")
        svg.close()
        svg.text(x + 4, y + 12, name, cls="small")
        for k, p in enumerate(pawns.get(cell, [])):
            label = "H" if p == HELPER else str(p)
            svg.circle(x + CELL / 2 + 12 * k - 4, y + CELL / 2 + 4, 10, fill=PAWN_COLOURS[p], stroke="#000")
            svg.text(
                x + CELL / 2 + 12 * k - 4, y + CELL / 2 + 8, label, anchor="middle", extra=' style="fill:#d33;font-weight:bold"'
            )
    off = [("H" if p == HELPER else f"seat {p}") for p, cell in enumerate(v["pawn"]) if cell == OFF and (p < n)]
    if off:
        svg.text(x0, y0 + 18 + 5 * (CELL + 4) + 14, "Beside the market: " + ", ".join(off), cls="small")

    # Orders: the open ones (targets of "fulfil open k" / "bonus: take open order k").
    ox = x0 + 5 * (CELL + 4) + 30
    svg.text(ox, y0 + 10, "Open orders", cls="title")
    for i, order in enumerate(v["open_orders"]):
        wanted = (f"fulfil open {i + 1}", f"bonus: take open order {i + 1}")
        ids = [a for a, t in moves.notation.items() if t in wanted]
        taken = moves.was_last(lambda t: bool((m := _OPEN.match(t)) and int(m.group(1)) == i + 1))
        svg.open(moves.attrs(ids, last=taken), title=f"open order {i + 1}")
        svg.rect(ox, y0 + 18 + i * 34, 130, 28, fill="#fff8e8")
        svg.close()
        _order(svg, ox + 6, y0 + 32 + i * 34, order)
    # The viewing seat's hand as card shapes.
    hy = y0 + 18 + 3 * 34 + 14
    svg.text(ox, hy, f"Your hand ({len(v['hand'])})", cls="title")
    for i, card in enumerate(v["hand"]):
        name = card_name(card)
        ids = [a for a, t in moves.notation.items() if (m := _CARD.match(t)) and m.group(1) == name]
        cx = ox + i * 76
        svg.open(moves.attrs(ids), title=f"card {name}")
        _card(svg, cx, hy + 8, card)
        svg.close()
    others = [f"seat {p}: {v['hand_sizes'][p]} cards" for p in range(n) if p != seat]
    if others:
        svg.text(ox, hy + 110, "Other hands: " + ", ".join(others), cls="small")

    # Boards: sign posts and tiles, 3 columns of 5 land spaces each.
    by = max(svg.height, y0 + 18 + 5 * (CELL + 4)) + 20.0
    plants = [a for a, t in moves.notation.items() if _PLANT.match(t)]
    owners = ([seat] + [p for p in range(n) if p != seat]) + ([HELPER] if solo else [])
    bx = 10.0
    for k, w in enumerate(owners):
        if v["board"][w] == EMPTY:
            continue
        if k and bx + 260 > 820:
            bx, by = 10.0, svg.height + 20
        _board(svg, moves, v, w, seat, bx, by, plants if w == seat else [])
        bx += 270
    svg.moves_strip(moves)
    return svg.finish()


def _order(svg: Svg, x: float, y: float, order: int) -> None:
    if order == EMPTY:
        svg.text(x, y + 4, "(none)", cls="small")
        return
    for i, letter in enumerate(order_name(order)):
        c = "RYGBP".find(letter)
        svg.circle(x + 8 + i * 16, y, 6, fill=colour(COLOURS[c]) if c >= 0 else "#999")


def _board(svg: Svg, moves: Moves, v: dict[str, Any], w: int, seat: int, x: float, y: float, plants: list[int]) -> None:
    board = COMPONENTS.boards[v["board"][w]]
    name = "Helper" if w == HELPER else ("Your" if w == seat else f"Seat {w}'s")
    svg.text(x, y + 12, f"{name} board ({board.name})", cls="title")
    filled = v["land_filled"][w]
    size = 34
    for k in range(15):
        col, row = k // 5, k % 5
        cx, cy = x + col * (size + 30), y + 22 + row * (size + 6)
        # The sign post: a small flag of the colour this land space asks for.
        sign = board.signs[k]
        svg.rect(cx, cy + 4, 10, 14, fill=colour(COLOURS[sign]), stroke="#333", rx=1)
        svg.line(cx + 1, cy + 4, cx + 1, cy + size, stroke="#5a4632", width=2)
        tx = cx + 14
        target = plants if k == filled else []
        # the space the last turn planted or tended into: the last filled one (P7, T2)
        planted = moves.was_last(lambda t: bool(_LAND.match(t)), seat=w) if k == filled - 1 else None
        svg.open(moves.attrs(target, last=planted), title=f"land space {k + 1}")
        if k < filled and v["land_colour"][w][k] != EMPTY:
            tile = v["land_colour"][w][k]
            down = bool(v["land_down"][w][k])
            svg.rect(tx - 2, cy - 2, size + 4, size + 4, fill="none", stroke="none")  # the frame .last strokes
            # The colour comes from the seat's view, where it is public (A27), face down too.
            svg.open(
                f' class="tile" data-colour="{esc(COLOURS[tile])}" data-face="{"down" if down else "up"}"',
                title=f"{COLOURS[tile]} tile, face {'down (withered)' if down else 'up'}",
            )
            if down:
                # the withered back, with a band of the flower's colour and its name
                svg.rect(tx, cy, size, size, fill="#5b5346", stroke="#222")
                svg.rect(tx + 3, cy + 3, size - 6, 9, fill=colour(COLOURS[tile]), stroke="#222", rx=1)
                svg.text(
                    tx + size / 2, cy + size / 2 + 6, COLOURS[tile], cls="small", anchor="middle", extra=' style="fill:#eee"'
                )
            else:
                svg.rect(tx, cy, size, size, fill=colour(COLOURS[tile]), stroke="#222")
            svg.close()
        elif k < filled:
            svg.rect(tx, cy, size, size, fill="#f7f7f7", stroke="#bbb")
            svg.text(tx + size / 2, cy + size / 2 + 4, "-", anchor="middle")
        else:
            svg.rect(tx, cy, size, size, fill="#efe9d6", stroke="#b3a98d")
        svg.close()
    if w != HELPER:
        left = ", ".join(f"{v['leftover'][w][c]} {COLOURS[c]}" for c in range(5) if v["leftover"][w][c]) or "none"
        personal = [order_name(o) for o, loc in enumerate(v["order_loc"]) if loc == 3 + w]
        done = [order_name(o) for o, loc in enumerate(v["order_loc"]) if loc == 7 + w]
        yy = y + 22 + 5 * (size + 6) + 10
        yy = svg.wrapped(x, yy, f"Leftover tiles: {left}", 40)
        yy = svg.wrapped(x, yy, f"Personal orders: {' '.join(personal) or '-'}", 40)
        svg.wrapped(x, yy, f"Fulfilled this round: {' '.join(done) or '-'}", 40)
