"""Botany: War of the Posies as a seat sees it, in SVG: the Garden row and every seat's Garden
Features with the Flowers planted in their slots, the Market, the Basic Flower on top, and the
viewing seat's hand, all as cards showing cost, points, colour (symbol) and abilities in words.

Drawn from ``state.view(seat)`` and the card data only; moves are matched by their public
notation (``play Red Starter``, ``buy ...``, ``plant X in GF #3 of seat 1`` ...). The last
turn's moves (about eight actions a turn) mark the Garden Features they bought, planted in or
uprooted from, the Market cards they bought and the play area they played into.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from hortus.games.base import State
from hortus.games.svg import Last, Moves, Svg, colour, esc, who
from hortus.games.war_of_the_posies.game import CARDS, COMPONENTS, GFS, KIND_BY_NAME

CARD_W, CARD_H = 150, 112
GF_W, GF_H = 190, 118
_PLANT = re.compile(r"^plant (.+) in (.+) of seat (\d+)$")
_UPROOT = re.compile(r"^uproot (.+) from (.+) of seat (\d+)$")


def _word(op: str, n: int) -> str:
    """One primitive of the effect vocabulary in words."""
    plural = "s" if n != 1 else ""
    texts = {
        "COIN": f"+{n} coin{plural}",
        "DRAW": f"draw {n} card{plural}",
        "BUY": f"+{n} purchase{plural}",
        "PLANT": f"+{n} planting{plural}",
        "COMPOST_HAND": f"compost up to {n} from your hand",
        "COMPOST_ANY": f"compost up to {n} from hand or discard",
        "GAIN_BASIC_HAND": "take the top Basic Flower into your hand",
        "UPROOT": f"uproot up to {n} unlocked Flower{plural}",
    }
    return texts.get(op, f"{op} {n}")


def words(effect: Sequence[tuple[str, int]]) -> str:
    """A card text in words: 'COIN 2; DRAW 1' -> '+2 coins, then draw 1 card'."""
    return ", then ".join(_word(op, n) for op, n in effect)


def _gf_index(label: str) -> int:
    """'St. George's Fountain #3' -> 2 (the label numbers Garden Features from 1)."""
    return int(label.rsplit("#", 1)[1]) - 1


def _card(
    svg: Svg, moves: Moves, ids: list[int], x: float, y: float, name: str, extra: str = "", last: str | None = None
) -> None:
    card = CARDS[KIND_BY_NAME[name]]
    symbol = COMPONENTS.symbols[card.symbol] if card.symbol is not None else None
    svg.open(moves.attrs(ids, last=last), title=name)
    svg.rect(x, y, CARD_W, CARD_H, fill="#fffdf5", stroke="#7a6f55", rx=6)
    svg.close()
    svg.rect(x, y, CARD_W, 20, fill=colour(symbol) if symbol else "#d8d3c4", stroke="none", rx=6)
    svg.text(x + 6, y + 14, name + extra, cls="small", extra=' style="font-weight:bold"')
    kind = f"{symbol} Flower" if symbol else "Expedition / tool"
    if card.is_poisonous:
        kind = f"Poisonous {kind}"
    svg.text(x + 6, y + 33, f"{kind}", cls="small")
    svg.text(x + 6, y + 46, f"points {card.points}   cost {card.cost}", cls="small")
    yy = y + 59
    if card.play:
        yy = svg.wrapped(x + 6, yy, ("Cultivate: " if symbol else "") + words(card.play), 27, line_height=11)
    if card.plant:
        svg.wrapped(x + 6, yy, "Plant: " + words(card.plant), 27, line_height=11)


def _gf(
    svg: Svg,
    moves: Moves,
    ids: list[int],
    x: float,
    y: float,
    label: str,
    slots: list[str | None] | None = None,
    complete: bool = False,
    last: str | None = None,
) -> None:
    g = _gf_index(label)
    gf = GFS[g]
    svg.open(moves.attrs(ids, last=last), title=label)
    svg.rect(x, y, GF_W, GF_H, fill="#eef4e4" if not complete else "#d6ebc8", stroke="#4c6b3c", rx=6)
    svg.close()
    svg.text(x + 6, y + 15, label, cls="small", extra=' style="font-weight:bold"')
    svg.text(x + 6, y + 29, f"cost {gf.cost}   Reputation {gf.reputation}" + ("   complete" if complete else ""), cls="small")
    for i, s in enumerate(gf.symbols):
        sx, sy = x + 6 + i * 45, y + 36
        name = COMPONENTS.symbols[s]
        svg.rect(sx, sy, 42, 40, fill="#ffffff", stroke=colour(name), rx=4, extra=' stroke-width="3"')
        planted = slots[i] if slots and i < len(slots) else None
        if planted:
            card = CARDS[KIND_BY_NAME[planted]]
            svg.circle(sx + 21, sy + 15, 9, fill=colour(name), stroke="#333")
            svg.text(sx + 21, sy + 36, f"{planted.split()[0][:7]} {card.points:+d}", cls="small", anchor="middle")
            svg.raw(f"<title>{esc(planted)}</title>")
        else:
            svg.text(sx + 21, sy + 24, name, cls="small", anchor="middle")
    if gf.when_completed:
        svg.wrapped(x + 6, y + 90, "When completed: " + words(gf.when_completed), 32, line_height=11)


