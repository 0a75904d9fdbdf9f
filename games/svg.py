"""Shared pieces of the seat pictures (``State.picture``): a tiny SVG builder and the move
targets every game's ``picture.py`` uses.

Conventions every picture follows, so any frontend can use them the same way:

- the root ``<svg>`` has ``class="hortus-picture"``, ``data-game`` and ``data-seat``;
- an element that stands for moves carries ``data-action``: the action ids it stands for,
  separated by spaces (one id: clicking it is that move; several: the frontend asks which,
  e.g. the rotations of a tile built on one cell), plus ``class="act"``;
- moves the drawing has no element for are drawn as labelled buttons in a "moves" strip at
  the bottom, so every legal move of the viewing seat has an element;
- ``highlight`` (the hinted move, then its principal variation) adds the class ``hint`` to
  the first move's elements and ``pv`` to the later ones';
- ``last`` (the moves one seat just made, by notation) adds the class ``last`` and
  ``data-last="<notation>"`` to the elements those moves placed, took or changed, so a player
  sees what the other seats did.

Only the viewing seat's own moves become targets: the moves of another seat depend on its
hand, which the viewing seat does not see (no-leak: a picture is a function of the seat's
view alone; ``tests/test_pictures.py`` checks it over re-deals).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:
    from hortus.games.base import State

STYLE = (
    ".hortus-picture{font-family:system-ui,sans-serif;font-size:13px}"
    ".hortus-picture text{fill:#1d2b1f}"
    ".hortus-picture .small{font-size:10px}"
    ".hortus-picture .title{font-size:15px;font-weight:bold}"
    # Decorations never take a click: a tile drawn over a target must not hide it.
    ".hortus-picture *{pointer-events:none}"
    ".hortus-picture .act,.hortus-picture .act *{pointer-events:auto}"
    ".hortus-picture .act{cursor:pointer}"
    ".hortus-picture .act>rect:first-of-type{stroke:#2a7d3a;stroke-width:2.5;stroke-dasharray:5 3}"
    ".hortus-picture .act:hover>rect:first-of-type,.hortus-picture .act:focus>rect:first-of-type{stroke:#0b4f1b;stroke-width:4}"
    ".hortus-picture .hint>rect:first-of-type{stroke:#e08a00;stroke-width:5;stroke-dasharray:none}"
    ".hortus-picture .pv>rect:first-of-type{stroke:#b07be0;stroke-width:4;stroke-dasharray:2 2}"
    ".hortus-picture .last>rect:first-of-type{stroke:#1565c0;stroke-width:4;stroke-dasharray:none}"
)

COLOURS = {
    "red": "#d9473f",
    "yellow": "#f2c12e",
    "blue": "#3f7fd9",
    "green": "#4aa35a",
    "purple": "#9a5cc6",
    "white": "#f4f1e8",
    "orange": "#e98a2c",
    "pink": "#e88fb8",
}


def colour(name: str) -> str:
    """Fill colour of a named game colour (grey when the data names an unknown one)."""
    return COLOURS.get(name.lower(), "#9aa59b")


def esc(text: object) -> str:
    return escape(str(text), quote=True)


@dataclass(frozen=True)
class Last:
    """The moves one seat just made (its last turn), by their public notation: the picture of
    the position they led to marks what they changed. Given by the caller (the frontend saw
    them applied), so a picture stays a function of the seat's view and its request."""

    seat: int
    notations: tuple[str, ...] = ()

    def find(self, predicate: Callable[[str], bool]) -> str | None:
        """The latest of the moves that `predicate` accepts (None when none does)."""
        for text in reversed(self.notations):
            if predicate(text):
                return text
        return None


