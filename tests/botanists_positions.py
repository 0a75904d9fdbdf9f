"""Builds Botanists positions for rule scenarios: name what matters (boards, market, pawns,
lands, leftovers, hands, orders, the stage), the helper fills in a consistent rest (the bag
by conservation, decks by elimination) and validates the result by decoding it."""

from __future__ import annotations

import zlib
from typing import Any, Sequence

from hortus import games
from hortus.games.base import _CHECKSUM, _HEADER, FORMAT_VERSION, MAGIC
from hortus.games.botanists import game as bt
from hortus.games.botanists import kernel

R, Y, G, B, P = range(5)
COLOUR = {"R": R, "Y": Y, "G": G, "B": B, "P": P}
BOARD = {name: i for i, name in enumerate(b.name for b in bt.COMPONENTS.boards)}
SHAPE = {s.name: i for i, s in enumerate(bt.COMPONENTS.shapes)}
E = bt.EMPTY


def cell(name: str) -> int:
    """'c3' -> 12 (column letter, row number from the top as seen from seat 0)."""
    return (int(name[1]) - 1) * 5 + "abcde".index(name[0])


def card(name: str) -> int:
    """'O/0' -> the O shape with its highlight on box 0."""
    shape, box = name.split("/")
    return 4 * SHAPE[shape] + int(box)


def order(text: str) -> int:
    """The lowest order id needing exactly these flowers ('RRY')."""
    want = tuple(text.count(letter) for letter in "RYGBP")
    return bt.COMPONENTS.orders.index(want)


def orders(text: str, count: int, taken: set[int]) -> list[int]:
    """`count` distinct order ids with these flowers, not in `taken`."""
    want = tuple(text.count(letter) for letter in "RYGBP")
    out = [o for o, need in enumerate(bt.COMPONENTS.orders) if need == want and o not in taken][:count]
    assert len(out) == count, f"not enough {text} orders"
    return out


def land(spec: str) -> list[tuple[int, int]]:
    """'Ru Yd' -> [(red, face up), (yellow, face down)]."""
    return [(COLOUR[t[0]], 1 if t[1] == "d" else 0) for t in spec.split()]


def full_market(pattern: str = "RYGBP") -> list[int]:
    return [COLOUR[pattern[i % len(pattern)]] for i in range(25)]


def matching_land(board: str, count: int, down: Sequence[int] = ()) -> list[tuple[int, int]]:
    """The first `count` spaces of `board` planted with matching tiles; spaces in `down` face down."""
    signs = bt.COMPONENTS.boards[BOARD[board]].signs
    return [(signs[k], 1 if k in down else 0) for k in range(count)]


