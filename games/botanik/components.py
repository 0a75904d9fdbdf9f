"""Loads and validates ``components.toml``: the tile table (colours, types, pipe conduits,
flowers). A malformed file is rejected with a ComponentDataError naming the entry."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SIDES = ("N", "E", "S", "W")
N_COLOURS = 5  # K-C3: the state layout holds 5 colours x 13 tiles
TILES_PER_COLOUR = 13
DEFAULT_PATH = Path(__file__).with_name("components.toml")


class ComponentDataError(ValueError):
    """The component data file is malformed; the message names the entry."""


@dataclass(frozen=True)
class TileType:
    name: str
    count: int
    conduits: tuple[tuple[int, ...], ...]  # side indices 0=N..3=W at rotation 0
    flowers: tuple[int, ...]  # per copy
    needs_same_colour_link: bool
    exchange_on_free: bool


@dataclass(frozen=True)
class Components:
    colours: tuple[str, ...]
    tile_types: tuple[TileType, ...]
    source_conduits: tuple[tuple[int, ...], ...]

    def tile(self, tile_id: int) -> tuple[int, int, int]:
        """(colour index, type index, copy index) of a coloured tile id."""
        colour, k = divmod(tile_id, TILES_PER_COLOUR)
        for type_index, tt in enumerate(self.tile_types):
            if k < tt.count:
                return colour, type_index, k
            k -= tt.count
        raise ValueError(tile_id)


def _conduits(value: Any, where: str) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list):
        raise ComponentDataError(f"{where}.conduits: expected a list of side lists")
    used: set[str] = set()
    out = []
    for i, conduit in enumerate(value):
        if not isinstance(conduit, list) or not conduit:
            raise ComponentDataError(f"{where}.conduits[{i}]: expected a non-empty list of sides")
        for side in conduit:
            if side not in SIDES:
                raise ComponentDataError(f"{where}.conduits[{i}]: {side!r} is not one of N, E, S, W")
            if side in used:
                raise ComponentDataError(f"{where}.conduits[{i}]: side {side} is used twice")
            used.add(side)
        out.append(tuple(SIDES.index(s) for s in conduit))
    return tuple(out)


def parse(data: dict[str, Any]) -> Components:
    colours = data.get("colours")
    if not isinstance(colours, list) or len(colours) != N_COLOURS or not all(isinstance(c, str) and c for c in colours):
        raise ComponentDataError(f"colours: expected {N_COLOURS} colour names")
    if len(set(colours)) != N_COLOURS:
        raise ComponentDataError("colours: names must be distinct")
    raw_types = data.get("tile_types")
    if not isinstance(raw_types, list) or not raw_types:
        raise ComponentDataError("tile_types: expected a list of [[tile_types]] tables")
    types = []
    names: set[str] = set()
    for i, raw in enumerate(raw_types):
        where = f"tile_types[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = raw.get("name")
        if not isinstance(name, str) or not name.replace("_", "").isalpha():
            raise ComponentDataError(f"{where}.name: expected a word")
        where = f"tile_types[{i}] ({name})"
        if name in names:
            raise ComponentDataError(f"{where}.name: duplicate")
        names.add(name)
        count = raw.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= TILES_PER_COLOUR:
            raise ComponentDataError(f"{where}.count: expected an integer 1..{TILES_PER_COLOUR}")
        flowers = raw.get("flowers")
        if (
            not isinstance(flowers, list)
            or len(flowers) != count
            or not all(isinstance(f, int) and not isinstance(f, bool) and 0 <= f <= 9 for f in flowers)
        ):
            raise ComponentDataError(f"{where}.flowers: expected {count} integers 0..9 (one per copy)")
        needs = raw.get("needs_same_colour_link", False)
        meca = raw.get("exchange_on_free", False)
        if not isinstance(needs, bool) or not isinstance(meca, bool):
            raise ComponentDataError(f"{where}: needs_same_colour_link and exchange_on_free are booleans")
        conduits = _conduits(raw.get("conduits"), where)
        if meca and conduits:
            raise ComponentDataError(f"{where}.conduits: a tile exchanged when freed never enters a machine; give it no conduits")
        if not meca and not conduits:
            raise ComponentDataError(f"{where}.conduits: a machine tile needs at least one pipe")
        unknown = set(raw) - {"name", "count", "conduits", "flowers", "needs_same_colour_link", "exchange_on_free"}
        if unknown:
            raise ComponentDataError(f"{where}: unknown keys {sorted(unknown)}")
        types.append(TileType(name, count, conduits, tuple(flowers), needs, meca))
    total = sum(t.count for t in types)
    if total != TILES_PER_COLOUR:
        raise ComponentDataError(f"tile_types: counts add up to {total} per colour, the game has {TILES_PER_COLOUR}")
    source = data.get("source")
    if not isinstance(source, dict):
        raise ComponentDataError("source: expected a [source] table")
    source_conduits = _conduits(source.get("conduits"), "source")
    if len(source_conduits) != 1:
        raise ComponentDataError("source.conduits: the Source is one network (exactly one conduit)")
    return Components(tuple(colours), tuple(types), source_conduits)


def load(path: Path = DEFAULT_PATH) -> Components:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ComponentDataError(f"{path}: not valid TOML ({e})") from e
    return parse(data)


def install(components: Components) -> None:
    """Copy the tables into the compiled kernel (static, shared by every state)."""
    from hortus.games.botanik import kernel

    colour, ttype, flowers, needs, meca, conduits = [], [], [], [], [], []
    for tile_id in range(N_COLOURS * TILES_PER_COLOUR):
        c, t, k = components.tile(tile_id)
        tt = components.tile_types[t]
        colour.append(c)
        ttype.append(t)
        flowers.append(tt.flowers[k])
        needs.append(int(tt.needs_same_colour_link))
        meca.append(int(tt.exchange_on_free))
        conduits.append([list(q) for q in tt.conduits])
    for _ in range(2):  # the two Sources (A13: no colour, no type)
        colour.append(255)
        ttype.append(255)
        flowers.append(0)
        needs.append(0)
        meca.append(0)
        conduits.append([list(q) for q in components.source_conduits])
    kernel.load_components(colour, ttype, flowers, needs, meca, conduits)
