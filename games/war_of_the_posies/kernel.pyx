# cython: language_level=3
"""War of the Posies rules over a flat WarCore buffer: the GameKernel of war_of_the_posies.

Section names follow war_of_the_posies.decisions.md (WS setup, WT turn, WP playing, WPl
planting, WG completing, WB purchasing, WE end of turn, WK composting, WZ end and scoring,
A# resolutions). Cards are data (components.toml): ``load_components`` copies them into the
static tables below, and every card text is a list of effect primitives interpreted here.

Model of hidden information and chance (decisions.md sections 4 and 5):
* Every pile whose order nobody knows is stored as a multiset of card kinds: each seat's draw
  pile, the Market deck, the GF deck, the Basic Flower deck below its top. A draw, a refill
  or a reveal is a chance node over kinds weighted by the remaining copies, and a reshuffle
  of a discard pile is just "the discard multiset becomes the draw multiset".
* Hands are the only hidden part: determinize deals each other seat's hand again from the
  multiset (hand + draw pile) that the observer can infer from public history. Section 4
  stops there, but the history tells a little more: when an end-of-turn draw empties the
  draw pile, the cards drawn before the reshuffle are the whole old draw pile, whose contents
  everyone knows (the discarded hand is public, A13). They are kept in ``known_hand`` and
  stay in the hand when it is dealt again, so beliefs are exact.

Where this kernel departs from decisions.md (and why):
* Safety end instead of A6's net: an untriggered game ends after round ROUND_LIMIT (40; a
  round = one turn per seat) and is scored normally. A6's condition ("Market deck, GF deck and
  GF row empty and nobody can complete a GF") is not enough: with the default pool the Market
  row can clog with 7- and 9-coin Expeditions while every affordable GF waits for Flowers
  nobody holds any more, and play goes on for ever with full decks. Real games end by WZ1
  after 12-20 rounds; 40 leaves twice that.
* Coin-only plays are not auto-played at the first purchase (6.1): that would take options
  away (planting that Starter into a GF bought later in the turn, composting that card from
  hand). They commute instead, so a run of them is offered in ascending kind order only
  (``last_pure``): every reachable position stays reachable, without the permutations.
* A Plant ability resolves before the When-Completed ability of the GF it completes (WG1 locks
  the Flowers at once; the rulebook orders "place, then Plant ability" and "complete, then
  WC" without ordering the two abilities).
* UPROOT frees the slot (A12 says where the Flower goes, not whether the symbol may be used
  again; "it also cleans out poison" only makes sense if the slot can be replanted).
* Piles are multisets (draw piles, Market deck, GF deck, Basic pile below its top) and the
  Market and GF rows are sets of cards, not slots: their order is unknown to everyone or
  irrelevant. So GFs are located per card (no cap of 10 GFs per player as in 6.3), purchases
  name the card kind, and action ids are dense blocks rather than 6.1's bit fields.

Action ids (dense, ascending by block):
  END                 0                  end the turn (WT2)
  PLAY(kind)          1 + kind           play a card from hand (WP1; a Flower cultivates)
  BUY(kind)           65 + kind          buy a Market card or the top Basic Flower (WB1)
  BUY_GF(gf)          129 + gf           buy a face-up Garden Feature (WB1, WB2)
  PLANT(kind, gf)     161 + kind*32 + gf plant a Flower from hand under a GF (WPl1, WPl3)
  COMPOST_HAND(kind)  2209 + kind        "up to n" choice: compost a card from hand (WK1)
  COMPOST_DISC(kind)  2273 + kind        "up to n" choice: compost a card from the discard
  UPROOT(gf, slot)    2337 + gf*4 + slot "up to n" choice: compost an unlocked Flower (A12)
  STOP                2465               end an "up to n" choice early
  chance: DRAW(kind) 2466+, REFILL_MARKET(kind) 2530+, REFILL_GF(gf kind) 2594+,
          REVEAL_BASIC(kind) 2626+, FIRST_PLAYER(seat) 2690+
  RESOLVE_WC(gf)      2694 + gf          the owner picks which pending When-Completed ability
                                         resolves next (WG2, several pending)

legal_actions vs search_actions (the kernel contract): legal_actions is every move the rules
allow, in any order a player may make them. search_actions is the canonical subset the search
expands, and it prunes only inside a world the search sampled (``search_world``, set by
k_determinize, which the search calls at the root of every iteration; 0 in any position a
player reached, where search_actions is every legal action):
* orders of coin-only plays: within a run of them (no other action in between) a play is
  offered only if its kind is >= the highest kind played so far in the run (``last_pure``).
  That is memory, so k_determinize clears it: a search root offers every play, even after
  `play Basic Tools` with a Red Starter in hand, and inside the tree each set of coin-only
  plays is reached once, in ascending order;
* identical Garden Feature copies in the same place and state (acting on either is the same
  move up to the copy's number): only the lowest id.
The playout policy draws from the same canonical subset (``policy_actions``).
"""
from libc.stdint cimport uint8_t, int8_t, int32_t, uint32_t, uint64_t
from libc.string cimport memset, memcpy, memcmp

from hortus._ext.kernel cimport GameKernel, CHANCE, TERMINAL, kernel_to_capsule
from hortus._ext.rng cimport Rng, rng_below, rng_seed, rng_uniform, rng_weighted_index
from hortus.games.war_of_the_posies.kernel cimport *