def build(
    *,
    players: int,
    stage: str,
    boards: Sequence[str],
    helper_board: str | None = None,
    cur: int = 0,
    first: int = 0,
    round_: int = 0,
    turns_done: int = 0,
    market: list[int] | None = None,
    pawns: Sequence[int | str | None] = (),
    helper: str | None = "c3",
    lands: Sequence[list[tuple[int, int]]] = (),
    helper_land: list[tuple[int, int]] | None = None,
    leftovers: Sequence[str] = (),
    hands: Sequence[Sequence[str]] = (),
    discard: Sequence[str] = (),
    open_orders: Sequence[str | None] = ("RY", "GB", "PP"),
    personal: Sequence[Sequence[str]] = (),
    fulfilled: Sequence[Sequence[str]] = (),
    scores: Sequence[int] = (),
    collected: str = "",
    options: dict[str, str] | None = None,
    normalize: bool = False,
    **fields: Any,
) -> games.State:
    g = games.get("botanists") if "botanists" in games.names() else bt.BotanistsGame()
    opts = g.resolve_options(options)
    d = kernel.core_to_dict(g.initial_core(players, None, opts))
    tiles = d["tiles_per_colour"]
    d["stage"] = bt.STAGES.index(stage)
    d["cur"], d["first_player"], d["round"], d["turns_done"] = cur, first, round_, turns_done
    for i, name in enumerate(boards):
        d["board"][i] = BOARD[name]
    if players == 1:
        d["board"][bt.HELPER] = BOARD[helper_board or "red"]
        d["pawn"][bt.HELPER] = cell(helper) if helper else bt.OFF
    d["market"] = list(market) if market is not None else full_market()
    for i, where in enumerate(pawns):
        d["pawn"][i] = bt.OFF if where is None else (cell(where) if isinstance(where, str) else where)
    whos = list(lands) + [[]] * (players - len(lands))
    if players == 1:
        whos = whos[:1] + [[]] * 3 + [helper_land or []]
    for w, tiles_on_land in enumerate(whos):
        d["land_filled"][w] = len(tiles_on_land)
        for k, (colour, down) in enumerate(tiles_on_land):
            d["land_colour"][w][k] = colour
            d["land_down"][w][k] = down
    for p, spec in enumerate(leftovers):
        for letter in spec:
            d["leftover"][p][COLOUR[letter]] += 1
    for letter in collected:
        d["collected"][COLOUR[letter]] += 1
    for p, value in enumerate(scores):
        d["score"][p] = value
    card_loc = [bt.CARD_DECK] * bt.N_CARDS
    for p, hand in enumerate(hands):
        for name in hand:
            card_loc[card(name)] = bt.CARD_HAND + p
    for name in discard:
        card_loc[card(name)] = bt.CARD_DISCARD
    d["card_loc"] = card_loc
    taken: set[int] = set()
    order_loc = [bt.ORDER_DECK] * bt.N_ORDERS
    d["open_orders"] = [E] * 3
    for slot, text in enumerate(open_orders):
        if text:
            (o,) = orders(text, 1, taken)
            taken.add(o)
            order_loc[o] = bt.ORDER_OPEN
            d["open_orders"][slot] = o
    for p, texts in enumerate(personal):
        for text in texts:
            (o,) = orders(text, 1, taken)
            taken.add(o)
            order_loc[o] = bt.ORDER_PERSONAL + p
    for p, texts in enumerate(fulfilled):
        for text in texts:
            (o,) = orders(text, 1, taken)
            taken.add(o)
            order_loc[o] = bt.ORDER_FULFILLED + p
        d["fulfilled_total"][p] = len(texts)
    d["order_loc"] = order_loc
    for key, value in fields.items():
        d[key] = value
    # The bag holds whatever is not elsewhere (conservation).
    for colour in range(5):
        used = d["collected"][colour] + sum(1 for v in d["market"] if v == colour)
        used += sum(d["leftover"][p][colour] for p in range(4))
        used += sum(1 for w in range(5) for k in range(d["land_filled"][w]) if d["land_colour"][w][k] == colour)
        d["bag"][colour] = tiles - used
    core = bytes(kernel.dict_to_core(d))
    if normalize:
        core = bytes(kernel.normalized(core))
    body = _HEADER.pack(MAGIC, FORMAT_VERSION, g.game_id, 0, players, len(core)) + core
    return g.decode(body + _CHECKSUM.pack(zlib.crc32(body)))


def notations(state: games.State) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]


def state_dict(state: games.State) -> dict[str, Any]:
    return bt.core_dict(state)


def end_of_round(
    *,
    players: int,
    round_: int,
    boards: Sequence[str],
    lands: Sequence[list[tuple[int, int]]],
    helper_land: list[tuple[int, int]] | None = None,
    **kw: Any,
) -> games.State:
    """The last turn of round `round_` has been played (seat 0 started the round, so the last
    seat played last); only the market refill (one empty cell, a1) is pending before the
    scoring phase. Apply that chance outcome (score_phase) to score."""
    market = full_market()
    market[0] = E
    n = players
    return build(
        players=players,
        stage="end_turn",
        boards=boards,
        round_=round_,
        turns_done=5 * n - 1,
        cur=n - 1,
        first=0,
        lands=lands,
        helper_land=helper_land,
        market=market,
        pend_market=1,
        planted=3 if players == 1 else 1,
        done_mask=3 if players == 1 else 1,
        own_action=1,
        hands=kw.pop(
            "hands",
            [["O/0", "O/1"], ["O/2", "O/3"], ["I-h/0", "I-h/1"], ["I-v/0", "I-v/1"]][:n] if n > 1 else [["O/0", "O/1", "O/2"]],
        ),
        pawns=kw.pop("pawns", ["a2", "b2", "c2", "d2"][:n]),
        **kw,
    )


def score_phase(state: games.State) -> games.State:
    """Apply the pending market refill (red) and return the state after the scoring phase."""
    state.apply(state.parse_action("draw red for a1"))
    return state
