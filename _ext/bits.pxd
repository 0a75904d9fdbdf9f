# Bit counts the kernels share, without a library call: the extensions are built for plain
# x86-64, without the POPCNT instruction, where __builtin_popcount is a call into libgcc.
from libc.stdint cimport uint32_t, uint64_t


cdef inline int pop64(uint64_t x) noexcept nogil:
    """Set bits of a 64-bit word (SWAR: pairs, nibbles, bytes, then one multiplication)."""
    x = x - ((x >> 1) & <uint64_t>0x5555555555555555ULL)
    x = (x & <uint64_t>0x3333333333333333ULL) + ((x >> 2) & <uint64_t>0x3333333333333333ULL)
    x = (x + (x >> 4)) & <uint64_t>0x0F0F0F0F0F0F0F0FULL
    return <int>((x * <uint64_t>0x0101010101010101ULL) >> 56)


cdef inline int pop_few(uint32_t x) noexcept nogil:
    """Set bits of a mask that has few (one step a bit: cheaper than pop64 for one or two)."""
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n
