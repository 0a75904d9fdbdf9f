# War of the Posies state layout. Every field of the core is a byte, so the serialized core is
# the same on every platform (no endianness); the cache after it is never serialized. Card kinds and Garden Features (GF) are indices into the
# static tables that kernel.pyx fills from components.toml. Legend beside each field.
from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef enum:
    MAX_KINDS = 64         # card kinds (identical copies are one kind); the default pool has 45
    MAX_GF = 32            # individual Garden Feature cards; the default pool has 29 (WC1)
    MAX_SLOTS = 4          # flower symbols on one GF
    MAX_SYMBOLS = 8        # flower symbol indices (components.MAX_SYMBOLS)
    MAX_PRIMS = 6          # primitives in one effect text
    MAX_SEATS = 4
    MAX_DEPTH = 3          # effect frames: a Plant ability above the completed GF's WC ability
    HAND_SIZE = 5          # WE2
    MARKET_SIZE = 5        # WS3
    GF_ROW_SIZE = 4        # WS4
    ROUND_LIMIT = 40       # safety end (see kernel.pyx, "WZ1 + safety end")
    EMPTY = 255
    N_EFFECTS = 2 * 64 + 32  # play(kind) = 2k, plant(kind) = 2k+1, when-completed(gf) = 128+g

cdef enum Stage:
    STAGE_SETUP = 0        # WS1-WS7: chance deals the rows, the first player and the hands
    STAGE_PLAY = 1         # turns (WT1..WE2)
    STAGE_OVER = 2

cdef enum GfLocation:
    GF_DECK = 0            # face down in the GF deck (its order is never stored)
    GF_ROW = 1             # face up in the GF row
    GF_OWNED = 2           # GF_OWNED + seat: in that seat's play area (WB2)

cdef enum GfFlags:
    GF_COMPLETE = 1        # every slot holds a Flower: the Flowers are locked (WG1)
    GF_WC_PENDING = 2      # completed by an opponent's poison: WC resolves at the owner's next turn start (WG2)

cdef enum Op:
    OP_NONE = 0
    OP_COIN = 1
    OP_DRAW = 2
    OP_BUY = 3
    OP_PLANT = 4
    OP_COMPOST_HAND = 5
    OP_COMPOST_ANY = 6
    OP_GAIN_BASIC_HAND = 7
    OP_UPROOT = 8

ctypedef struct WarCore:
    uint8_t players            # 2..4 (also in the position header)
    uint8_t stage              # Stage
    uint8_t first_player       # seat, EMPTY until the setup chance picks it (WS7)
    uint8_t turn_player        # seat whose turn it is
    uint8_t round              # 1-based round number (0 during setup); safety end at ROUND_LIMIT
    uint8_t end_trigger        # WZ1: seat whose turn end triggered the end, EMPTY if none
    uint8_t final_turns_left   # WZ1: final turns still to play once triggered
    uint8_t tiebreak_locked_only  # option tiebreak_count: 0 all_planted, 1 locked_only (A9)
    uint8_t coins              # WT3 counters of this turn
    uint8_t buys
    uint8_t plants
    uint8_t last_pure          # kind+1 of the last play in the current run of coin-only plays, 0 none
    uint8_t draw_seat          # seat that draws the pending cards
    uint8_t draws_pending      # cards still to draw (each one a chance node)
    uint8_t turn_ending        # 1 while the ending player's new hand is drawn (WE2)
    uint8_t basic_top          # kind of the face-up top Basic Flower, EMPTY if none (WS5, A14)
    uint8_t depth              # effect frames in use, 0..MAX_DEPTH
    uint8_t frame_effect[3]    # effect id (see N_EFFECTS)
    uint8_t frame_pc[3]        # next primitive to resolve
    uint8_t frame_left[3]      # picks left in the current "up to n" choice (0 = not started)
    uint8_t hand_count[4]      # totals of the per-kind arrays below
    uint8_t draw_count[4]
    uint8_t discard_count[4]
    uint8_t play_count
    uint8_t market_row_count
    uint8_t market_deck_count
    uint8_t basic_count        # Basic Flowers below the top
    uint8_t gf_row_count
    uint8_t gf_deck_count
    uint8_t hand[4][64]        # hand[seat][kind]: copies (hidden from the other seats)
    uint8_t draw[4][64]        # draw pile as a multiset: its order is unknown to everyone
    uint8_t discard[4][64]     # public (A13)
    uint8_t play[64]           # the turn player's play area
    uint8_t market_row[64]     # the 5 face-up Market cards (a multiset: slot order is irrelevant)
    uint8_t market_deck[64]    # the face-down Market deck (a multiset)
    uint8_t basic_pile[64]     # Basic Flowers below the top (a multiset)
    uint8_t compost[64]        # WK1
    uint8_t gf_loc[32]         # GfLocation (+ seat); EMPTY for ids beyond the pool
    uint8_t gf_slot[32][4]     # flower kind + 1 planted in the slot, 0 free
    uint8_t gf_flags[32]       # GfFlags
    uint8_t known_hand[4][4]   # kind + 1 of hand cards everyone knows (ascending, 0 = none): the
                               # old draw pile, drawn before a reshuffle at the end of the turn

# Derived cache (rebuilt from the core by rebuild(), kept in step by every write of the kernel):
# bit sets of the hands, the draw piles, the Market row, the GFs by place and the When-Completed
# abilities waiting, and each GF's free flower symbols, so that a turn's actions, plant targets
# and draws are found without scanning the byte arrays.
ctypedef struct WarCache:
    uint64_t hand_kinds[4]     # bit k: hand[seat][k] > 0
    uint64_t draw_kinds[4]     # bit k: draw[seat][k] > 0
    uint64_t market_kinds      # bit k: market_row[k] > 0
    uint32_t owned_gfs[4]      # bit g: gf_loc[g] == GF_OWNED + seat
    uint32_t row_gfs           # bit g: gf_loc[g] == GF_ROW
    uint32_t wc_pending        # bit g: gf_flags[g] has GF_WC_PENDING
    uint8_t free_symbols[32]   # bit s: GF g has a free slot showing flower symbol s

ctypedef struct WarState:
    WarCore core
    # Outside the encoded core: 1 in a world a search sampled (set by determinize, which the
    # search calls at the root of every iteration), 0 in every position a player reached.
    # search_actions orders coin-only runs only in such worlds, where the run's memory
    # (last_pure) starts at that root.
    uint8_t search_world
    WarCache cache