class Moves:
    """The viewing seat's legal moves and their notation; elements claim moves by notation
    (or id), and whatever no element claimed is drawn in the moves strip. ``last`` says which
    element the last turn's moves changed (``attrs(..., last=...)``)."""

    def __init__(self, state: "State", seat: int, highlight: Sequence[int] = (), last: Last | None = None) -> None:
        self.last = last or Last(-1)
        self.notation: dict[int, str] = {}
        if state.current_player == seat:
            for action in state.legal_actions():
                self.notation[action] = state.game.action_to_string(state, action)
        self.by_text = {text: action for action, text in self.notation.items()}
        self.claimed: set[int] = set()
        self.hint = highlight[0] if highlight else None
        self.pv = set(highlight[1:])

    def find(self, text: str) -> list[int]:
        """The move whose notation is exactly `text` (as a list, empty if not legal)."""
        action = self.by_text.get(text)
        return [] if action is None else [action]

    def matching(self, predicate: Callable[[str], bool]) -> list[int]:
        return [a for a, t in self.notation.items() if predicate(t)]

    def was_last(self, predicate: Callable[[str], bool], seat: int | None = None) -> str | None:
        """The last turn's latest move that `predicate` accepts, when that turn was `seat`'s
        (any seat's when None): an element passes it to ``attrs(..., last=...)``."""
        if seat is not None and seat != self.last.seat:
            return None
        return self.last.find(predicate)

    def attrs(self, actions: Iterable[int], last: str | None = None) -> str:
        """Attributes of an element standing for `actions` ('' when there are none), marked
        as changed by the last turn's move `last` when given."""
        ids = sorted(set(actions))
        mark = f' data-last="{esc(last)}"' if last else ""
        if not ids:
            return f' class="last"{mark}' if last else ""
        self.claimed.update(ids)
        classes = ["act"]
        if self.hint is not None and self.hint in ids:
            classes.append("hint")
        elif self.pv.intersection(ids):
            classes.append("pv")
        if last:
            classes.append("last")
        label = "; ".join(self.notation[a] for a in ids[:6]) + ("; ..." if len(ids) > 6 else "")
        return (
            f' class="{" ".join(classes)}" data-action="{" ".join(map(str, ids))}"{mark}'
            f' tabindex="0" role="button" aria-label="{esc(label)}"'
        )

    def unclaimed(self) -> list[int]:
        return [a for a in sorted(self.notation) if a not in self.claimed]


