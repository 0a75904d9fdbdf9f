# cython: language_level=3
"""Botanik rules over a flat BotanikState buffer: the GameKernel of botanik.

Section names follow botanik.decisions.md (K-S setup, K-P phases, K-T playing a tile, K-F/K-M
machine, K-MB Meca-Botanist, K-SC scoring, A# resolutions). Tile geometry and flowers are
data (components.toml), copied into the static tables below by ``load_components``.

Action ids (decisions.md 6.1):
  D_REG   0x0000 | slot<<4 | centre<<3 | column    take arrival `slot`, own side or stack
  D_MACH  0x4000 | (x+32)<<8 | (y+32)<<2 | r      put the pending tile in the machine
  D_MECA  0x8000 | column                          exchange the freed Meca for a stack top
  D_ORDER 0xC000 | k                               resolve pending item k first (K-MB5, A10)
  DRAW    0xD000 | kind                            chance: a tile of that kind is drawn
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memset, memcpy, memmove

from hortus._ext.kernel cimport GameKernel, CHANCE, TERMINAL, kernel_to_capsule
from hortus._ext.rng cimport Rng, rng_below, rng_next
from hortus._ext.bits cimport pop64
from hortus.games.botanik.kernel cimport *

cdef extern from *:
    """
    static inline int bk_ctz64(uint64_t x) { return __builtin_ctzll(x); }
    static uint8_t bk_sel8[256][8];   /* bk_sel8[byte][r]: the r-th set bit of byte */
    /* Position of the r-th (from 0) set bit of x; r < popcount(x). Broadword: byte prefix
       counts by one multiplication, the byte by comparing all eight at once, then the bit. */
    static inline int bk_select64(uint64_t x, int r) {
        const uint64_t L8 = 0x0101010101010101ULL, H8 = 0x8080808080808080ULL;
        uint64_t s = x - ((x >> 1) & 0x5555555555555555ULL);
        s = (s & 0x3333333333333333ULL) + ((s >> 2) & 0x3333333333333333ULL);
        s = ((s + (s >> 4)) & 0x0F0F0F0F0F0F0F0FULL) * L8;     /* byte k: bits in bytes 0..k */
        int b = (int)(((((((uint64_t)r * L8) | H8) - s) & H8) >> 7) * L8 >> 56);  /* bytes with count <= r */
        unsigned int byte = (unsigned int)(x >> (8 * b)) & 0xFF;
        r -= (int)(((s << 8) >> (8 * b)) & 0xFF);
        return 8 * b + bk_sel8[byte][r];
    }
    static void bk_init_sel8(void) {
        int x, r, y;
        for (x = 0; x < 256; x++)
            for (r = 0, y = x; y; r++, y &= y - 1)
                bk_sel8[x][r] = (uint8_t)__builtin_ctz(y);
    }
    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* Every byte equal to `from` in p[0 .. 16*n16) becomes `to`. */
    static inline void bk_replace_bytes(uint8_t* p, int n16, uint8_t from, uint8_t to) {
        const __m128i f = _mm_set1_epi8((char)from), t = _mm_set1_epi8((char)to);
        int i;
        for (i = 0; i < n16; i++) {
            __m128i v = _mm_loadu_si128((const __m128i*)(p + 16 * i));
            __m128i eq = _mm_cmpeq_epi8(v, f);
            _mm_storeu_si128((__m128i*)(p + 16 * i), _mm_or_si128(_mm_andnot_si128(eq, v), _mm_and_si128(eq, t)));
        }
    }
    /* Index of the first x in p[0 .. n), or -1; reads p up to the next multiple of 8. */
    static inline int bk_find_u16(const uint16_t* p, int n, uint16_t x) {
        const __m128i v = _mm_set1_epi16((short)x);
        int i, m, k;
        for (i = 0; i < n; i += 8) {
            m = _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i*)(p + i)), v));
            if (m) {
                k = i + (__builtin_ctz(m) >> 1);
                return k < n ? k : -1;
            }
        }
        return -1;
    }
    /* out[col] = own[col] where bit col of `mine` is set, minus opp[col] where bit col of
       `theirs` is set, for the eight 16-bit lanes at once. */
    static inline void bk_masked_diff8(const int16_t* own, const int16_t* opp, int mine, int theirs,
                                       int16_t* out) {
        const __m128i lane_bit = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
        __m128i m = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16((short)mine), lane_bit), lane_bit);
        __m128i t = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16((short)theirs), lane_bit), lane_bit);
        __m128i v = _mm_sub_epi16(_mm_and_si128(m, _mm_loadu_si128((const __m128i*)own)),
                                  _mm_and_si128(t, _mm_loadu_si128((const __m128i*)opp)));
        _mm_storeu_si128((__m128i*)out, v);
    }
    /* The registry's five stack options of one arrival tile at once (policy_registry): lane col
       scores own[col] where bit col of `mine` is set, minus opp[col] where bit col of `theirs`
       is set, plus bits 3 col .. 3 col + 2 of noise15. The first lane with the highest score
       becomes the best option (act | col) if that score beats *best_score, as five strict
       comparisons in column order would decide; returns the best option. */
    static inline int bk_best_stack(const int16_t* own, const int16_t* opp, int mine, int theirs,
                                    int noise15, int act, int* best_score, int best) {
        const __m128i lane_bit = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
        /* lane col: noise15 << (13 - 3 col), so its three bits end up on top (bits 13-15) */
        const __m128i noise_shift = _mm_setr_epi16(1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 1, 0, 0, 0);
        const __m128i no_option = _mm_setr_epi16(0, 0, 0, 0, 0, -32768, -32768, -32768);
        __m128i m = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16((short)mine), lane_bit), lane_bit);
        __m128i t = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16((short)theirs), lane_bit), lane_bit);
        __m128i v = _mm_sub_epi16(_mm_and_si128(m, _mm_loadu_si128((const __m128i*)own)),
                                  _mm_and_si128(t, _mm_loadu_si128((const __m128i*)opp)));
        __m128i n = _mm_srli_epi16(_mm_mullo_epi16(_mm_set1_epi16((short)noise15), noise_shift), 13);
        __m128i top;
        int score, col, better;
        v = _mm_or_si128(_mm_add_epi16(v, n), no_option);   /* lanes 5-7 are 0 before */
        top = _mm_max_epi16(v, _mm_shuffle_epi32(v, 0x4E));
        top = _mm_max_epi16(top, _mm_shuffle_epi32(top, 0xB1));
        top = _mm_max_epi16(top, _mm_shufflelo_epi16(top, 0xB1));
        score = (int)(int16_t)_mm_cvtsi128_si32(top);
        col = __builtin_ctz((unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi16(v, _mm_set1_epi16((short)score)))) >> 1;
        better = score > *best_score;
        *best_score = better ? score : *best_score;
        return better ? (act | col) : best;
    }
    /* out[0..8) = k * v[0..8). */
    static inline void bk_scale8(const uint8_t* v, int k, int16_t* out) {
        const __m128i x = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i*)v), _mm_setzero_si128());
        _mm_storeu_si128((__m128i*)out, _mm_mullo_epi16(x, _mm_set1_epi16((short)k)));
    }
    /* Bit j set when byte p[j] (j < 16) has any of the bits of `bits` set. */
    static inline int bk_any_bits16(const uint8_t* p, uint8_t bits) {
        const __m128i b = _mm_set1_epi8((char)bits);
        __m128i v = _mm_and_si128(_mm_loadu_si128((const __m128i*)p), b);
        return 0xFFFF & ~_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));
    }
    /* Bit i set when any of the four bytes p[4i .. 4i+3] (i < 4 * n16) equals x. */
    static inline uint64_t bk_quads_with(const uint8_t* p, int n16, uint8_t x) {
        const __m128i v = _mm_set1_epi8((char)x);
        uint64_t out = 0;
        unsigned int q;
        int i;
        for (i = 0; i < n16; i++) {
            q = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(p + 16 * i)), v));
            q |= q >> 1;
            q |= q >> 2;
            out |= (uint64_t)((((q & 0x1111u) * 0x1248u) >> 12) & 0xFu) << (4 * i);
        }
        return out;
    }
    static inline void bk_move16(uint8_t* dst, const uint8_t* src) {
        _mm_storeu_si128((__m128i*)dst, _mm_loadu_si128((const __m128i*)src));
    }
    /* Frontier cell k of n leaves the four frontier arrays (front, 2 bytes a cell; mask, 1;
       nb, 4; colours, 4), the later cells moving down one place, sixteen cells at a time in
       one loop, each 16-byte chunk read before anything is written below it. The last round
       may move up to 15 cells past the end (the caller keeps that inside the arrays), copying
       the zeros kept there. */
    static inline void bk_drop_front(uint8_t* front, uint8_t* mask, uint8_t* nb, uint8_t* colours,
                                     int k, int n) {
        int i, j;
        for (i = k; i < n - 1; i += 16) {
            bk_move16(mask + i, mask + i + 1);
            bk_move16(front + 2 * i, front + 2 * i + 2);
            bk_move16(front + 2 * i + 16, front + 2 * i + 18);
            for (j = 0; j < 64; j += 16) {
                bk_move16(nb + 4 * i + j, nb + 4 * i + 4 + j);
                bk_move16(colours + 4 * i + j, colours + 4 * i + 4 + j);
            }
        }
    }
    #else
    static inline uint64_t bk_quads_with(const uint8_t* p, int n16, uint8_t x) {
        uint64_t out = 0;
        int i;
        for (i = 0; i < 16 * n16; i++) if (p[i] == x) out |= (uint64_t)1 << (i >> 2);
        return out;
    }
    static inline int bk_any_bits16(const uint8_t* p, uint8_t bits) {
        int j, m = 0;
        for (j = 0; j < 16; j++) if (p[j] & bits) m |= 1 << j;
        return m;
    }
    static inline void bk_replace_bytes(uint8_t* p, int n16, uint8_t from, uint8_t to) {
        int i;
        for (i = 0; i < 16 * n16; i++) if (p[i] == from) p[i] = to;
    }
    static inline int bk_find_u16(const uint16_t* p, int n, uint16_t x) {
        int i;
        for (i = 0; i < n; i++) if (p[i] == x) return i;
        return -1;
    }
    static inline void bk_masked_diff8(const int16_t* own, const int16_t* opp, int mine, int theirs,
                                       int16_t* out) {
        int j;
        for (j = 0; j < 8; j++)
            out[j] = (int16_t)((((mine >> j) & 1) ? own[j] : 0) - (((theirs >> j) & 1) ? opp[j] : 0));
    }
    static inline void bk_scale8(const uint8_t* v, int k, int16_t* out) {
        int j;
        for (j = 0; j < 8; j++) out[j] = (int16_t)(k * v[j]);
    }
    static inline int bk_best_stack(const int16_t* own, const int16_t* opp, int mine, int theirs,
                                    int noise15, int act, int* best_score, int best) {
        int col, score;
        for (col = 0; col < 5; col++) {
            score = ((mine >> col) & 1 ? own[col] : 0) - ((theirs >> col) & 1 ? opp[col] : 0)
                    + ((noise15 >> (3 * col)) & 7);
            if (score > *best_score) {
                *best_score = score;
                best = act | col;
            }
        }
        return best;
    }
    static inline void bk_drop_front(uint8_t* front, uint8_t* mask, uint8_t* nb, uint8_t* colours,
                                     int k, int n) {
        memmove(front + 2 * k, front + 2 * k + 2, (size_t)(2 * (n - k - 1)));
        memmove(mask + k, mask + k + 1, (size_t)(n - k - 1));
        memmove(nb + 4 * k, nb + 4 * k + 4, (size_t)(4 * (n - k - 1)));
        memmove(colours + 4 * k, colours + 4 * k + 4, (size_t)(4 * (n - k - 1)));
    }
    #endif
    """
    int bk_ctz64(uint64_t x) noexcept nogil
    int bk_select64(uint64_t x, int r) noexcept nogil
    void bk_init_sel8() noexcept nogil
    void bk_replace_bytes(uint8_t* p, int n16, uint8_t frm, uint8_t to) noexcept nogil
    int bk_find_u16(const uint16_t* p, int n, uint16_t x) noexcept nogil
    int bk_any_bits16(const uint8_t* p, uint8_t bits) noexcept nogil
    uint64_t bk_quads_with(const uint8_t* p, int n16, uint8_t x) noexcept nogil
    void bk_masked_diff8(const int16_t* own, const int16_t* opp, int mine, int theirs,
                         int16_t* out) noexcept nogil
    void bk_scale8(const uint8_t* v, int k, int16_t* out) noexcept nogil
    int bk_best_stack(const int16_t* own, const int16_t* opp, int mine, int theirs, int noise15,
                      int act, int* best_score, int best) noexcept nogil
    void bk_drop_front(uint8_t* front, uint8_t* mask, uint8_t* nb, uint8_t* colours, int k,
                       int n) noexcept nogil

bk_init_sel8()

cdef enum:
    ACT_REG = 0x0000
    ACT_MACH = 0x4000
    ACT_MECA = 0x8000
    ACT_ORDER = 0xC000
    ACT_DRAW = 0xD000
    NUM_ACTIONS = 0xD000 + 128
    MAX_LEGAL = 1024
    CLOSURE_OPEN_END = 0
    CLOSURE_NO_CYCLES = 1
    CLOSURE_BOTH = 2
    DEC_NONE = 0
    DEC_MACH = 1
    DEC_MECA = 2
    DEC_ORDER = 3

# --- static component tables (filled once by load_components) ------------------------------
cdef uint8_t T_COLOUR[67]       # colour index; 255 for the Sources (A13)
# A tile's bits in front_colours for a neighbour on side 0 (shifted by the side): 1 << 4 *
# colour, none for the Sources.
cdef uint32_t T_COLOUR_SIDE[67]
cdef uint8_t T_TYPE[67]         # tile type index; 255 for the Sources
cdef uint8_t T_KIND[67]         # lowest id of the identical tiles (interchangeable copies)
cdef uint8_t T_FLOWERS[67]
cdef uint8_t T_NEEDS_LINK[67]   # K-SC3: flowers need a direct same-colour pipe link
cdef uint8_t T_MECA[67]         # K-MB2: exchanged when freed
cdef uint8_t T_EXITS[67][4]     # exit mask per rotation
cdef uint8_t T_CONDUIT[67][4][4]  # [tile][rotation][side] -> conduit index or EMPTY
cdef uint8_t T_QMASK[67][4][4]  # [tile][rotation][conduit] -> mask of the conduit's sides
cdef uint8_t T_NCOND[67]        # conduits per tile (T_QMASK entries in use)
cdef uint8_t T_NROT[67]         # distinct orientations (A3)
cdef uint8_t T_ROTS[67][4]      # the canonical rotation of each distinct orientation
# K-T2(b) as bit sets: a bit for the colour and one for the type (the Sources' 255 each get
# one too), so two tiles link exactly when their masks share a bit.
cdef uint32_t T_LINK[67]
cdef uint8_t T_LBIT[67][2]      # the two bits of T_LINK[t]
cdef uint8_t KINDS[65]          # the distinct kinds (their lowest ids), ascending
cdef int N_KINDS = 0
cdef uint8_t POOL_POS[65]       # a tile's bit in pool_bits: tiles ordered by kind, then id
cdef uint8_t POOL_TILE[65]      # the inverse
cdef uint8_t POOL_KIND[65]      # the kind (lowest id) of the tile at each pool bit
cdef uint64_t KIND_BITS[65][2]  # a kind's copies in pool_bits (indexed by the kind's lowest id)
# ROT_FIT[t][occ | pipe << 4]: bit k set when the k-th distinct orientation of t (T_ROTS[t][k])
# fits a cell whose occupied sides are occ and whose facing pipes are pipe, K-M1(2): a pipe
# exactly where a neighbour's pipe faces the cell.
cdef uint8_t ROT_FIT[67][256]
cdef bint LOADED = False

# rebuild_machine lays the machine out on a board of its own (the cache holds no board):
# board[(x+33)*GSTRIDE + y+32] is 0 for an empty cell, else machine index + 1. The empty
# border means a neighbour lookup never needs a bounds check: off the grid reads as empty.
cdef enum:
    GSTRIDE = 65           # board row length: 64 cells + 1 empty cell of padding
    GRID_CELLS = 4290      # 66 rows (64 + an empty row on either side) x GSTRIDE

cdef int DX[4]
cdef int DY[4]
cdef int NB[4]                  # board index offset of the neighbouring cell on each side
DX[:] = [0, 1, 0, -1]   # N E S W, y grows downwards
DY[:] = [-1, 0, 1, 0]
NB[:] = [-1, GSTRIDE, 1, -GSTRIDE]
cdef uint8_t POPC4[16]          # bits set in a 4-bit mask
POPC4[:] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4]


def load_components(list colour, list ttype, list flowers, list needs_link, list meca,
                    list conduits):
    """Fill the static tables. conduits[t] is a list of side lists at rotation 0 (0=N..3=W).
    Called once at import by components.py after validating the data file."""
    global LOADED
    cdef int t, r, d, q, k, u, masks
    cdef uint8_t seen[4]
    for t in range(N_TILES):
        T_COLOUR[t] = colour[t]
        if T_COLOUR[t] != 255 and T_COLOUR[t] >= 8:
            raise ValueError("front_colours holds four sides of eight colours at most")
        T_COLOUR_SIDE[t] = (<uint32_t>1) << (4 * T_COLOUR[t]) if T_COLOUR[t] != 255 else 0
        T_TYPE[t] = ttype[t]
        T_FLOWERS[t] = flowers[t]
        T_NEEDS_LINK[t] = needs_link[t]
        T_MECA[t] = meca[t]
        T_LINK[t] = (((<uint32_t>1) << T_COLOUR[t]) if T_COLOUR[t] < 16 else ((<uint32_t>1) << 30)) | \
            (((<uint32_t>1) << (16 + T_TYPE[t])) if T_TYPE[t] < 14 else ((<uint32_t>1) << 31))
        T_LBIT[t][0] = T_COLOUR[t] if T_COLOUR[t] < 16 else 30
        T_LBIT[t][1] = 16 + T_TYPE[t] if T_TYPE[t] < 14 else 31
        T_NCOND[t] = len(conduits[t])
        for r in range(4):
            T_EXITS[t][r] = 0
            for d in range(4):
                T_CONDUIT[t][r][d] = EMPTY
                T_QMASK[t][r][d] = 0
            for q, sides in enumerate(conduits[t]):
                for d in sides:
                    T_EXITS[t][r] |= 1 << ((d + r) % 4)
                    T_CONDUIT[t][r][(d + r) % 4] = q
                    T_QMASK[t][r][q] |= 1 << ((d + r) % 4)
        # Distinct orientations: rotation r is kept unless an earlier one joins sides alike.
        T_NROT[t] = 0
        for r in range(4):
            u = 0
            for k in range(T_NROT[t]):
                if _same_orientation(t, T_ROTS[t][k], r):
                    u = 1
                    break
            if not u:
                T_ROTS[t][T_NROT[t]] = r
                T_NROT[t] += 1
    for t in range(N_TILES):
        for masks in range(256):
            ROT_FIT[t][masks] = 0
            for k in range(T_NROT[t]):
                if (T_EXITS[t][T_ROTS[t][k]] & (masks & 15)) == (masks >> 4):
                    ROT_FIT[t][masks] |= 1 << k
    global N_KINDS
    N_KINDS = 0
    for t in range(N_TILES):
        T_KIND[t] = t
        for u in range(t):
            if (T_COLOUR[u] == T_COLOUR[t] and T_TYPE[u] == T_TYPE[t]
                    and T_FLOWERS[u] == T_FLOWERS[t]):
                T_KIND[t] = u
                break
        if t < N_COLOURED and T_KIND[t] == t:
            KINDS[N_KINDS] = t
            N_KINDS += 1
    u = 0
    for k in range(N_KINDS):
        KIND_BITS[KINDS[k]][0] = 0
        KIND_BITS[KINDS[k]][1] = 0
        for t in range(N_COLOURED):
            if T_KIND[t] == KINDS[k]:
                POOL_POS[t] = u
                POOL_TILE[u] = t
                POOL_KIND[u] = KINDS[k]
                KIND_BITS[KINDS[k]][u >> 6] |= (<uint64_t>1) << (u & 63)
                u += 1
    fill_open_score()
    LOADED = True


cdef bint _same_orientation(int t, int a, int b) noexcept:
    """Two rotations are the same orientation when their sides are joined alike."""
    cdef int d, e
    if T_EXITS[t][a] != T_EXITS[t][b]:
        return False
    for d in range(4):
        for e in range(4):
            if ((T_CONDUIT[t][a][d] != EMPTY and T_CONDUIT[t][a][d] == T_CONDUIT[t][a][e])
                    != (T_CONDUIT[t][b][d] != EMPTY and T_CONDUIT[t][b][d] == T_CONDUIT[t][b][e])):
                return False
    return True


cdef inline bint links(int a, int b) noexcept nogil:
    """K-T2(b): same colour or same type (Plant and Vegetable are different types)."""
    return (T_LINK[a] & T_LINK[b]) != 0


cdef inline int opposite(int d) noexcept nogil:
    return (d + 2) & 3


cdef inline int grid_index(int gx, int gy) noexcept nogil:
    """Board index of cell (gx, gy), both 0..63 (coordinates + GRID_OFFSET)."""
    return (gx + 1) * GSTRIDE + gy


# --- machine cache --------------------------------------------------------------------------
cdef int _find(int* parent, int x) noexcept nogil:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef int board_masks(const uint8_t* board, const uint8_t* exits, int g) noexcept nogil:
    """occ | pipe << 4 for an empty board cell: the sides with a tile, and those with a pipe
    facing it."""
    cdef int d, v, occ = 0, pipe = 0
    for d in range(4):
        v = board[g + NB[d]]
        if v:
            occ |= 1 << d
            if (exits[v - 1] >> opposite(d)) & 1:
                pipe |= 1 << d
    return occ | (pipe << 4)


cdef void rebuild_machine(BotanikState* s, int p) noexcept nogil:
    """Recompute seat p's exits, neighbours, pipe components and frontier from the core (the
    cache must already be zeroed). add_to_machine keeps the same fields up to date
    incrementally."""
    cdef BotanikCore* c = &s.core
    cdef MachineCache* m = &s.cache[p]
    cdef int n = c.n_tiles[p]
    cdef int i, j, d, g, nx, ny, a, b, label
    cdef int parent[160]
    cdef int relabel[160]
    cdef int cell[40]
    cdef uint64_t seen[64]
    cdef uint8_t board[GRID_CELLS]
    memset(board, 0, sizeof(board))
    for i in range(n):
        g = grid_index(c.m_x[p][i] + GRID_OFFSET, c.m_y[p][i] + GRID_OFFSET)
        board[g] = i + 1
        cell[i] = g
        m.exits[i] = T_EXITS[c.m_id[p][i]][c.m_rot[p][i]]
    for i in range(n):
        for d in range(4):
            m.nb[i][d] = board[cell[i] + NB[d]]
    for i in range(n):
        for d in range(4):
            j = m.nb[i][d] - 1
            if j >= 0 and T_COLOUR[c.m_id[p][j]] == T_COLOUR[c.m_id[p][i]] != 255:
                m.same[i] |= 1 << d
                if (m.exits[i] >> d) & 1 and (m.exits[j] >> opposite(d)) & 1:
                    m.same[i] |= 1 << (4 + d)
    # Pipe components: union-find over the conduits that meet pipe to pipe across an edge.
    for i in range(n * 4):
        parent[i] = i
        relabel[i] = -1
    for i in range(n):
        for d in range(4):
            if not (m.exits[i] >> d) & 1:
                continue
            j = m.nb[i][d] - 1
            if j >= 0 and (m.exits[j] >> opposite(d)) & 1:
                a = _find(parent, i * 4 + T_CONDUIT[c.m_id[p][i]][c.m_rot[p][i]][d])
                b = _find(parent, j * 4 + T_CONDUIT[c.m_id[p][j]][c.m_rot[p][j]][opposite(d)])
                if a != b:
                    parent[a] = b
    # Label = the first side slot met in index order, i.e. the smallest in the component.
    for i in range(n):
        for d in range(4):
            m.comp[i][d] = EMPTY
            if not (m.exits[i] >> d) & 1:
                continue
            a = _find(parent, i * 4 + T_CONDUIT[c.m_id[p][i]][c.m_rot[p][i]][d])
            if relabel[a] < 0:
                relabel[a] = i * 4 + d
            label = relabel[a]
            m.comp[i][d] = label
            if m.nb[i][d] == 0:
                m.comp_open[label] += 1
    # Frontier in discovery order.
    memset(seen, 0, sizeof(seen))
    m.n_front = 0
    for i in range(n):
        for d in range(4):
            nx = c.m_x[p][i] + GRID_OFFSET + DX[d]
            ny = c.m_y[p][i] + GRID_OFFSET + DY[d]
            if 0 <= nx < GRID and 0 <= ny < GRID and m.nb[i][d] == 0:
                if not (seen[nx] >> ny) & 1 and m.n_front < MAX_FRONT:
                    seen[nx] |= (<uint64_t>1) << ny
                    m.front[m.n_front] = (nx << 6) | ny
                    m.n_front += 1
    for i in range(m.n_front):
        g = grid_index(m.front[i] >> 6, m.front[i] & 63)
        m.front_mask[i] = board_masks(board, m.exits, g)
        for d in range(4):
            m.front_nb[i][d] = board[g + NB[d]]
            if m.front_nb[i][d]:
                m.front_colours[i] |= T_COLOUR_SIDE[c.m_id[p][m.front_nb[i][d] - 1]] << d


cdef void add_to_machine(BotanikState* s, int p, int tile, int gx, int gy, int r) noexcept nogil:
    """Build `tile` at (gx, gy) rotation r (a legal placement, so a frontier cell) and update
    the cache the way rebuild_machine would compute it: neighbours, frontier, and the pipe
    components (a conduit of the new tile joins the components it links, keeping the smallest
    label)."""
    cdef BotanikCore* c = &s.core
    cdef MachineCache* m = &s.cache[p]
    cdef int i = c.n_tiles[p]
    cdef int e = T_EXITS[tile][r]
    cdef int d, k, q, v, nx, ny, qm, label, old, n_old, side, tail, occ, pipe, sides
    cdef int olds[4]
    cdef uint8_t around[4]
    cdef int xy = (gx << 6) | gy
    c.m_id[p][i] = tile
    c.m_x[p][i] = gx - GRID_OFFSET
    c.m_y[p][i] = gy - GRID_OFFSET
    c.m_rot[p][i] = r
    c.n_tiles[p] = i + 1
    c.status[tile] = AT_MACHINE
    m.exits[i] = e
    # The cell leaves the frontier, handing over its neighbours and their sides: occupied
    # (occ) and with a pipe facing it (pipe, also the new tile's pipes there: K-M1(2)).
    k = bk_find_u16(m.front, m.n_front, xy)
    memcpy(around, m.front_nb[k], 4)
    occ = m.front_mask[k] & 15
    pipe = m.front_mask[k] >> 4
    if m.n_front <= MAX_FRONT - 16:
        # (the chunked copy stays inside the arrays; the frontier order is kept, the playout
        # samples over it)
        bk_drop_front(<uint8_t*>m.front, m.front_mask, &m.front_nb[0][0],
                      <uint8_t*>m.front_colours, k, m.n_front)
    else:
        tail = m.n_front - k - 1
        memmove(&m.front[k], &m.front[k + 1], tail * sizeof(uint16_t))
        memmove(&m.front_mask[k], &m.front_mask[k + 1], tail)
        memmove(&m.front_nb[k][0], &m.front_nb[k + 1][0], tail * 4)
        memmove(&m.front_colours[k], &m.front_colours[k + 1], tail * sizeof(uint32_t))
    m.n_front -= 1
    m.front[m.n_front] = 0
    m.front_mask[m.n_front] = 0
    m.front_colours[m.n_front] = 0
    memset(m.front_nb[m.n_front], 0, 4)
    memcpy(m.nb[i], around, 4)
    memset(m.comp[i], EMPTY, 4)
    # (Sides are visited as the bits of occ, pipe and the rest: which sides those are follows
    # no pattern, and a branch per side costs more than the work.)
    sides = occ
    while sides:
        d = bk_ctz64(sides)
        sides &= sides - 1
        v = around[d] - 1
        m.nb[v][opposite(d)] = i + 1
        # Branch-free: which neighbours share the tile's colour follows no pattern.
        k = (T_COLOUR[c.m_id[p][v]] == T_COLOUR[tile]) * (1 | ((pipe >> d) & 1) << 4)
        m.same[i] |= k << d
        m.same[v] |= k << opposite(d)
    sides = ~occ & 15
    while sides:
        d = bk_ctz64(sides)
        sides &= sides - 1
        nx = gx + DX[d]
        ny = gy + DY[d]
        if not (0 <= nx < GRID and 0 <= ny < GRID):
            continue
        # The empty neighbour's side facing the new tile is now occupied, with a pipe if e has
        # one there (what board_masks would find).
        side = (1 << opposite(d)) | (((e >> d) & 1) << (4 + opposite(d)))
        k = bk_find_u16(m.front, m.n_front, (nx << 6) | ny)
        if k >= 0:               # already beside another tile
            m.front_mask[k] |= side
            m.front_nb[k][opposite(d)] = i + 1
            m.front_colours[k] |= T_COLOUR_SIDE[tile] << opposite(d)
        elif m.n_front < MAX_FRONT:
            m.front[m.n_front] = (nx << 6) | ny
            m.front_mask[m.n_front] = side
            m.front_nb[m.n_front][opposite(d)] = i + 1
            m.front_colours[m.n_front] = T_COLOUR_SIDE[tile] << opposite(d)
            m.n_front += 1
    # Components: every pipe facing the new cell stops being an open end.
    sides = pipe
    while sides:
        d = bk_ctz64(sides)
        sides &= sides - 1
        m.comp_open[m.comp[around[d] - 1][opposite(d)]] -= 1
    for q in range(T_NCOND[tile]):
        qm = T_QMASK[tile][r][q]
        if qm == 0:
            continue
        label = i * 4 + bk_ctz64(qm)
        n_old = 0
        sides = qm & pipe
        while sides:
            d = bk_ctz64(sides)
            sides &= sides - 1
            old = m.comp[around[d] - 1][opposite(d)]
            for k in range(n_old):
                if olds[k] == old:
                    break
            else:
                olds[n_old] = old
                n_old += 1
                if old < label:
                    label = old
        # Merge the other linked components into the smallest label.
        for k in range(n_old):
            old = olds[k]
            if old == label:
                continue
            # (unused entries are 0 and never match: old > label >= 0)
            bk_replace_bytes(&m.comp[0][0], (i * 4 + 4 + 15) >> 4, old, label)
            m.comp_open[label] += m.comp_open[old]
            m.comp_open[old] = 0
        sides = qm
        while sides:
            d = bk_ctz64(sides)
            sides &= sides - 1
            m.comp[i][d] = label
        m.comp_open[label] += POPC4[qm & ~occ & 15]


cdef inline int network_comp(const MachineCache* m) noexcept nogil:
    """The pipe component of the Source (machine index 0)."""
    cdef int d
    for d in range(4):
        if m.comp[0][d] != EMPTY:
            return m.comp[0][d]
    return -1


cdef inline void cell_links(const MachineCache* m, int k, int pipe, int* linked) noexcept nogil:
    """The pipe component each side of frontier cell k links into (-1 where no pipe faces it):
    the same for every tile and rotation placed there."""
    cdef int d, v
    for d in range(4):
        # Branch-free: which sides a pipe faces follows no pattern. (A side with no tile reads
        # the Source's entry, index 0, and does not keep it.)
        v = m.front_nb[k][d]
        v = m.comp[v - (v != 0)][opposite(d)]
        linked[d] = v if (pipe >> d) & 1 else -1


cdef inline int network_sides(const int* linked, int net) noexcept nogil:
    """The sides whose linked component is the Source's network `net`."""
    cdef int d, net_mask = 0
    for d in range(4):
        if linked[d] == net:
            net_mask |= 1 << d
    return net_mask


