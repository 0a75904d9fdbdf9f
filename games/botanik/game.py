"""Botanik's Python face: options, notation, validation of positions, views and rendering.

The rules themselves are in ``kernel.pyx``; this module never changes a state, it only reads
the serialized core (``kernel.core_to_dict``) and builds cores (``kernel.dict_to_core``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from hortus.games.base import Game, InvalidPositionError, RuleOption, State
from hortus.games.botanik import components as components_module
from hortus.games.botanik import kernel

COMPONENTS = components_module.load()
components_module.install(COMPONENTS)

# Kernel constants (kernel.pxd), repeated for the Python side.
EMPTY = 255
N_COLOURED = 65
SOURCE_ID = 65
STAGES = ("deal", "draw", "registry", "resolve", "over")
STAGE_DEAL, STAGE_DRAW, STAGE_REGISTRY, STAGE_RESOLVE, STAGE_OVER = range(5)
AT_POOL, AT_ARRIVAL, AT_TOP, AT_SIDE, AT_BURIED, AT_MACHINE, AT_REMOVED, AT_QUEUE = range(8)
STATUS_NAMES = ("pool", "arrival", "top", "side", "buried", "machine", "removed", "queue")
ACT_REG, ACT_MACH, ACT_MECA, ACT_ORDER, ACT_DRAW = 0x0000, 0x4000, 0x8000, 0xC000, 0xD000
CLOSURE_RULES = ("open_end", "no_cycles", "both")
GROUP_ADJACENCY = ("orthogonal", "pipe")
SIDES = "NESW"
DX = (0, 1, 0, -1)
DY = (-1, 0, 1, 0)
# Machine-drawing codes: colours are upper case, types lower case, and no letter is used by
# both (whatever the case), so `Pt3` (purple plant, 3 flowers) cannot be misread.
TYPE_LETTERS = {
    "gear": "w",
    "loop": "l",
    "covered_cross": "c",
    "open_cross": "o",
    "plant": "t",
    "vegetable": "v",
    "meca_botanist": "m",
}


def _letters() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(colour letters, type letters), distinct ignoring case: a colour takes the first letter
    of its name still free, a type its letter above or else the first free one of its name."""
    used: set[str] = set()
    types = []
    for tt in COMPONENTS.tile_types:
        preferred = TYPE_LETTERS.get(tt.name, "")
        pick = next(
            (ch for ch in preferred + tt.name + "abcdefghijklmnopqrstuvwxyz" if ch.isalpha() and ch.lower() not in used), "?"
        )
        used.add(pick.lower())
        types.append(pick.lower())
    colours = []
    for name in COMPONENTS.colours:
        pick = next((ch for ch in name + "abcdefghijklmnopqrstuvwxyz" if ch.isalpha() and ch.lower() not in used), "?")
        used.add(pick.lower())
        colours.append(pick.upper())
    return tuple(colours), tuple(types)


COLOUR_CODES, TYPE_CODES = _letters()


def tile_name(tile: int) -> str:
    """'red gear*' (the star marks a flowered copy where copies differ), 'seat 0 source'."""
    if tile >= SOURCE_ID:
        return f"source{tile - SOURCE_ID}"
    colour, type_index, copy = COMPONENTS.tile(tile)
    tt = COMPONENTS.tile_types[type_index]
    star = "*" if len(set(tt.flowers)) > 1 and tt.flowers[copy] else ""
    return f"{COMPONENTS.colours[colour]} {tt.name.replace('_', '-')}{star}"


NAME_WIDTH = max(len(tile_name(t)) for t in range(N_COLOURED))


def tile_code(tile: int) -> str:
    """Three characters for the machine drawing: colour (upper case), type (lower case),
    flowers (a digit, or a space for none)."""
    if tile >= SOURCE_ID:
        return "SRC"
    colour, type_index, copy = COMPONENTS.tile(tile)
    flowers = COMPONENTS.tile_types[type_index].flowers[copy]
    return COLOUR_CODES[colour] + TYPE_CODES[type_index] + (str(flowers) if flowers else " ")