# Byte-set helpers over the per-kind (64-byte) and per-GF (32-byte) arrays: the rules iterate
# over the few kinds or GFs actually present instead of scanning every index. SSE2 where the
# compiler has it (every x86-64), plain loops elsewhere; both give the same masks.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    static inline uint64_t wp_nonzero64(const uint8_t* p) {
        const __m128i z = _mm_setzero_si128();
        uint64_t m0 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)p), z));
        uint64_t m1 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(p + 16)), z));
        uint64_t m2 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(p + 32)), z));
        uint64_t m3 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(p + 48)), z));
        return ~(m0 | (m1 << 16) | (m2 << 32) | (m3 << 48));
    }
    static inline uint32_t wp_eq32(const uint8_t* p, uint8_t v) {
        const __m128i b = _mm_set1_epi8((char)v);
        uint32_t m0 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)p), b));
        uint32_t m1 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(p + 16)), b));
        return m0 | (m1 << 16);
    }
    static inline uint32_t wp_anybit32(const uint8_t* p, uint8_t bits) {
        const __m128i b = _mm_set1_epi8((char)bits);
        const __m128i z = _mm_setzero_si128();
        uint32_t m0 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(_mm_loadu_si128((const __m128i*)p), b), z));
        uint32_t m1 = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(_mm_loadu_si128((const __m128i*)(p + 16)), b), z));
        return ~(m0 | (m1 << 16));
    }
    static inline int wp_sum64(const uint8_t* p) {
        const __m128i z = _mm_setzero_si128();
        __m128i a = _mm_add_epi64(_mm_sad_epu8(_mm_loadu_si128((const __m128i*)p), z),
                                  _mm_sad_epu8(_mm_loadu_si128((const __m128i*)(p + 16)), z));
        a = _mm_add_epi64(a, _mm_sad_epu8(_mm_loadu_si128((const __m128i*)(p + 32)), z));
        a = _mm_add_epi64(a, _mm_sad_epu8(_mm_loadu_si128((const __m128i*)(p + 48)), z));
        return _mm_cvtsi128_si32(a) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(a, a));
    }
    static inline void wp_add64(uint8_t* t, const uint8_t* s) {
        int i;
        for (i = 0; i < 64; i += 16)
            _mm_storeu_si128((__m128i*)(t + i), _mm_add_epi8(_mm_loadu_si128((const __m128i*)(t + i)),
                                                             _mm_loadu_si128((const __m128i*)(s + i))));
    }
    #else
    static inline uint64_t wp_nonzero64(const uint8_t* p) {
        uint64_t m = 0; int i;
        for (i = 0; i < 64; i++) m |= (uint64_t)(p[i] != 0) << i;
        return m;
    }
    static inline uint32_t wp_eq32(const uint8_t* p, uint8_t v) {
        uint32_t m = 0; int i;
        for (i = 0; i < 32; i++) m |= (uint32_t)(p[i] == v) << i;
        return m;
    }
    static inline uint32_t wp_anybit32(const uint8_t* p, uint8_t bits) {
        uint32_t m = 0; int i;
        for (i = 0; i < 32; i++) m |= (uint32_t)((p[i] & bits) != 0) << i;
        return m;
    }
    static inline int wp_sum64(const uint8_t* p) {
        int n = 0, i;
        for (i = 0; i < 64; i++) n += p[i];
        return n;
    }
    static inline void wp_add64(uint8_t* t, const uint8_t* s) {
        int i;
        for (i = 0; i < 64; i++) t[i] = (uint8_t)(t[i] + s[i]);
    }
    #endif
    static inline int wp_ctz64(uint64_t x) { return __builtin_ctzll(x); }
    /* A 4-bit key of which of 4 bytes are nonzero. The bit order depends on the platform's
       byte order, so tables indexed by it are built with this same function. */
    static inline int wp_slot_key(const uint8_t* s) {
        uint32_t x;
        memcpy(&x, s, 4);
        x |= x >> 4; x |= x >> 2; x |= x >> 1;
        x &= 0x01010101u;
        return (int)(((x * 0x01020408u) >> 24) & 0xFu);
    }
    static inline int wp_popcount32(uint32_t x) {
        x = x - ((x >> 1) & 0x55555555u);
        x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
        return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
    }
    """
    uint64_t wp_nonzero64(const uint8_t* p) noexcept nogil      # bit k: p[k] != 0 (64 bytes)
    uint32_t wp_eq32(const uint8_t* p, uint8_t v) noexcept nogil  # bit g: p[g] == v (32 bytes)
    uint32_t wp_anybit32(const uint8_t* p, uint8_t bits) noexcept nogil  # bit g: p[g] & bits
    void wp_add64(uint8_t* t, const uint8_t* s) noexcept nogil  # t[k] += s[k] (mod 256), 64 bytes
    int wp_sum64(const uint8_t* p) noexcept nogil              # sum of 64 bytes
    int wp_ctz64(uint64_t x) noexcept nogil                     # lowest set bit (x != 0)
    int wp_popcount32(uint32_t x) noexcept nogil
    int wp_slot_key(const uint8_t* s) noexcept nogil            # filled-slot key of one GF

cdef enum:
    ACT_END = 0
    ACT_PLAY = 1
    ACT_BUY = 65
    ACT_BUY_GF = 129
    ACT_PLANT = 161
    ACT_COMPOST_HAND = 2209
    ACT_COMPOST_DISCARD = 2273
    ACT_UPROOT = 2337
    ACT_STOP = 2465
    ACT_DRAW = 2466
    ACT_REFILL_MARKET = 2530
    ACT_REFILL_GF = 2594
    ACT_REVEAL_BASIC = 2626
    ACT_FIRST = 2690
    ACT_RESOLVE_WC = 2694  # after the chance block so that every older id keeps its number
    NUM_ACTIONS = 2726
    MAX_LEGAL = 2048       # END + 64 plays + 96 buys + 64*32 plants would exceed it only in theory;
                           # plant targets are capped by the GFs actually owned (<= 32)
    EFFECT_WC = 128        # effect id of GF g's When-Completed ability: 128 + g
    CAT_STARTING = 0
    CAT_BASIC = 1
    CAT_MARKET = 2

# --- static component tables (filled once by load_components) ------------------------------
cdef int N_KINDS = 0
cdef int N_GF = 0
cdef int END_REPUTATION = 7
cdef uint8_t K_CATEGORY[64]     # CAT_*
cdef uint8_t K_SYMBOL[64]       # flower symbol index, EMPTY for cards without one
cdef int8_t K_POINTS[64]        # printed points (negative: Poisonous, A19)
cdef int K_EXP_POINTS[64]       # points scored while in the deck (WZ2b): non-Flowers only
cdef uint8_t K_COST[64]
cdef uint8_t K_PURE[64]         # play text only adds coins, purchases or plantings
# A coin-only play text's totals (its OP_COIN, OP_BUY, OP_PLANT arguments summed, capped at 255:
# saturating adds of non-negative numbers add up in any grouping), 0 for the other kinds.
cdef uint8_t K_PLAY_COINS[64]
cdef uint8_t K_PLAY_BUYS[64]
cdef uint8_t K_PLAY_PLANTS[64]
cdef uint8_t E_LEN[160]
cdef uint8_t E_OP[160][6]
cdef uint8_t E_ARG[160][6]
cdef uint8_t G_NSLOTS[32]
cdef uint8_t G_SYM[32][4]
cdef uint8_t G_COST[32]
cdef uint8_t G_REP[32]
cdef uint8_t G_KIND[32]         # lowest id of the identical GF cards (interchangeable copies)
cdef uint8_t G_WC_CLASS[32]     # lowest id of the GFs with the same When-Completed text
# The same tables as bit sets (bit k = kind k, bit g = GF g), for the mask-based loops.
cdef uint64_t KIND_MASK = 0     # kinds in the pool
cdef uint64_t PURE_MASK = 0     # K_PURE
cdef uint64_t FLOWER_MASK = 0   # kinds with a flower symbol (plantable)
cdef uint64_t POISON_MASK = 0   # K_POINTS < 0 (Poisonous Flowers, WPl5)
cdef uint64_t EXPEDITION_MASK = 0  # K_EXP_POINTS != 0 (points while in the deck, WZ2b)
cdef uint32_t GF_MASK = 0       # GFs in the pool
cdef uint32_t LOWER_COPY_MASK = 0  # GFs with an identical lower-id copy (G_KIND[g] != g)
cdef uint32_t NO_WC_MASK = 0    # GFs without a When-Completed text
cdef uint64_t AFFORDABLE_KINDS[256]   # [coins]: kinds with K_COST <= coins
cdef uint32_t AFFORDABLE_GFS[256]     # [coins]: GFs with G_COST <= coins
# [g][wp_slot_key(gf_slot[g])]: flower symbols of GF g's free slots, and their number (slots
# beyond G_NSLOTS[g] do not count).
cdef uint8_t G_FREE_SYMBOLS[32][16]
cdef uint8_t G_FREE_COUNT[32][16]
cdef bint LOADED = False


def load_components(list category, list symbol, list points, list cost, list play, list plant,
                    list gf_symbols, list gf_cost, list gf_reputation, list gf_when_completed,
                    list gf_kind, int end_reputation):
    """Fill the static tables from validated data (components.install). Effects are lists of
    (op, arg) pairs; sizes were checked by the loader."""
    global N_KINDS, N_GF, END_REPUTATION, LOADED
    global KIND_MASK, PURE_MASK, FLOWER_MASK, POISON_MASK, EXPEDITION_MASK
    global GF_MASK, LOWER_COPY_MASK, NO_WC_MASK
    cdef int k, g, i, e, coins, filled, key
    cdef uint8_t slots[4]
    N_KINDS = len(category)
    N_GF = len(gf_symbols)
    if N_KINDS > MAX_KINDS or N_GF > MAX_GF:
        raise ValueError("too many card kinds or garden features for the state layout")
    END_REPUTATION = end_reputation
    memset(E_LEN, 0, sizeof(E_LEN))
    memset(E_OP, 0, sizeof(E_OP))
    memset(E_ARG, 0, sizeof(E_ARG))
    for k in range(MAX_KINDS):
        K_CATEGORY[k] = 0
        K_SYMBOL[k] = EMPTY
        K_POINTS[k] = 0
        K_EXP_POINTS[k] = 0
        K_COST[k] = 0
        K_PURE[k] = 0
        K_PLAY_COINS[k] = 0
        K_PLAY_BUYS[k] = 0
        K_PLAY_PLANTS[k] = 0
    for k in range(N_KINDS):
        K_CATEGORY[k] = category[k]
        K_SYMBOL[k] = EMPTY if symbol[k] is None else symbol[k]
        K_POINTS[k] = points[k]
        K_EXP_POINTS[k] = points[k] if symbol[k] is None else 0
        K_COST[k] = cost[k]
        for e, text in ((2 * k, play[k]), (2 * k + 1, plant[k])):
            E_LEN[e] = len(text)
            for i, (op, arg) in enumerate(text):
                E_OP[e][i] = op
                E_ARG[e][i] = arg
        K_PURE[k] = 1
        for i in range(E_LEN[2 * k]):
            if E_OP[2 * k][i] not in (OP_COIN, OP_BUY, OP_PLANT):
                K_PURE[k] = 0
        if K_PURE[k]:
            for i in range(E_LEN[2 * k]):
                if E_OP[2 * k][i] == OP_COIN:
                    K_PLAY_COINS[k] = sat_add(K_PLAY_COINS[k], E_ARG[2 * k][i])
                elif E_OP[2 * k][i] == OP_BUY:
                    K_PLAY_BUYS[k] = sat_add(K_PLAY_BUYS[k], E_ARG[2 * k][i])
                else:
                    K_PLAY_PLANTS[k] = sat_add(K_PLAY_PLANTS[k], E_ARG[2 * k][i])
    for g in range(MAX_GF):
        G_NSLOTS[g] = 0
        G_COST[g] = 0
        G_REP[g] = 0
        G_KIND[g] = g
        for i in range(MAX_SLOTS):
            G_SYM[g][i] = EMPTY
    for g in range(N_GF):
        G_NSLOTS[g] = len(gf_symbols[g])
        for i, sym in enumerate(gf_symbols[g]):
            G_SYM[g][i] = sym
        G_COST[g] = gf_cost[g]
        G_REP[g] = gf_reputation[g]
        G_KIND[g] = gf_kind[g]
        e = EFFECT_WC + g
        E_LEN[e] = len(gf_when_completed[g])
        for i, (op, arg) in enumerate(gf_when_completed[g]):
            E_OP[e][i] = op
            E_ARG[e][i] = arg
    for g in range(MAX_GF):
        G_WC_CLASS[g] = g
        for i in range(g):
            if (G_WC_CLASS[i] == i and E_LEN[EFFECT_WC + i] == E_LEN[EFFECT_WC + g]
                    and memcmp(E_OP[EFFECT_WC + i], E_OP[EFFECT_WC + g], MAX_PRIMS) == 0
                    and memcmp(E_ARG[EFFECT_WC + i], E_ARG[EFFECT_WC + g], MAX_PRIMS) == 0):
                G_WC_CLASS[g] = i
                break
    for k in range(N_KINDS):
        if K_SYMBOL[k] != EMPTY and K_SYMBOL[k] >= MAX_SYMBOLS:
            raise ValueError("flower symbol index beyond the kernel's symbol masks")
    for g in range(N_GF):
        for i in range(G_NSLOTS[g]):
            if G_SYM[g][i] >= MAX_SYMBOLS:
                raise ValueError("garden feature symbol index beyond the kernel's symbol masks")
    KIND_MASK = PURE_MASK = FLOWER_MASK = POISON_MASK = EXPEDITION_MASK = 0
    GF_MASK = LOWER_COPY_MASK = NO_WC_MASK = 0
    for k in range(N_KINDS):
        KIND_MASK |= <uint64_t>1 << k
        if K_PURE[k]:
            PURE_MASK |= <uint64_t>1 << k
        if K_SYMBOL[k] != EMPTY:
            FLOWER_MASK |= <uint64_t>1 << k
        if K_POINTS[k] < 0:
            POISON_MASK |= <uint64_t>1 << k
        if K_EXP_POINTS[k]:
            EXPEDITION_MASK |= <uint64_t>1 << k
    for g in range(N_GF):
        GF_MASK |= <uint32_t>1 << g
        if G_KIND[g] != g:
            LOWER_COPY_MASK |= <uint32_t>1 << g
        if E_LEN[EFFECT_WC + g] == 0:
            NO_WC_MASK |= <uint32_t>1 << g
    for coins in range(256):
        AFFORDABLE_KINDS[coins] = 0
        AFFORDABLE_GFS[coins] = 0
        for k in range(N_KINDS):
            if K_COST[k] <= coins:
                AFFORDABLE_KINDS[coins] |= <uint64_t>1 << k
        for g in range(N_GF):
            if G_COST[g] <= coins:
                AFFORDABLE_GFS[coins] |= <uint32_t>1 << g
    for g in range(MAX_GF):
        for filled in range(16):               # bit i: slot i holds a Flower
            for i in range(MAX_SLOTS):
                slots[i] = (filled >> i) & 1
            key = wp_slot_key(slots)
            G_FREE_SYMBOLS[g][key] = 0
            G_FREE_COUNT[g][key] = 0
            for i in range(G_NSLOTS[g]):
                if not (filled >> i) & 1:
                    G_FREE_SYMBOLS[g][key] |= 1 << G_SYM[g][i]
                    G_FREE_COUNT[g][key] += 1
    LOADED = True


# --- small helpers ------------------------------------------------------------------------------
cdef inline uint8_t sat_add(uint8_t a, int b) noexcept nogil:
    cdef int v = a + b
    return 255 if v > 255 else v


cdef inline bint is_choice(int op) noexcept nogil:
    return op == OP_COMPOST_HAND or op == OP_COMPOST_ANY or op == OP_UPROOT


cdef inline void push_frame(WarCore* c, int effect) noexcept nogil:
    if E_LEN[effect] == 0 or c.depth >= MAX_DEPTH:
        return
    c.frame_effect[c.depth] = effect
    c.frame_pc[c.depth] = 0
    c.frame_left[c.depth] = 0
    c.depth += 1


# --- the derived cache (WarCache): every write of a hand, a draw pile, a GF's slots or its
# pending When-Completed flag goes through the helpers below (or recomputes the seat's bit sets);
# the Market row and the GF places change in k_apply alone (purchases and refills).
cdef inline WarCache* cache_of(const WarCore* c) noexcept nogil:
    return &(<WarState*>c).cache


cdef inline void hand_add(WarCore* c, int seat, int k) noexcept nogil:
    c.hand[seat][k] += 1
    c.hand_count[seat] += 1
    cache_of(c).hand_kinds[seat] |= <uint64_t>1 << k


cdef inline void hand_remove(WarCore* c, int seat, int k) noexcept nogil:
    c.hand[seat][k] -= 1
    c.hand_count[seat] -= 1
    if c.hand[seat][k] == 0:
        cache_of(c).hand_kinds[seat] &= ~(<uint64_t>1 << k)


cdef inline void piles_changed(WarCore* c, int seat) noexcept nogil:
    """The seat's hand and draw pile were rewritten as a whole."""
    cdef WarCache* ca = cache_of(c)
    ca.hand_kinds[seat] = wp_nonzero64(c.hand[seat]) & KIND_MASK
    ca.draw_kinds[seat] = wp_nonzero64(c.draw[seat]) & KIND_MASK


