# Botanists state layout. Every field is a byte (scores: two bytes, little-endian, written
# byte by byte), so the serialized core is the same on every platform. Legend beside each field.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

cdef enum:
    N_CELLS = 25           # the 5x5 market, cell = row * 5 + column, row 0 at the top for seat 0
    N_COLOURS = 5          # 0 red, 1 yellow, 2 green, 3 blue, 4 purple
    N_BOARDS = 5
    N_SPACES = 15          # land spaces: column k / 5, row k % 5 (planting order)
    N_CARDS = 76           # market cards: 4 * shape + highlighted box
    N_ORDERS = 82
    N_OPEN = 3
    N_SEATS = 4
    HELPER = 4             # index of the Little Helper in pawn / board / land arrays
    EMPTY = 255            # empty market cell, open slot, land space or undealt board
    OFF = 255              # a pawn beside the market
    NO_BONUS = 255

cdef enum Stage:
    ST_SETUP_BOARD = 0     # S2/L2: boards dealt (chance) or chosen (option), then the Helper's
    ST_SETUP_CARDS = 1     # S3/L1: market cards dealt, 2 each (3 solo)
    ST_SETUP_OPEN = 2      # S4: three open orders revealed
    ST_SETUP_PERSONAL = 3  # S5: personal orders (the blue board's extra one)
    ST_SETUP_MARKET = 4    # S6: the 25 market tiles, row-major
    ST_SETUP_FIRST = 5     # S7: the random first player (not solo)
    ST_SOLO_ORDER = 6      # L3: own character or the Helper first
    ST_ACTION = 7          # G3: move (purchase, P1/P2) or tend (T2) -- one decision
    ST_CARD = 8            # P3: the market card to play
    ST_PLANT = 9           # P5: the collected tile to plant and its face
    ST_BONUS = 10          # 2.6: the triggered bonus's choices (field `bonus`)
    ST_TEND_DISCARD = 11   # T3: open orders to discard
    ST_TEND_DRAW = 12      # T4: draw 2 market cards or not
    ST_TEND_KEEP = 13      # T4: discard back down to `keep_target` cards
    ST_FULFIL_OPEN = 14    # P8/T5/O2: at most one open order
    ST_FULFIL_PERSONAL = 15  # P8/T5/O2: at most one personal order
    ST_HELPER_CARD = 16    # L5: the card that moves the Helper
    ST_HELPER_DEST = 17    # L5: the Helper's box and the tile's face
    ST_SOLO_DISCARD = 18   # L8: discard 0 or 1 card before drawing up to 3
    ST_END_TURN = 19       # waiting only for chance (refills), then the next turn
    ST_KEEP = 20           # SC5: each player keeps up to 2 leftovers
    ST_CHOOSE_FIRST = 21   # SC7: the chooser names the next round's first player
    ST_OVER = 22

cdef enum Part:
    PART_NONE = 0
    PART_PURCHASE = 1
    PART_TEND = 2
    PART_HELPER = 3

cdef enum CardLoc:
    CARD_DECK = 0
    CARD_DISCARD = 1
    CARD_HAND = 2          # + seat

cdef enum OrderLoc:
    ORDER_DECK = 0
    ORDER_DISCARD = 1
    ORDER_OPEN = 2         # in open_orders[]
    ORDER_PERSONAL = 3     # + seat
    ORDER_FULFILLED = 7    # + seat: fulfilled this round, scored and discarded at the phase

