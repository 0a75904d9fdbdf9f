"""Loads and validates ``components.toml``: boards (sign colours), market-card shapes, order
cards, the bag and the bonus of each colour. A malformed file is rejected with a
ComponentDataError naming the entry; a valid one is copied into the kernel's static tables."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COLOUR_LETTERS = "RYGBP"
COLOUR_NAMES = ("red", "yellow", "green", "blue", "purple")
BONUS_KINDS = ("swap_player", "move_pawn", "take_order", "swap_market", "plus3")
# Sizes fixed by the state layout (kernel.pxd).
N_BOARDS = 5
N_SPACES = 15
N_SHAPES = 19
N_ORDERS = 82
MAX_TILES_PER_COLOUR = 29
DEFAULT_PATH = Path(__file__).with_name("components.toml")


class ComponentDataError(ValueError):
    """The component data file is malformed; the message names the entry."""


@dataclass(frozen=True)
class Board:
    name: str
    signs: tuple[int, ...]
    """Sign colour index of each land space 0..14 (column k // 5, row k % 5)."""
    extra_personal_orders: int
    """Personal orders dealt at setup on top of the usual one (S5: the blue board)."""


@dataclass(frozen=True)
class Shape:
    name: str
    cells: tuple[tuple[int, int], ...]
    """Four (row, column) offsets from the card's top-left, seen from the player's seat."""


@dataclass(frozen=True)
class Components:
    tiles_per_colour: int
    bonus_by_colour: tuple[int, ...]
    """Index into BONUS_KINDS per colour index."""
    boards: tuple[Board, ...]
    shapes: tuple[Shape, ...]
    orders: tuple[tuple[int, ...], ...]
    """Flowers each order needs, as counts per colour index."""

    def order_text(self, order: int) -> str:
        """'RRY': the order's flowers as colour letters."""
        return "".join(COLOUR_LETTERS[c] * n for c, n in enumerate(self.orders[order]))

    def card_name(self, card: int) -> str:
        """'L-a/2': shape name / highlighted box (0-based index into the shape's cells)."""
        return f"{self.shapes[card // 4].name}/{card % 4}"

    def order_kind(self, order: int) -> int:
        """The lowest order id with the same flowers (interchangeable copies)."""
        return self.orders.index(self.orders[order])


def _colour(letter: Any, where: str) -> int:
    if not isinstance(letter, str) or letter not in COLOUR_LETTERS or len(letter) != 1:
        raise ComponentDataError(f"{where}: {letter!r} is not a colour letter ({', '.join(COLOUR_LETTERS)})")
    return COLOUR_LETTERS.index(letter)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_boards(raw_boards: Any) -> tuple[Board, ...]:
    if not isinstance(raw_boards, list) or len(raw_boards) != N_BOARDS:
        raise ComponentDataError(f"boards: expected {N_BOARDS} [[boards]] tables")
    boards = []
    names: set[str] = set()
    for i, raw in enumerate(raw_boards):
        where = f"boards[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = raw.get("name")
        if not isinstance(name, str) or not name.isalpha():
            raise ComponentDataError(f"{where}.name: expected a word")
        where = f"boards[{i}] ({name})"
        if name in names:
            raise ComponentDataError(f"{where}.name: duplicate")
        names.add(name)
        signs = raw.get("signs")
        if not isinstance(signs, list) or len(signs) != 3 or not all(isinstance(c, str) and len(c) == 5 for c in signs):
            raise ComponentDataError(f"{where}.signs: expected 3 columns of 5 colour letters")
        colours = tuple(
            _colour(letter, f"{where}.signs[{col}][{row}]")
            for col, column in enumerate(signs)
            for row, letter in enumerate(column)
        )
        extra = raw.get("extra_personal_orders", 0)
        if not _is_int(extra) or not 0 <= extra <= 3:
            raise ComponentDataError(f"{where}.extra_personal_orders: expected an integer 0..3")
        unknown = set(raw) - {"name", "signs", "extra_personal_orders"}
        if unknown:
            raise ComponentDataError(f"{where}: unknown keys {sorted(unknown)}")
        boards.append(Board(name, colours, extra))
    return tuple(boards)


def _parse_shapes(raw_shapes: Any) -> tuple[Shape, ...]:
    if not isinstance(raw_shapes, list) or len(raw_shapes) != N_SHAPES:
        raise ComponentDataError(f"shapes: expected {N_SHAPES} [[shapes]] tables (x 4 highlights = 76 cards)")
    shapes = []
    seen: dict[frozenset[tuple[int, int]], str] = {}
    names: set[str] = set()
    for i, raw in enumerate(raw_shapes):
        where = f"shapes[{i}]"
        if not isinstance(raw, dict):
            raise ComponentDataError(f"{where}: expected a table")
        name = raw.get("name")
        if not isinstance(name, str) or not name or "/" in name or " " in name:
            raise ComponentDataError(f"{where}.name: expected a name without spaces or '/'")
        where = f"shapes[{i}] ({name})"
        if name in names:
            raise ComponentDataError(f"{where}.name: duplicate")
        names.add(name)
        cells = raw.get("cells")
        if (
            not isinstance(cells, list)
            or len(cells) != 4
            or not all(isinstance(c, list) and len(c) == 2 and all(_is_int(v) and 0 <= v <= 3 for v in c) for c in cells)
        ):
            raise ComponentDataError(f"{where}.cells: expected 4 [row, column] pairs with values 0..3")
        pairs = tuple((int(r), int(c)) for r, c in cells)
        cell_set = frozenset(pairs)
        if len(cell_set) != 4:
            raise ComponentDataError(f"{where}.cells: a cell is listed twice")
        # A market card is a tetromino: its four boxes are joined edge to edge.
        reached = {pairs[0]}
        frontier = [pairs[0]]
        while frontier:
            r, c = frontier.pop()
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if nb in cell_set and nb not in reached:
                    reached.add(nb)
                    frontier.append(nb)
        if len(reached) != 4:
            raise ComponentDataError(f"{where}.cells: the boxes are not joined edge to edge")
        # Fixed shapes (no rotation) are compared after moving them to the top-left.
        r0 = min(r for r, _ in pairs)
        c0 = min(c for _, c in pairs)
        normal = frozenset((r - r0, c - c0) for r, c in pairs)
        if normal in seen:
            raise ComponentDataError(f"{where}.cells: the same shape as {seen[normal]}")
        seen[normal] = name
        unknown = set(raw) - {"name", "cells"}
        if unknown:
            raise ComponentDataError(f"{where}: unknown keys {sorted(unknown)}")
        shapes.append(Shape(name, pairs))
    return tuple(shapes)


def _parse_orders(raw_orders: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(raw_orders, list) or len(raw_orders) != N_ORDERS:
        raise ComponentDataError(f"orders: expected a list of {N_ORDERS} orders")
    orders = []
    for i, text in enumerate(raw_orders):
        where = f"orders[{i}]"
        if not isinstance(text, str) or not 2 <= len(text) <= 8:
            raise ComponentDataError(f"{where}: expected 2..8 colour letters (one flower can never fulfil an order)")
        counts = [0] * 5
        for letter in text:
            counts[_colour(letter, where)] += 1
        orders.append(tuple(counts))
    return tuple(orders)


def parse(data: dict[str, Any]) -> Components:
    tiles = data.get("tiles_per_colour")
    if not isinstance(tiles, int) or isinstance(tiles, bool) or not 1 <= tiles <= MAX_TILES_PER_COLOUR:
        raise ComponentDataError(f"tiles_per_colour: expected an integer 1..{MAX_TILES_PER_COLOUR}")
    raw_bonus = data.get("bonus_by_colour")
    if not isinstance(raw_bonus, dict) or set(raw_bonus) != set(COLOUR_LETTERS):
        raise ComponentDataError(f"bonus_by_colour: expected one entry per colour {', '.join(COLOUR_LETTERS)}")
    bonus = []
    for letter in COLOUR_LETTERS:
        kind = raw_bonus[letter]
        if kind not in BONUS_KINDS:
            raise ComponentDataError(f"bonus_by_colour.{letter}: {kind!r} is not one of {', '.join(BONUS_KINDS)}")
        bonus.append(BONUS_KINDS.index(kind))
    boards = _parse_boards(data.get("boards"))
    shapes = _parse_shapes(data.get("shapes"))
    orders = _parse_orders(data.get("orders"))
    unknown = set(data) - {"tiles_per_colour", "bonus_by_colour", "boards", "shapes", "orders"}
    if unknown:
        raise ComponentDataError(f"unknown top-level keys {sorted(unknown)}")
    return Components(tiles, tuple(bonus), boards, shapes, orders)


def load(path: Path = DEFAULT_PATH) -> Components:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ComponentDataError(f"{path}: not valid TOML ({e})") from e
    return parse(data)


def install(components: Components) -> None:
    """Copy the tables into the compiled kernel (static, shared by every state)."""
    from hortus.games.botanists import kernel

    kernel.load_components(
        [list(b.signs) for b in components.boards],
        [b.extra_personal_orders for b in components.boards],
        [[list(cell) for cell in s.cells] for s in components.shapes],
        [list(o) for o in components.orders],
        list(components.bonus_by_colour),
    )
