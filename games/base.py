"""The Python face every game shares: errors, the Game base class and the State object.

A game subclasses :class:`Game` and supplies its compiled kernel (a ``GameKernel`` capsule),
its initial core, its validator, its notation, its views and its text rendering. Everything
else — encoding, legality checks, cloning, chance sampling — is done here, once.
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from hortus._ext.engine import KernelState

if TYPE_CHECKING:
    from pathlib import Path

    from hortus.games.svg import Last
    from hortus.search.settings import SearchSettings

CHANCE = -1
"""``current_player`` at a chance node."""
TERMINAL = -4
"""``current_player`` once the game is over."""
END_REASONS = ("trigger", "supply", "safety")
"""Why a game ended (``Game.end_reason``): the rule's end trigger (a score reached, the last
round played), the supply running out, or the engine's safety end of a game the rules would
let run on."""

MAGIC = b"HRTS"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<4sBBBBH")  # magic, format version, game id, variant, seats, core length
_CHECKSUM = struct.Struct("<I")  # CRC-32 of everything before it


class UnknownGameError(ValueError):
    """No game is registered under that name."""


class InvalidPositionError(ValueError):
    """A position (bytes or view) is malformed; ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = message


class IllegalActionError(ValueError):
    """An action (id or notation) is not legal in this position."""


@dataclass(frozen=True)
class RuleOption:
    """A rule option (a FLAG of the game's decisions file): its default and allowed values."""

    name: str
    default: str
    choices: tuple[str, ...]
    doc: str


@dataclass(frozen=True)
class ReviewThresholds:
    """Game review (``ReviewGame``): a played move that loses at least ``inaccuracy`` against
    the search's best move is an inaccuracy, at least ``mistake`` a mistake, at least
    ``blunder`` a blunder. ``unit``: ``"win_probability"`` (loss of the mover's win
    probability, in [0, 1]) or ``"points"`` (loss of the mover's expected final points, for
    games played solo, where the win share is always 1)."""

    inaccuracy: float
    mistake: float
    blunder: float
    unit: str = "win_probability"

    def label(self, loss: float) -> str:
        """The label of a move that is not the best one and loses `loss` (in ``unit``)."""
        if loss >= self.blunder:
            return "blunder"
        if loss >= self.mistake:
            return "mistake"
        if loss >= self.inaccuracy:
            return "inaccuracy"
        return "good"


