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


# A search's node arena (tens of KB to hundreds of MB, grown by doubling) is a mapping of its
# own once it reaches HORTUS_NODE_ARENA_MAP_BYTES (128 KiB): freed, it goes back to the system
# at once, whatever state malloc's heap is in. Left to malloc, an arena above glibc's mmap
# threshold was still carved from the heap whenever a free chunk or the heap's top could hold
# it (glibc maps a block only when neither can): after a larger search, or with the top grown
# by small frees, a server's later trees lived in its heap and the holes they left were never
# returned (tune_malloc in hortus.server.app narrowed that but could not rule it out:
# a CI run still saw a whole tree in the heap). Linux grows a mapping with mremap, without
# copying; other systems, and builds under AddressSanitizer, keep malloc/realloc.
cdef extern from *:
    """
    #include <stdlib.h>
    #include <string.h>
    /* Under AddressSanitizer (tests/fuzz/run_asan_fuzz.sh) the arena stays with malloc, so
       that a read or write past it is still caught. */
    #if defined(__has_feature)
    #if __has_feature(address_sanitizer)
    #define HORTUS_ARENA_UNDER_ASAN 1
    #endif
    #endif
    #if defined(__SANITIZE_ADDRESS__)
    #define HORTUS_ARENA_UNDER_ASAN 1
    #endif
    #if defined(__linux__) && !defined(HORTUS_ARENA_UNDER_ASAN)
    #include <sys/mman.h>
    #define HORTUS_ARENA_CAN_MAP 1
    #else
    #define HORTUS_ARENA_CAN_MAP 0
    #endif
    #define HORTUS_NODE_ARENA_MAP_BYTES ((size_t)128 * 1024)

    /* `block` (NULL, or `old_bytes` from an earlier call) resized to `new_bytes`, contents
       kept; NULL when out of memory (the old block is then untouched). *mapped says whether
       the block is a mapping (0 for a new one) and is updated. */
    static inline void* hortus_arena_resize(void* block, size_t old_bytes, size_t new_bytes,
                                            int* mapped) {
    #if HORTUS_ARENA_CAN_MAP
        void* p;
        if (*mapped) {
            p = mremap(block, old_bytes, new_bytes, MREMAP_MAYMOVE);
            return p == MAP_FAILED ? NULL : p;
        }
        if (new_bytes >= HORTUS_NODE_ARENA_MAP_BYTES) {
            p = mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) return NULL;
            if (block != NULL) {
                memcpy(p, block, old_bytes < new_bytes ? old_bytes : new_bytes);
                free(block);
            }
            *mapped = 1;
            return p;
        }
    #endif
        return realloc(block, new_bytes);
    }

    static inline void hortus_arena_free(void* block, size_t bytes, int mapped) {
    #if HORTUS_ARENA_CAN_MAP
        if (mapped) {
            if (block != NULL) munmap(block, bytes);
            return;
        }
    #endif
        free(block);
    }
    """
    void* arena_resize "hortus_arena_resize"(void* block, size_t old_bytes, size_t new_bytes,
                                              int* mapped) noexcept nogil
    void arena_free "hortus_arena_free"(void* block, size_t bytes, int mapped) noexcept nogil