cdef inline bint links_twice(int sides, const int* linked) noexcept nogil:
    """Whether two of `sides` (a mask of a cell's sides) link into one component: a cycle
    under no_cycles (A4). linked from cell_links."""
    cdef int d, k
    for d in range(4):
        if not (sides >> d) & 1:
            continue
        for k in range(d + 1, 4):
            if (sides >> k) & 1 and linked[k] == linked[d]:
                return True
    return False


cdef bint closure_ok(const MachineCache* m, int rule, int tile, int r, int occ, int pipe,
                     const int* linked, int net_mask) noexcept nogil:
    """K-M1(3), the closure rule (A4), for a placement whose pipes are consistent (K-M1(2))
    and link something (pipe != 0); linked and net_mask from cell_links and network_sides."""
    cdef int d, q, k, qm, lab, n_seen, delta
    cdef int seen[8]
    cdef bint joins
    if rule != CLOSURE_OPEN_END:
        # no_cycles: one conduit may not link twice into the same component.
        for q in range(T_NCOND[tile]):
            qm = T_QMASK[tile][r][q] & pipe
            if qm & (qm - 1) and links_twice(qm, linked):
                return False
    if rule == CLOSURE_NO_CYCLES:
        return True
    if net_mask == 0 or m.comp_open[linked[bk_ctz64(net_mask)]] > POPC4[net_mask]:
        return True            # joins nothing, or keeps an open end anyway (cell_closure_sure)
    # open_end: the Source's network must keep an open end. Conduits that link into it join
    # it, merging every other component they link; each link consumes one open end, and the
    # joining conduits' sides facing empty cells add new ones.
    n_seen = 0
    delta = 0
    joins = False
    for q in range(T_NCOND[tile]):
        qm = T_QMASK[tile][r][q]
        if not (qm & net_mask):
            continue
        joins = True
        delta += POPC4[qm & ~occ & 15] - POPC4[qm & pipe]
        for d in range(4):
            if (qm & pipe) >> d & 1:
                lab = linked[d]
                for k in range(n_seen):
                    if seen[k] == lab:
                        break
                else:
                    seen[n_seen] = lab
                    n_seen += 1
    if not joins:
        return True
    for k in range(n_seen):
        delta += m.comp_open[seen[k]]
    return delta >= 1


