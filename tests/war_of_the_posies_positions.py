"""Builds War of the Posies positions for rule scenarios: name the cards that matter, the
helper puts every other card where it consistently belongs (starting cards in their owner's
draw pile, Market cards in the Market deck, Basic Flowers in their pile, GFs in the GF deck,
full rows) and validates the result by decoding it."""

from __future__ import annotations

import zlib
from typing import Any, Mapping, Sequence

from hortus import games
from hortus.games.base import _CHECKSUM, _HEADER, FORMAT_VERSION, MAGIC
from hortus.games.war_of_the_posies import components as wc
from hortus.games.war_of_the_posies import game as wp
from hortus.games.war_of_the_posies import kernel


def _game() -> games.Game:
    """The registered game (the class itself until it is registered)."""
    try:
        return games.get("war_of_the_posies")
    except games.UnknownGameError:
        return wp.WarOfThePosiesGame()


GAME = _game()
Cards = Mapping[str, int]
GardenSpec = tuple[str, Sequence[str | None]]
"""(Garden Feature name or label like 'Glasshouse #24', Flower names per slot or None)."""


def k(name: str) -> int:
    """Card kind id by name."""
    return wp.KIND_BY_NAME[name]


def counts(cards: Cards | None) -> list[int]:
    out = [0] * wp.MAX_KINDS
    for name, n in (cards or {}).items():
        out[k(name)] += n
    return out


