"""Botanical Lab's Python face: options, notation, validation of positions, views and rendering.

The rules themselves are in ``kernel.pyx``; this module never changes a state, it only reads
the serialized core (``kernel.core_to_dict``) and builds cores (``kernel.dict_to_core``).
"""

from __future__ import annotations

from typing import Any, Mapping

from hortus.games.base import Game, InvalidPositionError, RuleOption, State
from hortus.games.botanical_lab import components as components_module
from hortus.games.botanical_lab import kernel

COMPONENTS = components_module.load()
components_module.install(COMPONENTS)

# Kernel constants (kernel.pxd), repeated for the Python side.
MAX_SEATS = 4
MAX_KINDS = 20
N_BREEDS = 5
N_ROOMS = 3
MAX_ROOM_SPACES = 16
MAX_SPACES = 48
STAGES = ("start", "draw", "development", "cultivation", "sprout", "observation", "over")
STAGE_START, STAGE_DRAW, STAGE_DEVELOP, STAGE_CULTIVATE, STAGE_SPROUT, STAGE_OBSERVE, STAGE_OVER = range(7)
RESUMES = ("setup", "development", "cultivation", "turn_end")
RESUME_SETUP, RESUME_DEVELOP, RESUME_CULTIVATE, RESUME_TURN_END = range(4)
SPACE_STATUSES = ("empty", "prepared", "leaf", "flower", "picked")
SPACE_EMPTY, SPACE_PREPARED, SPACE_LEAF, SPACE_FLOWER, SPACE_PICKED = range(5)
CARD_TYPES = components_module.CARD_TYPES
TYPE_SEED, TYPE_FERTILIZER, TYPE_EXPERIMENT, TYPE_SKILL = range(4)
ACQUIRE_MODES = ("threshold", "budget")
TRACK_SEED_BREED = ("false", "true")
SEED_SET_SCOPES = ("all_owned", "piles_only")
BASES: dict[str, int] = kernel.action_bases()

# --- component-derived tables -------------------------------------------------------------
N_KINDS = len(COMPONENTS.cards)
KIND_TYPES = tuple(CARD_TYPES.index(c.card_type) for c in COMPONENTS.cards)
BREED_NAMES = tuple(b.name for b in COMPONENTS.breeds)


def _kind_names() -> tuple[str, ...]:
    """Card names for people (one name per breed): a seed or fertilizer
    is named by the words of its breeds ("circle seed", "circle-triangle fertilizer"), never by
    breed digits or symbols; other cards keep their data name. Data names stay where two kinds
    would share a name."""
    names = []
    for card in COMPONENTS.cards:
        if card.card_type in ("seed", "fertilizer") and card.breeds:
            names.append("-".join(BREED_NAMES[b - 1] for b in card.breeds) + " " + card.card_type)
        else:
            names.append(card.name)
    clash = {n for n in names if names.count(n) > 1}
    return tuple(c.name if n in clash else n for n, c in zip(names, COMPONENTS.cards))


KIND_NAMES = _kind_names()
STARTER = tuple(c.starter for c in COMPONENTS.cards)
STOCK = tuple(c.stock for c in COMPONENTS.cards)
HAND_SIZE = COMPONENTS.hand_size
MARKERS = COMPONENTS.markers_per_player
ROOM_FIRST: list[int] = []
SPACE_ROOM: list[int] = []
SPACE_NAMES: list[str] = []
SPACE_BREEDS: list[tuple[int, ...]] = []
for _r, _room in enumerate(COMPONENTS.rooms):
    ROOM_FIRST.append(len(SPACE_ROOM))
    for _i, _breeds in enumerate(_room.spaces):
        SPACE_ROOM.append(_r)
        SPACE_NAMES.append(f"{_room.name}({_i // _room.cols},{_i % _room.cols})")
        SPACE_BREEDS.append(_breeds)
N_SPACES = len(SPACE_ROOM)
MAX_ACQUISITIONS = max(cards for _, cards in COMPONENTS.acquisition_tiers)
MAX_SKILL_DRAW = max((c.effect.count for c in COMPONENTS.cards if c.effect), default=0)


def _context_free_notation() -> dict[int, str]:
    """Notation of every action whose text does not depend on the position."""
    out: dict[int, str] = {}
    for k, name in enumerate(KIND_NAMES):
        out[BASES["experiment"] + k] = f"play {name}"
        out[BASES["skill"] + k] = f"play {name}"
        out[BASES["acquire"] + k] = f"acquire {name}"
        out[BASES["fertilize"] + k] = f"fertilize with {name}"
        for r, room in enumerate(COMPONENTS.rooms):
            out[BASES["move"] + k * N_ROOMS + r] = f"move to {room.name} with {name}"
        for s in range(N_SPACES):
            out[BASES["seed"] + k * MAX_SPACES + s] = f"prepare {SPACE_NAMES[s]} with {name}"
    for s in range(N_SPACES):
        out[BASES["observe"] + s] = f"observe {SPACE_NAMES[s]}"
    for q in range(MAX_SEATS):
        out[BASES["start"] + q] = f"start player seat {q}"
    return out


