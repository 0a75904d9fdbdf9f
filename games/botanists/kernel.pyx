# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Botanists rules over a flat BotanistsState buffer: the GameKernel of botanists.

Section names follow botanists.decisions.md (S setup, G structure, P purchase, T tend, BA bonus
actions, O orders, SC scoring phase, E end game, L solo Little Helper, A# resolutions).
Boards, market-card shapes, orders and the bonus of each colour are data (components.toml),
copied into the static tables below by ``load_components``.

A turn is split into atomic decisions of one seat (decisions.md 6.1): the first decision
merges D_ACTION with the purchase's destination or the tended colour (``move c3`` /
``tend red``), so a turn never starts with a two-way choice that says nothing yet.
Tiles of one colour, copies of one order and cards in a hand are interchangeable, so actions
name colours, order kinds and card ids (never tile instances or hand slots).
"""
from libc.stdint cimport uint8_t, uint32_t, int32_t, uint64_t
from libc.string cimport memset, memcpy

from hortus._ext.kernel cimport GameKernel, CHANCE, TERMINAL, kernel_to_capsule
from hortus._ext.rng cimport Rng, rng_below, rng_uniform, rng_weighted_index
from hortus._ext.bits cimport pop64, pop_few
from hortus.games.botanists.kernel cimport *

cdef extern from *:
    int __builtin_ctz(unsigned int) nogil
    int __builtin_popcount(unsigned int) nogil
    int __builtin_ctzll(unsigned long long) nogil

# The playout policy's order-pair scan (leftover_best): four pairs at a time with SSE2 where
# the compiler has it (every x86-64), a plain loop elsewhere; both give the same value. The
# pairs are listed in groups of four (wants_of pads the last group with pairs worth nothing).
cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    static inline int bts_leftover_best(const uint32_t* need, const int* val, int n, uint32_t lg,
                                        uint32_t guard, int per_total, int none_left, int best) {
        const __m128i g = _mm_set1_epi32((int)guard), l = _mm_set1_epi32((int)lg);
        const __m128i add = _mm_set1_epi32(per_total), nl = _mm_set1_epi32(none_left);
        __m128i b = _mm_set1_epi32(best), rest, v, gt, t;
        int k;
        for (k = 0; k < n; k += 4) {
            rest = _mm_sub_epi32(l, _mm_loadu_si128((const __m128i*)(need + k)));
            v = _mm_add_epi32(_mm_loadu_si128((const __m128i*)(val + k)), add);
            v = _mm_add_epi32(v, _mm_and_si128(_mm_cmpeq_epi32(rest, g), nl));
            gt = _mm_and_si128(_mm_cmpeq_epi32(_mm_and_si128(rest, g), g), _mm_cmpgt_epi32(v, b));
            b = _mm_or_si128(_mm_and_si128(gt, v), _mm_andnot_si128(gt, b));
        }
        t = _mm_shuffle_epi32(b, 0x4E);
        gt = _mm_cmpgt_epi32(t, b);
        b = _mm_or_si128(_mm_and_si128(gt, t), _mm_andnot_si128(gt, b));
        t = _mm_shuffle_epi32(b, 0xB1);
        gt = _mm_cmpgt_epi32(t, b);
        b = _mm_or_si128(_mm_and_si128(gt, t), _mm_andnot_si128(gt, b));
        return _mm_cvtsi128_si32(b);
    }
    #else
    static inline int bts_leftover_best(const uint32_t* need, const int* val, int n, uint32_t lg,
                                        uint32_t guard, int per_total, int none_left, int best) {
        int k, v;
        uint32_t rest;
        for (k = 0; k < n; k++) {
            rest = lg - need[k];
            v = val[k] + per_total + (rest == guard ? none_left : 0);
            if ((rest & guard) == guard && v > best)
                best = v;
        }
        return best;
    }
    #endif
    """
    int bts_leftover_best(const uint32_t* need, const int* val, int n, uint32_t lg, uint32_t guard,
                          int per_total, int none_left, int best) nogil

# A byte read the compiler keeps a byte read (the empty asm hides the value from the
# vectorizer, which would otherwise read neighbouring bytes as one word: a word read of bytes
# written a moment before waits until those writes reach the cache).
cdef extern from *:
    """
    static inline unsigned bts_byte(const uint8_t* p) {
        unsigned v = *p;
        __asm__("" : "+r"(v));
        return v;
    }
    """
    unsigned bts_byte(const uint8_t* p) nogil

# --- action ids (dense, < NUM_ACTIONS) --------------------------------------------------------
cdef enum:
    A_MOVE = 0              # + cell: purchase, move the pawn there (P1/P2)
    A_TEND = 25             # + colour: tend, plant that leftover face down (T2)
    A_CARD = 30             # + card: play that market card (P3)
    A_PLANT_UP = 106        # + colour (P5)
    A_PLANT_DOWN = 111      # + colour (P5)
    A_SWAPM_GIVE = 116      # + colour: purple bonus, the leftover given to the market
    A_SWAPM_CELL = 121      # + cell: purple bonus, the market tile taken
    A_SWAPP_SEAT = 146      # + seat: red bonus, the other player
    A_SWAPP_GIVE = 150      # + colour: red bonus, the leftover given
    A_SWAPP_TAKE = 155      # + colour: red bonus, the leftover taken
    A_SWAPH_TAKE = 160      # + space: solo red bonus, the Helper's face-up tile taken (L9)
    A_BMOVE_OWN = 175       # + cell: yellow bonus, own pawn
    A_BMOVE_HELPER = 200    # + cell: solo yellow bonus, the Helper (L9)
    A_TAKE_OPEN = 225       # + slot: green bonus
    A_TAKE_DECK = 228       # green bonus: the top card of the order deck
    A_SKIP = 229            # BA1: do not use the bonus
    A_DISCARD_OPEN = 230    # + slot mask: T3
    A_DRAW2 = 238           # T4
    A_NO_DRAW = 239         # T4
    A_DISCARD_CARD = 240    # + card: T4 discard back down / L8 discard
    A_NO_DISCARD = 316      # L8
    A_FULFIL_OPEN = 317     # + slot (O2)
    A_FULFIL_PERSONAL = 320  # + order kind (O2)
    A_NO_FULFIL = 402
    A_OWN_FIRST = 403       # L3
    A_HELPER_FIRST = 404    # L3
    A_HCARD = 405           # + card: L5 the card moving the Helper
    A_HDEST_UP = 481        # + cell: L5 the Helper's destination, tile face up
    A_HDEST_DOWN = 506      # + cell: L5, tile face down
    A_KEEP = 531            # + a * 6 + b (a <= b colours, 5 = nothing): SC5
    A_FIRST = 567           # + seat: SC7
    A_CHOOSE_BOARD = 571    # + board: S2 with board_assignment=choose
    C_BOARD = 576           # + board: chance, a board dealt (S2, L2)
    C_CARD = 581            # + card: chance, a market card drawn
    C_ORDER = 657           # + order kind: chance, an order drawn
    C_TILE = 739            # + colour: chance, a tile drawn from the bag
    C_FIRST = 744           # + seat: chance, the first player (S7)
    NUM_ACTIONS = 748
    MAX_LEGAL = 256
    MAX_HAND = 16

cdef enum:
    BONUS_SWAP_PLAYER = 0   # red (2.6)
    BONUS_MOVE = 1          # yellow
    BONUS_TAKE_ORDER = 2    # green
    BONUS_SWAP_MARKET = 3   # purple (A3)
    BONUS_PLUS3 = 4         # blue (A3)

cdef enum:
    CTX_NONE = 0
    CTX_BOARD = 1
    CTX_CARDS_SETUP = 2
    CTX_OPEN = 3
    CTX_PERSONAL_SETUP = 4
    CTX_TILE = 5
    CTX_FIRST = 6
    CTX_PERSONAL = 7
    CTX_CARDS = 8

cdef int COLUMN_BONUS[3]
COLUMN_BONUS[:] = [2, 3, 5]          # SC4
cdef enum:
    ORDER_POINTS = 5                 # SC1
    NO_LEFTOVER_BONUS = 7            # SC2
    LEFTOVER_PENALTY = 2             # SC3
    UNFULFILLED_PERSONAL_PENALTY = 5 # E2
    PLUS3_POINTS = 3

# --- static tables (filled once by load_components) -------------------------------------------
cdef uint8_t SIGN[5][15]            # sign colour per board and space
cdef uint8_t EXTRA_PERSONAL[5]      # S5
cdef uint8_t BONUS_OF[5]            # bonus kind per sign colour (A3)
cdef uint8_t ORDER_NEED[82][5]
cdef uint32_t ORDER_PACKED[82]      # ORDER_NEED packed 6 bits a colour (the playout policy's Wants)
cdef int ORDER_USED[82]             # tiles an order takes
cdef uint8_t ORDER_KIND[82]         # lowest id with the same flowers
cdef uint8_t ORDER_POS[82]          # an order's bit in the cache's order sets (by kind, then id)
cdef uint8_t ORDER_AT[82]           # the order at each of those bits
cdef uint64_t KIND_BITS[82][2]      # per kind (its lowest id): the bits of its orders
cdef uint8_t POP8[256]              # set bits per byte value
cdef uint8_t SELECT8[256][8]        # per byte value: the position of its r-th set bit
cdef uint8_t GOOD[748]              # rollout policy: the "obvious" actions (k_rollout_action)
cdef uint32_t FOOT[4][76][25]       # cells a card covers, per seat orientation and pawn cell; 0 = off the market
cdef uint8_t FOOT_CELLS[4][76][25][4]  # FOOT's cells listed, N_CELLS = none (the playout policy's keys)
cdef uint64_t TILE_KEY[256]         # per market byte: a tile's key for the playout policy (1 at bit
                                    # 32, the tile count; 1 in its colour's 6-bit field), 0 if no tile
cdef int MIN_FOOT = 0               # fewest cells of any footprint inside the market
cdef uint8_t FOOT_SHIFT[4][76][4]   # per orientation and card: 32 + each footprint cell's offset
                                    # from the pawn cell (cover_dests; a 3-cell card repeats one)
cdef uint32_t HELPER_DEST[76][25]   # L5: the card's other boxes inside the market (seat 0's view)
cdef uint32_t NEIGH[25]             # king-step neighbours
cdef uint32_t BALL2[25]             # spread(NEIGH[cell]): cells within two king steps (and cell)
cdef uint32_t ONBOARD[4][76]        # per orientation and card: pawn cells with FOOT inside the market
cdef int STEP[25][8]                # neighbour in each of the 8 directions, -1 off the market
cdef uint32_t INWARD[25]            # A13 outer_is_step1 + straight2: the second step, straight on
                                    # from an entry step (orthogonal or diagonal) from off the market
cdef uint32_t OUTER = 0             # P2: the outermost ring
cdef uint32_t CORNERS = 0           # P1d
cdef uint8_t ORIENT[5][4]           # A15: seat orientation by player count
cdef uint8_t SEAT_AT[5][512]        # k % players for any two bytes' sum (start_turn's seat without a division)
cdef bint LOADED = False

cdef int DR[8]
cdef int DC[8]
DR[:] = [-1, -1, -1, 0, 0, 1, 1, 1]
DC[:] = [-1, 0, 1, -1, 1, -1, 0, 1]