cdef inline void slots_changed(WarCore* c, int g) noexcept nogil:
    cache_of(c).free_symbols[g] = G_FREE_SYMBOLS[g][wp_slot_key(c.gf_slot[g])]


cdef inline void set_wc_pending(WarCore* c, int g) noexcept nogil:
    c.gf_flags[g] |= GF_WC_PENDING
    cache_of(c).wc_pending |= <uint32_t>1 << g


cdef inline void clear_wc_pending(WarCore* c, int g) noexcept nogil:
    c.gf_flags[g] &= ~GF_WC_PENDING
    cache_of(c).wc_pending &= ~(<uint32_t>1 << g)


cdef void k_rebuild(uint8_t* buf) noexcept nogil:
    """The cache from the core (after a decode, or any write of the core alone)."""
    cdef WarCore* c = <WarCore*>buf
    cdef WarCache* ca = cache_of(c)
    cdef int seat, g
    memset(ca, 0, sizeof(WarCache))
    for seat in range(MAX_SEATS):
        piles_changed(c, seat)
        ca.owned_gfs[seat] = wp_eq32(c.gf_loc, GF_OWNED + seat) & GF_MASK
    ca.row_gfs = wp_eq32(c.gf_loc, GF_ROW) & GF_MASK
    ca.market_kinds = wp_nonzero64(c.market_row) & KIND_MASK
    ca.wc_pending = wp_anybit32(c.gf_flags, GF_WC_PENDING) & GF_MASK
    for g in range(MAX_GF):
        slots_changed(c, g)


cdef inline int free_slot(const WarCore* c, int g, int symbol) noexcept nogil:
    """The lowest free slot of GF g showing `symbol`, or -1 (WPl1: one Flower per symbol)."""
    cdef int i
    for i in range(G_NSLOTS[g]):
        if G_SYM[g][i] == symbol and c.gf_slot[g][i] == 0:
            return i
    return -1


cdef inline bint same_gf_as_lower_copy(const WarCore* c, int g) noexcept nogil:
    """True if an identical GF card with a lower id is in the same place and state: acting on
    either is the same move, so only the lower id is offered."""
    cdef int h
    if G_KIND[g] == g:
        return False
    for h in range(G_KIND[g], g):
        if (G_KIND[h] == G_KIND[g] and c.gf_loc[h] == c.gf_loc[g] and c.gf_flags[h] == c.gf_flags[g]
                and memcmp(c.gf_slot[h], c.gf_slot[g], MAX_SLOTS) == 0):
            return True
    return False


cdef inline uint32_t owned_gfs(const WarCore* c) noexcept nogil:
    """Bit set of the GFs in some player's play area."""
    cdef const WarCache* ca = cache_of(c)
    return ca.owned_gfs[0] | ca.owned_gfs[1] | ca.owned_gfs[2] | ca.owned_gfs[3]


cdef inline uint32_t owned_open_gfs(const WarCore* c) noexcept nogil:
    """Bit set of the GFs in some player's play area that are not complete (no GF_COMPLETE
    flag)."""
    return owned_gfs(c) & ~wp_anybit32(c.gf_flags, GF_COMPLETE)


cdef bint uproot_targets_exist(const WarCore* c) noexcept nogil:
    cdef int g, i
    cdef uint32_t m = owned_open_gfs(c)
    while m:
        g = wp_ctz64(m)
        m &= m - 1
        for i in range(G_NSLOTS[g]):
            if c.gf_slot[g][i]:
                return True
    return False


cdef bint has_candidates(const WarCore* c, int op) noexcept nogil:
    cdef int tp = c.turn_player
    if op == OP_COMPOST_HAND:
        return c.hand_count[tp] > 0
    if op == OP_COMPOST_ANY:
        return c.hand_count[tp] + c.discard_count[tp] > 0
    return uproot_targets_exist(c)


cdef void move_all(uint8_t* source, uint8_t* target, uint8_t* source_count,
                   uint8_t* target_count) noexcept nogil:
    # All 64 per-kind bytes: those beyond N_KINDS are always 0 (validated), so this is the
    # same as moving the N_KINDS kinds one by one.
    wp_add64(target, source)
    memset(source, 0, MAX_KINDS)
    target_count[0] += source_count[0]
    source_count[0] = 0


cdef inline bint refill_pending(const WarCore* c) noexcept nogil:
    return ((c.gf_row_count < GF_ROW_SIZE and c.gf_deck_count > 0)
            or (c.market_row_count < MARKET_SIZE and c.market_deck_count > 0)
            or (c.basic_top == EMPTY and c.basic_count > 0))


cdef void remember_hand(WarCore* c, int seat) noexcept nogil:
    """The end-of-turn draw ran out of cards: everything drawn so far was the whole old draw
    pile, whose contents everyone knows (the discarded hand is public, A13), so those cards
    are known to be in the new hand. determinize keeps them there."""
    cdef int k, j, n = 0
    cdef uint64_t m = cache_of(c).hand_kinds[seat]
    for j in range(4):
        c.known_hand[seat][j] = 0
    while m and n < 4:                         # ascending kinds, at most 4 entries
        k = wp_ctz64(m)
        m &= m - 1
        for j in range(c.hand[seat][k]):
            if n < 4:
                c.known_hand[seat][n] = k + 1
                n += 1


cdef bint chance_pending(WarCore* c) noexcept nogil:
    """Is the next event a chance node? Resolves the deterministic parts of a draw on the way:
    WE2 reshuffle of an empty draw pile, and "draw fewer" when both piles are empty."""
    cdef int seat
    if c.stage == STAGE_OVER:
        return False
    if c.first_player == EMPTY or refill_pending(c):
        return True
    if c.draws_pending:
        seat = c.draw_seat
        if c.draw_count[seat] == 0:
            if c.discard_count[seat] == 0:
                c.draws_pending = 0            # WE2 [RES-RULE]: draw fewer
                return False
            if c.turn_ending:
                remember_hand(c, seat)
            move_all(c.discard[seat], c.draw[seat], &c.discard_count[seat], &c.draw_count[seat])
            cache_of(c).draw_kinds[seat] = wp_nonzero64(c.draw[seat]) & KIND_MASK
        return True
    return False


cdef void resolve_primitive(WarCore* c, int op, int arg) noexcept nogil:
    """WP3: one non-choice primitive of the effect being resolved."""
    cdef int tp = c.turn_player
    if op == OP_COIN:
        c.coins = sat_add(c.coins, arg)
    elif op == OP_BUY:
        c.buys = sat_add(c.buys, arg)
    elif op == OP_PLANT:
        c.plants = sat_add(c.plants, arg)
    elif op == OP_DRAW:
        c.draw_seat = tp
        c.draws_pending = sat_add(c.draws_pending, arg)
    elif op == OP_GAIN_BASIC_HAND:
        if c.basic_top != EMPTY:
            hand_add(c, tp, c.basic_top)
            c.basic_top = EMPTY               # the next one is revealed by chance (WB3)


cdef inline uint32_t pending_wc(const WarCore* c) noexcept nogil:
    """The turn player's GFs whose When-Completed ability waits (WG2), outside any effect."""
    cdef uint32_t pending
    if c.depth or c.stage != STAGE_PLAY or c.turn_ending:
        return 0
    pending = cache_of(c).wc_pending
    if pending:
        pending &= cache_of(c).owned_gfs[c.turn_player]
    return pending


cdef inline bint wc_order_matters(uint32_t pending) noexcept nogil:
    """Do the pending When-Completed texts differ (two or more pending)? Identical texts give
    the same result in any order, so no choice is asked then."""
    cdef int cls = -1, g
    while pending:
        g = wp_ctz64(pending)
        pending &= pending - 1
        if cls < 0:
            cls = G_WC_CLASS[g]
        elif G_WC_CLASS[g] != cls:
            return True
    return False