NOTATION = _context_free_notation()
TURN_FIELDS = ("acquired", "spent", "growth_breeds", "growth_pending")
# Search-only order memory that older views carried in "turn" (no longer part of a
# position); still accepted in a view, as integers in their old ranges, and ignored.
OBSOLETE_TURN_FIELDS = {"experiment_floor": 255, "acquire_floor": 255, "seed_floor": 255, "late_skill": 1}
POTENTIAL = {SPACE_PREPARED: 0.2, SPACE_LEAF: 0.35, SPACE_FLOWER: 0.5, SPACE_PICKED: 0.5}
END_NOTATION = {STAGE_DEVELOP: "end development", STAGE_CULTIVATE: "end cultivation", STAGE_OBSERVE: "end observation"}


class BotanicalLabGame(Game):
    name = "botanical_lab"
    game_id = 3
    min_players = 2
    max_players = 4
    variants = ()
    score_range = (0.0, 65535.0 + 200.0)  # VP counter bound + any seed-set bonus of 40 seeds
    options = {
        "acquire_mode": RuleOption(
            "acquire_mode",
            "threshold",
            ACQUIRE_MODES,
            "A5/LD3: threshold = each acquired card costs at most the experiment total, which is not "
            "spent; budget = the costs of all cards acquired in the turn add up to at most the total.",
        ),
        "track_seed_breed": RuleOption(
            "track_seed_breed",
            "false",
            TRACK_SEED_BREED,
            "A7: false = a prepared multi-breed space takes its breed when it sprouts (the fertilizer "
            "player chooses among the breeds it grows); true = the seed's breed is recorded when the "
            "space is prepared.",
        ),
        "seed_set_scope": RuleOption(
            "seed_set_scope",
            "all_owned",
            SEED_SET_SCOPES,
            "A11/LE2/LE3: all_owned = seed sets and the tie-break count every card the player owns; "
            "piles_only = only the draw and discard piles (the rulebook's literal 'research documents').",
        ),
    }

    # How the search plays the game per seat count: search.toml beside this file.

    def kernel_capsule(self) -> object:
        return kernel.kernel_capsule()

    def initial_core(self, players: int, variant: str | None, options: dict[str, str]) -> bytes:
        d = empty_core_dict(players)
        d["acquire_mode"] = ACQUIRE_MODES.index(options["acquire_mode"])
        d["track_seed_breed"] = TRACK_SEED_BREED.index(options["track_seed_breed"])
        d["seed_set_scope"] = SEED_SET_SCOPES.index(options["seed_set_scope"])
        return bytes(kernel.dict_to_core(d))

    # --- notation ----------------------------------------------------------------------
    def action_to_string(self, state: State, action: int) -> str:
        text = NOTATION.get(action)
        if text is not None:
            return text
        core = state.kernel_state.core()
        stage = core[1]
        if action == BASES["end"]:
            return END_NOTATION.get(stage, "end")
        if BASES["sprout"] <= action <= BASES["no_sprout"]:
            space, _, _ = kernel.sprout_choice(core)
            if action == BASES["no_sprout"]:
                return f"leave {SPACE_NAMES[space]} prepared"
            return f"sprout {SPACE_NAMES[space]} as {BREED_NAMES[action - BASES['sprout']]}"
        if BASES["draw"] <= action < BASES["draw"] + N_KINDS:
            d = core_dict(state)
            verb = "draw" if d["draw_mode"] == 0 else "reveal"
            return f"{verb} {KIND_NAMES[action - BASES['draw']]}"
        raise ValueError(f"action {action} has no notation")

    # --- validation ------------------------------------------------------------------------
    def validate_core(self, core: bytes, players: int, variant: int) -> None:
        if len(core) != kernel.core_size():
            raise InvalidPositionError("position.length", "wrong state size")
        d = kernel.core_to_dict(core)
        validate(d, players)
        if d["stage"] == STAGE_SPROUT:
            _, options, skip = kernel.sprout_choice(core)
            if bin(options).count("1") + int(skip) < 2:
                raise InvalidPositionError(
                    "growth_pending", "the pending sprout has a single option; it is resolved automatically"
                )

    # --- views -----------------------------------------------------------------------------
    def view(self, state: State, seat: int) -> dict[str, Any]:
        """What `seat` sees: everything but the other seats' hands (a count and the public
        multiset hand + draw pile instead) and the order of any draw pile (never stored). Every
        seat's `hand_known` lists the cards everybody knows are in that hand (a draw pile that
        ran dry into it, a typed skill's public reveal): they are never re-dealt."""
        d = core_dict(state)
        n = d["players"]
        seats = []
        for p in range(n):
            info: dict[str, Any] = {
                "vp": d["vp"][p],
                "room": d["room"][p],
                "markers_free": d["markers_free"][p],
                "discard": d["discard"][p][:N_KINDS],
                "play": d["play"][p][:N_KINDS],
                "hand_count": sum(d["hand"][p]),
                "draw_count": sum(d["draw"][p]),
                "hand_known": d["known"][p][:N_KINDS],
            }
            if p == seat:
                info["hand"] = d["hand"][p][:N_KINDS]
                info["draw"] = d["draw"][p][:N_KINDS]
            else:
                info["hand_and_draw"] = [d["hand"][p][k] + d["draw"][p][k] for k in range(N_KINDS)]
            seats.append(info)
        return {
            "game": self.name,
            "seat": seat,
            "players": n,
            "options": {
                "acquire_mode": ACQUIRE_MODES[d["acquire_mode"]],
                "track_seed_breed": TRACK_SEED_BREED[d["track_seed_breed"]],
                "seed_set_scope": SEED_SET_SCOPES[d["seed_set_scope"]],
            },
            "stage": STAGES[d["stage"]],
            "turn_player": d["turn_player"],
            "start_player": d["start_player"],
            "final_round": d["final_round"],
            "draw": {
                "seat": d["draw_seat"],
                "pending": d["draws_pending"],
                "mode": d["draw_mode"],
                "resume": RESUMES[d["resume"]],
            },
            "turn": {key: d[key] for key in TURN_FIELDS},
            "stock": d["stock"][:N_KINDS],
            "plant_stock": d["plant_stock"],
            "aside": d["aside"][:N_KINDS],
            "spaces": [
                [d["space_status"][s], d["space_owner"][s], d["space_breed"][s], d["space_step"][s]] for s in range(N_SPACES)
            ],
            "seats": seats,
            "kinds": list(KIND_NAMES),
            "space_names": list(SPACE_NAMES),
        }

    def core_from_view(self, view: Mapping[str, Any]) -> tuple[bytes, int, int]:
        try:
            players = _int(view, "players", 2, MAX_SEATS)
            seat = _int(view, "seat", 0, players - 1)
            stage = view["stage"]
            if stage not in STAGES:
                raise InvalidPositionError("stage", f"expected one of {STAGES}")
            options = view.get("options", {})
            d = empty_core_dict(players)
            for key, choices in (
                ("acquire_mode", ACQUIRE_MODES),
                ("track_seed_breed", TRACK_SEED_BREED),
                ("seed_set_scope", SEED_SET_SCOPES),
            ):
                value = options.get(key, self.options[key].default)
                if value not in choices:
                    raise InvalidPositionError(f"options.{key}", f"expected one of {choices}")
                d[key] = choices.index(value)
            d["stage"] = STAGES.index(stage)
            d["turn_player"] = _int(view, "turn_player", 0, players - 1)
            d["start_player"] = _int(view, "start_player", 0, players - 1)
            d["final_round"] = _int(view, "final_round", 0, 1)
            draw = view["draw"]
            d["draw_seat"] = _int(draw, "seat", 0, players - 1, "draw.seat")
            d["draws_pending"] = _int(draw, "pending", 0, 255, "draw.pending")
            d["draw_mode"] = _int(draw, "mode", 0, len(CARD_TYPES), "draw.mode")
            if draw["resume"] not in RESUMES:
                raise InvalidPositionError("draw.resume", f"expected one of {RESUMES}")
            d["resume"] = RESUMES.index(draw["resume"])
            turn = view["turn"]
            if not isinstance(turn, Mapping):
                raise InvalidPositionError("turn", "expected an object")
            for key in TURN_FIELDS:
                d[key] = _int(turn, key, 0, 0xFFFF if key == "growth_pending" else 255, f"turn.{key}")
            for key, hi in OBSOLETE_TURN_FIELDS.items():
                if key in turn:
                    _int(turn, key, 0, hi, f"turn.{key}")
            if view.get("game", self.name) != self.name:
                raise InvalidPositionError("game", f"this is a {self.name} view")
            for key, names in (("kinds", list(KIND_NAMES)), ("space_names", list(SPACE_NAMES))):
                if key in view and view[key] != names:
                    raise InvalidPositionError(key, f"expected {names} (the names this game's data gives)")
            d["stock"] = _counts(view, "stock", N_KINDS) + [0] * (MAX_KINDS - N_KINDS)
            d["plant_stock"] = _counts(view, "plant_stock", N_BREEDS)
            d["aside"] = _counts(view, "aside", N_KINDS) + [0] * (MAX_KINDS - N_KINDS)
            spaces = view["spaces"]
            if not isinstance(spaces, list) or len(spaces) != N_SPACES:
                raise InvalidPositionError("spaces", f"expected {N_SPACES} spaces")
            for s, entry in enumerate(spaces):
                if (
                    not isinstance(entry, list)
                    or len(entry) != 4
                    or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in entry)
                ):
                    raise InvalidPositionError(f"spaces[{s}]", "expected [status, owner, breed, step] bytes")
                for key, value in zip(("space_status", "space_owner", "space_breed", "space_step"), entry):
                    d[key][s] = value
            seats = view["seats"]
            if not isinstance(seats, list) or len(seats) != players:
                raise InvalidPositionError("seats", f"expected {players} seats")
            for p, info in enumerate(seats):
                field = f"seats[{p}]"
                d["vp"][p] = _int(info, "vp", 0, 0xFFFF, f"{field}.vp")
                d["room"][p] = _int(info, "room", 0, N_ROOMS - 1, f"{field}.room")
                d["markers_free"][p] = _int(info, "markers_free", 0, 255, f"{field}.markers_free")
                for zone in ("discard", "play"):
                    d[zone][p] = _counts(info, zone, N_KINDS, f"{field}.{zone}") + [0] * (MAX_KINDS - N_KINDS)
                hand_count = _int(info, "hand_count", 0, 255, f"{field}.hand_count")
                draw_count = _int(info, "draw_count", 0, 255 * N_KINDS, f"{field}.draw_count")
                # Older views have no hand_known (nothing known); a structured view gives [].
                known = info.get("hand_known") or [0] * N_KINDS
                known = _counts({"hand_known": known}, "hand_known", N_KINDS, f"{field}.hand_known")
                if p == seat:
                    hand = _counts(info, "hand", N_KINDS, f"{field}.hand")
                    pile = _counts(info, "draw", N_KINDS, f"{field}.draw")
                    if sum(hand) != hand_count:
                        raise InvalidPositionError(f"{field}.hand_count", f"{hand_count}, but the hand lists {sum(hand)} cards")
                    if sum(pile) != draw_count:
                        raise InvalidPositionError(
                            f"{field}.draw_count", f"{draw_count}, but the draw pile lists {sum(pile)} cards"
                        )
                    both = info.get("hand_and_draw") or [a + b for a, b in zip(hand, pile)]
                    if both != [a + b for a, b in zip(hand, pile)]:
                        raise InvalidPositionError(
                            f"{field}.hand_and_draw", "the viewing seat's hand + draw pile differs from its lists"
                        )
                    for k in range(N_KINDS):
                        if known[k] > hand[k]:
                            raise InvalidPositionError(
                                f"{field}.hand_known", f"{known[k]} {KIND_NAMES[k]} known in a hand of {hand[k]}"
                            )
                else:
                    for hidden in ("hand", "draw"):
                        if info.get(hidden):
                            raise InvalidPositionError(
                                f"{field}.{hidden}", f"seat {p}'s {hidden} is hidden from seat {seat}: give hand_and_draw"
                            )
                    unseen = _counts(info, "hand_and_draw", N_KINDS, f"{field}.hand_and_draw")
                    if hand_count > sum(unseen):
                        raise InvalidPositionError(
                            f"{field}.hand_count", f"{hand_count} cards in hand, but hand_and_draw holds {sum(unseen)}"
                        )
                    if hand_count + draw_count != sum(unseen):
                        raise InvalidPositionError(
                            f"{field}.draw_count",
                            f"{draw_count} + {hand_count} in hand is not the {sum(unseen)} cards of hand_and_draw",
                        )
                    for k in range(N_KINDS):
                        if known[k] > unseen[k]:
                            raise InvalidPositionError(
                                f"{field}.hand_known", f"{known[k]} {KIND_NAMES[k]} known in hand, {unseen[k]} in hand_and_draw"
                            )
                    if sum(known) > hand_count:
                        raise InvalidPositionError(f"{field}.hand_known", f"{sum(known)} known cards in a hand of {hand_count}")
                    # Hidden: the known cards, then any split of the rest of the public multiset
                    # with the right hand size; the base class determinizes it for `seat` afterwards.
                    hand = list(known)
                    pile = [u - h for u, h in zip(unseen, hand)]
                    left = hand_count - sum(known)
                    for k in range(N_KINDS):
                        take = min(pile[k], left)
                        hand[k] += take
                        pile[k] -= take
                        left -= take
                d["hand"][p] = hand + [0] * (MAX_KINDS - N_KINDS)
                d["draw"][p] = pile + [0] * (MAX_KINDS - N_KINDS)
                d["known"][p] = known + [0] * (MAX_KINDS - N_KINDS)
            core = bytes(kernel.dict_to_core(d))
        except InvalidPositionError:
            raise
        except (KeyError, IndexError, TypeError, AttributeError, OverflowError) as e:
            raise InvalidPositionError("view", f"missing or malformed field ({e!r})") from e
        return core, players, seat

    # --- text --------------------------------------------------------------------------------
    def render(self, state: State, seat: int | None = None) -> str:
        """The board by rooms with row and column labels, every breed named by its word (as in
        the notation), stock costs, plant VP and tracks, the turn's experiment total, and per seat
        what `seat` may see."""
        d = core_dict(state)
        n = d["players"]
        mover = state.current_player
        who = {-1: "chance", -4: "game over"}.get(mover, f"seat {mover}")
        lines = [
            f"Botanical Lab - {n} players, start player seat {d['start_player']}, turn: seat {d['turn_player']} "
            f"({STAGES[d['stage']]}), to decide: {who}" + (" - final round" if d["final_round"] else ""),
        ]
        for r, room in enumerate(COMPONENTS.rooms):
            here = [f"seat {p}" for p in range(n) if d["room"][p] == r]
            lines.append(f"Room {room.name}" + (f" (assistants: {', '.join(here)})" if here else ""))
            lines.append("       " + "".join(f"{f'col {col}':<{CELL}}" for col in range(room.cols)).rstrip())
            for row in range(room.rows):
                spaces = [ROOM_FIRST[r] + row * room.cols + col for col in range(room.cols)]
                accepts = ["/".join(BREED_NAMES[b - 1] for b in SPACE_BREEDS[sp]) for sp in spaces]
                lines.append(f"row {row}  " + "".join(f"{a:<{CELL}}" for a in accepts).rstrip())
                lines.append("       " + "".join(f"{_space_text(d, sp):<{CELL}}" for sp in spaces).rstrip())
        stock = ", ".join(
            f"{KIND_NAMES[k]} {d['stock'][k]} (cost {COMPONENTS.cards[k].cost})" for k in range(N_KINDS) if STOCK[k]
        )
        lines.append(f"Stock: {stock}")
        lines.append(
            "Plant cards: "
            + ", ".join(
                f"{b.name} {d['plant_stock'][i]} left ({b.flower_vp} VP, track {b.track})"
                for i, b in enumerate(COMPONENTS.breeds)
            )
        )
        turn = d["turn_player"]
        if d["stage"] == STAGE_DEVELOP or (d["stage"] == STAGE_DRAW and d["resume"] == RESUME_DEVELOP):
            x = experiment_total(d["play"][turn])
            budget = f", costs so far {d['spent']} of {x}" if d["acquire_mode"] == 1 else ""
            lines.append(
                f"Experiment total {x}: {COMPONENTS.acquisitions_allowed(x)} acquisitions allowed, {d['acquired']} made{budget}"
            )

        def cards(counts: list[int]) -> str:
            return ", ".join(f"{KIND_NAMES[k]} x{counts[k]}" for k in range(N_KINDS) if counts[k]) or "-"

        for p in range(n):
            lines.append(
                f"Seat {p}: {d['vp'][p]} VP ({_seed_set_text(d, p, seat)}), room {COMPONENTS.rooms[d['room'][p]].name}, "
                f"{d['markers_free'][p]} markers in supply"
            )
            # Only the viewing seat's own hand is listed; the others' are counts plus the cards
            # everybody knows are in them, as in view().
            if p == seat:
                hand = cards(d["hand"][p])
            else:
                known = d["known"][p]
                hand = f"{sum(d['hand'][p])} cards" + (f" (known: {cards(known)})" if any(known) else "")
            lines.append(
                f"  hand {hand} | draw pile {sum(d['draw'][p])} cards | discard {cards(d['discard'][p])}"
                f" | play area {cards(d['play'][p])}"
            )
        if d["stage"] == STAGE_DRAW:
            mode = "into the hand" if d["draw_mode"] == 0 else f"revealing for {CARD_TYPES[d['draw_mode'] - 1]} cards"
            lines.append(f"Drawing {d['draws_pending']} for seat {d['draw_seat']} {mode}; revealed aside: {cards(d['aside'])}")
        lines.append(
            "Key: each space shows the breeds it accepts, then what is on it: prepared, leaf or flower, "
            "the marker's seat (s0 = seat 0) and, for a flower, the marker's step on its track; "
            "'picked' = chosen for observation this turn."
        )
        return "\n".join(lines)

    def end_reason(self, state: State) -> str | None:
        """LE1: a turn ending with 35 VP or more makes its round the last, the rule's only
        end. (The state keeps no round count: ``round_number`` stays None.)"""
        return "trigger" if state.is_terminal() else None

    def heuristic(self, state: State, seat: int) -> float:
        """Greedy: points now (VP + seed sets) minus the best other seat's, plus part of the
        printed VP of the plants carrying this seat's markers (observed later for those VP: a
        prepared space counts least, a flower most; an undecided breed counts the space's
        cheapest)."""
        scores = state.scores()
        others = max(v for i, v in enumerate(scores) if i != seat)
        d = core_dict(state)
        potential = 0.0
        for s in range(N_SPACES):
            status = d["space_status"][s]
            if d["space_owner"][s] != seat or status == SPACE_EMPTY:
                continue
            breed = d["space_breed"][s] or SPACE_BREEDS[s][0]
            potential += POTENTIAL[status] * COMPONENTS.breeds[breed - 1].flower_vp
        return float(scores[seat] - others + potential)