class Svg:
    """Appends SVG elements to a list; ``finish`` wraps them with the size actually used."""

    def __init__(self, game: str, seat: int, title: str) -> None:
        self.parts: list[str] = []
        self.game = game
        self.seat = seat
        self.width = 200.0
        self.height = 0.0
        self.text(10, 20, title, cls="title")
        self.y = 34.0  # next free row for callers that stack sections

    def _grow(self, x: float, y: float) -> None:
        self.width = max(self.width, x)
        self.height = max(self.height, y)

    def raw(self, markup: str) -> None:
        self.parts.append(markup)

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str = "none", stroke: str = "#5b6b5d", rx: float = 3, extra: str = ""
    ) -> None:
        self._grow(x + w + 6, y + h + 6)
        self.parts.append(
            f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="{rx:g}" fill="{fill}" stroke="{stroke}"{extra}/>'
        )

    def circle(self, x: float, y: float, r: float, fill: str, stroke: str = "#333", extra: str = "") -> None:
        self._grow(x + r + 6, y + r + 6)
        self.parts.append(f'<circle cx="{x:g}" cy="{y:g}" r="{r:g}" fill="{fill}" stroke="{stroke}"{extra}/>')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#333", width: float = 2, extra: str = "") -> None:
        self._grow(max(x1, x2) + 6, max(y1, y2) + 6)
        self.parts.append(
            f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="{stroke}" stroke-width="{width:g}"{extra}/>'
        )

    def polygon(self, points: Sequence[tuple[float, float]], fill: str, stroke: str = "#333", extra: str = "") -> None:
        self._grow(max(p[0] for p in points) + 6, max(p[1] for p in points) + 6)
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.parts.append(f'<polygon points="{coords}" fill="{fill}" stroke="{stroke}"{extra}/>')

    def text(self, x: float, y: float, content: object, cls: str = "", anchor: str = "start", extra: str = "") -> None:
        # Rough width estimate (7 px a character) so the view box includes long labels.
        chars = len(str(content))
        left = x - (chars * 7 if anchor == "end" else chars * 3.5 if anchor == "middle" else 0)
        self._grow(left + chars * 7 + 6, y + 6)
        c = f' class="{cls}"' if cls else ""
        a = f' text-anchor="{anchor}"' if anchor != "start" else ""
        self.parts.append(f'<text x="{x:g}" y="{y:g}"{c}{a}{extra}>{esc(content)}</text>')

    def open(self, attrs: str = "", title: str | None = None) -> None:
        """Starts a group (a move target when `attrs` come from ``Moves.attrs``)."""
        self.parts.append(f"<g{attrs}>")
        if title:
            self.parts.append(f"<title>{esc(title)}</title>")

    def close(self) -> None:
        self.parts.append("</g>")

    def wrapped(self, x: float, y: float, content: str, width_chars: int, cls: str = "small", line_height: float = 12) -> float:
        """Text broken into lines of at most `width_chars`; returns the y after the last."""
        words = content.split()
        line = ""
        for word in words:
            if line and len(line) + 1 + len(word) > width_chars:
                self.text(x, y, line, cls=cls)
                y += line_height
                line = word
            else:
                line = f"{line} {word}" if line else word
        if line:
            self.text(x, y, line, cls=cls)
            y += line_height
        return y

    def moves_strip(self, moves: Moves, y: float | None = None) -> None:
        """Buttons for the moves no element of the drawing claimed."""
        rest = moves.unclaimed()
        if not rest:
            return
        y = self.height + 8 if y is None else y
        self.parts.append('<g class="moves-strip">')
        self.text(10, y + 12, "Moves:", cls="title")
        x, row_y = 80.0, y
        for action in rest:
            label = moves.notation[action]
            w = 14 + 7 * len(label)
            if x + w > max(self.width, 760) and x > 80:
                x, row_y = 80.0, row_y + 30
            attrs = moves.attrs([action])
            self.open(attrs)
            self.rect(x, row_y, w, 24, fill="#eef5ec", rx=6)
            self.text(x + 7, row_y + 16, label)
            self.close()
            x += w + 6
        self.parts.append("</g>")

    def finish(self) -> str:
        w, h = int(self.width + 0.5), int(self.height + 0.5)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="hortus-picture" data-game="{esc(self.game)}" '
            f'data-seat="{self.seat}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img">'
            f"<style>{STYLE}</style>" + "".join(self.parts) + "</svg>"
        )


def who(state: "State") -> str:
    mover = state.current_player
    if mover == -4:
        return "game over"
    if mover == -1:
        return "chance (a draw)"
    return f"seat {mover} to move"


def text_picture(state: "State", seat: int, highlight: Sequence[int] = (), last: Last | None = None) -> str:
    """The fallback picture of a game without a ``picture.py``: its text picture for `seat`,
    the last turn's moves as a line, plus every move of that seat as a button."""
    svg = Svg(state.game.name, seat, f"{state.game.name} - seat {seat} - {who(state)}")
    y = 40.0
    if last and last.notations:
        svg.open(f' class="last" data-last="{esc(last.notations[-1])}"')
        svg.rect(6, y - 13, 12 + 7 * 40, 18, fill="none", stroke="none")
        svg.text(10, y, f"Last, seat {last.seat}: " + "; ".join(last.notations[-4:]))
        svg.close()
        y += 18
    for line in state.render(seat).splitlines():
        svg.text(10, y, line, extra=' xml:space="preserve" font-family="monospace"')
        y += 15
    svg.moves_strip(Moves(state, seat, highlight), y + 10)
    return svg.finish()
