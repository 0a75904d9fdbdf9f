# Value-model features of a Botanik position from one seat's side (the kernel
# contract's optional `features` slot). Included by kernel.pyx. Leaves are evaluated on
# determinized states, so every field may be read. Scaled to about [0, 1].
cdef enum:
    FEATURE_COUNT = 8

cdef int k_features(const uint8_t* buf, int seat, double* out) noexcept nogil:
    cdef const BotanikState* s = <const BotanikState*>buf
    cdef double pts[2]
    k_scores(buf, pts)
    cdef int other = 1 - seat
    out[0] = pts[seat] / 20.0
    out[1] = pts[other] / 20.0
    out[2] = (pts[seat] - pts[other]) / 20.0
    out[3] = s.core.n_tiles[seat] / 35.0          # machine size (tiebreak K-SC4)
    out[4] = s.core.n_tiles[other] / 35.0
    out[5] = s.core.phase / 20.0                   # game progress: 20 phases
    out[6] = 1.0 if s.core.holder == seat else 0.0     # the Meca pawn (K-M rules)
    out[7] = (s.core.qlen[seat] - s.core.qlen[other]) / 4.0   # freed tiles still to build
    return FEATURE_COUNT