ctypedef struct BotanistsCore:
    uint8_t stage              # Stage
    uint8_t players            # 1 (solo, the Little Helper) .. 4
    uint8_t opt_entry          # A13 entry_mode: 0 outer_start, 1 outer_is_step1
    uint8_t opt_move           # A14 move_mode: 0 king2, 1 straight2
    uint8_t opt_orientation    # A15 orientation_mode: 0 seat, 1 absolute
    uint8_t opt_bonus_sees     # A16 bonus_sees_new_leftovers: 0/1
    uint8_t opt_fulfil_purchase  # A8 fulfil_after_purchase: 0/1
    uint8_t opt_choose_boards  # S2 board_assignment: 0 deal (chance), 1 choose (decisions)
    uint8_t tiles_per_colour   # A1: 29 (145 tiles) or 25 (125)
    uint8_t round              # 0..2 (3 after the last scoring phase)
    uint8_t first_player       # this round's first player
    uint8_t turns_done         # turns finished in this round, 0..5 * players
    uint8_t cur                # the seat whose turn it is
    uint8_t part               # Part being played by the turn's character
    uint8_t solo_first         # L3: 0 own character first, 1 the Helper first
    uint8_t done_mask          # bit 0 own part done, bit 1 Helper part done (this turn),
                               # bit 2 the personal order was fulfilled before the open one (T5)
    uint8_t planted            # bit 0 own tile planted, bit 1 Helper tile planted (this turn)
    uint8_t own_action         # 0 none yet, 1 purchase, 2 tend, 3 no action possible (A10)
    uint8_t bonus              # bonus kind being resolved (ST_BONUS) or NO_BONUS
    uint8_t bonus_on_helper    # 1 if the bonus came from the Helper's board (L9)
    uint8_t sel_a              # sub-choice memory: red bonus opponent / card moving the Helper
    uint8_t sel_b              # sub-choice memory: colour given in a swap bonus
    uint8_t keep_target        # T4: hand size to discard back down to
    uint8_t keep_index         # SC5: position in turn order of the seat deciding what to keep
    uint8_t chooser            # SC7: the seat choosing the next first player
    uint8_t pend_personal      # chance pending: orders to draw into cur's personal orders
    uint8_t pend_open          # chance pending: refill empty open-order slots
    uint8_t pend_cards         # chance pending: market cards to draw into cur's hand
    uint8_t pend_market        # chance pending: refill empty market cells (row-major)
    uint8_t market[25]         # tile colour per cell, EMPTY
    uint8_t pawn[5]            # cell per seat (index 4 = Helper), OFF
    uint8_t bag[5]             # tiles per colour in the bag
    uint8_t collected[5]       # tiles of this purchase not yet planted / placed (per colour)
    uint8_t board[5]           # board id per seat (index 4 = Helper's), EMPTY before the deal
    uint8_t land_filled[5]     # spaces filled, 0..15 (index 4 = Helper)
    uint8_t land_colour[5][15] # planted tile colour per space (face-down colours are known, A27)
    uint8_t land_down[5][15]   # 1 = face down (withered)
    uint8_t leftover[4][5]     # marginal land per seat and colour
    uint8_t score[4][2]        # VP per seat, int16 little-endian (low byte, high byte)
    uint8_t fulfilled_total[4] # orders fulfilled over the whole game (E3 tie-break)
    uint8_t card_loc[76]       # CardLoc per market card
    uint8_t order_loc[82]      # OrderLoc per order card
    uint8_t open_orders[3]     # order id per open slot, EMPTY
    uint8_t card_held[10]      # 76-bit set (bit k of byte k >> 3): card k is in a hand and has
                               # been in hands since the last reshuffle of the market-card
                               # discard pile (A10), so every seat knows it is not in the deck

# Derived cache (rebuilt from the core by rebuild(), kept in step by every write of the kernel):
# bit sets of the card, order and market-cell locations, so that hands, decks and refills are
# found without scanning the byte arrays. 128-bit sets are two words, bit i of word i >> 6.
ctypedef struct BotanistsCache:
    uint64_t cards[6][2]       # card ids per CardLoc value (deck, discard, hand of seat 0..3)
    uint64_t orders[11][2]     # orders per OrderLoc value, at bit ORDER_POS[o] (by kind, then id)
    uint32_t tiles             # market cells holding a tile (colour < N_COLOURS)
    uint32_t empties           # market cells that are EMPTY
    uint32_t colour_cells[5]   # market cells holding a tile of each colour
    uint8_t card_count[6]      # cards per CardLoc value (the sizes of `cards`)
    uint32_t pawn_cells        # market cells under a pawn (the Helper's included)
    uint8_t pawns_shared       # 1 if two pawns stand on one cell (pawn_cells then says less)
    uint16_t bag_total         # tiles in the bag (the sum of bag)
    uint32_t left_packed[4]    # each seat's leftovers packed 6 bits a colour, clamped at 27
                               # (the playout policy's pack_counts)
    uint32_t moves             # at a turn's first decision (ST_ACTION, no draw pending, land not
                               # full): purchase_dests() of the seat to move; else 0
    uint8_t ctx                # chance_context() of the state (set by apply and rebuild)

ctypedef struct BotanistsState:
    BotanistsCore core
    BotanistsCache cache
