"""Loads and validates ``components.toml``: breeds and plant cards, card kinds (seed,
fertilizer, experiment, skill), cultivation rooms and the game's constants. A malformed file is
rejected with a ComponentDataError naming the entry; a valid one is copied into the compiled
kernel's static tables by :func:`install`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path(__file__).with_name("components.toml")

# Sizes fixed by the state layout (kernel.pxd).
N_BREEDS = 5  # LC1: five breeds (● ▲ ■ ⬢ ◆)
N_ROOMS = 3  # LC2: three cultivation room boards
MAX_KINDS = 20  # card kinds (17 in the default data)
MAX_ROOM_SIDE = 4  # rooms are at most 4 x 4 spaces (16 bits of a pending-growth mask)
MAX_SEATS = 4
CARD_TYPES = ("seed", "fertilizer", "experiment", "skill")
SKILL_OPS = ("DRAW", "REVEAL_TAKE")


class ComponentDataError(ValueError):
    """The component data file is malformed; the message names the entry."""


@dataclass(frozen=True)
class Breed:
    name: str
    symbol: str
    plants: int  # plant cards of this breed in the stock
    flower_vp: int  # VP printed on the flower side (LO2)
    track: int  # steps of the flower's cultivation track (A2)


@dataclass(frozen=True)
class SkillEffect:
    operation: str  # "DRAW": draw `count` cards; "REVEAL_TAKE": reveal `count`, keep `card_type`
    count: int
    card_type: str | None  # the type kept by REVEAL_TAKE


@dataclass(frozen=True)
class CardKind:
    name: str
    card_type: str  # one of CARD_TYPES
    breeds: tuple[int, ...]  # 1-based breed numbers (seed: exactly one; fertilizer: one or more)
    cost: int | None  # experiments needed to acquire it (None: never acquirable)
    experiments: int  # experiment count provided (experiment cards only)
    stock: int  # copies in the open stock at setup
    starter: int  # copies in each player's starter set
    effect: SkillEffect | None  # skill cards only


@dataclass(frozen=True)
class Room:
    name: str
    rows: int
    cols: int
    spaces: tuple[tuple[int, ...], ...]  # row-major; the breeds each space accepts


@dataclass(frozen=True)
class Components:
    hand_size: int
    end_trigger_vp: int
    markers_per_player: int
    acquisition_tiers: tuple[tuple[int, int], ...]  # (minimum experiments, cards), ascending
    adjacency_bonus: tuple[int, ...]  # by group size; the last value covers larger groups
    seed_set_bonus: tuple[int, ...]  # by distinct breeds in a set, 0..5
    breeds: tuple[Breed, ...]
    cards: tuple[CardKind, ...]
    rooms: tuple[Room, ...]

    def kind_index(self, name: str) -> int:
        for i, card in enumerate(self.cards):
            if card.name == name:
                return i
        raise KeyError(name)

    @property
    def starter_size(self) -> int:
        return sum(c.starter for c in self.cards)

    def total_cards(self, seats: int = MAX_SEATS) -> int:
        """Cards in the box: starter sets for `seats`, the stocks and the plant cards."""
        return seats * self.starter_size + sum(c.stock for c in self.cards) + sum(b.plants for b in self.breeds)

    def acquisitions_allowed(self, experiments: int) -> int:
        """LD2: how many cards an experiment total allows."""
        allowed = 0
        for threshold, cards in self.acquisition_tiers:
            if experiments >= threshold:
                allowed = cards
        return allowed

    def seed_set_points(self, seed_counts_by_breed: list[int]) -> int:
        """LE2 closed form: sum over layers k >= 1 of value(#breeds with >= k seeds)."""
        total = 0
        k = 1
        while True:
            distinct = sum(1 for c in seed_counts_by_breed if c >= k)
            if distinct == 0:
                return total
            total += self.seed_set_bonus[distinct]
            k += 1


def _int(value: Any, where: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ComponentDataError(f"{where}: expected an integer {lo}..{hi}, got {value!r}")
    return value


def _int_list(value: Any, where: str, lo: int, hi: int, min_len: int, max_len: int) -> list[int]:
    if not isinstance(value, list) or not min_len <= len(value) <= max_len:
        raise ComponentDataError(f"{where}: expected a list of {min_len}..{max_len} integers")
    return [_int(v, f"{where}[{i}]", lo, hi) for i, v in enumerate(value)]


def _word(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or not value.replace("_", "").isalnum() or not value.isascii():
        raise ComponentDataError(f"{where}: expected a name of letters, digits and underscores, got {value!r}")
    return value


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise ComponentDataError(f"{key}: expected a [{key}] table")
    return value


def _unknown(raw: dict[str, Any], known: set[str], where: str) -> None:
    extra = set(raw) - known
    if extra:
        raise ComponentDataError(f"{where}: unknown keys {sorted(extra)}")


def _breed_numbers(value: Any, where: str, min_len: int) -> tuple[int, ...]:
    numbers = _int_list(value, where, 1, N_BREEDS, min_len, N_BREEDS)
    if len(set(numbers)) != len(numbers):
        raise ComponentDataError(f"{where}: a breed is listed twice")
    return tuple(sorted(numbers))


def _constants(data: dict[str, Any]) -> tuple[int, int, int, tuple[tuple[int, int], ...], tuple[int, ...], tuple[int, ...]]:
    raw = _table(data, "constants")
    _unknown(
        raw,
        {"hand_size", "end_trigger_vp", "markers_per_player", "acquisition_tiers", "adjacency_bonus", "seed_set_bonus"},
        "constants",
    )
    hand = _int(raw.get("hand_size"), "constants.hand_size", 1, 10)
    end_vp = _int(raw.get("end_trigger_vp"), "constants.end_trigger_vp", 1, 250)
    markers = _int(raw.get("markers_per_player"), "constants.markers_per_player", 1, 16)
    tiers_raw = raw.get("acquisition_tiers")
    if not isinstance(tiers_raw, list) or not 1 <= len(tiers_raw) <= 8:
        raise ComponentDataError("constants.acquisition_tiers: expected 1..8 [threshold, cards] pairs")
    tiers: list[tuple[int, int]] = []
    for i, pair in enumerate(tiers_raw):
        where = f"constants.acquisition_tiers[{i}]"
        threshold, cards = _int_list(pair, where, 0, 100, 2, 2)
        if threshold < 1:
            raise ComponentDataError(f"{where}: the threshold must be at least 1 (a total of 0 acquires nothing)")
        if not 1 <= cards <= 6:
            raise ComponentDataError(f"{where}: expected 1..6 cards")
        if tiers and (threshold <= tiers[-1][0] or cards <= tiers[-1][1]):
            raise ComponentDataError(f"{where}: thresholds and card counts must increase")
        tiers.append((threshold, cards))
    adjacency = _int_list(raw.get("adjacency_bonus"), "constants.adjacency_bonus", 0, 100, 2, 17)
    if adjacency[0] != 0 or adjacency[1] != 0:
        raise ComponentDataError("constants.adjacency_bonus: groups of 0 or 1 flower give no bonus (LO3)")
    seed_sets = _int_list(raw.get("seed_set_bonus"), "constants.seed_set_bonus", 0, 100, N_BREEDS + 1, N_BREEDS + 1)
    if seed_sets[0] != 0:
        raise ComponentDataError("constants.seed_set_bonus: an empty set is worth 0")
    # LE2/A12: "one layer per k" is the best partition exactly when the marginal value of one
    # more breed in a set never decreases (convexity); the kernel relies on that closed form.
    marginals = [seed_sets[i + 1] - seed_sets[i] for i in range(N_BREEDS)]
    if any(marginals[i + 1] < marginals[i] for i in range(N_BREEDS - 1)):
        raise ComponentDataError(
            "constants.seed_set_bonus: values must be convex (each extra breed adds at least "
            "as much as the previous one), else the best partition has no closed form"
        )
    return hand, end_vp, markers, tuple(tiers), tuple(adjacency), tuple(seed_sets)


def _breeds(data: dict[str, Any]) -> tuple[Breed, ...]:
    raw_list = data.get("breeds")
    if not isinstance(raw_list, list) or len(raw_list) != N_BREEDS:
        raise ComponentDataError(f"breeds: expected exactly {N_BREEDS} [[breeds]] tables")
    out = []
    for i, raw in enumerate(raw_list):
        where = f"breeds[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = _word(raw.get("name"), f"{where}.name")
        where = f"breeds[{i}] ({name})"
        _unknown(raw, {"name", "symbol", "plants", "flower_vp", "track"}, where)
        symbol = raw.get("symbol", name[0])
        if not isinstance(symbol, str) or len(symbol) != 1:
            raise ComponentDataError(f"{where}.symbol: expected one character")
        out.append(
            Breed(
                name,
                symbol,
                _int(raw.get("plants"), f"{where}.plants", 0, 60),
                _int(raw.get("flower_vp"), f"{where}.flower_vp", 0, 20),
                _int(raw.get("track"), f"{where}.track", 1, 8),
            )
        )
    if len({b.name for b in out}) != N_BREEDS:
        raise ComponentDataError("breeds: names must be distinct")
    return tuple(out)


def _effect(value: Any, where: str) -> SkillEffect:
    if not isinstance(value, str):
        raise ComponentDataError(f"{where}.effect: expected 'DRAW n' or 'REVEAL_TAKE n TYPE'")
    words = value.split()
    if len(words) == 2 and words[0] == "DRAW" and words[1].isdigit():
        return SkillEffect("DRAW", _int(int(words[1]), f"{where}.effect count", 1, 10), None)
    if len(words) == 3 and words[0] == "REVEAL_TAKE" and words[1].isdigit():
        if words[2] not in CARD_TYPES:
            raise ComponentDataError(f"{where}.effect: {words[2]!r} is not one of {', '.join(CARD_TYPES)}")
        return SkillEffect("REVEAL_TAKE", _int(int(words[1]), f"{where}.effect count", 1, 10), words[2])
    raise ComponentDataError(f"{where}.effect: {value!r} is not 'DRAW n' or 'REVEAL_TAKE n TYPE'")


def _cards(data: dict[str, Any]) -> tuple[CardKind, ...]:
    raw_list = data.get("cards")
    if not isinstance(raw_list, list) or not 1 <= len(raw_list) <= MAX_KINDS:
        raise ComponentDataError(f"cards: expected 1..{MAX_KINDS} [[cards]] tables")
    out = []
    for i, raw in enumerate(raw_list):
        where = f"cards[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = _word(raw.get("name"), f"{where}.name")
        where = f"cards[{i}] ({name})"
        _unknown(raw, {"name", "type", "breeds", "cost", "experiments", "stock", "starter", "effect"}, where)
        card_type = raw.get("type")
        if card_type not in CARD_TYPES:
            raise ComponentDataError(f"{where}.type: expected one of {', '.join(CARD_TYPES)}")
        breeds: tuple[int, ...] = ()
        if card_type == "seed":
            breeds = _breed_numbers(raw.get("breeds"), f"{where}.breeds", 1)
            if len(breeds) != 1:
                raise ComponentDataError(f"{where}.breeds: a seed card prepares exactly one breed")
        elif card_type == "fertilizer":
            breeds = _breed_numbers(raw.get("breeds"), f"{where}.breeds", 1)
        elif "breeds" in raw:
            raise ComponentDataError(f"{where}.breeds: only seed and fertilizer cards have breeds")
        experiments = 0
        if card_type == "experiment":
            experiments = _int(raw.get("experiments"), f"{where}.experiments", 1, 10)
        elif "experiments" in raw:
            raise ComponentDataError(f"{where}.experiments: only experiment cards provide experiments")
        cost = None if raw.get("cost") is None else _int(raw.get("cost"), f"{where}.cost", 0, 30)
        stock = _int(raw.get("stock", 0), f"{where}.stock", 0, 60)
        starter = _int(raw.get("starter", 0), f"{where}.starter", 0, 20)
        if stock and cost is None:
            raise ComponentDataError(f"{where}.cost: a card in the stock needs a cost")
        if stock + MAX_SEATS * starter > 250:
            raise ComponentDataError(f"{where}: too many copies (at most 250 in a game)")
        if stock + starter == 0:
            raise ComponentDataError(f"{where}: a card kind needs copies in the stock or the starter set")
        effect = None
        if card_type == "skill":
            effect = _effect(raw.get("effect"), where)
        elif "effect" in raw:
            raise ComponentDataError(f"{where}.effect: only skill cards have effects")
        out.append(CardKind(name, card_type, breeds, cost, experiments, stock, starter, effect))
    if len({c.name for c in out}) != len(out):
        raise ComponentDataError("cards: names must be distinct")
    return tuple(out)


def _rooms(data: dict[str, Any]) -> tuple[Room, ...]:
    raw_list = data.get("rooms")
    if not isinstance(raw_list, list) or len(raw_list) != N_ROOMS:
        raise ComponentDataError(f"rooms: expected exactly {N_ROOMS} [[rooms]] tables")
    out = []
    for i, raw in enumerate(raw_list):
        where = f"rooms[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = _word(raw.get("name"), f"{where}.name")
        where = f"rooms[{i}] ({name})"
        _unknown(raw, {"name", "spaces"}, where)
        grid = raw.get("spaces")
        if not isinstance(grid, list) or not 1 <= len(grid) <= MAX_ROOM_SIDE:
            raise ComponentDataError(f"{where}.spaces: expected 1..{MAX_ROOM_SIDE} rows")
        cols = len(grid[0]) if isinstance(grid[0], list) else -1
        spaces = []
        for r, row in enumerate(grid):
            if not isinstance(row, list) or len(row) != cols or not 1 <= cols <= MAX_ROOM_SIDE:
                raise ComponentDataError(f"{where}.spaces[{r}]: expected rows of the same length 1..{MAX_ROOM_SIDE}")
            for c, cell in enumerate(row):
                spaces.append(_breed_numbers(cell, f"{where}.spaces[{r}][{c}]", 1))
        out.append(Room(name, len(grid), cols, tuple(spaces)))
    if len({r.name for r in out}) != N_ROOMS:
        raise ComponentDataError("rooms: names must be distinct")
    return tuple(out)


def parse(data: dict[str, Any]) -> Components:
    _unknown(data, {"constants", "breeds", "cards", "rooms"}, "file")
    hand, end_vp, markers, tiers, adjacency, seed_sets = _constants(data)
    components = Components(hand, end_vp, markers, tiers, adjacency, seed_sets, _breeds(data), _cards(data), _rooms(data))
    if components.starter_size < hand:
        raise ComponentDataError(f"cards: a starter set of {components.starter_size} cards cannot fill a hand of {hand}")
    return components


def load(path: Path = DEFAULT_PATH) -> Components:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ComponentDataError(f"{path}: not valid TOML ({e})") from e
    return parse(data)


def install(components: Components) -> None:
    """Copy the tables into the compiled kernel (static, shared by every state)."""
    import hortus.games.botanical_lab.kernel as kernel

    def breed_mask(breeds: tuple[int, ...]) -> int:
        return sum(1 << (b - 1) for b in breeds)

    cards = [
        {
            "type": CARD_TYPES.index(c.card_type),
            "breeds": breed_mask(c.breeds),
            "cost": 255 if c.cost is None else c.cost,
            "experiments": c.experiments,
            "stock": c.stock,
            "starter": c.starter,
            "skill_op": 0 if c.effect is None else 1 + SKILL_OPS.index(c.effect.operation),
            "skill_count": 0 if c.effect is None else c.effect.count,
            "skill_type": 0 if c.effect is None or c.effect.card_type is None else CARD_TYPES.index(c.effect.card_type),
        }
        for c in components.cards
    ]
    breeds = [{"plants": b.plants, "vp": b.flower_vp, "track": b.track} for b in components.breeds]
    rooms = [{"rows": r.rows, "cols": r.cols, "spaces": [breed_mask(s) for s in r.spaces]} for r in components.rooms]
    tiers = [0] * 256
    for experiments in range(256):
        tiers[experiments] = components.acquisitions_allowed(experiments)
    kernel.load_components(
        cards,
        breeds,
        rooms,
        components.hand_size,
        components.end_trigger_vp,
        components.markers_per_player,
        tiers,
        list(components.adjacency_bonus),
        list(components.seed_set_bonus),
    )
