# Value-model features of a War of the Posies position from one seat's side (the
# kernel contract's optional `features` slot). Included by kernel.pyx. Leaves are evaluated on
# determinized states, so every field may be read. Scaled to about [0, 1].
cdef enum:
    FEATURE_COUNT = 10

cdef int k_features(const uint8_t* buf, int seat, double* out) noexcept nogil:
    cdef const WarCore* c = <const WarCore*>buf
    cdef int p, g, i, pts, a, b, own_pts = 0, other_pts = -1000, own_rep = 0, other_rep = 0
    cdef int rep, filled = 0, open_slots = 0, cards = 0, cost = 0, k
    cdef uint32_t m
    for p in range(c.players):
        seat_totals(c, p, &pts, &a, &b)
        rep = completed_reputation(c, p)
        if p == seat:
            own_pts, own_rep = pts, rep
        else:
            if pts > other_pts:
                other_pts = pts
            if rep > other_rep:
                other_rep = rep
    # WPl: Flowers already planted under the seat's unfinished Garden Features (progress
    # towards the next Reputation) against the slots still open there.
    m = wp_eq32(c.gf_loc, GF_OWNED + seat) & ~wp_anybit32(c.gf_flags, GF_COMPLETE) & GF_MASK
    while m:
        g = wp_ctz64(m)
        for i in range(G_NSLOTS[g]):
            if G_SYM[g][i] != EMPTY:
                if c.gf_slot[g][i]:
                    filled += 1
                else:
                    open_slots += 1
        m &= m - 1
    # The deck's buying power: mean cost of the seat's cards (hand, draw and discard piles).
    for k in range(MAX_KINDS):
        i = c.hand[seat][k] + c.draw[seat][k] + c.discard[seat][k]
        cards += i
        cost += i * K_COST[k]
    out[0] = own_pts / 20.0
    out[1] = other_pts / 20.0
    out[2] = (own_pts - other_pts) / 20.0
    out[3] = own_rep / <double>END_REPUTATION
    out[4] = other_rep / <double>END_REPUTATION
    out[5] = filled / 4.0
    out[6] = open_slots / 4.0
    out[7] = cost / (3.0 * cards) if cards else 0.0
    out[8] = c.round / 40.0
    out[9] = 1.0 if c.end_trigger != EMPTY else 0.0
    return FEATURE_COUNT