cdef void advance(WarCore* c) noexcept nogil:
    """Resolve forced steps until a decision, a chance node or the end."""
    cdef int top, e, op, arg, g, tp
    cdef uint32_t pending
    # settled: chance_pending(c) returned False and nothing it reads (or the stage) changed
    # since, so asking again would give False again without side effects: skip it. Only
    # frame steps that touch none of those fields keep it (COIN, BUY, PLANT, frame ends).
    cdef bint settled = False
    while True:
        if not settled:
            if c.stage == STAGE_OVER or chance_pending(c):
                return
            settled = True
        if c.depth > 0:
            top = c.depth - 1
            e = c.frame_effect[top]
            if c.frame_pc[top] >= E_LEN[e]:
                c.frame_effect[top] = 0          # unused frames are zero (one encoding per position)
                c.frame_pc[top] = 0
                c.frame_left[top] = 0
                c.depth -= 1
                continue
            op = E_OP[e][c.frame_pc[top]]
            arg = E_ARG[e][c.frame_pc[top]]
            if is_choice(op):
                if c.frame_left[top] > 0:
                    if has_candidates(c, op):
                        return
                    # Nothing left to pick (the hand was emptied): the choice is over, rather
                    # than a decision whose only option is STOP.
                    c.frame_left[top] = 0
                    c.frame_pc[top] += 1
                    continue
                if has_candidates(c, op):
                    c.frame_left[top] = arg       # WP3: "up to n" picks are decisions
                    return
                c.frame_pc[top] += 1
                continue
            c.frame_pc[top] += 1
            resolve_primitive(c, op, arg)
            if op != OP_COIN and op != OP_BUY and op != OP_PLANT:
                settled = False                   # DRAW and GAIN_BASIC_HAND may start chance
            continue
        settled = False
        if c.stage == STAGE_SETUP:
            # WS2: every seat draws its opening 5, seat by seat; then the first player starts.
            if c.draw_seat + 1 < c.players:
                c.draw_seat += 1
                c.draws_pending = HAND_SIZE
                continue
            c.stage = STAGE_PLAY
            c.turn_player = c.first_player
            c.round = 1
            c.coins = 0
            c.buys = 1
            c.plants = 1
            c.last_pure = 0
            continue
        tp = c.turn_player
        if c.turn_ending:
            # The ending player's new hand is drawn: the next seat clockwise starts.
            c.turn_ending = 0
            c.turn_player = (tp + 1) % c.players
            if c.turn_player == c.first_player:
                c.round += 1
            # Its own turn: it may play the known cards; nobody else decides until it ends.
            memset(c.known_hand[c.turn_player], 0, 4)
            continue
        # WG2 / A8: a GF completed by an opponent's poison resolves its WC at the start of the
        # owner's next turn, before any other action, one GF at a time. When the pending texts
        # differ the owner picks the order (RESOLVE_WC, "during their next turn"); otherwise
        # the order cannot matter and the lowest id goes first.
        pending = pending_wc(c)
        if pending & NO_WC_MASK:                  # nothing to resolve: just no longer pending
            g = wp_ctz64(pending & NO_WC_MASK)
            clear_wc_pending(c, g)
            continue
        if pending:
            if wc_order_matters(pending):
                return
            g = wp_ctz64(pending)
            clear_wc_pending(c, g)
            push_frame(c, EFFECT_WC + g)
            continue
        return


# --- kernel functions -------------------------------------------------------------------------
cdef int k_num_players(const uint8_t* buf) noexcept nogil:
    return (<const WarCore*>buf).players


cdef int k_current_player(const uint8_t* buf) noexcept nogil:
    cdef const WarCore* c = <const WarCore*>buf
    if c.stage == STAGE_OVER:
        return TERMINAL
    # At rest a pending draw always has cards to draw (advance reshuffled or cancelled it).
    # Pending draws are asked first: a playout is mostly draws or decisions, and during the draws
    # that one compare answers (the conditions have no side effects, so their order is free).
    if c.draws_pending or c.first_player == EMPTY or refill_pending(c):
        return CHANCE
    return c.turn_player


cdef int choice_actions(const WarCore* c, int op, int32_t* out, bint canonical) noexcept nogil:
    """Legal picks of an "up to n" choice (ascending), then STOP. `canonical` (policy_actions)
    leaves out the GFs identical to a lower-id copy in the same place and state."""
    cdef int n = 0, k, g, i, j, tp = c.turn_player
    cdef bint dup
    cdef uint64_t m
    cdef uint32_t gm
    if op == OP_COMPOST_HAND or op == OP_COMPOST_ANY:
        m = cache_of(c).hand_kinds[tp]
        while m:
            out[n] = ACT_COMPOST_HAND + wp_ctz64(m)
            n += 1
            m &= m - 1
        if op == OP_COMPOST_ANY:
            m = wp_nonzero64(c.discard[tp]) & KIND_MASK
            while m:
                out[n] = ACT_COMPOST_DISCARD + wp_ctz64(m)
                n += 1
                m &= m - 1
    else:
        # A12: an unlocked Flower in any player's incomplete GF (own GFs included).
        gm = owned_open_gfs(c)
        while gm:
            g = wp_ctz64(gm)
            gm &= gm - 1
            if canonical and (LOWER_COPY_MASK >> g) & 1 and same_gf_as_lower_copy(c, g):
                continue
            for i in range(G_NSLOTS[g]):
                if not c.gf_slot[g][i]:
                    continue
                dup = False
                for j in range(i):        # the same kind in another slot: the same move (and the
                                          # same notation), so legal_actions lists it once too
                    if c.gf_slot[g][j] == c.gf_slot[g][i]:
                        dup = True
                if not dup:
                    out[n] = ACT_UPROOT + g * 4 + i
                    n += 1
    out[n] = ACT_STOP
    return n + 1


cdef inline uint64_t playable_kinds(const WarCore* c, uint64_t hand) noexcept nogil:
    """WP1 play: the kinds in hand that may be played now. Coin-only plays commute, so a run of
    them is offered in ascending kind order only (last_pure: kind k needs k + 1 >= last_pure):
    every sequence of plays stays reachable, without its permutations."""
    cdef int low = c.last_pure - 1
    if low <= 0:
        return hand
    if low >= 64:
        return hand & ~PURE_MASK
    return hand & (~PURE_MASK | ~((<uint64_t>1 << low) - 1))


cdef inline uint64_t buyable_kinds(const WarCore* c) noexcept nogil:
    """WB1 purchase candidates by kind before the cost check: the Market row and the top Basic
    Flower (A15: a Market purchase)."""
    cdef uint64_t m = cache_of(c).market_kinds
    if c.basic_top < MAX_KINDS:
        m |= <uint64_t>1 << c.basic_top
    return m & KIND_MASK


cdef inline bint gf_is_duplicate(const WarCore* c, int g) noexcept nogil:
    return (LOWER_COPY_MASK >> g) & 1 and same_gf_as_lower_copy(c, g)


cdef inline uint32_t plant_gfs(const WarCore* c, uint32_t own, bint canonical,
                               bint poison) noexcept nogil:
    """WPl1/WPl3/WPl5: the GFs with a free slot a Flower could go under: the seat's own (`own`)
    or, with `poison` (a Poisonous Flower in hand), every player's. With `canonical`, copies
    identical to a lower-id GF are left out (the same move up to the copy's number). A complete
    GF has no free slot (WG1 locks it once every slot is filled), so the free symbols say it."""
    cdef uint32_t gfs, copies
    cdef int g
    gfs = owned_gfs(c) if poison else own
    gfs &= wp_anybit32(cache_of(c).free_symbols, 0xFF)
    if canonical:
        copies = gfs & LOWER_COPY_MASK
        while copies:
            g = wp_ctz64(copies)
            copies &= copies - 1
            if same_gf_as_lower_copy(c, g):
                gfs &= ~(<uint32_t>1 << g)
    return gfs


cdef inline bint completes(const WarCore* c, int g) noexcept nogil:
    """Does one more Flower complete GF g (exactly one free slot)?"""
    return G_FREE_COUNT[g][wp_slot_key(c.gf_slot[g])] == 1


ctypedef struct TurnSets:
    # The actions of a turn decision outside any effect (depth 0) as bit sets. In ascending ids:
    # END, PLAY by kind, BUY by kind, BUY_GF by GF, PLANT by kind then GF.
    uint64_t plays           # WP1: kinds to play
    uint64_t buys            # WB1: kinds to buy (Market row, top Basic Flower)
    uint32_t buy_gfs         # WB1/WB2: GFs to buy
    uint32_t own             # the turn player's GFs
    uint64_t plant_kinds     # WPl1: Flower kinds in hand with somewhere to go
    uint32_t plant_gfs[64]   # [k] for each k of plant_kinds: the GFs it may go under


cdef inline void turn_sets(const WarCore* c, bint canonical, TurnSets* t) noexcept nogil:
    """Every legal action of a turn decision, or with `canonical` the search's subset (coin-only
    runs ascending, one of identical GF copies)."""
    cdef int k, g, tp = c.turn_player
    cdef uint64_t hand = cache_of(c).hand_kinds[tp], m
    cdef uint32_t gm, copies, targets
    t.plays = playable_kinds(c, hand) if canonical else hand   # WP1 play (WT1: in any order)
    t.own = cache_of(c).owned_gfs[tp]
    t.buys = 0
    t.buy_gfs = 0
    t.plant_kinds = 0
    # WB1 purchase (A15: the top Basic Flower is a Market purchase).
    if c.buys > 0:
        t.buys = buyable_kinds(c) & AFFORDABLE_KINDS[c.coins]
        gm = cache_of(c).row_gfs & AFFORDABLE_GFS[c.coins]
        if canonical:
            copies = gm & LOWER_COPY_MASK
            while copies:
                g = wp_ctz64(copies)
                copies &= copies - 1
                if same_gf_as_lower_copy(c, g):
                    gm &= ~(<uint32_t>1 << g)
        t.buy_gfs = gm
    # WPl1/WPl3/WPl5 plant: own incomplete GF with a free matching slot; a Poisonous Flower
    # also into an opponent's.
    m = hand & FLOWER_MASK
    if c.plants > 0 and m:
        targets = plant_gfs(c, t.own, canonical, (m & POISON_MASK) != 0)
        while m and targets:
            k = wp_ctz64(m)
            m &= m - 1
            gm = targets & wp_anybit32(cache_of(c).free_symbols, <uint8_t>1 << K_SYMBOL[k])
            if not (POISON_MASK >> k) & 1:
                gm &= t.own
            if gm:
                t.plant_kinds |= <uint64_t>1 << k
                t.plant_gfs[k] = gm


