from libc.stdint cimport uint8_t
from hortus._ext.kernel cimport GameKernel

cdef class KernelState:
    cdef GameKernel* kernel
    cdef uint8_t* buf
    cdef object capsule        # keeps the game's module (and its static kernel) alive
