"""Botanical Lab as a seat sees it, in SVG: the three rooms with each space's accepted breeds
drawn as the rulebook's symbols (● circle, ▲ triangle, ■ square, ⬢ hexagon, ◆ diamond, each
with its name as a tooltip and in a legend), its plant (prepared seed, leaf or flower with
its cultivation stage), the marker's owner and the assistants standing there; the stock, the
plant supply, every seat's cards (the viewing seat's hand by name, the others' as counts).
The last turn's moves mark the space, room or stock pile they changed.

Drawn from ``state.view(seat)`` and the component data only; moves are matched by their
public notation (``prepare R1(0,1) with ...``, ``move to R2 with ...``, ``acquire ...``).
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from hortus.games.base import State
from hortus.games.botanical_lab.game import (
    COMPONENTS,
    KIND_NAMES,
    N_KINDS,
    ROOM_FIRST,
    SPACE_BREEDS,
    SPACE_FLOWER,
    SPACE_LEAF,
    SPACE_NAMES,
    SPACE_PICKED,
    SPACE_PREPARED,
    STOCK,
)
from hortus.games.svg import Last, Moves, Svg, esc, who

CELL = 64
BREED_FILL = ("#e0574f", "#f0b429", "#3f88c5", "#57a773", "#a061c9", "#888888")
SEAT_FILL = ("#ffffff", "#222222", "#ff9f1c", "#2ec4b6")
_SPACE = re.compile(r"(R?\w+\(\d+,\d+\))")
_ROOM = re.compile(r"^move to (\S+) with (.+)$")
_HAND = re.compile(r"^(?:play|fertilize with) (.+)$")
_ACQUIRE = re.compile(r"^acquire (.+)$")
_FERTILIZE = re.compile(r"^fertilize with ")


def breed_shape(svg: Svg, breed: int, cx: float, cy: float, r: float) -> None:
    """Breed `breed` (1-based, components order) as its rulebook symbol (LC1: 1 ● circle,
    2 ▲ triangle, 3 ■ square, 4 ⬢ hexagon, 5 ◆ diamond) in its colour, named by a tooltip
    and ``data-breed`` so the shape is never the only cue. A breed past the five printed ones
    (other component data) is a circle with its number."""
    b = COMPONENTS.breeds[breed - 1]
    fill = BREED_FILL[(breed - 1) % len(BREED_FILL)]
    svg.open(f' class="breed" data-breed="{esc(b.name)}"', title=f"{b.symbol} {b.name}")
    if b.name == "triangle":
        svg.polygon([(cx, cy - r), (cx + r * 0.95, cy + r * 0.75), (cx - r * 0.95, cy + r * 0.75)], fill, "#333")
    elif b.name == "square":
        svg.rect(cx - r * 0.8, cy - r * 0.8, r * 1.6, r * 1.6, fill=fill, stroke="#333", rx=0)
    elif b.name == "hexagon":
        svg.polygon(
            [
                (cx + r * math.cos(math.pi / 6 + k * math.pi / 3), cy + r * math.sin(math.pi / 6 + k * math.pi / 3))
                for k in range(6)
            ],
            fill,
            "#333",
        )
    elif b.name == "diamond":
        svg.polygon([(cx, cy - r), (cx + r * 0.8, cy), (cx, cy + r), (cx - r * 0.8, cy)], fill, "#333")
    else:
        svg.circle(cx, cy, r * 0.9, fill=fill, stroke="#333")
    svg.close()


def _counts(counts: list[int]) -> str:
    return ", ".join(f"{KIND_NAMES[k]} x{counts[k]}" for k in range(min(len(counts), N_KINDS)) if counts[k]) or "-"


def draw(state: State, seat: int, highlight: Sequence[int] = (), last: Last | None = None) -> str:
    v: dict[str, Any] = state.view(seat)
    moves = Moves(state, seat, highlight, last)
    n = v["players"]
    me = v["seats"][seat]
    svg = Svg(
        "botanical_lab",
        seat,
        f"Botanical Lab - you are seat {seat} - {v['stage']} of seat "
        f"{v['turn_player']} - {who(state)}" + (" - final round" if v["final_round"] else ""),
    )
    svg.text(
        10,
        50,
        "VP: "
        + ", ".join(("you" if p == seat else f"seat {p}") + f" {v['seats'][p]['vp']}" for p in range(n))
        + ".  Plants left: "
        + ", ".join(f"{b.name} {v['plant_stock'][i]}" for i, b in enumerate(COMPONENTS.breeds)),
    )

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
        # moved here, or fertilized the room its assistant stands in (LP3)
        moved = moves.was_last(lambda t: bool((m := _ROOM.match(t)) and m.group(1) == room.name))
        if moved is None and 0 <= moves.last.seat < n and v["seats"][moves.last.seat]["room"] == r:
            moved = moves.was_last(lambda t: bool(_FERTILIZE.match(t)))
        svg.open(moves.attrs(by_room.get(room.name, []), last=moved), title=f"room {room.name}")
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
    # The legend: every breed's symbol with its name (colour is never the only cue).
    ly = svg.height + 14
    svg.open(' class="legend"')
    svg.text(10, ly + 4, "Breeds:", cls="small")
    lx = 58.0
    for b, breed in enumerate(COMPONENTS.breeds, start=1):
        breed_shape(svg, b, lx + 6, ly, 6)
        svg.text(lx + 16, ly + 4, f"{breed.name} (flower {breed.flower_vp} VP)", cls="small")
        lx += 30 + 6.5 * len(f"{breed.name} (flower {breed.flower_vp} VP)")
    svg.close()
    svg.text(
        10,
        ly + 22,
        "Assistants: numbered discs by the room name.  A space shows the breeds "
        "it accepts (top), its plant, the owner's marker and the flower's stage.",
        cls="small",
    )

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
        took = moves.was_last(lambda t: t == f"acquire {name}")
        svg.open(moves.attrs(moves.find(f"acquire {name}"), last=took), title=f"{card.card_type} card")
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
        text = (
            f"{who_}: {info['vp']} VP, {info['markers_free']} markers free, hand {info['hand_count']}, "
            f"draw pile {info['draw_count']}; play area {_counts(info['play'])}; discard "
            f"{_counts(info['discard'])}{unseen}"
        )
        y = svg.wrapped(10, y, text, 120, cls="", line_height=15) + 4
    if any(v["aside"]):
        y = svg.wrapped(10, y, f"Revealed aside: {_counts(v['aside'])}", 120, cls="", line_height=15)
    svg.moves_strip(moves)
    return svg.finish()


def _space(svg: Svg, moves: Moves, ids: list[int], space: list[int], s: int, x: float, y: float) -> None:
    status, owner, breed, step = space
    name = SPACE_NAMES[s]
    # prepared, sprouted, observed... here: every move naming the space (LP2-LP4)
    changed = moves.was_last(lambda t: bool((m := _SPACE.search(t)) and m.group(1) == name and not _ROOM.match(t)))
    svg.open(f' class="space" data-space="{esc(name)}"')
    svg.open(moves.attrs(ids, last=changed), title=name)
    svg.rect(x, y, CELL, CELL, fill="#f6f2e4", stroke="#9a927a")
    svg.close()
    for j, b in enumerate(SPACE_BREEDS[s]):
        breed_shape(svg, b, x + 9 + 13 * j, y + 9, 5.5)
    if status == SPACE_PREPARED:
        svg.circle(x + CELL / 2, y + CELL / 2 + 2, 8, fill="#8b5a2b", stroke="#3d2612")
        svg.text(
            x + CELL / 2,
            y + CELL - 5,
            "seed" + (f" {COMPONENTS.breeds[breed - 1].name}" if breed else ""),
            cls="small",
            anchor="middle",
        )
    elif status == SPACE_LEAF:
        svg.raw(
            f'<path d="M{x + CELL / 2:g} {y + 44:g} q-16 -14 0 -28 q16 14 0 28z" '
            f'fill="{BREED_FILL[(breed - 1) % len(BREED_FILL)]}" stroke="#2f6b3a"/>'
        )
        breed_shape(svg, breed, x + CELL / 2, y + 30, 4)
        svg.text(x + CELL / 2, y + CELL - 5, f"leaf {COMPONENTS.breeds[breed - 1].name}", cls="small", anchor="middle")
    elif status in (SPACE_FLOWER, SPACE_PICKED):
        fill = BREED_FILL[(breed - 1) % len(BREED_FILL)]
        cx, cy = x + CELL / 2, y + CELL / 2
        for dx, dy in ((0, -9), (9, 0), (0, 9), (-9, 0)):
            svg.circle(cx + dx, cy + dy, 7, fill=fill, stroke="#555")
        breed_shape(svg, breed, cx, cy, 5)
        track = COMPONENTS.breeds[breed - 1].track
        picked = " picked" if status == SPACE_PICKED else ""
        svg.text(x + CELL / 2, y + CELL - 3, f"stage {step}/{track}{picked}", cls="small", anchor="middle")
    if status:
        svg.circle(x + CELL - 9, y + 10, 6, fill=SEAT_FILL[owner % 4], stroke="#000")
        svg.text(x + CELL - 9, y + 13, owner, cls="small", anchor="middle", extra=' style="fill:#d33"')
    svg.close()
