# cython: language_level=3
"""A game-agnostic state object over any GameKernel: the one place where Python code holds a
compiled state buffer. Per-game Python code (notation, validation, views) wraps it.

Nothing here validates a buffer's contents: callers build buffers only through a game's
``new_state`` or after a game's decoder validated every field. Actions *are* checked here
(against legal_actions / chance_outcomes) before compiled code applies them.
"""
from libc.stdint cimport uint8_t, int32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from hortus._ext.kernel cimport GameKernel, CHANCE, TERMINAL, MAX_PLAYERS, kernel_from_capsule
from hortus._ext.rng cimport Rng, rng_seed, rng_below, rng_uniform


cdef int32_t sample_chance(GameKernel* k, const uint8_t* s, int32_t* actions, double* weights,
                           Rng* rng) noexcept nogil:
    """Draw one chance outcome with probability proportional to its weight."""
    if k.sample_chance != NULL:
        return k.sample_chance(s, rng)
    cdef int n = k.chance_outcomes(s, actions, weights)
    cdef double total = 0.0
    cdef int i
    for i in range(n):
        total += weights[i]
    cdef double x = rng_uniform(rng) * total
    for i in range(n - 1):
        x -= weights[i]
        if x < 0.0:
            return actions[i]
    return actions[n - 1]


cdef class KernelState:
    """A state buffer bound to its game's kernel (a PyCapsule holding a GameKernel*)."""

    def __cinit__(self, capsule):
        self.kernel = kernel_from_capsule(capsule)
        self.capsule = capsule
        self.buf = <uint8_t*>malloc(self.kernel.state_bytes)
        if self.buf == NULL:
            raise MemoryError()
        memset(self.buf, 0, self.kernel.state_bytes)

    def __dealloc__(self):
        free(self.buf)

    @staticmethod
    def from_core(capsule, const uint8_t[::1] core):
        """A state from serialized core bytes (already validated by the game) + rebuilt cache."""
        cdef KernelState st = KernelState(capsule)
        if core.shape[0] != st.kernel.core_bytes:
            raise ValueError(f"core is {core.shape[0]} bytes, expected {st.kernel.core_bytes}")
        if core.shape[0]:
            memcpy(st.buf, &core[0], core.shape[0])
        if st.kernel.rebuild != NULL:
            st.kernel.rebuild(st.buf)
        return st

    @property
    def capsule(self):
        return self.capsule

    @property
    def num_distinct_actions(self):
        return self.kernel.num_distinct_actions

    def core(self):
        """The serialized part of the buffer (bytes, little-endian fields)."""
        return (<char*>self.buf)[:self.kernel.core_bytes]

    def raw(self):
        """The whole buffer, derived cache included (for debugging and tests)."""
        return (<char*>self.buf)[:self.kernel.state_bytes]

    def clone(self):
        cdef KernelState other = KernelState(self.capsule)
        memcpy(other.buf, self.buf, self.kernel.state_bytes)
        return other

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    def num_players(self):
        return self.kernel.num_players(self.buf)

    def current_player(self):
        return self.kernel.current_player(self.buf)

    def legal_actions(self):
        cdef int32_t[4096] small
        cdef int32_t* out = small
        cdef int n, i
        if self.kernel.max_legal_actions > 4096:
            out = <int32_t*>malloc(self.kernel.max_legal_actions * sizeof(int32_t))
            if out == NULL:
                raise MemoryError()
        try:
            n = self.kernel.legal_actions(self.buf, out)
            return [out[i] for i in range(n)]
        finally:
            if out != small:
                free(out)

    def chance_outcomes(self):
        """[(action, probability)] at a chance node, probabilities summing to 1; else []."""
        if self.kernel.current_player(self.buf) != CHANCE:
            return []
        cdef int m = self.kernel.max_legal_actions
        cdef int32_t* acts = <int32_t*>malloc(m * sizeof(int32_t))
        cdef double* ws = <double*>malloc(m * sizeof(double))
        cdef int n, i
        cdef double total = 0.0
        try:
            if acts == NULL or ws == NULL:
                raise MemoryError()
            n = self.kernel.chance_outcomes(self.buf, acts, ws)
            for i in range(n):
                total += ws[i]
            return [(acts[i], ws[i] / total) for i in range(n)]
        finally:
            free(acts)
            free(ws)

    def is_legal(self, action):
        cdef int p = self.kernel.current_player(self.buf)
        if p == TERMINAL:
            return False
        if p == CHANCE:
            return any(a == action for a, _ in self.chance_outcomes())
        return action in self.legal_actions()

    def apply(self, int32_t action):
        """Apply a legal player or chance action; returns False (and changes nothing) if not legal."""
        if not self.is_legal(action):
            return False
        self.kernel.apply(self.buf, action)
        return True

    def returns(self):
        cdef double[MAX_PLAYERS] out
        cdef int n = self.kernel.num_players(self.buf)
        if self.kernel.current_player(self.buf) != TERMINAL:
            return [0.0] * n
        self.kernel.returns(self.buf, out)
        return [out[i] for i in range(n)]

    def scores(self):
        cdef double[MAX_PLAYERS] out
        cdef int n = self.kernel.num_players(self.buf)
        self.kernel.scores(self.buf, out)
        return [out[i] for i in range(n)]

    def determinize(self, int observer, uint64_t seed):
        """Resample in place what `observer` cannot see (seeded)."""
        cdef Rng rng
        rng_seed(&rng, seed)
        if not 0 <= observer < self.kernel.num_players(self.buf):
            raise ValueError(f"observer {observer} is not a seat")
        self.kernel.determinize(self.buf, observer, &rng)

    def rollout_action(self, uint64_t seed):
        """The game's playout policy's choice here (seeded), or None without a policy."""
        cdef Rng rng
        if self.kernel.rollout_action == NULL:
            return None
        if self.kernel.current_player(self.buf) < 0:
            raise ValueError("not a decision node")
        rng_seed(&rng, seed)
        return self.kernel.rollout_action(self.buf, &rng)

    def sample_chance(self, uint64_t seed):
        """One chance outcome drawn with its probability (seeded); the state is unchanged."""
        cdef Rng rng
        cdef int m = self.kernel.max_legal_actions
        if self.kernel.current_player(self.buf) != CHANCE:
            raise ValueError("not a chance node")
        cdef int32_t* acts = <int32_t*>malloc(m * sizeof(int32_t))
        cdef double* ws = <double*>malloc(m * sizeof(double))
        try:
            if acts == NULL or ws == NULL:
                raise MemoryError()
            rng_seed(&rng, seed)
            return sample_chance(self.kernel, self.buf, acts, ws, &rng)
        finally:
            free(acts)
            free(ws)


