# Botanik state layout. Every field is a byte, so the serialized core is the same on every
# platform (no endianness). Legend beside each field.
from libc.stdint cimport uint8_t, int8_t, uint16_t, uint32_t, uint64_t

cdef enum:
    N_COLOURED = 65        # K-C3: 5 colours x 13 tiles; ids 0..64
    SOURCE_ID = 65         # seat p's Source is id 65 + p
    N_TILES = 67
    N_COLUMNS = 5
    N_ARRIVAL = 3
    N_PHASES = 20          # K-P4: 60 tiles / 3 per arrival
    MAX_MACHINE = 40       # A14: at most 1 + 30 + 5 tiles ever enter one machine
    QUEUE_CAP = 4
    GRID = 64              # machine coordinates -32..31 (6 bits each in the action id)
    GRID_OFFSET = 32
    EMPTY = 255

cdef enum Stage:
    STAGE_DEAL = 0         # chance: the 5 central tiles (K-S4)
    STAGE_DRAW = 1         # chance: the 3 arrivals of a phase (K-P1)
    STAGE_REGISTRY = 2     # the turn player places an arrival tile (K-T1)
    STAGE_RESOLVE = 3      # freed tiles and Meca exchanges are resolved (K-F1, K-MB2, A9)
    STAGE_OVER = 4

cdef enum TileStatus:
    AT_POOL = 0, AT_ARRIVAL = 1, AT_TOP = 2, AT_SIDE = 3, AT_BURIED = 4, AT_MACHINE = 5,
    AT_REMOVED = 6, AT_QUEUE = 7

ctypedef struct BotanikCore:
    uint8_t stage              # Stage
    uint8_t phase              # phases completed, 0..20
    uint8_t first_player       # seat A (K-S5)
    uint8_t holder             # seat holding the Meca pawn
    uint8_t turn_player        # seat placing an arrival tile this turn
    uint8_t placed             # arrival tiles placed in this phase, 0..3
    uint8_t closure_rule       # option: 0 open_end, 1 no_cycles, 2 both (A4)
    uint8_t group_adjacency    # option: 0 orthogonal, 1 pipe (A5)
    uint8_t top[5]             # central stack tops (tile id; EMPTY only while dealing)
    uint8_t side[2][5]         # side[seat][column]: tile id or EMPTY
    uint8_t arrival[3]         # arrival zone: tile id or EMPTY
    uint8_t status[65]         # TileStatus of every coloured tile
    uint8_t qlen[2]            # pending items per seat
    uint8_t queue[2][4]        # pending freed tiles (a Meca means an exchange), head first
    uint8_t order_locked[2]    # 1 once the seat chose which pending item goes first (D_ORDER)
    uint8_t n_tiles[2]         # machine sizes (the Source included, at index 0)
    uint8_t m_id[2][40]        # machine tiles: id
    int8_t m_x[2][40]          #   x (right), -32..31
    int8_t m_y[2][40]          #   y (down), -32..31
    uint8_t m_rot[2][40]       #   rotation 0..3 (clockwise quarter turns)

# The derived cache (rebuilt from the core by k_rebuild, kept up to date by add_to_machine;
# the two must agree byte for byte, padding included, which is why rebuild clears it first).
# A machine is held as a graph, not a board: each tile and each empty cell beside the machine
# knows which tile is on each of its sides, which is all the rules ask of the geometry and
# keeps the state small (the search copies it once per iteration).
cdef enum:
    MAX_FRONT = 160        # empty cells beside a machine: at most 4 per tile

ctypedef struct MachineCache:
    uint8_t exits[40]          # rotated exit mask per machine tile (bit d = side d has a pipe)
    uint8_t nb[40][4]          # per machine tile and side: the tile there (index + 1), 0 none
    # Pipe component of each side (EMPTY = no pipe), labelled by the smallest side slot
    # (index * 4 + side) in it: a component keeps its label when a new tile joins it, and
    # components merged by a new tile take the smallest of their labels.
    uint8_t comp[40][4]
    uint8_t comp_open[160]     # open ends (pipe facing an empty cell) per component label
    # Per machine tile, the sides with a tile of its colour (bits 0-3; the Sources have none)
    # and those where, besides, pipes meet (bits 4-7): colour groups and crop links (K-SC2/3).
    uint8_t same[40]
    uint8_t n_front
    # The empty in-grid cells beside the machine (x << 6 | y), in the order the machine's tiles
    # discover them (tile by tile, sides N E S W): the playout samples placements over it.
    uint16_t front[MAX_FRONT]
    # The sides of each frontier cell with a tile, and those with a pipe facing it (occupied
    # | facing pipes << 4; zero past n_front): placements are checked and scored cell by
    # cell, and a cell's neighbours change only when a tile is built beside it.
    uint8_t front_mask[MAX_FRONT]
    # The sides of each frontier cell by the colour of the tile there: bit 4 * colour + d when
    # the tile on side d has that colour (the Sources have none, K-SC2). The policy reads a
    # placement's same-colour neighbours from it in one shift.
    uint32_t front_colours[MAX_FRONT]
    uint8_t front_nb[MAX_FRONT][4]   # per frontier cell and side: the tile there (index + 1)

ctypedef struct BotanikState:
    BotanikCore core
    MachineCache cache[2]
    uint8_t pool_count[65]     # undrawn copies per kind (indexed by the kind's lowest id)
    uint8_t pool_total         # undrawn tiles
    # Undrawn tiles as bits at their POOL_POS (tiles ordered by kind, then id): the r-th set
    # bit is the r-th undrawn tile when counting kind by kind (sample_chance).
    uint64_t pool_bits[2]
    # top_cols[b]: the columns whose top has bit b of its T_LINK mask (its colour or its type),
    # so the columns a tile links with are two lookups (K-T2).
    uint8_t top_cols[32]
    # side_cols[p][b]: the same for seat p's side tiles, and side_taken[p] the columns where
    # seat p has a side tile, so what a stack placement frees (K-T4) is a few mask operations.
    uint8_t side_cols[2][32]
    uint8_t side_taken[2]
    # tile_value of each side tile (0 where none), for the policy; per seat one 8-byte row
    # (columns 5-7 stay 0), loaded as one word.
    uint8_t side_value[2][8]
    # K-SC1..4 once the game is over (zero before): each seat's points and tie-break tile
    # count, worked out by the move that ends the game, so returns and scores after a playout
    # read them instead of each scoring both machines again.
    uint16_t final_points[2]
    uint8_t final_tiles[2]