cdef int turn_actions(const WarCore* c, int32_t* out, bint canonical) noexcept nogil:
    """The actions of a turn decision outside any effect (depth 0), ascending (see turn_sets)."""
    cdef TurnSets t
    cdef int n = 1, k, g
    cdef uint64_t m
    cdef uint32_t gm
    turn_sets(c, canonical, &t)
    out[0] = ACT_END                          # WT2: the turn may end at any time
    m = t.plays
    while m:
        out[n] = ACT_PLAY + wp_ctz64(m)
        m &= m - 1
        n += 1
    m = t.buys
    while m:
        out[n] = ACT_BUY + wp_ctz64(m)
        m &= m - 1
        n += 1
    gm = t.buy_gfs
    while gm:
        out[n] = ACT_BUY_GF + wp_ctz64(gm)
        gm &= gm - 1
        n += 1
    m = t.plant_kinds
    while m:
        k = wp_ctz64(m)
        m &= m - 1
        gm = t.plant_gfs[k]
        while gm:
            g = wp_ctz64(gm)
            gm &= gm - 1
            if n < MAX_LEGAL:
                out[n] = ACT_PLANT + k * MAX_GF + g
                n += 1
    return n


ctypedef struct PolicyPick:
    # The playout policy's running choice over a turn's actions (see k_rollout_action).
    Rng noise          # the generator the per-action noise is drawn from
    int best_value     # the best score + noise so far
    int32_t best       # the first action with it
    int n              # actions looked at


cdef inline void offer(PolicyPick* pick, int32_t action, int value) noexcept nogil:
    """The playout policy's look at one action of the turn, in ascending order: its score plus
    rng_below(4) of noise, the first best wins."""
    pick.n += 1
    value += rng_below(&pick.noise, 4)
    if value > pick.best_value:
        pick.best_value = value
        pick.best = action


cdef inline void pick_turn_action(const WarCore* c, PolicyPick* pick) noexcept nogil:
    """The playout policy's scores of a turn's actions (the canonical subset, ascending): plant
    into an own GF (completing it first; poison there only at a loss), poison into an
    opponent's GF that it does not complete, play a card (one with more than coins first), a
    GF while owning fewer than two incomplete ones, buy by cost and points, end."""
    cdef TurnSets t
    cdef int k, g, open_gfs
    cdef uint64_t m
    cdef uint32_t gm
    turn_sets(c, True, &t)
    offer(pick, ACT_END, 0)
    m = t.plays
    while m:
        k = wp_ctz64(m)
        m &= m - 1
        offer(pick, ACT_PLAY + k, 200 + (0 if K_PURE[k] else 10))
    m = t.buys
    while m:
        k = wp_ctz64(m)
        m &= m - 1
        offer(pick, ACT_BUY + k, 100 + K_COST[k] * 3 + K_POINTS[k] * 2)
    gm = t.buy_gfs
    if gm:
        open_gfs = wp_popcount32(t.own & ~wp_anybit32(c.gf_flags, GF_COMPLETE))
        while gm:
            g = wp_ctz64(gm)
            gm &= gm - 1
            offer(pick, ACT_BUY_GF + g, (150 + G_REP[g] * 10) if open_gfs < 2 else -10)
    m = t.plant_kinds
    while m:
        k = wp_ctz64(m)
        m &= m - 1
        gm = t.plant_gfs[k]
        while gm:
            g = wp_ctz64(gm)
            gm &= gm - 1
            if pick.n < MAX_LEGAL:
                if (t.own >> g) & 1:
                    if K_POINTS[k] < 0:
                        offer(pick, ACT_PLANT + k * MAX_GF + g, -50)
                    else:
                        offer(pick, ACT_PLANT + k * MAX_GF + g,
                              300 + K_POINTS[k] + (30 if completes(c, g) else 0))
                else:
                    offer(pick, ACT_PLANT + k * MAX_GF + g, -50 if completes(c, g) else 280)


cdef inline int decision_actions(const WarCore* c, int32_t* out, bint canonical) noexcept nogil:
    cdef int top, n = 0
    cdef uint32_t pending
    if k_current_player(<const uint8_t*>c) < 0:
        return 0
    if c.depth > 0:
        top = c.depth - 1
        return choice_actions(c, E_OP[c.frame_effect[top]][c.frame_pc[top]], out, canonical)
    pending = pending_wc(c)
    if pending:
        # WG2: several When-Completed abilities wait (advance resolves a lone one by itself):
        # their owner picks which one resolves next. Not pruned: the orders differ.
        while pending:
            out[n] = ACT_RESOLVE_WC + wp_ctz64(pending)
            pending &= pending - 1
            n += 1
        return n
    return turn_actions(c, out, canonical)


cdef int k_legal_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    """Every rule-legal action (WT1: plays, purchases and plantings in any order)."""
    return decision_actions(<const WarCore*>buf, out, False)


cdef int policy_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    """The canonical subset the playout policy draws from (see the module docstring)."""
    return decision_actions(<const WarCore*>buf, out, True)


cdef int k_search_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    """The canonical subset in a world the search sampled, every legal action elsewhere (see
    the module docstring)."""
    return decision_actions(<const WarCore*>buf, out, (<const WarState*>buf).search_world != 0)


cdef int k_chance_outcomes(const uint8_t* buf, int32_t* out, double* weights) noexcept nogil:
    cdef const WarCore* c = <const WarCore*>buf
    cdef int n = 0, k, g, seat
    cdef int gf_weight[32]
    cdef uint32_t deck, kinds
    if c.stage == STAGE_OVER:
        return 0
    if c.first_player == EMPTY:
        for seat in range(c.players):          # WS7 [RES-RULE]: a random first player
            out[n] = ACT_FIRST + seat
            weights[n] = 1.0
            n += 1
        return n
    if c.gf_row_count < GF_ROW_SIZE and c.gf_deck_count > 0:
        # Weighted by GF kind (identical copies are one outcome), ascending kind ids.
        deck = wp_eq32(c.gf_loc, GF_DECK) & GF_MASK
        kinds = 0
        while deck:
            g = G_KIND[wp_ctz64(deck)]
            deck &= deck - 1
            if not (kinds >> g) & 1:
                kinds |= <uint32_t>1 << g
                gf_weight[g] = 0
            gf_weight[g] += 1
        while kinds:
            g = wp_ctz64(kinds)
            kinds &= kinds - 1
            out[n] = ACT_REFILL_GF + g
            weights[n] = gf_weight[g]
            n += 1
        return n
    if c.market_row_count < MARKET_SIZE and c.market_deck_count > 0:
        for k in range(N_KINDS):
            if c.market_deck[k]:
                out[n] = ACT_REFILL_MARKET + k
                weights[n] = c.market_deck[k]
                n += 1
        return n
    if c.basic_top == EMPTY and c.basic_count > 0:
        for k in range(N_KINDS):
            if c.basic_pile[k]:
                out[n] = ACT_REVEAL_BASIC + k
                weights[n] = c.basic_pile[k]
                n += 1
        return n
    if c.draws_pending:
        seat = c.draw_seat
        for k in range(N_KINDS):
            if c.draw[seat][k]:
                out[n] = ACT_DRAW + k
                weights[n] = c.draw[seat][k]
                n += 1
    return n


cdef inline int32_t sample_multiset(const uint8_t* counts, uint64_t m, int total, int32_t base,
                                    Rng* rng) noexcept nogil:
    """One kind of a per-kind multiset of `total` cards, weighted by its copies: exactly
    rng_weighted_index over chance_outcomes' list (ascending kinds, weight = copies), without
    writing the list. rng_weighted_index subtracts the weights from x = u * total one by one
    and stops below 0; while x stays >= 0 every subtraction of a small integer is exact, so it
    stops at the first kind whose running sum of copies exceeds x, which for an integer sum is
    the first that exceeds floor(x): integer compares give the same kind. `m` is the bit set of
    the kinds with copies."""
    cdef int k, below = <int>(rng_uniform(rng) * <double>total), running = 0
    while True:
        k = wp_ctz64(m)
        m &= m - 1
        if m == 0:
            return base + k                   # the last outcome takes what is left
        running += counts[k]
        if below < running:
            return base + k


cdef inline int32_t sample_gf_refill(const WarCore* c, Rng* rng) noexcept nogil:
    """A GF-row refill drawn as rng_weighted_index draws it from chance_outcomes' list (GF
    kinds ascending, weight = copies in the deck), by sample_multiset's integer compares."""
    cdef uint32_t deck = wp_eq32(c.gf_loc, GF_DECK) & GF_MASK, kinds = 0
    cdef uint8_t copies[32]
    cdef int g, below, running = 0
    while deck:
        g = G_KIND[wp_ctz64(deck)]
        deck &= deck - 1
        if not (kinds >> g) & 1:
            kinds |= <uint32_t>1 << g
            copies[g] = 0
        copies[g] += 1
    below = <int>(rng_uniform(rng) * <double>c.gf_deck_count)
    while True:
        g = wp_ctz64(kinds)
        kinds &= kinds - 1
        if kinds == 0:
            return ACT_REFILL_GF + g
        running += copies[g]
        if below < running:
            return ACT_REFILL_GF + g


cdef int32_t k_sample_chance(const uint8_t* buf, Rng* rng) noexcept nogil:
    """The chance fast path for playouts: the same outcome, for the same rng, as drawing from
    k_chance_outcomes by weight. Draws, refills and Basic reveals (every chance event but the
    first player's) skip the list."""
    cdef const WarCore* c = <const WarCore*>buf
    cdef int32_t actions[64]
    cdef double weights[64]
    cdef int n
    if c.first_player == EMPTY:
        n = k_chance_outcomes(buf, actions, weights)
        return actions[rng_weighted_index(n, weights, rng)]
    if c.gf_row_count < GF_ROW_SIZE and c.gf_deck_count > 0:
        return sample_gf_refill(c, rng)
    if c.market_row_count < MARKET_SIZE and c.market_deck_count > 0:
        return sample_multiset(c.market_deck, wp_nonzero64(c.market_deck) & KIND_MASK,
                               c.market_deck_count, ACT_REFILL_MARKET, rng)
    if c.basic_top == EMPTY and c.basic_count > 0:
        return sample_multiset(c.basic_pile, wp_nonzero64(c.basic_pile) & KIND_MASK, c.basic_count,
                               ACT_REVEAL_BASIC, rng)
    return sample_multiset(c.draw[c.draw_seat], cache_of(c).draw_kinds[c.draw_seat],
                           c.draw_count[c.draw_seat], ACT_DRAW, rng)


