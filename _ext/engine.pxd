from libc.stdint cimport uint8_t, int32_t
from hortus._ext.kernel cimport GameKernel
from hortus._ext.rng cimport Rng

cdef int32_t sample_chance(GameKernel* k, const uint8_t* s, int32_t* actions, double* weights,
                           Rng* rng) noexcept nogil

cdef class KernelState:
    cdef GameKernel* kernel
    cdef uint8_t* buf
    cdef object capsule        # keeps the game's module (and its static kernel) alive
    cdef list _actions(self, bint searched)