def tile_conduits(tile: int) -> tuple[tuple[int, ...], ...]:
    """The tile's conduits at rotation 0 (sides 0=N..3=W)."""
    if tile >= SOURCE_ID:
        return COMPONENTS.source_conduits
    return COMPONENTS.tile_types[COMPONENTS.tile(tile)[1]].conduits


def pipes_name(tile: int, rotation: int) -> str:
    """An orientation named by the sides that carry pipes once turned: 'pipes E,S'; a tile
    with several separate conduits joins each one's sides: 'pipes N,S+E,W'. Two rotations
    get the same name exactly when they are the same orientation (A3)."""
    conduits = sorted(sorted((d + rotation) % 4 for d in q) for q in tile_conduits(tile))
    return "pipes " + "+".join(",".join(SIDES[d] for d in q) for q in conduits)


def key_text() -> str:
    """The legend under the picture (three lines, kept short: the picture travels in every
    answer of the service)."""
    colours = ", ".join(f"{c} {name}" for c, name in zip(COLOUR_CODES, COMPONENTS.colours))
    types = [f"{c} {tt.name.replace('_', '-')}" for c, tt in zip(TYPE_CODES, COMPONENTS.tile_types)]
    half = (len(types) + 1) // 2
    return (
        f"Key: {colours}; {', '.join(types[:half])},\n"
        f"     {', '.join(types[half:])}; digit = flowers; SRC = Source;\n"
        "     * = the flowered copy (red gear*); 'pipes E,S' = the sides with pipes; x right, y down."
    )


def is_meca(tile: int) -> bool:
    return tile < N_COLOURED and COMPONENTS.tile_types[COMPONENTS.tile(tile)[1]].exchange_on_free


def links(a: int, b: int) -> bool:
    """K-T2(b): same colour or same type."""
    ca, ta, _ = COMPONENTS.tile(a)
    cb, tb, _ = COMPONENTS.tile(b)
    return ca == cb or ta == tb


