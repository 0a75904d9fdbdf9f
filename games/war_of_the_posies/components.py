"""Loads and validates ``components.toml``: the card kinds (cost, points, Flower symbol, card
texts in the effect vocabulary) and the Garden Features. A malformed file is rejected with a
ComponentDataError naming the card and the field; ``install`` copies the validated tables into
the compiled kernel."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path(__file__).with_name("components.toml")

# The effect vocabulary (decisions.md A.0); codes match ``Op`` in kernel.pxd.
OPS: dict[str, int] = {
    "COIN": 1,
    "DRAW": 2,
    "BUY": 3,
    "PLANT": 4,
    "COMPOST_HAND": 5,
    "COMPOST_ANY": 6,
    "GAIN_BASIC_HAND": 7,
    "UPROOT": 8,
}
OPS_WITHOUT_NUMBER = frozenset({"GAIN_BASIC_HAND"})
CATEGORIES = ("starting", "basic", "market")
CATEGORY_STARTING, CATEGORY_BASIC, CATEGORY_MARKET = range(3)

# Layout limits (kernel.pxd); the loader refuses data the state layout cannot hold.
MAX_KINDS = 64
MAX_GARDEN_FEATURES = 32
MAX_SLOTS = 4
MAX_PRIMITIVES = 6
MAX_SYMBOLS = 8
MAX_SEATS = 4
MAX_CARDS_PER_SEAT = 255  # every per-seat pile counter is one byte
MAX_COST = 60  # coins are a byte; a cost above this could never be paid in practice

Effect = tuple[tuple[str, int], ...]
"""A card text: ordered (primitive, number) pairs; GAIN_BASIC_HAND carries 1."""


class ComponentDataError(ValueError):
    """The component data file is malformed; the message names the card and the field."""


@dataclass(frozen=True)
class CardKind:
    """One kind of card (identical copies share it)."""

    name: str
    category: int  # CATEGORY_*
    copies: int  # per player for starting cards, in the whole game otherwise
    points: int  # negative: Poisonous (A19)
    symbol: int | None  # Flower symbol index; None for Expeditions and tools
    cost: int  # 0 for starting cards (never bought)
    play: Effect  # played: the Cultivate ability of a Flower, the text of any other card
    plant: Effect  # planted: a Flower's Plant ability

    @property
    def is_flower(self) -> bool:
        return self.symbol is not None

    @property
    def is_poisonous(self) -> bool:
        return self.is_flower and self.points < 0


@dataclass(frozen=True)
class GardenFeature:
    """One Garden Feature card (each copy has its own id, numbered from 1 in the notation)."""

    name: str
    symbols: tuple[int, ...]
    cost: int
    reputation: int
    when_completed: Effect
    kind: int  # id of the lowest identical copy


@dataclass(frozen=True)
class Components:
    symbols: tuple[str, ...]
    end_reputation: int
    cards: tuple[CardKind, ...]
    garden_features: tuple[GardenFeature, ...]

    def kind_index(self, name: str) -> int:
        for index, card in enumerate(self.cards):
            if card.name == name:
                return index
        raise KeyError(name)

    def gf_ids(self, name: str) -> list[int]:
        return [g for g, gf in enumerate(self.garden_features) if gf.name == name]


def parse_effect(text: Any, where: str) -> Effect:
    """'COIN 2; BUY 1' -> (('COIN', 2), ('BUY', 1)); '' or absent -> ()."""
    if text is None:
        return ()
    if not isinstance(text, str):
        raise ComponentDataError(f'{where}: expected a text like "COIN 2; DRAW 1"')
    out: list[tuple[str, int]] = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        words = part.split()
        op = words[0].upper()
        if op not in OPS:
            raise ComponentDataError(f"{where}: unknown effect {words[0]!r}; known: {', '.join(OPS)}")
        if op in OPS_WITHOUT_NUMBER:
            if len(words) != 1:
                raise ComponentDataError(f"{where}: {op} takes no number")
            out.append((op, 1))
            continue
        if len(words) != 2 or not words[1].isdigit() or not 1 <= int(words[1]) <= 9:
            raise ComponentDataError(f"{where}: {op} needs a number 1..9 (got {part!r})")
        out.append((op, int(words[1])))
    if len(out) > MAX_PRIMITIVES:
        raise ComponentDataError(f"{where}: at most {MAX_PRIMITIVES} effects in one text")
    return tuple(out)


def _int(raw: dict[str, Any], key: str, lo: int, hi: int, where: str, default: int | None = None) -> int:
    value = raw.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ComponentDataError(f"{where}.{key}: expected an integer {lo}..{hi}, got {value!r}")
    return value


def _name(raw: dict[str, Any], where: str) -> str:
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip() or name != name.strip() or ";" in name:
        raise ComponentDataError(f"{where}.name: expected a non-empty name")
    return name


def _symbol(value: Any, symbols: tuple[str, ...], where: str) -> int:
    if value not in symbols:
        raise ComponentDataError(f"{where}: {value!r} is not one of the symbols {list(symbols)}")
    return symbols.index(value)


def _parse_card(raw: Any, i: int, symbols: tuple[str, ...], seen: set[str]) -> CardKind:
    where = f"cards[{i}]"
    if not isinstance(raw, dict):
        raise ComponentDataError(f"{where}: expected a [[cards]] table")
    name = _name(raw, where)
    where = f"cards[{i}] ({name})"
    if name in seen:
        raise ComponentDataError(f"{where}.name: duplicate card name")
    seen.add(name)
    unknown = set(raw) - {"name", "category", "copies", "points", "symbol", "cost", "play", "plant"}
    if unknown:
        raise ComponentDataError(f"{where}: unknown fields {sorted(unknown)}")
    category = raw.get("category")
    if category not in CATEGORIES:
        raise ComponentDataError(f"{where}.category: expected one of {list(CATEGORIES)}, got {category!r}")
    cat = CATEGORIES.index(category)
    copies = _int(raw, "copies", 1, 60, where)
    points = _int(raw, "points", -20, 20, where)
    symbol = None if raw.get("symbol") is None else _symbol(raw["symbol"], symbols, f"{where}.symbol")
    if cat == CATEGORY_STARTING:
        if "cost" in raw:
            raise ComponentDataError(f"{where}.cost: starting cards are never bought; remove the cost")
        cost = 0
    else:
        cost = _int(raw, "cost", 0, MAX_COST, where)
    if cat == CATEGORY_BASIC and symbol is None:
        raise ComponentDataError(f"{where}.symbol: a Basic Flower needs a Flower symbol")
    if symbol is None and points < 0:
        raise ComponentDataError(f"{where}.points: only Flowers may be Poisonous (negative points)")
    play = parse_effect(raw.get("play"), f"{where}.play")
    plant = parse_effect(raw.get("plant"), f"{where}.plant")
    if plant and symbol is None:
        raise ComponentDataError(f"{where}.plant: only a Flower (a card with a symbol) is planted")
    return CardKind(name, cat, copies, points, symbol, cost, play, plant)


def _parse_gfs(value: Any, symbols: tuple[str, ...]) -> tuple[GardenFeature, ...]:
    if not isinstance(value, list) or not value:
        raise ComponentDataError("garden_features: expected a list of [[garden_features]] tables")
    out: list[GardenFeature] = []
    seen: set[str] = set()
    for i, raw in enumerate(value):
        where = f"garden_features[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = _name(raw, where)
        where = f"garden_features[{i}] ({name})"
        if name in seen:
            raise ComponentDataError(f"{where}.name: duplicate name (use copies = n for identical cards)")
        seen.add(name)
        unknown = set(raw) - {"name", "copies", "symbols", "cost", "reputation", "when_completed"}
        if unknown:
            raise ComponentDataError(f"{where}: unknown fields {sorted(unknown)}")
        copies = _int(raw, "copies", 1, MAX_GARDEN_FEATURES, where, default=1)
        raw_symbols = raw.get("symbols")
        if not isinstance(raw_symbols, list) or not 1 <= len(raw_symbols) <= MAX_SLOTS:
            raise ComponentDataError(f"{where}.symbols: expected 1..{MAX_SLOTS} Flower symbols")
        slots = tuple(_symbol(s, symbols, f"{where}.symbols") for s in raw_symbols)
        cost = _int(raw, "cost", 0, MAX_COST, where)
        reputation = _int(raw, "reputation", 0, 20, where)
        wc = parse_effect(raw.get("when_completed"), f"{where}.when_completed")
        first = len(out)
        for _ in range(copies):
            out.append(GardenFeature(name, slots, cost, reputation, wc, first))
    if len(out) > MAX_GARDEN_FEATURES:
        raise ComponentDataError(f"garden_features: {len(out)} cards, the state layout holds {MAX_GARDEN_FEATURES}")
    return tuple(out)


def parse(data: dict[str, Any]) -> Components:
    unknown = set(data) - {"symbols", "end_reputation", "cards", "garden_features"}
    if unknown:
        raise ComponentDataError(f"unknown top-level keys {sorted(unknown)}")
    raw_symbols = data.get("symbols")
    if (
        not isinstance(raw_symbols, list)
        or not 1 <= len(raw_symbols) <= MAX_SYMBOLS
        or not all(isinstance(s, str) and s for s in raw_symbols)
    ):
        raise ComponentDataError(f"symbols: expected 1..{MAX_SYMBOLS} Flower symbol names")
    if len(set(raw_symbols)) != len(raw_symbols):
        raise ComponentDataError("symbols: names must be distinct")
    symbols = tuple(raw_symbols)
    end_reputation = _int(data, "end_reputation", 1, 100, "end_reputation")
    raw_cards = data.get("cards")
    if not isinstance(raw_cards, list) or not raw_cards:
        raise ComponentDataError("cards: expected a list of [[cards]] tables")
    if len(raw_cards) > MAX_KINDS:
        raise ComponentDataError(f"cards: {len(raw_cards)} kinds, the state layout holds {MAX_KINDS}")
    seen: set[str] = set()
    cards = tuple(_parse_card(raw, i, symbols, seen) for i, raw in enumerate(raw_cards))
    if not any(c.category == CATEGORY_STARTING for c in cards):
        raise ComponentDataError('cards: no starting cards (category = "starting")')
    starting = sum(c.copies for c in cards if c.category == CATEGORY_STARTING)
    shared = sum(c.copies for c in cards if c.category != CATEGORY_STARTING)
    if starting * MAX_SEATS > 255:
        raise ComponentDataError(f"cards: {starting} starting cards per player is more than a byte counts for 4 players")
    if starting + shared > MAX_CARDS_PER_SEAT:
        raise ComponentDataError(
            f"cards: one player could own {starting + shared} cards, the state layout counts {MAX_CARDS_PER_SEAT}"
        )
    gfs = _parse_gfs(data.get("garden_features"), symbols)
    return Components(symbols, end_reputation, cards, gfs)


def load(path: Path = DEFAULT_PATH) -> Components:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ComponentDataError(f"{path}: not valid TOML ({e})") from e
    return parse(data)


def install(components: Components) -> None:
    """Copy the tables into the compiled kernel (static, shared by every state)."""
    from hortus.games.war_of_the_posies import kernel

    def ops(effect: Effect) -> list[tuple[int, int]]:
        return [(OPS[op], arg) for op, arg in effect]

    cards = components.cards
    gfs = components.garden_features
    kernel.load_components(
        [c.category for c in cards],
        [c.symbol for c in cards],
        [c.points for c in cards],
        [c.cost for c in cards],
        [ops(c.play) for c in cards],
        [ops(c.plant) for c in cards],
        [list(g.symbols) for g in gfs],
        [g.cost for g in gfs],
        [g.reputation for g in gfs],
        [ops(g.when_completed) for g in gfs],
        [g.kind for g in gfs],
        components.end_reputation,
    )