def empty_core_dict(players: int) -> dict[str, Any]:
    """The setup position (LS1-LS4): starter decks as draw piles, full stocks, empty rooms,
    assistants in room 1, waiting for the start player (LS5)."""
    d: dict[str, Any] = {
        key: 0
        for key in (
            "players",
            "stage",
            "resume",
            "turn_player",
            "start_player",
            "final_round",
            "draw_seat",
            "draws_pending",
            "draw_mode",
            "acquired",
            "spent",
            "growth_breeds",
            "growth_pending",
            "acquire_mode",
            "track_seed_breed",
            "seed_set_scope",
        )
    }
    d["players"] = players
    d["stage"] = STAGE_START
    d["vp"] = [0] * MAX_SEATS
    d["room"] = [0] * MAX_SEATS
    d["markers_free"] = [MARKERS if p < players else 0 for p in range(MAX_SEATS)]
    for zone in ("hand", "discard", "play", "known"):
        d[zone] = [[0] * MAX_KINDS for _ in range(MAX_SEATS)]
    d["draw"] = [list(STARTER) + [0] * (MAX_KINDS - N_KINDS) if p < players else [0] * MAX_KINDS for p in range(MAX_SEATS)]
    d["aside"] = [0] * MAX_KINDS
    d["stock"] = list(STOCK) + [0] * (MAX_KINDS - N_KINDS)
    d["plant_stock"] = [b.plants for b in COMPONENTS.breeds]
    for key in ("space_status", "space_owner", "space_breed", "space_step"):
        d[key] = [0] * MAX_SPACES
    return d