cdef int completed_reputation(const WarCore* c, int p) noexcept nogil:
    cdef int rep = 0
    cdef uint32_t m = wp_eq32(c.gf_loc, GF_OWNED + p) & wp_anybit32(c.gf_flags, GF_COMPLETE) & GF_MASK
    while m:
        rep += G_REP[wp_ctz64(m)]
        m &= m - 1
    return rep


cdef void end_turn(WarCore* c) noexcept nogil:
    """WE1, WT3, WZ1: discard, reset the counters, check the end, draw the new hand."""
    cdef int tp = c.turn_player
    move_all(c.play, c.discard[tp], &c.play_count, &c.discard_count[tp])
    move_all(c.hand[tp], c.discard[tp], &c.hand_count[tp], &c.discard_count[tp])
    cache_of(c).hand_kinds[tp] = 0
    c.coins = 0                 # WT3/WT14: unspent coins are lost
    c.buys = 1
    c.plants = 1
    c.last_pure = 0
    # WZ1 + A11: only the first trigger counts; every other player then gets one final turn.
    if c.end_trigger == EMPTY:
        if completed_reputation(c, tp) >= END_REPUTATION:
            c.end_trigger = tp
            c.final_turns_left = c.players - 1
    else:
        c.final_turns_left -= 1
    if c.end_trigger != EMPTY and c.final_turns_left == 0:
        c.stage = STAGE_OVER
        return
    # Safety end (documented in decisions-changed): the rules allow endless play (nobody ever
    # completing 7 Reputation), so an untriggered game ends after round ROUND_LIMIT.
    if c.end_trigger == EMPTY and (tp + 1) % c.players == c.first_player and c.round >= ROUND_LIMIT:
        c.stage = STAGE_OVER
        return
    c.draw_seat = tp            # WE2: draw 5 (chance, reshuffling when needed)
    c.draws_pending = HAND_SIZE
    c.turn_ending = 1


cdef void normalize_slots(WarCore* c, int g, int symbol) noexcept nogil:
    """Keep the filled slots of one symbol first (planting always fills the lowest free one)."""
    cdef int i, j
    for i in range(G_NSLOTS[g]):
        if G_SYM[g][i] != symbol or c.gf_slot[g][i]:
            continue
        for j in range(i + 1, G_NSLOTS[g]):
            if G_SYM[g][j] == symbol and c.gf_slot[g][j]:
                c.gf_slot[g][i] = c.gf_slot[g][j]
                c.gf_slot[g][j] = 0
                break


cdef void k_apply(uint8_t* buf, int32_t action) noexcept nogil:
    cdef WarCore* c = <WarCore*>buf
    cdef int tp = c.turn_player, k, g, h, i, seat, owner, slot, top
    cdef bint complete
    if <uint32_t>(action - ACT_DRAW) < <uint32_t>(ACT_REFILL_MARKET - ACT_DRAW):
        # WE2 / OP_DRAW: one card drawn (the most frequent event of a playout, so asked first).
        k = action - ACT_DRAW
        seat = c.draw_seat
        c.draw[seat][k] -= 1
        c.draw_count[seat] -= 1
        if c.draw[seat][k] == 0:
            cache_of(c).draw_kinds[seat] &= ~(<uint64_t>1 << k)
        hand_add(c, seat, k)
        c.draws_pending -= 1
        if c.draws_pending and c.draw_count[seat]:
            # The next card is drawn by chance again: advance would stop at once (no refill
            # was pending, or this event would have been one, and the pile has cards).
            return
        advance(c)
        return
    if action >= ACT_RESOLVE_WC:
        # WG2: the owner picked which pending When-Completed ability resolves now.
        g = action - ACT_RESOLVE_WC
        clear_wc_pending(c, g)
        push_frame(c, EFFECT_WC + g)
        advance(c)
        return
    if action >= ACT_DRAW:
        if action >= ACT_FIRST:
            c.first_player = action - ACT_FIRST
            c.turn_player = c.first_player
        elif action >= ACT_REVEAL_BASIC:
            k = action - ACT_REVEAL_BASIC
            c.basic_pile[k] -= 1
            c.basic_count -= 1
            c.basic_top = k
        elif action >= ACT_REFILL_GF:
            g = action - ACT_REFILL_GF         # a GF kind: the lowest-id copy in the deck
            for h in range(N_GF):
                if c.gf_loc[h] == GF_DECK and G_KIND[h] == g:
                    c.gf_loc[h] = GF_ROW
                    cache_of(c).row_gfs |= <uint32_t>1 << h
                    break
            c.gf_deck_count -= 1
            c.gf_row_count += 1
        else:
            k = action - ACT_REFILL_MARKET
            c.market_deck[k] -= 1
            c.market_deck_count -= 1
            c.market_row[k] += 1
            cache_of(c).market_kinds |= <uint64_t>1 << k
            c.market_row_count += 1
        advance(c)
        return
    top = c.depth - 1
    if action == ACT_END:
        end_turn(c)
        if c.stage == STAGE_OVER or c.draw_count[c.draw_seat]:
            # At rest: the game is over, or a refill or the new hand's first card is drawn
            # by chance (advance would stop at once; only an empty draw pile needs its WE2
            # reshuffle or "draw fewer" first).
            return
    elif action < ACT_BUY:
        # WP1/WP2: into the play area, then its text (a Flower's Cultivate ability).
        k = action - ACT_PLAY
        hand_remove(c, tp, k)
        c.play[k] += 1
        c.play_count += 1
        # The highest kind of the current run of coin-only plays (policy_actions' order): the
        # highest, not the last, so that a run played in any order gives the same state.
        if K_PURE[k]:
            if k + 1 > c.last_pure:
                c.last_pure = k + 1
            if c.depth == 0:
                # A coin-only text resolves here, all at once (the frame advance would push and
                # pop): it only adds to the turn's counters, so the turn player decides again
                # (no chance, choice or pending When-Completed ability can follow).
                c.coins = sat_add(c.coins, K_PLAY_COINS[k])
                if K_PLAY_BUYS[k] or K_PLAY_PLANTS[k]:
                    c.buys = sat_add(c.buys, K_PLAY_BUYS[k])
                    c.plants = sat_add(c.plants, K_PLAY_PLANTS[k])
                return
        else:
            c.last_pure = 0
        push_frame(c, 2 * k)
    elif action < ACT_BUY_GF:
        # WB1/WB2: pay, the card goes to the discard pile; WB3 refill follows by chance.
        k = action - ACT_BUY
        c.coins -= K_COST[k]
        c.buys -= 1
        if c.market_row[k]:
            c.market_row[k] -= 1
            if c.market_row[k] == 0:
                cache_of(c).market_kinds &= ~(<uint64_t>1 << k)
            c.market_row_count -= 1
        else:
            c.basic_top = EMPTY
        c.discard[tp][k] += 1
        c.discard_count[tp] += 1
        c.last_pure = 0
        return                  # at rest: the refill's chance node or the turn player's decision
    elif action < ACT_PLANT:
        # WB2: a bought GF goes face up into the play area for good.
        g = action - ACT_BUY_GF
        c.coins -= G_COST[g]
        c.buys -= 1
        c.gf_loc[g] = GF_OWNED + tp
        cache_of(c).row_gfs &= ~(<uint32_t>1 << g)
        cache_of(c).owned_gfs[tp] |= <uint32_t>1 << g
        c.gf_row_count -= 1
        c.last_pure = 0
        return                  # at rest: the refill's chance node or the turn player's decision
    elif action < ACT_COMPOST_HAND:
        # WPl1-WPl3: under the GF, then (WG1) lock if complete, then the Plant ability, then
        # the WC ability (now on the owner's turn, at the owner's next turn start otherwise).
        k = (action - ACT_PLANT) // MAX_GF
        g = (action - ACT_PLANT) % MAX_GF
        c.plants -= 1
        hand_remove(c, tp, k)
        slot = free_slot(c, g, K_SYMBOL[k])
        c.gf_slot[g][slot] = k + 1
        slots_changed(c, g)
        complete = True
        for i in range(G_NSLOTS[g]):
            if not c.gf_slot[g][i]:
                complete = False
        owner = c.gf_loc[g] - GF_OWNED
        if complete:
            c.gf_flags[g] |= GF_COMPLETE
            if owner == tp:
                push_frame(c, EFFECT_WC + g)
            else:
                set_wc_pending(c, g)
        push_frame(c, 2 * k + 1)
        c.last_pure = 0
    elif action == ACT_STOP:
        c.frame_left[top] = 0
        c.frame_pc[top] += 1
    else:
        # WK1: composted cards leave the game; A12 uprooting composts an unlocked Flower.
        if action < ACT_COMPOST_DISCARD:
            k = action - ACT_COMPOST_HAND
            hand_remove(c, tp, k)
        elif action < ACT_UPROOT:
            k = action - ACT_COMPOST_DISCARD
            c.discard[tp][k] -= 1
            c.discard_count[tp] -= 1
        else:
            g = (action - ACT_UPROOT) // 4
            slot = (action - ACT_UPROOT) % 4
            k = c.gf_slot[g][slot] - 1
            c.gf_slot[g][slot] = 0
            normalize_slots(c, g, G_SYM[g][slot])
            slots_changed(c, g)
        c.compost[k] += 1
        c.last_pure = 0
        c.frame_left[top] -= 1
        if c.frame_left[top] == 0:
            c.frame_pc[top] += 1
    advance(c)


cdef void seat_totals(const WarCore* c, int p, int* points, int* planted_all,
                      int* planted_locked) noexcept nogil:
    """WZ2 points of seat p and the WZ3 tie-break counts (A9)."""
    cdef int g, i, k, total = 0, planted = 0, locked = 0
    cdef uint32_t gm = wp_eq32(c.gf_loc, GF_OWNED + p) & GF_MASK
    cdef uint64_t km = EXPEDITION_MASK
    while gm:
        g = wp_ctz64(gm)
        gm &= gm - 1
        for i in range(G_NSLOTS[g]):
            if c.gf_slot[g][i]:
                planted += 1
        if c.gf_flags[g] & GF_COMPLETE:
            total += G_REP[g]                      # (c) Reputation of completed GFs
            for i in range(G_NSLOTS[g]):
                total += K_POINTS[c.gf_slot[g][i] - 1]   # (a) locked Flowers, poison included
                locked += 1
    while km:                                      # (b) Expeditions anywhere in the deck (A10)
        k = wp_ctz64(km)
        km &= km - 1
        total += K_EXP_POINTS[k] * (c.hand[p][k] + c.draw[p][k] + c.discard[p][k]
                                    + (c.play[k] if p == c.turn_player else 0))
    points[0] = total
    planted_all[0] = planted
    planted_locked[0] = locked


