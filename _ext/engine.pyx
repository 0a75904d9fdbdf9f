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

from hortus._ext.kernel cimport (GameKernel, CHANCE, TERMINAL, MAX_PLAYERS, kernel_from_capsule,
                                  searched_actions)
from hortus._ext.rng cimport Rng, rng_seed, rng_below, rng_weighted_index
from hortus._ext.memory cimport alloc_own_lines


cdef int32_t sample_chance(GameKernel* k, const uint8_t* s, int32_t* actions, double* weights,
                           Rng* rng) noexcept nogil:
    """Draw one chance outcome with probability proportional to its weight."""
    if k.sample_chance != NULL:
        return k.sample_chance(s, rng)
    return _invert_chance(k, s, actions, weights, rng)


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
        """Every rule-legal decision, ascending."""
        return self._actions(False)

    def search_actions(self):
        """The canonical subset of legal_actions that the search expands (all of them when
        the game prunes nothing)."""
        return self._actions(True)

    cdef list _actions(self, bint searched):
        cdef int32_t[4096] small
        cdef int32_t* out = small
        cdef int n, i
        if self.kernel.max_legal_actions > 4096:
            out = <int32_t*>malloc(self.kernel.max_legal_actions * sizeof(int32_t))
            if out == NULL:
                raise MemoryError()
        try:
            if searched:
                n = searched_actions(self.kernel, self.buf, out)
            else:
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

    def rollout_action(self, uint64_t seed, bint baseline=False):
        """The game's playout policy's choice here (seeded), or None without a policy.
        baseline: the frozen baseline search's policy (baseline_rollout_action where the game
        has one, else rollout_action)."""
        cdef Rng rng
        cdef int32_t (*policy)(const uint8_t* s, Rng* rng) noexcept nogil
        policy = self.kernel.rollout_action
        if baseline and self.kernel.baseline_rollout_action != NULL:
            policy = self.kernel.baseline_rollout_action
        if policy == NULL:
            return None
        if self.kernel.current_player(self.buf) < 0:
            raise ValueError("not a decision node")
        rng_seed(&rng, seed)
        return policy(self.buf, &rng)

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


cdef long _play_out(GameKernel* k, uint8_t* s, int32_t* acts, double* ws, Rng* nature, Rng* players,
                    bint use_policy, bint one_draw_per_event, long* chance) noexcept nogil:
    """Plays `s` to the end (at most max_game_length steps): chance outcomes from `nature`
    (one_draw_per_event: the generic sampler, one uniform per event, see _invert_chance),
    decisions from `players` with the game's playout policy where it has one (use_policy),
    else uniformly. Returns the decisions made and adds the chance events to `chance`."""
    cdef long steps = 0, decisions = 0
    cdef int p, n
    while steps < k.max_game_length:
        p = k.current_player(s)
        if p == TERMINAL:
            break
        if p == CHANCE:
            if one_draw_per_event:
                k.apply(s, _invert_chance(k, s, acts, ws, nature))
            else:
                k.apply(s, sample_chance(k, s, acts, ws, nature))
            chance[0] += 1
        elif use_policy and k.rollout_action != NULL:
            k.apply(s, k.rollout_action(s, players))
            decisions += 1
        else:
            n = searched_actions(k, s, acts)
            k.apply(s, acts[rng_below(players, n)])
            decisions += 1
        steps += 1
    return decisions


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
    # Written on every step, while other threads play or search: lines of their own.
    cdef uint8_t* s = <uint8_t*>alloc_own_lines(k.state_bytes)
    cdef int32_t* acts = <int32_t*>alloc_own_lines(k.max_legal_actions * sizeof(int32_t))
    cdef double* ws = <double*>alloc_own_lines(k.max_legal_actions * sizeof(double))
    cdef Rng rng
    cdef long g, decisions = 0, chance = 0
    cdef double t0, t1
    if s == NULL or acts == NULL or ws == NULL:
        free(s); free(acts); free(ws)
        raise MemoryError()
    rng_seed(&rng, seed)
    with nogil:
        t0 = _now()
        for g in range(games):
            memcpy(s, start.buf, k.state_bytes)
            decisions += _play_out(k, s, acts, ws, &rng, &rng, use_policy, False, &chance)
        t1 = _now()
    free(s); free(acts); free(ws)
    return decisions, chance, t1 - t0


