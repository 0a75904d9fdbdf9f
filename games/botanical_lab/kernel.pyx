# cython: language_level=3
"""Botanical Lab rules over a flat LabState buffer: the GameKernel of botanical_lab.

Section names follow botanical_lab.decisions.md (LS setup, LT turn, LD development, LP
cultivation, LO observation, LX plant death, LY documentation, LE end, A# resolutions). Card,
plant and room data come from components.toml, copied into the static tables below by
``load_components``.

legal_actions lists every rule-legal decision, in any order a player may make them;
search_actions is the canonical subset the search and playouts expand (equivalent orders of
commuting moves pruned), with its order memory kept after the serialized core (LabState) so
that every order of the same moves encodes the same position; rollout_action draws from a
list with dominated moves pruned as well (the legal list before every rule-legal order was legal).

Action ids (dense, < NUM_ACTIONS):
  END          0                      end the current phase (1, 2 or 3)
  EXPERIMENT   1 + kind               LD1 play an experiment card
  SKILL       21 + kind               LT2 play a skill card (Phases 1-2)
  ACQUIRE     41 + kind               LD2-LD4 acquire a card from the stock
  MOVE        61 + kind * 3 + room    LP1 spend one card of `kind` to move to `room`
  SEED       121 + kind * 48 + space  LP2 prepare `space` with a seed of `kind`
  FERTILIZE 1081 + kind               LP3 grow every matching plant of the room
  SPROUT    1101 + breed - 1          A7 the pending prepared space sprouts as `breed`
  NO_SPROUT 1106                      A8 it stays prepared (only when the stock runs short)
  OBSERVE   1107 + space              LO1 remove an own flower
  START     1155 + seat               chance: the start player (LS5)
  DRAW      1159 + kind               chance: a card of `kind` from the draw pile

The decisions file (6.1) proposed a u16 bit-field id (type|kind|space|breed); the contract wants
dense ids below num_distinct_actions (the search keeps per-action arrays of that size), so the
same fields are packed densely here: 1179 ids.
"""
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t
from libc.string cimport memset, memcpy

from hortus._ext.kernel cimport GameKernel, CHANCE, TERMINAL, kernel_to_capsule
from hortus._ext.rng cimport Rng, rng_below, rng_uniform
from hortus._ext.bits cimport pop_few
from hortus.games.botanical_lab.kernel cimport *

cdef enum:
    ACT_END = 0
    ACT_EXPERIMENT = 1
    ACT_SKILL = 21
    ACT_ACQUIRE = 41
    ACT_MOVE = 61
    ACT_SEED = 121
    ACT_FERTILIZE = 1081
    ACT_SPROUT = 1101
    ACT_NO_SPROUT = 1106
    ACT_OBSERVE = 1107
    ACT_START = 1155
    ACT_DRAW = 1159
    NUM_ACTIONS = 1179
    LIST_LEGAL = 0          # stage_actions: every rule-legal decision (legal_actions)
    LIST_SEARCH = 1         #   the search's canonical subset: equivalent orders pruned (search_actions)
    LIST_POLICY = 2         #   the playout policy's list: also dominated moves pruned (rollout_action)
    MAX_LEGAL = 1024
    NO_COST = 255
    SKILL_NONE = 0
    SKILL_DRAW = 1
    SKILL_REVEAL_TAKE = 2
    MODE_TO_HAND = 0

# --- static component tables (filled once by load_components) ------------------------------
cdef int N_KINDS = 0
cdef uint8_t K_TYPE[MAX_KINDS]
cdef uint8_t K_BREEDS[MAX_KINDS]       # breed mask, bit b-1
cdef uint8_t K_COST[MAX_KINDS]         # NO_COST: never acquirable
cdef uint8_t K_EXPERIMENTS[MAX_KINDS]
cdef uint8_t K_STOCK[MAX_KINDS]
cdef uint8_t K_STARTER[MAX_KINDS]
cdef uint8_t K_SKILL_OP[MAX_KINDS]
cdef uint8_t K_SKILL_COUNT[MAX_KINDS]
cdef uint8_t K_SKILL_TYPE[MAX_KINDS]
cdef int FIRST_EXPERIMENT_KIND = -1    # LP1 fuel: the lowest kind with no use in Phase 2
cdef uint8_t B_PLANTS[N_BREEDS]
cdef uint8_t B_VP[N_BREEDS]
cdef uint8_t B_TRACK[N_BREEDS]
cdef int N_SPACES = 0
cdef uint8_t ROOM_FIRST[N_ROOMS]
cdef uint8_t ROOM_SIZE[N_ROOMS]
cdef uint8_t S_ROOM[MAX_SPACES]
cdef uint8_t S_BREEDS[MAX_SPACES]      # breed mask the space accepts
cdef uint8_t S_NEIGHBOUR[MAX_SPACES][4]  # orthogonal neighbours in the same room, NO_SPACE at edges
cdef int HAND_SIZE = 5
cdef int END_VP = 35
cdef int MARKERS = 10
cdef uint8_t TIER_CARDS[256]           # LD2: acquisitions allowed by an experiment total (capped 255)
cdef int ADJACENCY[17]                 # LO3: bonus by group size; the last entry covers larger groups
cdef int N_ADJACENCY = 0
cdef int SEED_SET[N_BREEDS + 1]        # LE2: value of a set by its number of distinct breeds
cdef bint LOADED = False
# Derived from the tables above by load_components, for the hot paths, which work on bit sets of
# kinds (bit k) and of in-room spaces (bit s - ROOM_FIRST[room]) instead of scanning arrays.
cdef bint LITTLE_ENDIAN = False         # zone helpers read eight counts per word when true
cdef uint32_t KIND_MASK = 0             # every kind
cdef uint64_t KIND_BYTES[MAX_KINDS]     # per word of a zone, the bytes of existing kinds
cdef uint64_t KIND_BYTES_LAST = 0       #   and of the last, overlapping word: its new bytes only
cdef uint32_t SEED_MASK = 0             # the kinds of each card type
cdef uint32_t FERT_MASK = 0
cdef uint32_t EXP_MASK = 0
cdef uint32_t SKILL_MASK = 0
cdef int N_EXP_KINDS = 0
cdef uint8_t EXP_KINDS[MAX_KINDS]       # the experiment kinds, ascending (LD1 total)
cdef uint32_t COST_AT_MOST[256]         # LD3: acquirable kinds costing at most the index
cdef uint32_t SEED_SPACES[MAX_KINDS][N_ROOMS]  # LP2: spaces of a room a seed of the kind fits
cdef uint32_t ROOM_BITS[N_ROOMS]        # the in-room bits of each room's spaces
cdef uint64_t SPACE_BITS = 0            # bit s: space s exists (s < N_SPACES)
cdef uint32_t NEIGHBOUR_BITS[MAX_SPACES]  # in-room bits of S_NEIGHBOUR[s]
cdef uint8_t BEST_VP[1 << N_BREEDS]     # [breed mask]: the dearest B_VP among its breeds (0 if none)


