# cython: language_level=3
"""Single-observer information-set MCTS over any GameKernel, the whole loop without the GIL.

One iteration:
 1. copy the root and determinize it for the searching seat (everything it cannot see is
    resampled, so the tree only ever learns from the observer's information set);
 2. descend: at a chance node sample an outcome by weight and stay on the same tree node
    (open loop: the tree is keyed by decisions only); at a decision node the children legal in
    this determinization are "available" (their availability count grows) and the one with the
    best UCB for the seat to move is taken; the first untried legal action is expanded;
 3. play out to the end (the game's rollout policy, else uniform), or, with a value model
    (set_model), only `eval_plies` decisions and then let the model estimate each seat's win
    share from the game's features of the (determinized) state;
 4. back up the reward vector (one value per seat: max^n) along the path.

Nodes live in an arena of C structs grown by doubling (a mapping of its own once it is large,
see _ext/memory.pxd), bounded by max_nodes: when the arena is full the search keeps iterating
without expanding (it truncates, it does not fail).

Root-parallel searches run one Search per thread, allocated one after the other: everything a
search writes while it runs (its fields, scratch buffers and node arena) sits on cache lines of
its own, so two threads never share a line (see _ext/memory.pxd).
"""
from libc.stdint cimport uint8_t, int8_t, int32_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.math cimport sqrt, log, tanh, pow, exp
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from hortus._ext.kernel cimport (GameKernel, CHANCE, TERMINAL, MAX_PLAYERS, kernel_from_capsule,
                                  searched_actions)
from hortus._ext.rng cimport Rng, rng_seed, rng_below, rng_uniform
from hortus._ext.engine cimport KernelState, sample_chance
from hortus._ext.memory cimport CACHE_LINE, alloc_own_lines, arena_resize, arena_free


ctypedef struct Node:
    int32_t parent
    int32_t first_child
    int32_t next_sibling
    int32_t action          # the action that leads from the parent to this node
    int32_t mover           # the seat that chose `action` at the parent
    uint32_t visits
    uint32_t availability   # times this action was legal when its parent was visited
    # `mover`'s value here, counting its own best continuation (turn_max). A float: it fills
    # the padding before the doubles, so a node stays 136 bytes (and cache lines per node).
    float turn_value
    double reward[MAX_PLAYERS]   # sum of search rewards per seat
    double win[MAX_PLAYERS]      # sum of win shares per seat
    double score[MAX_PLAYERS]    # sum of final points per seat
    double mover_sq              # sum of the squared reward of `mover` (value spread)


# Progressive widening allows widening_c * visits**WIDENING_ALPHA children per node; 0.5 was
# the only exponent ever used, so it is fixed here rather than a run() argument.
cdef double WIDENING_ALPHA = 0.5


cdef enum:
    MAX_FEATURES = 32     # bound on GameKernel.num_features for a value model
    MAX_HIDDEN = 32       # bound on a value model's hidden units


ctypedef struct ValueModel:
    # v(seat) = sigmoid(w2 . h + b2), h = tanh(w1 f + b1) (hidden > 0) or h = f (hidden = 0),
    # f = the game's features from the seat's side; the input scaling is folded into w1.
    int features
    int hidden
    double w1[MAX_HIDDEN][MAX_FEATURES]
    double b1[MAX_HIDDEN]
    double w2[MAX_FEATURES]    # MAX_FEATURES == MAX_HIDDEN: holds either layout
    double b2
    # Optional points head: a seat's expected final points = pw . f + pb (has_points). At a
    # cut the points so far are not the final points (Botanists banks its points only at
    # scoring phases): this estimate is what the analysis reports as expected points there.
    bint has_points
    double pw[MAX_FEATURES]
    double pb


cdef double model_logit(const ValueModel* m, const double* f) noexcept nogil:
    cdef int i, j
    cdef double z = m.b2, a
    if m.hidden == 0:
        for j in range(m.features):
            z += m.w2[j] * f[j]
        return z
    for i in range(m.hidden):
        a = m.b1[i]
        for j in range(m.features):
            a += m.w1[i][j] * f[j]
        z += m.w2[i] * tanh(a)
    return z


