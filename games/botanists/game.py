"""Botanists' Python face: options, notation, validation of positions, views and rendering.

The rules are in ``kernel.pyx``; this module never changes a state, it only reads the
serialized core (``kernel.core_to_dict``) and builds cores (``kernel.dict_to_core``).

Seat counts: 2-4 players play the standard game; **1 player is the solo variant, the Little
Helper** (decisions.md 2.10), so ``new_game(players=1)`` needs no variant name. A solo game
has no opponent, so its ``returns()`` are always ``[1.0]`` (the contract's win shares sum to
1); the solo result is the final score (``scores()``).
"""

from __future__ import annotations

from typing import Any, Mapping

from hortus._ext.engine import KernelState
from hortus.games.base import Game, InvalidPositionError, RuleOption, State
from hortus.games.botanists import components as components_module
from hortus.games.botanists import kernel

COMPONENTS = components_module.load()
components_module.install(COMPONENTS)

# Kernel constants (kernel.pxd), repeated for the Python side.
EMPTY = 255
OFF = 255
NO_BONUS = 255
HELPER = 4
N_CELLS, N_COLOURS, N_BOARDS, N_SPACES, N_CARDS, N_ORDERS, N_OPEN = 25, 5, 5, 15, 76, 82, 3
STAGES = (
    "setup_board",
    "setup_cards",
    "setup_open",
    "setup_personal",
    "setup_market",
    "setup_first",
    "solo_order",
    "action",
    "card",
    "plant",
    "bonus",
    "tend_discard",
    "tend_draw",
    "tend_keep",
    "fulfil_open",
    "fulfil_personal",
    "helper_card",
    "helper_dest",
    "solo_discard",
    "end_turn",
    "keep",
    "choose_first",
    "over",
)
(
    ST_SETUP_BOARD,
    ST_SETUP_CARDS,
    ST_SETUP_OPEN,
    ST_SETUP_PERSONAL,
    ST_SETUP_MARKET,
    ST_SETUP_FIRST,
    ST_SOLO_ORDER,
    ST_ACTION,
    ST_CARD,
    ST_PLANT,
    ST_BONUS,
    ST_TEND_DISCARD,
    ST_TEND_DRAW,
    ST_TEND_KEEP,
    ST_FULFIL_OPEN,
    ST_FULFIL_PERSONAL,
    ST_HELPER_CARD,
    ST_HELPER_DEST,
    ST_SOLO_DISCARD,
    ST_END_TURN,
    ST_KEEP,
    ST_CHOOSE_FIRST,
    ST_OVER,
) = range(23)
SETUP_STAGES = range(ST_SETUP_BOARD, ST_SOLO_ORDER)
TURN_STAGES = range(ST_SOLO_ORDER, ST_KEEP)
PART_NONE, PART_PURCHASE, PART_TEND, PART_HELPER = range(4)
PARTS = ("none", "purchase", "tend", "helper")
CARD_DECK, CARD_DISCARD, CARD_HAND = 0, 1, 2
ORDER_DECK, ORDER_DISCARD, ORDER_OPEN, ORDER_PERSONAL, ORDER_FULFILLED = 0, 1, 2, 3, 7
BONUS_SWAP_PLAYER, BONUS_MOVE, BONUS_TAKE_ORDER, BONUS_SWAP_MARKET, BONUS_PLUS3 = range(5)
A = kernel.action_base()
NUM_ACTIONS = A["NUM_ACTIONS"]
COLOURS = components_module.COLOUR_NAMES
LETTERS = components_module.COLOUR_LETTERS
OWN_ACTIONS = ("none", "purchase", "tend", "passed")

ENTRY_MODES = ("outer_start", "outer_is_step1")
MOVE_MODES = ("king2", "straight2")
ORIENTATION_MODES = ("seat", "absolute")
BOARD_ASSIGNMENTS = ("deal", "choose")
BOOLEAN = ("true", "false")
DEFAULT_TILES = str(COMPONENTS.tiles_per_colour)
TILE_CHOICES = tuple(dict.fromkeys((DEFAULT_TILES, "25")))