def load_components(list cards, list breeds, list rooms, int hand_size, int end_vp, int markers,
                    list tiers, list adjacency, list seed_sets):
    """Fill the static tables (called once at import by components.install, after the data file
    was validated)."""
    global N_KINDS, N_SPACES, HAND_SIZE, END_VP, MARKERS, N_ADJACENCY, LOADED, FIRST_EXPERIMENT_KIND
    cdef int k, b, r, i, row, col, rows, cols, sid
    N_KINDS = len(cards)
    FIRST_EXPERIMENT_KIND = -1
    for k in range(N_KINDS):
        card = cards[k]
        K_TYPE[k] = card["type"]
        K_BREEDS[k] = card["breeds"]
        K_COST[k] = card["cost"]
        K_EXPERIMENTS[k] = card["experiments"]
        K_STOCK[k] = card["stock"]
        K_STARTER[k] = card["starter"]
        K_SKILL_OP[k] = card["skill_op"]
        K_SKILL_COUNT[k] = card["skill_count"]
        K_SKILL_TYPE[k] = card["skill_type"]
        if K_TYPE[k] == TYPE_EXPERIMENT and FIRST_EXPERIMENT_KIND < 0:
            FIRST_EXPERIMENT_KIND = k
    for b in range(N_BREEDS):
        B_PLANTS[b] = breeds[b]["plants"]
        B_VP[b] = breeds[b]["vp"]
        B_TRACK[b] = breeds[b]["track"]
    sid = 0
    for r in range(N_ROOMS):
        rows = rooms[r]["rows"]
        cols = rooms[r]["cols"]
        ROOM_FIRST[r] = sid
        ROOM_SIZE[r] = rows * cols
        for i in range(rows * cols):
            row = i // cols
            col = i % cols
            S_ROOM[sid + i] = r
            S_BREEDS[sid + i] = rooms[r]["spaces"][i]
            S_NEIGHBOUR[sid + i][0] = sid + i - cols if row > 0 else NO_SPACE
            S_NEIGHBOUR[sid + i][1] = sid + i + 1 if col < cols - 1 else NO_SPACE
            S_NEIGHBOUR[sid + i][2] = sid + i + cols if row < rows - 1 else NO_SPACE
            S_NEIGHBOUR[sid + i][3] = sid + i - 1 if col > 0 else NO_SPACE
        sid += rows * cols
    N_SPACES = sid
    global SPACE_BITS
    for r in range(N_ROOMS):
        ROOM_BITS[r] = (<uint32_t>1 << ROOM_SIZE[r]) - 1
        for i in range(ROOM_SIZE[r]):
            NEIGHBOUR_BITS[ROOM_FIRST[r] + i] = 0
            for b in range(4):
                if S_NEIGHBOUR[ROOM_FIRST[r] + i][b] != NO_SPACE:
                    NEIGHBOUR_BITS[ROOM_FIRST[r] + i] |= <uint32_t>1 << (S_NEIGHBOUR[ROOM_FIRST[r] + i][b] - ROOM_FIRST[r])
    for i in range(1 << N_BREEDS):
        BEST_VP[i] = 0
        for b in range(N_BREEDS):
            if (i >> b) & 1 and B_VP[b] > BEST_VP[i]:
                BEST_VP[i] = B_VP[b]
    SPACE_BITS = (<uint64_t>1 << N_SPACES) - 1 if N_SPACES < 64 else ~(<uint64_t>0)
    HAND_SIZE = hand_size
    END_VP = end_vp
    MARKERS = markers
    for i in range(256):
        TIER_CARDS[i] = tiers[i]
    N_ADJACENCY = len(adjacency)
    for i in range(N_ADJACENCY):
        ADJACENCY[i] = adjacency[i]
    for i in range(N_BREEDS + 1):
        SEED_SET[i] = seed_sets[i]
    global N_EXP_KINDS, KIND_MASK, KIND_BYTES_LAST, LITTLE_ENDIAN, SEED_MASK, FERT_MASK, EXP_MASK, SKILL_MASK
    N_EXP_KINDS = 0
    SEED_MASK = FERT_MASK = EXP_MASK = SKILL_MASK = 0
    KIND_MASK = (<uint32_t>1 << N_KINDS) - 1
    for i in range((MAX_KINDS + 7) // 8):
        KIND_BYTES[i] = 0
        for b in range(8):
            if i * 8 + b < N_KINDS:
                KIND_BYTES[i] |= (<uint64_t>0xFF) << (8 * b)
    KIND_BYTES_LAST = 0
    for b in range(8):
        k = MAX_KINDS - 8 + b
        if k < N_KINDS and k >= ((MAX_KINDS - 1) // 8) * 8:
            KIND_BYTES_LAST |= (<uint64_t>0xFF) << (8 * b)
    for i in range(256):
        COST_AT_MOST[i] = 0
        for k in range(N_KINDS):
            if K_COST[k] != NO_COST and K_COST[k] <= i:
                COST_AT_MOST[i] |= <uint32_t>1 << k
    cdef uint64_t probe = 1
    LITTLE_ENDIAN = (<uint8_t*>&probe)[0] == 1
    for k in range(N_KINDS):
        if K_TYPE[k] == TYPE_SEED:
            SEED_MASK |= <uint32_t>1 << k
        elif K_TYPE[k] == TYPE_FERTILIZER:
            FERT_MASK |= <uint32_t>1 << k
        elif K_TYPE[k] == TYPE_EXPERIMENT:
            EXP_MASK |= <uint32_t>1 << k
            EXP_KINDS[N_EXP_KINDS] = k
            N_EXP_KINDS += 1
        else:
            SKILL_MASK |= <uint32_t>1 << k
        for r in range(N_ROOMS):
            SEED_SPACES[k][r] = 0
            for i in range(ROOM_SIZE[r]):
                if S_BREEDS[ROOM_FIRST[r] + i] & K_BREEDS[k]:
                    SEED_SPACES[k][r] |= <uint32_t>1 << i
    LOADED = True


# --- small helpers ----------------------------------------------------------------------------
cdef extern from *:
    int __builtin_ctz(unsigned int x) nogil
    int __builtin_ctzll(unsigned long long x) nogil

# Byte compares over 16 consecutive space bytes (a room has at most 16 spaces; MAX_SPACES is a
# multiple of 16, so a load from a room's first space or from 0, 16, 32 stays inside the array it
# starts in or the space array after it): the rules loop over the few matching spaces only.
# SSE2 on every x86-64, a plain loop elsewhere; both give the same masks.
cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    static inline uint32_t lab_eq16(const uint8_t* p, uint8_t v) {
        return (uint32_t)(uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)p), _mm_set1_epi8((char)v)));
    }
    #else
    static inline uint32_t lab_eq16(const uint8_t* p, uint8_t v) {
        uint32_t m = 0; int i;
        for (i = 0; i < 16; i++) m |= (uint32_t)(p[i] == v) << i;
        return m;
    }
    #endif
    """
    uint32_t lab_eq16(const uint8_t* p, uint8_t v) noexcept nogil   # bit i: p[i] == v (16 bytes)


cdef inline uint32_t room_status(const LabCore* c, int room, int status) noexcept nogil:
    """The in-room bits of a room's spaces with space_status `status`."""
    return lab_eq16(c.space_status + ROOM_FIRST[room], status) & ROOM_BITS[room]


cdef inline uint32_t room_owned(const LabCore* c, int room, int p) noexcept nogil:
    """The in-room bits of a room's spaces whose marker is p's (space_owner; meaningful only
    where a marker or flower is)."""
    return lab_eq16(c.space_owner + ROOM_FIRST[room], p) & ROOM_BITS[room]


cdef inline uint64_t spaces_with(const LabCore* c, int status, int p) noexcept nogil:
    """Bit s: space s (of every room) has `status` and p's marker."""
    cdef uint64_t m = 0
    cdef int i
    for i in range(0, MAX_SPACES, 16):
        m |= <uint64_t>(lab_eq16(c.space_status + i, status) & lab_eq16(c.space_owner + i, p)) << i
    return m & SPACE_BITS


cdef inline int lowest_bit(uint32_t x) noexcept nogil:
    """The index of the lowest set bit (x != 0)."""
    return __builtin_ctz(x)


cdef inline int append_bits(int32_t* out, int n, uint32_t m, int32_t base) noexcept nogil:
    """Writes base + i for every set bit i of m, ascending, from out[n]; returns the new n."""
    while m:
        out[n] = base + lowest_bit(m)
        n += 1
        m &= m - 1
    return n