cdef void model_win_shares(const GameKernel* k, const ValueModel* m, const uint8_t* s, int players,
                           double* win, double* points) noexcept nogil:
    """Each seat's estimated win share at a non-terminal state: the model's value from each
    seat's side, normalised to sum to 1 like the game's returns; and, when the model has a
    points head, each seat's expected final points in `points` (left as they are otherwise)."""
    cdef double f[MAX_FEATURES]
    cdef double total = 0.0
    cdef double p
    cdef int i, j
    for i in range(players):
        k.features(s, i, f)
        win[i] = 1.0 / (1.0 + exp(-model_logit(m, f)))
        total += win[i]
        if m.has_points:
            p = m.pb
            for j in range(m.features):
                p += m.pw[j] * f[j]
            points[i] = p
    if total > 0.0:
        for i in range(players):
            win[i] /= total


cdef inline size_t _guard_nodes() noexcept nogil:
    """Nodes of padding at each end of the arena: at least a cache line."""
    return (CACHE_LINE + sizeof(Node) - 1) // sizeof(Node)


cdef inline size_t _arena_bytes(int32_t cap_nodes) noexcept nogil:
    """Bytes of an arena of `cap_nodes` nodes, guards included."""
    return (cap_nodes + 2 * _guard_nodes()) * sizeof(Node)


cdef double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


ctypedef int32_t (*PolicyFn)(const uint8_t* s, Rng* rng) noexcept nogil