class Game(ABC):
    """A registered game: metadata plus the constructors of its states."""

    name: str
    game_id: int  # stable id written in every encoded position
    min_players: int
    max_players: int
    default_players: int = 0
    """Seats of a request that names none (NewGame players 0); 0 = ``min_players``. A game
    whose minimum is a solo variant deals a table of 2 by default, as the others do."""
    variants: tuple[str, ...] = ()
    options: Mapping[str, RuleOption] = {}
    score_range: tuple[float, float] = (float("-inf"), float("inf"))
    """Bounds of any seat's final points (checked by the conformance suite)."""
    hides_information: bool = True
    """Whether a position can hold something a seat cannot see (a hand, a face-down card, a
    stored deck order). False only for a game whose every seat's view is the whole position
    (checked by ``tests/games/test_conformance.py``): its answers may be shared by all
    clients of the answer cache (``hortus.server.cache_scope``)."""

    # --- hooks a game implements -------------------------------------------------------
    @abstractmethod
    def kernel_capsule(self) -> object:
        """The PyCapsule holding this game's ``GameKernel``."""

    @abstractmethod
    def initial_core(self, players: int, variant: str | None, options: dict[str, str]) -> bytes:
        """The core bytes of a new game, at its first (setup) chance node."""

    @abstractmethod
    def validate_core(self, core: bytes, players: int, variant: int) -> None:
        """Raise InvalidPositionError naming the field unless `core` is a consistent state."""

    @abstractmethod
    def action_to_string(self, state: "State", action: int) -> str:
        """Readable notation of a legal action (or chance outcome) in `state`."""

    @abstractmethod
    def view(self, state: "State", seat: int) -> dict[str, Any]:
        """What `seat` can see: a JSON-compatible dict (hidden parts absent or counted)."""

    @abstractmethod
    def core_from_view(self, view: Mapping[str, Any]) -> tuple[bytes, int, int]:
        """A core consistent with `view` (hidden parts filled arbitrarily) + (players, seat)."""

    @abstractmethod
    def render(self, state: "State", seat: int | None = None) -> str:
        """A text picture of the position: with `seat`, what that seat sees (its own hidden
        parts included, the others' as counts); without, the public picture (every hidden part
        as counts), which any player may be shown."""

    def picture(self, state: "State", seat: int, highlight: Sequence[int] = (), last: "Last | None" = None) -> str:
        """An SVG picture of what `seat` sees (conventions in ``hortus.games.svg``: move
        targets carry ``data-action``; `highlight` = a hinted move then its principal
        variation; `last` = the moves one seat just made, marked where they changed the
        board). Drawn by the game folder's ``picture.py`` (``draw(state, seat, highlight,
        last)``); a game without one gets its text picture as SVG."""
        import importlib

        from hortus.games import svg

        name = type(self).__module__.rpartition(".")[0] + ".picture"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            return svg.text_picture(state, seat, highlight, last)
        result: str = module.draw(state, seat, highlight, last)
        return result

    def heuristic(self, state: "State", seat: int) -> float:
        """A cheap evaluation for the greedy bot (higher is better for `seat`)."""
        scores = state.scores()
        others = [v for i, v in enumerate(scores) if i != seat]
        return scores[seat] - (max(others) if others else 0.0)

    def search_settings(self, players: int) -> "SearchSettings":
        """How the search plays this game at `players` seats: the game folder's
        ``search.toml`` (``hortus.search.settings``; docs/search_settings.md), read once."""
        from hortus.search.settings import game_settings

        return game_settings(self, players)

    # The hooks below read search_settings; they stay for callers of the old names.
    def review_thresholds(self, players: int) -> ReviewThresholds:
        """The labels of game review for `players` seats. Default: lichess's thresholds (5, 10
        and 15 win-probability points for an inaccuracy, a mistake, a blunder) for 2 seats,
        scaled by 2 / seats for more: a fair share of the win is 1 / seats, so the same error
        moves a seat's win probability by fewer points. Solo: 3, 8 and 15 expected points."""
        if players < 2:
            return ReviewThresholds(3.0, 8.0, 15.0, unit="points")
        scale = 2.0 / players
        return ReviewThresholds(0.05 * scale, 0.10 * scale, 0.15 * scale)

    def action_effects(self, state: "State", action: int) -> list[str]:
        """Visible, immediate effects of a legal action, in a few words each (for hint
        reasons): e.g. 'frees your red gear'. Default: none."""
        return []

    # --- what the balance lab asks of a game (hortus.balance) ----------------------------
    def round_number(self, state: "State") -> int | None:
        """The round being played, as the rulebook counts them (1-based; at the end, the
        rounds played); None when the state does not keep it."""
        return None

    def end_reason(self, state: "State") -> str | None:
        """Why a finished game ended, one of :data:`END_REASONS`; None before the end or when
        the game does not tell."""
        return None

    def card_names(self) -> tuple[str, ...]:
        """The cards of the supply a designer may remove or swap (``with_components``), in
        the components file's order; () for a game without editable card data."""
        return ()

    def card_of_action(self, state: "State", action: int) -> str | None:
        """The card a legal decision of the mover buys, plays or plants (a name of
        ``card_names``), None for any other decision."""
        return None

    def with_components(
        self, path: "Path | None" = None, *, remove: Sequence[str] = (), swap: Mapping[str, str] | None = None
    ) -> "Game":
        """The same rules over changed components: `path`, a designer's edited components
        file (errors name the file and the field), `remove` cards from the supply, `swap`
        each card A's copies for card B's (``{A: B}``). Not registered: its states are for
        the balance lab, which plays one game at a time per process (a game whose card
        tables live in its compiled kernel installs them when a game starts)."""
        raise ValueError(f"{self.name} has no editable components")

    def variant_code(self, variant: str | None) -> int:
        if variant is None:
            return 0
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r} for {self.name}; known: {list(self.variants)}")
        return self.variants.index(variant) + 1

    # --- shared machinery ---------------------------------------------------------------
    @property
    def num_distinct_actions(self) -> int:
        return int(KernelState(self.kernel_capsule()).num_distinct_actions)

    def resolve_options(self, options: Mapping[str, str] | None) -> dict[str, str]:
        """Defaults completed and every value checked against the option's choices."""
        resolved = {name: opt.default for name, opt in self.options.items()}
        for name, value in (options or {}).items():
            if name not in self.options:
                raise ValueError(f"unknown option {name!r} for {self.name}; known: {sorted(self.options)}")
            if value not in self.options[name].choices:
                raise ValueError(f"option {name}={value!r} not in {list(self.options[name].choices)}")
            resolved[name] = value
        return resolved

    def new_game(
        self,
        players: int = 2,
        seed: int | None = None,
        variant: str | None = None,
        options: Mapping[str, str] | None = None,
    ) -> "State":
        """A new game. With a seed, the setup's chance events are drawn (seeded) up to the
        first decision; without one, the state waits at the setup chance node so that a
        frontend can report what its own shuffle produced."""
        if not self.min_players <= players <= self.max_players:
            raise ValueError(f"{self.name} takes {self.min_players}-{self.max_players} players, not {players}")
        code = self.variant_code(variant)
        core = self.initial_core(players, variant, self.resolve_options(options))
        state = State(self, KernelState.from_core(self.kernel_capsule(), core), players, code)
        if seed is not None:
            state.resolve_chance(random.Random(seed))
        return state

    def decode(self, data: bytes) -> "State":
        """A state from ``State.encode()`` bytes; every field is validated first."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidPositionError("position", "expected bytes")
        data = bytes(data)
        size = len(KernelState(self.kernel_capsule()).core())
        if len(data) < _HEADER.size + _CHECKSUM.size:
            raise InvalidPositionError("position", f"{len(data)} bytes is too short")
        magic, version, game_id, variant, players, core_len = _HEADER.unpack_from(data)
        if magic != MAGIC:
            raise InvalidPositionError("position.magic", "not a hortus position")
        if version != FORMAT_VERSION:
            raise InvalidPositionError("position.version", f"format {version} is not supported (expected {FORMAT_VERSION})")
        if game_id != self.game_id:
            raise InvalidPositionError("position.game_id", f"game id {game_id} is not {self.name} ({self.game_id})")
        if variant > len(self.variants):
            raise InvalidPositionError("position.variant", f"unknown variant code {variant}")
        if not self.min_players <= players <= self.max_players:
            raise InvalidPositionError("position.players", f"{players} seats is out of range")
        if core_len != size or len(data) != _HEADER.size + core_len + _CHECKSUM.size:
            raise InvalidPositionError("position.length", f"expected a {size}-byte state")
        body = data[: _HEADER.size + core_len]
        (checksum,) = _CHECKSUM.unpack_from(data, _HEADER.size + core_len)
        if zlib.crc32(body) != checksum:
            raise InvalidPositionError("position.checksum", "checksum mismatch (corrupted bytes)")
        core = data[_HEADER.size : _HEADER.size + core_len]
        self.validate_core(core, players, variant)
        return State(self, KernelState.from_core(self.kernel_capsule(), core), players, variant)

    def from_view(self, view: Mapping[str, Any], seed: int = 0) -> "State":
        """A full state consistent with a seat's view, hidden parts sampled with `seed`."""
        if not isinstance(view, Mapping):
            raise InvalidPositionError("view", "expected a mapping")
        core, players, seat = self.core_from_view(view)
        variant = self.variant_code(view.get("variant"))
        self.validate_core(core, players, variant)
        ks = KernelState.from_core(self.kernel_capsule(), core)
        ks.determinize(seat, seed & 0xFFFFFFFFFFFFFFFF)
        return State(self, ks, players, variant)

    def __repr__(self) -> str:
        return f"<Game {self.name} {self.min_players}-{self.max_players} players>"