def draw_dependence(KernelState root, int observer, actions, int worlds, int playouts, uint64_t seed):
    """How much the outcome of each root action depends on the draw, measured by playouts.

    A *world* fixes everything nature decides: the hidden information (a determinization for
    `observer`) and the stream of chance outcomes (a chance RNG of its own, replayed from the
    world's seed in every playout of that world). Within a world, `playouts` playouts differ
    only in the players' choices (the game's playout policy, else uniform). Every action is
    played in the same worlds (common random numbers), so actions are compared on equal luck.

    Returns, per action, ``(win_mean, win_between_var, win_within_var, points_mean,
    points_between_var, points_within_var)`` for `observer`: the between-world variance is the variance of the
    world means with the within-world noise removed (one-way ANOVA: var(means) - within/M),
    i.e. the variance that the draw alone explains.
    """
    cdef GameKernel* k = root.kernel
    cdef int n_actions = len(actions)
    if worlds < 2 or playouts < 1:
        raise ValueError("need at least 2 worlds and 1 playout per world")
    if not 0 <= observer < k.num_players(root.buf):
        raise ValueError(f"observer {observer} is not a seat")
    if k.current_player(root.buf) < 0:
        raise ValueError("the root must be a decision node")
    cdef int32_t* acts_in = <int32_t*>malloc(max(1, n_actions) * sizeof(int32_t))
    # Written on every step, while other threads search (see random_playouts).
    cdef double* win_sum = <double*>alloc_own_lines(max(1, n_actions) * 6 * sizeof(double))
    cdef uint8_t* s = <uint8_t*>alloc_own_lines(k.state_bytes)
    cdef int32_t* acts = <int32_t*>alloc_own_lines(k.max_legal_actions * sizeof(int32_t))
    cdef double* ws = <double*>alloc_own_lines(k.max_legal_actions * sizeof(double))
    cdef int i, w, m
    cdef long events = 0
    cdef Rng nature, players
    cdef double[MAX_PLAYERS] win
    cdef double[MAX_PLAYERS] pts
    cdef double wm, wsq, pm, psq, x
    if acts_in == NULL or win_sum == NULL or s == NULL or acts == NULL or ws == NULL:
        free(acts_in); free(win_sum); free(s); free(acts); free(ws)
        raise MemoryError()
    try:
        for i in range(n_actions):
            acts_in[i] = actions[i]
            memcpy(s, root.buf, k.state_bytes)
            if not _is_legal(k, s, acts_in[i], acts):
                raise ValueError(f"action {acts_in[i]} is not legal at the root")
        with nogil:
            for i in range(n_actions):
                # Sums over worlds: [0] world means of wins, [1] their squares, [2] within
                # variances; [3], [4], [5] the same for points.
                for w in range(worlds):
                    wm = 0.0; wsq = 0.0; pm = 0.0; psq = 0.0
                    for m in range(playouts):
                        rng_seed(&nature, seed ^ (<uint64_t>(w + 1) * <uint64_t>0x9E3779B97F4A7C15ULL))
                        rng_seed(&players, seed + <uint64_t>(w * 7919 + m * 104729 + i * 1299709 + 1))
                        memcpy(s, root.buf, k.state_bytes)
                        k.determinize(s, observer, &nature)
                        k.apply(s, acts_in[i])
                        _play_out(k, s, acts, ws, &nature, &players, True, True, &events)
                        win[observer] = 0.0
                        if k.current_player(s) == TERMINAL:
                            k.returns(s, win)
                        k.scores(s, pts)
                        wm += win[observer]
                        wsq += win[observer] * win[observer]
                        pm += pts[observer]
                        psq += pts[observer] * pts[observer]
                    wm /= playouts
                    pm /= playouts
                    win_sum[i * 6 + 0] += wm
                    win_sum[i * 6 + 1] += wm * wm
                    win_sum[i * 6 + 3] += pm
                    win_sum[i * 6 + 4] += pm * pm
                    if playouts > 1:
                        win_sum[i * 6 + 2] += (wsq - playouts * wm * wm) / (playouts - 1)
                        win_sum[i * 6 + 5] += (psq - playouts * pm * pm) / (playouts - 1)
        out = []
        for i in range(n_actions):
            wm = win_sum[i * 6 + 0] / worlds
            within = win_sum[i * 6 + 2] / worlds
            between = (win_sum[i * 6 + 1] - worlds * wm * wm) / (worlds - 1) - within / playouts
            pm = win_sum[i * 6 + 3] / worlds
            p_within = win_sum[i * 6 + 5] / worlds
            x = (win_sum[i * 6 + 4] - worlds * pm * pm) / (worlds - 1) - p_within / playouts
            out.append((wm, max(0.0, between), max(0.0, within), pm, max(0.0, x), max(0.0, p_within)))
        return out
    finally:
        free(acts_in); free(win_sum); free(s); free(acts); free(ws)


cdef int32_t _invert_chance(GameKernel* k, const uint8_t* s, int32_t* actions, double* weights,
                            Rng* rng) noexcept nogil:
    """One chance outcome from exactly one uniform (inversion over chance_outcomes): the generic
    sampler. draw_dependence uses it even where a game has its own sampler, which may use a
    varying number of draws: the n-th chance event of a world then always uses the world's
    n-th number, so replays of a world stay in step. (The games' own samplers reproduce this
    arithmetic exactly: seeded searches are the same with or without them.)"""
    cdef int n = k.chance_outcomes(s, actions, weights)
    return actions[rng_weighted_index(n, weights, rng)]


cdef bint _is_legal(GameKernel* k, const uint8_t* s, int32_t action, int32_t* acts) noexcept nogil:
    cdef int n = k.legal_actions(s, acts)
    cdef int i
    for i in range(n):
        if acts[i] == action:
            return True
    return False