cdef uint32_t closure_fits(const MachineCache* m, int rule, int tile, uint32_t fits, int occ,
                           int pipe, const int* linked, int net_mask) noexcept nogil:
    """The orientations of `fits` (bit k: T_ROTS[tile][k]) the closure rule (A4) accepts on a
    frontier cell (closure_ok)."""
    cdef uint32_t ok = 0, left = fits
    cdef int k
    while left:
        k = bk_ctz64(left)
        left &= left - 1
        if closure_ok(m, rule, tile, T_ROTS[tile][k], occ, pipe, linked, net_mask):
            ok |= (<uint32_t>1) << k
    return ok


cdef inline bint cell_closure_sure(const MachineCache* m, int rule, int pipe, const int* linked,
                                   int net, int net_mask) noexcept nogil:
    """Whether the closure rule (A4) accepts every orientation that fits an empty cell with
    facing pipes `pipe` (linked and net_mask as for closure_ok, net the Source's network
    component), so closure_ok need not run
    per orientation. no_cycles: no two facing pipes belong to one component, so no conduit
    can link one twice. open_end: the cell touches no pipe of the Source's network, or that
    network keeps an open end whatever joins it: each link into a component consumes one of
    its open ends and none other, so the merged network keeps at least
    comp_open[net] - (links into net) of them."""
    if rule != CLOSURE_OPEN_END:
        if links_twice(pipe, linked):
            return False
        if rule == CLOSURE_NO_CYCLES:
            return True
    return (net_mask == 0) | (m.comp_open[net] > POPC4[net_mask])    # (no branch: no pattern)