cdef class Search:
    """One ISMCTS tree for one root position and one observer (the seat to move at the root)."""

    cdef char _guard_before[CACHE_LINE]  # keeps another object's fields off the lines written here
    cdef GameKernel* kernel
    cdef object capsule
    cdef uint8_t* root
    cdef uint8_t* work
    cdef Node* nodes
    cdef int32_t n_nodes
    cdef int32_t cap_nodes
    cdef int32_t max_nodes
    cdef int32_t* legal
    cdef double* weights
    cdef uint32_t* legal_stamp     # per action id: stamp of the last visit where it was legal
    cdef uint32_t* seen_stamp      # per action id: stamp of the last visit where a child had it
    cdef uint32_t stamp
    cdef int observer
    cdef int players
    cdef int cancelled
    # Parameters of the current run() (see run's docstring).
    cdef double exploration
    cdef double margin_weight
    cdef double margin_scale
    cdef bint paranoid
    cdef double widening_c
    cdef bint use_policy
    cdef bint expand_policy        # expansion tries the playout policy's choice first
    cdef bint turn_max             # selection values a move by its seat's best own continuation
    cdef uint32_t turn_min_visits  # visits a continuation needs to count for turn_max
    # The playout policy of this run: the game's rollout_action, or its baseline_rollout_action
    # for the frozen baseline (run(baseline_playout=True)); NULL = uniform over the actions.
    cdef PolicyFn policy
    cdef ValueModel* model         # NULL = no value model (set_model)
    cdef int eval_plies            # -1: play out to the end; else decisions before the model
    cdef uint8_t* root_allowed     # per action id: 1 = the root may expand it; NULL = no mask
    cdef public long iterations_done
    # Decisions simulated (tree and playout, chance events not counted) since the Search was
    # made: the denominator of bench/versus_openspiel.py's time per simulated decision.
    cdef public long decisions_done
    cdef public bint truncated
    cdef Rng rng                   # the RNG of the runs (run(resume=True) goes on with it)
    cdef bint seeded               # a run has seeded `rng`
    cdef Node* node_block          # the arena with _guard_nodes() of padding at each end
    cdef int node_block_mapped     # the arena is a mapping of its own (arena_resize)
    cdef char _guard_after[CACHE_LINE]

    def __cinit__(self, KernelState root, int max_nodes=1_000_000):
        self.kernel = root.kernel
        self.capsule = root.capsule
        cdef GameKernel* k = self.kernel
        cdef int p = k.current_player(root.buf)
        if p < 0:
            raise ValueError("the root must be a decision node (not chance, not terminal)")
        if max_nodes < 1:
            raise ValueError("max_nodes must be >= 1")
        self.observer = p
        self.players = k.num_players(root.buf)
        self.max_nodes = max_nodes
        self.root = <uint8_t*>alloc_own_lines(k.state_bytes)
        self.work = <uint8_t*>alloc_own_lines(k.state_bytes)
        self.legal = <int32_t*>alloc_own_lines(k.max_legal_actions * sizeof(int32_t))
        self.weights = <double*>alloc_own_lines(k.max_legal_actions * sizeof(double))
        self.legal_stamp = <uint32_t*>alloc_own_lines(k.num_distinct_actions * sizeof(uint32_t))
        self.seen_stamp = <uint32_t*>alloc_own_lines(k.num_distinct_actions * sizeof(uint32_t))
        self.cap_nodes = 1024 if max_nodes > 1024 else max_nodes
        self.node_block_mapped = 0
        self.node_block = <Node*>arena_resize(NULL, 0, _arena_bytes(self.cap_nodes),
                                              &self.node_block_mapped)
        if (self.root == NULL or self.work == NULL or self.legal == NULL or self.weights == NULL
                or self.legal_stamp == NULL or self.seen_stamp == NULL or self.node_block == NULL):
            raise MemoryError()
        self.nodes = self.node_block + _guard_nodes()
        memcpy(self.root, root.buf, k.state_bytes)
        self.n_nodes = 1
        memset(&self.nodes[0], 0, sizeof(Node))
        self.nodes[0].parent = -1
        self.nodes[0].first_child = -1
        self.nodes[0].next_sibling = -1
        self.nodes[0].action = -1
        self.nodes[0].mover = -1
        self.stamp = 0
        self.cancelled = 0
        self.iterations_done = 0
        self.decisions_done = 0
        self.truncated = False
        self.exploration = 0.7
        self.margin_weight = 0.1
        self.margin_scale = 10.0
        self.paranoid = False
        self.widening_c = 0.0
        self.use_policy = True
        self.expand_policy = False
        self.policy = self.kernel.rollout_action
        self.model = NULL
        self.eval_plies = -1
        self.root_allowed = NULL
        self.seeded = False

    def __dealloc__(self):
        free(self.root_allowed)
        free(self.model)
        free(self.root)
        free(self.work)
        free(self.legal)
        free(self.weights)
        free(self.legal_stamp)
        free(self.seen_stamp)
        arena_free(self.node_block, _arena_bytes(self.cap_nodes), self.node_block_mapped)

    def set_model(self, w1, b1, w2, double b2, points_w=None, double points_b=0.0):
        """Install a value model (validated by the caller, hortus.search.evaluation): w1 is
        hidden x features (empty for a linear model), b1 hidden, w2 hidden (or features);
        points_w (features) and points_b: the optional linear head of a seat's expected final
        points, reported at a cut instead of the points so far."""
        cdef GameKernel* k = self.kernel
        cdef int hidden = len(b1), features = k.num_features, i, j
        if k.features == NULL or not 0 < features <= MAX_FEATURES:
            raise ValueError("this game has no value-model features")
        if not 0 <= hidden <= MAX_HIDDEN or len(w1) != hidden or len(w2) != (hidden or features):
            raise ValueError(f"value model shape does not fit {features} features")
        if self.model == NULL:
            self.model = <ValueModel*>alloc_own_lines(sizeof(ValueModel))
            if self.model == NULL:
                raise MemoryError()
        memset(self.model, 0, sizeof(ValueModel))
        self.model.features = features
        self.model.hidden = hidden
        for i in range(hidden):
            if len(w1[i]) != features:
                raise ValueError(f"value model shape does not fit {features} features")
            self.model.b1[i] = b1[i]
            for j in range(features):
                self.model.w1[i][j] = w1[i][j]
        for i in range(hidden or features):
            self.model.w2[i] = w2[i]
        self.model.b2 = b2
        if points_w is not None:
            if len(points_w) != features:
                raise ValueError(f"value model points head does not fit {features} features")
            self.model.has_points = True
            for j in range(features):
                self.model.pw[j] = points_w[j]
            self.model.pb = points_b

    def set_root_actions(self, actions):
        """What-if constraint (allow/avoid moves): the root expands only these legal action ids
        (checked by the caller, hortus.search.analysis), the rest of the tree is unconstrained;
        None lifts the mask. Set before the first run: existing root children are kept."""
        cdef GameKernel* k = self.kernel
        cdef int a
        free(self.root_allowed)
        self.root_allowed = NULL
        if actions is None:
            return
        self.root_allowed = <uint8_t*>alloc_own_lines(k.num_distinct_actions)
        if self.root_allowed == NULL:
            raise MemoryError()
        memset(self.root_allowed, 0, k.num_distinct_actions)
        for a in actions:
            if not 0 <= a < k.num_distinct_actions:
                raise ValueError(f"action {a} out of range")
            self.root_allowed[a] = 1

    def features(self, int seat):
        """The game's value-model features of the root from `seat`'s side (for training)."""
        cdef double f[MAX_FEATURES]
        cdef GameKernel* k = self.kernel
        if k.features == NULL:
            raise ValueError("this game has no value-model features")
        if not 0 <= seat < self.players:
            raise IndexError(seat)
        cdef int n = k.features(self.root, seat, f)
        return [f[i] for i in range(n)]

    def advance(self, KernelState new_root, actions):
        """Keep the subtree reached from the root by the decisions `actions` (in order; chance
        events are not in the tree) as the whole tree of `new_root`, the position those
        decisions led to, and drop the rest: a later run() continues it (tree reuse across
        consecutive decisions of one seat). Returns False, changing nothing, when a
        decision is not in the tree or `new_root` is not the observer's decision.

        The caller vouches that `new_root` is where `actions` lead from the root in the
        observer's information set (hortus.search.analysis checks the positions' bytes): the
        kept statistics came from determinizations of the root's information set.
        The compaction is in place and O(nodes): a node's parent always has a smaller index
        (children are appended), so one ascending pass finds every descendant and moves it down.
        """
        cdef GameKernel* k = self.kernel
        cdef int32_t node = 0, child, i, kept = 0, old
        cdef int32_t* remap
        cdef Node* n
        if new_root.kernel != k:
            raise ValueError("new_root belongs to another game")
        if k.current_player(new_root.buf) != self.observer:
            return False
        for a in actions:
            child = self.nodes[node].first_child
            while child != -1 and self.nodes[child].action != a:
                child = self.nodes[child].next_sibling
            if child == -1:
                return False
            node = child
        remap = <int32_t*>malloc(self.n_nodes * sizeof(int32_t))
        if remap == NULL:
            raise MemoryError()
        with nogil:
            for i in range(self.n_nodes):
                remap[i] = -1
            for i in range(node, self.n_nodes):
                old = self.nodes[i].parent
                if i != node and (old < 0 or remap[old] == -1):
                    continue
                remap[i] = kept
                if kept != i:
                    self.nodes[kept] = self.nodes[i]
                kept += 1
            for i in range(kept):
                n = &self.nodes[i]
                if i == 0:
                    n.parent = -1
                    n.next_sibling = -1
                    n.action = -1
                    n.mover = -1
                else:
                    n.parent = remap[n.parent]
                    if n.next_sibling != -1:
                        n.next_sibling = remap[n.next_sibling]
                if n.first_child != -1:
                    n.first_child = remap[n.first_child]
            free(remap)
            self.n_nodes = kept
            memcpy(self.root, new_root.buf, k.state_bytes)
        self.truncated = self.n_nodes >= self.max_nodes
        self.iterations_done = 0
        self.cancelled = 0
        free(self.root_allowed)   # a what-if mask belonged to the old root
        self.root_allowed = NULL
        return True

    def cancel(self):
        """Ask a running search to stop at its next iteration (safe from another thread)."""
        self.cancelled = 1

    def clear_cancel(self):
        """Let a cancelled search run again: a kept tree continued by a later call (the old
        call's cancel must not stop the new one)."""
        self.cancelled = 0

    cdef int32_t _new_child(self, int32_t parent, int32_t action, int mover) noexcept nogil:
        cdef Node* grown
        cdef int32_t new_cap
        if self.n_nodes >= self.max_nodes:
            return -1
        if self.n_nodes == self.cap_nodes:
            new_cap = self.cap_nodes * 2
            if new_cap > self.max_nodes:
                new_cap = self.max_nodes
            grown = <Node*>arena_resize(self.node_block, _arena_bytes(self.cap_nodes),
                                        _arena_bytes(new_cap), &self.node_block_mapped)
            if grown == NULL:
                return -1
            self.node_block = grown  # the contents are kept, guard nodes included
            self.nodes = grown + _guard_nodes()
            self.cap_nodes = new_cap
        cdef int32_t c = self.n_nodes
        self.n_nodes += 1
        memset(&self.nodes[c], 0, sizeof(Node))
        self.nodes[c].parent = parent
        self.nodes[c].first_child = -1
        self.nodes[c].action = action
        self.nodes[c].mover = mover
        self.nodes[c].next_sibling = self.nodes[parent].first_child
        self.nodes[parent].first_child = c
        return c

    cdef void _iterate(self, Rng* rng) noexcept nogil:
        cdef GameKernel* k = self.kernel
        cdef uint8_t* s = self.work
        cdef int32_t node = 0, child, best, chosen
        cdef int p, n, i, untried, pick, j, steps = 0, n_children, played = 0
        cdef long decisions = 0
        cdef bint cut = False
        cdef double ucb, best_ucb, q
        cdef double exploration = self.exploration
        cdef int obs = self.observer
        cdef Node* c
        cdef bint expanded = False
        cdef double[MAX_PLAYERS] win
        cdef double[MAX_PLAYERS] banked
        cdef double[MAX_PLAYERS] pts
        cdef double* margin_pts = pts   # the points the reward's margin term uses
        cdef double[MAX_PLAYERS] reward
        cdef double best_other

        memcpy(s, self.root, k.state_bytes)
        k.determinize(s, self.observer, rng)

        # Selection and expansion.
        while steps < k.max_game_length:
            p = k.current_player(s)
            if p == TERMINAL:
                break
            steps += 1
            if p == CHANCE:
                k.apply(s, sample_chance(k, s, self.legal, self.weights, rng))
                continue
            decisions += 1
            if node == 0 and self.root_allowed != NULL:
                # What-if root mask: every legal action the caller allowed (even one outside
                # the game's search subset: the caller asked for it), nothing else.
                n = k.legal_actions(s, self.legal)
                j = 0
                for i in range(n):
                    if self.root_allowed[self.legal[i]]:
                        self.legal[j] = self.legal[i]
                        j += 1
                n = j
            else:
                n = searched_actions(k, s, self.legal)
            if n <= 0:
                break   # contract violation guard: a decision node always has an action
            self.stamp += 1
            for i in range(n):
                self.legal_stamp[self.legal[i]] = self.stamp
            untried = n
            n_children = 0
            best = -1
            best_ucb = -1e300
            child = self.nodes[node].first_child
            while child != -1:
                c = &self.nodes[child]
                n_children += 1
                if self.legal_stamp[c.action] == self.stamp:
                    c.availability += 1
                    self.seen_stamp[c.action] = self.stamp
                    untried -= 1
                    if c.visits > 0:
                        if self.paranoid and p != obs:
                            # Paranoid: every opponent plays to minimise the searcher's reward.
                            q = -c.reward[obs] / c.visits
                        else:
                            q = c.turn_value if self.turn_max else c.reward[p] / c.visits
                        ucb = q + exploration * sqrt(log(<double>c.availability) / c.visits)
                    else:
                        ucb = 1e300
                    if ucb > best_ucb:
                        best_ucb = ucb
                        best = child
                child = c.next_sibling
            if (untried > 0 and best != -1 and self.widening_c > 0.0
                    and n_children >= self.widening_c * pow(self.nodes[node].visits + 1.0, WIDENING_ALPHA)):
                # Progressive widening: a node with many options grows its children with
                # its visits (C * visits^0.5) instead of trying every option once first.
                untried = 0
            if untried > 0:
                # Expand one untried legal action: the playout policy's choice when asked
                # (expand_policy) and it is untried here, so that a node not yet fully
                # expanded has its likely moves first; else one chosen uniformly.
                chosen = -1
                if self.expand_policy and self.policy != NULL:
                    pick = self.policy(s, rng)
                    if (0 <= pick < k.num_distinct_actions and self.legal_stamp[pick] == self.stamp
                            and self.seen_stamp[pick] != self.stamp):
                        chosen = pick
                if chosen == -1:
                    pick = rng_below(rng, untried)
                    j = 0
                    for i in range(n):
                        if self.seen_stamp[self.legal[i]] != self.stamp:
                            if j == pick:
                                chosen = self.legal[i]
                                break
                            j += 1
                child = self._new_child(node, chosen, p)
                k.apply(s, chosen)
                if child == -1:
                    self.truncated = True   # arena full: play out from here
                else:
                    self.nodes[child].availability = 1
                    node = child
                break
            node = best
            k.apply(s, self.nodes[best].action)

        # Playout (cut after eval_plies decisions when a value model is on).
        while steps < k.max_game_length:
            p = k.current_player(s)
            if p == TERMINAL:
                break
            steps += 1
            if p == CHANCE:
                k.apply(s, sample_chance(k, s, self.legal, self.weights, rng))
                continue
            if self.eval_plies >= 0 and played >= self.eval_plies:
                cut = True
                break
            played += 1
            decisions += 1
            if self.use_policy and self.policy != NULL:
                k.apply(s, self.policy(s, rng))
            else:
                n = searched_actions(k, s, self.legal)
                if n <= 0:
                    break
                k.apply(s, self.legal[rng_below(rng, n)])

        # Reward vector: win share plus a bounded score-margin term (hortus.search, "Search reward"; docs/search.md).
        for i in range(self.players):
            win[i] = 0.0
            pts[i] = 0.0
        if k.current_player(s) == TERMINAL:
            k.returns(s, win)
        k.scores(s, pts)
        if cut:
            # The reward's margin term keeps the points so far (`banked`), as when it was
            # measured; the statistics get the model's estimate of the final points
            # where it has a points head, so the expected points a hint reports are final.
            memcpy(banked, pts, self.players * sizeof(double))
            margin_pts = banked
            model_win_shares(k, self.model, s, self.players, win, pts)
        for i in range(self.players):
            best_other = -1e300
            for j in range(self.players):
                if j != i and margin_pts[j] > best_other:
                    best_other = margin_pts[j]
            if self.players == 1:
                best_other = 0.0
            reward[i] = win[i] + self.margin_weight * tanh((margin_pts[i] - best_other) / self.margin_scale)

        self.decisions_done += decisions
        # Backup along the path, root included.
        while node != -1:
            c = &self.nodes[node]
            c.visits += 1
            for i in range(self.players):
                c.reward[i] += reward[i]
                c.win[i] += win[i]
                c.score[i] += pts[i]
            if c.mover >= 0:
                c.mover_sq += reward[c.mover] * reward[c.mover]
                if self.turn_max:
                    self._turn_value(c)   # children first: the path is backed up leaf to root
            node = c.parent

    cdef void _turn_value(self, Node* c) noexcept nogil:
        """turn_max: a move's value for its seat is the better of its mean reward and the best
        turn_value among the seat's own next decisions below it (children chosen by the same
        seat, with at least max(turn_min_visits, visits / 8) visits).

        Why: where a seat makes several decisions in a row (a turn of many actions), the mean
        of a move searched little is dragged down because its later decisions in the turn are
        still made by the playout policy, while the move searched most has them searched. The
        first move to get a deep subtree then locks the search in (measured: 0.47 for the move searched 90,541 times against 0.22
        for one searched 1,138 times, and with another seed the reverse). Its best
        continuation is what the seat will actually play. The visit floor keeps a barely
        tried continuation's lucky mean from counting."""
        cdef double best = c.reward[c.mover] / c.visits
        cdef int32_t child = c.first_child
        cdef Node* g
        cdef uint32_t need = c.visits >> 3
        if need < self.turn_min_visits:
            need = self.turn_min_visits
        while child != -1:
            g = &self.nodes[child]
            if g.mover == c.mover and g.visits >= need and g.turn_value > best:
                best = g.turn_value
            child = g.next_sibling
        c.turn_value = <float>best

    def run(self, long iterations=0, double time_ms=0.0, uint64_t seed=0,
            double exploration=0.7, double margin_weight=0.1, double margin_scale=10.0,
            bint paranoid=False, double widening_c=0.0,
            bint playout_policy=True, int eval_plies=-1, bint resume=False,
            bint expansion_policy=False, bint turn_max=False, int turn_min_visits=16,
            bint baseline_playout=False):
        """Iterate until `iterations` (if > 0), `time_ms` (if > 0) or cancel(); returns the count.

        At least one budget must be set. The RNG is seeded from `seed`, so one thread with an
        iteration budget is deterministic. resume: go on with the RNG where the previous run
        stopped (`seed` is then unused; the first run seeds it): a search run in pieces of
        N and M iterations is then exactly one run of N + M (an iteration depends only on the
        tree and the RNG), so a stream of snapshots or an analysis continued later (issue
        20: continue_from) gives what one run would. exploration: UCT constant. margin_weight and
        margin_scale: the reward's score-margin term. paranoid: opponents minimise the
        searching seat's reward instead of maximising their own (max^n). widening_c > 0 turns
        on progressive widening with at most widening_c * visits^0.5 children.
        playout_policy: play out with the game's rollout_action where it has one (else, and
        when False, uniformly over legal actions) — False measures what the policy is worth.
        eval_plies >= 0 (needs set_model): a playout stops after that many decisions and the
        value model scores the state (0 = at the new leaf); -1 plays every playout out.
        expansion_policy: a node expands the game's playout-policy choice first when that
        move is untried there (else a uniform untried one), instead of always uniformly.
        turn_max: selection values a move by its seat's best own continuation (_turn_value)
        rather than by its mean reward; turn_min_visits: the visits a continuation needs.
        A tree grown with turn_max off has no turn values: keep the setting within one tree.
        baseline_playout: the policy (playouts, and expansion_policy) is the game's
        baseline_rollout_action where it has one (the frozen baseline search), else its
        rollout_action.
        """
        if iterations <= 0 and time_ms <= 0.0:
            raise ValueError("set an iteration or a time budget")
        if margin_scale <= 0.0:
            raise ValueError("margin_scale must be > 0")
        if eval_plies >= 0 and (self.model == NULL or self.players < 2):
            raise ValueError("eval_plies needs a value model (set_model) and 2+ seats")
        self.eval_plies = eval_plies
        self.exploration = exploration
        self.margin_weight = margin_weight
        self.margin_scale = margin_scale
        self.paranoid = paranoid
        self.widening_c = widening_c
        self.use_policy = playout_policy
        self.expand_policy = expansion_policy
        if turn_min_visits < 1:
            raise ValueError("turn_min_visits must be >= 1")
        self.turn_max = turn_max
        self.turn_min_visits = turn_min_visits
        self.policy = self.kernel.rollout_action
        if baseline_playout and self.kernel.baseline_rollout_action != NULL:
            self.policy = self.kernel.baseline_rollout_action
        cdef long done = 0
        cdef double deadline = 0.0
        if not (resume and self.seeded):
            rng_seed(&self.rng, seed)
            self.seeded = True
        with nogil:
            if time_ms > 0.0:
                deadline = _now() + time_ms / 1000.0
            while not self.cancelled:
                if iterations > 0 and done >= iterations:
                    break
                # Checking the clock every few iterations keeps its cost invisible.
                if time_ms > 0.0 and (done & 7) == 0 and _now() >= deadline:
                    break
                self._iterate(&self.rng)
                done += 1
        self.iterations_done += done
        return done

    @property
    def num_features(self):
        """The game's value-model feature count (0 = no features function)."""
        return self.kernel.num_features if self.kernel.features != NULL else 0

    @property
    def node_count(self):
        return self.n_nodes

    @property
    def node_arena_mapped(self):
        """Whether the node arena is a mapping of its own (returned to the system when the
        search is freed); False while it is small, or where mappings are not used."""
        return bool(self.node_block_mapped)

    @property
    def memory_bytes(self):
        """Bytes this search holds: its node arena (as allocated, guards included), its state
        and scratch buffers and, when set, its value model and root mask."""
        cdef GameKernel* k = self.kernel
        cdef size_t total = _arena_bytes(self.cap_nodes)
        total += 2 * k.state_bytes + k.max_legal_actions * (sizeof(int32_t) + sizeof(double))
        total += 2 * k.num_distinct_actions * sizeof(uint32_t)
        if self.model != NULL:
            total += sizeof(ValueModel)
        if self.root_allowed != NULL:
            total += k.num_distinct_actions
        return total

    @property
    def observer(self):
        return self.observer

    def children(self, int32_t node=0):
        """Statistics of a node's children: a list of dicts (sums, not means)."""
        if not 0 <= node < self.n_nodes:
            raise IndexError(node)
        out = []
        cdef int32_t child = self.nodes[node].first_child
        cdef Node* c
        cdef int i
        while child != -1:
            c = &self.nodes[child]
            out.append({
                "node": child,
                "action": c.action,
                "mover": c.mover,
                "visits": c.visits,
                "availability": c.availability,
                "reward": [c.reward[i] for i in range(self.players)],
                "win": [c.win[i] for i in range(self.players)],
                "score": [c.score[i] for i in range(self.players)],
                "mover_sq": c.mover_sq,
                "turn_value": c.turn_value,
            })
            child = c.next_sibling
        return out

    def root_visits(self):
        return self.nodes[0].visits