def core_dict(state: State) -> dict[str, Any]:
    result: dict[str, Any] = kernel.core_to_dict(state.kernel_state.core())
    return result


def experiment_total(play: list[int]) -> int:
    return sum(play[k] * COMPONENTS.cards[k].experiments for k in range(N_KINDS))


def seed_counts(d: Mapping[str, Any], p: int, piles_only: bool) -> list[int]:
    """Seed cards per breed that count for seat p's seed sets (LE2, A11)."""
    counts = [0] * N_BREEDS
    for k, card in enumerate(COMPONENTS.cards):
        if card.card_type != "seed":
            continue
        n = d["draw"][p][k] + d["discard"][p][k]
        if not piles_only:
            n += d["hand"][p][k] + d["play"][p][k]
            if d["stage"] == STAGE_DRAW and d["draw_seat"] == p:
                n += d["aside"][k]
        counts[card.breeds[0] - 1] += n
    return counts


CELL = max(len("/".join(BREED_NAMES[b - 1] for b in bs)) for bs in SPACE_BREEDS) + 14


def _space_text(d: Mapping[str, Any], s: int) -> str:
    """What lies on a space, in words: '-', 'prepared s0', 'leaf circle s1', 'flower square s0
    2/3' (+ 'picked')."""
    status = d["space_status"][s]
    if status == SPACE_EMPTY:
        return "-"
    owner, breed = d["space_owner"][s], d["space_breed"][s]
    if status == SPACE_PREPARED:
        return f"prepared s{owner}" + (f" {BREED_NAMES[breed - 1]}" if breed else "")
    if status == SPACE_LEAF:
        return f"leaf {BREED_NAMES[breed - 1]} s{owner}"
    track = COMPONENTS.breeds[breed - 1].track
    return f"flower {BREED_NAMES[breed - 1]} s{owner} {d['space_step'][s]}/{track}" + (
        " picked" if status == SPACE_PICKED else ""
    )