def cell_name(cell: int) -> str:
    """'c3': column letter a-e (left to right for seat 0), row 1-5 (top to bottom)."""
    return "abcde"[cell % 5] + str(cell // 5 + 1)


def card_name(card: int) -> str:
    return COMPONENTS.card_name(card)


def order_name(order: int) -> str:
    return COMPONENTS.order_text(order)


def board_name(board: int) -> str:
    return COMPONENTS.boards[board].name


def hand_size_rule(players: int) -> int:
    """S3/L1: 2 market cards in hand, 3 in solo."""
    return 3 if players == 1 else 2


def orientation(d: Mapping[str, Any], seat: int) -> int:
    """A15: seat orientation (0 bottom, 1 left, 2 top, 3 right) for reading market cards."""
    if d["opt_orientation"]:
        return 0
    return {1: (0,), 2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}[d["players"]][seat]


class BotanistsGame(Game):
    name = "botanists"
    game_id = 1
    min_players = 1  # 1 = the solo variant, the Little Helper (decisions.md 2.10)
    default_players = 2  # the solo variant only when asked for: players 0 deals 2, as the other games
    max_players = 4
    variants = ()
    # Bounds of any final score: at most 2 orders per turn (150) + 7 and column bonuses per
    # phase (41, solo Helper columns included) + a +3 bonus per planted tile (90); at worst
    # every tile left over at every phase (-870), 15 + 15 withered (-240) and every order
    # held as an unfulfilled personal order (-410).
    score_range = (-1600.0, 300.0)
    options = {
        "fulfil_after_purchase": RuleOption(
            "fulfil_after_purchase",
            "true",
            BOOLEAN,
            "A8: a purchase ends with the missing step P8 (fulfil at most one open and one "
            "personal order with leftovers). false = only tending fulfils orders.",
        ),
        "bonus_sees_new_leftovers": RuleOption(
            "bonus_sees_new_leftovers",
            "false",
            ("false", "true"),
            "A16/P6: false = the bonus is resolved before this purchase's other tiles reach "
            "the marginal land (swap bonuses cannot use them); true = they are there first.",
        ),
        "entry_mode": RuleOption(
            "entry_mode",
            "outer_start",
            ENTRY_MODES,
            "A13 first-turn entry: outer_start = a free outer tile is a virtual start, then a "
            "normal 1-2 step move; outer_is_step1 = entering an outer tile is step 1, an "
            "optional second step follows.",
        ),
        "move_mode": RuleOption(
            "move_mode",
            "king2",
            MOVE_MODES,
            "A14: king2 = two independent king steps (the path may bend); straight2 = a 2-step move keeps its direction.",
        ),
        "orientation_mode": RuleOption(
            "orientation_mode",
            "seat",
            ORIENTATION_MODES,
            "A15: seat = market cards are read from each player's side of the table (2p "
            "seats bottom/top, 3p bottom/left/top, 4p all four); absolute = everyone reads "
            "them like seat 0.",
        ),
        "board_assignment": RuleOption(
            "board_assignment",
            "deal",
            BOARD_ASSIGNMENTS,
            "S2: deal = boards are dealt at random (a chance node a frontend may report "
            "with the boards players picked); choose = each seat picks its board in seat "
            "order as a decision. The Helper's board is always dealt at random (L2).",
        ),
        "tiles_per_colour": RuleOption(
            "tiles_per_colour",
            DEFAULT_TILES,
            TILE_CHOICES,
            "A1: tiles per colour in the bag: the data file's count (29 = the 145 tiles of "
            "the setup text) or 25 (the 125 tiles of the component list).",
        ),
    }

    def kernel_capsule(self) -> object:
        return kernel.kernel_capsule()

    def initial_core(self, players: int, variant: str | None, options: dict[str, str]) -> bytes:
        tiles = int(options["tiles_per_colour"])
        d: dict[str, Any] = {
            "stage": ST_SETUP_BOARD,
            "players": players,
            "opt_entry": ENTRY_MODES.index(options["entry_mode"]),
            "opt_move": MOVE_MODES.index(options["move_mode"]),
            "opt_orientation": ORIENTATION_MODES.index(options["orientation_mode"]),
            "opt_bonus_sees": int(options["bonus_sees_new_leftovers"] == "true"),
            "opt_fulfil_purchase": int(options["fulfil_after_purchase"] == "true"),
            "opt_choose_boards": BOARD_ASSIGNMENTS.index(options["board_assignment"]),
            "tiles_per_colour": tiles,
            "round": 0,
            "first_player": 0,
            "turns_done": 0,
            "cur": 0,
            "part": PART_NONE,
            "solo_first": 0,
            "done_mask": 0,
            "planted": 0,
            "own_action": 0,
            "bonus": NO_BONUS,
            "bonus_on_helper": 0,
            "sel_a": EMPTY,
            "sel_b": EMPTY,
            "keep_target": 0,
            "keep_index": 0,
            "chooser": 0,
            "pend_personal": 0,
            "pend_open": 0,
            "pend_cards": 0,
            "pend_market": 0,
            "market": [EMPTY] * N_CELLS,
            # L2: the Helper's pawn starts on the centre tile; every other pawn beside the market.
            "pawn": [OFF] * 4 + [12 if players == 1 else OFF],
            "bag": [tiles] * N_COLOURS,
            "collected": [0] * N_COLOURS,
            "board": [EMPTY] * 5,
            "land_filled": [0] * 5,
            "land_colour": [[EMPTY] * N_SPACES for _ in range(5)],
            "land_down": [[0] * N_SPACES for _ in range(5)],
            "leftover": [[0] * N_COLOURS for _ in range(4)],
            "score": [0] * 4,
            "fulfilled_total": [0] * 4,
            "card_loc": [CARD_DECK] * N_CARDS,
            "order_loc": [ORDER_DECK] * N_ORDERS,
            "open_orders": [EMPTY] * N_OPEN,
        }
        return bytes(kernel.dict_to_core(d))

    # --- notation ------------------------------------------------------------------------
    def action_to_string(self, state: State, action: int) -> str:
        return describe(core_dict(state), action)

    # --- validation ------------------------------------------------------------------------
    def validate_core(self, core: bytes, players: int, variant: int) -> None:
        if len(core) != kernel.core_size():
            raise InvalidPositionError("position.length", "wrong state size")
        if variant != 0:
            raise InvalidPositionError("position.variant", "botanists has no named variants")
        d = kernel.core_to_dict(core)
        if bytes(kernel.dict_to_core(d)) != bytes(core):
            raise InvalidPositionError("card_held", "bits past the 76 market cards are set")
        validate(d, players)
        if bytes(kernel.normalized(core)) != bytes(core):
            raise InvalidPositionError("stage", "a forced step (refill, skip or redraw) is still to be resolved")
        ks = KernelState.from_core(self.kernel_capsule(), core)
        mover = ks.current_player()
        if mover == -1 and not ks.chance_outcomes():
            raise InvalidPositionError("stage", "a chance node without outcomes")
        if mover >= 0 and not ks.legal_actions():
            raise InvalidPositionError("stage", "a decision without legal actions")

    # --- views -----------------------------------------------------------------------------
    def view(self, state: State, seat: int) -> dict[str, Any]:
        """Everything public plus `seat`'s own hand; other hands are counts (section 4), with
        what every seat knows about them: the cards held in hands since the last reshuffle
        of the market-card discard pile (not in the deck) and how many each seat holds."""
        d = core_dict(state)
        n = d["players"]
        public = {k: v for k, v in d.items() if k not in ("card_loc", "card_held")}
        return {
            "game": self.name,
            "seat": seat,
            "to_move": state.current_player,
            "stage_name": STAGES[d["stage"]] if d["stage"] < len(STAGES) else str(d["stage"]),
            **public,
            "hand": [k for k in range(N_CARDS) if d["card_loc"][k] == CARD_HAND + seat],
            "hand_sizes": [sum(1 for loc in d["card_loc"] if loc == CARD_HAND + p) for p in range(n)],
            "market_discard": [k for k in range(N_CARDS) if d["card_loc"][k] == CARD_DISCARD],
            # A10 reshuffle: the new deck is the public discard pile, so the cards in hands at
            # that moment are known not to be in it until they are played or discarded.
            "held_cards": [k for k in range(N_CARDS) if d["card_held"][k]],
            # per seat (empty while no card is held, as the structured message leaves it out)
            "held_counts": [
                sum(1 for k in range(N_CARDS) if d["card_held"][k] and d["card_loc"][k] == CARD_HAND + p) for p in range(n)
            ]
            if any(d["card_held"])
            else [],
            "legend": {
                "colours": list(COLOURS),
                "boards": [b.name for b in COMPONENTS.boards],
                "cells": "index = row * 5 + column, row 0 at the top as seen from seat 0",
                "cards": "card id = 4 * shape + highlighted box; see hand_names",
                "held_cards": "cards in hands since the last reshuffle (not in the deck); held_counts per seat",
                "orders": "order ids; open_orders / order_loc (0 deck, 1 discard, 2 open, 3+seat personal, 7+seat fulfilled)",
            },
            "hand_names": [card_name(k) for k in range(N_CARDS) if d["card_loc"][k] == CARD_HAND + seat],
        }

    def core_from_view(self, view: Mapping[str, Any]) -> tuple[bytes, int, int]:
        try:
            players = _int(view, "players", 1, 4)
            seat = _int(view, "seat", 0, players - 1)
            d: dict[str, Any] = {}
            for name in kernel._SCALARS:
                d[name] = _int(view, name, 0, 255)
            for key, length in (
                ("market", 25),
                ("pawn", 5),
                ("bag", 5),
                ("collected", 5),
                ("board", 5),
                ("land_filled", 5),
                ("fulfilled_total", 4),
                ("order_loc", 82),
                ("open_orders", 3),
            ):
                d[key] = _byte_list(view, key, length)
            d["land_colour"] = [_byte_list(view["land_colour"], w, 15, f"land_colour[{w}]") for w in range(5)]
            d["land_down"] = [_byte_list(view["land_down"], w, 15, f"land_down[{w}]") for w in range(5)]
            d["leftover"] = [_byte_list(view["leftover"], p, 5, f"leftover[{p}]") for p in range(4)]
            scores = view["score"]
            if not isinstance(scores, list) or len(scores) != 4:
                raise InvalidPositionError("score", "expected 4 integers")
            d["score"] = [_int(scores, i, -32768, 32767, f"score[{i}]") for i in range(4)]
            hand = _card_list(view, "hand")
            discard = _card_list(view, "market_discard")
            sizes = view["hand_sizes"]
            if not isinstance(sizes, list) or len(sizes) != players:
                raise InvalidPositionError("hand_sizes", f"expected {players} counts")
            card_loc = [CARD_DECK] * N_CARDS
            for k in discard:
                card_loc[k] = CARD_DISCARD
            for k in hand:
                if card_loc[k] != CARD_DECK:
                    raise InvalidPositionError("hand", f"card {k} is also in the discard pile")
                card_loc[k] = CARD_HAND + seat
            if len(hand) != _int(sizes, seat, 0, 16, f"hand_sizes[{seat}]"):
                raise InvalidPositionError("hand_sizes", "the own hand size differs from the hand")
            # Held cards (absent or empty: no reshuffle yet): in hands, as many per seat as
            # held_counts says; the own ones are in the own hand.
            held = _card_list(view, "held_cards") if view.get("held_cards") is not None else []
            counts_in = view.get("held_counts") or [0] * players
            if not isinstance(counts_in, list) or len(counts_in) != players:
                raise InvalidPositionError("held_counts", f"expected {players} counts")
            held_counts = [
                _int(counts_in, p, 0, _int(sizes, p, 0, 16, f"hand_sizes[{p}]"), f"held_counts[{p}]") for p in range(players)
            ]
            own_held = [k for k in held if card_loc[k] == CARD_HAND + seat]
            if len(own_held) != held_counts[seat]:
                raise InvalidPositionError("held_counts", "the own count differs from the own held cards")
            others_held = [k for k in held if card_loc[k] == CARD_DECK]
            if len(others_held) + len(own_held) != len(held):
                raise InvalidPositionError("held_cards", "a held card is in the discard pile")
            if len(others_held) != sum(held_counts) - held_counts[seat]:
                raise InvalidPositionError("held_counts", "the other seats' counts differ from the held cards")
            # Hidden hands: filled with the held cards, then the lowest unseen cards; from_view
            # then re-deals them.
            unseen = [k for k in range(N_CARDS) if card_loc[k] == CARD_DECK and k not in others_held]
            for p in range(players):
                if p == seat:
                    continue
                for i in range(_int(sizes, p, 0, 16, f"hand_sizes[{p}]")):
                    source = others_held if i < held_counts[p] else unseen
                    if not source:
                        raise InvalidPositionError("hand_sizes", "more cards in hands than exist")
                    card_loc[source.pop(0)] = CARD_HAND + p
            d["card_loc"] = card_loc
            d["card_held"] = [1 if k in held else 0 for k in range(N_CARDS)]
            if d["players"] != players:
                raise InvalidPositionError("players", "inconsistent seat count")
            core = bytes(kernel.dict_to_core(d))
            # The hidden hands are only a placeholder; when another seat is to move they must
            # still allow its public play (a card that fits where its pawn went), so they are
            # dealt once by the kernel's determinization (fields are validated first).
            validate(kernel.core_to_dict(core), players)
            ks = KernelState.from_core(self.kernel_capsule(), core)
            ks.determinize(seat, 0)
            core = bytes(ks.core())
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            raise InvalidPositionError("view", f"missing or malformed field ({e!r})") from e
        except OverflowError as e:
            raise InvalidPositionError("view", f"value out of range ({e})") from e
        return core, players, seat

    # --- text --------------------------------------------------------------------------------
    def render(self, state: State, seat: int | None = None) -> str:
        return render(core_dict(state), state.current_player, seat)

    def round_number(self, state: State) -> int | None:
        """The round, 1..3 (0 during the setup)."""
        return int(core_dict(state)["round"])

    def end_reason(self, state: State) -> str | None:
        """The game ends after the third scoring phase, the rule's only end."""
        return "trigger" if state.is_terminal() else None

    # How the search plays the game per seat count: search.toml beside this file.

    def heuristic(self, state: State, seat: int) -> float:
        """Greedy: each seat's score as if the scoring phase came now (orders, leftovers,
        withered tiles, unfulfilled personal orders), minus the best other seat's."""
        d = core_dict(state)
        values = [projected_score(d, p) for p in range(d["players"])]
        others = [v for p, v in enumerate(values) if p != seat]
        return values[seat] - (max(others) if others else 0.0)


def projected_score(d: Mapping[str, Any], p: int) -> float:
    left = sum(d["leftover"][p])
    orders = sum(1 for loc in d["order_loc"] if loc == ORDER_FULFILLED + p)
    personal = sum(1 for loc in d["order_loc"] if loc == ORDER_PERSONAL + p)
    down = sum(d["land_down"][p][: d["land_filled"][p]])
    value = d["score"][p] + 5 * orders - 2 * left + (7 if left == 0 else 0)
    value -= down * (down + 1) / 2 + 5 * personal
    if d["players"] == 1:
        helper_down = sum(d["land_down"][HELPER][: d["land_filled"][HELPER]])
        value -= helper_down * (helper_down + 1) / 2
    return float(value)


def core_dict(state: State) -> dict[str, Any]:
    result: dict[str, Any] = kernel.core_to_dict(state.kernel_state.core())
    return result


def _int(container: Any, key: Any, lo: int, hi: int, field: str | None = None) -> int:
    value = container[key]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidPositionError(field or str(key), f"expected an integer {lo}..{hi}")
    return value


def _byte_list(container: Any, key: Any, length: int, field: str | None = None) -> list[int]:
    field = field or str(key)
    value = container[key]
    if not isinstance(value, list) or len(value) != length:
        raise InvalidPositionError(field, f"expected a list of {length} integers")
    return [_int(value, i, 0, 255, f"{field}[{i}]") for i in range(length)]


def _card_list(container: Any, key: str) -> list[int]:
    value = container[key]
    if not isinstance(value, list) or len(value) > N_CARDS or len(set(value)) != len(value):
        raise InvalidPositionError(key, "expected a list of distinct card ids")
    return [_int(value, i, 0, N_CARDS - 1, f"{key}[{i}]") for i in range(len(value))]


# --- notation ------------------------------------------------------------------------------
def chance_context(d: Mapping[str, Any]) -> str:
    """Which chance event the state waits for (mirrors kernel.chance_context)."""
    stage = d["stage"]
    if stage == ST_SETUP_BOARD:
        return "board"
    if stage == ST_SETUP_CARDS:
        return "cards_setup"
    if stage == ST_SETUP_OPEN:
        return "open"
    if stage == ST_SETUP_PERSONAL:
        return "personal_setup"
    if stage == ST_SETUP_MARKET:
        return "tile"
    if stage == ST_SETUP_FIRST:
        return "first"
    if d["pend_personal"]:
        return "personal"
    if d["pend_open"]:
        return "open"
    if d["pend_cards"]:
        return "cards"
    return "tile"


def _setup_card_target(d: Mapping[str, Any]) -> int:
    for p in range(d["players"]):
        if sum(1 for loc in d["card_loc"] if loc == CARD_HAND + p) < hand_size_rule(d["players"]):
            return p
    return 0


def _setup_personal_target(d: Mapping[str, Any]) -> int:
    for p in range(d["players"]):
        have = sum(1 for loc in d["order_loc"] if loc == ORDER_PERSONAL + p)
        if have < 1 + COMPONENTS.boards[d["board"][p]].extra_personal_orders:
            return p
    return 0


def _board_target(d: Mapping[str, Any]) -> int:
    for i in range(d["players"]):
        if d["board"][i] == EMPTY:
            return i
    return HELPER


def _who(seat: int) -> str:
    return "the helper" if seat == HELPER else f"seat {seat}"


def describe(d: Mapping[str, Any], action: int) -> str:
    """The notation of `action` in the position `d` (core_to_dict)."""
    stage = d["stage"]
    seat = d["cur"]
    if action >= A["C_FIRST"]:
        return f"random first player: seat {action - A['C_FIRST']}"
    if action >= A["C_TILE"]:
        cell = d["market"].index(EMPTY)
        return f"draw {COLOURS[action - A['C_TILE']]} for {cell_name(cell)}"
    if action >= A["C_ORDER"]:
        order = order_name(action - A["C_ORDER"])
        context = chance_context(d)
        if context == "personal_setup":
            return f"seat {_setup_personal_target(d)} draws personal order {order}"
        if context == "personal":
            return f"seat {seat} draws personal order {order}"
        return f"reveal open order {order}"
    if action >= A["C_CARD"]:
        target = _setup_card_target(d) if stage == ST_SETUP_CARDS else seat
        return f"seat {target} draws card {card_name(action - A['C_CARD'])}"
    if action >= A["C_BOARD"]:
        return f"deal the {board_name(action - A['C_BOARD'])} board to {_who(_board_target(d))}"
    if action >= A["CHOOSE_BOARD"]:
        return f"choose the {board_name(action - A['CHOOSE_BOARD'])} board"
    if action >= A["FIRST"]:
        return f"seat {action - A['FIRST']} starts"
    if action >= A["KEEP"]:
        a, b = divmod(action - A["KEEP"], 6)
        kept = [COLOURS[c] for c in (a, b) if c < 5]
        return "keep " + (", ".join(kept) if kept else "nothing")
    if action >= A["HDEST_UP"]:
        cell = (action - A["HDEST_UP"]) % 25
        face = "face-down" if action >= A["HDEST_DOWN"] else "face-up"
        return f"helper to {cell_name(cell)} {face}"
    if action >= A["HCARD"]:
        return f"helper card {card_name(action - A['HCARD'])}"
    if action == A["HELPER_FIRST"]:
        return "helper move first"
    if action == A["OWN_FIRST"]:
        return "own move first"
    if action == A["NO_FULFIL"]:
        return "fulfil no open order" if stage == ST_FULFIL_OPEN else "fulfil no personal order"
    if action >= A["FULFIL_PERSONAL"]:
        return f"fulfil personal {order_name(action - A['FULFIL_PERSONAL'])}"
    if action >= A["FULFIL_OPEN"]:
        return f"fulfil open {action - A['FULFIL_OPEN'] + 1}"
    if action == A["NO_DISCARD"]:
        return "discard nothing"
    if action >= A["DISCARD_CARD"]:
        return f"discard card {card_name(action - A['DISCARD_CARD'])}"
    if action == A["NO_DRAW"]:
        return "do not draw"
    if action == A["DRAW2"]:
        return "draw 2 market cards"
    if action >= A["DISCARD_OPEN"]:
        mask = action - A["DISCARD_OPEN"]
        if mask == 0:
            return "keep the open orders"
        return "discard open orders " + ",".join(str(i + 1) for i in range(3) if mask >> i & 1)
    if action == A["SKIP"]:
        return "bonus: skip"
    if action == A["TAKE_DECK"]:
        return "bonus: take the top order of the deck"
    if action >= A["TAKE_OPEN"]:
        return f"bonus: take open order {action - A['TAKE_OPEN'] + 1}"
    if action >= A["BMOVE_HELPER"]:
        return f"bonus: move the helper to {cell_name(action - A['BMOVE_HELPER'])}"
    if action >= A["BMOVE_OWN"]:
        return f"bonus: move my pawn to {cell_name(action - A['BMOVE_OWN'])}"
    if action >= A["SWAPH_TAKE"]:
        space = action - A["SWAPH_TAKE"]
        colour = d["land_colour"][HELPER][space]
        return f"bonus: take {COLOURS[colour] if colour < 5 else '?'} from helper space {space + 1}"
    if action >= A["SWAPP_TAKE"]:
        return f"bonus: take {COLOURS[action - A['SWAPP_TAKE']]} from seat {d['sel_a']}"
    if action >= A["SWAPP_GIVE"]:
        colour = COLOURS[action - A["SWAPP_GIVE"]]
        target = "the helper" if d["players"] == 1 else f"seat {d['sel_a']}"
        return f"bonus: give my {colour} to {target}"
    if action >= A["SWAPP_SEAT"]:
        return f"bonus: swap with seat {action - A['SWAPP_SEAT']}"
    if action >= A["SWAPM_CELL"]:
        cell = action - A["SWAPM_CELL"]
        colour = d["market"][cell]
        return f"bonus: take {COLOURS[colour] if colour < 5 else '?'} from market {cell_name(cell)}"
    if action >= A["SWAPM_GIVE"]:
        return f"bonus: give my {COLOURS[action - A['SWAPM_GIVE']]} to the market"
    if action >= A["PLANT_DOWN"]:
        return f"plant {COLOURS[action - A['PLANT_DOWN']]} face-down"
    if action >= A["PLANT_UP"]:
        return f"plant {COLOURS[action - A['PLANT_UP']]} face-up"
    if action >= A["CARD"]:
        return f"card {card_name(action - A['CARD'])}"
    if action >= A["TEND"]:
        return f"tend {COLOURS[action - A['TEND']]}"
    return f"move {cell_name(action - A['MOVE'])}"


# --- validation ------------------------------------------------------------------------------
STAGE_PARTS = {
    ST_CARD: {PART_PURCHASE},
    ST_PLANT: {PART_PURCHASE},
    ST_BONUS: {PART_PURCHASE, PART_TEND, PART_HELPER},
    ST_TEND_DISCARD: {PART_TEND},
    ST_TEND_DRAW: {PART_TEND},
    ST_TEND_KEEP: {PART_TEND},
    ST_HELPER_DEST: {PART_HELPER},
}


def validate(d: dict[str, Any], players: int) -> None:
    """Every field of a Botanists core, and their consistency, before compiled code reads it."""

    def fail(field: str, message: str) -> None:
        raise InvalidPositionError(field, message)

    n = d["players"]
    if n != players:
        fail("players", f"the state has {n} seats, the header {players}")
    solo = n == 1
    stage = d["stage"]
    if stage >= len(STAGES):
        fail("stage", f"{stage} is not a stage")
    for key in (
        "opt_entry",
        "opt_move",
        "opt_orientation",
        "opt_bonus_sees",
        "opt_fulfil_purchase",
        "opt_choose_boards",
        "bonus_on_helper",
        "solo_first",
        "pend_personal",
        "pend_open",
        "pend_market",
    ):
        if d[key] > 1:
            fail(key, "expected 0 or 1")
    tiles = d["tiles_per_colour"]
    if str(tiles) not in TILE_CHOICES:
        fail("tiles_per_colour", f"expected one of {', '.join(TILE_CHOICES)}")
    if d["part"] > PART_HELPER or d["done_mask"] > 7 or d["planted"] > 3 or d["own_action"] > 3:
        fail("part", "turn bookkeeping out of range")
    if d["done_mask"] & 4 and stage != ST_FULFIL_OPEN:
        fail("done_mask", "bit 4 (personal order fulfilled first) only while the open order may follow (T5)")
    if not solo and (d["done_mask"] & 2 or d["planted"] & 2 or d["solo_first"] or d["bonus_on_helper"]):
        fail("done_mask", "the Helper's bookkeeping is for the solo game only")
    if d["pend_cards"] > 5:
        fail("pend_cards", "at most 5 cards are drawn at once")
    if d["keep_target"] > 5 or (d["keep_target"] and stage != ST_TEND_KEEP):
        fail("keep_target", "the hand size to discard down to (T4), only while discarding")
    if d["bonus_on_helper"] and stage != ST_BONUS:
        fail("bonus_on_helper", "only while a bonus is resolved")
    if d["solo_first"] and stage == ST_SOLO_ORDER:
        fail("solo_first", "chosen at the start of the solo turn")
    for p in range(n):
        done = sum(1 for loc in d["order_loc"] if loc == ORDER_FULFILLED + p)
        if d["fulfilled_total"][p] < done:
            fail(f"fulfilled_total[{p}]", "fewer than the orders fulfilled this round")

    # Boards.
    boards = d["board"]
    for i in range(5):
        active = i < n or (i == HELPER and solo)
        b = boards[i]
        if not active and b != EMPTY:
            fail(f"board[{i}]", "no such seat")
        if active and b != EMPTY and b >= N_BOARDS:
            fail(f"board[{i}]", f"{b} is not a board")
    dealt = [b for i, b in enumerate(boards) if b != EMPTY]
    if len(set(dealt)) != len(dealt):
        fail("board", "a board is used twice")
    in_setup = stage in SETUP_STAGES
    if stage != ST_SETUP_BOARD and len(dealt) != n + (1 if solo else 0):
        fail("board", "every seat (and the Helper) has a board after the deal")
    if stage == ST_SETUP_BOARD:
        order = list(range(n)) + ([HELPER] if solo else [])
        seen_empty = False
        for i in order:
            if boards[i] == EMPTY:
                seen_empty = True
            elif seen_empty:
                fail(f"board[{i}]", "boards are dealt in seat order")

    # Market, pawns.
    for i, v in enumerate(d["market"]):
        if v >= N_COLOURS and v != EMPTY:
            fail(f"market[{i}]", f"{v} is not a colour")
    pawns = d["pawn"]
    for i, v in enumerate(pawns):
        if v >= N_CELLS and v != OFF:
            fail(f"pawn[{i}]", f"{v} is not a cell")
        if (i >= n and i != HELPER) or (i == HELPER and not solo):
            if v != OFF:
                fail(f"pawn[{i}]", "no such pawn")
    if solo and pawns[HELPER] == OFF:
        fail("pawn[4]", "the Helper's pawn is always on the market")
    on_board = [v for v in pawns if v != OFF]
    if len(set(on_board)) != len(on_board):
        fail("pawn", "two pawns on one tile")

    # Land.
    for w in range(5):
        active = w < n or (w == HELPER and solo)
        filled = d["land_filled"][w]
        if filled > N_SPACES or (not active and filled) or (filled and boards[w] == EMPTY):
            fail(f"land_filled[{w}]", "out of range")
        for k in range(N_SPACES):
            colour, down = d["land_colour"][w][k], d["land_down"][w][k]
            if k < filled:
                if colour == EMPTY and down == 0:
                    continue  # a passed turn's space (A10 extension): used up, no tile
                if colour >= N_COLOURS or down > 1:
                    fail(f"land_colour[{w}][{k}]", "a planted space holds a colour, face 0/1")
                # Face up means matching (P5), except on the Helper's land, where the solo red
                # bonus leaves the tile it gives face up whatever its colour (L9/A23d).
                if not down and w != HELPER and colour != COMPONENTS.boards[boards[w]].signs[k]:
                    fail(f"land_down[{w}][{k}]", "only a matching tile can lie face up (P5)")
            elif colour != EMPTY or down:
                fail(f"land_colour[{w}][{k}]", "an unplanted space is empty")

    # Marginal land, scores.
    for p in range(4):
        if p >= n and (any(d["leftover"][p]) or d["score"][p] or d["fulfilled_total"][p]):
            fail(f"leftover[{p}]", "no such seat")
    if sum(d["collected"]) > 4:
        fail("collected", "a purchase collects at most 4 tiles")

    # Conservation: every tile exactly once.
    for colour in range(N_COLOURS):
        total = d["bag"][colour] + d["collected"][colour]
        total += sum(1 for v in d["market"] if v == colour)
        total += sum(d["leftover"][p][colour] for p in range(4))
        total += sum(1 for w in range(5) for k in range(d["land_filled"][w]) if d["land_colour"][w][k] == colour)
        if total != tiles:
            fail(f"bag[{colour}]", f"{total} {COLOURS[colour]} tiles in play, the game has {tiles}")

    # Market cards.
    hands = [0] * 4
    for k, loc in enumerate(d["card_loc"]):
        if loc >= CARD_HAND + n:
            fail(f"card_loc[{k}]", f"{loc} is not a place")
        if loc >= CARD_HAND:
            hands[loc - CARD_HAND] += 1
        if d["card_held"][k] and loc < CARD_HAND:
            fail(f"card_held[{k}]", "only a card in a hand is held since the last reshuffle")
    limit = hand_size_rule(n)
    for p in range(n):
        mine = stage in TURN_STAGES and p == d["cur"]
        if hands[p] > (limit + 2 if mine else limit):
            fail("card_loc", f"seat {p} holds {hands[p]} cards")

    # Orders.
    opens = d["open_orders"]
    open_ids = [o for o in opens if o != EMPTY]
    for i, o in enumerate(opens):
        if o != EMPTY and (o >= N_ORDERS or d["order_loc"][o] != ORDER_OPEN):
            fail(f"open_orders[{i}]", "an open slot holds an open order or is empty")
    if len(set(open_ids)) != len(open_ids):
        fail("open_orders", "an order is open twice")
    for o, loc in enumerate(d["order_loc"]):
        valid = loc <= ORDER_OPEN or ORDER_PERSONAL <= loc < ORDER_PERSONAL + n or ORDER_FULFILLED <= loc < ORDER_FULFILLED + n
        if not valid:
            fail(f"order_loc[{o}]", f"{loc} is not a place")
        if loc == ORDER_OPEN and o not in open_ids:
            fail(f"order_loc[{o}]", "marked open but in no open slot")

    # Round and turn structure.
    rnd, turns, first, cur = d["round"], d["turns_done"], d["first_player"], d["cur"]
    if first >= n or cur >= n or d["chooser"] >= n:
        fail("first_player", "not a seat")
    if stage == ST_OVER:
        if rnd != 3 or turns != 5 * n:
            fail("round", "the game ends after the third scoring phase")
    elif rnd > 2:
        fail("round", "three rounds")
    if in_setup:
        if rnd or turns or first or cur:
            fail("round", "nothing is played during the setup")
        if any(d["land_filled"]) or any(any(x) for x in d["leftover"]) or any(d["score"]) or any(d["fulfilled_total"]):
            fail("land_filled", "nothing is played during the setup")
        if any(pawns[p] != OFF for p in range(n)):
            fail("pawn", "pawns start beside the market")
        if solo and pawns[HELPER] != 12:
            fail("pawn[4]", "the Helper starts on the centre tile (L2)")
        if any(loc == CARD_DISCARD for loc in d["card_loc"]) or any(
            loc == ORDER_DISCARD or loc >= ORDER_FULFILLED for loc in d["order_loc"]
        ):
            fail("card_loc", "nothing is discarded during the setup")
        if d["pend_personal"] or d["pend_open"] or d["pend_cards"] or d["pend_market"]:
            fail("pend_cards", "setup draws are stages, not pending refills")
        _validate_setup_progress(d, stage, hands)
    if stage in TURN_STAGES:
        if turns >= 5 * n:
            fail("turns_done", "the round is over")
        if cur != (first + turns) % n:
            fail("cur", "turns go clockwise from the round's first player (G1)")
    if stage in (ST_KEEP, ST_CHOOSE_FIRST):
        if turns != 5 * n or rnd > 1:
            fail("turns_done", "scoring-phase choices follow rounds 1 and 2")
        if stage == ST_CHOOSE_FIRST and (solo or d["chooser"] != sc7_chooser(d)):
            fail("chooser", "the player furthest behind chooses (SC7/A19)")
        if d["keep_index"] > n:
            fail("keep_index", "out of range")
    elif d["keep_index"] or d["chooser"]:
        fail("keep_index", "only during a scoring phase")

    # Land progress: one space per turn (G1).
    if not in_setup:
        for w in range(n + (1 if solo else 0)):
            seat = 0 if w == HELPER else w
            if stage in TURN_STAGES:
                position = (seat - first) % n
                completed = 5 * rnd + turns // n + (1 if position < turns % n else 0)
                bit = 2 if w == HELPER else 1
                if seat == cur and d["planted"] & bit:
                    completed += 1
            else:
                completed = 5 * min(rnd + 1, 3) if stage != ST_OVER else 15
            if d["land_filled"][w] > completed:
                fail(f"land_filled[{w}]", f"{d['land_filled'][w]} spaces planted after {completed} turns")

    # The turn in progress.
    part = d["part"]
    if stage in STAGE_PARTS:
        if part not in STAGE_PARTS[stage]:
            fail("part", f"stage {STAGES[stage]} is not played in part {PARTS[part]}")
    elif part != PART_NONE:
        fail("part", f"no part is played in stage {STAGES[stage]}")
    if stage in (ST_ACTION, ST_CARD, ST_PLANT) and d["planted"] & 1:
        fail("planted", "the own tile of this turn is already planted")
    if stage in (ST_HELPER_CARD, ST_HELPER_DEST) and d["planted"] & 2:
        fail("planted", "the Helper's tile of this turn is already planted")
    if stage in (ST_HELPER_CARD, ST_HELPER_DEST) and (not solo or d["done_mask"] & 2):
        fail("done_mask", "the Helper plays once per solo turn")
    if stage in (ST_ACTION, ST_CARD, ST_PLANT, ST_TEND_DISCARD, ST_TEND_DRAW, ST_TEND_KEEP) and d["done_mask"] & 1:
        fail("done_mask", "the own character plays once per turn")
    if stage == ST_CARD and pawns[cur] == OFF:
        fail("pawn", "the pawn has moved before a card is played")
    collecting = stage in (ST_PLANT, ST_BONUS) and part == PART_PURCHASE
    if sum(d["collected"]) and not collecting:
        fail("collected", "collected tiles wait only while planting or resolving the bonus")
    if stage == ST_PLANT and not sum(d["collected"]):
        fail("collected", "a purchase collects at least one tile (P4)")
    if stage == ST_BONUS:
        if d["bonus"] > BONUS_SWAP_MARKET:
            fail("bonus", "a bonus with choices (+3 is applied at once)")
    elif d["bonus"] != NO_BONUS:
        fail("bonus", "only while a bonus is resolved")
    sel_a, sel_b = d["sel_a"], d["sel_b"]
    beneficiary = 0 if solo else cur
    if stage == ST_BONUS and d["bonus"] in (BONUS_SWAP_MARKET, BONUS_SWAP_PLAYER):
        if sel_b != EMPTY and (sel_b >= N_COLOURS or d["leftover"][beneficiary][sel_b] == 0):
            fail("sel_b", "the colour given must be one of the player's leftovers")
        if d["bonus"] == BONUS_SWAP_PLAYER and not solo:
            if sel_a != EMPTY and (sel_a >= n or sel_a == cur):
                fail("sel_a", "the other player of a red swap")
            if sel_b != EMPTY and sel_a == EMPTY:
                fail("sel_b", "the other player is chosen first")
        elif sel_a != EMPTY:
            fail("sel_a", "unused by this bonus")
    elif stage == ST_HELPER_DEST:
        if sel_a >= N_CARDS or d["card_loc"][sel_a] != CARD_DISCARD or sel_b != EMPTY:
            fail("sel_a", "the (discarded) card moving the Helper")
    elif sel_a != EMPTY or sel_b != EMPTY:
        fail("sel_a", f"no sub-choice is pending in stage {STAGES[stage]}")
    if stage == ST_SOLO_ORDER and (d["done_mask"] or d["planted"] or d["own_action"]):
        fail("done_mask", "a solo turn starts with nothing played")
    if d["own_action"] and not d["planted"] & 1 and stage not in (ST_CARD, ST_PLANT):
        fail("own_action", "a purchase or tend plants a tile")


def _validate_setup_progress(d: Mapping[str, Any], stage: int, hands: list[int]) -> None:
    n = d["players"]
    limit = hand_size_rule(n)
    personal = [sum(1 for loc in d["order_loc"] if loc == ORDER_PERSONAL + p) for p in range(n)]
    opens = d["open_orders"]
    market_filled = [v != EMPTY for v in d["market"]]
    if stage < ST_SETUP_CARDS and any(hands):
        raise InvalidPositionError("card_loc", "cards are dealt after the boards")
    if stage == ST_SETUP_CARDS:
        short = False
        for p in range(n):
            if hands[p] < limit:
                if short and hands[p]:
                    raise InvalidPositionError("card_loc", "cards are dealt seat by seat")
                short = True
            elif short and hands[p]:
                raise InvalidPositionError("card_loc", "cards are dealt seat by seat")
    if stage > ST_SETUP_CARDS and any(h != limit for h in hands[:n]):
        raise InvalidPositionError("card_loc", f"every hand holds {limit} cards after the deal")
    if stage < ST_SETUP_OPEN and any(o != EMPTY for o in opens):
        raise InvalidPositionError("open_orders", "open orders are revealed after the cards")
    if stage == ST_SETUP_OPEN:
        for i in range(1, 3):
            if opens[i] != EMPTY and opens[i - 1] == EMPTY:
                raise InvalidPositionError("open_orders", "revealed in slot order")
    if stage > ST_SETUP_OPEN and EMPTY in opens:
        raise InvalidPositionError("open_orders", "three open orders after the reveal")
    if stage < ST_SETUP_PERSONAL and any(personal):
        raise InvalidPositionError("order_loc", "personal orders are dealt after the open orders")
    need = [1 + COMPONENTS.boards[d["board"][p]].extra_personal_orders if d["board"][p] != EMPTY else 1 for p in range(n)]
    if stage == ST_SETUP_PERSONAL:
        short = False
        for p in range(n):
            if personal[p] > need[p] or (short and personal[p]):
                raise InvalidPositionError("order_loc", "personal orders are dealt seat by seat")
            if personal[p] < need[p]:
                short = True
    if stage > ST_SETUP_PERSONAL and personal != need:
        raise InvalidPositionError("order_loc", "every seat holds its personal orders after the deal (S5)")
    if stage < ST_SETUP_MARKET and any(market_filled):
        raise InvalidPositionError("market", "the market is filled after the orders")
    if stage == ST_SETUP_MARKET:
        count = sum(market_filled)
        if market_filled != [True] * count + [False] * (25 - count):
            raise InvalidPositionError("market", "filled in row-major order (S6)")
    if stage > ST_SETUP_MARKET and not all(market_filled):
        raise InvalidPositionError("market", "full after the setup")


def sc7_chooser(d: Mapping[str, Any]) -> int:
    """SC7/A19 (mirrors the kernel): the player furthest behind chooses the next first player;
    among tied last players the one furthest clockwise from the leader (the leader being the
    earliest in turn order among the tied first); everyone tied: the round's last player."""
    n: int = d["players"]
    first: int = d["first_player"]
    order = [(first + t) % n for t in range(n)]
    scores: list[int] = d["score"]
    if all(scores[p] == scores[first] for p in order):
        return order[-1]
    leader = max(order, key=lambda p: (scores[p], -order.index(p)))
    low = min(scores[p] for p in order)
    return max((p for p in range(n) if scores[p] == low), key=lambda p: ((p - leader) % n, -p))


# --- rendering -------------------------------------------------------------------------------
SIDES = ("bottom", "left", "top", "right")
BONUS_TEXT = {
    BONUS_SWAP_PLAYER: "swap a leftover with another player's",
    BONUS_MOVE: "move a pawn to any tile",
    BONUS_TAKE_ORDER: "take an order as a personal order",
    BONUS_SWAP_MARKET: "swap a leftover with a market tile",
    BONUS_PLUS3: "+3 points",
}


def board_cell(orient: int, row: int, column: int) -> int:
    """The market cell drawn at (row, column) of the picture seen from a side (A15 orientation):
    row 0 is the far side, column 0 the viewer's left."""
    r, c = ((row, column), (column, 4 - row), (4 - row, 4 - column), (4 - column, row))[orient]
    return r * 5 + c


def card_picture(card: int) -> list[str]:
    """The card's shape as printed (rows away from the player at the top): '#' a box, '@' the
    highlighted box (the pawn's tile), '.' no box."""
    cells = COMPONENTS.shapes[card // 4].cells
    high = cells[card % 4]
    rows = max(r for r, _ in cells) + 1
    cols = max(c for _, c in cells) + 1
    return [" ".join("@" if (r, c) == high else "#" if (r, c) in cells else "." for c in range(cols)) for r in range(rows)]


def cards_side_by_side(cards: list[int], indent: str = "    ") -> list[str]:
    """Card names with their pictures beneath, side by side."""
    blocks = [[card_name(k)] + card_picture(k) for k in cards]
    width = [max(len(line) for line in block) + 3 for block in blocks]
    height = max(len(block) for block in blocks)
    return [
        indent + "".join((block[i] if i < len(block) else "").ljust(w) for block, w in zip(blocks, width)).rstrip()
        for i in range(height)
    ]


def count_text(counts: list[int]) -> str:
    return ", ".join(f"{counts[c]} {COLOURS[c]}" for c in range(N_COLOURS) if counts[c]) or "none"


def pending_text(d: Mapping[str, Any], mover: int) -> str:
    """What is being decided now (or which chance event comes), in the rulebook's words."""
    stage, cur, n = d["stage"], d["cur"], d["players"]
    seat = f"seat {cur}"
    if stage == ST_OVER:
        return "the game is over (final scores above)"
    if mover == -1:
        if stage in SETUP_STAGES:
            return f"chance: the setup ({STAGES[stage].replace('setup_', '')})"
        events = [
            text
            for flag, text in (
                ("pend_personal", f"{seat} draws a personal order"),
                ("pend_open", "the open orders are refilled"),
                ("pend_cards", f"{seat} draws market cards"),
                ("pend_market", "the market is refilled"),
            )
            if d[flag]
        ]
        return "chance: " + ("; ".join(events) or "the next draw")
    if stage == ST_SETUP_BOARD:
        return f"seat {mover} chooses a board (S2)"
    if stage == ST_SOLO_ORDER:
        return "choose who plays first: your own character or the Helper (L3)"
    if stage == ST_ACTION:
        where = "enter the market" if d["pawn"][cur] == OFF else f"move from {cell_name(d['pawn'][cur])}"
        return f"{seat}: purchase ({where}, 1-2 steps, P1) or tend a leftover (T2)"
    if stage == ST_CARD:
        return f"{seat}: play a market card with its highlighted box on {cell_name(d['pawn'][cur])} (P3)"
    if stage in (ST_PLANT, ST_HELPER_DEST):
        who = HELPER if stage == ST_HELPER_DEST else cur
        k = d["land_filled"][who]
        sign = COMPONENTS.boards[d["board"][who]].signs[k] if k < N_SPACES else None
        space = f"space {k + 1} (sign {COLOURS[sign]})" if sign is not None else "the land"
        bonus = (
            f"; face down triggers the {COLOURS[sign]} bonus ({BONUS_TEXT[COMPONENTS.bonus_by_colour[sign]]})"
            if sign is not None
            else ""
        )
        if stage == ST_HELPER_DEST:
            return (
                f"the Helper, moved by card {card_name(d['sel_a'])}, goes to one of the card's other boxes and "
                f"plants that tile on its {space}{bonus} (L5)"
            )
        return f"{seat}: plant one collected tile on {space}: face up only if it matches{bonus} (P5)"
    if stage == ST_BONUS:
        kind = d["bonus"]
        text = f"{seat} resolves the bonus: {BONUS_TEXT[kind]}"
        if d["bonus_on_helper"]:
            text += " (triggered on the Helper's board)"
        if kind == BONUS_SWAP_PLAYER and n > 1 and d["sel_a"] != EMPTY:
            text += f"; swapping with seat {d['sel_a']}"
        if kind in (BONUS_SWAP_PLAYER, BONUS_SWAP_MARKET) and d["sel_b"] != EMPTY:
            text += f"; giving {COLOURS[d['sel_b']]}"
        return text + " (optional, now or never: BA1)"
    if stage == ST_TEND_DISCARD:
        return f"{seat}: discard any open orders, as many are redrawn (T3)"
    if stage == ST_TEND_DRAW:
        return f"{seat}: draw 2 market cards, then discard back down (T4), or not"
    if stage == ST_TEND_KEEP:
        held = sum(1 for loc in d["card_loc"] if loc == CARD_HAND + cur)
        return f"{seat}: discard market cards down to {d['keep_target']} ({held - d['keep_target']} to go, T4)"
    if stage == ST_FULFIL_OPEN:
        if d["done_mask"] & 4:
            return f"{seat}: the personal order is fulfilled; fulfil one open order or none (T5)"
        return f"{seat}: fulfil at most one open order and one personal order, either first (P8/T5)"
    if stage == ST_FULFIL_PERSONAL:
        return f"{seat}: fulfil one personal order or none (P8/T5)"
    if stage == ST_HELPER_CARD:
        return "choose the market card that moves the Helper (L5)"
    if stage == ST_SOLO_DISCARD:
        return "discard one market card or none, then draw up to 3 (L8)"
    if stage == ST_KEEP:
        return f"seat {mover} keeps up to 2 leftovers, the rest wither into the bag (SC5)"
    if stage == ST_CHOOSE_FIRST:
        return f"seat {mover}, furthest behind, chooses the next round's first player (SC7)"
    return STAGES[stage]


def render(d: Mapping[str, Any], mover: int, seat: int | None = None) -> str:
    """The picture `seat` sees (None: the public one): the market from that seat's side of the
    table (A15: it reads market cards from there), only that seat's hand, drawn as cards."""
    n = d["players"]
    solo = n == 1
    lines = []
    who = {-1: "chance", -4: "game over"}.get(mover, f"seat {mover}")
    stage = STAGES[d["stage"]]
    lines.append(
        f"Botanists{' (solo, the Little Helper)' if solo else ''} - round {min(d['round'] + 1, 3)}/3, "
        f"turn of seat {d['cur']}, stage {stage}, to decide: {who}"
    )
    lines.append("Now: " + pending_text(d, mover))
    orient = orientation(d, seat) if seat is not None else 0
    pawn_at = {cell: ("H" if i == HELPER else str(i)) for i, cell in enumerate(d["pawn"]) if cell != OFF}
    viewer = f"seat {seat}" if seat is not None else "seat 0"
    lines.append(
        f"Market seen from {viewer}'s side ({SIDES[orient]} edge; cells keep their names, column letter + "
        "row number; a pawn is shown after its tile):"
    )
    by_rows = orient in (0, 2)  # picture rows are board rows (else board columns)

    def label(cell: int, of_row: bool) -> str:
        return str(cell // 5 + 1) if of_row == by_rows else "abcde"[cell % 5]

    lines.append("      " + "   ".join(label(board_cell(orient, 0, c), False) for c in range(5)))
    for r in range(5):
        row = []
        for c in range(5):
            cell = board_cell(orient, r, c)
            tile = LETTERS[d["market"][cell]] if d["market"][cell] < 5 else "."
            row.append(f"{tile}{pawn_at.get(cell, ' ')}")
        lines.append(f"  {label(board_cell(orient, r, 0), True)}   " + "  ".join(row))
    lines.append("Bag: " + ", ".join(f"{COLOURS[c]} {d['bag'][c]}" for c in range(5)))
    opens = [f"{i + 1}:{order_name(o)}" if o != EMPTY else f"{i + 1}:-" for i, o in enumerate(d["open_orders"])]
    lines.append("Open orders: " + "  ".join(opens))
    if sum(d["collected"]):
        # P5-P7: this purchase's tiles wait here until one is planted and the bonus resolved.
        lines.append(
            f"Collected this purchase (seat {d['cur']}): {count_text(d['collected'])} "
            "- one is planted, the rest go to the marginal land"
        )
    hands = [sum(1 for loc in d["card_loc"] if loc == CARD_HAND + p) for p in range(n)]
    held = [sum(1 for k in range(N_CARDS) if d["card_held"][k] and d["card_loc"][k] == CARD_HAND + p) for p in range(n)]
    for w in list(range(n)) + ([HELPER] if solo else []):
        if d["board"][w] == EMPTY:
            continue
        board = COMPONENTS.boards[d["board"][w]]
        name = "Helper" if w == HELPER else f"Seat {w}"
        land = []
        for k in range(N_SPACES):
            sign = LETTERS[board.signs[k]].lower()
            if k < d["land_filled"][w] and d["land_colour"][w][k] == EMPTY:
                land.append(f"{sign}--")  # a passed turn's space
            elif k < d["land_filled"][w]:
                tile = LETTERS[d["land_colour"][w][k]]
                land.append(f"{sign}{tile}{'v' if d['land_down'][w][k] else '^'}")
            else:
                land.append(f"{sign}..")
            if k % 5 == 4 and k < 14:
                land.append("|")
        lines.append(f"{name} ({board.name} board): " + " ".join(land))
        if w != HELPER:
            left = count_text(d["leftover"][w])
            personal = [order_name(o) for o, loc in enumerate(d["order_loc"]) if loc == ORDER_PERSONAL + w]
            done = [order_name(o) for o, loc in enumerate(d["order_loc"]) if loc == ORDER_FULFILLED + w]
            # Only the viewing seat's own hand is listed (BT hidden information): the others'
            # are counts, as in view(), with what everyone knows since a reshuffle.
            hand = [k for k in range(N_CARDS) if d["card_loc"][k] == CARD_HAND + w]
            shown = f": {' '.join(card_name(k) for k in hand) or '-'}" if w == seat else ""
            known = f", {held[w]} held since the reshuffle" if held[w] and w != seat else ""
            lines.append(
                f"    score {d['score'][w]}, hand ({hands[w]}{known}){shown}, leftovers: {left}; "
                f"personal orders: {' '.join(personal) or '-'}; fulfilled this round: {' '.join(done) or '-'}"
            )
            if w == seat and hand:
                lines.extend(cards_side_by_side(hand))
    if d["stage"] == ST_HELPER_DEST and d["sel_a"] < N_CARDS:
        lines.append("Card moving the Helper:")
        lines.extend(cards_side_by_side([d["sel_a"]]))
    lines.append(
        "Key: tiles R Y G B P; pawns 0-3 and H (Helper); land spaces as sign + tile + ^ face up / v face down; "
        "cards as printed, seen from your side: # a box, @ the highlighted box (on your pawn's tile)."
    )
    return "\n".join(lines)
