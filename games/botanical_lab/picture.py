"""Botanical Lab as a seat sees it, in SVG: the three rooms with each space's accepted breeds,
its plant (prepared seed, leaf or flower with its cultivation stage), the marker's owner and
the assistants standing there; the stock, the plant supply, every seat's cards (the viewing
seat's hand by name, the others' as counts).

Drawn from ``state.view(seat)`` and the component data only; moves are matched by their
public notation (``prepare R1(0,1) with ...``, ``move to R2 with ...``, ``acquire ...``).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from hortus.games.base import State
from hortus.games.botanical_lab.game import (
    COMPONENTS, KIND_NAMES, N_KINDS, ROOM_FIRST, SPACE_BREEDS, SPACE_FLOWER, SPACE_LEAF, SPACE_NAMES,
    SPACE_PICKED, SPACE_PREPARED, STOCK,
)
from hortus.games.svg import Moves, Svg, who

CELL = 64
BREED_FILL = ("#e0574f", "#f0b429", "#3f88c5", "#57a773", "#a061c9", "#888888")
SEAT_FILL = ("#ffffff", "#222222", "#ff9f1c", "#2ec4b6")
_SPACE = re.compile(r"(R?\w+\(\d+,\d+\))")
_ROOM = re.compile(r"^move to (\S+) with (.+)$")
_HAND = re.compile(r"^(?:play|fertilize with) (.+)$")
_ACQUIRE = re.compile(r"^acquire (.+)$")


def _counts(counts: list[int]) -> str:
    return ", ".join(f"{KIND_NAMES[k]} x{counts[k]}" for k in range(min(len(counts), N_KINDS)) if counts[k]) or "-"


def draw(state: State, seat: int, highlight: Sequence[int] = ()) -> str:
    v: dict[str, Any] = state.view(seat)
    moves = Moves(state, seat, highlight)
    n = v["players"]
    me = v["seats"][seat]
    svg = Svg("botanical_lab", seat, f"Botanical Lab - you are seat {seat} - {v['stage']} of seat "
                                     f"{v['turn_player']} - {who(state)}" + (" - final round" if v["final_round"] else ""))
    svg.text(10, 50, "VP: " + ", ".join(("you" if p == seat else f"seat {p}") + f" {v['seats'][p]['vp']}" for p in range(n))
             + ".  Plants left: " + ", ".join(f"{b.name} {v['plant_stock'][i]}" for i, b in enumerate(COMPONENTS.breeds)))

    by_space: dict[str, list[int]] = {}
    by_room: dict[str, list[int]] = {}
    for action, text in moves.notation.items():
        moving = _ROOM.match(text)
        if moving:
            by_room.setdefault(moving.group(1), []).append(action)
            continue
        m = _SPACE.search(text)
        if m:
            by_space.setdefault(m.group(1), []).append(action)

    # The three rooms side by side.
    x = 10.0
    y0 = 66
    for r, room in enumerate(COMPONENTS.rooms):
        width = room.cols * (CELL + 4)
        here = [p for p in range(n) if v["seats"][p]["room"] == r]
        svg.open(moves.attrs(by_room.get(room.name, [])), title=f"room {room.name}")
        svg.rect(x - 4, y0, width + 4, 24, fill="#e8efe0")
        svg.text(x, y0 + 17, f"Room {room.name}", cls="title")
        svg.close()
        for k, p in enumerate(here):
            svg.circle(x + width - 12 - 20 * k, y0 + 12, 8, fill=SEAT_FILL[p], stroke="#000")
            svg.text(x + width - 12 - 20 * k, y0 + 16, p, cls="small", anchor="middle", extra=' style="fill:#d33"')
        for i in range(room.rows * room.cols):
            s = ROOM_FIRST[r] + i
            cx = x + (i % room.cols) * (CELL + 4)
            cy = y0 + 30 + (i // room.cols) * (CELL + 4)
            _space(svg, moves, by_space.get(SPACE_NAMES[s], []), v["spaces"][s], s, cx, cy)
        x += width + 24
    svg.text(10, svg.height + 12, "Assistants: numbered discs by the room name.  A space shows the breeds "
                                  "it accepts (top), its plant, the owner's marker and the flower's stage.", cls="small")

    # Stock (acquire targets) and the cards.
    y = svg.height + 16
    svg.text(10, y, "Stock", cls="title")
    sx = 60.0
    for k in range(N_KINDS):
        if not STOCK[k]:
            continue
        name = KIND_NAMES[k]
        card = COMPONENTS.cards[k]
        label = f"{name} x{v['stock'][k]}" + (f" (cost {card.cost})" if card.cost is not None else "")
        w = 12 + 6.5 * len(label)
        if sx + w > 820:
            sx, y = 60.0, y + 28
        svg.open(moves.attrs(moves.find(f"acquire {name}")), title=f"{card.card_type} card")
        svg.rect(sx, y - 15, w, 22, fill="#fbf6e9")
        svg.text(sx + 6, y, label, cls="small")
        svg.close()
        sx += w + 6
    y += 30
    svg.text(10, y, "Your hand", cls="title")
    hx = 110.0
    hand = me.get("hand", [])
    for k in range(min(len(hand), N_KINDS)):
        for copy in range(hand[k]):
            name = KIND_NAMES[k]
            card = COMPONENTS.cards[k]
            ids = [a for a, t in moves.notation.items() if (m := _HAND.match(t)) and m.group(1) == name]
            ids += [a for a, t in moves.notation.items() if (m := _ROOM.match(t)) and m.group(2) == name]
            w = 12 + 7 * max(len(name), len(card.card_type))
            if hx + w > 820:
                hx, y = 110.0, y + 46
            svg.open(moves.attrs(ids if copy == 0 else []), title=f"{card.card_type}: {name}")
            svg.rect(hx, y - 15, w, 40, fill="#fffdf5", stroke="#7a6f55")
            svg.close()
            svg.text(hx + 6, y, name)
            svg.text(hx + 6, y + 16, card.card_type, cls="small")
            hx += w + 6
    y += 46
    for p in range(n):
        info = v["seats"][p]
        who_ = "You" if p == seat else f"Seat {p}"
        unseen = "" if p == seat else f"; hand + draw pile hold {_counts(info['hand_and_draw'])}"
        if p != seat and any(info.get("hand_known", [])):  # public: a dry draw pile, a typed reveal
            unseen += f"; known in hand: {_counts(info['hand_known'])}"
        text = (f"{who_}: {info['vp']} VP, {info['markers_free']} markers free, hand {info['hand_count']}, "
                f"draw pile {info['draw_count']}; play area {_counts(info['play'])}; discard "
                f"{_counts(info['discard'])}{unseen}")
        y = svg.wrapped(10, y, text, 120, cls="", line_height=15) + 4
    if any(v["aside"]):
        y = svg.wrapped(10, y, f"Revealed aside: {_counts(v['aside'])}", 120, cls="", line_height=15)
    svg.moves_strip(moves)
    return svg.finish()


def _space(svg: Svg, moves: Moves, ids: list[int], space: list[int], s: int, x: float, y: float) -> None:
    status, owner, breed, step = space
    svg.open(moves.attrs(ids), title=SPACE_NAMES[s])
    svg.rect(x, y, CELL, CELL, fill="#f6f2e4", stroke="#9a927a")
    svg.close()
    for j, b in enumerate(SPACE_BREEDS[s]):
        svg.circle(x + 8 + 12 * j, y + 8, 4, fill=BREED_FILL[(b - 1) % len(BREED_FILL)], stroke="#555")
    if status == SPACE_PREPARED:
        svg.circle(x + CELL / 2, y + CELL / 2 + 2, 8, fill="#8b5a2b", stroke="#3d2612")
        svg.text(x + CELL / 2, y + CELL - 5, "seed" + (f" {COMPONENTS.breeds[breed - 1].name}" if breed else ""),
                 cls="small", anchor="middle")
    elif status == SPACE_LEAF:
        svg.raw(f'<path d="M{x + CELL / 2:g} {y + 44:g} q-16 -14 0 -28 q16 14 0 28z" '
                f'fill="{BREED_FILL[(breed - 1) % len(BREED_FILL)]}" stroke="#2f6b3a"/>')
        svg.text(x + CELL / 2, y + CELL - 5, f"leaf {COMPONENTS.breeds[breed - 1].name}", cls="small", anchor="middle")
    elif status in (SPACE_FLOWER, SPACE_PICKED):
        fill = BREED_FILL[(breed - 1) % len(BREED_FILL)]
        cx, cy = x + CELL / 2, y + CELL / 2
        for dx, dy in ((0, -9), (9, 0), (0, 9), (-9, 0)):
            svg.circle(cx + dx, cy + dy, 7, fill=fill, stroke="#555")
        svg.circle(cx, cy, 5, fill="#ffe066", stroke="#555")
        track = COMPONENTS.breeds[breed - 1].track
        picked = " picked" if status == SPACE_PICKED else ""
        svg.text(x + CELL / 2, y + CELL - 3, f"stage {step}/{track}{picked}", cls="small", anchor="middle")
    if status:
        svg.circle(x + CELL - 9, y + 10, 6, fill=SEAT_FILL[owner % 4], stroke="#000")
        svg.text(x + CELL - 9, y + 13, owner, cls="small", anchor="middle", extra=' style="fill:#d33"')