def position(
    *,
    players: int = 2,
    turn: int = 0,
    first: int = 0,
    stage: str = "play",
    round: int = 1,
    hands: Mapping[int, Cards] | None = None,
    draws: Mapping[int, Cards] | None = None,
    discards: Mapping[int, Cards] | None = None,
    play_area: Cards | None = None,
    compost: Cards | None = None,
    gardens: Mapping[int, Sequence[GardenSpec]] | None = None,
    pending_wc: Sequence[str] = (),
    market_row: Sequence[str] = (),
    gf_row: Sequence[str] = (),
    basic_top: str | None = "Red Campion",
    coins: int = 0,
    buys: int = 1,
    plants: int = 1,
    end_trigger: int | None = None,
    final_turns_left: int = 0,
    options: Mapping[str, str] | None = None,
) -> games.State:
    """A validated position where `turn` is to decide (or the game is over).

    Starting cards a seat does not show elsewhere fill its draw pile; when `draws` gives a
    seat's draw pile explicitly, its leftover starting cards are composted instead. Rows are
    completed from the lowest unused cards so that no refill is pending."""
    opts = GAME.resolve_options(options)
    hands = hands or {}
    draws = draws or {}
    discards = discards or {}
    gardens = gardens or {}
    hand = [counts(hands.get(p)) for p in range(4)]
    draw = [counts(draws.get(p)) for p in range(4)]
    discard = [counts(discards.get(p)) for p in range(4)]
    play = counts(play_area)
    compost_pile = counts(compost)
    gf_loc = [wp.GF_DECK if i < wp.N_GF else wp.EMPTY for i in range(wp.MAX_GF)]
    gf_slot = [[0] * wp.MAX_SLOTS for _ in range(wp.MAX_GF)]
    gf_flags = [0] * wp.MAX_GF
    planted = [0] * wp.MAX_KINDS

    def take_gf(name: str) -> int:
        for i in range(wp.N_GF):
            if gf_loc[i] == wp.GF_DECK and name in (wp.GFS[i].name, wp.gf_label(i)):
                return i
        raise AssertionError(f"no free Garden Feature {name!r}")

    for p, specs in gardens.items():
        for name, flowers in specs:
            i = take_gf(name)
            gf_loc[i] = wp.GF_OWNED + p
            assert len(flowers) == len(wp.GFS[i].symbols), name
            for j, flower in enumerate(flowers):
                if flower is not None:
                    gf_slot[i][j] = k(flower) + 1
                    planted[k(flower)] += 1
            if all(flowers):
                gf_flags[i] = wp.GF_COMPLETE
                if wp.gf_label(i) in pending_wc or wp.GFS[i].name in pending_wc:
                    gf_flags[i] |= wp.GF_WC_PENDING
    for name in gf_row:
        gf_loc[take_gf(name)] = wp.GF_ROW
    market = counts({})
    for name in market_row:
        market[k(name)] += 1
    top = wp.EMPTY if basic_top is None else k(basic_top)

    def used(kind: int) -> int:
        n = sum(hand[p][kind] + draw[p][kind] + discard[p][kind] for p in range(4))
        n += play[kind] + compost_pile[kind] + planted[kind] + market[kind] + (1 if top == kind else 0)
        return n

    market_deck = [0] * wp.MAX_KINDS
    basic_pile = [0] * wp.MAX_KINDS
    for kind, card in enumerate(wp.CARDS):
        free = wp.total_copies(kind, players) - used(kind)
        assert free >= 0, f"too many {card.name}"
        if card.category == wc.CATEGORY_STARTING:
            # Each seat owns one starting set: what it does not show is in its draw pile.
            for p in range(players):
                shown = hand[p][kind] + discard[p][kind] + (play[kind] if p == turn else 0)
                shown += sum(1 for i in range(wp.N_GF) if gf_loc[i] == wp.GF_OWNED + p for slot in gf_slot[i] if slot == kind + 1)
                missing = max(0, min(free, card.copies - shown - draw[p][kind]))
                if p in draws:
                    compost_pile[kind] += missing
                else:
                    draw[p][kind] += missing
                free -= missing
            compost_pile[kind] += free
        elif card.category == wc.CATEGORY_MARKET:
            market_deck[kind] = free
        else:
            basic_pile[kind] = free
    for kind in range(wp.N_KINDS):  # complete the Market row from the deck
        while sum(market) < wp.MARKET_SIZE and market_deck[kind]:
            market[kind] += 1
            market_deck[kind] -= 1
    for i in range(wp.N_GF):  # complete the GF row from the deck
        if sum(1 for x in gf_loc if x == wp.GF_ROW) < wp.GF_ROW_SIZE and gf_loc[i] == wp.GF_DECK:
            gf_loc[i] = wp.GF_ROW
    if top == wp.EMPTY:
        assert not any(basic_pile), "the Basic top is revealed while the pile has cards"
    over = stage == "over"
    d: dict[str, Any] = {
        "players": players,
        "stage": wp.STAGES.index(stage),
        "first_player": first,
        "turn_player": turn,
        "round": round,
        "end_trigger": wp.EMPTY if end_trigger is None else end_trigger,
        "final_turns_left": final_turns_left,
        "tiebreak_locked_only": wp.TIEBREAK_COUNTS.index(opts["tiebreak_count"]),
        "coins": 0 if over else coins,
        "buys": 1 if over else buys,
        "plants": 1 if over else plants,
        "last_pure": 0,
        "draw_seat": turn,
        "draws_pending": 0,
        "turn_ending": 0,
        "basic_top": top,
        "depth": 0,
        "frame_effect": [0, 0, 0],
        "frame_pc": [0, 0, 0],
        "frame_left": [0, 0, 0],
        "hand": hand,
        "draw": draw,
        "discard": discard,
        "play": play,
        "market_row": market,
        "market_deck": market_deck,
        "basic_pile": basic_pile,
        "compost": compost_pile,
        "gf_loc": gf_loc,
        "gf_slot": gf_slot,
        "gf_flags": gf_flags,
    }
    return decode_core(bytes(kernel.dict_to_core(d)), players)


def decode_core(core: bytes, players: int) -> games.State:
    body = _HEADER.pack(MAGIC, FORMAT_VERSION, GAME.game_id, 0, players, len(core)) + core
    return GAME.decode(body + _CHECKSUM.pack(zlib.crc32(body)))


def notations(state: games.State) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]


def core(state: games.State) -> dict[str, Any]:
    result: dict[str, Any] = kernel.core_to_dict(state.kernel_state.core())
    return result


def named(row: list[int]) -> dict[str, int]:
    return {wp.CARDS[i].name: n for i, n in enumerate(row[: wp.N_KINDS]) if n}


def draw_first(state: games.State) -> None:
    """Resolve chance nodes by always taking the first outcome (a known, reproducible draw)."""
    while state.is_chance():
        state.apply(state.chance_outcomes()[0][0])


def draw_named(state: games.State, *names: str) -> None:
    """Resolve the pending chance nodes in order with the named outcomes."""
    for name in names:
        assert state.is_chance(), "no chance node pending"
        state.apply_text(name)
