"""War of the Posies' Python face: options, notation, validation of positions, views and
rendering.

The rules themselves are in ``kernel.pyx``; this module never changes a state, it only reads
the serialized core (``kernel.core_to_dict``) and builds cores (``kernel.dict_to_core``).
"""

from __future__ import annotations

import copy
from itertools import compress
from operator import add
from pathlib import Path
from typing import Any, Mapping, Sequence

from hortus.games.base import Game, InvalidPositionError, RuleOption, State
from hortus.games.war_of_the_posies import components as components_module
from hortus.games.war_of_the_posies import kernel

COMPONENTS = components_module.load()
components_module.install(COMPONENTS)
_INSTALLED = [COMPONENTS]  # the tables in the kernel now (a designer's file may replace them)


def _use(components: components_module.Components) -> None:
    """Install `components` in the kernel unless they are there already: only the balance
    lab's changed games (``with_components``) ever install others, one game at a time."""
    if _INSTALLED[0] is not components:
        components_module.install(components)
        _INSTALLED[0] = components


def _default_supply(components: components_module.Components) -> tuple[int, ...]:
    return tuple(0 if c.category == components_module.CATEGORY_STARTING else c.copies for c in components.cards)


# Kernel constants (kernel.pxd / kernel.pyx), repeated for the Python side.
EMPTY = 255
LIMITS: dict[str, int] = kernel.LIMITS
ACT: dict[str, int] = kernel.ACTION_BASES
MAX_KINDS = LIMITS["max_kinds"]
MAX_GF = LIMITS["max_gf"]
MAX_SLOTS = LIMITS["max_slots"]
HAND_SIZE = LIMITS["hand_size"]
MARKET_SIZE = LIMITS["market_size"]
GF_ROW_SIZE = LIMITS["gf_row_size"]
ROUND_LIMIT = LIMITS["round_limit"]
EFFECT_WC = LIMITS["effect_wc"]
N_EFFECTS = LIMITS["n_effects"]
STAGES = ("setup", "play", "over")
STAGE_SETUP, STAGE_PLAY, STAGE_OVER = range(3)
GF_DECK, GF_ROW, GF_OWNED = 0, 1, 2
GF_COMPLETE, GF_WC_PENDING = 1, 2
TIEBREAK_COUNTS = ("all_planted", "locked_only")
CHOICE_OPS = ("COMPOST_HAND", "COMPOST_ANY", "UPROOT")

CARDS = COMPONENTS.cards
GFS = COMPONENTS.garden_features
N_KINDS = len(CARDS)
N_GF = len(GFS)
KIND_BY_NAME = {card.name: k for k, card in enumerate(CARDS)}
STARTING_DECK = [card.copies if card.category == components_module.CATEGORY_STARTING else 0 for card in CARDS]
STARTING_DECK_SIZE = sum(STARTING_DECK)
PURE = [all(op in ("COIN", "BUY", "PLANT") for op, _ in card.play) for card in CARDS]
# Masks of the kinds that may NOT lie in a pile (for itertools.compress in the validator).
NOT_MARKET = [not (k < N_KINDS and CARDS[k].category == components_module.CATEGORY_MARKET) for k in range(MAX_KINDS)]
NOT_BASIC = [not (k < N_KINDS and CARDS[k].category == components_module.CATEGORY_BASIC) for k in range(MAX_KINDS)]
NOT_A_KIND = [k >= N_KINDS for k in range(MAX_KINDS)]
UNUSED_GF_LOC = [EMPTY] * (MAX_GF - N_GF)