def draw(state: State, seat: int, highlight: Sequence[int] = (), last: Last | None = None) -> str:
    v: dict[str, Any] = state.view(seat)
    moves = Moves(state, seat, highlight, last)
    n = v["players"]
    scores = state.scores()
    svg = Svg("war_of_the_posies", seat, f"Botany: War of the Posies - you are seat {seat} - round {v['round']} - {who(state)}")
    svg.text(
        10,
        50,
        "Points: "
        + ", ".join(("you" if p == seat else f"seat {p}") + f" {scores[p]:.0f}" for p in range(n))
        + f".  This turn (seat {v['turn_player']}): {v['coins']} coins, {v['buys']} purchases, "
        f"{v['plants']} plantings." + (f"  End triggered by seat {v['end_trigger']}." if v["end_trigger"] is not None else ""),
    )
    y = 60.0
    for effect in v["effects"]:
        svg.text(10, y + 12, f"Resolving {effect['effect']} ({effect['picks_left']} picks left)")
        y += 16

    def ids_for(predicate: Any) -> list[int]:
        return [a for a, t in moves.notation.items() if predicate(t)]

    # Garden row, then the Market and the Basic Flower on top.
    svg.text(10, y + 16, "Garden row", cls="title")
    for i, label in enumerate(v["garden_row"]):
        _gf(svg, moves, ids_for(lambda t, label=label: t == f"buy {label}"), 10 + i * (GF_W + 8), y + 24, label)
    y += 24 + GF_H + 12
    svg.text(10, y + 16, "Market", cls="title")
    x = 10.0
    for name, count in v["market_row"].items():
        _card(
            svg,
            moves,
            ids_for(lambda t, name=name: t == f"buy {name}"),
            x,
            y + 24,
            name,
            f" x{count}" if count > 1 else "",
            last=moves.was_last(lambda t: t == f"buy {name}"),
        )
        x += CARD_W + 8
    if v["basic_top"]:
        name = v["basic_top"]
        _card(svg, moves, ids_for(lambda t, name=name: t == f"buy {name}"), x + 10, y + 24, name, " (Basic)")
    y += 24 + CARD_H + 12

    # The viewing seat's hand: playing, planting and composting it.
    me = v["seats"][seat]
    svg.text(10, y + 16, f"Your hand ({me['hand_count']})", cls="title")
    x = 10.0
    for name, count in me.get("hand", {}).items():
        for copy in range(count):

            def mine(t: str, name: str = name) -> bool:
                m = _PLANT.match(t)
                return t in (f"play {name}", f"compost {name} from hand") or bool(m and m.group(1) == name)

            if x + CARD_W > 10 + 6 * (CARD_W + 8):
                x, y = 10.0, y + CARD_H + 8
            _card(svg, moves, ids_for(mine) if copy == 0 else [], x, y + 24, name)
            x += CARD_W + 8
    y += 24 + CARD_H + 12
    if v["play_area"]:
        played = moves.was_last(lambda t: t.startswith("play "), seat=v["turn_player"])
        svg.open(moves.attrs([], last=played), title="play area")
        top = y
        text = "Play area: " + ", ".join(f"{k} x{c}" for k, c in v["play_area"].items())
        svg.rect(6, top, min(12 + 7 * len(text), 12 + 7 * 120), 16 + 15 * (len(text) // 120), fill="none", stroke="none")
        y = svg.wrapped(10, y + 12, text, 120, cls="", line_height=15)
        svg.close()

    # Every seat's Garden Features with their planted Flowers (targets of plant and uproot).
    for p in [seat] + [q for q in range(n) if q != seat]:
        info = v["seats"][p]
        owner = "Your" if p == seat else f"Seat {p}'s"
        svg.text(10, y + 16, f"{owner} garden", cls="title")
        unseen = "" if p == seat else "; hand + draw pile: " + (", ".join(f"{k} x{c}" for k, c in info["unseen"].items()) or "-")
        known = ", ".join(f"{k} x{c}" for k, c in info["known_in_hand"].items())
        y = (
            svg.wrapped(
                10,
                y + 32,
                f"hand {info['hand_count']}, draw pile {info['draw_count']}, discard: "
                + (", ".join(f"{k} x{c}" for k, c in info["discard"].items()) or "-")
                + unseen
                + (f"; known in hand: {known}" if known else ""),
                130,
            )
            + 2
        )
        x = 10.0
        for gf in info["garden"]:
            label = gf["label"]

            def targets(t: str, label: str = label, p: int = p) -> bool:
                m = _PLANT.match(t) or _UPROOT.match(t)
                return bool(m and m.group(2) == label and int(m.group(3)) == p)

            if x + GF_W > 10 + 4 * (GF_W + 8):
                x, y = 10.0, y + GF_H + 8

            def changed(t: str, label: str = label, p: int = p) -> bool:
                m = _PLANT.match(t) or _UPROOT.match(t)
                if m:
                    return m.group(2) == label and int(m.group(3)) == p
                return t == f"buy {label}" and p == moves.last.seat  # a bought feature joins the buyer's garden

            _gf(svg, moves, ids_for(targets), x, y, label, gf["slots"], gf["complete"], last=moves.was_last(changed))
            x += GF_W + 8
        if not info["garden"]:
            svg.text(10, y + 12, "(no Garden Feature yet)", cls="small")
            y += 20
        else:
            y += GF_H + 12
    discard = me["discard"]
    for name in discard:
        ids = ids_for(lambda t, name=name: t == f"compost {name} from discard")
        if ids:
            svg.open(moves.attrs(ids), title=f"compost {name} from your discard pile")
            svg.rect(10, y, 14 + 7 * len(name) + 120, 22, fill="#f3eee0")
            svg.text(16, y + 15, f"compost from discard: {name}")
            svg.close()
            y += 26
    svg.moves_strip(moves)
    return svg.finish()