class BotanikGame(Game):
    name = "botanik"
    game_id = 2
    min_players = 2
    max_players = 2
    variants = ()
    score_range = (0.0, 110.0)  # at most 65 tiles in groups + 45 flowers
    hides_information = False  # the draw pool's order is never stored: every view is the whole position
    options = {
        "closure_rule": RuleOption(
            "closure_rule",
            "open_end",
            CLOSURE_RULES,
            "A4 'never completely closed': open_end = the Source network keeps an open pipe end; "
            "no_cycles = no placement closes a pipe loop; both = both conditions.",
        ),
        "group_adjacency": RuleOption(
            "group_adjacency",
            "orthogonal",
            GROUP_ADJACENCY,
            "A5 scoring groups: orthogonal = same-colour tiles sharing an edge; pipe = only tiles joined by a pipe.",
        ),
        "first_player": RuleOption("first_player", "0", ("0", "1"), "K-S5: the seat that starts with the Meca pawn (seat A)."),
    }

    def kernel_capsule(self) -> object:
        return kernel.kernel_capsule()

    def initial_core(self, players: int, variant: str | None, options: dict[str, str]) -> bytes:
        first = int(options["first_player"])
        d: dict[str, Any] = {
            "stage": STAGE_DEAL,
            "phase": 0,
            "first_player": first,
            "holder": first,
            "turn_player": first,
            "placed": 0,
            "closure_rule": CLOSURE_RULES.index(options["closure_rule"]),
            "group_adjacency": GROUP_ADJACENCY.index(options["group_adjacency"]),
            "top": [EMPTY] * 5,
            "side": [[EMPTY] * 5, [EMPTY] * 5],
            "arrival": [EMPTY] * 3,
            "status": [AT_POOL] * N_COLOURED,
            "queue": [[], []],
            "order_locked": [0, 0],
            "machines": [[(SOURCE_ID, 0, 0, 0)], [(SOURCE_ID + 1, 0, 0, 0)]],
        }
        return bytes(kernel.dict_to_core(d))

    # --- notation ----------------------------------------------------------------------
    def action_to_string(self, state: State, action: int) -> str:
        d = core_dict(state)
        kind = action & 0xF000
        if kind == ACT_DRAW:
            return f"draw {tile_name(action & 0xFF)}"
        if kind == ACT_REG:
            tile = d["arrival"][(action >> 4) & 3]
            where = "stack" if (action >> 3) & 1 else "side"
            return f"{tile_name(tile)} to {where} {(action & 7) + 1}"
        seat = state.current_player
        queue = d["queue"][seat]
        if kind == ACT_ORDER:
            return f"first {tile_name(queue[action & 3])}"
        if kind == ACT_MECA:
            column = action & 7
            return f"exchange {tile_name(queue[0])} for {tile_name(d['top'][column])} on stack {column + 1}"
        x, y, r = ((action >> 8) & 63) - 32, ((action >> 2) & 63) - 32, action & 3
        return f"build {tile_name(queue[0])} at {x},{y} {pipes_name(queue[0], r)}"

    # --- validation ------------------------------------------------------------------------
    def validate_core(self, core: bytes, players: int, variant: int) -> None:
        if len(core) != kernel.core_size():
            raise InvalidPositionError("position.length", "wrong state size")
        d = kernel.core_to_dict(core)
        validate(d)
        # The derived check needs the rebuilt machine cache: every coordinate is in range now.
        from hortus._ext.engine import KernelState

        ks = KernelState.from_core(self.kernel_capsule(), core)
        if not kernel.pending_decision_ok(ks.raw()):
            raise InvalidPositionError("queue", "the pending tile has no legal option; it should have been removed")

    # --- views -----------------------------------------------------------------------------
    def view(self, state: State, seat: int) -> dict[str, Any]:
        """Botanik hides nothing but the order of the draw pool (never stored), so a seat's
        view is the whole position, with readable names beside the ids."""
        d = core_dict(state)
        return {
            "game": self.name,
            "seat": seat,
            "players": 2,
            "stage": STAGES[d["stage"]],
            "phase": d["phase"],
            "first_player": d["first_player"],
            "holder": d["holder"],
            "turn_player": d["turn_player"],
            "placed": d["placed"],
            "options": {
                "closure_rule": CLOSURE_RULES[d["closure_rule"]],
                "group_adjacency": GROUP_ADJACENCY[d["group_adjacency"]],
            },
            "top": d["top"],
            "side": d["side"],
            "arrival": d["arrival"],
            "queue": d["queue"],
            "order_locked": d["order_locked"],
            "buried": [t for t in range(N_COLOURED) if d["status"][t] == AT_BURIED],
            "removed": [t for t in range(N_COLOURED) if d["status"][t] == AT_REMOVED],
            "machines": [[list(m) for m in machine] for machine in d["machines"]],
            "tile_names": {str(t): tile_name(t) for t in range(N_COLOURED + 2)},
        }

    def core_from_view(self, view: Mapping[str, Any]) -> tuple[bytes, int, int]:
        """The position a view describes (Botanik hides nothing, so exactly one). Every field is
        checked and named on error: unknown fields, per-seat lists with other than two rows, a
        tile listed twice (the later place is named, with the earlier one) and counts that do
        not fit the phase are all refused rather than ignored."""
        unknown = sorted(str(k) for k in view if k not in VIEW_FIELDS)
        if unknown:
            raise InvalidPositionError(unknown[0], "not a field of a Botanik view")
        if view.get("game", "botanik") != "botanik":
            raise InvalidPositionError("game", "this is a Botanik view")
        if view.get("variant") is not None:
            raise InvalidPositionError("variant", "Botanik has no variants")
        # `players` is informative; 0 is what an unset protobuf field reads as.
        players = view.get("players", 2)
        if players not in (0, 2) or isinstance(players, bool):
            raise InvalidPositionError("players", "Botanik is for exactly 2 players")
        seat = _int(view, "seat", 0, 1)
        stage = _field(view, "stage")
        if stage not in STAGES:
            raise InvalidPositionError("stage", f"expected one of {STAGES}")
        options = view.get("options", {})
        if not isinstance(options, Mapping):
            raise InvalidPositionError("options", "expected a mapping")
        for key in options:
            if key not in ("closure_rule", "group_adjacency"):
                raise InvalidPositionError(f"options.{key}", "not a Botanik rule option")
        closure = options.get("closure_rule", "open_end")
        grouping = options.get("group_adjacency", "orthogonal")
        if closure not in CLOSURE_RULES:
            raise InvalidPositionError("options.closure_rule", f"expected one of {CLOSURE_RULES}")
        if grouping not in GROUP_ADJACENCY:
            raise InvalidPositionError("options.group_adjacency", f"expected one of {GROUP_ADJACENCY}")
        names = view.get("tile_names")
        if names is not None:
            if not isinstance(names, Mapping):
                raise InvalidPositionError("tile_names", "expected a mapping of tile id to name")
            for key, name in names.items():
                if not (isinstance(key, str) and key.isdigit() and int(key) < N_COLOURED + 2 and name == tile_name(int(key))):
                    raise InvalidPositionError(f"tile_names[{key!r}]", "does not name that tile")
        top = _tile_list(view, "top", 5)
        side_rows = _per_seat(view, "side")
        queue_rows = _per_seat(view, "queue")
        side = [_tile_list(side_rows, i, 5, f"side[{i}]") for i in range(2)]
        arrival = _tile_list(view, "arrival", 3)
        queue = [_tile_list(queue_rows, i, None, f"queue[{i}]") for i in range(2)]
        for p in range(2):
            if len(queue[p]) > 4:
                raise InvalidPositionError(f"queue[{p}]", "at most 4 pending items")
        machine_rows = _per_seat(view, "machines")
        machines = []
        for p in range(2):
            raw = machine_rows[p]
            if not isinstance(raw, list) or not 1 <= len(raw) <= 40:
                raise InvalidPositionError(f"machines[{p}]", "expected 1..40 tiles, the Source first")
            machine = []
            for i, entry in enumerate(raw):
                if (
                    not isinstance(entry, (list, tuple))
                    or len(entry) != 4
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in entry)
                ):
                    raise InvalidPositionError(f"machines[{p}][{i}]", "expected [tile, x, y, rotation]")
                t, x, y, r = entry
                if not (0 <= t < N_COLOURED + 2 and -32 <= x <= 31 and -32 <= y <= 31 and 0 <= r <= 3):
                    raise InvalidPositionError(f"machines[{p}][{i}]", "value out of range")
                if (t >= N_COLOURED) != (i == 0) or (i == 0 and t != SOURCE_ID + p):
                    raise InvalidPositionError(
                        f"machines[{p}][{i}]", f"seat {p}'s machine starts with its Source ({SOURCE_ID + p}) and holds no other"
                    )
                machine.append((t, x, y, r))
            machines.append(machine)
        order_locked = _per_seat(view, "order_locked")
        # Every coloured tile at most once across the view; the tiles listed nowhere are undrawn.
        status = [AT_POOL] * N_COLOURED
        where: dict[int, str] = {}

        def put(tile: int, code: int, field: str) -> None:
            if tile == EMPTY:
                return
            if tile in where:
                raise InvalidPositionError(field, f"{tile_name(tile)} is also in {where[tile]}")
            where[tile] = field
            status[tile] = code

        for c, t in enumerate(top):
            put(t, AT_TOP, f"top[{c}]")
        for p in range(2):
            for c, t in enumerate(side[p]):
                put(t, AT_SIDE, f"side[{p}][{c}]")
        for i, t in enumerate(arrival):
            put(t, AT_ARRIVAL, f"arrival[{i}]")
        for p in range(2):
            for i, t in enumerate(queue[p]):
                put(t, AT_QUEUE, f"queue[{p}][{i}]")
            for i, (t, *_) in enumerate(machines[p][1:], start=1):
                put(t, AT_MACHINE, f"machines[{p}][{i}]")
        for key, code in (("buried", AT_BURIED), ("removed", AT_REMOVED)):
            for i, t in enumerate(_tile_list(view, key, None)):
                put(t, code, f"{key}[{i}]")
        d = {
            "stage": STAGES.index(stage),
            "phase": _int(view, "phase", 0, 20),
            "first_player": _int(view, "first_player", 0, 1),
            "holder": _int(view, "holder", 0, 1),
            "turn_player": _int(view, "turn_player", 0, 1),
            "placed": _int(view, "placed", 0, 3),
            "closure_rule": CLOSURE_RULES.index(closure),
            "group_adjacency": GROUP_ADJACENCY.index(grouping),
            "top": top,
            "side": side,
            "arrival": arrival,
            "status": status,
            "queue": queue,
            "order_locked": [_int(order_locked, i, 0, 1, f"order_locked[{i}]") for i in range(2)],
            "machines": machines,
        }
        core = bytes(kernel.dict_to_core(d))
        try:
            validate(kernel.core_to_dict(core))
        except InvalidPositionError as e:
            # A view has no status field: a tile listed nowhere is taken as undrawn, so a wrong
            # count of undrawn tiles means tiles are missing from (or too many in) `buried`.
            if e.field.startswith("status"):
                raise InvalidPositionError("buried", f"{e.reason} (tiles listed nowhere are taken as undrawn)") from e
            raise
        return core, 2, seat

    # --- text --------------------------------------------------------------------------------
    def render(self, state: State, seat: int | None = None) -> str:
        d = core_dict(state)
        lines = []
        stage = STAGES[d["stage"]]
        mover = state.current_player
        who = {-1: "chance", -4: "game over"}.get(mover, f"seat {mover}")
        lines.append(
            f"Botanik - phase {min(d['phase'] + 1, 20)}/20 ({stage}), Meca pawn: seat {d['holder']}, "
            f"turn: seat {d['turn_player']}, to decide: {who}"
        )
        # Each cell is as wide as the longest tile name plus two spaces, so two long names in
        # neighbouring columns never run together.
        width = NAME_WIDTH + 2
        header = "".join(f"{'column ' + str(c + 1):<{width}}" for c in range(5))
        lines.append(f"{'':<14}{header}".rstrip())
        for label, row in (("seat 1 side", d["side"][1]), ("central top", d["top"]), ("seat 0 side", d["side"][0])):
            cells = "".join(f"{(tile_name(t) if t != EMPTY else '.'):<{width}}" for t in row)
            lines.append(f"{label:<14}{cells}".rstrip())
        arrival = [tile_name(t) for t in d["arrival"] if t != EMPTY]
        lines.append("Arrival zone: " + (", ".join(arrival) if arrival else "(empty)"))
        for p in range(2):
            if d["queue"][p]:
                lines.append(f"Pending for seat {p}: " + ", ".join(tile_name(t) for t in d["queue"][p]))
        pool = sum(1 for s in d["status"] if s == AT_POOL)
        lines.append(f"Tiles still to draw: {pool}")
        details = kernel.score_details(state.kernel_state.raw())
        for p in range(2):
            points, tiles = details[p]
            lines.append("")
            lines.append(
                f"Machine of seat {p}: {points:.0f} points, {tiles} tile{'s' if tiles != 1 else ''} "
                "piped to the Source (tie-break)"
            )
            lines.extend(_draw_machine(d["machines"][p]))
        if stage == "over":
            lines.append("")
            lines.append(result_text(details))
        lines.append("")
        lines.append(key_text())
        return "\n".join(lines)

    def action_effects(self, state: State, action: int) -> list[str]:
        """What a decision visibly does now: frees, exchanges, removal, points."""
        seat = state.current_player
        if seat < 0:
            return []
        before = core_dict(state)
        scores_before = state.scores()
        after_state = state.clone()
        after_state.apply(action)
        after = core_dict(after_state)
        effects = []
        for p in range(2):
            freed = [t for t in before["side"][p] if t != EMPTY and t not in after["side"][p]]
            for t in freed:
                whose = "your" if p == seat else "the opponent's"
                effects.append(f"frees {whose} {tile_name(t)}")
        removed = [t for t in range(N_COLOURED) if after["status"][t] == AT_REMOVED and before["status"][t] != AT_REMOVED]
        for t in removed:
            effects.append(f"{tile_name(t)} cannot be built and leaves the game")
        gain = after_state.scores()[seat] - scores_before[seat]
        if gain:
            effects.append(f"{gain:+.0f} points in your machine now")
        return effects

    def round_number(self, state: State) -> int | None:
        """The phase (one arrival of three tiles), 1..20."""
        return min(int(core_dict(state)["phase"]) + 1, 20)

    def end_reason(self, state: State) -> str | None:
        """K-E: the game stops once the last tile of the last arrival is placed: the tile supply
        ran out (the only way it ends)."""
        return "supply" if state.is_terminal() else None

    # How the search plays the game per seat count: search.toml beside this file.

    def heuristic(self, state: State, seat: int) -> float:
        """Greedy: current points (K-SC on the machine as it stands) minus the opponent's."""
        scores = state.scores()
        return scores[seat] - scores[1 - seat]