cdef void k_scores(const uint8_t* buf, double* out) noexcept nogil:
    cdef const WarCore* c = <const WarCore*>buf
    cdef int p, pts, a, b
    for p in range(c.players):
        seat_totals(c, p, &pts, &a, &b)
        out[p] = pts


cdef void k_returns(const uint8_t* buf, double* out) noexcept nogil:
    """WZ3: most points; tie: most planted Flowers (A9: under the seat's own GFs, locked or
    not; option locked_only counts locked ones); further tie: a shared win."""
    cdef const WarCore* c = <const WarCore*>buf
    cdef int pts[4]
    cdef int tie[4]
    cdef int p, a, b, best_pts = -100000, best_tie = -1, winners = 0
    for p in range(c.players):
        seat_totals(c, p, &pts[p], &a, &b)
        tie[p] = b if c.tiebreak_locked_only else a
        if pts[p] > best_pts:
            best_pts = pts[p]
    for p in range(c.players):
        if pts[p] == best_pts and tie[p] > best_tie:
            best_tie = tie[p]
    for p in range(c.players):
        if pts[p] == best_pts and tie[p] == best_tie:
            winners += 1
    for p in range(c.players):
        out[p] = 1.0 / winners if pts[p] == best_pts and tie[p] == best_tie else 0.0


cdef void k_determinize(uint8_t* buf, int observer, Rng* rng) noexcept nogil:
    """Deal every other seat's hand again from its hand + draw pile multiset (the part of its
    cards the observer cannot tell apart). Only that multiset, the hand size and the rng are
    read, never the hidden split, so the result is fair by construction."""
    cdef WarCore* c = <WarCore*>buf
    cdef uint8_t cards[1024]
    cdef int q, k, j, i, total, in_hand, tmp
    # The search calls this at the root of every iteration: from here on search_actions orders
    # coin-only runs, starting afresh (the run that led to the root is history: every play
    # stays open from the root).
    (<WarState*>buf).search_world = 1
    c.last_pure = 0
    for q in range(c.players):
        if q == observer:
            continue
        total = 0
        for k in range(N_KINDS):               # canonical order: ascending kind
            c.draw[q][k] += c.hand[q][k]
            c.hand[q][k] = 0
        in_hand = c.hand_count[q]
        for j in range(4):                     # the publicly known cards stay in the hand
            if c.known_hand[q][j]:
                k = c.known_hand[q][j] - 1
                c.draw[q][k] -= 1
                c.hand[q][k] += 1
                in_hand -= 1
        for k in range(N_KINDS):
            for j in range(c.draw[q][k]):
                if total < 1024:
                    cards[total] = k
                    total += 1
        for i in range(in_hand):               # partial Fisher-Yates: a uniform rest of the hand
            j = i + rng_below(rng, total - i)
            tmp = cards[i]
            cards[i] = cards[j]
            cards[j] = tmp
            c.hand[q][cards[i]] += 1
            c.draw[q][cards[i]] -= 1
        piles_changed(c, q)


# --- rollout policy -----------------------------------------------------------------------------
cdef int32_t k_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """A cheap playout policy, so that playouts look like games: plant whenever it helps
    (into an own GF, completing first; poison into an opponent's GF only where it does not
    complete it), play every card, buy the most expensive thing affordable (a GF while owning
    fewer than two incomplete ones), compost starters, uproot poison from own GFs, then end.
    One decision in ten is uniform, so playouts keep some variety. The draws: with two or more
    actions, rng_below(10) (0: uniform, rng_below(n)), else each action in ascending order adds
    rng_below(4) of noise to its score and the first best wins; a lone action draws
    rng_below(1). A turn decision is scored straight from its bit sets (turn_sets, no list):
    the first draw is the same whether the turn has one action or more, so it is drawn first,
    and the noise draws are kept only if the turn had two or more."""
    cdef const WarCore* c = <const WarCore*>buf
    cdef PolicyPick pick
    # Only ever asked at a decision (the search, KernelState.rollout_action and policy_action
    # check): inside an "up to n" choice, or a turn decision.
    if c.depth > 0:
        return choice_rollout_action(c, buf, rng)
    if pending_wc(c):                            # the order of pending WCs: at random
        return uniform_policy_action(buf, rng)
    if rng_below(rng, 10) == 0:                  # rng_below(10), or a lone action's rng_below(1)
        return uniform_turn_action(c, rng)
    # The noise draws on a local copy of the generator, written back once: the build does not
    # assume strict aliasing, so through the pointer every draw would store and reload its state.
    pick.noise = rng[0]
    pick.best_value = -100000
    pick.best = ACT_END
    pick.n = 0
    pick_turn_action(c, &pick)
    if pick.n > 1:
        rng[0] = pick.noise
    return pick.best


cdef int32_t uniform_policy_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """A uniform pick of the canonical subset (kept out of k_rollout_action: its list is large)."""
    cdef int32_t acts[MAX_LEGAL]
    cdef int n = policy_actions(buf, acts)
    return acts[rng_below(rng, n)]


cdef int32_t uniform_turn_action(const WarCore* c, Rng* rng) noexcept nogil:
    """The playout policy's uniform turn decision, after its rng_below(10) drew 0: that draw
    stands for a lone action's rng_below(1) (the same move of the generator), so a lone END
    draws nothing more."""
    cdef int32_t acts[MAX_LEGAL]
    cdef int n = turn_actions(c, acts, True)
    if n <= 1:
        return acts[0]
    return acts[rng_below(rng, n)]


cdef int32_t choice_rollout_action(const WarCore* c, const uint8_t* buf, Rng* rng) noexcept nogil:
    """The playout policy inside an "up to n" choice: compost starters, uproot poison from own
    GFs (others' good Flowers), else stop."""
    cdef int32_t acts[MAX_LEGAL]
    cdef int n = policy_actions(buf, acts)
    cdef int i, a, k, g, best = -1, best_value = -100000, value, tp = c.turn_player
    if n <= 1 or rng_below(rng, 10) == 0:
        return acts[rng_below(rng, n)]
    for i in range(n):
        a = acts[i]
        value = -1
        if ACT_COMPOST_HAND <= a < ACT_UPROOT:
            k = (a - ACT_COMPOST_HAND) % MAX_KINDS
            if K_CATEGORY[k] == CAT_STARTING and K_SYMBOL[k] != EMPTY:
                value = 1
        elif ACT_UPROOT <= a < ACT_STOP:
            g = (a - ACT_UPROOT) // 4
            k = c.gf_slot[g][(a - ACT_UPROOT) % 4] - 1
            if c.gf_loc[g] == GF_OWNED + tp:
                value = 1 if K_POINTS[k] < 0 else -1
            else:
                value = K_POINTS[k]
        elif a == ACT_STOP:
            value = 0
        if value > best_value:
            best_value = value
            best = a
    return best


include "features.pxi"  # value-model features
include "hortus/_ext/playout.pxi"  # k_playout: the fused playout loop

cdef GameKernel KERNEL
KERNEL.state_bytes = sizeof(WarState)
KERNEL.core_bytes = sizeof(WarCore)
KERNEL.num_distinct_actions = NUM_ACTIONS
KERNEL.max_players = MAX_SEATS
KERNEL.max_legal_actions = MAX_LEGAL
KERNEL.max_game_length = 200000
KERNEL.num_players = k_num_players
KERNEL.current_player = k_current_player
KERNEL.legal_actions = k_legal_actions
KERNEL.chance_outcomes = k_chance_outcomes
KERNEL.apply = k_apply
KERNEL.returns = k_returns
KERNEL.scores = k_scores
KERNEL.determinize = k_determinize
KERNEL.rollout_action = k_rollout_action
KERNEL.rebuild = k_rebuild
KERNEL.sample_chance = k_sample_chance
KERNEL.playout = k_playout
KERNEL.search_actions = k_search_actions
KERNEL.num_features = FEATURE_COUNT
KERNEL.features = k_features


def kernel_capsule():
    if not LOADED:
        raise RuntimeError("war_of_the_posies components are not loaded")
    return kernel_to_capsule(&KERNEL)


def core_size():
    return sizeof(WarCore)


# --- Python views of the core (whole structs are copied; no pointer ever escapes) -------------
_SCALARS = ("players", "stage", "first_player", "turn_player", "round", "end_trigger",
            "final_turns_left", "tiebreak_locked_only", "coins", "buys", "plants", "last_pure",
            "draw_seat", "draws_pending", "turn_ending", "basic_top", "depth", "play_count",
            "market_row_count", "market_deck_count", "basic_count", "gf_row_count",
            "gf_deck_count")


def core_to_dict(const uint8_t[::1] data):
    """The core fields of serialized core bytes as a dict of ints and lists of ints."""
    if data.shape[0] != sizeof(WarCore):
        raise ValueError("wrong core size")
    cdef WarCore c
    memcpy(&c, &data[0], sizeof(WarCore))
    cdef uint8_t* raw = <uint8_t*>&c
    return {
        "players": c.players, "stage": c.stage, "first_player": c.first_player,
        "turn_player": c.turn_player, "round": c.round, "end_trigger": c.end_trigger,
        "final_turns_left": c.final_turns_left, "tiebreak_locked_only": c.tiebreak_locked_only,
        "coins": c.coins, "buys": c.buys, "plants": c.plants, "last_pure": c.last_pure,
        "draw_seat": c.draw_seat, "draws_pending": c.draws_pending, "turn_ending": c.turn_ending,
        "basic_top": c.basic_top, "depth": c.depth,
        "frame_effect": [c.frame_effect[i] for i in range(3)],
        "frame_pc": [c.frame_pc[i] for i in range(3)],
        "frame_left": [c.frame_left[i] for i in range(3)],
        "hand_count": [c.hand_count[i] for i in range(4)],
        "draw_count": [c.draw_count[i] for i in range(4)],
        "discard_count": [c.discard_count[i] for i in range(4)],
        "play_count": c.play_count, "market_row_count": c.market_row_count,
        "market_deck_count": c.market_deck_count, "basic_count": c.basic_count,
        "gf_row_count": c.gf_row_count, "gf_deck_count": c.gf_deck_count,
        "hand": [list(c.hand[p][:MAX_KINDS]) for p in range(4)],
        "draw": [list(c.draw[p][:MAX_KINDS]) for p in range(4)],
        "discard": [list(c.discard[p][:MAX_KINDS]) for p in range(4)],
        "play": list(c.play[:MAX_KINDS]),
        "market_row": list(c.market_row[:MAX_KINDS]),
        "market_deck": list(c.market_deck[:MAX_KINDS]),
        "basic_pile": list(c.basic_pile[:MAX_KINDS]),
        "compost": list(c.compost[:MAX_KINDS]),
        "gf_loc": list(c.gf_loc[:MAX_GF]),
        "gf_slot": [list(c.gf_slot[g][:MAX_SLOTS]) for g in range(MAX_GF)],
        "gf_flags": list(c.gf_flags[:MAX_GF]),
        "known_hand": [list(c.known_hand[p][:4]) for p in range(4)],
        # Aggregates for the validator (plain sums over the fields above, computed here only
        # because a C loop is 20x faster than Python's): copies per kind over every pile
        # (planted Flowers and the Basic top excluded), and the size of every pile.
        "pile_totals": pile_totals(&c),
        "sizes": {
            "hand": [_size(c.hand[p]) for p in range(4)],
            "draw": [_size(c.draw[p]) for p in range(4)],
            "discard": [_size(c.discard[p]) for p in range(4)],
            "play": _size(c.play), "market_row": _size(c.market_row),
            "market_deck": _size(c.market_deck), "basic_pile": _size(c.basic_pile),
        },
    }


