# cython: language_level=3
"""Botanik rules over a flat BotanikState buffer: the GameKernel of botanik.

Section names follow botanik.decisions.md (K-S setup, K-P phases, K-T playing a tile, K-F/K-M
machine, K-MB Meca-Botanist, K-SC scoring, A# resolutions). Tile geometry and flowers are
data (components.toml), copied into the static tables below by ``load_components``.

Action ids (decisions.md 6.1):
  D_REG   0x0000 | slot<<4 | centre<<3 | column    take arrival `slot`, own side or stack
  D_MACH  0x4000 | (x+32)<<8 | (y+32)<<2 | r      put the pending tile in the machine
  D_MECA  0x8000 | column                          exchange the freed Meca for a stack top
  D_ORDER 0xC000 | k                               resolve pending item k first (K-MB5)
  DRAW    0xD000 | kind                            chance: a tile of that kind is drawn
"""
from libc.stdint cimport uint8_t, int8_t, int32_t, uint64_t
from libc.string cimport memset, memcpy

from hortus._ext.kernel cimport GameKernel, CHANCE, TERMINAL, kernel_to_capsule
from hortus._ext.rng cimport Rng, rng_below
from hortus.games.botanik.kernel cimport *

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
cdef uint8_t T_TYPE[67]         # tile type index; 255 for the Sources
cdef uint8_t T_KIND[67]         # lowest id of the identical tiles (interchangeable copies)
cdef uint8_t T_FLOWERS[67]
cdef uint8_t T_NEEDS_LINK[67]   # K-SC3: flowers need a direct same-colour pipe link
cdef uint8_t T_MECA[67]         # K-MB2: exchanged when freed
cdef uint8_t T_EXITS[67][4]     # exit mask per rotation
cdef uint8_t T_CONDUIT[67][4][4]  # [tile][rotation][side] -> conduit index or EMPTY
cdef uint8_t T_NROT[67]         # distinct orientations (A3)
cdef uint8_t T_ROTS[67][4]      # the canonical rotation of each distinct orientation
cdef uint8_t KINDS[65]          # the distinct kinds (their lowest ids), ascending
cdef int N_KINDS = 0
cdef bint LOADED = False

cdef int DX[4]
cdef int DY[4]
DX[:] = [0, 1, 0, -1]   # N E S W, y grows downwards
DY[:] = [-1, 0, 1, 0]


def load_components(list colour, list ttype, list flowers, list needs_link, list meca,
                    list conduits):
    """Fill the static tables. conduits[t] is a list of side lists at rotation 0 (0=N..3=W).
    Called once at import by components.py after validating the data file."""
    global LOADED
    cdef int t, r, d, q, k, u
    cdef uint8_t seen[4]
    for t in range(N_TILES):
        T_COLOUR[t] = colour[t]
        T_TYPE[t] = ttype[t]
        T_FLOWERS[t] = flowers[t]
        T_NEEDS_LINK[t] = needs_link[t]
        T_MECA[t] = meca[t]
        for r in range(4):
            T_EXITS[t][r] = 0
            for d in range(4):
                T_CONDUIT[t][r][d] = EMPTY
            for q, sides in enumerate(conduits[t]):
                for d in sides:
                    T_EXITS[t][r] |= 1 << ((d + r) % 4)
                    T_CONDUIT[t][r][(d + r) % 4] = q
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
    return T_COLOUR[a] == T_COLOUR[b] or T_TYPE[a] == T_TYPE[b]


cdef inline int opposite(int d) noexcept nogil:
    return (d + 2) & 3


# --- machine cache --------------------------------------------------------------------------
cdef int _find(int* parent, int x) noexcept nogil:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef inline int neighbour(const BotanikCore* c, const MachineCache* m, int p, int i, int d) noexcept nogil:
    """Machine index of the tile beside tile i on side d, or -1 (empty cell or off the grid)."""
    cdef int nx = c.m_x[p][i] + GRID_OFFSET + DX[d]
    cdef int ny = c.m_y[p][i] + GRID_OFFSET + DY[d]
    if nx < 0 or nx >= GRID or ny < 0 or ny >= GRID:
        return -1
    return m.grid[nx][ny] - 1