def effect_of(effect_id: int) -> components_module.Effect:
    """The card text behind an effect id: play(kind) = 2k, plant(kind) = 2k+1, WC(gf) = 128+g."""
    if effect_id >= EFFECT_WC:
        return GFS[effect_id - EFFECT_WC].when_completed
    card = CARDS[effect_id // 2]
    return card.plant if effect_id % 2 else card.play


def effect_text(effect: components_module.Effect) -> str:
    """'COIN 2; GAIN_BASIC_HAND', as written in components.toml."""
    return "; ".join(op if op in components_module.OPS_WITHOUT_NUMBER else f"{op} {arg}" for op, arg in effect)


_WORDS = {
    "COIN": ("+{n} coin", "+{n} coins"),
    "DRAW": ("draw {n} card", "draw {n} cards"),
    "BUY": ("+{n} purchase", "+{n} purchases"),
    "PLANT": ("+{n} planting", "+{n} plantings"),
    "COMPOST_HAND": ("compost up to {n} card from your hand", "compost up to {n} cards from your hand"),
    "COMPOST_ANY": (
        "compost up to {n} card from your hand or discard pile",
        "compost up to {n} cards from your hand or discard pile",
    ),
    "GAIN_BASIC_HAND": ("take the top Basic Flower into your hand", ""),
    "UPROOT": (
        "uproot up to {n} unlocked Flower from any incomplete Garden Feature (to the Compost)",
        "uproot up to {n} unlocked Flowers from any incomplete Garden Feature (to the Compost)",
    ),
}


def effect_words(effect: components_module.Effect) -> str:
    """A card text in words for people: '+2 coins, +1 purchase'; 'no ability' when empty."""
    parts = [_WORDS[op][0 if arg == 1 else 1].format(n=arg) for op, arg in effect]
    return ", ".join(parts) if parts else "no ability"


def card_words(kind: int) -> str:
    """'purple Flower, 2 points, cost 3; play: +2 coins; plant: +1 coin' (what the physical
    card shows: colour, points, cost and abilities)."""
    card = CARDS[kind]
    if card.is_flower:
        what = f"{'Poisonous ' if card.is_poisonous else ''}{COMPONENTS.symbols[card.symbol or 0]} Flower"
    elif card.category == components_module.CATEGORY_STARTING:
        what = "starting card"
    else:
        what = "Expedition"
    points = f"{card.points} point" + ("" if abs(card.points) == 1 else "s")
    cost = "not for sale" if card.category == components_module.CATEGORY_STARTING else f"cost {card.cost}"
    text = f"{what}, {points}, {cost}; play: {effect_words(card.play)}"
    if card.is_flower:
        text += f"; plant: {effect_words(card.plant)}"
    return text


def effect_name(effect_id: int) -> str:
    if effect_id >= EFFECT_WC:
        return f"{gf_label(effect_id - EFFECT_WC)} when completed"
    return f"{CARDS[effect_id // 2].name} {'plant' if effect_id % 2 else 'play'}"


def valid_effect_id(effect_id: int) -> bool:
    if effect_id >= EFFECT_WC:
        return effect_id - EFFECT_WC < N_GF and bool(GFS[effect_id - EFFECT_WC].when_completed)
    k = effect_id // 2
    return k < N_KINDS and bool(effect_of(effect_id))


def gf_label(g: int) -> str:
    """'St. George's Fountain #1': the name and the card's number (its id + 1)."""
    return f"{GFS[g].name} #{g + 1}"


def total_copies(kind: int, players: int) -> int:
    card = CARDS[kind]
    return card.copies * players if card.category == components_module.CATEGORY_STARTING else card.copies


TOTALS = {players: [total_copies(k, players) if k < N_KINDS else 0 for k in range(MAX_KINDS)] for players in range(2, 5)}


def _score_bounds() -> tuple[float, float]:
    """Any seat's points lie within these bounds: at worst every Poisonous Flower is locked in
    its GFs; at best it owns every positive Flower locked, every Expedition and every GF."""
    low = sum(min(c.points, 0) * c.copies for c in CARDS if c.is_flower)
    high = sum(max(c.points, 0) * total_copies(k, 4) for k, c in enumerate(CARDS))
    high += sum(g.reputation for g in GFS)
    return float(low), float(high)


class WarOfThePosiesGame(Game):
    name = "war_of_the_posies"
    game_id = 4
    min_players = 2
    max_players = 4
    variants = ()
    score_range = _score_bounds()
    options = {
        "tiebreak_count": RuleOption(
            "tiebreak_count",
            "all_planted",
            TIEBREAK_COUNTS,
            "A9 'most planted Flower cards' tie-break: all_planted = every Flower under the "
            "player's own Garden Features, locked or not, whoever planted it; locked_only = only "
            "the Flowers locked under completed Garden Features.",
        ),
    }

    def kernel_capsule(self) -> object:
        return kernel.kernel_capsule()

    components: components_module.Components = COMPONENTS
    """The card and Garden Feature tables of new games (``with_components`` changes them)."""
    supply: tuple[int, ...] = _default_supply(COMPONENTS)
    """Copies of each card kind in the Basic and Market decks of a new game."""

    def initial_core(self, players: int, variant: str | None, options: dict[str, str]) -> bytes:
        _use(self.components)
        cards = self.components.cards
        starting = [c.copies if c.category == components_module.CATEGORY_STARTING else 0 for c in cards]
        zeros = [0] * MAX_KINDS
        d: dict[str, Any] = {
            "players": players,
            "stage": STAGE_SETUP,
            "first_player": EMPTY,
            "turn_player": 0,
            "round": 0,
            "end_trigger": EMPTY,
            "final_turns_left": 0,
            "tiebreak_locked_only": TIEBREAK_COUNTS.index(options["tiebreak_count"]),
            "coins": 0,
            "buys": 1,
            "plants": 1,
            "last_pure": 0,
            "draw_seat": 0,
            "draws_pending": HAND_SIZE,
            "turn_ending": 0,
            "basic_top": EMPTY,
            "depth": 0,
            "frame_effect": [0, 0, 0],
            "frame_pc": [0, 0, 0],
            "frame_left": [0, 0, 0],
            "hand": [list(zeros) for _ in range(4)],
            # WS2: every seat's starting deck, shuffled: a multiset until drawn.
            "draw": [_pad(starting) if p < players else list(zeros) for p in range(4)],
            "discard": [list(zeros) for _ in range(4)],
            "play": list(zeros),
            "market_row": list(zeros),
            "market_deck": _pad(
                [n if c.category == components_module.CATEGORY_MARKET else 0 for c, n in zip(cards, self.supply)]
            ),
            "basic_pile": _pad([n if c.category == components_module.CATEGORY_BASIC else 0 for c, n in zip(cards, self.supply)]),
            "compost": list(zeros),
            "gf_loc": [GF_DECK if g < len(self.components.garden_features) else EMPTY for g in range(MAX_GF)],
            "gf_slot": [[0] * MAX_SLOTS for _ in range(MAX_GF)],
            "gf_flags": [0] * MAX_GF,
        }
        return bytes(kernel.dict_to_core(d))

    # --- the balance lab's questions ------------------------------------------------------
    def round_number(self, state: State) -> int | None:
        """The round, 1-based (0 during the setup)."""
        return int(kernel.core_to_dict(state.kernel_state.core())["round"])

    def end_reason(self, state: State) -> str | None:
        """WZ1: someone completed END_REPUTATION and everyone else had a final turn (the
        trigger), or nobody did by round ROUND_LIMIT (the engine's safety end)."""
        if not state.is_terminal():
            return None
        return "safety" if kernel.core_to_dict(state.kernel_state.core())["end_trigger"] == EMPTY else "trigger"

    def card_names(self) -> tuple[str, ...]:
        """The Basic and Market cards (the starting decks are not part of the supply)."""
        return tuple(c.name for c in self.components.cards if c.category != components_module.CATEGORY_STARTING)

    def card_of_action(self, state: State, action: int) -> str | None:
        """A Basic or Market card the mover plays, plants or buys."""
        kind_of, kind, _, _ = kernel.action_info(state.kernel_state.core(), action)
        if kind_of not in ("play", "plant", "buy"):
            return None
        card = self.components.cards[kind]
        return None if card.category == components_module.CATEGORY_STARTING else card.name

    def with_components(
        self, path: Path | None = None, *, remove: Sequence[str] = (), swap: Mapping[str, str] | None = None
    ) -> "WarOfThePosiesGame":
        """New games over a designer's components file and/or a changed supply (see
        ``Game.with_components``). Only new games, their moves, scores and card names follow
        the change; views, notation and position checks keep the shipped components."""
        components, supply = self.components, list(self.supply)
        if path is not None:
            try:
                components = components_module.load(Path(path))
            except OSError as exc:
                raise components_module.ComponentDataError(f"{path}: {exc.strerror or exc}") from exc
            except components_module.ComponentDataError as exc:
                message = str(exc)
                raise components_module.ComponentDataError(
                    message if message.startswith(f"{path}:") else f"{path}: {message}"
                ) from exc
            supply = list(_default_supply(components))
        names = [c.name for c in components.cards]
        supplied = set(c.name for c in components.cards if c.category != components_module.CATEGORY_STARTING)

        def kind(name: str, what: str) -> int:
            if name not in supplied:
                raise ValueError(f"{what}: {name!r} is not a card of the supply; its cards: {', '.join(sorted(supplied))}")
            return names.index(name)

        for name in remove:
            supply[kind(name, "ablate")] = 0
        for a, b in (swap or {}).items():
            ka, kb = kind(a, "swap"), kind(b, "swap")
            if ka != kb:
                supply[kb] += supply[ka]
                supply[ka] = 0
        if any(n > components_module.MAX_CARDS_PER_SEAT for n in supply):
            raise ValueError("swap: a pile would hold more cards than the state layout counts")
        changed = copy.copy(self)
        changed.components = components
        changed.supply = tuple(supply)
        return changed

    # --- notation ------------------------------------------------------------------------
    def action_to_string(self, state: State, action: int) -> str:
        return describe_action(state.kernel_state.core(), action)

    # --- validation ------------------------------------------------------------------------
    def validate_core(self, core: bytes, players: int, variant: int) -> None:
        if len(core) != kernel.core_size():
            raise InvalidPositionError("position.length", "wrong state size")
        validate(kernel.core_to_dict(core), players)
        # Every field is in range now, so the kernel may look: a stored position is at rest.
        if not kernel.at_rest(core):
            raise InvalidPositionError(
                "stage", "a forced step is still pending (positions are stored at a decision, a chance node or the end)"
            )

    # --- views -----------------------------------------------------------------------------
    def view(self, state: State, seat: int) -> dict[str, Any]:
        """What `seat` sees: everything but the other seats' hands (given as counts, with the
        multiset of their hand + draw pile, which public history reveals) and the order of
        any face-down pile (never stored)."""
        d = kernel.core_to_dict(state.kernel_state.core())
        players = d["players"]
        seats = []
        for p in range(players):
            entry: dict[str, Any] = {
                "hand_count": d["hand_count"][p],
                "draw_count": d["draw_count"][p],
                "discard": _named(d["discard"][p]),
                # Public: the old draw pile went whole into this hand before a reshuffle.
                "known_in_hand": _named(_known_counts(d["known_hand"][p])),
                "garden": [_gf_view(d, g) for g in range(N_GF) if d["gf_loc"][g] == GF_OWNED + p],
            }
            if p == seat:
                entry["hand"] = _named(d["hand"][p])
                entry["draw"] = _named(d["draw"][p])
            else:
                entry["unseen"] = _named([a + b for a, b in zip(d["hand"][p], d["draw"][p])])
            seats.append(entry)
        return {
            "game": self.name,
            "seat": seat,
            "players": players,
            "stage": STAGES[d["stage"]],
            "round": d["round"],
            "first_player": _seat_or_none(d["first_player"]),
            "turn_player": d["turn_player"],
            "end_trigger": _seat_or_none(d["end_trigger"]),
            "final_turns_left": d["final_turns_left"],
            "options": {"tiebreak_count": TIEBREAK_COUNTS[d["tiebreak_locked_only"]]},
            "coins": d["coins"],
            "buys": d["buys"],
            "plants": d["plants"],
            # last_pure orders coin-only plays for the playout policy only; it is not
            # part of what a seat sees, and determinize clears it, so views never carry it
            # (a view given back may still name one: it is validated and then cleared).
            "last_coin_only_play": None,
            "draw_seat": d["draw_seat"],
            "draws_pending": d["draws_pending"],
            "turn_ending": bool(d["turn_ending"]),
            "effects": [
                {
                    "effect": effect_name(d["frame_effect"][i]),
                    "effect_id": d["frame_effect"][i],
                    "next": d["frame_pc"][i],
                    "picks_left": d["frame_left"][i],
                }
                for i in range(d["depth"])
            ],
            "play_area": _named(d["play"]),
            "market_row": _named(d["market_row"]),
            "market_deck": _named(d["market_deck"]),
            "basic_top": CARDS[d["basic_top"]].name if d["basic_top"] != EMPTY else None,
            "basic_pile": _named(d["basic_pile"]),
            "compost": _named(d["compost"]),
            "garden_row": [gf_label(g) for g in range(N_GF) if d["gf_loc"][g] == GF_ROW],
            "garden_deck": [gf_label(g) for g in range(N_GF) if d["gf_loc"][g] == GF_DECK],
            "seats": seats,
        }

    def core_from_view(self, view: Mapping[str, Any]) -> tuple[bytes, int, int]:
        """Every field is checked, and an inconsistency names the view field it is in: each
        Garden Feature in exactly one place (garden_row, garden_deck or one seat's garden),
        card counts, booleans, effect names; then the whole position (validate) with its core
        fields translated back to the view's."""
        try:
            if "game" in view and view["game"] != self.name:
                raise InvalidPositionError("game", f"{view['game']!r} is not {self.name}")
            players = _int(view, "players", 2, 4)
            seat = _int(view, "seat", 0, players - 1)
            stage = view["stage"]
            if stage not in STAGES:
                raise InvalidPositionError("stage", f"expected one of {STAGES}")
            tiebreak = view.get("options", {}).get("tiebreak_count", "all_planted")
            if tiebreak not in TIEBREAK_COUNTS:
                raise InvalidPositionError("options.tiebreak_count", f"expected one of {TIEBREAK_COUNTS}")
            effects = view["effects"]
            if not isinstance(effects, list) or len(effects) > 2:
                raise InvalidPositionError("effects", "expected at most 2 effect frames")
            frames = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
            for i, frame in enumerate(effects):
                frames[0][i] = _int(frame, "effect_id", 0, N_EFFECTS - 1, f"effects[{i}].effect_id")
                if not valid_effect_id(frames[0][i]):
                    raise InvalidPositionError(f"effects[{i}].effect_id", f"{frames[0][i]} is not a card text")
                if "effect" in frame and frame["effect"] != effect_name(frames[0][i]):
                    raise InvalidPositionError(
                        f"effects[{i}].effect",
                        f"{frame['effect']!r} is not effect {frames[0][i]} ({effect_name(frames[0][i])!r})",
                    )
                frames[1][i] = _int(frame, "next", 0, 255, f"effects[{i}].next")
                frames[2][i] = _int(frame, "picks_left", 0, 255, f"effects[{i}].picks_left")
            zeros = [0] * MAX_KINDS
            hand = [list(zeros) for _ in range(4)]
            draw = [list(zeros) for _ in range(4)]
            discard = [list(zeros) for _ in range(4)]
            known_hand = [[0, 0, 0, 0] for _ in range(4)]
            gf_loc = [GF_DECK if g < N_GF else EMPTY for g in range(MAX_GF)]
            gf_slot = [[0] * MAX_SLOTS for _ in range(MAX_GF)]
            gf_flags = [0] * MAX_GF
            placed: dict[int, str] = {}  # GF id -> the view field that places it
            owners: dict[int, str] = {}  # GF id -> seats[p].garden[i]

            def place(g: int, field: str, label: Any) -> None:
                if g in placed:
                    raise InvalidPositionError(field, f"{label!r} is also in {placed[g]}: every Garden Feature is in one place")
                placed[g] = field

            raw_seats = view["seats"]
            if not isinstance(raw_seats, list) or len(raw_seats) != players:
                raise InvalidPositionError("seats", f"expected {players} seats")
            for p, entry in enumerate(raw_seats):
                where = f"seats[{p}]"
                discard[p] = _counts(entry["discard"], f"{where}.discard")
                hand_count = _int(entry, "hand_count", 0, 255, f"{where}.hand_count")
                draw_count = _int(entry, "draw_count", 0, 255, f"{where}.draw_count")
                known = _counts(entry["known_in_hand"], f"{where}.known_in_hand")
                kinds = [k + 1 for k in range(MAX_KINDS) for _ in range(known[k])]
                if len(kinds) > 4:
                    raise InvalidPositionError(f"{where}.known_in_hand", "at most 4 cards")
                known_hand[p] = kinds + [0] * (4 - len(kinds))
                if p == seat:
                    hand[p] = _counts(entry["hand"], f"{where}.hand")
                    draw[p] = _counts(entry["draw"], f"{where}.draw")
                else:
                    # Hidden: fill the hand with the lowest kinds of the unseen multiset; the
                    # caller determinizes for `seat` afterwards.
                    unseen = _counts(entry["unseen"], f"{where}.unseen")
                    if sum(unseen) != hand_count + draw_count or any(map(lambda a, b: a > b, known, unseen)):
                        raise InvalidPositionError(
                            f"{where}.unseen", "must hold hand_count + draw_count cards, the known ones included"
                        )
                    left = hand_count - sum(known)
                    for k in range(MAX_KINDS):
                        take = min(left, unseen[k] - known[k])
                        hand[p][k] = known[k] + take
                        draw[p][k] = unseen[k] - hand[p][k]
                        left -= take
                if sum(hand[p]) != hand_count:
                    raise InvalidPositionError(f"{where}.hand_count", f"{hand_count}, but the hand lists {sum(hand[p])} cards")
                if sum(draw[p]) != draw_count:
                    raise InvalidPositionError(
                        f"{where}.draw_count", f"{draw_count}, but the draw pile lists {sum(draw[p])} cards"
                    )
                garden = entry["garden"]
                if not isinstance(garden, list):
                    raise InvalidPositionError(f"{where}.garden", "expected a list")
                for i, gf in enumerate(garden):
                    at = f"{where}.garden[{i}]"
                    if not isinstance(gf, Mapping):
                        raise InvalidPositionError(at, "expected {label, slots, complete, wc_pending}")
                    g = _gf_id(gf["label"], f"{at}.label")
                    place(g, f"{at}.label", gf["label"])
                    owners[g] = at
                    gf_loc[g] = GF_OWNED + p
                    symbols = [COMPONENTS.symbols[x] for x in GFS[g].symbols]
                    if "symbols" in gf and gf["symbols"] != symbols:
                        raise InvalidPositionError(f"{at}.symbols", f"{gf_label(g)} shows {symbols}")
                    slots = gf["slots"]
                    if not isinstance(slots, list) or len(slots) != len(symbols):
                        raise InvalidPositionError(f"{at}.slots", f"one entry per symbol ({len(symbols)})")
                    for j, name in enumerate(slots):
                        if name is None:
                            continue
                        k = _kind(name, f"{at}.slots[{j}]")
                        if CARDS[k].symbol != GFS[g].symbols[j]:
                            raise InvalidPositionError(f"{at}.slots[{j}]", f"{name!r} is not a {symbols[j]} Flower")
                        gf_slot[g][j] = k + 1
                    complete = _bool(gf, "complete", f"{at}.complete")
                    if complete != all(name is not None for name in slots):
                        raise InvalidPositionError(f"{at}.complete", "complete exactly when every slot holds a Flower (WG1)")
                    pending = _bool(gf, "wc_pending", f"{at}.wc_pending")
                    if pending and not complete:
                        raise InvalidPositionError(
                            f"{at}.wc_pending", "only a complete Garden Feature has a When-Completed bonus pending"
                        )
                    gf_flags[g] = (GF_COMPLETE if complete else 0) | (GF_WC_PENDING if pending else 0)
            row = _list(view, "garden_row")
            if len(row) > GF_ROW_SIZE:
                raise InvalidPositionError("garden_row", f"at most {GF_ROW_SIZE} Garden Features (WS4)")
            for i, label in enumerate(row):
                g = _gf_id(label, f"garden_row[{i}]")
                place(g, f"garden_row[{i}]", label)
                gf_loc[g] = GF_ROW
            for i, label in enumerate(_list(view, "garden_deck")):
                g = _gf_id(label, f"garden_deck[{i}]")
                place(g, f"garden_deck[{i}]", label)
                gf_loc[g] = GF_DECK
            missing = [gf_label(g) for g in range(N_GF) if g not in placed]
            if missing:
                raise InvalidPositionError(
                    "garden_deck", f"{missing[0]!r} is in no place (garden_row, garden_deck or a seat's garden)"
                )
            last = view["last_coin_only_play"]
            basic_top = view["basic_top"]
            d = {
                "players": players,
                "stage": STAGES.index(stage),
                "round": _int(view, "round", 0, 255),
                "first_player": _seat_or_empty(view, "first_player", players),
                "turn_player": _int(view, "turn_player", 0, players - 1),
                "end_trigger": _seat_or_empty(view, "end_trigger", players),
                "final_turns_left": _int(view, "final_turns_left", 0, 3),
                "tiebreak_locked_only": TIEBREAK_COUNTS.index(tiebreak),
                "coins": _int(view, "coins", 0, 255),
                "buys": _int(view, "buys", 0, 255),
                "plants": _int(view, "plants", 0, 255),
                "last_pure": 0 if last is None else _kind(last, "last_coin_only_play") + 1,
                "draw_seat": _int(view, "draw_seat", 0, players - 1),
                "draws_pending": _int(view, "draws_pending", 0, 255),
                "turn_ending": 1 if _bool(view, "turn_ending", "turn_ending") else 0,
                "basic_top": EMPTY if basic_top is None else _kind(basic_top, "basic_top"),
                "depth": len(effects),
                "frame_effect": frames[0],
                "frame_pc": frames[1],
                "frame_left": frames[2],
                "hand": hand,
                "draw": draw,
                "discard": discard,
                "play": _counts(view["play_area"], "play_area"),
                "market_row": _counts(view["market_row"], "market_row"),
                "market_deck": _counts(view["market_deck"], "market_deck"),
                "basic_pile": _counts(view["basic_pile"], "basic_pile"),
                "compost": _counts(view["compost"], "compost"),
                "gf_loc": gf_loc,
                "gf_slot": gf_slot,
                "gf_flags": gf_flags,
                "known_hand": known_hand,
            }
            core = bytes(kernel.dict_to_core(d))
        except (KeyError, IndexError, TypeError, AttributeError, OverflowError) as e:
            raise InvalidPositionError("view", f"missing or malformed field ({e!r})") from e
        try:
            self.validate_core(core, players, 0)
        except InvalidPositionError as e:
            raise InvalidPositionError(_view_field(e.field, seat, owners), e.reason) from e
        return core, players, seat

    # --- text --------------------------------------------------------------------------------
    def render(self, state: State, seat: int | None = None) -> str:
        """The picture `seat` sees (its own hand listed, the others' as counts); None: the
        public picture, every hand as counts."""
        d = kernel.core_to_dict(state.kernel_state.core())
        summary = kernel.seat_summary(state.kernel_state.core())
        mover = state.current_player
        who = {-1: "chance", -4: "game over"}.get(mover, f"seat {mover}")
        lines = [
            f"War of the Posies - {STAGES[d['stage']]}, round {d['round']}, turn: seat {d['turn_player']}, to decide: {who}",
            f"Coins {d['coins']}, purchases {d['buys']}, plantings {d['plants']}"
            + (
                f"; end triggered by seat {d['end_trigger']}, final turns left {d['final_turns_left']}"
                if d["end_trigger"] != EMPTY
                else ""
            ),
            f"Market (deck {d['market_deck_count']}):",
            *_described(d["market_row"]),
            "Basic Flowers: "
            + (f"{CARDS[d['basic_top']].name} ({card_words(d['basic_top'])})" if d["basic_top"] != EMPTY else "(none)")
            + f" on top of {d['basic_count']}",
            f"Garden row (deck {d['gf_deck_count']}):",
        ]
        lines.extend("  " + _gf_line(d, g) for g in range(N_GF) if d["gf_loc"][g] == GF_ROW)
        if d["play_count"]:
            lines.append("Play area: " + _listing(d["play"]))
        for i in range(d["depth"]):
            effect = effect_of(d["frame_effect"][i])
            pc = d["frame_pc"][i]
            pending = effect_words(effect[pc:]) if effect[pc:] else "done"
            left = f" ({d['frame_left'][i]} picks left)" if d["frame_left"][i] else ""
            lines.append(f"Resolving {effect_name(d['frame_effect'][i])}: {pending}{left}")
        if d["draws_pending"]:
            lines.append(f"Seat {d['draw_seat']} draws {d['draws_pending']} more")
        for p in range(d["players"]):
            points, planted, locked, reputation = summary[p]
            lines.append("")
            lines.append(
                f"Seat {p}: {points} points, {reputation} Reputation completed, {planted} Flowers planted ({locked} locked)"
            )
            # Only the viewing seat's own hand is listed; the others' are counts, as in view().
            known = _known_counts(d["known_hand"][p])
            public = f" (known to everyone: {_listing(known)})" if any(known) and p != seat else ""
            lines.append(f"  hand: {d['hand_count'][p]} cards{public}" + (":" if p == seat and d["hand_count"][p] else ""))
            if p == seat:
                lines.extend("  " + line for line in _described(d["hand"][p]))
            lines.append(f"  draw pile {d['draw_count'][p]}, discard ({d['discard_count'][p]}): {_listing(d['discard'][p])}")
            for g in range(N_GF):
                if d["gf_loc"][g] == GF_OWNED + p:
                    lines.append("  " + _gf_line(d, g))
        if any(d["compost"]):
            lines.append("")
            lines.append("Compost: " + _listing(d["compost"]))
        return "\n".join(lines)

    # How the search plays the game per seat count: search.toml beside this file.

    def heuristic(self, state: State, seat: int) -> float:
        """Greedy (one ply): points plus progress, minus the best opponent's. Progress is a
        share of each incomplete GF's Reputation and planted points by filled slots, the value
        of the deck (bought cards by cost; a coin this turn is worth a little less than a coin
        of cost, so cards are played before buying and the dearest purchase is preferred), and
        a small value per starting card, so composting one is not a free move."""
        core = state.kernel_state.core()
        d = kernel.core_to_dict(core)
        summary = kernel.seat_summary(core)

        def value(p: int) -> float:
            total = float(summary[p][0])
            for g in range(N_GF):
                if d["gf_loc"][g] == GF_OWNED + p and not d["gf_flags"][g] & GF_COMPLETE:
                    filled = [k - 1 for k in d["gf_slot"][g] if k]
                    gf = GFS[g]
                    total += 0.2 * gf.reputation
                    total += 0.6 * (gf.reputation + sum(CARDS[k].points for k in filled)) * len(filled) / len(gf.symbols)
            owned = [a + b + c for a, b, c in zip(d["hand"][p], d["draw"][p], d["discard"][p])]
            if p == d["turn_player"]:
                owned = [a + b for a, b in zip(owned, d["play"])]
                total += 0.1 * d["coins"]
            total += sum(n * (0.12 * CARDS[k].cost + (0.05 if STARTING_DECK[k] else 0.0)) for k, n in enumerate(owned[:N_KINDS]))
            return float(total)

        own = value(seat)
        others = [value(p) for p in range(d["players"]) if p != seat]
        return own - max(others)


# --- notation ---------------------------------------------------------------------------------
def describe_action(core: bytes, action: int) -> str:
    kind_of, kind, g, seat = kernel.action_info(core, action)
    if kind_of == "end":
        return "end turn"
    if kind_of == "stop":
        return "stop"
    if kind_of == "play":
        return f"play {CARDS[kind].name}"
    if kind_of == "buy":
        return f"buy {CARDS[kind].name}"
    if kind_of == "buy_gf":
        return f"buy {gf_label(g)}"
    if kind_of == "plant":
        return f"plant {CARDS[kind].name} in {gf_label(g)} of seat {seat}"
    if kind_of == "compost_hand":
        return f"compost {CARDS[kind].name} from hand"
    if kind_of == "compost_discard":
        return f"compost {CARDS[kind].name} from discard"
    if kind_of == "uproot":
        return f"uproot {CARDS[kind].name} from {gf_label(g)} of seat {seat}"
    if kind_of == "draw":
        return f"seat {seat} draws {CARDS[kind].name}"
    if kind_of == "refill_market":
        return f"market reveals {CARDS[kind].name}"
    if kind_of == "refill_gf":
        return f"garden row reveals {GFS[g].name}"
    if kind_of == "reveal_basic":
        return f"basic pile reveals {CARDS[kind].name}"
    if kind_of == "resolve_wc":
        return f"resolve {gf_label(g)} when completed"
    return f"seat {seat} goes first"


# --- helpers ----------------------------------------------------------------------------------
def _pad(values: list[int]) -> list[int]:
    return list(values) + [0] * (MAX_KINDS - len(values))


def _named(counts: list[int]) -> dict[str, int]:
    return {CARDS[k].name: n for k, n in enumerate(counts[:N_KINDS]) if n}


def _listing(counts: list[int]) -> str:
    items = [f"{CARDS[k].name}" + (f" x{n}" if n > 1 else "") for k, n in enumerate(counts[:N_KINDS]) if n]
    return ", ".join(items) if items else "(none)"


def _described(counts: list[int]) -> list[str]:
    """One line per card kind: '  Mignonette x2: purple Flower, 2 points, cost 3; ...'."""
    return [
        f"  {CARDS[k].name}" + (f" x{n}" if n > 1 else "") + f": {card_words(k)}" for k, n in enumerate(counts[:N_KINDS]) if n
    ]


def _gf_view(d: dict[str, Any], g: int) -> dict[str, Any]:
    slots = d["gf_slot"][g][: len(GFS[g].symbols)]
    return {
        "label": gf_label(g),
        "symbols": [COMPONENTS.symbols[s] for s in GFS[g].symbols],
        "slots": [CARDS[k - 1].name if k else None for k in slots],
        "complete": bool(d["gf_flags"][g] & GF_COMPLETE),
        "wc_pending": bool(d["gf_flags"][g] & GF_WC_PENDING),
    }


def _gf_line(d: dict[str, Any], g: int) -> str:
    gf = GFS[g]
    cells = []
    for i, s in enumerate(gf.symbols):
        k = d["gf_slot"][g][i]
        cells.append(f"{COMPONENTS.symbols[s]}:{CARDS[k - 1].name if k else '-'}")
    flags = d["gf_flags"][g]
    state = " complete" if flags & GF_COMPLETE else ""
    state += " (bonus waits for the owner's next turn)" if flags & GF_WC_PENDING else ""
    return (
        f"{gf_label(g)} [{' '.join(cells)}] cost {gf.cost}, {gf.reputation} Reputation; "
        f"when completed: {effect_words(gf.when_completed)}{state}"
    )


def _known_counts(entries: list[int]) -> list[int]:
    counts = [0] * MAX_KINDS
    for entry in entries:
        if entry:
            counts[entry - 1] += 1
    return counts


def _seat_or_none(value: int) -> int | None:
    return None if value == EMPTY else value


def _seat_or_empty(view: Mapping[str, Any], key: str, players: int) -> int:
    value = view[key]
    if value is None:
        return EMPTY
    return _int(view, key, 0, players - 1)


# Core fields (validate) -> the view fields that hold them, for errors about a view.
_VIEW_FIELDS = {
    "last_pure": "last_coin_only_play",
    "depth": "effects",
    "frame": "effects",
    "play": "play_area",
    "play_count": "play_area",
    "market_row_count": "market_row",
    "market_deck_count": "market_deck",
    "basic_count": "basic_pile",
    "gf_loc": "garden_row",
    "gf_row_count": "garden_row",
    "gf_deck_count": "garden_deck",
    "tiebreak_locked_only": "options.tiebreak_count",
}
_SEAT_FIELDS = {
    "hand_count": "hand_count",
    "draw_count": "draw_count",
    "discard_count": "discard",
    "hand": "hand",
    "draw": "draw",
    "discard": "discard",
    "known_hand": "known_in_hand",
}


def _view_field(field: str, seat: int, owners: Mapping[int, str]) -> str:
    """The view field behind a core field named by validate (`hand_count[1]`, `gf_slot[4][0]`,
    `cards[7]` ...)."""
    name, _, rest = field.partition("[")
    index = rest.split("]")[0]
    if name in _SEAT_FIELDS and index.isdigit():
        p = int(index)
        if name in ("hand", "draw") and p != seat:
            return f"seats[{p}].unseen"
        return f"seats[{p}].{_SEAT_FIELDS[name]}"
    if name in ("gf", "gf_loc", "gf_flags", "gf_slot") and index.isdigit():
        return owners.get(int(index), "garden_row")
    if name == "frame" and index.isdigit():
        return f"effects[{index}]"
    if name == "cards" and index.isdigit() and int(index) < N_KINDS:
        # Conservation: every card exactly once. Name the pile the missing or extra copies of
        # that card most likely belong to.
        category = CARDS[int(index)].category
        if category == components_module.CATEGORY_MARKET:
            return "market_deck"
        if category == components_module.CATEGORY_BASIC:
            return "basic_pile"
        return f"seats[{seat}].draw"
    return _VIEW_FIELDS.get(name, field)


def _bool(container: Any, key: str, field: str) -> bool:
    value = container[key]
    if not isinstance(value, bool):
        raise InvalidPositionError(field, "expected true or false")
    return value


def _int(container: Any, key: Any, lo: int, hi: int, field: str | None = None) -> int:
    value = container[key]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidPositionError(field or str(key), f"expected an integer {lo}..{hi}")
    return value


def _list(container: Any, key: str) -> list[Any]:
    value = container[key]
    if not isinstance(value, list):
        raise InvalidPositionError(key, "expected a list")
    return value


def _kind(name: Any, field: str) -> int:
    if not isinstance(name, str) or name not in KIND_BY_NAME:
        raise InvalidPositionError(field, f"{name!r} is not a card name")
    return KIND_BY_NAME[name]


def _gf_id(label: Any, field: str) -> int:
    if isinstance(label, str) and "#" in label:
        number = label.rsplit("#", 1)[1]
        if number.isdigit() and 1 <= int(number) <= N_GF and gf_label(int(number) - 1) == label:
            return int(number) - 1
    raise InvalidPositionError(field, f"{label!r} is not a Garden Feature label like 'Birdbath #2'")


def _counts(named: Any, field: str) -> list[int]:
    if not isinstance(named, Mapping):
        raise InvalidPositionError(field, "expected {card name: copies}")
    counts = [0] * MAX_KINDS
    for name, n in named.items():
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 255:
            raise InvalidPositionError(field, f"{name!r}: expected a count 1..255")
        counts[_kind(name, field)] = n
    return counts


def validate(d: dict[str, Any], players: int) -> None:
    """Every field of a War of the Posies core, and their consistency, before compiled code
    reads it: ranges, per-pile totals, conservation (every card exactly once), and stage, turn
    and effect-frame consistency."""

    def bad(field: str, message: str) -> None:
        raise InvalidPositionError(field, message)

    if d["players"] != players:
        bad("players", f"the core says {d['players']} seats, the header {players}")
    stage = d["stage"]
    if stage > STAGE_OVER:
        bad("stage", f"{stage} is not a stage")
    if d["tiebreak_locked_only"] > 1:
        bad("tiebreak_locked_only", "unknown option value")
    first, tp = d["first_player"], d["turn_player"]
    if first == EMPTY:
        if stage != STAGE_SETUP:
            bad("first_player", "chosen during the setup")
    elif first >= players:
        bad("first_player", "not a seat")
    if tp >= players:
        bad("turn_player", "not a seat")
    if d["draw_seat"] >= players:
        bad("draw_seat", "not a seat")
    trigger, final_left, rnd = d["end_trigger"], d["final_turns_left"], d["round"]
    if trigger != EMPTY and trigger >= players:
        bad("end_trigger", "not a seat")
    if trigger == EMPTY and final_left:
        bad("final_turns_left", "only counted once the end is triggered")
    if trigger != EMPTY and (final_left > players - 1 or (final_left == 0) != (stage == STAGE_OVER)):
        bad("final_turns_left", "every other player gets one final turn (WZ1)")
    if trigger != EMPTY and stage == STAGE_PLAY and tp != (trigger + players - final_left - d["turn_ending"]) % players:
        bad("turn_player", "final turns run clockwise from the triggering seat (WZ1)")
    if stage == STAGE_SETUP and (rnd or trigger != EMPTY):
        bad("round", "no round is played during the setup")
    if stage != STAGE_SETUP and not 1 <= rnd <= ROUND_LIMIT + 1:
        bad("round", f"rounds run 1..{ROUND_LIMIT + 1}")
    if stage == STAGE_OVER and trigger == EMPTY and rnd != ROUND_LIMIT:
        bad("round", f"an untriggered game ends only after round {ROUND_LIMIT}")
    if d["turn_ending"] > 1:
        bad("turn_ending", "expected 0 or 1")
    if d["basic_top"] != EMPTY and (
        d["basic_top"] >= N_KINDS or CARDS[d["basic_top"]].category != components_module.CATEGORY_BASIC
    ):
        bad("basic_top", "not a Basic Flower")
    last = d["last_pure"]
    if last and (last > N_KINDS or not PURE[last - 1] or not d["play"][last - 1]):
        bad("last_pure", "must name a coin-only card in the play area")
    if stage != STAGE_PLAY and (d["coins"] or d["buys"] != 1 or d["plants"] != 1 or last):
        bad("coins", "turn counters are reset outside turns")
    # Effect frames (at most a Plant ability above the completed GF's WC).
    depth = d["depth"]
    if depth > 2:
        bad("depth", "at most 2 effect frames")
    if depth and (stage != STAGE_PLAY or d["turn_ending"]):
        bad("depth", "effects resolve only during a turn")
    for i in range(3):
        e, pc, left = d["frame_effect"][i], d["frame_pc"][i], d["frame_left"][i]
        field = f"frame[{i}]"
        if i >= depth:
            if e or pc or left:
                bad(field, "unused frames are zero")
            continue
        if e >= N_EFFECTS or not valid_effect_id(e):
            bad(field, f"effect {e} is not a card text")
        effect = effect_of(e)
        if pc > len(effect):
            bad(field, "past the end of its text")
        if i < depth - 1 and (e < EFFECT_WC or pc or left):
            bad(field, "only a completed GF's WC waits below the Plant ability, not yet started")
        if left:
            if i != depth - 1 or pc >= len(effect) or effect[pc][0] not in CHOICE_OPS or left > effect[pc][1]:
                bad(field, "picks left only at an 'up to n' choice of the top frame")
    # Per-kind arrays and their totals.
    sizes = d["sizes"]
    for name in ("hand", "draw", "discard"):
        counts = d[f"{name}_count"]
        for p in range(4):
            if sizes[name][p] != counts[p]:
                bad(f"{name}_count[{p}]", "disagrees with the cards")
            if counts[p] and (p >= players or any(d[name][p][N_KINDS:])):
                bad(f"{name}[{p}]", "no such seat or card kind")
    for name, count in (
        ("play", "play_count"),
        ("market_row", "market_row_count"),
        ("market_deck", "market_deck_count"),
        ("basic_pile", "basic_count"),
    ):
        if sizes[name] != d[count]:
            bad(count, "disagrees with the cards")
    for name, foreign in (
        ("market_row", NOT_MARKET),
        ("market_deck", NOT_MARKET),
        ("basic_pile", NOT_BASIC),
        ("play", NOT_A_KIND),
        ("compost", NOT_A_KIND),
    ):
        if any(compress(d[name], foreign)):
            bad(name, "holds a card that does not belong there")
    if d["market_row_count"] > MARKET_SIZE:
        bad("market_row", f"at most {MARKET_SIZE} cards")
    if d["play_count"] and (stage != STAGE_PLAY or d["turn_ending"]):
        bad("play", "only the turn player has a play area, during the turn")
    # Garden Features.
    planted = [0] * MAX_KINDS
    gf_loc = d["gf_loc"]
    if gf_loc[N_GF:] != UNUSED_GF_LOC or any(d["gf_flags"][N_GF:]) or any(map(any, d["gf_slot"][N_GF:])):
        bad("gf_loc", "no such Garden Feature")
    row_count = gf_loc.count(GF_ROW)
    if row_count != d["gf_row_count"] or row_count > GF_ROW_SIZE:
        bad("gf_row_count", f"disagrees with the GF places (at most {GF_ROW_SIZE} in the row)")
    if gf_loc.count(GF_DECK) != d["gf_deck_count"]:
        bad("gf_deck_count", "disagrees with the GF places")
    for g in range(N_GF):
        loc, slots, flags = gf_loc[g], d["gf_slot"][g], d["gf_flags"][g]
        if loc < GF_OWNED:
            if flags or any(slots):
                bad(f"gf[{g}]", "only an owned GF holds Flowers or flags")
            continue
        if loc >= GF_OWNED + players:
            bad(f"gf_loc[{g}]", f"{loc} is not a place")
        gf = GFS[g]
        if flags > 3 or (flags & GF_WC_PENDING and not flags & GF_COMPLETE):
            bad(f"gf_flags[{g}]", "WC pending only once complete")
        if any(slots[len(gf.symbols) :]):
            bad(f"gf_slot[{g}]", "Flowers only under the GF's symbols")
        for i, symbol in enumerate(gf.symbols):
            k = slots[i] - 1
            if k < 0:
                continue
            if k >= N_KINDS or CARDS[k].symbol != symbol:
                bad(f"gf_slot[{g}][{i}]", "not a Flower of that symbol")
            if any(not slots[j] for j in range(i) if gf.symbols[j] == symbol):
                bad(f"gf_slot[{g}][{i}]", "slots of one symbol fill in order")
            planted[k] += 1
        if bool(flags & GF_COMPLETE) != all(slots[: len(gf.symbols)]):
            bad(f"gf_flags[{g}]", "complete exactly when every slot holds a Flower (WG1)")
    if d["basic_top"] != EMPTY:
        planted[d["basic_top"]] += 1  # counted with the planted ones: both lie outside the piles
    # Conservation: every card exactly once (starting cards: one set per seat, A.1).
    held = list(map(add, d["pile_totals"], planted))
    expected = TOTALS[players]
    if held != expected:
        k = next(k for k in range(MAX_KINDS) if held[k] != expected[k])
        bad(f"cards[{k}]", f"{CARDS[k].name if k < N_KINDS else k}: {held[k]} copies in play, the game has {expected[k]}")
    # Hand cards known to everyone (kernel.remember_hand): ascending kinds, part of the hand,
    # kept from the end of the owner's turn until its next turn starts.
    for p in range(4):
        entries = d["known_hand"][p]
        filled = [e for e in entries if e]
        if entries != filled + [0] * (4 - len(filled)) or filled != sorted(filled):
            bad(f"known_hand[{p}]", "ascending card kinds, then zeros")
        if filled and (
            p >= players
            or stage == STAGE_SETUP
            or filled[-1] > N_KINDS
            or (p == tp and stage == STAGE_PLAY and not d["turn_ending"])
        ):
            bad(f"known_hand[{p}]", "only for a seat between the end of its turn and its next turn")
        known = _known_counts(entries)
        if any(map(lambda a, b: a > b, known, d["hand"][p])):
            bad(f"known_hand[{p}]", "the known cards are in the hand")
    # Stage consistency.
    if stage == STAGE_SETUP:
        if (
            d["turn_ending"]
            or any(d["discard_count"])
            or any(d["compost"])
            or any(d["gf_flags"])
            or any(GF_OWNED <= d["gf_loc"][g] < EMPTY for g in range(N_GF))
        ):
            bad("stage", "nothing is played during the setup")
        for p in range(players):
            if [a + b for a, b in zip(d["hand"][p], d["draw"][p])] != _pad(STARTING_DECK):
                bad(f"draw[{p}]", "during the setup a seat holds exactly its starting deck")
            opening = min(HAND_SIZE, STARTING_DECK_SIZE) if p < d["draw_seat"] else 0
            if p == d["draw_seat"]:
                if d["hand_count"][p] + d["draws_pending"] != HAND_SIZE:
                    bad("draws_pending", "the opening hand is 5 cards (WS2)")
            elif d["hand_count"][p] != opening:
                bad(f"hand_count[{p}]", "opening hands are drawn seat by seat (WS2)")
        if first == EMPTY and (
            d["gf_row_count"] or d["market_row_count"] or d["basic_top"] != EMPTY or d["draw_seat"] or d["hand_count"][0]
        ):
            bad("first_player", "the first player is drawn before anything else")
    else:
        for p in range(players):
            if p != tp and p != d["draw_seat"] and d["hand_count"][p] > HAND_SIZE:
                bad(f"hand_count[{p}]", f"a seat waits for its turn with at most {HAND_SIZE} cards")
        if d["turn_ending"]:
            if d["draw_seat"] != tp or d["hand_count"][tp] + d["draws_pending"] != HAND_SIZE:
                bad("turn_ending", "the ending player draws a new hand of 5 (WE2)")
        elif d["draws_pending"] and (not depth or d["draw_seat"] != tp):
            bad("draws_pending", "during a turn only an effect of the turn player draws")
    if stage == STAGE_OVER and (d["draws_pending"] or d["turn_ending"] or depth):
        bad("stage", "nothing is pending once the game is over")