class State:
    """A position of one game. Mutable: ``apply`` changes it in place; ``clone`` copies."""

    __slots__ = ("game", "kernel_state", "num_players", "variant_code")

    def __init__(self, game: Game, kernel_state: KernelState, players: int, variant_code: int) -> None:
        self.game = game
        self.kernel_state = kernel_state
        self.num_players = players
        self.variant_code = variant_code

    @property
    def current_player(self) -> int:
        """The seat that decides next, ``CHANCE`` or ``TERMINAL``."""
        return int(self.kernel_state.current_player())

    def is_terminal(self) -> bool:
        return self.current_player == TERMINAL

    def is_chance(self) -> bool:
        return self.current_player == CHANCE

    def legal_actions(self) -> list[int]:
        """Legal decisions in ascending order ([] at chance and terminal states)."""
        if self.current_player < 0:
            return []
        return list(self.kernel_state.legal_actions())

    def search_actions(self) -> list[int]:
        """The canonical subset of ``legal_actions`` that the search expands (equivalent
        orderings of commuting moves pruned); for the search and its tests only: the public
        surface offers and accepts every legal action."""
        if self.current_player < 0:
            return []
        return list(self.kernel_state.search_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``[(action, probability)]`` at a chance node, else ``[]``."""
        return list(self.kernel_state.chance_outcomes())

    def apply(self, action: int) -> None:
        """Apply a legal decision or chance outcome; IllegalActionError otherwise."""
        if isinstance(action, bool) or not isinstance(action, int):
            raise IllegalActionError(f"action must be an int, not {type(action).__name__}")
        if not -(2**31) <= action < 2**31 or not self.kernel_state.apply(action):
            raise IllegalActionError(f"action {action} is not legal here")

    def apply_text(self, text: str) -> int:
        """Parse notation, apply it and return the action id."""
        action = self.parse_action(text)
        self.apply(action)
        return action

    def draw_chance(self, seed: int) -> int:
        """One outcome of this chance node drawn with its own odds from `seed` (not applied)."""
        if not self.is_chance():
            raise IllegalActionError("not a chance node: there is no outcome to draw")
        return int(self.kernel_state.sample_chance(seed & 0xFFFFFFFFFFFFFFFF))

    def resolve_chance(self, rng: random.Random) -> None:
        """Draw chance outcomes (seeded by `rng`) until a decision or the end."""
        while self.current_player == CHANCE:
            self.kernel_state.apply(self.kernel_state.sample_chance(rng.getrandbits(64)))

    def action_to_string(self, action: int) -> str:
        if action not in self.legal_actions() and action not in dict(self.chance_outcomes()):
            raise IllegalActionError(f"action {action} is not legal here")
        return self.game.action_to_string(self, action)

    def parse_action(self, text: str) -> int:
        """The legal action whose notation is `text` (case and spacing are forgiven)."""
        wanted = " ".join(str(text).lower().split())
        candidates = self.legal_actions() or [a for a, _ in self.chance_outcomes()]
        for action in candidates:
            if " ".join(self.game.action_to_string(self, action).lower().split()) == wanted:
                return action
        raise IllegalActionError(f"{text!r} is not a legal action here")

    def scores(self) -> list[float]:
        """Points per seat (final at the end; the current standing before)."""
        return [float(v) for v in self.kernel_state.scores()]

    def returns(self) -> list[float]:
        """Win share per seat at the end: 1 sole winner, 1/k in a k-way tie, 0 otherwise."""
        return [float(v) for v in self.kernel_state.returns()]

    def round_number(self) -> int | None:
        """The round being played (1-based; at the end, the rounds played); None when the
        game does not keep count."""
        return self.game.round_number(self)

    def end_reason(self) -> str | None:
        """Why the game ended (one of ``END_REASONS``); None before the end or when the game
        does not tell."""
        return self.game.end_reason(self) if self.is_terminal() else None

    def clone(self) -> "State":
        return State(self.game, self.kernel_state.clone(), self.num_players, self.variant_code)

    def __copy__(self) -> "State":
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> "State":
        return self.clone()

    def encode(self) -> bytes:
        """Compact bytes: header (magic, version, game id, variant, seats), state, CRC-32."""
        core = bytes(self.kernel_state.core())
        body = _HEADER.pack(MAGIC, FORMAT_VERSION, self.game.game_id, self.variant_code, self.num_players, len(core)) + core
        return body + _CHECKSUM.pack(zlib.crc32(body))

    def view(self, seat: int) -> dict[str, Any]:
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} is not in 0..{self.num_players - 1}")
        return self.game.view(self, seat)

    def hidden_chance_outcomes(self, seat: int) -> frozenset[int]:
        """The chance outcomes here that `seat` cannot tell apart from another one: its view
        after them equals its view after some other outcome (a card drawn into another
        seat's hand, say). Empty at decision nodes."""
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} is not in 0..{self.num_players - 1}")
        groups: dict[str, list[int]] = {}
        for action, _ in self.chance_outcomes():
            child = self.clone()
            child.apply(action)
            groups.setdefault(json.dumps(child.view(seat), sort_keys=True), []).append(action)
        return frozenset(a for group in groups.values() if len(group) > 1 for a in group)

    def chance_outcomes_seen_by(self, seat: int, worlds: int = 32) -> tuple[list[tuple[int, float, str]], float]:
        """The chance outcomes here as `seat` can know them: ``(visible, hidden_total)``.

        ``visible`` lists ``(action, probability, notation)`` for the outcomes `seat` can tell
        apart from every other one, each with its probability *given that seat's view*: the
        mean over up to `worlds` states re-dealt from the view (seeded by the view itself),
        because the true odds of, say, a deck draw depend on cards in other hands that the
        seat cannot see (exact when eight re-deals agree, as for a public bag). ``hidden_total`` is the
        total probability of the outcomes it cannot tell apart (a card drawn into another
        hand), which are not listed. Everything returned is a function of ``view(seat)``
        alone, so it is identical across re-deals of what the seat cannot see."""
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} is not in 0..{self.num_players - 1}")
        if not self.is_chance():
            return [], 0.0
        view = self.view(seat)
        key = json.dumps(view, sort_keys=True)
        base_seed = zlib.crc32(key.encode())
        worlds_seen: list[State] = []
        per_world: list[list[tuple[int, float]]] = []
        for w in range(worlds):
            world = self.game.from_view(view, seed=(base_seed << 8) + w)
            worlds_seen.append(world)
            per_world.append(world.chance_outcomes())
            if w == 7 and all(entry == per_world[0] for entry in per_world):
                # Eight re-deals agree: the draw does not depend on what the seat cannot see
                # (a public bag, say); its odds are exact and more worlds would add nothing.
                break
        notation: dict[int, str] = {}
        for world, outcomes in zip(worlds_seen, per_world):
            for action, _ in outcomes:
                notation.setdefault(action, world.action_to_string(action))
        # An outcome is hidden from `seat` when its view after it equals its view after a
        # different outcome. All re-deals start from the same view, so the view after an
        # outcome is compared across re-deals too: a card drawn into another hand is hidden
        # even where a re-deal leaves only one card it could be. One view per outcome (the
        # first re-deal that has it) is enough, and keeps this cheap.
        after: dict[str, set[int]] = {}
        seen_after: dict[int, str] = {}
        for world, outcomes in zip(worlds_seen, per_world):
            for action, _ in outcomes:
                if action not in seen_after:
                    child = world.clone()
                    child.apply(action)
                    seen_after[action] = json.dumps(child.view(seat), sort_keys=True)
                    after.setdefault(seen_after[action], set()).add(action)
        hidden = {a for a, v in seen_after.items() if len(after[v]) > 1}
        visible: dict[int, float] = {}
        hidden_total = 0.0
        for outcomes in per_world:
            for action, probability in outcomes:
                if action in hidden:
                    hidden_total += probability / len(per_world)
                else:
                    visible[action] = visible.get(action, 0.0) + probability / len(per_world)
        # Means of identical per-world figures: round off the float noise so a draw that does
        # not depend on hidden cards reads exactly as its true odds.
        return [(a, round(p, 12), notation[a]) for a, p in sorted(visible.items())], round(hidden_total, 12)

    def render(self, seat: int | None = None) -> str:
        if seat is not None and not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} is not in 0..{self.num_players - 1}")
        return self.game.render(self, seat)

    def picture(self, seat: int, highlight: Sequence[int] = (), last: "Last | None" = None) -> str:
        """An SVG picture of what `seat` sees; its own legal moves are clickable
        (``data-action``), `highlight` marks a hinted move and its principal variation,
        `last` the elements the last turn's moves changed (class ``last``)."""
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} is not in 0..{self.num_players - 1}")
        return self.game.picture(self, seat, highlight, last)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and other.game is self.game and other.encode() == self.encode()

    def __hash__(self) -> int:
        return hash(self.encode())

    def __repr__(self) -> str:
        return f"<{self.game.name} state, to move: {self.current_player}>"