cdef void rebuild_machine(BotanikState* s, int p) noexcept nogil:
    """Recompute the grid, exits, conduits and pipe components of seat p's machine."""
    cdef BotanikCore* c = &s.core
    cdef MachineCache* m = &s.cache[p]
    cdef int i, d
    memset(m, 0, sizeof(MachineCache))
    for i in range(c.n_tiles[p]):
        m.grid[c.m_x[p][i] + GRID_OFFSET][c.m_y[p][i] + GRID_OFFSET] = i + 1
        m.exits[i] = T_EXITS[c.m_id[p][i]][c.m_rot[p][i]]
        for d in range(4):
            m.conduit[i][d] = T_CONDUIT[c.m_id[p][i]][c.m_rot[p][i]][d]
    rebuild_components(s, p)


cdef void rebuild_components(BotanikState* s, int p) noexcept nogil:
    """Pipe components and their open ends, from the grid (union-find over conduits)."""
    cdef BotanikCore* c = &s.core
    cdef MachineCache* m = &s.cache[p]
    cdef int n = c.n_tiles[p]
    cdef int i, j, d, gx, gy, nx, ny, a, b, label
    cdef int parent[160]
    cdef int relabel[160]
    memset(m.comp_open, 0, sizeof(m.comp_open))
    for i in range(n):
        for d in range(4):
            m.comp[i][d] = EMPTY
    for i in range(n * 4):
        parent[i] = i
        relabel[i] = -1
    # Union the conduits that meet pipe to pipe across a shared edge.
    for i in range(n):
        for d in range(4):
            if not (m.exits[i] >> d) & 1:
                continue
            j = neighbour(c, m, p, i, d)
            if j >= 0 and (m.exits[j] >> opposite(d)) & 1:
                a = _find(parent, i * 4 + m.conduit[i][d])
                b = _find(parent, j * 4 + m.conduit[j][opposite(d)])
                if a != b:
                    parent[a] = b
    m.n_comp = 0
    for i in range(n):
        for d in range(4):
            if not (m.exits[i] >> d) & 1:
                continue
            a = _find(parent, i * 4 + m.conduit[i][d])
            if relabel[a] < 0:
                relabel[a] = m.n_comp
                m.n_comp += 1
            label = relabel[a]
            m.comp[i][d] = label
            if neighbour(c, m, p, i, d) < 0:
                m.comp_open[label] += 1


cdef inline int network_comp(BotanikState* s, int p) noexcept nogil:
    """The pipe component of the Source (machine index 0)."""
    cdef int d
    for d in range(4):
        if s.cache[p].comp[0][d] != EMPTY:
            return s.cache[p].comp[0][d]
    return -1


cdef bint placement_ok(BotanikState* s, int p, int tile, int gx, int gy, int r,
                       uint8_t occ, uint8_t pipe) noexcept nogil:
    """K-M1 for one candidate: (2) pipe consistency and (3) the closure rule (A4)."""
    cdef MachineCache* m = &s.cache[p]
    cdef uint8_t e = T_EXITS[tile][r]
    cdef int d, q, j, nx, ny, comp, net, k, n_seen, delta
    cdef int linked_comp[4]
    cdef int seen[8]
    cdef bint joins, has
    cdef int rule = s.core.closure_rule
    if (e & occ) != pipe:     # a pipe facing a blank side, or a blank side facing a pipe
        return False
    if pipe == 0:
        return True            # touches by blank sides only (K-M4): networks unchanged
    for d in range(4):
        linked_comp[d] = -1
        if (pipe >> d) & 1:
            j = m.grid[gx + DX[d]][gy + DY[d]] - 1
            linked_comp[d] = m.comp[j][opposite(d)]
    if rule != CLOSURE_OPEN_END:
        # no_cycles: one conduit may not link twice into the same component.
        for d in range(4):
            if linked_comp[d] < 0:
                continue
            for k in range(d + 1, 4):
                if (linked_comp[k] == linked_comp[d]
                        and T_CONDUIT[tile][r][k] == T_CONDUIT[tile][r][d]):
                    return False
    if rule == CLOSURE_NO_CYCLES:
        return True
    # open_end: the Source's network must keep an open end. Conduits that link into it join
    # it, merging every other component they link; each link consumes one open end, and the
    # joining conduits' sides facing empty cells add new ones.
    net = network_comp(s, p)
    n_seen = 0
    delta = 0
    joins = False
    for q in range(4):
        has = False
        for d in range(4):
            if linked_comp[d] == net and T_CONDUIT[tile][r][d] == q:
                has = True
        if not has:
            continue
        joins = True
        for d in range(4):
            if T_CONDUIT[tile][r][d] != q:
                continue
            if linked_comp[d] >= 0:
                delta -= 1
                has = False
                for k in range(n_seen):
                    if seen[k] == linked_comp[d]:
                        has = True
                if not has:
                    seen[n_seen] = linked_comp[d]
                    n_seen += 1
            elif not (occ >> d) & 1:
                delta += 1
    if not joins:
        return True
    for k in range(n_seen):
        delta += m.comp_open[seen[k]]
    return delta >= 1


