# Botanical Lab state layout. Every field is a byte, so the serialized core is the same on every
# platform (no endianness); the two-byte VP counters are split into a low and a high byte.
# Legend beside each field; section ids refer to botanical_lab.decisions.md.
from libc.stdint cimport uint8_t, uint32_t, int32_t

cdef enum:
    MAX_SEATS = 4
    MAX_KINDS = 20          # card kinds (17 in the default data, LC1 / 6.1)
    N_BREEDS = 5            # 1 circle, 2 triangle, 3 square, 4 hexagon, 5 diamond
    N_ROOMS = 3             # LC2: three cultivation room boards
    MAX_ROOM_SPACES = 16    # at most 4 x 4 spaces per room (a 16-bit pending mask)
    MAX_SPACES = 48         # N_ROOMS * MAX_ROOM_SPACES; space ids are room-major
    NO_SPACE = 255

cdef enum Stage:
    STAGE_START = 0         # chance: the start player (LS5)
    STAGE_DRAW = 1          # chance: a card from draw_seat's draw pile (LS3, LY2, A4)
    STAGE_DEVELOP = 2       # Phase 1 decisions of the turn player (LD1-LD6)
    STAGE_CULTIVATE = 3     # Phase 2 decisions (LP1-LP5)
    STAGE_SPROUT = 4        # Phase 2 sub-decision: which breed sprouts on a prepared space (A7, A8)
    STAGE_OBSERVE = 5       # Phase 3 decisions (LO1-LO4)
    STAGE_OVER = 6
    STAGE_TURN_END = 7      # transient inside apply (Phases 4 and 5); never stored at rest

cdef enum Resume:           # where a DRAW stage continues once its draws are done
    RESUME_SETUP = 0        # the next seat's opening hand, then the start player's turn
    RESUME_DEVELOP = 1      # back to Phase 1 after a skill
    RESUME_CULTIVATE = 2    # back to Phase 2 after a skill
    RESUME_TURN_END = 3     # Phase 5 is over: end-of-game check, next player

cdef enum SpaceStatus:
    SPACE_EMPTY = 0
    SPACE_PREPARED = 1      # a marker, no plant card yet (LP2)
    SPACE_LEAF = 2          # plant card leaf side up (LP3)
    SPACE_FLOWER = 3        # flower side up, marker on track step `space_step` (LP3, LX1)
    SPACE_PICKED = 4        # a flower chosen for removal in the running Phase 3 (LO1)

cdef enum CardType:
    TYPE_SEED = 0
    TYPE_FERTILIZER = 1
    TYPE_EXPERIMENT = 2
    TYPE_SKILL = 3

ctypedef struct LabCore:
    uint8_t players            # seats, 2..4
    uint8_t stage              # Stage
    uint8_t resume             # Resume (meaningful in STAGE_DRAW)
    uint8_t turn_player        # seat whose turn it is
    uint8_t start_player       # LS5
    uint8_t final_round        # LE1: 1 once a turn ended with >= end_trigger_vp
    uint8_t draw_seat          # whose draw pile the pending draws come from
    uint8_t draws_pending      # cards still to draw or reveal
    uint8_t draw_mode          # 0 = into the hand; 1 + CardType = typed reveal (A4 REVEAL_TAKE)
    uint8_t acquired           # LD2: cards acquired this turn
    uint8_t spent              # LD3 budget: costs of this turn's acquisitions
    uint8_t growth_breeds      # breed mask (bit b-1) of the fertilizer being resolved (A7)
    uint8_t growth_pending[2]  # in-room indices of prepared spaces still to sprout (bits, lo/hi)
    uint8_t acquire_mode       # option: 0 threshold, 1 budget (A5)
    uint8_t track_seed_breed   # option: 0 breed chosen at growth, 1 recorded at preparation (A7)
    uint8_t seed_set_scope     # option: 0 all_owned, 1 piles_only (A11)
    uint8_t vp_low[4]          # victory points, low byte
    uint8_t vp_high[4]         # victory points, high byte
    uint8_t room[4]            # research assistant's room, 0..2
    uint8_t markers_free[4]    # cultivation markers in the player's supply
    uint8_t hand[4][20]        # card counts per kind and zone
    uint8_t draw[4][20]        #   draw pile (a multiset: its order is unknown to everyone)
    uint8_t discard[4][20]     #   discard pile (public, A15)
    uint8_t play[4][20]        #   play area of this turn
    uint8_t known[4][20]       # cards every seat knows are in that hand (section 4):
                               #   the whole hand once the draw pile ran dry into it (its union
                               #   with the hand is public), plus cards kept from a typed
                               #   skill's public reveal (A4); a played card of the kind lowers
                               #   it, the phase 5 discard clears it. Read by determinize.
    uint8_t aside[20]          # cards revealed by the running typed skill, not kept (A4)
    uint8_t stock[20]          # open stock per kind (A14)
    uint8_t plant_stock[5]     # plant cards per breed in the stock
    uint8_t space_status[48]   # SpaceStatus
    uint8_t space_owner[48]    # seat of the marker (0 when empty)
    uint8_t space_breed[48]    # 1..5 for plants; prepared: 0, or the seed's breed (track_seed_breed)
    uint8_t space_step[48]     # flower: marker's track step, 1 = top .. track = bottom; else 0

ctypedef struct LabState:
    LabCore core               # serialized
    # Derived cache (k_rebuild recomputes it from the core; every transition keeps it in step):
    uint32_t held[4]           # kinds (bit k) in each seat's hand
    int32_t draw_total[4]      # cards in each seat's draw pile
    # Search memory: the canonical order of commuting moves (search_actions), e.g. experiments
    # by non-decreasing kind, along the path a search took since it sampled its world. Not part
    # of the position (never serialized, so every order of the same moves encodes alike).
    # determinize starts it (ordered = 1, nothing recorded: the root's history is unknown, so the
    # search may still follow any order a player took); k_rebuild clears it (ordered = 0), and a
    # state that is not a search's sampled world prunes nothing (search_actions = legal_actions).
    uint8_t ordered            # 1 in a search's world (set by determinize)
    uint8_t experiment_floor   # LD6: next experiment played is a kind >= this
    uint8_t acquire_floor      # next acquisition is a kind >= this (acquisition order is moot)
    uint8_t seed_floor         # next seed goes on a space id >= this (0 after any other action)
    uint8_t observe_floor      # next flower observed is a space id >= this
    uint8_t acquired_seen      # an acquisition was made since the memory started (LD6)
    uint8_t late_skill         # 1 after a Phase 1 skill played after an acquisition (LD6 fix)
