# Value-model features of a Botanical Lab position from one seat's side (the kernel
# contract's optional `features` slot). Included by kernel.pyx. Leaves are evaluated on
# determinized states, so every field may be read. Scaled to about [0, 1].
cdef enum:
    FEATURE_COUNT = 9

cdef int k_features(const uint8_t* buf, int seat, double* out) noexcept nogil:
    cdef const LabCore* c = <const LabCore*>buf
    cdef double pts[4]
    cdef int p, k, cards = 0, cost = 0, n, own_vp = 0, other_vp = -1000, v
    cdef double other = -1000.0
    k_scores(buf, pts)
    for p in range(c.players):
        v = vp_of(c, p)
        if p == seat:
            own_vp = v
        else:
            if pts[p] > other:
                other = pts[p]
            if v > other_vp:
                other_vp = v
    # The deck's strength: mean acquisition cost of the seat's cards (every zone).
    for k in range(MAX_KINDS):
        n = c.hand[seat][k] + c.draw[seat][k] + c.discard[seat][k] + c.play[seat][k]
        cards += n
        if K_COST[k] != NO_COST:
            cost += n * K_COST[k]
    out[0] = pts[seat] / 35.0
    out[1] = other / 35.0
    out[2] = (pts[seat] - other) / 35.0
    out[3] = own_vp / <double>END_VP              # LE1: the end trigger
    out[4] = other_vp / <double>END_VP
    out[5] = c.markers_free[seat] / 10.0
    out[6] = cost / (4.0 * cards) if cards else 0.0
    out[7] = cards / 30.0
    out[8] = 1.0 if c.final_round else 0.0
    return FEATURE_COUNT