cdef inline uint32_t nonzero_bytes(uint64_t w) noexcept nogil:
    """Bit i set iff byte i (in memory order, on a little-endian machine) of w is not zero."""
    w = (((w & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL) | w) & 0x8080808080808080ULL
    return <uint32_t>(((w >> 7) * 0x0102040810204080ULL) >> 56)


cdef inline uint32_t kinds_in(const uint8_t* zone) noexcept nogil:
    """The kinds (bits) a zone of MAX_KINDS counts holds at least one card of: eight counts at
    a time on a little-endian machine (the last load overlaps the previous one; counts past
    N_KINDS, always zero, are masked off all the same)."""
    cdef int k
    cdef uint32_t m = 0
    cdef uint64_t w
    if LITTLE_ENDIAN:
        for k in range(0, MAX_KINDS - 8, 8):
            memcpy(&w, zone + k, 8)
            m |= nonzero_bytes(w) << k
        memcpy(&w, zone + MAX_KINDS - 8, 8)
        m |= nonzero_bytes(w) << (MAX_KINDS - 8)
        return m & KIND_MASK
    for k in range(N_KINDS):
        if zone[k]:
            m |= <uint32_t>1 << k
    return m


cdef inline int vp_of(const LabCore* c, int p) noexcept nogil:
    return c.vp_low[p] | (c.vp_high[p] << 8)


cdef inline void add_vp(LabCore* c, int p, int points) noexcept nogil:
    cdef int v = vp_of(c, p) + points
    if v > 65535:
        v = 65535   # A18: unbounded in the rules; 65535 is far beyond any reachable total
    c.vp_low[p] = v & 0xFF
    c.vp_high[p] = v >> 8


# --- derived cache (LabState after the core): every kernel entry point gets a whole LabState
# buffer, so the core pointer the rules work on also heads its cache --------------------------
cdef inline LabState* cache_of(LabCore* c) noexcept nogil:
    return <LabState*>c


cdef inline const LabState* cached(const LabCore* c) noexcept nogil:
    return <const LabState*>c


cdef inline void hand_take(LabCore* c, int p, int k) noexcept nogil:
    """One card of kind k leaves p's hand (played or spent, face up): one known copy fewer."""
    c.hand[p][k] -= 1
    if c.known[p][k]:
        c.known[p][k] -= 1
    if c.hand[p][k] == 0:
        cache_of(c).held[p] &= ~(<uint32_t>1 << k)


cdef inline void hand_put(LabCore* c, int p, int k) noexcept nogil:
    c.hand[p][k] += 1
    cache_of(c).held[p] |= <uint32_t>1 << k


cdef inline bint zone_empty(const uint8_t* zone) noexcept nogil:
    """No card in a zone of MAX_KINDS counts (kinds >= N_KINDS masked off)."""
    cdef int k
    cdef uint64_t w, any = 0
    if LITTLE_ENDIAN:
        for k in range(0, MAX_KINDS - 8, 8):
            memcpy(&w, zone + k, 8)
            any |= w & KIND_BYTES[k >> 3]
        memcpy(&w, zone + MAX_KINDS - 8, 8)
        return (any | (w & KIND_BYTES_LAST)) == 0
    for k in range(N_KINDS):
        if zone[k]:
            return False
    return True


cdef inline int byte_sum(uint64_t w) noexcept nogil:
    """The sum of the eight bytes of w."""
    w = (w & 0x00FF00FF00FF00FFULL) + ((w >> 8) & 0x00FF00FF00FF00FFULL)
    return <int>(((w * 0x0001000100010001ULL) >> 48) & 0xFFFF)


cdef inline int zone_total(const uint8_t* zone) noexcept nogil:
    """The cards in a zone of MAX_KINDS counts (kinds >= N_KINDS masked off), eight counts at a
    time on a little-endian machine."""
    cdef int k, n = 0
    cdef uint64_t w
    if LITTLE_ENDIAN:
        for k in range(0, MAX_KINDS - 8, 8):
            memcpy(&w, zone + k, 8)
            n += byte_sum(w & KIND_BYTES[k >> 3])
        memcpy(&w, zone + MAX_KINDS - 8, 8)
        return n + byte_sum(w & KIND_BYTES_LAST)
    for k in range(N_KINDS):
        n += zone[k]
    return n


cdef inline int experiment_total(const LabCore* c) noexcept nogil:
    """LD1: the experiment count of the experiment cards in the turn player's play area. Cards
    spent as Phase 2 fuel also sit there, but the total only matters in Phase 1."""
    cdef int i, k, x = 0
    cdef const uint8_t* play = c.play[c.turn_player]
    for i in range(N_EXP_KINDS):
        k = EXP_KINDS[i]
        x += play[k] * K_EXPERIMENTS[k]
    return x


cdef inline int acquisitions_allowed(int experiments) noexcept nogil:
    if experiments > 255:
        experiments = 255
    return TIER_CARDS[experiments]


cdef inline uint32_t pending_mask(const LabCore* c) noexcept nogil:
    return c.growth_pending[0] | (c.growth_pending[1] << 8)


cdef inline void set_pending_mask(LabCore* c, uint32_t m) noexcept nogil:
    c.growth_pending[0] = m & 0xFF
    c.growth_pending[1] = (m >> 8) & 0xFF


cdef inline int candidate_breeds(const LabCore* c, int space) noexcept nogil:
    """A7: the breeds a prepared space may sprout as under the fertilizer being resolved: its
    listed breeds (or the recorded seed breed with track_seed_breed) that the fertilizer grows."""
    cdef int listed = S_BREEDS[space]
    if c.track_seed_breed and c.space_breed[space]:
        listed = 1 << (c.space_breed[space] - 1)
    return listed & c.growth_breeds


cdef int sprout_options(const LabCore* c, int* skip_ok) noexcept nogil:
    """Options of the lowest pending prepared space: a mask of the breeds it may sprout as, and
    whether it may stay prepared. The fertilizer grows as many plants as the stock allows (every
    plant of the matching breed grows, LP3); the fertilizer player chooses the breed of a
    multi-breed space (A7) and, only when the stock runs short, which spaces miss out (A8).

    "As many as the stock allows" is a bipartite b-matching of pending spaces to breeds, taken
    as its minimum cut: over every breed subset T, the stock of T plus the spaces whose
    candidates are not all in T. A breed b is an option when sprouting the space as b still
    reaches the maximum; staying prepared is allowed when the other spaces alone reach it.
    Reads the core only: sprout_choice calls it on a bare LabCore, without the cache."""
    cdef int first = ROOM_FIRST[c.room[c.turn_player]]
    cdef uint32_t pending = pending_mask(c)
    cdef int i = lowest_bit(pending)
    cdef uint32_t rest = pending & ~(<uint32_t>1 << i)
    cdef uint32_t m
    cdef int cand = candidate_breeds(c, first + i)
    cdef int b, t, j, f, cj, n_rest = 0, options = 0, plentiful = cand != 0
    cdef int need[N_BREEDS]
    cdef int inside[1 << N_BREEDS]       # spaces of `rest` whose candidates all lie in T
    cdef int stock_of[1 << N_BREEDS]     # plant stock of the breeds in T
    cdef int best_total, best_rest, best_with[N_BREEDS], best_without[N_BREEDS]
    for b in range(N_BREEDS):
        need[b] = (cand >> b) & 1
    m = rest
    while m:
        j = lowest_bit(m)
        m &= m - 1
        cj = candidate_breeds(c, first + j)
        if cj == 0:
            plentiful = 0
        n_rest += 1
        for b in range(N_BREEDS):
            need[b] += (cj >> b) & 1
    for b in range(N_BREEDS):
        if need[b] > c.plant_stock[b]:
            plentiful = 0
    if plentiful:
        # Fast path: every breed has a plant for every pending space that could take it, so all
        # of them sprout whatever is chosen: each candidate is an option, staying prepared not.
        skip_ok[0] = 0
        return cand
    for t in range(1 << N_BREEDS):
        inside[t] = 0
    m = rest
    while m:
        inside[candidate_breeds(c, first + lowest_bit(m))] += 1
        m &= m - 1
    # Subset sums: inside[T] = spaces with candidates in T, stock_of[T] = stock of T.
    for b in range(N_BREEDS):
        for t in range(1 << N_BREEDS):
            if (t >> b) & 1:
                inside[t] += inside[t ^ (1 << b)]
    stock_of[0] = 0
    for t in range(1, 1 << N_BREEDS):
        stock_of[t] = stock_of[t & (t - 1)] + c.plant_stock[lowest_bit(t)]
    best_total = 1 << 30
    best_rest = 1 << 30
    for b in range(N_BREEDS):
        best_with[b] = 1 << 30
        best_without[b] = 1 << 30
    for t in range(1 << N_BREEDS):
        f = stock_of[t] + n_rest - inside[t]          # the cut of T for `rest` alone
        if f < best_rest:
            best_rest = f
        if f + (1 if cand & ~t else 0) < best_total:
            best_total = f + (1 if cand & ~t else 0)
        for b in range(N_BREEDS):
            if (t >> b) & 1:
                if f < best_with[b]:
                    best_with[b] = f
            elif f < best_without[b]:
                best_without[b] = f
    for b in range(N_BREEDS):
        if (cand >> b) & 1 and c.plant_stock[b] > 0:
            # One plant of b fewer in the stock: every cut containing b shrinks by one.
            f = best_with[b] - 1 if best_with[b] - 1 < best_without[b] else best_without[b]
            if 1 + f == best_total:
                options |= 1 << b
    skip_ok[0] = 1 if best_rest == best_total else 0
    return options


cdef uint32_t empty_spaces(const LabCore* c, int room, int floor) noexcept nogil:
    """The empty spaces (in-room bits) of a room with a space id >= floor."""
    cdef int below = floor - ROOM_FIRST[room]
    cdef uint32_t m = room_status(c, room, SPACE_EMPTY)
    if below <= 0:
        return m
    if below >= ROOM_SIZE[room]:
        return 0
    return m & ~((<uint32_t>1 << below) - 1)


cdef int growable_breeds(const LabCore* c, int room) noexcept nogil:
    """LP5: the breeds a fertilizer grows something of in the room: those of its leaves, and
    those a prepared space lists (or records, with track_seed_breed) that the plant stock still
    holds. A fertilizer is offered only if it grows at least one plant (playing it for no effect
    is the same as keeping it: both end in the discard pile in Phase 5)."""
    cdef int s, b, listed, leaves = 0, prepared = 0, stocked = 0, first = ROOM_FIRST[room]
    cdef uint32_t m = room_status(c, room, SPACE_LEAF)
    while m:
        leaves |= 1 << (c.space_breed[first + lowest_bit(m)] - 1)
        m &= m - 1
    m = room_status(c, room, SPACE_PREPARED)
    while m:
        s = first + lowest_bit(m)
        m &= m - 1
        listed = S_BREEDS[s]
        if c.track_seed_breed and c.space_breed[s]:
            listed = 1 << (c.space_breed[s] - 1)
        prepared |= listed
    for b in range(N_BREEDS):
        if c.plant_stock[b] > 0:
            stocked |= 1 << b
    return leaves | (prepared & stocked)


cdef inline uint32_t own_flowers(const LabCore* c, int p, int room) noexcept nogil:
    """The in-room bits of p's flowers in a room."""
    return room_status(c, room, SPACE_FLOWER) & room_owned(c, room, p)


cdef bint has_own_flower(const LabCore* c, int p, int room) noexcept nogil:
    return own_flowers(c, p, room) != 0


# --- legal actions per stage ------------------------------------------------------------------
cdef int develop_actions(const LabCore* c, int32_t* out, int mode) noexcept nogil:
    """LD1-LD4: every experiment and skill card in hand may be played and every card the
    experiment total allows may be acquired, in any order (an experiment played after an
    acquisition raises the total for the next one).

    LIST_SEARCH, in a search's world (LD6): experiments by non-decreasing kind and before any
    acquisition (after a skill, again from any kind); acquisitions by non-decreasing kind (they
    all go to the discard pile, so their order changes nothing). The order is kept in the search
    memory. Every position a legal order reaches, a canonical order reaches in as many moves.
    LIST_POLICY also leaves out a skill after an acquisition while the draw pile covers its
    draws (the same line as the skill played before acquiring).

    LD6 corrected: an acquisition changes what a later skill can bring when the skill's draws
    reach the end of the draw pile, because the discard pile (holding the acquired cards) is
    then reshuffled. So after an acquisition a skill is still offered when the draw pile holds
    fewer cards than it draws or reveals, and after such a "late" skill experiment cards may be
    played again and acquisitions restart from any kind. Otherwise a skill played after an
    acquisition is the same line as the skill played before it, and is not offered twice.

    With out == NULL (only with LIST_LEGAL) nothing is written and the count stops at 2:
    whether Phase 1 offers any choice besides END (advance asks this after every step)."""
    cdef int p = c.turn_player
    cdef int n = 1, k, x, limit
    cdef uint32_t held = cached(c).held[p], m
    cdef const LabState* mem = cached(c)
    cdef bint canonical = mode != LIST_LEGAL and mem.ordered
    if out != NULL:
        out[0] = ACT_END
    m = held & EXP_MASK
    if canonical:
        m = (m & (<uint32_t>0xFFFFFFFF << mem.experiment_floor)
             if not mem.acquired_seen or mem.late_skill else 0)
    if m and out == NULL:
        return 2
    n = append_bits(out, n, m, ACT_EXPERIMENT)
    m = held & SKILL_MASK
    if m and out == NULL:
        return 2
    while m:
        k = lowest_bit(m)
        m &= m - 1
        if mode == LIST_POLICY and mem.acquired_seen and cached(c).draw_total[p] >= K_SKILL_COUNT[k]:
            continue
        out[n] = ACT_SKILL + k
        n += 1
    x = experiment_total(c)
    if c.acquired < acquisitions_allowed(x):
        # LD3 threshold: each card needs cost <= X; budget: the costs add up to at most X.
        limit = x if c.acquire_mode == 0 else x - c.spent
        if limit >= 0:
            m = COST_AT_MOST[limit if limit < 255 else 255] & kinds_in(c.stock)
            if canonical:
                m &= <uint32_t>0xFFFFFFFF << mem.acquire_floor
            if m and out == NULL:
                return 2
            n = append_bits(out, n, m, ACT_ACQUIRE)
    return n


cdef int cultivate_actions(const LabCore* c, int32_t* out, int mode) noexcept nogil:
    """LP1-LP5 and LT2 (skills): any card in hand as fuel to move to another room, a seed on
    any empty matching space of the room, any fertilizer (LP5: even one that grows nothing).

    LIST_SEARCH, in a search's world: consecutive seeds go on ascending spaces. LIST_POLICY also
    prunes dominated moves: while an experiment card is in hand only the lowest experiment kind
    is fuel (an experiment has no other use in Phase 2, and every card ends in the discard pile
    anyway), and a fertilizer that grows nothing is left out (keeping it is the same: both end
    in the discard pile in Phase 5)."""
    cdef int p = c.turn_player
    cdef int r = c.room[p]
    cdef int n = 1, k, q, first, growable
    cdef uint32_t held = cached(c).held[p], m, fuel, empty
    out[0] = ACT_END
    n = append_bits(out, n, held & SKILL_MASK, ACT_SKILL)
    fuel = held
    if mode == LIST_POLICY and held & EXP_MASK:
        fuel = held & EXP_MASK
        fuel = fuel & -fuel
    while fuel:
        k = lowest_bit(fuel)
        fuel &= fuel - 1
        for q in range(N_ROOMS):
            if q != r:                       # A17: moving to the current room is a no-op
                out[n] = ACT_MOVE + k * N_ROOMS + q
                n += 1
    m = held & SEED_MASK
    if m and c.markers_free[p] > 0:          # A20
        first = ROOM_FIRST[r]
        # LP2 (canonical order: consecutive seeds go on ascending spaces, >= seed_floor).
        empty = empty_spaces(c, r, cached(c).seed_floor if mode != LIST_LEGAL and cached(c).ordered else 0)
        if empty:
            while m:
                k = lowest_bit(m)
                m &= m - 1
                n = append_bits(out, n, empty & SEED_SPACES[k][r], ACT_SEED + k * MAX_SPACES + first)
    m = held & FERT_MASK
    if m:
        growable = growable_breeds(c, r) if mode == LIST_POLICY else 0xFF
        while m:
            k = lowest_bit(m)
            m &= m - 1
            if growable & K_BREEDS[k]:
                out[n] = ACT_FERTILIZE + k
                n += 1
    return n


cdef int sprout_actions(const LabCore* c, int32_t* out) noexcept nogil:
    cdef int skip_ok, b, n = 0
    cdef int options = sprout_options(c, &skip_ok)
    for b in range(N_BREEDS):
        if (options >> b) & 1:
            out[n] = ACT_SPROUT + b
            n += 1
    if skip_ok:
        out[n] = ACT_NO_SPROUT
        n += 1
    return n


cdef int observe_actions(const LabCore* c, int32_t* out, int mode) noexcept nogil:
    """LO1: any own flower in the assistant's room not picked yet. LIST_SEARCH/POLICY in a
    search's world: in ascending space order (the removal order changes nothing: the bonus is computed on the whole set at
    END)."""
    cdef int p = c.turn_player
    cdef int r = c.room[p]
    cdef int first = ROOM_FIRST[r], below
    cdef uint32_t m = own_flowers(c, p, r)
    out[0] = ACT_END
    if mode != LIST_LEGAL and cached(c).ordered and cached(c).observe_floor > first:
        below = cached(c).observe_floor - first
        m = 0 if below >= ROOM_SIZE[r] else m & ~((<uint32_t>1 << below) - 1)
    return append_bits(out, 1, m, ACT_OBSERVE + first)


cdef int stage_actions(const LabCore* c, int32_t* out, int mode) noexcept nogil:
    """The decisions of list `mode`: LIST_LEGAL, LIST_SEARCH or LIST_POLICY."""
    if c.stage == STAGE_DEVELOP:
        return develop_actions(c, out, mode)
    if c.stage == STAGE_CULTIVATE:
        return cultivate_actions(c, out, mode)
    if c.stage == STAGE_SPROUT:
        return sprout_actions(c, out)
    if c.stage == STAGE_OBSERVE:
        return observe_actions(c, out, mode)
    return 0


# --- transitions ------------------------------------------------------------------------------
cdef void begin_turn(LabCore* c, int p) noexcept nogil:
    """LT1: a turn starts with Phase 1."""
    c.turn_player = p
    c.stage = STAGE_DEVELOP
    clear_turn(c)


cdef void clear_memory(LabCore* c) noexcept nogil:
    """Forget the search memory (a new turn: nothing played yet)."""
    cdef LabState* mem = cache_of(c)
    mem.experiment_floor = 0
    mem.acquire_floor = 0
    mem.seed_floor = 0
    mem.observe_floor = 0
    mem.acquired_seen = 0
    mem.late_skill = 0


cdef void clear_turn(LabCore* c) noexcept nogil:
    """Zero the turn bookkeeping (between turns a position has one encoding)."""
    c.acquired = 0
    c.spent = 0
    c.growth_breeds = 0
    set_pending_mask(c, 0)
    clear_memory(c)


cdef void enter_cultivation(LabCore* c) noexcept nogil:
    cdef LabState* mem = cache_of(c)
    c.stage = STAGE_CULTIVATE
    mem.experiment_floor = 0         # Phase 1 memory, done with
    mem.late_skill = 0
    mem.seed_floor = 0


cdef void start_draws(LabCore* c, int seat, int count, int mode, int resume) noexcept nogil:
    c.stage = STAGE_DRAW
    c.draw_seat = seat
    c.draws_pending = count
    c.draw_mode = mode
    c.resume = resume


cdef void draws_done(LabCore* c) noexcept nogil:
    """The revealed cards not kept go to the discard pile (A4); then the interrupted step goes on."""
    cdef int k, q = c.draw_seat, p, resume = c.resume
    if c.draw_mode != MODE_TO_HAND:          # only a typed reveal sets cards aside
        for k in range(N_KINDS):
            c.discard[q][k] += c.aside[k]
            c.aside[k] = 0
    # Draw bookkeeping is zero outside a DRAW stage, so every position has one encoding.
    c.draw_mode = MODE_TO_HAND
    c.draws_pending = 0
    c.draw_seat = 0
    c.resume = 0
    if resume == RESUME_SETUP:
        if q + 1 < c.players:
            start_draws(c, q + 1, HAND_SIZE, MODE_TO_HAND, RESUME_SETUP)    # LS3
        else:
            begin_turn(c, c.start_player)
    elif resume == RESUME_DEVELOP:
        c.stage = STAGE_DEVELOP
    elif resume == RESUME_CULTIVATE:
        c.stage = STAGE_CULTIVATE
    else:
        # LE1: a turn ending with >= 35 VP makes this round the last; the round ends with the
        # seat to the right of the start player.
        p = c.turn_player
        if vp_of(c, p) >= END_VP:
            c.final_round = 1
        if c.final_round and p == (c.start_player + c.players - 1) % c.players:
            c.stage = STAGE_OVER
            clear_turn(c)
        else:
            begin_turn(c, (p + 1) % c.players)


cdef void plant_death(LabCore* c, int p) noexcept nogil:
    """LX1: every flower carrying p's marker ages one step; one already on the bottom step dies
    (plant card to the stock, marker to p's supply). LX2: prepared spaces and leaves never die."""
    cdef int s, b
    cdef uint64_t m = spaces_with(c, SPACE_FLOWER, p)
    while m:
        s = __builtin_ctzll(m)
        m &= m - 1
        b = c.space_breed[s] - 1
        if c.space_step[s] >= B_TRACK[b]:
            c.plant_stock[b] += 1
            c.markers_free[p] += 1
            c.space_status[s] = SPACE_EMPTY
            c.space_owner[s] = 0
            c.space_breed[s] = 0
            c.space_step[s] = 0
        else:
            c.space_step[s] += 1


cdef void end_turn(LabCore* c) noexcept nogil:
    """Phase 4 (LX1), then Phase 5 (LY1, LY2): hand and play area to the discard pile, draw 5."""
    cdef int p = c.turn_player, k
    plant_death(c, p)
    for k in range(N_KINDS):
        c.discard[p][k] += c.hand[p][k] + c.play[p][k]
        c.hand[p][k] = 0
        c.play[p][k] = 0
        c.known[p][k] = 0
    cache_of(c).held[p] = 0
    start_draws(c, p, HAND_SIZE, MODE_TO_HAND, RESUME_TURN_END)


cdef void sprout(LabCore* c, int space, int b) noexcept nogil:
    """LP3: a prepared space takes a plant card of breed b+1, leaf side up; +1 VP to the
    fertilizer player."""
    c.plant_stock[b] -= 1
    c.space_status[space] = SPACE_LEAF
    c.space_breed[space] = b + 1
    c.space_step[space] = 0
    add_vp(c, c.turn_player, 1)


cdef void advance(LabCore* c) noexcept nogil:
    """Resolve forced steps until a decision with a real choice, a chance node or the end."""
    cdef int skip_ok, options, i, q, k, r
    cdef uint32_t pending
    while True:
        if c.stage == STAGE_DRAW:
            if c.draws_pending == 0:
                draws_done(c)
                continue
            q = c.draw_seat
            if cached(c).draw_total[q] == 0:
                if zone_empty(c.discard[q]):
                    draws_done(c)            # LY2 [RES-RULE]: both piles empty, stop short
                    continue
                for k in range(N_KINDS):     # LY2: the discard pile becomes the draw pile
                    c.draw[q][k] = c.discard[q][k]
                    c.discard[q][k] = 0
                cache_of(c).draw_total[q] = zone_total(c.draw[q])
            return
        if c.stage == STAGE_DEVELOP:
            if develop_actions(c, NULL, LIST_LEGAL) == 1:
                enter_cultivation(c)         # nothing to do in Phase 1
                continue
            return
        if c.stage == STAGE_CULTIVATE:
            # Phase 2 offers nothing but END exactly when the hand is empty: any card in hand
            # may at least be spent to move to another room (LP1, A17; N_ROOMS > 1).
            if cached(c).held[c.turn_player] == 0:
                r = c.room[c.turn_player]
                c.stage = STAGE_OBSERVE if has_own_flower(c, c.turn_player, r) else STAGE_TURN_END
                continue
            return
        if c.stage == STAGE_SPROUT:
            pending = pending_mask(c)
            if pending == 0:
                c.stage = STAGE_CULTIVATE
                c.growth_breeds = 0
                continue
            options = sprout_options(c, &skip_ok)
            if pop_few(options) + skip_ok >= 2:
                return
            i = lowest_bit(pending)
            if options:
                sprout(c, ROOM_FIRST[c.room[c.turn_player]] + i, lowest_bit(options))
            set_pending_mask(c, pending & ~(<uint32_t>1 << i))
            continue
        if c.stage == STAGE_TURN_END:
            end_turn(c)
            continue
        return


cdef void fertilize(LabCore* c, int k) noexcept nogil:
    """LP3: every plant of a matching breed in the room grows one stage, whoever owns it: leaves
    bloom (marker on the top step), prepared spaces sprout; +1 VP per plant grown. Leaves bloom
    first, so a space sprouted by this card does not also bloom."""
    cdef int p = c.turn_player
    cdef int r = c.room[p]
    cdef int s, i, first = ROOM_FIRST[r]
    cdef uint32_t pending = 0, m
    hand_take(c, p, k)
    c.play[p][k] += 1
    c.growth_breeds = K_BREEDS[k]
    m = room_status(c, r, SPACE_LEAF)
    while m:
        s = first + lowest_bit(m)
        m &= m - 1
        if (K_BREEDS[k] >> (c.space_breed[s] - 1)) & 1:
            c.space_status[s] = SPACE_FLOWER
            c.space_step[s] = 1
            add_vp(c, p, 1)
    m = room_status(c, r, SPACE_PREPARED)
    while m:
        i = lowest_bit(m)
        m &= m - 1
        if candidate_breeds(c, first + i):
            pending |= <uint32_t>1 << i
    set_pending_mask(c, pending)
    c.stage = STAGE_SPROUT


cdef void finish_observation(LabCore* c) noexcept nogil:
    """LO2-LO4: printed VP of every removed flower, plus the adjacency bonus of each maximal
    orthogonally connected group of flowers removed together (A10); cards to the stock, markers
    to the supply."""
    cdef int p = c.turn_player
    cdef int r = c.room[p]
    cdef int first = ROOM_FIRST[r], last = ROOM_FIRST[r] + ROOM_SIZE[r]
    cdef int s, t, d, u, size, head, points = 0
    cdef uint8_t seen[MAX_SPACES]
    cdef int stack[MAX_SPACES]
    memset(seen, 0, sizeof(seen))
    for s in range(first, last):
        if c.space_status[s] != SPACE_PICKED:
            continue
        points += B_VP[c.space_breed[s] - 1]
        if seen[s]:
            continue
        seen[s] = 1
        size = 0
        head = 0
        stack[head] = s
        head += 1
        while head:
            head -= 1
            t = stack[head]
            size += 1
            for d in range(4):
                u = S_NEIGHBOUR[t][d]
                if u != NO_SPACE and not seen[u] and c.space_status[u] == SPACE_PICKED:
                    seen[u] = 1
                    stack[head] = u
                    head += 1
        points += ADJACENCY[size if size < N_ADJACENCY else N_ADJACENCY - 1]
    for s in range(first, last):
        if c.space_status[s] == SPACE_PICKED:
            c.plant_stock[c.space_breed[s] - 1] += 1
            c.markers_free[p] += 1
            c.space_status[s] = SPACE_EMPTY
            c.space_owner[s] = 0
            c.space_breed[s] = 0
            c.space_step[s] = 0
    add_vp(c, p, points)


# --- kernel functions -------------------------------------------------------------------------
cdef int k_num_players(const uint8_t* buf) noexcept nogil:
    return (<const LabCore*>buf).players


cdef int k_current_player(const uint8_t* buf) noexcept nogil:
    cdef const LabCore* c = <const LabCore*>buf
    if c.stage == STAGE_START or c.stage == STAGE_DRAW:
        return CHANCE
    if c.stage == STAGE_OVER:
        return TERMINAL
    return c.turn_player


cdef int k_legal_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    return stage_actions(<const LabCore*>buf, out, LIST_LEGAL)


cdef int k_search_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    return stage_actions(<const LabCore*>buf, out, LIST_SEARCH)


cdef int k_chance_outcomes(const uint8_t* buf, int32_t* out, double* weights) noexcept nogil:
    cdef const LabCore* c = <const LabCore*>buf
    cdef int n = 0, k, q
    if c.stage == STAGE_START:
        for q in range(c.players):           # LS5: uniform
            out[n] = ACT_START + q
            weights[n] = 1.0
            n += 1
    elif c.stage == STAGE_DRAW:
        # The draw pile's order is unknown to everyone: a draw is a card kind, weighted by its
        # copies in the pile.
        for k in range(N_KINDS):
            if c.draw[c.draw_seat][k]:
                out[n] = ACT_DRAW + k
                weights[n] = c.draw[c.draw_seat][k]
                n += 1
    return n


cdef int32_t k_sample_chance(const uint8_t* buf, Rng* rng) noexcept nogil:
    """One outcome of k_chance_outcomes drawn by weight without listing them: the same
    arithmetic, on the same single uniform draw, as the search's generic sampler (so a seeded
    search draws the same cards either way)."""
    cdef const LabCore* c = <const LabCore*>buf
    cdef const uint8_t* pile
    cdef int k, q, last = 0
    cdef double x
    if c.stage == STAGE_START:
        x = rng_uniform(rng) * <double>c.players     # LS5: uniform
        for q in range(c.players - 1):
            x -= 1.0
            if x < 0.0:
                return ACT_START + q
        return ACT_START + c.players - 1
    pile = c.draw[c.draw_seat]
    x = rng_uniform(rng) * <double>cached(c).draw_total[c.draw_seat]
    for k in range(N_KINDS):
        if pile[k]:
            last = k
            x -= <double>pile[k]
            if x < 0.0:
                return ACT_DRAW + k
    return ACT_DRAW + last


cdef void k_apply(uint8_t* buf, int32_t action) noexcept nogil:
    cdef LabCore* c = <LabCore*>buf
    cdef int p = c.turn_player
    cdef int k, q, s, b
    if action >= ACT_DRAW:
        k = action - ACT_DRAW
        q = c.draw_seat
        c.draw[q][k] -= 1
        cache_of(c).draw_total[q] -= 1
        c.draws_pending -= 1
        if c.draw_mode == MODE_TO_HAND:
            hand_put(c, q, k)
        elif K_TYPE[k] == c.draw_mode - 1:
            hand_put(c, q, k)
            c.known[q][k] += 1               # A4: revealed face up, so everybody knows it
        else:
            c.aside[k] += 1                  # A4: revealed, not of the skill's type
        if cached(c).draw_total[q] == 0:
            # The draw pile ran dry into the hand: hand + draw pile was public (owned cards
            # minus the public discard pile and play area), so now the whole hand is (LY2).
            memcpy(c.known[q], c.hand[q], MAX_KINDS)
        elif c.draws_pending:
            # The next card is drawn by chance again: advance would stop at once (a DRAW stage
            # with draws pending and a pile that holds cards).
            return
    elif action >= ACT_START:
        c.start_player = action - ACT_START
        c.turn_player = c.start_player
        start_draws(c, 0, HAND_SIZE, MODE_TO_HAND, RESUME_SETUP)
    elif action >= ACT_OBSERVE:
        c.space_status[action - ACT_OBSERVE] = SPACE_PICKED
        cache_of(c).observe_floor = action - ACT_OBSERVE + 1
    elif action == ACT_NO_SPROUT or action >= ACT_SPROUT:
        s = lowest_bit(pending_mask(c))
        if action != ACT_NO_SPROUT:
            sprout(c, ROOM_FIRST[c.room[p]] + s, action - ACT_SPROUT)
        set_pending_mask(c, pending_mask(c) & ~(<uint32_t>1 << s))
    elif action >= ACT_FERTILIZE:
        cache_of(c).seed_floor = 0
        fertilize(c, action - ACT_FERTILIZE)
    elif action >= ACT_SEED:
        k = (action - ACT_SEED) // MAX_SPACES
        s = (action - ACT_SEED) % MAX_SPACES
        hand_take(c, p, k)
        c.play[p][k] += 1
        c.markers_free[p] -= 1
        c.space_status[s] = SPACE_PREPARED
        c.space_owner[s] = p
        c.space_breed[s] = (lowest_bit(K_BREEDS[k]) + 1) if c.track_seed_breed else 0
        c.space_step[s] = 0
        cache_of(c).seed_floor = s + 1
    elif action >= ACT_MOVE:
        k = (action - ACT_MOVE) // N_ROOMS
        hand_take(c, p, k)
        c.play[p][k] += 1
        c.room[p] = (action - ACT_MOVE) % N_ROOMS
        cache_of(c).seed_floor = 0
    elif action >= ACT_ACQUIRE:
        k = action - ACT_ACQUIRE
        c.stock[k] -= 1
        c.discard[p][k] += 1                 # LD4
        c.acquired += 1
        c.spent += K_COST[k]
        cache_of(c).acquire_floor = k
        cache_of(c).acquired_seen = 1
    elif action >= ACT_SKILL:
        k = action - ACT_SKILL
        hand_take(c, p, k)
        c.play[p][k] += 1
        cache_of(c).experiment_floor = 0
        cache_of(c).seed_floor = 0
        if c.stage == STAGE_DEVELOP and cache_of(c).acquired_seen:
            cache_of(c).late_skill = 1       # LD6 fix: see develop_actions
            cache_of(c).acquire_floor = 0
        start_draws(c, p, K_SKILL_COUNT[k],
                    MODE_TO_HAND if K_SKILL_OP[k] == SKILL_DRAW else 1 + K_SKILL_TYPE[k],
                    RESUME_DEVELOP if c.stage == STAGE_DEVELOP else RESUME_CULTIVATE)
    elif action >= ACT_EXPERIMENT:
        k = action - ACT_EXPERIMENT
        hand_take(c, p, k)
        c.play[p][k] += 1
        cache_of(c).experiment_floor = k
    elif c.stage == STAGE_DEVELOP:          # ACT_END
        enter_cultivation(c)
    elif c.stage == STAGE_CULTIVATE:
        c.stage = STAGE_OBSERVE if has_own_flower(c, p, c.room[p]) else STAGE_TURN_END
    else:
        finish_observation(c)
        c.stage = STAGE_TURN_END
    advance(c)                               # every action ends here: the one call site


cdef int seed_set_points(const LabCore* c, int p) noexcept nogil:
    """LE2/A12: sum over layers k >= 1 of value(#breeds with >= k seed cards) — the best
    partition into sets of distinct breeds when the values are convex (checked on load)."""
    cdef int count[N_BREEDS]
    cdef int k, b, n, layer, distinct, total = 0, most = 0
    for b in range(N_BREEDS):
        count[b] = 0
    for k in range(N_KINDS):
        if K_TYPE[k] != TYPE_SEED:
            continue
        n = c.draw[p][k] + c.discard[p][k]
        if not c.seed_set_scope:
            n += c.hand[p][k] + c.play[p][k]
            if c.stage == STAGE_DRAW and c.draw_seat == p:
                n += c.aside[k]
        count[lowest_bit(K_BREEDS[k])] += n
    for b in range(N_BREEDS):
        if count[b] > most:
            most = count[b]
    for layer in range(1, most + 1):
        distinct = 0
        for b in range(N_BREEDS):
            if count[b] >= layer:
                distinct += 1
        total += SEED_SET[distinct]
    return total


cdef int research_documents(const LabCore* c, int p) noexcept nogil:
    """LE3 tie-break: cards in the research documents, counted with the seed-set scope. (At the
    end every hand holds the hand size and play areas are empty, so both scopes rank alike.)"""
    cdef int n = zone_total(c.draw[p]) + zone_total(c.discard[p])
    if not c.seed_set_scope:
        n += zone_total(c.hand[p]) + zone_total(c.play[p])
        if c.stage == STAGE_DRAW and c.draw_seat == p:
            n += zone_total(c.aside)
    return n


cdef void k_scores(const uint8_t* buf, double* out) noexcept nogil:
    """VP plus the seed-set bonus the player would get if the game ended now."""
    cdef const LabCore* c = <const LabCore*>buf
    cdef int p
    for p in range(c.players):
        out[p] = vp_of(c, p) + seed_set_points(c, p)


cdef void k_returns(const uint8_t* buf, double* out) noexcept nogil:
    """LE3: most points; tie: most cards in the research documents; further tie: shared (A13)."""
    cdef const LabCore* c = <const LabCore*>buf
    cdef int p, winners = 0
    cdef double best = -1.0
    cdef int best_docs = -1
    cdef double pts[MAX_SEATS]
    cdef int docs[MAX_SEATS]
    for p in range(c.players):
        pts[p] = vp_of(c, p) + seed_set_points(c, p)
        docs[p] = research_documents(c, p)
        if pts[p] > best or (pts[p] == best and docs[p] > best_docs):
            best = pts[p]
            best_docs = docs[p]
    for p in range(c.players):
        if pts[p] == best and docs[p] == best_docs:
            winners += 1
    for p in range(c.players):
        out[p] = 1.0 / winners if pts[p] == best and docs[p] == best_docs else 0.0


cdef void k_determinize(uint8_t* buf, int observer, Rng* rng) noexcept nogil:
    """Section 4: another seat's hand and draw pile are hidden, their union is public (owned
    cards minus the public discard pile and play area), and so are the cards known to be in the
    hand (`known`: a draw pile that ran dry into it, a typed skill's reveal). Keep the known
    cards and deal the rest of the union afresh into the rest of a hand of the same size and a
    draw pile, reading only the union, the known cards and the hand size — never the hidden
    split — so the result depends on the observer's information and the rng alone."""
    cdef LabCore* c = <LabCore*>buf
    cdef int q, k, hand_size, remaining, pick
    for q in range(c.players):
        if q == observer:
            continue
        hand_size = 0
        remaining = 0
        for k in range(N_KINDS):
            hand_size += c.hand[q][k] - c.known[q][k]
            c.draw[q][k] += c.hand[q][k] - c.known[q][k]
            c.hand[q][k] = c.known[q][k]
            remaining += c.draw[q][k]
        while hand_size > 0:
            pick = rng_below(rng, remaining)
            for k in range(N_KINDS):
                if pick < c.draw[q][k]:
                    break
                pick -= c.draw[q][k]
            c.draw[q][k] -= 1
            c.hand[q][k] += 1
            remaining -= 1
            hand_size -= 1
        cache_of(c).held[q] = kinds_in(c.hand[q])
        cache_of(c).draw_total[q] = remaining
    # A search's world: its order memory starts here, empty (see LabState).
    clear_memory(c)
    cache_of(c).ordered = 1


# --- playout policy ---------------------------------------------------------------------------
cdef int growth_count(const LabCore* c, int room, int breeds) noexcept nogil:
    """Plants a fertilizer of `breeds` would grow in `room` (prepared spaces counted when the
    stock has a candidate; an upper bound when the stock runs short)."""
    cdef int s, b, n = 0, listed
    for s in range(ROOM_FIRST[room], ROOM_FIRST[room] + ROOM_SIZE[room]):
        if c.space_status[s] == SPACE_LEAF and (breeds >> (c.space_breed[s] - 1)) & 1:
            n += 1
        elif c.space_status[s] == SPACE_PREPARED:
            listed = S_BREEDS[s]
            if c.track_seed_breed and c.space_breed[s]:
                listed = 1 << (c.space_breed[s] - 1)
            listed &= breeds
            for b in range(N_BREEDS):
                if (listed >> b) & 1 and c.plant_stock[b] > 0:
                    n += 1
                    break
    return n


cdef bint room_is_useful(const LabCore* c, int room, uint32_t held) noexcept nogil:
    """A room where a card in hand (`held` kinds) has an effect: a fertilizer grows something
    or a seed fits."""
    cdef int g
    cdef uint32_t m = held & FERT_MASK, empty
    if m:
        g = growable_breeds(c, room)
        while m:
            if g & K_BREEDS[lowest_bit(m)]:
                return True
            m &= m - 1
    m = held & SEED_MASK
    if m and c.markers_free[c.turn_player] > 0:
        empty = empty_spaces(c, room, 0)
        while m:
            if empty & SEED_SPACES[lowest_bit(m)][room]:
                return True
            m &= m - 1
    return False


cdef int32_t k_baseline_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """The playout policy of 2026-12-01, kept unchanged as the frozen baseline's
    (baseline_rollout_action, `mcts-base`).

    A cheap, sensible playout: play experiments and skills, buy the dearest cards it can,
    prepare seeds before fertilizing, fertilize where most plants grow, move only towards a room
    where a card in hand does something, observe every own flower. One decision in eight is
    uniform so that playouts keep exploring.

    It draws from the policy list (LIST_POLICY: search_actions less dominated moves, the legal
    list before every rule-legal order was legal), which is ascending, so each kind of action is one run of it (Phase 1: END,
    experiments, skills, acquisitions; Phase 2: END, skills, moves, seeds, fertilizers): a pool
    of one kind is picked from its run directly."""
    cdef const LabCore* c = <const LabCore*>buf
    cdef int32_t legal[MAX_LEGAL]
    cdef int32_t pool[MAX_KINDS * N_ROOMS]   # acquisitions, fertilizers or moves: one per kind (and room)
    cdef int n = stage_actions(c, legal, LIST_POLICY)
    cdef int i, a, m = 0, best = -1, value, start, end, room
    cdef int useful[N_ROOMS]
    cdef uint32_t held
    if n == 1 and c.stage == STAGE_DEVELOP:
        # Only END in the canonical list, where Phase 1 used to end by itself before every
        # legal order was offered: no random draw, so playouts follow the same
        # random stream as before that change.
        return ACT_END
    if n <= 1 or rng_below(rng, 8) == 0:
        return legal[rng_below(rng, n)]
    if c.stage == STAGE_DEVELOP:
        end = 1
        while end < n and legal[end] < ACT_ACQUIRE:
            end += 1
        if end > 1:                          # experiments and skills
            return legal[1 + rng_below(rng, end - 1)]
        for i in range(1, n):                # acquisitions: the dearest
            a = legal[i]
            value = K_COST[a - ACT_ACQUIRE]
            if value > best:
                best = value
                m = 0
            if value == best:
                pool[m] = a
                m += 1
        if m:
            return pool[rng_below(rng, m)]
        return ACT_END
    if c.stage == STAGE_CULTIVATE:
        end = n
        while end > 1 and legal[end - 1] >= ACT_FERTILIZE:
            end -= 1
        start = end
        while start > 1 and legal[start - 1] >= ACT_SEED:
            start -= 1
        if end > start:                      # seeds
            return legal[start + rng_below(rng, end - start)]
        room = c.room[c.turn_player]
        for i in range(end, n):              # fertilizers: where most plants grow
            a = legal[i]
            value = growth_count(c, room, K_BREEDS[a - ACT_FERTILIZE])
            if value > best:
                best = value
                m = 0
            if value == best:
                pool[m] = a
                m += 1
        if m:
            return pool[rng_below(rng, m)]
        if legal[1] < ACT_ACQUIRE:           # the lowest skill
            return legal[1]
        held = cached(c).held[c.turn_player]
        for i in range(N_ROOMS):
            useful[i] = -1
        for i in range(1, start):            # moves towards a useful room
            a = legal[i]
            room = (a - ACT_MOVE) % N_ROOMS
            if useful[room] < 0:
                useful[room] = room_is_useful(c, room, held)
            if useful[room]:
                pool[m] = a
                m += 1
        if m:
            return pool[rng_below(rng, m)]
        return ACT_END
    if c.stage == STAGE_OBSERVE:
        return legal[1]                      # the lowest own flower: in turn, all of them
    return legal[rng_below(rng, n)]


# Weights of the playout policy, screened policy against policy (bench/policy_duel.py --game botanical_lab)
# and in searches against mcts-base (docs/games/botanical_lab.md).
cdef double W_OWN_BLOOM = 1.0       # LP3: an own leaf that blooms, times its flower VP (observed this turn, LO2)
cdef double W_OWN_SPROUT = 0.5      # LP3: an own prepared space that sprouts (a step towards a flower)
cdef double W_OTHER_SPROUT = 0.25   # LP3: another seat's prepared space that sprouts (minus)
cdef double W_SEED_GROWN = 2.0      # LP2: a seed on a space a fertilizer in hand sprouts this turn
cdef double W_SEED_NEIGHBOUR = 0.5  # LP2: a seed next to an own plant (LO3 adjacency later)
cdef double W_SEED_VP = 0.2         # LP2: times the dearest flower VP the space may sprout as
cdef double W_MOVE_SEED = 1.0       # LP1: the room fits a seed in hand
cdef double W_NEW_SEED = 4.0        # LD2: a seed kind not yet owned (LE2 seed sets)
cdef double W_SKILL = 1.5           # LD2: a skill draws cards but brings no points itself (minus)
cdef double W_FERTILIZER = 2.0      # LD2: a fertilizer (every plant it grows is 1 VP, LP3)
cdef double W_LEAVE_FLOWERS = 2.0   # LP1: own flowers left unobserved in the room moved away from, times their VP
cdef int UNIFORM_ONE_IN = 30        # one decision in 30 is uniform, so playouts keep exploring


cdef inline int stocked_breeds(const LabCore* c) noexcept nogil:
    cdef int b, m = 0
    for b in range(N_BREEDS):
        if c.plant_stock[b] > 0:
            m |= 1 << b
    return m


cdef double fertilize_gain(const LabCore* c, int p, int room, int breeds, int stocked) noexcept nogil:
    """LP3 one ply ahead: +1 VP per plant the fertilizer grows (whoever owns it); an own leaf
    that blooms is a flower to observe this turn (its printed VP, LO2); an own prepared space
    that sprouts is progress, another seat's is theirs. Another seat's leaf that blooms counts
    its 1 VP only: charging its flower to the fertilizer lost policy against policy."""
    cdef int s, listed, b, first = ROOM_FIRST[room]
    cdef double v = 0.0
    cdef uint32_t m = room_status(c, room, SPACE_LEAF) | room_status(c, room, SPACE_PREPARED)
    while m:                                 # ascending spaces: the sum adds up in the same order
        s = first + lowest_bit(m)
        m &= m - 1
        if c.space_status[s] == SPACE_LEAF:
            b = c.space_breed[s] - 1
            if (breeds >> b) & 1:
                v += 1.0
                if c.space_owner[s] == p:
                    v += W_OWN_BLOOM * B_VP[b]
        elif c.space_status[s] == SPACE_PREPARED:
            listed = S_BREEDS[s]
            if c.track_seed_breed and c.space_breed[s]:
                listed = 1 << (c.space_breed[s] - 1)
            if listed & breeds & stocked:
                v += 1.0
                if c.space_owner[s] == p:
                    v += W_OWN_SPROUT
                else:
                    v -= W_OTHER_SPROUT
    return v


cdef double best_fertilize(const LabCore* c, int p, int room, uint32_t ferts, int stocked) noexcept nogil:
    """The best fertilize_gain among the fertilizer kinds `ferts` in `room` (0: none pays)."""
    cdef double best = 0.0, v
    while ferts:
        v = fertilize_gain(c, p, room, K_BREEDS[lowest_bit(ferts)], stocked)
        if v > best:
            best = v
        ferts &= ferts - 1
    return best


cdef int own_flower_vp(const LabCore* c, int p, int room) noexcept nogil:
    """LO2: the printed VP of p's flowers in a room (what observing there brings, before the
    adjacency bonus)."""
    cdef int v = 0, first = ROOM_FIRST[room]
    cdef uint32_t m = own_flowers(c, p, room)
    while m:
        v += B_VP[c.space_breed[first + lowest_bit(m)] - 1]
        m &= m - 1
    return v


cdef double seed_value(int k, int s, int fert_breeds, int stocked, uint32_t own_plants,
                       bint track_seed_breed) noexcept nogil:
    """LP2 one ply ahead: a prepared space is worth most where a fertilizer in hand sprouts it
    this turn (LP3), beside an own plant (LO3 adjacency) and on a space of a dear flower.
    fert_breeds: the breeds of the fertilizers in hand; own_plants: the in-room bits of the
    room's non-empty spaces carrying the seat's marker."""
    cdef int listed = S_BREEDS[s], grown
    cdef uint32_t neighbours = NEIGHBOUR_BITS[s] & own_plants
    cdef double v = 1.0
    if track_seed_breed:
        listed = K_BREEDS[k]
    grown = fert_breeds & listed & stocked
    if grown:
        v += W_SEED_GROWN
        listed = grown
    v += W_SEED_VP * BEST_VP[listed & ((1 << N_BREEDS) - 1)]
    while neighbours:                        # one addition per neighbour, as the sum always went
        v += W_SEED_NEIGHBOUR
        neighbours &= neighbours - 1
    return v


cdef double room_gain(const LabCore* c, int p, int room, uint32_t held, int stocked) noexcept nogil:
    """What ending Phase 2 in `room` with the kinds `held` brings: own flowers to observe, the
    best fertilizer there, a seed that fits."""
    cdef double v = own_flower_vp(c, p, room)
    cdef uint32_t m = held & SEED_MASK, empty
    v += best_fertilize(c, p, room, held & FERT_MASK, stocked)
    if m and c.markers_free[p] > 0:
        empty = empty_spaces(c, room, 0)
        while m:
            if empty & SEED_SPACES[lowest_bit(m)][room]:
                v += W_MOVE_SEED
                break
            m &= m - 1
    return v


cdef double acquire_value(const LabCore* c, int p, int k) noexcept nogil:
    """LD2 one ply ahead: the dearer the better (costs follow strength), a seed kind not yet
    owned counts towards a seed set (LE2), skills only thin the hand's VP."""
    cdef double v = K_COST[k]
    if K_TYPE[k] == TYPE_SEED:
        if c.hand[p][k] + c.draw[p][k] + c.discard[p][k] + c.play[p][k] == 0:
            v += W_NEW_SEED
    elif K_TYPE[k] == TYPE_SKILL:
        v -= W_SKILL
    elif K_TYPE[k] == TYPE_FERTILIZER:
        v += W_FERTILIZER
    return v


cdef inline bint take_best(double value, double floor, double* best, int* ties, Rng* rng) noexcept nogil:
    """One step of a running argmax whose ties are broken uniformly at random (reservoir
    sampling): True when the caller should take this candidate, i.e. a new best above `floor`,
    or the k-th candidate tied with it, with probability 1/k."""
    if value > best[0]:
        best[0] = value
        ties[0] = 0
    if value == best[0] and value > floor:
        ties[0] += 1
        return rng_below(rng, ties[0]) == 0
    return False


cdef int32_t k_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """The playout policy: one ply of greedy play on the points the rules give, from
    the policy list (LIST_POLICY, dominated moves pruned). One decision in UNIFORM_ONE_IN is
    uniform so that playouts keep exploring (one in 8, as the baseline's, screened worse in a
    search: 47.5% against 70.0% for one in 30, mcts:300 against mcts-base:300, 60 games); ties
    are broken at random.

    Phase 1: skills first (their draws may bring experiments), then every experiment (LD1),
    then the best acquisitions (LD2: acquire_value). Phase 2: seeds first, each on the space
    seed_value prefers (so a fertilizer in hand sprouts it), then the fertilizer of the largest
    fertilize_gain if it pays, then skills, then a move (fuel: the card missed least) to the
    room whose room_gain beats staying (own flowers here are observed only if we stay), else
    END. Sprouting (A7): an own space as the dearest flower, another seat's as the cheapest.
    Phase 3: every own flower (LO1)."""
    cdef const LabCore* c = <const LabCore*>buf
    cdef int32_t legal[MAX_LEGAL]
    cdef int n = stage_actions(c, legal, LIST_POLICY)
    cdef int i, a, k, s, q, p = c.turn_player, room, stocked, ties = 0
    cdef int end, start, fert_start, b, owner, fert_breeds = 0
    cdef uint32_t own_plants = 0
    cdef int32_t choice = -1
    cdef double best, value, here
    cdef uint32_t held, ferts, rest
    if n == 1 and c.stage == STAGE_DEVELOP:
        return ACT_END
    if n <= 1 or rng_below(rng, UNIFORM_ONE_IN) == 0:
        return legal[rng_below(rng, n)]
    if c.stage == STAGE_DEVELOP:
        for i in range(1, n):                # skills first, then experiments
            if legal[i] >= ACT_SKILL and legal[i] < ACT_ACQUIRE:
                return legal[i]
        if legal[1] < ACT_SKILL:
            return legal[1]
        best = -1e9
        for i in range(1, n):                # acquisitions (LD2)
            value = acquire_value(c, p, legal[i] - ACT_ACQUIRE)
            if take_best(value, -1e300, &best, &ties, rng):
                choice = legal[i]
        return choice
    if c.stage == STAGE_CULTIVATE:
        room = c.room[p]
        stocked = stocked_breeds(c)
        held = cached(c).held[p]
        ferts = held & FERT_MASK
        end = n
        while end > 1 and legal[end - 1] >= ACT_FERTILIZE:
            end -= 1
        fert_start = end
        start = end
        while start > 1 and legal[start - 1] >= ACT_SEED:
            start -= 1
        best = -1e9
        if end > start:
            fert_breeds = 0
            rest = ferts
            while rest:
                fert_breeds |= K_BREEDS[lowest_bit(rest)]
                rest &= rest - 1
            own_plants = ~room_status(c, room, SPACE_EMPTY) & room_owned(c, room, p)
        for i in range(start, end):          # seeds (LP2)
            a = legal[i] - ACT_SEED
            k = a // MAX_SPACES
            s = a % MAX_SPACES
            value = seed_value(k, s, fert_breeds, stocked, own_plants, c.track_seed_breed)
            if take_best(value, -1e300, &best, &ties, rng):
                choice = legal[i]
        if choice >= 0:
            return choice
        best = 0.0
        for i in range(fert_start, n):       # fertilizers (LP3) that pay
            value = fertilize_gain(c, p, room, K_BREEDS[legal[i] - ACT_FERTILIZE], stocked)
            if take_best(value, 0.0, &best, &ties, rng):
                choice = legal[i]
        if choice >= 0:
            return choice
        if legal[1] < ACT_MOVE:              # the lowest skill (LT2)
            return legal[1]
        here = own_flower_vp(c, p, room) * W_LEAVE_FLOWERS
        best = here
        for i in range(1, start):            # moves (LP1): fuel and room
            a = legal[i] - ACT_MOVE
            k = a // N_ROOMS
            q = a % N_ROOMS
            rest = held
            if c.hand[p][k] == 1:
                rest &= ~(<uint32_t>1 << k)
            value = room_gain(c, p, q, rest, stocked)
            if take_best(value, here, &best, &ties, rng):
                choice = legal[i]
        if choice >= 0:
            return choice
        return ACT_END
    if c.stage == STAGE_SPROUT:
        s = ROOM_FIRST[c.room[p]] + lowest_bit(pending_mask(c))
        owner = c.space_owner[s] == p
        best = -1e9
        for i in range(n):                   # A7: the breed
            if legal[i] == ACT_NO_SPROUT:
                continue
            b = legal[i] - ACT_SPROUT
            value = B_VP[b] if owner else -B_VP[b]
            if value > best:
                best = value
                choice = legal[i]
        if choice >= 0:
            return choice
        return legal[rng_below(rng, n)]
    if c.stage == STAGE_OBSERVE:
        return legal[1]                      # the lowest own flower: in turn, all of them
    return legal[rng_below(rng, n)]


cdef void k_rebuild(uint8_t* buf) noexcept nogil:
    """The derived cache from the core."""
    cdef LabState* st = <LabState*>buf
    cdef int p
    for p in range(MAX_SEATS):
        st.held[p] = kinds_in(st.core.hand[p])
        st.draw_total[p] = zone_total(st.core.draw[p])
    clear_memory(&st.core)                  # not a search's world: search_actions prunes nothing
    st.ordered = 0


include "features.pxi"  # value-model features
include "hortus/_ext/playout.pxi"  # k_playout: the fused playout loop

cdef GameKernel KERNEL
KERNEL.state_bytes = sizeof(LabState)
KERNEL.core_bytes = sizeof(LabCore)
KERNEL.num_distinct_actions = NUM_ACTIONS
KERNEL.max_players = MAX_SEATS
KERNEL.max_legal_actions = MAX_LEGAL
KERNEL.max_game_length = 60000
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
KERNEL.search_actions = k_search_actions
KERNEL.num_features = FEATURE_COUNT
KERNEL.features = k_features


def kernel_capsule():
    if not LOADED:
        raise RuntimeError("botanical_lab components are not loaded")
    return kernel_to_capsule(&KERNEL)


def core_size():
    return sizeof(LabCore)


def action_bases():
    """The action layout, for the Python notation."""
    return {
        "end": ACT_END, "experiment": ACT_EXPERIMENT, "skill": ACT_SKILL, "acquire": ACT_ACQUIRE,
        "move": ACT_MOVE, "seed": ACT_SEED, "fertilize": ACT_FERTILIZE, "sprout": ACT_SPROUT,
        "no_sprout": ACT_NO_SPROUT, "observe": ACT_OBSERVE, "start": ACT_START, "draw": ACT_DRAW,
        "num_actions": NUM_ACTIONS, "max_spaces": MAX_SPACES, "max_kinds": MAX_KINDS,
    }


# --- Python views of the core (whole structs are copied; no pointer ever escapes) --------------
def core_to_dict(const uint8_t[::1] data):
    """The core fields of serialized core bytes as a dict of ints and lists."""
    if data.shape[0] != sizeof(LabCore):
        raise ValueError("wrong core size")
    cdef LabCore c
    memcpy(&c, &data[0], sizeof(LabCore))
    cdef int p, k
    return {
        "players": c.players, "stage": c.stage, "resume": c.resume,
        "turn_player": c.turn_player, "start_player": c.start_player,
        "final_round": c.final_round, "draw_seat": c.draw_seat,
        "draws_pending": c.draws_pending, "draw_mode": c.draw_mode, "acquired": c.acquired,
        "spent": c.spent, "growth_breeds": c.growth_breeds,
        "growth_pending": c.growth_pending[0] | (c.growth_pending[1] << 8),
        "acquire_mode": c.acquire_mode, "track_seed_breed": c.track_seed_breed,
        "seed_set_scope": c.seed_set_scope,
        "vp": [c.vp_low[p] | (c.vp_high[p] << 8) for p in range(MAX_SEATS)],
        "room": [c.room[p] for p in range(MAX_SEATS)],
        "markers_free": [c.markers_free[p] for p in range(MAX_SEATS)],
        "hand": [[c.hand[p][k] for k in range(MAX_KINDS)] for p in range(MAX_SEATS)],
        "draw": [[c.draw[p][k] for k in range(MAX_KINDS)] for p in range(MAX_SEATS)],
        "discard": [[c.discard[p][k] for k in range(MAX_KINDS)] for p in range(MAX_SEATS)],
        "play": [[c.play[p][k] for k in range(MAX_KINDS)] for p in range(MAX_SEATS)],
        "known": [[c.known[p][k] for k in range(MAX_KINDS)] for p in range(MAX_SEATS)],
        "aside": [c.aside[k] for k in range(MAX_KINDS)],
        "stock": [c.stock[k] for k in range(MAX_KINDS)],
        "plant_stock": [c.plant_stock[k] for k in range(N_BREEDS)],
        "space_status": [c.space_status[k] for k in range(MAX_SPACES)],
        "space_owner": [c.space_owner[k] for k in range(MAX_SPACES)],
        "space_breed": [c.space_breed[k] for k in range(MAX_SPACES)],
        "space_step": [c.space_step[k] for k in range(MAX_SPACES)],
    }


def dict_to_core(dict d):
    """Serialized core bytes from a dict shaped like core_to_dict's (values are range-checked by
    the caller; a value that does not fit a byte raises OverflowError here)."""
    cdef LabCore c
    cdef int p, k
    memset(&c, 0, sizeof(LabCore))
    c.players = d["players"]; c.stage = d["stage"]; c.resume = d["resume"]
    c.turn_player = d["turn_player"]; c.start_player = d["start_player"]
    c.final_round = d["final_round"]; c.draw_seat = d["draw_seat"]
    c.draws_pending = d["draws_pending"]; c.draw_mode = d["draw_mode"]
    c.acquired = d["acquired"]; c.spent = d["spent"]; c.growth_breeds = d["growth_breeds"]
    if not 0 <= d["growth_pending"] <= 0xFFFF:
        raise OverflowError("growth_pending")
    c.growth_pending[0] = d["growth_pending"] & 0xFF
    c.growth_pending[1] = d["growth_pending"] >> 8
    c.acquire_mode = d["acquire_mode"]; c.track_seed_breed = d["track_seed_breed"]
    c.seed_set_scope = d["seed_set_scope"]
    for p in range(MAX_SEATS):
        if not 0 <= d["vp"][p] <= 0xFFFF:
            raise OverflowError("vp")
        c.vp_low[p] = d["vp"][p] & 0xFF
        c.vp_high[p] = d["vp"][p] >> 8
        c.room[p] = d["room"][p]
        c.markers_free[p] = d["markers_free"][p]
        for k in range(MAX_KINDS):
            c.hand[p][k] = d["hand"][p][k]
            c.draw[p][k] = d["draw"][p][k]
            c.discard[p][k] = d["discard"][p][k]
            c.play[p][k] = d["play"][p][k]
            c.known[p][k] = d["known"][p][k]
    for k in range(MAX_KINDS):
        c.aside[k] = d["aside"][k]
        c.stock[k] = d["stock"][k]
    for k in range(N_BREEDS):
        c.plant_stock[k] = d["plant_stock"][k]
    for k in range(MAX_SPACES):
        c.space_status[k] = d["space_status"][k]
        c.space_owner[k] = d["space_owner"][k]
        c.space_breed[k] = d["space_breed"][k]
        c.space_step[k] = d["space_step"][k]
    return (<char*>&c)[:sizeof(LabCore)]


def sprout_choice(const uint8_t[::1] data):
    """For notation and validation: (space id, breed option mask, may stay prepared) of the
    pending sprout decision of a SPROUT-stage core whose fields were range-checked."""
    cdef LabCore c
    cdef int skip_ok, options
    if data.shape[0] != sizeof(LabCore):
        raise ValueError("wrong core size")
    memcpy(&c, &data[0], sizeof(LabCore))
    if c.stage != STAGE_SPROUT or pending_mask(&c) == 0:
        raise ValueError("not a sprout decision")
    options = sprout_options(&c, &skip_ok)
    return ROOM_FIRST[c.room[c.turn_player]] + lowest_bit(pending_mask(&c)), options, bool(skip_ok)
