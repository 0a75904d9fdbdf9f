"""Builds Botanical Lab positions for rule scenarios: name the cards, spaces and scores that
matter; the helper fills in a consistent rest (each seat owns its starter set plus the named
extra cards, taken from the stock; unnamed cards lie in the draw pile; markers and plant stock
follow the board) and validates it by decoding."""

from __future__ import annotations

import zlib
from typing import Any, Mapping

from hortus import games
from hortus.games.base import _CHECKSUM, _HEADER, FORMAT_VERSION, MAGIC
from hortus.games.botanical_lab import game as lab
from hortus.games.botanical_lab import kernel
from hortus.games.botanical_lab.game import BotanicalLabGame

GAME = BotanicalLabGame()
STATUS = {"prepared": lab.SPACE_PREPARED, "leaf": lab.SPACE_LEAF, "flower": lab.SPACE_FLOWER}
CIRCLE, TRIANGLE, SQUARE, HEXAGON, DIAMOND = 1, 2, 3, 4, 5


def space(name: str) -> int:
    """Space id from its notation name, e.g. 'R2(1,0)'."""
    return lab.SPACE_NAMES.index(name)


def kind(name: str) -> int:
    return lab.KIND_NAMES.index(name)


def counts(cards: Mapping[str, int] | None) -> list[int]:
    out = [0] * lab.MAX_KINDS
    for name, n in (cards or {}).items():
        out[kind(name)] += n
    return out


def position(
    *,
    players: int = 2,
    stage: str = "cultivation",
    turn: int = 0,
    start: int = 0,
    rooms: Mapping[int, int] | None = None,
    extra: Mapping[int, Mapping[str, int]] | None = None,
    hands: Mapping[int, Mapping[str, int]] | None = None,
    discards: Mapping[int, Mapping[str, int]] | None = None,
    play: Mapping[str, int] | None = None,
    draw_piles: Mapping[int, Mapping[str, int]] | None = None,
    board: Mapping[str, tuple[Any, ...]] | None = None,
    vp: Mapping[int, int] | None = None,
    final_round: int = 0,
    options: Mapping[str, str] | None = None,
) -> games.State:
    """A validated position. `extra[p]` are cards seat p acquired (beyond its starter set);
    `hands[p]` its hand (default for other seats: the first cards it owns, to a full hand);
    `play` the turn player's play area; `draw_piles[p]` pins the draw pile (the rest of the
    owned cards then go to the discard pile instead); `board` maps space names to
    (status, owner, breed[, step])."""
    opts = GAME.resolve_options(options)
    d = lab.empty_core_dict(players)
    d["acquire_mode"] = lab.ACQUIRE_MODES.index(opts["acquire_mode"])
    d["track_seed_breed"] = lab.TRACK_SEED_BREED.index(opts["track_seed_breed"])
    d["seed_set_scope"] = lab.SEED_SET_SCOPES.index(opts["seed_set_scope"])
    d["stage"] = lab.STAGES.index(stage)
    d["turn_player"] = turn
    d["start_player"] = start
    d["final_round"] = final_round
    extra = extra or {}
    hands = dict(hands or {})
    discards = discards or {}
    draw_piles = draw_piles or {}
    for p in range(players):
        owned = [s + e for s, e in zip(list(lab.STARTER) + [0] * (lab.MAX_KINDS - lab.N_KINDS), counts(extra.get(p)))]
        for k in range(lab.MAX_KINDS):
            d["stock"][k] -= owned[k] - (lab.STARTER[k] if k < lab.N_KINDS else 0)
        if p in hands:
            hand = counts(hands[p])
        else:
            hand = [0] * lab.MAX_KINDS
            left = lab.HAND_SIZE
            for k in range(lab.MAX_KINDS):
                take = min(owned[k], left)
                hand[k] = take
                left -= take
        in_play = counts(play) if p == turn and stage != "over" else [0] * lab.MAX_KINDS
        discard = counts(discards.get(p))
        rest = [owned[k] - hand[k] - in_play[k] - discard[k] for k in range(lab.MAX_KINDS)]
        assert min(rest) >= 0, f"seat {p} does not own the cards named for it"
        if p in draw_piles:
            pile = counts(draw_piles[p])
            discard = [discard[k] + rest[k] - pile[k] for k in range(lab.MAX_KINDS)]
            assert min(discard) >= 0, f"seat {p}'s draw pile holds cards it does not own"
            rest = pile
        d["hand"][p], d["play"][p], d["discard"][p], d["draw"][p] = hand, in_play, discard, rest
        d["room"][p] = (rooms or {}).get(p, 0)
        d["vp"][p] = (vp or {}).get(p, 0)
    for name, entry in (board or {}).items():
        s = space(name)
        status, owner, breed = entry[0], entry[1], entry[2]
        step = entry[3] if len(entry) > 3 else (1 if status == "flower" else 0)
        d["space_status"][s] = STATUS[status]
        d["space_owner"][s] = owner
        d["space_breed"][s] = breed
        d["space_step"][s] = step
        d["markers_free"][owner] -= 1
        if status != "prepared":
            d["plant_stock"][breed - 1] -= 1
    return decode(bytes(kernel.dict_to_core(d)), players)


def decode(core: bytes, players: int) -> games.State:
    body = _HEADER.pack(MAGIC, FORMAT_VERSION, GAME.game_id, 0, players, len(core)) + core
    return GAME.decode(body + _CHECKSUM.pack(zlib.crc32(body)))


def notations(state: games.State) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]


def search_world(state: games.State, seed: int = 0) -> games.State:
    """`state` as a search samples it: determinized for the seat to move, which starts the
    search's order memory (search_actions prunes equivalent orders from there on)."""
    world = state.clone()
    world.kernel_state.determinize(world.current_player, seed)
    return world


def search_notations(state: games.State) -> list[str]:
    """The search's canonical subset (equivalent orders pruned), as notation."""
    return [state.action_to_string(a) for a in state.search_actions()]


def policy_proposals(state: games.State, seeds: int = 200) -> set[str]:
    """Everything the playout policy proposes here over `seeds` seeds (in a search's world)."""
    world = search_world(state)
    return {world.action_to_string(world.kernel_state.rollout_action(seed)) for seed in range(seeds)}


def core(state: games.State) -> dict[str, Any]:
    return lab.core_dict(state)


def end_turn(state: games.State, seat: int, draw_kind: str | None = None) -> None:
    """Let `seat` end every phase at once; chance draws take the first outcome (or `draw_kind`)."""
    while not state.is_terminal() and (state.current_player == seat or state.is_chance()):
        if state.is_chance():
            outcomes = [a for a, _ in state.chance_outcomes()]
            wanted = [a for a in outcomes if draw_kind and state.action_to_string(a).endswith(" " + draw_kind)]
            state.apply(wanted[0] if wanted else outcomes[0])
            if state.current_player != seat and not state.is_chance():
                return
            continue
        state.apply(0)  # END of the current phase
