# Value-model features of a Botanists position from one seat's side (the kernel
# contract's optional `features` slot). Included by kernel.pyx. Leaves are evaluated on
# determinized states, so every field may be read. Scaled to about [0, 1].
#
# The banked score (get_score) moves only at a scoring phase (SC1-SC4 after each round, E1/E2
# after the last) and with blue's +3: inside a round it does not see the orders fulfilled
# (SC1, 5 each, banked at the phase), the leftovers (SC3 -2 each, SC2 +7 for none), the column
# bonus (SC4) nor the end penalties (E1 -T(withered), E2 -5 per unfulfilled personal order).
# A model over banked points alone steered the search away from all of these (0%
# against mcts-base at plies 0). So each seat's score is projected as if the game ended now,
# with every pending scoring rule applied, and the parts that may still change (leftovers,
# withered tiles, personal orders and how close the tiles held are to them, the column bonus
# still open) are features of their own.
cdef enum:
    FEATURE_COUNT = 18


ctypedef struct SeatOutlook:
    int projected     # banked score + every pending SC1-SC4 / E1 / E2 term, as if it ended now
    int left          # leftovers (SC2/SC3), with a purchase's collected tiles not yet placed
    int down          # withered tiles (E1, E3 tie-break)
    int personal      # unfulfilled personal orders (E2)
    int missing       # tiles the leftovers lack for the nearest personal order (0 = can fulfil)
    int open_ready    # open orders the leftovers fulfil now (O2)
    int column_open   # SC4: this round's column bonus still reachable (all filled face up)


cdef void seat_outlook(const BotanistsCore* c, int p, SeatOutlook* o) noexcept nogil:
    cdef const BotanistsCache* ca = cache_of(c)
    cdef const uint64_t* m
    cdef int held[N_ORDERS]
    cdef int L[5]
    cdef int col, i, n, k, r = c.round, need, miss, best_miss = 99, pending, filled
    cdef bint scored = c.stage == ST_KEEP or c.stage == ST_CHOOSE_FIRST or c.stage == ST_OVER
    cdef bint clean
    o.left = 0
    for col in range(N_COLOURS):
        L[col] = c.leftover[p][col]
        if p == c.cur and c.stage < ST_KEEP:
            L[col] += c.collected[col]     # P5-P7: waiting tiles end as leftovers or planted
        o.left += L[col]
    if p == c.cur and c.stage == ST_PLANT and o.left > 0:
        o.left -= 1                        # P5: one collected tile is still to be planted
    o.down = face_down_count(c, p)
    m = ca.orders[<int>ORDER_PERSONAL + p]
    n = list2(m[0], m[1], held, N_ORDERS)
    o.personal = n
    for i in range(n):
        miss = 0
        for col in range(N_COLOURS):
            need = ORDER_NEED[ORDER_AT[held[i]]][col] - L[col]
            if need > 0:
                miss += need
        if miss < best_miss:
            best_miss = miss
    o.missing = best_miss if n else 0
    o.open_ready = 0
    for i in range(N_OPEN):
        k = c.open_orders[i]
        if k < N_ORDERS:
            miss = 0
            for col in range(N_COLOURS):
                if L[col] < ORDER_NEED[k][col]:
                    miss = 1
            if not miss:
                o.open_ready += 1
    # Projected final score: the phase's terms (unless this round's phase already ran), then E1/E2.
    o.projected = get_score(c, p)
    o.column_open = 0
    if not scored and r < 3:
        pending = count2(ca.orders[<int>ORDER_FULFILLED + p])
        o.projected += ORDER_POINTS * pending - LEFTOVER_PENALTY * o.left   # SC1, SC3
        if o.left == 0:
            o.projected += NO_LEFTOVER_BONUS                               # SC2
        clean = True
        filled = c.land_filled[p]
        for k in range(5 * r, 5 * r + 5):
            if k < filled and (c.land_down[p][k] or c.land_colour[p][k] >= N_COLOURS):
                clean = False
        if clean:
            if filled >= 5 * r + 5:
                o.projected += COLUMN_BONUS[r]                             # SC4, complete
            else:
                o.column_open = COLUMN_BONUS[r]
    if c.stage != ST_OVER:
        o.projected -= o.down * (o.down + 1) // 2 + UNFULFILLED_PERSONAL_PENALTY * o.personal  # E1, E2


cdef int k_features(const uint8_t* buf, int seat, double* out) noexcept nogil:
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef SeatOutlook own, opp, tmp
    cdef int p, best = -1
    cdef double progress, diff
    seat_outlook(c, seat, &own)
    opp.projected = 0
    opp.left = 0
    opp.down = 0
    opp.personal = 0
    opp.missing = 0
    opp.open_ready = 0
    opp.column_open = 0
    for p in range(c.players):
        if p != seat:
            seat_outlook(c, p, &tmp)
            if best < 0 or tmp.projected > opp.projected:
                opp = tmp
                best = p
    progress = (c.round * 5 * c.players + c.turns_done) / (15.0 * c.players)
    if progress > 1.0:
        progress = 1.0
    diff = (own.projected - opp.projected) / 50.0
    out[0] = own.projected / 50.0
    out[1] = opp.projected / 50.0
    out[2] = diff
    out[3] = diff * progress                 # the projection says more the later it is
    out[4] = progress
    out[5] = own.left / 8.0
    out[6] = opp.left / 8.0
    out[7] = own.down / 8.0
    out[8] = opp.down / 8.0
    out[9] = own.personal / 3.0
    out[10] = opp.personal / 3.0
    out[11] = own.missing / 6.0
    out[12] = opp.missing / 6.0
    out[13] = own.open_ready / 3.0
    out[14] = own.column_open / 5.0
    out[15] = opp.column_open / 5.0
    out[16] = (c.land_filled[seat] - (c.land_filled[best] if best >= 0 else 0)) / 2.0   # turn tempo
    out[17] = 1.0 if c.cur == seat else 0.0
    return FEATURE_COUNT