cdef bint placement_ok(const MachineCache* m, int rule, int tile, int k, int r) noexcept nogil:
    """K-M1 for one candidate on frontier cell k: (2) pipe consistency and (3) the closure rule
    (A4)."""
    cdef int e = T_EXITS[tile][r]
    cdef int masks = m.front_mask[k]
    cdef int occ = masks & 15, pipe = masks >> 4
    cdef int linked[4]
    if (e & occ) != pipe:     # a pipe facing a blank side, or a blank side facing a pipe
        return False
    if pipe == 0:
        return True            # touches by blank sides only (K-M4): networks unchanged
    cell_links(m, k, pipe, linked)
    return closure_ok(m, rule, tile, r, occ, pipe, linked,
                      network_sides(linked, network_comp(m)) if rule != CLOSURE_NO_CYCLES else 0)


cdef int machine_placements(BotanikState* s, int p, int tile, int32_t* out) noexcept nogil:
    """Legal (cell, rotation) placements of `tile` in seat p's machine, ascending action ids."""
    cdef const MachineCache* m = &s.cache[p]
    cdef int rule = s.core.closure_rule
    cdef uint32_t order[MAX_FRONT]     # xy << 8 | frontier index, sorted by cell
    cdef uint32_t key
    cdef int i, j, k, r, n = 0, xy
    for i in range(m.n_front):
        key = (<uint32_t>m.front[i] << 8) | i
        j = i
        while j > 0 and order[j - 1] > key:
            order[j] = order[j - 1]
            j -= 1
        order[j] = key
    for i in range(m.n_front):
        xy = order[i] >> 8
        for k in range(T_NROT[tile]):
            r = T_ROTS[tile][k]
            if placement_ok(m, rule, tile, order[i] & 0xFF, r):
                if n < MAX_LEGAL:
                    out[n] = ACT_MACH | (xy << 2) | r
                    n += 1
    return n


cdef bint has_placement(BotanikState* s, int p, int tile) noexcept nogil:
    """K-M3: whether `tile` has any legal placement in seat p's machine (placement_ok per
    cell: ROT_FIT for pipe consistency, then the closure rule, at once when it is sure)."""
    cdef const MachineCache* m = &s.cache[p]
    cdef int rule = s.core.closure_rule
    cdef int net = network_comp(m)
    cdef int i, k, masks, pipe, net_mask = 0
    cdef uint32_t fits
    cdef int linked[4]
    for i in range(m.n_front):
        masks = m.front_mask[i]
        fits = ROT_FIT[tile][masks]
        if not fits:
            continue
        pipe = masks >> 4
        if pipe == 0:
            return True        # touches by blank sides only (K-M4)
        cell_links(m, i, pipe, linked)
        if rule != CLOSURE_NO_CYCLES:
            net_mask = network_sides(linked, net)
        if cell_closure_sure(m, rule, pipe, linked, net, net_mask):
            return True
        while fits:
            k = bk_ctz64(fits)
            fits &= fits - 1
            if closure_ok(m, rule, tile, T_ROTS[tile][k], masks & 15, pipe, linked, net_mask):
                return True
    return False