cdef double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def random_playouts(KernelState start, long games, uint64_t seed, bint use_policy=True):
    """Play `games` random games from `start` (copied), without the GIL.

    Returns (player decisions, chance events, seconds). With use_policy the game's
    rollout_action is used where the kernel provides one, as the search's playouts do.
    """
    cdef GameKernel* k = start.kernel
    cdef uint8_t* s = <uint8_t*>malloc(k.state_bytes)
    cdef int32_t* acts = <int32_t*>malloc(k.max_legal_actions * sizeof(int32_t))
    cdef double* ws = <double*>malloc(k.max_legal_actions * sizeof(double))
    cdef Rng rng
    cdef long g, decisions = 0, chance = 0, steps
    cdef int p, n
    cdef double t0, t1
    if s == NULL or acts == NULL or ws == NULL:
        free(s); free(acts); free(ws)
        raise MemoryError()
    rng_seed(&rng, seed)
    with nogil:
        t0 = _now()
        for g in range(games):
            memcpy(s, start.buf, k.state_bytes)
            steps = 0
            while steps < k.max_game_length:
                p = k.current_player(s)
                if p == TERMINAL:
                    break
                if p == CHANCE:
                    k.apply(s, sample_chance(k, s, acts, ws, &rng))
                    chance += 1
                elif use_policy and k.rollout_action != NULL:
                    k.apply(s, k.rollout_action(s, &rng))
                    decisions += 1
                else:
                    n = k.legal_actions(s, acts)
                    k.apply(s, acts[rng_below(&rng, n)])
                    decisions += 1
                steps += 1
        t1 = _now()
    free(s); free(acts); free(ws)
    return decisions, chance, t1 - t0