def _seed_set_text(d: Mapping[str, Any], p: int, seat: int | None) -> str:
    """'N with seed sets' for seat p as `seat` may know it. With seed_set_scope=piles_only the
    hand does not count, and which of p's unseen cards are in its hand rather than its draw pile
    is hidden from the other seats: they get the range over every hand
    consistent with what they see (the known cards always in it)."""
    vp = d["vp"][p]
    piles_only = bool(d["seed_set_scope"])
    if not piles_only or p == seat:
        return f"{vp + COMPONENTS.seed_set_points(seed_counts(d, p, piles_only))} with seed sets"
    low, high = _seed_set_range(d, p)
    return f"{vp + low} with seed sets" if low == high else f"{vp + low}-{vp + high} with seed sets, by its hidden hand"


def _seed_set_range(d: Mapping[str, Any], p: int) -> tuple[int, int]:
    """Least and most piles-only seed-set points of seat p over every split of its unseen cards
    (hand + draw pile, the known cards in the hand) into a hand of its size and a draw pile."""
    known = d["known"][p]
    pool = [d["hand"][p][k] + d["draw"][p][k] - known[k] for k in range(N_KINDS)]
    free = sum(d["hand"][p]) - sum(known)
    seeds = [k for k in range(N_KINDS) if KIND_TYPES[k] == TYPE_SEED and pool[k]]
    others = sum(pool) - sum(pool[k] for k in seeds)
    base = [0] * N_BREEDS
    for k in range(N_KINDS):
        if KIND_TYPES[k] == TYPE_SEED:
            base[COMPONENTS.cards[k].breeds[0] - 1] += d["discard"][p][k] + d["draw"][p][k] + d["hand"][p][k] - known[k]
    results: list[int] = []

    def split(i: int, left: int, counts: list[int]) -> None:
        if i == len(seeds):
            if left <= others:  # the rest of the hand is cards other than seeds
                results.append(COMPONENTS.seed_set_points(counts))
            return
        k = seeds[i]
        breed = COMPONENTS.cards[k].breeds[0] - 1
        for taken in range(min(pool[k], left) + 1):
            counts[breed] -= taken
            split(i + 1, left - taken, counts)
            counts[breed] += taken

    split(0, free, base)
    return min(results), max(results)


