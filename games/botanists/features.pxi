# Value-model features of a Botanists position from one seat's side (issue 16; the kernel
# contract's optional `features` slot). Included by kernel.pyx. Leaves are evaluated on
# determinized states, so every field may be read. Scaled to about [0, 1].
cdef enum:
    FEATURE_COUNT = 8

cdef int k_features(const uint8_t* buf, int seat, double* out) noexcept nogil:
    cdef const BotanistsCore* c = <const BotanistsCore*>buf
    cdef int p, own = 0, other = -100000, sc, own_land = 0, other_land = 0, down = 0
    for p in range(c.players):
        sc = get_score(c, p)
        if p == seat:
            own = sc
            own_land = c.land_filled[p]
        else:
            if sc > other:
                other = sc
            if c.land_filled[p] > other_land:
                other_land = c.land_filled[p]
    if c.players == 1:
        other = 0
    for p in range(15):
        down += c.land_down[seat][p]
    out[0] = own / 50.0
    out[1] = other / 50.0
    out[2] = (own - other) / 50.0
    out[3] = own_land / 15.0
    out[4] = other_land / 15.0
    out[5] = down / 15.0                          # withered tiles (E3 tie-break, lost space)
    out[6] = (c.round * 5 * c.players + c.turns_done) / (15.0 * c.players)   # game progress
    out[7] = c.fulfilled_total[seat] / 10.0
    return FEATURE_COUNT
