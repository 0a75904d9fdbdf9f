# xoshiro256** (Blackman & Vigna), seeded with splitmix64: fast, tiny state, usable without
# the GIL, and deterministic across platforms (only 64-bit integer arithmetic).
from libc.stdint cimport uint64_t, uint32_t

ctypedef struct Rng:
    uint64_t s[4]


cdef inline uint64_t _splitmix64(uint64_t* x) noexcept nogil:
    x[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline void rng_seed(Rng* rng, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed
    rng.s[0] = _splitmix64(&x)
    rng.s[1] = _splitmix64(&x)
    rng.s[2] = _splitmix64(&x)
    rng.s[3] = _splitmix64(&x)


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t rng_next(Rng* rng) noexcept nogil:
    cdef uint64_t result = _rotl(rng.s[1] * 5, 7) * 9
    cdef uint64_t t = rng.s[1] << 17
    rng.s[2] ^= rng.s[0]
    rng.s[3] ^= rng.s[1]
    rng.s[1] ^= rng.s[2]
    rng.s[0] ^= rng.s[3]
    rng.s[2] ^= t
    rng.s[3] = _rotl(rng.s[3], 45)
    return result


cdef inline uint32_t rng_below(Rng* rng, uint32_t n) noexcept nogil:
    """Uniform integer in [0, n) (Lemire's multiply-shift; bias < 2**-32, irrelevant here)."""
    return <uint32_t>(((rng_next(rng) >> 32) * <uint64_t>n) >> 32)


cdef inline double rng_uniform(Rng* rng) noexcept nogil:
    """Uniform double in [0, 1)."""
    return (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0)


cdef inline int rng_weighted_index(int n, const double* weights, Rng* rng) noexcept nogil:
    """Index in [0, n) drawn with probability proportional to weights[i] (n >= 1), from exactly
    one uniform, by inversion. The engine's generic chance sampler; a game's own sampler that
    must give the same seeded results uses this same arithmetic."""
    cdef double total = 0.0, x
    cdef int i
    for i in range(n):
        total += weights[i]
    x = rng_uniform(rng) * total
    for i in range(n - 1):
        x -= weights[i]
        if x < 0.0:
            return i
    return n - 1