def _int(container: Any, key: Any, lo: int, hi: int, field: str | None = None) -> int:
    value = container[key]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidPositionError(field or str(key), f"expected an integer {lo}..{hi}")
    return value


def _counts(container: Any, key: Any, length: int, field: str | None = None) -> list[int]:
    field = field or str(key)
    value = container[key]
    if (
        not isinstance(value, list)
        or len(value) != length
        or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value)
    ):
        raise InvalidPositionError(field, f"expected {length} counts 0..255")
    return list(value)


def _fail(field: str, message: str) -> None:
    raise InvalidPositionError(field, message)


def validate(d: dict[str, Any], players: int) -> None:
    """Every field of a core (as core_to_dict gives it) against the rules, before any compiled
    code reads it: ranges, conservation of cards, plants and markers, stage consistency."""
    if d["players"] != players:
        _fail("players", f"the core holds {d['players']} seats, the header {players}")
    n = players
    for key, hi in (
        ("acquire_mode", 1),
        ("track_seed_breed", 1),
        ("seed_set_scope", 1),
        ("final_round", 1),
        ("stage", STAGE_OVER),
        ("resume", RESUME_TURN_END),
        ("draw_mode", len(CARD_TYPES)),
        ("turn_player", n - 1),
        ("start_player", n - 1),
        ("draw_seat", n - 1),
        ("acquired", MAX_ACQUISITIONS),
        ("growth_breeds", (1 << N_BREEDS) - 1),
    ):
        if not 0 <= d[key] <= hi:
            _fail(key, f"{d[key]} is out of range 0..{hi}")
    stage = d["stage"]
    turn = d["turn_player"]
    # Unused seats, kinds and spaces hold nothing.
    for p in range(MAX_SEATS):
        for zone in ("hand", "draw", "discard", "play", "known"):
            row = d[zone][p]
            if p >= n and any(row):
                _fail(f"{zone}[{p}]", f"seat {p} is not in a {n}-player game")
            if any(row[N_KINDS:]):
                _fail(f"{zone}[{p}]", f"only {N_KINDS} card kinds exist")
        if p >= n and (d["vp"][p] or d["room"][p] or d["markers_free"][p]):
            _fail(f"vp[{p}]", f"seat {p} is not in a {n}-player game")
    for key in ("aside", "stock"):
        if any(d[key][N_KINDS:]):
            _fail(key, f"only {N_KINDS} card kinds exist")
    for p in range(n):
        if d["room"][p] >= N_ROOMS:
            _fail(f"room[{p}]", f"{d['room'][p]} is not a room (0..{N_ROOMS - 1})")
        if d["markers_free"][p] > MARKERS:
            _fail(f"markers_free[{p}]", f"at most {MARKERS} markers")
        for k in range(N_KINDS):
            if d["known"][p][k] > d["hand"][p][k]:
                _fail(
                    f"known[{p}]",
                    f"{d['known'][p][k]} {KIND_NAMES[k]} known to be in seat {p}'s hand, which holds {d['hand'][p][k]}",
                )

    # Cards: every copy exactly once; nobody ever loses a card, so each seat owns at least its
    # starter set, and the acquired copies are what the stock lacks.
    owned = [[d["hand"][p][k] + d["draw"][p][k] + d["discard"][p][k] + d["play"][p][k] for k in range(N_KINDS)] for p in range(n)]
    aside_owner = d["draw_seat"] if stage == STAGE_DRAW else turn
    for k in range(N_KINDS):
        owned[aside_owner][k] += d["aside"][k]
    for k in range(N_KINDS):
        if d["stock"][k] > STOCK[k]:
            _fail(f"stock[{k}]", f"{KIND_NAMES[k]}: {d['stock'][k]} in the stock, the game has {STOCK[k]}")
        acquired = 0
        for p in range(n):
            extra = owned[p][k] - STARTER[k]
            if extra < 0:
                _fail(f"hand[{p}]", f"seat {p} owns {owned[p][k]} {KIND_NAMES[k]}, fewer than its starter set")
            acquired += extra
        if acquired != STOCK[k] - d["stock"][k]:
            _fail(f"stock[{k}]", f"{KIND_NAMES[k]}: {acquired} acquired copies, the stock lacks {STOCK[k] - d['stock'][k]}")

    # Spaces, plants and markers.
    plants_out = [0] * N_BREEDS
    markers_out = [0] * n
    picked = 0
    for s in range(MAX_SPACES):
        status, owner, breed, step = d["space_status"][s], d["space_owner"][s], d["space_breed"][s], d["space_step"][s]
        field = f"space_status[{s}]"
        if s >= N_SPACES or status == SPACE_EMPTY:
            if status or owner or breed or step:
                _fail(field, "an empty space holds no marker, plant or step" if s < N_SPACES else "no such space")
            continue
        if status > SPACE_PICKED:
            _fail(field, f"{status} is not a space status")
        if owner >= n:
            _fail(f"space_owner[{s}]", f"{owner} is not a seat")
        markers_out[owner] += 1
        if status == SPACE_PREPARED:
            if step:
                _fail(f"space_step[{s}]", "a prepared space has no track step")
            if d["track_seed_breed"]:
                if breed not in SPACE_BREEDS[s]:
                    _fail(f"space_breed[{s}]", "the recorded seed breed must be one the space accepts")
            elif breed:
                _fail(f"space_breed[{s}]", "without track_seed_breed a prepared space has no breed yet")
            continue
        if breed not in SPACE_BREEDS[s]:
            _fail(f"space_breed[{s}]", f"{SPACE_NAMES[s]} does not accept breed {breed}")
        plants_out[breed - 1] += 1
        if status == SPACE_LEAF:
            if step:
                _fail(f"space_step[{s}]", "a leaf has no track step")
            continue
        if not 1 <= step <= COMPONENTS.breeds[breed - 1].track:
            _fail(f"space_step[{s}]", f"step {step} is not on a track of {COMPONENTS.breeds[breed - 1].track}")
        if status == SPACE_PICKED:
            picked += 1
            if stage != STAGE_OBSERVE or owner != turn or SPACE_ROOM[s] != d["room"][turn]:
                _fail(field, "only the turn player's flowers in its room are picked, during observation")
    for b in range(N_BREEDS):
        if d["plant_stock"][b] + plants_out[b] != COMPONENTS.breeds[b].plants:
            _fail(
                f"plant_stock[{b}]",
                f"{BREED_NAMES[b]}: {d['plant_stock'][b]} in stock + {plants_out[b]} on the "
                f"boards is not {COMPONENTS.breeds[b].plants}",
            )
    for p in range(n):
        if d["markers_free"][p] + markers_out[p] != MARKERS:
            _fail(f"markers_free[{p}]", f"{d['markers_free'][p]} in supply + {markers_out[p]} on the boards is not {MARKERS}")

    # Stage consistency.
    in_turn = stage in (STAGE_DEVELOP, STAGE_CULTIVATE, STAGE_SPROUT, STAGE_OBSERVE)
    drawing = stage == STAGE_DRAW
    if not drawing and (d["draws_pending"] or d["draw_mode"] or d["draw_seat"] or d["resume"]):
        _fail("draws_pending", "draw bookkeeping is only set while drawing")
    if not (drawing and d["draw_mode"]) and any(d["aside"]):
        _fail("aside", "cards are set aside only during a typed skill's reveal")
    if stage != STAGE_SPROUT and (d["growth_breeds"] or d["growth_pending"]):
        _fail("growth_pending", "only while a fertilizer's sprouts are resolved")
    setup = stage == STAGE_START or (drawing and d["resume"] == RESUME_SETUP)
    if setup:
        if any(d["vp"]) or any(d["room"]) or any(d["space_status"]) or d["final_round"] or d["acquired"] or d["spent"]:
            _fail("stage", "the setup happens before any turn")
        for p in range(n):
            if any(d["discard"][p]) or any(d["play"][p]) or owned[p][:N_KINDS] != list(STARTER):
                _fail(f"draw[{p}]", "during the setup every seat holds exactly its starter set, undealt or in hand")
        if stage == STAGE_START:
            if any(any(d["hand"][p]) for p in range(n)) or d["turn_player"] or d["start_player"]:
                _fail("stage", "nothing is dealt before the start player is known")
        else:
            seat = d["draw_seat"]
            if d["turn_player"] != d["start_player"]:
                _fail("turn_player", "the start player takes the first turn")
            for p in range(n):
                held = sum(d["hand"][p])
                expected = HAND_SIZE if p < seat else 0 if p > seat else HAND_SIZE - d["draws_pending"]
                if held != expected:
                    _fail(f"hand[{p}]", f"{held} cards in hand while dealing seat {seat}'s opening hand")
            if d["draw_mode"]:
                _fail("draw_mode", "opening hands are drawn, not revealed")
        return
    if drawing:
        if d["draws_pending"] == 0 or not any(d["draw"][d["draw_seat"]]):
            _fail("draws_pending", "a draw waits for a card from a non-empty draw pile")
        if d["draw_seat"] != turn:
            _fail("draw_seat", "after the setup only the turn player draws")
        if d["resume"] == RESUME_TURN_END:
            if d["draw_mode"] or any(d["play"][turn]) or sum(d["hand"][turn]) + d["draws_pending"] != HAND_SIZE:
                _fail("draws_pending", "Phase 5 draws up to the hand size after the hand was discarded")
        elif d["draws_pending"] > MAX_SKILL_DRAW:
            _fail("draws_pending", f"a skill draws at most {MAX_SKILL_DRAW} cards")
        if d["draw_mode"]:
            kept = d["draw_mode"] - 1
            if any(d["aside"][k] for k in range(N_KINDS) if KIND_TYPES[k] == kept):
                _fail("aside", f"revealed {CARD_TYPES[kept]} cards go to the hand, not aside")
    if stage == STAGE_OVER:
        if not d["final_round"] or turn != (d["start_player"] + n - 1) % n:
            _fail("stage", "the game ends when the final round's last seat has played")
    # Seats other than the turn player hold a full hand and have nothing in play.
    for p in range(n):
        if p == turn and stage != STAGE_OVER:
            continue
        if sum(d["hand"][p]) != HAND_SIZE or any(d["play"][p]):
            _fail(f"hand[{p}]", f"between its turns a seat holds {HAND_SIZE} cards and nothing in play")
    if stage == STAGE_OVER or not (in_turn or drawing):
        if d["acquired"] or d["spent"]:
            _fail("acquired", "turn bookkeeping is zero between turns")
    if d["acquired"] == 0 and d["spent"]:
        _fail("spent", "nothing was acquired this turn")
    play = d["play"][turn]
    in_development = stage == STAGE_DEVELOP or (drawing and d["resume"] == RESUME_DEVELOP)
    if in_development:
        if any(play[k] for k in range(N_KINDS) if KIND_TYPES[k] not in (TYPE_EXPERIMENT, TYPE_SKILL)):
            _fail(f"play[{turn}]", "only experiment and skill cards are played in Phase 1")
        x = experiment_total(play)
        if d["acquired"] > COMPONENTS.acquisitions_allowed(x):
            _fail("acquired", f"an experiment total of {x} allows {COMPONENTS.acquisitions_allowed(x)} cards")
        if d["acquire_mode"] == 1 and d["spent"] > x:
            _fail("spent", f"costs {d['spent']} exceed the experiment total {x}")
    if not d["final_round"]:
        for p in range(n):
            if p != turn and d["vp"][p] >= COMPONENTS.end_trigger_vp:
                _fail(f"vp[{p}]", f"a turn ended with {d['vp'][p]} VP but the final round was not triggered")
    else:
        if max(d["vp"][:n]) < COMPONENTS.end_trigger_vp:
            _fail("final_round", f"nobody reached {COMPONENTS.end_trigger_vp} VP")
        if stage != STAGE_OVER and turn == d["start_player"]:
            _fail("final_round", "the final round ends before the start player's next turn")
    if stage == STAGE_SPROUT:
        pending = d["growth_pending"]
        first = ROOM_FIRST[d["room"][turn]]
        size = len(COMPONENTS.rooms[d["room"][turn]].spaces)
        if not pending or not d["growth_breeds"] or pending >> size:
            _fail("growth_pending", "a sprout decision needs pending prepared spaces of the assistant's room")
        for i in range(size):
            if pending >> i & 1:
                s = first + i
                listed = SPACE_BREEDS[s]
                if d["track_seed_breed"]:
                    listed = (d["space_breed"][s],)
                if d["space_status"][s] != SPACE_PREPARED or not any(d["growth_breeds"] >> (b - 1) & 1 for b in listed):
                    _fail("growth_pending", f"{SPACE_NAMES[s]} is not a prepared space this fertilizer grows")
    if (
        stage == STAGE_OBSERVE
        and not picked
        and not any(
            d["space_status"][s] == SPACE_FLOWER and d["space_owner"][s] == turn and SPACE_ROOM[s] == d["room"][turn]
            for s in range(N_SPACES)
        )
    ):
        _fail("stage", "observation needs an own flower in the assistant's room")
