"""Builds Botanik positions for rule scenarios: name the tiles that matter, the helper fills in
a consistent rest (phase, pool, buried tiles, who holds the pawn) and validates it by decoding."""

from __future__ import annotations

from typing import Any

from hortus import games
from hortus.games.botanik import game as bk
from hortus.games.botanik import kernel

COLOURS = ("yellow", "red", "blue", "green", "purple")
KINDS = {
    "gear*": 0,
    "gear": 1,
    "gear2": 2,
    "loop*": 3,
    "loop": 4,
    "loop2": 5,
    "cc*": 6,
    "cc": 7,
    "cc2": 8,
    "open": 9,
    "plant": 10,
    "veg": 11,
    "meca": 12,
}
E = bk.EMPTY


def t(colour: str, kind: str) -> int:
    """Tile id: t('red', 'gear') -> the red Gear without flower."""
    return COLOURS.index(colour) * 13 + KINDS[kind]


def machine(seat: int, *tiles: tuple[int, int, int, int]) -> list[tuple[int, int, int, int]]:
    return [(bk.SOURCE_ID + seat, 0, 0, 0), *tiles]


def position(
    *,
    me: int = 0,
    stage: str = "registry",
    top: list[int],
    side: tuple[list[int], list[int]] | None = None,
    arrival: list[int] | None = None,
    placed: int = 0,
    queue: tuple[list[int], list[int]] = ([], []),
    machines: tuple[list[Any], list[Any]] | None = None,
    options: dict[str, str] | None = None,
) -> games.State:
    """A validated state where `me` is the turn player (registry/resolve) or the game is over."""
    g = games.get("botanik")
    side = side or ([E] * 5, [E] * 5)
    arrival = arrival if arrival is not None else []
    arrival = arrival + [E] * (3 - len(arrival))
    machines = machines or (machine(0), machine(1))
    used = [x for x in top if x != E] + [x for s in side for x in s if x != E]
    used += [x for x in arrival if x != E] + [x for q in queue for x in q]
    used += [m[0] for ms in machines for m in ms[1:]]
    assert len(used) == len(set(used)), "a tile is used twice"
    code = bk.STAGES.index(stage)
    arrived = sum(1 for x in arrival if x != E)
    if stage in ("registry", "resolve"):
        placed = 3 - arrived  # the arrival zone holds the tiles of this phase not yet placed
    free = [x for x in range(65) if x not in used]
    if stage == "over":
        phase, expected_pool, placed = 20, 0, 0
    else:
        drawn = arrived + placed
        phase = 0
        while 60 - 3 * phase - drawn > len(free):
            phase += 1
        expected_pool = 60 - 3 * phase - drawn
    assert 0 <= phase <= 20 and expected_pool >= 0
    status = [bk.AT_POOL] * 65
    for x in free[expected_pool:]:
        status[x] = bk.AT_BURIED
    for x in top:
        status[x] = bk.AT_TOP
    for s in side:
        for x in s:
            if x != E:
                status[x] = bk.AT_SIDE
    for x in arrival:
        if x != E:
            status[x] = bk.AT_ARRIVAL
    for q in queue:
        for x in q:
            status[x] = bk.AT_QUEUE
    for ms in machines:
        for m in ms[1:]:
            status[m[0]] = bk.AT_MACHINE
    turns = 3 * phase + placed - (1 if stage == "resolve" else 0)
    first = me ^ (turns & 1)
    opts = g.resolve_options(options)
    d = {
        "stage": code,
        "phase": phase,
        "first_player": first,
        "holder": first ^ (phase & 1),
        "turn_player": me if stage != "over" else first,
        "placed": placed,
        "closure_rule": bk.CLOSURE_RULES.index(opts["closure_rule"]),
        "group_adjacency": bk.GROUP_ADJACENCY.index(opts["group_adjacency"]),
        "top": top,
        "side": [list(s) for s in side],
        "arrival": arrival,
        "status": status,
        "queue": [list(q) for q in queue],
        "order_locked": [0, 0],
        "machines": [list(m) for m in machines],
    }
    core = bytes(kernel.dict_to_core(d))
    from hortus.games.base import _CHECKSUM, _HEADER, FORMAT_VERSION, MAGIC
    import zlib

    body = _HEADER.pack(MAGIC, FORMAT_VERSION, g.game_id, 0, 2, len(core)) + core
    return g.decode(body + _CHECKSUM.pack(zlib.crc32(body)))


def notations(state: games.State) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]