cdef int _size(const uint8_t* counts) noexcept:
    cdef int k, n = 0
    for k in range(MAX_KINDS):
        n += counts[k]
    return n


cdef list pile_totals(const WarCore* c):
    cdef int k, p, n
    out = []
    for k in range(MAX_KINDS):
        n = c.play[k] + c.market_row[k] + c.market_deck[k] + c.basic_pile[k] + c.compost[k]
        for p in range(4):
            n += c.hand[p][k] + c.draw[p][k] + c.discard[p][k]
        out.append(n)
    return out


def dict_to_core(dict d):
    """Serialized core bytes from a dict shaped like core_to_dict's. Values are range-checked
    by the caller (an out-of-range value raises OverflowError here). Totals (hand_count...)
    are recomputed from the per-kind arrays when absent."""
    cdef WarCore c
    cdef int p, k, g, i
    memset(&c, 0, sizeof(WarCore))
    c.players = d["players"]; c.stage = d["stage"]; c.first_player = d["first_player"]
    c.turn_player = d["turn_player"]; c.round = d["round"]; c.end_trigger = d["end_trigger"]
    c.final_turns_left = d["final_turns_left"]; c.tiebreak_locked_only = d["tiebreak_locked_only"]
    c.coins = d["coins"]; c.buys = d["buys"]; c.plants = d["plants"]; c.last_pure = d["last_pure"]
    c.draw_seat = d["draw_seat"]; c.draws_pending = d["draws_pending"]
    c.turn_ending = d["turn_ending"]; c.basic_top = d["basic_top"]; c.depth = d["depth"]
    for i in range(3):
        c.frame_effect[i] = d["frame_effect"][i]
        c.frame_pc[i] = d["frame_pc"][i]
        c.frame_left[i] = d["frame_left"][i]
    for p in range(4):
        for k in range(MAX_KINDS):
            c.hand[p][k] = d["hand"][p][k]
            c.draw[p][k] = d["draw"][p][k]
            c.discard[p][k] = d["discard"][p][k]
        c.hand_count[p] = d["hand_count"][p] if "hand_count" in d else sum(d["hand"][p])
        c.draw_count[p] = d["draw_count"][p] if "draw_count" in d else sum(d["draw"][p])
        c.discard_count[p] = d["discard_count"][p] if "discard_count" in d else sum(d["discard"][p])
    for k in range(MAX_KINDS):
        c.play[k] = d["play"][k]
        c.market_row[k] = d["market_row"][k]
        c.market_deck[k] = d["market_deck"][k]
        c.basic_pile[k] = d["basic_pile"][k]
        c.compost[k] = d["compost"][k]
    for p in range(4):
        for i in range(4):
            c.known_hand[p][i] = d["known_hand"][p][i] if "known_hand" in d else 0
    for g in range(MAX_GF):
        c.gf_loc[g] = d["gf_loc"][g]
        c.gf_flags[g] = d["gf_flags"][g]
        for i in range(MAX_SLOTS):
            c.gf_slot[g][i] = d["gf_slot"][g][i]
    c.play_count = d.get("play_count", sum(d["play"]))
    c.market_row_count = d.get("market_row_count", sum(d["market_row"]))
    c.market_deck_count = d.get("market_deck_count", sum(d["market_deck"]))
    c.basic_count = d.get("basic_count", sum(d["basic_pile"]))
    c.gf_row_count = d.get("gf_row_count", sum(1 for x in d["gf_loc"] if x == GF_ROW))
    c.gf_deck_count = d.get("gf_deck_count", sum(1 for x in d["gf_loc"] if x == GF_DECK))
    return (<char*>&c)[:sizeof(WarCore)]


def at_rest(const uint8_t[::1] data):
    """For the validator, once every field is in range: True if no forced step is pending
    (advance would change nothing), i.e. the state waits for a decision, a chance outcome or
    is over. Positions are only ever stored at rest."""
    cdef WarState after
    if data.shape[0] != sizeof(WarCore):
        raise ValueError("wrong core size")
    memset(&after, 0, sizeof(WarState))
    memcpy(&after.core, &data[0], sizeof(WarCore))
    k_rebuild(<uint8_t*>&after)
    advance(&after.core)
    return memcmp(&data[0], &after.core, sizeof(WarCore)) == 0


def action_info(const uint8_t[::1] data, int action):
    """(type, kind, gf, seat) of an action, for notation: type is one of 'end', 'play', 'buy',
    'buy_gf', 'plant', 'compost_hand', 'compost_discard', 'uproot', 'stop', 'draw',
    'refill_market', 'refill_gf', 'reveal_basic', 'first', 'resolve_wc'; kind/gf/seat are -1
    when unused.
    The seat is the one the action concerns (drawing seat, GF owner, first player)."""
    cdef const WarCore* c
    cdef int g, slot
    if data.shape[0] != sizeof(WarCore):
        raise ValueError("wrong core size")
    c = <const WarCore*>&data[0]
    if action == ACT_END:
        return ("end", -1, -1, -1)
    if action < ACT_BUY:
        return ("play", action - ACT_PLAY, -1, -1)
    if action < ACT_BUY_GF:
        return ("buy", action - ACT_BUY, -1, -1)
    if action < ACT_PLANT:
        return ("buy_gf", -1, action - ACT_BUY_GF, -1)
    if action < ACT_COMPOST_HAND:
        g = (action - ACT_PLANT) % MAX_GF
        return ("plant", (action - ACT_PLANT) // MAX_GF, g, c.gf_loc[g] - GF_OWNED)
    if action < ACT_COMPOST_DISCARD:
        return ("compost_hand", action - ACT_COMPOST_HAND, -1, -1)
    if action < ACT_UPROOT:
        return ("compost_discard", action - ACT_COMPOST_DISCARD, -1, -1)
    if action < ACT_STOP:
        g = (action - ACT_UPROOT) // 4
        slot = (action - ACT_UPROOT) % 4
        return ("uproot", c.gf_slot[g][slot] - 1, g, c.gf_loc[g] - GF_OWNED)
    if action == ACT_STOP:
        return ("stop", -1, -1, -1)
    if action < ACT_REFILL_MARKET:
        return ("draw", action - ACT_DRAW, -1, c.draw_seat)
    if action < ACT_REFILL_GF:
        return ("refill_market", action - ACT_REFILL_MARKET, -1, -1)
    if action < ACT_REVEAL_BASIC:
        return ("refill_gf", -1, action - ACT_REFILL_GF, -1)
    if action < ACT_FIRST:
        return ("reveal_basic", action - ACT_REVEAL_BASIC, -1, -1)
    if action < ACT_RESOLVE_WC:
        return ("first", -1, -1, action - ACT_FIRST)
    g = action - ACT_RESOLVE_WC
    return ("resolve_wc", -1, g, c.gf_loc[g] - GF_OWNED)


def seat_summary(const uint8_t[::1] data):
    """Per seat: (points, planted Flowers under own GFs, locked ones, completed Reputation)."""
    cdef const WarCore* c
    cdef int p, pts, a, b
    if data.shape[0] != sizeof(WarCore):
        raise ValueError("wrong core size")
    c = <const WarCore*>&data[0]
    out = []
    for p in range(c.players):
        seat_totals(c, p, &pts, &a, &b)
        out.append((pts, a, b, completed_reputation(c, p)))
    return out


ACTION_BASES = {
    "end": ACT_END, "play": ACT_PLAY, "buy": ACT_BUY, "buy_gf": ACT_BUY_GF, "plant": ACT_PLANT,
    "compost_hand": ACT_COMPOST_HAND, "compost_discard": ACT_COMPOST_DISCARD,
    "uproot": ACT_UPROOT, "stop": ACT_STOP, "draw": ACT_DRAW,
    "refill_market": ACT_REFILL_MARKET, "refill_gf": ACT_REFILL_GF,
    "reveal_basic": ACT_REVEAL_BASIC, "first": ACT_FIRST, "num_actions": NUM_ACTIONS,
}
LIMITS = {"max_kinds": MAX_KINDS, "max_gf": MAX_GF, "max_slots": MAX_SLOTS,
          "max_prims": MAX_PRIMS, "max_depth": MAX_DEPTH, "hand_size": HAND_SIZE,
          "market_size": MARKET_SIZE, "gf_row_size": GF_ROW_SIZE, "round_limit": ROUND_LIMIT,
          "effect_wc": EFFECT_WC, "n_effects": N_EFFECTS}


def policy_action(const uint8_t[::1] data, uint64_t seed):
    """The playout policy's choice in a decision state (for tests and tools). The core must be
    a validated position where a seat is to decide."""
    cdef WarState st
    cdef Rng rng
    if data.shape[0] != sizeof(WarCore):
        raise ValueError("wrong core size")
    memset(&st, 0, sizeof(WarState))
    memcpy(&st.core, &data[0], sizeof(WarCore))
    k_rebuild(<uint8_t*>&st)
    if k_current_player(<uint8_t*>&st) < 0:
        raise ValueError("not a decision")
    rng_seed(&rng, seed)
    return k_rollout_action(<uint8_t*>&st, &rng)