cdef int machine_placements(BotanikState* s, int p, int tile, int32_t* out,
                            bint first_only) noexcept nogil:
    """Legal (cell, rotation) placements of `tile` in seat p's machine, ascending action ids."""
    cdef BotanikCore* c = &s.core
    cdef MachineCache* m = &s.cache[p]
    cdef uint64_t frontier[64]
    cdef uint64_t w
    cdef int i, d, gx, gy, nx, ny, k, r, n = 0, j
    cdef uint8_t occ, pipe
    memset(frontier, 0, sizeof(frontier))
    for i in range(c.n_tiles[p]):
        gx = c.m_x[p][i] + GRID_OFFSET
        gy = c.m_y[p][i] + GRID_OFFSET
        for d in range(4):
            nx = gx + DX[d]
            ny = gy + DY[d]
            if 0 <= nx < GRID and 0 <= ny < GRID and m.grid[nx][ny] == 0:
                frontier[nx] |= (<uint64_t>1) << ny
    for gx in range(GRID):
        w = frontier[gx]
        while w:
            gy = __builtin_ctzll(w)
            w &= w - 1
            occ = 0
            pipe = 0
            for d in range(4):
                nx = gx + DX[d]
                ny = gy + DY[d]
                if 0 <= nx < GRID and 0 <= ny < GRID and m.grid[nx][ny] != 0:
                    occ |= 1 << d
                    j = m.grid[nx][ny] - 1
                    if (m.exits[j] >> opposite(d)) & 1:
                        pipe |= 1 << d
            for k in range(T_NROT[tile]):
                r = T_ROTS[tile][k]
                if placement_ok(s, p, tile, gx, gy, r, occ, pipe):
                    if n < MAX_LEGAL:
                        out[n] = ACT_MACH | (gx << 8) | (gy << 2) | r
                        n += 1
                    if first_only:
                        return n
    return n


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef int32_t sample_placement(BotanikState* s, int p, int tile, Rng* rng) noexcept nogil:
    """A uniformly random legal placement, by rejection: proposals are uniform over
    (frontier cell, distinct rotation) and the legal ones are a subset, so an accepted proposal
    is uniform over the legal placements. Falls back to listing them after a few misses."""
    cdef BotanikCore* c = &s.core
    cdef MachineCache* m = &s.cache[p]
    cdef uint64_t frontier[64]
    cdef uint64_t w
    cdef uint8_t cell_x[160]
    cdef uint8_t cell_y[160]
    cdef int32_t listed[MAX_LEGAL]
    cdef int i, d, gx, gy, nx, ny, j, r, n_cells = 0, attempt, pick, n
    cdef int n_rot = T_NROT[tile]
    cdef uint8_t occ, pipe
    memset(frontier, 0, sizeof(frontier))
    for i in range(c.n_tiles[p]):
        gx = c.m_x[p][i] + GRID_OFFSET
        gy = c.m_y[p][i] + GRID_OFFSET
        for d in range(4):
            nx = gx + DX[d]
            ny = gy + DY[d]
            if 0 <= nx < GRID and 0 <= ny < GRID and m.grid[nx][ny] == 0:
                if not (frontier[nx] >> ny) & 1:
                    frontier[nx] |= (<uint64_t>1) << ny
                    cell_x[n_cells] = nx
                    cell_y[n_cells] = ny
                    n_cells += 1
    for attempt in range(32):
        pick = rng_below(rng, n_cells * n_rot)
        gx = cell_x[pick // n_rot]
        gy = cell_y[pick // n_rot]
        r = T_ROTS[tile][pick % n_rot]
        occ = 0
        pipe = 0
        for d in range(4):
            nx = gx + DX[d]
            ny = gy + DY[d]
            if 0 <= nx < GRID and 0 <= ny < GRID and m.grid[nx][ny] != 0:
                occ |= 1 << d
                j = m.grid[nx][ny] - 1
                if (m.exits[j] >> opposite(d)) & 1:
                    pipe |= 1 << d
        if placement_ok(s, p, tile, gx, gy, r, occ, pipe):
            return ACT_MACH | (gx << 8) | (gy << 2) | r
    n = machine_placements(s, p, tile, listed, False)
    return listed[rng_below(rng, n)]


cdef void add_to_machine(BotanikState* s, int p, int tile, int gx, int gy, int r) noexcept nogil:
    cdef BotanikCore* c = &s.core
    cdef int i = c.n_tiles[p]
    c.m_id[p][i] = tile
    c.m_x[p][i] = gx - GRID_OFFSET
    c.m_y[p][i] = gy - GRID_OFFSET
    c.m_rot[p][i] = r
    c.n_tiles[p] = i + 1
    c.status[tile] = AT_MACHINE
    # Incremental: only the new cell of the grid changes; components are recomputed (cheap).
    cdef MachineCache* m = &s.cache[p]
    cdef int d
    m.grid[gx][gy] = i + 1
    m.exits[i] = T_EXITS[tile][r]
    for d in range(4):
        m.conduit[i][d] = T_CONDUIT[tile][r][d]
    rebuild_components(s, p)


# --- registry ---------------------------------------------------------------------------------
cdef inline void enqueue(BotanikCore* c, int p, int tile) noexcept nogil:
    c.queue[p][c.qlen[p]] = tile
    c.qlen[p] += 1
    c.status[tile] = AT_QUEUE


cdef void free_check(BotanikCore* c, int column) noexcept nogil:
    """K-T4: every side tile of the column that no longer links with the top is freed (K-F1),
    the turn player's first (A9)."""
    cdef int k, p, t
    for k in range(2):
        p = c.turn_player if k == 0 else 1 - c.turn_player
        t = c.side[p][column]
        if t != EMPTY and not links(t, c.top[column]):
            c.side[p][column] = EMPTY
            enqueue(c, p, t)


cdef inline int resolver(const BotanikCore* c) noexcept nogil:
    """A9: the turn player's pending items first, then the opponent's."""
    if c.qlen[c.turn_player]:
        return c.turn_player
    if c.qlen[1 - c.turn_player]:
        return 1 - c.turn_player
    return -1


cdef int decision_kind(const BotanikCore* c, int p) noexcept nogil:
    cdef int head = c.queue[p][0]
    if c.qlen[p] >= 2 and not c.order_locked[p] and T_KIND[c.queue[p][0]] != T_KIND[c.queue[p][1]]:
        return DEC_ORDER   # A10/K-MB5: two different recovered items, the owner picks the order
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


cdef void advance(BotanikState* s) noexcept nogil:
    """Resolve forced steps until a decision, a chance node or the end (K-M3, A7, K-P3, K-P4)."""
    cdef BotanikCore* c = &s.core
    cdef int p, head
    cdef int32_t one[1]
    while c.stage == STAGE_RESOLVE:
        p = resolver(c)
        if p < 0:
            # The turn is over: turns strictly alternate (K-P2); a phase ends after 3 tiles.
            c.turn_player = 1 - c.turn_player
            if c.placed == N_ARRIVAL:
                c.phase += 1
                c.placed = 0
                c.holder = 1 - c.holder
                c.stage = STAGE_OVER if c.phase == N_PHASES else STAGE_DRAW
            else:
                c.stage = STAGE_REGISTRY
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
            if machine_placements(s, p, head, one, True) > 0:
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


cdef int k_legal_actions(const uint8_t* buf, int32_t* out) noexcept nogil:
    cdef BotanikState* s = <BotanikState*>buf
    cdef BotanikCore* c = &s.core
    cdef int n = 0, i, j, col, p, tile, head, kind
    cdef bint dup
    if c.stage == STAGE_REGISTRY:
        p = c.turn_player
        for i in range(N_ARRIVAL):
            tile = c.arrival[i]
            if tile == EMPTY:
                continue
            dup = False
            for j in range(i):       # identical tiles are one choice
                if c.arrival[j] != EMPTY and T_KIND[c.arrival[j]] == T_KIND[tile]:
                    dup = True
            if dup:
                continue
            # K-T2 own side: free space and a link with the column's top.
            for col in range(N_COLUMNS):
                if c.side[p][col] == EMPTY and links(tile, c.top[col]):
                    out[n] = ACT_REG | (i << 4) | col
                    n += 1
            # K-T4 central stack: always allowed.
            for col in range(N_COLUMNS):
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
        out[0] = ACT_ORDER | 0
        out[1] = ACT_ORDER | 1
        return 2
    head = c.queue[p][0]
    if kind == DEC_MECA:
        for col in range(N_COLUMNS):       # K-MB4: never for another Meca-Botanist
            if not T_MECA[c.top[col]]:
                out[n] = ACT_MECA | col
                n += 1
        return n
    return machine_placements(s, p, head, out, False)


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
    cdef int p, t, i, col, slot, gx, gy, r, taken, meca
    if kind == ACT_DRAW:
        # K-S3/K-P1: the lowest-numbered undrawn copy of that kind.
        for t in range(action & 0xFF, N_COLOURED):   # copies of a kind follow its lowest id
            if c.status[t] == AT_POOL and T_KIND[t] == (action & 0xFF):
                break
        s.pool_count[T_KIND[t]] -= 1
        s.pool_total -= 1
        if c.stage == STAGE_DEAL:
            for i in range(N_COLUMNS):
                if c.top[i] == EMPTY:
                    c.top[i] = t
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
            c.top[col] = t
            c.status[t] = AT_TOP
            free_check(c, col)
        else:
            c.side[p][col] = t                # K-T5: never frees anything
            c.status[t] = AT_SIDE
        c.stage = STAGE_RESOLVE
        advance(s)
        return
    p = resolver(c)
    if kind == ACT_ORDER:
        i = action & 3
        t = c.queue[p][0]
        c.queue[p][0] = c.queue[p][i]
        c.queue[p][i] = t
        c.order_locked[p] = 1
        advance(s)
        return
    if kind == ACT_MECA:
        # K-MB2/A8: take the top into the machine; the Meca becomes the top; check frees.
        col = action & 7
        meca = c.queue[p][0]
        pop_head(c, p)
        taken = c.top[col]
        c.top[col] = meca
        c.status[meca] = AT_TOP
        enqueue(c, p, taken)
        free_check(c, col)
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
    cdef int i, j, d, gx, gy, nx, ny, net, head, tail, size, t, u
    cdef uint8_t kept[40]
    cdef uint8_t grouped[40]
    cdef int stack[40]
    cdef int total = 0, count = 0
    cdef bint linked
    net = -1
    for d in range(4):
        if m.comp[0][d] != EMPTY:
            net = m.comp[0][d]
    for i in range(n):
        kept[i] = 0
        grouped[i] = 0
        if i == 0:
            continue
        for d in range(4):
            if m.comp[i][d] != EMPTY and m.comp[i][d] == net:
                kept[i] = 1
        if kept[i]:
            count += 1
    # B) colour groups among the kept tiles.
    for i in range(1, n):
        if not kept[i] or grouped[i]:
            continue
        size = 0
        head = 0
        stack[head] = i
        head += 1
        grouped[i] = 1
        while head:
            head -= 1
            u = stack[head]
            size += 1
            for d in range(4):
                j = neighbour(c, m, p, u, d)
                if j <= 0 or not kept[j] or grouped[j]:   # empty, or the Source (A13)
                    continue
                if T_COLOUR[c.m_id[p][j]] != T_COLOUR[c.m_id[p][u]]:
                    continue
                if pipe_groups and not ((m.exits[u] >> d) & 1 and (m.exits[j] >> opposite(d)) & 1):
                    continue
                grouped[j] = 1
                stack[head] = j
                head += 1
        if size >= 3:
            total += size
    # C) flowers.
    for i in range(1, n):
        if not kept[i]:
            continue
        t = c.m_id[p][i]
        if T_FLOWERS[t] == 0:
            continue
        if T_NEEDS_LINK[t]:
            linked = False
            for d in range(4):
                if not (m.exits[i] >> d) & 1:
                    continue
                j = neighbour(c, m, p, i, d)
                if j > 0 and (m.exits[j] >> opposite(d)) & 1 and T_COLOUR[c.m_id[p][j]] == T_COLOUR[t]:
                    linked = True
            if not linked:
                continue
        total += T_FLOWERS[t]
    points[0] = total
    tiles[0] = count


cdef void k_scores(const uint8_t* buf, double* out) noexcept nogil:
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef int tiles
    cdef int p
    for p in range(2):
        machine_score(s, p, &out[p], &tiles, s.core.group_adjacency == 1)


cdef void k_returns(const uint8_t* buf, double* out) noexcept nogil:
    """K-SC4: most points; tie: most machine tiles; further tie: a draw."""
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef double pts[2]
    cdef int tiles[2]
    cdef int p
    for p in range(2):
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


cdef int32_t k_rollout_action(const uint8_t* buf, Rng* rng) noexcept nogil:
    """Playout policy: uniform over the legal actions, as without a policy, but machine
    placements are drawn without listing them (they are most of a playout's cost)."""
    cdef BotanikState* s = <BotanikState*>buf
    cdef BotanikCore* c = &s.core
    cdef int32_t listed[MAX_LEGAL]
    cdef int p, n
    if c.stage == STAGE_RESOLVE:
        p = resolver(c)
        if decision_kind(c, p) == DEC_MACH:
            return sample_placement(s, p, c.queue[p][0], rng)
    n = k_legal_actions(buf, listed)
    return listed[rng_below(rng, n)]


cdef void k_rebuild(uint8_t* buf) noexcept nogil:
    cdef BotanikState* s = <BotanikState*>buf
    cdef int t
    rebuild_machine(s, 0)
    rebuild_machine(s, 1)
    memset(s.pool_count, 0, sizeof(s.pool_count))
    s.pool_total = 0
    for t in range(N_COLOURED):
        if s.core.status[t] == AT_POOL:
            s.pool_count[T_KIND[t]] += 1
            s.pool_total += 1


cdef int32_t k_sample_chance(const uint8_t* buf, Rng* rng) noexcept nogil:
    """K-S3/K-P1: a uniformly random undrawn tile, reported as its kind (the same
    distribution as chance_outcomes: each kind weighted by its undrawn copies)."""
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef int k, kind
    cdef int r = rng_below(rng, s.pool_total)
    for k in range(N_KINDS):
        kind = KINDS[k]
        r -= s.pool_count[kind]
        if r < 0:
            return ACT_DRAW | kind
    return ACT_DRAW | KINDS[N_KINDS - 1]   # unreachable when pool_total is consistent


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
KERNEL.rebuild = k_rebuild
KERNEL.sample_chance = k_sample_chance


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


def tile_exits(int tile, int r):
    return T_EXITS[tile][r]


def distinct_rotations(int tile):
    return [T_ROTS[tile][k] for k in range(T_NROT[tile])]