def result_text(details: list[tuple[float, int]]) -> str:
    """K-SC4 in words: the higher total wins; on a tie, the more machine tiles; else a draw."""
    (p0, t0), (p1, t1) = details
    if p0 != p1:
        winner = 0 if p0 > p1 else 1
        return f"Game over: seat {winner} wins, {max(p0, p1):.0f} points to {min(p0, p1):.0f} (machine tiles {t0} and {t1})."
    if t0 != t1:
        winner = 0 if t0 > t1 else 1
        return (
            f"Game over: {p0:.0f} points each; seat {winner} wins the tie-break with "
            f"{max(t0, t1)} machine tiles to {min(t0, t1)}."
        )
    return f"Game over: a draw, {p0:.0f} points and {t0} machine tiles each (play again!)."


def core_dict(state: State) -> dict[str, Any]:
    result: dict[str, Any] = kernel.core_to_dict(state.kernel_state.core())
    return result


VIEW_FIELDS = frozenset(
    {
        "game",
        "seat",
        "players",
        "stage",
        "phase",
        "first_player",
        "holder",
        "turn_player",
        "placed",
        "options",
        "top",
        "side",
        "arrival",
        "queue",
        "order_locked",
        "buried",
        "removed",
        "machines",
        "tile_names",
        "variant",
    }
)


