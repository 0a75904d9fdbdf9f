# Memory that one thread writes in a hot loop while other threads run theirs: it gets cache
# lines of its own. Buffers allocated one after the other (one search per thread) otherwise
# share a line at their edges, and every write of one thread invalidates the other's cache
# (false sharing: it made threads=2 run anywhere between 1.0x and 1.95x one thread's speed).
from libc.string cimport memset
from posix.stdlib cimport posix_memalign

cdef enum:
    CACHE_LINE = 64  # bytes


cdef inline void* alloc_own_lines(size_t size) noexcept nogil:
    """`size` zeroed bytes on whole cache lines of their own (NULL when out of memory); free()
    releases them."""
    cdef void* p = NULL
    cdef size_t n = (size + CACHE_LINE - 1) // CACHE_LINE * CACHE_LINE
    if n == 0:
        n = CACHE_LINE
    if posix_memalign(&p, CACHE_LINE, n) != 0:
        return NULL
    memset(p, 0, n)
    return p