cdef int32_t sample_placement(BotanikState* s, int p, int tile, Rng* rng) noexcept nogil:
    """A uniformly random legal placement, by rejection: proposals are uniform over
    (frontier cell, distinct rotation) and the legal ones are a subset, so an accepted proposal
    is uniform over the legal placements. Falls back to listing them after a few misses."""
    cdef const MachineCache* m = &s.cache[p]
    cdef int rule = s.core.closure_rule
    cdef int32_t listed[MAX_LEGAL]
    cdef int attempt, pick, n, r
    cdef int n_rot = T_NROT[tile]
    cdef int n_cells = m.n_front
    for attempt in range(32):
        pick = rng_below(rng, n_cells * n_rot)
        r = T_ROTS[tile][pick % n_rot]
        if placement_ok(m, rule, tile, pick // n_rot, r):
            return ACT_MACH | (m.front[pick // n_rot] << 2) | r
    n = machine_placements(s, p, tile, listed)
    return listed[rng_below(rng, n)]


# --- registry ---------------------------------------------------------------------------------
cdef inline void set_top(BotanikState* s, int col, int tile) noexcept nogil:
    """Put `tile` on top of central stack `col` (top_cols follows)."""
    cdef int old = s.core.top[col]
    if old != EMPTY:
        s.top_cols[T_LBIT[old][0]] &= ~(1 << col)
        s.top_cols[T_LBIT[old][1]] &= ~(1 << col)
    s.top_cols[T_LBIT[tile][0]] |= 1 << col
    s.top_cols[T_LBIT[tile][1]] |= 1 << col
    s.core.top[col] = tile


# ---------------------------------------------------------------------------------
cdef inline void enqueue(BotanikCore* c, int p, int tile) noexcept nogil:
    c.queue[p][c.qlen[p]] = tile
    c.qlen[p] += 1
    c.status[tile] = AT_QUEUE


cdef inline int tile_value(int t) noexcept nogil:
    """What one more machine tile is worth to its owner, roughly (K-SC2/K-SC3): 2, plus its
    flowers."""
    return 2 + T_FLOWERS[t]


cdef inline void set_side(BotanikState* s, int p, int col, int tile) noexcept nogil:
    """Put `tile` (or EMPTY) on seat p's side of column `col` (side_cols, side_taken and
    side_value follow)."""
    cdef int old = s.core.side[p][col]
    if old != EMPTY:
        s.side_cols[p][T_LBIT[old][0]] &= ~(1 << col)
        s.side_cols[p][T_LBIT[old][1]] &= ~(1 << col)
        s.side_taken[p] &= ~(1 << col)
        s.side_value[p][col] = 0
    if tile != EMPTY:
        s.side_cols[p][T_LBIT[tile][0]] |= 1 << col
        s.side_cols[p][T_LBIT[tile][1]] |= 1 << col
        s.side_taken[p] |= 1 << col
        s.side_value[p][col] = tile_value(tile)
    s.core.side[p][col] = tile


cdef inline int frees(const BotanikState* s, int p, int tile) noexcept nogil:
    """K-T4: the columns whose seat-p side tile would be freed by `tile` on their stack (the
    side tiles that do not link with it, K-T2(b))."""
    return s.side_taken[p] & ~(s.side_cols[p][T_LBIT[tile][0]] | s.side_cols[p][T_LBIT[tile][1]])


cdef void free_check(BotanikState* s, int column) noexcept nogil:
    """K-T4: every side tile of the column that no longer links with the top is freed (K-F1),
    the turn player's first (A9)."""
    cdef BotanikCore* c = &s.core
    cdef int k, p, t
    for k in range(2):
        p = c.turn_player if k == 0 else 1 - c.turn_player
        t = c.side[p][column]
        if t != EMPTY and not links(t, c.top[column]):
            set_side(s, p, column, EMPTY)
            enqueue(c, p, t)


cdef inline int resolver(const BotanikCore* c) noexcept nogil:
    """A9: the turn player's pending items first, then the opponent's."""
    if c.qlen[c.turn_player]:
        return c.turn_player
    if c.qlen[1 - c.turn_player]:
        return 1 - c.turn_player
    return -1


cdef inline bint first_of_kind(const BotanikCore* c, int p, int k) noexcept nogil:
    """Whether pending item k is the first of its kind in seat p's queue (identical tiles are
    one choice: nothing tells them apart on the table)."""
    cdef int j
    for j in range(k):
        if T_KIND[c.queue[p][j]] == T_KIND[c.queue[p][k]]:
            return False
    return True


cdef int decision_kind(const BotanikCore* c, int p) noexcept nogil:
    cdef int head = c.queue[p][0]
    cdef int k
    if c.qlen[p] >= 2 and not c.order_locked[p]:
        # A10/K-MB5: the owner picks which pending item goes first, among all of them (up to
        # three after two exchanges), as soon as any two of them differ.
        for k in range(1, c.qlen[p]):
            if T_KIND[c.queue[p][k]] != T_KIND[head]:
                return DEC_ORDER
    if T_MECA[head]:
        return DEC_MECA
    return DEC_MACH


cdef inline void pop_head(BotanikCore* c, int p) noexcept nogil:
    cdef int k
    for k in range(c.qlen[p] - 1):
        c.queue[p][k] = c.queue[p][k + 1]
    c.qlen[p] -= 1
    c.queue[p][c.qlen[p]] = EMPTY
    c.order_locked[p] = 0


cdef bint meca_has_target(const BotanikCore* c) noexcept nogil:
    cdef int col
    for col in range(N_COLUMNS):
        if not T_MECA[c.top[col]]:
            return True
    return False


cdef inline void end_turn(BotanikState* s) noexcept nogil:
    """The turn is over: turns strictly alternate (K-P2); a phase ends after 3 tiles, and the
    game after the last phase (K-P4), when it is scored."""
    cdef BotanikCore* c = &s.core
    c.turn_player = 1 - c.turn_player
    if c.placed == N_ARRIVAL:
        c.phase += 1
        c.placed = 0
        c.holder = 1 - c.holder
        c.stage = STAGE_DRAW
        if c.phase == N_PHASES:
            c.stage = STAGE_OVER
            score_final(s)
    else:
        c.stage = STAGE_REGISTRY


cdef inline void advance(BotanikState* s) noexcept nogil:
    """Resolve forced steps until a decision, a chance node or the end (K-M3, A7, K-P3, K-P4).
    Most moves leave nothing pending, and then the turn just ends: that case is worked out
    here, in the caller, and the rest by resolve_pending."""
    cdef BotanikCore* c = &s.core
    if c.stage == STAGE_RESOLVE and (c.qlen[0] | c.qlen[1]) == 0:
        end_turn(s)
    else:
        resolve_pending(s)


cdef void resolve_pending(BotanikState* s) noexcept nogil:
    """advance, when items may be pending."""
    cdef BotanikCore* c = &s.core
    cdef int p, head
    while c.stage == STAGE_RESOLVE:
        p = resolver(c)
        if p < 0:
            end_turn(s)
            return
        if decision_kind(c, p) == DEC_ORDER:
            return
        head = c.queue[p][0]
        if T_MECA[head]:
            if meca_has_target(c):
                return
            c.status[head] = AT_REMOVED       # A7: every top is a Meca-Botanist
            pop_head(c, p)
        else:
            if has_placement(s, p, head):
                return
            c.status[head] = AT_REMOVED       # K-M3: no legal placement at all
            pop_head(c, p)


# --- kernel functions -------------------------------------------------------------------------
cdef int k_num_players(const uint8_t* buf) noexcept nogil:
    return 2


cdef int k_current_player(const uint8_t* buf) noexcept nogil:
    cdef const BotanikCore* c = &(<const BotanikState*>buf).core
    if c.stage == STAGE_DEAL or c.stage == STAGE_DRAW:
        return CHANCE
    if c.stage == STAGE_OVER:
        return TERMINAL
    if c.stage == STAGE_REGISTRY:
        return c.turn_player
    return resolver(c)


cdef int registry_options(const BotanikState* s, int* own) noexcept nogil:
    """K-T1 options of the turn player: the mask of arrival slots offered (identical tiles are
    one choice, the first slot standing for them) and, per offered slot, the mask of columns
    whose own side is free and whose top links with the tile (K-T2). The central stack takes
    any tile (K-T4)."""
    cdef const BotanikCore* c = &s.core
    cdef int p = c.turn_player
    cdef int col, slots = 0, free = 0
    cdef int a0 = c.arrival[0], a1 = c.arrival[1], a2 = c.arrival[2]
    free = ~s.side_taken[p] & ((1 << N_COLUMNS) - 1)
    own[0] = 0
    own[1] = 0
    own[2] = 0
    if a0 != EMPTY:
        slots = 1
        own[0] = (s.top_cols[T_LBIT[a0][0]] | s.top_cols[T_LBIT[a0][1]]) & free
    if a1 != EMPTY and not (a0 != EMPTY and T_KIND[a0] == T_KIND[a1]):
        slots |= 2
        own[1] = (s.top_cols[T_LBIT[a1][0]] | s.top_cols[T_LBIT[a1][1]]) & free
    if a2 != EMPTY and not (a0 != EMPTY and T_KIND[a0] == T_KIND[a2]) \
            and not (a1 != EMPTY and T_KIND[a1] == T_KIND[a2]):
        slots |= 4
        own[2] = (s.top_cols[T_LBIT[a2][0]] | s.top_cols[T_LBIT[a2][1]]) & free
    return slots


cdef int k_legal_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    cdef BotanikState* s = <BotanikState*>buf
    cdef BotanikCore* c = &s.core
    cdef int n = 0, i, col, p, head, kind, slots, m
    cdef int own[3]
    if c.stage == STAGE_REGISTRY:
        slots = registry_options(s, own)
        for i in range(N_ARRIVAL):
            if not (slots >> i) & 1:
                continue
            m = own[i]
            while m:                 # K-T2 own side
                out[n] = ACT_REG | (i << 4) | bk_ctz64(m)
                n += 1
                m &= m - 1
            for col in range(N_COLUMNS):   # K-T4 central stack: always allowed
                out[n] = ACT_REG | (i << 4) | (1 << 3) | col
                n += 1
        return n
    if c.stage != STAGE_RESOLVE:
        return 0
    p = resolver(c)
    if p < 0:
        return 0
    kind = decision_kind(c, p)
    if kind == DEC_ORDER:
        for i in range(c.qlen[p]):           # every distinct pending item may go first
            if first_of_kind(c, p, i):
                out[n] = ACT_ORDER | i
                n += 1
        return n
    head = c.queue[p][0]
    if kind == DEC_MECA:
        for col in range(N_COLUMNS):       # K-MB4: never for another Meca-Botanist
            if not T_MECA[c.top[col]]:
                out[n] = ACT_MECA | col
                n += 1
        return n
    return machine_placements(s, p, head, out)


cdef int k_chance_outcomes(const uint8_t* buf, int32_t* out, double* weights) noexcept nogil:
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef int k, kind, n = 0
    if s.core.stage != STAGE_DEAL and s.core.stage != STAGE_DRAW:
        return 0
    for k in range(N_KINDS):
        kind = KINDS[k]
        if s.pool_count[kind]:
            out[n] = ACT_DRAW | kind
            weights[n] = s.pool_count[kind]
            n += 1
    return n


cdef void k_apply(uint8_t* buf, int32_t action) noexcept nogil:
    cdef BotanikState* s = <BotanikState*>buf
    cdef BotanikCore* c = &s.core
    cdef int kind = action & 0xF000
    cdef int p, t, i, col, slot, gx, gy, r, taken, meca, pos
    cdef uint64_t w
    if kind == ACT_DRAW:
        # K-S3/K-P1: the lowest-numbered undrawn copy of that kind (a kind's copies hold
        # consecutive pool bits in id order).
        t = action & 0xFF
        w = s.pool_bits[0] & KIND_BITS[t][0]
        pos = bk_ctz64(w) if w else 64 + bk_ctz64(s.pool_bits[1] & KIND_BITS[t][1])
        s.pool_bits[pos >> 6] &= ~((<uint64_t>1) << (pos & 63))
        s.pool_count[action & 0xFF] -= 1    # (the kind drawn)
        t = POOL_TILE[pos]
        s.pool_total -= 1
        if c.stage == STAGE_DEAL:
            for i in range(N_COLUMNS):
                if c.top[i] == EMPTY:
                    set_top(s, i, t)
                    c.status[t] = AT_TOP
                    break
            if i == N_COLUMNS - 1:
                c.stage = STAGE_DRAW
        else:
            for i in range(N_ARRIVAL):
                if c.arrival[i] == EMPTY:
                    c.arrival[i] = t
                    c.status[t] = AT_ARRIVAL
                    break
            if i == N_ARRIVAL - 1:
                c.stage = STAGE_REGISTRY
                c.turn_player = c.holder    # K-P2: the pawn holder starts the phase
        return
    if kind == ACT_REG:
        p = c.turn_player
        slot = (action >> 4) & 3
        col = action & 7
        t = c.arrival[slot]
        c.arrival[slot] = EMPTY
        c.placed += 1
        if (action >> 3) & 1:
            # K-T4: onto the central stack; the old top is buried for good (A8).
            c.status[c.top[col]] = AT_BURIED
            set_top(s, col, t)
            c.status[t] = AT_TOP
            free_check(s, col)
        else:
            set_side(s, p, col, t)            # K-T5: never frees anything
            c.status[t] = AT_SIDE
        c.stage = STAGE_RESOLVE
        advance(s)
        return
    p = resolver(c)
    if kind == ACT_ORDER:
        # The chosen item moves to the front; the others keep their order, so the same items
        # resolved in the same order leave the same queue whatever was chosen before.
        i = action & 3
        t = c.queue[p][i]
        while i > 0:
            c.queue[p][i] = c.queue[p][i - 1]
            i -= 1
        c.queue[p][0] = t
        c.order_locked[p] = 1
        advance(s)
        return
    if kind == ACT_MECA:
        # K-MB2/A8: take the top into the machine; the Meca becomes the top; check frees.
        col = action & 7
        meca = c.queue[p][0]
        pop_head(c, p)
        taken = c.top[col]
        set_top(s, col, meca)
        c.status[meca] = AT_TOP
        enqueue(c, p, taken)
        free_check(s, col)
        advance(s)
        return
    # ACT_MACH
    t = c.queue[p][0]
    gx = (action >> 8) & 63
    gy = (action >> 2) & 63
    r = action & 3
    pop_head(c, p)
    add_to_machine(s, p, t, gx, gy, r)
    advance(s)


cdef void machine_score(const BotanikState* s, int p, double* points, int* tiles,
                        bint pipe_groups) noexcept nogil:
    """K-SC1..3 for seat p: A) only the Source's pipe network counts, B) 1 VP per tile in a
    same-colour group of >= 3, C) 1 VP per flower (Plant/Vegetable: only with a direct pipe link
    to a same-colour tile, A6). `tiles` is the K-SC4 tie-break count (Source excluded)."""
    cdef const BotanikCore* c = &s.core
    cdef const MachineCache* m = &s.cache[p]
    cdef int n = c.n_tiles[p]
    cdef int i, j, d, net, head, size, t, u, sides, shift = 4 if pipe_groups else 0
    cdef uint64_t kept = 0, left     # machine indices in the Source's network (Source excluded)
    cdef uint64_t bit
    cdef int stack[40]
    cdef int total = 0
    net = network_comp(m)
    if net >= 0:
        # (comp holds 40 x 4 = 10 x 16 labels; tiles from n on are masked off)
        kept = bk_quads_with(&m.comp[0][0], (n * 4 + 15) >> 4, net)
        kept &= (((<uint64_t>1) << n) - 1) & ~(<uint64_t>1)
    # B) colour groups among the kept tiles (flood fill along `same`; `left` = kept tiles not
    # yet grouped).
    left = kept
    while left:
        i = bk_ctz64(left)
        left &= left - 1
        size = 0
        head = 0
        stack[head] = i
        head += 1
        while head:
            head -= 1
            u = stack[head]
            size += 1
            sides = (m.same[u] >> shift) & 15
            while sides:
                d = bk_ctz64(sides)
                sides &= sides - 1
                j = m.nb[u][d] - 1
                bit = (left >> j) & 1          # branch-free: not yet grouped, and kept
                left &= ~(bit << j)
                stack[head] = j
                head += <int>bit
        if size >= 3:
            total += size
    # C) flowers.
    left = kept
    while left:
        i = bk_ctz64(left)
        left &= left - 1
        t = c.m_id[p][i]
        total += T_FLOWERS[t] * ((T_NEEDS_LINK[t] == 0) | ((m.same[i] >> 4) != 0))  # (no branch)
    points[0] = total
    tiles[0] = pop64(kept)


cdef void score_final(BotanikState* s) noexcept nogil:
    """final_points and final_tiles of a game that is over (end_turn, k_rebuild)."""
    cdef double pts
    cdef int tiles, p
    for p in range(2):
        machine_score(s, p, &pts, &tiles, s.core.group_adjacency == 1)
        s.final_points[p] = <uint16_t>pts
        s.final_tiles[p] = tiles


cdef void k_scores(const uint8_t* buf, double* out) noexcept nogil:
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef int tiles
    cdef int p
    for p in range(2):
        if s.core.stage == STAGE_OVER:
            out[p] = s.final_points[p]
        else:
            machine_score(s, p, &out[p], &tiles, s.core.group_adjacency == 1)


cdef void k_returns(const uint8_t* buf, double* out) noexcept nogil:
    """K-SC4: most points; tie: most machine tiles; further tie: a draw."""
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef double pts[2]
    cdef int tiles[2]
    cdef int p
    for p in range(2):
        if s.core.stage == STAGE_OVER:
            pts[p] = s.final_points[p]
            tiles[p] = s.final_tiles[p]
        else:
            machine_score(s, p, &pts[p], &tiles[p], s.core.group_adjacency == 1)
    if pts[0] != pts[1]:
        out[0] = 1.0 if pts[0] > pts[1] else 0.0
    elif tiles[0] != tiles[1]:
        out[0] = 1.0 if tiles[0] > tiles[1] else 0.0
    else:
        out[0] = 0.5
    out[1] = 1.0 - out[0]


cdef void k_determinize(uint8_t* buf, int observer, Rng* rng) noexcept nogil:
    # Perfect information with chance: the pool is a set (its order is never stored), so
    # there is nothing hidden to resample.
    pass


cdef int32_t k_uniform_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """The playout policy of 2026-12-01, kept as the frozen baseline's (baseline_rollout_action) and as the current policy's uniform tenth: uniform over the legal actions, as
    without a policy (the same pick of the same list for the same random number), but registry
    options are counted and machine placements drawn without listing them (they are most of a
    playout's cost)."""
    cdef BotanikState* s = <BotanikState*>buf
    cdef BotanikCore* c = &s.core
    cdef int32_t listed[8]
    cdef int own[3]
    cdef int p, n, i, slots, k, pick
    if c.stage == STAGE_REGISTRY:
        slots = registry_options(s, own)
        n = 0
        for i in range(N_ARRIVAL):
            if (slots >> i) & 1:
                n += POPC4[own[i] & 15] + ((own[i] >> 4) & 1) + N_COLUMNS
        pick = rng_below(rng, n)
        for i in range(N_ARRIVAL):
            if not (slots >> i) & 1:
                continue
            k = POPC4[own[i] & 15] + ((own[i] >> 4) & 1)
            if pick < k:
                return ACT_REG | (i << 4) | bk_select64(own[i], pick)
            pick -= k
            if pick < N_COLUMNS:
                return ACT_REG | (i << 4) | (1 << 3) | pick
            pick -= N_COLUMNS
        return ACT_REG    # unreachable: the counts above cover every option
    if c.stage == STAGE_RESOLVE:
        p = resolver(c)
        if decision_kind(c, p) == DEC_MACH:
            return sample_placement(s, p, c.queue[p][0], rng)
    n = k_legal_actions(buf, listed)   # an order (2) or a Meca exchange (<= 5)
    return listed[rng_below(rng, n)]



# --- playout policy ----------------------------------------------------------------
# Weights of the policy's scores. Every option's score is 4x its weighted sum plus NOISE_BITS
# random bits (0..7, under two units), so equal and nearly equal options go either way.
# Chosen by equal-time screens against mcts-base (docs/games/botanik.md).
cdef enum:
    W_FREE_OWN = 10      # K-T4: per tile_value of an own side tile a centre placement frees
    W_FREE_OPP = 8       # K-T4: per tile_value of an opponent's side tile it frees (subtracted)
    W_SIDE = 8           # K-T2: per tile_value of a tile parked on the own side
    W_NET = 4            # K-SC1: a placement whose pipes join the Source's network
    W_COLOUR = 3         # K-SC2: per same-colour neighbour of a placement
    W_CROP = 6           # K-SC3: a Plant/Vegetable pipe-linked to a same-colour neighbour
    W_OPEN = 2           # K-M1(3): per open end the placement adds to the network
    NOISE_BITS = 3
    UNIFORM_ONE_IN = 10  # one decision in ten is the baseline's uniform one, for variety


# COLOUR_SCORE[needs_link][same | pipe << 4]: 4x the colour terms of a placement's score, from
# the sides with a same-colour neighbour (same) and those with a pipe facing the cell (pipe):
# W_COLOUR per same-colour neighbour (K-SC2) and, for a tile whose flowers need it
# (T_NEEDS_LINK), W_CROP when one of them is pipe-linked (K-SC3).
cdef uint8_t COLOUR_SCORE[2][256]
cdef int _same, _pipe
for _same in range(16):
    for _pipe in range(16):
        COLOUR_SCORE[0][_same | _pipe << 4] = 4 * W_COLOUR * POPC4[_same]
        COLOUR_SCORE[1][_same | _pipe << 4] = 4 * (W_COLOUR * POPC4[_same]
                                                   + W_CROP * ((_same & _pipe) != 0))
# OPEN_SCORE[t][occ][k]: 4x the network terms of the k-th distinct orientation of t on a cell
# whose occupied sides are occ, when its pipes join the Source's network (K-SC1): W_NET, and
# W_OPEN per open end it adds (its pipes facing empty cells). Row NO_NETWORK is all 0, for the
# cells whose pipes join no network.
cdef enum:
    NO_NETWORK = 16
cdef uint8_t OPEN_SCORE[67][17][4]


cdef void fill_open_score() noexcept:
    """OPEN_SCORE from the tile tables (load_components)."""
    cdef int t, occ, k
    memset(OPEN_SCORE, 0, sizeof(OPEN_SCORE))
    for t in range(N_TILES):
        for occ in range(16):
            for k in range(T_NROT[t]):
                OPEN_SCORE[t][occ][k] = 4 * (W_NET + W_OPEN * POPC4[T_EXITS[t][T_ROTS[t][k]] & ~occ & 15])


cdef inline int noise(uint64_t* bits, int* left, Rng* rng) noexcept nogil:
    """NOISE_BITS random bits for one option's score, from a word drawn once for many options."""
    cdef int v
    if left[0] < NOISE_BITS:
        bits[0] = rng_next(rng)
        left[0] = 64
    v = <int>(bits[0] & ((1 << NOISE_BITS) - 1))
    bits[0] >>= NOISE_BITS
    left[0] -= NOISE_BITS
    return v


cdef int32_t policy_placement(BotanikState* s, const MachineCache* m, int p, int tile,
                              Rng* rng) noexcept nogil:
    """K-M1: the legal placement with the best score (plus noise bits, so near-ties go either
    way), over every frontier cell and orientation. Scoring every one costs about as much as
    scoring six uniformly drawn legal ones, and plays far better (docs/games/botanik.md).

    Per cell, what does not depend on the rotation is worked out once: the orientations whose
    pipes fit its neighbours (ROT_FIT), the components its pipe sides link, whether the closure
    rule can refuse any orientation there (cell_closure_sure), and the score but for the open
    ends a rotation adds (K-SC1..3: a joined network; same-colour neighbours and a
    Plant/Vegetable's same-colour pipe link, from the cell's front_colours and COLOUR_SCORE).
    m is seat p's machine cache."""
    cdef int rule = s.core.closure_rule
    cdef int colour_shift = 4 * T_COLOUR[tile]
    cdef const uint8_t* colour_score = COLOUR_SCORE[T_NEEDS_LINK[tile]]
    cdef int xy, r, k, i, d, masks, score, best_score = -1, occ, pipe, base, net_mask
    cdef int want_pipe, sides, block, cells, act
    cdef const uint8_t* open_score
    cdef int better
    cdef uint32_t fits
    cdef int32_t best = -1
    cdef int n_cells = m.n_front
    cdef int net = network_comp(m)
    cdef int linked[4]
    cdef uint64_t bits = 0
    cdef int left = 0
    # Cells no pipe faces are scored only when no cell a pipe faces takes the tile: a tile
    # touching by blank sides joins no network (K-M4), so it scores nothing unless later
    # linked, and skipping those cells saves a tenth of the policy's time.
    # The cells of a pass are found sixteen at a time, as bits (front_mask holds MAX_FRONT =
    # 10 x 16 entries, zero past n_front): testing them one by one costs a mispredicted
    # branch every few cells.
    for want_pipe in range(1, -1, -1):
        if not want_pipe and best >= 0:
            break
        for block in range(0, n_cells, 16):
            cells = bk_any_bits16(&m.front_mask[block], 0xF0)
            if not want_pipe:
                cells = ~cells & ((1 << (n_cells - block)) - 1 if n_cells - block < 16 else 0xFFFF)
            while cells:
                i = block + bk_ctz64(cells)
                cells &= cells - 1
                masks = m.front_mask[i]
                fits = ROT_FIT[tile][masks]
                if not fits:
                    continue
                occ = masks & 15
                pipe = masks >> 4
                xy = m.front[i]
                base = colour_score[((m.front_colours[i] >> colour_shift) & 15) | (masks & 0xF0)]
                net_mask = 0
                sides = pipe
                while sides:
                    # Branch-free: whether a side links the network follows no pattern.
                    # (linked[d] is read for pipe sides only.)
                    d = bk_ctz64(sides)
                    sides &= sides - 1
                    linked[d] = m.comp[m.front_nb[i][d] - 1][opposite(d)]
                    net_mask |= (linked[d] == net) << d
                if pipe and not cell_closure_sure(m, rule, pipe, linked, net, net_mask):
                    # (a pass of its own, so that the loop below calls nothing and keeps its
                    # values in registers)
                    fits = closure_fits(m, rule, tile, fits, occ, pipe, linked, net_mask)
                open_score = OPEN_SCORE[tile][occ if net_mask else NO_NETWORK]
                act = ACT_MACH | (xy << 2)
                while fits:
                    k = bk_ctz64(fits)
                    fits &= fits - 1
                    r = T_ROTS[tile][k]
                    score = base + open_score[k] + noise(&bits, &left, rng)
                    # Branch-free (which placement wins follows no pattern), as masks: gcc
                    # turns the conditional-expression form into a branch here.
                    better = -(score > best_score)
                    best_score ^= (best_score ^ score) & better
                    best ^= (best ^ (act | r)) & better
    if best >= 0:        # always: advance stops at a build only when has_placement holds
        return best
    return sample_placement(s, p, tile, rng)


# Called through a pointer, with the machine cache's address, so that gcc neither inlines it into
# k_rollout_action nor turns every access to the cache into the seat's offset plus an index:
# either way its loops kept fewer values in registers.
cdef int32_t (*PLACEMENT_POLICY)(BotanikState*, const MachineCache*, int, int, Rng*) noexcept nogil
PLACEMENT_POLICY = policy_placement


cdef inline int centre_score(const BotanikCore* c, int me, int col, int tile) noexcept nogil:
    """K-T4: a tile put on stack `col` frees the side tiles it does not link with: an own one
    joins my machine, an opponent's theirs."""
    cdef int score = 0
    cdef int mine = c.side[me][col], theirs = c.side[1 - me][col]
    if mine != EMPTY and not links(mine, tile):
        score += W_FREE_OWN * tile_value(mine)
    if theirs != EMPTY and not links(theirs, tile):
        score -= W_FREE_OPP * tile_value(theirs)
    return score


cdef int32_t policy_registry(BotanikState* s, Rng* rng) noexcept nogil:
    """K-T1: the registry option with the best score (plus noise bits), options in legal-action
    order: per offered arrival tile its own-side columns (K-T2), then the five stacks (K-T4,
    scored as centre_score, from the columns whose side tiles the tile would free)."""
    cdef const BotanikCore* c = &s.core
    cdef int p = c.turn_player
    cdef int own[3]
    cdef int i, col, slots, m, tile, score, best_score, side_score, act
    # 4 x centre_score of the tile on each stack (bonus), from what freeing each side tile is
    # worth (own_bonus, opp_malus: the same for every arrival tile); eight lanes, five in use.
    cdef int16_t bonus[8]
    cdef int16_t own_bonus[8]
    cdef int16_t opp_malus[8]
    cdef bint better
    cdef int32_t best
    cdef uint64_t bits = 0
    cdef int left = 0
    slots = registry_options(s, own)
    best = ACT_REG
    best_score = -1000000
    bk_scale8(s.side_value[p], 4 * W_FREE_OWN, own_bonus)
    bk_scale8(s.side_value[1 - p], 4 * W_FREE_OPP, opp_malus)
    while slots:
        i = bk_ctz64(slots)
        slots &= slots - 1
        tile = c.arrival[i]
        m = own[i]
        side_score = 4 * W_SIDE * tile_value(tile)
        while m:                 # K-T2 own side
            col = bk_ctz64(m)
            m &= m - 1
            score = side_score + noise(&bits, &left, rng)
            if score > best_score:
                best_score = score
                best = ACT_REG | (i << 4) | col
        act = ACT_REG | (i << 4) | (1 << 3)
        if left >= N_COLUMNS * NOISE_BITS:
            # K-T4 central stack: the five options at once, when the noise word has their bits
            best = bk_best_stack(own_bonus, opp_malus, frees(s, p, tile), frees(s, 1 - p, tile),
                                 <int>(bits & ((1 << N_COLUMNS * NOISE_BITS) - 1)), act,
                                 &best_score, best)
            bits >>= N_COLUMNS * NOISE_BITS
            left -= N_COLUMNS * NOISE_BITS
            continue
        bk_masked_diff8(own_bonus, opp_malus, frees(s, p, tile), frees(s, 1 - p, tile), bonus)
        for col in range(N_COLUMNS):   # K-T4 central stack, one by one across a new noise word
            # Branch-free: which option wins follows no pattern a branch predictor could learn.
            score = noise(&bits, &left, rng) + bonus[col]
            better = score > best_score
            best_score = score if better else best_score
            best = (act | col) if better else best
    return best


cdef int32_t k_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """Playout policy: "the obvious move", with noise bits breaking near-ties and one decision
    in ten drawn by the baseline's uniform sampler, so playouts keep variety.
    - Registry (K-T1): free own side tiles and not the opponent's (K-T4), else park a tile on
      the own side (K-T2), else a centre placement that frees nothing.
    - Machine (K-M1): the best legal placement for the network, colour groups and crops
      (K-SC1..3, policy_placement).
    - Meca exchange (K-MB2): the most valuable top, counting what the Meca then frees.
    - Which pending item first (A10): uniform."""
    cdef BotanikState* s = <BotanikState*>buf
    cdef BotanikCore* c = &s.core
    cdef int p, col, score, best_score, kind
    cdef int32_t best
    cdef uint64_t bits = 0
    cdef int left = 0
    if rng_below(rng, UNIFORM_ONE_IN) == 0:
        return k_uniform_rollout_action(buf, rng)
    if c.stage == STAGE_REGISTRY:
        return policy_registry(s, rng)
    if c.stage == STAGE_RESOLVE:
        p = resolver(c)
        kind = decision_kind(c, p)
        if kind == DEC_MACH:
            return PLACEMENT_POLICY(s, &s.cache[p], p, c.queue[p][0], rng)
        if kind == DEC_MECA:
            # K-MB2: take the top into the machine; the Meca (c.queue[p][0]) becomes the top.
            best = ACT_MECA
            best_score = -1000000
            for col in range(N_COLUMNS):
                if T_MECA[c.top[col]]:
                    continue         # K-MB4
                score = (4 * W_FREE_OWN * tile_value(c.top[col])
                         + 4 * centre_score(c, p, col, c.queue[p][0]) + noise(&bits, &left, rng))
                if score > best_score:
                    best_score = score
                    best = ACT_MECA | col
            return best
    return k_uniform_rollout_action(buf, rng)


cdef void k_rebuild(uint8_t* buf) noexcept nogil:
    cdef BotanikState* s = <BotanikState*>buf
    cdef int t, p
    # Everything after the core, the alignment padding included (raw buffers compare equal).
    memset(buf + sizeof(BotanikCore), 0, sizeof(BotanikState) - sizeof(BotanikCore))
    rebuild_machine(s, 0)
    rebuild_machine(s, 1)
    for t in range(N_COLUMNS):
        if s.core.top[t] != EMPTY:
            s.top_cols[T_LBIT[s.core.top[t]][0]] |= 1 << t
            s.top_cols[T_LBIT[s.core.top[t]][1]] |= 1 << t
        for p in range(2):
            if s.core.side[p][t] != EMPTY:
                s.side_cols[p][T_LBIT[s.core.side[p][t]][0]] |= 1 << t
                s.side_cols[p][T_LBIT[s.core.side[p][t]][1]] |= 1 << t
                s.side_taken[p] |= 1 << t
                s.side_value[p][t] = tile_value(s.core.side[p][t])
    for t in range(N_COLOURED):
        if s.core.status[t] == AT_POOL:
            s.pool_count[T_KIND[t]] += 1
            s.pool_total += 1
            s.pool_bits[POOL_POS[t] >> 6] |= (<uint64_t>1) << (POOL_POS[t] & 63)
    if s.core.stage == STAGE_OVER:
        score_final(s)


cdef int32_t k_sample_chance(const uint8_t* buf, Rng* rng) noexcept nogil:
    """K-S3/K-P1: a uniformly random undrawn tile, reported as its kind (the same
    distribution as chance_outcomes: each kind weighted by its undrawn copies). The r-th
    undrawn tile counting kind by kind in KINDS order is the r-th set bit of pool_bits."""
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef int r = rng_below(rng, s.pool_total)
    cdef int low = s.pool_total - <int>s.pool_bits[1]   # the high word holds bit 64 alone
    if r < low:
        return ACT_DRAW | POOL_KIND[bk_select64(s.pool_bits[0], r)]
    if r < s.pool_total:
        return ACT_DRAW | POOL_KIND[64]
    return ACT_DRAW | KINDS[N_KINDS - 1]   # unreachable when pool_total is consistent


include "features.pxi"  # value-model features
include "hortus/_ext/playout.pxi"  # k_playout: the fused playout loop

cdef GameKernel KERNEL
KERNEL.state_bytes = sizeof(BotanikState)
KERNEL.core_bytes = sizeof(BotanikCore)
KERNEL.num_distinct_actions = NUM_ACTIONS
KERNEL.max_players = 2
KERNEL.max_legal_actions = MAX_LEGAL
KERNEL.max_game_length = 4000
KERNEL.num_players = k_num_players
KERNEL.current_player = k_current_player
KERNEL.legal_actions = k_legal_actions
KERNEL.chance_outcomes = k_chance_outcomes
KERNEL.apply = k_apply
KERNEL.returns = k_returns
KERNEL.scores = k_scores
KERNEL.determinize = k_determinize
KERNEL.rollout_action = k_rollout_action
KERNEL.baseline_rollout_action = k_uniform_rollout_action
KERNEL.rebuild = k_rebuild
KERNEL.sample_chance = k_sample_chance
KERNEL.playout = k_playout
# No search_actions: every legal action is a distinct move (identical copies are one tile to
# a player, identical orientations one placement), and no two orders of pending items reach
# the same positions (a build changes what the next one may touch), so nothing is pruned.
KERNEL.search_actions = NULL
KERNEL.num_features = FEATURE_COUNT
KERNEL.features = k_features


def kernel_capsule():
    if not LOADED:
        raise RuntimeError("botanik components are not loaded")
    return kernel_to_capsule(&KERNEL)


def core_size():
    return sizeof(BotanikCore)


# --- Python views of the core (read and write whole structs; no pointer ever escapes) --------
def core_to_dict(const uint8_t[::1] data):
    """The core fields of serialized core bytes as a dict of ints and lists."""
    if data.shape[0] != sizeof(BotanikCore):
        raise ValueError("wrong core size")
    cdef BotanikCore c
    memcpy(&c, &data[0], sizeof(BotanikCore))
    return {
        "stage": c.stage, "phase": c.phase, "first_player": c.first_player,
        "holder": c.holder, "turn_player": c.turn_player, "placed": c.placed,
        "closure_rule": c.closure_rule, "group_adjacency": c.group_adjacency,
        "top": [c.top[i] for i in range(5)],
        "side": [[c.side[p][i] for i in range(5)] for p in range(2)],
        "arrival": [c.arrival[i] for i in range(3)],
        "status": [c.status[i] for i in range(65)],
        "queue": [[c.queue[p][i] for i in range(c.qlen[p] if c.qlen[p] <= 4 else 4)] for p in range(2)],
        "qlen": [c.qlen[0], c.qlen[1]],
        "order_locked": [c.order_locked[0], c.order_locked[1]],
        "machines": [
            [(c.m_id[p][i], c.m_x[p][i], c.m_y[p][i], c.m_rot[p][i])
             for i in range(c.n_tiles[p] if c.n_tiles[p] <= 40 else 40)]
            for p in range(2)
        ],
        "n_tiles": [c.n_tiles[0], c.n_tiles[1]],
    }


def dict_to_core(dict d):
    """Serialized core bytes from a dict shaped like core_to_dict's (values range-checked by
    the caller; out-of-range values raise OverflowError here)."""
    cdef BotanikCore c
    cdef int p, i
    memset(&c, 0, sizeof(BotanikCore))
    c.stage = d["stage"]; c.phase = d["phase"]; c.first_player = d["first_player"]
    c.holder = d["holder"]; c.turn_player = d["turn_player"]; c.placed = d["placed"]
    c.closure_rule = d["closure_rule"]; c.group_adjacency = d["group_adjacency"]
    for i in range(5):
        c.top[i] = d["top"][i]
        for p in range(2):
            c.side[p][i] = d["side"][p][i]
    for i in range(3):
        c.arrival[i] = d["arrival"][i]
    for i in range(65):
        c.status[i] = d["status"][i]
    for p in range(2):
        memset(c.queue[p], EMPTY, 4)
        if len(d["queue"][p]) > 4 or len(d["machines"][p]) > 40:
            raise OverflowError("queue or machine too long")
        c.qlen[p] = len(d["queue"][p])
        for i, t in enumerate(d["queue"][p]):
            c.queue[p][i] = t
        c.order_locked[p] = d["order_locked"][p]
        c.n_tiles[p] = len(d["machines"][p])
        for i, (t, x, y, r) in enumerate(d["machines"][p]):
            c.m_id[p][i] = t; c.m_x[p][i] = x; c.m_y[p][i] = y; c.m_rot[p][i] = r
    return (<char*>&c)[:sizeof(BotanikCore)]


def pending_decision_ok(object kernel_state_raw):
    """For the validator: 1 if the decision a RESOLVE state waits for has a legal option
    (the forced removals of K-M3 and A7 were already made), else 0. Takes a full raw buffer."""
    cdef const uint8_t[::1] raw = kernel_state_raw
    cdef BotanikState s
    cdef int32_t out[MAX_LEGAL]
    if raw.shape[0] != sizeof(BotanikState):
        raise ValueError("wrong state size")
    memcpy(&s, &raw[0], sizeof(BotanikState))
    if s.core.stage != STAGE_RESOLVE:
        return 1
    return 1 if k_legal_actions(<uint8_t*>&s, out) > 0 else 0


def score_details(object kernel_state_raw):
    """[(points, machine tiles)] per seat from a full raw buffer: K-SC1..3 and the K-SC4
    tie-break count (tiles in the Source's network, the Source excluded), for the picture."""
    cdef const uint8_t[::1] raw = kernel_state_raw
    cdef BotanikState s
    cdef double pts
    cdef int tiles, p
    if raw.shape[0] != sizeof(BotanikState):
        raise ValueError("wrong state size")
    memcpy(&s, &raw[0], sizeof(BotanikState))
    out = []
    for p in range(2):
        machine_score(&s, p, &pts, &tiles, s.core.group_adjacency == 1)
        out.append((pts, tiles))
    return out


def tile_exits(int tile, int r):
    return T_EXITS[tile][r]


def distinct_rotations(int tile):
    return [T_ROTS[tile][k] for k in range(T_NROT[tile])]