def _field(container: Any, key: Any, field: str | None = None) -> Any:
    """container[key], or an InvalidPositionError naming the missing field."""
    try:
        return container[key]
    except (KeyError, IndexError, TypeError) as e:
        raise InvalidPositionError(field or str(key), "missing") from e


def _per_seat(view: Mapping[str, Any], key: str) -> list[Any]:
    """A per-seat field: a list of exactly two rows (a third row is refused, not ignored)."""
    value = _field(view, key)
    if not isinstance(value, list) or len(value) != 2:
        raise InvalidPositionError(key, "expected one entry per seat (exactly 2)")
    return value


def _int(container: Any, key: Any, lo: int, hi: int, field: str | None = None) -> int:
    value = _field(container, key, field)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidPositionError(field or str(key), f"expected an integer {lo}..{hi}")
    return value


def _tile_list(container: Any, key: Any, length: int | None, field: str | None = None) -> list[int]:
    field = field or str(key)
    value = _field(container, key, field)
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise InvalidPositionError(field, f"expected a list of {length or 'some'} tile ids")
    if length is None and len(value) > 65:
        raise InvalidPositionError(field, "too many tiles")
    for v in value:
        if not isinstance(v, int) or isinstance(v, bool) or not (0 <= v < N_COLOURED or (length is not None and v == EMPTY)):
            raise InvalidPositionError(field, f"{v!r} is not a tile id")
    return list(value)