def load_components(list signs, list extra_personal, list shapes, list orders, list bonus_by_colour):
    """Fill the static tables from validated component data (components.py)."""
    global LOADED, OUTER, CORNERS, MIN_FOOT
    cdef int b, k, o, card, cell, i, h, r0, c0, dr, dc, br, bc, r, cc, d, col, u
    cdef uint32_t mask, others
    cdef bint inside
    for b in range(N_BOARDS):
        EXTRA_PERSONAL[b] = extra_personal[b]
        for k in range(N_SPACES):
            SIGN[b][k] = signs[b][k]
    for col in range(N_COLOURS):
        BONUS_OF[col] = bonus_by_colour[col]
    for o in range(N_ORDERS):
        ORDER_PACKED[o] = 0
        ORDER_USED[o] = 0
        for col in range(N_COLOURS):
            ORDER_NEED[o][col] = orders[o][col]
            ORDER_PACKED[o] |= (<uint32_t>orders[o][col]) << (6 * col)
            ORDER_USED[o] += orders[o][col]
        ORDER_KIND[o] = o
        for u in range(o):
            if list(orders[u]) == list(orders[o]):
                ORDER_KIND[o] = u
                break
    for i in range(256):
        POP8[i] = bin(i).count("1")
        u = 0
        for col in range(8):
            SELECT8[i][col] = 0
        for col in range(8):
            if (i >> col) & 1:
                SELECT8[i][u] = col
                u += 1
        TILE_KEY[i] = (((<uint64_t>1) << 32) | ((<uint64_t>1) << (6 * i))) if i < N_COLOURS else 0
    memset(GOOD, 0, sizeof(GOOD))
    for i in range(NUM_ACTIONS):
        # k_rollout_action: a matching tile face up (own or Helper), an order fulfilled, a
        # purchase rather than a tend, nothing kept at a scoring phase.
        GOOD[i] = ((A_PLANT_UP <= i < A_PLANT_DOWN) or (A_HDEST_UP <= i < A_HDEST_DOWN)
                   or (A_FULFIL_OPEN <= i < A_NO_FULFIL) or i < A_TEND or i == A_KEEP + 35)
    # Cache bit order of the orders: by kind, then id, so that a kind's copies are contiguous
    # and ascending bits list the kinds in ascending order (as chance_outcomes does).
    memset(KIND_BITS, 0, sizeof(KIND_BITS))
    for i, o in enumerate(sorted(range(N_ORDERS), key=lambda x: (ORDER_KIND[x], x))):
        ORDER_POS[o] = i
        ORDER_AT[i] = o
        KIND_BITS[ORDER_KIND[o]][i >> 6] |= (<uint64_t>1) << (i & 63)
    for o in range(4):
        for card in range(N_CARDS):
            cells = shapes[card // 4]
            h = card % 4
            for cell in range(N_CELLS):
                r0 = cell // 5
                c0 = cell % 5
                mask = 0
                others = 0
                inside = True
                for i in range(4):
                    dr = cells[i][0] - cells[h][0]
                    dc = cells[i][1] - cells[h][1]
                    # A15: (dr toward the player, dc to the player's right) seen from seat s.
                    if o == 0:
                        br, bc = dr, dc
                    elif o == 1:
                        br, bc = dc, -dr
                    elif o == 2:
                        br, bc = -dr, -dc
                    else:
                        br, bc = -dc, dr
                    r = r0 + br
                    cc = c0 + bc
                    if r < 0 or r > 4 or cc < 0 or cc > 4:
                        inside = False
                    else:
                        mask |= (<uint32_t>1) << (r * 5 + cc)
                        if i != h:
                            others |= (<uint32_t>1) << (r * 5 + cc)
                FOOT[o][card][cell] = mask if inside else 0
                if o == 0:
                    HELPER_DEST[card][cell] = others
    for o in range(4):
        for card in range(N_CARDS):
            for cell in range(N_CELLS):
                mask = FOOT[o][card][cell]
                k = 0
                for i in range(N_CELLS):
                    if (mask >> i) & 1:
                        if k == 4:
                            raise ValueError(f"shapes[{card // 4}]: a card covers at most 4 cells")
                        FOOT_CELLS[o][card][cell][k] = i
                        k += 1
                while k < 4:
                    FOOT_CELLS[o][card][cell][k] = N_CELLS
                    k += 1
    MIN_FOOT = 25
    memset(ONBOARD, 0, sizeof(ONBOARD))
    for o in range(4):
        for card in range(N_CARDS):
            for cell in range(N_CELLS):
                if FOOT[o][card][cell]:
                    ONBOARD[o][card] |= (<uint32_t>1) << cell
                    MIN_FOOT = min(MIN_FOOT, bin(FOOT[o][card][cell]).count("1"))
            # A footprint inside the market is the card's shape moved to the pawn cell: its
            # cells' offsets from the pawn cell, read at the first such cell (none: any offset).
            d = __builtin_ctz(ONBOARD[o][card]) if ONBOARD[o][card] else 0
            mask = FOOT[o][card][d]
            k = 0
            for i in range(N_CELLS):
                if (mask >> i) & 1:
                    FOOT_SHIFT[o][card][k] = 32 + i - d
                    k += 1
            for i in range(k, 4):
                FOOT_SHIFT[o][card][i] = FOOT_SHIFT[o][card][0] if k else 32
            for cell in range(N_CELLS):
                for d in range(N_CELLS):
                    if ((cover_dests(o, card, (<uint32_t>1) << cell) >> d) & 1) != ((FOOT[o][card][d] >> cell) & 1):
                        raise ValueError(f"shapes[{card // 4}]: a footprint is not the card's shape moved")
    OUTER = 0
    CORNERS = 0
    for cell in range(N_CELLS):
        r0 = cell // 5
        c0 = cell % 5
        NEIGH[cell] = 0
        INWARD[cell] = 0
        for d in range(8):
            r = r0 + DR[d]
            cc = c0 + DC[d]
            if 0 <= r <= 4 and 0 <= cc <= 4:
                STEP[cell][d] = r * 5 + cc
                NEIGH[cell] |= (<uint32_t>1) << (r * 5 + cc)
            else:
                STEP[cell][d] = -1
        if r0 == 0 or r0 == 4 or c0 == 0 or c0 == 4:
            OUTER |= (<uint32_t>1) << cell
        if (r0 == 0 or r0 == 4) and (c0 == 0 or c0 == 4):
            CORNERS |= (<uint32_t>1) << cell
        # A13 outer_is_step1 + A14 straight2: entering is a step from beside the
        # market in any of the 8 directions, orthogonal or diagonal, whose previous cell lies
        # off the market; the second step keeps that direction.
        for d in range(8):
            r = r0 + DR[d]
            cc = c0 + DC[d]
            if (0 <= r <= 4 and 0 <= cc <= 4 and not (0 <= r0 - DR[d] <= 4 and 0 <= c0 - DC[d] <= 4)):
                INWARD[cell] |= (<uint32_t>1) << (r * 5 + cc)
    for cell in range(N_CELLS):
        BALL2[cell] = spread(NEIGH[cell])
    memset(SEAT_AT, 0, sizeof(SEAT_AT))
    for u in range(1, 5):
        for i in range(512):
            SEAT_AT[u][i] = i % u
    memset(ORIENT, 0, sizeof(ORIENT))
    ORIENT[2][1] = 2                  # A15 default seats: 2p {0, 2}; 3p {0, 1, 2}; 4p {0..3}
    ORIENT[3][1] = 1
    ORIENT[3][2] = 2
    ORIENT[4][1] = 1
    ORIENT[4][2] = 2
    ORIENT[4][3] = 3
    LOADED = True


# --- small helpers ----------------------------------------------------------------------------
cdef inline uint32_t bit(int cell) noexcept nogil:
    return (<uint32_t>1) << cell


cdef inline uint32_t cover_dests(int o, int card, uint32_t cells) noexcept nogil:
    """The pawn cells from which the card's footprint (inside the market, seen from
    orientation o) covers one of `cells`: the cells moved back by each of the footprint's
    offsets (FOOT_SHIFT), kept where the footprint is inside (ONBOARD). A cell moved past a
    row's end lands in the next row, but never on such a pawn cell: from there, every offset
    stays inside the market (load_components checks this formula against FOOT)."""
    cdef const uint8_t* k = FOOT_SHIFT[o][card]
    cdef uint64_t s = (<uint64_t>cells) << 32
    return ONBOARD[o][card] & <uint32_t>((s >> k[0]) | (s >> k[1]) | (s >> k[2]) | (s >> k[3]))


# --- the derived cache (BotanistsCache): every write of card_loc, order_loc and market goes
# through set_card / set_order / set_cell, which keep the bit sets in step with the bytes.
cdef inline BotanistsCache* cache_of(const BotanistsCore* c) noexcept nogil:
    return &(<BotanistsState*>c).cache


cdef inline void set_card(BotanistsCore* c, int k, int loc) noexcept nogil:
    cdef BotanistsCache* ca = cache_of(c)
    cdef int old = c.card_loc[k]
    cdef uint64_t b = (<uint64_t>1) << (k & 63)
    if old < 6:
        ca.cards[old][k >> 6] &= ~b
        ca.card_count[old] -= 1
    if loc < 6:
        ca.cards[loc][k >> 6] |= b
        ca.card_count[loc] += 1
    c.card_loc[k] = loc
    if loc < <int>CARD_HAND:
        c.card_held[k >> 3] &= ~(1 << (k & 7))    # a card leaving the hands is seen again


cdef inline bint is_held(const BotanistsCore* c, int k) noexcept nogil:
    return (c.card_held[k >> 3] >> (k & 7)) & 1


cdef void reshuffle_cards(BotanistsCore* c) noexcept nogil:
    """A10: the market-card discard pile becomes the deck. Every card then in a hand is known
    to every seat not to be in the new deck (the deck is exactly the public discard pile), so
    it is marked held until it leaves the hands (hidden-information audit)."""
    cdef int held[N_CARDS]
    cdef const BotanistsCache* ca = cache_of(c)
    cdef int i, n = list2(ca.cards[<int>CARD_DISCARD][0], ca.cards[<int>CARD_DISCARD][1], held, N_CARDS)
    for i in range(n):
        set_card(c, held[i], CARD_DECK)
    for i in range(N_CARDS):
        if c.card_loc[i] >= <int>CARD_HAND:
            c.card_held[i >> 3] |= 1 << (i & 7)


cdef inline void set_order(BotanistsCore* c, int o, int loc) noexcept nogil:
    cdef BotanistsCache* ca = cache_of(c)
    cdef int old = c.order_loc[o]
    cdef int i = ORDER_POS[o]
    cdef uint64_t b = (<uint64_t>1) << (i & 63)
    if old < 11:
        ca.orders[old][i >> 6] &= ~b
    if loc < 11:
        ca.orders[loc][i >> 6] |= b
    c.order_loc[o] = loc


cdef inline void set_cell(BotanistsCore* c, int cell, int v) noexcept nogil:
    cdef BotanistsCache* ca = cache_of(c)
    cdef uint32_t b = bit(cell)
    cdef int old = c.market[cell]
    if old < N_COLOURS:
        ca.colour_cells[old] &= ~b
    c.market[cell] = v
    ca.tiles &= ~b
    ca.empties &= ~b
    if v < N_COLOURS:
        ca.tiles |= b
        ca.colour_cells[v] |= b
    elif v == EMPTY:
        ca.empties |= b


cdef inline void fill_cell(BotanistsCore* c, int cell, int col) noexcept nogil:
    """set_cell for a refill (S6/G4): the cell is empty (an empty_cell) and col a colour."""
    cdef BotanistsCache* ca = cache_of(c)
    cdef uint32_t b = bit(cell)
    c.market[cell] = col
    ca.empties &= ~b
    ca.tiles |= b
    ca.colour_cells[col] |= b


cdef inline void clear_cell(BotanistsCore* c, int cell) noexcept nogil:
    """set_cell for a collected tile (P4): the cell holds a tile (a bit of tiles_mask)."""
    cdef BotanistsCache* ca = cache_of(c)
    cdef uint32_t b = bit(cell)
    ca.colour_cells[c.market[cell]] &= ~b
    c.market[cell] = EMPTY
    ca.tiles &= ~b
    ca.empties |= b


cdef void k_rebuild(uint8_t* buf) noexcept nogil:
    """The cache from the core (after a decode, or any write of the core alone)."""
    cdef BotanistsCore* c = <BotanistsCore*>buf
    cdef BotanistsCache* ca = cache_of(c)
    cdef int k, o, i, loc
    memset(ca, 0, sizeof(BotanistsCache))
    for k in range(N_CARDS):
        loc = c.card_loc[k]
        if loc < 6:
            ca.cards[loc][k >> 6] |= (<uint64_t>1) << (k & 63)
            ca.card_count[loc] += 1
    for o in range(N_ORDERS):
        loc = c.order_loc[o]
        i = ORDER_POS[o]
        if loc < 11:
            ca.orders[loc][i >> 6] |= (<uint64_t>1) << (i & 63)
    for k in range(N_CELLS):
        if c.market[k] < N_COLOURS:
            ca.tiles |= bit(k)
            ca.colour_cells[c.market[k]] |= bit(k)
        elif c.market[k] == EMPTY:
            ca.empties |= bit(k)
    set_pawns(c)
    bag_changed(c)
    for k in range(4):
        leftovers_changed(c, k)
    ca.ctx = chance_context(c)
    ca.moves = turn_moves(c)


cdef inline int count2(const uint64_t* m) noexcept nogil:
    return pop64(m[0]) + pop64(m[1])


cdef inline int list2(uint64_t lo, uint64_t hi, int* out, int limit) noexcept nogil:
    """The set bits of a 128-bit set in ascending order (at most `limit`)."""
    cdef int n = 0
    while lo and n < limit:
        out[n] = __builtin_ctzll(lo)
        lo &= lo - 1
        n += 1
    while hi and n < limit:
        out[n] = 64 + __builtin_ctzll(hi)
        hi &= hi - 1
        n += 1
    return n


cdef inline int select64(uint64_t w, int j) noexcept nogil:
    """The j-th (0-based) set bit of a word with more than j bits, without branches (the
    draws land anywhere, so a walk's exits are mispredicted): the bytes' running bit counts
    in one multiplication, the byte holding the bit by comparing all of them with j at once
    (each byte 0x80 + j minus a count of at most 64: no borrow crosses bytes), then SELECT8."""
    cdef uint64_t ones = <uint64_t>0x0101010101010101ULL, highs = <uint64_t>0x8080808080808080ULL
    cdef uint64_t s, running
    cdef int byte, before
    s = w - ((w >> 1) & <uint64_t>0x5555555555555555ULL)
    s = (s & <uint64_t>0x3333333333333333ULL) + ((s >> 2) & <uint64_t>0x3333333333333333ULL)
    s = (s + (s >> 4)) & <uint64_t>0x0F0F0F0F0F0F0F0FULL
    running = s * ones                  # byte i: the set bits of bytes 0..i
    byte = <int>(((((((<uint64_t>j * ones) | highs) - running) & highs) >> 7) * ones) >> 56)
    before = <int>(((running << 8) >> (8 * byte)) & 255)
    return 8 * byte + SELECT8[(w >> (8 * byte)) & 255][j - before]


cdef inline int select2(const uint64_t* m, int j) noexcept nogil:
    """The j-th (0-based) set bit of a 128-bit set with more than j bits."""
    cdef int c0 = pop64(m[0])
    cdef bint high = j >= c0
    return (64 if high else 0) + select64(m[1] if high else m[0], j - (c0 if high else 0))


cdef inline int lowest2(uint64_t lo, uint64_t hi) noexcept nogil:
    if lo:
        return __builtin_ctzll(lo)
    if hi:
        return 64 + __builtin_ctzll(hi)
    return -1


cdef inline int get_score(const BotanistsCore* c, int p) noexcept nogil:
    cdef int v = c.score[p][0] | (c.score[p][1] << 8)
    if v >= 32768:
        v -= 65536
    return v


cdef inline void add_score(BotanistsCore* c, int p, int delta) noexcept nogil:
    cdef int v = get_score(c, p) + delta
    if v > 32767:
        v = 32767
    if v < -32768:
        v = -32768
    if v < 0:
        v += 65536
    c.score[p][0] = v & 255
    c.score[p][1] = (v >> 8) & 255


cdef inline int hand_size_rule(const BotanistsCore* c) noexcept nogil:
    """S3/L1: 2 market cards, 3 in solo."""
    return 3 if c.players == 1 else 2


cdef inline int hand_count(const BotanistsCore* c, int p) noexcept nogil:
    return cache_of(c).card_count[<int>CARD_HAND + p]


cdef inline int hand_cards(const BotanistsCore* c, int p, int* out) noexcept nogil:
    cdef const uint64_t* m = cache_of(c).cards[<int>CARD_HAND + p]
    return list2(m[0], m[1], out, MAX_HAND)


cdef inline int leftover_total(const BotanistsCore* c, int p) noexcept nogil:
    return c.leftover[p][0] + c.leftover[p][1] + c.leftover[p][2] + c.leftover[p][3] + c.leftover[p][4]


cdef inline uint32_t pawns_except(const BotanistsCore* c, int who) noexcept nogil:
    """The cells under the other pawns (who: a seat or HELPER)."""
    cdef const BotanistsCache* ca = cache_of(c)
    cdef uint32_t m = 0
    cdef int i
    if not ca.pawns_shared:
        return ca.pawn_cells & ~(bit(c.pawn[who]) if c.pawn[who] < N_CELLS else 0)
    for i in range(5):
        if i != who and c.pawn[i] < N_CELLS:
            m |= bit(c.pawn[i])
    return m


cdef inline void set_pawns(BotanistsCore* c) noexcept nogil:
    """cache.pawn_cells and pawns_shared from the pawns (after every move of one)."""
    cdef BotanistsCache* ca = cache_of(c)
    cdef uint32_t m = 0, b
    cdef int i
    ca.pawns_shared = 0
    for i in range(5):
        if c.pawn[i] < N_CELLS:
            b = bit(c.pawn[i])
            if m & b:
                ca.pawns_shared = 1
            m |= b
    ca.pawn_cells = m


cdef inline uint32_t tiles_mask(const BotanistsCore* c) noexcept nogil:
    return cache_of(c).tiles


cdef inline int orientation(const BotanistsCore* c, int p) noexcept nogil:
    if c.opt_orientation or c.players > 4 or p > 3:
        return 0
    return ORIENT[c.players][p]


cdef inline bint cards_available(const BotanistsCore* c) noexcept nogil:
    cdef const BotanistsCache* ca = cache_of(c)
    return (ca.cards[<int>CARD_DECK][0] | ca.cards[<int>CARD_DECK][1]
            | ca.cards[<int>CARD_DISCARD][0] | ca.cards[<int>CARD_DISCARD][1]) != 0


cdef inline bint orders_available(const BotanistsCore* c) noexcept nogil:
    cdef const BotanistsCache* ca = cache_of(c)
    return (ca.orders[<int>ORDER_DECK][0] | ca.orders[<int>ORDER_DECK][1]
            | ca.orders[<int>ORDER_DISCARD][0] | ca.orders[<int>ORDER_DISCARD][1]) != 0


cdef inline int empty_slot(const BotanistsCore* c) noexcept nogil:
    cdef int i
    for i in range(N_OPEN):
        if c.open_orders[i] == EMPTY:
            return i
    return -1


cdef inline int empty_cell(const BotanistsCore* c) noexcept nogil:
    cdef uint32_t e = cache_of(c).empties
    return __builtin_ctz(e) if e else -1


cdef inline bint bag_empty(const BotanistsCore* c) noexcept nogil:
    return cache_of(c).bag_total == 0


cdef inline void bag_changed(BotanistsCore* c) noexcept nogil:
    cache_of(c).bag_total = c.bag[0] + c.bag[1] + c.bag[2] + c.bag[3] + c.bag[4]


cdef inline void take_tile(BotanistsCore* c, int col) noexcept nogil:
    """A tile of that colour leaves the bag (G4/S6)."""
    if c.bag[col]:
        c.bag[col] -= 1
        cache_of(c).bag_total -= 1
    else:
        c.bag[col] -= 1                 # not a legal draw: the byte wraps, and so does the sum
        bag_changed(c)


cdef inline bint can_fulfil(const BotanistsCore* c, int p, int o) noexcept nogil:
    cdef int col
    for col in range(N_COLOURS):
        if c.leftover[p][col] < ORDER_NEED[o][col]:
            return False
    return True


cdef inline void pay_order(BotanistsCore* c, int p, int o) noexcept nogil:
    """O1/A11: the matching leftovers go back into the bag; the order is kept until scoring."""
    cdef int col
    cdef uint8_t need[N_COLOURS]
    # a local copy: the compiler then knows the writes below cannot change it
    memcpy(need, ORDER_NEED[o], N_COLOURS)
    for col in range(N_COLOURS):
        c.leftover[p][col] -= need[col]
        c.bag[col] += need[col]
    bag_changed(c)
    leftovers_changed(c, p)
    set_order(c, o, ORDER_FULFILLED + p)
    if c.fulfilled_total[p] < 255:
        c.fulfilled_total[p] += 1


cdef inline int next_sign(const BotanistsCore* c, int who) noexcept nogil:
    """The sign colour of the next land space of `who` (seat or HELPER); 255 if full."""
    cdef int k = c.land_filled[who]
    if k >= N_SPACES or c.board[who] >= N_BOARDS:
        return 255
    return SIGN[c.board[who]][k]


# --- movement (P1, P2) ------------------------------------------------------------------------
cdef inline uint32_t spread(uint32_t cells) noexcept nogil:
    cdef uint32_t out = 0
    while cells:
        out |= NEIGH[__builtin_ctz(cells)]
        cells &= cells - 1
    return out


cdef inline uint32_t reach_from(const BotanistsCore* c, int start, uint32_t occ) noexcept nogil:
    """P1a/P1c (A14): cells 1 or 2 steps from `start` without entering or crossing a pawn."""
    cdef uint32_t one, two = 0
    cdef int d, a, b
    if c.opt_move == 0:
        if NEIGH[start] & occ == 0:
            return BALL2[start] & ~occ & ~bit(start)    # nothing blocks: spread(NEIGH) is BALL2
        one = NEIGH[start] & ~occ
        two = spread(one) & ~occ
    else:
        one = 0
        for d in range(8):
            a = STEP[start][d]
            if a < 0 or (occ >> a) & 1:
                continue
            one |= bit(a)
            b = STEP[a][d]
            if b >= 0 and not (occ >> b) & 1:
                two |= bit(b)
    return (one | two) & ~bit(start)


cdef uint32_t move_dests(const BotanistsCore* c, int p, uint32_t occ) noexcept nogil:
    """Legal destinations of seat p's pawn at the start of a purchase (occ: the other pawns)."""
    cdef uint32_t free_outer, res, w, jumps
    cdef int start = c.pawn[p]
    cdef int v
    if start >= N_CELLS:
        # P2 first turn: enter from an outermost tile.
        free_outer = OUTER & ~occ
        if c.opt_entry == 0:
            # outer_start: any free outer tile is a virtual start, then a normal P1 move.
            res = 0
            w = free_outer
            while w:
                v = __builtin_ctz(w)
                w &= w - 1
                res |= reach_from(c, v, occ)
            return res
        # outer_is_step1: entering counts as the first step, an optional second follows.
        if c.opt_move == 0:
            return free_outer | (spread(free_outer) & ~occ)
        res = free_outer
        w = free_outer
        while w:
            v = __builtin_ctz(w)
            w &= w - 1
            res |= INWARD[v] & ~occ
        return res
    res = reach_from(c, start, occ)
    if res == 0 and (CORNERS >> start) & 1:
        # P1d corner escape: jump to another free corner (step 1), then maybe one more step.
        jumps = CORNERS & ~bit(start) & ~occ
        res = (jumps | (spread(jumps) & ~occ)) & ~bit(start)
    return res


cdef uint32_t purchase_dests(const BotanistsCore* c, int p, const int* cards,
                             int n_cards) noexcept nogil:
    """P1-P4: the destinations where one of the cards collects at least one tile."""
    cdef uint32_t occ = pawns_except(c, p)
    cdef uint32_t dests = move_dests(c, p, occ)
    cdef uint32_t avail = tiles_mask(c) & ~occ
    cdef uint32_t unavail = ~avail & ((<uint32_t>1 << N_CELLS) - 1)
    cdef uint32_t res = 0, w
    cdef int o = orientation(c, p)
    cdef int i
    w = unavail
    for i in range(MIN_FOOT - 1):       # fewer than MIN_FOOT cells: none left after MIN_FOOT - 1
        w &= w - 1
    if w == 0:
        # Fewer cells without a collectable tile than any footprint covers: every footprint
        # inside the market collects one.
        for i in range(n_cards):
            res |= ONBOARD[o][cards[i]]
        return res & dests
    for i in range(n_cards):
        res |= cover_dests(o, cards[i], avail)
    return res & dests


cdef uint32_t turn_moves(const BotanistsCore* c) noexcept nogil:
    """cache.moves from scratch: the purchase destinations at a turn's first decision."""
    cdef int cards[MAX_HAND]
    cdef int p = c.cur
    if c.stage != ST_ACTION or cache_of(c).ctx != CTX_NONE or c.land_filled[p] >= N_SPACES:
        return 0
    return purchase_dests(c, p, cards, hand_cards(c, p, cards))


cdef inline bint purchase_with(const BotanistsCore* c, int p, const int* cards, int n_cards) noexcept nogil:
    """Is there a destination where one of the cards collects at least one tile (P3, P4)?"""
    return purchase_dests(c, p, cards, n_cards) != 0


cdef bint redraw_could_help(const BotanistsCore* c, int p) noexcept nogil:
    """A12 guard: some card outside the other seats' hands would allow a purchase."""
    cdef int cards[N_CARDS]
    cdef const BotanistsCache* ca = cache_of(c)
    cdef const uint64_t* hand = ca.cards[<int>CARD_HAND + p]
    cdef int n = list2(ca.cards[<int>CARD_DECK][0] | ca.cards[<int>CARD_DISCARD][0] | hand[0],
                       ca.cards[<int>CARD_DECK][1] | ca.cards[<int>CARD_DISCARD][1] | hand[1],
                       cards, N_CARDS)
    return purchase_with(c, p, cards, n)


cdef inline uint32_t helper_targets(const BotanistsCore* c, int card) noexcept nogil:
    """L5 + A23a: the card's other boxes inside the market, holding a tile, not under a pawn."""
    cdef int h = c.pawn[HELPER]
    if h >= N_CELLS:
        return 0
    return HELPER_DEST[card][h] & tiles_mask(c) & ~pawns_except(c, HELPER)


cdef bint helper_with(const BotanistsCore* c, bint any_card) noexcept nogil:
    cdef const BotanistsCache* ca = cache_of(c)
    cdef uint64_t lo = ca.cards[<int>CARD_HAND][0], hi = ca.cards[<int>CARD_HAND][1]
    cdef int cards[N_CARDS]
    cdef int i, n
    if any_card:
        lo |= ca.cards[<int>CARD_DECK][0] | ca.cards[<int>CARD_DISCARD][0]
        hi |= ca.cards[<int>CARD_DECK][1] | ca.cards[<int>CARD_DISCARD][1]
    n = list2(lo, hi, cards, N_CARDS)
    for i in range(n):
        if helper_targets(c, cards[i]):
            return True
    return False


# --- turn flow --------------------------------------------------------------------------------
cdef void plant(BotanistsCore* c, int who, int colour, int down) noexcept nogil:
    cdef int k = c.land_filled[who]
    if k >= N_SPACES:
        return
    c.land_colour[who][k] = colour
    c.land_down[who][k] = down
    c.land_filled[who] = k + 1


cdef void skip_space(BotanistsCore* c, int who) noexcept nogil:
    """A passed turn (A10 extension) still uses up its land space (G1: turn t fills space
    t - 1), which stays empty: no tile, no withered tile, no column bonus."""
    cdef int k = c.land_filled[who]
    if k >= N_SPACES:
        return
    c.land_colour[who][k] = EMPTY
    c.land_down[who][k] = 0
    c.land_filled[who] = k + 1
    c.planted |= 2 if who == HELPER else 1


cdef void start_turn(BotanistsCore* c) noexcept nogil:
    c.cur = SEAT_AT[c.players][c.first_player + c.turns_done]
    c.part = PART_NONE
    c.done_mask = 0
    c.planted = 0
    c.own_action = 0
    c.solo_first = 0
    c.keep_target = 0
    c.bonus = NO_BONUS
    c.bonus_on_helper = 0
    c.sel_a = EMPTY
    c.sel_b = EMPTY
    c.stage = ST_SOLO_ORDER if c.players == 1 else ST_ACTION


cdef void end_turn(BotanistsCore* c) noexcept nogil:
    """P9/L8 hand refill, open-order refill and market refill (G4), then the next turn.

    O2 says a fulfilled open order is replaced at once; the replacement is drawn here instead,
    because no decision between the fulfilment and the end of the turn (the personal order,
    the solo discard) depends on the open orders, and a chance node in the middle would cut
    the player's turn in two for the search. Empty cells are refilled after every turn as
    long as the bag has tiles (A10: tiles that returned to the bag fill cells left empty)."""
    cdef int h = hand_count(c, c.cur)
    c.pend_cards = hand_size_rule(c) - h if h < hand_size_rule(c) else 0
    c.pend_open = 1
    c.pend_market = 1
    c.part = PART_NONE
    c.stage = ST_END_TURN


cdef void after_fulfil(BotanistsCore* c) noexcept nogil:
    c.done_mask &= ~4
    if c.players == 1:
        c.stage = ST_SOLO_DISCARD
    else:
        end_turn(c)


cdef void solo_after_both(BotanistsCore* c) noexcept nogil:
    """L3: orders are fulfilled once, after both characters played."""
    if c.own_action == 2 or c.opt_fulfil_purchase:
        c.stage = ST_FULFIL_OPEN
    else:
        c.stage = ST_SOLO_DISCARD


cdef void own_part_done(BotanistsCore* c) noexcept nogil:
    c.done_mask |= 1
    c.part = PART_NONE
    c.sel_a = EMPTY
    c.sel_b = EMPTY
    c.keep_target = 0
    if c.players == 1:
        if c.done_mask & 2:
            solo_after_both(c)
        else:
            c.stage = ST_HELPER_CARD
    elif c.own_action == 2 or (c.own_action == 1 and c.opt_fulfil_purchase):
        c.stage = ST_FULFIL_OPEN      # P8 / T5
    else:
        end_turn(c)


cdef void helper_part_done(BotanistsCore* c) noexcept nogil:
    c.done_mask |= 2
    c.part = PART_NONE
    c.sel_a = EMPTY
    c.sel_b = EMPTY
    if c.done_mask & 1:
        solo_after_both(c)
    else:
        c.stage = ST_ACTION


cdef void after_bonus(BotanistsCore* c) noexcept nogil:
    """Continue the part that planted the tile once its bonus is used or skipped."""
    cdef int col, p = c.cur
    cdef uint8_t v
    cdef uint32_t packed = 0
    c.bonus = NO_BONUS
    c.bonus_on_helper = 0
    c.sel_a = EMPTY
    c.sel_b = EMPTY
    if c.part == PART_PURCHASE:
        # P7: the rest goes to the marginal land, read byte by byte (a collected count was
        # just written so, P5) and packed as it is written (leftovers_changed).
        for col in range(N_COLOURS):
            v = bts_byte(&c.leftover[p][col]) + bts_byte(&c.collected[col])
            c.leftover[p][col] = v
            c.collected[col] = 0
            packed |= (<uint32_t>(v if v < 27 else 27)) << (6 * col)
        cache_of(c).left_packed[p] = packed
        own_part_done(c)
    elif c.part == PART_TEND:
        c.stage = ST_TEND_DISCARD
    elif c.part == PART_HELPER:
        helper_part_done(c)
    else:
        own_part_done(c)


cdef int bonus_actions(const BotanistsCore* c, int32_t* out) noexcept nogil:
    """2.6 / L9: the choices of the bonus being resolved (the first step offers SKIP)."""
    cdef int n = 0, p = c.cur, col, cell, q, d, k, slot
    cdef uint32_t occ
    cdef bint ok
    cdef int kind = c.bonus
    if kind == BONUS_SWAP_MARKET:
        if c.sel_b == EMPTY:
            for col in range(N_COLOURS):
                if c.leftover[p][col] == 0:
                    continue
                ok = False
                for cell in range(N_CELLS):
                    if c.market[cell] < N_COLOURS and c.market[cell] != col:
                        ok = True
                        break
                if ok:
                    out[n] = A_SWAPM_GIVE + col
                    n += 1
            out[n] = A_SKIP
            return n + 1
        for cell in range(N_CELLS):
            if c.market[cell] < N_COLOURS and c.market[cell] != c.sel_b:
                out[n] = A_SWAPM_CELL + cell
                n += 1
        return n
    if kind == BONUS_SWAP_PLAYER:
        if c.players == 1:
            # L9 red: with a face-up tile on the Helper's land.
            if c.sel_b == EMPTY:
                for col in range(N_COLOURS):
                    if c.leftover[0][col] == 0:
                        continue
                    for k in range(c.land_filled[HELPER]):
                        if (not c.land_down[HELPER][k] and c.land_colour[HELPER][k] < N_COLOURS
                                and c.land_colour[HELPER][k] != col):
                            out[n] = A_SWAPP_GIVE + col
                            n += 1
                            break
                out[n] = A_SKIP
                return n + 1
            for k in range(c.land_filled[HELPER]):
                if (not c.land_down[HELPER][k] and c.land_colour[HELPER][k] < N_COLOURS
                        and c.land_colour[HELPER][k] != c.sel_b):
                    out[n] = A_SWAPH_TAKE + k
                    n += 1
            return n
        if c.sel_a == EMPTY:
            for q in range(c.players):
                if q == p:
                    continue
                ok = False
                for col in range(N_COLOURS):
                    for d in range(N_COLOURS):
                        if col != d and c.leftover[p][col] and c.leftover[q][d]:
                            ok = True
                if ok:
                    out[n] = A_SWAPP_SEAT + q
                    n += 1
            out[n] = A_SKIP
            return n + 1
        q = c.sel_a
        if q >= c.players:
            return 0
        if c.sel_b == EMPTY:
            for col in range(N_COLOURS):
                if c.leftover[p][col] == 0:
                    continue
                for d in range(N_COLOURS):
                    if d != col and c.leftover[q][d]:
                        out[n] = A_SWAPP_GIVE + col
                        n += 1
                        break
            return n
        for d in range(N_COLOURS):
            if d != c.sel_b and c.leftover[q][d]:
                out[n] = A_SWAPP_TAKE + d
                n += 1
        return n
    if kind == BONUS_MOVE:
        occ = pawns_except(c, p)
        for cell in range(N_CELLS):
            if cell != c.pawn[p] and not (occ >> cell) & 1:    # A29: staying put is a skip
                out[n] = A_BMOVE_OWN + cell
                n += 1
        if c.players == 1 and c.pawn[HELPER] < N_CELLS:
            occ = pawns_except(c, HELPER)
            for cell in range(N_CELLS):
                if cell != c.pawn[HELPER] and not (occ >> cell) & 1:
                    out[n] = A_BMOVE_HELPER + cell
                    n += 1
        out[n] = A_SKIP
        return n + 1
    if kind == BONUS_TAKE_ORDER:
        for slot in range(N_OPEN):
            if c.open_orders[slot] < N_ORDERS:
                out[n] = A_TAKE_OPEN + slot
                n += 1
        if orders_available(c):
            out[n] = A_TAKE_DECK
            n += 1
        out[n] = A_SKIP
        return n + 1
    return 0


cdef void start_bonus(BotanistsCore* c, int sign_colour, int on_helper) noexcept nogil:
    """P5/T2/L5: a face-down tile triggers the bonus of its space's sign colour (2.6)."""
    cdef int32_t tmp[MAX_LEGAL]
    cdef int kind = BONUS_OF[sign_colour] if sign_colour < N_COLOURS else NO_BONUS
    c.bonus_on_helper = on_helper
    c.sel_a = EMPTY
    c.sel_b = EMPTY
    if kind == BONUS_PLUS3:
        # Using +3 VP can only help, so it is applied rather than offered (BA1 keeps the
        # choice, but declining a free 3 points is never a better move).
        add_score(c, c.cur, PLUS3_POINTS)
        after_bonus(c)
        return
    if kind == NO_BONUS:
        after_bonus(c)
        return
    c.bonus = kind
    c.stage = ST_BONUS
    if bonus_actions(c, tmp) <= 1:
        after_bonus(c)                 # BA2: nothing usable, only SKIP: skipped at once


cdef void tend_done(BotanistsCore* c) noexcept nogil:
    own_part_done(c)


cdef int sc7_chooser(const BotanistsCore* c) noexcept nogil:
    """SC7/A19: the player furthest behind chooses; ties: furthest clockwise from the leader."""
    cdef int n = c.players
    cdef int t, s, leader = c.first_player, best = -100000, low = 100000, v, dist, best_dist = -1
    cdef int chooser = (c.first_player + n - 1) % n
    cdef bint all_tied = True
    for t in range(n):
        s = (c.first_player + t) % n
        v = get_score(c, s)
        if v > best:
            best = v
            leader = s
        if v < low:
            low = v
        if v != get_score(c, c.first_player):
            all_tied = False
    if all_tied:
        return chooser                 # A19: the last player of the finished round
    for s in range(n):
        if get_score(c, s) == low:
            dist = (s - leader + n) % n
            if dist > best_dist:
                best_dist = dist
                chooser = s
    return chooser


cdef inline bint column_face_up(const BotanistsCore* c, int who, int r) noexcept nogil:
    cdef int k
    for k in range(5 * r, 5 * r + 5):
        if k >= c.land_filled[who] or c.land_down[who][k] or c.land_colour[who][k] >= N_COLOURS:
            return False
    return True


cdef inline int face_down_count(const BotanistsCore* c, int who) noexcept nogil:
    cdef int k, n = 0
    for k in range(c.land_filled[who]):
        n += c.land_down[who][k]
    return n


cdef void round_scoring(BotanistsCore* c) noexcept nogil:
    """SC1-SC4 and SC6 for every player (+ L10 the Helper's column); E1/E2 after round 3."""
    cdef int p, o, n_orders, left, pts, r = c.round, k, i
    cdef int held[N_ORDERS]
    cdef const BotanistsCache* ca = cache_of(c)
    cdef const uint64_t* m
    for p in range(c.players):
        m = ca.orders[<int>ORDER_FULFILLED + p]
        n_orders = list2(m[0], m[1], held, N_ORDERS)
        for i in range(n_orders):
            set_order(c, ORDER_AT[held[i]], ORDER_DISCARD)   # SC6
        left = leftover_total(c, p)
        pts = ORDER_POINTS * n_orders - LEFTOVER_PENALTY * left
        if left == 0:
            pts += NO_LEFTOVER_BONUS
        if r < 3 and column_face_up(c, p, r):
            pts += COLUMN_BONUS[r]
        if c.players == 1 and r < 3 and column_face_up(c, HELPER, r):
            pts += COLUMN_BONUS[r]                       # L10
        add_score(c, p, pts)
    if r >= 2:
        for p in range(c.players):
            k = face_down_count(c, p)
            pts = k * (k + 1) // 2                        # E1: -T(k)
            if c.players == 1:
                k = face_down_count(c, HELPER)
                pts += k * (k + 1) // 2                   # L11/A23c: scored separately
            pts += UNFULFILLED_PERSONAL_PENALTY * count2(ca.orders[<int>ORDER_PERSONAL + p])  # E2
            add_score(c, p, -pts)
        c.round = 3
        c.stage = ST_OVER
        return
    c.keep_index = 0
    c.stage = ST_KEEP


cdef void new_round(BotanistsCore* c, int first) noexcept nogil:
    c.round += 1
    c.first_player = first
    c.turns_done = 0
    c.keep_index = 0
    c.chooser = 0
    c.pend_market = 1                 # withered tiles went back to the bag: refill what is empty
    c.pend_open = 1
    start_turn(c)


cdef void discard_hand(BotanistsCore* c, int p) noexcept nogil:
    """A12 / L7: the whole hand is revealed and discarded, the same number is drawn.

    DECISIONS-CHANGED (A12): the decisions file says "draw 2 (3 in solo)"; in solo the hand
    may hold 2 cards when the Helper already moved, and drawing 3 would hand the player a card
    for free. Drawing as many as were discarded is A23(b)'s reading of L7, used for both."""
    cdef int cards[N_CARDS]
    cdef const uint64_t* m = cache_of(c).cards[<int>CARD_HAND + p]
    cdef int i, n = list2(m[0], m[1], cards, N_CARDS)
    for i in range(n):
        set_card(c, cards[i], CARD_DISCARD)
    c.pend_cards = n if n > 0 else hand_size_rule(c)


cdef inline int board_target(const BotanistsCore* c) noexcept nogil:
    cdef int i
    for i in range(c.players):
        if c.board[i] == EMPTY:
            return i
    if c.players == 1 and c.board[HELPER] == EMPTY:
        return HELPER
    return -1


cdef inline int cards_target(const BotanistsCore* c) noexcept nogil:
    cdef int p
    for p in range(c.players):
        if hand_count(c, p) < hand_size_rule(c):
            return p
    return -1


cdef inline int personal_count(const BotanistsCore* c, int p) noexcept nogil:
    return count2(cache_of(c).orders[<int>ORDER_PERSONAL + p])


cdef inline int personal_target(const BotanistsCore* c) noexcept nogil:
    cdef int p
    for p in range(c.players):
        if c.board[p] < N_BOARDS and personal_count(c, p) < 1 + EXTRA_PERSONAL[c.board[p]]:
            return p
    return -1


cdef inline bint pending_chance(const BotanistsCore* c) noexcept nogil:
    """Any of pend_personal, pend_open, pend_cards, pend_market. Read byte by byte, not as
    one word: they are written a byte at a time just before (end_turn, a refill), and a word
    read of bytes still in the store buffer waits for them to reach the cache."""
    return (c.pend_personal | c.pend_open | c.pend_cards | c.pend_market) != 0


cdef void normalize_pending(BotanistsCore* c) noexcept nogil:
    """A10: a refill or draw that nothing can satisfy is dropped."""
    if c.pend_personal and not orders_available(c):
        c.pend_personal = 0
    if c.pend_open and (empty_slot(c) < 0 or not orders_available(c)):
        c.pend_open = 0
    if c.pend_cards and not cards_available(c):
        c.pend_cards = 0
    if c.pend_market and (empty_cell(c) < 0 or bag_empty(c)):
        c.pend_market = 0


cdef bint any_open_fulfillable(const BotanistsCore* c) noexcept nogil:
    cdef uint32_t lg = own_leftovers(c, c.cur) | GUARD
    cdef int i
    for i in range(N_OPEN):
        if c.open_orders[i] < N_ORDERS and ((lg - ORDER_PACKED[c.open_orders[i]]) & GUARD) == GUARD:
            return True     # can_fulfil, on the packed counts (clamped at 27, above any need)
    return False


cdef bint any_personal_fulfillable(const BotanistsCore* c) noexcept nogil:
    cdef const uint64_t* m = cache_of(c).orders[<int>ORDER_PERSONAL + c.cur]
    cdef uint64_t lo = m[0], hi = m[1]
    cdef uint32_t lg
    if not (lo | hi):
        return False
    lg = own_leftovers(c, c.cur) | GUARD
    while lo:                       # can_fulfil, on the packed counts (as any_open_fulfillable)
        if ((lg - ORDER_PACKED[ORDER_AT[__builtin_ctzll(lo)]]) & GUARD) == GUARD:
            return True
        lo &= lo - 1
    while hi:
        if ((lg - ORDER_PACKED[ORDER_AT[64 + __builtin_ctzll(hi)]]) & GUARD) == GUARD:
            return True
        hi &= hi - 1
    return False


cdef void advance(BotanistsCore* c, int32_t action) noexcept nogil:
    """The action (apply_move; -1: none, already applied), then every forced step until a
    decision, a chance node or the end, then the derived chance context (set_derived). One
    function, so that k_apply's other steps pay for one call."""
    cdef int guard, st, seat, p
    cdef bint pending
    cdef int cards[MAX_HAND]
    if action >= 0:
        apply_move(c, action)
    for guard in range(400):
        pending = pending_chance(c)
        if pending:
            normalize_pending(c)
            pending = pending_chance(c)
        st = c.stage
        if st <= ST_SETUP_FIRST:
            if st == ST_SETUP_BOARD:
                if board_target(c) >= 0:
                    break
                c.stage = ST_SETUP_CARDS
                continue
            if st == ST_SETUP_CARDS:
                if cards_target(c) >= 0 and cards_available(c):
                    break
                c.stage = ST_SETUP_OPEN
                continue
            if st == ST_SETUP_OPEN:
                if empty_slot(c) >= 0 and orders_available(c):
                    break
                c.stage = ST_SETUP_PERSONAL
                continue
            if st == ST_SETUP_PERSONAL:
                if personal_target(c) >= 0 and orders_available(c):
                    break
                c.stage = ST_SETUP_MARKET
                continue
            if st == ST_SETUP_MARKET:
                if empty_cell(c) >= 0 and not bag_empty(c):
                    break
                if c.players > 1:
                    c.stage = ST_SETUP_FIRST
                    break
                c.first_player = 0
                c.turns_done = 0
                start_turn(c)
                continue
            break                          # ST_SETUP_FIRST
        if st == ST_OVER or pending:    # (the setup stages above change no pending draw)
            break
        if st == ST_END_TURN:
            c.turns_done += 1
            if c.turns_done >= 5 * c.players:
                round_scoring(c)
            else:
                start_turn(c)
            continue
        p = c.cur
        if st == ST_ACTION:
            if c.land_filled[p] >= N_SPACES:
                c.own_action = 3                # only reachable from a full land: defensive
                c.planted |= 1
                own_part_done(c)
                continue
            # cache.moves: the destinations, kept for legal_actions at this decision.
            cache_of(c).moves = purchase_dests(c, p, cards, hand_cards(c, p, cards))
            if cache_of(c).moves:
                break
            if redraw_could_help(c, p):
                discard_hand(c, p)          # A12
                continue
            if leftover_total(c, p) > 0:
                break                       # tending is the only action
            # DECISIONS-CHANGED (A10/A12): "repeat the redraw until a purchase is legal" never
            # ends when no card at all allows one (the bag ran out and the market is nearly
            # empty) or when the only usable cards are in other hands. Then, with nothing to
            # tend either, the turn passes: no tile is planted (that space stays empty, so that
            # column earns no bonus) and play goes on.
            c.own_action = 3
            skip_space(c, p)
            own_part_done(c)
            continue
        if st == ST_HELPER_CARD:
            if c.land_filled[HELPER] >= N_SPACES:
                helper_part_done(c)
                continue
            if helper_with(c, False):
                break
            if helper_with(c, True):
                discard_hand(c, 0)          # L7
                continue
            skip_space(c, HELPER)           # A10 (extension): no card can move the Helper
            helper_part_done(c)
            continue
        if st == ST_TEND_DISCARD:
            if empty_slot(c) == 0 and c.open_orders[1] == EMPTY and c.open_orders[2] == EMPTY:
                c.stage = ST_TEND_DRAW
                continue
            break
        if st == ST_TEND_DRAW:
            if not cards_available(c):
                tend_done(c)
                continue
            break
        if st == ST_TEND_KEEP:
            if hand_count(c, p) <= c.keep_target:
                tend_done(c)
                continue
            break
        if st == ST_FULFIL_OPEN:
            if not any_open_fulfillable(c):
                c.stage = ST_FULFIL_PERSONAL
                continue
            break
        if st == ST_FULFIL_PERSONAL:
            if c.done_mask & 4 or not any_personal_fulfillable(c):   # T5: done first
                after_fulfil(c)
                continue
            break
        if st == ST_SOLO_DISCARD:
            if hand_count(c, 0) == 0:
                end_turn(c)
                continue
            break
        if st == ST_KEEP:
            if c.keep_index >= c.players:
                if c.players == 1:
                    new_round(c, 0)
                else:
                    c.chooser = sc7_chooser(c)
                    c.stage = ST_CHOOSE_FIRST
                continue
            seat = (c.first_player + c.keep_index) % c.players
            if leftover_total(c, seat) == 0:
                c.keep_index += 1
                continue
            break
        break
    set_derived(c)


# --- legal actions ----------------------------------------------------------------------------
cdef int k_num_players(const uint8_t* buf) noexcept nogil:
    return (<const BotanistsCore*>buf).players


cdef inline int chance_context(const BotanistsCore* c) noexcept nogil:
    """What a chance node draws now (CTX_NONE at a decision or the end); cached as cache.ctx."""
    cdef int st = c.stage
    cdef int t
    if st == ST_OVER:
        return CTX_NONE
    if st > ST_SETUP_FIRST:
        if c.pend_personal:
            return CTX_PERSONAL
        if c.pend_open:
            return CTX_OPEN
        if c.pend_cards:
            return CTX_CARDS
        if c.pend_market:
            return CTX_TILE
        return CTX_NONE
    if st == ST_SETUP_BOARD:
        t = board_target(c)
        if t < 0 or (c.opt_choose_boards and t < c.players):
            return CTX_NONE
        return CTX_BOARD
    if st == ST_SETUP_CARDS:
        return CTX_CARDS_SETUP
    if st == ST_SETUP_OPEN:
        return CTX_OPEN
    if st == ST_SETUP_PERSONAL:
        return CTX_PERSONAL_SETUP
    if st == ST_SETUP_MARKET:
        return CTX_TILE
    if st == ST_SETUP_FIRST:
        return CTX_FIRST
    if c.pend_personal:
        return CTX_PERSONAL
    if c.pend_open:
        return CTX_OPEN
    if c.pend_cards:
        return CTX_CARDS
    if c.pend_market:
        return CTX_TILE
    return CTX_NONE


cdef int k_current_player(const uint8_t* buf) noexcept nogil:
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    if cache_of(c).ctx != CTX_NONE:     # never at the end (chance_context)
        return CHANCE
    if c.stage == ST_OVER:
        return TERMINAL
    if c.stage == ST_SETUP_BOARD:
        return board_target(c)
    if c.stage == ST_KEEP:
        return (c.first_player + c.keep_index) % c.players
    if c.stage == ST_CHOOSE_FIRST:
        return c.chooser
    return c.cur


cdef int k_legal_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef int n = 0, p = c.cur, i, k, col, cell, a, b, o, slot, mask, present, greater, need, sign
    cdef int cards[MAX_HAND]
    cdef int nh
    cdef uint32_t dests, avail, w
    cdef int orient
    cdef int held[N_ORDERS]
    cdef int last_kind
    cdef const BotanistsCache* ca = cache_of(c)
    cdef const uint64_t* m
    cdef int st
    cdef bint ok
    cdef int one[6]
    cdef int two[6]
    if c.stage == ST_OVER or ca.ctx != CTX_NONE:
        return 0
    st = c.stage
    if st == ST_SETUP_BOARD:
        for b in range(N_BOARDS):
            ok = True
            for i in range(5):
                if c.board[i] == b:
                    ok = False
            if ok:
                out[n] = A_CHOOSE_BOARD + b
                n += 1
        return n
    if st == ST_SOLO_ORDER:
        out[0] = A_OWN_FIRST
        out[1] = A_HELPER_FIRST
        return 2
    if st == ST_ACTION:
        # G3: purchase (P1 destination; only where a hand card collects a tile) or tend (T2).
        dests = ca.moves
        while dests:
            out[n] = A_MOVE + __builtin_ctz(dests)
            n += 1
            dests &= dests - 1
        if c.land_filled[p] < N_SPACES:
            for col in range(N_COLOURS):
                if c.leftover[p][col]:
                    out[n] = A_TEND + col
                    n += 1
        return n
    if st == ST_CARD:
        nh = hand_cards(c, p, cards)
        orient = orientation(c, p)
        avail = tiles_mask(c) & ~pawns_except(c, p)
        if c.pawn[p] >= N_CELLS:
            return 0
        for i in range(nh):
            if FOOT[orient][cards[i]][c.pawn[p]] & avail:
                out[n] = A_CARD + cards[i]
                n += 1
        return n
    if st == ST_PLANT:
        # P5: face up only on a matching sign; face down always (and triggers the bonus).
        sign = next_sign(c, p)
        for col in range(N_COLOURS):
            if c.collected[col] and col == sign:
                out[n] = A_PLANT_UP + col
                n += 1
        for col in range(N_COLOURS):
            if c.collected[col]:
                out[n] = A_PLANT_DOWN + col
                n += 1
        return n
    if st == ST_BONUS:
        return bonus_actions(c, out)
    if st == ST_TEND_DISCARD:
        present = 0
        for slot in range(N_OPEN):
            if c.open_orders[slot] < N_ORDERS:
                present |= 1 << slot
        for mask in range(8):
            if mask & ~present == 0:
                out[n] = A_DISCARD_OPEN + mask
                n += 1
        return n
    if st == ST_TEND_DRAW:
        out[0] = A_DRAW2
        out[1] = A_NO_DRAW
        return 2
    if st == ST_TEND_KEEP:
        # T4: one card at a time, in any order (an order imposed on card ids would tell the
        # other seats something about the cards kept).
        m = ca.cards[<int>CARD_HAND + p]
        nh = list2(m[0], m[1], held, N_CARDS)
        for i in range(nh):
            out[n] = A_DISCARD_CARD + held[i]
            n += 1
        return n
    if st == ST_FULFIL_OPEN or st == ST_FULFIL_PERSONAL:
        # T5/P8: "one order from the open market and/or one personal order", in either
        # order: the personal ones are offered beside the open ones until one is fulfilled
        # (done_mask bit 2). The search expands both orders too: from the position after
        # either first move the other must stay reachable (a player may have entered it), so
        # neither order can be pruned (kernel contract: no search_actions for Botanists).
        if st == ST_FULFIL_OPEN:
            for slot in range(N_OPEN):
                o = c.open_orders[slot]
                if o < N_ORDERS and can_fulfil(c, p, o):
                    out[n] = A_FULFIL_OPEN + slot
                    n += 1
        if not c.done_mask & 4:
            # Cache bits run by kind, so each fulfillable kind is listed once, ascending.
            m = ca.orders[<int>ORDER_PERSONAL + p]
            nh = list2(m[0], m[1], held, N_ORDERS)
            last_kind = -1
            for i in range(nh):
                o = ORDER_AT[held[i]]
                if ORDER_KIND[o] != last_kind and can_fulfil(c, p, o):
                    last_kind = ORDER_KIND[o]
                    out[n] = A_FULFIL_PERSONAL + last_kind
                    n += 1
        out[n] = A_NO_FULFIL
        return n + 1
    if st == ST_HELPER_CARD:
        nh = list2(ca.cards[<int>CARD_HAND][0], ca.cards[<int>CARD_HAND][1], held, N_CARDS)
        for i in range(nh):
            if helper_targets(c, held[i]):
                out[n] = A_HCARD + held[i]
                n += 1
        return n
    if st == ST_HELPER_DEST:
        if c.sel_a >= N_CARDS:
            return 0
        w = helper_targets(c, c.sel_a)
        sign = next_sign(c, HELPER)
        dests = w
        while dests:
            cell = __builtin_ctz(dests)
            dests &= dests - 1
            if c.market[cell] == sign:
                out[n] = A_HDEST_UP + cell
                n += 1
        dests = w
        while dests:
            cell = __builtin_ctz(dests)
            dests &= dests - 1
            out[n] = A_HDEST_DOWN + cell
            n += 1
        return n
    if st == ST_SOLO_DISCARD:
        nh = list2(ca.cards[<int>CARD_HAND][0], ca.cards[<int>CARD_HAND][1], held, N_CARDS)
        for i in range(nh):
            out[n] = A_DISCARD_CARD + held[i]
            n += 1
        out[n] = A_NO_DISCARD
        return n + 1
    if st == ST_KEEP:
        # SC5: keep colours a <= b (5 = nothing) that the leftovers hold, listed without a
        # branch on them (which leftovers remain follows no pattern): each pair is written and
        # counted only if it can be kept.
        p = (c.first_player + c.keep_index) % c.players
        for a in range(N_COLOURS):
            one[a] = c.leftover[p][a] >= 1
            two[a] = c.leftover[p][a] >= 2
        one[N_COLOURS] = 1
        two[N_COLOURS] = 1
        for a in range(6):
            out[n] = A_KEEP + a * 6 + a
            n += two[a]
            for b in range(a + 1, 6):
                out[n] = A_KEEP + a * 6 + b
                n += one[a] & one[b]
        return n
    if st == ST_CHOOSE_FIRST:
        for i in range(c.players):
            out[n] = A_FIRST + i
            n += 1
        return n
    return 0


cdef inline const uint64_t* card_source(const BotanistsCache* ca) noexcept nogil:
    """A10: an empty card deck is the shuffled discard pile."""
    if ca.cards[<int>CARD_DECK][0] | ca.cards[<int>CARD_DECK][1]:
        return ca.cards[<int>CARD_DECK]
    return ca.cards[<int>CARD_DISCARD]


cdef inline const uint64_t* order_source(const BotanistsCache* ca) noexcept nogil:
    """A10: an empty order deck is the shuffled discard pile."""
    if ca.orders[<int>ORDER_DECK][0] | ca.orders[<int>ORDER_DECK][1]:
        return ca.orders[<int>ORDER_DECK]
    return ca.orders[<int>ORDER_DISCARD]


cdef int k_chance_outcomes(const uint8_t* buf, int32_t* out, double* weights) noexcept nogil:
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef int ctx = cache_of(c).ctx
    cdef int n = 0, i, k, b, o, col, kind, last
    cdef int held[N_ORDERS]
    cdef const uint64_t* src
    cdef const BotanistsCache* ca = cache_of(c)
    cdef bint used
    if ctx == CTX_BOARD:
        for b in range(N_BOARDS):
            used = False
            for i in range(5):
                if c.board[i] == b:
                    used = True
            if not used:
                out[n] = C_BOARD + b
                weights[n] = 1.0
                n += 1
        return n
    if ctx == CTX_CARDS_SETUP or ctx == CTX_CARDS:
        src = card_source(ca)
        k = list2(src[0], src[1], held, N_CARDS)
        for i in range(k):
            out[i] = C_CARD + held[i]
            weights[i] = 1.0
        return k
    if ctx == CTX_OPEN or ctx == CTX_PERSONAL_SETUP or ctx == CTX_PERSONAL:
        # Cache bits run by kind: one outcome per kind present, weighted by its copies.
        src = order_source(ca)
        k = list2(src[0], src[1], held, N_ORDERS)
        last = -1
        for i in range(k):
            kind = ORDER_KIND[ORDER_AT[held[i]]]
            if kind != last:
                out[n] = C_ORDER + kind
                weights[n] = 1.0
                n += 1
                last = kind
            else:
                weights[n - 1] += 1.0
        return n
    if ctx == CTX_TILE:
        for col in range(N_COLOURS):
            if c.bag[col]:
                out[n] = C_TILE + col
                weights[n] = c.bag[col]
                n += 1
        return n
    if ctx == CTX_FIRST:
        for i in range(c.players):
            out[n] = C_FIRST + i
            weights[n] = 1.0
            n += 1
        return n
    return 0


cdef int32_t sample_listed(const uint8_t* buf, Rng* rng) noexcept nogil:
    """Setup only (boards, first player): the generic walk over the listed outcomes (out of
    line: its tables would make every draw's stack frame large)."""
    cdef int32_t acts[MAX_LEGAL]
    cdef double ws[MAX_LEGAL]
    cdef int total = k_chance_outcomes(buf, acts, ws)
    if total <= 0:
        return 0
    return acts[rng_weighted_index(total, ws, rng)]


cdef inline int draw_tile(const BotanistsCore* c, int total, Rng* rng) noexcept nogil:
    """The colour of a tile drawn from the bag (G4/S6; total: bag_total, > 0): k_sample_chance's
    draw at CTX_TILE (and the fused playout's, refill_market)."""
    cdef int j = <int>(rng_uniform(rng) * <double>total)
    cdef int cum, col
    # the first colour whose running count exceeds j, counted without branches
    cum = c.bag[0]
    col = j >= cum
    cum += c.bag[1]
    col += j >= cum
    cum += c.bag[2]
    col += j >= cum
    cum += c.bag[3]
    col += j >= cum
    if (col != N_COLOURS - 1) | (c.bag[N_COLOURS - 1] != 0):   # one test, usually true
        return col
    # The last colour with tiles (the generic walk's fallback).
    for col in range(N_COLOURS - 1, -1, -1):
        if c.bag[col]:
            return col
    return -C_TILE                      # an empty bag: outcome 0, as the generic walk


cdef inline int32_t draw_card(const BotanistsCache* ca, Rng* rng) noexcept nogil:
    """A market card drawn (S3/P9/T4; A10: from the discard pile when the deck is empty):
    k_sample_chance's outcome at CTX_CARDS_SETUP and CTX_CARDS (and the fused playout's)."""
    cdef int loc = CARD_DECK if ca.card_count[<int>CARD_DECK] else CARD_DISCARD   # card_source
    cdef int total = ca.card_count[loc]
    cdef int j
    if total <= 0:
        return 0
    j = <int>(rng_uniform(rng) * <double>total)
    if j >= total:
        j = total - 1
    return C_CARD + select2(ca.cards[loc], j)


cdef int32_t k_sample_chance(const uint8_t* buf, Rng* rng) noexcept nogil:
    """One outcome of k_chance_outcomes drawn by weight without listing them, with the same
    draw as the generic sampler (x = uniform * total weight, then the first outcome whose
    cumulative weight exceeds x): the weights are small integers, so that walk is exact and
    is the index floor(x) in the outcomes' expansion into unit weights. The draws by
    frequency: market tiles (G4 refills), market cards, orders."""
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef const BotanistsCache* ca = cache_of(c)
    cdef int ctx = ca.ctx
    cdef int total, j
    cdef const uint64_t* src
    if ctx == CTX_TILE:
        total = ca.bag_total
        if total <= 0:
            return 0
        return C_TILE + draw_tile(c, total, rng)
    if ctx == CTX_CARDS_SETUP or ctx == CTX_CARDS:
        return draw_card(ca, rng)
    if ctx == CTX_OPEN or ctx == CTX_PERSONAL_SETUP or ctx == CTX_PERSONAL:
        src = order_source(ca)
        total = count2(src)
        if total <= 0:
            return 0
        j = <int>(rng_uniform(rng) * <double>total)
        if j >= total:
            j = total - 1
        return C_ORDER + ORDER_KIND[ORDER_AT[select2(src, j)]]
    return sample_listed(buf, rng)


# --- apply ------------------------------------------------------------------------------------
cdef void apply_chance(BotanistsCore* c, int32_t action) noexcept nogil:
    cdef int ctx = cache_of(c).ctx
    cdef int k, o, kind, slot, cell, t, i, n
    cdef int held[N_ORDERS]
    cdef const BotanistsCache* ca = cache_of(c)
    cdef const uint64_t* src
    if action >= C_FIRST:
        c.first_player = action - C_FIRST
        c.round = 0
        c.turns_done = 0
        start_turn(c)
        return
    if action >= C_TILE:
        cell = empty_cell(c)
        if cell >= 0:
            fill_cell(c, cell, action - C_TILE)   # S6/G4: row-major
            take_tile(c, action - C_TILE)
        return
    if action >= C_ORDER:
        kind = action - C_ORDER
        if (ca.orders[<int>ORDER_DECK][0] | ca.orders[<int>ORDER_DECK][1]) == 0:
            # A10: reshuffle the discard pile
            src = ca.orders[<int>ORDER_DISCARD]
            n = list2(src[0], src[1], held, N_ORDERS)
            for i in range(n):
                set_order(c, ORDER_AT[held[i]], ORDER_DECK)
        # The lowest id of that kind in the deck (a kind's bits ascend with the id).
        i = lowest2(ca.orders[<int>ORDER_DECK][0] & KIND_BITS[kind][0],
                    ca.orders[<int>ORDER_DECK][1] & KIND_BITS[kind][1])
        if i < 0:
            return
        o = ORDER_AT[i]
        if ctx == CTX_PERSONAL_SETUP:
            t = personal_target(c)
            if t >= 0:
                set_order(c, o, ORDER_PERSONAL + t)
        elif ctx == CTX_PERSONAL:
            set_order(c, o, ORDER_PERSONAL + c.cur)
            c.pend_personal -= 1
        else:
            slot = empty_slot(c)
            if slot >= 0:
                set_order(c, o, ORDER_OPEN)
                c.open_orders[slot] = o
        return
    if action >= C_CARD:
        k = action - C_CARD
        if c.card_loc[k] == CARD_DISCARD:         # A10: the deck is empty, reshuffle
            reshuffle_cards(c)
        if ctx == CTX_CARDS_SETUP:
            t = cards_target(c)
        else:
            t = c.cur
            if c.pend_cards:
                c.pend_cards -= 1
        if t >= 0:
            set_card(c, k, CARD_HAND + t)
        return
    if action >= C_BOARD:
        t = board_target(c)
        if t >= 0:
            c.board[t] = action - C_BOARD
        return


cdef void k_apply(uint8_t* buf, int32_t action) noexcept nogil:
    """The frequent steps at rest here; the others through APPLY_STEP (a pointer, so that the
    compiler keeps them out of line and these pay for no large stack frame)."""
    cdef BotanistsCore* c = <BotanistsCore*>buf
    cdef BotanistsCache* ca = cache_of(c)
    if C_TILE <= action < C_FIRST and ca.ctx == CTX_TILE and c.stage > ST_SETUP_FIRST:
        refill_tile(c, action - C_TILE)   # G4 refill, the most frequent event
        return
    if action < A_TEND:
        # P1: the pawn moves; the card to play is the next decision. A decision is taken with
        # nothing pending (chance_context), and advance() stops at once at ST_CARD: the state
        # is at rest, still a decision.
        c.part = PART_PURCHASE
        c.own_action = 1
        c.pawn[c.cur] = action - A_MOVE
        set_pawns(c)
        c.stage = ST_CARD
        ca.moves = 0
        return
    if A_CARD <= action < A_PLANT_UP:
        play_card(c, action - A_CARD)   # at rest at ST_PLANT, as above
        return
    if A_PLANT_UP <= action < A_SWAPM_GIVE:
        # P5, the turn's third decision: advance(action) without its dispatch on the action
        plant_collected(c, action)
        APPLY_STEP(c, -1)
        return
    if C_CARD <= action < C_ORDER and ca.ctx == CTX_CARDS:
        refill_hand(c, action)
        return
    APPLY_STEP(c, action)


cdef inline bint refill_tile(BotanistsCore* c, int col) noexcept nogil:
    """k_apply at CTX_TILE after the setup, the G4 market refill: a `col` tile fills the
    first empty cell. While cells stay empty and the bag has tiles, advance() would only find
    the same refill pending (no other draw is pending at a tile draw), so the state stays at
    this chance node: True. Else advance() resolves what follows: False."""
    cdef BotanistsCache* ca = cache_of(c)
    cdef int cell = empty_cell(c)
    if cell >= 0:
        fill_cell(c, cell, col)
        take_tile(c, col)
        if ca.empties and not bag_empty(c):
            return True
    APPLY_STEP(c, -1)
    return False


cdef inline void refill_hand(BotanistsCore* c, int32_t action) noexcept nogil:
    """k_apply at CTX_CARDS (no order draw pending, chance_context), the P9 hand refill. When
    it was the last card and market cells wait for tiles, advance() would only find that
    refill pending: the state stays a chance node, drawing tiles."""
    cdef BotanistsCache* ca = cache_of(c)
    cdef int k = action - C_CARD
    # apply_chance's card draw at CTX_CARDS: into the hand of the seat to move
    if c.card_loc[k] == CARD_DISCARD:         # A10: the deck is empty, reshuffle
        reshuffle_cards(c)
    if c.pend_cards:
        c.pend_cards -= 1
    set_card(c, k, CARD_HAND + c.cur)
    if c.pend_cards == 0 and c.pend_market and ca.empties and not bag_empty(c):
        ca.ctx = CTX_TILE
        return
    APPLY_STEP(c, -1)


cdef void (*APPLY_STEP)(BotanistsCore*, int32_t) noexcept nogil
APPLY_STEP = advance


cdef inline void play_card(BotanistsCore* c, int k) noexcept nogil:
    """P3/P4: the card is played (and discarded); the covered tiles are collected except
    those under other pawns."""
    cdef int p = c.cur, cell
    cdef uint32_t w
    set_card(c, k, CARD_DISCARD)
    if c.pawn[p] < N_CELLS:
        w = FOOT[orientation(c, p)][k][c.pawn[p]] & tiles_mask(c) & ~pawns_except(c, p)
        while w:
            cell = __builtin_ctz(w)
            w &= w - 1
            c.collected[c.market[cell]] += 1
            clear_cell(c, cell)
    c.stage = ST_PLANT


cdef inline void set_derived(BotanistsCore* c) noexcept nogil:
    """After advance(): the chance context, and cache.moves kept only at a turn's first
    decision (advance() set it there, from the final state)."""
    cdef BotanistsCache* ca = cache_of(c)
    ca.ctx = chance_context(c)
    if c.stage != ST_ACTION or ca.ctx != CTX_NONE or c.land_filled[c.cur] >= N_SPACES:
        ca.moves = 0


cdef inline void plant_collected(BotanistsCore* c, int32_t action) noexcept nogil:
    """P5 plant (A_PLANT_UP, A_PLANT_DOWN); P6/A16: the bonus comes before the rest reaches
    the marginal land."""
    cdef int p = c.cur, k
    cdef int col = (action - A_PLANT_UP) % 5
    cdef int t = 1 if action >= A_PLANT_DOWN else 0
    cdef int sign = next_sign(c, p)
    c.collected[col] -= 1
    plant(c, p, col, t)
    c.planted |= 1
    if c.opt_bonus_sees:
        for k in range(N_COLOURS):
            c.leftover[p][k] += c.collected[k]
            c.collected[k] = 0
        leftovers_changed(c, p)
    if t:
        start_bonus(c, sign, 0)
    else:
        after_bonus(c)


cdef void apply_move(BotanistsCore* c, int32_t action) noexcept nogil:
    """The action's own effect (advance() then resolves the forced steps)."""
    cdef int p = c.cur, col, cell, k, slot, mask, q, t, o, a, b, sign
    cdef uint32_t w
    if action >= C_BOARD:
        apply_chance(c, action)
        return
    # The frequent actions first (tend, plant; k_apply plays moves and cards); then the rest,
    # by descending id.
    if action < A_CARD:
        # T2: any leftover, face down whatever its colour; the space's bonus triggers.
        col = action - A_TEND
        c.part = PART_TEND
        c.own_action = 2
        sign = next_sign(c, p)
        c.leftover[p][col] -= 1
        leftovers_changed(c, p)
        plant(c, p, col, 1)
        c.planted |= 1
        start_bonus(c, sign, 0)
    elif action < A_SWAPM_GIVE:
        plant_collected(c, action)
    elif action >= A_CHOOSE_BOARD:
        t = board_target(c)
        if t >= 0:
            c.board[t] = action - A_CHOOSE_BOARD
    elif action >= A_FIRST:
        new_round(c, action - A_FIRST)                   # SC7
    elif action >= A_KEEP:
        # SC5: keep the chosen (at most 2) leftovers, the rest withers back into the bag.
        q = (c.first_player + c.keep_index) % c.players
        a = (action - A_KEEP) // 6
        b = (action - A_KEEP) % 6
        for col in range(N_COLOURS):
            k = (a == col) + (b == col)
            if c.leftover[q][col] > k:
                c.bag[col] += c.leftover[q][col] - k
                c.leftover[q][col] = k
        bag_changed(c)
        leftovers_changed(c, q)
        c.keep_index += 1
    elif action >= A_HDEST_UP:
        # L5: the Helper collects only its destination's tile and plants it.
        cell = (action - A_HDEST_UP) % 25
        col = c.market[cell]
        c.pawn[HELPER] = cell
        set_pawns(c)
        set_cell(c, cell, EMPTY)
        sign = next_sign(c, HELPER)
        t = 1 if action >= A_HDEST_DOWN else 0
        plant(c, HELPER, col, t)
        c.planted |= 2
        if t:
            start_bonus(c, sign, 1)
        else:
            helper_part_done(c)
    elif action >= A_HCARD:
        k = action - A_HCARD
        set_card(c, k, CARD_DISCARD)
        c.sel_a = k
        c.part = PART_HELPER
        c.stage = ST_HELPER_DEST
    elif action == A_HELPER_FIRST:
        c.solo_first = 1
        c.stage = ST_HELPER_CARD
    elif action == A_OWN_FIRST:
        c.solo_first = 0
        c.stage = ST_ACTION
    elif action == A_NO_FULFIL:
        if c.stage == ST_FULFIL_OPEN:
            c.stage = ST_FULFIL_PERSONAL
        else:
            after_fulfil(c)
    elif action >= A_FULFIL_PERSONAL:
        # The lowest id of that kind among p's personal orders (a kind's bits ascend with the id).
        k = action - A_FULFIL_PERSONAL
        k = lowest2(cache_of(c).orders[<int>ORDER_PERSONAL + p][0] & KIND_BITS[k][0],
                    cache_of(c).orders[<int>ORDER_PERSONAL + p][1] & KIND_BITS[k][1])
        if k >= 0:
            pay_order(c, p, ORDER_AT[k])
        if c.stage == ST_FULFIL_OPEN:
            c.done_mask |= 4                             # T5: the open order may follow
        else:
            after_fulfil(c)
    elif action >= A_FULFIL_OPEN:
        slot = action - A_FULFIL_OPEN
        o = c.open_orders[slot]
        if o < N_ORDERS:
            pay_order(c, p, o)
            c.open_orders[slot] = EMPTY
        c.stage = ST_FULFIL_PERSONAL                     # advance() ends it if already done
    elif action == A_NO_DISCARD:
        end_turn(c)                                      # L8: keep the hand
    elif action >= A_DISCARD_CARD:
        set_card(c, action - A_DISCARD_CARD, CARD_DISCARD)
        if c.stage == ST_SOLO_DISCARD:
            end_turn(c)                                  # L8: at most one card
    elif action == A_NO_DRAW:
        tend_done(c)
    elif action == A_DRAW2:
        c.keep_target = hand_count(c, p)                 # A21: back down to the hand held
        c.pend_cards = 2
        c.stage = ST_TEND_KEEP
    elif action >= A_DISCARD_OPEN:
        # T3: discard any open orders; as many are redrawn (a chance refill).
        mask = action - A_DISCARD_OPEN
        for slot in range(N_OPEN):
            if (mask >> slot) & 1 and c.open_orders[slot] < N_ORDERS:
                set_order(c, c.open_orders[slot], ORDER_DISCARD)
                c.open_orders[slot] = EMPTY
                c.pend_open = 1
        c.stage = ST_TEND_DRAW
    elif action == A_SKIP:
        after_bonus(c)
    elif action == A_TAKE_DECK:
        c.pend_personal = 1                              # green: the top of the order deck
        after_bonus(c)
    elif action >= A_TAKE_OPEN:
        slot = action - A_TAKE_OPEN
        o = c.open_orders[slot]
        if o < N_ORDERS:
            set_order(c, o, ORDER_PERSONAL + p)
            c.open_orders[slot] = EMPTY
            c.pend_open = 1                              # A17: refilled at once
        after_bonus(c)
    elif action >= A_BMOVE_HELPER:
        c.pawn[HELPER] = action - A_BMOVE_HELPER
        set_pawns(c)
        after_bonus(c)
    elif action >= A_BMOVE_OWN:
        c.pawn[p] = action - A_BMOVE_OWN
        set_pawns(c)
        after_bonus(c)
    elif action >= A_SWAPH_TAKE:
        # L9 red: the given tile stays face up on the Helper's land.
        k = action - A_SWAPH_TAKE
        col = c.land_colour[HELPER][k]
        c.land_colour[HELPER][k] = c.sel_b
        c.leftover[0][c.sel_b] -= 1
        c.leftover[0][col] += 1
        leftovers_changed(c, 0)
        after_bonus(c)
    elif action >= A_SWAPP_TAKE:
        col = action - A_SWAPP_TAKE
        q = c.sel_a
        c.leftover[p][c.sel_b] -= 1
        c.leftover[p][col] += 1
        c.leftover[q][col] -= 1
        c.leftover[q][c.sel_b] += 1
        leftovers_changed(c, p)
        leftovers_changed(c, q)
        after_bonus(c)
    elif action >= A_SWAPP_GIVE:
        c.sel_b = action - A_SWAPP_GIVE
    elif action >= A_SWAPP_SEAT:
        c.sel_a = action - A_SWAPP_SEAT
    elif action >= A_SWAPM_CELL:
        # Purple (A3/A28): any market tile, also one under a pawn.
        cell = action - A_SWAPM_CELL
        col = c.market[cell]
        set_cell(c, cell, c.sel_b)
        c.leftover[p][c.sel_b] -= 1
        c.leftover[p][col] += 1
        leftovers_changed(c, p)
        after_bonus(c)
    elif action >= A_SWAPM_GIVE:
        c.sel_b = action - A_SWAPM_GIVE


# --- results ----------------------------------------------------------------------------------
cdef void k_scores(const uint8_t* buf, double* out) noexcept nogil:
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef int p
    for p in range(c.players):
        out[p] = get_score(c, p)


cdef void k_returns(const uint8_t* buf, double* out) noexcept nogil:
    """E3/A18: most VP; then fewer face-down tiles; then more orders fulfilled; then shared.
    Solo has no opponent: the only seat always gets the whole (1.0) share."""
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef int p, n = c.players, winners = 0
    cdef int key[4][3]
    cdef int best = 0
    for p in range(n):
        key[p][0] = get_score(c, p)
        key[p][1] = -face_down_count(c, p)
        key[p][2] = c.fulfilled_total[p]
    for p in range(1, n):
        if (key[p][0] > key[best][0] or (key[p][0] == key[best][0] and (key[p][1] > key[best][1]
                or (key[p][1] == key[best][1] and key[p][2] > key[best][2])))):
            best = p
    for p in range(n):
        out[p] = 0.0
        if key[p][0] == key[best][0] and key[p][1] == key[best][1] and key[p][2] == key[best][2]:
            out[p] = 1.0
            winners += 1
    for p in range(n):
        out[p] /= winners


cdef bint acting_seat_consistent(BotanistsCore* c, int observer) noexcept nogil:
    """After a re-deal: a seat to move other than the observer still holds what its public
    play revealed: a legal decision (e.g. a card that fits where its pawn moved), and at the
    start of its purchase a usable card (else A12 would already have redrawn its hand)."""
    cdef int32_t tmp[MAX_LEGAL]
    cdef int cards[MAX_HAND]
    cdef int p = k_current_player(<const uint8_t*>c)
    if p < 0 or p == observer:
        return True
    if k_legal_actions(<const uint8_t*>c, tmp) <= 0:
        return False
    if c.stage == ST_ACTION and p == c.cur and c.land_filled[p] < N_SPACES:
        if not purchase_with(c, p, cards, hand_cards(c, p, cards)) and redraw_could_help(c, p):
            return False
    return True


cdef bint deal_hidden(BotanistsCore* c, int observer, const int* pool_in, int n_pool,
                      const int* held_in, int n_held, const int* count, const int* held_count,
                      int forced_seat, int forced_card, Rng* rng) noexcept nogil:
    """Deal the other seats' hands uniformly: each seat q first gets held_count[q] cards of the
    held pool (cards every seat knows are in some hand since the last reshuffle), then the rest
    of its count[q] from the free pool (the deck and the other hands' other cards); both pools
    in card-id order. Optionally one given card goes first into one seat's hand (False if it
    cannot: no free slot of its kind there)."""
    cdef int pool[N_CARDS]
    cdef int hpool[N_CARDS]
    cdef int q, i, j, n = 0, nh = 0, first_held = 0, first_free = 0
    cdef bint forced_is_held = False
    cdef const uint64_t* deck
    for i in range(n_pool):
        if c.card_loc[pool_in[i]] != CARD_DECK:
            set_card(c, pool_in[i], CARD_DECK)
        if pool_in[i] != forced_card:
            pool[n] = pool_in[i]
            n += 1
    # set_card's only effect on a card already in the deck is clearing its held bit: done for
    # the whole deck (the pool) at once.
    deck = cache_of(c).cards[<int>CARD_DECK]
    for i in range(8):
        c.card_held[i] &= ~<uint8_t>((deck[0] >> (8 * i)) & 255)
    c.card_held[8] &= ~<uint8_t>(deck[1] & 255)
    c.card_held[9] &= ~<uint8_t>((deck[1] >> 8) & 255)
    for i in range(n_held):
        set_card(c, held_in[i], CARD_DECK)          # clears the held bit; set again below
        if held_in[i] == forced_card:
            forced_is_held = True
        else:
            hpool[nh] = held_in[i]
            nh += 1
    if forced_seat >= 0:
        if forced_is_held:
            if held_count[forced_seat] < 1:
                return False
            first_held = 1
        else:
            if count[forced_seat] - held_count[forced_seat] < 1:
                return False
            first_free = 1
        set_card(c, forced_card, CARD_HAND + forced_seat)
        if forced_is_held:
            c.card_held[forced_card >> 3] |= 1 << (forced_card & 7)
    for q in range(c.players):
        if q == observer:
            continue
        for i in range(held_count[q] - (first_held if q == forced_seat else 0)):
            j = rng_below(rng, nh)
            set_card(c, hpool[j], CARD_HAND + q)
            c.card_held[hpool[j] >> 3] |= 1 << (hpool[j] & 7)
            hpool[j] = hpool[nh - 1]
            nh -= 1
        for i in range(count[q] - held_count[q] - (first_free if q == forced_seat else 0)):
            j = rng_below(rng, n)
            set_card(c, pool[j], CARD_HAND + q)
            pool[j] = pool[n - 1]
            n -= 1
    if c.cur != observer:
        cache_of(c).moves = turn_moves(c)   # the hand of the seat to move was re-dealt
    return True


cdef void k_determinize(uint8_t* buf, int observer, Rng* rng) noexcept nogil:
    """Re-deal the other seats' hands from every card the observer cannot place: the deck and
    those hands, gathered in card-id order, so the result depends only on what the observer
    knows (own hand, discards, hand sizes, which cards are held since the last reshuffle and
    how many each seat holds, the public play) and the rng. Held cards (card_held) stay in
    the other hands, as many per seat as before: after a reshuffle the deck is the old discard
    pile, so the cards that were in hands then cannot be in it. Orders and tiles hide nothing
    stored: the decks are sets (every order outside them is public) and the bag is counts.

    When another seat is to move (a view sent for a seat that is not deciding), deals that
    contradict that seat's public play are rejected and redrawn, so the world stays a
    position the game can reach."""
    cdef BotanistsCore* c = <BotanistsCore*>buf
    cdef int pool[N_CARDS]
    cdef int hpool[N_CARDS]
    cdef int count[4]
    cdef int held_count[4]
    cdef int k, q, attempt, n = 0, nh = 0
    cdef bint dealt
    cdef const BotanistsCache* ca = cache_of(c)
    cdef uint64_t held_lo = 0, held_hi = c.card_held[8] | (<uint64_t>c.card_held[9] << 8)
    cdef uint64_t other_lo = 0, other_hi = 0
    for k in range(8):
        held_lo |= (<uint64_t>c.card_held[k]) << (8 * k)
    for q in range(4):
        count[q] = 0
        held_count[q] = 0
        if q < c.players and q != observer:
            count[q] = ca.card_count[<int>CARD_HAND + q]
            held_count[q] = (pop64(ca.cards[<int>CARD_HAND + q][0] & held_lo)
                             + pop64(ca.cards[<int>CARD_HAND + q][1] & held_hi))
            other_lo |= ca.cards[<int>CARD_HAND + q][0]
            other_hi |= ca.cards[<int>CARD_HAND + q][1]
    # Both pools in card-id order: the deck and the other hands' cards not held; the held ones.
    n = list2(ca.cards[<int>CARD_DECK][0] | (other_lo & ~held_lo),
              ca.cards[<int>CARD_DECK][1] | (other_hi & ~held_hi), pool, N_CARDS)
    nh = list2(other_lo & held_lo, other_hi & held_hi, hpool, N_CARDS)
    for attempt in range(64):
        deal_hidden(c, observer, pool, n, hpool, nh, count, held_count, -1, -1, rng)
        if acting_seat_consistent(c, observer):
            return
    # Rare: only a few cards fit. Try each candidate card in the acting seat's hand in turn.
    q = c.cur
    if q == observer or count[q] == 0:
        return
    dealt = True
    for k in range(n + nh):
        dealt = deal_hidden(c, observer, pool, n, hpool, nh, count, held_count, q,
                            pool[k] if k < n else hpool[k - n], rng)
        if dealt and acting_seat_consistent(c, observer):
            return
    if not dealt:
        # The last candidate could not be dealt: leave a complete deal all the same.
        deal_hidden(c, observer, pool, n, hpool, nh, count, held_count, -1, -1, rng)


cdef inline int nth_cell(uint32_t w, int i) noexcept nogil:
    while i > 0:
        w &= w - 1
        i -= 1
    return __builtin_ctz(w)


cdef int32_t rollout_turn_start(const BotanistsCore* c, Rng* rng) noexcept nogil:
    """k_rollout_action at ST_ACTION without listing the actions: the legal list is the
    purchase destinations (ascending; the "obvious" choices) then the tendable colours, and
    the draws are the same as the generic path's."""
    cdef int p = c.cur, col, pm, nt = 0, n, i
    cdef uint32_t moves = cache_of(c).moves
    if c.land_filled[p] < N_SPACES:
        for col in range(N_COLOURS):
            if c.leftover[p][col]:
                nt += 1
    pm = pop64(moves)
    n = pm + nt
    if n <= 0:
        return 0
    if rng_below(rng, 10) != 0 and pm:
        return A_MOVE + nth_cell(moves, rng_below(rng, pm))
    i = rng_below(rng, n)
    if i < pm:
        return A_MOVE + nth_cell(moves, i)
    i -= pm
    for col in range(N_COLOURS):
        if c.leftover[p][col]:
            if i == 0:
                return A_TEND + col
            i -= 1
    return 0


cdef inline int open_before_personal(int32_t* acts, int n) noexcept nogil:
    """Playouts fulfil the open order before the personal one (T5): both orders reach the same
    positions, and one order keeps playouts (and so seeded analyses) as they were before the
    personal-first order became legal."""
    cdef int i, m = 0
    for i in range(n):
        if not (A_FULFIL_PERSONAL <= acts[i] < A_NO_FULFIL):
            acts[m] = acts[i]
            m += 1
    return m


cdef int32_t k_baseline_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """The playout policy of 2026-12-01, kept unchanged as the frozen baseline's
    (baseline_rollout_action, `mcts-base`), and the current policy's fallback for
    the choices it does not weigh. Uniform over legal actions except that nine times in ten it
    plays the obvious choice: a matching tile face up (own or Helper), an order fulfilled when
    one can be, a purchase rather than a tend, nothing kept at a scoring phase. Uniform
    playouts wither most tiles and fulfil few orders; their scores sit far below real play,
    where the search's bounded score term can no longer tell good moves from bad ones."""
    cdef int32_t legal[MAX_LEGAL]
    cdef int32_t good[MAX_LEGAL]
    cdef int n, m = 0, i
    cdef int32_t a
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    if c.stage == ST_ACTION and cache_of(c).ctx == CTX_NONE:
        return rollout_turn_start(c, rng)
    n = k_legal_actions(buf, legal)
    if c.stage == ST_FULFIL_OPEN:
        n = open_before_personal(legal, n)
    if n <= 0:
        return 0
    if rng_below(rng, 10) != 0:
        for i in range(n):
            a = legal[i]
            good[m] = a
            m += GOOD[a]
        if m:
            return good[rng_below(rng, m)]
    return legal[rng_below(rng, n)]


# --- playout policy: one-ply greedy on the points the scoring rules give ----------
# A choice is worth, in half points, what the rules give for it by the end of the turn: the
# tile planted (P5: face up on its sign keeps the land clean; face down adds a withered tile,
# E1's next step of -1, -2, -3..., loses the column bonus SC4 if the column was still clean,
# and triggers the sign's bonus 2.6: +3 for blue, little for the optional ones), then the
# orders the leftovers can fulfil this turn (SC1: 5 each; a personal order also escapes E2's
# -5 at the end) and the leftovers still left (SC3: -2 each at the scoring phase, discounted
# because later turns may still use them; SC2: +7 with none left, discounted likewise).
cdef enum:
    V_ORDER = 10           # SC1: an order fulfilled, 5 points
    V_PERSONAL = 20        # SC1 + E2: a personal order fulfilled, and no -5 at the end
    V_LEFTOVER = 3         # SC3: -2 a leftover at the scoring phase (1.5: it may serve an order)
    V_NONE_LEFT = 7        # SC2: +7 with no leftover (3.5: the phase may be turns away)
    V_PLUS3 = 6            # the blue bonus, applied at once (3 points)
    V_BONUS = 1            # an optional bonus (swap, move, take an order)
    EPS_BASELINE = 8       # one choice in EPS_BASELINE is the baseline policy's (playout variety)
    NO_VALUE = -1000000
    MAX_EXTRA = 3          # tiles a purchase adds to the leftovers at most: a card covers at most
                           # 4 cells (load_components checks it) and one collected tile is planted

ctypedef struct Wants:     # the orders the seat to move may fulfil this turn (O2), as pairs
    int n                  # pairs of at most one open and one personal order (not neither)
    uint32_t need[40]      # the pair's flowers, packed (pack_counts)
    int val[40]            # its points (V_ORDER for the open one, V_PERSONAL for the personal)
                           # plus V_LEFTOVER for each tile it takes (leftover_value_from);
                           # n..n+2: NO_VALUE, needing nothing (leftover_best's last group)
    int open_i[36]         # index into open_o, -1 = none
    int pers_j[36]         # index into pers_o, -1 = none
    int open_o[3]
    int pers_o[8]

# Flower counts packed 6 bits a colour, bit 5 of each field a guard: (L | GUARD) - need keeps
# every guard bit exactly when no colour of need exceeds L's (counts below 32).
# (A constant, not a variable: the compiler folds it into the masks and comparisons.)
cdef enum:
    GUARD = 0x20 | (0x20 << 6) | (0x20 << 12) | (0x20 << 18) | (0x20 << 24)


cdef inline uint32_t pack_counts(const int* cnt) noexcept nogil:
    """Clamped at 27, so that up to 4 collected tiles can still be added field by field (an
    order pair needs at most 10 of a colour)."""
    cdef uint32_t out = 0
    cdef int col, v
    for col in range(N_COLOURS):
        v = cnt[col] if cnt[col] < 27 else 27
        out |= (<uint32_t>v) << (6 * col)
    return out


cdef inline int deficit(uint32_t need, uint32_t base) noexcept nogil:
    """The tiles `base` lacks for `need` (both packed; need fields <= 10, base fields <= 31):
    (need | GUARD) - base keeps a field's guard bit exactly where need >= base, and then holds
    need - base in the field's low 5 bits; the fields' sum (at most 50) is read at bit 24."""
    cdef uint32_t t = (need | GUARD) - base
    cdef uint32_t pos = t & GUARD
    t &= pos - (pos >> 5)
    return <int>(((t * <uint32_t>0x01041041) >> 24) & 63)


cdef void wants_of(const BotanistsCore* c, int p, Wants* w, bint fulfil, bint with_open,
                   bint with_pers, uint32_t base, int slack) noexcept nogil:
    """The order pairs this turn may still fulfil (none if it may not), in a fixed order
    (open order by slot, none first; then personal by cache bit, none first). Only pairs that
    leftovers of at most `slack` tiles more than `base` (packed) can fulfil are listed: the
    callers value leftovers that hold at most that many more tiles of any colour, so the others
    never fit (leftover_value skips them anyway)."""
    cdef int slot, o, i, j, t, n_pers = 0, n_ok = 0, n = 0
    cdef uint32_t need
    cdef int held[8]
    cdef int ok[8]                  # the personal orders (index j) that may be fulfilled
    cdef const uint64_t* m = cache_of(c).orders[<int>ORDER_PERSONAL + p]
    w.n = 0
    if not fulfil:
        pad_wants(w)
        return
    if with_pers:
        n_pers = list2(m[0], m[1], held, 8)
        for j in range(n_pers):
            o = ORDER_AT[held[j]]
            w.pers_o[j] = o
            if deficit(ORDER_PACKED[o], base) <= slack:
                ok[n_ok] = j
                n_ok += 1
                w.need[n] = ORDER_PACKED[o]
                w.val[n] = V_PERSONAL + V_LEFTOVER * ORDER_USED[o]
                w.open_i[n] = -1
                w.pers_j[n] = j
                n += 1
    if not with_open:
        w.n = n
        pad_wants(w)
        return
    # A pair lacks at least what each of its orders lacks.
    i = 0
    for slot in range(N_OPEN):
        o = c.open_orders[slot]
        if o >= N_ORDERS:
            continue
        w.open_o[i] = o
        if deficit(ORDER_PACKED[o], base) <= slack:
            w.need[n] = ORDER_PACKED[o]
            w.val[n] = V_ORDER + V_LEFTOVER * ORDER_USED[o]
            w.open_i[n] = i
            w.pers_j[n] = -1
            n += 1
            for t in range(n_ok):
                j = ok[t]
                # fields stay below 32 (an order needs at most 5 of a colour): no carry
                need = ORDER_PACKED[o] + ORDER_PACKED[w.pers_o[j]]
                if deficit(need, base) > slack:
                    continue
                w.need[n] = need
                w.val[n] = V_ORDER + V_PERSONAL + V_LEFTOVER * (ORDER_USED[o] + ORDER_USED[w.pers_o[j]])
                w.open_i[n] = i
                w.pers_j[n] = j
                n += 1
        i += 1
    w.n = n
    pad_wants(w)


cdef inline void pad_wants(Wants* w) noexcept nogil:
    """leftover_best reads the pairs in groups of four: the last group's rest needs nothing
    and is worth nothing (NO_VALUE never beats a value)."""
    w.need[w.n] = 0
    w.need[w.n + 1] = 0
    w.need[w.n + 2] = 0
    w.val[w.n] = NO_VALUE
    w.val[w.n + 1] = NO_VALUE
    w.val[w.n + 2] = NO_VALUE


cdef inline int leftover_best(uint32_t L, int total, int best, const Wants* w) noexcept nogil:
    """leftover_value_from's value alone (for the callers that need no pick), four pairs at a
    time."""
    return bts_leftover_best(w.need, w.val, w.n, L | GUARD, GUARD, -V_LEFTOVER * total, V_NONE_LEFT,
                             best)


cdef inline int none_value(int total) noexcept nogil:
    """SC2/SC3 for `total` leftovers that fulfil no order."""
    return -V_LEFTOVER * total + (V_NONE_LEFT if total == 0 else 0)


cdef inline int leftover_value(uint32_t L, int total, const Wants* w, int* pick) noexcept nogil:
    """SC1-SC3 (and E2) on the leftovers L (packed, `total` tiles): the best pair of orders
    they fulfil (O2), minus what stays. pick: the pair's index in w, -1 = none."""
    return leftover_value_from(L, total, none_value(total), w, pick)


cdef inline int leftover_value_from(uint32_t L, int total, int best, const Wants* w,
                                    int* pick) noexcept nogil:
    """leftover_value with none_value(total) given (`best`)."""
    cdef int k, v, at = -1, per_total = -V_LEFTOVER * total
    cdef bint better
    cdef uint32_t lg = L | GUARD, rest
    # Without branches (conditional moves): whether a pair fits and beats the best so far is
    # data-dependent and mispredicted about as often as not. A pair that fits leaves no tile
    # (SC2) exactly when it needs all of L: rest == GUARD.
    for k in range(w.n):
        rest = lg - w.need[k]
        v = w.val[k] + per_total + (V_NONE_LEFT if rest == GUARD else 0)
        better = ((rest & GUARD) == GUARD) & (v > best)
        best = v if better else best
        at = k if better else at
    pick[0] = at
    return best


cdef inline int withered_cost(const BotanistsCore* c, int p) noexcept nogil:
    """A tile face down now: E1's next step (one point more than the last withered tile) and
    SC4's column bonus if the column is clean so far."""
    cdef int k = c.land_filled[p], r = k // 5, i
    cdef int cost = 2 * (face_down_count(c, p) + 1)
    cdef bint clean = r < 3
    if clean:
        for i in range(5 * r, k):
            if c.land_down[p][i] or c.land_colour[p][i] >= N_COLOURS:
                clean = False
                break
    if clean:
        cost += 2 * COLUMN_BONUS[r]
    return cost


cdef inline int bonus_gain(int sign) noexcept nogil:
    if sign >= N_COLOURS:
        return 0
    return V_PLUS3 if BONUS_OF[sign] == BONUS_PLUS3 else V_BONUS


cdef inline int purchase_value(uint32_t L, int total, uint32_t cnt, int sign, int down_cost,
                               const Wants* w, int* plant_col) noexcept nogil:
    """P5-P8 for the tiles cnt collected (packed; L: the leftovers with them, `total` tiles):
    the sign's colour planted face up if collected, else the tile whose loss leaves the best
    leftovers planted face down."""
    cdef int col, v, best = NO_VALUE, k, at = -1
    cdef uint32_t held
    if sign < N_COLOURS and (cnt >> (6 * sign)) & 63:
        plant_col[0] = sign
        return leftover_best(L - ((<uint32_t>1) << (6 * sign)), total - 1, none_value(total - 1), w)
    # the colours collected (each field's bits folded into its lowest), walked in order; the
    # best kept without branches
    held = cnt | (cnt >> 1)
    held |= held >> 2
    held = (held | (held >> 2)) & <uint32_t>0x1041041
    while held:
        col = __builtin_ctz(held) // 6
        held &= held - 1
        v = leftover_best(L - ((<uint32_t>1) << (6 * col)), total - 1, none_value(total - 1), w)
        at = col if v > best else at
        best = v if v > best else best
    plant_col[0] = at
    return best - down_cost + bonus_gain(sign)


cdef inline uint32_t own_leftovers(const BotanistsCore* c, int p) noexcept nogil:
    return cache_of(c).left_packed[p]


cdef inline void leftovers_changed(BotanistsCore* c, int p) noexcept nogil:
    """cache.left_packed[p] from seat p's leftovers (after every write of them)."""
    cdef int cnt[5]
    cdef int col
    for col in range(N_COLOURS):
        cnt[col] = c.leftover[p][col]
    cache_of(c).left_packed[p] = pack_counts(cnt)


cdef int32_t greedy_card(const BotanistsCore* c, Rng* rng) noexcept nogil:
    """P3: the card whose purchase is worth most (purchase_value), ties drawn at random.
    -1 = none. One card that collects is played without weighing (card_weighed, reached
    through a pointer so that this common case sets up no order pairs)."""
    cdef int p = c.cur, o = orientation(c, p), pawn = c.pawn[p]
    cdef int cards[MAX_HAND]
    cdef int coll[MAX_HAND]
    cdef uint32_t cells[MAX_HAND]
    cdef int nh, i, n = 0
    cdef uint32_t avail
    if pawn >= N_CELLS:
        return -1
    avail = tiles_mask(c) & ~pawns_except(c, p)
    nh = hand_cards(c, p, cards)
    for i in range(nh):
        cells[n] = FOOT[o][cards[i]][pawn] & avail
        if cells[n]:
            coll[n] = cards[i]
            n += 1
    if n <= 1:
        return A_CARD + coll[0] if n else -1
    return CARD_WEIGHED(c, rng, coll, cells, n)


cdef int32_t card_weighed(const BotanistsCore* c, Rng* rng, const int* coll, const uint32_t* cells,
                          int n_coll) noexcept nogil:
    """greedy_card over the collecting cards `coll` (the tiles each collects: `cells`)."""
    cdef int p = c.cur, sign = next_sign(c, p)
    cdef int32_t tied[MAX_HAND]
    cdef int i, v, best = NO_VALUE, nt = 0, pc, n, down_cost = -1, lt
    cdef uint32_t w, key, lp
    cdef Wants wt
    lt = leftover_total(c, p)
    lp = own_leftovers(c, p)
    wants_of(c, p, &wt, c.opt_fulfil_purchase or c.players == 1, True, True, lp, MAX_EXTRA)  # A8/P8
    for i in range(n_coll):
        w = cells[i]
        key = 0
        n = 0
        while w:
            key += (<uint32_t>1) << (6 * c.market[__builtin_ctz(w)])
            w &= w - 1
            n += 1
        if down_cost < 0 and not (sign < N_COLOURS and (key >> (6 * sign)) & 63):
            down_cost = withered_cost(c, p)     # only a tile planted face down pays it
        v = purchase_value(lp + key, lt + n, key, sign, down_cost if down_cost > 0 else 0, &wt, &pc)
        # the best and its ties without branches: written at nt, kept if tied
        nt = 0 if v > best else nt
        best = v if v > best else best
        tied[nt] = A_CARD + coll[i]
        nt += v == best
    if nt == 0:
        return -1
    return tied[rng_below(rng, nt)] if nt > 1 else tied[0]


cdef int32_t (*CARD_WEIGHED)(const BotanistsCore*, Rng*, const int*, const uint32_t*, int) noexcept nogil
CARD_WEIGHED = card_weighed


cdef int32_t greedy_start(const BotanistsCore* c, Rng* rng) noexcept nogil:
    """G3/P1 at the turn's start, one-ply greedy over the (destination, card) pairs that
    collect a tile of the next sign's colour (cover_dests: that tile is planted face up,
    P5, so no withered tile, E1, and the column bonus SC4 kept): the destination of the pair
    whose leftovers are worth most (leftover_value: the open and personal orders they fulfil,
    O2/SC1/E2, minus what stays, SC2/SC3), ties drawn at random; one candidate is played
    without valuing. -1 = no such pair (the baseline's choice then).

    Why only those pairs (docs/games/botanists.md): valuing every pair made as good a
    policy but ran at 0.47x the baseline's iterations per second; these ~9 pairs run at 0.72x
    and keep its judgement (99.6% against the old policy in policy-only play, 31.5 points a
    game), which the orders provide (the last row of the policy table there)."""
    cdef int p = c.cur, o = orientation(c, p), sign = next_sign(c, p)
    cdef int cards[MAX_HAND]
    cdef int nh, i, n, d, v, best = NO_VALUE, pc, lt
    cdef int none_by_n[5]
    cdef uint32_t S, w, dm, key, lp, others, tied = 0, dests = cache_of(c).moves
    cdef uint32_t dmask[MAX_HAND]
    cdef uint8_t mk[N_CELLS + 1]
    cdef uint64_t kn
    cdef const uint8_t* fc
    cdef Wants wt
    if not dests or sign >= N_COLOURS:
        return -1
    others = pawns_except(c, p)
    S = cache_of(c).colour_cells[sign] & ~others
    if not S:
        return -1
    nh = hand_cards(c, p, cards)
    for i in range(nh):
        dmask[i] = cover_dests(o, cards[i], S) & dests
        tied |= dmask[i]
    if tied & (tied - 1) == 0:          # one candidate (or none): nothing to weigh
        return A_MOVE + __builtin_ctz(tied) if tied else -1
    tied = 0
    lt = leftover_total(c, p)
    lp = own_leftovers(c, p)
    wants_of(c, p, &wt, c.opt_fulfil_purchase or c.players == 1, True, True, lp, MAX_EXTRA)  # A8/P8
    for n in range(1, 5):               # n tiles collected, one planted: lt + n - 1 leftovers
        none_by_n[n] = none_value(lt + n - 1)
    lp -= (<uint32_t>1) << (6 * sign)   # P5: the sign's colour (collected) goes face up
    # The market as the purchase sees it: a tile under another pawn is not collected (P4);
    # mk[N_CELLS] is FOOT_CELLS' "no cell".
    memcpy(mk, c.market, N_CELLS)
    mk[N_CELLS] = EMPTY
    w = others
    while w:
        mk[__builtin_ctz(w)] = EMPTY
        w &= w - 1
    for i in range(nh):
        dm = dmask[i]
        while dm:
            d = __builtin_ctz(dm)
            dm &= dm - 1
            fc = FOOT_CELLS[o][cards[i]][d]
            kn = TILE_KEY[mk[fc[0]]] + TILE_KEY[mk[fc[1]]] + TILE_KEY[mk[fc[2]]] + TILE_KEY[mk[fc[3]]]
            n = <int>(kn >> 32)
            if n == 0:
                continue
            key = <uint32_t>kn
            # the rest are leftovers (lp: without the tile planted face up)
            v = leftover_best(lp + key, lt + n - 1, none_by_n[n], &wt)
            # the best so far and its ties, without branches (as leftover_value_from)
            tied &= <uint32_t>(v > best) - 1
            best = v if v > best else best
            tied |= bit(d) & -(<uint32_t>(v == best))
    if not tied:
        return -1
    n = pop_few(tied)                   # the tied destinations: usually one or two
    return A_MOVE + nth_cell(tied, rng_below(rng, n) if n > 1 else 0)


cdef inline int32_t greedy_plant(const BotanistsCore* c) noexcept nogil:
    """P5: the sign's colour face up when collected; else the tile whose loss hurts the
    leftovers least goes face down (plant_down, weighed out of line)."""
    cdef int sign = next_sign(c, c.cur)
    if sign < N_COLOURS and c.collected[sign]:
        return A_PLANT_UP + sign
    return PLANT_DOWN(c, sign)


cdef int32_t plant_down(const BotanistsCore* c, int sign) noexcept nogil:
    cdef int p = c.cur, col, pc, n = 0
    cdef uint32_t key = 0, lp
    cdef Wants w
    for col in range(N_COLOURS):
        key += (<uint32_t>c.collected[col]) << (6 * col)
        n += c.collected[col]
    lp = own_leftovers(c, p)
    # one collected tile is planted: the leftovers gain at most n - 1
    wants_of(c, p, &w, c.opt_fulfil_purchase or c.players == 1, True, True, lp, n - 1 if n > 0 else 0)
    purchase_value(lp + key, leftover_total(c, p) + n, key, sign, 0, &w, &pc)
    return A_PLANT_DOWN + pc if pc >= 0 else -1


cdef int32_t (*PLANT_DOWN)(const BotanistsCore*, int) noexcept nogil  # a pointer: kept out of line
PLANT_DOWN = plant_down


cdef int32_t greedy_fulfil(const BotanistsCore* c) noexcept nogil:
    """O2: the open and personal orders whose pair is worth most (a personal order escapes
    E2's -5 too), fewest leftovers left; the open one first, as the baseline plays them."""
    cdef int p = c.cur, k, slot, i, j
    cdef uint32_t packed
    cdef Wants w
    packed = own_leftovers(c, p)
    wants_of(c, p, &w, True, c.stage == ST_FULFIL_OPEN, not c.done_mask & 4, packed, 0)
    leftover_value(packed, leftover_total(c, p), &w, &k)
    i = w.open_i[k] if k >= 0 else -1
    j = w.pers_j[k] if k >= 0 else -1
    if c.stage == ST_FULFIL_OPEN:
        if i >= 0:
            for slot in range(N_OPEN):
                if c.open_orders[slot] == w.open_o[i]:
                    return A_FULFIL_OPEN + slot
        return A_NO_FULFIL                  # -> the personal order's step
    if j >= 0:
        return A_FULFIL_PERSONAL + ORDER_KIND[w.pers_o[j]]
    return A_NO_FULFIL


cdef int32_t greedy_bonus(const BotanistsCore* c, Rng* rng) noexcept nogil:
    """2.6: a swap (purple with the market, red with another player) when it lets the orders
    take more leftovers this turn; the other optional bonuses are skipped (a yellow move
    gives nothing by itself, a green order costs 5 at the end unless fulfilled). -1 = the
    baseline's choice (the solo Helper's red swap)."""
    cdef int p = c.cur, col, x, q, v, best, k, n, bq = -1, bg = -1, bt = -1, total
    cdef int L[5]
    cdef int present[5]
    cdef uint32_t packed, swapped
    cdef Wants w
    cdef int kind = c.bonus
    if kind == BONUS_MOVE or kind == BONUS_TAKE_ORDER:
        return A_SKIP
    if kind == BONUS_SWAP_PLAYER and c.players == 1:
        return -1
    if kind != BONUS_SWAP_MARKET and kind != BONUS_SWAP_PLAYER:
        return -1
    total = 0
    for col in range(N_COLOURS):
        L[col] = c.leftover[p][col] + c.collected[col]
        total += L[col]
        present[col] = 0
    packed = pack_counts(L)
    # a swap gives one tile and takes one: at most one tile more of any colour than `packed`
    wants_of(c, p, &w, c.part == PART_TEND or c.opt_fulfil_purchase or c.players == 1, True, True,
             packed, 1)
    best = leftover_value(packed, total, &w, &k)
    if kind == BONUS_SWAP_MARKET:
        for col in range(N_COLOURS):    # the market's tiles of each colour (the cache's sets)
            present[col] = pop64(cache_of(c).colour_cells[col])
    for q in range(c.players if kind == BONUS_SWAP_PLAYER else 1):
        if kind == BONUS_SWAP_PLAYER and (q == p or (c.sel_a != EMPTY and q != c.sel_a)):
            continue
        for col in range(N_COLOURS):
            if not c.leftover[p][col] or (c.sel_b != EMPTY and col != c.sel_b):
                continue
            for x in range(N_COLOURS):
                if x == col or not (present[x] if kind == BONUS_SWAP_MARKET else c.leftover[q][x]):
                    continue
                swapped = packed - ((<uint32_t>1) << (6 * col)) + ((<uint32_t>1) << (6 * x))
                if L[x] >= 31:
                    swapped = packed - ((<uint32_t>1) << (6 * col))
                v = leftover_value(swapped, total, &w, &k)
                if v > best:
                    best = v
                    bq = q
                    bg = col
                    bt = x
    if kind == BONUS_SWAP_MARKET:
        if c.sel_b == EMPTY:
            return A_SWAPM_GIVE + bg if bg >= 0 else A_SKIP
        if bt < 0:
            return -1
        n = rng_below(rng, present[bt])
        return A_SWAPM_CELL + nth_cell(cache_of(c).colour_cells[bt], n)   # the n-th, ascending
    if c.sel_a == EMPTY:
        return A_SWAPP_SEAT + bq if bq >= 0 else A_SKIP
    if bq < 0:
        return -1
    if c.sel_b == EMPTY:
        return A_SWAPP_GIVE + bg
    return A_SWAPP_TAKE + bt


# Seat counts (bit n = n seats) that play out with the policy below: those where it was
# measured to win at equal time with the rest of the default search (2-4
# seats, with the value model and turn_max). Solo playouts keep the baseline's policy.
cdef enum:
    POLICY_SEATS = (1 << 2) | (1 << 3) | (1 << 4)

cdef int32_t k_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """Playout policy, the moves a competent player makes at the choices that
    score: a destination where a card in hand collects the flower the next space asks for,
    the one whose leftover tiles fulfil the orders worth most (G3/P1, greedy_start); the card whose purchase is worth most on the points the rules give
    (P3, greedy_card: one-ply greedy on purchase_value); the matching tile face up, else the
    least useful one face down (P5); the open and personal orders worth most (O2, E2); a swap
    bonus only when it completes an order, no yellow move or green order (2.6); open orders
    kept at a tend (T3). One decision in EPS_BASELINE, a turn start with no such destination,
    and every other choice (T4 draws, SC5/SC7, the solo Helper's) are the baseline policy's
    (k_baseline_rollout_action), which keeps playouts varied. Seat counts outside POLICY_SEATS
    play out with the baseline policy alone."""
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef int32_t a = -1
    cdef int st = c.stage
    if not (POLICY_SEATS >> c.players) & 1:
        return k_baseline_rollout_action(buf, rng)
    if cache_of(c).ctx != CTX_NONE or rng_below(rng, EPS_BASELINE) == 0:
        return k_baseline_rollout_action(buf, rng)
    if st == ST_ACTION:
        a = greedy_start(c, rng)
        if a < 0:
            return rollout_turn_start(c, rng)
    elif st == ST_CARD:
        a = greedy_card(c, rng)
    elif st == ST_PLANT:
        a = greedy_plant(c)
    elif st == ST_FULFIL_OPEN or st == ST_FULFIL_PERSONAL:
        a = greedy_fulfil(c)
    elif st == ST_BONUS:
        a = greedy_bonus(c, rng)
    elif st == ST_TEND_DISCARD:
        a = A_DISCARD_OPEN              # T3: keep the open orders (mask 0)
    if a < 0:
        return k_baseline_rollout_action(buf, rng)
    return a


include "features.pxi"  # value-model features
# --- the fused playout loop (GameKernel.playout) ---------------------------------------------
# The search's own playout loop (hortus._ext.mcts, Search._iterate) with k_rollout_action as the
# policy, step for step and draw for draw: the loop of _ext/playout.pxi, which the other kernels
# include, with two additions. A G4 market refill, the most frequent chance event (about one a
# decision), is drawn and applied by refill_market, which keeps drawing while the state stays
# at that chance node: the same draws and steps as one k_sample_chance and one k_apply per
# tile, without their dispatch on the chance context and the action range. A P9 hand refill
# (CTX_CARDS, the next most frequent) is drawn by draw_card and applied by refill_hand, the
# two functions k_sample_chance and k_apply call there.
cdef void refill_market(BotanistsCore* c, Rng* rng, int* steps, int max_steps) noexcept nogil:
    """At CTX_TILE after the setup (the caller counted the first step): k_apply(k_sample_chance)
    until the state leaves that chance node or the steps run out, each further draw a step.
    The generator and the step count are local copies while it draws (written back before it
    returns): the market's byte writes could otherwise be writes to them, for the compiler,
    and each draw would reload and store the generator's state."""
    cdef BotanistsCache* ca = cache_of(c)
    cdef int total, col, n = steps[0]
    cdef Rng r = rng[0]
    while True:
        total = ca.bag_total
        col = draw_tile(c, total, &r) if total > 0 else -C_TILE
        if col < 0:
            break
        if not refill_tile(c, col):     # k_apply's G4 path
            break
        if n >= max_steps:
            break
        n += 1
    rng[0] = r
    steps[0] = n
    if col < 0:
        k_apply(<uint8_t*>c, C_TILE + col)  # outcome 0 (not a reachable state)


cdef int k_playout(uint8_t* buf, Rng* rng, int* steps, int max_steps, int max_decisions,
                   long* decisions) noexcept nogil:
    cdef const BotanistsCache* ca = cache_of(<const BotanistsCore*>buf)
    cdef int p
    cdef int32_t a
    cdef long played = 0
    while steps[0] < max_steps:
        if ca.ctx == CTX_TILE and (<const BotanistsCore*>buf).stage > ST_SETUP_FIRST:
            steps[0] += 1                   # a chance step (k_current_player: CHANCE)
            refill_market(<BotanistsCore*>buf, rng, steps, max_steps)
            continue
        if ca.ctx == CTX_CARDS:
            steps[0] += 1                   # a chance step: the P9 hand refill
            a = draw_card(ca, rng)
            if a >= C_CARD:
                refill_hand(<BotanistsCore*>buf, a)
            else:
                k_apply(buf, a)             # outcome 0 (no card to draw: not a reachable state)
            continue
        p = k_current_player(buf)
        if p == TERMINAL:
            break
        steps[0] += 1
        if p == CHANCE:
            k_apply(buf, k_sample_chance(buf, rng))
            continue
        if max_decisions >= 0 and played >= max_decisions:
            decisions[0] += played
            return 1
        played += 1
        k_apply(buf, k_rollout_action(buf, rng))
    decisions[0] += played
    return 0


cdef GameKernel KERNEL
KERNEL.state_bytes = sizeof(BotanistsState)
KERNEL.core_bytes = sizeof(BotanistsCore)
KERNEL.num_distinct_actions = NUM_ACTIONS
KERNEL.max_players = 4
KERNEL.max_legal_actions = MAX_LEGAL
KERNEL.max_game_length = 20000
KERNEL.num_players = k_num_players
KERNEL.current_player = k_current_player
KERNEL.legal_actions = k_legal_actions
KERNEL.chance_outcomes = k_chance_outcomes
KERNEL.apply = k_apply
KERNEL.returns = k_returns
KERNEL.scores = k_scores
KERNEL.determinize = k_determinize
KERNEL.rollout_action = k_rollout_action
KERNEL.baseline_rollout_action = k_baseline_rollout_action

KERNEL.rebuild = k_rebuild
KERNEL.sample_chance = k_sample_chance
KERNEL.playout = k_playout
KERNEL.search_actions = NULL       # nothing to prune (see k_legal_actions, T5)
KERNEL.num_features = FEATURE_COUNT
KERNEL.features = k_features


def kernel_capsule():
    if not LOADED:
        raise RuntimeError("botanists components are not loaded")
    return kernel_to_capsule(&KERNEL)


def core_size():
    return sizeof(BotanistsCore)


def action_base():
    """The action id layout, for the Python notation."""
    return {
        "MOVE": A_MOVE, "TEND": A_TEND, "CARD": A_CARD, "PLANT_UP": A_PLANT_UP,
        "PLANT_DOWN": A_PLANT_DOWN, "SWAPM_GIVE": A_SWAPM_GIVE, "SWAPM_CELL": A_SWAPM_CELL,
        "SWAPP_SEAT": A_SWAPP_SEAT, "SWAPP_GIVE": A_SWAPP_GIVE, "SWAPP_TAKE": A_SWAPP_TAKE,
        "SWAPH_TAKE": A_SWAPH_TAKE, "BMOVE_OWN": A_BMOVE_OWN, "BMOVE_HELPER": A_BMOVE_HELPER,
        "TAKE_OPEN": A_TAKE_OPEN, "TAKE_DECK": A_TAKE_DECK, "SKIP": A_SKIP,
        "DISCARD_OPEN": A_DISCARD_OPEN, "DRAW2": A_DRAW2, "NO_DRAW": A_NO_DRAW,
        "DISCARD_CARD": A_DISCARD_CARD, "NO_DISCARD": A_NO_DISCARD, "FULFIL_OPEN": A_FULFIL_OPEN,
        "FULFIL_PERSONAL": A_FULFIL_PERSONAL, "NO_FULFIL": A_NO_FULFIL, "OWN_FIRST": A_OWN_FIRST,
        "HELPER_FIRST": A_HELPER_FIRST, "HCARD": A_HCARD, "HDEST_UP": A_HDEST_UP,
        "HDEST_DOWN": A_HDEST_DOWN, "KEEP": A_KEEP, "FIRST": A_FIRST,
        "CHOOSE_BOARD": A_CHOOSE_BOARD, "C_BOARD": C_BOARD, "C_CARD": C_CARD,
        "C_ORDER": C_ORDER, "C_TILE": C_TILE, "C_FIRST": C_FIRST, "NUM_ACTIONS": NUM_ACTIONS,
    }


# --- Python views of the core (whole structs are copied; no pointer escapes) ------------------
_SCALARS = ("stage", "players", "opt_entry", "opt_move", "opt_orientation", "opt_bonus_sees",
            "opt_fulfil_purchase", "opt_choose_boards", "tiles_per_colour", "round",
            "first_player", "turns_done", "cur", "part", "solo_first", "done_mask", "planted",
            "own_action", "bonus", "bonus_on_helper", "sel_a", "sel_b", "keep_target",
            "keep_index", "chooser", "pend_personal", "pend_open", "pend_cards", "pend_market")


def core_to_dict(const uint8_t[::1] data):
    """The fields of serialized core bytes as a dict of ints and lists."""
    if data.shape[0] != sizeof(BotanistsCore):
        raise ValueError("wrong core size")
    cdef BotanistsCore c
    memcpy(&c, &data[0], sizeof(BotanistsCore))
    d = {}
    cdef const uint8_t* raw = <const uint8_t*>&c
    for i, name in enumerate(_SCALARS):
        d[name] = raw[i]
    d["market"] = [c.market[i] for i in range(25)]
    d["pawn"] = [c.pawn[i] for i in range(5)]
    d["bag"] = [c.bag[i] for i in range(5)]
    d["collected"] = [c.collected[i] for i in range(5)]
    d["board"] = [c.board[i] for i in range(5)]
    d["land_filled"] = [c.land_filled[i] for i in range(5)]
    d["land_colour"] = [[c.land_colour[w][k] for k in range(15)] for w in range(5)]
    d["land_down"] = [[c.land_down[w][k] for k in range(15)] for w in range(5)]
    d["leftover"] = [[c.leftover[p][i] for i in range(5)] for p in range(4)]
    d["score"] = [get_score(&c, p) for p in range(4)]
    d["fulfilled_total"] = [c.fulfilled_total[p] for p in range(4)]
    d["card_loc"] = [c.card_loc[k] for k in range(76)]
    d["order_loc"] = [c.order_loc[o] for o in range(82)]
    d["open_orders"] = [c.open_orders[i] for i in range(3)]
    d["card_held"] = [is_held(&c, k) for k in range(76)]
    return d


def dict_to_core(dict d):
    """Serialized core bytes from a dict shaped like core_to_dict's (values are range-checked
    by the caller; out-of-range bytes raise OverflowError here)."""
    cdef BotanistsCore c
    cdef uint8_t* raw = <uint8_t*>&c
    cdef int i, k, w, p
    memset(&c, 0, sizeof(BotanistsCore))
    for i, name in enumerate(_SCALARS):
        raw[i] = d[name]
    for i in range(25):
        c.market[i] = d["market"][i]
    for i in range(5):
        c.pawn[i] = d["pawn"][i]
        c.bag[i] = d["bag"][i]
        c.collected[i] = d["collected"][i]
        c.board[i] = d["board"][i]
        c.land_filled[i] = d["land_filled"][i]
    for w in range(5):
        for k in range(15):
            c.land_colour[w][k] = d["land_colour"][w][k]
            c.land_down[w][k] = d["land_down"][w][k]
    for p in range(4):
        for i in range(5):
            c.leftover[p][i] = d["leftover"][p][i]
        v = int(d["score"][p])
        if not -32768 <= v <= 32767:
            raise OverflowError("score out of range")
        add_score(&c, p, v)
        c.fulfilled_total[p] = d["fulfilled_total"][p]
    for k in range(76):
        c.card_loc[k] = d["card_loc"][k]
    for k in range(82):
        c.order_loc[k] = d["order_loc"][k]
    for i in range(3):
        c.open_orders[i] = d["open_orders"][i]
    held = d.get("card_held")
    for k in range(76):
        if held is not None and held[k]:
            c.card_held[k >> 3] |= 1 << (k & 7)
    return (<char*>&c)[:sizeof(BotanistsCore)]


def normalized(const uint8_t[::1] data):
    """For the validator: the core after advance() resolved every forced step. A stored core
    must already be in this form (else it is not a position the game can reach)."""
    cdef BotanistsState st
    if data.shape[0] != sizeof(BotanistsCore):
        raise ValueError("wrong core size")
    memset(&st, 0, sizeof(BotanistsState))
    memcpy(&st.core, &data[0], sizeof(BotanistsCore))
    k_rebuild(<uint8_t*>&st)
    advance(&st.core, -1)
    return (<char*>&st.core)[:sizeof(BotanistsCore)]


def footprint(int orient, int card, int cell):
    """The cells (25-bit mask) a card covers from `cell` seen from an orientation; 0 if off."""
    return FOOT[orient][card][cell]


def helper_destinations(int card, int cell):
    return HELPER_DEST[card][cell]