def _draw_machine(machine: list[tuple[int, int, int, int]]) -> list[str]:
    cells = {(x, y): (t, r) for t, x, y, r in machine}
    xs = [x for _, x, _, _ in machine]
    ys = [y for _, _, y, _ in machine]
    out = []
    header = "      " + "".join(f"{x:^5}" for x in range(min(xs), max(xs) + 1))
    out.append(header)
    for y in range(min(ys), max(ys) + 1):
        rows = ["      ", f"{y:>4}  ", "      "]
        for x in range(min(xs), max(xs) + 1):
            if (x, y) not in cells:
                for i in range(3):
                    rows[i] += "  .  " if i == 1 else "     "
                continue
            t, r = cells[(x, y)]
            exits = kernel.tile_exits(t, r)
            rows[0] += "  |  " if exits & 1 else "     "
            rows[1] += ("-" if exits & 8 else " ") + tile_code(t) + ("-" if exits & 2 else " ")
            rows[2] += "  |  " if exits & 4 else "     "
        out.extend(rows)
    return out


def validate(d: dict[str, Any]) -> None:
    """Every field of a Botanik core, and their consistency, before compiled code reads it."""
    stage = d["stage"]
    if stage > STAGE_OVER:
        raise InvalidPositionError("stage", f"{stage} is not a stage")
    for key in ("first_player", "holder", "turn_player"):
        if d[key] > 1:
            raise InvalidPositionError(key, "expected seat 0 or 1")
    phase, placed = d["phase"], d["placed"]
    if phase > 20:
        raise InvalidPositionError("phase", "at most 20 phases")
    if placed > 3 or (placed == 3 and stage != STAGE_RESOLVE) or (placed == 0 and stage == STAGE_RESOLVE):
        raise InvalidPositionError("placed", "out of range for the stage")
    if d["closure_rule"] >= len(CLOSURE_RULES):
        raise InvalidPositionError("closure_rule", "unknown option value")
    if d["group_adjacency"] >= len(GROUP_ADJACENCY):
        raise InvalidPositionError("group_adjacency", "unknown option value")
    for p in range(2):
        if d["qlen"][p] > 4:
            raise InvalidPositionError(f"queue[{p}]", "at most 4 pending items")
        if d["order_locked"][p] > 1 or (d["order_locked"][p] and d["qlen"][p] < 1):
            raise InvalidPositionError(f"order_locked[{p}]", "expected 0 or 1 (1 only with pending items)")
        if not 1 <= d["n_tiles"][p] <= 40:
            raise InvalidPositionError(f"machines[{p}]", "1..40 tiles (the Source first)")
    # Conservation: every coloured tile exactly once, where its status says.
    where: dict[int, tuple[int, str]] = {}

    def put(tile: int, code: int, field: str) -> None:
        if not 0 <= tile < N_COLOURED:
            raise InvalidPositionError(field, f"{tile} is not a tile id")
        if tile in where:
            raise InvalidPositionError(field, f"{tile_name(tile)} is also in {where[tile][1]}")
        if d["status"][tile] != code:
            raise InvalidPositionError(
                f"status[{tile}]",
                f"{tile_name(tile)} is in {field}, status says {STATUS_NAMES[d['status'][tile]] if d['status'][tile] < 8 else d['status'][tile]}",
            )
        where[tile] = (code, field)

    dealt = 0
    for c, t in enumerate(d["top"]):
        if t == EMPTY:
            if stage != STAGE_DEAL or any(u != EMPTY for u in d["top"][c:]):
                raise InvalidPositionError(f"top[{c}]", "empty stack outside the deal (stacks are dealt in order)")
            break
        dealt += 1
        put(t, AT_TOP, f"top[{c}]")
    for p in range(2):
        for c, t in enumerate(d["side"][p]):
            if t != EMPTY:
                put(t, AT_SIDE, f"side[{p}][{c}]")
                if d["top"][c] == EMPTY or not links(t, d["top"][c]):
                    raise InvalidPositionError(
                        f"side[{p}][{c}]", "a side tile must link with its column's top (else it is freed)"
                    )
    arrived = 0
    for i, t in enumerate(d["arrival"]):
        if t != EMPTY:
            put(t, AT_ARRIVAL, f"arrival[{i}]")
            arrived += 1
    for p in range(2):
        for i, t in enumerate(d["queue"][p]):
            put(t, AT_QUEUE, f"queue[{p}][{i}]")
    for p in range(2):
        machine = d["machines"][p]
        cells: dict[tuple[int, int], tuple[int, int]] = {}
        for i, (t, x, y, r) in enumerate(machine):
            field = f"machines[{p}][{i}]"
            if i == 0:
                if (t, x, y, r) != (SOURCE_ID + p, 0, 0, 0):
                    raise InvalidPositionError(field, f"seat {p}'s machine starts with its Source at 0,0 r0")
                cells[(x, y)] = (t, r)
                continue
            if not -32 <= x <= 31 or not -32 <= y <= 31 or r > 3:
                raise InvalidPositionError(field, "coordinates -32..31 and rotation 0..3")
            put(t, AT_MACHINE, field)
            if is_meca(t):
                raise InvalidPositionError(field, "a Meca-Botanist never enters a machine")
            if (x, y) in cells:
                raise InvalidPositionError(field, f"cell {x},{y} is taken twice")
            if not any((x + DX[k], y + DY[k]) in cells for k in range(4)):
                raise InvalidPositionError(field, "a machine tile must touch an earlier one (K-M1)")
            cells[(x, y)] = (t, r)
        for (x, y), (t, r) in cells.items():
            exits = kernel.tile_exits(t, r)
            for k in range(4):
                other = cells.get((x + DX[k], y + DY[k]))
                if other is None:
                    continue
                facing = kernel.tile_exits(*other) >> ((k + 2) % 4) & 1
                if (exits >> k & 1) != facing:
                    raise InvalidPositionError(
                        f"machines[{p}]", f"pipe mismatch between {x},{y} and its {SIDES[k]} neighbour (K-M1)"
                    )
    for t in range(N_COLOURED):
        code = d["status"][t]
        if code > AT_QUEUE:
            raise InvalidPositionError(f"status[{t}]", f"{code} is not a tile status")
        if code in (AT_POOL, AT_BURIED, AT_REMOVED):
            where[t] = (code, STATUS_NAMES[code])
        elif t not in where:
            raise InvalidPositionError(f"status[{t}]", f"{tile_name(t)} is marked {STATUS_NAMES[code]} but is not there")
    counts = Counter(code for code, _ in where.values())
    pool = counts[AT_POOL]
    # Phase consistency: how many tiles were drawn, who holds the pawn, whose turn it is.
    if stage == STAGE_DEAL:
        if phase or placed or arrived or len(where) != N_COLOURED or pool != N_COLOURED - dealt:
            raise InvalidPositionError("stage", "the deal happens before anything else")
        if any(d["side"][p][c] != EMPTY for p in range(2) for c in range(5)) or any(d["queue"]):
            raise InvalidPositionError("stage", "the deal happens before anything else")
        if any(len(m) != 1 for m in d["machines"]):
            raise InvalidPositionError("machines", "the deal happens before anything else")
    else:
        drawn_this_phase = arrived + placed if stage != STAGE_OVER else 0
        expected_pool = 60 - 3 * phase - drawn_this_phase
        if pool != expected_pool:
            raise InvalidPositionError("status", f"{pool} tiles in the pool, expected {expected_pool} in phase {phase + 1}")
        if stage == STAGE_DRAW and (placed or arrived >= 3 or any(t != EMPTY for t in d["arrival"][arrived:])):
            raise InvalidPositionError("arrival", "arrivals are drawn in order before any placement")
        if stage in (STAGE_REGISTRY, STAGE_RESOLVE) and arrived + placed != 3:
            raise InvalidPositionError("arrival", "the arrival zone holds the 3 tiles not yet placed")
        if stage == STAGE_REGISTRY and any(d["queue"]):
            raise InvalidPositionError("queue", "pending items are resolved before the next placement")
        if stage == STAGE_RESOLVE and not any(d["queue"]):
            raise InvalidPositionError("queue", "a resolve stage waits for a pending item")
        if stage != STAGE_RESOLVE and any(d["order_locked"]):
            raise InvalidPositionError("order_locked", "only while resolving")
        if stage == STAGE_OVER and (phase != 20 or arrived or placed):
            raise InvalidPositionError("phase", "the game ends after phase 20")
        if stage != STAGE_OVER and phase >= 20:
            raise InvalidPositionError("phase", "phase 20 is the last")
        expected_holder = d["first_player"] ^ (phase & 1)
        if d["holder"] != expected_holder:
            raise InvalidPositionError("holder", "the Meca pawn alternates every phase (K-P3)")
        turns = 3 * phase + placed - (1 if stage == STAGE_RESOLVE else 0)
        if d["turn_player"] != d["first_player"] ^ (turns & 1):
            raise InvalidPositionError("turn_player", "turns strictly alternate (K-P2)")
    # Seat-only counts: a seat's side tiles + machine + queue fit the layout.
    for p in range(2):
        if len(d["machines"][p]) + len(d["queue"][p]) > 40:
            raise InvalidPositionError(f"machines[{p}]", "more tiles than a machine can ever hold")
